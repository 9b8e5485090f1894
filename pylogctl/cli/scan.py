"""``pylogctl scan``: the records of log dirs, filtered, on this process or on Spark."""

from __future__ import annotations

import enum
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator, List, Optional

import typer

from ..errors import UsageError
from .app import EXIT_CODES_HELP, app
from .output import (existing_paths, OutputFormat, bars_allowed, err, guarded_output, progress_bar,
                     write_listing)

HELP = (
    "Read the records of log dirs (a log dir, several, a dir holding log dirs, or partition "
    "dirs), filtered, as a table, JSON, NDJSON or YAML; count them; or export them as Parquet or "
    "JSON.\n\n"
    "--engine local (the default) reads in this process, without a JVM. --engine spark runs "
    "the same reader in Spark tasks through the kafka-log data source, one task per segment "
    "(or per --split-bytes of a large one): in a local session by default, on the cluster "
    "given by --master, through the Spark Connect server given by --remote (or SPARK_REMOTE), "
    "or on the one spark-submit provides. Both return the same rows in the same order "
    "(partition, then offset). A --master or --remote that does not answer within 5 seconds "
    "fails with exit code 3, like an unreadable file.\n\n"
    "Topic, partition, offset and time filters are used to leave whole partitions and "
    "segments unread and to seek with the offset and time indexes; stderr says how many "
    "segments were read. Ranges are half-open: --from-* inclusive, --to-* exclusive. With "
    "several log dirs holding replicas of a partition, one replica is read (highest leader "
    "epoch, then log end offset), unless --all-replicas.\n\n"
    "JSON rows have the columns topic, partition, offset, timestamp (ms), timestampType, key, "
    "value, keySize, valueSize, headers, producerId, producerEpoch, sequence, isTransactional, "
    "isControl, partitionLeaderEpoch, codec, magic, segment and position (the batch's byte "
    "position); keys, values and header values are base64, unless --key-decoder or "
    "--value-decoder decode them (header values stay base64).\n\n"
    "Table and text output show keys and values by pylogctl's rule for bytes: {rule}. "
    "--key-decoder/--value-decoder choose otherwise: string (Kafka's StringDecoder: malformed "
    "UTF-8 as U+FFFD), text (the rule), integer, long, hex, base64, json, and avro, protobuf, "
    "json-schema (the Confluent wire format: magic byte 0 and a schema id, read with the "
    "schema of that id in the _schemas topic (--schemas-topic) of the scanned log dirs; "
    "schema-registry: whichever of the three the schema is; they need pylogctl's schemas "
    "extra: fastavro, grpcio-tools, jsonschema). A key or value a decoder cannot read is one "
    "line on stderr and shown by the rule."
)


class Engine(str, enum.Enum):
    local = "local"
    spark = "spark"


def paths_argument() -> Any:
    return typer.Argument(..., callback=existing_paths, metavar="PATH...", show_default=False,
                          help="Log dirs, dirs holding log dirs, or partition dirs.")


def engine_option() -> Any:
    return typer.Option(Engine.local, "--engine", help="local: this process, no JVM; spark: "
                        "Spark tasks (needs pyspark 4 and pyarrow installed).")


def master_option() -> Any:
    return typer.Option(None, "--master", metavar="URL", help="With --engine spark: the "
                        "cluster (spark://..., yarn, k8s://..., local[N]); default: the one "
                        "spark-submit gives, else local[*].")


def remote_option() -> Any:
    return typer.Option(None, "--remote", metavar="URL", help="With --engine spark: a Spark "
                        "Connect server (sc://HOST:PORT; default: $SPARK_REMOTE). pylogctl "
                        "must be installed beside the server and its executors.")


def conf_option() -> Any:
    return typer.Option([], "--conf", metavar="KEY=VALUE", help="With --engine spark: a Spark "
                        "setting for the session (repeatable), as spark-submit's --conf; e.g. "
                        "spark.pyspark.python=/opt/pylogctl/bin/python, the executors' "
                        "interpreter.")


