"""Attacks through CRDs, custom rules, baselines, config, output files and odd YAML, run as a user would.

Each test runs the real command line in a subprocess under the memory cap of
``test_hardening_cli`` and checks exit codes, stderr and the other files'
findings.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_hardening_cli import _RULE, HOSTILE, MEMORY_CAP, ROOT, lines_of, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS memory cap as on Linux")]
needs_cel = pytest.mark.skipif(
    not __import__("kubelint_ml.engine.cel").engine.cel.available(), reason="CEL runtime needs Python >= 3.11"
)

GOOD = "good.yaml:15:11: missing-memory-limit container 'train' has no memory limit"


def _good(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_bytes((HOSTILE / "good.yaml").read_bytes())


def _crd(field_schema: str, value: str, version: str = "v1") -> str:
    return f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: widgets.ex.com}}
spec:
  group: ex.com
  names: {{kind: Widget, plural: widgets}}
  scope: Namespaced
  versions:
  - name: {version}
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              n: {field_schema}
---
apiVersion: ex.com/v1
kind: Widget
metadata: {{name: w}}
spec:
  n: {value}
"""


def _has_good(run: object) -> bool:
    return any(ln.startswith(GOOD) for ln in lines_of(run))  # type: ignore[arg-type]


# ----------------------------------------------------------------------------
# CRDs among the linted files


@pytest.mark.parametrize(
    "schema, value, expected",
    [
        (
            "{type: integer, multipleOf: 0}",
            "5",
            "crd.yaml:19:34: schema-invalid spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.n"
            ".multipleOf: multipleOf must be greater than zero, found 0; ignored",
        ),
        ("{type: number, multipleOf: 0.1}", "9" * 330, None),
        (
            "{type: number, multipleOf: 0.1}",
            "0.35",
            "crd.yaml:25:3: schema-invalid spec.n: 0.35 is not a multiple of 0.1",
        ),
        (
            "{type: string, pattern: '(a)\\1'}",
            "aa",
            "crd.yaml:19:33: schema-invalid spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.n"
            ".pattern: pattern '(a)\\\\1' is not a valid RE2 regular expression (invalid escape sequence: \\1); the API "
            "server rejects it; ignored",
        ),
        (
            "{type: string, pattern: '^(a+)+$'}",
            "a" * 30 + "!",
            "crd.yaml:25:3: schema-invalid spec.n: '" + "a" * 30 + "!' does not match the pattern ^(a+)+$",
        ),
    ],
)
def test_crd_schema_never_stops_the_run(tmp_path: Path, schema: str, value: str, expected: str | None) -> None:
    _good(tmp_path)
    (tmp_path / "crd.yaml").write_text(_crd(schema, value))
    run = run_cli("check", "--format", "concise", "--schema", "-j1", "good.yaml", "crd.yaml", cwd=tmp_path)
    assert "Traceback" not in run.err, run.err
    assert run.code == 1, run.err
    assert _has_good(run)
    schema_lines = [ln for ln in lines_of(run, "schema-invalid") if ln.startswith("crd.yaml")]
    assert schema_lines == ([expected] if expected else [])


def test_huge_value_with_multiple_of_a_tenth(tmp_path: Path) -> None:
    _good(tmp_path)
    (tmp_path / "crd.yaml").write_text(_crd("{type: number, multipleOf: 0.1}", "9" * 330 + ".05"))
    run = run_cli("check", "--format", "concise", "--schema", "-j1", "good.yaml", "crd.yaml", cwd=tmp_path)
    assert "Traceback" not in run.err and run.code == 1 and _has_good(run)
    assert [ln for ln in lines_of(run, "schema-invalid") if ln.startswith("crd.yaml")] == [
        "crd.yaml:25:3: schema-invalid spec.n: inf is not a multiple of 0.1"
    ]


# ----------------------------------------------------------------------------
# Baselines


def test_baseline_with_a_huge_integer_is_invalid(tmp_path: Path) -> None:
    _good(tmp_path)
    (tmp_path / "base.json").write_text('{"version": 1, "findings": [{"rule": "x", "count": ' + "9" * 4400 + "}]}")
    run = run_cli("check", "--format", "concise", "good.yaml", "--baseline", "base.json", cwd=tmp_path)
    assert run.code == 2
    assert run.err.startswith("kubelint-ml: error: base.json: invalid baseline: Exceeds the limit (4300 digits)"), (
        run.err
    )
    assert "Traceback" not in run.err


# ----------------------------------------------------------------------------
# CEL budgets


