"""The offset-commit fast path agrees with the schema-driven reference decoder
(group_coordinator_records.decode_group_record) on every corpus record and generated ones."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from groups_support import commit_key, commit_value
from pylogctl.errors import CorruptRecordError
from pylogctl.format.coordinator_record import read_body, read_prefix
from pylogctl.format.group_coordinator_records import OFFSET_COMMIT_VALUE, decode_group_record
from pylogctl.groups.offset_commits import (OffsetAndMetadata, decode_offset_commit_key,
                                            decode_offset_commit_value)
from pylogctl.storage.file_records import FileRecords
from support import corpus_params


def reference(key: bytes, value: bytes, record_offset: int) -> tuple:
    # the value by the OffsetCommitValue schema whatever the key type, as the fast path reads
    # it (Kafka 4.4's serde pairs a type-0 key with LegacyOffsetCommitValue, v0 only)
    k = decode_group_record(key, None).key
    v = read_body(value, OFFSET_COMMIT_VALUE, read_prefix(value, "value"), "value")
    epoch, expire = v.get("leaderEpoch", -1), v.get("expireTimestamp", -1)
    return ((k["group"], k["topic"], k["partition"]),
            OffsetAndMetadata(v["offset"], None if epoch < 0 else epoch, v["metadata"],
                              v["commitTimestamp"], None if expire == -1 else expire,
                              record_offset))


def fast(key: bytes, value: bytes, record_offset: int) -> tuple:
    return (tuple(decode_offset_commit_key(key)),
            decode_offset_commit_value(value, record_offset))


@pytest.mark.corpus
@pytest.mark.parametrize("corpus_dir", corpus_params())
def test_fast_path_agrees_with_the_reference_on_every_corpus_commit(corpus_dir):
    seen = 0
    for path in sorted(corpus_dir.rglob("__consumer_offsets-*/*.log")):
        with FileRecords(path) as records:
            for batch in records.batches():
                for r in batch.records():
                    if r.key[:2] in (b"\x00\x00", b"\x00\x01") and r.value is not None:
                        assert fast(r.key, r.value, r.offset) == reference(r.key, r.value,
                                                                           r.offset)
                        seen += 1
            batch = None
    if corpus_dir.name in ("xpx-2016", "iechenyb-2019", "smartassets-connect"):
        assert seen > 0


@given(group=st.text(max_size=40), topic=st.text(max_size=40),
       partition=st.integers(-2**31, 2**31 - 1), key_type=st.sampled_from([0, 1]),
       version=st.integers(0, 4), offset=st.integers(-1, 2**63 - 1),
       epoch=st.integers(-1, 2**31 - 1), metadata=st.text(max_size=50),
       ts=st.integers(-1, 2**63 - 1), expire=st.integers(-1, 2**63 - 1))
def test_fast_path_agrees_on_generated_commits(group, topic, partition, key_type, version,
                                               offset, epoch, metadata, ts, expire):
    key = commit_key(group, topic, partition, key_type)
    value = commit_value(offset, version=version, epoch=epoch if version >= 3 else -1,
                         metadata=metadata, ts=ts, expire=expire if version == 1 else -1)
    assert fast(key, value, 9) == reference(key, value, 9)


@given(st.binary(max_size=40))
def test_arbitrary_value_bytes_decode_alike_or_fail_alike(value):
    key = commit_key("g", "t", 0)
    try:
        expected = reference(key, value, 0)
    except CorruptRecordError:
        with pytest.raises(CorruptRecordError):
            fast(key, value, 0)
        return
    assert fast(key, value, 0) == expected


def test_trailing_bytes_are_ignored_as_kafka_does():
    key = commit_key("g", "t", 3) + b"junk"
    value = commit_value(5) + b"more"
    assert fast(key, value, 0) == reference(key, value, 0)
