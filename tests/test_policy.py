"""Rego (conftest) and Gatekeeper policies: exact findings, verification, bad input, limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine import cel

needs_cel = pytest.mark.skipif(
    not cel.available(),
    reason="the K8sNativeValidation templates need the CEL runtime (Python >= 3.11 and cel-expr-python)",
)

ROOT = Path(__file__).resolve().parent.parent
POL = ROOT / "fixtures" / "policies"
MANIFEST = POL / "manifests" / "train.yaml"
LIBRARY = ROOT.parent / "shared" / "policy-suites" / "gatekeeper-library" / "library"


def cli(*args: str, **kw):
    return CliRunner().invoke(main, list(args), catch_exceptions=False, **kw)


def policy_findings(*args: str, suppressed: bool = False) -> list[tuple]:
    r = cli("check", *args, "-f", "json", "-q", "--jobs", "1", *(["--show-suppressed"] if suppressed else []))
    assert r.exit_code in (0, 1), r.output
    data = json.loads(r.output)
    rows = data["findings"] + (data["suppressed"] if suppressed else [])
    return sorted(
        (f["rule"], f["severity"], f["line"], f["column"], f["path"], f["message"], f.get("suppressed"))
        for f in rows
        if "." in f["rule"] or "/" in f["rule"] or f["rule"] == "rule-error"
    )


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


# ----------------------------------------------------------------------------
# conftest semantics


def test_conftest_findings_exact():
    got = policy_findings("--policy", str(POL / "conftest"), str(MANIFEST), suppressed=True)
    assert got == sorted(
        [
            (
                "gpu.deny_cost_center",
                "error",
                1,
                1,
                "",
                "Job train-llm has no cost-center label",
                "exception in package gpu",
            ),
            (
                "gpu.deny_too_many_gpus",
                "error",
                17,
                13,
                "spec.template.spec.containers[0].resources.limits",
                "container trainer asks for 8 GPUs; at most 4 without a quota exception",
                None,
            ),
            ("gpu.warn_latest", "warning", 1, 1, "", "container trainer uses a :latest image", None),
            (
                "main.deny",
                "error",
                1,
                1,
                "",
                "container trainer pulls docker.io/library/pytorch:latest from outside registry.internal/",
                None,
            ),
            (
                "main.deny",
                "error",
                21,
                1,
                "",
                "container eval pulls docker.io/library/pytorch:2.3 from outside registry.internal/",
                "registry mirror lands next sprint",
            ),
            ("main.warn", "warning", 1, 1, "", "Job train-llm has no activeDeadlineSeconds", None),
        ]
    )


def test_rules_option_takes_rego_and_namespace_restricts():
    got = policy_findings("--rules", str(POL / "conftest"), "--policy-namespace", "main", str(MANIFEST))
    assert {g[0] for g in got} == {"main.deny", "main.warn"}


def test_value_forms_and_v1_v0_detection(tmp_path):
    write(
        tmp_path,
        "p/forms.rego",
        """package forms
import rego.v1

deny contains "a string in a set" if input.kind == "Job"
violation contains {"msg": "an object", "details": {"path": ["metadata", "name"]}} if input.kind == "Job"
warn_array := ["one", "two"] if input.kind == "Job"
deny_bool if input.kind == "Job"
""",
    )
    write(
        tmp_path,
        "p/legacy.rego",
        """package legacy
import future.keywords.in

deny[msg] {
  "Job" in {input.kind}
  msg := "v0 with future keywords"
}
""",
    )
    m = write(tmp_path, "m.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n")
    got = policy_findings("--policy", str(tmp_path / "p"), str(m))
    assert got == sorted(
        [
            ("forms.deny", "error", 1, 1, "", "a string in a set", None),
            ("forms.violation", "error", 4, 3, "metadata.name", "an object", None),
            ("forms.warn_array", "warning", 1, 1, "", "one", None),
            ("forms.warn_array", "warning", 1, 1, "", "two", None),
            ("forms.deny_bool", "error", 1, 1, "", "forms.deny_bool failed", None),
            ("legacy.deny", "error", 1, 1, "", "v0 with future keywords", None),
        ]
    )


def test_combine_sees_all_documents(tmp_path):
    write(
        tmp_path,
        "p/c.rego",
        """package main
