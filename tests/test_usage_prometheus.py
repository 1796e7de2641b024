"""Usage rules, report and snapshot against a real Prometheus (see tests/promserver.py).

The series below have known medians and peaks: replicas, a restarted container
(a second series for the same pod), a gap, a CronJob's runs, DCGM series in
both label styles, kube-state-metrics labels, owners and an OOM kill,
cAdvisor's pod-level and pause-container series, a NaN series, and series
of look-alike pods that belong to no linted workload.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import promserver

pytestmark = pytest.mark.skipif(promserver.missing() is not None, reason=promserver.missing() or "")

END = 1_790_000_000  # fixed: the queries name it (usage.end), so the data is always inside the lookback
STEP = 60
N = 1440  # one day at one sample a minute
GI = 1024**3
MI = 1024**2
ALLOWED_USER, ALLOWED_PASSWORD = "kubelint", "s3cret-pass"
BCRYPT = "$2b$04$/HbTbEzYPfNOKgRAImAwYuuzLfk/30sTx5lq3966ZM668ReqFTjwe"  # of ALLOWED_PASSWORD


def _times(count: int = N, skip: range | None = None) -> list[int]:
    return [END - k * STEP for k in range(count - 1, -1, -1) if not (skip and k in skip)]


def _walk(seed: int, times: list[int], low: float, high: float, peak: float | None = None) -> list[tuple[int, float]]:
    rng = random.Random(seed)
    values = [(t, float(int(rng.uniform(low, high)))) for t in times]
    if peak is not None:
        i = len(values) // 3
        values[i] = (values[i][0], float(peak))
    return values


def MIXED_GOOD() -> list[tuple[int, float]]:  # noqa: N802 - a constant, built on demand
    return _walk(70, _times(), 1 * GI, 2 * GI, 3 * GI)


def build() -> tuple[promserver.Data, dict[str, list[list[tuple[int, float]]]]]:
    """The series, and per workload container the memory series (raw samples) a reference computes from."""
    d = promserver.Data()
    ref: dict[str, list[list[tuple[int, float]]]] = {}
    mem = "container_memory_working_set_bytes"

    def cad(ns: str, pod: str, container: str, samples: list, **extra: str) -> list[list[tuple[int, float]]]:
        d.add(mem, {"namespace": ns, "pod": pod, "container": container, "job": "kubelet", **extra}, samples)
        return [list(samples)]

    # Job train: two replicas; train-x7k2p restarted (a second series) and has a 3-hour gap.
    times = _times(skip=range(300, 480))
    first, second = times[: len(times) // 2], times[len(times) // 2 :]
    ref["train/trainer"] = (
        cad("ml", "train-x7k2p", "trainer", _walk(1, first, 8 * GI, 14 * GI, 20 * GI), id="/a")
        + cad("ml", "train-x7k2p", "trainer", _walk(2, second, 8 * GI, 14 * GI), id="/b")
        + cad("ml", "train-m4q9z", "trainer", _walk(3, _times(), 9 * GI, 13 * GI, 18 * GI))
    )
    # Not containers: the pod-level series and the pause container.
    cad("ml", "train-x7k2p", "", _walk(4, _times(), 90 * GI, 99 * GI))
    cad("ml", "train-x7k2p", "POD", _walk(5, _times(), 90 * GI, 99 * GI))
    # Look-alikes: another Job's pod, and the same pod name in another namespace.
    cad("ml", "train-big-abcde", "trainer", _walk(6, _times(), 60 * GI, 70 * GI))
    cad("other", "train-x7k2p", "trainer", _walk(7, _times(), 60 * GI, 70 * GI))
    d.add(
        "kube_pod_labels",
        {"namespace": "ml", "pod": "train-x7k2p", "label_batch_kubernetes_io_job_name": "train"},
        [(t, 1.0) for t in _times()],
    )
    cpu = []
    total = 0.0
    for t in _times():
        total += 2.0 * STEP
        cpu.append((t, total))
    d.add("container_cpu_usage_seconds_total", {"namespace": "ml", "pod": "train-m4q9z", "container": "trainer"}, cpu)

    # PyTorchJob llama, Worker x2: 28Gi used of 256Gi requested; GPUs at 9000 of 81920 MiB.
    ref["llama/pytorch"] = []
    for i in range(2):
        pod = f"llama-worker-{i}"
        ref["llama/pytorch"] += cad("ml", pod, "pytorch", _walk(10 + i, _times(), 27 * GI, 29 * GI, 31 * GI))
        d.add(
            "kube_pod_labels",
            {
                "namespace": "ml",
                "pod": pod,
                "label_training_kubeflow_org_job_name": "llama",
                "label_training_kubeflow_org_replica_type": "worker",
            },
            [(t, 1.0) for t in _times()],
        )
        used = _walk(20 + i, _times(), 2000, 8000, 9000)
        if i == 0:
            labels = {"namespace": "ml", "pod": pod, "container": "pytorch"}
        else:  # scraped without honor_labels: the pod's labels as exported_*
            labels = {
                "namespace": "gpu-operator",
                "exported_namespace": "ml",
                "exported_pod": pod,
                "exported_container": "pytorch",
            }
        labels |= {"gpu": "0", "UUID": f"GPU-{i}", "modelName": "NVIDIA A100-SXM4-80GB"}
        d.add("DCGM_FI_DEV_FB_USED", labels, used)
        d.add("DCGM_FI_DEV_FB_FREE", labels, [(t, 81920.0 - v) for t, v in used])

    # Deployment serve: sized right; its GPU is well used.
    ref["serve/server"] = cad("ml", "serve-7d9f8c6b5-x2x4z", "server", _walk(30, _times(), 3.5 * GI, 4.5 * GI, 5 * GI))
    d.add(
        "kube_pod_owner",
        {
            "namespace": "ml",
            "pod": "serve-7d9f8c6b5-x2x4z",
            "owner_kind": "ReplicaSet",
            "owner_name": "serve-7d9f8c6b5",
        },
        [(t, 1.0) for t in _times()],
    )
    used = _walk(31, _times(), 50000, 60000)
    labels = {"namespace": "ml", "pod": "serve-7d9f8c6b5-x2x4z", "container": "server", "gpu": "0"}
    d.add("DCGM_FI_DEV_FB_USED", labels, used)
    d.add("DCGM_FI_DEV_FB_FREE", labels, [(t, 81920.0 - v) for t, v in used])

    # Job oomer: the peak is under the limit, but it was OOM-killed (and restarted twice).
    ref["oomer/main"] = cad("ml", "oomer-q8w7e", "main", _walk(40, _times(), 1.2 * GI, 2.2 * GI, 3 * GI))
    ksm = {"namespace": "ml", "pod": "oomer-q8w7e", "container": "main"}
    d.add(
        "kube_pod_container_status_restarts_total",
        ksm,
        [(t, 0.0 if k < 500 else 1.0 if k < 900 else 2.0) for k, t in enumerate(_times())],
    )
    d.add(
        "kube_pod_container_status_last_terminated_reason",
        {**ksm, "reason": "OOMKilled"},
        [(t, 0.0 if k < 500 else 1.0) for k, t in enumerate(_times())],
    )

    # DCGM_FI_DEV_FB_USED without FB_FREE: the device's size is unknown, GPU memory not judged.
    d.add("DCGM_FI_DEV_FB_USED", {**ksm, "gpu": "0"}, _walk(41, _times(), 100, 200))

    # Job fresh: 30 samples, too few to judge.
    cad("ml", "fresh-a1b2c", "main", _walk(50, _times(30), 1 * GI, 2 * GI))
    # CronJob nightly: two runs, pooled.
    ref["nightly/report"] = cad(
        "ml", "nightly-29000000-abcde", "report", _walk(60, _times()[:600], 0.5 * GI, 1 * GI)
    ) + cad("ml", "nightly-29001440-fghij", "report", _walk(61, _times()[800:], 0.9 * GI, 1.2 * GI))
    # A NaN series in its own namespace.
    cad("broken", "bad-abcde", "main", [(t, float("nan")) for t in _times(100)])
    # Job mixed: one good replica, one whose exporter wrote a NaN and one an infinity (left out,
    # the good one sized); its CPU counter was reset halfway (a restart): rate() takes it in.
    cad("mixed", "mixed-abcde", "main", MIXED_GOOD())
    nan_at = [(t, float("nan") if k == 700 else 1.5 * GI) for k, t in enumerate(_times())]
    cad("mixed", "mixed-fghij", "main", nan_at)
    cad("mixed", "mixed-klmno", "main", [(t, float("inf") if k == 10 else 1.0 * GI) for k, t in enumerate(_times())])
    counter, total = [], 0.0
    for k, t in enumerate(_times()):
        total = 0.0 if k == N // 2 else total + 0.5 * STEP
        counter.append((t, total))
    d.add(
        "container_cpu_usage_seconds_total", {"namespace": "mixed", "pod": "mixed-abcde", "container": "main"}, counter
    )
    return d, ref


MANIFESTS = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: pytorch/pytorch
          resources:
            requests:
              memory: 6Gi          # M-train-request
            limits:
              memory: 16Gi         # M-train-limit
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llama
  namespace: ml
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: pytorch
              image: pytorch/pytorch
              resources:
                requests:
                  memory: 256Gi    # M-llama-request
                  nvidia.com/gpu: 1
                limits:
                  memory: 300Gi
                  nvidia.com/gpu: 1  # M-llama-gpu
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve
  namespace: ml
spec:
  selector:
    matchLabels: {app: serve}
  template:
    metadata:
      labels: {app: serve}
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai
          resources:
            requests:
              memory: 5Gi
            limits:
              memory: 8Gi
              nvidia.com/gpu: 1
---
apiVersion: batch/v1
kind: Job
metadata:
  name: oomer
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: main
          image: busybox
          resources:
            requests:
              memory: 2Gi
            limits:
              memory: 4Gi          # M-oomer-limit
---
apiVersion: batch/v1
kind: Job
metadata:
  name: fresh
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          resources:
            requests:
              memory: 1Mi
            limits:
              memory: 2Mi
---
apiVersion: batch/v1
kind: Job
metadata:
  name: ghost
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          resources:
            limits:
              memory: 1Mi
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
  namespace: ml
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: report
              image: busybox
              resources:
                requests:
                  memory: 1Gi
                limits:
                  memory: 2Gi
"""


