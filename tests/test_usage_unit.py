"""The usage pieces that need no server: durations, quantiles, snapshots, credentials, the
workload-to-pod mapping, settings, recommendations."""

from __future__ import annotations

import json
import random
import statistics

import pytest

from kubelint_ml.usage import snapshot
from kubelint_ml.usage.collect import check_selector, quantile, stats_of
from kubelint_ml.usage.mapping import DEFAULTS, Pod, ksm_label, matcher_for, overrides_from_config
from kubelint_ml.usage.model import (
    ContainerUsage,
    GpuStats,
    Stats,
    Usage,
    UsageError,
    Window,
    WorkloadUsage,
    duration_text,
    parse_duration,
    recommended_memory,
)
from kubelint_ml.usage.prometheus import Auth, Prometheus, PrometheusError, auth_from_env
from kubelint_ml.usage.source import parse_time, settings

GI = 1024**3


@pytest.mark.parametrize(
    "text,seconds", [("14d", 14 * 86400), ("1h30m", 5400), ("90s", 90), ("1w", 604800), ("500ms", 0.5)]
)
def test_durations(text, seconds):
    assert parse_duration(text, "x") == seconds


@pytest.mark.parametrize("bad", ["", "14", "d", "14 days", "-1d", "0s", "1.5h", None, True])
def test_bad_durations(bad):
    with pytest.raises(UsageError):
        parse_duration(bad, "--lookback")


def test_duration_text():
    assert [duration_text(s) for s in (1209600, 86400, 5400, 60, 90)] == ["14d", "1d", "1h30m", "1m", "1m30s"]


def test_quantiles_are_numpys_linear_interpolation():
    rng = random.Random(7)
    for n in (1, 2, 3, 10, 101, 1000):
        values = [rng.uniform(0, 1e10) for _ in range(n)]
        s = stats_of(values)
        assert s.samples == n and s.max == max(values)
        assert s.median == pytest.approx(statistics.median(values), rel=1e-12)
        if n > 1:
            q = statistics.quantiles(values, n=100, method="inclusive")
            assert s.p90 == pytest.approx(q[89], rel=1e-12) and s.p99 == pytest.approx(q[98], rel=1e-12)
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5


def _usage() -> Usage:
    u = Usage(window=Window(14 * 86400, 60, 1_790_000_000), source="http://prom:9090", cluster="prod")
    w = WorkloadUsage("ml", "kubeflow.org", "PyTorchJob", "llama", "Worker", 4)
    w.containers["pytorch"] = ContainerUsage(
        4,
        Stats(80640, 28 * GI + 0.5, 30 * GI, 31 * GI, 32 * GI),
        Stats(80640, 7.1, 7.5, 7.9, 8.0),
        GpuStats(80640, 4, 9e9, 85e9),
        1,
        False,
    )
    u.workloads[w.key] = w
    u.missing[("ml", "batch", "Job", "eval", "")] = "no pods"
    return u


def test_snapshot_round_trip(tmp_path):
    u = _usage()
    path = tmp_path / "snap.json"
    snapshot.write(u, str(path))
    back = snapshot.read(str(path), cluster="prod")
    assert back.workloads == u.workloads and back.missing == u.missing and back.window == u.window
    assert snapshot.to_dict(back)["workloads"] == snapshot.to_dict(u)["workloads"]


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d.pop("window"), "window: missing"),
        (lambda d: d["workloads"][0].update(pods="4"), "pods: must be a integer"),
        (lambda d: d["workloads"][0]["containers"]["pytorch"]["memory"].update(max=float("inf")), "not valid JSON"),
        (lambda d: d["workloads"][0]["containers"]["pytorch"].update(extra=1), "unknown field 'extra'"),
        (lambda d: d["workloads"].append(dict(d["workloads"][0])), "appears twice"),
        (lambda d: d["window"].update(lookback="two weeks"), "not a duration"),
        (lambda d: d.update(version=3), "reads versions 1, 2"),
        (lambda d: d.update(version=True), "reads versions 1, 2"),
    ],
)
def test_malformed_snapshots(tmp_path, mutate, message):
    doc = snapshot.to_dict(_usage())
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError) as e:
        snapshot.read(str(path))
    assert message in str(e.value) and str(path) in str(e.value)


