"""A file longer than the node limit in bytes (a CRD bundle, a release's install.yaml) is built from
LibYAML's events as a short one is, with the same values and positions as the composing loader; one
with more nodes than the limit is still refused, at the node past it."""

from __future__ import annotations

from typing import Any

import pytest

from kubelint_ml.input import loader
from kubelint_ml.input.loader import Limits, load

LIMITS = Limits(max_nodes=2000)
POD = (
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  annotations:\n    note: '{text}'\n"
    "spec:\n  containers:\n  - name: c\n    image: busybox\n    resources:\n      limits: {{memory: 1Gi}}\n"
)


def _positions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (value.lc[k], _positions(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_positions(v) for v in value]
    return value


def test_a_long_file_of_few_nodes_is_built_from_events(monkeypatch: pytest.MonkeyPatch) -> None:
    data = "".join(POD.format(i=i, text="x" * 400) for i in range(20)).encode()
    assert len(data) > LIMITS.max_nodes
    composed = loader._load(data, LIMITS, loader.PositionLoader, False)
    # The composing loader is not reached: the events gave every document.
    monkeypatch.setattr(loader, "_load", lambda *a: pytest.fail("composed"))
    fast = load(data, LIMITS)
    assert fast.problems == [] and len(fast.documents) == 20
    assert [d.line for d in fast.documents] == [d.line for d in composed.documents]
    assert [_positions(d.data) for d in fast.documents] == [_positions(d.data) for d in composed.documents]
    assert fast.documents[19].data.lc["spec"] == (255, 1, 256, 3)


def test_a_file_over_the_node_limit_is_still_refused() -> None:
    data = "".join(POD.format(i=i, text="x") for i in range(200)).encode()
    [problem] = load(data, LIMITS).problems
    assert problem.message == "more than 2000 YAML nodes in one file (limits.maxNodes); not linted"
    assert (problem.line, problem.document) == (930, 71)
