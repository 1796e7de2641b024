"""Pod fields the API server drops at the cluster's version (pod-field-dropped). Image volumes (KEP-4639):
the ImageVolume gate is beta and off by default in 1.33 and 1.34 (on from 1.35), and with it off the API
server drops the volume and its mounts (dropImageVolumes, pkg/api/pod/util.go), so a serving pod that mounts
its model weights as an image starts with nothing at the mount path. A container's lifecycle.stopSignal
(KEP-4960) is dropped while ContainerStopSignals is alpha and off (1.33-1.36)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from clirun import stored_dump  # noqa: E402

SERVING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  replicas: 1
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      priorityClassName: serving
      containers:
      - name: server
        image: vllm/vllm-openai
        args: ["--model", "/models/llama"]
        volumeMounts:
        - {name: weights, mountPath: /models}
        resources:
          requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
          limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
      volumes:
      - name: weights
        image: {reference: "registry.example.com/models/llama:3.1", pullPolicy: IfNotPresent}
"""
PRIORITY = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: serving}\nvalue: 1000\n"


def _findings(args: list[str]) -> tuple[int, list[tuple]]:
    r = CliRunner().invoke(main, [*args, "-f", "json"], catch_exceptions=False)
    out = r.stdout
    found = json.loads(out[: out.rindex("}") + 1])["findings"]
    return r.exit_code, [(f["line"], f["column"], f["rule"], f["severity"], f["message"]) for f in found]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (
            "1.30",
            [
                (
                    22,
                    9,
                    "unknown-field",
                    "error",
                    "'image' in volume 'weights' is not a field in Kubernetes 1.30 (from Kubernetes 1.31)",
                )
            ],
        ),
        (
            "1.33",
            [
                (
                    22,
                    9,
                    "pod-field-dropped",
                    "warning",
                    "image volume 'weights' is dropped unless the ImageVolume gate is on (off by default in 1.33)",
                )
            ],
        ),
        (
            "1.34",
            [
                (
                    22,
                    9,
                    "pod-field-dropped",
                    "warning",
                    "image volume 'weights' is dropped unless the ImageVolume gate is on (off by default in 1.34)",
                )
            ],
        ),
        ("1.35", []),
        ("1.37", []),
        (None, []),
    ],
)
def test_an_image_volume_by_version(tmp_path, version, expected):
    (tmp_path / "serving.yaml").write_text(SERVING)
    (tmp_path / "priority.yaml").write_text(PRIORITY)
    args = ["check", str(tmp_path), "-j1"] + (["--kubernetes-version", version] if version else [])
    code, found = _findings(args)
    assert found == expected
    assert code == (1 if expected and expected[0][3] == "error" else 0)


def test_the_detail_names_the_mounts_that_find_nothing(tmp_path):
    (tmp_path / "serving.yaml").write_text(SERVING)
    r = CliRunner().invoke(main, ["check", str(tmp_path), "--kubernetes-version", "1.34", "-v"])
    assert "container 'server' at /models then find nothing there" in " ".join(r.stdout.split())


def test_an_audit_of_objects_that_kept_an_image_volume_takes_the_gate_as_on(tmp_path):
    """The API server drops image volumes with ImageVolume off, so a stored Deployment that has one was
    admitted with the gate on."""
    dump, config = stored_dump(tmp_path, SERVING, "1.34")
    assert [f[2] for f in _findings(["audit", str(dump), "-c", str(config)])[1] if f[2] == "pod-field-dropped"] == []


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the CEL runtime (cel-expr-python) needs Python >= 3.11")
def test_serve_takes_a_reviewed_image_volume_as_the_gate_on_and_the_export_says_why_it_is_not_a_policy(
    tmp_path,
):
    """The API server drops image volumes with ImageVolume off before validating webhooks see the object, so
    an object that reaches serve with one shows the gate on: serve says nothing (as an audit), where check of
    the same manifest warns. The export lists the rule as not exported, with the reason."""
    from kubelint_ml.admission.review import lint_object
    from kubelint_ml.admission.vap import policy_documents

    sys.path.insert(0, str(Path(__file__).parent))
    from test_admission_vap import _builtin_policies

    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("profile: {kubernetesVersion: '1.34'}\n")
    policy, _ = _builtin_policies(config)
    findings, _ = lint_object(policy, yaml.safe_load(SERVING))
    assert [f.rule for f in findings if f.rule == "pod-field-dropped"] == []
    (tmp_path / "serving.yaml").write_text(SERVING)
    code, found = _findings(["check", str(tmp_path / "serving.yaml"), "-c", str(config)])
    assert [f[2:4] for f in found if f[2] == "pod-field-dropped"] == [("pod-field-dropped", "warning")]
    r = CliRunner().invoke(main, ["export", "vap", "-c", str(config)])
    assert "#   pod-field-dropped: the profile's Kubernetes version" in r.stdout
    docs, _, _, _ = policy_documents(policy)
    assert not [d for d in docs if d["metadata"].get("labels", {}).get("kubelint-ml.io/rule") == "pod-field-dropped"]


