"""A pod's DRA claim that names a ResourceClaimTemplate or ResourceClaim found nowhere; what the API
server rejects of the names (``validatePodResourceClaim``: an entry of ``spec.resourceClaims`` without a
name, with one that is not a DNS label or is an earlier entry's, naming both sources or neither, or a
source that is not a DNS subdomain (``ValidateResourceClaimName``, ``ValidateResourceClaimTemplateName``); ``validateResourceClaimNames``: a
container's claim that names no entry of ``spec.resourceClaims``, or one listed twice); claims and
DRA extended resources that the profile's Kubernetes version does not serve (``dropDisabledDynamicResourceAllocationFields``, the
DynamicResourceAllocation and DRAExtendedResource gates: kubelint_ml/k8s/dra.py)."""

from __future__ import annotations

from collections.abc import Mapping

from kubelint_ml.engine.api import Hit, Unit, template_devices
from kubelint_ml.fix import UNSAFE, Fix, put
from kubelint_ml.input.workloads import ContainerView, PodTemplate
from kubelint_ml.k8s.dra import DRA_EXTENDED_PREFIX, ClaimRef, PodDevices
from kubelint_ml.k8s.quantity import is_placeholder
from kubelint_ml.k8s.resources import is_dns1123_label, is_dns1123_subdomain

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    devices = template_devices(tpl)
    if (
        devices is None
        and not tpl.spec.get("resourceClaims")
        and not any(c.resources.get("claims") for c in tpl.all_containers)
    ):
        return None  # no claim and no name a DeviceClass serves: nothing to find (the usual pod)
    if devices is not None and (devices.dropped or devices.extended_off):
        version = getattr(getattr(ctx, "profile", None), "kubernetes_version", None)
        hits = _not_served(tpl, devices, version, getattr(getattr(ctx, "profile", None), "feature_gates", None) or {})
        if devices.dropped:
            return hits  # the API server drops the claims before it validates them
    else:
        hits = []
    sources, invalid = _claim_sources(tpl)
    hits += sources + _container_claims(tpl)
    dra = getattr(getattr(ctx, "facts", None), "dra", None)
    if (
        devices is not None
        and devices.missing_classes
        and dra is not None
        and (dra.classes_from_context or unit.obj.file in dra.class_files)
    ):
        # The DeviceClasses given describe the cluster: --context, or the pod's own file (a driver's chart
        # beside its pods); classes of other inputs are other clusters' as much as this one's.
        hits += _missing_classes(tpl, devices, dra)
    cluster = getattr(getattr(ctx, "facts", None), "cluster", None)
    if devices is not None and dra is not None and cluster is not None and cluster.namespaces and not dra.stored:
        hits += _admin_namespaces(tpl, devices, dra, cluster.namespaces, unit.obj.file)
    if devices is not None and any(c.requests is not None for c in devices.claims):
        hits += _unknown_requests(tpl, devices, dra is not None and (dra.from_context or unit.obj.file in dra.files))
    if devices is None or all(c.found for c in devices.claims):
        return hits or None
    # Sure when the claims are shipped with the pod (its file defines some) or given with --context;
    # otherwise the cluster may hold it.
    known = dra is not None and (dra.from_context or unit.obj.file in dra.files)
    for claim in devices.claims:
        if claim.found or claim.path[1] in invalid:
            continue  # (an entry naming both sources, or neither, is rejected as such: one finding)
        if claim.rejected is not None:
            hits.append(_rejected(tpl, claim))
            continue
        where = "among the inputs or --context"
        elsewhere = _other_namespaces(dra, claim.kind, claim.name, tpl.obj.ref.namespace)
        if elsewhere:  # a pod's claims are looked up in its own namespace only
            where = f"in namespace {tpl.obj.ref.namespace} (only in {elsewhere})"
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