def test_snapshot_from_another_cluster(tmp_path):
    path = tmp_path / "snap.json"
    snapshot.write(_usage(), str(path))
    with pytest.raises(UsageError, match="from cluster 'prod', not 'staging'"):
        snapshot.read(str(path), cluster="staging")


def test_credentials_come_from_the_environment(tmp_path):
    token = tmp_path / "token"
    token.write_text("abc\n")
    a = auth_from_env({"KUBELINT_ML_PROMETHEUS_TOKEN_FILE": str(token)}, tenant="team-a")
    assert a.headers() == {"Authorization": "Bearer abc", "X-Scope-OrgID": "team-a"}
    b = auth_from_env(
        {
            "KUBELINT_ML_PROMETHEUS_USERNAME": "u",
            "KUBELINT_ML_PROMETHEUS_PASSWORD": "p",
            "KUBELINT_ML_PROMETHEUS_TENANT": "t",
        }
    )
    assert b.headers() == {"Authorization": "Basic dTpw", "X-Scope-OrgID": "t"}
    assert auth_from_env({}).headers() == {}
    for bad in (
        {"KUBELINT_ML_PROMETHEUS_TOKEN": "a", "KUBELINT_ML_PROMETHEUS_USERNAME": "u"},
        {"KUBELINT_ML_PROMETHEUS_PASSWORD": "p"},
        {"KUBELINT_ML_PROMETHEUS_TOKEN": "a", "KUBELINT_ML_PROMETHEUS_TOKEN_FILE": str(token)},
        {"KUBELINT_ML_PROMETHEUS_TOKEN_FILE": str(tmp_path / "nope")},
        {"KUBELINT_ML_PROMETHEUS_CA_FILE": str(tmp_path / "nope.pem")},
    ):
        with pytest.raises(PrometheusError):
            auth_from_env(bad)


@pytest.mark.parametrize("url", ["prom:9090", "ftp://x", "http://x/?a=1", "file:///etc/passwd"])
def test_urls_are_http(url):
    with pytest.raises(PrometheusError):
        Prometheus(url, Auth())


def test_config_never_holds_credentials(tmp_path):
    from kubelint_ml.run.config import ConfigError, load_config

    path = tmp_path / ".kubelint-ml.yaml"
    path.write_text("usage:\n  prometheus: http://x\n  token: abc\n")
    with pytest.raises(ConfigError, match="token"):
        load_config(path)


def _pod(name, labels=None, owners=()):
    return Pod(name, labels, list(owners))


@pytest.mark.parametrize(
    "key,yes,no",
    [
        (("", "Pod", "nb", ""), ["nb"], ["nb-1", "nb2"]),
        (("batch", "Job", "train", ""), ["train-x7k2p", "train-3-x7k2p"], ["train-big-x7k2p", "train", "trainx7k2p"]),
        (
            ("batch", "CronJob", "nightly", ""),
            ["nightly-29000000-abcde"],
            ["nightly-abcde", "nightly-x-29000000-abcde"],
        ),
        (("kubeflow.org", "PyTorchJob", "llama", "Worker"), ["llama-worker-0", "llama-worker-12"], ["llama-master-0"]),
        (
            ("jobset.x-k8s.io", "JobSet", "js", "workers"),
            ["js-workers-0-1-abcde", "js-workers-2-abcde"],
            ["js-driver-0-0-abcde"],
        ),
        (("ray.io", "RayCluster", "rc", "head"), ["rc-head-abcde"], ["rc-gpu-worker-abcde"]),
        (("ray.io", "RayCluster", "rc", "gpu"), ["rc-gpu-worker-abcde", "rc-worker-gpu-abcde"], ["rc-head-abcde"]),
        (("batch.volcano.sh", "Job", "vj", "ps"), ["vj-ps-0"], ["vj-worker-0"]),
        (("leaderworkerset.x-k8s.io", "LeaderWorkerSet", "lws", "leader"), ["lws-0", "lws-3"], ["lws-0-1"]),
        (("leaderworkerset.x-k8s.io", "LeaderWorkerSet", "lws", "worker"), ["lws-0-1"], ["lws-0"]),
        (
            ("apps", "Deployment", "serve", ""),
            ["serve-7d9f8c6b5-x2x4z"],
            ["serve-x2x4z", "serve-canary-7d9f8c6b5-x2x4z"],
        ),
        (("apps", "StatefulSet", "db", ""), ["db-0"], ["db-abcde"]),
    ],
)
def test_pod_names_by_kind(key, yes, no):
    group, kind, name, role = key
    m = matcher_for("ns", group, kind, name, role, [])
    assert [n for n in yes if m.matches(_pod(n))] == yes
    assert [n for n in no if m.matches(_pod(n))] == []


