"""What ``pylogctl stats`` reports, defined once for both engines.

Per topic-partition (every partition dir read, records or not):

- ``records``: records on disk, control records (transaction markers, KRaft control
  records) included, and ``controlRecords`` of them; records below a checkpointed log start
  offset still count (they are on disk until retention deletes their segment);
- ``bytes``: key and value bytes of the records; ``segmentBytes``: the ``.log`` files' size;
- ``firstOffset``/``lastOffset`` and ``minTimestamp``/``maxTimestamp`` (records without a
  timestamp, -1, left out);
- over the data records with a key: ``keyedRecords``, ``distinctKeys``, ``tombstones``
  (keyed records with a null value: deletes), ``duplicateKeyRatio`` (the share of keyed
  records whose key occurs again later, ``1 - distinct/keyed``), and what a compaction would
  remove, ``compactionSavesRecords``/``compactionSavesBytes``: every keyed record but the
  last of its key (the log cleaner keeps the latest value; tombstones themselves go after
  ``delete.retention.ms``, which is not counted), in key and value bytes.

Each engine reduces the records to the same integers (:class:`PartitionCounts`); the rows,
ratio included, are computed from those here, so the engines agree to the last digit.

Per consumer group: the lag summed over its committed partitions, as
``kafka-consumer-groups --describe`` computes each partition's (the high watermark minus the
committed offset), by the same reading
(:class:`pylogctl.groups.committed_offsets.CommittedOffsets`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

# the columns the statistics are computed from
STATS_COLUMNS = ("topic", "partition", "offset", "timestamp", "key", "keySize", "valueSize",
                 "isControl")


@dataclass
class PartitionCounts:
    """The integers one topic-partition's statistics come from (None: no record had one)."""

    records: int = 0
    control_records: int = 0
    bytes: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    min_timestamp: int | None = None
    max_timestamp: int | None = None
    keyed_records: int = 0
    distinct_keys: int = 0
    tombstones: int = 0
    superseded_records: int = 0
    superseded_bytes: int = 0


class PartitionAccumulator:
    """Counts one partition's records arriving in offset order (the local engine).

    A key's earlier records are superseded by its later ones, so only each key's latest
    record size is held: memory grows with the distinct keys of one partition.
    """

    def __init__(self) -> None:
        self.counts = PartitionCounts()
        self._last_size: dict[bytes, int] = {}

    def add(self, chunk: dict[str, list[Any]]) -> None:
        c = self.counts
        offsets = chunk["offset"]
        if not offsets:
            return
        c.records += len(offsets)
        c.first_offset = offsets[0] if c.first_offset is None else min(c.first_offset,
                                                                       offsets[0])
        c.last_offset = offsets[-1] if c.last_offset is None else max(c.last_offset, offsets[-1])
        stamps = [t for t in chunk["timestamp"] if t >= 0]
        if stamps:
            lo, hi = min(stamps), max(stamps)
            c.min_timestamp = lo if c.min_timestamp is None else min(c.min_timestamp, lo)
            c.max_timestamp = hi if c.max_timestamp is None else max(c.max_timestamp, hi)
        last = self._last_size
        for key, ksize, vsize, control in zip(chunk["key"], chunk["keySize"], chunk["valueSize"],
                                              chunk["isControl"]):
            size = (ksize if ksize > 0 else 0) + (vsize if vsize > 0 else 0)
            c.bytes += size
            if control:
                c.control_records += 1
                continue
            if key is None:
                continue
            c.keyed_records += 1
            if vsize < 0:
                c.tombstones += 1
            previous = last.get(key)
            if previous is not None:
                c.superseded_records += 1
                c.superseded_bytes += previous
            last[key] = size

    def finish(self) -> PartitionCounts:
        self.counts.distinct_keys = len(self._last_size)
        self._last_size = {}
        return self.counts


