"""A multi-process accelerator container left with the runtime's 64Mi /dev/shm."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.input.workloads import ContainerView, PodTemplate
from kubelint_ml.k8s.quantity import QuantityError, parse_manifest_quantity
from kubelint_ml.k8s.resources import is_accelerator_resource
from kubelint_ml.k8s.signals import Signal
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._common import accelerators, requests_limits, signals_of, template_signals
from kubelint_ml.templates._volumes import is_kuberay_pod, shm_mount, size, volume_named

UNIT = "container"
DEFAULTS = {
    "kinds": [
        "torchrun",
        "dataloader",
        "deepspeed",
        "accelerate",
        "mpi",
        "trainjob",
        "multiprocessing",
        "model-parallel",
    ],
    "tooSmall": "64Mi",
}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "kinds": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Signal kinds (kubelint_ml.k8s.signals) that mean shared-memory use.",
        },
        "tooSmall": {
            "type": ["string", "integer"],
            "description": "A /dev/shm emptyDir whose sizeLimit is at most this is reported as too small "
            "(the container runtime's default /dev/shm is 64Mi).",
        },
        **_fixes.SHM_PARAMS,
    },
}


_RUNTIME_DEFAULT = 64 << 20  # bytes: the /dev/shm containerd, CRI-O and Docker give a container


def _wants_accelerator(c: ContainerView) -> bool:
    return any(
        v.numerator > 0 and is_accelerator_resource(n) for values in requests_limits(c) for n, v in values.items()
    )


def _workload_targets(tpl: PodTemplate) -> list[ContainerView]:
    """Containers a workload-level setting (nprocPerNode, slotsPerWorker...)
    applies to: the app containers that use accelerators, else all app containers."""
    found = tpl.cache.get("shm:targets")
    if found is None:
        found = [c for c in tpl.containers if _wants_accelerator(c)] or list(tpl.containers)
        tpl.cache["shm:targets"] = found
    return found


def _nccl_shm_disabled(c: ContainerView) -> bool:
    """``NCCL_SHM_DISABLE`` set to 1 in the container's env: NCCL does not use /dev/shm."""
    env = c.data.get("env")
    if not isinstance(env, list):
        return False
    return any(
        isinstance(e, dict) and e.get("name") == "NCCL_SHM_DISABLE" and str(e.get("value")).strip() == "1" for e in env
    )


def _signals(unit: Unit, kinds: set[str]) -> list[Signal]:
    """The container's relevant signals, then the workload's when they apply to it (a model-parallel
    server's only when NCCL may use /dev/shm)."""
    tpl, c = unit.tpl, unit.container
    if "model-parallel" in kinds and _nccl_shm_disabled(c):
        kinds = kinds - {"model-parallel"}
    out = [s for s in signals_of(c, tpl) if s.kind in kinds]
    targets = tpl.cache.get("shm:target-ids")
    if targets is None:  # a set: this runs once per container
        targets = tpl.cache["shm:target-ids"] = {id(t) for t in _workload_targets(tpl)}
    if id(c) in targets:
        out += [s for s in template_signals(tpl) if s.kind in kinds]
    return out


def _describe(signals: list[Signal]) -> str:
    s = signals[0]
    text = f"'{s.text}'"
    if s.processes is not None:
        text += f" ({s.processes} {'workers' if s.kind == 'dataloader' else 'processes'})"
    if len(signals) > 1:
        text += f" and {len(signals) - 1} more multi-process setting{'s' if len(signals) > 2 else ''}"
    return text


def _brief(signals: list[Signal]) -> str:
    """``8 processes (--nproc_per_node=8)``, or the first signal quoted when it says no count."""
    s = signals[0]
    # whole up to 48 characters (`--tensor-parallel-size $(TENSOR_PARALLEL_SIZE)`), else cut between words
    text = s.text if len(s.text) <= 48 else (s.text[:45].rsplit(" ", 1)[0] or s.text[:45]) + "..."
    if s.processes is None:
        return f"'{text}'"
    return f"{s.processes} {'workers' if s.kind == 'dataloader' else 'processes'} ({text})"


