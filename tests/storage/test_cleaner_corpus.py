"""Compacting what Kafka already compacted: ``__consumer_offsets`` partitions of the two corpus
log dirs that shut down cleanly. Their first segments were cleaned by the broker and their
``cleaner-offset-checkpoint`` names the active segment."""

from __future__ import annotations

import pytest

from cleaner_support import data_records
from load_support import copy_partition, fingerprint
from pylogctl.storage.checkpoint import format_checkpoint
from pylogctl.tools.compact import CompactOptions, Compaction

# (log dir, partition, Kafka's cleaning point, a time within the data's era)
COMPACTED = [
    ("smartassets-connect", "__consumer_offsets-16", 72, 1_572_000_000_000),
    ("smartassets-connect", "__consumer_offsets-37", 127, 1_572_000_000_000),
    ("smartassets-connect", "__consumer_offsets-40", 50, 1_572_000_000_000),
    ("yuanliubei-src", "__consumer_offsets-17", 58, 1_640_900_000_000),
]


def _run(log_dir, partition, now, *, execute):
    options = CompactOptions(partitions=(partition,), now_ms=now, execute=execute)
    section, = Compaction([str(log_dir)], options).partitions()
    assert section.error is None, section.error
    return section


@pytest.mark.corpus
@pytest.mark.parametrize("name,partition,point,now", COMPACTED)
def test_kafkas_cleaning_point_leaves_nothing_to_clean(corpus, tmp_path, name, partition, point,
                                                        now):
    root, _ = copy_partition(corpus, name, partition, tmp_path)
    section = _run(root, partition, now, execute=False)
    assert section.to_clean.first_dirty_offset == point == section.offsets["activeSegment"]
    assert not section.decision.clean and section.checkpoint_update is None


@pytest.mark.corpus
@pytest.mark.parametrize("name,partition,point,now", COMPACTED)
def test_cleaning_kafkas_output_again_changes_no_record(corpus, tmp_path, name, partition,
                                                         point, now):
    """With the cleaner checkpoint gone, the whole log below the active segment is cleaned
    again: every record Kafka kept stays, at its offset, with its key, value and timestamp."""
    root, part = copy_partition(corpus, name, partition, tmp_path)
    (root / "cleaner-offset-checkpoint").write_text(format_checkpoint([]))
    before = data_records(part)
    untouched = {p: b for p, b in fingerprint(part).items() if not p.startswith("0000")}
    section = _run(root, partition, now, execute=True)
    assert section.decision.clean and section.executed
    assert section.rounds[0].stats.records_removed == 0
    assert data_records(part) == before
    assert section.checkpoint_update.new == point
    assert {p: b for p, b in fingerprint(part).items() if not p.startswith("0000")} == untouched
