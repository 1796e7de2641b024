"""A real VictoriaMetrics for the tests: Debian's ``victoria-metrics`` on 127.0.0.1, fed the same
series as the Prometheus of tests/promserver.py through its Prometheus text import
(``/api/v1/import/prometheus``, timestamps in milliseconds), then flushed so queries see them.

Without the binary (Debian/Ubuntu: ``apt-get install victoria-metrics``; ``.ci/run`` installs it),
:func:`missing` says why and the tests that need it are skipped.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request

from tests.promserver import Data, free_port


def missing() -> str | None:
    if shutil.which("victoria-metrics") is None:
        return "victoria-metrics is not installed (apt-get install victoria-metrics; .ci/run installs it)"
    return None


def exposition(data: Data) -> str:
    """Every sample as a Prometheus text line with its timestamp in milliseconds."""
    out = []
    for s in data.series:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
        for t, v in s.samples:
            if math.isnan(v):
                text = "NaN"
            elif math.isinf(v):
                text = "+Inf" if v > 0 else "-Inf"
            else:
                text = repr(float(v))
            out.append(f"{s.metric}{{{labels}}} {text} {int(round(t * 1000))}")
    return "\n".join(out) + "\n"


class Server:
    """``victoria-metrics`` on 127.0.0.1 with its own storage; stop() always ends it."""

    def __init__(self, workdir: str, *, extra: list[str] | None = None, ready_timeout: float = 30.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = os.path.join(workdir, f"vm-{self.port}")
        args = [
            "victoria-metrics",
            f"-storageDataPath={self.data}",
            f"-httpListenAddr=127.0.0.1:{self.port}",
            "-retentionPeriod=100y",
            "-search.disableCache",  # answers computed from the data, never from an earlier answer
            "-search.latencyOffset=0s",  # samples up to now are queryable (the default hides the last 30s)
            "-loggerLevel=ERROR",
            *(extra or []),
        ]
        self.log = open(os.path.join(workdir, f"vm-{self.port}.log"), "wb")  # noqa: SIM115 - closed by stop()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._wait(ready_timeout)
        except BaseException:
            self.stop()
            raise

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"victoria-metrics exited with {self.proc.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"victoria-metrics not ready within {timeout}s; see {self.log.name}")

    def load(self, data: Data, timeout: float = 120) -> None:
        body = exposition(data).encode()
        request = urllib.request.Request(self.url + "/api/v1/import/prometheus", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=timeout) as r:
            assert r.status in (200, 204), r.status
        with urllib.request.urlopen(self.url + "/internal/force_flush", timeout=timeout) as r:
            assert r.status == 200

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.log.close()
