"""`kubelint-ml audit`: what runs in a cluster, judged as it runs, reported once per owner.

The input is what `kubectl get -o json|yaml` prints (a List, several files, a
pipe), or `kubectl get` run for the kinds it needs (:mod:`kubelint_ml.run.kubectl`).
Each object is read once (JSON streamed: :mod:`kubelint_ml.input.dump`):

* Pods are judged as they were admitted (no defaulting guessed). Each is filed
  under its controller (``ownerReferences``) and, within it, under its shape:
  the spec without what differs from pod to pod of one template (the node, the
  hostname, per-pod env values, the service-account token volume). One pod of
  each shape is judged; its findings hold for every pod of the shape.
* Controllers are followed up to the top owner (Pod → ReplicaSet → Deployment,
  Pod → Job → JobSet or CronJob, Pod → PyTorchJob, KServe and Ray owners); where
  the dump lacks an intermediate object its labels and names say it
  (``pod-template-hash``, ``jobset.sigs.k8s.io/jobset-name``,
  ``serving.kserve.io/inferenceservice``, ``ray.io/originated-from-*``).
* Each finding is reported once per top owner with the number of pods it holds
  for; object rules (queues, gangs, volumes) run on the owner when the dump has it;
  owners without pods are judged from their templates.
* Cluster objects (Nodes, PriorityClasses, LimitRanges, ResourceQuotas, PVCs,
  Kueue and Volcano objects) become the run's facts, as ``--context`` does for check.
"""

from __future__ import annotations

import gc
import io
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any

from kubelint_ml import __version__
from kubelint_ml.engine.context import CONTEXT_KINDS, Facts
from kubelint_ml.engine.core import Context, Engine
from kubelint_ml.findings import Finding, ObjectRef, RunResult
from kubelint_ml.input.dump import DumpError, Item, dump_limits, looks_like_json, plain_object, read_json
from kubelint_ml.input.loader import load, locate
from kubelint_ml.input.objects import K8sObject, make_ref, unpack
from kubelint_ml.input.workloads import KINDS, pod_templates
from kubelint_ml.k8s.dra import DraFacts, pod_devices, uses_dra
from kubelint_ml.k8s.gates import enabled
from kubelint_ml.k8s.gates import of as gates_of
from kubelint_ml.k8s.kept import object_kept, pod_spec_kept
from kubelint_ml.k8s.resources import is_accelerator_pod, pod_level_gates, pod_requests
from kubelint_ml.run.facts import with_cluster_nodes
from kubelint_ml.run.inputs import RunInputs
from kubelint_ml.run.lint import GC_MIDDLE_THRESHOLD, GC_YOUNG_THRESHOLD, _finish, _rule_infos, repo_root
from kubelint_ml.usage import USAGE_FAMILY

ACCESS_VOLUME = "kube-api-access-"
# Pod fields that differ from pod to pod of one template.
_PER_POD = ("nodeName", "hostname")
_IGNORE = "kubelint-ml.io/ignore"
_QUEUE = "kueue.x-k8s.io/queue-name"


_RANK = {"info": 0, "warning": 1, "error": 2}
SHARED_VOLUME = "volume-single-node-shared"
CLUSTER_FAMILY = "cluster"


class AuditError(Exception):
    """The input cannot be read (exit 2)."""


def _group(api: str) -> str:
    return api.split("/", 1)[0] if "/" in api else ""


def _controller(meta: Mapping) -> tuple[str, str, str] | None:
    refs = meta.get("ownerReferences")
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, Mapping) and ref.get("controller") is True and ref.get("kind") and ref.get("name"):
            return str(ref["kind"]), str(ref["name"]), str(ref.get("apiVersion", ""))
    return None


def _without_token(items: Any) -> Any:
    if not isinstance(items, list):
        return items
    return [v for v in items if not (isinstance(v, Mapping) and str(v.get("name", "")).startswith(ACCESS_VOLUME))]


