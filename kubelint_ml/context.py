"""Cross-object facts: what every rule may know about the whole run.

Like OPA's ``data``, rules see more than their own object: the
PriorityClasses and Kueue WorkloadPriorityClasses defined among the inputs or
in the profile, the KubeletConfigurations found among the inputs or named in
the profile, and CRDs (for schema validation).

Collecting them must not cost a second parse of every file, and must not
keep every parse tree in memory. A cheap byte scan picks out the files that
can hold such objects; only those are parsed in the first pass, and only
small summaries are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.objects import K8sObject

CONTEXT_KINDS = ("PriorityClass", "WorkloadPriorityClass", "KubeletConfiguration", "CustomResourceDefinition")
_CONTEXT_RE = re.compile(
    rb"""["']?kind["']?\s*:\s*["']?(PriorityClass|WorkloadPriorityClass|KubeletConfiguration|CustomResourceDefinition)\b"""
)


def may_hold_context(data: bytes) -> bool:
    return _CONTEXT_RE.search(data) is not None


@dataclass(slots=True)
class PriorityClassFact:
    name: str
    value: int | None
    global_default: bool
    source: str  # "file:line" or "profile"
    obj: K8sObject | None = None


@dataclass(slots=True)
class KubeletConfigFact:
    source: str  # file path
    data: dict
    obj: K8sObject | None = None


@dataclass
class Facts:
    priority_classes: dict[str, PriorityClassFact] = field(default_factory=dict)
    priority_class_objects: list[PriorityClassFact] = field(default_factory=list)
    workload_priority_classes: dict[str, int | None] = field(default_factory=dict)
    kubelet_configs: list[KubeletConfigFact] = field(default_factory=list)
    crds: list[dict] = field(default_factory=list)
    _cel_objects: list | None = None

    def context_objects(self) -> list[dict]:
        """The context objects themselves (what CEL rules see as ``objects``)."""
        out = [f.obj.data for f in self.priority_class_objects if f.obj is not None]
        out += [k.data for k in self.kubelet_configs]
        return out

    def add_object(self, obj: K8sObject) -> None:
        kind, group = obj.kind, obj.group
        data = obj.data
        name = obj.ref.name
        if kind == "PriorityClass" and group == "scheduling.k8s.io":
            value = data.get("value")
            fact = PriorityClassFact(
                name,
                value if isinstance(value, int) and not isinstance(value, bool) else None,
                data.get("globalDefault") is True,
                f"{obj.file}",
                obj,
            )
            self.priority_class_objects.append(fact)
            if name:
                self.priority_classes.setdefault(name, fact)
        elif kind == "WorkloadPriorityClass" and group == "kueue.x-k8s.io":
            value = data.get("value")
            self.workload_priority_classes[name] = value if isinstance(value, int) and not isinstance(value, bool) else None
        elif kind == "KubeletConfiguration" and group == "kubelet.config.k8s.io":
            self.kubelet_configs.append(KubeletConfigFact(obj.file, data, obj))
        elif kind == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
            self.crds.append(data)

    def add_profile(self, profile: Any) -> None:
        if profile is None:
            return
        for name, value in profile.priority_classes.items():
            self.priority_classes.setdefault(name, PriorityClassFact(name, value, False, "profile"))

    # ------------------------------------------------------------------

    @property
    def defines_priority_classes(self) -> bool:
        return bool(self.priority_classes)

    def priority_value(self, name: str) -> int | None:
        if name == "system-cluster-critical":
            return 2_000_000_000
        if name == "system-node-critical":
            return 2_000_001_000
        fact = self.priority_classes.get(name)
        return fact.value if fact else None

    def highest_priority(self) -> int | None:
        values = [f.value for f in self.priority_classes.values() if f.value is not None]
        return max(values) if values else None

    def summary(self) -> dict:
        """Picklable, small: what worker processes need."""
        return {
            "priority_classes": {k: (v.value, v.global_default, v.source) for k, v in self.priority_classes.items()},
        }
