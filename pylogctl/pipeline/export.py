"""Writing scanned records to a directory as Parquet or JSON, the way Spark writes them.

``--export parquet:DIR`` / ``json:DIR`` from the local engine produce what Spark's writers
produce from the Spark engine, so a downstream job reads either the same way: one
``part-NNNNN`` file per split that has records, then an empty ``_SUCCESS``; the directory
must not exist yet (Spark's default save mode). JSON is one object per line with binary
columns in base64 and null fields left out, as Spark's JSON writer does; Parquet uses the
columns' Spark types (pyarrow is needed for it, and only for it).
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from ..errors import UsageError
from .segment_reader import Columns

FORMATS = ("parquet", "json")
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True)
class ExportTarget:
    fmt: str
    directory: str

    @classmethod
    def parse(cls, text: str) -> "ExportTarget":
        """``parquet:DIR`` or ``json:DIR``."""
        fmt, sep, directory = text.partition(":")
        if not sep or fmt not in FORMATS or not directory:
            raise UsageError(f"--export takes parquet:DIR or json:DIR, not {text!r}")
        return cls(fmt, directory)

    def check_absent(self) -> None:
        if os.path.exists(self.directory):
            raise UsageError(f"{self.directory} already exists: --export writes a new "
                             f"directory", path=self.directory)


def _b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


def json_record(row: dict[str, Any]) -> dict[str, Any]:
    """A row as Spark's JSON writer renders it: binaries in base64, nulls left out."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        if value is None:
            continue
        if isinstance(value, (bytes, bytearray)):
            value = _b64(bytes(value))
        elif name == "headers":
            value = [{"key": k, **({} if v is None else {"value": _b64(v)})} for k, v in value]
        out[name] = value
    return out


def write_local(target: ExportTarget, parts: Iterable[Iterator[Columns]],
                columns: tuple[str, ...]) -> tuple[list[str], int]:
    """Write each part (the chunks of one split) to its own file; ``(files, records)``."""
    target.check_absent()
    if target.fmt == "parquet":
        from .arrow import arrow_schema, to_record_batch  # pyarrow only for Parquet
        import pyarrow.parquet as pq

        schema = arrow_schema(columns)
    os.makedirs(target.directory)
    files: list[str] = []
    total = 0
    for i, chunks in enumerate(parts):
        path = os.path.join(target.directory, f"part-{i:05d}.{target.fmt}")
        writer: Any = None
        try:
            for chunk in chunks:
                n = len(chunk[columns[0]])
                if not n:
                    continue
                if writer is None:
                    writer = (pq.ParquetWriter(path, schema) if target.fmt == "parquet"
                              else open(path, "w", encoding="utf-8"))
                    files.append(path)
                total += n
                if target.fmt == "parquet":
                    writer.write_batch(to_record_batch(chunk, schema))
                else:
                    from .segment_reader import chunk_rows
                    writer.write("".join(_dumps(json_record(r)) + "\n"
                                         for r in chunk_rows(chunk, columns)))
        finally:
            if writer is not None:
                writer.close()
    open(os.path.join(target.directory, "_SUCCESS"), "wb").close()
    return files, total
