"""Plans that scale: on a log dir of 2,000 partitions where two need each command, the text
and table plans of ``recover``, ``rebuild-index``, ``retention`` and ``compact`` show those two
and one line counting the rest; ``-v`` and the JSON formats keep every partition."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import yaml
from cleaner_support import keyed_batch
from pylogctl.storage.checkpoint import format_checkpoint
from pylogctl.storage.log import Log
from pylogctl.storage.log_config import LogConfig

PARTITIONS = 2000
NOW = int(time.time() * 1000)
OLD = (20, 1020)  # records a year old: retention deletes them
COMPACTABLE = (30, 1030)  # two closed segments of one key: the cleaner cleans them
NO_INDEX = (10, 1010)  # an index file lost: recovery and rebuild-index rebuild it


def _template(part: Path, batches: list[bytes], rolls: int) -> int:
    part.mkdir(parents=True)
    with Log.load(part, LogConfig()) as log:
        for data in batches:
            log.append_as_follower(data)
            if rolls:
                log.roll()
                rolls -= 1
        log.flush()
        return log.log_end_offset


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    """The log dir, written once per module: three small partitions copied 2,000 times."""
    root = tmp_path_factory.mktemp("many")
    templates = root / "templates"
    ends = {
        "plain": _template(templates / "t-0", [keyed_batch(0, [(b"k", b"v")], ts=NOW)], 0),
        "old": _template(templates / "t-1", [keyed_batch(0, [(b"k", b"v")], ts=1000)], 0),
        "compactable": _template(templates / "t-2", [keyed_batch(0, [(b"k", b"1")], ts=NOW),
                                                     keyed_batch(1, [(b"k", b"2")], ts=NOW)],
                                 2),
    }
    log_dir = root / "logs"
    log_dir.mkdir()
    (log_dir / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=many\n")
    entries = []
    for p in range(PARTITIONS):
        kind = "old" if p in OLD else "compactable" if p in COMPACTABLE else "plain"
        src = templates / f"t-{list(ends).index(kind)}"
        shutil.copytree(src, log_dir / f"t-{p}")
        entries.append(f"t {p} {ends[kind]}")
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        (log_dir / name).write_text(format_checkpoint(entries))
    (log_dir / ".kafka_cleanshutdown").write_text("")
    for p, suffix in zip(NO_INDEX, (".index", ".timeindex")):
        (log_dir / f"t-{p}" / f"00000000000000000000{suffix}").unlink()
    return log_dir


def _shown(out: str) -> list[str]:
    """The partitions a text plan shows (its lines that start a partition's block)."""
    return [line.split(" ", 1)[0] for line in out.splitlines() if line.startswith("t-")]


COMMANDS = {
    "recover": ((), NO_INDEX),
    "retention": ((), OLD),
    # loading the partitions that lost an index recovers them first: the plan notes it
    "compact": (("--config", "cleanup.policy=compact"), sorted(COMPACTABLE + NO_INDEX)),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_plan_shows_the_partitions_with_work_and_one_line_for_the_rest(cli, many, command):
    options, busy = COMMANDS[command]
    r = cli(command, many, *options)
    assert r.code == 0, r.err
    assert _shown(r.out) == [f"t-{p}" for p in busy]
    assert r.lines[-1] == (f"{PARTITIONS - len(busy):,} of 2,000 partitions: nothing to do "
                           f"(-v lists them)")
    assert sum("nothing to do" in line for line in r.lines) == 1


# the other views of the same plan, on three of the partitions (a full pass each is slow)
FEW = (0, NO_INDEX[0], PARTITIONS - 1)


def test_verbose_and_json_list_every_partition(cli, many):
    dirs = [many / f"t-{p}" for p in FEW]
    r = cli("recover", *dirs)
    assert _shown(r.out) == [f"t-{NO_INDEX[0]}"]
    assert r.lines[-1] == "2 of 3 partitions: nothing to do (-v lists them)"
    r = cli("recover", *dirs, "-v")
    assert _shown(r.out) == [f"t-{p}" for p in FEW] and "nothing to do (-v" not in r.out
    for output in ("json", "yaml"):
        r = cli("compact", *dirs, "--config", "cleanup.policy=compact", "-o", output)
        assert [s["partition"] for s in yaml.safe_load(r.out)] == [f"t-{p}" for p in FEW]
    r = cli("retention", *dirs, "-o", "json")
    assert [s["partition"] for s in json.loads(r.out)] == [f"t-{p}" for p in FEW]


def test_a_table_keeps_its_rows_and_counts_the_rest_on_stderr(cli, many):
    r = cli("recover", *[many / f"t-{p}" for p in FEW], "-o", "table")
    assert r.code == 0, r.err
    assert [line.split()[1] for line in r.lines if line.startswith("partition: ")] == [
        f"t-{NO_INDEX[0]}"]
    assert "2 of 3 partitions: nothing to do (-v lists them)" in r.err.splitlines()


def test_rebuild_index_shows_the_segments_with_work(cli, many):
    # on a tenth of the partitions: rebuilding every index to compare takes a while
    dirs = [many / f"t-{p}" for p in sorted({*range(0, PARTITIONS, 10), *NO_INDEX})]
    segments = sum(len(list(d.glob("*.log"))) for d in dirs)
    r = cli("rebuild-index", *dirs)
    assert r.code == 0, r.err
    assert r.lines[-1] == (f"{segments - 2:,} of {segments:,} segments: nothing to do "
                           f"(-v lists them)")
    assert all(f"/t-{p}/" in r.out for p in NO_INDEX), r.out
    assert not any(f"/t-{p}/" in r.out for p in OLD + COMPACTABLE)
    assert len(cli("rebuild-index", *dirs[:3], "-v").out) > len(cli("rebuild-index",
                                                                    *dirs[:3]).out)


def test_dump_segment_problems_lists_the_partitions_that_need_attention(cli, many, tmp_path):
    r = cli("dump-segment", many, "--problems")
    assert r.code == 0, r.err
    rows = [line.split() for line in r.lines[3:-1]]
    assert [(row[0], row[1], row[-2]) for row in rows] == [
        ("t", str(p), "missing:active") for p in NO_INDEX]
    assert r.lines[-1] == "2 of 2,000 partitions need attention (--problems)"
    assert len(cli("dump-segment", many).lines) == 3 + PARTITIONS


def test_dump_segment_notes_put_problems_first(cli, many, tmp_path):
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    for p in (0, 1):
        shutil.copytree(many / f"t-{p}", log_dir / f"t-{p}")
    (log_dir / "replication-offset-checkpoint").write_text(format_checkpoint(["t 0 99"]))
    with open(log_dir / "t-1" / "00000000000000000000.log", "ab") as f:
        f.write(b"\0" * 7)
    r = cli("dump-segment", log_dir, "--problems")
    assert r.code == 1
    notes = r.err.splitlines()
    assert notes[0].startswith(f"{log_dir / 't-1'}: Found 7 invalid bytes at the end of ")
    assert notes[1] == (f"{log_dir / 't-0'}: checkpointed high watermark 99 is above the log end "
                        f"offset 1")
