"""Markdown output: a summary table and a findings table (GitHub-flavoured)."""

from __future__ import annotations

from kubelint_ml.findings import Finding, RunResult
from kubelint_ml.report.escape import location, markdown_cell

MAX_ROWS = 200


def _row(f: Finding) -> str:
    obj = f.object.display() if f.object is not None else ""
    text = f"{f.message}\n{f.detail}" if f.detail else f.message  # the detail on a line of its own (<br>)
    cells = [location(f.file, f.line), f.severity, f.rule, obj, text]
    return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"


def render(result: RunResult, *, color: bool = False, verbose: bool = False, max_rows: int = MAX_ROWS) -> str:
    """`## kubelint-ml`, severity counts, then up to `max_rows` findings."""
    counts = result.counts()
    lines = [
        "## kubelint-ml",
        "",
        "| Severity | Count |",
        "| --- | ---: |",
        *(f"| {sev} | {counts.get(sev, 0)} |" for sev in ("error", "warning", "info")),
        "",
        f"{result.files} files, {result.objects} objects checked; "
        f"{len(result.suppressed)} suppressed, {result.baselined} baselined; "
        f"fail level: {markdown_cell(result.fail_level)} — {'failed' if result.failed() else 'passed'}.",
    ]
    for warning in result.warnings:
        lines += ["", f"> **Warning:** {markdown_cell(warning)}"]
    safe, unsafe = result.fixable()
    if safe or unsafe:
        lines.append(
            f"{safe + unsafe} findings fixable by `kubelint-ml check --fix`: {safe} safe, {unsafe} unsafe "
            "(`--unsafe-fixes`)."
        )
    if result.findings:
        lines += ["", "| Location | Severity | Rule | Object | Message |", "| --- | --- | --- | --- | --- |"]
        lines += [_row(f) for f in result.findings[:max_rows]]
        hidden = len(result.findings) - max_rows
        if hidden > 0:
            lines += ["", f"… {hidden} more"]
    else:
        lines += ["", "No findings."]
    return "\n".join(lines) + "\n"
