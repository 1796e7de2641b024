"""Hostile files through the command line, in a real process with a memory cap.

Every run must finish within a memory cap (and a generous time-out; bench/bounds.py
measures the time), report each bad file as a
clear ``parse-error`` at a position, still lint every other file, and write
output that cannot inject anything into a terminal, a CI log, JSON, XML or
Markdown.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import bombs
import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
# The tool's memory is capped with RLIMIT_AS (and FIFOs are made): Linux semantics.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS memory cap and FIFOs as on Linux"),
]
HOSTILE = ROOT / "fixtures" / "hostile"
MEMORY_CAP = 2 * 1024**3  # bytes of address space for one run
TIME_CAP = 60.0
TAG_MARKER = Path("/tmp/kubelint-ml-hostile-tag-executed")


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: bytes | None = None) -> Run:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", **(env or {})}
    full_env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", *args],
        cwd=cwd,
        env=full_env,
        input=stdin,
        capture_output=True,
        timeout=TIME_CAP,
        preexec_fn=limit,
    )
    return Run(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))


def lines_of(run: Run, rule: str | None = None) -> list[str]:
    return [ln for ln in run.out.splitlines() if rule is None or f" {rule} " in ln]


GOOD_FINDING = "hostile/good.yaml:15:11: missing-memory-limit container 'train' has no memory limit"


def billion_laughs() -> str:
    return bombs.billion_laughs().decode() + "apiVersion: v1\nkind: Pod\n"


def merge_bomb() -> str:
    return bombs.merge_bomb(14, own_keys=False).decode()


@pytest.fixture(scope="module")
def hostile_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed hostile fixtures plus generated ones too big or too odd to commit."""
    base = tmp_path_factory.mktemp("cli")
    tree = base / "hostile"
    tree.mkdir()
    for f in HOSTILE.iterdir():
        (tree / f.name).write_bytes(f.read_bytes())
    (tree / "gen-alias-bomb.yaml").write_text(billion_laughs())
    (tree / "gen-merge-bomb.yaml").write_text(merge_bomb())
    (tree / "gen-deep-flow.yaml").write_text("[" * 200_000 + "]" * 200_000 + "\n")
    (tree / "gen-deep-block.yaml").write_text("".join("  " * i + "- a:\n" for i in range(400)))
    (tree / "gen-node-flood.yaml").write_text("[" + "1," * 3_000_000 + "1]\n")
    with open(tree / "gen-oversize.yaml", "wb") as fh:  # sparse: 21 MB without writing them
        fh.truncate(21 * 1024 * 1024)
    containers = "".join(f"  - name: c{i}\n    image: x\n" for i in range(3000))
    (tree / "gen-huge-name.yaml").write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {'n' * 1_000_000}\nspec:\n"
        f"  resources: {{limits: {{cpu: 1}}}}\n  containers:\n{containers}"
    )
    sub = tree / "loops"
    sub.mkdir()
    os.symlink("..", sub / "parent")
    os.symlink(".", sub / "self")
    os.symlink("/", sub / "root-of-fs")
    os.symlink("/etc/passwd", sub / "passwd.yaml")
    os.mkfifo(sub / "fifo.yaml")
    return base


@pytest.fixture(scope="module")
def text_run(hostile_tree: Path) -> Run:
    TAG_MARKER.unlink(missing_ok=True)
    return run_cli("check", "hostile", "-j1", cwd=hostile_tree)


@pytest.fixture(scope="module")
def concise_run(hostile_tree: Path) -> Run:
    return run_cli("check", "hostile", "-j1", "--format", "concise", cwd=hostile_tree)


def test_exit_code_and_no_error_output(text_run: Run) -> None:
    assert text_run.code == 1, text_run.err
    assert text_run.err == ""


