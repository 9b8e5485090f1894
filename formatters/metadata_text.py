"""Text for ``pylogctl metadata``'s sections: the lines Kafka's tools print.

- ``metadata-shell``: what ``kafka-metadata-shell`` printed (the section's ``lines``).
- ``metadata-topics``: ``kafka-topics --describe``, a topic line then a line per partition.
- ``metadata-features``: ``kafka-features describe``'s padded columns.
- ``metadata-check``: a line per problem, then a summary.
"""

from __future__ import annotations

from typing import Any, TextIO

from . import Section


def render_shell(section: Section, out: TextIO) -> None:
    for row in section.items:
        out.write(row["line"] + "\n")


def _ids(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


def render_topics(section: Section, out: TextIO) -> None:
    """``TopicCommand``'s ``TopicDescription`` and ``PartitionDescription`` lines."""
    for t in section.items:
        configs = ",".join(f"{k}={v}" for k, v in t["configs"].items())
        out.write(f"Topic: {t['topic']}\tTopicId: {t['topicId']}\tPartitionCount: "
                  f"{t['partitionCount']}\tReplicationFactor: {t['replicationFactor']}\t"
                  f"Configs: {configs}\n")
        for p in t["partitions"]:
            out.write(_partition_line(t["topic"], p))


def _partition_line(topic: str, p: dict[str, Any]) -> str:
    leader = "none" if p["leader"] < 0 else p["leader"]
    line = (f"\tTopic: {topic}\tPartition: {p['partition']}\tLeader: {leader}\tReplicas: "
            f"{_ids(p['replicas'])}\tIsr: {_ids(p['isr'])}")
    if p["addingReplicas"] or p["removingReplicas"]:
        line += (f"\tAdding Replicas: {_ids(p['addingReplicas'])}\tRemoving Replicas: "
                 f"{_ids(p['removingReplicas'])}")
    return line + f"\tElr: {_ids(p['elr'])}\tLastKnownElr: {_ids(p['lastKnownElr'])}\n"


def render_features(section: Section, out: TextIO) -> None:
    for r in section.items:
        out.write(f"Feature: {r['feature']:<40}  SupportedMinVersion: "
                  f"{r['supportedMinVersion']:<15}  SupportedMaxVersion: "
                  f"{r['supportedMaxVersion']:<15}  FinalizedVersionLevel: "
                  f"{r['finalizedVersionLevel']:<15}  Epoch: {r['epoch']}\n")


def render_check(section: Section, out: TextIO) -> None:
    count = 0
    for r in section.items:
        count += 1
        out.write(f"{r['logDir']}: {r['problem']}: {r['detail']}\n")
    out.write(f"{count} problem{'' if count == 1 else 's'} found\n" if count
              else "no problem found\n")


SECTION_RENDERERS = {"metadata-shell": render_shell, "metadata-topics": render_topics,
                     "metadata-features": render_features, "metadata-check": render_check}