def _missing_classes(tpl: PodTemplate, devices: PodDevices, dra) -> list[Hit]:
    """A claim's request names a DeviceClass that the inputs and context do not define, but one they do
    define is spelt almost the same: the scheduler's DRA plugin cannot allocate a claim of a class that does
    not exist ("device class ... does not exist"), so the pod stays Pending. A warning, said where --context
    or the pod's own file defines DeviceClasses; a name like none of them is a class the cluster may have
    from elsewhere (a driver's chart), said under --verbose only."""
    from difflib import get_close_matches

    hits = []
    for claim, cls in devices.missing_classes:
        close = get_close_matches(cls, sorted(dra.classes), n=1, cutoff=0.8)
        if not close:
            continue
        hits.append(
            Hit(
                tpl.spec_path + claim.path,
                f"DeviceClass '{cls}' of {claim.kind} '{claim.name}' is not defined (did you mean '{close[0]}'?)",
                detail=(
                    f"{tpl.describe()}: {claim.kind} '{claim.name}' asks for devices of DeviceClass '{cls}', which "
                    f"is not defined among the inputs or --context, though '{close[0]}' is: unless the cluster has "
                    f"'{cls}', the scheduler cannot allocate the claim and the pod stays Pending. Correct the class "
                    "name, or pass the file defining it with --context"
                ),
                severity="warning",
                at_value=True,
            )
        )
    return hits


def _rejected(tpl: PodTemplate, claim) -> Hit:
    """A claim whose template or claim the API server rejects (``validateDeviceRequest``), or does not
    serve in the version it is written in: it is never created, so the pod's claim is never made or
    allocated."""
    made = "" if claim.kind == "ResourceClaim" else ", the pod's claim is never made"
    unserved = claim.rejected.startswith("no matches")
    return Hit(
        tpl.spec_path + claim.path,
        f"{claim.kind} '{claim.name}' is rejected by the API server: {claim.rejected}",
        detail=(
            f"{tpl.describe()}: spec.resourceClaims names {claim.kind} '{claim.name}', which the API server "
            f"rejects ({claim.rejected}{'' if unserved else '; validateDeviceRequest'}): it is never created{made}, "
            "and the pod stays Pending. "
            + (
                f"Write the {claim.kind} in a version the cluster serves (resource.k8s.io/v1: the device "
                "fields under `exactly`)"
                if unserved
                else f"Correct the {claim.kind}'s spec"
            )
        ),
        at_value=True,
    )


def _other_namespaces(dra, kind: str, name: str, namespace: str) -> str:
    """The namespaces other than the pod's that define the missing template or claim ("ml, train"), or ""."""
    if dra is None or not namespace:
        return ""
    table = dra.templates if kind == "ResourceClaimTemplate" else dra.claims
    return ", ".join(sorted({ns for ns, _ in table.get(name, ()) if ns and ns != namespace}))


LISTED_NAMES = 20  # of spec.resourceClaims, said in a finding's detail


def _container_claims(tpl: PodTemplate) -> list[Hit]:
    """``resources.claims[].name`` of every container, held to the names in ``spec.resourceClaims``
    (and each listed once)."""
    out: list[Hit] = []
    names: set[str] | None = None
    listed = ""
    for c in tpl.all_containers:
        resources = c.data.get("resources")
        claims = resources.get("claims") if isinstance(resources, dict) else None
        if not isinstance(claims, list):
            continue
        if names is None:
            entries = tpl.spec.get("resourceClaims")
            entries = entries if isinstance(entries, list) else []
            names = {e["name"] for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)}
            shown = sorted(names)[:LISTED_NAMES]
            more = f", and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
            listed = ": " + ", ".join(shown) + more if names else " which is empty"
        out += _duplicate_container_claims(c, claims)
        for i, claim in enumerate(claims):
            name = claim.get("name") if isinstance(claim, dict) else None
            if not isinstance(name, str) or not name or name in names:
                continue
            out.append(
                _at_claim(
                    c,
                    i,
                    f"{c.describe()} uses claim '{name}', which spec.resourceClaims does not list",
                    f"{tpl.describe()}: {c.describe()} names the claim '{name}' in resources.claims; the API "
                    f'server rejects the pod (Not found: "{name}": must be one of the names in '
                    f"pod.spec.resourceClaims{listed}). Correct the name, or add the claim to spec.resourceClaims",
                )
            )
    return out


ADMIN_LABEL = "resource.kubernetes.io/admin-access"


