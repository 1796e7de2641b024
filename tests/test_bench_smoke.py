"""The benchmark's plumbing (not a timed test), and guards for the run loop's speed-ups."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from kubelint_ml.engine.core import Context
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.findings import ObjectRef
from kubelint_ml.input.objects import K8sObject
from kubelint_ml.run.config import Config
from kubelint_ml.run.inputs import RunInputs
from kubelint_ml.run.lint import run

ROOT = Path(__file__).resolve().parent.parent
POD = b"""apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
  - name: main
    image: pytorch
    resources:
      requests: {memory: 1Gi}
"""
CONFIGMAP = b"""apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: b}
"""


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["bench_run"]


@pytest.fixture()
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "team").mkdir(parents=True)
    (src / "team" / "pod.yaml").write_bytes(POD)
    (src / "cm.yml").write_bytes(CONFIGMAP)
    (src / "notes.tsv").write_text("not a manifest\n")
    (src / ".hidden").mkdir()
    (src / ".hidden" / "x.yaml").write_bytes(POD)
    return src


def test_corpus_copies_the_manifests_only(bench, source: Path, tmp_path: Path) -> None:
    dst = tmp_path / "corpus-x1"
    corpus = bench.build_corpus(source, dst, 1)
    files = sorted(str(p.relative_to(dst)) for p in dst.rglob("*") if p.is_file() and p.name != ".stamp")
    assert files == ["copy000/cm.yml", "copy000/team/pod.yaml"]
    assert (corpus.files, corpus.bytes) == (2, len(POD) + len(CONFIGMAP))
    assert (dst / "copy000" / "team" / "pod.yaml").read_bytes() == POD


def test_corpus_replicates_and_is_rebuilt_when_the_source_changes(bench, source: Path, tmp_path: Path) -> None:
    dst = tmp_path / "corpus-x3"
    assert bench.build_corpus(source, dst, 3).files == 6
    assert sorted(p.name for p in dst.iterdir() if p.is_dir()) == ["copy000", "copy001", "copy002"]
    (dst / "copy001" / "cm.yml").write_bytes(b"stale")
    bench.build_corpus(source, dst, 3)  # unchanged source: reused as it is
    assert (dst / "copy001" / "cm.yml").read_bytes() == b"stale"
    (source / "cm.yml").write_bytes(CONFIGMAP + b"# edited\n")
    bench.build_corpus(source, dst, 3)
    assert (dst / "copy001" / "cm.yml").read_bytes() == CONFIGMAP + b"# edited\n"


def _json_output(paths: list[str], jobs: int) -> bytes:
    from kubelint_ml.report import render

    result, _ = run(paths, RunInputs(Config(), load_builtin_rules(), jobs=jobs))
    return render("json", result).encode()


def test_parallel_output_compares_equal_to_sequential(bench, source: Path, tmp_path: Path, force_parallel) -> None:
    dst = tmp_path / "corpus-x2"
    bench.build_corpus(source, dst, 2)
    seq = _json_output([str(dst)], 1)
    par = _json_output([str(dst)], 2)
    assert bench.compare_outputs(seq, par) == []
    found = json.loads(seq)["findings"]
    assert sorted(
        {(f["file"].split("/")[-3], f["rule"], f["line"]) for f in found if f["rule"] == "missing-memory-limit"}
    ) == [
        ("copy000", "missing-memory-limit", 8),
        ("copy001", "missing-memory-limit", 8),
    ]


def test_compare_outputs_names_the_differences(bench) -> None:
    def doc(findings: list[dict]) -> bytes:
        return json.dumps({"findings": findings, "summary": {"findings": len(findings)}}).encode()

    a = {"rule": "missing-memory-limit", "file": "x.yaml", "line": 6}
    b = {"rule": "besteffort-qos", "file": "x.yaml", "line": 1}
    assert bench.compare_outputs(doc([a]), doc([a])) == []
    assert bench.compare_outputs(doc([a, b]), doc([a])) == [
        "summary differs: {'findings': 2} != {'findings': 1}",
        "2 findings != 1 findings",
    ]
    assert bench.compare_outputs(doc([a]), doc([b])) == [
        "finding 0: x.yaml:6 missing-memory-limit != x.yaml:1 besteffort-qos",
    ]
    assert bench.compare_outputs(b"{}", b"not json")[0].startswith("not JSON")


def test_template_cache_is_not_fooled_by_a_reused_object_id() -> None:
    """A dead object's id may be reused by the next one: its (empty) templates must not be served."""
    ctx = Context()
    pod = K8sObject(
        {"kind": "Pod", "spec": {"containers": [{"name": "main"}]}}, {}, (), ObjectRef("v1", "Pod"), "x.yaml", 0
    )
    other = K8sObject({"kind": "ConfigMap"}, {}, (), ObjectRef("v1", "ConfigMap"), "x.yaml", 0)
    ctx._templates[id(pod)] = (other, [])  # as if a ConfigMap had lived at this address
    assert [c.name for t in ctx.templates(pod) for c in t.containers] == ["main"]


def test_remembered_field_paths_keep_bool_and_int_keys_apart() -> None:
    from kubelint_ml.input.loader import render_path

    assert render_path(("spec", "containers", 1, "resources")) == "spec.containers[1].resources"
    assert render_path(("data", 1)) == "data[1]"
    assert render_path(("data", True)) != render_path(("data", 1))
    assert render_path(("data", True)) == "data[True]"


