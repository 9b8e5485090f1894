"""The crash harness's pieces: an independent batch walker (the test oracle), checkpoint files,
the damage the scenarios start from, running the CLI (killed or not), and the checks made after
every kill.

The oracle reads ``.log`` files with nothing from pylogctl: a batch is ``baseOffset`` (int64),
``length`` (int32) and ``length`` more bytes; for magic 2 the last offset is the base plus the
``lastOffsetDelta`` at byte 23. Batches are compared by their bytes (a BLAKE2 digest), which
covers every record's key, value, headers and timestamp, and the batch CRC.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

HERE = Path(__file__).resolve().parent
CRASHPOINT = HERE / "crashpoint.py"
FORK_SERVER = HERE / "fork_server.py"
SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")
LEFTOVER_SUFFIXES = (".swap", ".cleaned", ".deleted")  # Kafka's loader resolves them
TEMP_SUFFIX = ".tmp"  # an atomic write's temp file
KILLED = -9  # subprocess returncode of a process that died of SIGKILL
P = TypeVar("P")


# -- the oracle ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Batch:
    base: int
    last: int
    digest: bytes


def segment_logs(part: Path) -> list[tuple[int, Path]]:
    """``(base offset, path)`` of the partition's ``{base:020d}.log`` files, ascending."""
    found = ((SEGMENT_NAME.match(p.name), p) for p in part.iterdir())
    return sorted((int(m.group(1)), p) for m, p in found if m)


def read_batches(log: Path, strict: bool) -> list[Batch]:
    """The whole batches of one ``.log``. ``strict``: anything after the last whole batch, or a
    batch that is not magic 2, is an error (a recovered log has neither)."""
    data = log.read_bytes()
    out, pos = [], 0
    while pos + 17 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if length < 14 or end > len(data):
            break
        if data[pos + 16] != 2:
            raise AssertionError(f"{log}: magic {data[pos + 16]} at byte {pos}: the oracle "
                                 f"reads magic 2 only")
        last = base + struct.unpack_from(">i", data, pos + 23)[0]
        out.append(Batch(base, last, hashlib.blake2b(data[pos:end], digest_size=16).digest()))
        pos = end
    if strict and pos != len(data):
        raise AssertionError(f"{log}: {len(data) - pos} bytes after the last whole batch "
                             f"(byte {pos})")
    return out


def partition_batches(part: Path, strict: bool = False) -> list[Batch]:
    return [b for _, log in segment_logs(part) for b in read_batches(log, strict)]


def log_end(part: Path, batches: list[Batch]) -> int:
    """The next offset: after the last batch, or the newest segment's base if that is later."""
    bases = [base for base, _ in segment_logs(part)]
    return max([batches[-1].last + 1 if batches else 0] + bases)


# -- checkpoints --------------------------------------------------------------------------------
def read_checkpoint(path: Path) -> dict[tuple[str, int], int]:
    """A log dir's offset checkpoint (version, count, then ``topic partition offset`` lines)."""
    if not path.exists():
        return {}
    lines = path.read_text().split("\n")[2:]
    out = {}
    for line in lines:
        if line.strip():
            topic, partition, offset = line.split()
            out[(topic, int(partition))] = int(offset)
    return out


def write_checkpoint_entry(path: Path, topic: str, partition: int, offset: int) -> None:
    entries = read_checkpoint(path)
    entries[(topic, partition)] = offset
    lines = ["0", str(len(entries))] + [f"{t} {p} {o}" for (t, p), o in entries.items()]
    path.write_text("\n".join(lines) + "\n")


def topic_partition(part: Path) -> tuple[str, int]:
    topic, _, partition = part.name.rpartition("-")
    return topic, int(partition)


def checkpointed(log_dir: Path, part: Path, name: str) -> int | None:
    return read_checkpoint(log_dir / name).get(topic_partition(part))


# -- copies -------------------------------------------------------------------------------------
def copy_corpus_partition(corpus: Path, log_dir: str, partition: str, dst: Path) -> Path:
    """``dst/{log_dir}`` holding the corpus log dir's own files and one partition, writable;
    returns the partition dir."""
    src = corpus / log_dir
    target = dst / log_dir
    target.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file() and f.name != ".lock":
            shutil.copyfile(f, target / f.name)
    shutil.copytree(src / partition, target / partition, copy_function=shutil.copyfile)
    os.chmod(target / partition, 0o755)
    return target / partition


def write_segmented_partition(log_dir: Path, name: str, batches: int,
                              epoch_every: int) -> int:
    """``log_dir/name``: ``batches`` batches of three 60-byte records, a new leader epoch every
    ``epoch_every`` batches, appended through the engine with 3000-byte segments (so several
    segments, indexes and producer snapshots); returns the log end offset."""
    from pylogctl.format.builder import RecordBatchBuilder
    from pylogctl.storage.log_config import LogConfig
    from pylogctl.storage.log_dir import LogDir

    (log_dir / name).mkdir()
    data, offset = [], 0
    for n in range(batches):
        builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=n // epoch_every)
        for _ in range(3):
            builder.append(1_700_000_000_000 + offset, None, b"x" * 60)
        offset = builder.next_offset()
        data.append(builder.build())
    logs = LogDir(str(log_dir))
    logs.with_loaded_log(logs.entry_for_dir(str(log_dir / name)), LogConfig(segment_bytes=3000),
                         None, None, lambda log, _: [log.append_as_follower(b) for b in data])
    return offset