def test_every_hostile_file_gets_a_clear_parse_error(concise_run: Run) -> None:
    # (The merge-key chain loads: shared merged pairs are kept once, so it is small.)
    errors = lines_of(concise_run, "parse-error")
    assert errors == [
        "hostile/bad-tags.yaml:6:13: parse-error invalid YAML: int value 'high': not a valid int",
        "hostile/binary.yaml:1:1: parse-error binary file (contains NUL bytes); not a manifest",
        "hostile/broken.json:3:1: parse-error invalid YAML: while parsing a flow node: did not find expected node content",
        "hostile/duplicate-keys.yaml:5:3: parse-error duplicate key: 'name' (each key may appear once in a mapping)",
        "hostile/gen-alias-bomb.yaml:1:1: parse-error aliases expand to more than 1000000 nodes "
        "(limits.maxExpandedNodes; an alias bomb?); refusing to load",
        "hostile/gen-deep-block.yaml:101:201: parse-error nesting deeper than 200 levels (limits.maxDepth); document not linted",
        "hostile/gen-deep-flow.yaml:1:5001: parse-error nesting deeper than 5000 levels; refusing to load the file",
        "hostile/gen-node-flood.yaml:1:400000: parse-error more than 200000 YAML nodes in one file (limits.maxNodes); not linted",
        "hostile/gen-oversize.yaml:1:1: parse-error file is 22020096 bytes, over the 20971520-byte limit "
        "(limits.maxFileBytes); not linted",
        "hostile/helm-template.yaml:4:1: parse-error Helm/Go template directive ({{ ... }}): this is a template, "
        "not a manifest; lint the rendered output (helm template ... | kubelint-ml check -)",
        "hostile/latin1.yaml:3:1: parse-error file is not valid UTF-8 (byte 0xe9 at offset 31)",
        "hostile/python-tag.yaml:5:9: parse-error unsupported YAML tag !!python/object/apply:os.system: "
        "only the standard tags are read (str, int, float, bool, null, map, seq); no tag is ever executed",
        "hostile/python-tag.yaml:7:1: parse-error unsupported YAML tag !!python/object/new:subprocess.Popen: "
        "only the standard tags are read (str, int, float, bool, null, map, seq); no tag is ever executed",
        "hostile/wrong-types.yaml:5:3: parse-error containers must be a list, found integer",
        "hostile/wrong-types.yaml:16:9: parse-error container 'a' resources must be a mapping, found string",
        "hostile/wrong-types.yaml:20:11: parse-error container 'b' resources.limits must be a mapping, found list",
    ]
    assert not TAG_MARKER.exists()


def test_other_files_and_documents_are_still_linted(text_run: Run, concise_run: Run) -> None:
    out = text_run.out
    assert any(ln.startswith(GOOD_FINDING) for ln in lines_of(concise_run))
    # Documents after a broken one in the same file.
    assert "hostile/python-tag.yaml:15:5: missing-memory-limit container 'app'" in concise_run.out
    assert "hostile/wrong-types.yaml:29:5: missing-memory-limit container 'app'" in concise_run.out
    assert "hostile/bad-tags.yaml:14:5: missing-memory-limit container 'app'" in concise_run.out
    assert "\n  Pod after-the-tags\n    13:1  warning  besteffort-qos" in out and "\n  Pod aGVsbG8=\n" in out
    # The pod with a megabyte-long name and 3,000 containers: linted, its name cut.
    huge = [ln for ln in lines_of(concise_run, "missing-memory-request") if "gen-huge-name" in ln]
    assert len(huge) == 3000
    assert max(map(len, huge)) < 1000
    assert "container 'c0'" in huge[0]
    assert f"\n  Pod {'n' * 253}…\n" in out and max(map(len, out.splitlines())) < 1000
    # Nothing outside the tree, nothing twice, no hang on the FIFO or the loops.
    assert "passwd" not in out and "root-of-fs" not in out and "fifo" not in out and "loops/" not in out
    assert text_run.out.rstrip().endswith("of 19 files")


def test_text_output_has_no_escape_sequences_or_control_characters(text_run: Run, concise_run: Run) -> None:
    for run in (text_run, concise_run):
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", run.out)
        assert not any(ln.lstrip().startswith("::") for ln in run.out.splitlines())
    assert "\n  Pod evilclick\n" in text_run.out
    line = next(ln for ln in lines_of(concise_run, "missing-memory-limit") if "escape-names" in ln)
    assert line.startswith(
        "hostile/escape-names.yaml:10:5: missing-memory-limit container "
        "'c\\n::error file=.github/workflows/ci.yml,line=1::injected%0A::add-mask::x' has no memory limit"
    )
    assert not any(ln.lstrip().startswith("::") for ln in text_run.out.splitlines())


