"""Format dispatch, lazy imports and the GitHub step summary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from factories import make_finding

from kubelint_ml.findings import RuleInfo, RunResult
from kubelint_ml.report import FORMATS, render, write_step_summary

ROOT = Path(__file__).resolve().parent.parent


def _result() -> RunResult:
    f = make_finding(
        message="container trainer requests nvidia.com/gpu without a limit",
        remediation="set resources.limits",
        path="spec.containers[0].resources",
    )
    rules = {"gpu-limit-missing": RuleInfo("gpu-limit-missing", "error", "GPU limit", "desc", "fix")}
    return RunResult(findings=[f], suppressed=[], rules=rules, files=1, objects=1)


def test_formats_tuple() -> None:
    assert FORMATS == ("text", "json", "sarif", "github", "junit", "markdown", "concise", "html")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_and_ends_with_newline(fmt: str) -> None:
    out = render(fmt, _result())
    assert out.endswith("\n")
    assert "gpu-limit-missing" in out


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format 'yaml'"):
        render("yaml", _result())


def test_import_is_lazy() -> None:
    code = (
        "import sys, kubelint_ml.report\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('xml', 'json', 'jsonschema', 'hashlib')"
        " or m.startswith('kubelint_ml.report.'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_step_summary_appends(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("previous step\n", encoding="utf-8")
    write_step_summary(_result(), str(summary))
    write_step_summary(_result(), str(summary))
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("previous step\n## kubelint-ml\n")
    assert text.count("## kubelint-ml") == 2
    assert "| error | 1 |" in text


def test_step_summary_lone_surrogate(tmp_path: Path) -> None:
    result = _result()
    result.findings[0].message = "bad \udcff name"
    summary = tmp_path / "summary.md"
    write_step_summary(result, str(summary))
    assert "bad \ufffd name" in summary.read_text(encoding="utf-8")