def spark_conf(pairs: list[str]) -> dict[str, str]:
    """``--conf KEY=VALUE`` options as a dict."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"Bad --conf {pair!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def split_bytes_option() -> Any:
    return typer.Option(128 * 1024 * 1024, "--split-bytes", min=1, metavar="N",
                        help="Read segments larger than N bytes in several parts, cut at "
                        "offset-index positions.")


def make_engine(engine: Engine, paths: list[str], master: Optional[str], split_bytes: int,
                replicas: str, remote: Optional[str] = None, conf: Optional[list[str]] = None
                ) -> Any:
    """The engine asked for (PySpark is imported only for ``spark``)."""
    if engine is Engine.local:
        for name, given in (("--master", master), ("--remote", remote), ("--conf", conf)):
            if given:
                raise UsageError(f"{name} needs --engine spark")
        from ..pipeline.local_engine import LocalEngine

        return LocalEngine(paths, split_bytes=split_bytes, replicas=replicas)
    import importlib.util

    for module in ("pyspark", "pyarrow"):
        if importlib.util.find_spec(module) is None:
            raise UsageError(f"--engine spark needs pyspark and pyarrow ({module} is not "
                             f"installed): pip install 'pyspark>=4,<5' pyarrow")
    from ..pipeline.spark_engine import SparkEngine

    return SparkEngine(paths, master=master, remote=remote, conf=spark_conf(conf or []),
                       split_bytes=split_bytes, replicas=replicas)


def decoder_option(flag: str, what: str) -> Any:
    from ..tools.decoders import DECODER_NAMES

    return typer.Option(None, flag, metavar="NAME", help=f"Decode {what}: "
                        f"{', '.join(DECODER_NAMES)} (see above).")


def schemas_topic_option() -> Any:
    from ..tools.decoders import SCHEMAS_TOPIC

    return typer.Option(SCHEMAS_TOPIC, "--schemas-topic", metavar="TOPIC",
                        help="Where the schema decoders find the schemas: Schema Registry's "
                        "kafkastore.topic.")


def _help() -> str:
    from ..format.readable_bytes import READABLE_RULE

    return HELP.format(rule=READABLE_RULE)


@app.command("scan", help=_help(), epilog=EXIT_CODES_HELP)
def scan(
    paths: List[str] = paths_argument(),
    engine: Engine = engine_option(),
    master: Optional[str] = master_option(),
    remote: Optional[str] = remote_option(),
    conf: List[str] = conf_option(),
    topic: List[str] = typer.Option([], "--topic", metavar="TOPIC",
                                    help="Only this topic (repeatable)."),
    partition: List[int] = typer.Option([], "--partition", metavar="N", min=0,
                                        help="Only partition N (repeatable)."),
    from_offset: Optional[int] = typer.Option(None, "--from-offset", metavar="N",
                                              help="Records at offset N and above."),
    to_offset: Optional[int] = typer.Option(None, "--to-offset", metavar="N",
                                            help="Records below offset N."),
    from_time: Optional[str] = typer.Option(None, "--from-time", metavar="TIME",
                                            help="Records with a timestamp at or after TIME "
                                            "(epoch ms, or ISO 8601 such as "
                                            "2024-06-15T10:00:00Z; UTC without a zone)."),
    to_time: Optional[str] = typer.Option(None, "--to-time", metavar="TIME",
                                          help="Records with a timestamp before TIME."),
    key: Optional[str] = typer.Option(None, "--key", metavar="TEXT",
                                      help="Records whose key is TEXT (UTF-8)."),
    grep: Optional[str] = typer.Option(None, "--grep", metavar="TEXT",
                                       help="Records whose value contains TEXT (UTF-8)."),
    count: bool = typer.Option(False, "--count", help="Print only the number of records."),
    export: Optional[str] = typer.Option(None, "--export", metavar="FORMAT:DIR",
                                         help="Write the records to a new DIR as parquet:DIR "
                                         "or json:DIR (a part file per split, as Spark "
                                         "writes), instead of printing them."),
    key_decoder: Optional[str] = decoder_option("--key-decoder", "keys"),
    value_decoder: Optional[str] = decoder_option("--value-decoder", "values"),
    schemas_topic: str = schemas_topic_option(),
    split_bytes: int = split_bytes_option(),
    all_replicas: bool = typer.Option(False, "--all-replicas",
                                      help="Read every replica of a partition, not one."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="On stderr, the replica read "
                                 "for each partition held by several log dirs (else one line "
                                 "counts them)."),
    output: OutputFormat = typer.Option(OutputFormat.table, "--output", "-o",
                                        help="table (TOPIC PARTITION OFFSET TIMESTAMP KEY "
                                        "VALUE; a rich table on a terminal, plain columns "
                                        "when piped); text (those plain columns, always); "
                                        "json (an array of rows); ndjson (a row per line); "
                                        "yaml (a sequence of rows)."),
) -> None:
    """Scan records (the help text is ``HELP``)."""
    from ..pipeline.scan_filter import ScanFilter, parse_time

    if count and export:
        raise UsageError("Give at most one of --count and --export")
    if (count or export) and (key_decoder or value_decoder):
        raise UsageError("--key-decoder and --value-decoder shape the printed records; "
                         f"{'--count' if count else '--export'} prints none")
    target = None
    if export is not None:
        from ..pipeline.export import ExportTarget

        target = ExportTarget.parse(export)
        target.check_absent()
    f = ScanFilter()
    if topic:
        f = f.narrowed(topics=set(topic))
    if partition:
        f = f.narrowed(partitions=set(partition))
    if from_offset is not None:
        f = f.narrowed(offset_from=from_offset)
    if to_offset is not None:
        f = f.narrowed(offset_to=to_offset)
    if from_time is not None:
        f = f.narrowed(time_from=parse_time(from_time))
    if to_time is not None:
        f = f.narrowed(time_to=parse_time(to_time))
    if key is not None:
        f = f.narrowed(key=key.encode("utf-8"))
    if grep is not None:
        f = f.narrowed(value_contains=grep.encode("utf-8"))
    decoders = _decoders(list(paths), key_decoder, value_decoder, schemas_topic)
    runner = make_engine(engine, list(paths), master, split_bytes,
                         "all" if all_replicas else "one", remote, conf)
    try:
        guarded_output(lambda: _run(runner, f, count, target, output.value, verbose, decoders))
    finally:
        close = getattr(runner, "close", None)
        if close is not None:
            close()


def _decoders(paths: list[str], key_decoder: Optional[str], value_decoder: Optional[str],
              schemas_topic: str) -> Optional[tuple[Any, Any]]:
    """The key and value decoders asked for (None: none asked); the schema decoders read the
    ``_schemas`` topic of the scanned log dirs now, so a problem is a usage error up front."""
    if key_decoder is None and value_decoder is None:
        return None
    from ..tools.decoders import DECODER_NAMES, get_decoder

    out = []
    for flag, name in (("--key-decoder", key_decoder), ("--value-decoder", value_decoder)):
        if name is not None and name not in DECODER_NAMES:
            raise UsageError(f"Invalid value for {flag}: {name!r} (choose from "
                             f"{', '.join(DECODER_NAMES)})")
        out.append(None if name is None else get_decoder(name, paths, schemas_topic))
    # what _schemas held that could not be read (key and value decoders share the store)
    for note in dict.fromkeys(n for d in out for n in getattr(d, "notes", ())):
        err(f"pylogctl: {note}")
    return out[0], out[1]


@contextmanager
def engine_progress(runner: Any, label: str, size: Callable[[], int],
                    streaming: bool = False) -> Iterator[None]:
    """A bar on stderr (a terminal) while the local engine reads (Spark shows its own). Not
    while rows stream to that terminal: they would tear the bar, and they show progress."""
    if runner.name != "local" or not bars_allowed() or (streaming and sys.stdout.isatty()):
        yield
        return
    advance, stop = progress_bar(label, size())
    runner.progress = advance
    try:
        yield
    finally:
        runner.progress = None
        if stop is not None:
            stop()


def _summary(runner: Any, verbose: bool = False) -> None:
    plan = runner.last_plan
    if plan is None:
        return
    for note in plan.notes + (plan.replica_choices if verbose else []):
        err(f"pylogctl: {note}")
    err(f"pylogctl: {plan.summary()} ({runner.name} engine)")


def _run(runner: Any, f: Any, count: bool, target: Any, output: str, verbose: bool,
         decoders: Optional[tuple[Any, Any]] = None) -> int:
    from ..formatters.scan_records import scan_json_section, scan_table_section

    def size() -> int:  # asked only when a bar is shown
        return runner.read_size(f)

    if count:
        with engine_progress(runner, "counting", size):
            n = runner.count(f)
        sys.stdout.write(f"{n}\n" if output in ("table", "text") else
                         f"count: {n}\n" if output == "yaml" else f'{{"count":{n}}}\n')
        _summary(runner, verbose)
        return 0
    if target is not None:
        with engine_progress(runner, "exporting", size):
            n = runner.export(target, f)
        _summary(runner, verbose)
        err(f"pylogctl: wrote {n} records to {target.directory} ({target.fmt})")
        return 0
    with engine_progress(runner, "scanning", size, streaming=True):
        if output in ("table", "text"):
            rows = runner.rows(f, ("topic", "partition", "offset", "timestamp", "key", "value"))
        else:
            rows = runner.rows(f)
        if decoders is not None:
            from ..tools.decoders import decode_rows

            rows = decode_rows(rows, *decoders, lambda m: err(f"pylogctl: {m}"))
        section = (scan_table_section(rows) if output in ("table", "text")
                   else scan_json_section(rows))
        write_listing(output, section)
    _summary(runner, verbose)
    return 0
