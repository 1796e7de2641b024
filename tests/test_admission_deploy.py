"""deploy/: the webhook's manifests are linted clean by kubelint-ml itself and valid against the schema."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"


def _objects() -> dict[tuple[str, str], dict]:
    out = {}
    for path in sorted(DEPLOY.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                out[(doc["kind"], doc["metadata"]["name"])] = doc
    return out


def test_deploy_lints_clean_with_every_rule_and_the_strict_schema(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = CliRunner().invoke(
        main,
        [
            "check",
            "deploy/",
            "--format",
            "json",
            "--fail-level",
            "info",
            "--schema",
            "--strict",
            "--kubernetes-version",
            "1.33",
            "--enable",
            "gpu-node-unresolved",
        ],
    )
    findings = json.loads(r.stdout)["findings"]
    # Only the cert-manager kinds, whose CRDs are not bundled, go unvalidated.
    assert [(f["rule"], f["object"]["kind"]) for f in findings] == [
        ("schema-unavailable", "Issuer"),
        ("schema-unavailable", "Certificate"),
    ]
    assert all("no schema for cert-manager.io/v1" in f["message"] for f in findings)


def test_deploy_shape(tmp_path):
    objs = _objects()
    dep = objs[("Deployment", "kubelint-ml-webhook")]
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert dep["spec"]["replicas"] == 2
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert set(c["resources"]["requests"]) >= {"cpu", "memory"} and "memory" in c["resources"]["limits"]
    assert c["args"][0] == "serve" and "--cert=/tls/tls.crt" in c["args"] and "--key=/tls/tls.key" in c["args"]
    assert pod["terminationGracePeriodSeconds"] > 25  # the server's graceful shutdown time
    assert objs[("PodDisruptionBudget", "kubelint-ml-webhook")]["spec"]["minAvailable"] == 1
    svc = objs[("Service", "kubelint-ml-webhook")]
    (hook,) = objs[("ValidatingWebhookConfiguration", "kubelint-ml")]["webhooks"]
    assert hook["failurePolicy"] == "Ignore" and hook["matchPolicy"] == "Equivalent"
    assert hook["sideEffects"] == "None" and hook["admissionReviewVersions"] == ["v1"]
    assert 1 <= hook["timeoutSeconds"] <= 30
    assert hook["clientConfig"]["service"] == {
        "name": svc["metadata"]["name"],
        "namespace": "kubelint-ml",
        "path": "/validate",
        "port": svc["spec"]["ports"][0]["port"],
    }
    assert hook["objectSelector"]["matchExpressions"]
    # the ML kinds the linter knows are sent to it
    sent = {(g, r) for rule in hook["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    for want in [
        ("", "pods"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
        ("kubeflow.org", "pytorchjobs"),
        ("kubeflow.org", "mpijobs"),
        ("jobset.x-k8s.io", "jobsets"),
        ("ray.io", "rayjobs"),
        ("batch.volcano.sh", "jobs"),
        ("leaderworkerset.x-k8s.io", "leaderworkersets"),
        ("trainer.kubeflow.org", "trainingruntimes"),
        ("production-stack.vllm.ai", "vllmruntimes"),
    ]:
        assert want in sent
    # the config the pods mount is a valid kubelint-ml config with the webhook's time limit under timeoutSeconds
    from kubelint_ml.run.config import load_config

    cm = objs[("ConfigMap", "kubelint-ml-config")]
    (tmp_path / "kubelint-ml.yaml").write_text(cm["data"]["kubelint-ml.yaml"])
    config = load_config(tmp_path / "kubelint-ml.yaml")
    assert config.admission["requestTimeoutSeconds"] < hook["timeoutSeconds"]
    cert = objs[("Certificate", "kubelint-ml-webhook")]
    assert cert["spec"]["secretName"] == next(v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v)
    assert "kubelint-ml-webhook.kubelint-ml.svc" in cert["spec"]["dnsNames"]