def _containers(items: Any) -> Any:
    if not isinstance(items, list):
        return items
    return [
        (c.get("name"), c.get("image"), c.get("resources"), c.get("command"), c.get("args"), c.get("restartPolicy"))
        if isinstance(c, Mapping)
        else c
        for c in items
    ]


def signature(pod: Mapping) -> tuple:
    """What the pods of one controller share and rules read: containers (image, command, resources),
    volumes but the service-account token, pod-level resources and DRA claims, scheduling fields, and the labels and annotations rules
    read (suppressions, the Kueue queue). Per-pod values (the node, the hostname, env values such
    as RANK) are left out. Compared with ``==`` (dicts compare in C), never serialised."""
    spec = pod.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    meta = pod.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    notes, labels = meta.get("annotations"), meta.get("labels")
    return (
        _containers(spec.get("containers")),
        _containers(spec.get("initContainers")),
        _without_token(spec.get("volumes")),
        spec.get("resources"),
        spec.get("resourceClaims"),
        spec.get("priorityClassName"),
        spec.get("nodeSelector"),
        spec.get("affinity"),
        spec.get("tolerations"),
        spec.get("runtimeClassName"),
        spec.get("schedulerName"),
        spec.get("restartPolicy"),
        notes.get(_IGNORE) if isinstance(notes, Mapping) else None,
        labels.get(_QUEUE) if isinstance(labels, Mapping) else None,
    )


class Shape:
    """The pods of one owner that share a shape: how many, and the first one (to judge)."""

    __slots__ = ("count", "item", "file", "signature", "nodes")

    def __init__(self, item: Item, file: str, signature: tuple) -> None:
        self.count = 0
        self.item = item
        self.file = file
        self.signature = signature
        self.nodes: set[str] = set()  # the nodes its pods run on


class Known:
    """A non-pod workload object of the dump: its controller, labels, and where to read it again."""

    __slots__ = ("ref", "controller", "labels", "item", "file")

    def __init__(self, ref: ObjectRef, controller: tuple[str, str, str] | None, labels: Any, item: Item, file: str):
        self.ref, self.controller, self.labels, self.item, self.file = ref, controller, labels, item, file


OwnerKey = tuple[str, str, str]  # (namespace, kind, name)


