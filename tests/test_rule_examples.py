"""Every rule in rules/ is valid and behaves as its own examples say."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubelint_ml.engine.ruledocs import render_docs
from kubelint_ml.engine.rulefile import build_rule, builtin_rules_dir, load_builtin_rules, rule_files
from kubelint_ml.run.examples import verify_rule

ROOT = Path(__file__).resolve().parent.parent
FILES = rule_files(builtin_rules_dir())
RULES = {r.id: r for r in load_builtin_rules(validate=True)}


def test_rules_directory_is_the_source_tree():
    assert builtin_rules_dir() == ROOT / "rules"
    assert len(FILES) == len(RULES) >= 7


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_rule_file_is_valid_and_named_after_its_id(path):
    data = yaml.safe_load(path.read_text())
    rule = build_rule(data, str(path), builtin=True, validate=True)
    assert path.stem == rule.id
    assert rule.family, "built-in rules belong to a family"
    assert rule.examples["fail"] and rule.examples["pass"]


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_examples(rule_id):
    problems = verify_rule(RULES[rule_id])
    assert problems == []


def test_docs_rules_md_is_in_sync():
    expected = render_docs(RULES.values())
    actual = (ROOT / "docs" / "rules.md").read_text()
    assert actual == expected, "regenerate: python -m kubelint_ml.engine.ruledocs > docs/rules.md"


SPEC_IDS = {
    "besteffort-qos",
    "missing-memory-limit",
    "missing-memory-request",
    "request-exceeds-limit",
    "memory-overcommit-ratio",
    "invalid-quantity",
    "suspicious-quantity",
}


def test_catalog_rule_ids_exist_with_their_default_severity():
    severities = {
        "besteffort-qos": ("warning", "error"),
        "missing-memory-limit": ("warning", "error"),
        "missing-memory-request": ("warning", None),
        "request-exceeds-limit": ("error", None),
        "memory-overcommit-ratio": ("info", None),
        "invalid-quantity": ("error", None),
        "suspicious-quantity": ("warning", None),
    }
    for rid, (sev, accel) in severities.items():
        assert RULES[rid].severity == sev
        assert RULES[rid].accelerator_severity == accel


def test_the_builtin_index_is_the_yaml() -> None:
    """rules/builtin.json (what a run reads) holds exactly the rule files' documents."""
    from kubelint_ml.engine.rulefile import BUILTIN_INDEX, builtin_index, builtin_rules_dir, load_builtin_rules

    assert (builtin_rules_dir() / BUILTIN_INDEX).read_text() == builtin_index(), (
        "regenerate: python -m kubelint_ml.engine.rulefile > rules/builtin.json"
    )
    fast, slow = load_builtin_rules(), load_builtin_rules(validate=True)
    assert [(r.id, r.source, r.params, r.severity, r.title) for r in fast] == [
        (r.id, r.source, r.params, r.severity, r.title) for r in slow
    ]
