"""``pylogctl dump-segment``: kafka-dump-log.sh, with JSON/NDJSON/YAML output besides."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional

import typer

from ..errors import ExitCode, PylogctlError, UsageError
from ..format.readable_bytes import READABLE_RULE
from ..tools.decoders import DECODER_NAMES, SCHEMA_DECODER_NAMES, SCHEMAS_TOPIC, decoder_for_class
from ..tools.dump_options import (DEFAULT_MAX_BYTES, DEFAULT_MAX_MESSAGE_SIZE, DumpOptions,
                                  IndexDumpOptions)
from .app import EXIT_CODES_HELP, app

if TYPE_CHECKING:  # the dump machinery loads when the command runs (start-up time)
    from ..tools.dump_dispatch import AnyDump
    from ..tools.dump_index import IndexDump
from .output import OutputFormat, err, existing_paths, guarded_output, write_sections


def _decoder_option(flag: str, what: str):
    return typer.Option(None, flag, help=f"Decoder for {what}: {', '.join(DECODER_NAMES)} "
                        f"(default string). Giving it turns on --print-data-log, as in Kafka.",
                        metavar="NAME")


DECODERS_HELP = (
    "Decoders: string is Kafka's StringDecoder (malformed UTF-8 as U+FFFD, as kafka-dump-log "
    f"prints it); text is pylogctl's rule for bytes, that scan uses too: {READABLE_RULE}. "
    "avro, protobuf and json-schema read values in the Confluent wire format (magic byte 0, "
    "a schema id) with the schema of that id in the _schemas topic (--schemas-topic) of the "
    "dumped segment's log dir (schema-registry: whichever of the three the schema is); a "
    "value they cannot read is one line on stderr and shown as text shows it. They need "
    "pylogctl's schemas extra (fastavro, grpcio-tools, jsonschema).")


# kafka-dump-log's spelling: a Kafka decoder class, its value optional (StringDecoder, given
# bare: app._OPTIONAL_VALUES, declared there so the command line is completed before this
# module loads)
def _decoder_class_option(flag: str, what: str, same_as: str):
    return typer.Option(None, flag, metavar="[CLASS]", help=(
        f"Kafka's spelling of {same_as}, so runbooks run unchanged: Kafka's decoder class for "
        f"{what}, StringDecoder, IntegerDecoder, LongDecoder or DefaultDecoder, in package "
        f"org.apache.kafka.tools.api (Kafka 4.x) or kafka.serializer (3.x); StringDecoder "
        f"when given bare. DefaultDecoder prints hex, where Kafka prints a byte array's "
        f"identity hash. Giving it turns on --print-data-log."))


_PARSERS = (("--offsets-decoder", "offsets"), ("--transaction-log-decoder", "transaction-log"),
            ("--cluster-metadata-decoder", "cluster-metadata"),
            ("--remote-log-metadata-decoder", "remote-log-metadata"),
            ("--share-group-state-decoder", "share-group-state"))


@app.command("dump-segment", epilog=DECODERS_HELP + "\n\n" + EXIT_CODES_HELP)
def dump_segment(
    files: Optional[List[str]] = typer.Argument(None, callback=existing_paths,
                                                help="Files to dump: .log, .index, "
                                                ".timeindex, .txnindex, .snapshot, KRaft "
                                                ".checkpoint, checkpoint and metadata files.",
                                                show_default=False),
    files_opt: Optional[str] = typer.Option(None, "--files", help="Comma-separated files, as "
                                            "kafka-dump-log takes them.", metavar="A,B"),
    deep_iteration: bool = typer.Option(False, "--deep-iteration",
                                        help="Print every record, not just batch headers."),
    print_data_log: bool = typer.Option(False, "--print-data-log",
                                        help="Print keys and values (implies --deep-iteration)."),
    skip_record_metadata: bool = typer.Option(False, "--skip-record-metadata",
                                              help="Leave out per-record metadata (and control "
                                              "records)."),
    max_bytes: int = typer.Option(DEFAULT_MAX_BYTES, "--max-bytes", min=0,
                                  help="Only dump batches wholly within the first N bytes."),
    key_decoder: Optional[str] = _decoder_option("--key-decoder", "record keys"),
    value_decoder: Optional[str] = _decoder_option("--value-decoder", "record values and "
                                                   "header values"),
    key_decoder_class: Optional[str] = _decoder_class_option("--key-decoder-class",
                                                             "record keys", "--key-decoder"),
    value_decoder_class: Optional[str] = _decoder_class_option("--value-decoder-class",
                                                               "record values",
                                                               "--value-decoder"),
    verify_index_only: bool = typer.Option(False, "--verify-index-only",
                                           help="For .index/.timeindex: check entries against the "
                                           "log without printing them."),
    index_sanity_check: bool = typer.Option(False, "--index-sanity-check",
                                            help="For .index/.timeindex: run only the broker's "
                                            "sanity check."),
    max_message_size: int = typer.Option(DEFAULT_MAX_MESSAGE_SIZE, "--max-message-size", min=1,
                                         help="Bytes read at each offset-index entry when "
                                         "verifying."),
    offsets_decoder: bool = typer.Option(False, "--offsets-decoder",
                                         help="Decode __consumer_offsets records (group "
                                         "coordinator keys and values) as JSON, as Kafka "
                                         "3.8+ prints them (checked against 4.4: its 4.4 "
                                         "schemas, streams groups included)."),
    transaction_log_decoder: bool = typer.Option(False, "--transaction-log-decoder",
                                                 help="Decode __transaction_state records as "
                                                 "JSON, as Kafka 4.0+ prints them; the state "
                                                 "by name, as 4.4 prints it (4.0-4.3 print "
                                                 "its number)."),
    cluster_metadata_decoder: bool = typer.Option(False, "--cluster-metadata-decoder",
                                                  help="Decode __cluster_metadata (KRaft) "
                                                  "records and snapshots (Kafka 4.4's "
                                                  "metadata records)."),
    remote_log_metadata_decoder: bool = typer.Option(False, "--remote-log-metadata-decoder",
                                                     help="Decode __remote_log_metadata "
                                                     "(tiered storage) records, printed as "
                                                     "Kafka 4.4 prints them (the Java objects' "
                                                     "toString())."),
    share_group_state_decoder: bool = typer.Option(False, "--share-group-state-decoder",
                                                   help="Decode __share_group_state records "
                                                   "(share-group delivery state, KIP-932) as "
                                                   "Kafka 4.4's JSON."),
    problems: bool = typer.Option(False, "--problems", help="For a log dir: only the "
                                  "partitions that need attention (missing or damaged indexes "
                                  "or data, a high watermark or recovery point above the log "
                                  "end, marked or stray dirs); the log dir line says whether "
                                  "it shut down cleanly. Notes on stderr list problems first."),
    legacy_format: bool = typer.Option(False, "--legacy-format",
                                       help="With --offsets-decoder: the strings of Kafka "
                                       "<=3.7 (as 3.7.2 prints them) instead of 3.8+'s JSON; "
                                       "with --transaction-log-decoder: the strings of Kafka "
                                       "<=3.9 (as 3.9.1 prints them) instead of 4.0+'s JSON."),
    schemas_topic: str = typer.Option(SCHEMAS_TOPIC, "--schemas-topic", metavar="TOPIC",
                                      help="Where the schema decoders find the schemas: "
                                      "Schema Registry's kafkastore.topic."),
    output: OutputFormat = typer.Option(OutputFormat.text, "--output", "-o",
                                        help="text: kafka-dump-log's exact lines; table (a row "
                                        "per batch or entry, a rich table on a terminal); "
                                        "json; ndjson (one batch per line); yaml."),
) -> None:
    """Dump the batches and records of Kafka log segments, like kafka-dump-log.sh."""
    paths = list(files or [])
    if files_opt:
        paths.extend(p for p in files_opt.split(",") if p)
    if not paths:
        raise UsageError('Missing required argument "[files]"')
    from ..tools.dump_dispatch import expand_paths

    paths = expand_paths(paths)  # partition dirs -> their files; log dirs get a summary
    for name, value in (("--key-decoder", key_decoder), ("--value-decoder", value_decoder)):
        if value is not None and value not in DECODER_NAMES:
            raise UsageError(f"Invalid value for {name}: {value!r} (choose from "
                             f"{', '.join(DECODER_NAMES)})")
    key_decoder = _from_class("key", key_decoder, key_decoder_class)
    value_decoder = _from_class("value", value_decoder, value_decoder_class)
    given = (offsets_decoder, transaction_log_decoder, cluster_metadata_decoder,
             remote_log_metadata_decoder, share_group_state_decoder)
    chosen = [name for (_, name), flag in zip(_PARSERS, given) if flag]
    if len(chosen) > 1:
        raise UsageError(f"Give at most one of {', '.join(f for f, _ in _PARSERS)}")
    if legacy_format and not (offsets_decoder or transaction_log_decoder):
        raise UsageError("--legacy-format needs --offsets-decoder or --transaction-log-decoder")
    for name in (key_decoder, value_decoder):
        if name in SCHEMA_DECODER_NAMES:
            _load_schemas(name, paths, schemas_topic)
    options = DumpOptions(
        deep_iteration=deep_iteration,
        print_data=print_data_log or key_decoder is not None or value_decoder is not None,
        skip_record_metadata=skip_record_metadata,
        max_bytes=max_bytes,
        key_decoder=key_decoder or "string",
        value_decoder=value_decoder or "string",
        parser=chosen[0] if chosen else None,
        legacy_format=legacy_format,
        schemas_topic=schemas_topic,
        report=lambda message: err(f"pylogctl: {message}"),
        problems_only=problems,
    )
    index_options = IndexDumpOptions(verify_only=verify_index_only,
                                     sanity_check_only=index_sanity_check,
                                     max_message_size=max_message_size)
    guarded_output(lambda: _run(paths, options, index_options, output.value))


def _load_schemas(name: str, paths: list[str], topic: str) -> None:
    """The schemas of the dumped segments' log dirs, read now so that a missing library or
    ``_schemas`` topic is one usage error before any output (the dump reuses them)."""
    from ..tools.decoders import get_decoder

    told: set[int] = set()
    for path in paths:
        if path.endswith(".log"):
            store = get_decoder(name, [path], topic).store  # type: ignore[union-attr]
            if id(store) not in told:
                told.add(id(store))
                for note in store.notes:
                    err(f"pylogctl: {note}")


def _from_class(part: str, name: Optional[str], class_name: Optional[str]) -> Optional[str]:
    """The decoder name from --{part}-decoder or Kafka's --{part}-decoder-class (not both)."""
    if class_name is None:
        return name
    if name is not None:
        raise UsageError(f"Give --{part}-decoder or --{part}-decoder-class, not both")
    try:
        return decoder_for_class(class_name)
    except ValueError as exc:
        raise UsageError(f"Invalid value for --{part}-decoder-class: {exc}") from None


