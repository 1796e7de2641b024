"""A sequential run lints a file that holds context objects from the first pass's parse and objects:
each document is unpacked once, and the findings are those of a run that reads the file again."""

from __future__ import annotations

from pathlib import Path

import pytest

import kubelint_ml.run.lint as lint
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.input import objects
from kubelint_ml.report import render
from kubelint_ml.run import facts, runner
from kubelint_ml.run.config import Config
from kubelint_ml.run.inputs import RunInputs

TEAM = """\
apiVersion: v1
kind: Namespace
metadata:
  name: team
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
  namespace: team
spec:
  replicas: 1
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
        - name: main
          image: example/trainer:1
          resources:
            limits:
              nvidia.com/gpu: 1
"""

OTHER = """\
apiVersion: v1
kind: Pod
metadata:
  name: solo
spec:
  containers:
    - name: main
      image: example/solo:1
"""


def _run(path: Path):
    return lint.run([str(path)], RunInputs(Config(), load_builtin_rules(), jobs=1))


def test_a_context_file_is_unpacked_once_and_linted_as_when_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "team.yaml").write_text(TEAM)
    (tmp_path / "other.yaml").write_text(OTHER)
    calls: list[tuple[str, int]] = []
    real = objects.unpack

    def counting(doc, file):
        calls.append((Path(file).name, doc.index))
        return real(doc, file)

    monkeypatch.setattr(facts, "unpack", counting)
    monkeypatch.setattr(runner, "unpack", counting)
    reused, _ = _run(tmp_path)
    # The Namespace's file is unpacked by the first pass only; the other file by the lint.
    assert sorted(calls) == [("other.yaml", 0), ("team.yaml", 0), ("team.yaml", 1)]
    found = {(Path(f.file).name, f.rule, f.line, f.column) for f in reused.findings}
    assert ("team.yaml", "besteffort-qos", 18, 5) in found
    assert ("team.yaml", "missing-memory-limit", 23, 13) in found
    assert ("other.yaml", "besteffort-qos", 5, 1) in found

    # Nothing kept from the first pass: the file is parsed and unpacked again, with the same findings.
    monkeypatch.setattr(facts, "MAX_PARSED_BYTES", 0)
    again, _ = _run(tmp_path)
    assert render("json", again) == render("json", reused)
