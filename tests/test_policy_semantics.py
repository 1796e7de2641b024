"""Rego as conftest and Gatekeeper run it (OPA's non-strict built-in errors, iteration over null,
empty documents, Go's fmt in sprintf) and a runaway rule that costs one time limit per run.

The expected messages are OPA's own (opa-golib-python-bindings, OPA v1.20.2), written down here;
tests/test_policy_opa.py compares with OPA itself when it is available."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main


def check(*args: str) -> tuple[int, list[tuple]]:
    r = CliRunner().invoke(main, ["check", *args, "-f", "json", "-q", "--jobs", "1"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    data = json.loads(r.output)
    return r.exit_code, sorted(
        (f["rule"], f["line"], f["message"]) for f in data["findings"] if "." in f["rule"] or f["rule"] == "rule-error"
    )


def write(tmp: Path, name: str, text: str) -> str:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return str(p)


QUANTITY_POLICY = """package main
import rego.v1

deny contains msg if {
  some c in input.spec.containers
  to_number(c.resources.limits.cpu) > 4
  msg := sprintf("%s: more than 4 CPUs", [c.name])
}

deny contains msg if {
  some c in input.spec.containers
  not c.resources.limits.memory
  msg := sprintf("%s: no memory limit", [c.name])
}

warn contains msg if {
  x := 8 / count(input.spec.volumes)
  msg := sprintf("volume share %v", [x])
}
"""

POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
spec:
  containers:
  - name: a
    image: a:1
    resources:
      limits:
        cpu: 500m
  - name: b
    image: b:1
    resources:
      limits:
        cpu: "8"
        memory: 1Gi
  volumes: []
"""


def test_builtin_error_makes_the_expression_undefined_as_in_conftest(tmp_path):
    pol = write(tmp_path, "p/main.rego", QUANTITY_POLICY)
    pod = write(tmp_path, "pod.yaml", POD)
    _, got = check("--policy", pol, pod)
    # to_number("500m") and 8 / 0 fail: those expressions are undefined, the other results stay
    assert got == [("main.deny", 1, "a: no memory limit"), ("main.deny", 1, "b: more than 4 CPUs")]


def test_show_builtin_errors_makes_them_rule_errors(tmp_path):
    pol = write(tmp_path, "p/main.rego", QUANTITY_POLICY)
    pod = write(tmp_path, "pod.yaml", POD)
    _, got = check("--policy", pol, "--show-builtin-errors", pod)
    rules = sorted({g[0] for g in got})
    assert rules == ["rule-error"]
    assert any("main.deny" in g[2] and "could not parse string as number" in g[2] for g in got)
    assert any("main.warn" in g[2] and "divide by zero" in g[2] for g in got)


@pytest.mark.parametrize("strict", [False, True])
def test_iterating_over_null_is_undefined_even_strict(tmp_path, strict):
    pol = write(
        tmp_path,
        "p/ann.rego",
        'package ann\nimport rego.v1\n\ndeny contains k if {\n  some k, v in input.metadata.annotations\n  v == ""\n}\n'
        'warn contains "seen" if input.kind == "Pod"\n',
    )
    pod = write(tmp_path, "pod.yaml", POD)
    _, got = check("--policy", pol, *(["--show-builtin-errors"] if strict else []), pod)
    assert got == [("ann.warn", 1, "seen")]


def test_empty_document_is_null_input_without_rule_error(tmp_path):
    pol = write(
        tmp_path,
        "p/e.rego",
        'package e\nimport rego.v1\n\ndeny contains msg if {\n  object.get(input, ["metadata", "name"], "") == "p"\n'
        '  msg := "named p"\n}\n',
    )
    pod = write(tmp_path, "pod.yaml", POD + "---\n")
    _, got = check("--policy", pol, pod)
    assert got == [("e.deny", 1, "named p")]