import rego.v1

deny contains msg if {
  names := [d.contents.metadata.name | some d in input]
  count(names) != count({n | some n in names})
  msg := sprintf("duplicate names across %d documents", [count(names)])
}
""",
    )
    write(tmp_path, "m/a.yaml", "kind: Job\nmetadata:\n  name: x\n")
    write(tmp_path, "m/b.yaml", "kind: Job\nmetadata:\n  name: x\n")
    got = policy_findings("--policy", str(tmp_path / "p"), "--combine", str(tmp_path / "m"))
    assert [g[0] for g in got] == ["main.deny"] and got[0][5] == "duplicate names across 2 documents"
    assert policy_findings("--policy", str(tmp_path / "p"), str(tmp_path / "m")) == []


def test_combined_findings_keep_the_order_whatever_the_jobs(tmp_path):
    """The combined documents' finding is added after every file's own: the output is still
    sorted, whatever --jobs says (--combine runs in one process)."""
    write(
        tmp_path,
        "p/c.rego",
        """package main
import rego.v1

deny contains msg if {
  count(input) > 1
  msg := sprintf("%d documents", [count(input)])
}
""",
    )
    pad = "# " + "x" * 78 + "\n"  # 60 files of 5 KB: enough for the parallel path
    for i in range(60):
        job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
        write(tmp_path, f"m/f{i:02d}.yaml", job + "      containers:\n      - name: c\n        image: i:1\n" + pad * 60)
    outs = [
        cli(
            "check", "--policy", str(tmp_path / "p"), "--combine", str(tmp_path / "m"), "-f", "json", "--jobs", j
        ).output
        for j in ("1", "2")
    ]
    assert outs[0] == outs[1]
    found = json.loads(outs[0])["findings"]
    keys = [(f["file"], f["line"], f["column"]) for f in found]
    assert len(found) > 60 and keys == sorted(keys)  # the built-in rules' findings on every file, and:
    assert [f["message"] for f in found if f["rule"] == "main.deny"] == ["60 documents"]


def test_sarif_and_baseline_carry_policy_findings(tmp_path):
    out = tmp_path / "r.sarif"
    r = cli("check", "--policy", str(POL / "conftest"), str(MANIFEST), "-f", "sarif", "-o", str(out))
    assert r.exit_code == 1
    sarif = json.loads(out.read_text())
    assert "gpu.deny_too_many_gpus" in {x["ruleId"] for x in sarif["runs"][0]["results"]}
    base = tmp_path / "b.json"
    assert cli("check", "--policy", str(POL / "conftest"), str(MANIFEST), "--write-baseline", str(base)).exit_code == 0
    assert policy_findings("--policy", str(POL / "conftest"), "--baseline", str(base), str(MANIFEST)) == []


# ----------------------------------------------------------------------------
# Gatekeeper


@needs_cel
def test_gatekeeper_findings_exact():
    got = policy_findings("--policy", str(POL / "gatekeeper"), str(MANIFEST))
    assert got == sorted(
        [
            (
                "K8sGpuJobDeadline/gpu-jobs-end",
                "error",
                1,
                1,
                "",
                "GPU Job train-llm has no activeDeadlineSeconds",
                None,
            ),
            (
                "K8sGpuJobDeadline/gpu-jobs-end",
                "error",
                63,
                3,
                "spec.activeDeadlineSeconds",
                "GPU Job sweep may run 172800s, more than 86400s",
                None,
            ),
            (
                "K8sTeamLabel/known-team",
                "warning",
                54,
                1,
                "",
                'team label "marketing" is not one of research, platform',
                None,
            ),
        ]
    )


@needs_cel
def test_enforcement_action_dryrun_is_info_and_namespace_selector_noted(tmp_path):
    text = (
        (POL / "gatekeeper" / "constraints.yaml")
        .read_text()
        .replace("enforcementAction: deny", "enforcementAction: dryrun")
    )
    text = text.replace(
        '    excludedNamespaces: ["kube-system"]', '    namespaceSelector:\n      matchLabels:\n        gpu: "yes"'
    )
    d = tmp_path / "gk"
    d.mkdir()
    for f in ("gpu-deadline-template.yaml", "team-label-template.yaml"):
        (d / f).write_text((POL / "gatekeeper" / f).read_text())
    (d / "constraints.yaml").write_text(text)
    r = cli("check", "--policy", str(d), str(MANIFEST), "-f", "json", "-q", "-v", "--jobs", "1")
    sev = {f["severity"] for f in json.loads(r.stdout)["findings"] if f["rule"].startswith("K8sGpuJobDeadline/")}
    assert sev == {"info"}
    assert "namespaceSelector cannot be judged offline" in r.stderr


def test_referential_template_reads_inventory_of_the_run(tmp_path):
    if not LIBRARY.is_dir():
        pytest.skip("../shared/policy-suites is not beside the project")
    pol = tmp_path / "gk"
    pol.mkdir()
    (pol / "template.yaml").write_text((LIBRARY / "general" / "uniqueingresshost" / "template.yaml").read_text())
    (pol / "constraint.yaml").write_text(
        "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sUniqueIngressHost\nmetadata:\n  name: unique-host\n"
        'spec:\n  match:\n    kinds:\n      - apiGroups: ["networking.k8s.io"]\n        kinds: ["Ingress"]\n'
    )
    ing = (
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {n}\n  namespace: ml\n"
        "spec:\n  rules:\n    - host: tensorboard.example.com\n"
    )
    write(tmp_path, "m/a.yaml", ing.format(n="tb-a"))
    write(tmp_path, "m/b.yaml", ing.format(n="tb-b"))
    got = policy_findings("--policy", str(pol), str(tmp_path / "m"))
    assert [(g[0], g[2]) for g in got] == [("K8sUniqueIngressHost/unique-host", 1)] * 2


# ----------------------------------------------------------------------------
# rules verify


@needs_cel
def test_verify_rego_tests_and_suites_json():
    r = cli("rules", "verify", str(POL / "conftest"), "--format", "json")
    assert r.exit_code == 0, r.output
    assert [(c["name"], c["passed"]) for c in json.loads(r.output)] == [
        ("data.gpu.test_eight_gpus_denied", True),
        ("data.gpu.test_two_gpus_allowed", True),
    ]
    r = cli("rules", "verify", str(POL / "gatekeeper-suite"), "--format", "json")
    assert r.exit_code == 0, r.output
    assert [(c["name"], c["passed"]) for c in json.loads(r.output)] == [
        ("ml-policies/gpu-deadline/no-deadline", True),
        ("ml-policies/gpu-deadline/ok", True),
        ("ml-policies/team-label/bad-team", True),
        ("ml-policies/team-label/known-team", True),
    ]


def test_verify_reports_a_failing_case(tmp_path):
    write(tmp_path, "t/x_test.rego", "package x\nimport rego.v1\n\ntest_fails if { 1 == 2 }\n")
    r = cli("rules", "verify", str(tmp_path / "t"), "--format", "json")
    assert r.exit_code == 1
    assert json.loads(r.output) == [
        {
            "name": "data.x.test_fails",
            "passed": False,
            "file": str(tmp_path / "t" / "x_test.rego"),
            "reason": "undefined",
        }
    ]


@pytest.fixture(scope="module")
def library_cases():
    if not LIBRARY.is_dir():
        pytest.skip("../shared/policy-suites/gatekeeper-library is not beside the project")
    r = CliRunner().invoke(main, ["rules", "verify", str(LIBRARY), "--format", "json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output[-2000:]
    return json.loads(r.output)


@pytest.mark.slow
def test_gatekeeper_library_conformance(library_cases):
    assert len(library_cases) == 270
    passed = sum(c["passed"] for c in library_cases)
    assert passed / len(library_cases) >= 0.95, [c for c in library_cases if not c["passed"]]
    # every case, the two that failed before included: the HPA case's sprintf with a missing argument
    # prints %!v(MISSING) as OPA does, and the users case's `not accept_value(rule, v, params.ranges)`
    # with params.ranges undefined is undefined, as in OPA (tests/test_policy_opa.py)
    assert [c["name"] for c in library_cases if not c["passed"]] == []


@pytest.mark.slow
def test_gatekeeper_library_every_template_loads(library_cases):
    assert not [c for c in library_cases if "template or constraint" in c.get("reason", "")]


# ----------------------------------------------------------------------------
# Bad input and limits


def test_a_package_over_several_files_is_queried_rule_by_rule(tmp_path):
    write(tmp_path, "p/a.rego", 'package main\nimport rego.v1\n\ndeny contains "from a" if input.kind == "Job"\n')
    write(
        tmp_path,
        "p/b.rego",
        'package main\n\ndeny[msg] {\n  input.kind == "Job"\n  msg := "from b"\n}\n'
        'warn[msg] {\n  input.kind == "Job"\n  msg := "warn b"\n}\n',
    )
    m = write(tmp_path, "m.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n")
    assert [(g[0], g[5]) for g in policy_findings("--policy", str(tmp_path / "p"), str(m))] == [
        ("main.deny", "from a"),
        ("main.deny", "from b"),
        ("main.warn", "warn b"),
    ]


def test_a_new_line_ends_an_expression_as_in_opa(tmp_path):
    write(
        tmp_path,
        "p/n.rego",
        """package main