@needs_cel
@pytest.mark.parametrize("calls", [8, 9])
def test_cel_string_growth_is_bounded(tmp_path: Path, calls: int) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    growth = "".join(".replace('a', 'aaaaaaaaaa')" for _ in range(calls))
    (rules / "grow.yaml").write_text(
        _RULE.format(id="grow-rule", unit="object", cel=f"object.metadata.name{growth}.size() > 0")
    )
    _good(tmp_path)
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + "a" * 30 + "\n")
    run = run_cli("check", "--format", "concise", "good.yaml", "a.yaml", "--rules", "rules", "-j1", cwd=tmp_path)
    assert run.code == 1, run.err
    errors = lines_of(run, "cel-evaluation-error")
    # good-trainer has one 'a': it grows to 10**calls characters, within the budget at 8 calls, not at 9.
    assert len(errors) == calls - 7, run.out
    assert errors[0].startswith("a.yaml:1:1: cel-evaluation-error rule grow-rule: CEL evaluation failed: ")
    assert "budget exceeded" in errors[0], errors[0]
    assert _has_good(run)


@needs_cel
def test_cheap_cel_rule_still_evaluates(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "named.yaml").write_text(
        _RULE.format(id="short-name", unit="object", cel="object.metadata.name.size() < 5")
    )
    (rules / "join.yaml").write_text(
        _RULE.format(id="join-name", unit="object", cel="object.metadata.name.split('-').join('') != 'goodtrainer'")
    )
    _good(tmp_path)
    run = run_cli("check", "--format", "concise", "good.yaml", "--rules", "rules", "-j1", cwd=tmp_path)
    assert [" ".join(ln.split()[:2]) for ln in lines_of(run) if "short-name" in ln or "join-name" in ln] == [
        "good.yaml:2:1: join-name",
        "good.yaml:2:1: short-name",
    ]


# ----------------------------------------------------------------------------
# The worst file under the default limits


