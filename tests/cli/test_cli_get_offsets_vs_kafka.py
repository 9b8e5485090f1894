"""``pylogctl get-offsets`` against ``kafka-get-offsets`` on the same bytes.

A real Kafka 4.4 broker gets topics written with explicit timestamps, some out of order, in
uncompressed and compressed batches and over several 1 MiB segments (so the time index has
entries to follow), a topic of twelve partitions (Kafka sorts ``t-10`` before ``t-2``) and a
group commit (``__consumer_offsets`` exists). ``kafka-get-offsets`` runs on the live broker
for -1, -2, -3, timestamps and the partition filters; the broker stops cleanly, and
pylogctl's offline answers on its log dir must be the same lines.

The log dir and Kafka's answers are cached per machine (:func:`kafka_scenarios._cached`, keyed
by this file), with the base time the records were written at: a query's ``T+d`` is that
time plus ``d`` milliseconds.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest

from kafka_jvm import KAFKA_VERSION, KafkaBroker
from kafka_scenarios import LIVE_FILE, _cached, _producer, _topic
from support import run_pylogctl

# per record of "times": (partition, milliseconds after the base time); out-of-order ones included
TIMES = [(0, 0), (0, 10), (0, 5), (0, 30), (0, 20), (1, 50), (1, 40), (1, 60),
         (2, 100), (2, 100), (2, 90)]
BIG_RECORDS = 2600  # ~1 KiB each over 1 MiB segments: three segments
QUERIES = [
    ("--time", "-1"), ("--time", "latest"), ("--time", "-2"), ("--time", "-3"),
    ("--time", "max-timestamp"), ("--time", "-4"), ("--time", "-5"), ("--time", "-6"),
    *[("--time", f"T+{d}") for d in (0, 1, 5, 11, 25, 45, 60, 61, 95, 100, 101,
                                            1500, 16_000, 16_003, 26_000, 26_991,
                                            2_000_000, 10**9)],
    ("--topic", "times", "--time", "T+15"),
    ("--topic", "ti.*", "--partitions", "0,2", "--time", "-3"),
    ("--topic-partitions", "many:3-11,times:1,big", "--time", "-1"),
    ("--topic-partitions", "many:-2,:0", "--time", "-2"),
    ("--topic-partitions", "__.*:1-", "--time", "-1"),
    ("--exclude-internal-topics", "--time", "-1"),
]


def _resolve(query: tuple[str, ...], base: int) -> tuple[str, ...]:
    """The query's arguments with ``T+d`` made a timestamp."""
    return tuple(str(base + int(a[2:])) if a.startswith("T+") else a for a in query)


def _write(broker: KafkaBroker, base: int) -> None:
    from confluent_kafka import Consumer

    _topic(broker, "times", 3)
    _topic(broker, "many", 12)
    _topic(broker, "big", 1, segment_bytes=1048576)
    plain = _producer(broker, **{"compression.type": "none", "linger.ms": 0})
    for i, (p, d) in enumerate(TIMES):
        plain.produce("times", key=f"k{i}".encode(), value=b"v", partition=p,
                      timestamp=base + d)
        if i % 2:
            plain.flush(30)  # batches of one and two records
    plain.flush(30)
    packed = _producer(broker, **{"compression.type": "lz4", "linger.ms": 50})
    for i in range(8):  # one compressed batch, its max timestamp in the middle
        packed.produce("times", value=b"c", partition=0, timestamp=base + 40 + (i * 5) % 17)
    for p in range(12):
        for i in range(p % 3 + 1):
            packed.produce("many", value=b"m", partition=p, timestamp=base + p * 100 + i)
    packed.flush(30)
    for i in range(BIG_RECORDS):
        # time moves forward with jitter backwards: the time index keeps the maxima
        plain.produce("big", value=bytes(1000), partition=0,
                      timestamp=base + 1000 + i * 10 - (i % 7) * 13)
        if i % 50 == 49:
            plain.flush(30)
    plain.flush(30)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["times"])
    while consumer.poll(5) is None:
        pass
    consumer.commit(asynchronous=False)
    consumer.close()


def _generate(root: Path, version: str) -> None:
    base = int(time.time() * 1000) - 3_600_000  # an hour ago: inside retention, not ahead
    broker = KafkaBroker(log_dir=root / "logs", work_dir=root / "broker", version=version)
    broker.format()
    broker.start()
    try:
        _write(broker, base)
        answers = {" ".join(q): broker.tool("kafka-get-offsets", *_resolve(q, base)).stdout
                   for q in QUERIES}
    finally:
        broker.stop()
    shutil.rmtree(root / "broker")
    (root / LIVE_FILE).write_text(json.dumps({"base": base, "answers": answers}, indent=1))


@pytest.fixture(scope="module")
def kafka_offsets():
    """The log dir Kafka left (read in place: get-offsets writes nothing), the base time of
    its records, and what kafka-get-offsets said for each query."""
    key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    scenario = _cached(f"get-offsets-{key}", _generate, KAFKA_VERSION)
    live = scenario.live
    return scenario.log_dir, live["base"], live["answers"]


@pytest.mark.parametrize("query", QUERIES, ids=" ".join)
def test_get_offsets_prints_what_kafka_printed(kafka_offsets, query):
    log_dir, base, answers = kafka_offsets
    run = run_pylogctl("get-offsets", log_dir, *_resolve(query, base))
    assert run.returncode == 0, run.stderr
    assert run.stdout == answers[" ".join(query)]


def test_get_offsets_saw_the_cases_that_matter(kafka_offsets):
    """The scenario is not vacuous: several segments, Kafka's sort order, lines left out."""
    log_dir, _, by_query = kafka_offsets
    answers = {tuple(q.split(" ")): a for q, a in by_query.items()}
    assert len(list((log_dir / "big-0").glob("*.log"))) >= 3
    latest = answers[("--time", "-1")].splitlines()
    assert latest.index("many:10:2") < latest.index("many:2:3")
    assert any(line.startswith("__consumer_offsets:") for line in latest)
    assert answers[("--time", "-5")] == ""
    # a timestamp past every record: no line; an out-of-order record found by time
    assert answers[("--time", f"T+{10**9}")] == ""
    assert "times:0:1\n" in answers[("--time", "T+5")]
    # found by time in the second and third segments of "big"
    for d in (16_000, 26_000):
        offset = int(answers[("--time", f"T+{d}")].split("big:0:")[1].split()[0])
        assert offset > 1000


def test_get_offsets_json_rows(kafka_offsets):
    log_dir, base, _ = kafka_offsets
    run = run_pylogctl("get-offsets", log_dir, "--topic", "times", "--time", "-3", "-o", "json")
    rows = json.loads(run.stdout)
    assert [(r["topic"], r["partition"]) for r in rows] == [("times", 0), ("times", 1),
                                                            ("times", 2)]
    assert rows[2]["timestamp"] == base + 100 and rows[2]["offset"] == 0
    assert all(r["leaderEpoch"] == 0 for r in rows)
