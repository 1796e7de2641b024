"""A pod's DRA claim that names a ResourceClaimTemplate or ResourceClaim found nowhere."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit, template_devices

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    devices = template_devices(tpl)
    if devices is None or all(c.found for c in devices.claims):
        return None
    dra = getattr(getattr(ctx, "facts", None), "dra", None)
    # Sure when the claims are shipped with the pod (its file defines some) or given with --context;
    # otherwise the cluster may hold it.
    known = dra is not None and (dra.from_context or unit.obj.file in dra.files)
    hits = []
    for claim in devices.claims:
        if claim.found:
            continue
        where = "among the inputs or --context"
        consequence = (
            "the scheduler waits for it and the pod stays Pending"
            if claim.kind == "ResourceClaim"
            else "the ResourceClaim controller cannot create the pod's claim, so the pod stays Pending"
        )
        hits.append(
            Hit(
                tpl.spec_path + claim.path,
                f"{claim.kind} '{claim.name}' is not defined {where}",
                detail=(
                    f"{tpl.describe()}: spec.resourceClaims names {claim.kind} '{claim.name}', which is not "
                    f"defined {where}: {consequence}. Define it in the linted files (or pass the file defining "
                    f"it with --context), or correct the name"
                    + (
                        ""
                        if known
                        else " (neither this file nor --context defines claims, so it may exist in the cluster)"
                    )
                ),
                severity=None if known else "warning",
                at_value=True,
            )
        )
    return hits
