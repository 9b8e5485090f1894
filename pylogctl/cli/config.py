"""``pylogctl config``: each topic's effective configuration and where each value came from.

Also the options that say where configs come from, shared with ``pylogctl retention``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional

import typer

from .app import EXIT_CODES_HELP, app
from .output import OutputFormat, err, existing_paths, guarded_output, output_option, write_sections

if TYPE_CHECKING:
    from ..tools.config import ConfigOptions, ConfigRun

HELP = (
    "Show the effective configuration of each topic of Kafka log dirs, and where each value "
    "comes from.\n\n"
    "Sources, strongest first: --config NAME=VALUE; the topic config names of --config-file; "
    "the topic's ConfigRecords in the KRaft metadata log (__cluster_metadata: the latest "
    "snapshot, then the log, last write wins); broker-level names (log.retention.hours, "
    "log.segment.bytes, ...: the KRaft records for this broker, then the cluster-wide "
    "default ones, then --config, then --config-file, as a broker ranks dynamic above static "
    "configs; mapped onto topic names as Kafka does, log.retention.ms before .minutes before "
    ".hours); the configs Kafka creates __consumer_offsets and __transaction_state with; "
    "Kafka's defaults. A broker-level name never overrides a topic's own config.\n\n"
    "On a ZooKeeper cluster topic configs are not on disk: pass them with --config or "
    "--config-file.\n\n"
    "Exit codes here: 2 when a config value is invalid (named with its source); 4 when a "
    "broker holds a log dir's .lock."
)


def config_options() -> tuple[Any, Any]:
    """``--config NAME=VALUE`` (repeatable) and ``--config-file FILE``."""
    return (typer.Option([], "--config", metavar="NAME=VALUE",
                         help="A topic config (or a broker synonym such as "
                         "log.retention.hours) that beats every other source; repeatable."),
            typer.Option(None, "--config-file", metavar="FILE",
                         help="A properties file: topic config names override the metadata "
                         "log; broker-level names (a server.properties) are broker defaults."))


def topic_option() -> Any:
    return typer.Option([], "--topic", metavar="TOPIC", help="Only this topic (repeatable).")


def make_config_options(pairs: List[str], config_file: Optional[str]) -> ConfigOptions:
    from ..storage.topic_config import parse_overrides
    from ..tools.config import ConfigOptions

    return ConfigOptions(parse_overrides(pairs), config_file)


_config, _config_file = config_options()


@app.command("config", help=HELP, epilog=EXIT_CODES_HELP)
def config(
    paths: List[str] = typer.Argument(..., callback=existing_paths,
                                      help="Partition dirs, log dirs, or a dir holding "
                                      "log dirs.", show_default=False),
    topic: List[str] = topic_option(),
    config: List[str] = _config,
    config_file: Optional[str] = _config_file,
    output: OutputFormat = output_option("text (a table per topic); json; ndjson (one config "
                                         "value per line); yaml."),
) -> None:
    """Show effective topic configs (the help text is ``HELP``)."""
    from ..tools.config import ConfigRun

    run = ConfigRun(list(paths), tuple(topic), make_config_options(config, config_file))
    guarded_output(lambda: _run(run, output.value))


def _run(run: ConfigRun, output: str) -> int:
    done = write_sections(output, lambda _: run.sections(), "", 0)
    for note in dict.fromkeys(run.notes):
        err(f"pylogctl: {note}")
    code = 0
    for s in done:
        if s.error is not None:
            err(f"pylogctl: {s.topic}: {s.error}")
            code = max(code, int(s.error.exit_code))
    if not done:
        err("pylogctl: no topics found")
    return code
