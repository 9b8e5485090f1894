"""``--offsets-decoder``, ``--transaction-log-decoder`` and ``--share-group-state-decoder``:
what kafka-dump-log prints for ``__consumer_offsets``, ``__transaction_state`` and
``__share_group_state`` records.

By default the output is Kafka's coordinator-record JSON (``CoordinatorRecordMessageParser``), as
Kafka 4.4 prints it: key ``{"type":"N","data":{...}}``, value ``{"version":"N","data":{...}}``
or ``<DELETE>``, and one-line reports for unknown record types, unknown value versions and
undecodable records. The offsets decoder has printed this JSON since Kafka 3.8 (KAFKA-16371),
the transaction-log decoder since 4.0 (the Java rewrite of the tool, KAFKA-14579), where 4.4
also names the transaction state (``"transactionStatus":"Ongoing"``, KAFKA-20712; 4.0 to 4.3
print its number); the share-group-state decoder (KIP-932) never printed anything else.

With ``legacy_format`` the offsets and transaction-log parsers print the strings of the
releases before those: Kafka 3.7 for offsets (checked against 3.7.2), the Scala tool of 3.x for
the transaction log (checked against 3.9.1). Where those strings depend on the iteration order of
a Scala hash collection (classic group members, transaction partitions), the order is recomputed
the way Scala 2.13's ``mutable.HashMap``/``HashSet`` lay out their tables.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..errors import CorruptRecordError
from ..format.coordinator_record import (CoordinatorRecord, CoordinatorRecordError,
                                         UnknownRecordTypeError, java_cause, read_body,
                                         read_prefix)
from ..format.group_coordinator_records import (CONSUMER_PROTOCOL_ASSIGNMENT,
                                                CONSUMER_PROTOCOL_SUBSCRIPTION,
                                                OFFSET_COMMIT_VALUE, GroupRecordType,
                                                decode_consumer_protocol, decode_group_record)
from ..format.java_collections import spread
from ..format.message import MessageUnderflowError, to_json_value
from ..format.record import Record
from ..format.share_coordinator_records import decode_share_record
from ..format.transaction_log_records import TransactionState, decode_transaction_record
from ..groups.java_hash_map import topic_partition_hash
from ..groups.offset_commits import TopicPartition
from ..groups.partitioner import java_string_hash
from .record_parsers import DecoderAbortError, ParsedRecord

DELETE = "<DELETE>"
CONSUMER_PROTOCOL_TYPE = "consumer"


def _require_key(record: Record) -> bytes:
    if record.key is None:
        raise DecoderAbortError(f"Failed to decode message at offset {record.offset} using the "
                                f"specified decoder (message had a missing key)")
    return record.key


def _error(record: Record, message: str) -> ParsedRecord:
    return ParsedRecord(f"Error at offset {record.offset}, skipping. {message}")


def _coordinator_json(record: Record, decode: Callable[[bytes, bytes | None], CoordinatorRecord],
                      value_json: Callable[[CoordinatorRecord], Any] | None = None) -> ParsedRecord:
    """Kafka's CoordinatorRecordMessageParser: JSON envelopes, or a one-line report."""
    key = _require_key(record)
    try:
        rec = decode(key, record.value)
    except UnknownRecordTypeError as exc:
        return ParsedRecord(f"Unknown record type {exc.record_type} at offset {record.offset}, "
                            f"skipping.")
    except CoordinatorRecordError as exc:
        return _error(record, exc.kafka_message)
    key_json = {"type": str(rec.record_type), "data": to_json_value(rec.key)}
    if rec.value is None:
        return ParsedRecord(key_json, DELETE)
    data = value_json(rec) if value_json else to_json_value(rec.value)
    return ParsedRecord(key_json, {"version": str(rec.value_version), "data": data})


class _LegacyError(Exception):
    """A failure inside a legacy formatter (Kafka <=3.7 threw; we report it on the key line)."""


# -- __consumer_offsets ------------------------------------------------------------------------

class OffsetsMessageParser:
    """``--offsets-decoder``."""

    def __init__(self, legacy_format: bool = False) -> None:
        self.legacy_format = legacy_format

    def parse(self, record: Record) -> ParsedRecord:
        if self.legacy_format:
            return _legacy(record, _legacy_offsets)
        return _coordinator_json(record, decode_group_record, _group_value_json)


