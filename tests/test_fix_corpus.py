"""Every corpus file through ``check --fix --unsafe-fixes`` in a temporary copy, and ``--diff``."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_fix import assert_line_local

from kubelint_ml.cli import main
from kubelint_ml.input.loader import load

pytestmark = pytest.mark.slow

# Keys a fix may add, and keys whose scalar value a fix may change.
ADDED = {
    "resources",
    "limits",
    "requests",
    "memory",
    "ephemeral-storage",
    "sizeLimit",
    "volumes",
    "volumeMounts",
    "priorityClassName",
    "restartPolicy",
    "podFailurePolicy",
    "rules",
    "emptyDir",
    "nvidia.com/gpu",
    "amd.com/gpu",
    "google.com/tpu",
}
CHANGED = {"memory", "ephemeral-storage", "sizeLimit", "restartPolicy", "cpu"}
LISTS = {"volumes", "volumeMounts", "rules"}


def compare(old, new, path: tuple, out: list) -> None:
    """Differences outside the fields fixes edit, into ``out``."""
    key = next((p for p in reversed(path) if isinstance(p, str)), None)
    if isinstance(old, dict) and isinstance(new, dict):
        for k in old:
            if k not in new:
                out.append(("removed", path + (k,)))
            else:
                compare(old[k], new[k], path + (k,), out)
        for k in new:
            if k not in old and k not in ADDED:
                out.append(("added", path + (k,)))
    elif isinstance(old, list) and isinstance(new, list):
        if len(new) != len(old) and key not in LISTS:
            out.append(("list", path))
            return
        extra = len(new) - len(old)
        if extra < 0:
            out.append(("shorter", path))
            return
        start = extra if extra and new[extra:] == old[: len(new) - extra] and key == "rules" else 0
        for i, item in enumerate(old):
            compare(item, new[start + i], path + (i,), out)
    elif old != new:
        if old is None and key in ADDED:
            return
        if key not in CHANGED and not (isinstance(path[-1], str) and path[-1] in ADDED and old is None):
            out.append(("changed", path, old, new))


def findings(root: Path) -> list[dict]:
    r = CliRunner().invoke(main, ["check", "-j1", "--format", "json", "--unsafe-fixes", str(root)])
    return json.loads(r.output)["findings"]


def ident(f: dict, root: Path) -> tuple:
    obj = f["object"] or {}
    return (
        f["rule"],
        Path(f["file"]).relative_to(root).as_posix(),
        obj.get("kind"),
        obj.get("name"),
        f.get("container"),
    )


def test_corpus_fix_unsafe(tmp_path: Path, corpus: Path) -> None:
    CORPUS = corpus
    root = tmp_path / "c"
    shutil.copytree(CORPUS, root)
    before_findings = findings(root)
    r = CliRunner().invoke(main, ["check", "-j1", "--fix", "--unsafe-fixes", str(root)])
    assert r.exit_code in (0, 1), r.output
    changed = 0
    for path in sorted(CORPUS.rglob("*")):
        if not path.is_file():
            continue
        old = path.read_bytes()
        new = (root / path.relative_to(CORPUS)).read_bytes()
        if old == new:
            continue
        changed += 1
        before, after = load(old), load(new)
        assert not after.problems, path
        assert len(before.documents) == len(after.documents), path
        diffs: list = []
        for a, b in zip(before.documents, after.documents):
            compare(a.data, b.data, (), diffs)
        assert not diffs, (path, diffs[:5])
        assert_line_local(old, new)
    assert changed >= 30
    # A second run changes nothing.
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    CliRunner().invoke(main, ["check", "-j1", "--fix", "--unsafe-fixes", str(root)])
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot
    # The re-lint: nothing a fix should have removed, nothing new.
    after_findings = findings(root)
    left = Counter(ident(f, root) for f in after_findings)
    was = Counter(ident(f, root) for f in before_findings)
    assert not (left - was), sorted(left - was)[:5]
    fixed = [f for f in before_findings if "edits" in (f.get("fix") or {})]
    assert len(fixed) >= 100
    gone = Counter(ident(f, root) for f in fixed)
    remaining = [k for k, n in gone.items() if left[k] > was[k] - n]
    assert not remaining, remaining[:5]


def test_corpus_diff_writes_nothing(tmp_path: Path, corpus: Path) -> None:
    CORPUS = corpus
    root = tmp_path / "c"
    shutil.copytree(CORPUS, root)
    r = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", str(root)])
    assert r.exit_code == 1
    assert r.stdout.count("\n+++ b/") + r.stdout.startswith("+++ b/") >= 30
    for path in CORPUS.rglob("*"):
        if path.is_file():
            assert (root / path.relative_to(CORPUS)).read_bytes() == path.read_bytes(), path
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == sorted(
        p.relative_to(CORPUS) for p in CORPUS.rglob("*")
    )


def test_corpus_fix_parallel_equals_sequential(tmp_path: Path, corpus: Path) -> None:
    CORPUS = corpus
    outputs = {}
    for jobs in ("1", "2"):
        root = tmp_path / f"j{jobs}"
        shutil.copytree(CORPUS, root)
        r = CliRunner().invoke(main, ["check", "-j", jobs, "--fix", "--unsafe-fixes", "--format", "json", str(root)])
        text = r.stdout.replace(str(root), "ROOT")
        files = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
        outputs[jobs] = (text, files)
    assert outputs["1"] == outputs["2"]
    assert '"fix"' not in outputs["1"][0]  # every fix there was got applied
    assert sum(data != (CORPUS / rel).read_bytes() for rel, data in outputs["1"][1].items()) >= 30
