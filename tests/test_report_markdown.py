"""Markdown reporter: exact tables, escaping, row cap."""

from __future__ import annotations

from factories import make_finding

from kubelint_ml.findings import ObjectRef, RunResult
from kubelint_ml.report.escape import markdown_cell
from kubelint_ml.report.markdown import render

finding = make_finding


def run(findings, suppressed=(), baselined=0) -> RunResult:
    return RunResult(
        findings=list(findings), suppressed=list(suppressed), rules={}, files=4, objects=9, baselined=baselined
    )


def test_exact_output() -> None:
    second = finding(rule="emptydir-no-size-limit", severity="warning", line=0, object=None, message="unbounded")
    out = render(run([finding(), second], [finding()], 2))
    assert out == (
        "## kubelint-ml\n"
        "\n"
        "| Severity | Count |\n"
        "| --- | ---: |\n"
        "| error | 1 |\n"
        "| warning | 1 |\n"
        "| info | 0 |\n"
        "\n"
        "4 files, 9 objects checked; 1 suppressed, 2 baselined; fail level: error — failed.\n"
        "\n"
        "| Location | Severity | Rule | Object | Message |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| jobs/train.yaml:12 | error | gpu-limit-missing | Job/ml/train | container trainer: no GPU limit |\n"
        "| jobs/train.yaml | warning | emptydir-no-size-limit |  | unbounded |\n"
    )


def test_no_findings() -> None:
    out = render(run([]))
    assert out.endswith("fail level: error — passed.\n\nNo findings.\n")
    assert "| Location |" not in out


def test_row_cap() -> None:
    out = render(run([finding(line=i) for i in range(1, 206)]))
    rows = [line for line in out.splitlines() if line.startswith("| jobs/")]
    assert len(rows) == 200
    assert rows[-1].startswith("| jobs/train.yaml:200 |")
    assert out.endswith("\n… 5 more\n")
    assert render(run([finding()] * 3), max_rows=2).endswith("\n… 1 more\n")


def test_cell_escaping() -> None:
    assert markdown_cell("a|b") == "a\\|b"
    assert markdown_cell("`code` *em* _u_ ~s~ $x$") == "\\`code\\` \\*em\\* \\_u\\_ \\~s\\~ \\$x\\$"
    assert markdown_cell("[click](javascript:alert(1))") == "\\[click\\](javascript:alert(1))"
    assert markdown_cell("![img](x.png)") == "!\\[img\\](x.png)"
    assert markdown_cell("<img src=x onerror=alert(1)> & <!-- c -->") == (
        "&lt;img src=x onerror=alert(1)&gt; &amp; &lt;!-- c --&gt;"
    )
    assert markdown_cell("&lt;") == "&amp;lt;"
    assert markdown_cell("line1\nline2\r\nline3\rline4") == "line1<br>line2<br>line3<br>line4"
    assert markdown_cell("# title") == "\\# title"
    assert markdown_cell("- item") == "\\- item"
    assert markdown_cell("1. item") == "1\\. item"
    assert markdown_cell("> quote") == "&gt; quote"
    assert markdown_cell("x\n  # h2") == "x<br>\\# h2"
    assert markdown_cell("https://evil.example/x") == "https:\u2060//evil.example/x"
    assert markdown_cell("WWW.evil.example") == "W\u2060WW.evil.example"
    assert markdown_cell("ping @org/team") == "ping @\u2060org/team"
    assert markdown_cell("back\\slash") == "back\\\\slash"
    assert markdown_cell("esc\x1b[31mred\x00") == "escred\\\\x00"
    assert markdown_cell("nvidia.com/gpu: 8") == "nvidia.com/gpu: 8"


def test_hostile_finding_stays_in_its_row() -> None:
    f = finding(
        file="a|b\n| x | y |.yaml",
        message="| injected | row |\n\n## Heading\n<script>alert(1)</script>",
        object=ObjectRef(kind="Pod", name="[x](https://e.com)"),
        rule="r`x`",
    )
    out = render(run([f]))
    rows = [line for line in out.splitlines() if line.startswith("| ") and "Severity" not in line and "---" not in line]
    assert rows[-1] == (
        "| a\\|b<br>\\| x \\| y \\|.yaml:12 | error | r\\`x\\` | Pod/\\[x\\](https:\u2060//e.com) | "
        "\\| injected \\| row \\|<br><br>\\## Heading<br>&lt;script&gt;alert(1)&lt;/script&gt; |"
    )
    assert "<script>" not in out
    assert out.count("\n") == 13  # the same 13 lines as for a harmless finding


def test_run_warnings_are_shown() -> None:
    from kubelint_ml.findings import RunResult
    from kubelint_ml.report.markdown import render

    r = RunResult(findings=[], suppressed=[], rules={}, warnings=["charts/x: Helm chart not linted: helm | pipe"])
    assert "> **Warning:** charts/x: Helm chart not linted: helm \\| pipe" in render(r)