def _group_value_json(rec: CoordinatorRecord) -> Any:
    """Value JSON; classic consumer groups get their subscription/assignment bytes decoded."""
    data = to_json_value(rec.value)
    if (rec.record_type == GroupRecordType.GROUP_METADATA
            and rec.value.get("protocolType") == CONSUMER_PROTOCOL_TYPE):
        for raw, member in zip(rec.value["members"], data["members"]):
            for name, schema in (("subscription", CONSUMER_PROTOCOL_SUBSCRIPTION),
                                 ("assignment", CONSUMER_PROTOCOL_ASSIGNMENT)):
                try:
                    member[name] = to_json_value(
                        decode_consumer_protocol(raw[name], schema, strict=True)[1])
                except CorruptRecordError:
                    pass  # Kafka keeps the base64 of bytes it cannot decode
    return data


def _legacy(record: Record, fmt: Callable[[Record, bytes], ParsedRecord]) -> ParsedRecord:
    key = _require_key(record)
    try:
        return fmt(record, key)
    except (CorruptRecordError, _LegacyError) as exc:
        return _error(record, str(exc) if isinstance(exc, _LegacyError) else exc.message)


def _legacy_offsets(record: Record, key: bytes) -> ParsedRecord:
    record_type = read_prefix(key, "key")
    if record_type not in (0, 1, 2):
        return ParsedRecord(f"unknown::version={record_type}")
    what = "offset" if record_type < 2 else "group metadata"
    version = None
    if record.value is not None:
        version = read_prefix(record.value, "value")
        if not 0 <= version <= 4:
            raise _LegacyError(f"Unknown {what} message version: {version}")
    if record_type < 2:
        # Kafka <= 3.7 read any offset-commit value (v0-v4) whichever key type it came with
        k = decode_group_record(key, None).key
        key_text = f"offset_commit::group={k['group']},partition={k['topic']}-{k['partition']}"
        if record.value is None:
            return ParsedRecord(key_text, DELETE)
        value = read_body(record.value, OFFSET_COMMIT_VALUE, version, "value")
        value_text = f"offset={value['offset']}"
        if value["metadata"]:
            value_text += f",metadata={value['metadata']}"
        return ParsedRecord(key_text, value_text)
    rec = decode_group_record(key, record.value)
    key_text = f"group_metadata::group={rec.key['group']}"
    if rec.value is None:
        return ParsedRecord(key_text, DELETE)
    return ParsedRecord(key_text, _legacy_group_value(rec.value))


def _legacy_group_value(value: dict[str, Any]) -> str:
    protocol_type = value["protocolType"] or ""
    members = {m["memberId"]: m for m in value["members"]}  # a map: the last one wins
    entries = []
    for member_id in _scala_map_order(m["memberId"] for m in value["members"]):
        member = members[member_id]
        if protocol_type == CONSUMER_PROTOCOL_TYPE:
            partitions, user_data = _legacy_assignment(member["assignment"])
            text = f"{member_id}=[{', '.join(partitions)}]"
            if user_data:
                text += f":{_hex(user_data)}"
        else:
            text = f"{member_id}={_hex(member['assignment'])}"
        entries.append(text)
    fields = (("protocolType", protocol_type), ("protocol", value["protocol"]),
              ("generationId", value["generation"]), ("assignment", "{" + ",".join(entries) + "}"))
    return "{" + ",".join(f"{_jackson_str(k)}:{_jackson_value(v)}" for k, v in fields) + "}"


def _legacy_assignment(data: bytes) -> tuple[list[str], bytes | None]:
    """Kafka's ConsumerProtocol.deserializeAssignment, with its error wording."""
    if len(data) < 2:
        raise _LegacyError("Buffer underflow while parsing consumer protocol's header")
    version = read_prefix(data, "assignment")
    if version < 0:
        raise _LegacyError(f"Unsupported assignment version: {version}")
    try:
        _, assignment = decode_consumer_protocol(data, CONSUMER_PROTOCOL_ASSIGNMENT)
    except MessageUnderflowError as exc:
        if exc.what in ("string", "byte array"):
            raise _LegacyError(java_cause(exc)) from exc
        raise _LegacyError("Buffer underflow while parsing consumer protocol's assignment") from exc
    partitions = [f"{tp['topic']}-{p}" for tp in assignment["assignedPartitions"]
                  for p in tp["partitions"]]
    return partitions, assignment["userData"]


def _hex(data: bytes) -> str:
    """Scala's ``"%X".format(BigInt(1, bytes))``: no leading zeros, ``""`` for no bytes."""
    return format(int.from_bytes(data, "big"), "X") if data else ""


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
                 "\r": "\\r"}


def _jackson_str(s: str) -> str:
    """A JSON string as Jackson writes it (upper-case hex for other control characters)."""
    return '"' + "".join(_JSON_ESCAPES.get(c) or (f"\\u{ord(c):04X}" if c < " " else c)
                         for c in s) + '"'


def _jackson_value(v: Any) -> str:
    if v is None:
        return "null"
    return _jackson_str(v) if isinstance(v, str) else str(v)


# -- __transaction_state -------------------------------------------------------------------------

