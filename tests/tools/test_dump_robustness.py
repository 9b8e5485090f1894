"""Mutated segments never crash a dump: every failure is a PylogctlError with a position."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from pylogctl.tools.dump_segment import DumpOptions, dump_log
from pylogctl.tools.sample import _orders_segment

SEGMENT, _ = _orders_segment()
OPTIONS = DumpOptions(print_data=True, key_decoder="json", value_decoder="json")


def _dump_all(path: Path) -> None:
    dump = dump_log(path, OPTIONS)
    for _ in dump.items:
        pass
    if dump.error is not None:
        assert dump.error.path == str(path)
        assert dump.error.position is not None and 0 <= dump.error.position <= len(SEGMENT) + 64


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, len(SEGMENT) - 1), st.integers(1, 255)),
                      min_size=1, max_size=8),
       cut=st.one_of(st.none(), st.integers(0, len(SEGMENT))))
def test_mutated_segment_dumps_or_fails_cleanly(tmp_path_factory, flips, cut):
    data = bytearray(SEGMENT)
    for pos, xor in flips:
        data[pos] ^= xor
    if cut is not None:
        data = data[:cut]
    path = tmp_path_factory.mktemp("fuzz") / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    _dump_all(path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.binary(min_size=0, max_size=400))
def test_random_bytes_dump_or_fail_cleanly(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("rand") / "00000000000000000000.log"
    path.write_bytes(blob)
    _dump_all(path)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(magic=st.sampled_from([0, 1, 2]), attributes=st.integers(0, 255),
       body=st.binary(min_size=0, max_size=120), extra=st.integers(-4, 4))
def test_structured_garbage_behind_a_plausible_header(tmp_path_factory, magic, attributes, body,
                                                      extra):
    """A valid-looking offset/size/magic prefix in front of garbage, for every magic."""
    import struct

    size = 4 + 1 + 1 + len(body) + max(0, extra)
    if magic == 2:
        head = struct.pack(">qiib", 7, size + 4, -1, magic) + b"\x00\x00\x00\x00"
        msg = head + bytes([0, attributes]) + body
    else:
        msg = struct.pack(">qiIbB", 7, size, 0, magic, attributes) + body
    path = tmp_path_factory.mktemp("hdr") / "00000000000000000000.log"
    path.write_bytes(msg)
    _dump_all(path)
