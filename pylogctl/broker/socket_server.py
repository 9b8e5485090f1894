"""The network layer (Kafka's ``SocketServer``): accept connections, read size-prefixed
request frames, hand each to :class:`~pylogctl.broker.kafka_apis.KafkaApis`, write the
response.

One coroutine per connection reads a frame, awaits its handler, writes the response, then
reads the next: requests of a connection are answered strictly in order, one at a time, which
is what Kafka's muting of a connection while a request is inside the broker guarantees (a
pipelining client's later frames wait in the socket). Other connections are served while a
handler waits (a delayed fetch, a rebalance).

Frames larger than ``socket.request.max.bytes`` (or with a negative size), a request header
that does not parse, an API or version not supported (except ApiVersions, answered with the
KIP-511 fallback) and a body that does not parse close the connection, as Kafka does; the
broker keeps serving every other connection. Fetched records are sent from the segment files
with ``sendfile``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from typing import Any

from .broker_config import DEFAULT_MAX_REQUEST_BYTES
from .kafka_apis import KafkaApis, api_versions_list, close_response_regions
from .protocol import (API_VERSIONS_KEY, Connection, FileRegion, InvalidRequestError, Response,
                       decode_request, encode_api_versions_fallback, encode_response,
                       peek_header)

logger = logging.getLogger(__name__)



class SocketServer:
    def __init__(self, apis: KafkaApis, host: str, port: int,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> None:
        self.apis = apis
        self.host = host
        self.port = port
        self.max_request_bytes = max_request_bytes
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()

    async def start(self) -> int:
        """Listen; returns the bound port (useful with port 0)."""
        self._server = await asyncio.start_server(self._serve, self.host, self.port,
                                                  reuse_address=True, limit=1 << 20)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        peer = writer.get_extra_info("peername") or ("unknown", 0)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = Connection(f"/{peer[0]}")
        try:
            while True:
                size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
                if size < 0 or size > self.max_request_bytes:
                    logger.warning("Closing %s: request size %d is outside [0, %d] "
                                   "(socket.request.max.bytes)", peer, size,
                                   self.max_request_bytes)
                    return
                frame = await reader.readexactly(size)
                response = await self._process(frame, connection)
                if response is not None:
                    await self._send(writer, response)
        except InvalidRequestError as exc:
            logger.info("Closing connection from %s: %s", peer, exc)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        except Exception:  # noqa: BLE001 - a bug in a handler must not stop the broker
            logger.exception("Unexpected error on the connection from %s; closing it", peer)
        finally:
            self._connections.discard(task)
            writer.close()

    async def _process(self, frame: bytes, connection: Connection) -> Response | None:
        api_key, version, correlation_id = peek_header(frame)
        if not self.apis.supports(api_key, version):
            if api_key == API_VERSIONS_KEY and version > 0:
                return encode_api_versions_fallback(correlation_id, api_versions_list())
            raise InvalidRequestError(f"Unsupported API key {api_key} version {version}")
        request = decode_request(frame)
        data = await self.apis.handle(request, connection)
        if data is None:
            return None
        try:
            return encode_response(request.header, data)
        except BaseException:
            close_response_regions(_regions(data))
            raise

    async def _send(self, writer: asyncio.StreamWriter, response: Response) -> None:
        loop = asyncio.get_running_loop()
        try:
            for part in response:
                if isinstance(part, FileRegion):
                    await writer.drain()
                    with os.fdopen(part.fileno, "rb", buffering=0, closefd=False) as f:
                        await loop.sendfile(writer.transport, f, part.position, part.size)
                else:
                    writer.write(part)
            await writer.drain()
        finally:
            close_response_regions(response.parts)


def _regions(data: Any) -> list[FileRegion]:
    """The file regions inside response data (to close them when encoding fails)."""
    found: list[FileRegion] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, FileRegion):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found
