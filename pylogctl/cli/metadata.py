"""``pylogctl metadata``: the KRaft metadata image of a node, browsed as kafka-metadata-shell
browses it, described as kafka-topics and kafka-features describe a live cluster, and checked
against log dirs. Only parses options and renders; the work is :mod:`pylogctl.tools.metadata`.
"""

from __future__ import annotations

from typing import Any, List, Optional

import typer
from typer.core import TyperGroup

from .app import EXIT_CODES_HELP, app
from .output import OutputFormat, err, existing_paths, guarded_output, output_option, write_listing

HELP = (
    "The KRaft metadata image of a node, from its files: what the cluster thought it was.\n\n"
    "LOGDIR_OR_SNAPSHOT is a log dir holding __cluster_metadata-0, that dir itself, or one "
    "file of it. A dir is read as a broker or controller builds its image: the latest "
    "snapshot (.checkpoint), then the log from the snapshot's end offset in offset order, "
    "metadata transactions applied at their end (an aborted or unfinished one is not). A "
    "file is read alone from its first batch, as kafka-metadata-shell --snapshot FILE reads "
    "a snapshot or a log segment (--snapshot FILE is accepted here too). Offline the "
    "metadata log's high watermark is unknown: an uncommitted tail is replayed.\n\n"
    "Replay stops at a record that fails to apply (a PartitionRecord for a topic no "
    "TopicRecord created, a FenceBrokerRecord for another broker epoch, ...: Kafka's loader "
    "logs it, and its image past it is not well defined), at a gap between the snapshot and "
    "the log or between batches, a batch whose CRC does not match, a base offset out of "
    "sequence, a truncated batch or a record that does not decode. stderr names the file, "
    "offset and byte position, stdout shows the image read until then, and the exit code is "
    "1.\n\n"
    "Exit codes here: 1 when replay stopped before the end of the files, or (check) when a "
    "problem is found; 2 for a source that holds no metadata log."
)


class _MetadataGroup(TyperGroup):
    """``--snapshot FILE`` (kafka-metadata-shell's option, also ``-s``) is the source."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if len(args) >= 2 and args[0] in ("--snapshot", "-s"):
            args = [args[1], *args[2:]]
        elif args and args[0].startswith("--snapshot="):
            args = [args[0].split("=", 1)[1], *args[1:]]
        return super().parse_args(ctx, args)


metadata_app = typer.Typer(name="metadata", help=HELP, no_args_is_help=True,
                           rich_markup_mode="rich", cls=_MetadataGroup,
                           epilog=EXIT_CODES_HELP)
app.add_typer(metadata_app, name="metadata")


@metadata_app.callback()
def _source(ctx: typer.Context, source: str = typer.Argument(
        ..., callback=existing_paths, metavar="LOGDIR_OR_SNAPSHOT",
        help="A log dir, its __cluster_metadata-0 dir, or "
        "one .checkpoint or .log file of it (or --snapshot FILE).", show_default=False)
            ) -> None:
    ctx.obj = source


def _open(ctx: typer.Context):
    """The image, replayed with a progress bar on stderr (on a terminal)."""
    from ..tools.metadata import open_metadata, replay_size
    from .output import progress_bar

    advance, stop = progress_bar("replaying metadata", replay_size(ctx.obj))
    try:
        return open_metadata(ctx.obj, advance)
    finally:
        if stop is not None:
            stop()


def _replay_code(src) -> int:
    """Warnings for what replay skipped or where it stopped; 1 when it stopped early."""
    from ..storage.metadata_loader import problems

    for line in problems(src.replay):
        err(f"pylogctl: {'' if line.startswith('replay stopped') else 'warning: '}{line}")
    return 1 if src.replay.stopped is not None else 0


def _lines(output: str, lines: list[str], src) -> int:
    from ..formatters.table import TableSection

    write_listing(output, TableSection([{"line": line} for line in lines], ("line",),
                                       kind="metadata-shell", items_key="lines"))
    return _replay_code(src)


_SHELL_OUTPUT = "text: kafka-metadata-shell's lines; json, ndjson, yaml: a row per line."
_PATHS = "Paths in the shell's tree (/image/topics/byName/...), with its wildcards * ? {a,b}."


def _shell_command(name: str, help: str, required: bool) -> None:
    """Register kafka-metadata-shell's ``name`` (``ls``, ``cat``, ``tree``, ``find``)."""
    def command(ctx: typer.Context,
                paths: Optional[List[str]] = typer.Argument(... if required else None,
                                                            help=_PATHS),
                output: OutputFormat = output_option(_SHELL_OUTPUT)) -> None:
        src = _open(ctx)
        run = getattr(src.shell(), name)
        guarded_output(lambda: _lines(output.value, run(paths or []), src))
    metadata_app.command(name, help=help, epilog=EXIT_CODES_HELP)(command)