@pytest.fixture(scope="module")
def all_formats(hostile_tree: Path) -> tuple[Run, dict[str, str]]:
    out = hostile_tree / "out"
    out.mkdir()
    args = ["check", "hostile", "-j2"]
    formats = ["json", "sarif", "junit", "markdown", "github"]
    for fmt in formats:
        args += ["--format", fmt, "--output", str(out / fmt)]
    run = run_cli(*args, cwd=hostile_tree)
    return run, {fmt: (out / fmt).read_text(encoding="utf-8") for fmt in formats}


def test_json_and_sarif_are_valid_for_any_input(all_formats: tuple[Run, dict[str, str]]) -> None:
    run, outputs = all_formats
    assert run.code == 1
    report = json.loads(outputs["json"])
    findings = report["findings"]
    assert {f["file"] for f in findings if f["rule"] == "parse-error"} >= {
        "hostile/gen-alias-bomb.yaml",
        "hostile/binary.yaml",
        "hostile/python-tag.yaml",
    }
    assert all(f["line"] >= 1 and f["column"] >= 1 for f in findings)
    evil = next(f for f in findings if f["file"] == "hostile/escape-names.yaml")
    assert evil["object"]["name"].startswith("evil\x1b[31m")  # data kept exactly; JSON escapes it
    sarif = json.loads(outputs["sarif"])
    assert sarif["version"] == "2.1.0"
    assert all(r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1 for r in sarif["runs"][0]["results"])


def test_junit_is_well_formed_xml(all_formats: tuple[Run, dict[str, str]]) -> None:
    root = ET.fromstring(all_formats[1]["junit"].encode("utf-8"))
    assert root.tag == "testsuites"
    assert int(root.get("failures")) >= 15
    assert not any(ln.lstrip().startswith("::") for ln in all_formats[1]["junit"].splitlines())


def test_github_annotations_cannot_inject_workflow_commands(all_formats: tuple[Run, dict[str, str]]) -> None:
    text = all_formats[1]["github"]
    annotation = re.compile(
        r"^::(error|warning|notice) file=[^,\r\n]*(,line=\d+(,col=\d+)?)?,title=[a-z0-9-]+::[^\r\n]*$"
    )
    lines = text.splitlines()
    # Annotations (at most 10 of each level), then the rest as plain lines that never start a command.
    commands = [ln for ln in lines if ln.lstrip().startswith("::")]
    assert commands[-1].startswith("::notice title=kubelint-ml::") and "more findings" in commands[-1]
    commands = commands[:-1]
    assert commands and all(annotation.match(ln) for ln in commands)
    assert len(commands) < len(lines)
    assert not any("::error file=.github" in ln.split("::", 2)[1] for ln in commands)
    assert (
        "c%0A::error file=.github/workflows/ci.yml,line=1::injected%250A::add-mask::x" in text
        or "c\\n::error file=.github/workflows/ci.yml,line=1::injected%0A::add-mask::x" in text
    )
    assert "\x1b" not in text


def test_markdown_cells_cannot_break_the_table(all_formats: tuple[Run, dict[str, str]]) -> None:
    md = all_formats[1]["markdown"]
    rows = [ln for ln in md.splitlines() if ln.startswith("| hostile/")]
    assert rows
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == 6, row  # five cells, pipes inside them escaped
    assert "<img" not in md and "<script" not in md and "\x1b" not in md


