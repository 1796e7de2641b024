"""CustomResourceDefinitions are read by the first pass only for --schema, the one thing that uses them: a
repository's CRD bundles (most of its bytes in KServe or OME) are not parsed twice on a plain check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.input.loader import LoadResult
from kubelint_ml.input.sources import collect
from kubelint_ml.run import facts
from kubelint_ml.run.config import Config

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.ex.com}
spec:
  group: ex.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              n: {type: integer}
"""
WIDGET = "apiVersion: ex.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  n: big\n"
PRIORITY = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"


@pytest.mark.parametrize("jobs", [1, 2])
def test_first_pass_reads_crds_only_when_asked(tmp_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts, "PARALLEL_SCAN_MIN_FILES", 2)  # the forked scan on two files
    (tmp_path / "crd.yaml").write_text(CRD)
    (tmp_path / "both.yaml").write_text(CRD + PRIORITY)
    sources = collect([str(tmp_path)])
    parsed: dict[int, LoadResult] = {}
    found, _, _ = facts.first_pass(sources, Config(), None, jobs=jobs, parsed=parsed, crds=False)
    assert found.crds == [] and "high" in found.priority_classes
    # The file with nothing but a CRD is not parsed; the one with a PriorityClass is (kept for the lint).
    assert sorted(Path(sources[i].path).name for i in parsed) == ([] if jobs > 1 else ["both.yaml"])
    found, _, _ = facts.first_pass(sources, Config(), None, jobs=jobs, crds=True)
    assert [c["metadata"]["name"] for c in found.crds] == ["widgets.ex.com", "widgets.ex.com"]


def test_a_crd_among_the_inputs_still_validates_its_resources_with_schema(tmp_path: Path) -> None:
    (tmp_path / "crd.yaml").write_text(CRD)
    (tmp_path / "widget.yaml").write_text(WIDGET)
    r = CliRunner().invoke(main, ["check", str(tmp_path), "--schema", "-f", "json"])
    found = [(Path(f["file"]).name, f["rule"], f["line"]) for f in json.loads(r.stdout)["findings"]]
    assert found == [("widget.yaml", "schema-invalid", 5)], r.output
    r = CliRunner().invoke(main, ["check", str(tmp_path), "-f", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["findings"] == []