def file_bytes(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (relative name -> bytes), the lock file left out."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".lock"}


# -- running the CLI ----------------------------------------------------------------------------
PYCACHE = {"prefix": None}  # set by conftest.py: one bytecode cache for every child process


def cli_env(scratch: Path) -> dict[str, str]:
    """A fixed hash seed (the same events in every run), ``$TMPDIR`` in ``scratch`` (where a
    killed rebuild-index leaves its scratch indexes) and, when set, a shared bytecode cache
    outside the repository: hundreds of children each compiling pylogctl from source would
    double the suite's time."""
    scratch.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONHASHSEED": "0", "TMPDIR": str(scratch)}
    if PYCACHE["prefix"] is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE["prefix"])
    return env


class ForkServer:
    """One ``fork_server.py`` process: requests one at a time (a thread holds it meanwhile)."""

    def __init__(self) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="fork-server-"))
        self.proc = subprocess.Popen([sys.executable, str(FORK_SERVER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True,
                                     env=cli_env(self.scratch))

    def ask(self, request: dict) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"fork_server.py exited {self.proc.wait()}")
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)
        shutil.rmtree(self.scratch, ignore_errors=True)


_IDLE: "queue.SimpleQueue[ForkServer]" = queue.SimpleQueue()
_ALL: list[ForkServer] = []
_LOCK = threading.Lock()


def _run(args: list, scratch: Path, **options) -> dict:
    """One command through an idle fork server (a new one when none is idle)."""
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        server = _IDLE.get_nowait()
    except queue.Empty:
        with _LOCK:
            server = ForkServer()
            _ALL.append(server)
    try:
        return server.ask({"args": [str(a) for a in args], "tmpdir": str(scratch), **options})
    finally:
        _IDLE.put(server)


def close_servers() -> None:
    """Stop every fork server (the session's end)."""
    with _LOCK:
        while _ALL:
            _ALL.pop().close()
        while not _IDLE.empty():
            _IDLE.get_nowait()


def run_cli(args: list[str], scratch: Path) -> subprocess.CompletedProcess:
    """``pylogctl args`` with ``$TMPDIR`` in ``scratch``, as a child process (forked from a
    server that imported the CLI: :mod:`fork_server`)."""
    done = _run(args, scratch)
    return subprocess.CompletedProcess(["pylogctl", *map(str, args)], done["code"], done["out"],
                                       done["err"])


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str


def run_cli_batch(commands: list[list], scratch: Path) -> list[CliResult]:
    """Each command in its own process, one after the other (:func:`run_cli` for each)."""
    results = []
    for args in commands:
        done = _run(args, scratch)
        results.append(CliResult(done["code"], done["out"], done["err"]))
    return results


def run_crashpoint(mode: list[str], roots: list[Path], args: list[str],
                   scratch: Path) -> subprocess.CompletedProcess:
    """What ``crashpoint.py MODE --under ROOT... -- ARGS`` does, ``mode`` being ``["--kill-at",
    N]`` (run through :mod:`fork_server`, which adds crashpoint's own hook in the child)."""
    assert mode[0] == "--kill-at" and len(mode) == 2, mode
    done = _run(args, scratch, kill_at=int(mode[1]), roots=[str(r) for r in roots])
    return subprocess.CompletedProcess([str(CRASHPOINT), *mode, "--", *map(str, args)],
                                       done["code"], done["out"], done["err"])


def count_kill_points(args: list[str], roots: list[Path], scratch: Path) -> tuple[int, list[str]]:
    """Run the command to its end, counting its mutations: ``(count, trace lines)``."""
    done = _run(args, scratch, count=True, roots=[str(r) for r in roots])
    if done["code"] != 0:
        raise AssertionError(f"{args} failed uninterrupted ({done['code']}): {done['err']}")
    return done["count"], done["trace"]


def spread(count: int, most: int) -> list[int]:
    """Kill points 1..count: all of them, or ``most`` spread evenly over them (the first and
    the last included), always the same for the same count."""
    if count <= most:
        return list(range(1, count + 1))
    return sorted({1 + round(i * (count - 1) / (most - 1)) for i in range(most)})


KILL_WORKERS = 2  # kill runs in parallel: the machine's cores


def prepare_scenarios(scenarios: list, prepare: Callable[[object, Path], P],
                      root: Path) -> dict[str, P]:
    """``prepare(scenario, root / name)`` for each scenario (its uninterrupted run and kill
    points), in parallel: they are independent. Keyed by scenario name."""
    with ThreadPoolExecutor(KILL_WORKERS) as pool:
        done = list(pool.map(lambda s: prepare(s, root / s.name), scenarios))
    return {s.name: p for s, p in zip(scenarios, done)}


def kill_each(points: list[int], trace: list[str], work_root: Path,
              setup: Callable[[Path], tuple[Path, Path, list]],
              check: Callable[[Path, Path, Path], list[str]]) -> list[str]:
    """Kill the command at each point, each on a fresh copy, then check what it left.

    ``setup(work)`` copies the data under ``work`` and returns ``(log dir, partition dir,
    command args)``; ``check(log dir, partition dir, scratch)`` returns the problems. Returns
    one line per failed kill (a kill that did not die of SIGKILL is a failure too)."""
    def one(n: int) -> list[str]:
        work = work_root / f"k{n}"
        log_dir, part, args = setup(work)
        done = run_crashpoint(["--kill-at", str(n)], [log_dir, work / "backup"], args,
                              work / "tmp")
        if done.returncode != KILLED:
            return [f"not killed at mutation {n}: exit {done.returncode} {done.stderr[-500:]}"]
        problems = check(log_dir, part, work / "tmp")
        if not problems:
            shutil.rmtree(work)
        return problems

    with ThreadPoolExecutor(KILL_WORKERS) as pool:
        results = list(pool.map(lambda n: (n, one(n)), points))
    return [f"kill at {n} ({trace[n - 1]}): {'; '.join(problems)}"
            for n, problems in results if problems]
