"""Plain text: for dumps, the exact lines of Kafka's ``kafka-dump-log.sh``.

Each section kind has a renderer. Where Kafka versions differ, the newest behaviour is used
(the Java rewrite of DumpLogSegments): legacy record lines have no stray ``}``, the key/payload
prefix under ``--skip-record-metadata`` is ``| `` on the first item, and LEADER_CHANGE prints
as ``LeaderChange: {json}``.

Sections that are tables from the start (:class:`~.table.TableSection`: scan rows, stats) have
no Kafka form unless their kind has a renderer (consumer groups); their text is the plain
table, as ``--output table`` prints it when piped.
"""

from __future__ import annotations

import codecs
import importlib
import io
import os
from typing import Any, Callable, Optional, TextIO

from pylogctl.format import jackson
from . import Content, Section, sections_of

_compact = jackson.dumps  # decoder JSON must match Kafka's (Jackson's) byte for byte


def _b(value: bool) -> str:
    return "true" if value else "false"


def _optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def _text(value: Any) -> str:
    """A decoded key or payload: a string as it is, a record Kafka prints as text (a Java
    ``toString()``, see ``record_parsers.KafkaText``) as that text, anything else as JSON."""
    if isinstance(value, str):
        return value
    text = getattr(value, "kafka_text", None)
    return text if text is not None else _compact(value)


def batch_line(b: dict[str, Any]) -> str:
    """The batch line for magic 2, or the ``offset:`` line for magic 0/1."""
    if b["magic"] >= 2:
        head = (f"baseOffset: {b['baseOffset']} lastOffset: {b['lastOffset']} count: {b['count']} "
                f"baseSequence: {b['baseSequence']} lastSequence: {b['lastSequence']} "
                f"producerId: {b['producerId']} producerEpoch: {b['producerEpoch']} "
                f"partitionLeaderEpoch: {b['partitionLeaderEpoch']} "
                f"isTransactional: {_b(b['isTransactional'])} isControl: {_b(b['isControl'])} "
                f"deleteHorizonMs: {_optional_long(b['deleteHorizonMs'])}")
    else:
        head = f"offset: {b['lastOffset']}"
    return (f"{head} position: {b['position']} {b['timestampType']}: {b['maxTimestamp']} "
            f"size: {b['size']} magic: {b['magic']} compresscodec: {b['compressCodec']} "
            f"crc: {b['crc']} isvalid: {_b(b['isValid'])}")


def control_text(c: dict[str, Any]) -> str:
    t = c["type"]
    if t in ("COMMIT", "ABORT"):
        return f" endTxnMarker: {t} coordinatorEpoch: {c['coordinatorEpoch']}"
    if t == "LEADER_CHANGE":
        return f" LeaderChange: {_compact(c['data'])}"
    label = {"SNAPSHOT_HEADER": "SnapshotHeader", "SNAPSHOT_FOOTER": "SnapshotFooter",
             "KRAFT_VERSION": "KRaftVersion", "KRAFT_VOTERS": "KRaftVoters"}.get(t)
    if label is not None:
        return f" {label} {_compact(c['data'])}"
    return f" controlType: {t}({c['typeId']})"


def record_line(r: dict[str, Any], ts_type: str) -> str:
    """A record line; without metadata (``--skip-record-metadata``) only key and payload."""
    parts = []
    skip_metadata = "offset" not in r
    if not skip_metadata:
        parts.append(f"| offset: {r['offset']} {ts_type}: {r['timestamp']} "
                     f"keySize: {r['keySize']} valueSize: {r['valueSize']}")
        if "sequence" in r:
            parts.append(f" sequence: {r['sequence']} headerKeys: [{','.join(r['headerKeys'])}]")
        if "crc" in r:
            parts.append(f" isValid: {_b(r['isValid'])} crc: {r['crc']}")
        if "control" in r:
            parts.append(control_text(r["control"]))
    prefix = "| " if skip_metadata else " "
    if "key" in r:
        parts.append(f"{prefix}key: {_text(r['key'])}")
        prefix = " "
    if "value" in r:
        parts.append(f"{prefix}payload: {_text(r['value'])}")
    return "".join(parts)


