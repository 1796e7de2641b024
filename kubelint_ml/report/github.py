"""GitHub Actions workflow commands: one annotation line per finding."""

from __future__ import annotations

from kubelint_ml.findings import Finding, RunResult
from kubelint_ml.report.escape import github_data, github_property, neutralise, relative_posix

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def annotation(f: Finding, root: str = ".") -> str:
    """`::error file=F,line=L,col=C,title=RULE::MESSAGE%0AREMEDIATION`."""
    props = [f"file={github_property(relative_posix(f.file, root)[0])}"]
    if f.line >= 1:
        props.append(f"line={f.line}")
        if f.column >= 1:
            props.append(f"col={f.column}")
    props.append(f"title={github_property(f.rule)}")
    text = f.message + (f"\n{f.remediation}" if f.remediation else "")
    return f"::{COMMANDS.get(f.severity, 'warning')} {','.join(props)}::{github_data(text)}"


# GitHub shows at most 10 annotations of each level per step; the rest are dropped silently.
MAX_PER_LEVEL = 10
_ORDER = ("error", "warning", "info")


def render(result: RunResult, *, color: bool = False, verbose: bool = False, cap: int = MAX_PER_LEVEL) -> str:
    """Annotations by severity (errors first), at most ``cap`` of each level; the findings past
    that as plain log lines, then one notice that says how many were not annotated and where
    they are. Nothing at all when there are no findings or warnings."""
    lines: list[str] = []
    used = {"error": 0, "warning": 0, "notice": 0}
    for w in result.warnings:
        if used["warning"] < cap:
            used["warning"] += 1
            lines.append(f"::warning title=kubelint-ml::{github_data(w)}")
        else:
            lines.append(plain(w))
    findings = sorted(result.findings, key=lambda f: _ORDER.index(f.severity) if f.severity in _ORDER else 1)
    total = len(findings)
    wanted = {"error": 0, "warning": 0, "notice": 0}
    for f in findings:
        wanted[COMMANDS.get(f.severity, "warning")] += 1
    room = {level: cap - used[level] for level in used}
    overflow = any(wanted[level] > room[level] for level in room)
    room["notice"] -= 1 if overflow else 0  # the closing notice is one of them
    rest: list[Finding] = []
    for f in findings:
        level = COMMANDS.get(f.severity, "warning")
        if room[level] > 0:
            room[level] -= 1
            lines.append(annotation(f, result.root))
        else:
            rest.append(f)
    if rest:
        lines.append(f"{len(rest)} more findings, not annotated (GitHub shows {cap} annotations of each level):")
        lines += [plain(_line(f, result.root)) for f in rest]
        counts = {s: 0 for s in _ORDER}
        for f in rest:
            counts[f.severity if f.severity in counts else "warning"] += 1
        parts = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        lines.append(
            f"::notice title=kubelint-ml::{github_data(f'{len(rest)} more findings ({parts}) are not annotated: GitHub shows {cap} annotations of each level. All {total} are listed in the job summary, in the SARIF report when the run writes one, and in this log above.')}"
        )
    return "".join(line + "\n" for line in lines)


def _line(f: Finding, root: str) -> str:
    where = relative_posix(f.file, root)[0]
    if f.line >= 1:
        where += f":{f.line}" + (f":{f.column}" if f.column >= 1 else "")
    return f"{where}: {f.severity} {f.rule} {f.message}"


def plain(text: str) -> str:
    """A log line that can never be read as a workflow command."""
    text = neutralise(text)
    return " " + text if text.startswith("::") else text
