"""The fixes the built-in templates attach to their hits (see kubelint_ml.fix).

Each builder returns a :class:`~kubelint_ml.fix.Fix` with the value a careful
platform engineer would write and where it comes from, or ``None`` when there
is no trustworthy value (the context's note says why, for ``-v``). Values are
never invented: they come from the manifest itself (a request, a class named
elsewhere), the node the pod lands on (its GPU share of allocatable memory),
observed usage (``ctx.usage``), or a rule parameter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kubelint_ml.engine.api import template_devices
from kubelint_ml.fix import SAFE, UNSAFE, Fix, append, prepend, put
from kubelint_ml.input.workloads import ContainerView, PodTemplate
from kubelint_ml.k8s.nodes import GI, MI
from kubelint_ml.k8s.quantity import QuantityError, parse_manifest_quantity
from kubelint_ml.k8s.resources import defaulted_requests
from kubelint_ml.templates._accel import devices_label, is_slice, placement
from kubelint_ml.templates._common import (
    accelerators,
    counted_at_most,
    counts_on,
    pod_level,
    requests_limits,
    share_assumed_on,
    uncounted_accelerators,
)

DEFAULT_HEADROOM = 0.10
DISK_SIZE_PARAM = {
    "type": ["string", "integer"],
    "description": "For the fix: the sizeLimit given to a disk emptyDir without one (default 10Gi).",
}
MEMORY_SIZE_PARAM = {
    "type": ["string", "integer"],
    "description": "For the fix: the sizeLimit given to a Memory emptyDir without one (default 1Gi).",
}
SHM_PARAMS = {
    "shmPerProcess": {
        "type": ["string", "integer"],
        "description": "For the fix: /dev/shm per process counted (default 1Gi).",
    },
    "shmMax": {"type": ["string", "integer"], "description": "For the fix: the most /dev/shm it sets (default 16Gi)."},
}
HEADROOM_PARAM = {
    "type": "number",
    "minimum": 0,
    "maximum": 0.9,
    "description": "For the memory fix: the part of the pod's GPU share of node memory left free.",
}


def amount(value: Fraction) -> str:
    """Bytes rounded down to what a person writes: whole Gi from 10Gi, else whole Mi."""
    if value >= 10 * GI:
        return f"{math.floor(value / GI)}Gi"
    return f"{math.floor(value / MI)}Mi"


def _quantity(raw: Any) -> Fraction | None:
    try:
        return parse_manifest_quantity(raw).value
    except (QuantityError, TypeError, ValueError):
        return None


def _note(ctx: Any, tpl: PodTemplate, what: str, why: str) -> None:
    """Why a fix is not offered, for -v: once per template and subject (several rules ask for the same fix)."""
    if ctx is not None and getattr(ctx, "wants_notes", False):
        said = tpl.cache.setdefault("fix:notes", set())
        if (what, why) not in said:
            said.add((what, why))
            ctx.note(f"{tpl.obj.file}: {tpl.describe()}: no fix for {what}: {why}")


# --------------------------------------------------------------------------
# Accelerators and quantities


def accelerator_limit(c: ContainerView, resource: str, raw: Any) -> Fix:
    """The missing limit of an extended resource = its request (the API server rejects the pod otherwise)."""
    return Fix(
        f"set limits.{resource} to the request ({raw})",
        SAFE,
        "the container's request",
        (put(c.path + ("resources", "limits", resource), raw),),
    )


_DECIMAL = {"KB": "k", "kB": "k", "MB": "M", "GB": "G", "TB": "T", "PB": "P", "EB": "E"}


_BINARY_CASE = {s.lower(): s for s in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")}


def binary_case(raw: Any) -> str | None:
    """``8gi`` -> ``8Gi``: a binary suffix in the wrong case (the grammar is case-sensitive)."""
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    suffix = _BINARY_CASE.get(text[-2:].lower())
    if suffix is None or text[-2:] == suffix:
        return None
    new = text[:-2] + suffix
    return new if _quantity(new) is not None else None


def decimal_suffix(path: tuple, raw: Any) -> Fix | None:
    """``64GB`` -> ``64G`` (the grammar's spelling of what was written; ``64Gi`` is the binary alternative);
    ``8gi`` -> ``8Gi``."""
    meant = binary_case(raw)
    if meant is not None:
        return Fix(
            f"write {meant} (binary suffixes are Ki Mi Gi Ti Pi Ei)",
            UNSAFE,
            "the value as written",
            (put(path, meant),),
        )
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    suffix = text[-2:]
    if suffix not in _DECIMAL:
        return None
    number = text[:-2]
    new = number + _DECIMAL[suffix]
    if _quantity(new) is None:
        return None
    binary = number + ("Ki" if suffix in ("KB", "kB") else suffix[0] + "i")
    return Fix(
        f"write {new} ({suffix} as the decimal suffix; {binary} is the binary alternative)",
        UNSAFE,
        "the value as written",
        (put(path, new),),
    )


# --------------------------------------------------------------------------
# Memory for containers with none


def wanted(ctx: Any) -> bool:
    """Whether the run reads fixes (not at admission: see Context.wants_fixes)."""
    return ctx is None or getattr(ctx, "wants_fixes", True)


def _has_memory(c: ContainerView) -> bool:
    requests, limits = requests_limits(c)
    return "memory" in requests or "memory" in limits


def _share(tpl: PodTemplate, ctx: Any) -> tuple[Fraction, str] | str:
    """The pod's GPU share of node allocatable memory, and its source; or why there is none."""
    uncounted = uncounted_accelerators(tpl)
    if uncounted:
        return uncounted
    accel = accelerators(tpl)
    if not accel:
        return "the pod uses no counted accelerator, so it has no GPU share of a node to size memory from"
    if any(is_slice(r) for r in accel):
        return "the pod requests GPU slices; its share of the node depends on the partitioning"
    shared = _device_amount(tpl, accel)
    if shared is not None:
        return (
            f"the pod asks for {shared} beside its devices: they are shared (HAMi, a shared GPU), so its share of "
            "the node is not known"
        )
    if counted_at_most(tpl):
        devices = template_devices(tpl)
        if devices is not None and devices.alternatives:
            return "the pod's claim lists alternatives (firstAvailable); its share of the node depends on which it gets"
        if devices is not None and devices.shared:
            return (
                "the pod claims part of the capacity of GPUs other claims may share (capacity.requests); its share "
                "of the node depends on how many share them"
            )
        return "the pod claims MIG devices of no named profile; its share of the node depends on which it gets"
    place, how = placement(tpl, ctx)
    if place is None:
        return f"node type not resolved ({how})"
    best: tuple[Fraction, str] | None = None
    assumed = False
    for node in place.nodes:
        here = counts_on(tpl, accel, node.gpu_resource, node.gpus, node.gpu_model)
        g = here.get(node.gpu_resource)
        if share_assumed_on(tpl, node.gpu_model):
            assumed = True  # a MIG share assumed, not known: not one to size memory from
            continue
        if g is None or len(here) > 1 or g > node.gpus or not node.memory:
            continue
        share = node.memory * g / node.gpus
        if best is None or share < best[0]:
            name = f"node pool {node.name}" if node.source == "profile" else node.name
            best = (
                share,
                f"{g} of {node.gpus} {devices_label(node.gpu_resource)} on {name} ({amount(node.memory)} allocatable)",
            )
    if best is None and assumed:
        return "the GPU its MIG partitions are cut from is not known, so neither is their share of it"
    if best is None:
        return "no candidate node type fits the pod's accelerators"
    return best


_AMOUNT_WORDS = ("mem", "core", "percent")


def _device_amount(tpl: PodTemplate, accel: dict) -> str | None:
    """A resource of an accelerator's vendor that is an amount of a device (its memory, cores or a
    percentage: HAMi's ``nvidia.com/gpumem``, ``nvidia.com/gpucores``, ``hygon.com/dcumem``,
    ``huawei.com/Ascend910B-memory``, Intel's ``gpu.intel.com/millicores``): the devices are shared."""
    domains = {r.split("/", 1)[0] for r in accel if "/" in r}
    for c in tpl.all_containers:
        for part in requests_limits(c):
            for name in part:
                if name in accel or "/" not in name:
                    continue
                domain, _, base = name.partition("/")
                if domain in domains and any(w in base.lower() for w in _AMOUNT_WORDS):
                    return name
    return None


def memory_plan(tpl: PodTemplate, ctx: Any, params: dict) -> dict[int, tuple[Fraction | None, Fraction, str]] | str:
    """Per container without memory (by id): (request or None, limit, source); or why there is none.

    With observed usage (``ctx.usage``), request = median and limit = peak plus
    headroom. Otherwise the pod's GPU share of the node's allocatable memory, less
    ``fixHeadroom``, less what the other app containers already ask for, split
    evenly among the app containers (and sidecars) that ask for nothing; an init
    container (which runs alone) gets the whole of it.
    """
    key = ("fix:memory", params.get("fixHeadroom", DEFAULT_HEADROOM))
    found = tpl.cache.get(key)
    if found is not None:
        return found
    plan: dict[int, tuple[Fraction | None, Fraction, str]] = {}
    lacking = [c for c in tpl.all_containers if not _has_memory(c)]
    usage = getattr(ctx, "usage", None) if ctx is not None else None
    if usage is not None and lacking:
        for c in lacking:
            rec = usage.recommend(tpl.obj, tpl, c)
            if rec is not None:
                request, limit, source = rec
                plan[id(c)] = (Fraction(request), Fraction(limit), source)
    rest = [c for c in lacking if id(c) not in plan]
    if rest:
        share = _share(tpl, ctx)
        if isinstance(share, str):
            if not plan:
                tpl.cache[key] = share
                return share
        else:
            headroom = Fraction(str(params.get("fixHeadroom", DEFAULT_HEADROOM)))
            budget = share[0] * (1 - headroom)
            running = [c for c in tpl.containers] + [c for c in tpl.init_containers if c.role == "sidecar"]
            taken = sum(
                (defaulted_requests(*requests_limits(c)).get("memory", Fraction(0)) for c in running if _has_memory(c)),
                Fraction(0),
            )
            taken += sum((plan[id(c)][0] or plan[id(c)][1] for c in running if id(c) in plan), Fraction(0))
            open_ = [c for c in running if id(c) not in plan and not _has_memory(c)]
            each = (budget - taken) / len(open_) if open_ else budget
            source = f"GPU share of node memory: {share[1]}, less {float(headroom) * 100:g}% headroom"
            for c in rest:
                value = budget if c.role == "initContainer" else each
                value = (
                    Fraction(math.floor(value / MI) * MI) if value < 10 * GI else Fraction(math.floor(value / GI) * GI)
                )
                if value > 0:
                    plan[id(c)] = (None, value, source)
    if not plan and lacking:  # every container asks for memory: nothing to plan (the callers say why)
        why = "the pod's GPU share leaves no memory for it"
        tpl.cache[key] = why
        return why
    tpl.cache[key] = plan
    return plan


def _container_changes(c: ContainerView, request: Fraction | None, limit: Fraction) -> tuple:
    base = c.path + ("resources",)
    out = [put(base + ("limits", "memory"), amount_exact(limit))]
    if request is not None:
        out.insert(0, put(base + ("requests", "memory"), amount_exact(request)))
    return tuple(out)


def _pod_request_only(tpl: PodTemplate) -> Fraction | None:
    """The pod-level memory request of a pod whose pod-level resources (in force) set no memory limit."""
    if not isinstance(tpl.spec.get("resources"), dict):
        return None
    pod = pod_level(tpl)
    if pod is None or "memory" in pod[1]:
        return None
    return pod[0].get("memory")


def pod_memory_limit(tpl: PodTemplate, request: Fraction, ctx: Any, params: dict) -> Fix | None:
    """A pod-level memory limit for a pod with a pod-level memory request: the GPU share less headroom.
    Container limits would not do: their requests, defaulted to them, add up past the pod-level request,
    which the API server rejects."""
    share = _share(tpl, ctx)
    if isinstance(share, str):
        _note(ctx, tpl, "the pod-level memory limit", share)
        return None
    headroom = Fraction(str(params.get("fixHeadroom", DEFAULT_HEADROOM)))
    budget = share[0] * (1 - headroom)
    limit = Fraction(math.floor(budget / MI) * MI) if budget < 10 * GI else Fraction(math.floor(budget / GI) * GI)
    highest = max((requests_limits(c)[1].get("memory", Fraction(0)) for c in tpl.all_containers), default=Fraction(0))
    if limit < request or limit < highest:
        _note(
            ctx,
            tpl,
            "the pod-level memory limit",
            f"the pod's GPU share less headroom ({amount_exact(limit)}) is below its pod-level memory request or a "
            "container's memory limit",
        )
        return None
    return Fix(
        f"set the pod-level memory limit to {amount_exact(limit)}",
        UNSAFE,
        f"GPU share of node memory: {share[1]}, less {float(headroom) * 100:g}% headroom",
        (put(tpl.spec_path + ("resources", "limits", "memory"), amount_exact(limit)),),
    )


def container_memory(tpl: PodTemplate, c: ContainerView, ctx: Any, params: dict) -> Fix | None:
    """A memory limit (and, from usage, a request) for one container that has none; the pod-level
    limit for a pod with a pod-level memory request."""
    requests, limits = requests_limits(c)
    if "memory" in limits:
        return None
    pod_request = _pod_request_only(tpl)
    if pod_request is not None:
        return pod_memory_limit(tpl, pod_request, ctx, params)
    plan = memory_plan(tpl, ctx, params)
    if isinstance(plan, str):
        _note(ctx, tpl, f"memory of {c.describe()}", plan)
        return None
    entry = plan.get(id(c))
    if entry is None:
        if "memory" in requests:
            _note(
                ctx,
                tpl,
                f"memory limit of {c.describe()}",
                "it has a memory request; its peak is not known (observed usage would give it)",
            )
        return None
    request, limit, source = entry
    return Fix(
        f"set {c.describe()}'s memory limit to {amount_exact(limit)}"
        + (f" and request to {amount_exact(request)}" if request is not None else ""),
        UNSAFE,
        source,
        _container_changes(c, request, limit),
    )


def pod_memory(tpl: PodTemplate, ctx: Any, params: dict) -> Fix | None:
    """Memory for every container of a BestEffort pod template."""
    plan = memory_plan(tpl, ctx, params)
    if isinstance(plan, str):
        _note(ctx, tpl, "BestEffort QoS", plan)
        return None
    changes: list = []  # a list: one tuple grown per container would copy it for each (quadratic)
    sources: dict[str, None] = {}
    for c in tpl.all_containers:
        entry = plan.get(id(c))
        if entry is not None:
            changes.extend(_container_changes(c, entry[0], entry[1]))
            sources[entry[2]] = None
    if not changes:
        return None
    return Fix("set a memory limit on every container", UNSAFE, "; ".join(sources), tuple(changes))


# --------------------------------------------------------------------------
# emptyDir and /dev/shm

DEFAULT_SHM_PER_PROCESS = "1Gi"
DEFAULT_SHM_MAX = "16Gi"
DEFAULT_DISK_SIZE_LIMIT = "10Gi"
SHM_VOLUME = "dshm"


def shm_size(processes: int | None, params: dict) -> Fraction:
    """``shmPerProcess`` for every process counted (one when none is), capped at ``shmMax``."""
    per = _quantity(params.get("shmPerProcess", DEFAULT_SHM_PER_PROCESS)) or GI
    cap = _quantity(params.get("shmMax", DEFAULT_SHM_MAX)) or 16 * GI
    return Fraction(min(per * max(1, processes or 1), cap))


def _raise_memory(c: ContainerView, by: Fraction) -> tuple:
    """The container's memory limit (and an equal request) raised by ``by``, when it has a limit."""
    requests, limits = requests_limits(c)
    limit = limits.get("memory")
    if limit is None or limit <= 0 or by <= 0:
        return ()
    base = c.path + ("resources",)
    out: tuple = (put(base + ("limits", "memory"), amount_exact(limit + by)),)
    if requests.get("memory") == limit and "memory" in (c.resources.get("requests") or {}):
        out += (put(base + ("requests", "memory"), amount_exact(limit + by)),)
    return out


def _raised(tpl: PodTemplate, containers: list[tuple[ContainerView, Fraction]], by: Fraction) -> list:
    """The memory limits of ``containers`` raised (each by its amount, :func:`_raise_memory`), and the
    pod-level resources kept valid (a memory emptyDir of ``by`` more is charged to the pod as well): a
    pod-level memory limit raised by ``by``, a pod-level memory request by what the containers'
    requests (as defaulted) went up, the limit at least that request (the API server rejects a pod
    whose containers' requests add up past its pod-level request, or whose pod-level request is above
    its limit)."""
    changes: list = []
    requested = Fraction(0)
    for c, more in containers:
        raised = _raise_memory(c, more)
        if raised:
            changes.extend(raised)
            requests, limits = requests_limits(c)
            if defaulted_requests(requests, limits).get("memory") == limits.get("memory"):
                requested += more
    raw = tpl.spec.get("resources")
    if by <= 0 or not isinstance(raw, dict) or not raw or pod_level(tpl) is None:
        return changes
    limit = _quantity(raw["limits"].get("memory")) if isinstance(raw.get("limits"), dict) else None
    request = _quantity(raw["requests"].get("memory")) if isinstance(raw.get("requests"), dict) else None
    base = tpl.spec_path + ("resources",)
    new_request = request + requested if request is not None and requested > 0 else None
    if new_request is not None:
        changes.append(put(base + ("requests", "memory"), amount_exact(new_request)))
    if limit is not None and limit > 0:
        changes.append(put(base + ("limits", "memory"), amount_exact(max(limit + by, new_request or 0))))
    return changes


def amount_exact(value: Fraction) -> str:
    """Bytes in the largest binary unit that divides them (4Gi + 1Gi = 5Gi; 1000M + 1Gi in bytes)."""
    if value.denominator != 1:
        return str(math.ceil(value))
    n = int(value)
    for shift, suffix in ((40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


def shm_mount(tpl: PodTemplate, c: ContainerView, processes: int | None, params: dict) -> Fix:
    """A ``medium: Memory`` emptyDir at /dev/shm for ``c``, its mount, and ``c``'s memory limit raised by as much."""
    size = shm_size(processes, params)
    taken = {str(v.name) for v in tpl.volumes}
    name = SHM_VOLUME
    n = 2
    while name in taken:
        name, n = f"{SHM_VOLUME}-{n}", n + 1
    changes = (
        append(
            tpl.spec_path + ("volumes",),
            {"name": name, "emptyDir": {"medium": "Memory", "sizeLimit": amount_exact(size)}},
        ),
        append(c.path + ("volumeMounts",), {"name": name, "mountPath": "/dev/shm"}),
        *_raised(tpl, [(c, size)], size),
    )
    return Fix(
        f"mount a {amount_exact(size)} medium: Memory emptyDir at /dev/shm",
        UNSAFE,
        _shm_source(processes, params),
        changes,
    )


def _shm_source(processes: int | None, params: dict) -> str:
    per = params.get("shmPerProcess", DEFAULT_SHM_PER_PROCESS)
    count = f"{processes} processes counted" if processes else "one process assumed"
    return f"shmPerProcess ({per}) x {count}, at most shmMax ({params.get('shmMax', DEFAULT_SHM_MAX)})"


def shm_size_limit(
    tpl: PodTemplate, volume_path: tuple, old: Fraction | None, mounted_by: list, processes: int | None, params: dict
) -> Fix | None:
    """A /dev/shm emptyDir's sizeLimit set (or raised), and its containers' memory limits raised by as much."""
    size = shm_size(processes, params)
    if old is not None and size <= old:
        return None
    more = size - (old or 0)
    changes = [put(volume_path + ("emptyDir", "sizeLimit"), amount_exact(size))]
    changes.extend(_raised(tpl, [(c, more) for c in mounted_by if c is not None], more))
    return Fix(
        f"set the /dev/shm emptyDir's sizeLimit to {amount_exact(size)}",
        UNSAFE,
        _shm_source(processes, params),
        tuple(changes),
    )


def memory_size_limit(
    tpl: PodTemplate,
    volume_path: tuple,
    mounted_by: list[ContainerView],
    params: dict,
    floor: tuple[Fraction, str] | None = None,
) -> Fix:
    """A Memory emptyDir's sizeLimit from the ``fixSizeLimit`` param (at least ``floor``: (size, why),
    e.g. the /dev/shm a Ray node's object store needs); mounting containers' memory limits raised."""
    raw = params.get("fixSizeLimit", DEFAULT_SHM_PER_PROCESS)
    size = _quantity(raw) or Fraction(GI)
    source = f"rule param fixSizeLimit ({raw})"
    if floor is not None and floor[0] > size:
        size, source = floor
    changes = [put(volume_path + ("emptyDir", "sizeLimit"), amount_exact(size))]
    changes.extend(_raised(tpl, [(c, size) for c in mounted_by], size))
    return Fix(f"set the emptyDir's sizeLimit to {amount_exact(size)}", UNSAFE, source, tuple(changes))


def disk_size_limit(volume_path: tuple, params: dict) -> Fix:
    raw = params.get("fixSizeLimit", DEFAULT_DISK_SIZE_LIMIT)
    return Fix(
        f"set the emptyDir's sizeLimit to {raw}",
        UNSAFE,
        f"rule param fixSizeLimit ({raw})",
        (put(volume_path + ("emptyDir", "sizeLimit"), raw),),
    )


def ephemeral_request(c: ContainerView, sized: Fraction, unsized: int, params: dict) -> Fix | None:
    """requests.ephemeral-storage = the disk emptyDirs' sizeLimits (``fixSizeLimit`` for each one without)."""
    raw = params.get("fixSizeLimit", DEFAULT_DISK_SIZE_LIMIT)
    each = _quantity(raw)
    if each is None:
        return None
    total = sized + each * unsized
    if total <= 0:
        return None
    source = "the emptyDirs' sizeLimits" + (f" (fixSizeLimit {raw} for those without)" if unsized else "")
    return Fix(
        f"request {amount_exact(total)} ephemeral-storage",
        UNSAFE,
        source,
        (put(c.path + ("resources", "requests", "ephemeral-storage"), amount_exact(total)),),
    )


# --------------------------------------------------------------------------
# Priority and Jobs


CLASS_PARAM = {
    "type": "string",
    "minLength": 1,
    "description": "For the fix: the PriorityClass training pod templates get when the object names "
    "none elsewhere (the cluster's default training class). No fix without it.",
}


def missing_priority(tpl: PodTemplate, refs: list, params: dict, kai: bool, training: bool, ctx: Any) -> Fix | None:
    """priorityClassName = the class the object already names elsewhere (a Kubeflow
    runPolicy.schedulingPolicy.priorityClass), else the ``fixClass`` param for training workloads."""
    if kai:
        _note(ctx, tpl, "missing-priority-class", "under KAI Scheduler the priority is KAI's label")
        return None
    path = tpl.spec_path + ("priorityClassName",)
    for r in refs:
        if r.source == "kubeflow" and isinstance(r.name, str) and r.name:
            return Fix(f"set priorityClassName: {r.name}", UNSAFE, f"the object's {r.field}", (put(path, r.name),))
    name = params.get("fixClass")
    if name and training:
        return Fix(
            f"set priorityClassName: {name}",
            UNSAFE,
            "rule param fixClass (the default training class)",
            (put(path, name),),
        )
    _note(
        ctx,
        tpl,
        "missing-priority-class",
        "the object names no class elsewhere and "
        + (
            "fixClass (the default training class) is not given to a workload that does not train"
            if name
            else "fixClass is not set"
        ),
    )
    return None


def restart_container_resizes(tpl: PodTemplate) -> list[str]:
    """The containers whose resizePolicy asks for RestartContainer, which a restartPolicy: Never pod rejects
    (validateResizePolicy)."""
    out = []
    for c in tpl.all_containers:
        entries = c.data.get("resizePolicy")
        if isinstance(entries, list) and any(
            isinstance(e, dict) and e.get("restartPolicy") == "RestartContainer" for e in entries
        ):
            out.append(c.describe())
    return out


def _never_rejects(restarting: list[str]) -> str:
    return (
        "a podFailurePolicy needs restartPolicy Never, with which the API server rejects the resizePolicy "
        f"RestartContainer of {', '.join(restarting)}"
    )


def restart_policy(path: tuple, tpl: PodTemplate | None = None, has_pfp: bool = True, ctx: Any = None) -> Fix | None:
    restarting = restart_container_resizes(tpl) if tpl is not None else []
    if restarting and not has_pfp:
        return Fix(
            "set restartPolicy: OnFailure",
            UNSAFE,
            f"the Job API (Never would reject the resizePolicy RestartContainer of {', '.join(restarting)})",
            (put(path, "OnFailure"),),
        )
    if restarting and tpl is not None:
        _note(
            ctx,
            tpl,
            "restartPolicy",
            _never_rejects(restarting),
        )
        return None
    return Fix(
        "set restartPolicy: Never",
        UNSAFE,
        "the Job API (Never is valid with or without a podFailurePolicy)",
        (put(path, "Never"),),
    )


IGNORE_DISRUPTION = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}


def ignore_disruption(
    job_path: tuple, tpl: PodTemplate, has_policy: bool, job_spec: Mapping | None = None, ctx: Any = None
) -> Fix | None:
    """A first podFailurePolicy rule that ignores DisruptionTarget (and restartPolicy Never, which a policy needs;
    and podReplacementPolicy Failed, the only one the API server accepts beside a policy). None where Never
    would reject a container's resizePolicy RestartContainer."""
    changes: tuple = (prepend(job_path + ("podFailurePolicy", "rules"), IGNORE_DISRUPTION),)
    if tpl.spec.get("restartPolicy") != "Never":
        restarting = restart_container_resizes(tpl)
        if restarting:
            _note(
                ctx,
                tpl,
                "preemption-consumes-backoff",
                _never_rejects(restarting),
            )
            return None
        changes += (put(tpl.spec_path + ("restartPolicy",), "Never"),)
    if job_spec is not None and job_spec.get("podReplacementPolicy") == "TerminatingOrFailed":
        changes += (put(job_path + ("podReplacementPolicy",), "Failed"),)
    what = "put a DisruptionTarget Ignore rule first in podFailurePolicy.rules"
    return Fix(
        what + ("" if has_policy else " (a new podFailurePolicy)"),
        UNSAFE,
        "the Job API's pod failure policy (preemption sets the DisruptionTarget condition)",
        changes,
    )
