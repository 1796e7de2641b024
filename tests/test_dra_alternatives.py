"""firstAvailable alternatives of GPUs: a GPU-share finding that holds for every alternative (judged
with the largest one the node type can hold) is reported; the memory fix does not size from them."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.run.config import Config
from kubelint_ml.run.lint import lint_text

RULES = load_builtin_rules()

POD = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: tmpl}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - {{name: big, deviceClassName: gpu.nvidia.com, {big}}}
        - {{name: small, deviceClassName: gpu.nvidia.com, {small}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  priorityClassName: x
  nodeSelector: {{node.kubernetes.io/instance-type: p5.48xlarge}}
  resourceClaims:
  - {{name: g, resourceClaimTemplateName: tmpl}}
  containers:
  - name: c
    image: x
    resources:
{resources}      claims: [{{name: g}}]
"""
MEMORY = '      requests: {{cpu: "1", memory: {m}}}\n      limits: {{cpu: "1", memory: {m}}}\n'


def _pod(big: str = "count: 2", small: str = "count: 1", memory: str | None = "1800Gi") -> str:
    return POD.format(big=big, small=small, resources=MEMORY.format(m=memory) if memory else "")


def _share(text: str) -> list:
    return [f for f in lint_text(text.encode(), RULES, Config()) if f.rule == "gpu-memory-share-mismatch"]


def test_the_repro_two_or_one_gpus_with_1800gi():
    [f] = _share(_pod())
    assert (f.line, f.column, f.severity, f.message) == (
        25,
        36,
        "warning",
        "2 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)",
    )
    assert f.detail.endswith(
        "(ResourceClaimTemplate 'tmpl' lists alternatives (firstAvailable); judged with the one that takes the "
        "most of this node type's GPUs, 2 GPUs in all, so this holds for every alternative)"
    )
    # in either order
    [f] = _share(_pod(big="count: 1", small="count: 2"))
    assert f.message == "2 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)"


def test_within_the_largest_alternatives_share_nothing_is_said():
    # 2 of 8 GPUs of a p5.48xlarge: about 473Gi, +10%
    assert _share(_pod(memory="500Gi")) == []
    assert _share(_pod(memory="530Gi")) != []
    # every GPU of the node among the alternatives: the whole node may be the pod's
    assert _share(_pod(big="allocationMode: All")) == []


def test_the_largest_alternative_the_node_can_hold():
    # 16 GPUs never fit on an 8-GPU node: the scheduler allocates the 2
    [f] = _share(_pod(big="count: 16", small="count: 2"))
    assert f.message == "2 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)"
    # no alternative fits: the pod never schedules, said with the smallest
    [f] = _share(_pod(big="count: 16", small="count: 12"))
    assert (f.line, f.column, f.message) == (20, 42, "requests 12 GPUs but p5.48xlarge has only 8")
    assert "requests 12 GPUs (with the smallest of its firstAvailable alternatives)" in f.detail


def test_the_memory_fix_does_not_size_from_alternatives(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(_pod(memory=None))
    r = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", str(path)])
    assert "+        memory:" not in r.output, r.output
    r = CliRunner().invoke(main, ["check", "-v", "--unsafe-fixes", "-j", "1", str(path)])
    assert (
        "no fix for memory of container 'c': the pod's claim lists alternatives (firstAvailable); its share of "
        "the node depends on which it gets"
    ) in r.output


def test_serve_reports_what_check_reports(tmp_path):
    from kubelint_ml.admission.review import lint_object, load_policy

    text = _pod()
    (tmp_path / "claims.yaml").write_text(text[: text.index("---")])
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("context: [claims.yaml]\n")
    pod = text[text.index("---") + 4 :]
    served, _ = lint_object(load_policy(str(config)), yaml.safe_load(pod))
    (tmp_path / "pod.yaml").write_text(pod)
    r = CliRunner().invoke(main, ["check", str(tmp_path / "pod.yaml"), "--config", str(config), "-f", "json"])
    checked = json.loads(r.output)["findings"]
    assert sorted((f.rule, f.severity, f.message) for f in served) == sorted(
        (f["rule"], f["severity"], f["message"]) for f in checked
    )
    assert ("gpu-memory-share-mismatch", "warning") in {(f.rule, f.severity) for f in served}
