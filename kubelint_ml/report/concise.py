"""One line per finding, ``path:line:col: rule-id message``, as ruff's concise format:
for grep, editors' quickfix lists and problem matchers. No summary line."""

from __future__ import annotations

from kubelint_ml.findings import RunResult
from kubelint_ml.report.escape import line_start, location, neutralise


def render(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    items = list(result.findings)
    if result.show_suppressed:
        items += result.suppressed
    items.sort(key=lambda f: f.sort_key())
    lines = []
    for f in items:
        line = f"{location(line_start(f.file), f.line, f.column)}: {neutralise(f.rule)} {neutralise(f.message)}"
        if f.suppressed is not None:
            line += f" (suppressed: {neutralise(f.suppressed)})"
        lines.append(line)
    return "".join(line + "\n" for line in lines)
