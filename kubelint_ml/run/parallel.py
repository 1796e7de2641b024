"""The second pass shared by forked workers (see docs/architecture.md, ``--jobs``).

The parent lints its own spans and keeps its findings as they are; a
worker's findings travel back as plain tuples (cheap to pickle) and are
rebuilt with their repeated strings shared.
"""

from __future__ import annotations

import os
from operator import attrgetter

from kubelint_ml.findings import Finding, ObjectRef
from kubelint_ml.input.sources import Source
from kubelint_ml.run import pool
from kubelint_ml.run.runner import FileResult, Runner

# Below this many files, or this many bytes, a run stays in one process: forking costs more.
PARALLEL_MIN_FILES = 48
PARALLEL_MIN_BYTES = 256 * 1024

Inputs = list[tuple[Source, "bytes | None"]]


def use_parallel(jobs: int, files: int, size: int) -> bool:
    """Fork workers only when there is enough input to pay for them (and the system can fork)."""
    return jobs > 1 and files >= PARALLEL_MIN_FILES and size >= PARALLEL_MIN_BYTES and hasattr(os, "fork")


def lint_parallel(runner: Runner, inputs: Inputs, jobs: int, notes: list[str] | None = None) -> list[FileResult]:
    """Lint ``inputs`` in this process and ``jobs - 1`` forked workers (see :func:`pool.fork_map`):
    one result per span, in order."""
    spans = pool.spans(len(inputs), jobs)
    shared: dict = {}

    def decode(part: tuple) -> FileResult:
        rows, part_notes, docs, objs = part
        return FileResult(_rebuild(rows, shared), docs, objs, part_notes)

    # The first span is linted before forking: lazily built tables, caches and the
    # interpreter's specialised code are then set up once, and the workers inherit them.
    first = _lint_span(runner, inputs, spans[0])
    return pool.fork_map(
        len(spans),
        jobs,
        lambda n: _lint_span(runner, inputs, spans[n]),
        lambda n: _work(runner, inputs, spans[n]),
        decode,
        first,
        notes,
    )


class Concatenation:
    """Results added in order, each with its findings sorted: their ``total``, and whether it is
    ``sorted`` as a whole (each part's files all come after the previous part's: the sort key
    starts with the file). A part is let go as it is added; nothing of it is copied."""

    __slots__ = ("total", "sorted", "_last")

    def __init__(self) -> None:
        self.total = FileResult()
        self.sorted = True
        self._last: str | None = None

    def add(self, part: FileResult) -> None:
        found = part.findings
        if found:
            if self._last is not None and not self._last < found[0].file:
                self.sorted = False
            self._last = found[-1].file
        self.total.add(part)


def _lint_span(runner: Runner, inputs: Inputs, span: tuple[int, int]) -> FileResult:
    """The files of one span, as one result, its findings sorted (spans are sorted in the
    process that lints them, so that the parent has no sort left to do; see Concatenation)."""
    out = FileResult()
    parts = [runner.lint(source, data) for source, data in inputs[span[0] : span[1]]]
    if runner.policies is not None:
        runner.policies.flush()  # policy findings join the files' results
    for part in parts:
        out.add(part)
    out.findings.sort(key=Finding.sort_key)
    return out


def _work(runner: Runner, inputs: Inputs, span: tuple[int, int]) -> tuple[list[tuple], list[str], int, int]:
    """A span linted in a worker; findings go back as plain tuples (cheap to pickle)."""
    r = _lint_span(runner, inputs, span)
    return list(map(_encode, r.findings)), r.notes, r.documents, r.objects


_FINDING_FIELDS = Finding._fields
_OBJECT_AT = _FINDING_FIELDS.index("object")
_SHARED_AT = tuple(_FINDING_FIELDS.index(n) for n in ("rule", "severity", "remediation", "file"))
_finding_tuple = attrgetter(*_FINDING_FIELDS)


def _encode(f: Finding) -> tuple:
    t = list(_finding_tuple(f))
    ref = t[_OBJECT_AT]
    if ref is not None:
        t[_OBJECT_AT] = (ref.apiVersion, ref.kind, ref.namespace, ref.name)
    return tuple(t)


def _rebuild(rows: list[tuple], shared: dict) -> list[Finding]:
    """Findings from :func:`_work` rows; repeated strings (rule ids, remediations, files) and
    object identities are shared across the whole run."""
    out = []
    for row in rows:
        t = list(row)
        for i in _SHARED_AT:
            t[i] = shared.setdefault(t[i], t[i])
        ref = t[_OBJECT_AT]
        if ref is not None:
            found = shared.get(ref)
            if found is None:
                found = shared[ref] = ObjectRef(*ref)
            t[_OBJECT_AT] = found
        out.append(Finding(*t))
    return out
