"""``kubelint-ml serve``: the webhook over HTTPS with uvicorn.

One process, one event loop (see README "Admission webhook" for the
measurements behind uvicorn). Around the ASGI app this module adds:

- JSON logs: one object per line on stderr, uvicorn's own messages included.
- Reloads: every ``reload_interval`` seconds the config file, the custom rule
  files it names, the profile's kubelet configs, and the TLS certificate and
  key are checked for changes (mtime, size, inode: a Secret or ConfigMap
  volume's symlink swap counts). A changed config is loaded beside the one in
  force and swapped in whole; one that does not load is logged and counted,
  and the last good one stays. A changed certificate is loaded into the
  listening TLS context, for the next handshakes.
- Shutdown: on SIGTERM or SIGINT uvicorn stops accepting connections,
  finishes the requests in flight (up to ``graceful_seconds``) and exits 0.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any

from kubelint_ml.admission.app import Holder, WebhookApp, trim_heap
from kubelint_ml.admission.metrics import Metrics
from kubelint_ml.admission.review import Policy, PolicyError, load_policy, warm_up

log = logging.getLogger("kubelint_ml.admission")


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "msg", ...fields}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out.update(fields)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, separators=(",", ":"), default=str)


def setup_logging(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


@dataclass
class ServeOptions:
    cert: str
    key: str
    host: str = "0.0.0.0"
    port: int = 8443
    config: str | None = None
    mode: str | None = None  # overrides the config's admission.mode
    reload_interval: float = 2.0
    graceful_seconds: float = 25.0  # the Deployment's terminationGracePeriodSeconds is 30
    limit_concurrency: int = 512


def _stat(path: str) -> tuple:
    try:
        st = os.stat(path)
    except OSError as e:
        return (path, "missing", e.errno)
    return (path, st.st_mtime_ns, st.st_size, st.st_ino)


def config_signature(config_path: str | None, policy: Policy | None) -> tuple:
    """What a config reload depends on: the file, and the files its policy was built from (custom rule
    files and policies, context files, the profile's kubelet configs, the usage snapshot)."""
    if not config_path:
        return ()
    parts = [_stat(config_path)]
    if policy is not None:
        parts.extend(_stat(p) for p in policy.watched)
    return tuple(parts)


class Reloader:
    def __init__(self, opts: ServeOptions, holder: Holder, metrics: Metrics, ssl_context: Any) -> None:
        self.opts = opts
        self.holder = holder
        self.metrics = metrics
        self.ssl_context = ssl_context
        self.config_sig = config_signature(opts.config, holder.policy)
        self.cert_sig = (_stat(opts.cert), _stat(opts.key))

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.opts.reload_interval)
            try:
                await self.check()
            except Exception:  # the watcher must outlive any one failure
                log.exception("reload check failed")

    async def check(self) -> None:
        sig = config_signature(self.opts.config, self.holder.policy)
        if sig != self.config_sig:
            self.config_sig = sig
            await self.reload_config()
        cert_sig = (_stat(self.opts.cert), _stat(self.opts.key))
        if cert_sig != self.cert_sig:
            self.cert_sig = cert_sig
            self.reload_cert()

    async def reload_config(self) -> None:
        try:
            policy = await asyncio.to_thread(load_policy, self.opts.config, self.opts.mode)
        except PolicyError as e:
            self.metrics.inc("config_reloads_total", (("result", "failure"),))
            self.metrics.set("config_last_reload_successful", 0)
            current = self.holder.policy
            log.error(
                "config rejected; the last good config stays in force",
                extra={
                    "fields": {
                        "config": self.opts.config,
                        "error": str(e),
                        "inForceSince": _iso(current.loaded_at) if current else None,
                    }
                },
            )
            return
        old, self.holder.policy = self.holder.policy, policy
        if old is not None and old.policies is not None:
            # Reviews that took the old policy finish within their time limit; then its helper and
            # engines go, and the memory they held goes back to the system.
            delay = float(old.settings["requestTimeoutSeconds"]) + 1
            asyncio.get_running_loop().call_later(delay, lambda: asyncio.ensure_future(asyncio.to_thread(_retire, old)))
        self.config_sig = config_signature(self.opts.config, policy)  # its rule files may differ now
        self.metrics.inc("config_reloads_total", (("result", "success"),))
        self.metrics.set("config_last_reload_successful", 1)
        log.info("config reloaded", extra={"fields": describe(policy)})

    def reload_cert(self) -> None:
        try:
            self.ssl_context.load_cert_chain(self.opts.cert, self.opts.key)
        except (
            OSError,
            ValueError,
        ) as e:  # ssl.SSLError is an OSError; a half-written pair is retried on the next change
            self.metrics.inc("certificate_reloads_total", (("result", "failure"),))
            log.error(
                "TLS certificate not reloaded; the previous one stays in use",
                extra={"fields": {"cert": self.opts.cert, "error": str(e)}},
            )
            return
        self.metrics.inc("certificate_reloads_total", (("result", "success"),))
        log.info("TLS certificate reloaded", extra={"fields": {"cert": self.opts.cert}})


def _retire(policy: Policy) -> None:
    policy.retire()
    trim_heap()


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def describe(policy: Policy) -> dict:
    out: dict[str, Any] = {
        "config": policy.source,
        "mode": policy.mode,
        "rules": len(policy.rule_ids),
        "kubernetesVersion": policy.config.profile.kubernetes_version or "",
    }
    if policy.config.profile.feature_gates:
        out["featureGates"] = dict(policy.config.profile.feature_gates)
    if policy.missing_context:
        out["contextMissing"] = policy.missing_context
    if policy.not_run:
        out["notRun"] = policy.not_run
    return out


def serve(opts: ServeOptions, policy: Policy) -> int:
    """Run until SIGTERM/SIGINT; returns the exit code."""
    import uvicorn

    from kubelint_ml.admission.connections import (
        ConnectionLimits,
        TimedHttpToolsProtocol,
        bound_tls_handshake,
        header_timeout,
    )

    holder = Holder(policy)
    metrics = Metrics()
    metrics.set("config_last_reload_successful", 1)
    app = WebhookApp(holder, metrics)
    limits = ConnectionLimits(holder, metrics, handshake_seconds=header_timeout(holder))
    config = uvicorn.Config(
        app,
        host=opts.host,
        port=opts.port,
        ssl_certfile=opts.cert,
        ssl_keyfile=opts.key,
        lifespan="on",
        access_log=False,
        log_config=None,
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=int(opts.graceful_seconds),
        limit_concurrency=opts.limit_concurrency,
        timeout_keep_alive=30,  # the API server reuses connections
        http=TimedHttpToolsProtocol.bind(limits),  # with TLS handshake and header time limits
    )
    config.load()  # builds the SSL context now, so that reloads can reach it
    server = uvicorn.Server(config)
    warm_up(policy)
    # uvicorn raises the signal it caught again once it has shut down; with these handlers
    # that ends the process normally (exit 0) rather than by the signal.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)

    async def main() -> None:
        reloader = Reloader(opts, holder, metrics, config.ssl)
        watcher = asyncio.create_task(reloader.run())
        bound_tls_handshake(asyncio.get_running_loop(), limits.handshake_seconds)
        log.info(
            "serving", extra={"fields": {"address": f"https://{opts.host}:{opts.port}/validate", **describe(policy)}}
        )
        try:
            await server.serve()
        finally:
            holder.shutting_down = True
            watcher.cancel()
            if holder.policy is not None:
                holder.policy.retire()
        log.info("stopped", extra={"fields": {"reviews": int(sum(metrics.counters["requests_total"].values()))}})

    asyncio.run(main())
    return 0