class Audit:
    def __init__(self, inputs: RunInputs, usage_for: Callable[[list], Any] | None = None) -> None:
        self.inputs = inputs
        # With a usage source: the Usage of the owners found (kubelint_ml.usage.source.load_usage)
        self.usage_for = usage_for
        self.facts = Facts()
        # direct owner -> shape -> pods; the direct owner's apiVersion and a pod's labels (owner hints)
        self.pods: dict[OwnerKey, list[Shape]] = {}
        self.owner_info: dict[OwnerKey, tuple[str, Mapping]] = {}
        self.known: dict[OwnerKey, Known] = {}
        # direct owner -> claim -> (the nodes its pods run on, how many pods mount it, the first such pod)
        self.claims: dict[OwnerKey, dict[str, list]] = {}
        # (namespace, ResourceClaimTemplate) -> the ResourceClaims made from it for running pods
        self.generated: dict[tuple[str, str], list[str]] = {}
        # (namespace, "template" | "claim", name): the claims of pods bound to a node, which exist
        self.bound_claims: set[tuple[str, str, str]] = set()
        # Fields of the stored pods that only a gate on keeps: DRA claims, pod-level resources; and the
        # extended resources the scheduler allocated through DRA (only DRAExtendedResource on does)
        self.kept_claims = self.kept_pod_level = self.kept_extended = False
        self.kept_fields: set[str] = set()  # the gates stored pods, pod templates and Jobs show on (k8s/kept.py)
        self.skipped: Counter[str] = Counter()
        self.files = 0
        self.objects = 0
        self.notes: list[str] = []
        self._node_pool: dict[str, int] | None = None  # Node name -> its node pool (once facts are in)

    # -- reading ---------------------------------------------------------------

    def read(self, fh: IO[bytes], file: str) -> None:
        """One dump (JSON streamed, YAML read whole); :class:`AuditError` when it cannot be read."""
        self.files += 1
        if not hasattr(fh, "peek"):  # a stream that cannot look ahead: read it whole
            fh = io.BufferedReader(io.BytesIO(fh.read()))  # type: ignore[arg-type]
        head = fh.peek(8192)  # type: ignore[attr-defined]
        try:
            if looks_like_json(head) or not head:
                for item in read_json(fh, file):
                    self.add(item, file)
            else:
                self._yaml(fh.read(), file)
        except DumpError as e:
            raise AuditError(str(e)) from None

    def _yaml(self, data: bytes, file: str) -> None:
        loaded = load(data, dump_limits(self.inputs.config.limits))
        for p in loaded.problems:
            raise DumpError(file, p.line, p.column, f"not valid YAML: {p.message}")
        if not loaded.documents:
            raise DumpError(file, 1, 1, "no objects: not what `kubectl get -o yaml` prints")
        for doc in loaded.documents:
            unpacked = unpack(doc, file)
            if unpacked.problems:
                prob = unpacked.problems[0]
                line, col, _ = locate(prob.root, prob.path)
                raise DumpError(file, line, col, f"not a Kubernetes object or List: {prob.message}")
            for s in unpacked.skipped:
                self.skipped[f"(no kind, line {s.line})"] += 1
            for obj in unpacked.objects:
                line, col = _position(obj)
                self.add(Item(obj.data, line, col, None, obj), file)

    def add(self, item: Item, file: str) -> None:
        data = item.data
        if not isinstance(data, Mapping):
            self.skipped["(not an object)"] += 1
            return
        kind, api = data.get("kind"), data.get("apiVersion")
        if not isinstance(kind, str) or not isinstance(api, str):
            self.skipped["(no kind)"] += 1
            return
        self.objects += 1
        meta = data.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        group = _group(api)
        if kind == "Pod" and group == "":
            owner = _controller(meta)
            key = (ns, owner[0], owner[1]) if owner else (ns, "Pod", name)
            shapes = self.pods.get(key)
            if shapes is None:
                shapes = self.pods[key] = []
                self.owner_info[key] = (owner[2] if owner else api, meta.get("labels") or {})
            sig = signature(data)
            for shape in shapes:  # usually one: the pods of a controller come from one template
                if shape.signature == sig:
                    break
            else:
                item.keep()
                shape = Shape(item, file, sig)
                shapes.append(shape)
            shape.count += 1
            spec = data.get("spec")
            shape.nodes.add(str(spec.get("nodeName") or "") if isinstance(spec, Mapping) else "")
            self._claims(key, data, shape)
            if isinstance(spec, Mapping):
                if spec.get("resourceClaims"):
                    self.kept_claims = True
                    self._dra(ns, spec, data.get("status"))
                self.kept_fields |= pod_spec_kept(spec)
                if spec.get("resources"):
                    self.kept_pod_level = True
            status = data.get("status")
            if isinstance(status, Mapping) and status.get("extendedResourceClaimStatus"):
                self.kept_extended = True
        elif kind in CONTEXT_KINDS:
            if kind == "DeviceClass" and group == "resource.k8s.io":
                spec = data.get("spec")
                if isinstance(spec, Mapping) and spec.get("extendedResourceName"):
                    self.kept_extended = True  # the API server drops the field with DRAExtendedResource off
            self.facts.add_object(item.obj or plain_object(dict(data), file))
        elif (group, kind) in KINDS:
            item.keep()
            self.kept_fields |= object_kept(group, kind, data)
            self.known[(ns, kind, name)] = Known(
                make_ref(dict(data)), _controller(meta), meta.get("labels"), item, file
            )
        else:
            self.skipped[f"{kind} ({api})"] += 1

    def _spans_pools(self, shape: Shape) -> bool:
        """The shape's pods run on Nodes of more than one known node pool."""
        if len(shape.nodes) < 2:
            return False
        if self._node_pool is None:
            self._node_pool = {n: i for i, p in enumerate(self.facts.cluster.node_pools()) for n in p.nodes}
        where = self._node_pool
        return len({where.get(n) for n in shape.nodes}) > 1

    def _claims(self, key: OwnerKey, pod: Mapping, shape: Shape) -> None:
        """The PersistentVolumeClaims the pod mounts, and the node it runs on."""
        spec = pod.get("spec")
        volumes = spec.get("volumes") if isinstance(spec, Mapping) else None
        for v in volumes if isinstance(volumes, list) else ():
            claim = v.get("persistentVolumeClaim") if isinstance(v, Mapping) else None
            name = claim.get("claimName") if isinstance(claim, Mapping) else None
            if isinstance(name, str):
                entry = self.claims.setdefault(key, {}).setdefault(name, [set(), 0, shape])
                entry[0].add(spec.get("nodeName") or "")  # type: ignore[union-attr]
                entry[1] += 1

    def _dra(self, ns: str, spec: Mapping, status: Any) -> None:
        """The pod's DRA claims: those of a pod bound to a node exist (the scheduler allocated each before
        binding it), and the ResourceClaims made for its template claims (``status.resourceClaimStatuses``:
        claim name -> generated ResourceClaim) hold what it runs with."""
        entries = spec.get("resourceClaims")
        entries = [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []
        node = spec.get("nodeName")
        if isinstance(node, str) and node:
            for e in entries:
                for field, key in (("resourceClaimTemplateName", "template"), ("resourceClaimName", "claim")):
                    if isinstance(e.get(field), str):
                        self.bound_claims.add((ns, key, e[field]))
        statuses = status.get("resourceClaimStatuses") if isinstance(status, Mapping) else None
        if not statuses:
            return
        templates = {
            e["name"]: e["resourceClaimTemplateName"]
            for e in entries
            if isinstance(e.get("resourceClaimTemplateName"), str)
        }
        for st in statuses if isinstance(statuses, list) else ():
            if not isinstance(st, Mapping):
                continue
            template, claim = templates.get(st.get("name")), st.get("resourceClaimName")  # type: ignore[arg-type]
            if template is not None and isinstance(claim, str) and claim:
                made = self.generated.setdefault((ns, template), [])
                if claim not in made[-1:]:
                    made.append(claim)

    def shared_claims(self, engine: Engine) -> dict[OwnerKey, list[tuple[Finding, int]]]:
        """volume-single-node-shared as it runs: a ReadWriteOnce claim mounted by an owner's pods on
        several nodes (a Multi-Attach error), a ReadWriteOncePod claim by several pods."""
        rule = next((r for r in self.inputs.rules if r.id == SHARED_VOLUME), None)
        if rule is None or not self.facts.cluster.pvcs:
            return {}
        per_top: dict[OwnerKey, dict[str, list]] = {}
        for key, claims in self.claims.items():
            top, _ = self.top(key)
            for name, (nodes, pods, shape) in claims.items():
                entry = per_top.setdefault(top, {}).setdefault(name, [set(), 0, shape])
                entry[0] |= nodes
                entry[1] += pods
        out: dict[OwnerKey, list[tuple[Finding, int]]] = {}
        severity = (self.inputs.severity or {}).get(SHARED_VOLUME, rule.severity)
        for top, claims in per_top.items():
            for name, (nodes, pods, shape) in sorted(claims.items()):
                fact = self.facts.cluster.pvcs.get((top[0], name))
                if fact is None or not fact[0] or {"ReadWriteMany", "ReadOnlyMany"} & set(fact[0]):
                    continue
                once_pod = "ReadWriteOncePod" in fact[0] and "ReadWriteOnce" not in fact[0]
                if once_pod and pods > 1:
                    message = f"PVC '{name}' is ReadWriteOncePod but {pods} pods mount it"
                    sev = "error"
                elif not once_pod and len(nodes - {""}) > 1:
                    message = (
                        f"PVC '{name}' is ReadWriteOnce but its pods run on {len(nodes - {''})} nodes: "
                        "all but one node's fail with a Multi-Attach error"
                    )
                    sev = severity
                else:
                    continue
                for obj in _objects(shape.item, shape.file):
                    path = _claim_path(obj.data, name)
                    f = engine.finding_at(obj, path, SHARED_VOLUME, sev, message, rule.remediation, None, at_value=True)
                    if shape.item.obj is None and shape.item.text:
                        _place(f, shape.item)
                    f.detail = (
                        f"PersistentVolumeClaim {top[0]}/{name} ({fact[2]}) has access modes {', '.join(fact[0])}; "
                        f"{pods} pods mount it, on nodes {', '.join(sorted(nodes - {''})[:5])}"
                    )
                    out.setdefault(top, []).append((f, pods))
        return out

    # -- judging ---------------------------------------------------------------

    def top(self, key: OwnerKey) -> tuple[OwnerKey, str]:
        """The top owner of a direct owner, and its apiVersion."""
        ns = key[0]
        api, labels = self.owner_info.get(key, ("", {}))
        labels = labels if isinstance(labels, Mapping) else {}
        for _ in range(16):
            known = self.known.get(key)
            if known is not None:
                api = known.ref.apiVersion
                if known.controller is None:
                    break
                key, api = (ns, known.controller[0], known.controller[1]), known.controller[2]
                continue
            if (
                key[1] == "ReplicaSet"
                and labels.get("pod-template-hash")
                and key[2].endswith("-" + str(labels["pod-template-hash"]))
            ):
                key, api = (ns, "Deployment", key[2][: -len(str(labels["pod-template-hash"])) - 1]), "apps/v1"
                continue
            if key[1] == "RayCluster" and labels.get("ray.io/originated-from-cr-name"):
                crd = str(labels.get("ray.io/originated-from-crd") or "")
                if crd in ("RayJob", "RayService"):
                    key, api = (ns, crd, str(labels["ray.io/originated-from-cr-name"])), "ray.io/v1"
                    continue
            break
        isvc = labels.get("serving.kserve.io/inferenceservice")
        if isvc and key[1] != "InferenceService":  # KServe: Deployment, Knative Revision... under it
            return (ns, "InferenceService", str(isvc)), "serving.kserve.io/v1beta1"
        lws = labels.get("leaderworkerset.sigs.k8s.io/name")
        if lws and key[1] == "StatefulSet":  # a LeaderWorkerSet's StatefulSets are not in the dump
            return (ns, "LeaderWorkerSet", str(lws)), "leaderworkerset.x-k8s.io/v1"
        jobset = labels.get("jobset.sigs.k8s.io/jobset-name")
        if jobset and key[1] == "Job":  # the JobSet's Jobs are not in the dump
            return (ns, "JobSet", str(jobset)), "jobset.x-k8s.io/v1alpha2"
        return key, api

    def _gates(self, ctx: Context, profile: Any) -> None:
        """The gates the stored pods show on, whatever the profile's version defaults them to: the API server
        drops spec.resourceClaims and spec.resources with DynamicResourceAllocation and PodLevelResources
        off, so a pod that has them was admitted with the gate on."""
        for key in self.kept_fields:  # pids, gang fields, restart rules, image volumes (k8s/kept.py)
            ctx.cache[key] = True
        version, overrides = gates_of(profile)
        if version is None and not overrides:
            return

        def though(gate: str) -> str:  # "Kubernetes 1.33 drops them by default", "profile.featureGates ..."
            if gate in overrides:
                return f"profile.featureGates turns {gate} off"
            return f"Kubernetes {profile.kubernetes_version} has it off by default"

        if self.kept_pod_level and not pod_level_gates(version, overrides)[0]:
            ctx.cache["pod_level_gates"] = (True, *pod_level_gates(version, overrides)[1:])
            self.notes.append(
                f"pods of the dump carry pod-level resources (spec.resources): the cluster keeps them (PodLevelResources "
                f"on), though {though('PodLevelResources')}"
            )
        if self.kept_extended and not enabled("DRAExtendedResource", version, overrides):
            self.notes.append(
                "the dump shows extended resources served through DRA (a DeviceClass's extendedResourceName, or a "
                "pod's status.extendedResourceClaimStatus): the cluster serves them (DRAExtendedResource on), though "
                f"{though('DRAExtendedResource')}"
            )
        if self.kept_claims and not enabled("DynamicResourceAllocation", version, overrides):
            self.notes.append(
                f"pods of the dump carry DRA claims (spec.resourceClaims): the cluster keeps them "
                f"(DynamicResourceAllocation on), though {though('DynamicResourceAllocation')}"
            )

    def _owner_templates(self, tops: Mapping[OwnerKey, Any]) -> list:
        """The pod templates of the owners the dump holds (those with pods and those without), as the
        usage source sizes them: keyed by namespace, group, kind, name and role."""
        from kubelint_ml.k8s.resources import container_requests_limits, defaulted_requests
        from kubelint_ml.usage.source import ContainerSpec, TemplateSpec

        out = []
        for key, known in sorted(self.known.items()):
            if known.controller is not None and key not in tops:
                continue  # part of an owner above it
            for obj in _objects(known.item, known.file):
                for tpl in pod_templates(obj):
                    if tpl.broken:
                        continue
                    containers = []
                    for c in tpl.all_containers:
                        req, lim = container_requests_limits(c.data)
                        containers.append(ContainerSpec(c.name, dict(defaulted_requests(req, lim)), dict(lim)))
                    spec_key = (obj.ref.namespace, obj.group, obj.kind, obj.ref.name, tpl.role)
                    out.append(TemplateSpec(known.file, spec_key, containers))
        return out

    def judge(self) -> tuple[RunResult, list[str], dict[str, dict[str, int]]]:
        inputs = self.inputs
        config = with_cluster_nodes(inputs.config, self.facts)
        self.facts.add_profile(config.profile)
        for (ns, template), made in self.generated.items():
            # A running pod's claims are what its ResourceClaims hold, the template gone or changed or not.
            self.facts.dra.generated_claims(template, ns, made)
        self.facts.dra.exists |= self.bound_claims
        self.facts.dra.kept = self.kept_claims
        self.facts.dra.kept_extended = self.kept_extended
        self.facts.dra.stored = True
        known_ids = set(inputs.all_rule_ids or ())
        usage_rules = [r for r in inputs.rules if r.family == USAGE_FAMILY]
        rules = [r for r in inputs.rules if r.family != USAGE_FAMILY]
        engine = Engine(rules, severity_overrides=inputs.severity, known_rule_ids=known_ids)
        # A controller's pods carry no queue label or gang of their own: the owner's object rules say it.
        owned_rules = [r for r in rules if not (r.unit == "object" and r.family == CLUSTER_FAMILY)]
        pod_engine = Engine(owned_rules, severity_overrides=inputs.severity, known_rule_ids=known_ids)
        # On an owner the dump holds: its object rules, and (with a usage source) the usage rules on its
        # templates, keyed by the owner as Prometheus series are.
        owner_rules = [r for r in rules if r.unit == "object"]
        if self.usage_for is not None:
            owner_rules += usage_rules
        owner_engine = Engine(owner_rules, severity_overrides=inputs.severity, known_rule_ids=known_ids)
        ctx = Context(profile=config.profile, facts=self.facts, wants_notes=inputs.verbose)
        self._gates(ctx, config.profile)
        tops: dict[OwnerKey, tuple[str, list[Shape]]] = {}
        for key, by_shape in self.pods.items():
            top, api = self.top(key)
            tops.setdefault(top, (api, []))[1].extend(by_shape)
        if self.usage_for is not None:
            ctx.usage = self.usage_for(self._owner_templates(tops))
        findings: list[Finding] = []
        summary: dict[str, dict[str, int]] = {}
        training_rules = {r.id for r in inputs.rules if r.workloads == "training"}
        shared = self.shared_claims(engine)
        for top, (api, shapes) in sorted(tops.items()):
            total = sum(s.count for s in shapes)
            owner = ObjectRef(api, top[1], top[0], top[2])
            info = KINDS.get((_group(api), top[1]))
            training = top[1] == "Pod" or bool(info and info.training)
            # Once per owner: per rule and container (the roles of a PyTorchJob share their containers'
            # names; a rule that fires twice on one container, its n-th time with the others' n-th),
            # the most severe wording, and every pod it holds for.
            found: dict[tuple[str, str | None, int], list] = {}
            for shape in shapes:
                spec = shape.item.data.get("spec")
                # A pod is judged as its owner would be: a Deployment's pods are no training workload
                # unless they use accelerators.
                skip = (
                    set()
                    if training or _accelerator(spec if isinstance(spec, dict) else {}, top[0], self.facts.dra)
                    else training_rules
                )
                seen: Counter[tuple[str, str | None]] = Counter()
                judge = engine if top[1] == "Pod" else pod_engine
                for f in _evaluate(judge, shape.item, shape.file, ctx, unbind=self._spans_pools(shape)):
                    if f.rule in skip:
                        continue
                    nth = seen[(f.rule, f.container)]
                    seen[(f.rule, f.container)] += 1
                    entry = found.setdefault((f.rule, f.container, nth), [f, 0])
                    entry[1] += shape.count
                    if _RANK.get(f.severity, 0) > _RANK.get(entry[0].severity, 0):
                        entry[0] = f
            running = shared.get(top, [])
            for n, (f, pods) in enumerate(running):
                found[(f.rule, None, -1000 - n)] = [f, pods]
            known = self.known.get(top)
            if known is not None:
                for n, f in enumerate(_evaluate(owner_engine, known.item, known.file, ctx)):
                    if f.rule == SHARED_VOLUME and running:
                        continue  # said as it runs, from the pods' nodes
                    found.setdefault((f.rule, f.container, -1 - n), [f, total])
            for f, count in found.values():
                findings.append(_per_owner(f, owner, count, total))
            _count(summary, top[0], total, [f for f, _ in found.values()])
        if self.usage_for is not None:
            engine = Engine(rules + usage_rules, severity_overrides=inputs.severity, known_rule_ids=known_ids)
        for key, known in sorted(self.known.items()):
            if key in tops or known.controller is not None:
                continue  # judged through its pods, or part of an owner above it
            own = _evaluate(engine, known.item, known.file, ctx)
            for f in own:  # judged from its template
                f.message = f"{f.message} [no pods]"
                f.data = {**(f.data or {}), "pods": 0}
                f.fix = None
            findings.extend(own)
            _count(summary, key[0], 0, own)
        self.notes.extend(ctx.notes)
        if inputs.verbose and self.facts.cluster:
            self.notes.append(self.facts.cluster.describe())
        if inputs.verbose and self.skipped:
            kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(self.skipped.items()))
            self.notes.append(f"skipped objects of kinds audit does not judge: {kinds}")
        findings = _finish(findings, config)
        result = RunResult(
            findings=[f for f in findings if f.suppressed is None],
            suppressed=[f for f in findings if f.suppressed is not None],
            rules=_rule_infos(inputs.rules, inputs.severity, None),
            files=self.files,
            documents=self.files,
            objects=self.objects,
            fail_level=inputs.fail_level,
            root=repo_root(),
            tool_version=__version__,
        )
        return result, self.notes, summary


