"""Sizing against a real VictoriaMetrics (Debian's ``victoria-metrics``, tests/vmserver.py), fed the
same series as the Prometheus of tests/test_usage_prometheus.py.

What the two servers answer alike, and where they differ (docs/usage.md, "VictoriaMetrics"):

* the same rules fire on the same lines; peaks, GPU memory, restarts and OOM kills are identical,
  and so is every recommended limit (the peak plus headroom);
* a container with one series gets the same count, median, p90 and p99 from both: inside
  ``quantile_over_time`` and ``count_over_time`` VictoriaMetrics reads a subquery at multiples of
  the step, as Prometheus does;
* a container with several series (replicas, a CronJob's runs, a restart) is sized from its
  samples at the step, which kubelint-ml fetches as the subquery itself (an instant query that
  answers a matrix): there VictoriaMetrics places the instants at ``t - range + k * step``, not at
  multiples of the step, so with the range kubelint-ml asks for (the window plus half a step) each
  instant is half a step earlier than Prometheus'. The pooled quantiles are exactly those of the
  samples at those instants (a reference below computes them from the raw series), differ from
  Prometheus' by about a sample's worth, and a recommended request (the median rounded up, to a
  whole GiB from 4Gi) may come out one unit apart;
* a NaN sample is not stored by VictoriaMetrics (it is its staleness marker), so a replica whose
  exporter wrote one NaN is sized from its other samples rather than left out, and a series of
  NaNs only is no series at all.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from tests import promserver, vmserver
from tests.test_usage_prometheus import END, MANIFESTS, MIXED_GOOD, USAGE_RULES, _manifest, _run, build

pytestmark = [
    pytest.mark.skipif(vmserver.missing() is not None, reason=vmserver.missing() or ""),
    pytest.mark.skipif(promserver.missing() is not None, reason=promserver.missing() or ""),
]

STEP = 300  # usage.step's default
LOOKBACK = 86400


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    data, ref = build()
    work = tmp_path_factory.mktemp("vm")
    vm = vmserver.Server(str(work))
    try:
        vm.load(data)
        prom = promserver.Server(promserver.backfill(data, str(work)), str(work))
    except BaseException:
        vm.stop()
        raise
    yield vm, prom, ref
    vm.stop()
    prom.stop()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "workloads.yaml").write_text(MANIFESTS)
    (tmp_path / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n")
    return tmp_path


def _rows(project: Path, url: str) -> dict[str, dict]:
    r = _run(project, "usage", "report", "k8s", "--prometheus", url, "--lookback", "1d", "-f", "json")
    assert r.returncode == 0, r.stderr
    return {f"{row['name']}/{row['container']}": row for row in json.loads(r.stdout)["rows"]}


def test_same_findings_peaks_and_limits_as_prometheus(servers, project) -> None:
    vm, prom, _ = servers
    found = {}
    for name, server in (("vm", vm), ("prom", prom)):
        r = _run(project, "check", "k8s", "--prometheus", server.url, "--lookback", "1d", "-f", "json")
        assert r.returncode == 1, r.stderr
        found[name] = sorted(
            (f["rule"], f["line"], f["data"].get("peak"))
            for f in json.loads(r.stdout)["findings"]
            if f["rule"] in USAGE_RULES
        )
    assert found["vm"] == found["prom"] and len(found["vm"]) == 5
    a, b = _rows(project, vm.url), _rows(project, prom.url)
    assert a.keys() == b.keys()
    for key in a:
        ua, ub = a[key]["usage"], b[key]["usage"]
        assert (ua is None) == (ub is None), key
        if ua is None:
            continue
        assert ua["pods"] == ub["pods"], key
        assert ua.get("gpuMemory") == ub.get("gpuMemory"), key
        assert (ua.get("restarts"), ua.get("oomKilled")) == (ub.get("restarts"), ub.get("oomKilled")), key
        if "memory" in ua:
            assert ua["memory"]["max"] == ub["memory"]["max"], key
            assert ua["memory"]["median"] == pytest.approx(ub["memory"]["median"], rel=0.02), key
        if a[key]["recommended"]:
            ra, rb = a[key]["recommended"]["memory"], b[key]["recommended"]["memory"]
            assert ra["limit"] == rb["limit"], key
            unit = 1024**3 if rb["request"] >= 4 * 1024**3 else 64 * 1024**2
            assert abs(ra["request"] - rb["request"]) <= unit, key  # the median's rounding (docstring)


def vm_instants(pooled: bool) -> list[int]:
    """The instants VictoriaMetrics reads kubelint-ml's subquery at: inside a rollup (one series),
    the multiples of the step in the window, as Prometheus; answered as a matrix (the samples of
    several series, pooled), ``last - range + k * step``."""
    last = END // STEP * STEP
    first = (END - LOOKBACK) // STEP * STEP + STEP
    if not pooled:
        return list(range(first, last + 1, STEP))
    start = last - (last - first + STEP // 2)
    return list(range(start, last + 1, STEP))


def at(series: list[tuple[int, float]], instants: list[int], delta: int = STEP) -> list[float]:
    """At each instant, the series' latest raw sample no older than ``delta``."""
    out = []
    for p in instants:
        seen = [v for t, v in series if p - delta < t <= p]
        if seen:
            out.append(seen[-1])
    return out


