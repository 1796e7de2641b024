"""A real ``kubelint-ml serve`` process on 127.0.0.1 for the admission tests.

The certificate is made by the openssl CLI (tests that need it skip, saying
so, when it is missing); the server runs as a subprocess on a free port and is
always stopped, with a bounded wait.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def need_server_stack() -> None:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI is not installed (it makes the test certificate; .ci/run installs it)")
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        pytest.skip("uvicorn is not installed (pip install -e '.[test]')")


def make_cert(directory: Path, name: str = "tls") -> tuple[Path, Path]:
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            f"/CN={name}",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert, key


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def review_body(
    obj: Any, uid: str = "u-1", namespace: str | None = None, operation: str = "CREATE", dry_run: bool = False
) -> bytes:
    api = str(obj.get("apiVersion", "")) if isinstance(obj, dict) else ""
    group, _, version = api.rpartition("/")
    request: dict[str, Any] = {
        "uid": uid,
        "operation": operation,
        "dryRun": dry_run,
        "kind": {"group": group, "version": version, "kind": obj.get("kind", "") if isinstance(obj, dict) else ""},
        "object": obj,
    }
    if namespace is None and isinstance(obj, dict):
        namespace = (obj.get("metadata") or {}).get("namespace")
    if namespace:
        request["namespace"] = namespace
    return json.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}, default=str
    ).encode()


class Webhook:
    """``kubelint-ml serve`` as a subprocess; use as a context manager."""

    def __init__(
        self, tmp: Path, config: Path | None = None, mode: str | None = None, cert: tuple[Path, Path] | None = None
    ) -> None:
        self.tmp = tmp
        self.cert, self.key = cert or make_cert(tmp)
        self.port = free_port()
        self.config = config
        self.log_path = tmp / f"serve-{self.port}.log"
        args = [
            sys.executable,
            "-m",
            "kubelint_ml",
            "serve",
            "--cert",
            str(self.cert),
            "--key",
            str(self.key),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--reload-interval",
            "0.2",
        ]
        if config is not None:
            args += ["--config", str(config)]
        if mode:
            args += ["--mode", mode]
        self.args = args
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Webhook:
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.args, cwd=self.tmp, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited with {self.proc.returncode}: {self.logs()}")
            try:
                if self.get("/healthz")[0] == 200:
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise AssertionError(f"serve did not start: {self.logs()}")

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self, timeout: float = 30) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
        return self.proc.returncode

    def logs(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_records(self) -> list[dict]:
        return [json.loads(line) for line in self.logs().splitlines() if line.startswith("{")]

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))

    def connection(self, timeout: float = 10) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context(), timeout=timeout)

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        timeout: float = 10,
        conn: http.client.HTTPSConnection | None = None,
    ) -> tuple[int, bytes]:
        own = conn is None
        conn = conn or self.connection(timeout)
        try:
            headers = {"Content-Type": "application/json"} if body is not None else {}
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            if own:
                conn.close()

    def get(self, path: str) -> tuple[int, bytes]:
        return self.request("GET", path)

    def review(self, body: bytes, conn: http.client.HTTPSConnection | None = None) -> dict:
        status, data = self.request("POST", "/validate", body, conn=conn)
        assert status == 200, (status, data[:500])
        return json.loads(data)["response"]

    def metric(self, line_start: str) -> float:
        text = self.get("/metrics")[1].decode()
        for line in text.splitlines():
            if line.startswith(line_start + " "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0


def write_config(path: Path, data: dict) -> Path:
    import yaml

    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False))
    os.replace(tmp, path)  # as a ConfigMap volume's symlink swap: never half-written
    return path