def _accelerator(spec: Mapping, namespace: str, dra: DraFacts) -> bool:
    """The pod uses accelerators: by a device plugin's resource, or through DRA (claims or DRA extended
    resources holding accelerator devices), as check judges its template."""
    if is_accelerator_pod(spec):
        return True
    return uses_dra(spec, dra) and pod_devices(spec, namespace, dra, pod_requests(spec)).accelerator


def _position(obj: K8sObject) -> tuple[int, int]:
    line, col, _ = locate(obj.root, obj.base)
    return line, col


def _claim_path(pod: Mapping, claim: str) -> tuple:
    volumes = pod.get("spec", {}).get("volumes") if isinstance(pod.get("spec"), Mapping) else None
    for i, v in enumerate(volumes if isinstance(volumes, list) else ()):
        pvc = v.get("persistentVolumeClaim") if isinstance(v, Mapping) else None
        if isinstance(pvc, Mapping) and pvc.get("claimName") == claim:
            return ("spec", "volumes", i, "persistentVolumeClaim", "claimName")
    return ("spec", "volumes")


def _objects(item: Item, file: str) -> list[K8sObject]:
    """The item as objects with positions (read again from its text for JSON)."""
    if item.obj is not None:
        return [item.obj]
    if item.text is None:
        return [plain_object(dict(item.data), file)]
    out = []
    for doc in load(item.text.encode()).documents:
        out.extend(unpack(doc, file).objects)
    return out


