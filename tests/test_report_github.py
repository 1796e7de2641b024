"""GitHub workflow-command reporter: exact lines and injection safety."""

from __future__ import annotations

import re

from factories import make_finding
from hypothesis import given
from hypothesis import strategies as st

from kubelint_ml.findings import ObjectRef, RunResult
from kubelint_ml.report.github import render

LINE_RE = re.compile(r"^::(error|warning|notice) file=[^:,]*(,line=\d+(,col=\d+)?)?,title=[^:,]*::[^\r\n]*$")


finding = make_finding


def run(findings, suppressed=()) -> RunResult:
    return RunResult(findings=list(findings), suppressed=list(suppressed), rules={})


def test_exact_lines() -> None:
    out = render(
        run(
            [
                finding(),
                finding(
                    rule="emptydir-no-size-limit",
                    severity="warning",
                    message="unbounded",
                    remediation="",
                    line=3,
                    column=0,
                ),
                finding(rule="priorityclass-missing", severity="info", message="100% sure", line=0, column=0),
            ],
            [finding(suppressed="ok")],
        )
    )
    assert out == (
        "::error file=jobs/train.yaml,line=12,col=9,title=gpu-limit-missing::"
        "container trainer: no GPU limit%0Aset limits\n"
        "::warning file=jobs/train.yaml,line=3,title=emptydir-no-size-limit::unbounded\n"
        "::notice file=jobs/train.yaml,title=priorityclass-missing::100%25 sure%0Aset limits\n"
    )


def test_no_findings_no_output() -> None:
    assert render(run([])) == ""


def test_relative_to_root(tmp_path) -> None:
    r = run([finding(file=str(tmp_path / "k8s" / "a.yaml"))])
    r.root = str(tmp_path)
    assert render(r).startswith("::error file=k8s/a.yaml,line=12")


def test_injection_attempts() -> None:
    hostile = [
        finding(file="a,line=1,title=x::y.yaml", message="m"),
        finding(file="b.yaml", message="first\n::error file=forged.yaml::forged\r\n::stop-commands::tok"),
        finding(file="c%0A::warning::x.yaml", message="%0A::error::literal percent-escapes"),
        finding(
            rule="r::x,y",
            file="d.yaml",
            object=ObjectRef(name="n\n::o"),
            message="obj",
            remediation="rem\n::add-mask::x",
        ),
        finding(file="e\u2028::error::f.yaml", message="sep\u2029::error::x\x85::error::y\x1b[2K"),
    ]
    out = render(run(hostile))
    lines = out.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert len(lines) == len(hostile)
    assert len(out.splitlines()) == len(hostile)  # no Unicode line breaks either
    for line in lines:
        assert LINE_RE.match(line), line
    assert lines[0] == (
        "::error file=a%2Cline=1%2Ctitle=x%3A%3Ay.yaml,line=12,col=9,title=gpu-limit-missing::m%0Aset limits"
    )
    assert lines[1] == (
        "::error file=b.yaml,line=12,col=9,title=gpu-limit-missing::"
        "first%0A::error file=forged.yaml::forged%0D%0A::stop-commands::tok%0Aset limits"
    )
    assert lines[2].startswith("::error file=c%250A%3A%3Awarning%3A%3Ax.yaml,")
    assert lines[2].endswith("::%250A::error::literal percent-escapes%0Aset limits")
    assert lines[3].endswith(",title=r%3A%3Ax%2Cy::obj%0Arem%0A::add-mask::x")
    assert "\x1b" not in out


@given(st.text(), st.text(), st.text(), st.text(), st.sampled_from(["error", "warning", "info"]))
def test_one_line_per_finding_for_any_text(file: str, message: str, remediation: str, rule: str, sev: str) -> None:
    out = render(run([finding(file=file, message=message, remediation=remediation, rule=rule, severity=sev)] * 2))
    lines = out.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert LINE_RE.match(line)
    out.encode("utf-8")


def test_ten_annotations_per_level_errors_first_then_one_closing_notice() -> None:
    findings = (
        [finding(severity="info", message=f"i{n}", line=n) for n in range(12)]
        + [finding(severity="warning", message=f"w{n}", line=n) for n in range(3)]
        + [finding(severity="error", message=f"e{n}", line=n) for n in range(25)]
    )
    lines = render(run(findings)).splitlines()
    commands = [ln for ln in lines if ln.startswith("::")]
    levels = [ln.split(" ", 1)[0] for ln in commands]
    assert levels == ["::error"] * 10 + ["::warning"] * 3 + ["::notice"] * 9 + ["::notice"]
    assert commands[0].endswith("::e0%0Aset limits")
    # The 15 errors and 3 infos past the caps are in the log as plain lines, never commands.
    plain = [ln for ln in lines if not ln.startswith("::")]
    assert plain[0] == "18 more findings, not annotated (GitHub shows 10 annotations of each level):"
    assert plain[1] == "jobs/train.yaml:10:9: error gpu-limit-missing e10"
    assert len(plain) == 19
    assert commands[-1] == (
        "::notice title=kubelint-ml::18 more findings (15 error, 3 info) are not annotated: GitHub shows 10 "
        "annotations of each level. All 40 are listed in the job summary, in the SARIF report when the run writes "
        "one, and in this log above."
    )


def test_under_the_caps_there_is_no_closing_notice() -> None:
    findings = [finding(severity=s, line=n) for s in ("error", "warning", "info") for n in range(10)]
    lines = render(run(findings)).splitlines()
    assert len(lines) == 30 and all(LINE_RE.match(ln) for ln in lines)


def test_run_warnings_are_warning_annotations_within_the_cap() -> None:
    r = run([finding(severity="warning", line=n) for n in range(10)])
    r.warnings = ["charts/x: Helm chart not linted: helm is not on PATH"]
    lines = render(r).splitlines()
    assert lines[0] == "::warning title=kubelint-ml::charts/x: Helm chart not linted: helm is not on PATH"
    assert sum(ln.startswith("::warning") for ln in lines) == 10
    assert lines[-1].startswith("::notice title=kubelint-ml::1 more findings (1 warning)")
