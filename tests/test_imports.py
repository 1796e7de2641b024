"""A run pays only for what it uses: what a plain `check`, `rules` and `serve --help` import.

Each command runs in a fresh interpreter, which then lists ``sys.modules``. A plain `check` (no
policy, no usage source, no --fix, JSON or SARIF) imports none of the Rego engine, the webhook,
the Prometheus client, the byte-level fixer or the editor's server; a regression is this test
failing, not a slow month.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "fixtures" / "examples")

# Never imported by a plain check.
HEAVY = (
    "kubelint_ml.admission",
    "kubelint_ml.lsp",
    "kubelint_ml.policy.lint",
    "kubelint_ml.policy.load",
    "kubelint_ml.policy.rego",
    "kubelint_ml.policy.gatekeeper",
    "kubelint_ml.policy.runtime",
    "kubelint_ml.policy.sandbox",
    "kubelint_ml.usage.collect",
    "kubelint_ml.usage.prometheus",
    "kubelint_ml.usage.source",
    "kubelint_ml.usage.snapshot",
    "kubelint_ml.usage.model",
    "kubelint_ml.input.render",  # a chart or kustomization among the paths, or output piped in
    "kubelint_ml.fix.apply",
    "kubelint_ml.fix.yamltext",
    "kubelint_ml.engine.cel",
    "kubelint_ml.engine.celsandbox",
    "kubelint_ml.k8s.schema",
    "subprocess",  # helm and kustomize are run only for a chart or kustomization among the paths
    "tempfile",  # files are written only by --fix
    "http.client",
    "urllib.request",
    "ssl",
    "asyncio",
    "uvicorn",
    "httptools",
    "uvloop",
    "regorus",
    "cel_expr_python",
    "jsonschema",
    "pygls",
    "lsprotocol",
)

# Standard modules a plain check does without: each costs milliseconds of every start (``@dataclass``
# compiles each class's methods at import: close to a millisecond a class; see kubelint_ml/records.py).
# (Those the interpreter already holds before the command starts, an editable install's finder
# imports pathlib, are not counted; click imports difflib when it parses a short option.)
START = ("dataclasses", "pathlib", "glob", "urllib.parse", "ipaddress")

SNIPPET = """
import json, sys
sys.argv = ["kubelint-ml", *json.loads(sys.argv[1])]
from kubelint_ml.cli import main
try:
    main.main(prog_name="kubelint-ml", standalone_mode=False)
except SystemExit:
    pass
with open(OUT, "w") as fh:
    json.dump(sorted(sys.modules), fh)
"""


def imported(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    code = SNIPPET.replace("OUT", repr(str(out)))
    r = subprocess.run(
        [sys.executable, "-c", code, json.dumps(list(args))], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.exists(), r.stderr
    return set(json.loads(out.read_text()))


def before_the_command(tmp_path: Path) -> set[str]:
    """What an interpreter of this environment holds once it has imported yaml and click."""
    out = tmp_path / "bare.json"
    code = f"import json, sys, yaml, click; json.dump(sorted(sys.modules), open({str(out)!r}, 'w'))"
    subprocess.run([sys.executable, "-c", code], timeout=120, cwd=tmp_path, check=True)
    return set(json.loads(out.read_text()))


def heavy(modules: set[str], allowed: tuple[str, ...] = ()) -> list[str]:
    return sorted(
        m
        for m in modules
        if any(m == h or m.startswith(h + ".") for h in HEAVY)
        and not any(m == a or m.startswith(a + ".") for a in allowed)
    )


@pytest.mark.parametrize("fmt", ["text", "github", "junit", "concise"])
def test_a_plain_check_imports_only_what_it_uses(tmp_path: Path, fmt: str) -> None:
    found = imported(tmp_path, "check", EXAMPLE, "-f", fmt)
    assert heavy(found) == []
    assert sorted(found.intersection(START) - before_the_command(tmp_path)) == []


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_and_sarif_import_the_fix_editor_they_print_and_nothing_else(tmp_path: Path, fmt: str) -> None:
    found = imported(tmp_path, "check", EXAMPLE, "--format", fmt)  # (click imports difflib for "-f")
    assert "kubelint_ml.fix.yamltext" in found  # each fix's edits are printed
    assert heavy(found, ("kubelint_ml.fix.apply", "kubelint_ml.fix.yamltext")) == []
    # SARIF's artifact locations are percent-encoded URIs (urllib.parse, which imports ipaddress)
    unused = [m for m in START + ("difflib",) if fmt != "sarif" or m not in ("urllib.parse", "ipaddress")]
    assert sorted(found.intersection(unused) - before_the_command(tmp_path)) == []


def test_rules_list_and_show_import_no_engine_they_do_not_use(tmp_path: Path) -> None:
    assert heavy(imported(tmp_path, "rules", "list")) == []
    assert heavy(imported(tmp_path, "rules", "show", "besteffort-qos")) == []


def test_serve_and_export_are_imported_when_asked_for(tmp_path: Path) -> None:
    found = imported(tmp_path, "serve", "--help")
    assert "kubelint_ml.admission.cli" in found
    assert heavy(found, ("kubelint_ml.admission.cli", "kubelint_ml.admission")) == []  # --help starts no server


def test_what_is_used_is_imported(tmp_path: Path) -> None:
    """The guard above would pass on a check that did nothing: these show the same probe sees use."""
    (tmp_path / "p.rego").write_text('package main\nimport rego.v1\ndeny contains "x" if input.kind == "Pod"\n')
    assert "kubelint_ml.policy.rego" in imported(tmp_path, "check", EXAMPLE, "--policy", str(tmp_path / "p.rego"))
    assert "kubelint_ml.fix.apply" in imported(tmp_path, "check", EXAMPLE, "-f", "json")
    assert "kubelint_ml.fix.apply" in imported(tmp_path, "check", EXAMPLE, "--diff")