def test_quantiles_are_those_of_the_samples_at_victoriametrics_instants(servers, project) -> None:
    vm, prom, ref = servers
    rows, theirs = _rows(project, vm.url), _rows(project, prom.url)
    assert len(ref["serve/server"]) == 1 and len(ref["train/trainer"]) == 3
    assert rows["serve/server"]["usage"]["memory"] == theirs["serve/server"]["usage"]["memory"]  # one series
    assert rows["train/trainer"]["usage"]["memory"]["samples"] < theirs["train/trainer"]["usage"]["memory"]["samples"]
    for key, raw in ref.items():
        values = [v for s in raw for v in at(s, vm_instants(pooled=len(raw) > 1))]
        q = statistics.quantiles(values, n=100, method="inclusive")
        got = rows[key]["usage"]["memory"]
        assert got["samples"] == len(values), key
        assert got["median"] == pytest.approx(statistics.median(values), rel=1e-12), key
        assert got["p90"] == pytest.approx(q[89], rel=1e-12), key
        assert got["p99"] == pytest.approx(q[98], rel=1e-12), key
        assert got["max"] == max(v for s in raw for _, v in s), key


def test_a_nan_sample_is_not_stored_so_the_replica_is_sized_from_the_rest(servers, project) -> None:
    vm, prom, _ = servers
    _manifest(project, "mixed")
    (project / "k8s" / "workloads.yaml").write_text(
        (project / "k8s" / "workloads.yaml").read_text().replace("name: bad", "name: mixed")
    )
    (row_vm,) = _rows(project, vm.url).values()
    (row_prom,) = _rows(project, prom.url).values()
    assert row_vm["usage"]["memory"]["max"] == row_prom["usage"]["memory"]["max"] == max(v for _, v in MIXED_GOOD())
    left_out_vm, left_out_prom = " ".join(row_vm["excluded"]), " ".join(row_prom["excluded"])
    assert "mixed-klmno" in left_out_vm and "mixed-klmno" in left_out_prom  # +Inf: stored, and left out by both
    assert "mixed-fghij" in left_out_prom and "mixed-fghij" not in left_out_vm  # its NaN: not stored by VM
    # a series of NaNs only is no series at all
    _manifest(project, "broken")
    r = _run(project, "check", "k8s", "--prometheus", vm.url, "--lookback", "1d")
    assert r.returncode == 2 and "no container_memory_working_set_bytes series in namespace(s) broken" in r.stderr
    r = _run(project, "check", "k8s", "--prometheus", prom.url, "--lookback", "1d")
    assert r.returncode == 2 and "nothing left to size from" in r.stderr


@pytest.mark.parametrize("which", ["prom", "vm"])
def test_sizing_page_from_a_live_server(servers, project, which) -> None:
    """``usage report --format html`` straight from the server: a chart per container sized, the
    server and the window named, the numbers those of the JSON report."""
    vm, prom, _ = servers
    url = (vm if which == "vm" else prom).url
    r = _run(project, "usage", "report", "k8s", "--prometheus", url, "--lookback", "1d", "-f", "html")
    assert r.returncode == 0, r.stderr
    page = r.stdout
    rows = _rows(project, url)
    judged = [row for row in rows.values() if row["judged"]]
    observed = [row for row in rows.values() if (row["usage"] or {}).get("memory")]
    assert len(judged) == 5 and len(observed) == 6  # fresh: drawn, too few samples to judge
    assert page.count("<h4>memory (working set)</h4>") == len(observed)
    assert f"<dt>source</dt><dd>{url}</dd>" in page and "1d to 2026-09-21 14:13:20 UTC" in page
    first = page.index('<article class="sz"')
    assert 'data-workload="Job.batch/ml/train"' in page[first : first + 200]  # the largest shortfall first
    from kubelint_ml.usage.model import show_quantity

    for row in judged:
        rec = row["recommended"]["memory"]
        assert f"memory: {show_quantity(rec['request'])}" in page and f"memory: {show_quantity(rec['limit'])}" in page
