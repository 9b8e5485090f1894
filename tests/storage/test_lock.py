"""LogDirLock: the ``.lock`` a running broker holds, seen from other processes (and the JVM)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from pylogctl.errors import ExitCode, FileUnreadableError, LogDirLockedError
from pylogctl.storage.lock import LogDirLock

# a stand-in for the broker: the same POSIX record lock the JVM's FileChannel.tryLock() takes
POSIX_LOCK_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("locked", flush=True)
except OSError:
    print("busy", flush=True)
    sys.exit(0)
sys.stdin.readline()
"""

JAVA_LOCKER = """
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

public class Locker {
    public static void main(String[] args) throws Exception {
        // what Kafka's FileLock does: open (creating) read-write, then tryLock()
        FileChannel channel = FileChannel.open(Paths.get(args[0]), StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock = channel.tryLock();
        System.out.println(lock != null ? "locked" : "busy");
        System.out.flush();
        System.in.read();
        if (lock == null) {
            lock = channel.tryLock();
            System.out.println(lock != null ? "locked" : "busy");
            System.out.flush();
            System.in.read();
        }
    }
}
"""


def start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> None:
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0


def test_takes_the_lock_creating_the_file_and_leaves_the_file_behind(tmp_path):
    lock_file = tmp_path / ".lock"
    with LogDirLock(tmp_path) as lock:
        assert lock.locked and lock_file.exists()
    assert not lock.locked and lock_file.exists()


def test_a_second_lock_in_the_same_process_is_refused(tmp_path):
    with LogDirLock(tmp_path):
        with pytest.raises(LogDirLockedError) as info:
            LogDirLock(tmp_path).acquire()
    assert info.value.exit_code == ExitCode.LOCKED == 4
    assert str(info.value) == (f"Failed to acquire lock on file .lock in {tmp_path}. A Kafka "
                               f"instance in another process or thread is using this directory.")
    with LogDirLock(tmp_path):  # released: free again
        pass


def test_a_lock_held_by_another_process_is_refused_until_released(tmp_path):
    holder = start([sys.executable, "-c", POSIX_LOCK_HOLDER, str(tmp_path / ".lock")])
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(LogDirLockedError):
            LogDirLock(tmp_path).acquire()
    finally:
        finish(holder)
    with LogDirLock(tmp_path) as lock:
        assert lock.locked


def test_other_processes_see_our_lock(tmp_path):
    with LogDirLock(tmp_path):
        probe = subprocess.run([sys.executable, "-c", POSIX_LOCK_HOLDER, str(tmp_path / ".lock")],
                               input="\n", capture_output=True, text=True, timeout=60)
        assert probe.stdout.strip() == "busy"


def test_release_is_idempotent_and_acquire_reentrant(tmp_path):
    lock = LogDirLock(tmp_path)
    assert lock.acquire() is lock.acquire()
    lock.release()
    lock.release()
    assert not lock.locked


def test_a_missing_log_dir_is_unreadable(tmp_path):
    with pytest.raises(FileUnreadableError, match="No such directory"):
        LogDirLock(tmp_path / "absent").acquire()
    assert not (tmp_path / "absent").exists()


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on PATH to play the broker")
def test_the_jvm_and_pylogctl_see_each_others_lock(tmp_path):
    """A real JVM doing what Kafka's FileLock does: it sees our lock, and we see its."""
    source = tmp_path / "Locker.java"
    source.write_text(JAVA_LOCKER)
    lock = LogDirLock(tmp_path).acquire()
    jvm = start(["java", str(source), str(tmp_path / ".lock")])
    try:
        assert jvm.stdout.readline().strip() == "busy"  # a broker would refuse to start
        lock.release()
        jvm.stdin.write("\n")
        jvm.stdin.flush()
        assert jvm.stdout.readline().strip() == "locked"
        with pytest.raises(LogDirLockedError):  # and we refuse a running broker's dir
            lock.acquire()
    finally:
        finish(jvm)
    assert lock.acquire().locked
    lock.release()
