"""Node facts for the OOM-kill and cgroup rules (docs/k8s-facts.md §6).

Which KubeletConfiguration a node runs, and with which node facts (OS,
cgroup version, kubelet version):

* a node pool uses its own ``kubeletConfig``, else the profile's
  ``kubeletConfig``; when neither names a file, the one KubeletConfiguration
  among the inputs that no pool or profile names, if there is exactly one;
  with none the kubelet runs on its defaults, with several it is unknown;
* a pool's OS, cgroup version and kubelet version fall back to the
  profile-level ones (the kubelet version to ``kubernetesVersion``);
* the nodes of a KubeletConfiguration are the pools that use it by those
  rules, or the profile-level nodes when no pool does.

Files are matched by their real path, so a config named in the profile
matches the same file given on the command line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kubelint_ml.input.sources import file_key as real
from kubelint_ml.k8s.nodes import pools_for_pod
from kubelint_ml.k8s.version import parse_version
from kubelint_ml.records import Record

GROUP_KILL_MIN = (1, 28)  # memory.oom.group set on cgroup v2
SINGLE_PROCESS_MIN = (1, 32)  # singleProcessOOMKill field
FAIL_CGROUP_V1_MIN = (1, 31)  # failCgroupV1 field
FAIL_CGROUP_V1_DEFAULT_TRUE = (1, 35)  # failCgroupV1 defaults to true

_NONE = "none"  # no KubeletConfiguration applies: kubelet defaults
_UNKNOWN = "unknown"  # cannot tell which one applies


class Nodes(Record):
    """One group of nodes with the same facts."""

    names: list[str]  # node pool names; empty for the profile-level nodes
    os: str | None
    cgroup: int | None
    version: tuple[int, int] | None
    version_text: str | None
    config: dict | None  # the KubeletConfiguration in effect (None: defaults or unknown)
    config_known: bool
    __slots__ = _fields = ("names", "os", "cgroup", "version", "version_text", "config", "config_known")

    def __init__(
        self,
        names: list[str],
        os: str | None,
        cgroup: int | None,
        version: tuple[int, int] | None,
        version_text: str | None,
        config: dict | None = None,
        config_known: bool = True,
    ) -> None:
        self.names = names
        self.os = os
        self.cgroup = cgroup
        self.version = version
        self.version_text = version_text
        self.config = config
        self.config_known = config_known

    @property
    def linux(self) -> bool:
        return self.os != "windows"

    def label(self) -> str:
        if not self.names:
            return "the profile's nodes"
        if len(self.names) == 1:
            return f"node pool '{self.names[0]}'"
        return "node pools " + ", ".join(f"'{n}'" for n in self.names)

    def facts_text(self) -> str:
        parts = []
        if self.os and self.os != "linux":
            parts.append(self.os)
        if self.cgroup:
            parts.append(f"cgroup v{self.cgroup}")
        if self.version_text:
            parts.append(f"kubelet {self.version_text}")
        return ", ".join(parts)

    def describe(self) -> str:
        facts = self.facts_text()
        return f"{self.label()} ({facts})" if facts else self.label()


def configs(ctx: Any) -> list[Any]:
    """The known KubeletConfigFacts (each file once: a profile file that is also an input is read once)."""
    facts = getattr(ctx, "facts", None)
    return list(getattr(facts, "kubelet_configs", None) or [])


def _named(profile: Any) -> set[str]:
    out: set[str] = set()
    if profile is None:
        return out
    for path in profile.kubelet_config_paths():
        r = real(path)
        if r:
            out.add(r)
    return out


def config_for(pool: Any, ctx: Any) -> tuple[Any, str | None]:
    """The KubeletConfigFact a pool (None: the profile-level nodes) runs,
    or (None, "none" | "unknown")."""
    profile = ctx.profile
    path = (getattr(pool, "kubelet_config", None) if pool is not None else None) or (
        profile.kubelet_config if profile is not None else None
    )
    known = configs(ctx)
    if path:
        want = real(path)
        for k in known:
            if real(k.source) == want:
                return k, None
        return None, _UNKNOWN
    named = _named(profile)
    unnamed = [k for k in known if real(k.source) not in named]
    if len(unnamed) == 1:
        return unnamed[0], None
    return None, (_NONE if not unnamed else _UNKNOWN)


def _nodes(pool: Any, ctx: Any) -> Nodes:
    profile = ctx.profile
    version_text = profile.effective_kubelet_version(pool) if profile is not None else None
    os_name = (getattr(pool, "os", None) if pool is not None else None) or (profile.os if profile else None)
    cgroup = (getattr(pool, "cgroup_version", None) if pool is not None else None) or (
        profile.cgroup_version if profile else None
    )
    return Nodes([pool.name] if pool is not None else [], os_name, cgroup, parse_version(version_text), version_text)


def _merge(groups: Iterable[tuple[Nodes, Any]]) -> list[tuple[Nodes, Any]]:
    """Pools with the same facts and config become one group."""
    out: dict[tuple, tuple[Nodes, Any]] = {}
    for nodes, fact in groups:
        key = (nodes.os, nodes.cgroup, nodes.version, nodes.version_text, id(fact), nodes.config_known)
        if key in out:
            out[key][0].names.extend(nodes.names)
        else:
            out[key] = (nodes, fact)
    return list(out.values())


def nodes_for_config(fact_obj: Any, ctx: Any) -> list[Nodes]:
    """The node groups that run the KubeletConfiguration object ``fact_obj``."""
    profile = ctx.profile
    pools = list(profile.node_pools) if profile is not None else []
    mine = real(fact_obj.file)
    used = []
    for pool in pools:
        fact, _ = config_for(pool, ctx)
        if fact is not None and (fact.obj is fact_obj or (mine is not None and real(fact.source) == mine)):
            used.append((_nodes(pool, ctx), None))
    if not used:
        return [_nodes(None, ctx)]
    return [n for n, _ in _merge(used)]


def cgroup_v1_nodes(fact_obj: Any, ctx: Any) -> tuple[list[Nodes], list[Nodes]]:
    """(Linux node groups on cgroup v1, Linux node groups whose cgroup version is unknown) running a config."""
    v1: list[Nodes] = []
    unknown: list[Nodes] = []
    for nodes in nodes_for_config(fact_obj, ctx):
        if not nodes.linux:
            continue
        if nodes.cgroup is None:
            unknown.append(nodes)
        elif nodes.cgroup == 1:
            v1.append(nodes)
    return v1, unknown


def nodes_for_pod(pod_spec: Any, ctx: Any) -> list[Nodes]:
    """The node groups a pod may run on, each with its KubeletConfiguration."""
    profile = ctx.profile
    pools = list(profile.node_pools) if profile is not None else []
    if pools:
        targets: Sequence[Any] = pools_for_pod(pod_spec, pools)
    else:
        targets = [None]
    groups = []
    for pool in targets:
        nodes = _nodes(pool, ctx)
        fact, why = config_for(pool, ctx)
        nodes.config = fact.data if fact is not None else None
        nodes.config_known = why != _UNKNOWN
        groups.append((nodes, fact))
    return [n for n, _ in _merge(groups)]


def field(data: Any, name: str) -> Any:
    return data.get(name) if isinstance(data, dict) else None


def at_least(version: tuple[int, int] | None, minimum: tuple[int, int]) -> bool:
    return version is not None and version >= minimum


def oom_mode(nodes: Nodes) -> tuple[str | None, str]:
    """("group" | "single" | None, why): the OOM kill mode of a container on
    these nodes; None with the missing fact when it cannot be told."""
    if not nodes.linux:
        return "single", "not Linux"
    if nodes.cgroup is None:
        return None, "no cgroup version in the profile"
    if nodes.cgroup == 1:
        return "single", "cgroup v1"
    if nodes.version is None:
        return None, "no kubelet or Kubernetes version in the profile"
    if nodes.version < GROUP_KILL_MIN:
        return "single", "kubelet older than 1.28"
    if nodes.version < SINGLE_PROCESS_MIN:
        return "group", "kubelet 1.28-1.31 always sets memory.oom.group"
    if not nodes.config_known:
        return None, "cannot tell which KubeletConfiguration the nodes run"
    value = field(nodes.config, "singleProcessOOMKill")
    if value is True:
        return "single", "singleProcessOOMKill: true"
    return "group", "singleProcessOOMKill: false" if value is False else "singleProcessOOMKill unset (false)"


def config_name(obj: Any) -> str:
    """``KubeletConfiguration in nodes/a100.yaml`` (these rarely have a name)."""
    if obj.ref.name:
        return f"{obj.ref.display()} ({obj.file})"
    return f"KubeletConfiguration in {obj.file}"
