"""The engine on hostile shapes: big fan-outs stay linear, one broken rule is contained."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from kubelint_ml.engine.core import Hit
from kubelint_ml.run.lint import lint_text
from kubelint_ml.engine.rulefile import build_rule, load_builtin_rules

N = 4000
# Generous: linear work takes about a second here; a quadratic template would take minutes.
BOUND = 15.0


def all_rules() -> list:
    rules = load_builtin_rules()
    for r in rules:
        r.enabled = True
    return rules


def pod(containers: str, extra: str = "") -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        f"  resources: {{limits: {{cpu: 1, memory: 1Gi}}}}\n{extra}  containers:\n{containers}"
    )


SHAPES = {
    "containers": pod("".join(
        f"  - name: c{i}\n    image: x\n    args: [--nproc_per_node=8]\n"
        f"    resources: {{limits: {{memory: 1Gi, nvidia.com/gpu: 1}}}}\n" for i in range(N))),
    "sidecars": pod("  - name: main\n    image: x\n", "  initContainers:\n" + "".join(
        f"  - name: i{i}\n    image: x\n    restartPolicy: Always\n" for i in range(N))),
    "volumes": pod(
        "  - name: c\n    image: x\n    volumeMounts:\n" + "".join(f"    - {{name: v{i}, mountPath: /m{i}}}\n" for i in range(N)),
        "  volumes:\n" + "".join(
            f"  - {{name: v{i}, emptyDir: {{medium: {'Memory' if i % 2 else ''}}}}}\n" for i in range(N))),
    "documents": "---\n".join(pod("  - name: c\n    image: x\n") for _ in range(N)),
    "replica-roles": "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: t}\nspec:\n  pytorchReplicaSpecs:\n"
    + "".join(
        f"    R{i}:\n      replicas: 2\n      template:\n        spec:\n          containers:\n          - name: c\n"
        f"            image: x\n            resources: {{limits: {{nvidia.com/gpu: 1}}}}\n" for i in range(N)),
    "priority-classes": "".join(
        f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: pc{i}}}\nvalue: {i}\n"
        "globalDefault: true\n---\n" for i in range(N)) + "---\n".join(pod("  - name: c\n    image: x\n") for _ in range(N)),
}


# The finding each shape repeats, and how many times: one per container, document, class, ...
EXPECTED = {
    "containers": ("shm-too-small-for-workers", N),
    "documents": ("missing-priority-class", N),
    "priority-classes": ("priority-class-invalid", N - 1),  # every globalDefault after the first
    "replica-roles": ("besteffort-qos", N),
    "sidecars": ("missing-priority-class", 1),
    "volumes": ("emptydir-no-size-limit", N // 2),  # the disk-backed half
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_large_fan_out_stays_linear(shape: str) -> None:
    data = SHAPES[shape].encode()
    start = time.perf_counter()
    findings = lint_text(data, all_rules())
    took = time.perf_counter() - start
    assert took < BOUND, f"{shape}: {took:.1f}s"
    rule, count = EXPECTED[shape]
    lines = [f.line for f in findings if f.rule == rule]
    assert len(lines) == count and len(set(lines)) == count  # each at its own item's line
    assert all(f.line >= 1 for f in findings)


def test_names_are_cut_in_messages() -> None:
    name = "n" * 100_000
    data = pod("".join(f"  - name: c{i}\n    image: x\n" for i in range(200))).replace("name: p}", f"name: {name}}}")
    findings = lint_text(data.encode(), all_rules())
    assert findings
    assert max(len(f.message) for f in findings) < 2000
    assert f"Pod/{'n' * 253}…" in findings[0].detail
    assert max(len(f.detail or "") for f in findings) < 2000
    role = "R" * 100_000
    job = ("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: t}\nspec:\n  tfReplicaSpecs:\n"
           f"    {role}:\n      template:\n        spec:\n          containers:\n          - name: {'c' * 100_000}\n"
           "            image: x\n")
    findings = lint_text(job.encode(), all_rules())
    assert findings and max(len(f.message) for f in findings) < 2000


class _Broken:
    """A template with a bug: it raises on every unit."""

    UNIT = "container"

    @staticmethod
    def check(unit, params, ctx) -> Iterator[Hit]:
        raise ZeroDivisionError("bug in a rule")



def test_a_crashing_rule_is_reported_and_the_other_rules_still_run() -> None:
    broken = build_rule(
        {"id": "broken-rule", "severity": "warning", "title": "t", "description": "d", "remediation": "r",
         "scope": {"unit": "container"}, "check": {"template": "container-resource-missing",
                                                   "params": {"resource": "memory", "missing": "limit"}},
         "examples": {"fail": [], "pass": []}},
        "<test>", validate=False,
    )
    broken.template = _Broken
    rules = [broken, *all_rules()]
    data = pod("  - name: c\n    image: x\n").encode()
    findings = lint_text(data, rules)  # must not raise
    assert any(f.rule == "missing-priority-class" for f in findings)
    crash = [f for f in findings if "broken-rule" in f.message]
    assert len(crash) == 1 and crash[0].severity == "error" and "ZeroDivisionError" in crash[0].message
