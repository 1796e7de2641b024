"""The review logic without a server: paths, bounds, exclusions, and `serve`'s start-up errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kubelint_ml.admission.review import (
    PolicyError,
    ReviewError,
    load_policy,
    parse_review,
    positioned,
    review,
    warning_texts,
)
from kubelint_ml.cli import main
from kubelint_ml.findings import Finding
from kubelint_ml.input.loader import locate

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
}


def test_positioned_numbers_nodes_in_document_order():
    tree = positioned({"a": {"b": [1, {"c": 2}]}, "d": 3})
    assert locate(tree, ("a", "b", 1, "c")) == (5, 0, ("a", "b", 1, "c"))
    assert locate(tree, ("d",)) == (6, 0, ("d",))
    assert locate(tree, ("a", "missing")) == (1, 0, ("a",))


def test_review_paths_namespace_and_sorting():
    policy = load_policy(None)
    v = review(policy, {"uid": "1", "operation": "CREATE", "namespace": "ml", "object": POD})
    assert v.allowed is False
    # the request's namespace names the object (the API server fills metadata.namespace after admission)
    assert all(f.object is not None and f.object.namespace == "ml" for f in v.findings)
    assert all((f.detail or "").startswith("Pod/ml/p") for f in v.findings)
    assert [f.rule for f in v.findings if f.severity == "error"] == ["besteffort-qos", "missing-memory-limit"]
    assert {f.path for f in v.findings if f.rule == "missing-memory-limit"} == {"spec.containers[0].resources.limits"}
    assert v.findings == sorted(v.findings, key=Finding.sort_key)


def test_warning_bounds():
    fs = [Finding("r", "warning", "m" * 500, "", "f", 1, 1, "spec") for _ in range(5)]
    texts = warning_texts(fs, 3, 100)
    assert len(texts) == 3 and all(len(t) <= 100 for t in texts) and texts[0].endswith("…")
    assert texts[-1] == "kubelint-ml: and 3 more warnings"
    assert warning_texts(fs, 0, 100) == []
    assert len(warning_texts(fs[:2], 3, 100)) == 2


@pytest.mark.parametrize(
    "body, word",
    [
        (b"", "not JSON"),
        (b"1", "not a JSON object"),
        (b'{"kind": "Pod"}', "not AdmissionReview"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}', "no request"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": 3}}', "uid"),
    ],
)
def test_parse_review_rejects(body, word):
    with pytest.raises(ReviewError, match=word):
        parse_review(body)


def test_policy_errors_name_the_file(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("disable: [no-such-rule]\n")
    with pytest.raises(PolicyError, match="unknown rule id 'no-such-rule'"):
        load_policy(str(bad))
    bad.write_text("admission: {mode: loud}\n")
    with pytest.raises(PolicyError, match="admission.mode"):
        load_policy(str(bad))


def test_serve_start_up_errors_exit_2(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("disable: [no-such-rule]\n")
    cert = tmp_path / "none.crt"
    r = CliRunner().invoke(main, ["serve", "--cert", str(cert), "--key", str(cert), "--config", str(bad)])
    assert r.exit_code == 2 and "unknown rule id" in r.output
    r = CliRunner().invoke(
        main, ["serve", "--cert", str(cert), "--key", str(cert), "--config", str(tmp_path / "ok.yaml")]
    )
    assert r.exit_code == 2 and "cannot read config" in r.output
    (tmp_path / "ok.yaml").write_text("{}\n")
    r = CliRunner().invoke(
        main, ["serve", "--cert", str(cert), "--key", str(cert), "--config", str(tmp_path / "ok.yaml")]
    )
    assert r.exit_code == 2 and "cannot load the certificate and key" in r.output


def test_audit_mode_from_config(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"admission": {"mode": "audit"}}))
    v = review(load_policy(str(cfg)), {"uid": "1", "object": POD})
    assert v.allowed is True and v.would_deny and "status" not in v.response
    v = review(load_policy(str(cfg), mode="enforce"), {"uid": "1", "object": POD})  # --mode wins
    assert v.allowed is False


def test_policies_and_usage_snapshot_are_loaded_prometheus_is_named_not_run(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"rules": [str(root / "fixtures" / "policies" / "conftest")]}))
    policy = load_policy(str(cfg))
    try:
        assert policy.not_run == []
        assert {"main.deny", "gpu.deny_too_many_gpus"} <= policy.rule_ids
        assert policy.usage is None and not any(r.family == "usage" for r in policy.engine.rules)
    finally:
        policy.retire()
    cfg.write_text(json.dumps({"usage": {"snapshot": str(root / "fixtures" / "fix-usage" / "snapshot.json")}}))
    policy = load_policy(str(cfg))
    assert policy.usage is not None and str(root / "fixtures" / "fix-usage" / "snapshot.json") in policy.watched
    assert "memory-limit-below-peak" in policy.rule_ids
    cfg.write_text(json.dumps({"usage": {"prometheus": "http://127.0.0.1:1"}}))
    policy = load_policy(str(cfg))
    assert policy.usage is None and "memory-limit-below-peak" not in policy.rule_ids
    assert policy.not_run and "usage.snapshot" in policy.not_run[0]
    assert load_policy(None).not_run == []


def test_context_files_give_facts_at_admission(tmp_path):
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "classes.yaml").write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: team-high}\nvalue: 1000\n"
    )
    cfg = tmp_path / "c.yaml"
    cfg.write_text("context: [cluster/]\n")
    policy = load_policy(str(cfg))
    assert "unknown-priority-class" not in policy.missing_context
    assert str(tmp_path / "cluster" / "classes.yaml") in policy.watched

    def rules(name: str, obj: dict | None = None) -> list[str]:
        pod = json.loads(json.dumps(obj or POD))
        pod["spec"]["priorityClassName"] = name
        return [f.rule for f in review(policy, {"uid": "1", "operation": "CREATE", "object": pod}).findings]

    assert "unknown-priority-class" not in rules("team-high")
    assert "unknown-priority-class" in rules("team-hihg")
    # A PriorityClass under review joins the context files' classes; it does not replace them.
    other = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "batch-low"},
        "value": 10,
    }
    v = review(policy, {"uid": "2", "operation": "CREATE", "object": other})
    assert "unknown-priority-class" not in [f.rule for f in v.findings]
    from kubelint_ml.admission.review import _facts_with
    from kubelint_ml.input.loader import Document
    from kubelint_ml.input.objects import unpack

    facts = _facts_with(policy, unpack(Document(0, positioned(other), 0), "<admission>").objects)
    assert set(facts.priority_classes) == {"team-high", "batch-low"}


def test_policy_rules_follow_the_configs_disable_and_overrides(tmp_path):
    from pathlib import Path

    pol = Path(__file__).resolve().parent.parent / "fixtures" / "policies"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        json.dumps(
            {
                "rules": [str(pol / "conftest")],
                "disable": ["main.warn"],
                "overrides": {"gpu.warn_latest": {"severity": "error"}},
            }
        )
    )
    policy = load_policy(str(cfg))
    try:
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "ml", "labels": {"team": "research"}},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "registry.internal/x:latest"}]}}},
        }
        v = review(policy, {"uid": "1", "operation": "CREATE", "object": job})
        found = {(f.rule, f.severity) for f in v.findings}
        assert ("gpu.warn_latest", "error") in found and "main.warn" not in {r for r, _ in found}
        assert v.allowed is False and "gpu.warn_latest" in v.response["status"]["message"]
    finally:
        policy.retire()


def test_workload_priority_classes_from_the_context_hold_at_admission(tmp_path):
    # the context's classes speak for every reviewed object, wherever the context files are
    (tmp_path / "cluster" / "kueue").mkdir(parents=True)
    (tmp_path / "cluster" / "kueue" / "classes.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: research}\nvalue: 100\n"
    )
    cfg = tmp_path / "c.yaml"
    cfg.write_text("context: [cluster/]\n")
    policy = load_policy(str(cfg))

    def found(name: str) -> list[tuple[str, str]]:
        pod = json.loads(json.dumps(POD))
        pod["metadata"]["labels"] = {"kueue.x-k8s.io/priority-class": name}
        v = review(policy, {"uid": "1", "operation": "CREATE", "object": pod})
        return [(f.rule, f.severity) for f in v.findings if f.rule == "unknown-priority-class"]

    assert found("research") == []
    assert found("reserch") == [("unknown-priority-class", "error")]
