"""Init containers with probes or lifecycle hooks: only a sidecar (restartPolicy: Always) may have them,
in every version (validateInitContainers); an init container's restartPolicy Never or OnFailure (KEP-5307,
from 1.35) does not make it one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main

SERVING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: llm}}
spec:
  selector: {{matchLabels: {{app: llm}}}}
  template:
    metadata: {{labels: {{app: llm}}}}
    spec:
      priorityClassName: serving
      initContainers:
      - name: routing-proxy
        image: ghcr.io/llm-d/llm-d-routing-sidecar
{policy}        readinessProbe:
          tcpSocket: {{port: 8000}}
        startupProbe:
          tcpSocket: {{port: 8000}}
        resources:
          requests: {{cpu: 100m, memory: 128Mi}}
          limits: {{cpu: 100m, memory: 128Mi}}
      - name: download
        image: python
        lifecycle:
          preStop: {{exec: {{command: [sleep, "1"]}}}}
        resources:
          requests: {{cpu: 100m, memory: 128Mi}}
          limits: {{cpu: 100m, memory: 128Mi}}
      containers:
      - name: vllm
        image: vllm/vllm-openai
        resources:
          requests: {{cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}}
          limits: {{cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}}
"""
PRIORITY = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: serving}\nvalue: 1000\n"
RULE = "sidecar-restart-policy-missing"


def _findings(args: list[str]) -> tuple[int, list[tuple]]:
    r = CliRunner().invoke(main, [*args, "-f", "json"], catch_exceptions=False)
    out = r.stdout
    found = json.loads(out[: out.rindex("}") + 1])["findings"]
    return r.exit_code, [(f["line"], f["column"], f["rule"], f["severity"], f["message"]) for f in found]


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36", "1.37", None])
@pytest.mark.parametrize("policy", ["", "Never"])
def test_probes_and_hooks_on_an_init_container_that_is_not_a_sidecar(tmp_path, version, policy):
    (tmp_path / "serving.yaml").write_text(
        SERVING.format(policy=f"        restartPolicy: {policy}\n" if policy else "")
    )
    (tmp_path / "priority.yaml").write_text(PRIORITY)
    args = ["check", str(tmp_path), "-j1"] + (["--kubernetes-version", version] if version else [])
    code, found = _findings(args)
    line = 14 if policy else 13
    assert (code, [f for f in found if f[2] == RULE]) == (
        1,
        [
            (
                line,
                9,
                RULE,
                "error",
                "init container 'routing-proxy' has readinessProbe and startupProbe but no restartPolicy: Always",
            ),
            (line + 9, 9, RULE, "error", "init container 'download' has a lifecycle but no restartPolicy: Always"),
        ],
    )


def test_a_sidecar_may_have_them(tmp_path):
    (tmp_path / "serving.yaml").write_text(SERVING.format(policy="        restartPolicy: Always\n"))
    (tmp_path / "priority.yaml").write_text(PRIORITY)
    found = _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", "1.35"])[1]
    assert [f[:3] for f in found if f[2] == RULE] == [(23, 9, RULE)]  # the download container is still one


def test_a_kustomize_patch_leaves_the_policy_to_its_base(tmp_path):
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n"
    patch += "      initContainers:\n      - name: routing-proxy\n        readinessProbe: {tcpSocket: {port: 8000}}\n"
    (tmp_path / "patch.yaml").write_text(patch)
    assert [f for f in _findings(["check", str(tmp_path)])[1] if f[2] == RULE] == []


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the CEL runtime (cel-expr-python) needs Python >= 3.11")
def test_serve_agrees_and_the_export_says_why_it_is_not_a_policy(tmp_path):
    from kubelint_ml.admission.review import lint_object

    sys.path.insert(0, str(Path(__file__).parent))
    from test_admission_vap import _builtin_policies

    policy, _ = _builtin_policies(None)
    findings, _ = lint_object(policy, yaml.safe_load(SERVING.format(policy="")))
    assert [(f.rule, f.severity, f.container) for f in findings if f.rule == RULE] == [
        (RULE, "error", "routing-proxy"),
        (RULE, "error", "download"),
    ]
    r = CliRunner().invoke(main, ["export", "vap"])
    assert f"#   {RULE}: the API server rejects these init containers itself" in r.stdout
