"""GitHub Actions workflow commands: one annotation line per finding."""

from __future__ import annotations

from kubelint_ml.findings import Finding, RunResult
from kubelint_ml.report.escape import github_data, github_property, relative_posix

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


def render(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    """One line per (unsuppressed) finding; nothing at all when there are none."""
    lines = [annotation(f, result.root) for f in result.findings]
    return "".join(line + "\n" for line in lines)
