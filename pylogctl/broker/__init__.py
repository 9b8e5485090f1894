"""A Kafka broker over a log dir: real clients produce and consume through it, and it writes
exactly the on-disk format the offline commands read.

Layers, as in Kafka: :mod:`.socket_server` (framing, per-connection order) ->
:mod:`.kafka_apis` (one handler per API; topic APIs in :mod:`.topic_apis`, coordinator APIs
in :mod:`.coordinator_apis`, configs in :mod:`.config_handler`, fetch sessions in
:mod:`.fetch_session`) -> :mod:`.replica_manager` (partitions, appends, delayed fetches),
:mod:`.group_coordinator` (classic groups: rebalances; their state in
:mod:`.group_metadata`, ``__consumer_offsets`` in :mod:`.group_metadata_manager`; KIP-848
groups in :mod:`.consumer_group_coordinator`, with their state in :mod:`.consumer_group` and
:mod:`.consumer_group_member`, reconciliation in :mod:`.current_assignment_builder` and the
server assignors in :mod:`.partition_assignor`),
:mod:`.transaction_coordinator` -> :mod:`.log_manager` (the log dir) and
:mod:`.metadata_log` (``__cluster_metadata-0``, a raft log Kafka's own broker loads) ->
:mod:`pylogctl.storage` (the engine). The protocol library (kio) is confined to
:mod:`.protocol` and loaded on first use. The broker's settings are
:mod:`.broker_config`; :mod:`.server` starts and stops the whole.
"""

from .broker_config import BrokerConfig
from .server import Broker, serve

__all__ = ["Broker", "BrokerConfig", "serve"]