deny[msg] {
  input.spec.minReplicas
  (input.spec.maxReplicas - input.spec.minReplicas) < 2
  msg := "spread under 2"
}
""",
    )
    m = write(tmp_path, "m.yaml", "kind: HorizontalPodAutoscaler\nspec:\n  minReplicas: 3\n  maxReplicas: 4\n")
    assert [(g[0], g[5]) for g in policy_findings("--policy", str(tmp_path / "p"), str(m))] == [
        ("main.deny", "spread under 2")
    ]


def test_rego_syntax_error_exit_2_with_position(tmp_path):
    p = write(tmp_path, "p/bad.rego", "package main\nimport rego.v1\n\ndeny contains msg if {\n  msg := \n}\n")
    r = cli("check", "--policy", str(p.parent), str(MANIFEST))
    assert r.exit_code == 2
    assert f"{p}:6:1:" in r.stderr or f"{p}:5:" in r.stderr, r.stderr


def test_unsafe_variable_is_a_compile_error(tmp_path):
    p = write(tmp_path, "p/u.rego", "package main\n\ndeny[msg] {\n  x := 1\n}\n")
    r = cli("check", "--policy", str(p.parent), str(MANIFEST))
    assert r.exit_code == 2 and "main.deny: does not compile" in r.stderr and "unsafe" in r.stderr


def test_type_error_is_exit_2_with_position(tmp_path):
    p = write(tmp_path, "p/t.rego", 'package main\nimport rego.v1\n\ndeny contains x if {\n  x := 1 + "a"\n}\n')
    r = cli("check", "--policy", str(p.parent), str(MANIFEST))
    assert r.exit_code == 2 and f"{p}:5:" in r.stderr and "expects numeric argument" in r.stderr, r.stderr


@pytest.mark.parametrize(
    "call",
    ['http.send({"method": "get", "url": "http://127.0.0.1:9"})', "time.now_ns()", 'net.lookup_ip_addr("localhost")'],
)
def test_network_and_clock_builtins_are_refused(tmp_path, call):
    p = write(tmp_path, "p/n.rego", f"package main\nimport rego.v1\n\ndeny contains x if {{\n  x := {call}\n}}\n")
    r = cli("check", "--policy", str(p.parent), str(MANIFEST))
    assert r.exit_code == 2
    assert f"{p}:5:" in r.stderr and "is not available" in r.stderr


def test_missing_template_exit_2(tmp_path):
    write(tmp_path, "gk/c.yaml", (POL / "gatekeeper" / "constraints.yaml").read_text())
    r = cli("check", "--policy", str(tmp_path / "gk"), str(MANIFEST))
    assert r.exit_code == 2 and "no ConstraintTemplate defines kind K8sGpuJobDeadline" in r.stderr


def test_non_compiling_template_exit_2(tmp_path):
    text = (
        (POL / "gatekeeper" / "gpu-deadline-template.yaml")
        .read_text()
        .replace(
            "          not input.review.object.spec.activeDeadlineSeconds\n",
            "          not input.review.object.spec[\n",
        )
    )
    write(tmp_path, "gk/t.yaml", text)
    r = cli("check", "--policy", str(tmp_path / "gk"), str(MANIFEST))
    assert r.exit_code == 2 and "ConstraintTemplate k8sgpujobdeadline" in r.stderr and "does not compile" in r.stderr


@pytest.mark.slow
def test_runaway_policy_is_bounded_and_other_findings_stay(tmp_path, monkeypatch):
    import kubelint_ml.policy.sandbox as sandbox

    monkeypatch.setattr(sandbox, "TIME_LIMIT", 1.0)
    monkeypatch.setattr(sandbox, "MEMORY_LIMIT", 256 << 20)
    write(
        tmp_path,
        "p/slow.rego",
        """package slow