_shell_command("ls", "List nodes of the image tree, as kafka-metadata-shell's ls.", False)
_shell_command("cat", "Show leaves of the image tree, as kafka-metadata-shell's cat.", True)
_shell_command("tree", "Show nodes and everything under them, as kafka-metadata-shell's tree.",
               True)
_shell_command("find", "List every path under nodes, as kafka-metadata-shell's find.", False)


@metadata_app.command("shell", help="Browse the image interactively, as kafka-metadata-shell "
                      "does: cd, pwd, ls, cat, tree, find, history, help, exit. Without a "
                      "terminal, commands are read from stdin, one a line.",
                      epilog=EXIT_CODES_HELP)
def shell(ctx: typer.Context) -> None:
    from .metadata_repl import run_shell

    src = _open(ctx)
    code = _replay_code(src)
    run_shell(src)
    raise typer.Exit(code)


@metadata_app.command("topics", help="Describe topics as kafka-topics --describe does on a "
                      "live cluster (Topic, TopicId, PartitionCount, ReplicationFactor, "
                      "Configs; per partition Leader, Replicas, Isr, Elr, LastKnownElr), from "
                      "the image. Configs are those a broker calls other than defaults: the "
                      "topic's own and the dynamic broker configs in the image; static ones "
                      "(server.properties) only with --config-file.", epilog=EXIT_CODES_HELP)
def topics(ctx: typer.Context,
           describe: bool = typer.Option(True, "--describe", help="kafka-topics' action "
                                         "(the only one: accepted for familiarity)."),
           topic: List[str] = typer.Option([], "--topic", metavar="REGEX",
                                           help="Only topics the regular expression matches "
                                           "whole (repeatable)."),
           exclude_internal: bool = typer.Option(False, "--exclude-internal",
                                                 help="Leave out internal topics."),
           config_file: Optional[str] = typer.Option(
               None, "--config-file", metavar="FILE", help="The broker's server.properties, "
               "for the static broker configs a broker would describe."),
           output: OutputFormat = output_option(
               "text: kafka-topics --describe's lines; json, yaml: a topic per item, with "
               "its partitions (leader epoch, partition epoch, directories, adding and "
               "removing replicas too); ndjson: a topic per line.")) -> None:
    from ..formatters.table import TableSection
    from ..tools.metadata import topic_descriptions

    src = _open(ctx)
    rows = topic_descriptions(src, topic, exclude_internal, config_file)

    def write() -> int:
        if output.value == "table":
            flat = [{"topic": t["topic"], **{k: _cell(v) for k, v in p.items()}}
                    for t in rows for p in t["partitions"]]
            write_listing("table", TableSection(flat, ("topic", "partition", "leader",
                                                       "leaderEpoch", "replicas", "isr",
                                                       "elr", "lastKnownElr", "directories"),
                                                kind="table", items_key="partitions"))
        else:
            write_listing(output.value, TableSection(rows, (), kind="metadata-topics",
                                                     items_key="topics"))
        return _replay_code(src)
    guarded_output(write)


def _cell(value: Any) -> Any:
    return ",".join(str(v) for v in value) if isinstance(value, list) else value


def _rows_command(ctx: typer.Context, output: str, rows: list[dict], columns: tuple,
                  kind: str, key: str, src) -> None:
    from ..formatters.table import TableSection

    def write() -> int:
        items = rows if output not in ("text", "table") else [
            {k: _cell([f"{e['listener']}={e['host']}:{e['port']}" for e in v]
                      if k == "endpoints" else v) for k, v in r.items() if k in columns}
            for r in rows]
        write_listing(output, TableSection(items, columns, kind=kind, items_key=key))
        return _replay_code(src)
    guarded_output(write)