def test_the_gates_an_object_shows_on():
    """Only the built-in kinds are dropped as pods are: a custom resource's template shows no gate."""
    from kubelint_ml.k8s.kept import object_kept

    deployment = yaml.safe_load(SERVING)
    assert object_kept("apps", "Deployment", deployment) == {"image_volume"}
    pod = {"spec": {**deployment["spec"]["template"]["spec"], "schedulingGroup": {"podGroupName": "pg"}}}
    assert object_kept("", "Pod", pod) == {"image_volume", "generic_workload"}
    cron = {"spec": {"jobTemplate": {"spec": {"scheduling": {"schedulingPolicy": {"basic": {}}}, "template": {}}}}}
    assert object_kept("batch", "CronJob", cron) == {"workload_with_job"}
    assert object_kept("kubeflow.org", "PyTorchJob", deployment) == set()
    assert object_kept("", "Pod", {"spec": "not a mapping"}) == set()


TRAINER = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      priorityClassName: serving
      os: {name: linux}
      containers:
      - name: trainer
        image: pytorch/pytorch
        lifecycle:
          stopSignal: SIGINT
        resources:
          requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
          limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
"""


@pytest.mark.parametrize(
    ("version", "found"),
    [("1.33", True), ("1.34", True), ("1.35", True), ("1.36", True), ("1.37", False), (None, False)],
)
def test_a_stop_signal_is_dropped_while_container_stop_signals_is_alpha(tmp_path, version, found):
    """ContainerStopSignals (KEP-4960) is alpha and off from 1.33 through 1.36: the API server drops the
    container's lifecycle.stopSignal and the trainer is stopped with SIGTERM. 1.37 (the KEP's beta) is not
    judged."""
    (tmp_path / "train.yaml").write_text(TRAINER)
    (tmp_path / "priority.yaml").write_text(PRIORITY)
    args = ["check", str(tmp_path), "-j1"] + (["--kubernetes-version", version] if version else [])
    message = (
        "container 'trainer' stopSignal SIGINT is dropped unless the ContainerStopSignals gate is on (alpha, off by "
        f"default in {version})"
    )
    assert _findings(args) == (0, [(14, 23, "pod-field-dropped", "warning", message)] if found else [])
    dump, config = stored_dump(tmp_path, TRAINER, "1.35")
    assert [f for f in _findings(["audit", str(dump), "-c", str(config)])[1] if f[2] == "pod-field-dropped"] == []


def test_the_editor_gives_what_check_gives(tmp_path):
    """`kubelint-ml lsp` with the workspace's config (a 1.34 profile) gives the diagnostics `check .` gives for
    the pod-field-dropped, sidecar-restart-policy-missing and versioned unknown-field findings."""
    pytest.importorskip("pygls", reason="pygls is not installed (the language server's dependency)")
    from test_lsp import check_folder
    from test_lsp_dra import typed

    (tmp_path / ".kubelint-ml.yaml").write_text("profile: {kubernetesVersion: '1.34'}\n")
    text = SERVING.replace(
        "      containers:\n",
        "      initContainers:\n      - name: proxy\n        image: envoy\n        readinessProbe: {tcpSocket: {port: 1}}\n"
        "      containers:\n",
    ).replace("      priorityClassName: serving\n", "      priorityClassName: serving\n      hostnameOverride: head\n")
    path = tmp_path / "serving.yaml"
    path.write_text(text)
    want = check_folder(tmp_path, "serving.yaml")
    rules = {w[0] for w in want}
    assert {"pod-field-dropped", "sidecar-restart-policy-missing"} <= rules, want
    typed(tmp_path, path, [(text, want)])
    (tmp_path / ".kubelint-ml.yaml").write_text("profile: {kubernetesVersion: '1.33'}\n")
    want_133 = check_folder(tmp_path, "serving.yaml")
    assert ("unknown-field", 11, 7, "error") in want_133, want_133
    typed(tmp_path, path, [(text, want_133)])