import rego.v1

deny contains "slow" if {
  input.metadata.name == "train-llm"
  a := numbers.range(1, 3000)
  count([1 | some i in a; some j in a; some k in a; i + j + k < 0]) == 0
}
""",
    )
    write(
        tmp_path,
        "p/big.rego",
        """package big
import rego.v1

deny contains "big" if {
  input.metadata.name == "eval-llm"
  count(concat("", [s | some i in numbers.range(1, 100000000); s := sprintf("%d-padding-padding", [i])])) > 0
}
""",
    )
    write(tmp_path, "p/fine.rego", 'package fine\nimport rego.v1\n\nwarn contains "fine" if input.kind == "Job"\n')
    got = policy_findings("--policy", str(tmp_path / "p"), str(MANIFEST))
    errors = [g for g in got if g[0] == "rule-error"]
    assert len(errors) == 2
    assert any("slow.deny" in g[5] and "did not finish within 1 s" in g[5] for g in errors)
    assert any("big.deny" in g[5] and ("memory" in g[5] or "did not finish" in g[5]) for g in errors)
    assert [g[2] for g in got if g[0] == "fine.warn"] == [1, 21, 54]


class _Panic(BaseException):
    """What the Rego binding raises for an engine's panic: not an Exception."""


def _die_or_panic(job: str) -> str:
    import os

    if job == "die":
        os._exit(3)
    if job == "panic":
        raise _Panic("boom")
    return job


