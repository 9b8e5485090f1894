"""The transaction coordinator (Kafka's ``TransactionCoordinator`` with its
``TransactionMarkerChannelManager``): InitProducerId for a transactional id,
AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, the abort of timed-out transactions, and the
completion at start-up of transactions a previous run left prepared.

Every partition is led by this node, so the markers need no channel to other brokers: ending
a transaction writes ``PrepareCommit``/``PrepareAbort`` to ``__transaction_state``, then a
COMMIT/ABORT control batch (producer id and epoch, the coordinator epoch) to each partition
of the transaction through the leader append path with the coordinator's origin (so the
producer state closes the transaction, the ``.txnindex`` records an abort and the last
stable offset moves), tells the group coordinator about markers on ``__consumer_offsets``
(pending transactional offset commits become visible or are dropped), then writes
``CompleteCommit``/``CompleteAbort``. As in Kafka, EndTxn succeeds once the prepare record is
written; a marker that cannot be written (a storage error) leaves the transaction prepared,
and the periodic task tries again, as Kafka's marker channel retries.

Kafka's rules kept: InitProducerId on an ongoing transaction fences the producer (epoch + 1,
never handed out), aborts the transaction and answers CONCURRENT_TRANSACTIONS so the client
retries and gets the epoch after that; a producer id whose epochs are exhausted is replaced;
an ``Ongoing`` transaction older than its timeout is aborted the same way by the periodic
task (``transaction.abort.timed.out.transaction.cleanup.interval.ms``); at start-up,
``PrepareCommit``/``PrepareAbort`` transactions are completed and ``Ongoing`` ones are left to
time out. Not done: transactional id expiration (``transactional.id.expiration.ms``), the
KIP-890 produce verification (AddPartitionsToTxn v4+), transactions V2 (epoch bump per
transaction).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from ..format.builder import build_end_txn_marker
from ..format.transaction_log_records import TransactionState
from ..groups.transaction_metadata import (COMPLETE_ABORT, COMPLETE_COMMIT, EMPTY,
                                             NO_PRODUCER_EPOCH, NO_PRODUCER_ID, ONGOING,
                                             PREPARE_ABORT, PREPARE_COMMIT, ProducerFenced,
                                             TopicPartition, TransactionMetadata,
                                             is_epoch_exhausted)
from ..storage.clock import wall_clock_ms
from ..storage.producer_append import AppendOrigin, ProducerStateError
from ..storage.producer_state import TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT
from .error_codes import Errors, error_for
from .group_coordinator import GroupCoordinator
from .producer_id_manager import ProducerIdManager
from .replica_manager import OFFSETS_TOPIC, ReplicaManager
from .transaction_state_manager import TransactionStateManager

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TransactionConfig:
    state_log_partitions: int = 50  # transaction.state.log.num.partitions
    max_timeout_ms: int = TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT  # transaction.max.timeout.ms
    abort_interval_ms: int = 10_000  # transaction.abort.timed.out.transaction.cleanup.interval.ms


class TransactionCoordinator:
    def __init__(self, replicas: ReplicaManager, groups: GroupCoordinator,
                 producer_ids: ProducerIdManager,
                 config: TransactionConfig = TransactionConfig()) -> None:
        self.replicas = replicas
        self.groups = groups
        self.producer_ids = producer_ids
        self.config = config
        self.state = TransactionStateManager(replicas, config.state_log_partitions)

    def startup(self) -> None:
        """Load ``__transaction_state`` and finish what a previous run prepared."""
        self.state.load()
        self.producer_ids.skip_past(m.producer_id for m in self.state.transactions.values())
        self.complete_prepared()

    def ensure_topic(self) -> None:
        self.state.ensure_topic()

    def _persist(self, metadata: TransactionMetadata) -> Errors:
        """Append a transition; Kafka's ``appendTransactionToLog`` error mapping."""
        try:
            self.state.append(metadata)
        except Exception as exc:  # noqa: BLE001 - every storage failure becomes an error code
            logger.exception("Writing the state of %s failed", metadata.transactional_id)
            code = error_for(exc)
            if code in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE):
                return Errors.UNKNOWN_SERVER_ERROR
            return Errors.NOT_COORDINATOR
        return Errors.NONE

    # -- InitProducerId -------------------------------------------------------------------------
    def init_producer_id(self, transactional_id: str, timeout_ms: int, expected_id: int = -1,
                         expected_epoch: int = -1) -> tuple[Errors, int, int]:
        """(error, producer id, epoch) for ``handleInitProducerId`` with a transactional id."""
        fail = (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
        if not transactional_id:
            return (Errors.INVALID_REQUEST, *fail)
        if not 0 < timeout_ms <= self.config.max_timeout_ms:
            return (Errors.INVALID_TRANSACTION_TIMEOUT, *fail)
        self.ensure_topic()
        now = wall_clock_ms()
        current = self.state.transactions.get(transactional_id)
        if current is None:
            current = TransactionMetadata(transactional_id, self.producer_ids.next_id(),
                                          NO_PRODUCER_EPOCH, timeout_ms, EMPTY,
                                          last_update_ms=now)
        expected = expected_id != NO_PRODUCER_ID
        if expected and not (current.producer_epoch == NO_PRODUCER_EPOCH
                             or expected_id == current.producer_id
                             or (expected_id == current.previous_producer_id
                                 and is_epoch_exhausted(expected_epoch))):
            return (Errors.PRODUCER_FENCED, *fail)
        if current.state in (PREPARE_COMMIT, PREPARE_ABORT):
            return (Errors.CONCURRENT_TRANSACTIONS, *fail)
        if current.state == ONGOING:
            # fence the producer and abort its transaction; the client retries
            code = self._end(current.prepare_fence_producer_epoch(), commit=False)
            return (Errors.CONCURRENT_TRANSACTIONS if code == Errors.NONE else code, *fail)
        try:
            if current.exhausted and (not expected or expected_epoch == current.producer_epoch):
                nxt = current.prepare_producer_id_rotation(self.producer_ids.next_id(),
                                                           timeout_ms, now, expected)
            else:
                nxt = current.prepare_increment_producer_epoch(
                    timeout_ms, expected_epoch if expected else None, now)
        except ProducerFenced as exc:
            logger.info("%s", exc)
            return (Errors.PRODUCER_FENCED, *fail)
        code = self._persist(nxt)
        if code != Errors.NONE:
            return (code, *fail)
        logger.info("Initialized transactionalId %s with producerId %d and producer epoch %d on "
                    "partition __transaction_state-%d", transactional_id, nxt.producer_id,
                    nxt.producer_epoch, self.state.partition_for(transactional_id))
        return Errors.NONE, nxt.producer_id, nxt.producer_epoch

    # -- AddPartitionsToTxn / AddOffsetsToTxn --------------------------------------------------
    def _check_producer(self, transactional_id: str, producer_id: int, producer_epoch: int
                        ) -> tuple[Errors, TransactionMetadata | None]:
        if not transactional_id:
            return Errors.INVALID_REQUEST, None
        current = self.state.transactions.get(transactional_id)
        if current is None or current.producer_id != producer_id:
            return Errors.INVALID_PRODUCER_ID_MAPPING, None
        if current.producer_epoch != producer_epoch:
            return Errors.PRODUCER_FENCED, None
        return Errors.NONE, current

    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions: frozenset[TopicPartition]) -> Errors:
        """``handleAddPartitionsToTransaction``: the transaction becomes (or stays) Ongoing
        with ``partitions`` added."""
        code, current = self._check_producer(transactional_id, producer_id, producer_epoch)
        if current is None:
            return code
        if current.state in (PREPARE_COMMIT, PREPARE_ABORT):
            return Errors.CONCURRENT_TRANSACTIONS
        if current.state == ONGOING and partitions <= current.partitions:
            return Errors.NONE
        return self._persist(current.prepare_add_partitions(partitions, wall_clock_ms()))

    def add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int,
                    group_id: str) -> Errors:
        """AddOffsetsToTxn: the group's ``__consumer_offsets`` partition joins the
        transaction, so the markers reach the transactional offset commits."""
        if not group_id:
            return Errors.INVALID_GROUP_ID
        index = self.groups.offsets_partition(group_id).index
        return self.add_partitions(transactional_id, producer_id, producer_epoch,
                                   frozenset({(OFFSETS_TOPIC, index)}))

    # -- EndTxn ---------------------------------------------------------------------------------
    def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                        commit: bool) -> Errors:
        """``handleEndTransaction`` from a client (transactions V1: the epoch must match)."""
        code, current = self._check_producer(transactional_id, producer_id, producer_epoch)
        if current is None:
            return code
        state = current.state
        if state == ONGOING:
            return self._end(current, commit)
        if (state, commit) in ((COMPLETE_COMMIT, True), (COMPLETE_ABORT, False)):
            return Errors.NONE  # a retry of a call that succeeded
        if (state, commit) in ((PREPARE_COMMIT, True), (PREPARE_ABORT, False)):
            return Errors.CONCURRENT_TRANSACTIONS
        logger.debug("TransactionalId %s's state is %s, but received transaction marker "
                     "result to send: %s", transactional_id, state,
                     "COMMIT" if commit else "ABORT")
        return Errors.INVALID_TXN_STATE

    def _end(self, current: TransactionMetadata, commit: bool) -> Errors:
        """Write the prepare record, then the markers and the completion."""
        prepared = current.prepare_abort_or_commit(commit, wall_clock_ms())
        code = self._persist(prepared)
        if code == Errors.NONE:
            self._complete(prepared)
        return code

    def _complete(self, prepared: TransactionMetadata) -> bool:
        """Write the markers of a prepared transaction, then its Complete* state; False (to
        be retried) when a write fails."""
        commit = prepared.state == PREPARE_COMMIT
        coordinator_epoch = self.state.coordinator_epoch(prepared.transactional_id)
        stamp = wall_clock_ms()
        for topic, index in sorted(prepared.partitions):
            partition = self.replicas.partition(topic, index)
            if partition is None:
                logger.warning("Dropping the %s marker of %s for %s-%d: no such partition",
                               "COMMIT" if commit else "ABORT", prepared.transactional_id,
                               topic, index)
                continue
            marker = build_end_txn_marker(offset=0, producer_id=prepared.producer_id,
                                          producer_epoch=prepared.producer_epoch,
                                          commit=commit, coordinator_epoch=coordinator_epoch,
                                          timestamp=stamp)
            try:
                self.replicas.append(partition, marker, AppendOrigin.COORDINATOR)
            except ProducerStateError as exc:  # fenced: Kafka gives up on this marker
                logger.warning("The marker for %s was rejected: %s", partition.name, exc)
            except Exception:  # noqa: BLE001 - retried by the periodic task
                logger.exception("Writing the transaction marker to %s failed", partition.name)
                return False
            if topic == OFFSETS_TOPIC:
                self.groups.complete_transaction(prepared.producer_id, index, commit)
        return self._persist(prepared.prepare_complete(wall_clock_ms())) == Errors.NONE

    def complete_prepared(self) -> None:
        """Complete every transaction left in PrepareCommit/PrepareAbort (at start-up, and
        after a marker write failed)."""
        for metadata in list(self.state.transactions.values()):
            if metadata.state in (PREPARE_COMMIT, PREPARE_ABORT):
                logger.info("Completing the %s of transactionalId %s", metadata.state,
                            metadata.transactional_id)
                self._complete(metadata)

    # -- the admin client's view (``TransactionStateManager.listTransactionStates``,
    # ``TransactionCoordinator.handleDescribeTransactions``) -----------------------------------
    def list_transactions(self, state_names: list[str], producer_ids: set[int],
                          duration_ms: int, pattern: str | None, now: int | None = None
                          ) -> tuple[Errors, list[str], list[TransactionMetadata]]:
        """``(error, unknown state names, matching transactions)``: a transaction matches
        every filter given (its state among ``state_names``, its producer id among
        ``producer_ids``, running longer than ``duration_ms`` when that is >= 0, its id
        matching ``pattern`` as a whole); a state name Kafka does not know is returned and
        matches nothing."""
        known = {str(s): s for s in TransactionState}
        unknown = [n for n in state_names if n not in known]
        states = {known[n] for n in state_names if n in known}
        regex = None
        if pattern:
            try:
                regex = re.compile(pattern)
            except re.error:
                return Errors.INVALID_REGULAR_EXPRESSION, unknown, []
        now = wall_clock_ms() if now is None else now
        found = [m for m in self.state.transactions.values()
                 if m.state != TransactionState.Dead
                 and (not producer_ids or m.producer_id in producer_ids)
                 and (not state_names or m.state in states)
                 and (duration_ms < 0 or now - m.start_ms > duration_ms)
                 and (regex is None or regex.fullmatch(m.transactional_id))]
        return Errors.NONE, unknown, found

    def describe_transaction(self, transactional_id: str) -> TransactionMetadata | None:
        return self.state.transactions.get(transactional_id)

    # -- timeouts -------------------------------------------------------------------------------
    def abort_timed_out_transactions(self, now: int | None = None) -> list[str]:
        """Fence and abort each Ongoing transaction older than its timeout; the ids aborted."""
        now = wall_clock_ms() if now is None else now
        aborted = []
        for metadata in list(self.state.transactions.values()):
            if metadata.state == ONGOING and metadata.start_ms + metadata.timeout_ms < now:
                if self._end(metadata.prepare_fence_producer_epoch(), False) == Errors.NONE:
                    logger.info("Completed rollback of ongoing transaction for transactionalId "
                                "%s due to timeout", metadata.transactional_id)
                    aborted.append(metadata.transactional_id)
        return aborted

    def run_periodic_tasks(self) -> None:
        self.abort_timed_out_transactions()
        self.complete_prepared()
