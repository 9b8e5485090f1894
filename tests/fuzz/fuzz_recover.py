#!/usr/bin/env python3
"""Fuzz ``LogSegment.recover``: its C batch loop against its Python loop, on mutated real
segments. Not part of the CI suite.

    python tests/fuzz/fuzz_recover.py --seconds 60 [--seed N]

Seeds and mutations are fuzz_dump.py's (the corpus's ``.log`` segments and the sample log
dir's, cut at 48 KiB; bit flips, boundary ints, truncation, splicing, batch-header and record
tweaks). Each input is recovered as a segment with a random base offset, index interval and
index size, with no hooks, with a ProducerStateManager and an epoch cache, and with
rebuild-index's transaction-only hook, once with the C loop (``_recover_scan.scan_recovery``) and
once without. Both must leave the same outcome (tests/storage/recover_support.py: result or
error, warning, files, hook calls, producer state); a difference, an interpreter crash or a
hang is a failure. Failing inputs are saved under ``tests/fuzz/crashes/recover-*`` with the
settings. Exit status 1 on any failure.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "storage"), str(HERE.parents[1])]

import fuzz_dump  # noqa: E402 - needs the path above
import fuzz_support  # noqa: E402

RECOVER_KINDS = ("log", "offsets-log", "txn-log", "metadata-log")


def outcomes(directory: Path, data: bytes, base: int, hooks: str, config) -> tuple[dict, dict]:
    from recover_support import python_loop_only, recover_outcome

    with python_loop_only():
        reference = recover_outcome(directory, data, base, hooks, config)
    return reference, recover_outcome(directory, data, base, hooks, config)


def main(argv: list[str] | None = None) -> int:
    args = fuzz_support.parse_args(__doc__, argv)

    from pylogctl.storage import segment as segment_module
    from pylogctl.storage.log_config import LogConfig
    from recover_support import HOOKS

    if segment_module._scan_recovery is None:
        print("fuzz_recover: the C accelerator is not built (or PYLOGCTL_NO_SPEEDUPS is set): "
              "nothing to compare", file=sys.stderr)
        return 2
    seed, rng = fuzz_support.start(args)
    by_kind = fuzz_dump.collect_seeds(args.corpus, random.Random(seed))
    seeds = [s for k in RECOVER_KINDS for s in by_kind.get(k, [])]
    fuzz_dump.ALL_SEEDS.extend(seeds)
    print(f"fuzz_recover: seed {seed}, {len(seeds)} segment seeds", flush=True)
    inputs = recoveries = failures = truncated = errors = 0
    deadline = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory(prefix="pylogctl-fuzz-recover-") as tmp:
        while time.monotonic() < deadline:
            seed_file = rng.choice(seeds)
            data, mutations = fuzz_dump.mutate(rng, seed_file, seeds)
            inputs += 1
            stem = seed_file.name.split(".")[0]
            base = rng.choice((0, int(stem) if stem.isdigit() else 0, 1 << 40))
            settings = {"source": seed_file.source, "mutations": mutations, "base": base,
                        "interval": rng.choice((0, 1, 100, 4096)),
                        "index_bytes": rng.choice((24, 64, 4096, 10 << 20)),
                        "chunk": rng.choice((1, 500, segment_module.RECOVERY_SCAN_BYTES))}
            config = LogConfig(index_interval_bytes=settings["interval"],
                               segment_index_bytes=settings["index_bytes"])
            saved_chunk = segment_module.RECOVERY_SCAN_BYTES
            segment_module.RECOVERY_SCAN_BYTES = settings["chunk"]
            try:
                for hooks in HOOKS:
                    settings["hooks"] = hooks
                    recoveries += 1
                    with fuzz_support.time_limit(args.timeout):
                        reference, fast = outcomes(Path(tmp) / "segment", data, base, hooks,
                                                   config)
                    if fast != reference:
                        failures += 1
                        diff = {k: (reference[k], fast[k]) for k in reference
                                if reference[k] != fast[k]}
                        dest = fuzz_support.save_failure("recover", data, settings,
                                                         repr(diff)[:20000])
                        print(f"\nDIFFERENCE ({', '.join(diff)}) saved in {dest}", flush=True)
                    result = reference["result"]
                    errors += result[0] == "error"
                    truncated += result[0] == "truncated" and result[1] > 0
            except (Exception, fuzz_dump.FuzzTimeout) as exc:  # noqa: BLE001
                failures += 1
                fuzz_support.report_exception("recover", data, settings, exc)
            finally:
                segment_module.RECOVERY_SCAN_BYTES = saved_chunk
    print(f"inputs: {inputs}, recoveries compared: {recoveries} ({truncated} truncated, "
          f"{errors} raised, the rest clean); failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