def test_findings_cross_the_worker_boundary_unchanged() -> None:
    import pickle

    from kubelint_ml.findings import Finding
    from kubelint_ml.run.parallel import _encode, _rebuild

    f = Finding(
        "missing-memory-limit",
        "warning",
        "Pod/x: container 'a' has no memory limit",
        "Set it.",
        "x.yaml",
        8,
        5,
        "spec.containers[0].resources",
        ObjectRef("v1", "Pod", "ns", "x"),
        "a",
        2,
        suppressed="reviewed",
        data={"limit": None},
    )
    bare = Finding("parse-error", "error", "invalid YAML", "Fix it.", "y.yaml", 1, 1)
    assert _rebuild(pickle.loads(pickle.dumps([_encode(f), _encode(bare)])), {}) == [f, bare]


def test_the_context_scan_knows_every_context_kind() -> None:
    import re

    from kubelint_ml.engine.context import _CONTEXT_RE, CONTEXT_KINDS
    from kubelint_ml.run.facts import mentions_context

    kinds = re.search(rb"\(([A-Za-z|]+)\)", _CONTEXT_RE.pattern).group(1).split(b"|")
    assert sorted(kinds) == sorted(k.encode() for k in CONTEXT_KINDS)
    # the literal start lets the engine scan for it (a leading optional quote would not)
    assert _CONTEXT_RE.pattern.startswith(b"kind")
    assert mentions_context(b"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nvalue: 1\n")
    assert mentions_context(b'{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate"}')
    assert mentions_context(b"kind: 'DeviceClass'\n")
    assert not mentions_context(b"kind: Pod\nmetadata: {name: PriorityClass}\n")
    assert not mentions_context(b"kind: ResourceClaimTemplates\n")


def test_every_case_writes_its_own_output_file(bench) -> None:
    # The parallel run's output is compared with the sequential run's: they must never share a file.
    names = ["parse floor", "check -j1", "check (default -j2)", "check one.yaml", "checkov"]
    slugs = [bench.Case(n, 10, []).slug() for n in names]
    assert slugs == ["parse-floor", "check-j1", "check-default-j2", "check-one.yaml", "checkov"]
    assert len(set(slugs)) == len(slugs)


def test_time_after_start_up_is_the_median_of_per_round_differences(bench) -> None:
    def case(*walls: float):
        c = bench.Case("x", 1, [])
        c.samples = [bench.Sample(w, w, 0.0, 0) for w in walls]
        return c

    # A slow spell in round 2 falls on both cases of that round.
    lint, start = case(1.0, 2.0, 1.1), case(0.1, 1.0, 0.1)
    assert lint.median_after(start) == pytest.approx(1.0)
    assert lint.median() - start.median() == pytest.approx(1.0)
    assert case(1.0, 3.0, 1.2).median_after(case(0.1, 2.0, 0.1)) == pytest.approx(1.0)


@pytest.mark.slow
def test_admission_bench_runs_serve_and_reports_every_point(tmp_path, corpus):
    # The webhook bench's plumbing on a short run: it starts `kubelint-ml serve`, answers come back,
    # the rows are written. How fast is not asserted here (bench/README.md).
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI makes the bench's certificate (apt-get install openssl)")
    out = tmp_path / "rows.json"
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "admission.py"), "--clients", "1", "--clients", "4"]
        + ["--seconds", "0.5", "--warm", "0.2", "--config", str(ROOT / "fixtures/policies/bench.yaml")]
        + ["--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads(out.read_text())
    assert [(row["stack"], row["clients"]) for row in rows] == [("serve", 1), ("serve", 4)]
    assert all(row["per_second"] > 0 and row["p99_ms"] >= row["p50_ms"] > 0 for row in rows)


@pytest.mark.slow
def test_usage_bench_sizes_memory_cpu_and_gpu_and_times_the_plain_queries():
    # The usage bench's plumbing on a small TSDB (a real Prometheus): every container is sized with its
    # memory and CPU, the GPU container with its GPU memory, the baseline's queries all answer, and the
    # last line is the JSON with the bench's keys. How fast is not asserted here (bench/README.md).
    import shutil
    import subprocess

    sys.path.insert(0, str(ROOT / "tests"))
    import promserver

    why = promserver.missing()
    if why:
        pytest.skip(why)
    shape = ["--workloads", "4", "--containers", "2", "--namespaces", "2", "--days", "1", "--step", "60"]
    work = ROOT / "bench" / "work" / "usage-4x2-2ns-1d-60s-mem-cpu-gpu"
    try:
        r = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "usage.py"), *shape, "--rounds", "1"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert r.returncode == 0, r.stderr[-2000:]
        lines = r.stdout.strip().splitlines()
        assert "8 containers sized (8 with cpu, 4 with GPU memory)" in lines[-2], lines[-2]
        result = json.loads(lines[-1])
        keys = ["workloads", "containers", "namespaces", "days", "step", "queryStep", "concurrency", "samples"]
        keys += ["queries", "seconds", "median", "serverCpu", "clientCpu", "load"]
        assert list(result)[: len(keys)] == keys
        assert result["samples"] == 2 * 4 * 2 * 1440 + 2 * 4 * 1440
        assert result["plainMedian"] > 0 and len(result["plainSeconds"]) == 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