_ROWS_OUTPUT = "text and table: a row each; json, ndjson, yaml: every field."


@metadata_app.command("brokers", help="The registered brokers: endpoints, fenced, in "
                      "controlled shutdown, epoch, rack, log dirs.", epilog=EXIT_CODES_HELP)
def brokers(ctx: typer.Context, output: OutputFormat = output_option(_ROWS_OUTPUT)) -> None:
    from ..tools.metadata import broker_rows

    src = _open(ctx)
    _rows_command(ctx, output.value, broker_rows(src.image),
                  ("id", "epoch", "fenced", "inControlledShutdown", "rack", "endpoints",
                   "logDirs"), "table", "brokers", src)


@metadata_app.command("controllers", help="The registered controllers (KIP-919): endpoints "
                      "and supported features.", epilog=EXIT_CODES_HELP)
def controllers(ctx: typer.Context,
                output: OutputFormat = output_option(_ROWS_OUTPUT)) -> None:
    from ..tools.metadata import controller_rows

    src = _open(ctx)
    _rows_command(ctx, output.value, controller_rows(src.image),
                  ("id", "incarnationId", "endpoints"), "table", "controllers", src)


@metadata_app.command("features", help="The features as kafka-features describe shows them: "
                      "what the broker registered support for, the finalized level, and the "
                      "image's offset as the epoch.", epilog=EXIT_CODES_HELP)
def features(ctx: typer.Context,
             node_id: Optional[int] = typer.Option(None, "--node-id", help="Whose supported "
                                                   "ranges (default: the lowest broker id)."),
             output: OutputFormat = output_option("text: kafka-features describe's lines; "
                                                  "json, ndjson, yaml: a row per feature.")
             ) -> None:
    from ..tools.metadata import feature_rows

    src = _open(ctx)
    _rows_command(ctx, output.value, feature_rows(src.image, node_id),
                  ("feature", "supportedMinVersion", "supportedMaxVersion",
                   "finalizedVersionLevel", "epoch"),
                  "metadata-features" if output.value == "text" else "table", "features", src)



@metadata_app.command("check", help="Check log dirs against the image, as a KRaft broker "
                      "loading them would: partition dirs the image does not know or does "
                      "not place on the dir's broker (strays, which Kafka 4 renames -stray), "
                      "partition.metadata topic ids that differ from the image's, partitions "
                      "the image places on the broker (in this log dir, by directory.id) that "
                      "no dir given holds, and meta.properties whose cluster.id, node.id or "
                      "directory.id do not agree (kafka-storage info's checks). Exit 1 when "
                      "a problem is found.", epilog=EXIT_CODES_HELP)
def check(ctx: typer.Context,
          log_dirs: Optional[List[str]] = typer.Argument(
              None, callback=existing_paths, help="Log dirs (or a dir holding several "
              "brokers' log dirs); default: "
              "the log dir of LOGDIR_OR_SNAPSHOT."),
          output: OutputFormat = output_option("text: a line per problem and a count; json, "
                                               "ndjson, yaml: a row per problem.")) -> None:
    from ..errors import UsageError
    from ..formatters.table import TableSection
    from ..storage.files import require_path
    from ..storage.log_dir_layout import LOG_DIR_PATH, child_log_dirs, is_log_dir, not_a_kafka_dir
    from ..tools.metadata_check import check_log_dirs

    src = _open(ctx)
    dirs: list[str] = []
    for path in log_dirs or ([src.log_dir] if src.log_dir else []):
        found = [path] if is_log_dir(require_path(path)) else child_log_dirs(path)
        if not found:
            raise not_a_kafka_dir(path, LOG_DIR_PATH)
        dirs += found
    if not dirs:
        raise UsageError("no log dir to check: name one (LOGDIR_OR_SNAPSHOT is not a log dir)")
    problems = check_log_dirs(src, dirs)

    def write() -> int:
        write_listing(output.value, TableSection(
            problems, ("logDir", "problem", "topic", "partition", "detail"),
            kind="metadata-check" if output.value == "text" else "table", items_key="problems"))
        return max(_replay_code(src), 1 if problems else 0)
    guarded_output(write)