class TransactionLogMessageParser:
    """``--transaction-log-decoder``."""

    def __init__(self, legacy_format: bool = False) -> None:
        self.legacy_format = legacy_format

    def parse(self, record: Record) -> ParsedRecord:
        if self.legacy_format:
            return _legacy(record, _legacy_transaction)
        return _coordinator_json(record, decode_transaction_record, _transaction_value_json)


def _transaction_value_json(rec: CoordinatorRecord) -> Any:
    """Value JSON with the state's name, as Kafka 4.4's tool replaces the status id
    (``TransactionState.fromId(id).stateName()``, or the id as a string if none has it)."""
    data = to_json_value(rec.value)
    status = rec.value["transactionStatus"]
    try:
        data["transactionStatus"] = str(TransactionState(status))
    except ValueError:
        data["transactionStatus"] = str(status)
    return data


_TRANSACTION_VERSIONS = (0, 1, 2)  # the transaction.version feature levels Kafka 4.0 defines


def _legacy_transaction(record: Record, key: bytes) -> ParsedRecord:
    record_type = read_prefix(key, "key")
    if record_type != 0:
        return ParsedRecord(f"unknown::version={record_type}")
    if record.value is not None:
        version = read_prefix(record.value, "value")
        if not 0 <= version <= 1:
            raise _LegacyError(f"Unknown version {version} from the transaction log message value")
    rec = decode_transaction_record(key, record.value)
    key_text = f"transaction_metadata::transactionalId={rec.transactional_id}"
    if rec.value is None:
        return ParsedRecord(key_text, DELETE)
    v = rec.value
    state = rec.state
    if state is None:
        raise _LegacyError(f"Unknown transaction state id {v['transactionStatus']} from the "
                           f"transaction status message")
    level = v.get("clientTransactionVersion", 0)
    if level not in _TRANSACTION_VERSIONS:
        raise _LegacyError(f"No feature:transaction.version with feature level {level}")
    groups = []
    if state is not TransactionState.Empty:
        groups = [[(p["topic"], pid) for pid in p["partitionIds"]]
                  for p in v["transactionPartitions"] or ()]
    partitions = ",".join(f"{t}-{p}" for t, p in _scala_set_order(groups))
    return ParsedRecord(key_text, (
        f"producerId:{v['producerId']},producerEpoch:{v['producerEpoch']},state={state},"
        f"partitions=[{partitions}],txnLastUpdateTimestamp={v['transactionLastUpdateTimestampMs']},"
        f"txnTimeoutMs={v['transactionTimeoutMs']}"))


# -- __share_group_state ------------------------------------------------------------------------

class ShareGroupStateMessageParser:
    """``--share-group-state-decoder``: the share coordinator's snapshots and updates."""

    def parse(self, record: Record) -> ParsedRecord:
        return _coordinator_json(record, decode_share_record)


# -- Scala 2.13 hash-table iteration order -----------------------------------------------------

def _table_order(items: Iterable[Any], hashes: dict[Any, int], size: int) -> list[Any]:
    """Iteration order of a table of ``size`` buckets whose lists are sorted by hash."""
    order = {item: i for i, item in enumerate(items)}
    return sorted(order, key=lambda it: (hashes[it] & (size - 1), hashes[it], order[it]))


def _scala_map_order(keys: Iterable[str]) -> list[str]:
    """Key order of a ``mutable.HashMap[String, _]`` filled by one ``put`` per key."""
    size, seen, hashes = 16, [], {}
    for k in keys:
        if len(hashes) + 1 >= int(size * 0.75):
            size *= 2
        if k not in hashes:
            hashes[k] = spread(java_string_hash(k))
            seen.append(k)
    return _table_order(seen, hashes, size)


def _table_size_for(capacity: int) -> int:
    n = max(capacity - 1, 4)
    return min((1 << (n.bit_length() - 1)) * 2, 1 << 30)


def _scala_set_order(groups: list[list[tuple[str, int]]]) -> list[tuple[str, int]]:
    """Element order of a ``mutable.HashSet[TopicPartition]`` filled by one ``++=`` of an
    immutable set per group (TransactionMetadata.addPartitions)."""
    size, seen, hashes = 16, [], {}
    for group in groups:
        unique = list(dict.fromkeys(group))
        size = max(size, _table_size_for(int((len(unique) + 1) / 0.75)))  # sizeHint
        for tp in unique:
            if len(unique) <= 4 and len(hashes) + 1 >= int(size * 0.75):
                size *= 2  # Set1..Set4 are added one by one, with add()'s growth check
            if tp not in hashes:
                hashes[tp] = spread(topic_partition_hash(TopicPartition(*tp)))
                seen.append(tp)
    return _table_order(seen, hashes, size)