def test_a_dead_helper_and_a_panic_are_not_told_as_time_limits():
    """A helper that dies is said to have died at once (it was said to have run past the time limit
    when the parent saw the end of its pipe before it was reaped); an evaluation that panics is that
    evaluation's error, and the helper goes on with the next ones (it died, and each was a limit)."""
    import time

    from kubelint_ml.policy.sandbox import Bounded

    bounded = Bounded(_die_or_panic, time_limit=30)
    start = time.monotonic()
    try:
        got = bounded.run(["a", "die", "b", "panic", "c"])
    finally:
        bounded.close()
    assert got == [
        ("ok", "a"),
        ("limit", "ran out of its memory limit"),
        ("ok", "b"),
        ("error", "_Panic: boom"),
        ("ok", "c"),
    ]
    assert time.monotonic() - start < 10  # never waited for the 30 s time limit


@pytest.mark.slow
def test_corpus_with_library_templates_and_conftest_keeps_builtin_findings(tmp_path):
    corpus = ROOT.parent / "shared" / "corpus"
    if not (LIBRARY.is_dir() and corpus.is_dir()):
        pytest.skip("../shared is not beside the project")
    pol = tmp_path / "gk"
    for name in (
        "general/containerlimits",
        "general/requiredlabels",
        "general/allowedrepos",
        "pod-security-policy/privileged-containers",
        "general/replicalimits",
    ):
        src = LIBRARY / name
        dst = pol / name.replace("/", "-")
        dst.mkdir(parents=True)
        (dst / "template.yaml").write_text((src / "template.yaml").read_text())
        sample = sorted((src / "samples").iterdir())[0] / "constraint.yaml"
        (dst / "constraint.yaml").write_text(sample.read_text())
    base = cli("check", str(corpus), "-f", "json", "-q", "--jobs", "2")
    with_pol = cli(
        "check", str(corpus), "-f", "json", "-q", "--jobs", "2", "--policy", str(pol), "--policy", str(POL / "conftest")
    )
    assert base.exit_code in (0, 1) and with_pol.exit_code in (0, 1), with_pol.output[-2000:]
    a, b = json.loads(base.output)["findings"], json.loads(with_pol.output)["findings"]
    builtin = [f for f in b if "." not in f["rule"] and "/" not in f["rule"]]
    assert builtin == a
    assert not [f for f in b if f["rule"] == "rule-error"]
    assert len(b) > len(a)


