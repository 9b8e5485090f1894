"""What the rebuild-index tests share: corpus copies, tree hashes, a lock holder, and a
partition whose transactions span segments."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from pylogctl.format.builder import RecordBatchBuilder, build_end_txn_marker
from pylogctl.storage.naming import log_filename
from pylogctl.storage.transaction_index import AbortedTxn

TS = 1_700_000_000_000
CLEAN_DIRS = ("smartassets-connect", "yuanliubei-src")


def copy_tree(source: Path, target: Path) -> Path:
    """A writable copy of a (read-only) corpus dir."""
    shutil.copytree(source, target, copy_function=shutil.copyfile)
    return target


def tree_state(root: Path) -> dict[str, tuple[str, int]]:
    """Every file below ``root`` (hidden ones included): content hash and mtime."""
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                       p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


@contextmanager
def lock_held(log_dir: Path) -> Iterator[None]:
    """Another process holds ``log_dir``'s ``.lock``, as a running broker does."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom pylogctl.storage.lock import LogDirLock\n"
         "lock = LogDirLock(sys.argv[1]).acquire()\nprint('locked', flush=True)\n"
         "sys.stdin.readline()\n", str(log_dir)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        yield
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def _batch(offset: int, count: int, **options) -> bytes:
    builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=0, **options)
    for i in range(count):
        builder.append(TS + offset + i, b"k", b"v" * 50)
    return builder.build()


def _marker(offset: int, producer_id: int, commit: bool) -> bytes:
    return build_end_txn_marker(offset=offset, producer_id=producer_id, producer_epoch=0,
                                commit=commit, coordinator_epoch=1, timestamp=TS + offset,
                                partition_leader_epoch=0)


def write_transactional_partition(part: Path) -> dict[int, list[AbortedTxn]]:
    """``t-0`` in three segments, no index files: producer 7's transaction opens in segment 0
    and aborts in segment 1 while producer 8's is still open (so its last stable offset is
    8's first offset), 8 commits, 7 opens and aborts another one; segment 2 holds plain data
    only. Returns the aborted transactions each segment's ``.txnindex`` must hold."""
    txn = {"producer_epoch": 0, "is_transactional": True}
    segments = {
        0: [_batch(0, 3), _batch(3, 2, producer_id=7, **txn), _batch(5, 1, producer_id=8, **txn),
            _batch(6, 2, producer_id=9, producer_epoch=0, base_sequence=0)],
        8: [_marker(8, 7, commit=False), _batch(9, 2), _marker(11, 8, commit=True),
            _batch(12, 1, producer_id=7, **txn), _marker(13, 7, commit=False)],
        14: [_batch(14, 3), _batch(17, 2, producer_id=9, producer_epoch=0, base_sequence=2)],
    }
    part.mkdir(parents=True, exist_ok=True)
    for base, batches in segments.items():
        (part / log_filename(base)).write_bytes(b"".join(batches))
    return {0: [], 8: [AbortedTxn.of(7, 3, 8, 5), AbortedTxn.of(7, 12, 13, 14)], 14: []}
