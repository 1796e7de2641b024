"""``check --fix`` / ``--diff`` / ``--fix-only``: a run's fixes applied file by file.

Called by the command after the run, its config excludes and baseline: only
the findings that would be reported (not suppressed, not baselined) are
fixed. Each file is fixed and linted again with the run's facts, until
nothing more changes (:func:`kubelint_ml.fix.apply.fix_file`), in this
process or shared with forked workers; its findings in the result are
replaced by what is left. ``session`` is what :func:`kubelint_ml.run.lint.run`
leaves for it: the runner, the config, the sources, stdin's bytes, the jobs,
and ``finish`` (config excludes, sorting) for a file's new findings.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from kubelint_ml.atomic import write_bytes_atomic
from kubelint_ml.findings import Finding, RunResult
from kubelint_ml.records import Record
from kubelint_ml.run import parallel, pool

if TYPE_CHECKING:  # the byte-level fixer is imported when a fix is made or printed
    from kubelint_ml.fix.apply import FileOutcome


class FixReport(Record):
    outcomes: list[FileOutcome]
    notes: list[str]
    errors: list[str]  # files that could not be written
    __slots__ = _fields = ("outcomes", "notes", "errors")

    def __init__(
        self, outcomes: list[FileOutcome] | None = None, notes: list[str] | None = None, errors: list[str] | None = None
    ) -> None:
        self.outcomes = [] if outcomes is None else outcomes
        self.notes = [] if notes is None else notes
        self.errors = [] if errors is None else errors

    @property
    def fixed(self) -> int:
        return sum(o.fixed for o in self.outcomes if o.changed)

    @property
    def changed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.changed]

    def diff(self) -> str:
        from kubelint_ml.fix.apply import unified_diff

        return "".join(unified_diff(o.file, o.before, o.after) for o in self.changed)


def reader(session: dict) -> Callable[[str], bytes | None]:
    """A file's bytes by its display path (stdin's as read), for resolving fixes."""
    by_display = {s.path: s for s in session.get("sources", ())}

    def read(display: str) -> bytes | None:
        src = by_display.get(display)
        if src is None:
            return None
        if src.real == "-":
            return session.get("stdin")
        try:
            with open(src.real, "rb") as fh:
                return fh.read()
        except OSError:
            return None

    return read


def resolve_result(result: RunResult, session: dict) -> None:
    """Give every reported fix its byte edits (JSON and SARIF show them)."""
    from kubelint_ml.fix.apply import resolve_all

    resolve_all(result.findings, reader(session))


def apply_fixes(
    result: RunResult,
    session: dict,
    *,
    unsafe: bool,
    write: bool,
    keep: Callable[[list[Finding]], list[Finding]] | None = None,
) -> FixReport:
    """Fix the files of ``result``'s fixable findings; ``write=False`` (``--diff``) only computes.

    ``keep`` filters a file's findings after a re-lint as the run did (the baseline).
    """
    runner, finish = session["runner"], session["finish"]
    read = reader(session)
    report = FixReport()
    by_file: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_file.setdefault(f.file, []).append(f)
    supp_by_file: dict[str, list[Finding]] = {}
    for f in result.suppressed:
        supp_by_file.setdefault(f.file, []).append(f)
    work: list[tuple[str, bytes, list[Finding], list[Finding]]] = []
    from kubelint_ml.fix.apply import RENDERED, rendered

    for file, findings in by_file.items():
        fixable = [f for f in findings if f.fix is not None and f.fix.applies(unsafe)]
        if not fixable:
            continue
        if all(rendered(f) for f in fixable):  # a chart's template or a kustomize base: not this run's file
            report.notes.append(f"{file}: not fixed: {RENDERED}")
            continue
        data = read(file)
        if data is None:
            report.notes.append(f"{file}: not fixed: the file cannot be read again")
            continue
        if write and _real(session, file) == "-":  # `-` shown as <stdin>, or as --stdin-filename's name
            report.notes.append(f"{file}: not fixed: standard input cannot be written back (use --diff)")
            continue
        work.append((file, data, findings, supp_by_file.get(file, [])))

    def fix_one(item: tuple[str, bytes, list[Finding], list[Finding]]) -> FileOutcome:
        file, data, findings, supp = item

        def relint(new: bytes) -> tuple[list[Finding], list[Finding]]:
            found = finish(runner.lint_bytes(new, file).findings)
            active = [f for f in found if f.suppressed is None]
            return (keep(active) if keep else active), [f for f in found if f.suppressed is not None]

        from kubelint_ml.fix.apply import fix_file

        return fix_file(file, data, findings, supp, unsafe=unsafe, relint=relint)

    for outcome in _fix_all(work, fix_one, session.get("jobs", 1)):
        report.notes.extend(outcome.notes)
        data = outcome.before
        file = outcome.file
        if outcome.changed and write:
            current = read(file)
            if current != data:
                report.errors.append(f"{file}: changed while it was being fixed; left as it is")
                outcome.after = outcome.before
                continue
            try:
                # Not flushed to disk file by file (that cost more than the rest of --fix): the
                # rename keeps every file old or new for readers and against an interrupted run.
                write_bytes_atomic(_real(session, file), outcome.after, sync=False)
            except OSError as e:
                report.errors.append(f"{file}: cannot write: {e.strerror or e}")
                outcome.after = outcome.before
                continue
        report.outcomes.append(outcome)
    changed = {o.file: o for o in report.changed}
    if changed:
        result.findings = sorted(
            [f for f in result.findings if f.file not in changed] + [f for o in changed.values() for f in o.findings],
            key=Finding.sort_key,
        )
        result.suppressed = sorted(
            [f for f in result.suppressed if f.file not in changed]
            + [f for o in changed.values() for f in o.suppressed],
            key=Finding.sort_key,
        )
    return report


# From this many files to fix, with more than one job, the fixing is shared by forked workers.
PARALLEL_MIN_FILES = 16


def _fix_all(work: list, fix_one: Callable, jobs: int) -> list[FileOutcome]:
    """``fix_one`` on every item, in order; shared with ``jobs - 1`` forked workers when there is enough."""
    if jobs <= 1 or len(work) < PARALLEL_MIN_FILES or not hasattr(os, "fork"):
        return [fix_one(item) for item in work]
    encode, rebuild = parallel._encode, parallel._rebuild

    size = max(1, len(work) // (jobs * 8))
    spans = [(i, min(len(work), i + size)) for i in range(0, len(work), size)]
    shared: dict = {}

    def local(n: int) -> list[FileOutcome]:
        return [fix_one(item) for item in work[spans[n][0] : spans[n][1]]]

    def remote(n: int) -> list[tuple]:
        return [
            (
                n,
                i,
                o.after if o.changed else None,
                list(map(encode, o.findings)),
                list(map(encode, o.suppressed)),
                o.fixed,
                o.rounds,
                o.notes,
            )
            for i, o in enumerate(local(n))
        ]

    def decode(part: list[tuple]) -> list[FileOutcome]:
        from kubelint_ml.fix.apply import FileOutcome

        out = []
        for n, i, after, rows, supp, fixed, rounds, notes in part:
            file, before, mine, my_supp = work[spans[n][0] + i]
            found = rebuild(rows, shared)
            if after is None:
                # Unchanged: the run's own findings stay, with what the worker learnt of their fixes
                # (why one could not be made), as a sequential run leaves them.
                for f, theirs in zip(mine, found):
                    f.fix = theirs.fix
                found, supp_found = mine, my_supp
            else:
                supp_found = rebuild(supp, shared)
            out.append(
                FileOutcome(file, before, before if after is None else after, found, supp_found, fixed, rounds, notes)
            )
        return out

    return [o for part in pool.fork_map(len(spans), jobs, local, remote, decode) for o in part]


def _real(session: dict, display: str) -> str:
    for s in session.get("sources", ()):
        if s.path == display:
            return s.real
    return display


class Outcome(Record):
    """What the command prints and how it ends after the fixes (``exit_code`` None: go on and report)."""

    diff: str
    summary: str
    errors: list[str]
    notes: list[str]
    exit_code: int | None
    __slots__ = _fields = ("diff", "summary", "errors", "notes", "exit_code")

    def __init__(
        self,
        diff: str = "",
        summary: str = "",
        errors: list[str] | None = None,
        notes: list[str] | None = None,
        exit_code: int | None = None,
    ) -> None:
        self.diff = diff
        self.summary = summary
        self.errors = [] if errors is None else errors
        self.notes = [] if notes is None else notes
        self.exit_code = exit_code


def after_run(
    result: RunResult,
    session: dict,
    args: dict,
    formats: tuple[str, ...],
    keep: Callable[[list[Finding]], list[Finding]] | None,
) -> Outcome | None:
    """--diff (exit 1 when something would change), --fix (then report), --fix-only (exit); JSON and SARIF
    get the remaining fixes' edits. None when there is nothing to do or say."""
    unsafe = bool(args.get("unsafe_fixes"))
    result.unsafe_fixes = unsafe
    for f in result.findings:
        if f.fix is not None and getattr(f, "related", None):
            from kubelint_ml.fix.apply import RENDERED, rendered

            if rendered(f):  # its paths are the rendered output's: not offered
                f.fix.resolved, f.fix.edits, f.fix.unfixable = True, (), RENDERED
    out: Outcome | None = None
    if args.get("fix_diff"):
        report = apply_fixes(result, session, unsafe=unsafe, write=False, keep=keep)
        n = len(report.changed)
        summary = (
            f"would fix {report.fixed} finding{'s' if report.fixed != 1 else ''} in {n} file{'s' if n != 1 else ''}"
        )
        if not n and result.findings:  # nothing to show: say that findings remain, and where to look
            left = len(result.findings)
            more = 0 if unsafe else result.fixable()[1]
            tail = f": {more} fixable with --unsafe-fixes" if more else ""
            if not args.get("verbose") and more < left:
                who = "the others have" if more else ("they have" if left != 1 else "it has")
                tail += f"; -v says why {who} no fix"
            summary += f" ({left} finding{'s remain' if left != 1 else ' remains'}{tail})"
        return Outcome(report.diff(), summary, [], report.notes, 1 if report.changed else 0)
    if args.get("fix") or args.get("fix_only"):
        report = apply_fixes(result, session, unsafe=unsafe, write=True, keep=keep)
        n = len(report.changed)
        out = Outcome(
            "",
            f"fixed {report.fixed} finding{'s' if report.fixed != 1 else ''} in {n} file{'s' if n != 1 else ''}",
            report.errors,
            report.notes,
        )
        if args.get("fix_only"):
            out.exit_code = 2 if report.errors else 0
            return out
    if any(fmt in ("json", "sarif", "html") for fmt in formats):
        resolve_result(result, session)
    return out
