"""Human-readable output: one line per finding, grouped by file."""

from __future__ import annotations

from kubelint_ml.findings import Finding, RunResult
from kubelint_ml.report.escape import inert, line_start, location, neutralise

_COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[34m", "suppressed": "\x1b[2m"}
_RESET = "\x1b[0m"


def _word(word: str, color: bool) -> str:
    return f"{_COLORS[word]}{word}{_RESET}" if color and word in _COLORS else word


def _line(f: Finding, word: str, color: bool) -> str:
    where = location(line_start(f.file), f.line, f.column)
    return f"{where}: {_word(word, color)} {neutralise(f.rule)} {neutralise(f.message)}"


def _plural(n: int, word: str) -> str:
    if word == "info" or n == 1:
        return f"{n} {word}"
    return f"{n} {word}s"


def summary_line(result: RunResult) -> str:
    """`3 errors, 2 warnings, 1 info in 12 files (4 suppressed)`."""
    counts = result.counts()
    parts = [_plural(counts[s], s) for s in ("error", "warning", "info") if counts.get(s)]
    head = ", ".join(parts) if parts else "no findings"
    line = f"{head} in {_plural(result.files, 'file')}"
    extra = []
    if result.suppressed:
        extra.append(f"{len(result.suppressed)} suppressed")
    if result.baselined:
        extra.append(f"{result.baselined} baselined")
    if extra:
        line += f" ({', '.join(extra)})"
    return line


def render(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    """Findings sorted by file, then the summary line.

    With `verbose`, each finding's remediation and related locations follow
    on indented lines and suppressed findings are listed too, with the reason.
    """
    entries: list[tuple[Finding, str]] = [(f, f.severity) for f in result.findings]
    if verbose or result.show_suppressed:
        entries += [(f, "suppressed") for f in result.suppressed]
    entries.sort(key=lambda e: e[0].sort_key())
    lines: list[str] = []
    for f, word in entries:  # sort_key starts with the file: grouped by file
        line = _line(f, word, color)
        if word == "suppressed" and f.suppressed:
            line += f" ({neutralise(f.suppressed)})"
        lines.append(line)
        if verbose and f.remediation:
            lines.append(inert(f"    {neutralise(' '.join(f.remediation.split()))}"))
        if verbose:
            for file, rline, col, what in f.related:  # e.g. where the rendered output had it
                lines.append(inert(f"    {neutralise(what)}: {location(line_start(file), rline, col)}"))
    if result.quiet:
        return "\n".join(lines) + "\n" if lines else ""
    if lines:
        lines.append("")
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"