# OPA v1.20.2's outputs (through opa-golib-python-bindings)
SPRINTF = [
    ('"pod %d"', '["name"]', "pod %!d(string=name)"),
    ('"%v %v %v %v"', "[1, 1.5, true, null]", "1 1.5 true null"),
    ('"%s"', "[3]", "%!s(int64=3)"),
    ('"%.2f"', "[1]", "%!f(int64=01)"),
    ('"%d|%v"', "[1.5, 1.5]", "%!d(float64=1.5)|1.5"),
    ('"%v"', '[{"b": 1, "a": [2]}]', '{"a": [2], "b": 1}'),
    ('"%v %v"', "[{3, 1}, set()]", "{1, 3} set()"),
    ('"%q %x %X %o %b %c %U"', '["q", 255, 255, 8, 5, 65, 65]', '"q" ff FF 10 101 A U+0041'),
    ('"%5d|%-5d|%05d|%+d"', "[3, 3, -3, 3]", "    3|3    |-0003|+3"),
    ('"%e %g %.3g %8.3f"', "[1234567.5, 1234567.5, 0.000012, 3.14159]", "1.234568e+06 1.2345675e+06 1.2e-05    3.142"),
    ('"%v %v"', "[1]", "1 %!v(MISSING)"),
    ('"%d"', "[1, 2]", "1%!(EXTRA int64=2)"),
    ('"%[2]d %[1]d %*d"', "[1, 2]", "2 1 %!d(MISSING)"),
    ('"%v"', "[12345678901234567890]", "12345678901234567890"),
    ('"%s"', '[{{"a": 1}}]', '{{"a": 1}}'),
    ('"100%%"', "[]", "100%"),
]


@pytest.mark.parametrize(("fmt", "args", "want"), SPRINTF)
def test_sprintf_is_gos_fmt_as_opa_calls_it(fmt, args, want):
    from kubelint_ml.policy.rego import Evaluator, parse

    ev = Evaluator([parse("s.rego", f"package s\nimport rego.v1\n\nx := sprintf({fmt}, {args})\n")])
    ev.set_input_json("{}")
    assert ev.eval("s.x") == want


