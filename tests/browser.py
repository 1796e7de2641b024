"""A real browser for the tests: Debian's ``chromium``, headless, driven over the DevTools
protocol on a pipe (``--remote-debugging-pipe``: JSON messages ended by NUL on fds 3 and 4),
with the standard library only. No port is opened and nothing is fetched: the page is a file.

Without ``chromium`` (Debian: ``apt-get install chromium``; ``.ci/run`` installs it),
:func:`missing` says why and the tests that need it are skipped.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from typing import Any

NAMES = ("chromium", "chromium-browser", "google-chrome")


def executable() -> str | None:
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def missing() -> str | None:
    if executable() is None:
        return "chromium is not installed (apt-get install chromium; .ci/run installs it)"
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless chromium; :meth:`open` a page in a new tab, :meth:`close` ends it all."""

    def __init__(self, timeout: float = 60.0, width: int = 1280, height: int = 1000) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="kubelint-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def fds() -> None:  # in the child: the protocol's pipes on fds 3 (commands) and 4 (answers)
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)  # above 4: neither is overwritten
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        args = [
            str(executable()),
            "--headless=new",
            "--no-sandbox",  # the tests run as root in a container
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-sync",
            "--disable-component-update",
            "--hide-scrollbars",
            "--mute-audio",
            f"--window-size={width},{height}",
            f"--user-data-dir={self.profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")  # noqa: SIM115 - closed by close()
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            preexec_fn=fds,  # noqa: PLW1509 - only dup2 before exec
            close_fds=False,
            start_new_session=True,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next = 0
        self._answers: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self.events: list[dict[str, Any]] = []
        self._event = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # --- the protocol

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._lock:
                        q = self._answers.pop(msg["id"], None)
                    if q is not None:
                        q.put(msg)
                else:
                    with self._event:
                        self.events.append(msg)
                        self._event.notify_all()
        with self._event:
            self.events.append({"method": "closed"})
            self._event.notify_all()

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict[str, Any]:
        with self._lock:
            self._next += 1
            n = self._next
            q: queue.Queue = queue.Queue()
            self._answers[n] = q
        msg: dict[str, Any] = {"id": n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        try:
            answer = q.get(timeout=self.timeout)
        except queue.Empty:
            raise BrowserError(f"{method}: no answer within {self.timeout}s") from None
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def wait_event(self, method: str, session: str | None, since: int = 0, timeout: float | None = None) -> dict:
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._event:
            while True:
                for e in self.events[since:]:
                    if e.get("method") == method and (session is None or e.get("sessionId") == session):
                        return e
                    if e.get("method") == "closed":
                        raise BrowserError("chromium closed the pipe")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f"no {method} within the timeout")
                self._event.wait(left)

    # --- pages

    def open(self, url: str, *, scripts: bool = True) -> Page:
        """A new tab at ``url``, once loaded; ``scripts=False``: the page's own scripts never run."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        if not scripts:
            self.call("Emulation.setScriptExecutionDisabled", {"value": True}, session)
        since = len(self.events)
        started = time.monotonic()
        self.call("Page.navigate", {"url": url}, session)
        self.wait_event("Page.loadEventFired", session, since)
        page.load_seconds = time.monotonic() - started
        page.first_event = since
        return page

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self.call("Browser.close")
                except (BrowserError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            for fd in (self._to_browser, self._from_browser):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session
        self.load_seconds = 0.0
        self.first_event = 0

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited when a promise), as JSON would carry it."""
        r = self.browser.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            self.session,
        )
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression[:80]}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, full: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full:
            params["captureBeyondViewport"] = True
        return base64.b64decode(self.browser.call("Page.captureScreenshot", params, self.session)["data"])

    def events(self, *methods: str) -> list[dict[str, Any]]:
        return [
            e
            for e in self.browser.events[self.first_event :]
            if e.get("sessionId") == self.session and e.get("method") in methods
        ]

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and log errors of the page."""
        out = []
        for e in self.events("Runtime.consoleAPICalled"):
            if e["params"]["type"] in ("error", "warning", "assert"):
                out.append(f"console.{e['params']['type']}: {e['params'].get('args')}")
        for e in self.events("Runtime.exceptionThrown"):
            out.append(f"exception: {e['params']['exceptionDetails']}")
        for e in self.events("Log.entryAdded"):
            if e["params"]["entry"]["level"] in ("error", "warning"):
                out.append(f"log: {e['params']['entry'].get('text')}")
        return out

    def requests(self) -> list[str]:
        """Every URL the page asked for (the page itself first)."""
        return [e["params"]["request"]["url"] for e in self.events("Network.requestWillBeSent")]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def png_distinct_colours(data: bytes, limit: int = 64) -> int:
    """How many different pixel values a PNG has (up to ``limit``): 1 means blank. Decoded with zlib
    (8-bit RGB or RGBA, non-interlaced: what chromium writes)."""
    import struct
    import zlib

    width, height = png_size(data)
    pos, chunks, colour_type = 8, [], None
    while pos < len(data):
        length = struct.unpack(">I", data[pos : pos + 4])[0]
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            colour_type = body[9]
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    bpp = {2: 3, 6: 4}[colour_type or 6]
    stride = width * bpp
    seen: set[bytes] = set()
    prev = bytearray(stride)
    at = 0
    for _ in range(height):
        ftype, line = raw[at], bytearray(raw[at + 1 : at + 1 + stride])
        at += 1 + stride
        for i in range(stride):  # undo the PNG filter of this row
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp * 7):  # a sample of pixels is enough
            seen.add(bytes(line[x : x + bpp]))
        if len(seen) >= limit:
            return len(seen)
        prev = line
    return len(seen)