def render_log(section: Section, out: TextIO) -> None:
    """``Dumping``, the header line, batch and record lines, then the invalid-bytes line."""
    w = out.write
    h = section.header
    w(f"Dumping {h['file']}\n")
    kind = h.get("type")
    if kind == "log":
        w(f"Log starting offset: {h['logStartOffset']}\n")
    elif kind == "bootstrap-snapshot":
        w("KRaft bootstrap snapshot\n")
    elif kind == "snapshot":
        w(f"Snapshot end offset: {h['snapshotEndOffset']}, epoch: {h['snapshotEpoch']}\n")
    items = getattr(section, "items_or_lines", None)
    write_bytes = None
    for b in items() if items is not None else section.items:
        if type(b) is str:  # pre-rendered batch lines (the C fast path of a shallow dump)
            w(b)
            continue
        if type(b) is bytes:  # pre-rendered batch and record lines, UTF-8 (deep C path)
            if write_bytes is None:
                write_bytes = _bytes_writer(out)
            write_bytes(b)
            continue
        w(batch_line(b))
        w("\n")
        recs = b.get("records")
        if recs:
            ts_type = b["timestampType"]
            w("\n".join(record_line(r, ts_type) for r in recs))
            w("\n")
    invalid = section.footer.get("invalidBytes", 0)
    if invalid > 0:
        name = h["file"].replace("\\", "/").rsplit("/", 1)[-1]
        w(f"Found {invalid} invalid bytes at the end of {name}\n")


def _bytes_writer(out: TextIO) -> Callable[[bytes], Any]:
    """A writer of UTF-8 text given as bytes: straight to the binary buffer under ``out`` when
    ``out`` would write the same bytes (a UTF-8 TextIOWrapper on a system whose newline is
    ``\n``), skipping a decode and an encode of every line; else decoded and written as
    text. Text written to ``out`` meanwhile is flushed first, so the order holds."""
    raw = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None)
    if (not isinstance(out, io.TextIOWrapper) or raw is None or not encoding
            or os.linesep != "\n" or codecs.lookup(encoding).name != "utf-8"):
        return lambda data: out.write(data.decode("utf-8"))
    flush, put = out.flush, raw.write

    def write(data: bytes) -> None:
        flush()  # text written since goes first; with none pending, a cheap no-op
        put(data)
    return write


def render_unknown(section: Section, out: TextIO) -> None:
    """A file the dump does not handle: Kafka still prints its ``Dumping`` line."""
    out.write(f"Dumping {section.header['file']}\n")
    for _ in section.items:
        pass


def render_offset_index(section: Section, out: TextIO) -> None:
    """``offset: {o} position: {p}`` per entry; the verdicts go to stderr (the caller's job)."""
    w = out.write
    path = section.header["file"]
    w(f"Dumping {path}\n")
    for e in section.items:
        w(f"offset: {e['offset']} position: {e['position']}\n")
    if section.footer.get("empty"):
        w(f"{path} is empty.\n")
    if section.footer.get("sanityCheck") == "passed":
        w(f"{path} passed sanity check.\n")


def render_time_index(section: Section, out: TextIO) -> None:
    w = out.write
    path = section.header["file"]
    w(f"Dumping {path}\n")
    for e in section.items:
        w(f"timestamp: {e['timestamp']} offset: {e['offset']}\n")
    if section.footer.get("sanityCheck") == "passed":
        w(f"{path} passed sanity check.\n")


def render_txn_index(section: Section, out: TextIO) -> None:
    out.write(f"Dumping {section.header['file']}\n")
    for e in section.items:
        out.write(f"version: {e['version']} producerId: {e['producerId']} firstOffset: "
                  f"{e['firstOffset']} lastOffset: {e['lastOffset']} lastStableOffset: "
                  f"{e['lastStableOffset']}\n")


def render_producer_snapshot(section: Section, out: TextIO) -> None:
    """One line per producer; the batch part only when the entry has batch metadata."""
    out.write(f"Dumping {section.header['file']}\n")
    for e in section.items:
        line = (f"producerId: {e['producerId']} producerEpoch: {e['producerEpoch']} "
                f"coordinatorEpoch: {e['coordinatorEpoch']} currentTxnFirstOffset: "
                f"{_optional_long(e['currentTxnFirstOffset'])} lastTimestamp: {e['lastTimestamp']}")
        if "lastOffset" in e:
            line += (f" firstSequence: {e['firstSequence']} lastSequence: {e['lastSequence']} "
                     f"lastOffset: {e['lastOffset']} offsetDelta: {e['offsetDelta']} "
                     f"timestamp: {e['timestamp']}")
        out.write(line + "\n")