def _unbound(obj: K8sObject, unbind: bool) -> K8sObject:
    """With ``unbind``, the pod judged on every node pool it may use, not the one node it runs on (the
    pods it stands for run on nodes of several shapes)."""
    spec = obj.data.get("spec")
    if unbind and isinstance(spec, dict):
        spec.pop("nodeName", None)
    return obj


def _evaluate(engine: Engine, item: Item, file: str, ctx: Context, unbind: bool = False) -> list[Finding]:
    """The item's findings, read again with positions (JSON) or as read (YAML)."""
    if item.obj is not None:
        return list(engine.evaluate(_unbound(item.obj, unbind), ctx))
    if item.text is None:  # a List read whole (its kind before its items): positions of the item only
        found = list(engine.evaluate(_unbound(plain_object(dict(item.data), file), unbind), ctx))
        for f in found:
            f.line, f.column = item.line, item.column
        return found
    loaded = load((item.text or "").encode())
    out: list[Finding] = []
    for doc in loaded.documents:
        for obj in unpack(doc, file).objects:
            for f in engine.evaluate(_unbound(obj, unbind), ctx):
                _place(f, item)
                out.append(f)
    return out


def _place(f: Finding, item: Item) -> None:
    """A finding's position in the item's text made the position in the dump."""
    if f.line == 1:
        f.column += item.shift
    f.line += item.line - 1


