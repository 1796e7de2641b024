"""Gatekeeper: ConstraintTemplates, their Constraints, and the input Gatekeeper builds.

A template's Rego (with its ``libs``) is evaluated with ``input.review`` as
Gatekeeper's admission review of a CREATE (object, kind, name, namespace,
empty userInfo) and ``input.parameters`` from the constraint; the template's
``violation`` rule gives ``{"msg", "details"}`` records. A template with only
the ``K8sNativeValidation`` engine is evaluated with CEL (Python >= 3.11).
Referential templates read ``data.inventory``, built from the objects of the
run as gator does.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.policy.load import PolicyError
from kubelint_ml.policy.rego import Module, RegoError, parse

ACTIONS = {"deny": "error", "warn": "warning", "dryrun": "info"}
# Kinds that have no namespace (for data.inventory.cluster and spec.match.namespaces).
CLUSTER_KINDS = frozenset(
    {
        "Namespace",
        "Node",
        "PersistentVolume",
        "StorageClass",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "PriorityClass",
        "IngressClass",
        "RuntimeClass",
        "CSIDriver",
        "CSINode",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "APIService",
        "PodSecurityPolicy",
        "VolumeSnapshotClass",
        "ResourceClass",
        "DeviceClass",
        "ConstraintTemplate",
        "ClusterQueue",
        "ResourceFlavor",
        "WorkloadPriorityClass",
    }
)


@dataclass(slots=True)
class Template:
    name: str
    kind: str  # the constraint kind it defines
    file: str
    modules: list[Module] = field(default_factory=list)
    package: str = ""
    cel: Any = None  # CelValidation when the template has only the K8sNativeValidation engine
    referential: bool = False


@dataclass(slots=True)
class Constraint:
    kind: str
    name: str
    file: str
    line: int
    match: dict
    parameters: Any
    action: str  # deny / warn / dryrun
    template: Template

    @property
    def rule_id(self) -> str:
        return f"{self.kind}/{self.name}"

    @property
    def severity(self) -> str:
        return ACTIONS.get(self.action, "error")


def _target(doc: dict, file: str) -> dict:
    targets = (doc.get("spec") or {}).get("targets") or []
    for t in targets:
        if isinstance(t, dict) and t.get("target", "admission.k8s.gatekeeper.sh") == "admission.k8s.gatekeeper.sh":
            return t
    raise PolicyError(
        f"{file}: ConstraintTemplate {doc.get('metadata', {}).get('name', '?')}: no admission.k8s.gatekeeper.sh target"
    )


def build_template(file: str, doc: dict) -> Template:
    name = str((doc.get("metadata") or {}).get("name") or "")
    kind = (((doc.get("spec") or {}).get("crd") or {}).get("spec") or {}).get("names", {}).get("kind")
    if not name or not isinstance(kind, str) or not kind:
        raise PolicyError(f"{file}: ConstraintTemplate {name or '?'}: spec.crd.spec.names.kind is missing")
    target = _target(doc, file)
    rego, libs, cel, version = target.get("rego"), list(target.get("libs") or []), None, ""
    for code in target.get("code") or []:
        if not isinstance(code, dict):
            continue
        source = code.get("source") or {}
        if code.get("engine") == "Rego" and rego is None:
            rego, libs, version = source.get("rego"), list(source.get("libs") or []), str(source.get("version") or "")
        elif code.get("engine") == "K8sNativeValidation":
            cel = source
    tpl = Template(name, kind, file)
    if isinstance(rego, str) and rego.strip():
        v0 = version != "v1"  # Gatekeeper reads template Rego as v0 unless the source says v1
        try:
            tpl.modules.append(parse(f"{file}#{name}", rego, v0))
            for i, lib in enumerate(libs):
                tpl.modules.append(parse(f"{file}#{name}.libs[{i}]", str(lib), v0))
        except RegoError as e:
            raise PolicyError(f"ConstraintTemplate {name} ({file}): Rego does not compile: {e}") from None
        tpl.package = tpl.modules[0].package
        tpl.referential = any("data.inventory" in m.text for m in tpl.modules)
    elif cel is not None:
        from kubelint_ml.policy.celvalidation import CelValidation

        tpl.cel = CelValidation.build(cel, f"ConstraintTemplate {name} ({file})")
    else:
        raise PolicyError(f"{file}: ConstraintTemplate {name}: no Rego and no K8sNativeValidation code")
    return tpl


def build_constraint(file: str, doc: dict, line: int, templates: dict[str, Template]) -> Constraint:
    kind = str(doc.get("kind") or "")
    name = str((doc.get("metadata") or {}).get("name") or "")
    tpl = templates.get(kind)
    if tpl is None:
        raise PolicyError(f"{file}:{line}: constraint {kind}/{name}: no ConstraintTemplate defines kind {kind}")
    spec = doc.get("spec") or {}
    action = str(spec.get("enforcementAction") or "deny").lower()
    return Constraint(kind, name, file, line, dict(spec.get("match") or {}), spec.get("parameters"), action, tpl)


# ----------------------------------------------------------------------------
# spec.match


def _glob(pattern: str, value: str) -> bool:
    return fnmatch.fnmatchcase(value, pattern) if "*" in pattern else pattern == value


def _selector(sel: dict, labels: dict) -> bool:
    labels = labels if isinstance(labels, dict) else {}
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def metadata(obj: Any) -> dict:
    """An object's ``metadata`` mapping (empty when it has none, or not a mapping)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else {}


