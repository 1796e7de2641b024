"""The real corpus: every file read, no parse-error, every finding at its field."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.input.loader import load, locate, value_position
from kubelint_ml.input.objects import unpack

ROOT = Path(__file__).resolve().parent.parent
_PART = re.compile(r'\.?([^.\[\]"]+)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]')


def parse_path(text: str) -> tuple:
    out: list = []
    for m in _PART.finditer(text):
        if m.group(1) is not None:
            out.append(m.group(1))
        elif m.group(2) is not None:
            out.append(m.group(2).replace('\\"', '"').replace("\\\\", "\\"))
        else:
            out.append(int(m.group(3)))
    return tuple(out)


@cache
def _objects(file: str):
    data = Path(file).read_bytes()
    out = {}
    for doc in load(data).documents:
        for obj in unpack(doc, file).objects:
            out.setdefault((doc.index, obj.ref), []).append(obj)
    return out


@pytest.fixture(scope="module")
def corpus_run(corpus):
    runner = CliRunner()
    r = runner.invoke(main, ["check", str(corpus), "--format", "json", "--jobs", "1"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output[-2000:]
    return json.loads(r.output)


def test_every_file_read_without_parse_error(corpus_run):
    summary = corpus_run["summary"]
    assert summary["files"] == 384
    assert summary["documents"] >= 560
    assert [f for f in corpus_run["findings"] if f["rule"] == "parse-error"] == []


def test_every_finding_points_at_the_field_in_its_path(corpus_run):
    from kubelint_ml.findings import ObjectRef

    checked = 0
    for f in corpus_run["findings"]:
        assert f["line"] >= 1 and f["column"] >= 1 and f["message"] and f["remediation"]
        ref = ObjectRef(**f["object"])
        candidates = [o for (doc, r), objs in _objects(f["file"]).items() for o in objs if r == ref]
        assert candidates, f
        path = parse_path(f["path"])
        positions = set()
        for obj in candidates:
            for finder in (locate, value_position):
                line, col, found = finder(obj.root, obj.base + path)
                if found == obj.base + path:
                    positions.add((line, col))
        assert (f["line"], f["column"]) in positions, f
        checked += 1
    assert checked > 500


def test_findings_name_object_and_container(corpus_run):
    """The finding names its object (the reports show it), the short message its container,
    and the detail both, with the rationale the message leaves out."""
    for f in corpus_run["findings"]:
        obj = f["object"]
        assert obj["kind"] and obj["name"], f
        assert f"{obj['kind']}/{obj['name']}" not in f["message"], f
        assert obj["kind"] in f["detail"] or obj["name"] in f["detail"], f
        assert len(f["detail"]) > len(f["message"]), f
        if f.get("container"):
            assert f["container"] in f["message"] and f["container"] in f["detail"], f


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["<corpus>"], marks=pytest.mark.slow, id="corpus"),
        [str(ROOT / "fixtures" / "scenario"), "--config", str(ROOT / "fixtures" / "scenario" / "kubelint-ml.yaml")],
        [str(ROOT / "fixtures" / "kubelet"), "--config", str(ROOT / "fixtures" / "kubelet" / "kubelint-ml.yaml")],
    ],
)
def test_verbose_changes_the_notes_only(args, request):
    """Work a template leaves out when nobody reads its "skipped" notes never changes a finding."""
    if args == ["<corpus>"]:
        args = [str(request.getfixturevalue("corpus"))]
    runner = CliRunner()
    common = ["check", *args, "--format", "json", "--jobs", "1", "--enable", "gpu-node-unresolved"]  # -v turns it on
    quiet = runner.invoke(main, common, catch_exceptions=False)
    verbose = runner.invoke(main, common + ["-v"], catch_exceptions=False)
    assert quiet.exit_code == verbose.exit_code
    assert json.loads(quiet.stdout) == json.loads(verbose.stdout)
    assert json.loads(quiet.stdout)["findings"]