def test_file_names_cannot_inject_workflow_commands(tmp_path: Path) -> None:
    name = "::stop-commands::pwned.yaml"
    (tmp_path / name).write_text(
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "p\\n::error title=owned::x"\n'
        "spec:\n  containers:\n  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}\n"
    )
    for fmt in ("text", "junit", "github", "markdown", "json", "sarif"):
        run = run_cli("check", ".", "-j1", "-v", "--format", fmt, cwd=tmp_path)
        assert run.code == 1
        for stream in (run.out, run.err):
            bad = [
                ln
                for ln in stream.splitlines()
                if ln.lstrip().startswith("::")
                and not ln.startswith(("::error file=", "::warning file=", "::notice file="))
            ]
            assert bad == [], (fmt, bad)
    text = run_cli("check", ".", "-j1", cwd=tmp_path).out
    assert text.startswith("./::stop-commands::pwned.yaml\n  Pod p\\n::error title=owned::x\n    5:1  ")
    concise = run_cli("check", ".", "-j1", "--format", "concise", cwd=tmp_path).out
    assert concise.startswith("./::stop-commands::pwned.yaml:5:1: ")


def test_stdin_hostile_input(tmp_path: Path) -> None:
    run = run_cli("check", "-", "--format", "concise", cwd=tmp_path, stdin=billion_laughs().encode())
    assert (run.code, run.out.splitlines()[0]) == (
        1,
        "<stdin>:1:1: parse-error aliases expand to more than 1000000 nodes "
        "(limits.maxExpandedNodes; an alias bomb?); refusing to load",
    )


# ----------------------------------------------------------------------------
# Rule and config files cannot run code or take the run down


_RULE = """id: {id}
severity: warning
title: t
description: d
remediation: r
scope: {{unit: {unit}}}
check:
  cel: "{cel}"
examples:
  fail: [{{manifest: "kind: Pod", findings: [{{line: 1}}]}}]
  pass: [{{manifest: "kind: Pod"}}]
"""


@pytest.mark.skipif(
    not __import__("kubelint_ml.engine.cel").engine.cel.available(), reason="CEL runtime needs Python >= 3.11"
)
def test_cel_rule_over_budget_is_a_finding_and_the_run_goes_on(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "slow.yaml").write_text(
        _RULE.format(
            id="slow-rule",
            unit="podTemplate",
            cel="[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all("
            "c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, e > 0)))))",
        )
    )
    (tmp_path / "good.yaml").write_bytes((HOSTILE / "good.yaml").read_bytes())
    run = run_cli("check", "good.yaml", "--rules", "rules", "-j1", "--format", "concise", cwd=tmp_path)
    assert run.code == 1
    budget = lines_of(run, "cel-evaluation-error")
    assert budget == [
        "good.yaml:8:5: cel-evaluation-error rule slow-rule: CEL evaluation failed: "
        "iteration budget exceeded: more than 10000 comprehension iterations in one evaluation"
    ]
    assert any(" missing-memory-limit " in ln for ln in lines_of(run))


def test_config_cannot_run_python_or_explode(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    cases = {
        "tag.yaml": f"failLevel: !!python/object/apply:os.system ['touch {marker}']\n",
        "bomb.yaml": billion_laughs().replace("apiVersion: v1\nkind: Pod\n", "disable: *l9\n"),
        "int.yaml": "limits: {maxDepth: !!int deep}\n",
    }
    expected = {
        "tag.yaml": "tag.yaml:1: unsupported YAML tag !!python/object/apply:os.system",
        "bomb.yaml": "bomb.yaml:1: aliases expand to more than 1000000 nodes",
        "int.yaml": "int.yaml:1: invalid YAML: int value 'deep': not a valid int",
    }
    (tmp_path / "good.yaml").write_bytes((HOSTILE / "good.yaml").read_bytes())
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        run = run_cli("check", "good.yaml", "-c", name, cwd=tmp_path)
        assert run.code == 2, (name, run.err)
        assert run.err.startswith(f"kubelint-ml: error: {expected[name]}"), run.err
        assert not marker.exists()


def test_rule_file_with_a_python_tag_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "evil.yaml").write_text(f"id: !!python/object/apply:os.system ['touch {marker}']\n")
    run = run_cli("check", ".", "--rules", "rules", cwd=tmp_path)
    assert run.code == 2
    assert "could not determine a constructor for the tag" in run.err or "unsupported YAML tag" in run.err
    assert not marker.exists()