def _kind_matches(entry: dict, group: str, kind: str) -> bool:
    groups = entry.get("apiGroups") or [""]
    kinds = entry.get("kinds") or ["*"]
    return ("*" in groups or group in groups) and ("*" in kinds or kind in kinds)


def matches(match: dict, obj: dict) -> tuple[bool, str | None]:
    """Whether a constraint's ``spec.match`` selects the object; the second value is a note when part
    of it (``namespaceSelector``) cannot be judged offline and was taken as matching."""
    api = str(obj.get("apiVersion") or "")
    group = api.split("/", 1)[0] if "/" in api else ""
    kind = str(obj.get("kind") or "")
    meta = metadata(obj)
    kinds = [k for k in match.get("kinds") or [] if isinstance(k, dict)]
    if kinds and not any(_kind_matches(k, group, kind) for k in kinds):
        return False, None
    namespace = meta.get("name", "") if kind == "Namespace" else meta.get("namespace", "")
    cluster = kind in CLUSTER_KINDS and kind != "Namespace"
    # A namespaced object without a namespace is created in "default" (kubectl, gator).
    namespace = str(namespace or ("" if cluster else "default"))
    scope = match.get("scope", "*")
    if scope == "Cluster" and not (cluster or kind == "Namespace"):
        return False, None
    if scope == "Namespaced" and (cluster or kind == "Namespace"):
        return False, None
    if not cluster and match.get("namespaces") and not any(_glob(str(p), namespace) for p in match["namespaces"]):
        return False, None
    excluded = match.get("excludedNamespaces")
    if not cluster and excluded and any(_glob(str(p), namespace) for p in excluded):
        return False, None
    if match.get("name") and not _glob(str(match["name"]), str(meta.get("name") or "")):
        return False, None
    if isinstance(match.get("labelSelector"), dict) and not _selector(match["labelSelector"], meta.get("labels") or {}):
        return False, None
    note = None
    if isinstance(match.get("namespaceSelector"), dict):
        if kind == "Namespace":
            if not _selector(match["namespaceSelector"], meta.get("labels") or {}):
                return False, None
        elif not cluster:
            note = (
                "spec.match.namespaceSelector cannot be judged offline (namespace labels live in the cluster); "
                "the constraint was applied as if it matched"
            )
    return True, note


# ----------------------------------------------------------------------------
# input


def review(obj: dict) -> dict:
    """``input.review`` for an object, as Gatekeeper builds it for a CREATE; an AdmissionReview
    document gives its own request (operation, oldObject, userInfo)."""
    if obj.get("kind") == "AdmissionReview" and isinstance(obj.get("request"), dict):
        req = dict(obj["request"])
        target = req.get("object") or req.get("oldObject") or {}
        req.setdefault("kind", _gvk(target))
        meta = metadata(target)
        req.setdefault("name", meta.get("name", ""))
        req.setdefault("namespace", meta.get("namespace", ""))
        req.setdefault("userInfo", {})
        return req
    meta = metadata(obj)
    return {
        "kind": _gvk(obj),
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", "") or "",
        "operation": "CREATE",
        "userInfo": {},
        "object": obj,
        "oldObject": None,
        "dryRun": False,
    }


def target_object(obj: dict) -> dict:
    """The object a review is about (the request's object for an AdmissionReview)."""
    if obj.get("kind") == "AdmissionReview" and isinstance(obj.get("request"), dict):
        req = obj["request"]
        return req.get("object") or req.get("oldObject") or {}
    return obj


def _gvk(obj: Any) -> dict:
    if not isinstance(obj, dict):
        return {"group": "", "version": "", "kind": ""}
    api = str(obj.get("apiVersion") or "")
    group, _, version = api.rpartition("/")
    return {"group": group, "version": version, "kind": str(obj.get("kind") or "")}


def inventory(objects: list[dict]) -> dict:
    """``data.inventory`` as gator builds it: cluster[apiVersion][kind][name] and
    namespace[ns][apiVersion][kind][name]."""
    inv: dict = {"cluster": {}, "namespace": {}}
    for obj in objects:
        if not isinstance(obj, dict):
            continue
        api, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
        meta = metadata(obj)
        name = str(meta.get("name") or "")
        if not api or not kind or not name:
            continue
        if kind in CLUSTER_KINDS:
            inv["cluster"].setdefault(api, {}).setdefault(kind, {})[name] = obj
        else:
            ns = str(meta.get("namespace") or "default")
            inv["namespace"].setdefault(ns, {}).setdefault(api, {}).setdefault(kind, {})[name] = obj
    return inv


_PATH_PART = re.compile(r'\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|\.?([^.\[\]]+)')


def details_path(details: Any) -> tuple | None:
    """A field path named by a violation's ``details`` (``path`` or ``field``: "spec.containers[0].image"
    or a list of keys), else ``None``."""
    if not isinstance(details, dict):
        return None
    value = details.get("path", details.get("field"))
    if isinstance(value, list) and all(isinstance(p, (str, int)) and not isinstance(p, bool) for p in value):
        return tuple(value)
    if isinstance(value, str) and value:
        out: list = []
        for m in _PATH_PART.finditer(value):
            if m.group(1) is not None:
                out.append(int(m.group(1)))
            elif m.group(2) is not None:
                out.append(m.group(2).replace('\\"', '"').replace("\\\\", "\\"))
            else:
                out.append(m.group(3))
        return tuple(out)
    return None
