"""The Produce response written directly is byte for byte what kio's generic encoder writes
from Kafka's schema, for every version served (3-9) and any contents: partitions with errors,
record errors, messages, append times, unicode topic names."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pylogctl.broker.produce_response import VERSIONS, encode_produce_response
from pylogctl.broker.protocol import RequestHeader, _frame, _kio

INT64 = st.integers(-1, 2**63 - 1)  # append times stay in datetime's range (kio's type)
TEXT = st.none() | st.text(max_size=20)
PARTITION = st.fixed_dictionaries({
    "index": st.integers(0, 2**31 - 1), "error_code": st.sampled_from([0, 2, 3, 10, 87, 76]),
    "base_offset": INT64, "log_append_time": st.just(-1) | st.integers(0, 2**42),
    "log_start_offset": INT64,
    "record_errors": st.lists(st.fixed_dictionaries({
        "batch_index": st.integers(0, 1000), "batch_index_error_message": TEXT}), max_size=3),
    "error_message": TEXT})
DATA = st.fixed_dictionaries({
    "responses": st.lists(st.fixed_dictionaries({
        "name": st.text(min_size=1, max_size=30),
        "partition_responses": st.lists(PARTITION, max_size=4)}), max_size=4),
    "throttle_time": st.integers(0, 2**31 - 1)})


def _kio_frame(version: int, correlation_id: int, data: dict) -> bytes:
    cls = _kio().index.load_response_schema(0, version)
    return b"".join(_frame(cls, correlation_id, data).parts)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(VERSIONS)), st.integers(-2**31, 2**31 - 1), DATA)
def test_the_direct_produce_response_is_kios_bytes(version, correlation_id, data):
    assert encode_produce_response(version, correlation_id, data) == \
        _kio_frame(version, correlation_id, data)


def test_a_typical_answer_is_the_same_through_encode_response():
    from pylogctl.broker.protocol import encode_response

    data = {"responses": [{"name": "t", "partition_responses": [
        {"index": 0, "error_code": 0, "base_offset": 42, "log_append_time": -1,
         "log_start_offset": 0, "record_errors": [], "error_message": None}]}],
        "throttle_time": 0}
    for version in VERSIONS:
        frame = b"".join(encode_response(RequestHeader(0, version, 7, "c"), data).parts)
        assert frame == _kio_frame(version, 7, data)