def _admin_namespaces(tpl: PodTemplate, devices: PodDevices, dra, namespaces: dict, file: str) -> list[Hit]:
    """A found template or claim asking for administrative access (``adminAccess``) in a namespace, among
    the inputs or --context, without the ``resource.kubernetes.io/admin-access: "true"`` label: the API
    server rejects it (``AuthorizedForAdmin``, pkg/registry/resource: "admin access to devices requires the
    `resource.kubernetes.io/admin-access: true` label on the containing namespace"; DRAAdminAccess on
    from 1.34, when claims are served at all), so it is never created and the pod stays Pending."""
    out: list[Hit] = []
    pod_ns = tpl.obj.ref.namespace or ""
    for claim in devices.claims:
        if not claim.found:
            continue
        key = "template" if claim.kind == "ResourceClaimTemplate" else "claim"
        ns = dra.admin_namespace(key, claim.name, pod_ns, file)
        labels = namespaces.get(ns) if ns else None
        if labels is None or labels.get(ADMIN_LABEL) == "true":
            continue
        reason = f"admin access to devices requires the `{ADMIN_LABEL}: true` label on the containing namespace ({ns})"
        made = "" if claim.kind == "ResourceClaim" else ", the pod's claim is never made"
        out.append(
            Hit(
                tpl.spec_path + claim.path,
                f"{claim.kind} '{claim.name}' asks for adminAccess in namespace {ns}, which lacks the label "
                f'{ADMIN_LABEL}: "true"',
                detail=(
                    f"{tpl.describe()}: spec.resourceClaims names {claim.kind} '{claim.name}', which asks for "
                    f"administrative access (adminAccess: true) in namespace {ns}, whose Namespace has no "
                    f'{ADMIN_LABEL}: "true" label; the API server rejects it ({reason}), so it is never created{made}, and '
                    f'the pod stays Pending. Label the namespace {ADMIN_LABEL}: "true" (an administrator\'s '
                    "namespace), or drop adminAccess"
                ),
                at_value=True,
            )
        )
    return out


def _unknown_requests(tpl: PodTemplate, devices: PodDevices, known: bool) -> list[Hit]:
    """A container's ``resources.claims[].request`` naming no request of the claim's template or claim.
    The API server cannot tell (the pod names the claim, not its spec) and the scheduler allocates the
    claim for the pod as usual; the kubelet hands a container only the devices allocated for the
    request it names (``cdiDevicesAsList`` in pkg/kubelet/cm/dra/claiminfo.go), so the container runs
    without any of the claim's devices. An error where the claims are shipped with the pod or given
    with --context, else a warning (the cluster's object of the name may have the request)."""
    entries = tpl.spec.get("resourceClaims")
    by_entry: dict[str, ClaimRef] = {}
    for ref in devices.claims:
        entry = entries[ref.path[1]] if isinstance(entries, list) and len(ref.path) > 1 else None
        if isinstance(entry, dict) and isinstance(entry.get("name"), str) and ref.requests is not None:
            by_entry.setdefault(entry["name"], ref)
    out: list[Hit] = []
    for c in tpl.all_containers:
        resources = c.data.get("resources")
        claims = resources.get("claims") if isinstance(resources, dict) else None
        for i, claim in enumerate(claims if isinstance(claims, list) else ()):
            if not isinstance(claim, dict):
                continue
            name, request = claim.get("name"), claim.get("request")
            used = by_entry.get(name) if isinstance(name, str) else None
            if used is None or used.requests is None or not isinstance(request, str) or not request:
                continue
            if request in used.requests:
                continue
            parents = sorted({r for r, sub in used.subrequests if request in (sub, f"{r}/{sub}")})
            if len(parents) == 1:
                # Fixed where it is the container's only entry of the claim: beside another, the request's
                # name could repeat one (or sit beside the whole claim), which the API server rejects.
                alone = sum(isinstance(x, dict) and x.get("name") == name for x in claims) == 1
                out.append(_subrequest_hit(tpl, c, i, name, request, parents[0], used, known, known and alone))
                continue
            has = sorted(used.requests)
            listed = "requests " + ", ".join(has) if has else "no request"
            out.append(
                Hit(
                    c.path + ("resources", "claims", i, "request"),
                    f"{c.describe()} uses request '{request}' of claim '{name}', which "
                    f"{used.kind} '{used.name}' does not have ({listed})",
                    detail=(
                        f"{tpl.describe()}: {c.describe()} names request '{request}' of claim '{name}', "
                        f"but {used.kind} '{used.name}' has {listed}. The API server accepts the pod and the "
                        "scheduler allocates the claim, but the kubelet gives a container only the devices "
                        f"allocated for the request it names, so {c.describe()} gets none of them. Name one of "
                        "the claim's requests, or leave out `request` to use all of them"
                        + (
                            ""
                            if known
                            else " (neither this file nor --context defines claims: the cluster's may differ)"
                        )
                    ),
                    container=c.name,
                    severity=None if known else "warning",
                    at_value=True,
                )
            )
    return out