def _per_owner(f: Finding, owner: ObjectRef, count: int, total: int) -> Finding:
    """One finding for the owner: its object, and the pods it holds for."""
    pods = f"{count} pod" + ("s" if count != 1 else "") if count == total else f"{count} of {total} pods"
    f.message = f"{f.message} [{pods}]"
    f.data = {**(f.data or {}), "pods": count, "ownerPods": total, "pod": f.object.name if f.object else ""}
    f.object = owner
    f.fix = None  # a dump is not a file to fix: the owner's manifest is
    return f


def _count(summary: dict[str, dict[str, int]], namespace: str, pods: int, found: Iterable[Finding]) -> None:
    row = summary.setdefault(namespace or "(cluster)", {"owners": 0, "pods": 0, "error": 0, "warning": 0, "info": 0})
    row["owners"] += 1
    row["pods"] += pods
    for f in found:
        row[f.severity] = row.get(f.severity, 0) + 1


def render_summary(summary: dict[str, dict[str, int]]) -> str:
    """The per-namespace table printed after the findings."""
    rows = [("NAMESPACE", "OWNERS", "PODS", "ERRORS", "WARNINGS", "INFO")]
    for ns in sorted(summary):
        r = summary[ns]
        rows.append((ns, str(r["owners"]), str(r["pods"]), str(r["error"]), str(r["warning"]), str(r["info"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n" for row in rows)


def audit(
    inputs: RunInputs, streams: Iterable[tuple[IO[bytes], str]], usage_for: Callable[[list], Any] | None = None
) -> tuple[RunResult, list[str], dict]:
    """Read every dump, then judge: the result, the notes, and the per-namespace summary. ``usage_for``
    (with a usage source) gives the Usage of the owners found."""
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], GC_YOUNG_THRESHOLD), max(threshold[1], GC_MIDDLE_THRESHOLD), *threshold[2:])
    try:
        run = Audit(inputs, usage_for)
        for fh, file in streams:
            run.read(fh, file)
        return run.judge()
    finally:
        gc.set_threshold(*threshold)
