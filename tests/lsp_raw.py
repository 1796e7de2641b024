"""A raw JSON-RPC client for ``kubelint-ml lsp`` over stdio: it writes the bytes it is told to (well
formed or not) and reads what the server answers, every wait bounded. For the tests of a hostile or
merely unlucky editor (tests/test_lsp_hostile.py)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class RawClient:
    def __init__(self, cwd: Path | None = None, env: dict | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubelint_ml", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )
        self.messages: queue.Queue = queue.Queue()
        self.stderr = b""
        self.next_id = 0
        self.pending: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    # -- bytes -------------------------------------------------------------

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                if line in (b"\r\n", b"\n") and length is not None:
                    break
            self.messages.put(json.loads(out.read(length)))

    def _read_err(self) -> None:
        err = self.proc.stderr
        assert err is not None
        for line in err:
            self.stderr += line

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    # -- messages ----------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request(self, method: str, params: Any = None) -> int:
        self.next_id += 1
        msg: dict = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.next_id

    def wait(self, match: Any, timeout: float = 10) -> dict:
        """The first message (seen before or arriving within ``timeout``) for which ``match`` holds."""
        for i, m in enumerate(self.pending):
            if match(m):
                return self.pending.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no matching message within {timeout} s; stderr: {self.stderr[-2000:]!r}")
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                raise EOFError(f"the server closed its output; stderr: {self.stderr[-2000:]!r}")
            if m.get("method") in ("client/registerCapability", "workspace/configuration") and "id" in m:
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
            if match(m):
                return m
            self.pending.append(m)

    def answer(self, msg_id: int, timeout: float = 10) -> dict:
        return self.wait(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def call(self, method: str, params: Any = None, timeout: float = 10) -> dict:
        return self.answer(self.request(method, params), timeout)

    def diagnostics(self, uri: str, version: int | None = None, timeout: float = 20) -> list[dict]:
        def ok(m: dict) -> bool:
            if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != uri:
                return False
            return version is None or m["params"].get("version") == version

        return self.wait(ok, timeout)["params"]["diagnostics"]

    # -- a session ---------------------------------------------------------

    def initialize(
        self, root: Path | None, encodings: list[str] | None = None, options: Any = None, **caps: Any
    ) -> dict:
        capabilities: dict = {
            "workspace": {"workspaceEdit": {"documentChanges": True}},
            "textDocument": {
                "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}
            },
        }
        if encodings is not None:
            capabilities["general"] = {"positionEncodings": encodings}
        capabilities.update(caps)
        params: dict = {"processId": None, "capabilities": capabilities}
        if options is not None:
            params["initializationOptions"] = options
        if root is not None:
            params["rootUri"] = root.as_uri()
            params["workspaceFolders"] = [{"uri": root.as_uri(), "name": "w"}]
        else:
            params["rootUri"] = None
        found = self.call("initialize", params)
        self.notify("initialized", {})
        return found

    def initialize_folders(self, root: Path, folders: list[Path], options: Any = None) -> dict:
        """Initialized with ``folders`` as the workspace folders (each its own check)."""
        found = self.call(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
                "initializationOptions": options,
                "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": True}}},
            },
            timeout=60,
        )
        self.notify("initialized", {})
        return found

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "yaml", "version": version, "text": text}},
        )

    def change(self, uri: str, version: int, changes: list[dict]) -> None:
        self.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}
        )

    def stop(self, timeout: float = 10) -> int:
        try:
            if self.proc.poll() is None:
                self.call("shutdown", None, timeout)
                self.notify("exit")
        except (OSError, TimeoutError, EOFError):
            pass
        return self.end(timeout)

    def end(self, timeout: float = 10) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the server's policy helpers)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


@contextmanager
def served(root: Path, *args: Any, **kwargs: Any) -> Iterator[RawClient]:
    """A server started in ``root`` and initialized with it (``args``: :meth:`RawClient.initialize`'s),
    killed at the end whatever happened."""
    client = RawClient(cwd=root)
    try:
        client.initialize(root, *args, **kwargs)
        yield client
    finally:
        client.kill()