def test_labels_and_owners_decide_before_names():
    m = matcher_for("ns", "kubeflow.org", "PyTorchJob", "llama", "Worker", [])
    labels = {
        ksm_label("training.kubeflow.org/job-name"): "llama",
        ksm_label("training.kubeflow.org/replica-type"): "worker",
    }
    assert m.matches(_pod("renamed-pod", labels))
    assert not m.matches(_pod("llama-worker-0", {**labels, ksm_label("training.kubeflow.org/job-name"): "other"}))
    assert m.matches(_pod("llama-worker-0", {"label_app": "x"}))  # labels not exposed: the name decides
    d = matcher_for("ns", "apps", "Deployment", "serve", "", [])
    assert d.matches(_pod("anything", owners=[("ReplicaSet", "serve-7d9f8c6b5")]))
    assert not d.matches(_pod("serve-7d9f8c6b5-x2x4z", owners=[("ReplicaSet", "serve-canary-1")]))
    assert matcher_for("ns", "example.com", "Trainer", "t", "", []) is None
    assert ("kubeflow.org", "TFJob") in DEFAULTS


def test_config_overrides_the_mapping():
    overrides = overrides_from_config(
        [
            {"kind": "example.com/Trainer", "name": "t", "pods": "t-run-.*"},
            {"kind": "Job", "name": "x", "namespace": "a", "labels": {"team/job": "x"}},
        ]
    )
    m = matcher_for("ns", "example.com", "Trainer", "t", "", overrides)
    assert m.matches(_pod("t-run-1")) and not m.matches(_pod("t-1"))
    lab = matcher_for("a", "batch", "Job", "x", "", overrides)
    assert lab.matches(_pod("whatever", {"label_team_job": "x"})) and not lab.matches(_pod("x-abcde"))
    assert matcher_for("b", "batch", "Job", "x", "", overrides).matches(_pod("x-abcde"))  # other namespace: default
    with pytest.raises(UsageError, match="pods: not a regular expression"):
        overrides_from_config([{"kind": "Job", "name": "x", "pods": "("}])


def test_selectors():
    assert check_selector('cluster="prod", region=~"eu-.*"') == 'cluster="prod", region=~"eu-.*"'
    for bad in ("cluster=prod", 'x="a"} or vector(1) or {y="b"', '"a"="b"'):
        with pytest.raises(UsageError):
            check_selector(bad)


def test_settings_precedence(tmp_path):
    cfg = {"prometheus": "http://from-config", "lookback": "7d", "namespace": "ml"}
    s = settings(cfg)
    assert (s.prometheus, s.lookback, s.namespace) == ("http://from-config", 7 * 86400, "ml")
    s = settings(cfg, usage_file="snap.json", lookback="1d", namespace="x")
    assert (s.prometheus, s.snapshot, s.lookback, s.namespace) == (None, "snap.json", 86400, "x")
    with pytest.raises(UsageError, match="not both"):
        settings({}, prometheus="http://a", usage_file="b")
    assert settings({}).lookback == 14 * 86400 and not settings({}).configured
    assert parse_time("2026-09-21T14:13:20Z") == 1_790_000_000 == parse_time(1_790_000_000)
    with pytest.raises(UsageError):
        parse_time("yesterday")


