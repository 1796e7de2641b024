"""Which pods belong to which workload template: the mapping from a manifest to its series.

Pods are known by what Prometheus has about them: their name (the ``pod``
label of cAdvisor, DCGM and kube-state-metrics series), their labels
(kube-state-metrics' ``kube_pod_labels``, which exposes only the labels its
``--metric-labels-allowlist`` names, as ``label_<name>``) and their owner
(``kube_pod_owner``). For each kind, the labels its controller puts on pods
decide when the pod's series carries them; else the owner; else the pod name,
which every controller builds the same way:

======================  ==========================================================  =====================================
kind                    labels (kube_pod_labels)                                    pod name
======================  ==========================================================  =====================================
Pod                     (its name)                                                  ``<name>``
Job                     ``batch.kubernetes.io/job-name`` or ``job-name`` = name     ``<name>-[<index>-]<random>``
CronJob                 the job name is ``<name>-<schedule time>``: runs pooled      ``<name>-<digits>-[<index>-]<random>``
Kubeflow v1 jobs        ``training.kubeflow.org/job-name`` + ``replica-type``        ``<name>-<replica type>-<index>``
JobSet                  ``jobset.sigs.k8s.io/jobset-name`` + ``replicatedjob-name``  ``<name>-<replicated job>-<i>-[<j>-]<random>``
RayCluster, RayService  ``ray.io/cluster`` + ``ray.io/group`` (head: node-type)      ``<name>-head-<random>``, ``<name>-<group>-worker-<random>``
Volcano Job             ``volcano.sh/job-name`` + ``volcano.sh/task-spec``           ``<name>-<task>-<index>``
LeaderWorkerSet         ``leaderworkerset.sigs.k8s.io/name`` + ``worker-index``      ``<name>-<group>`` (leader), ``<name>-<group>-<index>``
Deployment              owner ReplicaSet ``<name>-<pod-template-hash>``               ``<name>-<hash>-<random>``
StatefulSet             owner StatefulSet                                           ``<name>-<ordinal>``
ReplicaSet, DaemonSet   owner                                                       ``<name>-<random>``
======================  ==========================================================  =====================================

Entries under ``usage.workloads`` in the config replace this for one workload
(and optionally one template): a ``pods`` regex on the pod name and/or
``labels`` the pod must carry (through kube_pod_labels).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.usage.model import UsageError

_RANDOM = r"[a-z0-9]{5}"
_HASH = r"[a-z0-9]{1,10}"


def ksm_label(name: str) -> str:
    """kube-state-metrics' name for a pod label: ``label_`` and the name with every character
    other than a letter, digit or underscore made ``_``."""
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", name)


@dataclass(slots=True)
class Pod:
    name: str
    labels: dict[str, str] | None = None  # kube_pod_labels' label_* labels; None: no series
    owners: list[tuple[str, str]] = field(default_factory=list)  # (owner_kind, owner_name)


@dataclass(slots=True)
class Matcher:
    """Pods of one workload template.

    ``labels``: alternatives, each a list of (ksm label, value regex); the first
    whose labels all appear on a pod's kube_pod_labels series decides. Else
    ``owner`` (kind, name regex) decides for a pod with a kube_pod_owner series.
    Else the pod name must match ``name``.
    """

    name: re.Pattern[str] | None
    labels: list[list[tuple[str, re.Pattern[str]]]] = field(default_factory=list)
    owner: tuple[str, re.Pattern[str]] | None = None
    how: str = ""

    def matches(self, pod: Pod) -> bool:
        if pod.labels is not None:
            for alternative in self.labels:
                if all(k in pod.labels for k, _ in alternative):
                    return all(rx.fullmatch(pod.labels[k]) for k, rx in alternative)
        if self.owner is not None and pod.owners:
            kind, rx = self.owner
            return any(k == kind and rx.fullmatch(n) for k, n in pod.owners)
        return bool(self.name is not None and self.name.fullmatch(pod.name))


def _lit(text: str) -> str:
    return re.escape(text)


def _exact(text: str, ignore_case: bool = False) -> re.Pattern[str]:
    return re.compile(_lit(text), re.IGNORECASE if ignore_case else 0)


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _job(name: str, role: str) -> Matcher:
    job = _exact(name)
    return Matcher(
        _c(_lit(name) + rf"-(\d+-)?{_RANDOM}"),
        [[(ksm_label("batch.kubernetes.io/job-name"), job)], [(ksm_label("job-name"), job)]],
        ("Job", job),
        "Job pods",
    )


def _cronjob(name: str, role: str) -> Matcher:
    job = _c(_lit(name) + r"-\d+")
    return Matcher(
        _c(_lit(name) + rf"-\d+-(\d+-)?{_RANDOM}"),
        [[(ksm_label("batch.kubernetes.io/job-name"), job)], [(ksm_label("job-name"), job)]],
        ("Job", job),
        "the pods of every run",
    )


def _kubeflow(name: str, role: str) -> Matcher:
    rtype = _exact(role.lower(), ignore_case=True)
    return Matcher(
        _c(_lit(name) + "-" + _lit(role.lower()) + r"-\d+"),
        [
            [
                (ksm_label("training.kubeflow.org/job-name"), _exact(name)),
                (ksm_label("training.kubeflow.org/replica-type"), rtype),
            ],
            [(ksm_label("job-name"), _exact(name)), (ksm_label("replica-type"), rtype)],
        ],
        None,
        f"replica type {role}",
    )


def _jobset(name: str, role: str) -> Matcher:
    return Matcher(
        _c(_lit(name) + "-" + _lit(role) + rf"-\d+-(\d+-)?{_RANDOM}"),
        [
            [
                (ksm_label("jobset.sigs.k8s.io/jobset-name"), _exact(name)),
                (ksm_label("jobset.sigs.k8s.io/replicatedjob-name"), _exact(role)),
            ]
        ],
        None,
        f"replicated job {role}",
    )


def _ray(name: str, role: str) -> Matcher:
    if role == "head":
        return Matcher(
            _c(_lit(name) + f"-head-{_RANDOM}"),
            [[(ksm_label("ray.io/cluster"), _exact(name)), (ksm_label("ray.io/node-type"), _exact("head"))]],
            None,
            "head",
        )
    return Matcher(
        _c(_lit(name) + "-(" + _lit(role) + "-worker|worker-" + _lit(role) + f")-{_RANDOM}"),
        [[(ksm_label("ray.io/cluster"), _exact(name)), (ksm_label("ray.io/group"), _exact(role))]],
        None,
        f"worker group {role}",
    )


def _volcano(name: str, role: str) -> Matcher:
    return Matcher(
        _c(_lit(name) + "-" + _lit(role) + r"-\d+"),
        [[(ksm_label("volcano.sh/job-name"), _exact(name)), (ksm_label("volcano.sh/task-spec"), _exact(role))]],
        None,
        f"task {role}",
    )


def _lws(name: str, role: str) -> Matcher:
    leader = role == "leader"
    return Matcher(
        _c(_lit(name) + (r"-\d+" if leader else r"-\d+-\d+")),
        [
            [
                (ksm_label("leaderworkerset.sigs.k8s.io/name"), _exact(name)),
                (ksm_label("leaderworkerset.sigs.k8s.io/worker-index"), _c("0" if leader else r"[1-9]\d*")),
            ]
        ],
        None,
        role,
    )


def _deployment(name: str, role: str) -> Matcher:
    return Matcher(_c(_lit(name) + f"-{_HASH}-{_RANDOM}"), [], ("ReplicaSet", _c(_lit(name) + f"-{_HASH}")), "")


def _owned(kind: str, suffix: str) -> Callable[[str, str], Matcher]:
    def build(name: str, role: str) -> Matcher:
        return Matcher(_c(_lit(name) + suffix), [], (kind, _exact(name)), "")

    return build


def _pod(name: str, role: str) -> Matcher:
    return Matcher(_exact(name))


DEFAULTS: dict[tuple[str, str], Callable[[str, str], Matcher]] = {
    ("", "Pod"): _pod,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cronjob,
    ("jobset.x-k8s.io", "JobSet"): _jobset,
    ("ray.io", "RayCluster"): _ray,
    ("ray.io", "RayService"): _ray,
    ("batch.volcano.sh", "Job"): _volcano,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): _lws,
    ("apps", "Deployment"): _deployment,
    ("apps", "StatefulSet"): _owned("StatefulSet", r"-\d+"),
    ("apps", "ReplicaSet"): _owned("ReplicaSet", f"-{_RANDOM}"),
    ("apps", "DaemonSet"): _owned("DaemonSet", f"-{_RANDOM}"),
}
for _kind in ("TFJob", "PyTorchJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"):
    DEFAULTS[("kubeflow.org", _kind)] = _kubeflow


@dataclass(frozen=True, slots=True)
class Override:
    kind: str
    name: str
    namespace: str | None
    template: str | None
    matcher: Matcher


def overrides_from_config(entries: list[dict[str, Any]]) -> list[Override]:
    out = []
    for i, e in enumerate(entries or []):
        where = f"usage.workloads[{i}]"
        try:
            name_rx = re.compile(e["pods"]) if "pods" in e else None
        except re.error as err:
            raise UsageError(f"{where}.pods: not a regular expression: {err}") from None
        labels = []
        for k, v in (e.get("labels") or {}).items():
            labels.append((ksm_label(str(k)), _exact(str(v))))
        # Without a name pattern, only the labels decide; a pod without them does not match.
        matcher = Matcher(name_rx if name_rx is not None else None, [labels] if labels else [], None, "config")
        if labels and name_rx is None:
            matcher.name = re.compile(r"(?!)")
        out.append(Override(e["kind"], e["name"], e.get("namespace"), e.get("template"), matcher))
    return out


def matcher_for(
    namespace: str, group: str, kind: str, name: str, role: str, overrides: list[Override]
) -> Matcher | None:
    for o in overrides:
        okind = o.kind.split("/")[-1]
        ogroup = o.kind.split("/")[0] if "/" in o.kind else None
        if okind != kind or (ogroup is not None and ogroup != group) or o.name != name:
            continue
        if o.namespace is not None and o.namespace != namespace:
            continue
        if o.template is not None and o.template != role:
            continue
        return o.matcher
    build = DEFAULTS.get((group, kind))
    return build(name, role) if build else None


def pods_from_series(label_series: list[dict], owner_series: list[dict]) -> dict[str, Pod]:
    """Pods by name from kube_pod_labels and kube_pod_owner series (as /api/v1/series gives them)."""
    pods: dict[str, Pod] = {}
    for s in label_series:
        name = s.get("pod")
        if not name:
            continue
        pod = pods.setdefault(name, Pod(name))
        labels = {k: v for k, v in s.items() if k.startswith("label_")}
        pod.labels = {**(pod.labels or {}), **labels}
    for s in owner_series:
        name = s.get("pod")
        kind, owner = s.get("owner_kind"), s.get("owner_name")
        if not name or not kind or not owner or owner == "<none>":
            continue
        pods.setdefault(name, Pod(name)).owners.append((kind, owner))
    return pods