def test_context_files_join_the_inventory(tmp_path):
    if not LIBRARY.is_dir():
        pytest.skip("../shared/policy-suites is not beside the project")
    from kubelint_ml.policy.cli import load_policies
    from kubelint_ml.run.config import Config
    from kubelint_ml.run.inputs import RunInputs
    from kubelint_ml.run.lint import run

    pol = tmp_path / "gk"
    pol.mkdir()
    (pol / "template.yaml").write_text((LIBRARY / "general" / "uniqueingresshost" / "template.yaml").read_text())
    (pol / "constraint.yaml").write_text(
        "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sUniqueIngressHost\nmetadata:\n  name: unique-host\n"
        'spec:\n  match:\n    kinds:\n      - apiGroups: ["networking.k8s.io"]\n        kinds: ["Ingress"]\n'
    )
    ing = (
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {n}\n  namespace: ml\n"
        "spec:\n  rules:\n    - host: tensorboard.example.com\n"
    )
    linted = write(tmp_path, "m/a.yaml", ing.format(n="tb-a"))
    context = write(tmp_path, "cluster/b.yaml", ing.format(n="tb-b"))
    policies = load_policies([str(pol)], context_paths=[str(context)])
    try:
        result, _ = run([str(linted)], RunInputs(Config(), [], jobs=1, policies=policies))
    finally:
        policies.close()
    assert [(f.rule, f.file, f.line) for f in result.findings] == [("K8sUniqueIngressHost/unique-host", str(linted), 1)]


@needs_cel
def test_parallel_run_gives_the_same_policy_findings(tmp_path, force_parallel):
    for i in range(6):
        (tmp_path / f"m{i}.yaml").write_text(MANIFEST.read_text())
    args = ("--policy", str(POL / "conftest"), "--policy", str(POL / "gatekeeper"), str(tmp_path))
    one = cli("check", *args, "-f", "json", "--jobs", "1", "--show-suppressed")
    two = cli("check", *args, "-f", "json", "--jobs", "2", "--show-suppressed")
    assert one.exit_code == two.exit_code == 1
    a, b = json.loads(one.output), json.loads(two.output)
    assert a["findings"] == b["findings"] and a["suppressed"] == b["suppressed"]
    assert len([f for f in a["findings"] if f["rule"] == "main.deny"]) == 6


def test_exceptions_cover_deny_and_violation_only(tmp_path):
    write(
        tmp_path,
        "p/e.rego",
        """package main
import rego.v1

deny contains "plain deny" if input.kind == "Job"
deny_latest contains "latest tag" if input.kind == "Job"
warn_latest contains "latest warning" if input.kind == "Job"
violation_other contains "other" if input.kind == "Job"

exception contains ["latest", ""] if input.metadata.labels.exempt == "yes"
""",
    )
    m = write(tmp_path, "m.yaml", 'kind: Job\nmetadata:\n  name: j\n  labels:\n    exempt: "yes"\n')
    got = [(g[0], g[6]) for g in policy_findings("--policy", str(tmp_path / "p"), str(m), suppressed=True)]
    assert got == [
        ("main.deny", "exception in package main"),
        ("main.deny_latest", "exception in package main"),
        ("main.violation_other", None),
        ("main.warn_latest", None),
    ]


