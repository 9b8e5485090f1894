"""``pylogctl broker start``: serve a log dir to real Kafka clients.

Only parses options; the broker is :mod:`pylogctl.broker` (imported when the command runs, so
``pylogctl --help`` does not load the protocol library).
"""

from __future__ import annotations

from typing import Optional

import typer

from ..errors import UsageError
from .app import EXIT_CODES_HELP, app

HELP = (
    "Run a single-node Kafka broker over a log dir.\n\n"
    "Tested clients: Kafka's Java client 4.4 and 3.9 (producer with every codec, acks and "
    "transactions; consumer with the classic and the KIP-848 consumer group protocols "
    "(group.protocol=consumer, both server assignors), rebalances, static members and fetch "
    "sessions; Admin client), Kafka 4.4's "
    "command-line tools (kafka-topics, kafka-console-producer and -consumer, "
    "kafka-consumer-groups, kafka-configs, kafka-get-offsets, kafka-transactions, "
    "kafka-delete-records, kafka-producer-perf-test, kafka-consumer-perf-test), librdkafka "
    "(confluent-kafka, kcat), kafka-python, aiokafka and kafkajs. It writes exactly the on-disk "
    "format the other subcommands read: segments, indexes, checkpoints, producer snapshots, "
    "leader epochs, and the groups and committed offsets in __consumer_offsets, so "
    "dump-segment, consumer-groups, recover and compact work on its log dir once it is "
    "stopped.\n\n"
    "The log dir moves to Apache Kafka's own broker and back (Kafka 4.x in KRaft combined "
    "mode with the same node.id, started on the dir without formatting it): "
    "__cluster_metadata-0 is a metadata log Kafka's raft layer loads (metadata.version "
    "4.0-IV3, group.version 1, topics, partitions with their leader epochs, configs), and a "
    "dir Kafka wrote is served from its own metadata log, with its groups of both "
    "protocols.\n\n"
    "SIGTERM or Ctrl-C shuts it down cleanly (checkpoints, trimmed indexes, "
    ".kafka_cleanshutdown). After a crash or SIGKILL the next start recovers the log dir as "
    "`pylogctl recover` would. A log dir locked by another process is refused (exit 4)."
)

broker_app = typer.Typer(name="broker", help="Run a Kafka broker over a log dir.",
                         no_args_is_help=True, rich_markup_mode="rich")
app.add_typer(broker_app, name="broker")


def _address(text: str) -> tuple[str, int | None]:
    host, sep, port = text.rpartition(":")
    if not sep:
        return text, None
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        raise UsageError(f"Invalid address {text!r}: expected HOST or HOST:PORT") from None


