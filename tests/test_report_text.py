"""Text reporter: exact lines, colours, summary, terminal-injection safety."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from kubelint_ml.findings import Finding, ObjectRef, RunResult
from kubelint_ml.report.text import render, summary_line


def finding(rule: str, severity: str, file: str, line: int, col: int = 1, message: str = "msg", **kw) -> Finding:
    kw.setdefault("remediation", f"fix {rule}")
    return Finding(rule=rule, severity=severity, message=message, file=file, line=line, column=col, **kw)


def result(findings, suppressed=(), files=12, baselined=0) -> RunResult:
    return RunResult(findings=list(findings), suppressed=list(suppressed), rules={}, files=files, baselined=baselined)


def test_lines_grouped_by_sorted_file_and_object_and_summary() -> None:
    job = ObjectRef("batch/v1", "Job", "ml", "train")
    pod = ObjectRef("v1", "Pod", "", "p")
    r = result(
        [
            finding("b-rule", "warning", "z/b.yaml", 3, 7, "second file", object=pod),
            finding("a-rule", "error", "a.yaml", 10, 5, "later line", object=job),
            finding("a-rule", "info", "a.yaml", 2, 3, "earlier line", object=job),
            finding("parse-error", "error", "a.yaml", 40, 1, "not YAML"),
        ]
    )
    assert render(r) == (
        "a.yaml\n"
        "  Job ml/train\n"
        "    2:3   info     a-rule       earlier line\n"
        "    10:5  error    a-rule       later line\n"
        "  40:1  error    parse-error  not YAML\n"
        "z/b.yaml\n"
        "  Pod p\n"
        "    3:7  warning  b-rule  second file\n"
        "\n"
        "2 errors, 1 warning, 1 info in 2 of 12 files\n"
    )


def test_verbose_adds_detail_remediation_and_suppressed() -> None:
    sup = finding("c-rule", "error", "a.yaml", 5, 1, "hidden", suppressed="reviewed by infra")
    shown = finding("a-rule", "error", "a.yaml", 2, 3, "shown", detail="the longer\n why, with 64Gi")
    r = result([shown], [sup])
    assert render(r, verbose=True) == (
        "a.yaml\n"
        "  2:3  error       a-rule  shown\n"
        "      the longer why, with 64Gi\n"
        "      fix a-rule\n"
        "  5:1  suppressed  c-rule  hidden (reviewed by infra)\n"
        "      fix c-rule\n"
        "\n"
        "1 error in 1 of 12 files (1 suppressed)\n"
    )
    assert render(r) == "a.yaml\n  2:3  error    a-rule  shown\n\n1 error in 1 of 12 files (1 suppressed)\n"


def test_missing_line_and_column() -> None:
    r = result([finding("parse-error", "error", "bad.yaml", 0, 0, "not YAML"), finding("x", "error", "c.yaml", 4, 0)])
    assert render(r).splitlines()[:4] == [
        "bad.yaml",
        "  -  error    parse-error  not YAML",
        "c.yaml",
        "  4  error    x  msg",
    ]


def test_color_only_on_severity_word() -> None:
    r = result(
        [
            finding("r1", "error", "a.yaml", 1),
            finding("r2", "warning", "a.yaml", 2),
            finding("r3", "info", "a.yaml", 3),
        ]
    )
    lines = render(r, color=True).splitlines()
    assert lines[1] == "  1:1  \x1b[31merror\x1b[0m    r1  msg"
    assert lines[2] == "  2:1  \x1b[33mwarning\x1b[0m  r2  msg"
    assert lines[3] == "  3:1  \x1b[34minfo\x1b[0m     r3  msg"


def test_summary_variants() -> None:
    assert summary_line(result([], files=12)) == "no findings in 12 files"
    assert summary_line(result([], files=1)) == "no findings in 1 file"
    many = [finding("r", "error", "a.yaml", i) for i in range(3)] + [finding("w", "warning", "a.yaml", 9)] * 2
    many.append(finding("i", "info", "a.yaml", 20))
    sup = [finding("s", "error", "a.yaml", 1)] * 4
    assert summary_line(result(many, sup)) == "3 errors, 2 warnings, 1 info in 1 of 12 files (4 suppressed)"
    assert summary_line(result([], sup[:1], baselined=2)) == "no findings in 12 files (1 suppressed, 2 baselined)"
    assert summary_line(result([finding("i", "info", "a", 1)] * 2)) == "2 info in 1 of 12 files"
    two_files = [finding("r", "error", "a.yaml", 1), finding("r", "error", "b.yaml", 1)]
    assert summary_line(result(two_files, files=1)) == "2 errors in 2 of 1 file"


def test_terminal_injection_is_neutralised() -> None:
    hostile = finding(
        "r",
        "error",
        "evil\x1b]0;pwned\x07\x1b[2J.yaml",
        1,
        1,
        "value \x1b[31mRED\x1b[0m\nfake.yaml:1:1: error other-rule forged\r\x08\x00\u202egnp.exe",
        remediation="\x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\",
        detail="::error file=x::forged\x1b[2J",
        object=ObjectRef(kind="Pod", name="p\x1b[1m"),
    )
    out = render(result([hostile]), verbose=True)
    assert "\x1b" not in out
    assert out.splitlines() == [
        "evil.yaml",
        "  Pod p",
        "    1:1  error    r  value RED\\nfake.yaml:1:1: error other-rule forged\\r\\x08\\x00\\u202egnp.exe",
        "        \\::error file=x::forged",
        "        click",
        "",
        "1 error in 1 of 12 files",
    ]
    coloured = render(result([hostile]), color=True)
    assert re.findall("\x1b[^m]*m", coloured) == ["\x1b[31m", "\x1b[0m"]


def test_no_line_reads_as_a_workflow_command() -> None:
    hostile = finding(
        "r", "error", "::stop-commands::x.yaml", 1, 1, "m", object=ObjectRef(kind="::warning::k", name="n")
    )
    lines = render(result([hostile])).splitlines()
    assert lines[:2] == ["./::stop-commands::x.yaml", "  \\::warning::k n"]
    assert not any(line.lstrip().startswith("::") for line in lines)


@given(st.text(), st.text())
def test_any_input_yields_one_printable_line(file: str, message: str) -> None:
    out = render(result([finding("r", "warning", file, 1, 1, message)]))
    lines = out.split("\n")
    assert len(lines) == 5 and lines[2:] == ["", "1 warning in 1 of 12 files", ""]
    assert not re.search("[\x00-\x08\x0a-\x1f\x7f-\x9f]", lines[0] + lines[1])
    assert lines[1].startswith("  1:1  warning  r  ")
    out.encode("utf-8")  # no lone surrogates
