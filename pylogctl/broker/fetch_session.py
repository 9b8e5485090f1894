"""Incremental fetch sessions (KIP-227; Kafka's ``FetchManager``, ``FetchSession`` and
``FetchSessionCache``), so a consumer of many partitions need not name them all in every
Fetch, nor get all of them back.

A Fetch (v7+) carries a session id and epoch:

- epoch 0, a full fetch: the partitions named are read; a session id given is closed, and a
  new session is created holding the partitions and what was answered for each (its id goes
  back in the response; 0 when the cache is full and nothing can be evicted).
- epoch -1: a full fetch without a session (a session id given is closed).
- epoch > 0, incremental: the session must exist (else FETCH_SESSION_ID_NOT_FOUND) at that
  epoch (else INVALID_FETCH_SESSION_EPOCH); the partitions named are added or their fetch
  parameters updated, the forgotten ones removed, the epoch moves on, and every partition of
  the session is read, but the answer holds only those with records, an error, or a high
  watermark or log start offset other than the one last sent. Those answered move to the end
  of the session, so the partitions take turns at the response size limit. A session left
  with no partition is closed and the fetch answered without one.

The cache holds ``max.incremental.fetch.session.cache.slots`` (1000) sessions; when it is full,
a session unused for ``EVICTION_MS`` is evicted, else one created that long ago and holding
fewer partitions than the new one, else the new one gets none.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..format.varint import INT32_MAX

from .error_codes import Errors

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
INVALID_HIGH_WATERMARK = -1
MAX_SESSIONS = 1000  # max.incremental.fetch.session.cache.slots
EVICTION_MS = 120_000  # FetchSessionCache's eviction age

Key = tuple[str, int]  # (topic, partition)


@dataclass
class PartitionFetch:
    """What a fetch asks of one partition (the request's fields the reads use)."""

    partition: int
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    log_start_offset: int = -1

    @classmethod
    def of(cls, p: Any) -> "PartitionFetch":
        return cls(p.partition, p.fetch_offset, p.partition_max_bytes,
                   getattr(p, "current_leader_epoch", -1), getattr(p, "log_start_offset", -1))


@dataclass
class CachedPartition:
    """A partition of a session: its fetch parameters and what the last answer told."""

    request: PartitionFetch
    high_watermark: int = INVALID_HIGH_WATERMARK
    log_start_offset: int = -1

    def must_respond(self, result: dict[str, Any]) -> bool:
        """``CachedPartition.maybeUpdateResponseData`` (updating what was last told)."""
        respond = _records_size(result) > 0
        if self.high_watermark != result["high_watermark"]:
            respond, self.high_watermark = True, result["high_watermark"]
        if self.log_start_offset != result["log_start_offset"]:
            respond, self.log_start_offset = True, result["log_start_offset"]
        if result.get("preferred_read_replica", -1) >= 0:
            respond = True
        if result["error_code"] != Errors.NONE:
            respond, self.high_watermark = True, INVALID_HIGH_WATERMARK
        return respond


@dataclass
class FetchSession:
    id: int
    epoch: int  # the epoch the next incremental fetch must carry
    partitions: dict[Key, CachedPartition]  # in session order
    created_ms: int
    last_used_ms: int


@dataclass
class FetchContext:
    """How to answer one Fetch: the partitions to read, in order, and the session (if any)."""

    partitions: list[tuple[Key, PartitionFetch]]
    session: FetchSession | None = None  # an incremental fetch's session
    create_session: bool = False  # a full fetch: create one from the answer
    error: Errors = Errors.NONE


@dataclass
class FetchSessionCache:
    max_sessions: int = MAX_SESSIONS
    eviction_ms: int = EVICTION_MS
    sessions: dict[int, FetchSession] = field(default_factory=dict)

    def new_context(self, session_id: int, epoch: int, wanted: list[tuple[Key, Any]],
                    forgotten: list[Key]) -> FetchContext:
        """``FetchManager.newContext``: ``wanted`` are the request's partitions."""
        asked = [(key, PartitionFetch.of(p)) for key, p in wanted]
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            self.sessions.pop(session_id, None)
            return FetchContext(asked, create_session=epoch == INITIAL_EPOCH)
        session = self.sessions.get(session_id)
        if session is None:
            return FetchContext([], error=Errors.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext([], error=Errors.INVALID_FETCH_SESSION_EPOCH)
        for key, request in asked:
            cached = session.partitions.get(key)
            if cached is None:
                session.partitions[key] = CachedPartition(request)
            else:
                cached.request = request
        for key in forgotten:
            session.partitions.pop(key, None)
        if not session.partitions:
            del self.sessions[session.id]
            return FetchContext(asked)
        session.epoch = _next_epoch(session.epoch)
        return FetchContext([(k, c.request) for k, c in session.partitions.items()], session)

    def respond(self, context: FetchContext, results: list[tuple[Key, dict[str, Any]]],
                now_ms: int) -> tuple[int, list[tuple[Key, dict[str, Any]]]]:
        """The session id to answer with and the partitions to answer: all of a full fetch
        (creating its session), those that changed of an incremental one."""
        session = context.session
        if session is not None:
            session.last_used_ms = now_ms
            answered = []
            for key, result in results:
                cached = session.partitions[key]
                if cached.must_respond(result):
                    answered.append((key, result))
                    del session.partitions[key]  # to the end: the partitions take turns
                    session.partitions[key] = cached
            return session.id, answered
        if not context.create_session or not self._make_room(len(results), now_ms):
            return 0, results
        requests = dict(context.partitions)
        session = FetchSession(self._new_id(), _next_epoch(INITIAL_EPOCH), {
            key: CachedPartition(requests[key], result["high_watermark"],
                                 result["log_start_offset"]) for key, result in results},
            now_ms, now_ms)
        self.sessions[session.id] = session
        return session.id, results

    def _make_room(self, size: int, now_ms: int) -> bool:
        if len(self.sessions) < self.max_sessions:
            return True
        stale = min(self.sessions.values(), key=lambda s: s.last_used_ms)
        if now_ms - stale.last_used_ms > self.eviction_ms:
            del self.sessions[stale.id]
            return True
        old = [s for s in self.sessions.values() if now_ms - s.created_ms > self.eviction_ms]
        if old:
            smallest = min(old, key=lambda s: (len(s.partitions), s.id))
            if size > len(smallest.partitions):
                del self.sessions[smallest.id]
                return True
        return False

    def _new_id(self) -> int:
        while True:
            session_id = random.randint(1, INT32_MAX)
            if session_id not in self.sessions:
                return session_id


def _next_epoch(epoch: int) -> int:
    """``FetchMetadata.nextEpoch``: 1 after the initial epoch, wrapping to 1 after MAX_INT."""
    return 1 if epoch in (INITIAL_EPOCH, INT32_MAX) else epoch + 1


def _records_size(result: dict[str, Any]) -> int:
    records = result.get("records")
    return len(records) if records is not None else 0
