"""What must hold after a killed command and a ``pylogctl recover --execute``, and what the test
knows about a scenario before running anything (:class:`Prepared`).

The expectations come from the oracle and the damage, not from pylogctl's plans:

- *acked*: the batches holding offsets in [log start checkpoint, bound), bound = the checkpointed
  high watermark, lowered to where the data was already invalid and, for ``truncate
  --to-offset``, to the log end the truncation leaves. They must all be there, byte for byte.
- *shape*: the batches left are a contiguous run of those before (no hole, nothing changed or
  invented), and the log ends where a broker's loading leaves it (``recover``,
  ``rebuild-index``), or for a truncation anywhere from there down to where the truncation ends
  it: ``truncateTo`` deletes the segments above its target one at a time, newest first, so a kill
  leaves a shorter prefix, whose end is a segment's base offset; ``truncateFullyAndStartAt``
  keeps no record, and a kill leaves the old log's end or the new one.
- every index verifies (``rebuild-index --verify``), a second ``recover --check`` has nothing to
  do, no ``.swap``/``.cleaned``/``.deleted`` file is left, and a backup of a file that existed
  before holds its bytes from before. The ``.tmp`` file of an interrupted atomic write is
  reported apart (:class:`Outcome`): Kafka's loader ignores it and the next write reuses it.
- ``recover`` ends in the files an uninterrupted run leaves (its docs promise it).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from crash_scenarios import (HW_CHECKPOINT, LOG_START_CHECKPOINT, RECOVERY_POINT_CHECKPOINT,
                             Scenario)
from crash_support import (KILLED, LEFTOVER_SUFFIXES, TEMP_SUFFIX, Batch, CliResult,
                           checkpointed, copy_corpus_partition, count_kill_points, file_bytes,
                           log_end, partition_batches, run_cli, run_cli_batch, run_crashpoint,
                           segment_logs)

CHECKPOINTS = (HW_CHECKPOINT, LOG_START_CHECKPOINT, RECOVERY_POINT_CHECKPOINT)


@dataclass
class Prepared:
    """A scenario's damaged copy (the template every run copies) and what it must end as."""

    scenario: Scenario
    root: Path  # holds logs/{log dir}/{partition}
    batches: list[Batch]
    segment_bases: list[int]
    loaded_end: int  # the log end once loaded as a broker loads it
    acked: list[Batch]
    final_end: int  # the log end after the uninterrupted command
    reference: dict[str, bytes] = field(default_factory=dict)  # recover: the files it leaves

    @property
    def log_dir(self) -> Path:
        return self.root / "logs" / self.scenario.corpus_dir

    def copy_to(self, root: Path) -> tuple[Path, Path]:
        """A fresh copy of the template for one run: ``(log dir, partition dir)``."""
        shutil.copytree(self.root / "logs", root / "logs")
        return root / "logs" / self.scenario.corpus_dir, \
            root / "logs" / self.scenario.corpus_dir / self.scenario.partition

    def allowed_ends(self) -> set[int]:
        """Where the log may end after a kill and a recovery (see the module docs)."""
        s = self.scenario
        if s.command != "truncate":
            return {self.loaded_end}
        if s.options[0] == "--start-at" or self.final_end < self.segment_bases[0]:
            return {self.loaded_end, self.final_end}
        return {self.loaded_end, self.final_end} | {
            b for b in self.segment_bases if self.final_end < b < self.loaded_end}


def prepare(corpus: Path, scenario: Scenario, root: Path) -> Prepared:
    part = copy_corpus_partition(corpus, scenario.corpus_dir, scenario.partition, root / "logs")
    log_dir = part.parent
    valid_end = scenario.damage(log_dir, part) if scenario.damage else None
    batches = partition_batches(part)
    log_start = checkpointed(log_dir, part, LOG_START_CHECKPOINT) or 0
    walked_end = log_end(part, batches)
    loaded_end = max(walked_end if valid_end is None else valid_end, log_start)
    final_end = _final_end(scenario, part, batches, loaded_end)
    bound = min(loaded_end, checkpointed(log_dir, part, HW_CHECKPOINT) or loaded_end)
    if scenario.command == "truncate":
        bound = min(bound, final_end) if _keeps_a_prefix(scenario, part, final_end) else 0
    acked = [b for b in batches if b.last >= log_start and b.base < bound]
    bases = [b for b, _ in segment_logs(part)]
    return Prepared(scenario, root, batches, bases, loaded_end, acked, final_end)


