"""Connection time limits: the TLS handshake and the request line and headers.

uvicorn times out neither. Its ``timeout_keep_alive`` runs only between a
response and the first byte of the next request (any byte cancels it), and
not at all before a connection's first request; the body has the app's
``requestTimeoutSeconds``. So a client that completes no TLS handshake, sends
nothing after it, or sends a request line and headers a byte at a time
(slowloris) would hold its connection, and one of the ``limit_concurrency``
slots, for as long as it likes. Here:

- The TLS handshake must complete within ``headerTimeoutSeconds`` (the value
  in force at start-up) of the accept: asyncio's ``ssl_handshake_timeout``,
  which uvicorn does not pass (its default is 60 s), so
  :func:`bound_tls_handshake` adds it to the running loop's ``create_server``.
- A request's line and headers must be in within ``headerTimeoutSeconds`` (the
  value in force when the connection was accepted) of the accept for a
  connection's first request, and of the request's first byte for later ones
  on a keep-alive connection (idle keep-alive time before that first byte is
  uvicorn's ``timeout_keep_alive``).
- A request answered before its body was all received (413, 408) must send the
  rest of its body within the same time of the answer, or the connection is
  closed: otherwise a client could go on trickling a body nobody reads.

On expiry a partial request gets ``408`` with ``Connection: close``; then the
connection is closed, and aborted (no TLS close_notify wait) if the client has
not let it go within :data:`CLOSE_GRACE_SECONDS`. On SIGTERM, idle connections
and those still waiting for headers are closed the same way (aborted after the
grace), so that they do not hold the shutdown up. Each expiry is counted in
``connection_timeouts_total{phase}`` and logged (the handshake at debug level:
TCP probes and scanners end there too).

The protocol is uvicorn's httptools one with these hooks overridden; the
hooks it relies on are checked when this module is imported
(:func:`check_uvicorn`), and the tests drive each limit through a real server.
"""

from __future__ import annotations

import asyncio
import logging
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kubelint_ml.admission.app import Holder
from kubelint_ml.admission.metrics import Metrics

log = logging.getLogger("kubelint_ml.admission")

HEADER_TIMEOUT_SECONDS = 5.0  # admission.headerTimeoutSeconds when the config has none
CLOSE_GRACE_SECONDS = 1.0  # after closing, the client has this long to acknowledge before an abort

# uvicorn's HttpToolsProtocol members this module overrides or uses: if an upgrade renames one,
# serving stops at start-up with this list, rather than the limit silently no longer applying.
UVICORN_HOOKS = (
    "connection_made",
    "connection_lost",
    "data_received",
    "on_message_begin",
    "on_headers_complete",
    "on_message_complete",
    "on_response_complete",
    "shutdown",
)

_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s"
)


def check_uvicorn() -> None:
    missing = [name for name in UVICORN_HOOKS if not callable(getattr(HttpToolsProtocol, name, None))]
    if missing:
        import uvicorn

        raise RuntimeError(
            f"uvicorn {uvicorn.__version__}: HttpToolsProtocol lacks {', '.join(missing)}; "
            "the connection time limits (kubelint_ml/admission/connections.py) need updating"
        )


def header_timeout(holder: Holder) -> float:
    policy = holder.policy
    value = policy.settings.get("headerTimeoutSeconds") if policy is not None else None
    return float(value) if value is not None else HEADER_TIMEOUT_SECONDS


@dataclass
class ConnectionLimits:
    holder: Holder  # the policy in force gives headerTimeoutSeconds for each new connection
    metrics: Metrics
    handshake_seconds: float  # fixed at start-up: asyncio's handshake timeout is set per listener


class TimedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the handshake, header and unread-body time limits."""

    limits: ClassVar[ConnectionLimits]

    @classmethod
    def bind(cls, limits: ConnectionLimits) -> type[TimedHttpToolsProtocol]:
        """The class to pass as ``uvicorn.Config(http=...)``."""
        return typing.cast("type[TimedHttpToolsProtocol]", type(cls.__name__, (cls,), {"limits": limits}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Made when the connection is accepted, before the TLS handshake; connection_made follows it.
        self._accepted = self.loop.time()
        self._seconds = header_timeout(self.limits.holder)
        self._timer: asyncio.TimerHandle | None = None
        self._phase = "tls_handshake"
        self._between_requests = True  # the next byte starts a request
        self._received = 0  # bytes of the current request line and headers
        self._closing: asyncio.TimerHandle | None = None
        self._arm(self.limits.handshake_seconds, "tls_handshake")

    # --- the timer

    def _arm(self, seconds: float, phase: str) -> None:
        if self._closing is not None:  # closed by a limit already: bytes still coming start nothing
            return
        self._disarm()
        self._phase = phase
        self._timer = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        phase = self._phase
        self.limits.metrics.inc("connection_timeouts_total", (("phase", phase),))
        if phase == "tls_handshake":
            # No transport to close yet: asyncio's ssl_handshake_timeout aborts it at the same deadline.
            log.debug(
                "TLS handshake not completed in time",
                extra={"fields": {"timeoutSeconds": self.limits.handshake_seconds}},
            )
            return
        fields: dict[str, Any] = {
            "client": f"{self.client[0]}:{self.client[1]}" if self.client else "",
            "phase": phase,
            "timeoutSeconds": self._seconds,
        }
        if phase == "headers":
            fields["receivedBytes"] = self._received
        log.warning(
            "request headers not received in time; connection closed"
            if phase == "headers"
            else "rest of an answered request's body not received in time; connection closed",
            extra={"fields": fields},
        )
        transport = self.transport
        if transport.is_closing():  # closing already (a 400, a shutdown) but the client holds on: make it final
            transport.abort()
            return
        if phase == "headers" and self._received:
            text = f"request line and headers not received within {self._seconds:g} s\n".encode()
            transport.write(_REQUEST_TIMEOUT % (len(text), text))
        transport.close()
        self._closing = self.loop.call_later(CLOSE_GRACE_SECONDS, transport.abort)

    # --- uvicorn's hooks

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # The handshake is done; the first request's headers have what is left of the time since the accept.
        self._arm(max(0.0, self._accepted + self._seconds - self.loop.time()), "headers")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._closing is not None:
            self._closing.cancel()
            self._closing = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._between_requests:
            if self._timer is None:  # the first byte after an idle keep-alive connection
                self._arm(self._seconds, "headers")
            self._received += len(data)
        super().data_received(data)

    def on_message_begin(self) -> None:
        if self._timer is None or self._phase != "headers":  # a request that began in the middle of a read
            self._arm(self._seconds, "headers")
        self._between_requests = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._disarm()
        self._between_requests = False
        self._received = 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        if self._phase == "unread_body":
            self._disarm()
        self._between_requests = True
        super().on_message_complete()

    def shutdown(self) -> None:
        super().shutdown()
        if self.transport.is_closing() and self._closing is None:
            # Idle, or still waiting for headers: no answer is due, so the TLS close need not wait for the
            # client's close_notify (asyncio waits up to 30 s), nor a stalled client for its limit.
            self._disarm()
            self._closing = self.loop.call_later(CLOSE_GRACE_SECONDS, self.transport.abort)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        cycle = self.cycle  # the last request parsed; a pipelined one may be running now
        answered = cycle is not None and cycle.response_complete
        if answered and not self._between_requests and self._timer is None and not self.transport.is_closing():
            # Answered before its body was all in (413, 408): the rest is due within the limit.
            self._arm(self._seconds, "unread_body")


def bound_tls_handshake(loop: asyncio.AbstractEventLoop, seconds: float) -> None:
    """Make the listeners that uvicorn creates on ``loop`` time out TLS handshakes after ``seconds``.

    ``uvicorn.Server.startup`` calls ``loop.create_server(..., ssl=...)`` without
    ``ssl_handshake_timeout`` (asyncio's default: 60 s); this wraps that one
    method of this one loop. A test checks that a connection sending no
    ClientHello is closed in time.
    """
    create: Callable[..., Any] = loop.create_server

    async def create_server(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("ssl") is not None:
            kwargs.setdefault("ssl_handshake_timeout", seconds)
        return await create(*args, **kwargs)

    loop.create_server = create_server  # type: ignore[method-assign]


check_uvicorn()
