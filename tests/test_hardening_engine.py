"""The engine on hostile shapes: big fan-outs report every item, one broken rule is contained.

How long the fan-outs take is measured by bench/bounds.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from bombs import fan_out_shapes, pod

from kubelint_ml.engine.api import Hit
from kubelint_ml.engine.rulefile import build_rule, load_builtin_rules
from kubelint_ml.run.lint import lint_text

pytestmark = pytest.mark.slow

N = 4000  # bench/bounds.py times these shapes: linear work takes about a second, a quadratic template minutes


def all_rules() -> list:
    rules = load_builtin_rules()
    for r in rules:
        r.enabled = True
    return rules


SHAPES = fan_out_shapes(N)


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
def test_large_fan_out_reports_each_item_at_its_line(shape: str) -> None:
    data = SHAPES[shape].encode()
    findings = lint_text(data, all_rules())
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
    job = (
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: t}\nspec:\n  tfReplicaSpecs:\n"
        f"    {role}:\n      template:\n        spec:\n          containers:\n          - name: {'c' * 100_000}\n"
        "            image: x\n"
    )
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
        {
            "id": "broken-rule",
            "severity": "warning",
            "title": "t",
            "description": "d",
            "remediation": "r",
            "scope": {"unit": "container"},
            "check": {"template": "container-resource-missing", "params": {"resource": "memory", "missing": "limit"}},
            "examples": {"fail": [], "pass": []},
        },
        "<test>",
        validate=False,
    )
    broken.template = _Broken
    rules = [broken, *all_rules()]
    data = pod("  - name: c\n    image: x\n").encode()
    findings = lint_text(data, rules)  # must not raise
    assert any(f.rule == "missing-priority-class" for f in findings)
    crash = [f for f in findings if "broken-rule" in f.message]
    assert len(crash) == 1 and crash[0].severity == "error" and "ZeroDivisionError" in crash[0].message


class _Returns:
    """A template that returns its hits (a list, or None for none) instead of yielding them."""

    UNIT = "container"

    @staticmethod
    def check(unit, params, ctx) -> list[Hit] | None:
        c = unit.container
        return [Hit(c.path + ("image",), f"{c.name} listed")] if c.name == "a" else None


class _YieldsThenFails:
    """A generator template that yields a hit, then fails: its hit is not reported, the failure is."""

    UNIT = "container"

    @staticmethod
    def check(unit, params, ctx) -> Iterator[Hit]:
        yield Hit(unit.container.path, "half")
        raise ZeroDivisionError("bug after a hit")


def test_a_check_may_return_its_hits_or_yield_them() -> None:
    def rule(rid: str, template) -> object:
        r = build_rule(
            {
                "id": rid,
                "severity": "warning",
                "title": "t",
                "description": "d",
                "remediation": "r",
                "scope": {"unit": "container"},
                "check": {
                    "template": "container-resource-missing",
                    "params": {"resource": "memory", "missing": "limit"},
                },
                "examples": {"fail": [], "pass": []},
            },
            "<test>",
            validate=False,
        )
        r.template = template
        return r

    data = pod("  - name: a\n    image: x\n  - name: b\n    image: y\n").encode()
    findings = lint_text(data, [rule("returns", _Returns), rule("fails-late", _YieldsThenFails)])
    assert [(f.rule, f.message, f.line) for f in findings if f.rule == "returns"] == [
        ("returns", "a listed", 8)
    ]  # its image
    late = [f for f in findings if "fails-late" in f.message or f.rule == "fails-late"]
    assert [f.rule for f in late] == ["rule-error", "rule-error"]  # one per container, no half results
