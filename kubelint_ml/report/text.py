"""Human-readable output: findings grouped by file, then by object, then the summary.

    fixtures/examples/pytorchjob-gpu.yaml
      PyTorchJob research/llama-finetune
        17:9   warning  missing-priority-class  no priorityClassName: runs at the default priority

The file is named once, the object once (a finding outside any object, such
as a parse error, sits directly under its file), and each finding is one line:
position, severity, rule id, the short message. ``-v`` adds the detail and the
remediation under each finding. ``--format concise`` (report/concise.py) gives
one ``path:line:col: rule-id message`` line per finding instead.
"""

from __future__ import annotations

from kubelint_ml.findings import Finding, RunResult
from kubelint_ml.report.escape import inert, line_start, location, neutralise

_COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[34m", "suppressed": "\x1b[2m"}
_RESET = "\x1b[0m"
_WORD_WIDTH = len("suppressed")


def _word(word: str, color: bool, width: int) -> str:
    pad = " " * (width - len(word))
    return f"{_COLORS[word]}{word}{_RESET}{pad}" if color and word in _COLORS else word + pad


def _position(f: Finding) -> str:
    if f.line < 1:
        return "-"
    return f"{f.line}:{f.column}" if f.column >= 1 else str(f.line)


def object_label(f: Finding) -> str:
    """`Kind namespace/name` (or `Kind name`), neutralised; "" for a finding outside any object."""
    obj = f.object
    if obj is None:
        return ""
    name = (f"{_clip(obj.namespace)}/" if obj.namespace else "") + (_clip(obj.name) or "<unnamed>")
    return neutralise(f"{_clip(obj.kind) or 'object'} {name}")


def _clip(text: str, limit: int = 253) -> str:
    """A name cut at Kubernetes' longest legal name: a hostile one may be a megabyte."""
    return text if len(text) <= limit else text[:limit] + "…"


def _plural(n: int, word: str) -> str:
    if word == "info" or n == 1:
        return f"{n} {word}"
    return f"{n} {word}s"


def files_with_findings(result: RunResult) -> int:
    return result.files_with_findings()


def summary_line(result: RunResult) -> str:
    """`3 errors, 2 warnings, 1 info in 2 of 12 files (4 suppressed)`."""
    counts = result.counts()
    parts = [_plural(counts[s], s) for s in ("error", "warning", "info") if counts.get(s)]
    if parts:
        line = f"{', '.join(parts)} in {files_with_findings(result)} of {_plural(result.files, 'file')}"
    else:
        line = f"no findings in {_plural(result.files, 'file')}"
    extra = []
    if result.suppressed:
        extra.append(f"{len(result.suppressed)} suppressed")
    if result.baselined:
        extra.append(f"{result.baselined} baselined")
    if extra:
        line += f" ({', '.join(extra)})"
    return line


def _one_line(text: str) -> str:
    return neutralise(" ".join(text.split()))


def render(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    """Findings grouped by file and object, then the summary line.

    With `verbose`, each finding's detail, remediation and related locations
    (the rendered output a finding was mapped back from) follow on indented
    lines, and suppressed findings are listed too, with the reason.
    """
    entries: list[tuple[Finding, str]] = [(f, f.severity) for f in result.findings]
    if verbose or result.show_suppressed:
        entries += [(f, "suppressed") for f in result.suppressed]
    entries.sort(key=lambda e: e[0].sort_key())
    word_width = _WORD_WIDTH if any(w == "suppressed" for _, w in entries) else len("warning")
    lines: list[str] = []
    i = 0
    while i < len(entries):  # sort_key starts with the file: one group per file
        file = entries[i][0].file
        j = i
        while j < len(entries) and entries[j][0].file == file:
            j += 1
        group = entries[i:j]
        pos_width = max(len(_position(f)) for f, _ in group)
        rule_width = max(len(neutralise(f.rule)) for f, _ in group)
        lines.append(line_start(file))
        last_object: str | None = None
        for f, word in group:
            label = object_label(f)
            if label and label != last_object:
                lines.append(inert(f"  {label}"))
            last_object = label
            indent = "    " if label else "  "
            line = (
                f"{indent}{_position(f):<{pos_width}}  {_word(word, color, word_width)}  "
                f"{neutralise(f.rule):<{rule_width}}  {fix_mark(f, result.unsafe_fixes)}{neutralise(f.message)}"
            )
            if word == "suppressed" and f.suppressed:
                line += f" ({neutralise(f.suppressed)})"
            lines.append(line)
            if verbose:
                for extra in (f.detail, f.remediation):
                    if extra:
                        lines.append(inert(f"{indent}    {_one_line(extra)}"))
                for rfile, rline, col, what in f.related:  # e.g. where the rendered output had it
                    lines.append(inert(f"{indent}    {neutralise(what)}: {location(line_start(rfile), rline, col)}"))
        i = j
    if result.quiet:
        return "\n".join(lines) + "\n" if lines else ""
    if lines:
        lines.append("")
    lines.extend(fixable_lines(result))  # before the summary, which stays the last line
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def fix_mark(f: Finding, unsafe: bool) -> str:
    """`[*] ` before the message of a finding `--fix` (with `unsafe`: `--fix --unsafe-fixes`) fixes."""
    return "[*] " if f.fix is not None and not f.fix.unfixable and f.fix.applies(unsafe) else ""


def fixable_lines(result: RunResult) -> list[str]:
    """`[*] 3 fixable with --fix` and how many more --unsafe-fixes would fix, as ruff says it."""
    safe, unsafe = result.fixable()
    if result.unsafe_fixes:
        safe, unsafe = safe + unsafe, 0
    out = []
    if safe:
        out.append(f"[*] {safe} fixable with --fix" + (" --unsafe-fixes" if result.unsafe_fixes else ""))
    if unsafe:
        out.append(f"{unsafe} more fixable with --unsafe-fixes (they change how the workload runs)")
    return out
