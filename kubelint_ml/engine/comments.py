"""Suppression comments in the manifest's text.

``# kubelint-ml: ignore[rule-a,rule-b] reason`` at the end of a line suppresses those
rules' findings on that line; alone on its line, on the next line that is not blank or a
comment. ``# kubelint-ml: ignore-file[rule-a] reason`` anywhere suppresses them in the whole
file. ``*`` names every rule. The reason is required, as the reason of a suppression
annotation is shown by ``--show-suppressed``: a comment without one suppresses nothing and
is reported, as is a rule id that names no rule (``unknown-ignore-rule``).

Unlike the annotation, a comment stays in the repository and never reaches the cluster
object. The text is read line by line: a ``#`` that starts the line or follows a blank is a
comment in YAML, except inside a quoted or block scalar, which this reading does not tell
apart (such a line would need to hold the whole marker to be taken for one).
"""

from __future__ import annotations

import re

from kubelint_ml.engine.api import UNKNOWN_IGNORE, did_you_mean
from kubelint_ml.engine.core import IGNORE_ALL
from kubelint_ml.findings import Finding

MARKER = b"kubelint-ml:"
_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#[ \t]*kubelint-ml:[ \t]*(ignore-file|ignore)\[([^\]]*)\][ \t]*(.*)$")
MAX_LINE = 4096  # longer lines are not read for comments: no regex scan of a hostile line


class Suppression:
    __slots__ = ("rules", "reason", "line", "target", "whole_file")

    def __init__(self, rules: dict[str, int], reason: str, line: int, target: int, whole_file: bool) -> None:
        self.rules = rules  # rule id -> its column in the comment
        self.reason = reason
        self.line = line
        self.target = target  # the line it applies to (0: the whole file)
        self.whole_file = whole_file


def read(data: bytes) -> list[Suppression]:
    """The suppression comments of a file's text, in order."""
    if MARKER not in data:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[Suppression] = []
    for i, text in enumerate(lines):
        if "kubelint-ml:" not in text or len(text) > MAX_LINE:
            continue
        m = _COMMENT.search(text)
        if m is None:
            continue
        whole_file = m.group(1) == "ignore-file"
        rules: dict[str, int] = {}
        start = m.start(2)
        for part in re.finditer(r"[^,]+", m.group(2)):
            rid = part.group().strip()
            if rid:
                rules.setdefault(rid, start + part.start() + len(part.group()) - len(part.group().lstrip()) + 1)
        target = 0
        if not whole_file:
            target = i + 1
            if not text[: m.start()].strip():  # alone on its line: the next line of content
                target = 0
                for j in range(i + 1, len(lines)):
                    stripped = lines[j].strip()
                    if stripped and not stripped.startswith("#"):
                        target = j + 1
                        break
        out.append(Suppression(rules, m.group(3).rstrip(" \t"), i + 1, target, whole_file))
    return out


def apply(findings: list[Finding], data: bytes, display: str, known: set[str]) -> list[Finding]:
    """Mark ``findings`` (one file's) suppressed where a comment says so; the findings about the
    comments themselves (unknown rule ids, missing reasons)."""
    comments = read(data)
    if not comments:
        return []
    problems: list[Finding] = []
    file_wide: dict[str, str] = {}
    by_line: dict[int, dict[str, str]] = {}
    for c in comments:
        if not c.reason:
            problems.append(
                _problem(
                    display,
                    c.line,
                    next(iter(c.rules.values()), 1),
                    "kubelint-ml ignore comment gives no reason, so it suppresses nothing; write why after the ']'",
                )
            )
            continue
        for rid, column in c.rules.items():
            if rid != IGNORE_ALL and rid not in known:
                problems.append(
                    _problem(
                        display, c.line, column, f"ignore comment names unknown rule '{rid}'{did_you_mean(rid, known)}"
                    )
                )
                continue
            if c.whole_file:
                file_wide.setdefault(rid, c.reason)
            elif c.target:
                by_line.setdefault(c.target, {}).setdefault(rid, c.reason)
    for f in findings:
        if f.suppressed is not None or f.file != display:
            continue
        here = by_line.get(f.line)
        reason = None
        if here:
            reason = here.get(f.rule, here.get(IGNORE_ALL))
        if reason is None and file_wide:
            reason = file_wide.get(f.rule, file_wide.get(IGNORE_ALL))
        if reason is not None:
            f.suppressed = reason
    return problems


def _problem(file: str, line: int, column: int, message: str) -> Finding:
    return Finding(
        UNKNOWN_IGNORE,
        "info",
        message,
        "Correct the rule id (see `kubelint-ml rules list`), or give the reason after the brackets.",
        file,
        line,
        column,
        "",
        None,
        None,
        0,
    )
