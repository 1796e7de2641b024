"""``check --fix`` / ``--diff`` / ``--fix-only``: a run's fixes applied file by file.

Called by the CLI after the run, its config excludes and baseline: only the
findings that would be reported (not suppressed, not baselined) are fixed.
Each file is fixed and linted again in this process, with the run's facts,
until nothing more changes (:func:`kubelint_ml.fix.apply.fix_file`); its
findings in the result are replaced by what is left.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kubelint_ml.findings import Finding, RunResult
from kubelint_ml.fix.apply import FileOutcome, fix_file, resolve_all, unified_diff, write_atomic


@dataclass(slots=True)
class FixReport:
    outcomes: list[FileOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # files that could not be written

    @property
    def fixed(self) -> int:
        return sum(o.fixed for o in self.outcomes if o.changed)

    @property
    def changed(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.changed]

    def diff(self) -> str:
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
    resolve_all(result.findings, reader(session))


def apply_fixes(result: RunResult, session: dict, *, unsafe: bool, write: bool,
                keep: Callable[[list[Finding]], list[Finding]] | None = None) -> FixReport:
    """Fix the files of ``result``'s fixable findings; ``write=False`` (``--diff``) only computes.

    ``keep`` filters a file's findings after a re-lint as the run did (the baseline).
    """
    from kubelint_ml.run.lint import apply_excludes, once_per_kind

    runner, config = session["runner"], session["config"]
    read = reader(session)
    report = FixReport()
    by_file: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_file.setdefault(f.file, []).append(f)
    supp_by_file: dict[str, list[Finding]] = {}
    for f in result.suppressed:
        supp_by_file.setdefault(f.file, []).append(f)
    work: list[tuple[str, bytes, list[Finding], list[Finding]]] = []
    for file, findings in by_file.items():
        if not any(f.fix is not None and f.fix.applies(unsafe) for f in findings):
            continue
        data = read(file)
        if data is None:
            report.notes.append(f"{file}: not fixed: the file cannot be read again")
            continue
        if file == "-" and write:
            report.notes.append("-: not fixed: standard input cannot be written back (use --diff)")
            continue
        work.append((file, data, findings, supp_by_file.get(file, [])))

    def fix_one(item: tuple[str, bytes, list[Finding], list[Finding]]) -> FileOutcome:
        file, data, findings, supp = item

        def relint(new: bytes) -> tuple[list[Finding], list[Finding]]:
            found = runner.lint_bytes(new, file).findings
            apply_excludes(found, config)
            found.sort(key=Finding.sort_key)
            found = once_per_kind(found)
            active = [f for f in found if f.suppressed is None]
            return (keep(active) if keep else active), [f for f in found if f.suppressed is not None]

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
                write_atomic(_real(session, file), outcome.after)
            except OSError as e:
                report.errors.append(f"{file}: cannot write: {e.strerror or e}")
                outcome.after = outcome.before
                continue
        report.outcomes.append(outcome)
    changed = {o.file: o for o in report.changed}
    if changed:
        result.findings = sorted([f for f in result.findings if f.file not in changed]
                                 + [f for o in changed.values() for f in o.findings], key=Finding.sort_key)
        result.suppressed = sorted([f for f in result.suppressed if f.file not in changed]
                                   + [f for o in changed.values() for f in o.suppressed], key=Finding.sort_key)
    return report


# From this many files to fix, with more than one job, the fixing is shared by forked workers.
PARALLEL_MIN_FILES = 16


def _fix_all(work: list, fix_one: Callable, jobs: int) -> list[FileOutcome]:
    """``fix_one`` on every item, in order; shared with ``jobs - 1`` forked workers when there is enough."""
    import os

    if jobs <= 1 or len(work) < PARALLEL_MIN_FILES or not hasattr(os, "fork"):
        return [fix_one(item) for item in work]
    from kubelint_ml.run.lint import _encode, _fork_map, _rebuild

    size = max(1, len(work) // (jobs * 8))
    spans = [(i, min(len(work), i + size)) for i in range(0, len(work), size)]
    shared: dict = {}

    def local(n: int) -> list[FileOutcome]:
        return [fix_one(item) for item in work[spans[n][0]:spans[n][1]]]

    def remote(n: int) -> list[tuple]:
        return [(n, i, o.after if o.changed else None, list(map(_encode, o.findings)), list(map(_encode, o.suppressed)),
                 o.fixed, o.rounds, o.notes) for i, o in enumerate(local(n))]

    def decode(part: list[tuple]) -> list[FileOutcome]:
        out = []
        for n, i, after, rows, supp, fixed, rounds, notes in part:
            file, before, _, _ = work[spans[n][0] + i]
            out.append(FileOutcome(file, before, before if after is None else after, _rebuild(rows, shared),
                                   _rebuild(supp, shared), fixed, rounds, notes))
        return out

    return [o for part in _fork_map(len(spans), jobs, local, remote, decode) for o in part]


def _real(session: dict, display: str) -> str:
    for s in session.get("sources", ()):
        if s.path == display:
            return s.real
    return display