def _keeps_a_prefix(scenario: Scenario, part: Path, final_end: int) -> bool:
    """False for ``truncateFullyAndStartAt``, which keeps no record."""
    return scenario.options[0] == "--to-offset" and final_end >= segment_logs(part)[0][0]


def _final_end(scenario: Scenario, part: Path, batches: list[Batch], loaded_end: int) -> int:
    """The log end after the command: Kafka's ``truncateTo`` (the batch holding the target
    goes whole, the log ends after the last batch left in the segment cut) or
    ``truncateFullyAndStartAt``; other commands do not move it."""
    if scenario.command != "truncate":
        return loaded_end
    mode, target = scenario.options[0], int(scenario.options[1])
    bases = [b for b, _ in segment_logs(part)]
    if mode == "--start-at" or target < bases[0]:
        return target
    if target >= loaded_end:
        return loaded_end
    cut = max(b for b in bases if b <= target)
    kept = [b for b in batches if cut <= b.base and b.last < target]
    return kept[-1].last + 1 if kept else cut


# -- after a run ---------------------------------------------------------------------------------
def recover_args(log_dir: Path, backup: Path | None) -> list:
    return ["recover", log_dir, "--execute"] + (["--backup-dir", backup] if backup else [])


def verify_args(log_dir: Path) -> list[list]:
    """The read-only checks: every index verifies, a second recovery has nothing to do."""
    return [["rebuild-index", "--verify", log_dir], ["recover", "--check", log_dir]]


def failures(runs: list[tuple[list, CliResult]]) -> list[str]:
    return [f"{' '.join(a for a in args if isinstance(a, str))} exited {r.code}: "
            f"{(r.out + r.err).strip()[-2000:]}" for args, r in runs if r.code != 0]


def recover(log_dir: Path, backup: Path | None, scratch: Path) -> list[str]:
    args = recover_args(log_dir, backup)
    return failures(list(zip([args], run_cli_batch([args], scratch))))


def check_data(prepared: Prepared, part: Path, ends: set[int]) -> list[str]:
    try:
        after = partition_batches(part, strict=True)
    except AssertionError as exc:
        return [str(exc)]
    problems = []
    before = prepared.batches
    start = next((i for i, b in enumerate(before) if after and b.base == after[0].base), None)
    if after and (start is None or before[start:start + len(after)] != after):
        problems.append(f"the batches left ({len(after)}, offsets {after[0].base}.."
                        f"{after[-1].last}) are not a contiguous run of those before")
    kept = set(after)
    missing = [b for b in prepared.acked if b not in kept]
    if missing:
        problems.append(f"{len(missing)} acknowledged batches lost or changed, the first at "
                        f"offset {missing[0].base} (acknowledged: {len(prepared.acked)} batches, "
                        f"offsets below {prepared.acked[-1].last + 1})")
    end = log_end(part, after)
    if end not in ends:
        problems.append(f"the log ends at {end}, expected one of {sorted(ends)}")
    if prepared.scenario.command == "rebuild-index" and after != before:
        problems.append("rebuild-index changed the log's batches")
    return problems


def check_state(log_dir: Path, scratch: Path) -> list[str]:
    commands = verify_args(log_dir)
    return failures(list(zip(commands, run_cli_batch(commands, scratch)))) + leftovers(log_dir)


def leftovers(log_dir: Path) -> list[str]:
    left = sorted(p.name for p in log_dir.rglob("*") if p.name.endswith(LEFTOVER_SUFFIXES))
    return [f"files left over: {left}"] if left else []


def temp_files(log_dir: Path) -> list[str]:
    """The ``.tmp`` files of atomic writes (checkpoints, snapshots, indexes) left behind."""
    return sorted(str(p.relative_to(log_dir)) for p in log_dir.rglob(f"*{TEMP_SUFFIX}"))


def check_backup(prepared: Prepared, backup: Path) -> list[str]:
    """A backup of a file that existed before the command holds the bytes it had then."""
    if not backup.exists():
        return []
    before = file_bytes(prepared.log_dir)
    changed = sorted(name for name, data in file_bytes(backup).items()
                     if name in before and before[name] != data)
    return [f"backups that differ from the file before the command: {changed}"] if changed else []


