"""Quantities that parse but are almost surely typos."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.quantity import parse_quantity, rational_lt
from kubelint_ml.templates._common import param_fraction, quantity_fields, raw_text, show

UNIT = "podTemplate"
DEFAULTS = {"minBytes": "1Mi", "maxCpu": 1000, "byteResources": ["memory", "ephemeral-storage", "sizeLimit"]}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "minBytes": {"type": "string"},
        "maxCpu": {"type": "number", "exclusiveMinimum": 0},
        "byteResources": {"type": "array", "items": {"type": "string"}},
    },
}


@lru_cache(maxsize=16)
def _bounds(min_bytes: Any, max_cpu: Any, byte_resources: tuple) -> tuple[Fraction, Fraction, frozenset]:
    """(minBytes, maxCpu, byteResources) of the rule's parameters, read once per parameter set."""
    return parse_quantity(min_bytes).value, param_fraction(max_cpu), frozenset(byte_resources)


def check(unit: Unit, params: dict, ctx) -> list[Hit]:
    out: list[Hit] = []
    tpl = unit.tpl
    min_bytes, max_cpu, byte_resources = _bounds(params["minBytes"], params["maxCpu"], tuple(params["byteResources"]))
    for f in quantity_fields(tpl):
        if not f.empty and (f.parsed is None or f.parsed.value.numerator <= 0):  # (the sign of a Fraction)
            continue
        label = f"{f.part}.{f.resource}" if f.part != "sizeLimit" else "sizeLimit"
        container = f.container.name if f.container else None
        if f.empty:
            out.append(
                Hit(
                    f.path,
                    f"{f.where} {label} is empty (read as 0)",
                    detail=f"{tpl.describe()}: {f.where} {label} has no value; Kubernetes reads an empty "
                    f"quantity as 0, so this asks for no {f.resource}. Write the number, or remove the key",
                    container=container,
                )
            )
            continue
        value = f.parsed.value
        if f.resource in byte_resources and rational_lt(value, min_bytes):
            hint = short = ""
            if isinstance(f.raw, str) and f.raw.strip().endswith("m"):
                hint = f"; 'm' means milli ({show(f.resource, value)}), did you mean {f.raw.strip()[:-1]}Mi?"
                short = f" ('m' is milli: {f.raw.strip()[:-1]}Mi?)"
            elif not isinstance(f.raw, str) or f.raw.strip().isdigit():
                hint = f"; a bare number is bytes, did you mean {f.raw}Mi or {f.raw}Gi?"
                short = f" ({f.raw}Mi?)"
            out.append(
                Hit(
                    f.path,
                    f"{f.where} {label} {raw_text(f.raw)} is only {show(f.resource, value)}{short}",
                    detail=f"{tpl.describe()}: {f.where} {label} {raw_text(f.raw)} is only {show(f.resource, value)}{hint}",
                    container=container,
                    at_value=True,
                )
            )
        elif f.resource == "cpu" and rational_lt(max_cpu, value):
            out.append(
                Hit(
                    f.path,
                    f"{f.where} {label} {raw_text(f.raw)} is {show('cpu', value)} cores; did you mean {f.raw}m?",
                    detail=f"{tpl.describe()}: {f.where} {label} {raw_text(f.raw)} is {show('cpu', value)} "
                    f"cores, more than any node has; did you mean {f.raw}m?",
                    container=container,
                    at_value=True,
                )
            )
    return out
