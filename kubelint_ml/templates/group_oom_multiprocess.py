"""Multi-process containers on nodes where an OOM kills the whole container.

On cgroup v2 a kubelet 1.28+ sets ``memory.oom.group`` on every container
unless its KubeletConfiguration says ``singleProcessOOMKill: true`` (1.32+):
one DataLoader worker or torchrun child that the kernel OOM-kills takes
every process of the container with it (docs/k8s-facts.md §6).

Decisions:

* App containers and sidecars are checked; plain init containers are not
  (they run to completion before the workload, and a kill there fails the
  same way with or without group kill).
* An MPIJob Launcher (unless ``runLauncherAsWorker: true``) and a Trainer
  runtime's ``launcher`` job under an MPI policy (unless
  ``runLauncherAsNode: true``) are skipped: their ``mpirun`` line describes
  the ranks, which run in the worker pods.
* ``mpirun``/``mpiexec``/``horovodrun`` with a host list or hostfile
  (``--host``, ``-H``, ``--hostfile``, ``-machinefile``..., or Open MPI's
  default-hostfile env) starts its ranks in other pods over ssh: its rank
  count is not a signal for its own container (Volcano's ``mpimaster``).
* A container's own signals are reported once per container, at the first
  one. A workload-level signal (``nprocPerNode``, ``slotsPerWorker``, ...)
  is reported once per object, in the first template it applies to that
  has no container finding, naming every such template.
* The nodes are the profile's node pools the pod may schedule on; the
  finding names those in group-kill mode. Without the facts to tell (cgroup
  version, kubelet version, which KubeletConfiguration) the template is
  skipped.
"""

from __future__ import annotations

from typing import Any

from kubelint_ml.engine.api import Hit, SkipUnit, Unit, is_training_workload
from kubelint_ml.input.objects import dig
from kubelint_ml.input.workloads import ContainerView, PodTemplate
from kubelint_ml.k8s.signals import Signal
from kubelint_ml.lazyre import LazyPattern
from kubelint_ml.records import Record
from kubelint_ml.templates._common import signals_of, template_signals
from kubelint_ml.templates._kubelet import SINGLE_PROCESS_MIN, Nodes, nodes_for_pod, oom_mode

UNIT = "podTemplate"
DEFAULTS = {"containers": ["container", "sidecar"]}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "containers": {
            "type": "array",
            "items": {"enum": ["container", "initContainer", "sidecar"]},
            "minItems": 1,
        }
    },
}

_MAX_SHOWN = 3
# Signals of processes that train (others: servers, build tools, shell jobs).
_TRAINING_SIGNALS = {"torchrun", "dataloader", "deepspeed", "accelerate", "mpi", "multiprocessing", "trainjob"}
_REMOTE_RANKS = LazyPattern(r"(?:^|[\s;&|])(?:--?(?:host|hosts|hostfile|machinefile)|-H)(?:[=\s]|$)")
_HOSTFILE_ENV = ("OMPI_MCA_orte_default_hostfile", "PRTE_MCA_prte_default_hostfile", "OMPI_MCA_rmaps_base_hostfile")


class _Eval(Record):
    containers: list[tuple[ContainerView, list[Signal]]]
    workload: list[Signal]
    group: list[Nodes]  # nodes in group-kill mode
    skip: str | None
    __slots__ = _fields = ("containers", "workload", "group", "skip")

    def __init__(
        self,
        containers: list[tuple[ContainerView, list[Signal]]] | None = None,
        workload: list[Signal] | None = None,
        group: list[Nodes] | None = None,
        skip: str | None = None,
    ) -> None:
        self.containers = [] if containers is None else containers
        self.workload = [] if workload is None else workload
        self.group = [] if group is None else group
        self.skip = skip


def _ranks_elsewhere(tpl: PodTemplate) -> bool:
    obj = tpl.obj
    if obj.kind == "MPIJob" and tpl.role == "Launcher":
        return dig(obj.data, "spec", "runLauncherAsWorker") is not True
    if obj.kind in ("TrainingRuntime", "ClusterTrainingRuntime") and tpl.role == "launcher":
        mpi = dig(obj.data, "spec", "mlPolicy", "mpi")
        return isinstance(mpi, dict) and mpi.get("runLauncherAsNode") is not True
    return False


def _ranks_remote(container: dict) -> bool:
    """An MPI launcher given other hosts: its ranks run outside this container."""
    env = container.get("env")
    if isinstance(env, list) and any(isinstance(e, dict) and e.get("name") in _HOSTFILE_ENV for e in env):
        return True
    for key in ("command", "args"):
        value = container.get(key)
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        if any(isinstance(v, str) and _REMOTE_RANKS.search(v) for v in items):
            return True
    return False


