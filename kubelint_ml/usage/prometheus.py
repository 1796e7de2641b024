"""A small client for the Prometheus HTTP API, on the standard library.

Only the three read endpoints every PromQL-compatible store serves are used
(Prometheus, Thanos Query, Grafana Mimir, VictoriaMetrics): ``/api/v1/query``,
``/api/v1/query_range`` and ``/api/v1/series``. Requests are POSTed as forms
(long pod regexes do not fit in a URL), each with a timeout, and retried a
bounded number of times when the server is unreachable, overloaded (429, 5xx)
or slow. Redirects are not followed (credentials would go with them).

Credentials come from the environment, or from files the environment names,
never from the config file:

==================================  ==========================================
``KUBELINT_ML_PROMETHEUS_TOKEN``     bearer token (or ``..._TOKEN_FILE``: a file holding it)
``KUBELINT_ML_PROMETHEUS_USERNAME``  basic auth user, with ``..._PASSWORD`` or ``..._PASSWORD_FILE``
``KUBELINT_ML_PROMETHEUS_CA_FILE``   PEM bundle of the CAs to trust for https
``KUBELINT_ML_PROMETHEUS_TENANT``    ``X-Scope-OrgID`` for Mimir / Cortex (also ``usage.tenant``)
==================================  ==========================================
"""

from __future__ import annotations

import base64
import json
import math
import os
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ENV = "KUBELINT_ML_PROMETHEUS_"
ENDPOINTS = ("/api/v1/query", "/api/v1/query_range", "/api/v1/series")
# An answer over this many bytes is refused without reading the rest (usage.maxResponseBytes):
# decoded, JSON of samples takes about seven times its size in memory, so 64 MiB keeps a run
# under half a GiB whatever the server sends. The statistics queries answer a few hundred
# bytes per series; only the pooled samples of containers with several series come near it.
MAX_RESPONSE_BYTES = 64 * 1024**2
# How much of a text from the server (an error, a label) goes into a message.
MAX_SERVER_TEXT = 300
_CHUNK = 1 << 20


def server_text(text: object) -> str:
    """A text the server sent, for a message: cut to :data:`MAX_SERVER_TEXT` characters.

    Still untrusted: whoever prints a message escapes it (terminal escapes, workflow commands)."""
    text = text if isinstance(text, str) else repr(text)
    return text if len(text) <= MAX_SERVER_TEXT else text[:MAX_SERVER_TEXT] + f"... ({len(text)} characters)"


class PrometheusError(Exception):
    """The server could not answer what was asked; the message says why and what to try."""


class BadSample(PrometheusError):
    """One series' sample that cannot be sized from (not a number, NaN, infinite, negative):
    that series is left out, the others are used."""


@dataclass(frozen=True)
class Auth:
    bearer: str | None = None
    basic: tuple[str, str] | None = None
    ca_file: str | None = None
    tenant: str | None = None

    def headers(self) -> dict[str, str]:
        out = {}
        if self.bearer:
            out["Authorization"] = f"Bearer {self.bearer}"
        elif self.basic:
            raw = f"{self.basic[0]}:{self.basic[1]}".encode()
            out["Authorization"] = "Basic " + base64.b64encode(raw).decode()
        if self.tenant:
            out["X-Scope-OrgID"] = self.tenant
        return out


