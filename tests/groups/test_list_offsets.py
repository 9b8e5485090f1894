"""ListOffsets from the files (:mod:`pylogctl.groups.list_offsets`), judged by its definition:
for a timestamp the first record at or after it (at or above the log start offset), for -3 the
first record holding the largest timestamp, nothing at or past the high watermark -- on a log
of many segments and index entries, as the engine wrote it and with indexes a load must
rebuild, whose answers must not change once ``pylogctl recover`` has rebuilt them.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.format.compression import Codec
from pylogctl.groups.list_offsets import OffsetLister
from pylogctl.groups.replicas import LogDirs
from pylogctl.storage.list_offsets import (EARLIEST_TIMESTAMP, LATEST_TIMESTAMP,
                                           LATEST_TIERED_TIMESTAMP, MAX_TIMESTAMP)
from pylogctl.storage.log_config import LogConfig
from pylogctl.storage.log_dir import LogDir
from pylogctl.tools.sample import write_sample_log_dir
from support import run_pylogctl

CONFIG = LogConfig(segment_bytes=4000, index_interval_bytes=150)
BASE = 1_700_000_000_000


def _write(log_dir: Path, hw_behind: int = 0, seed: int = 7) -> list[tuple[int, int]]:
    """A partition ``ts-0`` of random batches (some compressed, timestamps out of order);
    returns every record's ``(offset, timestamp)``."""
    (log_dir / "ts-0").mkdir()
    rng = random.Random(seed)
    records, data, offset = [], [], 0
    for n in range(120):
        builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=3,
                                     codec=Codec.LZ4 if n % 4 == 0 else Codec.NONE)
        for _ in range(rng.randint(1, 4)):
            ts = BASE + n * 20 + rng.randint(-60, 30)
            records.append((builder.append(ts, None, b"x" * 40), ts))
        offset = builder.next_offset()
        data.append(builder.build())
    logs = LogDir(str(log_dir))

    def action(log, _checkpoint):
        for batch in data:
            log.append_as_follower(batch)

    logs.with_loaded_log(logs.entry_for_dir(str(log_dir / "ts-0")), CONFIG, None, None, action)
    # the high watermark a broker would checkpoint (a load only updates an existing entry)
    checkpoint = log_dir / "replication-offset-checkpoint"
    entries = checkpoint.read_text().split("\n")[2:-1] + [f"ts 0 {offset - hw_behind}"]
    checkpoint.write_text("0\n" + f"{len(entries)}\n" + "".join(e + "\n" for e in entries))
    return records


def _expected(records, target: int, start: int, hw: int) -> int | None:
    if target == MAX_TIMESTAMP:
        top = max(ts for _, ts in records)
        found = min(o for o, ts in records if ts == top)
    else:
        found = min((o for o, ts in records if ts >= target and o >= start), default=None)
    return None if found is None or found >= hw else found


def _answers(log_dir: Path, targets) -> dict[int, int | None]:
    lister = OffsetLister(LogDirs([log_dir]))
    return {t: lister.list_offset("ts", 0, t).offset for t in targets}


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    write_sample_log_dir(tmp_path / "logs")
    return tmp_path / "logs"


TARGETS = [MAX_TIMESTAMP, BASE - 100, BASE, *range(BASE + 5, BASE + 2500, 37), BASE + 10**6]


def test_list_offsets_follow_their_definition_over_many_segments(log_dir):
    records = _write(log_dir)
    assert len(list((log_dir / "ts-0").glob("*.log"))) > 3
    end = records[-1][0] + 1
    answers = _answers(log_dir, TARGETS + [LATEST_TIMESTAMP, EARLIEST_TIMESTAMP])
    for t in TARGETS:
        assert answers[t] == _expected(records, t, 0, end), t
    assert answers[LATEST_TIMESTAMP] == end and answers[EARLIEST_TIMESTAMP] == 0


def test_nothing_at_or_past_the_high_watermark(log_dir):
    records = _write(log_dir, hw_behind=5)
    hw = records[-1][0] + 1 - 5
    answers = _answers(log_dir, TARGETS + [LATEST_TIMESTAMP, LATEST_TIERED_TIMESTAMP])
    for t in TARGETS:
        assert answers[t] == _expected(records, t, 0, hw), t
    assert answers[LATEST_TIMESTAMP] == hw
    assert answers[LATEST_TIERED_TIMESTAMP] is None  # no remote storage offline


def test_segments_a_load_recovers_answer_as_after_recovery(log_dir, tmp_path):
    records = _write(log_dir)
    for name in ("00000000000000000000.timeindex",):
        (log_dir / "ts-0" / name).unlink()  # lost: the load rebuilds it
    second = sorted((log_dir / "ts-0").glob("*.index"))[1]
    second.write_bytes(b"\0" * 24)  # zeroed entries: corrupt, rebuilt
    before = _answers(log_dir, TARGETS)
    end = records[-1][0] + 1
    assert before == {t: _expected(records, t, 0, end) for t in TARGETS}
    recovered = tmp_path / "recovered"
    shutil.copytree(log_dir, recovered)
    run = run_pylogctl("recover", recovered, "--execute")
    assert run.returncode == 0, run.stderr
    assert _answers(recovered, TARGETS) == before
    # and nothing was written to the dir read
    assert not (log_dir / "ts-0" / "00000000000000000000.timeindex").exists()


def test_unknown_partition_has_no_offset(log_dir):
    lister = OffsetLister(LogDirs([log_dir]))
    assert lister.list_offset("nope", 0, LATEST_TIMESTAMP).offset is None
