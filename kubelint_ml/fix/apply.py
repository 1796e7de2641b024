"""Applying fixes: edits chosen without overlap, re-lint until stable, atomic writes, diffs.

As ``ruff check --fix`` does: the applicable fixes of a file's findings are
resolved against its bytes and applied together; a fix whose edits overlap one
already taken is skipped for this round (an identical fix, or one whose edits
are all already taken, counts as applied). The new text is linted again and
the loop repeats, at most :data:`MAX_ROUNDS` times, until no fix changes
anything. A round whose text would not parse is undone (a safety net: the
editor never produces one. The command then writes each file atomically
(:func:`kubelint_ml.atomic.write_bytes_atomic`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from kubelint_ml.findings import Finding
from kubelint_ml.fix import Edit, Fix
from kubelint_ml.fix.yamltext import Refused, Text
from kubelint_ml.records import Record

MAX_ROUNDS = 10


def resolve(findings: list[Finding], data: bytes, events: list | None = None) -> None:
    """Resolve the fixes of one file's findings against its bytes (sets ``edits`` or ``unfixable``);
    ``events``: the parse events the file was read from, when the loader kept them."""
    text: Text | None = None
    why: str | None = None
    # Findings of several rules often carry the same fix (a BestEffort pod's memory and each of its
    # containers' missing limits): resolved once, by document and changes.
    done: dict[tuple, tuple[tuple, str | None]] = {}
    for f in findings:
        fix = f.fix
        if fix is None or fix.resolved:
            continue
        if rendered(f):
            fix.resolved, fix.edits, fix.unfixable = True, (), RENDERED
            continue
        if text is None and why is None:
            try:
                text = Text(data, events)
            except UnicodeDecodeError:
                why = "the file is not UTF-8"
        fix.resolved = True
        if text is None:
            fix.unfixable = why
            continue
        key: tuple | None = (fix.document, fix.changes)
        try:
            found = done.get(key)  # type: ignore[arg-type]
        except TypeError:  # a change whose value is a mapping or a list: not remembered
            key, found = None, None
        if found is not None:
            fix.edits, fix.unfixable = found
            continue
        try:
            fix.edits = tuple(text.resolve(fix))
            fix.unfixable = None
        except Refused as e:
            fix.edits, fix.unfixable = (), str(e)
        if key is not None:
            done[key] = (fix.edits, fix.unfixable)


RENDERED = "the finding is in rendered output (helm template, kustomize): fix the chart or the base it comes from"


def rendered(f: Finding) -> bool:
    """A finding mapped back from rendered output: its paths are the output's, not the file's."""
    return any(r[3] == "rendered output" for r in getattr(f, "related", ()) or ())


def resolve_all(findings: list[Finding], read: Callable[[str], bytes | None]) -> None:
    """Resolve every fix of ``findings``; ``read(display path)`` gives a file's bytes (``None``: unreadable)."""
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        if f.fix is not None and not f.fix.resolved:
            if rendered(f):  # mapped back to a template or a base: not edited, whether or not it is read
                f.fix.resolved, f.fix.edits, f.fix.unfixable = True, (), RENDERED
                continue
            by_file.setdefault(f.file, []).append(f)
    for file, group in by_file.items():
        data = read(file)
        if data is None:
            for f in group:
                f.fix.resolved, f.fix.unfixable = True, "the file cannot be read again"
            continue
        resolve(group, data)


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end and b.start == b.end:
        return a.start == b.start
    return (
        a.start < b.end
        and b.start < a.end
        or (a.start == a.end and b.start < a.start < b.end)
        or (b.start == b.end and a.start < b.start < a.end)
    )


def choose(fixes: list[Fix]) -> tuple[list[Edit], list[Fix]]:
    """The edits of every fix that does not overlap an earlier one, and the fixes taken."""
    taken: list[Edit] = []
    seen: set[Edit] = set()
    chosen: list[Fix] = []
    for fix in fixes:
        if not fix.edits:
            continue
        if all(e in seen for e in fix.edits):
            chosen.append(fix)
            continue
        if any(_overlaps(e, t) for e in fix.edits for t in taken):
            continue
        taken.extend(fix.edits)
        seen.update(fix.edits)
        chosen.append(fix)
    taken.sort(key=lambda e: (e.start, e.end))
    return taken, chosen


