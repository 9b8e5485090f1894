"""The Produce response, v3 to v9, written straight from the handler's plain data.

Produce is the broker's hottest request, and its answer is small and fixed in shape, yet
kio's generic serializer (dataclasses built and walked field by field) took about a quarter of
the time a 4-partition request spends in the broker (``bench/broker.py`` under a profiler).
This writes the same bytes directly, as Kafka's ``ProduceResponseData`` serializes them
(``ProduceResponse.json``): per partition the index, error code and base offset, the log
append time (v2+), the log start offset (v5+), the record errors and error message (v8+); the
throttle time (v1+); compact lengths and tagged-field sections from v9 (flexible), whose
response header carries its own empty tagged fields. A test checks it byte for byte against
kio for every version and random contents; versions it does not cover go through kio.
"""

from __future__ import annotations

import struct
from typing import Any

from ..format.varint import encode_unsigned_varint

PRODUCE_KEY = 0
VERSIONS = range(3, 10)
_PARTITION_HEAD = struct.Struct(">ihq")
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_INT16 = struct.Struct(">h")


def encode_produce_response(version: int, correlation_id: int, data: dict[str, Any]
                            ) -> bytes:
    """The whole frame (size prefix included) of a Produce response of ``version``."""
    flexible = version >= 9
    out = bytearray(b"\0\0\0\0")
    out += _INT32.pack(correlation_id)
    if flexible:
        out.append(0)  # response header v1: no tagged fields

    def length(n: int) -> None:
        out.extend(encode_unsigned_varint(n + 1) if flexible else _INT32.pack(n))

    def string(value: str | None) -> None:
        if value is None:
            out.extend(b"\0" if flexible else b"\xff\xff")
            return
        raw = value.encode("utf-8")
        out.extend(encode_unsigned_varint(len(raw) + 1) if flexible else _INT16.pack(len(raw)))
        out.extend(raw)

    responses = data.get("responses", [])
    length(len(responses))
    for topic in responses:
        string(topic["name"])
        partitions = topic.get("partition_responses", [])
        length(len(partitions))
        for p in partitions:
            out += _PARTITION_HEAD.pack(p["index"], int(p["error_code"]), p.get("base_offset", -1))
            out += _INT64.pack(p.get("log_append_time", -1))
            if version >= 5:
                out += _INT64.pack(p.get("log_start_offset", -1))
            if version >= 8:
                errors = p.get("record_errors") or []
                length(len(errors))
                for e in errors:
                    out += _INT32.pack(e["batch_index"])
                    string(e.get("batch_index_error_message"))
                    if flexible:
                        out.append(0)
                string(p.get("error_message"))
            if flexible:
                out.append(0)
        if flexible:
            out.append(0)
    out += _INT32.pack(data.get("throttle_time", 0))
    if flexible:
        out.append(0)
    out[0:4] = _INT32.pack(len(out) - 4)
    return bytes(out)