def _secret(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(ENV + name)
    path = env.get(ENV + name + "_FILE")
    if value and path:
        raise PrometheusError(f"set {ENV}{name} or {ENV}{name}_FILE, not both")
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                value = fh.read().strip()
        except OSError as e:
            raise PrometheusError(f"{ENV}{name}_FILE {path}: cannot read: {e.strerror}") from None
        if not value:
            raise PrometheusError(f"{ENV}{name}_FILE {path} is empty")
    return value or None


def auth_from_env(env: Mapping[str, str] | None = None, tenant: str | None = None) -> Auth:
    env = os.environ if env is None else env
    token = _secret(env, "TOKEN")
    user = env.get(ENV + "USERNAME")
    password = _secret(env, "PASSWORD")
    if token and (user or password):
        raise PrometheusError(f"set a bearer token ({ENV}TOKEN) or basic auth ({ENV}USERNAME), not both")
    if password and not user:
        raise PrometheusError(f"{ENV}PASSWORD is set but {ENV}USERNAME is not")
    ca = env.get(ENV + "CA_FILE") or None
    if ca and not os.path.isfile(ca):
        raise PrometheusError(f"{ENV}CA_FILE {ca}: no such file")
    return Auth(token, (user, password or "") if user else None, ca, env.get(ENV + "TENANT") or tenant or None)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 - urllib's signature
        raise PrometheusError(
            f"{req.full_url}: the server redirects to {newurl} (HTTP {code}); "
            "give that URL instead (redirects are not followed, credentials would go along)"
        )


@dataclass
class Prometheus:
    """One server. ``queries`` counts the requests answered (for the benchmark and ``-v``)."""

    url: str
    auth: Auth = field(default_factory=Auth)
    timeout: float = 60.0  # seconds per request, the whole answer included
    max_bytes: int = MAX_RESPONSE_BYTES  # an answer over this is refused (usage.maxResponseBytes)
    retries: int = 2  # further attempts after a failure worth retrying
    backoff: float = 0.5  # seconds before the first retry, doubled after each
    queries: int = 0
    _opener: Any = None
    _lock: Any = None

    def __post_init__(self) -> None:
        parsed = urllib.parse.urlsplit(self.url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise PrometheusError(f"--prometheus {self.url!r}: give an http:// or https:// URL")
        if parsed.query or parsed.fragment:
            raise PrometheusError(f"--prometheus {self.url!r}: the URL takes no query string or fragment")
        self.url = self.url.rstrip("/")
        handlers: list[Any] = [_NoRedirect()]
        if parsed.scheme == "https":
            context = (
                ssl.create_default_context(cafile=self.auth.ca_file)
                if self.auth.ca_file
                else ssl.create_default_context()
            )
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self._opener = urllib.request.build_opener(*handlers)
        import threading

        self._lock = threading.Lock()

    # ------------------------------------------------------------------
    # Endpoints

    def query(self, promql: str, at: float) -> tuple[str, list[dict]]:
        """An instant query at ``at`` (unix seconds): (resultType, result).

        Each result item is an object with a ``metric`` of string labels (checked here: an
        answer that is not so is refused as a whole); its ``value`` or ``values`` are read by
        the caller, series by series."""
        url = self.url + "/api/v1/query"
        data = self._call("/api/v1/query", {"query": promql, "time": _ts(at), "timeout": _dur(self.timeout)})
        return _result(data, url, ("vector", "matrix"))

    def query_range(self, promql: str, start: float, end: float, step: float) -> list[dict]:
        url = self.url + "/api/v1/query_range"
        data = self._call(
            "/api/v1/query_range",
            {"query": promql, "start": _ts(start), "end": _ts(end), "step": _step(step), "timeout": _dur(self.timeout)},
        )
        return _result(data, url, ("matrix",))[1]

    def series(self, matchers: list[str], start: float, end: float) -> list[dict]:
        url = self.url + "/api/v1/series"
        form = [("match[]", m) for m in matchers] + [("start", _ts(start)), ("end", _ts(end))]
        data = self._call("/api/v1/series", form)
        if data is None:
            return []
        if not isinstance(data, list):
            raise PrometheusError(_malformed(url, "data", data, "a list of label sets"))
        for i, labels in enumerate(data):
            _labels(labels, url, f"data[{i}]")
        return data

    # ------------------------------------------------------------------

    def _call(self, endpoint: str, form: Any) -> Any:
        assert endpoint in ENDPOINTS
        body = urllib.parse.urlencode(form).encode()
        url = self.url + endpoint
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
            "User-Agent": "kubelint-ml",
            **self.auth.headers(),
        }
        delay = self.backoff
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                request = urllib.request.Request(url, data=body, headers=headers, method="POST")
                deadline = time.monotonic() + self.timeout
                with self._opener.open(request, timeout=self.timeout) as response:
                    raw = _read(response, url, self.max_bytes, deadline, self.timeout)
                with self._lock:
                    self.queries += 1
                return _payload(raw, url)
            except urllib.error.HTTPError as e:
                problem = _http_problem(e, url)
                if e.code not in (429, 500, 502, 503, 504) or last:
                    raise PrometheusError(problem) from None
            except PrometheusError:
                raise
            except TimeoutError:
                if last:
                    raise PrometheusError(
                        f"{url}: no answer within {self.timeout:g}s "
                        f"({self.retries + 1} attempts); the server is slow or the query too big "
                        "(try a shorter --lookback or usage.timeout)"
                    ) from None
            except (urllib.error.URLError, ConnectionError, OSError) as e:
                reason = getattr(e, "reason", e)
                if isinstance(reason, (TimeoutError, socket.timeout)):
                    if last:
                        raise PrometheusError(
                            f"{url}: no answer within {self.timeout:g}s ({self.retries + 1} attempts)"
                        ) from None
                elif isinstance(reason, ssl.SSLError):
                    raise PrometheusError(f"{url}: TLS: {reason} (a private CA goes in {ENV}CA_FILE)") from None
                elif last:
                    raise PrometheusError(
                        f"{url}: unreachable: {_reason(reason)} ({self.retries + 1} attempts)"
                    ) from None
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")


def _reason(reason: Any) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__


def _too_big(url: str, limit: int, size: str) -> PrometheusError:
    return PrometheusError(
        f"{url}: the answer is {size}, over the limit of {limit} bytes (usage.maxResponseBytes); "
        "the rest was not read: lint fewer namespaces at a time, narrow usage.selector, or raise the limit"
    )


def _read(response: Any, url: str, limit: int, deadline: float, timeout: float) -> bytes:
    """The body, read in chunks: refused past ``limit`` bytes (before reading, when the server says
    its length) or past the deadline (a server that trickles its answer)."""
    length = response.headers.get("Content-Length")
    if length and length.strip().isdigit() and int(length) > limit:
        raise _too_big(url, limit, f"{int(length)} bytes")
    encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise PrometheusError(
            f"{url}: the answer is {server_text(encoding)}-encoded, which was not asked for; "
            "is a proxy answering instead of the server?"
        )
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = response.read1(min(_CHUNK, limit + 1 - size))  # what has arrived: a trickle meets the deadline
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _too_big(url, limit, f"over {limit} bytes")
        if time.monotonic() > deadline:
            raise PrometheusError(
                f"{url}: the answer took over {timeout:g}s to arrive ({size} bytes so far); "
                "the server is slow or the query too big (try a shorter --lookback or usage.timeout)"
            )
    return b"".join(chunks)


def _payload(raw: bytes, url: str) -> Any:
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        raise PrometheusError(f"{url}: the answer is not JSON: is this a Prometheus HTTP API?") from None
    if not isinstance(doc, dict):
        raise PrometheusError(_malformed(url, "the answer", doc, "an object"))
    if doc.get("status") != "success" or "data" not in doc:
        error = doc.get("error")
        if error is not None:
            raise PrometheusError(f"{url}: the server says: {server_text(error)}")
        if doc.get("status") == "success":
            raise PrometheusError(f"{url}: the server says success but sends no data: is this a Prometheus HTTP API?")
        raise PrometheusError(
            f"{url}: the answer's status is {server_text(doc.get('status'))}, not success, and it gives no error: "
            "is this a Prometheus HTTP API?"
        )
    return doc["data"]


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _malformed(url: str, where: str, value: object, expected: str) -> str:
    return f"{url}: malformed answer: {where} is {_kind(value)}, not {expected}; is this a Prometheus HTTP API?"


def _labels(labels: object, url: str, where: str) -> None:
    if not isinstance(labels, dict):
        raise PrometheusError(_malformed(url, where, labels, "an object of labels"))
    for k, v in labels.items():
        if not isinstance(v, str):
            raise PrometheusError(_malformed(url, f"{where} label {server_text(k)}", v, "a string"))


def _result(data: Any, url: str, kinds: tuple[str, ...]) -> tuple[str, list[dict]]:
    """``data`` of a query: (resultType, result), every item an object whose ``metric`` is an
    object of string labels; anything else refuses the whole answer."""
    if not isinstance(data, dict):
        raise PrometheusError(_malformed(url, "data", data, "an object"))
    kind = data.get("resultType")
    if kind not in kinds:
        raise PrometheusError(
            f"{url}: malformed answer: resultType is {server_text(kind)}, not {' or '.join(kinds)}; "
            "is this a Prometheus HTTP API?"
        )
    result = data.get("result")
    if result is None:
        return kind, []
    if not isinstance(result, list):
        raise PrometheusError(_malformed(url, "data.result", result, "a list"))
    for i, item in enumerate(result):
        if not isinstance(item, dict):
            raise PrometheusError(_malformed(url, f"data.result[{i}]", item, "an object"))
        _labels(item.get("metric"), url, f"data.result[{i}].metric")
    return kind, result


def _http_problem(e: urllib.error.HTTPError, url: str) -> str:
    detail = ""
    try:
        doc = json.loads(e.read(1 << 20) or b"{}")
        if isinstance(doc, dict):
            detail = server_text(doc.get("error") or "")
    except (ValueError, OSError, RecursionError):
        pass
    if e.code in (401, 403):
        return (
            f"{url}: HTTP {e.code} {'unauthorized' if e.code == 401 else 'forbidden'}: "
            f"check the credentials ({ENV}TOKEN, or {ENV}USERNAME and {ENV}PASSWORD)"
            + (f"; the server says: {detail}" if detail else "")
        )
    if "too many samples" in detail:
        return (
            f"{url}: the query is over the server's sample limit (query.max-samples): {detail}; "
            "lint fewer namespaces at a time, shorten --lookback or lengthen --step"
        )
    if e.code == 404:
        return f"{url}: HTTP 404: no Prometheus HTTP API here (give the server's base URL)"
    return f"{url}: HTTP {e.code}" + (f": {detail}" if detail else f" {server_text(e.reason)}")


def _ts(t: float) -> str:
    return repr(float(t)) if t != int(t) else str(int(t))


def _dur(seconds: float) -> str:
    return f"{int(math.ceil(seconds))}s"


def _step(seconds: float) -> str:
    """A range query's step, to the millisecond."""
    return f"{int(round(seconds * 1000))}ms"


def value(raw: Any, what: str) -> float:
    """A sample value ("123.5") as a finite float >= 0, else :class:`BadSample` naming ``what``.

    The API sends values as strings; a NaN or an infinity comes from the data (an exporter's
    NaN, a recording rule dividing by zero), never from staleness (stale markers end a series,
    they are not returned); nothing sized here is negative."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise BadSample(f"{what}: sample value is {_kind(raw)}, not a number")
    try:
        v = float(raw)
    except ValueError:
        raise BadSample(f"{what}: sample value {server_text(raw)!r} is not a number") from None
    if not math.isfinite(v):
        raise BadSample(f"{what}: sample value is {v}")
    if v < 0:
        raise BadSample(f"{what}: sample value {v:g} is negative")
    return v


def points(item: dict, instant: bool, what: str) -> list[tuple[Any, Any]]:
    """A result item's (timestamp, value) pairs: its ``value`` (instant) or ``values`` (range);
    :class:`BadSample` when they are not pairs."""
    if instant:
        found = None if item.get("value") is None else [item["value"]]
    else:
        found = item.get("values")
    if found is None:
        return []
    if not isinstance(found, list):
        raise BadSample(f"{what}: values is {_kind(found)}, not a list of [time, value] pairs")
    for p in found:
        if not isinstance(p, list) or len(p) != 2:
            raise BadSample(f"{what}: a sample is {_kind(p)}, not a [time, value] pair")
    return [(p[0], p[1]) for p in found]