def check_convergence(prepared: Prepared, log_dir: Path) -> list[str]:
    """``recover`` only: the same files as the uninterrupted run (checkpoints and partition)."""
    if prepared.scenario.command != "recover":
        return []
    now = recovered_files(prepared, log_dir)
    differ = sorted(n for n in now.keys() | prepared.reference.keys()
                    if now.get(n) != prepared.reference.get(n))
    return [f"files differ from an uninterrupted recover's: {differ}"] if differ else []


def recovered_files(prepared: Prepared, log_dir: Path) -> dict[str, bytes]:
    files = file_bytes(log_dir / prepared.scenario.partition)
    for name in CHECKPOINTS:
        if (log_dir / name).exists():
            files[name] = (log_dir / name).read_bytes()
    return files


@dataclass
class Outcome:
    """What the checks found after one run: problems, and ``.tmp`` files left (kept apart:
    see ``test_no_temp_file_is_left_after_a_kill_and_a_recovery``)."""

    problems: list[str]
    temp_files: list[str] = field(default_factory=list)
    work: Path | None = None  # the run's dir (kept when a problem was found)


def check_after(prepared: Prepared, log_dir: Path, backup: Path | None, scratch: Path,
                ends: set[int]) -> Outcome:
    """Recover the log dir, then every check of the module docs."""
    commands = [recover_args(log_dir, backup)] + verify_args(log_dir)
    runs = list(zip(commands, run_cli_batch(commands, scratch)))
    problems = failures(runs)
    if runs[0][1].code != 0:
        return Outcome(problems)
    part = log_dir / prepared.scenario.partition
    problems += check_data(prepared, part, ends) + leftovers(log_dir)
    if backup is not None:
        problems += check_backup(prepared, backup)
    if prepared.reference:
        problems += check_convergence(prepared, log_dir)
    return Outcome(problems, temp_files(log_dir))


# -- runs ----------------------------------------------------------------------------------------
def run_uninterrupted(prepared: Prepared, work: Path) -> tuple[int, list[str], list[str]]:
    """The command run to its end on a copy, counting its kill points, then recovered and
    checked (its log must end exactly where the command ends it): ``(kill points, trace,
    problems)``. A ``recover`` scenario's result becomes the reference the killed runs must
    reach."""
    log_dir, part = prepared.copy_to(work)
    backup = work / "backup"
    args = prepared.scenario.args(log_dir, part, backup)
    problems = check_prediction(prepared, args, work / "tmp")
    count, trace = count_kill_points(args, [log_dir, backup], work / "tmp")
    outcome = check_after(prepared, log_dir, backup if prepared.scenario.backup else None,
                          work / "tmp", {prepared.final_end})
    problems += outcome.problems
    if outcome.temp_files:
        problems.append(f"temp files left over: {outcome.temp_files}")
    if prepared.scenario.command == "recover":
        prepared.reference = recovered_files(prepared, log_dir)
    return count, trace, problems


def check_prediction(prepared: Prepared, args: list, scratch: Path) -> list[str]:
    """``truncate`` only: its plan (no --execute) predicts the log end the oracle computes."""
    if prepared.scenario.command != "truncate":
        return []
    plan_args = [a for a in args[:args.index("--execute")]] + ["-o", "json"]
    done = run_cli(plan_args, scratch)
    predicted = json.loads(done.stdout)[0]["truncation"]["logEndOffset"] if done.stdout else None
    if predicted != prepared.final_end:
        return [f"truncate's plan predicts log end {predicted}, the oracle "
                f"{prepared.final_end} ({done.stderr.strip()})"]
    return []


def kill_and_check(prepared: Prepared, kill_at: int, work: Path) -> Outcome:
    """SIGKILL the command at its ``kill_at``-th mutation on a fresh copy, recover, check.
    The copy is removed when no check finds a problem (kept for inspection otherwise)."""
    log_dir, part = prepared.copy_to(work)
    backup = work / "backup"
    args = prepared.scenario.args(log_dir, part, backup)
    done = run_crashpoint(["--kill-at", str(kill_at)], [log_dir, backup], args, work / "tmp")
    if done.returncode != KILLED:
        return Outcome([f"not killed at mutation {kill_at}: exit {done.returncode} "
                        f"{done.stderr.strip()[-500:]}"], work=work)
    outcome = check_after(prepared, log_dir, backup if prepared.scenario.backup else None,
                          work / "tmp", prepared.allowed_ends())
    outcome.work = work
    if not outcome.problems:
        shutil.rmtree(work)
    return outcome
