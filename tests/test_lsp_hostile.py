"""``kubelint-ml lsp`` against a hostile (or merely unlucky) client speaking raw JSON-RPC over stdio:
malformed frames, wrong parameters, the lifecycle out of order, paths it must not read, load. Every
wait is bounded; the server answers, resynchronises or exits non-zero, and is never deaf but alive."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # hardening: a server per hostile client: the full suite runs them

pytest.importorskip("pygls", reason="pygls is not installed (the language server's dependency)")

from lsp_raw import RawClient  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
JOB = ROOT / "fixtures" / "lsp" / "job.yaml"


@pytest.fixture
def client(tmp_path: Path):  # noqa: ANN201
    c = RawClient(cwd=tmp_path)
    yield c
    c.kill()


def body(message: str) -> bytes:
    return message.encode()


HOVER = '{"jsonrpc": "2.0", "id": %d, "method": "textDocument/hover", "params": {"textDocument": {"uri": "file:///nowhere/a.yaml"}, "position": {"line": 0, "character": 0}}}'


# -- frames --------------------------------------------------------------------------------


def test_a_content_length_too_long_or_too_short_loses_one_frame_at_most(client: RawClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    # too long: the body swallows the start of the next frame; both are answered
    first, second = body(HOVER % 101), body(HOVER % 102)
    client.raw(b"Content-Length: %d\r\n\r\n" % (len(first) + 30) + first)
    client.raw(b"Content-Length: %d\r\n\r\n" % len(second) + second)
    assert client.answer(102)["result"] is None
    assert client.answer(101)["result"] is None
    # too short: the rest of the body is read with it; the next frame is answered
    third, fourth = body(HOVER % 103), body(HOVER % 104)
    client.raw(b"Content-Length: %d\r\n\r\n" % (len(third) - 10) + third)
    client.raw(b"Content-Length: %d\r\n\r\n" % len(fourth) + fourth)
    assert client.answer(104)["result"] is None
    assert client.answer(103)["result"] is None
    # too long, and nothing after it: the message is taken once the input pauses
    fifth = body(HOVER % 105)
    client.raw(b"Content-Length: %d\r\n\r\n" % (len(fifth) + 30) + fifth)
    assert client.answer(105)["result"] is None
    # garbage between frames, a frame that is not JSON: a parse error, then the server goes on
    client.raw(b"this is no header\r\n\r\n")
    client.raw(b"Content-Length: 5\r\n\r\n{oops")
    assert client.wait(lambda m: m.get("error", {}).get("code") == -32700)["id"] is None
    assert (
        client.call(
            "textDocument/hover", {"textDocument": {"uri": "file:///x.yaml"}, "position": {"line": 0, "character": 0}}
        )["result"]
        is None
    )
    assert client.stop() == 0


def test_headers_ended_by_a_bare_lf_and_other_headers(client: RawClient, tmp_path: Path) -> None:
    msg = body(
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": null, "capabilities": {}}}'
    )
    client.raw(b"content-length: %d\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n" % len(msg) + msg)
    assert "capabilities" in client.answer(1)["result"]
    client.next_id = 1
    assert client.stop() == 0


def test_a_huge_content_length_is_refused_and_the_server_exits_non_zero(client: RawClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    client.raw(b"Content-Length: 1000000000000\r\n\r\n{}")
    assert client.end(10) == 2
    assert b"over the" in client.stderr or b"limit" in client.stderr


# -- the lifecycle -------------------------------------------------------------------------


def test_requests_before_initialize_and_a_second_initialize(client: RawClient, tmp_path: Path) -> None:
    found = client.call(
        "textDocument/hover", {"textDocument": {"uri": "file:///x.yaml"}, "position": {"line": 0, "character": 0}}
    )
    assert found["error"]["code"] == -32002
    client.initialize(tmp_path)
    again = client.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    assert again["error"]["code"] == -32600
    assert client.stop() == 0


def test_after_shutdown_requests_are_refused_and_exit_is_0(client: RawClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    assert client.call("shutdown")["result"] is None
    found = client.call(
        "textDocument/hover", {"textDocument": {"uri": "file:///x.yaml"}, "position": {"line": 0, "character": 0}}
    )
    assert found["error"]["code"] == -32600
    client.notify("exit")
    assert client.end(10) == 0


def test_exit_without_shutdown_is_status_1(client: RawClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    client.notify("exit")
    assert client.end(10) == 1


def test_the_end_of_the_input_without_exit_ends_the_server(client: RawClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    assert client.proc.stdin is not None
    client.proc.stdin.close()
    assert client.end(10) == 1


WRONG = [
    ("textDocument/hover", {"textDocument": {"uri": "file:///x.yaml"}, "position": {"line": "zero", "character": 0}}),
    ("textDocument/hover", {"textDocument": 7, "position": {"line": 0, "character": 0}}),
    (
        "textDocument/codeAction",
        {"textDocument": {"uri": "file:///x.yaml"}, "range": 5, "context": {"diagnostics": []}},
    ),
    (
        "textDocument/codeAction",
        {"textDocument": {"uri": "file:///x.yaml"}, "range": {"start": {}, "end": {}}, "context": {}},
    ),
    ("textDocument/diagnostic", {"textDocument": "file:///x.yaml"}),
    ("codeAction/resolve", {"diagnostics": 3}),
    ("textDocument/hover", [1, 2, 3]),
    ("textDocument/hover", None),
]


def test_wrong_parameters_get_an_invalid_params_error(client: RawClient, tmp_path: Path) -> None:
    client.initialize(tmp_path)
    for method, params in WRONG:
        msg: dict = {"jsonrpc": "2.0", "id": f"w-{method}-{params!r}", "method": method}
        if params is not None:
            msg["params"] = params
        client.send(msg)
        found = client.answer(msg["id"])
        assert found.get("error", {}).get("code") == -32602, (method, params, found)
    # notifications with wrong parameters: logged, and the server answers the next request
    client.notify("textDocument/didOpen", {"textDocument": {"uri": 5}})
    client.notify(
        "textDocument/didChange", {"textDocument": {"uri": "file:///x.yaml", "version": "v"}, "contentChanges": 1}
    )
    client.notify("textDocument/didClose", {})
    client.notify("workspace/didChangeWatchedFiles", {"changes": "all"})
    client.notify("$/cancelRequest", {"id": {"no": 1}})
    assert (
        client.call(
            "textDocument/hover", {"textDocument": {"uri": "file:///x.yaml"}, "position": {"line": 0, "character": 0}}
        )["result"]
        is None
    )
    assert client.stop() == 0


# -- what is read --------------------------------------------------------------------------


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def hover(client: RawClient, uri: str, timeout: float = 3) -> dict:
    return client.call(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        timeout=timeout,
    )


def test_requests_read_nothing_but_open_buffers(client: RawClient, tmp_path: Path) -> None:
    """Hover, code actions and pulled diagnostics on a file the client never opened: answered at once
    from nothing (a device, a FIFO, a file outside the workspace is never read for a request)."""
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    client.initialize(tmp_path)
    for uri in ("file:///dev/zero", fifo.as_uri(), "file:///dev/stdin", "file:///etc/passwd", "untitled:x"):
        t0 = time.monotonic()
        assert hover(client, uri)["result"] is None
        found = client.call(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                "context": {"diagnostics": []},
            },
            timeout=3,
        )
        assert found["result"] == []
        assert (
            client.call("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=3)["result"]["items"] == []
        )
        assert time.monotonic() - t0 < 3
    assert rss_mib(client.proc.pid) < 300
    assert client.stop() == 0


def test_close_and_watched_files_naming_devices_and_fifos(client: RawClient, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock.yaml"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        client.initialize(tmp_path)
        for uri in (fifo.as_uri(), "file:///dev/stdin", "file:///dev/zero", sock_path.as_uri()):
            client.open(uri, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: a\nvalue: 1\n")
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        changes = [
            {"uri": u, "type": 2} for u in (fifo.as_uri(), "file:///dev/stdin", "file:///dev/zero", sock_path.as_uri())
        ]
        client.notify("workspace/didChangeWatchedFiles", {"changes": changes})
        assert hover(client, (tmp_path / "a.yaml").as_uri())["result"] is None
        assert rss_mib(client.proc.pid) < 300
        assert client.stop() == 0
    finally:
        sock.close()


@pytest.mark.parametrize(
    "config",
    [
        "context: [/dev/stdin]\n",
        "context: [pipe.yaml]\n",
        "profile:\n  kubeletConfig: /dev/stdin\n",
        "profile:\n  kubeletConfig: pipe.yaml\n",
    ],
)
def test_a_config_naming_a_device_or_fifo_is_a_diagnostic_not_a_deaf_server(
    client: RawClient, tmp_path: Path, config: str
) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / ".kubelint-ml.yaml").write_text(config)
    job = tmp_path / "job.yaml"
    shutil.copy(JOB, job)
    client.initialize(tmp_path)
    client.open(job.as_uri(), job.read_text())
    found = client.diagnostics((tmp_path / ".kubelint-ml.yaml").as_uri(), timeout=10)
    assert "not a regular file" in found[0]["message"] and found[0]["severity"] == 1
    assert hover(client, job.as_uri())["result"] is None
    assert client.stop() == 0


def test_check_refuses_a_fifo_or_device_as_context(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    shutil.copy(JOB, tmp_path / "job.yaml")
    for context in ("pipe.yaml", "/dev/zero"):
        r = subprocess.run(
            [sys.executable, "-m", "kubelint_ml", "check", "job.yaml", "--context", context],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=30,
        )
        assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr


@pytest.mark.parametrize("root", ["-", "glob"])
def test_workspace_folders_are_taken_literally(tmp_path: Path, root: str) -> None:
    """A rootUri of ``-`` is no request to read stdin; a folder path with ``**`` that does not exist
    is not globbed (the server answers at once and stays small)."""
    client = RawClient(cwd=tmp_path)
    try:
        if root == "-":
            params = {"processId": None, "rootUri": "-", "capabilities": {}}
        else:
            uri = "file://" + str(tmp_path / "**" / "nothing")
            params = {
                "processId": None,
                "rootUri": uri,
                "workspaceFolders": [{"uri": "file:///**", "name": "all"}],
                "capabilities": {},
            }
        assert "capabilities" in client.call("initialize", params)["result"]
        client.notify("initialized", {})
        job = tmp_path / "job.yaml"
        shutil.copy(JOB, job)
        client.open(job.as_uri(), job.read_text())
        assert client.diagnostics(job.as_uri(), 1, timeout=10)
        assert hover(client, job.as_uri())["id"]
        assert rss_mib(client.proc.pid) < 300
        assert client.stop() == 0
    finally:
        client.kill()


def test_fifty_thousand_watched_file_changes_do_not_block_hover(client: RawClient, tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    shutil.copy(JOB, job)
    client.initialize(tmp_path)
    client.open(job.as_uri(), job.read_text())
    (bad,) = [d for d in client.diagnostics(job.as_uri(), 1) if d["code"] == "invalid-quantity"]
    changes = [{"uri": (tmp_path / f"gone-{i}.yaml").as_uri(), "type": 3} for i in range(50_000)]
    client.notify("workspace/didChangeWatchedFiles", {"changes": changes})
    t0 = time.monotonic()
    found = client.call(
        "textDocument/hover", {"textDocument": {"uri": job.as_uri()}, "position": bad["range"]["start"]}, timeout=10
    )
    assert "invalid-quantity" in found["result"]["contents"]["value"]
    assert time.monotonic() - t0 < 3
    assert client.stop(30) == 0
