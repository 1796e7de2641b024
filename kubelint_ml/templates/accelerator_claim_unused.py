"""A pod's DRA claim whose devices are accelerators that no container lists in ``resources.claims``.

The scheduler allocates every entry of ``spec.resourceClaims`` before the pod binds and the kubelet has
the driver prepare it, but a container gets a claim's devices only when it lists the claim (or one of its
requests) in ``resources.claims``: the kubelet's DRA manager collects a container's CDI devices from the
claims that container names (``GetResources`` in pkg/kubelet/cm/dra/manager.go). A GPU claim that no
container lists is held by the pod, kept from every other pod, and used by none of its containers.
Devices a driver gives the whole pod (a NIC moved into the pod's network namespace, DRANET) are not
accelerators, and are not judged."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit, template_devices
from kubelint_ml.fix import UNSAFE, Fix, append, put

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    if not tpl.spec.get("resourceClaims"):
        return None
    devices = template_devices(tpl)
    if devices is None or not any(ref.accelerators for ref in devices.claims):
        return None
    entries = tpl.spec["resourceClaims"]
    listed: set[str] = set()
    for c in tpl.all_containers:
        claims = c.resources.get("claims")
        for claim in claims if isinstance(claims, list) else ():
            if isinstance(claim, dict) and isinstance(claim.get("name"), str):
                listed.add(claim["name"])
    hits: list[Hit] = []
    for ref in devices.claims:
        if not ref.accelerators or not isinstance(entries, list) or len(ref.path) < 2:
            continue
        index = ref.path[1]
        entry = entries[index] if isinstance(index, int) and index < len(entries) else None
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or name in listed:
            continue
        hits.append(
            Hit(
                tpl.spec_path + ("resourceClaims", index, "name"),
                f"claim '{name}' holds accelerators ({ref.kind} '{ref.name}') but no container lists it in "
                "resources.claims",
                detail=(
                    f"{tpl.describe()}: spec.resourceClaims names claim '{name}' ({ref.kind} '{ref.name}'), whose "
                    "devices are accelerators, but no container lists it in resources.claims. The scheduler "
                    "allocates it and the pod holds its devices, kept from every other pod, but the kubelet "
                    "gives a container only the devices of the claims it lists, so no container can use them. "
                    f"List it in the resources.claims of the container that needs them (- name: {name}), or "
                    "remove the claim"
                ),
                at_value=True,
                fix=_fix(tpl, name),
            )
        )
    return hits or None


def _fix(tpl, name: str) -> Fix | None:
    """Lists the claim in the one regular container's ``resources.claims``; none when the pod has several
    (which one needs the devices is not known)."""
    if len(tpl.containers) != 1:
        return None
    c = tpl.containers[0]
    claims = c.resources.get("claims")
    where = c.path + ("resources", "claims")
    if isinstance(claims, list):
        change = append(where, {"name": name})
    elif "claims" in c.resources:
        return None  # (not a list: the schema's to say)
    else:
        change = put(where, [{"name": name}])
    return Fix(
        f"list claim '{name}' in {c.describe()}'s resources.claims",
        UNSAFE,
        "the pod's only container",
        (change,),
    )