def _run(paths: list[str], options: DumpOptions, index_options: IndexDumpOptions,
         output: str) -> int:
    from ..tools.dump_dispatch import dump_file

    failure: list[PylogctlError] = []

    def sections(advance: Optional[Callable[[int], None]]) -> Iterator[AnyDump]:
        progress = None if advance is None else _FileProgress(advance)
        for path in paths:
            try:
                dump = dump_file(path, options, index_options, progress)
            except PylogctlError as exc:
                failure.append(exc)
                return
            yield dump
            if progress is not None:
                progress.finish(path)
            if dump.kind == "unknown" or getattr(dump, "corrupt", None):
                sys.stdout.flush()
                err(f"Ignoring unknown file {path}" if dump.kind == "unknown" else dump.corrupt)
            if dump.kind == "log-dir-summary":
                sys.stdout.flush()
                for line in dump.diagnostics():
                    err(line)
            if dump.error is not None:
                failure.append(dump.error)
                return

    # dumped to a terminal, the lines are the progress (and would tear a bar)
    total = 0 if sys.stdout.isatty() else sum(map(_file_size, paths))
    done: list[AnyDump] = write_sections(output, sections, "dumping",
                                         total if total >= BAR_MIN_BYTES else 0)
    index_problem = _report_index_verdicts([d for d in done if d.kind in ("offset-index",
                                                                           "time-index")])
    corrupt = any(getattr(d, "corrupt", None) for d in done)
    for dump in done:
        foot = dump.footer
        if foot.get("invalidBatches"):
            n = foot["invalidBatches"]
            err(f"pylogctl: {n} batch{'es' if n > 1 else ''} failed the CRC check, the first "
                f"({dump.path}, byte position {foot['firstInvalidBatchPosition']})")
        if foot.get("invalidBytes"):
            err(f"pylogctl: {foot['invalidBytes']} invalid bytes at the end "
                f"({dump.path}, byte position {foot['validBytes']})")
        pairs = foot.get("nonConsecutiveOffsets") or []
        if pairs:
            err(f"Non-consecutive offsets in {os.path.abspath(dump.path)}")
            for prev, nxt in pairs:
                err(f"  {prev} is followed by {nxt}")
    if failure:
        exc = failure[0]
        err(f"pylogctl: {exc}")
        return int(exc.exit_code)
    if any(d.footer.get("unreadableCount") for d in done):
        return int(ExitCode.UNREADABLE)
    if corrupt or index_problem or any(d.footer.get("invalidBytes") or d.footer.get("invalidBatches")
                                       or d.footer.get("problemCount") for d in done):
        return int(ExitCode.DATA_ERROR)
    return int(ExitCode.OK)


