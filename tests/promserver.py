"""A real Prometheus for the tests: series written as OpenMetrics, backfilled into a TSDB with
``promtool tsdb create-blocks-from openmetrics``, served on 127.0.0.1 by ``prometheus``.

Needs the ``prometheus`` and ``promtool`` binaries (Debian/Ubuntu: ``apt-get install
prometheus``; ``.ci/run`` installs them). Without them, :func:`missing` says why and
the tests that need them are skipped.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field

COUNTERS = {"container_cpu_usage_seconds_total", "kube_pod_container_status_restarts_total"}


def missing() -> str | None:
    for tool in ("prometheus", "promtool"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install prometheus; .ci/run installs it)"
    return None


@dataclass
class Series:
    metric: str
    labels: dict[str, str]
    samples: list[tuple[float, float]]  # (unix seconds, value)


@dataclass
class Data:
    series: list[Series] = field(default_factory=list)

    def add(self, metric: str, labels: dict[str, str], samples: list[tuple[float, float]]) -> Series:
        s = Series(metric, dict(labels), list(samples))
        self.series.append(s)
        return s

    def openmetrics(self) -> str:
        families: dict[str, list[Series]] = defaultdict(list)
        for s in self.series:
            families[s.metric].append(s)
        out = []
        for metric in sorted(families):
            if metric in COUNTERS:
                out.append(f"# TYPE {metric[: -len('_total')]} counter")
            else:
                out.append(f"# TYPE {metric} gauge")
            for s in families[metric]:
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
                for t, v in s.samples:
                    if math.isnan(v):
                        text = "NaN"
                    elif math.isinf(v):
                        text = "+Inf" if v > 0 else "-Inf"
                    else:
                        text = repr(float(v))
                    out.append(f"{metric}{{{labels}}} {text} {t:.3f}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def backfill(data: Data | str, directory: str, timeout: float = 120) -> str:
    """A TSDB under ``directory``/tsdb with the data's blocks; returns its path."""
    os.makedirs(directory, exist_ok=True)
    om = os.path.join(directory, "series.om")
    with open(om, "w", encoding="utf-8") as fh:
        fh.write(data if isinstance(data, str) else data.openmetrics())
    tsdb = os.path.join(directory, "tsdb")
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", om, tsdb],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=timeout,
    )
    return tsdb


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``prometheus`` on 127.0.0.1 serving a copy of a TSDB; stop() always ends it."""

    def __init__(
        self,
        tsdb: str,
        workdir: str,
        *,
        extra: list[str] | None = None,
        web_config: str | None = None,
        ready_timeout: float = 30.0,
        tls: bool = False,
    ) -> None:
        self.port = free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.data = data = os.path.join(workdir, f"tsdb-{self.port}")
        shutil.copytree(tsdb, data)
        config = os.path.join(workdir, f"prometheus-{self.port}.yml")
        with open(config, "w") as fh:
            fh.write("global: {}\n")
        args = [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--storage.tsdb.retention.time=100y",
            "--log.level=warn",
        ]
        if web_config:
            path = os.path.join(workdir, f"web-{self.port}.yml")
            with open(path, "w") as fh:
                fh.write(web_config)
            args.append(f"--web.config.file={path}")
        args += extra or []
        self.log = open(os.path.join(workdir, f"prometheus-{self.port}.log"), "wb")  # noqa: SIM115 - closed by stop()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._wait(ready_timeout, bool(web_config))
        except BaseException:
            self.stop()
            raise

    def _wait(self, timeout: float, auth: bool) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.proc.returncode}; see {self.log.name}")
            try:
                import ssl

                context = ssl._create_unverified_context() if self.url.startswith("https") else None
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2, context=context) as r:
                    if r.status == 200:
                        return
            except urllib.error.HTTPError as e:
                if auth and e.code == 401:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"prometheus not ready within {timeout}s; see {self.log.name}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.log.close()
