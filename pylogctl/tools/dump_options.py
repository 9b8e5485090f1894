"""The options of kafka-dump-log, on their own so the CLI can declare them without loading
the dump machinery (start-up time: ``pylogctl --help`` must not import the codecs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .decoders import SCHEMAS_TOPIC

from ..format.varint import INT32_MAX

DEFAULT_MAX_BYTES = INT32_MAX
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024


@dataclass(frozen=True)
class DumpOptions:
    """The options of kafka-dump-log that shape a log dump."""

    deep_iteration: bool = False
    print_data: bool = False
    skip_record_metadata: bool = False
    max_bytes: int = DEFAULT_MAX_BYTES
    key_decoder: str = "string"
    value_decoder: str = "string"
    parser: str | None = None  # a record_parsers.PARSER_NAMES name, e.g. "offsets"
    legacy_format: bool = False
    schemas_topic: str = SCHEMAS_TOPIC  # where the schema decoders find the registry's schemas
    # told one line for each key or value a decoder cannot read (it is shown as raw bytes)
    report: Callable[[str], None] | None = field(default=None, compare=False)
    problems_only: bool = False  # a log dir: only the partitions that need attention

    @property
    def printing(self) -> bool:
        """An internal-topic parser prints data, as in Kafka."""
        return self.print_data or self.parser is not None

    @property
    def deep(self) -> bool:
        """Printing data implies deep iteration, as in Kafka."""
        return self.deep_iteration or self.printing


@dataclass(frozen=True)
class IndexDumpOptions:
    """The options that shape an ``.index`` / ``.timeindex`` dump."""

    verify_only: bool = False
    sanity_check_only: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
