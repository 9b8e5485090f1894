"""Where ``consumer-groups`` takes the ``__consumer_offsets`` partition count from: the option,
else the KRaft metadata image, else the partitions on disk (groups/offsets_topic.py)."""

from __future__ import annotations

from pylogctl.tools.consumer_groups import ConsumerGroups


def test_the_image_beats_the_partitions_on_disk(corpus):
    broker1 = corpus / "kraft3-cluster" / "kafka1"  # holds partitions up to 45 of 50
    assert ConsumerGroups([broker1]).topic.partition_count == 50
    assert ConsumerGroups([broker1], partition_count=7).topic.partition_count == 7


def test_without_a_metadata_log_the_disk_decides(corpus):
    assert ConsumerGroups([corpus / "iechenyb-2019"]).topic.partition_count == 50
