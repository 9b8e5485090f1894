"""What the real Kafka broker serves from a log dir: the judge of every command that writes one.

:func:`serve` starts a real KRaft broker (:class:`kafka_jvm.KafkaBroker`) on a log dir, reads
every record of every topic with Kafka's own Java consumer and every consumer group's committed
offsets with Kafka's Admin client (``apache_kafka/clients/ServedRecords.java``), stops the broker
cleanly and returns all that with the broker's log. :data:`REPAIR_LINES` are what Kafka's
``LogLoader`` logs when it has to repair a log at start-up.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kafka_answers import cached_json, dir_key
from kafka_jvm import KAFKA_DIR, KafkaBroker, java_program
from kafka_scenarios import Scenario

SOURCE = KAFKA_DIR / "clients" / "ServedRecords.java"

# what Kafka's LogLoader logs when it repairs a log (none may name a partition pylogctl wrote)
REPAIR_LINES = ("Could not find offset index file", "Found a corrupted index file",
                "Found invalid messages", "Truncating", "since no clean shutdown file was found "
                "and the segment is corrupt", "Deleting segment", "Rebuilding index",
                "Corrupt index found", "corrupted")


# timed-out transactions are aborted within half a second, not ten
OVERRIDES = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": 500}
SKIPPED_MARKERS = "Couldn't find leader endpoint for partitions"
SENT_MARKERS = "Sending txn markers for"


@dataclass
class Served:
    """Records by ``topic-partition`` (each a dict: offset, timestamp, key and value in hex,
    headers), the log start and end offsets the broker reported, committed offsets by
    ``(group, topic-partition)``, and the broker's log lines."""

    records: dict[str, list[dict]] = field(default_factory=dict)
    start: dict[str, int] = field(default_factory=dict)
    end: dict[str, int] = field(default_factory=dict)
    committed: dict[tuple[str, str], int] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    def repairs(self, partitions: list[str] | None = None) -> list[str]:
        """The broker's repair lines (those naming one of ``partitions``, if given)."""
        return [ln for ln in self.log if any(p in ln for p in REPAIR_LINES)
                and (partitions is None or any(f"{p}," in ln or f"{p}]" in ln or f"{p} " in ln
                                               or f"/{p}/" in ln for p in partitions))]


def serve(log_dir: Path, work_dir: Path, isolation: str = "read_committed") -> Served:
    """Start the real broker on ``log_dir``, read everything it serves, stop it; or what it
    served from these very bytes before (:mod:`kafka_answers`: then ``log_dir`` is left as
    it is, where the broker would have rewritten its checkpoints)."""
    key = dir_key(log_dir, [SOURCE], isolation, json.dumps(OVERRIDES, sort_keys=True))
    return _from_json(cached_json("served", key,
                                  lambda: _to_json(_serve(log_dir, work_dir, isolation)),
                                  keep=lambda answer: not markers_skipped(answer["log"])))


def markers_skipped(log: list[str]) -> bool:
    """Kafka's transaction coordinator gave up writing an abort's markers at start-up (its
    ``TransactionMarkerChannelManager`` found no leader endpoint yet) and did not send them
    again: the partition's last stable offset then stays at the open transaction, or not,
    by the broker's timing rather than by the bytes, so such an answer is not kept."""
    skipped = [i for i, ln in enumerate(log) if SKIPPED_MARKERS in ln]
    sent = [i for i, ln in enumerate(log) if SENT_MARKERS in ln]
    return bool(skipped) and (not sent or sent[-1] < skipped[-1])


def _to_json(served: Served) -> dict:
    return {"records": served.records, "start": served.start, "end": served.end,
            "committed": [[g, tp, o] for (g, tp), o in served.committed.items()],
            "log": served.log}


def _from_json(data: dict) -> Served:
    return Served(data["records"], data["start"], data["end"],
                  {(g, tp): o for g, tp, o in data["committed"]}, data["log"])


# the abort task's first run on each attempt: Kafka first, then later, once the broker has
# surely learnt its partitions' leaders (a loaded machine needs seconds for that)
ABORT_DELAYS_MS = (500, 15_000, 30_000)


