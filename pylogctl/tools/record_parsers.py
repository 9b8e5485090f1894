"""Record parsers for internal topics: kafka-dump-log's ``MessageParser``.

``--offsets-decoder``, ``--transaction-log-decoder``, ``--cluster-metadata-decoder``,
``--remote-log-metadata-decoder`` and ``--share-group-state-decoder`` replace the key/value
decoders with a parser that turns a whole record into what the tool prints after ``key:`` and
``payload:``. A parser returns :class:`ParsedRecord`: each part is ``None`` (not printed), a
``str`` (printed verbatim, e.g. ``<DELETE>`` or an error line), a JSON-ready structure (printed
as compact JSON in text output and embedded as a JSON value in JSON/NDJSON/YAML output) or a
:class:`KafkaText` (the decoded structure for JSON/YAML, Kafka's own text -- a Java
``toString()`` -- in text output). The consumer-groups command and the broker reuse the same
parsers' underlying schema readers, not these strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from ..errors import PylogctlError
from ..format.record import Record


class KafkaText(dict):
    """A decoded record (a JSON-ready dict) that Kafka's tool prints as ``text`` instead of
    JSON: the text formatter prints :attr:`kafka_text`, the structured formats the dict."""

    def __init__(self, data: dict[str, Any], text: str) -> None:
        super().__init__(data)
        self.kafka_text = text


@dataclass(frozen=True)
class ParsedRecord:
    """What the dump prints for one record: ``key`` and ``payload``, either may be absent."""

    key: Any = None
    payload: Any = None


class RecordParser(Protocol):
    def parse(self, record: Record) -> ParsedRecord: ...


class DecoderAbortError(PylogctlError):
    """A record the chosen parser refuses outright (Kafka aborts the tool on it)."""


PARSER_NAMES = ("offsets", "transaction-log", "cluster-metadata", "remote-log-metadata",
                "share-group-state")


def get_parser(name: str, legacy_format: bool = False) -> RecordParser:
    """The parser called ``name``. ``legacy_format`` selects the pre-JSON strings where they
    exist (offsets, transaction log)."""
    factories: dict[str, Callable[[], RecordParser]] = {
        "offsets": lambda: _coordinator().OffsetsMessageParser(legacy_format),
        "transaction-log": lambda: _coordinator().TransactionLogMessageParser(legacy_format),
        "cluster-metadata": lambda: _metadata().ClusterMetadataMessageParser(),
        "remote-log-metadata": lambda: _metadata().RemoteLogMetadataMessageParser(),
        "share-group-state": lambda: _coordinator().ShareGroupStateMessageParser(),
    }
    try:
        factory = factories[name]
    except KeyError:
        raise ValueError(f"unknown record parser {name!r}; choose from "
                         f"{', '.join(PARSER_NAMES)}") from None
    return factory()


def _coordinator():
    from . import coordinator_parsers
    return coordinator_parsers


def _metadata():
    from . import metadata_parser
    return metadata_parser