def _evaluate(tpl: PodTemplate, roles: tuple[str, ...], ctx: Any) -> _Eval:
    key = ("group-oom", roles)
    found = tpl.cache.get(key)
    if found is not None:
        return found
    ev = _Eval()
    tpl.cache[key] = ev
    if _ranks_elsewhere(tpl):  # (the engine never gives a rule a broken template)
        return ev
    groups = nodes_for_pod(tpl.spec, ctx)
    modes = [(nodes, *oom_mode(nodes)) for nodes in groups]
    if not ctx.wants_notes and not any(mode == "group" for _, mode, _ in modes):
        return ev  # no finding either way, and the "skipped" note is not wanted: signals are not needed
    for c in tpl.all_containers:
        if c.role in roles:
            sigs = signals_of(c, tpl)
            if any(sig.kind == "mpi" for sig in sigs) and _ranks_remote(c.data):
                sigs = [sig for sig in sigs if sig.kind != "mpi"]
            if sigs:
                ev.containers.append((c, sigs))
    ev.workload = template_signals(tpl)
    if not ev.containers and not ev.workload:
        return ev
    if not groups:
        ev.skip = "the pod matches none of the profile's node pools"
        return ev
    unknown: list[str] = []
    for nodes, mode, why in modes:
        if mode == "group":
            ev.group.append(nodes)
        elif mode is None:
            unknown.append(f"{nodes.label()}: {why}")
    if not ev.group and unknown:
        ev.skip = "; ".join(unknown)
    return ev


def _shown(sigs: list[Signal]) -> str:
    texts = list(dict.fromkeys(s.text for s in sigs))
    out = ", ".join(f"`{t}`" for t in texts[:_MAX_SHOWN])
    if len(texts) > _MAX_SHOWN:
        out += f" and {len(texts) - _MAX_SHOWN} more"
    counts = [s.processes for s in sigs if s.processes and str(s.processes) not in s.text]
    if counts:
        out += f"; {max(counts)} per pod"
    return out


def _remedy(groups: list[Nodes]) -> str:
    old = [n for n in groups if n.version is not None and n.version < SINGLE_PROCESS_MIN]
    new = [n for n in groups if not any(n is o for o in old)]
    parts = []
    if new:
        parts.append(
            "set singleProcessOOMKill: true in the KubeletConfiguration of " + " and ".join(n.label() for n in new)
        )
    if old:
        parts.append(
            "upgrade "
            + " and ".join(n.label() for n in old)
            + " to kubelet 1.32+ and set singleProcessOOMKill: true there"
        )
    return " or ".join(parts)


def _message(where: str, what: str, sigs: list[Signal], groups: list[Nodes], victim: str) -> dict[str, str]:
    """The short message and the detail of a hit."""
    nodes = "; ".join(n.describe() for n in groups)
    first = sigs[0].text if len(sigs[0].text) <= 40 else sigs[0].text[:37] + "..."
    more = f" (+{len(sigs) - 1} more)" if len(sigs) > 1 else ""
    message = f"{what} runs `{first}`{more} under group OOM kill"
    return dict(
        message=message,
        detail=f"{where}: {what} starts several processes ({_shown(sigs)}) and runs on {nodes}, where group OOM kill is "
        "in effect: when the kernel OOM-kills one of them, memory.oom.group kills every process in the container, "
        f"{victim} included. Give resources.limits.memory headroom for all of them, or {_remedy(groups)}",
    )


def _workload_hit(
    tpl: PodTemplate, sig: Signal, templates: list[PodTemplate], roles: tuple[str, ...], ctx: Any, training: bool
) -> Hit | None:
    """One finding per object for a workload-level signal: in the first
    template it applies to (without a container finding), naming them all."""
    sharing = []
    for t in templates:
        other = _evaluate(t, roles, ctx)
        if other.group and not other.containers and sig in other.workload:
            sharing.append(t)
    if not sharing or sharing[0] is not tpl:
        return None
    names = [t.role for t in sharing if t.role]
    where = tpl.obj.ref.display() + (f" ({', '.join(names)})" if names else "")
    groups = list({n.describe(): n for t in sharing for n in _evaluate(t, roles, ctx).group}.values())
    what, victim, container = "each pod's training container", "the trainer" if training else "the main process", None
    if sig.kind == "ray":
        ray = tpl.containers[0] if tpl.containers else None  # KubeRay runs Ray in the first container
        what = ray.describe() if ray else "the Ray container"
        container = ray.name if ray else None
        victim = "the raylet" + (" and the GCS server (the cluster's control plane)" if tpl.role == "head" else "")
    return Hit(sig.path, **_message(where, what, [sig], groups, victim), container=container, at_value=True)


def check(unit: Unit, params: dict, ctx) -> list[Hit]:
    out: list[Hit] = []
    tpl = unit.tpl
    roles = tuple(params["containers"])
    ev = _evaluate(tpl, roles, ctx)
    if not ev.containers and not ev.workload:
        return out
    if ev.skip:
        raise SkipUnit(ev.skip)
    if not ev.group:
        return out
    templates = [t for t in unit.templates() if not t.broken]
    training = is_training_workload(tpl.obj, templates)
    for c, sigs in ev.containers:
        # Group kill stays inside one container: a sidecar's takes down the sidecar.
        trainer = training and c.role == "container" and any(s.kind in _TRAINING_SIGNALS for s in sigs)
        victim = "the trainer" if trainer else "the main process"
        out.append(
            Hit(
                c.path + sigs[0].path,
                **_message(tpl.describe(), c.describe(), sigs, ev.group, victim),
                container=c.name,
                at_value=True,
            )
        )
    if ev.containers:
        return out
    for sig in ev.workload:
        hit = _workload_hit(tpl, sig, templates, roles, ctx, training)
        if hit is not None:
            out.append(hit)
    return out
