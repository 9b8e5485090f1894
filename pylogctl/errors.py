"""One exception hierarchy for the whole tool.

Every error knows the file and byte position it concerns (when there is one) and the exit
code the CLI should end with, so the CLI can turn any of them into one line on stderr without
a traceback. The exit codes are shared by every subcommand and documented in ``--help``.
"""

from __future__ import annotations

import enum
import os


class ExitCode(enum.IntEnum):
    """Process exit codes shared by all subcommands."""

    OK = 0
    DATA_ERROR = 1  # corrupt or invalid data found (CRC mismatch, invalid bytes, bad format)
    USAGE = 2  # bad command line
    UNREADABLE = 3  # a file could not be opened or read
    LOCKED = 4  # a log dir's .lock is held: a running broker (or another pylogctl) owns it
    REFUSED = 5  # a change refused by Kafka's rules (a consumer group that is not empty, ...)
    INTERNAL = 70  # a bug in pylogctl (EX_SOFTWARE); rerun with --debug for the traceback
    INTERRUPTED = 130  # Ctrl-C
    BROKEN_PIPE = 141  # stdout closed early (e.g. piped into `head`)


class PylogctlError(Exception):
    """Base class: a message plus, where known, the file and byte position it concerns."""

    exit_code: ExitCode = ExitCode.DATA_ERROR

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None,
                 position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = os.fspath(path) if path is not None else None
        self.position = position

    def at(self, path: str | os.PathLike[str] | None = None,
           position: int | None = None) -> "PylogctlError":
        """Fill in the file and/or position when a lower layer raised without them."""
        if self.path is None and path is not None:
            self.path = os.fspath(path)
        if self.position is None and position is not None:
            self.position = position
        return self

    def __str__(self) -> str:
        where = []
        if self.path is not None and self.path not in self.message:
            where.append(self.path)
        if self.position is not None:
            where.append(f"byte position {self.position}")
        if where:
            return f"{self.message} ({', '.join(where)})"
        return self.message


class CorruptRecordError(PylogctlError):
    """The bytes of a batch or record do not follow Kafka's format."""


class UnsupportedFormatError(CorruptRecordError):
    """A magic value, codec or record type this version of Kafka's format does not define."""


class CompressionError(CorruptRecordError):
    """A compressed payload could not be decompressed."""


class InvalidOffsetError(PylogctlError):
    """An index append would break the index's ordering (Kafka's ``InvalidOffsetException``)."""


class IndexOffsetOverflowError(PylogctlError):
    """An offset does not fit in an index's int32 relative to the segment base offset."""


class LogSegmentOffsetOverflowError(IndexOffsetOverflowError):
    """A segment holds (or would receive) an offset beyond base offset + 2^31 - 1.

    Kafka's loader splits such a segment; ``base_offset`` and ``offset`` say where.
    """

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None,
                 position: int | None = None, *, base_offset: int, offset: int) -> None:
        super().__init__(message, path, position)
        self.base_offset = base_offset
        self.offset = offset


class FileUnreadableError(PylogctlError):
    """A file does not exist, is a directory, or cannot be read."""

    exit_code = ExitCode.UNREADABLE


class ServiceUnreachableError(PylogctlError):
    """A service that reads the files for us (a Spark master, a Spark Connect server) does not
    answer: to the user, the same as a file that cannot be read."""

    exit_code = ExitCode.UNREADABLE


class LogDirLockedError(PylogctlError):
    """Another process holds the log dir's ``.lock``: writing now would corrupt a live broker."""

    exit_code = ExitCode.LOCKED


class UsageError(PylogctlError):
    """The command line asks for something impossible."""

    exit_code = ExitCode.USAGE