def apply_edits(data: bytes, edits: list[Edit]) -> bytes:
    """``data`` with non-overlapping ``edits`` (sorted by start) made."""
    out = []
    at = 0
    for e in edits:
        out.append(data[at : e.start])
        out.append(e.text.encode("utf-8"))
        at = e.end
    out.append(data[at:])
    return b"".join(out)


class FileOutcome(Record):
    file: str
    before: bytes
    after: bytes
    findings: list[Finding]  # what is left to report (active)
    suppressed: list[Finding]
    fixed: int
    rounds: int
    notes: list[str]
    __slots__ = _fields = ("file", "before", "after", "findings", "suppressed", "fixed", "rounds", "notes")

    def __init__(
        self,
        file: str,
        before: bytes,
        after: bytes,
        findings: list[Finding],
        suppressed: list[Finding],
        fixed: int = 0,
        rounds: int = 0,
        notes: list[str] | None = None,
    ) -> None:
        self.file = file
        self.before = before
        self.after = after
        self.findings = findings
        self.suppressed = suppressed
        self.fixed = fixed
        self.rounds = rounds
        self.notes = [] if notes is None else notes

    @property
    def changed(self) -> bool:
        return self.before != self.after


def fix_file(
    file: str,
    data: bytes,
    findings: list[Finding],
    suppressed: list[Finding],
    *,
    unsafe: bool,
    relint: Callable[[bytes], tuple[list[Finding], list[Finding]]],
) -> FileOutcome:
    """Apply the applicable fixes of one file's (active) findings until nothing more changes.

    ``relint(bytes)`` lints the new text and returns its active and suppressed findings
    (config excludes and the baseline applied).
    """
    out = FileOutcome(file, data, data, findings, suppressed)
    original = Counter(_key(f) for f in findings)
    current = data
    for _ in range(MAX_ROUNDS):
        wanted = [f for f in out.findings if f.fix is not None and f.fix.applies(unsafe)]
        if not wanted:
            break
        resolve(wanted, current)
        edits, chosen = choose([f.fix for f in wanted])
        if not edits:
            break
        new = apply_edits(current, edits)
        if new == current:
            break
        active, supp = relint(new)
        if any(f.rule == "parse-error" for f in active) and not any(f.rule == "parse-error" for f in out.findings):
            for fix in {id(x): x for x in chosen}.values():
                fix.edits, fix.unfixable = (), "the edited text would not parse"
            out.notes.append(f"{file}: a fix round was undone: the edited text would not parse")
            break
        current = new
        out.rounds += 1
        out.findings, out.suppressed = active, supp
    out.after = current
    # A finding is fixed when it is gone, not when it moved (a missing memory limit reported at
    # `resources` before a fix inserts `limits:` and at `limits` after): counted by rule, object,
    # container and document, whatever the field path.
    out.fixed = sum((original - Counter(_key(f) for f in out.findings)).values())
    for f in out.findings:
        if f.fix is not None and f.fix.applies(unsafe) and f.fix.unfixable:
            out.notes.append(f"{file}:{f.line}: {f.rule}: not fixed: {f.fix.unfixable}")
    return out


def _key(f: Finding) -> tuple:
    obj = f.object
    ref = (obj.apiVersion, obj.kind, obj.namespace, obj.name) if obj is not None else ()
    return (f.rule, f.file, ref, f.container or "", f.document)


def unified_diff(file: str, before: bytes, after: bytes) -> str:
    """A unified diff of one file (``a/FILE`` -> ``b/FILE``), marking a last line without a newline."""
    import difflib  # only a diff needs it

    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(a, b, fromfile=f"a/{file}", tofile=f"b/{file}"):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)
