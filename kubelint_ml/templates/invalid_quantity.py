"""Resource quantities Kubernetes would not accept."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.resources import DRA_EXTENDED_PREFIX, is_extended_resource
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._common import quantity_fields, raw_text

UNIT = "podTemplate"
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> list[Hit]:
    out: list[Hit] = []
    tpl = unit.tpl
    for f in quantity_fields(tpl):
        if f.placeholder or f.empty:
            continue
        if (
            f.error is None
            and f.parsed.value.numerator >= 0  # (the sign of a Fraction)
            and (
                f.part == "sizeLimit"
                or not (is_extended_resource(f.resource) or f.resource.startswith(DRA_EXTENDED_PREFIX))
                or f.parsed.is_integer()
            )
        ):
            continue  # a valid quantity (most are): nothing to say
        label = f"{f.part}.{f.resource}" if f.part != "sizeLimit" else "sizeLimit"
        container = f.container.name if f.container else None
        if f.error is not None:
            hint = ""
            meant = _fixes.binary_case(f.raw)
            if meant is not None:
                hint = f" (did you mean {meant}?)"
            elif isinstance(f.raw, str):
                low = f.raw.strip()
                if low.endswith(("GB", "Gb", "gb")):
                    hint = f" (write {low[:-2]}G for 10^9 bytes or {low[:-2]}Gi for 2^30)"
                elif low.endswith(("MB", "Mb", "mb")):
                    hint = f" (write {low[:-2]}M or {low[:-2]}Mi)"
                elif low.endswith(("KB", "Kb", "kb", "K")):
                    hint = f" (write {low.rstrip('BbK').rstrip('k')}k or {low.rstrip('BbK').rstrip('k')}Ki)"
            out.append(
                Hit(
                    f.path,
                    f"{f.where} {label} {raw_text(f.raw)} is not a valid quantity{hint}",
                    detail=f"{tpl.describe()}: {f.where} {label} {raw_text(f.raw)} is not a valid quantity: "
                    f"{f.error}{hint}",
                    container=container,
                    at_value=True,
                    fix=_fixes.decimal_suffix(f.path, f.raw),
                )
            )
        elif f.parsed.value < 0:
            out.append(
                Hit(
                    f.path,
                    f"{f.where} {label} {raw_text(f.raw)} is negative",
                    detail=f"{tpl.describe()}: {f.where} {label} {raw_text(f.raw)} is negative; quantities must be >= 0",
                    container=container,
                    at_value=True,
                )
            )
        elif f.resource.startswith(DRA_EXTENDED_PREFIX):
            # The name contains kubernetes.io/, so the API server does not hold it to whole numbers (only
            # IsExtendedResourceName's names are); the scheduler asks a container's DRA extended resource as
            # ExactCount devices of its quantity as a whole number, and none when it is not one
            # (createResourceRequestAndMappings: Quantity.AsInt64).
            out.append(
                Hit(
                    f.path,
                    f"{f.where} {label} {raw_text(f.raw)} is not a whole number: the container gets no device",
                    detail=f"{tpl.describe()}: {f.where} {label} {raw_text(f.raw)} is not a whole number. The API "
                    "server accepts it (a name under kubernetes.io/ is not held to whole numbers), but the scheduler "
                    "asks for a container's DRA extended resource as whole devices of the class and makes no "
                    f"request for a quantity that is not one, so {f.where} gets none. Ask for whole devices (1), or "
                    "for part of a GPU through a claim (a MIG device, or capacity of a shared device)",
                    container=container,
                    at_value=True,
                )
            )
        else:  # an extended resource that is not a whole number
            out.append(
                Hit(
                    f.path,
                    f"{f.where} {label} {raw_text(f.raw)} is not a whole number",
                    detail=f"{tpl.describe()}: {f.where} {label} {raw_text(f.raw)} is not a whole number; "
                    f"extended resources such as {f.resource} are counted in whole devices",
                    container=container,
                    at_value=True,
                )
            )
    return out