RUNAWAY = """package slow
import rego.v1

deny contains "slow" if {
  a := numbers.range(1, 3000)
  count([1 | some i in a; some j in a; some k in a; i + j + k < 0]) == 0
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("on_every_input", [True, False])
def test_runaway_rule_costs_one_time_limit_per_run(tmp_path, monkeypatch, on_every_input):
    import kubelint_ml.policy.sandbox as sandbox

    monkeypatch.setattr(sandbox, "TIME_LIMIT", 1.0)
    fine = write(tmp_path, "fine/fine.rego", 'package fine\nimport rego.v1\n\nwarn contains "fine" if input.kind\n')
    # one that runs away on any input is stopped already when the policies load (on an empty input)
    guard = "" if on_every_input else '  input.kind == "ConfigMap"\n'
    write(tmp_path, "slow/slow.rego", RUNAWAY.replace("if {\n", "if {\n" + guard, 1))
    docs = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n" for i in range(8))
    files = [write(tmp_path, f"m/cm{n}.yaml", docs) for n in range(3)]
    t0 = time.monotonic()
    _, base = check("--policy", fine, *files)
    plain = time.monotonic() - t0
    t0 = time.monotonic()
    _, got = check("--policy", fine, "--policy", str(tmp_path / "slow"), *files)
    runaway = time.monotonic() - t0
    errors = [g for g in got if g[0] == "rule-error"]
    assert len(errors) == 1, errors
    assert "slow.deny" in errors[0][2] and "did not finish within 1 s" in errors[0][2]
    assert "not evaluated again in this run" in errors[0][2]
    assert [g for g in got if g[0] != "rule-error"] == base
    assert len(base) == 24
    assert runaway - plain < 1.0 + 1.5  # one time limit, and some slack on a loaded machine


def test_serve_mode_readmits_after_its_period_and_says_so_meanwhile(tmp_path, monkeypatch):
    import kubelint_ml.policy.sandbox as sandbox
    from kubelint_ml.input.loader import Limits, load
    from kubelint_ml.policy.lint import compile_policies

    monkeypatch.setattr(sandbox, "TIME_LIMIT", 0.5)
    write(tmp_path, "slow/slow.rego", RUNAWAY.replace("if {\n", 'if {\n  input.kind == "ConfigMap"\n', 1))
    policies = compile_policies([str(tmp_path / "slow")])
    assert policies is not None
    policies.readmit_after(60)
    docs = load(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n", Limits()).documents
    try:
        t0 = time.monotonic()
        first = policies.lint_file("a.yaml", [(docs[0], [])])
        second = policies.lint_file("b.yaml", [(docs[0], [])])
        took = time.monotonic() - t0
        assert [f.rule for f in first] == ["rule-error"] and "did not finish" in first[0].message
        assert [f.rule for f in second] == ["rule-error"] and "not evaluated" in second[0].message
        assert "for 60 s" in second[0].message
        assert 0.5 <= took < 0.5 + 1.0
        assert policies.disabled_rules() == {"slow.deny": "did not finish within 0.5 s"}
        # once the period has passed, the rule is tried again
        key = next(iter(policies.runtime.disabled))
        when, reason = policies.runtime.disabled[key]
        policies.runtime.disabled[key] = (when - 61, reason)
        third = policies.lint_file("c.yaml", [(docs[0], [])])
        assert "did not finish" in third[0].message
    finally:
        policies.close()


# Built-in errors OPA v1.20.2 reports in strict mode (eval_builtin_error / eval_type_error); in its
# default mode each makes the expression undefined. Some carry no position in the engine's errors.
FAILING = [
    'to_number("3000m")',
    "8 / input.zero",
    "8 % input.zero",
    "count(input.n)",
    "object.keys(input.n)",
    'object.get(input.n, "a", 1)',
    'concat(",", input.n)',
    'regex.match("[", "a")',
    'json.unmarshal("{")',
    'semver.compare("1", "x")',
    'time.parse_rfc3339_ns("x")',
    'time.parse_duration_ns("x")',
    'net.cidr_expand("x")',
    "numbers.range(1, input.n)",
    'units.parse_bytes("1b")',
    'units.parse("1KiB")',
    "count(input.n | {1}) > 0",
]


@pytest.mark.parametrize("expr", FAILING)
def test_each_builtin_error_is_undefined_by_default_and_an_error_when_strict(expr):
    from kubelint_ml.policy.rego import EvalError, Evaluator, parse

    src = f'package b\nimport rego.v1\n\nr contains "before" if true\nr contains "after" if {{\n  {expr}\n}}\n'
    for strict in (False, True):
        ev = Evaluator([parse("b.rego", src)], strict=strict)
        ev.set_input_json('{"n": null, "zero": 0}')
        if strict:
            with pytest.raises(EvalError):
                ev.eval("b.r")
        else:
            assert ev.eval("b.r") == ["before"]


def test_a_file_of_comments_only_is_one_null_input_as_in_conftest(tmp_path):
    pol = write(
        tmp_path,
        "p/k.rego",
        'package k\nimport rego.v1\n\ndeny contains "no kind" if not input.kind\n'
        'warn contains "null input" if input == null\n',
    )
    empty = write(tmp_path, "empty.yaml", "# nothing here yet\n")
    trailing = write(tmp_path, "trailing.yaml", "kind: Pod\n---\n")
    code, got = check("--policy", pol, empty, trailing)
    assert code == 1
    assert got == [
        ("k.deny", 1, "no kind"),  # empty.yaml
        ("k.deny", 3, "no kind"),  # trailing.yaml's empty document
        ("k.warn", 1, "null input"),
        ("k.warn", 3, "null input"),
    ]


# OPA v1.20.2: in a negated call, refs, composites holding refs and nested calls are evaluated first;
# one that is undefined makes the expression undefined (the body fails), not true.
NEGATED = [
    ("not f(input.missing)", None),
    ('not startswith(input.missing, "a")', None),
    ("x := input.p; not f(x.missing)", None),
    ("not [input.missing] == [1]", None),
    ("not count(input.missing) > 1", None),
    ("not input.missing > 1", None),
    ('not "a" in input.missing', None),
    ('not f({"a": input.missing})', None),
    ("not f(input.p) with input as {}", None),
    ("y := [1 | not f(input.missing)]; count(y) == 0", True),  # the comprehension is empty
    ("not input.missing == 1", True),
    ("not f(1) == input.missing", True),
    ("not input.missing[0] == 1", True),
    ("not input.missing", True),
    ("not f(input.p)", True),
    ("not f(ys)", True),
]


@pytest.mark.parametrize(("body", "want"), NEGATED)
def test_negated_call_with_an_undefined_argument_is_undefined_as_in_opa(body, want):
    from kubelint_ml.policy.rego import Evaluator, parse

    src = f"package p\nimport rego.v1\n\nf(_) := false\n\nys := [1 | input.missing]\n\nr if {{ {body} }}\n"
    m = parse("p.rego", src)
    assert len(m.text.splitlines()) == len(src.splitlines())  # positions of errors stay on their lines
    ev = Evaluator([m])
    ev.set_input_json('{"p": {}}')
    assert ev.eval("p.r") is want


def test_with_on_a_rule_of_the_package_and_negation_in_one_file():
    from kubelint_ml.policy.rego import Evaluator, parse

    src = """package w