def _line(marker: str) -> int:
    return next(i for i, line in enumerate(MANIFESTS.splitlines(), 1) if marker in line)


@pytest.fixture(scope="session")
def prom_data(tmp_path_factory):
    data, ref = build()
    work = tmp_path_factory.mktemp("prometheus")
    return promserver.backfill(data, str(work)), ref, work


@pytest.fixture(scope="session")
def prom(prom_data):
    tsdb, _, work = prom_data
    server = promserver.Server(tsdb, str(work))
    yield server
    server.stop()


@pytest.fixture
def project(tmp_path):
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "workloads.yaml").write_text(MANIFESTS)
    (tmp_path / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n")
    return tmp_path


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def _run(cwd: Path, *args: str, env: dict | None = None, timeout: float = 120) -> Result:
    """The command line, in this process (click's runner), from ``cwd``."""
    from click.testing import CliRunner

    from kubelint_ml.cli import main

    full: dict = {k: None for k in os.environ if k.startswith("KUBELINT_ML_PROMETHEUS_")}
    full.update(env or {})
    full["NO_COLOR"] = "1"
    here = os.getcwd()
    os.chdir(cwd)
    try:
        r = CliRunner(env=full).invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(here)
    return Result(r.exit_code, r.stdout, r.stderr)


USAGE_RULES = (
    "memory-limit-below-peak",
    "memory-request-above-usage",
    "memory-request-below-median",
    "gpu-memory-underused",
)


def _usage_findings(out: str) -> list[tuple[str, int]]:
    doc = json.loads(out)
    return sorted((f["rule"], f["line"]) for f in doc["findings"] if f["rule"] in USAGE_RULES)


def test_rules_fire_where_the_numbers_say(prom, project):
    r = _run(project, "check", "k8s", "--prometheus", prom.url, "--lookback", "1d", "-f", "json")
    assert r.returncode == 1, r.stderr
    assert _usage_findings(r.stdout) == sorted(
        [
            ("memory-limit-below-peak", _line("M-train-limit")),  # peak 20Gi > 16Gi
            ("memory-request-below-median", _line("M-train-request")),  # median ~11Gi > 6Gi
            ("memory-request-above-usage", _line("M-llama-request")),  # 256Gi vs median ~28Gi
            ("gpu-memory-underused", _line("M-llama-gpu")),  # 9000 of 81920 MiB
            ("memory-limit-below-peak", _line("M-oomer-limit")),  # OOM-killed
        ]
    )
    doc = json.loads(r.stdout)
    messages = {(f["rule"], f["line"]): f["message"] for f in doc["findings"]}
    assert "below the observed peak 20Gi over 1d" in messages[("memory-limit-below-peak", _line("M-train-limit"))]
    assert "OOM-killed in the last 1d" in messages[("memory-limit-below-peak", _line("M-oomer-limit"))]
    assert "peaked at 8.8Gi of 80Gi (11%)" in messages[("gpu-memory-underused", _line("M-llama-gpu"))]


def test_verbose_names_workloads_without_series_or_samples(prom, project):
    r = _run(project, "check", "k8s", "--prometheus", prom.url, "--lookback", "1d", "-v", "-q")
    fresh = len(at_step(_walk(50, _times(30), 1, 2)))
    assert fresh == 6
    assert f"Job.batch/ml/fresh: container 'main': {fresh} memory samples, fewer than 60" in r.stderr
    assert "Job.batch/ml/ghost: no pods in namespace ml" in r.stderr
    assert "Job.batch/ml/oomer: container 'main': no DCGM_FI_DEV_FB_FREE beside" in r.stderr
    assert "queries to " + prom.url in r.stderr


QUERY_STEP = 300  # usage.step's default, 5m
LOOKBACK_DELTA = 300  # the server's default --query.lookback-delta


def at_step(series: list[tuple[int, float]], step: int = QUERY_STEP, lookback: int = 86400) -> list[float]:
    """The series read at every multiple of the step in (END - lookback, END]: at each, its latest
    raw sample no older than the lookback delta (what the subquery m[lookback:step] evaluates)."""
    out = []
    first = (END - lookback) // step * step + step
    for p in range(first, END + 1, step):
        seen = [v for t, v in series if p - LOOKBACK_DELTA <= t <= p]
        if seen:
            out.append(seen[-1])
    return out


def _reference(series: list[list[tuple[int, float]]]) -> dict[str, float]:
    """numpy's default quantiles (linear) over the pooled samples at the step; the peak over every raw sample."""
    values = [v for s in series for v in at_step(s)]
    q = statistics.quantiles(values, n=100, method="inclusive")
    return {
        "median": statistics.median(values),
        "p90": q[89],
        "p99": q[98],
        "max": max(v for s in series for _, v in s),
        "samples": len(values),
    }


def test_report_matches_a_reference_on_the_same_samples(prom, prom_data, project):
    _, ref, _ = prom_data
    r = _run(project, "usage", "report", "k8s", "--prometheus", prom.url, "--lookback", "1d", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = {f"{row['name']}/{row['container']}": row for row in json.loads(r.stdout)["rows"]}
    for key, values in ref.items():
        want = _reference(values)
        got = rows[key]["usage"]["memory"]
        assert got["samples"] == want["samples"], key
        for stat in ("median", "p90", "p99", "max"):
            assert got[stat] == pytest.approx(want[stat], rel=1e-12), (key, stat)
    assert rows["train/trainer"]["usage"]["pods"] == 2  # the look-alikes are not pooled in
    assert rows["nightly/report"]["usage"]["pods"] == 2  # both runs
    assert rows["train/trainer"]["usage"]["cpu"]["median"] == pytest.approx(2.0)
    assert rows["oomer/main"]["usage"]["oomKilled"] is True and rows["oomer/main"]["usage"]["restarts"] == 2
    assert rows["oomer/main"]["usage"]["gpuMemory"]["deviceMemory"] == 0
    assert rows["llama/pytorch"]["usage"]["gpuMemory"] == {
        "samples": 2 * N,
        "devices": 2,
        "peak": 9000 * MI,
        "deviceMemory": 81920 * MI,
    }
    assert rows["train/trainer"]["recommended"]["memory"]["limit"] == 24 * GI  # 20Gi + 20%, rounded up
    assert rows["ghost/main"]["usage"] is None and not rows["ghost/main"]["judged"]
    text = _run(project, "usage", "report", "k8s", "--prometheus", prom.url, "--lookback", "1d")
    assert text.returncode == 0
    line = next(x for x in text.stdout.splitlines() if x.startswith("Job.batch/ml/train "))
    assert "20Gi" in line and "6Gi" in line and "16Gi" in line
    md = _run(project, "usage", "report", "k8s", "--prometheus", prom.url, "--lookback", "1d", "--format", "markdown")
    assert md.returncode == 0 and "| workload | container |" in md.stdout


def test_snapshot_gives_byte_identical_findings(prom, project):
    live = _run(project, "check", "k8s", "--prometheus", prom.url, "--lookback", "1d", "-f", "json")
    exported = _run(project, "usage", "export", "k8s", "--prometheus", prom.url, "--lookback", "1d", "-o", "snap.json")
    assert exported.returncode == 0, exported.stderr
    snap = json.loads((project / "snap.json").read_text())
    assert snap["kind"] == "kubelint-ml/usage-snapshot" and snap["version"] == 2
    assert snap["window"] == {"lookback": "1d", "step": "5m", "end": END}
    offline = _run(project, "check", "k8s", "--usage", "snap.json", "-f", "json")
    assert offline.returncode == live.returncode == 1
    assert offline.stdout == live.stdout
    for fmt in ("text", "sarif"):
        a = _run(project, "check", "k8s", "--prometheus", prom.url, "--lookback", "1d", "-f", fmt)
        b = _run(project, "check", "k8s", "--usage", "snap.json", "-f", fmt)
        assert a.stdout == b.stdout


def test_client_endpoints(prom):
    from kubelint_ml.usage.prometheus import Prometheus

    client = Prometheus(prom.url)
    sel = 'container_memory_working_set_bytes{namespace="ml",pod="fresh-a1b2c",container="main"}'
    series = client.query_range(sel, END - 29 * STEP, END, STEP)
    assert [len(s["values"]) for s in series] == [30]
    found = client.series([sel], END - 86400, END)
    assert [s["pod"] for s in found] == ["fresh-a1b2c"]
    assert client.queries == 2


def test_config_usage_section_and_no_source(prom, project):
    (project / ".kubelint-ml.yaml").write_text(f"usage:\n  prometheus: {prom.url}\n  end: {END}\n  lookback: 1d\n")
    r = _run(project, "check", "k8s", "-f", "json")
    assert len(_usage_findings(r.stdout)) == 5
    (project / ".kubelint-ml.yaml").write_text("")
    r = _run(project, "check", "k8s", "-f", "json")
    assert _usage_findings(r.stdout) == []  # the usage rules are on only with a source


def test_mapping_override_in_config(prom, project):
    # Map the ghost Job onto the fresh pod by config: its samples (at the config's 1-minute step) count for it.
    (project / ".kubelint-ml.yaml").write_text(
        f"usage:\n  end: {END}\n  step: 1m\n  minSamples: 10\n  workloads:\n"
        "    - {kind: Job, name: ghost, pods: 'fresh-.*'}\n"
    )
    r = _run(project, "usage", "report", "k8s", "--prometheus", prom.url, "--lookback", "1d", "-f", "json")
    rows = {f"{row['name']}/{row['container']}": row for row in json.loads(r.stdout)["rows"]}
    fresh = at_step(_walk(50, _times(30), 1, 2), step=60)
    assert rows["ghost/main"]["usage"]["memory"]["samples"] == len(fresh) == 29  # the sample at END is after 23:59
    # --step wins over the config
    r = _run(
        project, "usage", "report", "k8s", "--prometheus", prom.url, "--lookback", "1d", "--step", "10m", "-f", "json"
    )
    rows = {f"{row['name']}/{row['container']}": row for row in json.loads(r.stdout)["rows"]}
    assert rows["ghost/main"]["usage"]["memory"]["samples"] == len(at_step(_walk(50, _times(30), 1, 2), step=600))


# ----------------------------------------------------------------------------
# Bad input: exit 2 with a clear message, nothing guessed


def _manifest(project: Path, namespace: str) -> None:
    (project / "k8s" / "workloads.yaml").write_text(
        textwrap.dedent(f"""\
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: bad
          namespace: {namespace}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: main
                  image: busybox
                  resources:
                    limits:
                      memory: 1Gi
        """)
    )


def test_nan_series_is_refused(prom, project):
    """Its only series is NaN: nothing is left to size from."""
    _manifest(project, "broken")
    r = _run(project, "check", "k8s", "--prometheus", prom.url, "--lookback", "1d")
    assert r.returncode == 2
    assert "nan" in r.stderr and "bad-abcde" in r.stderr and "nothing left to size from" in r.stderr


def test_a_nan_or_infinite_series_is_left_out_and_the_others_sized(prom, project):
    """What a real Prometheus returns for an exporter's NaN and +Inf samples: those replicas'
    statistics are not numbers, so they are named and left out; the good replica is sized, and a
    CPU counter reset halfway is taken in by rate() (never a negative rate)."""
    _manifest(project, "mixed")
    (project / "k8s" / "workloads.yaml").write_text(
        (project / "k8s" / "workloads.yaml").read_text().replace("name: bad", "name: mixed")
    )
    r = _run(project, "usage", "report", "k8s", "--prometheus", prom.url, "--lookback", "1d", "-f", "json", "-v")
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)["rows"]
    want = _reference([MIXED_GOOD()])
    assert row["judged"] and row["usage"]["memory"]["max"] == want["max"] == 3 * GI
    assert row["usage"]["memory"]["median"] == pytest.approx(want["median"], rel=1e-12)
    assert row["usage"]["cpu"]["median"] == pytest.approx(0.5)
    left_out = " ".join(row["excluded"])
    assert "mixed-fghij" in left_out and "mixed-klmno" in left_out and "mixed-abcde" not in left_out
    assert "pod mixed-fghij container main" in r.stderr and "series left out" in r.stderr
    check = _run(project, "check", "k8s", "--prometheus", prom.url, "--lookback", "1d", "-f", "json")
    assert check.returncode == 1  # sized from the good replica: its 3Gi peak is over the 1Gi limit
    assert [f["rule"] for f in json.loads(check.stdout)["findings"]].count("memory-limit-below-peak") == 1


def test_no_series_at_all_is_refused(prom, project):
    _manifest(project, "void")
    r = _run(project, "check", "k8s", "--prometheus", prom.url, "--lookback", "1d")
    assert r.returncode == 2
    assert "no container_memory_working_set_bytes series in namespace(s) void" in r.stderr


def test_unreachable_server(project):
    port = promserver.free_port()
    (project / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n  retries: 1\n  timeout: 2\n")
    r = _run(project, "check", "k8s", "--prometheus", f"http://127.0.0.1:{port}")
    assert r.returncode == 2
    assert "unreachable" in r.stderr and "2 attempts" in r.stderr


@pytest.mark.slow  # waits out time limits
def test_slow_server_times_out(project):
    with socket.socket() as listener:  # accepts connections and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        held = []
        stop = threading.Event()

        def accept() -> None:
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    held.append(listener.accept()[0])
                except OSError:
                    pass

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            (project / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n  retries: 1\n  timeout: 1\n")
            r = _run(
                project, "check", "k8s", "--prometheus", f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=60
            )
        finally:
            stop.set()
            thread.join(5)
            for c in held:
                c.close()
    assert r.returncode == 2
    assert "no answer within 1s (2 attempts)" in r.stderr


@pytest.fixture(scope="module")
def strict_prom(prom_data):
    """A second server: basic auth, and a sample limit far below a day of samples."""
    tsdb, _, work = prom_data
    server = promserver.Server(
        tsdb,
        str(work),
        extra=["--query.max-samples=500"],
        web_config=f"basic_auth_users:\n  {ALLOWED_USER}: '{BCRYPT}'\n",
    )
    yield server
    server.stop()


def test_unauthorized_and_forbidden_credentials(strict_prom, project):
    r = _run(project, "check", "k8s", "--prometheus", strict_prom.url, "--lookback", "1d")
    assert r.returncode == 2
    assert "HTTP 401 unauthorized" in r.stderr
    r = _run(
        project,
        "check",
        "k8s",
        "--prometheus",
        strict_prom.url,
        "--lookback",
        "1d",
        env={"KUBELINT_ML_PROMETHEUS_USERNAME": ALLOWED_USER, "KUBELINT_ML_PROMETHEUS_PASSWORD": "wrong"},
    )
    assert r.returncode == 2 and "HTTP 401" in r.stderr


def test_credentials_go_to_a_config_url_only_when_the_environment_names_it(strict_prom, project):
    creds = {"KUBELINT_ML_PROMETHEUS_USERNAME": ALLOWED_USER, "KUBELINT_ML_PROMETHEUS_PASSWORD": ALLOWED_PASSWORD}
    (project / ".kubelint-ml.yaml").write_text(f"usage:\n  prometheus: {strict_prom.url}\n  end: {END}\n")
    r = _run(project, "check", "k8s", "--lookback", "1d", env=creds)
    assert r.returncode == 2 and "would get the credentials" in r.stderr
    r = _run(project, "check", "k8s", "--lookback", "1d", env={**creds, "KUBELINT_ML_PROMETHEUS_URL": strict_prom.url})
    assert r.returncode == 2 and "over the server's sample limit" in r.stderr  # authenticated: the next problem


def test_sample_limit_is_reported(strict_prom, project, tmp_path):
    secret = tmp_path / "password"
    secret.write_text(ALLOWED_PASSWORD + "\n")
    r = _run(
        project,
        "check",
        "k8s",
        "--prometheus",
        strict_prom.url,
        "--lookback",
        "1d",
        env={"KUBELINT_ML_PROMETHEUS_USERNAME": ALLOWED_USER, "KUBELINT_ML_PROMETHEUS_PASSWORD_FILE": str(secret)},
    )
    assert r.returncode == 2
    assert "over the server's sample limit" in r.stderr


def test_malformed_and_foreign_snapshots(prom, project):
    exported = _run(project, "usage", "export", "k8s", "--prometheus", prom.url, "--lookback", "1d", "-o", "snap.json")
    assert exported.returncode == 0, exported.stderr
    snap = json.loads((project / "snap.json").read_text())
    cases = {
        "not json": "{",
        "wrong kind": json.dumps({**snap, "kind": "something"}),
        "newer version": json.dumps({**snap, "version": 3}),
        "negative peak": json.dumps(
            {
                **snap,
                "workloads": [
                    {
                        **snap["workloads"][0],
                        "containers": {
                            "x": {"pods": 1, "memory": {"samples": 1, "median": 1, "p90": 1, "p99": 1, "max": -1}}
                        },
                    }
                ],
            }
        ),
        "quantiles out of order": json.dumps(
            {
                **snap,
                "workloads": [
                    {
                        **snap["workloads"][0],
                        "containers": {
                            "x": {"pods": 1, "memory": {"samples": 1, "median": 5, "p90": 1, "p99": 1, "max": 9}}
                        },
                    }
                ],
            }
        ),
    }
    for name, text in cases.items():
        (project / "bad.json").write_text(text)
        r = _run(project, "check", "k8s", "--usage", "bad.json")
        assert r.returncode == 2, name
        assert "bad.json" in r.stderr, name
    (project / ".kubelint-ml.yaml").write_text("usage:\n  cluster: prod-us\n")
    (project / "other.json").write_text(json.dumps({**snap, "cluster": "prod-eu"}))
    r = _run(project, "check", "k8s", "--usage", "other.json")
    assert r.returncode == 2 and "from cluster 'prod-eu', not 'prod-us'" in r.stderr


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_https_with_a_private_ca(prom_data, project, tmp_path):
    """A server with a self-signed certificate: refused without its CA, read with it."""
    tsdb = prom_data[0]
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    server = promserver.Server(
        tsdb, str(tmp_path), tls=True, web_config=f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
    )
    try:
        r = _run(project, "usage", "report", "k8s", "--prometheus", server.url, "--lookback", "1d")
        assert r.returncode == 2 and "TLS:" in r.stderr and "CA_FILE" in r.stderr
        r = _run(
            project,
            "usage",
            "report",
            "k8s",
            "--prometheus",
            server.url,
            "--lookback",
            "1d",
            "-f",
            "json",
            env={"KUBELINT_ML_PROMETHEUS_CA_FILE": str(cert)},
        )
        assert r.returncode == 0, r.stderr
        rows = {row["name"]: row for row in json.loads(r.stdout)["rows"]}
        assert rows["train"]["usage"]["memory"]["max"] == 20 * GI
    finally:
        server.stop()