BAR_MIN_BYTES = 32 * 1024 * 1024  # less is dumped in well under a second: no bar


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path) if os.path.isfile(path) else 0
    except OSError:
        return 0


class _FileProgress:
    """Advances the bar by each file's bytes: as a segment's dump reports them, then the
    rest once the file is done (an index or state file, or a dump cut short)."""

    def __init__(self, advance: Callable[[int], None]) -> None:
        self.advance = advance
        self.counted = 0

    def __call__(self, n: int) -> None:
        self.counted += n
        self.advance(n)

    def finish(self, path: str) -> None:
        self.advance(max(0, _file_size(path) - self.counted))
        self.counted = 0


def _report_index_verdicts(indexes: list[IndexDump]) -> bool:
    """Kafka's stderr summaries (offset-index mismatches, then time-index errors, each file in
    turn), plus one line saying how many mismatches are benign. True if anything is wrong."""
    problem = False
    for idx in indexes:
        mismatches = idx.footer.get("mismatches") or []
        if not mismatches:
            continue
        err(f"Mismatches in :{os.path.abspath(idx.path)}")
        for m in mismatches:
            err(f"  Index offset: {m['indexOffset']}, log offset: {m['logOffset']}")
        benign = sum(m["verdict"] == "benign" for m in mismatches)
        if benign:
            err(f"  ({benign} of {len(mismatches)} are benign: the entries index multi-batch "
                f"appends, as followers write them, and lookups still find every offset; "
                f"-o json explains each)")
        problem = problem or benign < len(mismatches)
    labels = (("timestampMismatches", "Found timestamp mismatch in :{}",
               "  Index timestamp: {indexTimestamp}, log timestamp: {logTimestamp}"),
              ("outOfOrder", "Found out of order timestamp in :{}",
               "  Index timestamp: {indexTimestamp}, Previously indexed timestamp: "
               "{previousTimestamp}"))
    for key, head, line in labels:
        for idx in indexes:
            rows = idx.footer.get(key) or []
            if rows:
                problem = True
                err(head.format(os.path.abspath(idx.path)))
                for r in rows:
                    err(line.format(**r))
    for idx in indexes:
        rows = idx.footer.get("notFound") or []
        if rows:
            err("The following indexed offsets are not found in the log.")
            for r in rows:
                err(f"Indexed offset: {r['indexOffset']}, found log offset: {r['logOffset']}")
            benign = sum(r.get("verdict") == "benign" for r in rows)
            if benign:
                err(f"({benign} of {len(rows)} are benign: the entries name the record with the "
                    f"batch's max timestamp, as older brokers wrote them; -o json explains each)")
            problem = problem or benign < len(rows)
    return problem
