"""Seldon Core v1 (``machinelearning.seldon.io/v1`` SeldonDeployment; SeldonIO/seldon-core 1.x,
``operator/apis/machinelearning.seldon.io/v1``): each ``predictors[].componentSpecs[]`` is a
pod template."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.input.kinds.base import KindInfo, TemplateSpot, integer, text
from kubelint_ml.input.objects import dig


def _seldon(obj: dict) -> Iterator[TemplateSpot]:
    default = integer(dig(obj, "spec", "replicas"), 1)
    predictors = dig(obj, "spec", "predictors")
    if not isinstance(predictors, list):
        return
    for i, p in enumerate(predictors):
        if not isinstance(p, dict) or not isinstance(p.get("componentSpecs"), list):
            continue
        name = text(p.get("name"), f"predictors[{i}]")
        for j, cs in enumerate(p["componentSpecs"]):
            if isinstance(cs, dict):
                replicas = integer(cs.get("replicas"), integer(p.get("replicas"), default))
                yield ("spec", "predictors", i, "componentSpecs", j), f"{name}[{j}]", replicas


KINDS: dict[tuple[str, str], KindInfo] = {
    ("machinelearning.seldon.io", "SeldonDeployment"): KindInfo(_seldon, False),
}