def test_recommendation():
    u = _usage()

    class Obj:
        group = "kubeflow.org"

        class ref:
            namespace, kind, name = "ml", "PyTorchJob", "llama"

    class Tpl:
        role = "Worker"

    request, limit, source = u.recommend(Obj, Tpl, "pytorch")
    assert (request, limit) == (29 * GI, 39 * GI)  # median 28Gi+ rounded up; 32Gi * 1.2 = 38.4Gi rounded up
    assert "observed median 28Gi and peak 32Gi over 14d (80640 samples, http://prom:9090)" in source
    assert u.recommend(Obj, Tpl, "sidecar") is None
    assert recommended_memory(Stats(100, 100e6, 1, 1, 300e6), 0.2) == (96 * 1024**2, 384 * 1024**2)


def test_version_1_snapshots_are_still_read(tmp_path):
    doc = snapshot.to_dict(_usage())
    assert doc["version"] == 2 and doc["window"]["step"] == "1m"
    doc["version"] = 1
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(doc))
    assert snapshot.read(str(path)).workloads == _usage().workloads


def test_grid_covers_the_multiples_of_the_step_in_the_lookback():
    from kubelint_ml.usage.collect import Grid

    g = Grid.of(Window(86400, 300, 1_790_000_000))  # end is 200 s past a multiple of 5m
    assert (g.first, g.last, g.step) == (1_789_913_700_000, 1_789_999_800_000, 300_000)
    assert len(g.instants()) == 288
    for k in range(3):  # a subquery of this range at last + 0, 1, 2 ms covers exactly these instants
        assert g.last + k - g.range > g.first - g.step and g.last + k - g.range <= g.first
    aligned = Grid.of(Window(86400, 300, 1_790_000_100))  # end on a multiple: (end - lookback, end]
    assert aligned.last == 1_790_000_100_000 and aligned.first == 1_789_913_700_000 + 300_000
    assert len(aligned.instants()) == 288


def test_stats_query_names_each_quantile_by_its_instant():
    from kubelint_ml.usage.collect import Grid, _by_series, stats_query

    g = Grid.of(Window(86400, 300, 1_790_000_000))
    q = stats_query(g, "m[86250000ms:300s]", "max_over_time(m[86400s] @ 1790000000.000)")
    assert "0.5 * (time() < bool 1789999800.0005)" in q
    assert "0.9 * (time() > bool 1789999800.0005) * (time() < bool 1789999800.0015)" in q
    assert "0.99 * (time() > bool 1789999800.0015)" in q
    labels = {"pod": "p", "container": "c"}
    result = [
        {
            "metric": {**labels, "kubelint_ml_stat": "quantile"},
            "values": [[1789999800, "1"], [1789999800.001, "2"], [1789999800.002, "3"]],
        },
        {"metric": {**labels, "kubelint_ml_stat": "count"}, "values": [[1789999800, "288"]]},
        {"metric": {**labels, "kubelint_ml_stat": "max"}, "values": [[1789999800, "9"]]},
    ]
    assert dict(_by_series(result, "m", g)) == {
        ("p", "c", ()): {"median": 1, "p90": 2, "p99": 3, "count": 288, "max": 9}
    }


@pytest.mark.parametrize(
    "step,message",
    [
        ("0s", "longer than zero"),
        ("1500ms", "whole seconds"),
        ("2d", "longer than the lookback"),
        ("soon", "not a duration"),
    ],
)
def test_bad_steps(step, message):
    with pytest.raises(UsageError) as e:
        settings({"prometheus": "http://p:9090", "lookback": "1d"}, step=step)
    assert message in str(e.value) and "--step" in str(e.value)


def test_step_default_and_precedence():
    assert settings({"prometheus": "http://p:9090"}).step == 300
    assert settings({"prometheus": "http://p:9090", "step": "1m"}).step == 60
    assert settings({"prometheus": "http://p:9090", "step": "1m"}, step="10m").step == 600