def _subrequest_hit(
    tpl: PodTemplate,
    c: ContainerView,
    i: int,
    name: str,
    request: str,
    parent: str,
    used: ClaimRef,
    known: bool,
    fixable: bool,
) -> Hit:
    """A container's ``request`` naming a ``firstAvailable`` subrequest (``gpu/big`` or ``big``) rather than
    its request (``gpu``). KEP-4816: "In the PodSpec, however, the subrequest names are not valid. Only the
    main request name may be used." The kubelet plugin helper reports each prepared device under its
    request's name (``stripSubrequestNames``, k8s.io/dynamic-resource-allocation/kubeletplugin), so a
    container naming the subrequest gets none of the devices, whichever alternative was allocated. The
    fix (unsafe: the container then gets devices) names the request, where the claims are known and
    the entry is the container's only one of the claim."""
    path = c.path + ("resources", "claims", i, "request")
    return Hit(
        path,
        f"{c.describe()} uses '{request}' of claim '{name}', a firstAvailable alternative of request "
        f"'{parent}'; containers name the request",
        detail=(
            f"{tpl.describe()}: {c.describe()} names '{request}' of claim '{name}', which in {used.kind} "
            f"'{used.name}' is a subrequest (an alternative of firstAvailable) of request '{parent}'. A container "
            "names a request, never one of its alternatives: the kubelet gives a container the devices of the "
            f"request it names, and the devices of '{parent}' are known by that name whichever alternative was "
            f"allocated, so {c.describe()} gets none of them. Name request '{parent}' (the container gets the "
            "alternative the scheduler chose)"
            + ("" if known else " (neither this file nor --context defines claims: the cluster's may differ)")
        ),
        container=c.name,
        severity=None if known else "warning",
        at_value=True,
        fix=Fix(
            f"name request '{parent}'",
            UNSAFE,
            f"the firstAvailable request of {used.kind} '{used.name}'",
            (put(path, parent),),
        )
        if fixable
        else None,
    )


def _at_claim(c: ContainerView, i: int, message: str, detail: str) -> Hit:
    """A hit at the name of the container's ``resources.claims[i]``."""
    return Hit(c.path + ("resources", "claims", i, "name"), message, detail=detail, container=c.name, at_value=True)


def _duplicate_container_claims(c: ContainerView, claims: list) -> list[Hit]:
    """``validateResourceClaimNames``: a container lists a claim once, or each of its requests once
    (``request``), never the whole claim beside one of its requests."""
    out: list[Hit] = []
    seen: set[str] = set()  # "name", or "name/request"
    requested: set[str] = set()  # the names seen with a request
    for i, claim in enumerate(claims):
        name = claim.get("name") if isinstance(claim, dict) else None
        if not isinstance(name, str) or not name:
            continue
        request = claim.get("request")
        request = request if isinstance(request, str) and request else None
        key = f"{name}/{request}" if request else name
        if name in seen:
            what = f"claim '{name}' twice" if request is None else f"claim '{name}' whole and its request '{request}'"
            duplicate = name
        elif key in seen:
            what, duplicate = f"request '{request}' of claim '{name}' twice", key
        elif request is None and name in requested:
            what, duplicate = f"claim '{name}' whole and one of its requests", name
        else:
            seen.add(key)
            if request is not None:
                requested.add(name)
            continue
        seen.add(key)
        if request is not None:
            requested.add(name)
        out.append(
            _at_claim(
                c,
                i,
                f"{c.describe()} lists {what}",
                f"{c.describe()} lists {what} in resources.claims; the API server rejects the pod "
                f'(resources.claims[{i}]: Duplicate value: "{duplicate}"). List each claim (or each of its '
                "requests) once",
            )
        )
    return out