def _measured(args: list[str], cwd: Path) -> tuple[int, float, int, str]:
    """Exit code, seconds and peak RSS (bytes) of one run, under the 2 GB address-space cap.

    The seconds are for messages only: time bounds live in bench/bounds.py."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubelint_ml", *args],
        cwd=cwd,
        env=env,
        preexec_fn=limit,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    out = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.perf_counter() - start, usage.ru_maxrss * 1024, out


def test_node_flood_of_the_issue_is_refused_quickly(tmp_path: Path) -> None:
    # One million one-character nodes in 2 MB: 12 s and 422 MB under the old limit.
    _good(tmp_path)
    (tmp_path / "flood.yaml").write_text("[" + ",".join(["a"] * 999_990) + "]\n")
    code, seconds, rss, out = _measured(["check", "--format", "concise", "-j1", "good.yaml", "flood.yaml"], tmp_path)
    assert code == 1
    assert "flood.yaml:1:400000: parse-error more than 200000 YAML nodes in one file (limits.maxNodes)" in out
    assert GOOD in out
    assert rss < 384 * 1024**2


def test_worst_file_under_the_node_limit_is_linted_within_the_bound(tmp_path: Path) -> None:
    # 66,650 containers of three nodes each: every container rule runs on each, two findings each.
    (tmp_path / "many.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: ["
        + ",".join(["{image: x}"] * 66_650)
        + "]\n"
    )
    code, seconds, rss, out = _measured(["check", "-q", "-j1", "many.yaml"], tmp_path)
    assert code == 0  # warnings only
    assert "parse-error" not in out
    assert out.count(" missing-memory-limit ") == 66_650
    assert rss < 384 * 1024**2, rss  # the bound SECURITY.md states (time: bench/bounds.py)


# ----------------------------------------------------------------------------
# Injection through stderr and rule text; invisible characters


def _no_command_lines(text: str) -> None:
    assert not [ln for ln in text.splitlines() if ln.lstrip().startswith("::")], text


def test_config_names_reach_stderr_escaped(tmp_path: Path) -> None:
    _good(tmp_path)
    (tmp_path / "pools.yaml").write_text(
        'profile:\n  nodePools:\n  - name: "p\\n::error::pool"\n    instanceType: "x\\n::add-mask::secret"\n'
    )
    (tmp_path / "keys.yaml").write_text('"bad\\n::error::key": 1\n')
    for name, expected in [
        (
            "pools.yaml",
            "kubelint-ml: error: pools.yaml:4: profile.nodePools[p\\n::error::pool].instanceType: "
            "unknown instance type 'x\\n::add-mask::secret' (the built-in catalog's types are in "
            "kubelint_ml/data/gpu-catalog.yaml; or give gpus, memory and cpu yourself)\n",
        ),
        ("keys.yaml", "kubelint-ml: error: keys.yaml:1: bad\\n::error::key: unknown key 'bad\\n::error::key'\n"),
    ]:
        run = run_cli("check", "--format", "concise", "-c", name, "good.yaml", cwd=tmp_path)
        assert run.code == 2
        assert run.err == expected
        _no_command_lines(run.err)


def test_crd_version_names_reach_stderr_escaped(tmp_path: Path) -> None:
    _good(tmp_path)
    (tmp_path / "crd.yaml").write_text(_crd("{type: string, pattern: '(a)\\1'}", "aa", version='"v1\\n::error::ver"'))
    run = run_cli("check", "--format", "concise", "-q", "--schema", "--crd", "crd.yaml", "good.yaml", cwd=tmp_path)
    assert run.code == 1 and _has_good(run)
    assert run.err.startswith(
        "kubelint-ml: warning: crd.yaml: CustomResourceDefinition 'widgets.ex.com': version v1\\n::error::ver: "
        "properties.spec.properties.n: pattern"
    ), run.err
    _no_command_lines(run.err)


def test_rule_text_is_escaped_in_rules_commands(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "evil.yaml").write_text(
        'id: evil-rule\nseverity: warning\ntitle: "t\\n::error::title"\ndescription: "d\\n::add-mask::x"\n'
        'remediation: r\nscope: {unit: object}\ncheck:\n  cel: "true"\n'
        'examples:\n  fail: [{manifest: "kind: Pod", findings: [{line: 1}]}]\n  pass: [{manifest: "kind: Pod"}]\n'
    )
    for args in (
        ["rules", "show", "evil-rule", "--rules", "rules"],
        ["rules", "list", "--rules", "rules"],
        ["rules", "verify", "rules"],
    ):
        run = run_cli(*args, cwd=tmp_path)
        assert "Traceback" not in run.err
        _no_command_lines(run.out)
        _no_command_lines(run.err)
    run = run_cli("rules", "show", "evil-rule", "--rules", "rules", cwd=tmp_path)
    assert "t\n\\::error::title" in run.out  # its own line, made inert


@pytest.mark.parametrize(
    "char, shown",
    [("\u200b", "\\u200b"), ("\u2060", "\\u2060"), ("\ufeff", "\\ufeff"), ("\u202e", "\\u202e"), ("\u00ad", "\\xad")],
)
def test_invisible_characters_are_shown_escaped(tmp_path: Path, char: str, shown: str) -> None:
    (tmp_path / "p.yaml").write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: tr{char}ainer\nspec:\n"
        "  containers:\n  - name: c\n    image: x\n",
        encoding="utf-8",
    )
    run = run_cli("check", "-q", "p.yaml", cwd=tmp_path)
    assert f"\n  Pod tr{shown}ainer\n" in run.out  # the text output names the object once
    assert char not in run.out


# ----------------------------------------------------------------------------
# --output written atomically; exit codes for signals and internal errors


def test_output_file_is_replaced_with_its_mode(tmp_path: Path) -> None:
    _good(tmp_path)
    out = tmp_path / "out.sarif"
    out.write_text("previous report\n")
    out.chmod(0o640)
    run = run_cli("check", "good.yaml", "-f", "sarif", "-o", "out.sarif", cwd=tmp_path)
    assert run.code == 1
    assert out.read_text().startswith("{") and '"missing-memory-limit"' in out.read_text()
    assert (out.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.yaml", "out.sarif"]


def test_atomic_writer_keeps_the_old_file_when_interrupted(tmp_path: Path) -> None:
    from kubelint_ml.atomic import write_atomic

    target = tmp_path / "report.json"
    target.write_text("old\n")
    target.chmod(0o604)

    def half(fh: object) -> None:
        fh.write('{"partial": ')  # type: ignore[attr-defined]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(target), half)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    write_atomic(str(target), lambda fh: fh.write("new\n"))
    assert target.read_text() == "new\n" and (target.stat().st_mode & 0o777) == 0o604
    link = tmp_path / "link.json"
    link.symlink_to("report.json")
    write_atomic(str(link), lambda fh: fh.write("via link\n"))
    assert link.is_symlink() and target.read_text() == "via link\n"


def _started(proc: subprocess.Popen) -> None:
    """Wait until the tool has imported its parser (its signal handlers are set by then)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if "_yaml" in Path(f"/proc/{proc.pid}/maps").read_text():
                time.sleep(0.5)
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError("the tool did not start")


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_exit_like_a_shell_expects(tmp_path: Path, signum: int, code: int) -> None:
    out = tmp_path / "out.json"
    out.write_text("previous\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubelint_ml", "check", "-", "-f", "json", "-o", "out.json"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _started(proc)  # it now waits for stdin
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code
    assert err.decode() == "kubelint-ml: interrupted\n"
    assert out.read_text() == "previous\n"


def test_internal_error_exits_2_with_an_escaped_report(tmp_path: Path) -> None:
    _good(tmp_path)
    script = (
        "import kubelint_ml.run.lint as lint, kubelint_ml.cli as cli\n"
        "def broken(*a, **k):\n    raise RuntimeError('bug\\n::error::forged')\n"
        "lint.run = broken\ncli.entry()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", script, "check", "good.yaml"], cwd=tmp_path, env=env, capture_output=True, timeout=60
    )
    err = proc.stderr.decode()
    assert proc.returncode == 2
    assert err.endswith("kubelint-ml: internal error (a bug; please report it with the traceback above)\n")
    assert "RuntimeError: bug\n\\::error::forged" in err  # a line of its own, made inert
    _no_command_lines(err)