_BUS_ERROR = '"Bus error ... insufficient shared memory (shm)"'
_WHY = {
    "dataloader": f"DataLoader workers pass batches through it and fail with {_BUS_ERROR}",
    "model-parallel": "the server starts one worker per GPU of the model-parallel group, and{collectives} "
    "shared-memory transport between them fails once it is full (NCCL_SHM_DISABLE=1 turns that transport off)",
    "mpi": "the ranks in the pod share it for MPI's{collectives_and} intra-node shared-memory transports, which fail "
    "once it is full",
    "multiprocessing": f"processes that share tensors or arrays through it fail with {_BUS_ERROR} once it is full",
}
_LAUNCH = (
    "the processes it starts share it for intra-node collectives{collectives_of} and their "
    f"DataLoader workers, which fail with {_BUS_ERROR} or shared-memory allocation errors once it is full"
)
# The collective library whose shared-memory transport the pod's accelerator uses.
_COLLECTIVES = (("nvidia.com/", "NCCL"), ("amd.com/", "RCCL"))


def _why(signals: list[Signal], tpl: PodTemplate) -> str:
    library = next(
        (name for resource in accelerators(tpl) for prefix, name in _COLLECTIVES if resource.startswith(prefix)), None
    )
    return _WHY.get(signals[0].kind, _LAUNCH).format(
        collectives_and=f" and {library}'s" if library else "",
        collectives=f" {library}'s" if library else " the collective library's",
        collectives_of=f" ({library}'s shared-memory transport)" if library else "",
    )


def check(unit: Unit, params: dict, ctx) -> list[Hit]:
    out: list[Hit] = []
    tpl, c = unit.tpl, unit.container
    if is_kuberay_pod(tpl):
        return out  # KubeRay mounts a Memory emptyDir at /dev/shm in the Ray container
    if tpl.spec.get("hostIPC") is True:
        return out  # the host's IPC namespace, and its /dev/shm
    # The volume first: most containers cannot be reported whatever they run, and
    # reading a container's signals (its shell commands) is the costly part.
    mount = shm_mount(c)
    if mount is None:
        signals = _signals(unit, set(params["kinds"]))
        if signals:
            out.append(
                Hit(
                    c.path + ("volumeMounts",),
                    f"{c.describe()} runs {_brief(signals)} on the default 64Mi /dev/shm",
                    detail=f"{tpl.describe()}: {c.describe()} runs {_describe(signals)} on an accelerator pod but mounts "
                    f"nothing at /dev/shm, so it gets the container runtime's 64Mi default: {_why(signals, tpl)}. Mount an "
                    f"emptyDir {{medium: Memory, sizeLimit: <size>}} volume at /dev/shm (its pages count against the "
                    f"memory limit)",
                    fix=_fixes.shm_mount(tpl, c, max((s.processes or 0 for s in signals), default=0) or None, params),
                )
            )
        return out
    _, name = mount
    volume = volume_named(tpl, name)
    ed = volume.data.get("emptyDir") if volume is not None else None
    if not isinstance(ed, dict) or ed.get("sizeLimit") is None:
        return out  # hostPath /dev/shm, an unbounded emptyDir, or another volume: not the 64Mi default
    try:
        limit = parse_manifest_quantity(ed["sizeLimit"]).value
        floor = parse_manifest_quantity(params["tooSmall"]).value
    except QuantityError:
        return out
    if limit <= 0 or limit > floor:
        return out  # 0 sets no limit
    signals = _signals(unit, set(params["kinds"]))
    if not signals:
        return out
    if limit <= _RUNTIME_DEFAULT:
        compared = "no more than the container runtime's 64Mi default"
    else:
        compared = f"at or below the rule's {size(floor)} threshold"
    out.append(
        Hit(
            volume.path + ("emptyDir", "sizeLimit"),
            f"{c.describe()} runs {_brief(signals)} on a {size(limit)} /dev/shm",
            detail=f"{tpl.describe()}: {c.describe()} runs {_describe(signals)} on an accelerator pod, but the emptyDir "
            f"'{name}' it mounts at /dev/shm has sizeLimit {size(limit)}, {compared}: {_why(signals, tpl)}. Raise "
            f"sizeLimit (several GiB for multi-GPU training; it counts against the memory limit)",
            at_value=True,
            fix=_fixes.shm_size_limit(
                tpl, volume.path, limit, [c], max((s.processes or 0 for s in signals), default=0) or None, params
            ),
        )
    )
    return out
