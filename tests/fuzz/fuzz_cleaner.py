#!/usr/bin/env python3
"""Fuzz the log cleaner's C loops (``pylogctl.storage.cleaner._cleaner_scan``) against its Python
path,
on generated and mutated batches. Not part of the CI suite.

    python tests/fuzz/fuzz_cleaner.py --seconds 60 [--seed N]

Inputs: one to four batches, each either generated (tests/storage/cleaner_accel_support.py's
``random_batch``: keyless records, tombstones, headers with odd keys, overlong varints,
timestamp types and horizons) or cut from the corpus's segments (fuzz_dump.py's seeds), with
up to four mutations (that module's batch-keeping ``mutate``, or fuzz_dump.py's mutations). Each
input goes through the copy pass (``CleanerFilter.filter_into`` against ``filter_to``) and the
offset-map pass (``put_batch`` against ``put_records``) under a random map, clock and budget.
Both paths must give the same bytes, results and errors; a difference, an interpreter crash or
a hang is a failure, saved under ``tests/fuzz/crashes/cleaner-*``. Exit status 1 on any.
"""

from __future__ import annotations

import logging
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "storage"), str(HERE.parents[1])]

import fuzz_dump  # noqa: E402 - needs the path above
import fuzz_support  # noqa: E402
from cleaner_accel_support import (filter_outcome, map_outcome, mutate,  # noqa: E402
                                   random_batch, random_setting)

SEGMENT_KINDS = ("log", "offsets-log", "txn-log", "metadata-log")


def one_input(rng: random.Random, seeds: list) -> tuple[bytes, dict]:
    base = rng.choice([0, 100, 1 << 40, (1 << 63) - 100])
    parts, notes = [], []
    for j in range(rng.randint(1, 4)):
        if seeds and rng.random() < 0.3:
            seed = rng.choice(seeds)
            data, done = fuzz_dump.mutate(rng, seed, seeds)
            parts.append(data)
            notes.append({"seed": seed.source, "mutations": done})
            continue
        data = random_batch(rng, base + 10 * j)
        for _ in range(rng.choice([0, 0, 1, 2, 4])):
            data = mutate(rng, data)
        parts.append(data)
        notes.append({"generated": base + 10 * j})
    return b"".join(parts), {"base": base, "parts": notes}


def main(argv: list[str] | None = None) -> int:
    args = fuzz_support.parse_args(__doc__, argv)

    from pylogctl.storage.cleaner import cleaner_filter, offset_map

    if cleaner_filter._filter_batch is None or offset_map._map_batch is None:
        print("fuzz_cleaner: the extension is not built (or PYLOGCTL_NO_SPEEDUPS is set): "
              "nothing to compare", file=sys.stderr)
        return 2
    logging.disable(logging.WARNING)  # "exceeded max record batch size", on both paths
    seed, rng = fuzz_support.start(args)
    by_kind = fuzz_dump.collect_seeds(args.corpus, random.Random(seed))
    seeds = [s for k in SEGMENT_KINDS for s in by_kind.get(k, [])]
    fuzz_dump.ALL_SEEDS.extend(seeds)
    print(f"fuzz_cleaner: seed {seed}, {len(seeds)} segment seeds", flush=True)
    inputs = failures = errors = 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        data, settings = one_input(rng, seeds)
        base = settings["base"]
        setting = random_setting(rng, base, base + 40)
        start = rng.choice([base, base, base + 3, 0])
        entries = rng.choice([10_000, len(setting.mapped) + 3, 0])
        settings.update(setting=repr(setting), start=start, entries=entries)
        inputs += 1
        try:
            with fuzz_support.time_limit(args.timeout):
                fast = (filter_outcome(data, setting, True),
                        map_outcome(data, setting, start, entries, True))
                slow = (filter_outcome(data, setting, False),
                        map_outcome(data, setting, start, entries, False))
            if fast != slow:
                failures += 1
                dest = fuzz_support.save_failure(
                    "cleaner", data, settings, f"C:\n{fast!r}\n\nPython:\n{slow!r}"[:20000],
                    json_default=repr)
                print(f"\nDIFFERENCE saved in {dest}", flush=True)
            errors += isinstance(slow[0], tuple) and isinstance(slow[0][0], str)
        except (Exception, fuzz_dump.FuzzTimeout) as exc:  # noqa: BLE001
            failures += 1
            fuzz_support.report_exception("cleaner", data, settings, exc, json_default=repr)
    print(f"inputs: {inputs} ({errors} raised in the copy pass); failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