def _claim_sources(tpl: PodTemplate) -> tuple[list[Hit], set[int]]:
    """``validatePodResourceClaim``: each entry of ``spec.resourceClaims`` has a name no other entry
    before it has, and names exactly one of a ResourceClaim and a ResourceClaimTemplate. The hits, and
    the indexes of the entries naming both or neither (whose sources are not looked for)."""
    entries = tpl.spec.get("resourceClaims")
    if not isinstance(entries, list):
        return [], set()
    out: list[Hit] = []
    invalid: set[int] = set()
    names: set[str] = set()

    def rejected(at: tuple, message: str, detail: str, at_value: bool = True) -> None:
        out.append(Hit(tpl.spec_path + ("resourceClaims", *at), message, detail=detail, at_value=at_value))

    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        claim_name = entry.get("name")
        if claim_name is None or claim_name == "":
            rejected(
                (i,),
                "spec.resourceClaims entry without a name",
                f"{tpl.describe()}: spec.resourceClaims[{i}] has no name; the API server rejects the pod "
                f"(spec.resourceClaims[{i}].name: Required value). Name it, and list that name in the "
                "resources.claims of the containers that use the devices",
                at_value=False,
            )
        elif isinstance(claim_name, str) and not _named(claim_name, is_dns1123_label):
            rejected(
                (i, "name"),
                f"claim name '{claim_name[:64]}' is not a DNS label",
                f"{tpl.describe()}: spec.resourceClaims[{i}].name '{claim_name[:253]}' is not a DNS label; "
                f'the API server rejects the pod (spec.resourceClaims[{i}].name: Invalid value: "'
                f'{claim_name[:253]}": a lowercase RFC 1123 label must consist of lower case alphanumeric '
                "characters or '-', and must start and end with an alphanumeric character). Use at most 63 "
                "lower-case letters, digits and '-' (gpu-claim), here and in the containers' resources.claims",
            )
        if isinstance(claim_name, str) and claim_name:
            if claim_name in names:
                rejected(
                    (i, "name"),
                    f"claim '{claim_name}' is listed twice in spec.resourceClaims",
                    f"{tpl.describe()}: spec.resourceClaims[{i}] has the name of an entry before it; the API server "
                    f'rejects the pod (spec.resourceClaims[{i}].name: Duplicate value: "{claim_name}"). Give each '
                    "entry its own name, or remove the repeated one",
                )
            names.add(claim_name)
        source = entry.get("source")
        if isinstance(source, dict):  # the v1alpha2 form (Kubernetes 1.26-1.30)
            if entry.get("resourceClaimName") is None and entry.get("resourceClaimTemplateName") is None:
                invalid.add(i)
                out.append(_source_form(tpl, i, entry, source))
            continue
        both = entry.get("resourceClaimName") is not None and entry.get("resourceClaimTemplateName") is not None
        for field, kind in (
            ("resourceClaimName", "ResourceClaim"),
            ("resourceClaimTemplateName", "ResourceClaimTemplate"),
        ):
            ref = entry.get(field)
            if isinstance(ref, str) and not _named(ref, is_dns1123_subdomain):
                invalid.add(i)  # (rejected as such: not looked for)
                rejected(
                    (i, field),
                    f"{field} '{ref[:64]}' is not a valid {kind} name",
                    f"{tpl.describe()}: spec.resourceClaims[{i}].{field} '{ref[:253]}' cannot name a {kind}; the "
                    f'API server rejects the pod (spec.resourceClaims[{i}].{field}: Invalid value: "{ref[:253]}": '
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                    f"and must start and end with an alphanumeric character). Write the {kind}'s name as its "
                    "metadata.name is (lower case)",
                )
        if not both and (
            entry.get("resourceClaimName") is not None or entry.get("resourceClaimTemplateName") is not None
        ):
            continue
        invalid.add(i)
        name = claim_name if isinstance(claim_name, str) else str(i)
        reason = (
            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
            if both
            else "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
        )
        rejected(
            (i,),
            f"claim '{name}' names {'both a ResourceClaim and a template' if both else 'no ResourceClaim or template'}",
            f"{tpl.describe()}: spec.resourceClaims[{i}] ('{name}'): the API server rejects the pod ({reason}). Name "
            "either the ResourceClaim the pods share (resourceClaimName) or the template a claim is made from for "
            "each pod (resourceClaimTemplateName)",
            at_value=False,
        )
    return out, invalid