def partition_row(topic: str, partition: int, segment_bytes: int,
                  counts: PartitionCounts) -> dict[str, Any]:
    """One partition's statistics as a JSON-ready row (camelCase, as every pylogctl JSON)."""
    c = counts
    ratio = 0.0 if not c.keyed_records else round(1 - c.distinct_keys / c.keyed_records, 6)
    return {"topic": topic, "partition": partition, "records": c.records,
            "controlRecords": c.control_records, "bytes": c.bytes, "segmentBytes": segment_bytes,
            "firstOffset": c.first_offset, "lastOffset": c.last_offset,
            "minTimestamp": c.min_timestamp, "maxTimestamp": c.max_timestamp,
            "keyedRecords": c.keyed_records, "distinctKeys": c.distinct_keys,
            "tombstones": c.tombstones, "duplicateKeyRatio": ratio,
            "compactionSavesRecords": c.superseded_records,
            "compactionSavesBytes": c.superseded_bytes}


@dataclass
class StatsReport:
    """``partitions``: a row per topic-partition; ``groups``: a row per consumer group;
    ``notes``: what the reading says about itself (for stderr)."""

    partitions: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    problem: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"partitions": self.partitions, "groups": self.groups}


def group_lag(log_dirs: list[str], progress: Callable[[int], None] | None = None
              ) -> tuple[list[dict[str, Any]], list[str], bool]:
    """``(a row per consumer group, notes, whether reading met invalid data)``: the
    committed partitions, how many have a known lag, and their summed lag. ``progress``
    gets the __consumer_offsets bytes replayed (:meth:`CommittedOffsets.read_size`)."""
    if not log_dirs:
        return [], [], False
    from ..format.java_string import java_order
    from ..groups.committed_offsets import CommittedOffsets

    offsets = CommittedOffsets(log_dirs, progress=progress)
    groups = offsets.load_groups(None)
    rows = []
    for group in sorted((g for g in groups.values() if g.is_consumer_group),
                        key=lambda g: java_order(g.group_id)):
        partitions = offsets.partition_lags(group)
        # a commit outside the log (a truncation or retention since) has no lag to add: its
        # consumer resumes wherever auto.offset.reset says
        inside = [p for p in partitions if not p.stranded]
        lags = [p.lag for p in inside if p.lag is not None]
        topics = sorted({p.topic for p in partitions})
        rows.append({"group": group.group_id, "state": group.state, "topics": topics,
                     "partitions": len(partitions), "partitionsWithLag": len(lags),
                     "partitionsOutOfRange": len(partitions) - len(inside),
                     "lag": sum(lags) if lags else None})
    provenance = offsets.reading_provenance(list_hint="")
    notes = ["consumer groups: " + line for line in provenance.lines]
    if rows:
        notes.append("consumer groups: lag is each committed partition's high watermark "
                     "(replication-offset-checkpoint) minus the committed offset, summed")
    notes += [f"consumer groups: not in the lag: {c.describe()}" for c in offsets.stranded]
    return rows, notes, provenance.problem


def counts_from(values: dict[str, Any]) -> PartitionCounts:
    """:class:`PartitionCounts` from a dict of its field names (a Spark aggregate row)."""
    return PartitionCounts(**{k: values[k] for k in asdict(PartitionCounts())})


def report(sources: Iterable[tuple[str, int, int]], counts: dict[tuple[str, int],
                                                                  PartitionCounts],
           log_dirs: list[str], notes: list[str],
           progress: Callable[[int], None] | None = None) -> StatsReport:
    """The report from each partition's ``(topic, partition, segment bytes)`` and counts
    (``progress``: for the consumer groups' replay, see :func:`group_lag`)."""
    seen: dict[tuple[str, int], int] = {}
    for topic, partition, segment_bytes in sources:
        seen[(topic, partition)] = seen.get((topic, partition), 0) + segment_bytes
    rows = [partition_row(t, p, b, counts.get((t, p), PartitionCounts()))
            for (t, p), b in sorted(seen.items())]
    groups, group_notes, problem = group_lag(log_dirs, progress)
    return StatsReport(rows, groups, notes + group_notes, problem)
