"""The webhook as a minimal ASGI application.

Routes: ``POST /validate`` (AdmissionReview ``admission.k8s.io/v1``),
``GET /healthz`` (the process answers), ``GET /readyz`` (a policy is loaded
and the server is not shutting down), ``GET /metrics`` (Prometheus text).

Limits: a body larger than ``maxBodyBytes`` is refused with 413 (from its
Content-Length, before reading, or as soon as it passes the limit); a body
not received within ``requestTimeoutSeconds`` gets 408; a review that takes
longer than that is answered ``allowed`` with a warning, as the webhook's
``failurePolicy: Ignore`` would.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from kubelint_ml.admission.metrics import Metrics
from kubelint_ml.admission.review import Policy, ReviewError, Verdict, envelope, parse_review, review

log = logging.getLogger("kubelint_ml.admission")

Scope = dict
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]

# Bodies up to this size are judged on the event loop (about a millisecond); larger
# ones (and every review under Rego policies) in a thread, so that the time limit can answer for them.
INLINE_BODY_BYTES = 256 * 1024
_JSON = [(b"content-type", b"application/json")]


class Holder:
    """The policy in force; replaced whole on reload (readers take one reference per request)."""

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy = policy
        self.shutting_down = False


class TooLarge(Exception):
    pass


class WebhookApp:
    def __init__(self, holder: Holder, metrics: Metrics) -> None:
        self.holder = holder
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            return
        path = scope.get("path", "")
        method = scope.get("method", "GET")
        if path == "/validate":
            if method != "POST":
                await _reply(send, 405, {"error": "use POST"})
                return
            await self._validate(scope, receive, send)
        elif path == "/healthz":
            await _reply(send, 200, b"ok\n", text=True)
        elif path == "/readyz":
            ready = self.holder.policy is not None and not self.holder.shutting_down
            await _reply(send, 200 if ready else 503, b"ok\n" if ready else b"not ready\n", text=True)
        elif path == "/metrics":
            body = self.metrics.render().encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/plain; version=0.0.4; charset=utf-8"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
        else:
            await _reply(send, 404, {"error": "not found"})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.holder.shutting_down = True
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _validate(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = time.perf_counter()
        policy = self.holder.policy
        if policy is None:  # cannot happen once serving: the server starts with a policy
            await _reply(send, 503, {"error": "no policy loaded"})
            return
        settings = policy.settings
        limit = settings["maxBodyBytes"]
        timeout = float(settings["requestTimeoutSeconds"])
        self.metrics.add("in_flight_reviews", 1)
        try:
            try:
                body = await asyncio.wait_for(_read_body(scope, receive, limit), timeout)
            except TooLarge:
                self._count("too_large", start)
                log.warning("request body too large", extra={"fields": {"limit": limit}})
                await _reply(send, 413, {"error": f"request body over {limit} bytes"})
                return
            except asyncio.TimeoutError:
                self._count("timeout", start)
                log.warning("request body not received in time", extra={"fields": {"timeoutSeconds": timeout}})
                await _reply(send, 408, {"error": f"request body not received within {timeout:g} s"})
                return
            try:
                request = parse_review(body)
            except ReviewError as e:
                self._count("invalid", start)
                log.warning("invalid AdmissionReview", extra={"fields": {"error": str(e)}})
                await _reply(send, 400, {"error": str(e)})
                return
            try:
                # Rego and Gatekeeper policies run in a helper process, bounded in time: a review
                # that waits for them waits in a thread, so the time limit can answer for it.
                if len(body) <= INLINE_BODY_BYTES and policy.policies is None:
                    verdict = review(policy, request)
                else:
                    left = max(0.05, timeout - (time.perf_counter() - start))
                    verdict = await asyncio.wait_for(asyncio.to_thread(review, policy, request), left)
            except asyncio.TimeoutError:
                verdict = _not_judged(request, f"review took longer than {timeout:g} s; not judged")
                self._count("timeout", start)
                self._log(verdict, start, policy, level=logging.WARNING)
                await _reply(send, 200, envelope(verdict.response))
                return
            except Exception as e:  # a bug must not take the webhook down; the API server decides
                log.exception("review failed", extra={"fields": {"uid": request.get("uid")}})
                self._count("error", start)
                await _reply(send, 500, {"error": f"review failed: {type(e).__name__}"})
                return
            result = "excluded" if verdict.excluded else ("allowed" if verdict.allowed else "denied")
            self._count(result, start, verdict, policy)
            self._log(verdict, start, policy)
            await _reply(send, 200, envelope(verdict.response))
        finally:
            self.metrics.add("in_flight_reviews", -1)

    def _count(self, result: str, start: float, verdict: Verdict | None = None, policy: Policy | None = None) -> None:
        m = self.metrics
        m.inc("requests_total", (("result", result),))
        m.observe(time.perf_counter() - start)
        if verdict is None or policy is None:
            return
        if verdict.would_deny:
            m.inc("denials_total", (("mode", policy.mode),))
        for f in verdict.findings:
            m.inc("findings_total", (("rule", f.rule), ("severity", f.severity)))

    def _log(self, verdict: Verdict, start: float, policy: Policy, level: int = logging.INFO) -> None:
        req = verdict.request
        found = req.get("kind")
        kind: dict = found if isinstance(found, dict) else {}
        fields: dict[str, Any] = {
            "uid": verdict.uid,
            "operation": req.get("operation"),
            "kind": f"{kind.get('group') or 'core'}/{kind.get('version', '')}/{kind.get('kind', '')}",
            "namespace": req.get("namespace") or "",
            "name": req.get("name") or _object_name(req),
            "dryRun": bool(req.get("dryRun")),
            "mode": policy.mode,
            "allowed": verdict.allowed,
            "ms": round((time.perf_counter() - start) * 1000, 3),
        }
        if verdict.excluded:
            fields["excluded"] = verdict.excluded
        if verdict.findings:
            fields["findings"] = [
                {"rule": f.rule, "severity": f.severity, "path": f.path, "message": f.message} for f in verdict.findings
            ]
        if verdict.notes:
            fields["skipped"] = sorted(set(verdict.notes))
        message = "denied" if not verdict.allowed else ("would deny (audit mode)" if verdict.would_deny else "allowed")
        log.log(level, message, extra={"fields": fields})


def _object_name(req: dict) -> str:
    obj = req.get("object")
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(meta, dict):
        return str(meta.get("name") or meta.get("generateName") or "")
    return ""


def _not_judged(request: dict, why: str) -> Verdict:
    uid = request["uid"]
    return Verdict(
        uid, True, {"uid": uid, "allowed": True, "warnings": [f"kubelint-ml: {why}"]}, excluded=why, request=request
    )


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                if int(value) > limit:
                    raise TooLarge()
            except ValueError:
                pass
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise TooLarge()
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _reply(send: Send, status: int, payload: Any, text: bool = False) -> None:
    if text:
        body = payload
        headers = [(b"content-type", b"text/plain; charset=utf-8")]
    else:
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = list(_JSON)
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
