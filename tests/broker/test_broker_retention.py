"""The broker's retention task deletes old segments from the live logs with the offline
``pylogctl retention`` engine: a real producer (confluent-kafka) fills small segments, the task
(every 100 ms here) moves the log start offset, which ListOffsets reports and from which a
consumer reads; the deleted files are renamed ``.deleted`` and removed after
``file.delete.delay.ms`` (or at shutdown), and after a clean stop the offline commands find a
clean log dir with nothing left for offline retention to delete. Waiting polls with a deadline.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from broker_support import BrokerProcess, BrokerThread
from pylogctl.storage.cleaner.cleaner_config import CleanerConfig
from pylogctl.storage.log_config import LogConfig

ck = pytest.importorskip("confluent_kafka")

from log_task_support import (consume_from_earliest, earliest, now_ms,  # noqa: E402
                              produce, wait_for)

TOPIC = "events"
HOUR_MS = 3_600_000


def segment_bases(part: Path, suffix: str = ".log") -> list[int]:
    return sorted(int(p.name.split(".")[0]) for p in part.glob(f"*{suffix}"))


def live_log(b: BrokerThread, topic: str = TOPIC):
    assert b.broker is not None
    return b.broker.log_manager.logs[(topic, 0)].log


def check_offline(cli, log_dir: Path, *config: str) -> None:
    """recover --check and dump-segment find a clean dir; offline retention with the same
    config (``NAME=VALUE``) has nothing left to delete."""
    assert not list(log_dir.glob("*/*.deleted"))
    r = cli("recover", "--check", log_dir)
    assert r.code == 0, r.out + r.err
    r = cli("dump-segment", *sorted(str(p) for p in log_dir.glob(f"{TOPIC}-0/*.log")))
    assert r.code == 0, r.err
    assert "isvalid: false" not in r.out
    args = [a for c in config for a in ("--config", c)]
    r = cli("retention", log_dir, "--topic", TOPIC, *args, "-o", "json")
    assert r.code == 0, r.out + r.err
    assert [s["changes"] for s in json.loads(r.out)] == [False]


def test_retention_ms_moves_the_log_start_of_the_live_log(tmp_path: Path, cli) -> None:
    """Segments whose records are older than retention.ms go, up to the first segment holding
    a recent record; the files go once file.delete.delay.ms (0 here) has passed."""
    config = LogConfig(segment_bytes=2048, retention_ms=HOUR_MS, file_delete_delay_ms=0)
    old, new = now_ms() - 48 * HOUR_MS, now_ms()
    with BrokerThread(tmp_path, log_config=config, log_retention_check_interval_ms=100) as b:
        offsets = produce(b.bootstrap, TOPIC, [(None, b"old-%03d" % i + b"." * 90, old + i)
                                                for i in range(200)])
        offsets += produce(b.bootstrap, TOPIC, [(None, b"new-%03d" % i, new + i)
                                                 for i in range(50)])
        assert offsets == list(range(250))
        def holds_200_first() -> bool:
            """The first segment is the one holding the first recent record (offset 200)."""
            bases = b.call(lambda: live_log(b).segments.base_offsets)
            return bases[0] <= 200 and (len(bases) == 1 or bases[1] > 200)

        wait_for(holds_200_first, "retention to reach the first recent record")
        start = earliest(b.bootstrap, TOPIC)
        part = tmp_path / f"{TOPIC}-0"
        wait_for(lambda: not list(part.glob("*.deleted")), "the .deleted files to go")
        assert 0 < start == segment_bases(part)[0] == b.call(lambda: live_log(b)
                                                             .log_start_offset)
        read = consume_from_earliest(b.bootstrap, TOPIC, 250)
        assert [o for o, _ in read] == list(range(start, 250))
        assert [v for o, v in read if o >= 200] == [b"new-%03d" % i for i in range(50)]
    check_offline(cli, tmp_path, f"retention.ms={HOUR_MS}")


def test_retention_bytes_renames_then_deletes_after_the_delay(tmp_path: Path, cli) -> None:
    """retention.bytes keeps the log at or above the limit and within one segment of it; the
    doomed segments stay as .deleted files for file.delete.delay.ms (readers finish), and a
    clean shutdown removes those still waiting."""
    limit = 6000
    config = LogConfig(segment_bytes=2048, retention_bytes=limit, file_delete_delay_ms=600_000)
    with BrokerThread(tmp_path, log_config=config, log_retention_check_interval_ms=100) as b:
        produce(b.bootstrap, TOPIC, [(None, b"v-%03d" % i + b"." * 90, now_ms())
                                     for i in range(300)])

        def sizes() -> list[int]:
            return b.call(lambda: [s.size for s in live_log(b).segments])

        wait_for(lambda: sum(sizes()) - sizes()[0] < limit, "retention.bytes to be met")
        assert sum(sizes()) >= limit
        start = earliest(b.bootstrap, TOPIC)
        part = tmp_path / f"{TOPIC}-0"
        assert start > 0 and segment_bases(part)[0] == start
        doomed = segment_bases(part, ".log.deleted")
        assert doomed and max(doomed) < start
        read = consume_from_earliest(b.bootstrap, TOPIC, 300)
        assert [o for o, _ in read] == list(range(start, 300))
        assert read[-1][1] == b"v-299" + b"." * 90
    check_offline(cli, tmp_path, f"retention.bytes={limit}")


def test_retention_honours_cleanup_policy(tmp_path: Path) -> None:
    """The retention task skips logs whose cleanup.policy has compact (the cleaner's, which is
    off here: then nothing deletes from them, as in Kafka) and trims the others."""
    config = LogConfig(segment_bytes=2048, retention_ms=HOUR_MS, file_delete_delay_ms=0)
    old = now_ms() - 48 * HOUR_MS
    interval = 3_600_000  # the test runs the task itself
    with BrokerThread(tmp_path, log_config=config, log_retention_check_interval_ms=interval,
                      cleaner=CleanerConfig(enable_cleaner=False)) as b:
        records = [(b"k%d" % (i % 5), b"x" * 100, old + i) for i in range(100)]
        produce(b.bootstrap, TOPIC, records)
        produce(b.bootstrap, "compacted", records)

        def compact_it() -> None:
            log = live_log(b, "compacted")
            log.config = dataclasses.replace(log.config, cleanup_policy=("compact", "delete"))

        b.call(compact_it)
        assert b.broker is not None
        deleted = b.call(b.broker.log_manager.cleanup_logs, now_ms())
        assert deleted > 0
        assert b.call(lambda: live_log(b).log_start_offset) == 100
        assert b.call(lambda: live_log(b, "compacted").log_start_offset) == 0


def test_the_cli_option_sets_the_retention_interval(tmp_path: Path) -> None:
    """``pylogctl broker start --log-retention-check-interval-ms``: records older than the
    default retention.ms (7 days) go within the interval, not the default 5 minutes."""
    with BrokerProcess(tmp_path, "--log-retention-check-interval-ms", "100") as b:
        produce(b.bootstrap, TOPIC, [(None, b"x", now_ms() - 8 * 24 * HOUR_MS)])
        wait_for(lambda: earliest(b.bootstrap, TOPIC) == 1, "retention by the default 7 days")
