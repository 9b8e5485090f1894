"""The engines' progress callbacks add up to the totals the CLI gives its bars, and change
nothing they compute (the bars themselves are tested in tests/cli/test_cli_tty.py)."""

from __future__ import annotations

import struct
from pathlib import Path

from groups_support import OffsetsLog
from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.pipeline.local_engine import LocalEngine
from pylogctl.tools import dump_segment
from pylogctl.tools.consumer_groups import ConsumerGroups
from pylogctl.tools.dump_segment import dump_log
from pylogctl.tools.dump_options import DumpOptions
from pylogctl.tools.sample import write_sample_log_dir


def _log_dir(tmp_path: Path, batches: int = 300) -> Path:
    """The sample log dir, a partition of ``batches`` batches and two offsets partitions."""
    root = tmp_path / "logs"
    write_sample_log_dir(str(root))
    part = root / "t-0"
    part.mkdir()
    builder = RecordBatchBuilder(base_offset=0)
    for i in range(8):
        builder.append(1_700_000_000_000, b"k%d" % i, b"v" * 500)
    one = builder.build()
    out = bytearray()
    for n in range(batches):
        batch = bytearray(one)
        struct.pack_into(">q", batch, 0, 8 * n)
        out += batch
    (part / "00000000000000000000.log").write_bytes(out)
    for p in range(2):
        log = OffsetsLog(root, p)
        for g in range(3):
            log.commit(f"g{p}-{g}", {("t", 0): g})
    return root


def test_dump_log_reports_every_valid_byte(tmp_path: Path, monkeypatch) -> None:
    root = _log_dir(tmp_path)
    monkeypatch.setattr(dump_segment, "PROGRESS_STEP", 10_000)  # several reports
    path = root / "t-0" / "00000000000000000000.log"
    # runs of lines are rendered in C, batch lines and with --deep-iteration record lines too,
    # a report per run (one run here); --skip-record-metadata takes the Python path, which
    # reports batch by batch
    for options, reports in ((DumpOptions(), 1), (DumpOptions(deep_iteration=True), 1),
                             (DumpOptions(deep_iteration=True, skip_record_metadata=True), 13)):
        steps: list[int] = []
        dump = dump_log(path, options, steps.append)
        quiet = dump_log(path, options)
        assert list(dump.items_or_lines()) == list(quiet.items_or_lines())
        assert sum(steps) == dump.footer["validBytes"] == path.stat().st_size
        assert len(steps) >= reports


def test_group_load_reports_the_read_size(tmp_path: Path) -> None:
    root = _log_dir(tmp_path)
    steps: list[int] = []
    groups = ConsumerGroups([root], progress=steps.append)
    total = groups.read_size(None)
    rows = groups.list()
    assert len(steps) == 2 and sum(steps) == total > 0
    assert rows == ConsumerGroups([root]).list()
    one = ConsumerGroups([root])
    assert 0 < one.read_size(["g1-0"]) < total


def test_local_engine_reports_what_it_reads(tmp_path: Path) -> None:
    root = _log_dir(tmp_path)
    steps: list[int] = []
    engine = LocalEngine([str(root)], split_bytes=64 * 1024, progress=steps.append)
    total = engine.read_size()
    assert engine.count() == LocalEngine([str(root)]).count()
    assert len(steps) > 3 and sum(steps) == total
    steps.clear()
    total = engine.stats_read_size()
    stats = engine.stats()
    assert sum(steps) == total
    assert stats.to_json() == LocalEngine([str(root)]).stats().to_json()


def test_a_big_split_reports_as_it_reads_even_when_nothing_matches(tmp_path: Path,
                                                                   monkeypatch) -> None:
    from pylogctl.pipeline import segment_reader
    from pylogctl.pipeline.scan_filter import ScanFilter

    root = _log_dir(tmp_path)
    monkeypatch.setattr(segment_reader, "PROGRESS_BYTES", 100_000)
    only_t = ScanFilter().narrowed(topics={"t"})
    size = (root / "t-0" / "00000000000000000000.log").stat().st_size
    for f in (only_t, only_t.narrowed(value_contains=b"absent"),
              only_t.narrowed(offset_to=1000)):  # stops reading early
        steps: list[int] = []
        engine = LocalEngine([str(root)], progress=steps.append)  # one split
        assert engine.read_size(f) == size
        engine.count(f)
        assert sum(steps) == size
        assert len([s for s in steps if s]) >= 2  # not one jump at the end