def _serve(log_dir: Path, work_dir: Path, isolation: str) -> Served:
    """One broker run; again on the original bytes when Kafka lost the start-up race of
    :func:`markers_skipped` (what it served then depends on timing, not on the files), with the
    timed-out transactions' abort put off until the broker knows its partitions' leaders."""
    pristine = work_dir.with_name(work_dir.name + "-pristine")
    shutil.rmtree(pristine, ignore_errors=True)
    shutil.copytree(log_dir, pristine, ignore=shutil.ignore_patterns(".lock"))
    try:
        for attempt, delay in enumerate(ABORT_DELAYS_MS, 1):
            if attempt > 1:
                shutil.rmtree(work_dir, ignore_errors=True)
            overrides = {**OVERRIDES,
                         "transaction.abort.timed.out.transaction.cleanup.interval.ms": delay}
            broker = KafkaBroker(log_dir=log_dir, work_dir=work_dir, overrides=overrides)
            broker.start()
            try:
                served = read_served(broker.bootstrap, isolation)
            finally:
                broker.stop()
            served.log = broker.log_text().splitlines()
            if not markers_skipped(served.log) or attempt == len(ABORT_DELAYS_MS):
                return served
            shutil.rmtree(log_dir)
            shutil.copytree(pristine, log_dir)
    finally:
        shutil.rmtree(pristine, ignore_errors=True)
    raise AssertionError("unreachable")


def read_served(bootstrap: str, isolation: str = "read_committed") -> Served:
    """Everything the broker at ``bootstrap`` (Kafka's, or ``pylogctl broker``) serves, read
    by Kafka's own Java consumer and Admin client."""
    out = subprocess.run([*java_program(SOURCE), bootstrap, isolation], capture_output=True, text=True,
                         timeout=180)
    if out.returncode != 0:
        raise AssertionError(f"ServedRecords failed:\n{out.stderr[-3000:]}")
    served = Served()
    for line in out.stdout.splitlines():
        row = json.loads(line)
        if "start" in row:
            served.start, served.end = row["start"], row["end"]
        elif "group" in row:
            served.committed[(row["group"], f"{row['topic']}-{row['partition']}")] = \
                row["committed"]
        else:
            served.records.setdefault(f"{row['topic']}-{row['partition']}", []).append(row)
    return served


_BASELINES: dict[Path, Served] = {}


def baseline(scenario: Callable[[], Scenario], work: Callable[[], Path]) -> Served:
    """What the broker serves from an unchanged copy of a scenario, once per test process
    (``work()`` makes a scratch dir when it is needed)."""
    root = scenario().root
    if root not in _BASELINES:
        scratch = work()
        shutil.copytree(root / "logs", scratch / "logs")
        _BASELINES[root] = serve(scratch / "logs", scratch / "broker")
        assert _BASELINES[root].records, "the baseline serves nothing"
    return _BASELINES[root]


@dataclass
class Changed:
    """A copy of a scenario after a pylogctl command: its plan (``-o json``) and what the
    real broker then serves."""

    log_dir: Path
    plan: list | dict
    served: Served


_CHANGED: dict[tuple[Path, tuple[str, ...]], Changed] = {}


def change(scenario: Callable[[], Scenario], work: Path, *args,
           prepare: Callable[[Path], None] | None = None) -> Changed:
    """Copy the scenario under ``work``, take pylogctl's plan of ``args`` (``"{logs}"`` stands
    for the log dir), execute it, serve the result. Without ``prepare`` the outcome is kept
    for the test process, so the round trips and the crash tests run each command once."""
    from support import run_pylogctl

    key = (scenario().root, tuple(map(str, args)))
    if prepare is None and key in _CHANGED:
        return _CHANGED[key]
    log_dir = work / "logs"
    shutil.copytree(scenario().log_dir, log_dir)
    if prepare is not None:
        prepare(log_dir)
    argv = [str(a).replace("{logs}", str(log_dir)) for a in args]
    planned = run_pylogctl(*argv, "-o", "json")
    assert planned.returncode == 0, planned.stderr
    done = run_pylogctl(*argv, "--execute")
    assert done.returncode == 0, done.stderr
    result = Changed(log_dir, json.loads(planned.stdout), serve(log_dir, work / "broker"))
    if prepare is None:
        _CHANGED[key] = result
    return result
