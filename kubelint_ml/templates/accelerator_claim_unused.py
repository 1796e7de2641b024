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
    whole: set[str] = set()  # claims some container lists whole
    requests: dict[str, set[str]] = {}  # claim -> the requests of it containers list
    for c in tpl.all_containers:
        claims = c.resources.get("claims")
        for claim in claims if isinstance(claims, list) else ():
            if isinstance(claim, dict) and isinstance(claim.get("name"), str):
                request = claim.get("request")
                if isinstance(request, str) and request:
                    requests.setdefault(claim["name"], set()).add(request)
                else:
                    whole.add(claim["name"])
    hits: list[Hit] = []
    for ref in devices.claims:
        if not ref.accelerators or not isinstance(entries, list) or len(ref.path) < 2:
            continue
        index = ref.path[1]
        entry = entries[index] if isinstance(index, int) and index < len(entries) else None
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or name in whole:
            continue
        at = tpl.spec_path + ("resourceClaims", index, "name")
        listed = requests.get(name)
        if not listed:
            hits.append(
                Hit(
                    at,
                    f"claim '{name}' holds accelerators ({ref.kind} '{ref.name}') but no container lists it in "
                    "resources.claims",
                    detail=(
                        f"{tpl.describe()}: spec.resourceClaims names claim '{name}' ({ref.kind} '{ref.name}'), "
                        "whose devices are accelerators, but no container lists it in resources.claims. "
                        + _WHY
                        + f" List it in the resources.claims of the container that needs them (- name: {name}), "
                        "or remove the claim"
                    ),
                    at_value=True,
                    fix=_fix(tpl, name, None),
                )
            )
            continue
        if ref.requests is None or not listed <= ref.requests:
            # a container names a request the claim lacks (a firstAvailable alternative, a typo): what it
            # meant is unknown-resource-claim's to say (and its fix's to write)
            continue
        for request in ref.accelerator_requests:
            if request in listed:
                continue
            hits.append(
                Hit(
                    at,
                    f"request '{request}' of claim '{name}' holds accelerators ({ref.kind} '{ref.name}') but no "
                    "container lists it",
                    detail=(
                        f"{tpl.describe()}: the containers list claim '{name}' by its requests "
                        f"({', '.join(sorted(listed))}), not by request '{request}', whose devices are accelerators. "
                        + _WHY
                        + f" List it (- name: {name}, request: {request}) in the container that needs them, or "
                        f"remove the request from {ref.kind} '{ref.name}'"
                    ),
                    at_value=True,
                    fix=_fix(tpl, name, request),
                )
            )
    return hits or None


_WHY = (
    "The scheduler allocates every claim and request of the pod and the pod holds the devices, kept from "
    "every other pod, but the kubelet gives a container only the devices of the claims (or requests) it "
    "lists, so no container can use them."
)


def _fix(tpl, name: str, request: str | None) -> Fix | None:
    """Lists the claim (or its ``request``) in the one regular container's ``resources.claims``; none when
    the pod has several (which one needs the devices is not known)."""
    if len(tpl.containers) != 1:
        return None
    c = tpl.containers[0]
    claims = c.resources.get("claims")
    where = c.path + ("resources", "claims")
    item = {"name": name} if request is None else {"name": name, "request": request}
    if isinstance(claims, list):
        change = append(where, item)
    elif "claims" in c.resources:
        return None  # (not a list: the schema's to say)
    else:
        change = put(where, [item])
    what = f"claim '{name}'" if request is None else f"request '{request}' of claim '{name}'"
    return Fix(f"list {what} in {c.describe()}'s resources.claims", UNSAFE, "the pod's only container", (change,))
