"""Pod-level resources (``spec.resources``) the API server rejects, or drops.

Followed: ``validatePodResourceName`` and ``validatePodResourceConsistency``
(pkg/apis/core/validation/validation.go: only cpu, memory and hugepages at pod
level, no claims, none on a Windows pod (``spec.os.name: windows``, k/k PR 133046, 1.34); the aggregate of the containers' requests, defaulted, at most the pod's
request; no container limit above the pod's limit), ``validateResourceRequirements`` (hugepages
only with cpu or memory) and ``dropDisabledPodLevelResources``
(pkg/api/pod/util.go: before 1.34 the gate is off and the field is dropped); a
pod-level request left out defaults to the containers' aggregate request when pod-level
limits are set (``defaultPodRequests``; a hugepages request to the pod-level limit) and is then held
to the pod-level limit (``validateResourceRequirements``: at most the limit) and to the aggregate.
That defaulting (``SetDefaults_Pod``) is a Pod's: a Deployment's or a Job's template is validated as
written, before any pod is made from it.
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.input.workloads import PodTemplate
from kubelint_ml.k8s.gates import enabled
from kubelint_ml.k8s.gates import of as gates_of
from kubelint_ml.k8s.resources import hugepages_without_cpu_or_memory, is_hugepages, pod_requests
from kubelint_ml.templates._cluster import default_for
from kubelint_ml.templates._common import gates, pod_level, requests_limits, show, validated_as_template

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_SUPPORTED = '"cpu", "hugepages-", "memory"'
# Per-pod PID limits (spec.resources.limits.pids, KEP-6063): the PerPodPIDLimit gate, alpha and off from 1.37;
# with the gate off the API server drops the field (before 1.37 it knows no pids: Unsupported value).
PER_POD_PID_LIMIT = (1, 37)


def _mapping(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _supported(name: str) -> bool:
    return name in ("cpu", "memory") or is_hugepages(name)


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    containers = _container_hugepages(tpl, ctx)
    raw = tpl.spec.get("resources")
    if not isinstance(raw, dict):
        return containers
    base = tpl.spec_path + ("resources",)
    who = tpl.describe()
    if not gates(tpl)[0]:
        names = [str(n) for part in ("requests", "limits") if isinstance(raw.get(part), dict) for n in raw[part] if n]
        if not names:
            return None
        version = getattr(getattr(ctx, "profile", None), "kubernetes_version", None)
        if "PodLevelResources" in gates_of(ctx)[1]:
            version = f"{version or 'the profile'} with PodLevelResources off in profile.featureGates"
        return (containers or []) + [
            Hit(
                base,
                "pod-level resources are dropped "
                + (
                    f"({version})" if "featureGates" in str(version) else f"before Kubernetes 1.34 (profile: {version})"
                ),
                detail=(
                    f"{who}: spec.resources ({', '.join(sorted(set(names)))}) needs the PodLevelResources gate, "
                    f"on from Kubernetes 1.34; on {version} the API server drops the field, so only the containers' "
                    "requests and limits count (QoS, scheduling, limits). Set the containers' resources instead"
                ),
                severity="warning",
            )
        ]
    out: list[Hit] = containers or []
    os_name = tpl.spec.get("os").get("name") if isinstance(tpl.spec.get("os"), dict) else None
    if os_name == "windows" and any(isinstance(raw.get(part), dict) and raw[part] for part in ("requests", "limits")):
        # validatePodResources (k/k PR 133046, from 1.34, when the field is first kept): Windows has no
        # pod-level resources; the kubelet of a Windows node refuses such a pod at admission too.
        out.append(
            Hit(
                base,
                "pod-level resources on a Windows pod (spec.os.name: windows)",
                detail=(
                    f"{who}: spec.resources is set and spec.os.name is windows; pod-level resources are not "
                    "supported on Windows, and the API server rejects the pod (from Kubernetes 1.34; a Windows "
                    "node's kubelet refuses it at admission too). Set the containers' resources instead"
                ),
            )
        )
    if raw.get("claims") is not None:
        out.append(
            Hit(
                base + ("claims",),
                "pod-level resources cannot hold claims: a container names the claims it uses",
                detail=(
                    f"{who}: spec.resources.claims is set; the API server rejects the pod (spec.resources.claims: "
                    "Forbidden: claims cannot be set for Resources at pod-level). List the pod's claims in "
                    "spec.resourceClaims and name them in each container's resources.claims"
                ),
            )
        )
    version, overrides = gates_of(ctx)
    # (audit: stored pods that kept a pids limit show the gate on)
    cache = getattr(ctx, "cache", None)
    kept = isinstance(cache, dict) and cache.get("per_pod_pid_limit") is True
    kept = kept or ((version is None or version >= PER_POD_PID_LIMIT) and enabled("PerPodPIDLimit", version, overrides))
    pids_dropped = (version is None or version >= PER_POD_PID_LIMIT) and not kept
    for part in ("requests", "limits"):
        values = raw.get(part)
        if not isinstance(values, dict):
            continue
        for name in values:
            if name == "pids" and kept:
                continue  # served: a limit the kubelet enforces
            if name == "pids" and pids_dropped:
                out.append(
                    Hit(
                        base + (part, name),
                        f"pod-level {part} pids is dropped: per-pod PID limits are "
                        + (
                            "off in profile.featureGates"
                            if "PerPodPIDLimit" in overrides
                            else "alpha and off by default"
                        ),
                        detail=(
                            f"{who}: spec.resources.{part} names pids, which the PerPodPIDLimit gate (KEP-6063, alpha "
                            "and off by default from Kubernetes 1.37) serves, as a limit only; with the gate off the "
                            "API server drops it, so the node's podPidsLimit applies. Enable the gate on the API "
                            "server and the kubelets (cgroup v2 nodes), or set the kubelet's podPidsLimit"
                            + ("" if part == "limits" else "; with it on, pids is a limit, and a request is rejected")
                        ),
                        severity="warning",
                    )
                )
            elif isinstance(name, str) and not _supported(name):
                out.append(
                    Hit(
                        base + (part, name),
                        f"pod-level {part} cannot hold {name}: only cpu, memory and hugepages",
                        detail=(
                            f"{who}: spec.resources.{part} names {name}; the API server rejects it "
                            f'(Unsupported value: "{name}": supported values: {_SUPPORTED}). Ask for it in the '
                            "containers' resources (extended resources and GPUs are per container)"
                        ),
                    )
                )
    out.extend(_hugepages_alone(tpl, raw, base))
    out.extend(_consistency(tpl, raw, base))
    return out


def _hugepages_alone(tpl: PodTemplate, raw: dict, base: tuple) -> list[Hit]:
    """Pod-level hugepages without a pod-level cpu or memory: "HugePages require cpu or memory". A Pod
    is judged after defaulting (its pod-level request may default to the containers' cpu and memory); a
    workload's template as written."""
    requests, limits = _mapping(raw.get("requests")), _mapping(raw.get("limits"))
    template = validated_as_template(tpl)
    if not template:
        found = pod_level(tpl)
        if found is not None:
            requests, limits = {**requests, **found[0]}, {**limits, **found[1]}
    names = hugepages_without_cpu_or_memory(requests, limits)
    if not names:
        return []
    shown = ", ".join(names)
    when = (
        f"the API server validates the {tpl.obj.kind}'s pod template as written and rejects it"
        if template
        else "after defaulting (the pod-level requests take the containers' cpu and memory requests, and "
        "these have none) the API server rejects the pod"
    )
    return [
        Hit(
            base,
            f"pod-level resources have {shown} but no cpu or memory",
            detail=(
                f"{tpl.describe()}: spec.resources names {shown} and neither cpu nor memory; {when} "
                "(spec.resources: Forbidden: HugePages require cpu or memory). Add a pod-level memory (or cpu) "
                "request or limit"
            ),
        )
    ]


def _consistency(tpl: PodTemplate, raw: dict, base: tuple) -> list[Hit]:
    found = pod_level(tpl)
    if found is None:
        return []
    pod_requests_, pod_limits = found
    written_requests, written_limits = _mapping(raw.get("requests")), _mapping(raw.get("limits"))
    out: list[Hit] = []
    aggregate = pod_requests(tpl.spec)
    for name in sorted(n for n in pod_requests_ if n in aggregate and _supported(n)):
        value, total = pod_requests_[name], aggregate[name]
        if value >= total:
            continue
        if name not in written_requests and name in written_limits:
            # a hugepages request left out defaults to the pod-level limit (cpu and memory ones to the
            # aggregate itself)
            out.append(
                Hit(
                    base + ("limits", name),
                    f"pod {name} limit {show(name, value)} (the request's default) < the containers' "
                    f"{show(name, total)}",
                    detail=(
                        f"{tpl.describe()}: the pod-level {name} request, not written, defaults to the pod-level "
                        f"limit {show(name, value)}, below the aggregate of the containers' requests, "
                        f"{show(name, total)}; the API server rejects the pod (spec.resources.requests[{name}]: "
                        f'Invalid value: "{show(name, value)}": must be greater than or equal to aggregate '
                        f"container requests of {show(name, total)}). Raise the pod-level limit or lower the "
                        "containers'"
                    ),
                    at_value=True,
                )
            )
        elif name in written_requests:
            out.append(
                Hit(
                    base + ("requests", name),
                    f"pod {name} request {show(name, value)} < the containers' {show(name, total)}",
                    detail=(
                        f"{tpl.describe()}: the pod-level {name} request {show(name, value)} is below the aggregate "
                        f"of the containers' requests, {show(name, total)}; the API server rejects the pod (must be "
                        f"greater than or equal to aggregate container requests of {show(name, total)}). Raise the "
                        "pod-level request or lower the containers'"
                    ),
                    at_value=True,
                )
            )
    out.extend(_request_above_limit(tpl, raw, base, pod_requests_, pod_limits))
    for c in tpl.containers:
        _, limits = requests_limits(c)
        for name in sorted(limits):
            if name not in pod_limits or not _supported(name):
                continue
            limit, pod_limit = limits[name], pod_limits[name]
            if limit > pod_limit:
                out.append(
                    Hit(
                        c.path + ("resources", "limits", name),
                        f"{c.describe()} {name} limit {show(name, limit)} > pod limit {show(name, pod_limit)}",
                        detail=(
                            f"{tpl.describe()}: {c.describe()} limits {name} to {show(name, limit)}, above the "
                            f"pod-level limit {show(name, pod_limit)}; the API server rejects the pod (must be less "
                            f"than or equal to pod limits of {show(name, pod_limit)}). Lower the container's limit "
                            "or raise the pod's"
                        ),
                        container=c.name,
                        at_value=True,
                    )
                )
    return out


def _request_above_limit(tpl: PodTemplate, raw: dict, base: tuple, requests: dict, limits: dict) -> list[Hit]:
    """A pod-level request defaulted from the containers' requests above the written pod-level limit, or
    a written request above the limit defaulted from the containers' limits (from 1.36,
    PodLevelResourcesFixUpdateDefaulting); a written request above a written limit is
    request-exceeds-limit's."""
    written_limits = _mapping(raw.get("limits"))
    written_requests = _mapping(raw.get("requests"))
    if not any(isinstance(n, str) and _supported(n) for n in written_limits):  # (``limits: {}`` is none)
        return _request_above_defaulted_limit(tpl, base, written_requests, requests, limits)
    out: list[Hit] = []
    for name in sorted(n for n in written_limits if isinstance(n, str) and _supported(n)):
        if name in written_requests or name not in requests or name not in limits:
            continue
        request, limit = requests[name], limits[name]
        if request <= limit:
            continue  # (hugepages requests default to the limit, not from the containers)
        out.append(
            Hit(
                base + ("limits", name),
                f"pod {name} limit {show(name, limit)} < the containers' requests {show(name, request)}",
                detail=(
                    f"{tpl.describe()}: the pod-level {name} request, not written, defaults to the containers' "
                    f"aggregate request {show(name, request)}, above the pod-level limit {show(name, limit)}; the "
                    f'API server rejects the pod (spec.resources.requests: Invalid value: "{show(name, request)}": '
                    f"must be less than or equal to {name} limit of {show(name, limit)}). Raise the pod-level limit "
                    "or lower the containers' requests"
                ),
                at_value=True,
            )
        )
    return out


def _request_above_defaulted_limit(
    tpl: PodTemplate, base: tuple, written: dict, requests: dict, limits: dict
) -> list[Hit]:
    """No pod-level limit written: where every container limits a resource, the pod-level limit defaults
    to their aggregate (``defaultPodLimits``, from 1.36), and a written request above it is rejected."""
    out: list[Hit] = []
    for name in sorted(n for n in written if isinstance(n, str) and n in requests and n in limits and _supported(n)):
        request, limit = requests[name], limits[name]
        if request <= limit:
            continue
        out.append(
            Hit(
                base + ("requests", name),
                f"pod {name} request {show(name, request)} > the pod limit {show(name, limit)} it gets from the "
                "containers' limits",
                detail=(
                    f"{tpl.describe()}: no pod-level {name} limit is written and every container limits {name}, so "
                    f"the pod-level limit defaults to their aggregate, {show(name, limit)} (Kubernetes 1.36 and "
                    f"later: PodLevelResourcesFixUpdateDefaulting), below the pod-level request {show(name, request)}; "
                    f'the API server rejects the pod (spec.resources.requests[{name}]: Invalid value: "'
                    f'{show(name, request)}": must be less than or equal to {name} limit of {show(name, limit)}). '
                    "Write a pod-level limit at least the request, or raise the containers' limits"
                ),
                at_value=True,
            )
        )
    return out


def _container_hugepages(tpl: PodTemplate, ctx) -> list[Hit] | None:
    """A container's hugepages without its cpu or memory, which ``validateResourceRequirements`` rejects as
    it does at pod level ("HugePages require cpu or memory"), unless a LimitRange fills cpu or memory in
    (LimitRanger admits a Pod before it is validated; a workload's template is validated as written)."""
    out: list[Hit] = []
    template: bool | None = None
    for c in tpl.all_containers:
        parts = [c.resources.get(part) for part in ("requests", "limits")]
        if not any(isinstance(p, dict) and any(isinstance(n, str) and is_hugepages(n) for n in p) for p in parts):
            continue  # (the common case: one look at each name)
        names = hugepages_without_cpu_or_memory(*(p if isinstance(p, dict) else {} for p in parts))
        if not names:
            continue
        if template is None:
            template = validated_as_template(tpl)
        if not template and any(
            default_for(tpl, c, ctx, part, name) is not None
            for part in ("requests", "limits")
            for name in ("cpu", "memory")
        ):
            continue  # LimitRanger sets them before the pod is validated
        shown = ", ".join(names)
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in c.path + ("resources",)).lstrip(".")
        what = f"the {tpl.obj.kind}'s pod template" if template else "the pod"
        out.append(
            Hit(
                c.path + ("resources",),
                f"{c.describe()} has {shown} but no cpu or memory: the API server rejects it",
                detail=(
                    f"{tpl.describe()}: {c.describe()} asks for {shown} with neither a cpu nor a memory request or "
                    f"limit; the API server rejects {what} ({field}: Forbidden: HugePages require cpu or memory). "
                    "Set the container's memory request and limit"
                ),
                container=c.name,
            )
        )
    return out or None