# ----------------------------------------------------------------------------
# Odd YAML


def test_int_and_bool_keys_are_two_keys(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {1: a, true: b}\n"
        "spec:\n  containers:\n  - name: c\n    image: x\n"
    )
    run = run_cli("check", "--format", "concise", "-q", "p.yaml", cwd=tmp_path)
    assert "parse-error" not in run.out
    assert "p.yaml:8:5: missing-memory-limit container 'c' has no memory limit" in run.out
    (tmp_path / "p.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {1: a, '1': b}\n")
    run = run_cli("check", "--format", "concise", "-q", "p.yaml", cwd=tmp_path)
    assert run.out.startswith("p.yaml:5:18: parse-error duplicate key: '1'")  # "1" twice, as Kubernetes reads it


@pytest.mark.parametrize("sep", ["\u0085", "\u2028", "\u2029"])
def test_unicode_line_separators_do_not_shift_line_numbers(tmp_path: Path, sep: str) -> None:
    (tmp_path / "p.yaml").write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {{note: 'a{sep}b'}}\n"
        "spec:\n  containers:\n  - name: c\n    image: x\n",
        encoding="utf-8",
    )
    run = run_cli("check", "--format", "concise", "-q", "p.yaml", cwd=tmp_path)
    assert "p.yaml:8:5: missing-memory-limit container 'c' has no memory limit" in run.out, run.out


def test_type_messages_name_yaml_types(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: [a]\n---\napiVersion: v1\nkind: Pod\n"
        "metadata:\n  name: q\n  labels: [x]\n"
    )
    run = run_cli("check", "--format", "concise", "-q", "p.yaml", cwd=tmp_path)
    assert "PosList" not in run.out and "PosDict" not in run.out
    assert lines_of(run, "parse-error") == [
        "p.yaml:3:1: parse-error metadata must be a mapping, found a list",
        "p.yaml:9:3: parse-error metadata.labels must be a mapping, found a list",
    ]


def test_broken_symlinks_are_noted_under_verbose(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    _good(tree)
    (tree / "gone.yaml").symlink_to("missing.yaml")
    run = run_cli("check", "--format", "concise", "-q", "-v", "tree", cwd=tmp_path)
    assert "note: tree/gone.yaml: skipped: broken symbolic link (its target does not exist)" in run.err.splitlines()
    assert any(ln.startswith("tree/" + GOOD) for ln in run.out.splitlines())
    assert run.code == 1


@pytest.mark.parametrize(
    "encoding, name",
    [
        ("utf-16", "UTF-16LE (with a byte order mark)"),
        ("utf-16-le", "UTF-16LE (without a byte order mark)"),
        ("utf-16-be", "UTF-16BE (without a byte order mark)"),
    ],
)
def test_utf16_files_are_reported(tmp_path: Path, encoding: str, name: str) -> None:
    _good(tmp_path)
    (tmp_path / "wide.yaml").write_bytes((HOSTILE / "good.yaml").read_text().encode(encoding))
    run = run_cli("check", "--format", "concise", "-q", "good.yaml", "wide.yaml", cwd=tmp_path)
    assert run.code == 1
    assert lines_of(run, "parse-error") == [
        f"wide.yaml:1:1: parse-error file is {name}; the API server reads manifests as UTF-8 only: "
        "save it as UTF-8; not linted"
    ]
    assert _has_good(run)
