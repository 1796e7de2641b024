"""A server on 127.0.0.1 that answers the Prometheus HTTP API's read endpoints as a test tells it.

Not Prometheus (tests/promserver.py starts the real one): this one says what no healthy
Prometheus would, so that the client can be tried against a misconfigured server, a proxy
answering instead of it, or an answer too large to hold. It is a real HTTP server: the client
under test talks to it over a socket, as it would to the real one.

A test gives ``answer(endpoint, form)``, which returns an :class:`Answer` (status, headers,
the body as bytes or as an iterator of chunks, sent as they come). ``healthy(...)`` builds the
answers of a server whose memory statistics are the given ones, series by series.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    body: bytes | Iterable[bytes] = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    length: int | None = None  # Content-Length to announce; None: chunked when the body is an iterator


def ok(data: Any) -> Answer:
    return Answer(json.dumps({"status": "success", "data": data}).encode())


def raw(doc: Any, status: int = 200) -> Answer:
    return Answer(json.dumps(doc).encode(), status=status)


class Server:
    """``with Server(answer) as s:`` ... ``s.url``; ``s.sent`` counts the body bytes written."""

    def __init__(self, answer: Callable[[str, dict[str, list[str]]], Answer]) -> None:
        self.answer = answer
        self.sent = 0
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                size = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(size).decode(), keep_blank_values=True)
                path = urllib.parse.urlsplit(self.path).path
                outer.requests.append((path, form))
                found = outer.answer(path, form)
                self.send_response(found.status)
                for k, v in found.headers.items():
                    self.send_header(k, v)
                body = found.body
                try:
                    if isinstance(body, bytes):
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        outer.sent += len(body)
                    elif found.length is not None:
                        self.send_header("Content-Length", str(found.length))
                        self.end_headers()
                        for chunk in body:
                            self.wfile.write(chunk)
                            outer.sent += len(chunk)
                    else:
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        for chunk in body:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                            outer.sent += len(chunk)
                        self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading: what the size limit is for
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


# ----------------------------------------------------------------------------
# A healthy answer: memory statistics per series, nothing else


def stats_items(series: dict[tuple[str, str], dict[str, Any]], start: float) -> list[dict]:
    """The result of the statistics range query for these series: per (pod, container) its
    median, p90, p99, max and count (values as the API writes them: strings; any value given
    as-is is sent as-is)."""
    t = [start, round(start + 0.001, 3), round(start + 0.002, 3)]
    out = []
    for (pod, container), s in series.items():
        labels = {"namespace": "ml", "pod": pod, "container": container}
        out.append(
            {
                "metric": {**labels, "kubelint_ml_stat": "quantile"},
                "values": [[t[0], s["median"]], [t[1], s["p90"]], [t[2], s["p99"]]],
            }
        )
        out.append({"metric": {**labels, "kubelint_ml_stat": "count"}, "values": [[x, s["count"]] for x in t]})
        out.append({"metric": {**labels, "kubelint_ml_stat": "max"}, "values": [[x, s["max"]] for x in t]})
    return out


def healthy(
    memory: dict[tuple[str, str], dict[str, Any]],
    override: Callable[[str, dict[str, list[str]]], Answer | None] | None = None,
) -> Callable[[str, dict[str, list[str]]], Answer]:
    """An ``answer`` function: the memory statistics range query gets ``memory``'s series, every
    other query an empty result; ``override`` answers first where it returns an Answer."""

    def answer(path: str, form: dict[str, list[str]]) -> Answer:
        if override is not None:
            found = override(path, form)
            if found is not None:
                return found
        query = (form.get("query") or [""])[0]
        if path == "/api/v1/series":
            return ok([])
        if path == "/api/v1/query_range":
            if "container_memory_working_set_bytes" in query:
                return ok({"resultType": "matrix", "result": stats_items(memory, float(form["start"][0]))})
            return ok({"resultType": "matrix", "result": []})
        return ok({"resultType": "vector", "result": []})

    return answer


def good(median: float = 6e9, peak: float = 9e9, count: int = 20000) -> dict[str, Any]:
    return {"median": str(median), "p90": str(median), "p99": str(peak), "max": str(peak), "count": str(count)}


def endless(chunk: bytes, total: int | None = None, delay: float = 0.0) -> Iterator[bytes]:
    """``chunk`` again and again (``total`` bytes in all, or forever), with ``delay`` between."""
    sent = 0
    head = b'{"status":"success","data":{"resultType":"matrix","result":['
    yield head
    sent += len(head)
    while total is None or sent < total:
        yield chunk
        sent += len(chunk)
        if delay:
            time.sleep(delay)