def _source_form(tpl: PodTemplate, i: int, entry: dict, source: dict) -> Hit:
    """An entry in the ``source`` form that resource.k8s.io/v1alpha3 (1.31) replaced: the API server
    knows no ``source`` any more, so the entry names no claim."""
    name = entry.get("name") if isinstance(entry.get("name"), str) else str(i)
    named = next((k for k in ("resourceClaimName", "resourceClaimTemplateName") if source.get(k) is not None), None)
    move = f"move source.{named} up beside name ({named}: {source.get(named)})" if named else "name its source"
    return Hit(
        tpl.spec_path + ("resourceClaims", i, "source"),
        f"claim '{name}' uses the source form removed in Kubernetes 1.31",
        detail=(
            f"{tpl.describe()}: spec.resourceClaims[{i}] ('{name}') names its claim under source, the form of "
            "resource.k8s.io/v1alpha2 (Kubernetes 1.26-1.30); from 1.31 the entry names it directly, and on a "
            "cluster that serves DRA the API server drops source (kubectl's strict validation rejects it as an "
            f"unknown field) and rejects the pod (spec.resourceClaims[{i}]: must specify one of: "
            f"`resourceClaimName`, `resourceClaimTemplateName`). {move[0].upper() + move[1:]}, and rewrite the "
            "claim objects for resource.k8s.io/v1"
        ),
    )


def _named(name: str, valid) -> bool:
    """``name`` passes ``valid`` (a DNS label or subdomain), or is left for a template engine to fill."""
    return valid(name) or is_placeholder(name) or any(mark in name for mark in ("${", "{{", "$("))


def _not_served(tpl: PodTemplate, devices: PodDevices, version: str | None, overrides: Mapping) -> list[Hit]:
    """Warnings where the cluster's version (or its featureGates) drops the pod's claims, or does not serve
    its DRA extended resources through DRA."""
    out: list[Hit] = []
    if devices.dropped:
        out.append(
            Hit(
                tpl.spec_path + ("resourceClaims",),
                "DRA claims are dropped: DynamicResourceAllocation is off in profile.featureGates"
                if "DynamicResourceAllocation" in overrides
                else f"DRA claims are dropped before Kubernetes 1.34 (profile: {version})",
                detail=(
                    f"{tpl.describe()}: spec.resourceClaims needs the DynamicResourceAllocation gate, off by "
                    f"default before Kubernetes 1.34; on {version} the API server drops the pod's "
                    "spec.resourceClaims and its containers' resources.claims, so the pod runs without the "
                    "claimed devices. Use the device plugin's resource (nvidia.com/gpu) on this version, or "
                    "upgrade (or enable the gate on the API server, scheduler and kubelet)"
                ),
                severity="warning",
            )
        )
    for rname, cls in devices.extended_off:
        for c in tpl.all_containers:
            resources = c.data.get("resources")
            for part in ("limits", "requests"):
                values = resources.get(part) if isinstance(resources, dict) else None
                if not isinstance(values, dict) or rname not in values:
                    continue
                implicit = rname.startswith(DRA_EXTENDED_PREFIX)
                served = (
                    "no node advertises it, so the pod stays Pending"
                    if implicit
                    else f"DeviceClass '{cls}' does not serve it, so only a device plugin advertising {rname} can"
                )
                out.append(
                    Hit(
                        c.path + ("resources", part, rname),
                        f"{rname} is not served through DRA: DRAExtendedResource is off in profile.featureGates"
                        if "DRAExtendedResource" in overrides
                        else f"{rname} is served through DRA only from Kubernetes 1.36 (profile: {version})",
                        detail=(
                            f"{tpl.describe()}: {c.describe()} asks for {rname}, an extended resource backed by "
                            f"DeviceClass '{cls}'; that needs the DRAExtendedResource gate, off by default before "
                            f"Kubernetes 1.36: on {version} {served}. Claim the device with a "
                            "ResourceClaimTemplate (spec.resourceClaims), or use the device plugin's resource"
                        ),
                        container=c.name,
                        severity="warning",
                    )
                )
                break
    return out