@broker_app.command("start", help=HELP, epilog=EXIT_CODES_HELP)
def start(
    log_dir: str = typer.Option(..., "--log-dir", help="The log dir to serve (created if "
                                "missing).", show_default=False),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(9092, "--port", help="Port to listen on (0: any free port)."),
    advertised: Optional[str] = typer.Option(
        None, "--advertised-address", metavar="HOST[:PORT]",
        help="Address clients are told to connect to (advertised.listeners; default: the "
        "listening address and port)."),
    node_id: int = typer.Option(1, "--node-id", help="This broker's node.id (must match "
                                "meta.properties of an existing log dir)."),
    num_partitions: int = typer.Option(1, "--num-partitions", help="Partitions of "
                                       "auto-created topics (num.partitions)."),
    auto_create: bool = typer.Option(True, "--auto-create/--no-auto-create",
                                     help="Create unknown topics on Metadata requests "
                                     "(auto.create.topics.enable)."),
    offsets_partitions: int = typer.Option(50, "--offsets-topic-partitions",
                                           help="Partitions of __consumer_offsets when it is "
                                           "created (offsets.topic.num.partitions)."),
    rebalance_delay_ms: int = typer.Option(3000, "--group-initial-rebalance-delay-ms",
                                           help="group.initial.rebalance.delay.ms."),
    consumer_heartbeat_ms: int = typer.Option(
        5000, "--group-consumer-heartbeat-interval-ms",
        help="Heartbeat interval of KIP-848 consumer group members "
        "(group.consumer.heartbeat.interval.ms)."),
    consumer_session_ms: int = typer.Option(
        45_000, "--group-consumer-session-timeout-ms",
        help="Session timeout of KIP-848 consumer group members "
        "(group.consumer.session.timeout.ms)."),
    retention_check_ms: int = typer.Option(300_000, "--log-retention-check-interval-ms",
                                           help="How often retention deletes old segments "
                                           "(log.retention.check.interval.ms)."),
    segment_bytes: Optional[int] = typer.Option(
        None, "--log-segment-bytes", show_default=False,
        help="Default segment.bytes of topics (log.segment.bytes; default 1 GiB)."),
    retention_ms: Optional[int] = typer.Option(
        None, "--log-retention-ms", show_default=False,
        help="Default retention.ms of topics (log.retention.ms; default 7 days, -1: keep "
        "forever)."),
    retention_bytes: Optional[int] = typer.Option(
        None, "--log-retention-bytes", show_default=False,
        help="Default retention.bytes of topics (log.retention.bytes; default -1: no limit)."),
    txn_partitions: int = typer.Option(50, "--transaction-state-partitions",
                                       help="Partitions of __transaction_state when it is "
                                       "created (transaction.state.log.num.partitions)."),
    txn_max_timeout_ms: int = typer.Option(900_000, "--transaction-max-timeout-ms",
                                           help="Longest transaction timeout a producer may "
                                           "ask for (transaction.max.timeout.ms)."),
    txn_abort_interval_ms: int = typer.Option(
        10_000, "--transaction-abort-interval-ms",
        help="How often timed-out transactions are aborted "
        "(transaction.abort.timed.out.transaction.cleanup.interval.ms)."),
    log_level: str = typer.Option("INFO", "--log-level", help="Logging level (stderr)."),
) -> None:
    """Start the broker and serve until SIGTERM/SIGINT."""
    import asyncio
    import logging
    import sys

    from ..broker.group_metadata import GroupConfig
    from ..broker.broker_config import BrokerConfig
    from ..broker.server import serve
    from ..broker.transaction_coordinator import TransactionConfig
    from ..storage.log_config import LogConfig

    if num_partitions < 1 or offsets_partitions < 1:
        raise UsageError("--num-partitions and --offsets-topic-partitions must be at least 1")
    if retention_check_ms < 1:
        raise UsageError("--log-retention-check-interval-ms must be at least 1")
    if txn_partitions < 1 or txn_max_timeout_ms < 1 or txn_abort_interval_ms < 1:
        raise UsageError("--transaction-state-partitions, --transaction-max-timeout-ms and "
                         "--transaction-abort-interval-ms must be at least 1")
    log_defaults = {"segment.bytes": segment_bytes, "retention.ms": retention_ms,
                    "retention.bytes": retention_bytes}
    log_config = LogConfig.from_properties({k: v for k, v in log_defaults.items()
                                            if v is not None})  # UsageError if out of range
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s "
                        "%(name)s: %(message)s")
    adv_host, adv_port = _address(advertised) if advertised else (None, None)
    config = BrokerConfig(log_dir=log_dir, host=host, port=port, advertised_host=adv_host,
                          advertised_port=adv_port, node_id=node_id,
                          num_partitions=num_partitions, auto_create_topics=auto_create,
                          log_retention_check_interval_ms=retention_check_ms,
                          log_config=log_config,
                          transaction=TransactionConfig(state_log_partitions=txn_partitions,
                                                        max_timeout_ms=txn_max_timeout_ms,
                                                        abort_interval_ms=txn_abort_interval_ms),
                          group=GroupConfig(offsets_topic_partitions=offsets_partitions,
                                            initial_rebalance_delay_ms=rebalance_delay_ms,
                                            consumer_heartbeat_interval_ms=consumer_heartbeat_ms,
                                            consumer_session_timeout_ms=consumer_session_ms))
    def ready(bound: int) -> None:
        # one line for scripts and supervisors to wait on (and to learn the port of --port 0)
        print(f"pylogctl: broker {node_id} listening on {host}:{bound} (log dir {log_dir})",
              file=sys.stderr, flush=True)

    asyncio.run(serve(config, ready))