import rego.v1

default allowed := ["a/"]

trusted(image) if {
  some p in allowed
  startswith(image, p)
}

r contains "mocked" if trusted("b/x") with allowed as ["b/"]

r contains "negated" if not trusted(input.missing)

r contains "plain" if not trusted("c/x")
"""
    ev = Evaluator([parse("w.rego", src)])
    ev.set_input_json("{}")
    # OPA: with replaces the rule; not trusted(input.missing) is undefined
    assert ev.eval("w.r") == ["mocked", "plain"]


@pytest.mark.slow
def test_serve_a_runaway_rule_costs_one_time_limit_then_each_review_says_it_was_skipped(tmp_path, monkeypatch):
    import kubelint_ml.policy.sandbox as sandbox
    from kubelint_ml.admission.review import POLICY_READMIT_SECONDS, load_policy, review

    monkeypatch.setattr(sandbox, "TIME_LIMIT", 0.5)
    write(tmp_path, "slow/slow.rego", RUNAWAY.replace("if {\n", 'if {\n  input.kind == "ConfigMap"\n', 1))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"rules": [str(tmp_path / "slow")]}))
    policy = load_policy(str(cfg))
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}}
    try:
        t0 = time.monotonic()
        first = review(policy, {"uid": "1", "operation": "CREATE", "object": cm})
        took_first = time.monotonic() - t0
        t0 = time.monotonic()
        second = review(policy, {"uid": "2", "operation": "CREATE", "object": cm})
        took_second = time.monotonic() - t0
    finally:
        policy.retire()
    errors = [f.message for f in first.findings if f.rule == "rule-error"]
    assert len(errors) == 1 and "did not finish within 0.5 s" in errors[0]
    assert f"not evaluated again for {POLICY_READMIT_SECONDS:g} s" in errors[0]
    later = [f.message for f in second.findings if f.rule == "rule-error"]
    assert len(later) == 1 and "not evaluated: it stopped earlier" in later[0]  # never a silent pass
    assert first.allowed is False and second.allowed is False
    assert took_first >= 0.5 and took_second < 0.4


def test_show_builtin_errors_does_not_refuse_a_policy_whose_error_is_a_builtin_one(tmp_path):
    # on the empty input the probe sees lower(null) fail: a built-in error, reported per document
    pol = write(
        tmp_path,
        "p/k.rego",
        'package k\nimport rego.v1\n\ndeny contains "pod" if lower(object.get(input, "kind", null)) == "pod"\n',
    )
    pod = write(tmp_path, "pod.yaml", "kind: Pod\n---\nmetadata: {}\n")
    _, got = check("--policy", pol, "--show-builtin-errors", pod)
    assert [g[0] for g in got] == ["k.deny", "rule-error"]
    assert "`lower` expects string argument" in got[1][2]
    _, got = check("--policy", pol, pod)
    assert got == [("k.deny", 1, "pod")]


def test_documents_are_conftests_a_licence_header_above_the_first_separator_is_a_null_document(tmp_path):
    pol = write(tmp_path, "p/k.rego", 'package k\nimport rego.v1\n\ndeny contains "no kind" if not input.kind\n')
    headed = write(tmp_path, "headed.yaml", "# Copyright\n# Licence\n---\nkind: Pod\n---\nkind: Job\n")
    doubled = write(tmp_path, "doubled.yaml", "kind: Pod\n---\n---\nkind: Job\n")
    code, got = check("--policy", pol, headed, doubled)
    # conftest: headed.yaml has 3 documents, the first null; doubled.yaml 2 (a `---` right after a
    # separator is not one), where the YAML stream has an empty one between them
    assert code == 1
    assert got == [("k.deny", 1, "no kind")]


def test_data_conftest_file_names_the_file_being_tested(tmp_path):
    pol = write(
        tmp_path,
        "p/f.rego",
        "package f\nimport rego.v1\n\n"
        'warn contains sprintf("%s in %s", [data.conftest.file.name, base]) if {\n'
        '  base := split(data.conftest.file.dir, "/")[count(split(data.conftest.file.dir, "/")) - 1]\n}\n',
    )
    a = write(tmp_path, "one/a.yaml", "kind: Pod\n")
    b = write(tmp_path, "two/b.yaml", "kind: Job\n")
    _, got = check("--policy", pol, a, b)
    assert got == [("f.warn", 1, "a.yaml in one"), ("f.warn", 1, "b.yaml in two")]


# OPA v1.20.2's values
EXTENDED = [
    ('crypto.sha256("abc")', "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ('crypto.md5("héllo")', "be50e8478cf24ff3595bc7307fb91b50"),
    ('crypto.sha1("")', "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
    ('crypto.hmac.sha256("abc", "k")', "342e519ce0ad6c03a36b98eeb3f1d130db4813b9df4d1160eda488d712dc78ee"),
    ('crypto.hmac.md5("a", "b")', "5e69fae25f4b4f3e8cc5de09a8163520"),
    ('crypto.hmac.equal("a", "b")', False),
    ('net.cidr_intersects("10.0.0.0/8", "10.1.0.0/16")', True),
    ('net.cidr_intersects("10.0.0.0/8", "::/0")', False),
    ('units.parse_bytes("2.5")', 2),  # truncated, as big.Float.Int
    ('units.parse_bytes("123456789.123456789Mi")', 129453826111917),
    ('units.parse_bytes("5.Gi")', 5368709120),
    ('units.parse("500m")', 0.5),
    ('units.parse("1.5Gi")', 1610612736),
    ("semver.is_valid(1)", False),
    ('semver.is_valid("v1.2.3")', True),
    ('semver.is_valid("01.2.3-alpha+meta")', True),
]


@pytest.mark.parametrize(("expr", "want"), EXTENDED)
def test_builtins_the_engine_lacks_give_opas_values(expr, want):
    from kubelint_ml.policy.rego import Evaluator, parse

    ev = Evaluator([parse("x.rego", f"package x\nimport rego.v1\n\nr := {expr}\n")])
    ev.set_input_json("{}")
    assert ev.eval("x.r") == want
