"""The webhook as a minimal ASGI application.

Routes: ``POST /validate`` (AdmissionReview ``admission.k8s.io/v1``),
``GET /healthz`` (the process answers), ``GET /readyz`` (a policy is loaded
and the server is not shutting down), ``GET /metrics`` (Prometheus text).

Limits: a body larger than ``maxBodyBytes`` is refused with 413 (from its
Content-Length, before reading, or as soon as it passes the limit); a body
not received within ``requestTimeoutSeconds`` gets 408; a review that takes
longer than that, or cannot start for want of memory, gets the ``onTimeout``
answer: denied with the reason (the default), or allowed with a warning.

Memory: every request reserves what its review may take (its body's size times
:data:`BYTES_PER_BODY_BYTE`, measured) from a budget set by the memory the
process may use (the cgroup's limit, or ``memoryLimitBytes``); a request that
does not fit waits for others to finish, within its time limit.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from kubelint_ml.admission.metrics import Metrics
from kubelint_ml.admission.review import (
    Policy,
    ReviewError,
    TooDeep,
    Verdict,
    envelope,
    nested_too_deep,
    parse_review,
    review,
    verdict_of,
)

log = logging.getLogger("kubelint_ml.admission")

# What a review holds at its peak, per byte of its body (measured on Pods of 1,000 to 18,000
# containers: 40 to 60 times the JSON's size: the decoded object, its positions, the views and
# findings), with room; and what a request holds before its review.
BYTES_PER_BODY_BYTE = 80
BASE_REQUEST_BYTES = 256 * 1024
# Of the memory limit, what reviews in flight may use: the rest is the process itself (about
# 60 MiB with the rules loaded), the allocator's slack and the TLS buffers.
BUDGET_SHARE = 0.6
DEFAULT_MEMORY_BYTES = 1024 * 1024 * 1024  # no cgroup limit and no setting


def memory_limit(configured: int | None = None, proc: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> int:
    """The memory this process may use: the setting, else the smallest limit of its cgroup and the
    cgroups above it (v2 ``memory.max``, v1 ``memory.limit_in_bytes``; the cgroup named in
    ``/proc/self/cgroup``, so a limit set by systemd's ``MemoryMax`` or on a parent slice counts, as
    does a container runtime's at the root of its namespace), else 1 GiB."""
    if configured:
        return int(configured)
    found = [n for n in (_cgroup_limit(proc, root, v2) for v2 in (True, False)) if n is not None]
    return min(found) if found else DEFAULT_MEMORY_BYTES


def _cgroup_limit(proc: str, root: str, v2: bool) -> int | None:
    """The smallest memory limit from this process's cgroup up to the hierarchy's root."""
    base, name = (root, "memory.max") if v2 else (os.path.join(root, "memory"), "memory.limit_in_bytes")
    where = "/"
    try:
        with open(proc, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                ident, _, rest = line.rstrip("\n").partition(":")
                controllers, _, path = rest.partition(":")
                if (v2 and ident == "0" and controllers == "") or (not v2 and "memory" in controllers.split(",")):
                    where = path or "/"
                    break
    except OSError:
        pass
    limits = []
    parts = [p for p in where.split("/") if p and p not in (".", "..")]
    for depth in range(len(parts), -1, -1):
        try:
            with open(os.path.join(base, *parts[:depth], name), encoding="ascii", errors="replace") as fh:
                text = fh.read().strip()
        except OSError:
            continue  # not mounted in this view (a container's own namespace), or no limit file at the root
        if text.isdigit() and 0 < int(text) < 1 << 50:  # v2 says "max"; v1 "no limit" with a huge number
            limits.append(int(text))
    return min(limits) if limits else None


class Budget:
    """Bytes of review work in flight: a request takes its share before its body is read, and gives
    it back when answered; what does not fit waits, for at most its time limit."""

    def __init__(self, total: int) -> None:
        self.total = max(total, BASE_REQUEST_BYTES)
        self.used = 0
        self._changed = asyncio.Event()

    async def take(self, amount: int, timeout: float) -> bool:
        amount = min(amount, self.total)  # one request alone always fits: it is answered, never starved
        deadline = time.perf_counter() + timeout
        while self.used + amount > self.total:
            left = deadline - time.perf_counter()
            if left <= 0:
                return False
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except asyncio.TimeoutError:
                return False
        self.used += amount
        return True

    def give(self, amount: int) -> None:
        self.used -= min(amount, self.total)
        self._changed.set()


Scope = dict
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]

# Bodies up to this size are judged on the event loop (about a millisecond); larger
# ones (and every review under Rego policies) in a thread, so that the time limit can answer for them
# and the loop goes on serving others. Every object of the corpus is under 7 KiB (an UPDATE carries
# it twice); the costliest shapes take up to 0.1 s at 16 KiB (a DynamoGraphDeployment of 215
# services, measured on 2 busy cores), where at 256 KiB they held the loop for seconds.
INLINE_BODY_BYTES = 16 * 1024
# After a review of a body over this size, freed heap goes back to the system (trim_heap).
LARGE_BODY_BYTES = 256 * 1024
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
        self._memory: tuple[int, Budget] | None = None

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
        budget = self._budget(settings)
        need = BASE_REQUEST_BYTES + BYTES_PER_BODY_BYTE * min(_content_length(scope, limit), limit)
        if not await budget.take(need, timeout):
            self._count("busy", start)
            log.warning("no memory for the review in time", extra={"fields": {"needBytes": need}})
            await self._timed_out(send, scope, receive, policy, f"no memory free for its review within {timeout:g} s")
            return
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
            except TooDeep as e:
                # The API server decodes 10,000 levels: a review it sent is answered, as `check` answers
                # such a file (a parse-error), not refused (which failurePolicy: Ignore admits).
                uid = _uid(body)
                if uid is None:
                    self._count("invalid", start)
                    await _reply(send, 400, {"error": str(e)})
                    return
                verdict = verdict_of(policy, {"uid": uid}, [nested_too_deep(policy)], [])
                self._count("allowed" if verdict.allowed else "denied", start, verdict, policy)
                self._log(verdict, start, policy)
                await _reply(send, 200, envelope(verdict.response))
                return
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
                    deadline = time.perf_counter() + left
                    work = asyncio.ensure_future(asyncio.to_thread(_review_until, policy, request, deadline))
                    try:
                        found = await asyncio.wait_for(asyncio.shield(work), left)
                        if found is None:  # its time was up before it started
                            raise asyncio.TimeoutError()
                        verdict = found
                    except asyncio.TimeoutError:
                        # The thread runs on and holds its memory: the budget is given back when it ends.
                        held = need

                        def release(_: object) -> None:
                            budget.give(held)

                        work.add_done_callback(release)
                        need = 0
                        raise
            except asyncio.TimeoutError:
                verdict = _timeout_verdict(request, policy, f"review took longer than {timeout:g} s; not judged")
                self._count("timeout", start)
                self._log(verdict, start, policy, level=logging.WARNING)
                await _reply(send, 200, envelope(verdict.response))
                return
            except Exception as e:  # a bug must not take the webhook down, nor admit what it could not judge
                log.exception("review failed", extra={"fields": {"uid": request.get("uid")}})
                verdict = _timeout_verdict(
                    request,
                    policy,
                    f"review failed ({type(e).__name__}); not judged",
                    "the webhook's log has the error",
                )
                self._count("error", start)
                await _reply(send, 200, envelope(verdict.response))
                return
            result = "excluded" if verdict.excluded else ("allowed" if verdict.allowed else "denied")
            self._count(result, start, verdict, policy)
            self._log(verdict, start, policy)
            await _reply(send, 200, envelope(verdict.response))
        finally:
            self.metrics.add("in_flight_reviews", -1)
            budget.give(need)
            if need > BASE_REQUEST_BYTES + BYTES_PER_BODY_BYTE * LARGE_BODY_BYTES and budget.used == 0:
                trim_heap()  # a large review's memory back to the system once nothing else is in flight

    def _budget(self, settings: dict) -> Budget:
        limit = memory_limit(settings.get("memoryLimitBytes"))
        if self._memory is None or self._memory[0] != limit:
            self._memory = (limit, Budget(int(limit * BUDGET_SHARE)))
        return self._memory[1]

    async def _timed_out(self, send: Send, scope: Scope, receive: Receive, policy: Policy, why: str) -> None:
        """The onTimeout answer to a request whose review could not start. The answer needs the
        request's uid: the body is read (bytes only, never decoded whole: the API server writes
        ``request.uid`` first), so that a busy server still denies instead of failing the call,
        which ``failurePolicy: Ignore`` would turn into an admission."""
        try:
            body = await asyncio.wait_for(_read_body(scope, receive, policy.settings["maxBodyBytes"]), 2.0)
        except (TooLarge, asyncio.TimeoutError):
            await _reply(send, 429, {"error": f"kubelint-ml: {why}"})
            return
        uid = _uid(body)
        if uid is None:
            await _reply(send, 400, {"error": "not an AdmissionReview with a request.uid"})
            return
        verdict = _timeout_verdict({"uid": uid}, policy, why)
        self._log(verdict, time.perf_counter(), policy, level=logging.WARNING)
        await _reply(send, 200, envelope(verdict.response))

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


def _review_until(policy: Policy, request: dict, deadline: float) -> Verdict | None:
    """The review in a worker thread; ``None`` (not judged) when it starts past its deadline: the
    request was answered for its time limit while it waited for a thread, and the work is not done
    for nothing (a backlog of such reviews kept the threads from the ones still waiting)."""
    if time.perf_counter() >= deadline:
        return None
    return review(policy, request, deadline)


def _object_name(req: dict) -> str:
    obj = req.get("object")
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(meta, dict):
        return str(meta.get("name") or meta.get("generateName") or "")
    return ""


def trim_heap() -> None:
    """Return freed heap to the system (glibc keeps it otherwise: 220 MiB after eight 1.5 MB reviews).

    The large reviews' cyclic garbage (templates and their containers refer to their object) is
    collected first: with the collector's thresholds raised for serving (review.GC_THRESHOLDS) it
    could otherwise wait in the oldest generation."""
    global _LIBC
    gc.collect()
    try:
        if _LIBC is None:
            import ctypes

            _LIBC = ctypes.CDLL("libc.so.6")
        _LIBC.malloc_trim(0)
    except (OSError, AttributeError):
        _LIBC = False


_LIBC: Any = None


def _timeout_verdict(
    request: dict, policy: Policy, why: str, advice: str = "retry, or make the object smaller"
) -> Verdict:
    """The ``onTimeout`` answer to a review that could not judge its object: denied with the reason
    (enforce mode), or allowed with a warning."""
    if policy.settings.get("onTimeout", "deny") == "deny" and policy.mode == "enforce":
        uid = request["uid"]
        message = f"kubelint-ml: {why}; denied (admission.onTimeout: deny): {advice}"
        return Verdict(
            uid,
            False,
            {"uid": uid, "allowed": False, "status": {"code": 403, "message": message}},
            excluded=why,
            request=request,
        )
    return _not_judged(request, why)


_UID = re.compile(rb'"request"\s*:\s*\{\s*"uid"\s*:\s*"([A-Za-z0-9._:-]{1,128})"')


def _uid(body: bytes) -> str | None:
    """``request.uid`` of an AdmissionReview without decoding it: the API server writes it first."""
    found = _UID.search(body[:65536])
    if found:
        return found.group(1).decode()
    if len(body) <= LARGE_BODY_BYTES:
        try:
            return str(parse_review(body)["uid"])
        except (ReviewError, KeyError):
            return None
    return None


def _content_length(scope: Scope, limit: int) -> int:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return max(0, int(value))
            except ValueError:
                return limit
    return limit  # chunked: as much as may come


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