@needs_cel
def test_rules_list_shows_policy_rules():
    r = cli("rules", "list", "--format", "json", "--rules", str(POL / "conftest"), "--rules", str(POL / "gatekeeper"))
    assert r.exit_code == 0, r.output
    policy = [(e["id"], e["severity"], e["source"]) for e in json.loads(r.output) if e["family"] == "policy"]
    assert policy == [
        ("K8sGpuJobDeadline/gpu-jobs-end", "error", str(POL / "gatekeeper" / "constraints.yaml")),
        ("K8sTeamLabel/known-team", "warning", str(POL / "gatekeeper" / "constraints.yaml")),
        ("gpu.deny_cost_center", "error", str(POL / "conftest" / "gpu.rego")),
        ("gpu.deny_too_many_gpus", "error", str(POL / "conftest" / "gpu.rego")),
        ("gpu.warn_latest", "warning", str(POL / "conftest" / "gpu.rego")),
        ("main.deny", "error", str(POL / "conftest" / "ml.rego")),
        ("main.warn", "warning", str(POL / "conftest" / "ml.rego")),
    ]


# ----------------------------------------------------------------------------
# The config's and the command line's choices apply to policy rules too


def test_disable_and_severity_overrides_name_policy_rules(tmp_path):
    config = write(
        tmp_path,
        "k.yaml",
        f"rules: [{POL / 'conftest'}, {POL / 'gatekeeper'}]\n"
        "disable: [main.warn, K8sTeamLabel/known-team]\n"
        "overrides:\n"
        "  gpu.warn_latest: {severity: error}\n"
        "  K8sGpuJobDeadline/gpu-jobs-end: {severity: warning}\n",
    )
    found = policy_findings(str(MANIFEST), "--config", str(config))
    rules = {(rule, severity) for rule, severity, *_ in found}
    assert ("gpu.warn_latest", "error") in rules and ("K8sGpuJobDeadline/gpu-jobs-end", "warning") in rules
    assert not {r for r, _ in rules} & {"main.warn", "K8sTeamLabel/known-team"}
    assert ("main.deny", "error") in rules and ("gpu.deny_too_many_gpus", "error") in rules  # the rest as they were
    # The reports' rule table says the overridden severity too.
    r = cli("check", str(MANIFEST), "--config", str(config), "-f", "sarif", "-q")
    rules_table = {d["id"]: d for d in json.loads(r.output)["runs"][0]["tool"]["driver"]["rules"]}
    assert rules_table["gpu.warn_latest"]["defaultConfiguration"]["level"] == "error"
    # On the command line: --disable takes a policy rule id.
    found = policy_findings(str(MANIFEST), "--policy", str(POL / "conftest"), "--disable", "main.deny")
    assert "main.deny" not in {f[0] for f in found} and "main.warn" in {f[0] for f in found}


def test_unknown_or_parametrised_policy_rule_ids_are_refused(tmp_path):
    typo = write(tmp_path, "typo.yaml", f"rules: [{POL / 'conftest'}]\ndisable: [main.wran]\n")
    r = CliRunner().invoke(main, ["check", str(MANIFEST), "--config", str(typo)])
    assert r.exit_code == 2 and "unknown rule id 'main.wran' (did you mean 'main.warn'?)" in r.output
    params = write(
        tmp_path, "params.yaml", f"rules: [{POL / 'conftest'}]\noverrides:\n  main.warn: {{params: {{a: 1}}}}\n"
    )
    r = CliRunner().invoke(main, ["check", str(MANIFEST), "--config", str(params)])
    assert r.exit_code == 2 and "main.warn is a policy rule; it takes no params" in r.output
    bad = write(tmp_path, "bad.yaml", "disable: [Besteffort_QoS]\n")
    r = CliRunner().invoke(main, ["check", str(MANIFEST), "--config", str(bad)])
    assert r.exit_code == 2 and "disable.0" in r.output