def render_metadata(section: Section, out: TextIO) -> None:
    """Checkpoints and metadata files, in kafka-dump-log's ``name: value`` style."""
    w = out.write
    kind = section.header["type"]
    w(f"Dumping {section.header['file']}\n")
    items = list(section.items)
    foot = section.footer
    if kind in ("offset-checkpoint", "leader-epoch-checkpoint") and foot.get("version") is not None:
        w(f"version: {foot['version']} entries: {len(items)}\n")
    for e in items:
        if kind == "offset-checkpoint":
            w(f"topic: {e['topic']} partition: {e['partition']} offset: {e['offset']}\n")
        elif kind == "leader-epoch-checkpoint":
            w(f"epoch: {e['epoch']} startOffset: {e['startOffset']}\n")
        elif kind == "partition-metadata":
            w(f"version: {e['version']} topicId: {e['topicId']}\n")
        elif kind == "meta-properties":
            w(f"{e['key']}={e['value']}\n")
        else:
            w(_compact(e) + "\n")
    if foot.get("emptyFile"):
        w(f"{section.header['file']} is empty.\n")


Renderer = Callable[[Section, TextIO], None]

RENDERERS: dict[str, Renderer] = {
    **{kind: render_metadata for kind in ("offset-checkpoint", "leader-epoch-checkpoint",
                                          "partition-metadata", "meta-properties",
                                          "quorum-state", "clean-shutdown")},
    "txn-index": render_txn_index,
    "producer-snapshot": render_producer_snapshot,
    "log": render_log,
    "unknown": render_unknown,
    "offset-index": render_offset_index,
    "time-index": render_time_index,
}

# The other commands' sections: kind -> (module of this package, its renderer or its
# SECTION_RENDERERS table), imported when such a section comes, so that a dump does not load
# every command's renderers (start-up time).
_ELSEWHERE: dict[str, tuple[str, str]] = {
    "log-dir-summary": ("log_dir_table", "render_log_dir_summary"),
    "rebuild-index": ("rebuild_index_text", "render_rebuild_index"),
    "recover": ("recover_text", "render_recover"),
    "truncate": ("truncate_text", "render_truncate"),
    "compact": ("compact_text", "render_compact"),
    "topic-config": ("config_text", "render_topic_config"),
    "retention": ("retention_text", "render_retention"),
    "get-offsets": ("offsets_text", "render_get_offsets"),
    "delete-records": ("offsets_text", "render_delete_records"),
    "move": ("move_text", "render_move"),
    "replicas": ("replicas_text", "render_replicas"),
    **{kind: (module, "SECTION_RENDERERS")
       for module, kinds in (
           ("consumer_groups_text", ("group-list", "group-describe", "group-reset",
                                     "group-delete", "group-delete-offsets")),
           ("share_groups_text", ("share-group-list", "share-group-describe")),
           ("streams_groups_text", ("streams-group-list", "streams-group-describe")),
           ("metadata_text", ("metadata-shell", "metadata-topics", "metadata-features",
                              "metadata-check")),
           ("transactions_text", ("transactions-list", "transactions-describe",
                                  "transactions-describe-producers",
                                  "transactions-find-hanging", "transactions-abort")))
       for kind in kinds},
}


def renderer(kind: str) -> Optional[Renderer]:
    """The text renderer of ``kind`` sections, None for kinds without a Kafka form."""
    render = RENDERERS.get(kind)
    if render is None and kind in _ELSEWHERE:
        module, name = _ELSEWHERE[kind]
        found = getattr(importlib.import_module(f".{module}", __package__), name)
        render = RENDERERS[kind] = found[kind] if isinstance(found, dict) else found
    return render


class TextFormatter:
    def write(self, content: Content, out: TextIO) -> None:
        tables = None
        for section in sections_of(content):
            render = renderer(section.kind)
            if render is not None:
                render(section, out)
                continue
            from .table import TableFormatter, TableSection

            if isinstance(section, TableSection):
                if tables is None:
                    tables = TableFormatter(rich=False)
                tables.write_one(section, out)
            else:
                raise ValueError(f"no text renderer for {section.kind!r} sections")
