"""Same inputs, byte-identical output: whatever the order, --jobs, hash seed or company."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine.context import may_hold_context

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "fixtures" / "hostile"


def corpus_files(corpus: Path) -> list[str]:
    return sorted(
        os.path.relpath(p, ROOT) for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
    )


def cli(args: list[str], *, seed: str = "0") -> bytes:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed, "NO_COLOR": "1"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", *args], cwd=ROOT, env=env, capture_output=True, timeout=300
    )
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return proc.stdout


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_order_jobs_and_hash_seed_do_not_change_the_output(corpus, fmt: str) -> None:
    files = corpus_files(corpus) + [os.path.relpath(p, ROOT) for p in sorted(HOSTILE.iterdir())]
    shuffled = files[:]
    random.Random(7).shuffle(shuffled)
    reference = cli(["--format", fmt, "-j1", *files])
    assert len(files) > 48  # enough for the parallel path
    if fmt == "json":  # something to compare: findings from the corpus and a parse error per hostile file
        found = json.loads(reference)["findings"]
        assert len(found) > 1000 and any(f["rule"] == "parse-error" for f in found)
    assert cli(["--format", fmt, "-j1", *reversed(files)], seed="1") == reference
    assert cli(["--format", fmt, "-j2", *shuffled], seed="2") == reference
    # Directories instead of files: the same set, found by the walk.
    assert (
        cli(["--format", fmt, "-j3", os.path.relpath(HOSTILE, ROOT), os.path.relpath(corpus, ROOT)], seed="3")
        == reference
    )


def findings_by_file(args: list[str]) -> dict[str, list[dict]]:
    r = CliRunner().invoke(main, ["check", "--format", "json", "-j1", *args])
    assert r.exit_code in (0, 1), r.output
    out: dict[str, list[dict]] = {}
    for f in json.loads(r.output)["findings"]:
        out.setdefault(f["file"], []).append(f)
    return out


def test_a_file_gets_the_same_findings_alone_or_with_every_other_file(corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    files = corpus_files(corpus)
    # Context objects (PriorityClasses, KubeletConfigurations) inform the other
    # files by design: they go in every run.
    context = [f for f in files if may_hold_context(Path(f).read_bytes())]
    together = findings_by_file(files)
    sample = random.Random(3).sample([f for f in files if f not in context], 40)
    assert sum(1 for f in sample if together.get(f)) > 20  # most sampled files have findings to compare
    for f in sample:
        alone = findings_by_file([f, *context])
        assert alone.get(f, []) == together.get(f, []), f


def test_hostile_neighbours_do_not_change_a_files_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    good = os.path.relpath(HOSTILE / "good.yaml", ROOT)
    alone = findings_by_file([good])[good]
    assert alone
    with_hostile = findings_by_file([os.path.relpath(HOSTILE, ROOT)])[good]
    assert with_hostile == alone
