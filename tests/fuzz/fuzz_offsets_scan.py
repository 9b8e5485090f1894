#!/usr/bin/env python3
"""Fuzz the consumer-offsets replay: its C scan (``_offsets_scan.c``) against its Python loop,
on mutated ``__consumer_offsets`` segments. Not part of the CI suite.

    python tests/fuzz/fuzz_offsets_scan.py --seconds 60 [--seed N]

Seeds are the corpus's offsets segments (fuzz_dump.py's, cut at 48 KiB) and a generated one
with transactions, markers, tombstones, legacy keys and a compressed batch; mutations are
fuzz_dump.py's. Half of the mutated inputs get every magic-2 batch's CRC recomputed, so that
damaged headers and record areas reach the record decoder instead of stopping at the CRC.
Each input is loaded with a random log start offset with and without the C table; the
replays (survivors in order, pending transactions, counters, notes) and the loads must be
equal (tests/groups/test_offsets_scan.py's helpers). A difference, an exception, an
interpreter crash or a hang is a failure; failing inputs are saved under
``tests/fuzz/crashes/offsets-*``. Exit status 1 on any failure.

For memory errors, build the module with AddressSanitizer and preload it::

    CFLAGS="-fsanitize=address -fno-omit-frame-pointer" LDFLAGS=-fsanitize=address \\
        python setup.py build_ext --inplace --force
    LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
        python tests/fuzz/fuzz_offsets_scan.py --seconds 60
"""

from __future__ import annotations

import random
import struct
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "groups"), str(HERE.parents[1])]

import fuzz_dump  # noqa: E402 - needs the path above
import fuzz_support  # noqa: E402


def fix_crcs(data: bytearray) -> None:
    """Recompute the CRC of every whole magic-2 batch, walking the framing as far as it goes."""
    from crc32c import crc32c

    pos = 0
    while pos + 61 <= len(data):
        (size,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + size
        if size < 49 or end > len(data):
            return
        if data[pos + 16] == 2:
            struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21:end])))
        pos = end


def generated_seed() -> fuzz_dump.Seed:
    from groups_support import OffsetsLog, commit_key, commit_value, member
    from pylogctl.format.compression import Codec

    with tempfile.TemporaryDirectory() as tmp:
        log = OffsetsLog(Path(tmp))
        log.group("g", [member("m", {"t": [0, 1]})])
        log.commit("g", {("t", 0): 1, ("t", 1): 2})
        log.commit("g", {("t", 0): 3}, producer_id=9)
        log.delete_offsets("g", [("t", 1)])
        log.marker(9, True)
        log.commit("h", {("t", 0): 4}, producer_id=8)
        log.marker(8, False)
        log.batch([(commit_key("g", "t", 2, key_type=0), commit_value(5)),
                   (commit_key("g", "t", 2), None), (commit_key("g", "t", 2), commit_value(6))])
        log.batch([(commit_key("h", "u", 0), commit_value(7))], codec=Codec.GZIP)
        log.batch([(None, b"x"), (b"\x00\x63\x00\x00", b"\x00\x00")])
        return fuzz_dump.Seed("offsets-log", log.segment.name, log.segment.read_bytes(),
                              "synthetic:offsets")


def compare(partition_dir: Path, log_start: int) -> dict:
    """The fields on which the C and Python replays differ (empty when they agree)."""
    from test_offsets_scan import load_outcome, python_replay_only, replay_of

    fast, slow = replay_of(partition_dir, True, log_start), replay_of(partition_dir, False,
                                                                        log_start)
    names = ("survivors", "pending", "records", "next_offset", "bytes_read", "batches", "notes")
    diff = {n: (s, f) for n, s, f in zip(names, slow, fast) if s != f}
    fast_load = load_outcome(partition_dir, log_start_offset=log_start)
    with python_replay_only():
        slow_load = load_outcome(partition_dir, log_start_offset=log_start)
    if fast_load != slow_load:
        diff["load"] = (slow_load, fast_load)
    return diff


def main(argv: list[str] | None = None) -> int:
    args = fuzz_support.parse_args(__doc__, argv)

    from pylogctl.groups import replay as replay_module

    if replay_module.LastRecords is None:
        print("fuzz_offsets_scan: the C accelerator is not built (or PYLOGCTL_NO_SPEEDUPS is "
              "set): nothing to compare", file=sys.stderr)
        return 2
    seed, rng = fuzz_support.start(args)
    seeds = fuzz_dump.collect_seeds(args.corpus, random.Random(seed)).get("offsets-log", [])
    seeds.append(generated_seed())
    fuzz_dump.ALL_SEEDS.extend(seeds)
    print(f"fuzz_offsets_scan: seed {seed}, {len(seeds)} segment seeds", flush=True)
    inputs = failures = 0
    deadline = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory(prefix="pylogctl-fuzz-offsets-") as tmp:
        while time.monotonic() < deadline:
            seed_file = rng.choice(seeds)
            raw, mutations = fuzz_dump.mutate(rng, seed_file, seeds)
            data = bytearray(raw)
            settings = {"source": seed_file.source, "mutations": mutations,
                        "fix_crcs": rng.random() < 0.5, "log_start": rng.choice((0, 0, 1, 5))}
            if settings["fix_crcs"]:
                fix_crcs(data)
            inputs += 1
            partition_dir = Path(tmp) / f"{inputs}" / "__consumer_offsets-0"
            partition_dir.mkdir(parents=True)
            (partition_dir / "00000000000000000000.log").write_bytes(bytes(data))
            try:
                with fuzz_support.time_limit(args.timeout):
                    diff = compare(partition_dir, settings["log_start"])
                if diff:
                    failures += 1
                    dest = fuzz_support.save_failure("offsets", bytes(data), settings,
                                                     repr(diff)[:20000])
                    print(f"\nDIFFERENCE ({', '.join(diff)}) saved in {dest}", flush=True)
            except (Exception, fuzz_dump.FuzzTimeout) as exc:  # noqa: BLE001
                failures += 1
                fuzz_support.report_exception("offsets", bytes(data), settings, exc)
            finally:
                for f in partition_dir.iterdir():
                    f.unlink()
    print(f"inputs: {inputs}; failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
