"""Share partitions' state from ``__share_group_state``, replayed as the share coordinator does.

The share coordinator (KIP-932) keeps, per share group, topic id and partition, a snapshot
(record type 0) and updates after it (type 1), each carrying the start offset (records below it
are all delivered), the leader epoch, how many records above it are already complete, and the
in-flight state batches. Replaying a partition in offset order, a snapshot replaces the state and
an update moves what it sets (``-1`` leaves a field as it was); a tombstone removes the share
partition. Kafka's share-group lag (``kafka-share-groups --describe``) is the partition's end
offset minus the start offset minus the records already complete.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import CorruptRecordError, PylogctlError
from ..format.share_coordinator_records import TOPIC, ShareRecordType, decode_share_record
from ..storage.file_records import FileRecords
from ..storage.log_dir_layout import log_segments
from .replicas import LogDirs


@dataclass
class SharePartitionState:
    """What the share coordinator last persisted for one share partition."""

    start_offset: int
    leader_epoch: int
    delivery_complete_count: int  # -1: not tracked (written before Kafka tracked it)
    state_epoch: int

    def lag(self, end_offset: int | None) -> int | None:
        if end_offset is None or self.start_offset < 0:
            return None
        return max(0, end_offset - self.start_offset - max(0, self.delivery_complete_count))


ShareKey = tuple[str, str, int]  # (group id, topic id, partition)


def load_share_states(log_dirs: LogDirs) -> tuple[dict[ShareKey, SharePartitionState],
                                                  list[str]]:
    """Every share partition's state in the ``__share_group_state`` of ``log_dirs``, and notes
    on records that could not be read (a corrupt batch ends a partition's replay, as recovery
    would cut it)."""
    states: dict[ShareKey, SharePartitionState] = {}
    notes: list[str] = []
    for partition in log_dirs.partitions(TOPIC):
        choice = log_dirs.choose(TOPIC, partition)
        if choice is not None:
            _replay(choice.chosen.path, states, notes)
    return states, notes


def _replay(path: str, states: dict[ShareKey, SharePartitionState], notes: list[str]) -> None:
    for _, segment in log_segments(path):
        try:
            with FileRecords(segment) as records:
                for batch in records.batches():
                    if batch.is_control:
                        continue
                    for record in batch.records():
                        if record.key is not None:
                            _apply(states, record.key, record.value)
        except PylogctlError as exc:
            notes.append(f"{segment}: {exc}; share state read up to there")
            return


def _apply(states: dict[ShareKey, SharePartitionState], key: bytes, value: bytes | None) -> None:
    try:
        rec = decode_share_record(key, value)
    except CorruptRecordError:
        return  # a type this release does not know: Kafka's coordinator skips it too
    k = rec.key
    share_key = (k["groupId"], str(k["topicId"]), k["partition"])
    if rec.value is None:
        states.pop(share_key, None)
        return
    v = rec.value
    if rec.record_type == ShareRecordType.SHARE_SNAPSHOT:
        states[share_key] = SharePartitionState(v["startOffset"], v["leaderEpoch"],
                                                v.get("deliveryCompleteCount", -1),
                                                v.get("stateEpoch", 0))
        return
    old = states.get(share_key) or SharePartitionState(-1, -1, -1, 0)
    states[share_key] = SharePartitionState(
        v["startOffset"] if v["startOffset"] != -1 else old.start_offset,
        v["leaderEpoch"] if v["leaderEpoch"] != -1 else old.leader_epoch,
        v.get("deliveryCompleteCount", -1) if v.get("deliveryCompleteCount", -1) != -1
        else old.delivery_complete_count, old.state_epoch)
