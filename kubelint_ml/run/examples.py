"""Running rules against the pass/fail examples in their own files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kubelint_ml.engine.rulefile import Rule


def _config(example: dict):
    from kubelint_ml.run.config import Config, ConfigError, Profile

    cfg = Config()
    if example.get("profile"):
        try:
            cfg.profile = Profile.from_dict(example["profile"], Path.cwd())
        except ConfigError as e:
            raise ValueError(f"example profile: {e}") from None
    return cfg


def _usage(example: dict):
    """The example's observed usage (a snapshot document; kind, version and window may be left out)."""
    if "usage" not in example:
        return None
    from kubelint_ml.usage.snapshot import example_usage

    return example_usage(example["usage"])


def _with_params(rule: Rule, example: dict) -> Rule:
    if not example.get("params"):
        return rule
    from kubelint_ml.records import replace

    params = dict(rule.params)
    params.update(example["params"])
    return replace(rule, params=params)


def check_example(rule: Rule, example: dict, expect_fail: bool) -> list[str]:
    """Problems with one example (empty when it behaves as documented)."""
    from kubelint_ml.run.lint import lint_text

    label = f"{'fail' if expect_fail else 'pass'} example {example.get('title') or ''}".strip()
    try:
        cfg = _config(example)
        usage = _usage(example)
    except ValueError as e:
        return [f"{label}: {e}"]
    findings = lint_text(
        example["manifest"].encode(), [_with_params(rule, example)], cfg, f"{rule.id}-example.yaml", usage=usage
    )
    others = [f for f in findings if f.rule == "parse-error"]
    mine = [f for f in findings if f.rule == rule.id and f.suppressed is None]
    problems = [f"{label}: unexpected parse-error at line {f.line}: {f.message}" for f in others]
    if not expect_fail:
        problems += [f"{label}: unexpected finding at line {f.line}: {f.message}" for f in mine]
        return problems
    expected = example.get("findings", [])
    remaining = list(mine)
    for exp in expected:
        match = None
        for f in remaining:
            if f.line != exp["line"]:
                continue
            if "column" in exp and f.column != exp["column"]:
                continue
            if "severity" in exp and f.severity != exp["severity"]:
                continue
            if "path" in exp and f.path != exp["path"]:
                continue
            if "message" in exp and exp["message"] not in f.message:
                continue
            if "detail" in exp and exp["detail"] not in (f.detail or ""):
                continue
            match = f
            break
        if match is None:
            got = "; ".join(f"line {f.line} [{f.severity}] {f.message}" for f in mine) or "no findings"
            problems.append(
                f"{label}: expected a finding at line {exp['line']}"
                + (f" containing {exp['message']!r}" if "message" in exp else "")
                + (f" with detail containing {exp['detail']!r}" if "detail" in exp else "")
                + f"; got: {got}"
            )
        else:
            remaining.remove(match)
    for f in remaining:
        problems.append(f"{label}: unexpected extra finding at line {f.line}: {f.message}")
    return problems


def verify_rule(rule: Rule) -> list[str]:
    problems: list[str] = []
    for ex in rule.examples.get("fail", []):
        problems += check_example(rule, ex, True)
    for ex in rule.examples.get("pass", []):
        problems += check_example(rule, ex, False)
    return problems


def verify_rules(rules: list[Rule]) -> Iterator[tuple[Rule, list[str]]]:
    for rule in rules:
        yield rule, verify_rule(rule)