def test_rule_file_bad_scalar_is_a_usage_error(tmp_path: Path) -> None:
    # (An alias bomb in a rule file hangs schema validation the same way; not run here.)
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "bad.yaml").write_text("id: !!int abc\n")
    run = run_cli("check", ".", "--rules", "rules", cwd=tmp_path)
    assert run.code == 2 and run.err.startswith("kubelint-ml: error: rules/bad.yaml:1:"), run.err


def test_missing_path_is_exit_2(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["check", str(tmp_path / "nope.yaml")])
    assert r.exit_code == 2
    assert r.output == f"kubelint-ml: error: no such file or directory: {tmp_path / 'nope.yaml'}\n"


def test_rule_text_from_the_repository_cannot_inject_workflow_commands(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "loud.yaml").write_text(
        "id: loud-rule\nseverity: warning\ntitle: t\ndescription: d\n"
        'remediation: "::stop-commands::tok\\n::error::forged\\n  ::warning::indented"\n'
        "scope: {unit: container}\n"
        "check: {template: container-resource-missing, params: {resource: memory, missing: limit}}\n"
        "examples:\n  fail: [{manifest: 'kind: Pod', findings: [{line: 1}]}]\n  pass: [{manifest: 'kind: Pod'}]\n"
    )
    (tmp_path / "good.yaml").write_bytes((HOSTILE / "good.yaml").read_bytes())
    for fmt in ("text", "junit", "github", "markdown"):
        run = run_cli("check", "good.yaml", "--rules", "rules", "-v", "--format", fmt, cwd=tmp_path)
        assert run.code == 1, run.err
        assert any("loud-rule" in ln for ln in run.out.splitlines()), fmt
        bad = [
            ln
            for ln in run.out.splitlines()
            if ln.lstrip().startswith("::")
            and not ln.startswith(("::error file=", "::warning file=", "::notice file="))
        ]
        assert bad == [], (fmt, bad)


def test_no_network_access(corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("kubelint-ml tried to use the network")

    for name in ("socket", "create_connection", "getaddrinfo", "gethostbyname"):
        monkeypatch.setattr(socket, name, refuse)
    monkeypatch.chdir(ROOT)
    paths = [str(HOSTILE), str(corpus)]
    r = CliRunner().invoke(main, ["check", *paths, "-j1", "--schema", "--format", "sarif"])
    assert r.exit_code == 1, r.output
    assert json.loads(r.output)["runs"][0]["results"]


def test_limits_are_configurable(tmp_path: Path) -> None:
    (tmp_path / ".kubelint-ml.yaml").write_text(
        "limits: {maxFileBytes: 100000, maxDepth: 20, maxNodes: 1000, maxDocuments: 2, maxExpandedNodes: 1000}\n"
    )
    (tmp_path / "flood.yaml").write_text("[" + "1," * 1500 + "1]\n")
    (tmp_path / "deep.yaml").write_text("[" * 30 + "]" * 30 + "\n")
    (tmp_path / "docs.yaml").write_text("a: 1\n---\nb: 2\n---\nc: 3\n")
    (tmp_path / "big.yaml").write_text("#" * 100_001)
    (tmp_path / "laughs.yaml").write_text(
        "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    )
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    r = CliRunner().invoke(
        main,
        ["check", str(tmp_path), "-c", str(tmp_path / ".kubelint-ml.yaml"), "-j1", "-q", "--format", "concise"],
        catch_exceptions=False,
    )
    lines = [ln.split(": parse-error ")[1] for ln in r.output.splitlines()]
    assert lines == [
        "file is 100001 bytes, over the 100000-byte limit (limits.maxFileBytes); not linted",
        "nesting deeper than 20 levels (limits.maxDepth); document not linted",
        "more than 2 documents in one file (limits.maxDocuments); the rest are not linted",
        "more than 1000 YAML nodes in one file (limits.maxNodes); not linted",
        "aliases expand to more than 1000 nodes (limits.maxExpandedNodes; an alias bomb?); refusing to load",
        "document is a list, not a mapping (a Kubernetes object)",
    ]
