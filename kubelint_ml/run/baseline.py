"""Baselines: record today's findings so that only new ones are reported.

A finding matches a baseline entry by `Finding.identity()` (rule, file,
object apiVersion/kind/namespace/name, field path) -- never by line, so
edits elsewhere in a file do not make old findings look new. Entries carry a
count: if the baseline has 2 findings of an identity and the run has 3, one
of the three is new (the last one in file order).

File format (JSON, written sorted so it diffs well)::

    {"version": 1, "tool": "kubelint-ml", "findings": [
      {"rule": "...", "file": "...", "apiVersion": "...", "kind": "...",
       "namespace": "...", "name": "...", "path": "...", "count": 1,
       "message": "..."}]}

`message` is for the reader only and is ignored when matching.
"""

from __future__ import annotations

import json
import os
from collections import Counter

from kubelint_ml.atomic import write_text_atomic
from kubelint_ml.findings import Finding

FORMAT_VERSION = 1
_IDENTITY_KEYS = ("rule", "file", "apiVersion", "kind", "namespace", "name", "path")

Identity = tuple[str, str, str, str, str, str, str]


class BaselineError(Exception):
    """A baseline file cannot be read or written."""


def _normalise_file(file: str) -> str:
    file = file.replace(os.sep, "/")
    while file.startswith("./"):
        file = file[2:]
    return file


def _identity(f: Finding) -> Identity:
    ident = list(f.identity())
    ident[1] = _normalise_file(ident[1])
    return tuple(ident)  # type: ignore[return-value]


class Baseline:
    """A multiset of finding identities."""

    def __init__(self, counts: Counter[Identity] | None = None) -> None:
        self.counts: Counter[Identity] = Counter(counts or {})

    @classmethod
    def from_findings(cls, findings: list[Finding]) -> Baseline:
        return cls(Counter(_identity(f) for f in findings))

    def __len__(self) -> int:
        return sum(self.counts.values())

    def filter(self, findings: list[Finding]) -> tuple[list[Finding], int]:
        """(findings not covered by the baseline, number that were covered)."""
        left = Counter(self.counts)
        new: list[Finding] = []
        matched = 0
        for f in sorted(findings, key=Finding.sort_key):
            key = _identity(f)
            if left[key] > 0:
                left[key] -= 1
                matched += 1
            else:
                new.append(f)
        order = {id(f): i for i, f in enumerate(findings)}
        new.sort(key=lambda f: order[id(f)])  # keep the caller's order
        return new, matched


def write_baseline(path: str, findings: list[Finding]) -> None:
    """Write `findings` as a baseline file (atomically)."""
    counts: Counter[Identity] = Counter()
    messages: dict[Identity, str] = {}
    for f in sorted(findings, key=Finding.sort_key):
        key = _identity(f)
        counts[key] += 1
        messages.setdefault(key, f.message)
    entries = []
    for key in sorted(counts):
        entry: dict[str, object] = dict(zip(_IDENTITY_KEYS, key))
        entry["count"] = counts[key]
        entry["message"] = messages[key]
        entries.append(entry)
    doc = {"version": FORMAT_VERSION, "tool": "kubelint-ml", "findings": entries}
    # ensure_ascii keeps any lone surrogate (from undecodable file names) exact.
    text = json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
    try:
        write_text_atomic(path, text, encoding="ascii")
    except OSError as exc:
        raise BaselineError(f"cannot write baseline {path}: {exc.strerror or exc}") from exc


def _entry(i: int, item: object, path: str) -> tuple[Identity, int]:
    where = f"{path}: findings[{i}]"
    if not isinstance(item, dict):
        raise BaselineError(f"{where} is not an object")
    values = []
    for key in _IDENTITY_KEYS:
        value = item.get(key, "")
        if not isinstance(value, str):
            raise BaselineError(f"{where}.{key} must be a string")
        values.append(value)
    if not values[0]:
        raise BaselineError(f"{where}.rule is missing")
    count = item.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BaselineError(f"{where}.count must be a positive integer")
    values[1] = _normalise_file(values[1])
    return tuple(values), count  # type: ignore[return-value]


def load_baseline(path: str) -> Baseline:
    """Read a baseline written by `write_baseline`."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise BaselineError(f"baseline file not found: {path}") from None
    except UnicodeDecodeError:
        raise BaselineError(f"{path}: baseline is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}:{exc.colno}: baseline is not valid JSON: {exc.msg}") from None
    except ValueError as exc:  # an integer longer than Python converts (4300 digits)
        raise BaselineError(f"{path}: invalid baseline: {str(exc).split(';')[0][:120]}") from None
    except RecursionError:
        raise BaselineError(f"{path}: baseline is nested too deeply") from None
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise BaselineError(f'{path}: not a kubelint-ml baseline (expected an object with a "findings" list)')
    version = doc.get("version")
    if version != FORMAT_VERSION:
        raise BaselineError(f"{path}: unsupported baseline version {repr(version)[:40]} (expected {FORMAT_VERSION})")
    counts: Counter[Identity] = Counter()
    for i, item in enumerate(doc["findings"]):
        key, count = _entry(i, item, path)
        counts[key] += count
    return Baseline(counts)
