"""The log dir's ``.lock`` file: the one lock helper (Kafka's ``FileLock``, ``lockLogDirs``).

A broker opens ``{log.dir}/.lock`` (creating it if missing, never deleting it while running)
and takes ``FileChannel.tryLock()`` on it at start-up; failing that it refuses the dir ("A Kafka
instance in another process or thread is using this directory"). On Linux the JDK implements
``tryLock`` as a POSIX record lock, ``fcntl(F_SETLK)`` with ``F_WRLCK`` over the whole file, so
that is the kind of lock pylogctl must take to see a running broker, and to be seen by one:
``flock(2)`` locks are a separate mechanism that neither side would notice.

On Linux pylogctl takes an *open file description* lock (``F_OFD_SETLK``): it conflicts with
the JVM's ``F_SETLK`` lock in both directions, and unlike a classic POSIX lock it belongs to
this open file rather than to the process, so a second lock in the same process is refused too
(Java's ``OverlappingFileLockException``) and closing some other descriptor of ``.lock`` does
not silently drop it. Elsewhere it falls back to ``lockf`` (classic POSIX locks), which Java
sees likewise but which a second lock in the same process does not.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
from types import TracebackType

from ..errors import FileUnreadableError, LogDirLockedError
from .log_dir_layout import LOCK_FILE

_OFD_SETLK: int | None = getattr(fcntl, "F_OFD_SETLK", None)
_BUSY = (errno.EAGAIN, errno.EACCES)


def _lock_whole_file(fd: int) -> None:
    """Exclusive, non-blocking, whole-file write lock; ``OSError`` EAGAIN/EACCES if held."""
    if _OFD_SETLK is not None:
        # struct flock {short l_type; short l_whence; off_t l_start; off_t l_len; pid_t l_pid};
        # native alignment matches the C layout; l_len 0 = to end of file; l_pid must be 0
        fcntl.fcntl(fd, _OFD_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    else:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _locked(log_dir: str) -> LogDirLockedError:
    return LogDirLockedError(f"Failed to acquire lock on file .lock in {log_dir}. A Kafka "
                             f"instance in another process or thread is using this directory.",
                             path=log_dir)


def ensure_unlocked(log_dir: str | os.PathLike[str]) -> None:
    """Raise :class:`LogDirLockedError` if another process holds ``{log_dir}/.lock``, without
    taking the lock or creating the file: for commands that only read, whose results a running
    broker would make stale. A missing ``.lock`` means no broker runs there (one creates it)."""
    log_dir = os.fspath(log_dir)
    path = os.path.join(log_dir, LOCK_FILE)
    getlk: int | None = getattr(fcntl, "F_OFD_GETLK", None)
    try:
        fd = os.open(path, (os.O_RDONLY if getlk is not None else os.O_RDWR) | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise FileUnreadableError(f"Cannot open {path} to check the lock: {exc.strerror}",
                                  path=path) from None
    try:
        if getlk is not None:  # ask who holds it: works on a read-only descriptor
            query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
            if struct.unpack("hhqqi", fcntl.fcntl(fd, getlk, query))[0] != fcntl.F_UNLCK:
                raise _locked(log_dir)
        else:
            try:
                _lock_whole_file(fd)  # taken and, closing fd below, dropped at once
            except OSError as exc:
                if exc.errno in _BUSY:
                    raise _locked(log_dir) from None
                raise
    finally:
        os.close(fd)


class LogDirLock:
    """Hold ``{log_dir}/.lock`` for as long as pylogctl changes files in ``log_dir``.

    >>> with LogDirLock("/var/lib/kafka/data"):   # doctest: +SKIP
    ...     ...  # recover, truncate, compact
    """

    def __init__(self, log_dir: str | os.PathLike[str]) -> None:
        self.log_dir = os.fspath(log_dir)
        self.path = os.path.join(self.log_dir, LOCK_FILE)
        self._fd: int | None = None

    @property
    def locked(self) -> bool:
        return self._fd is not None

    def acquire(self) -> "LogDirLock":
        """Take the lock or raise :class:`LogDirLockedError` (exit code 4) at once; never waits."""
        if self._fd is not None:
            return self
        if not os.path.isdir(self.log_dir):
            raise FileUnreadableError(f"No such directory: {self.log_dir}", path=self.log_dir)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise FileUnreadableError(f"Cannot open {self.path} for locking: {exc.strerror}",
                                      path=self.path) from None
        try:
            _lock_whole_file(fd)
        except OSError as exc:
            os.close(fd)
            if exc.errno in _BUSY:
                raise _locked(self.log_dir) from None
            raise FileUnreadableError(f"Cannot lock {self.path}: {exc.strerror}",
                                      path=self.path) from None
        self._fd = fd
        return self

    def release(self) -> None:
        """Drop the lock (closing the descriptor releases it); ``.lock`` stays, as in Kafka."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> "LogDirLock":
        return self.acquire()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

    def __del__(self) -> None:  # a forgotten lock must not outlive its object
        try:
            self.release()
        except Exception:  # interpreter shutdown
            pass

    def __repr__(self) -> str:
        return f"LogDirLock({self.log_dir!r}, locked={self.locked})"
