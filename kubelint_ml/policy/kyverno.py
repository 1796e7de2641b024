"""Kyverno CEL policies and Kubernetes ValidatingAdmissionPolicies, evaluated offline.

Read by ``apiVersion``/``kind``:

- ``policies.kyverno.io`` ValidatingPolicy (v1, and v1alpha1/v1beta1 read as v1):
  ``matchConstraints``, ``matchConditions``, ``variables``, ``validations``,
  ``validationActions`` (Deny -> error, Warn -> warning, Audit -> info), ``autogen``;
- ``admissionregistration.k8s.io`` ValidatingAdmissionPolicy with its bindings (one rule per
  binding; a policy without a binding is applied as if bound to everything it matches, as
  ``kyverno apply`` does), params from the run's objects;
- ``kyverno.io`` ClusterPolicy / Policy rules whose ``validate`` is ``cel`` (``match``,
  ``exclude``, ``celPreconditions``; ``failureAction`` Enforce -> error, Audit -> info).

Every other Kyverno rule form, ImageValidatingPolicy and the like, and expressions that need
the network (``http.*``, ``image``, ``globalContext``) are *unsupported*: said once per rule
(a ``rule-error`` warning at the policy), never evaluated, never a silent pass.

Pod policies reach the pods of every kind kubelint-ml knows (Kyverno's autogen only reaches
the Deployment family, Job and CronJob): the policy sees, for each pod template, the owner
with ``metadata`` and ``spec`` replaced by the template's, as Kyverno's autogen rewrite of
``object.spec`` / ``object.metadata`` gives for a Deployment.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.engine.cellibs import plural
from kubelint_ml.policy.load import PolicyError

KYVERNO_CEL_GROUP = "policies.kyverno.io"
KYVERNO_GROUP = "kyverno.io"
ADMISSION_GROUP = "admissionregistration.k8s.io"
ACTIONS = {"deny": "error", "warn": "warning", "audit": "info"}
FAILURE_ACTIONS = {"enforce": "error", "audit": "info"}
NAMES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "resource")
KYVERNO_CEL_KINDS = (
    "ValidatingPolicy",
    "NamespacedValidatingPolicy",
    "ImageValidatingPolicy",
    "NamespacedImageValidatingPolicy",
)
AUTOGEN_ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"
# Kyverno's own autogen targets (pkg/autogen/v1, pkg/cel/autogen/data.go).
KYVERNO_CONTROLLERS = {
    "DaemonSet": "daemonsets",
    "Deployment": "deployments",
    "ReplicaSet": "replicasets",
    "StatefulSet": "statefulsets",
    "Job": "jobs",
    "CronJob": "cronjobs",
    "ReplicationController": "replicationcontrollers",
}
# Libraries that need a cluster or the network (Kyverno's CEL libraries); refused offline.
_OFFLINE = re.compile(
    r"(?<![.?\w])(?:(http|globalContext|imagedata|x509|gctx)\s*\.|(image)\s*[.(]|(time)\s*\.\s*now\b)"
)
_RULE_FORMS = ("pattern", "anyPattern", "deny", "foreach", "podSecurity", "manifests", "assert")
ERROR_REMEDIATION = "Fix the policy (guard the field with has() or an optional), or remove it."
REMEDIATION = "Change the manifest so that the policy passes (see the policy's message), or suppress it with a reason."


@dataclass(slots=True)
class Validation:
    program: Any
    message: str
    message_expression: Any = None


@dataclass(slots=True)
class Rule:
    """One evaluable rule: a ValidatingPolicy, a VAP with one binding, a ClusterPolicy's rule."""

    rule_id: str
    family: str  # ValidatingPolicy, ValidatingAdmissionPolicy, ClusterPolicy, Policy
    policy: str
    rule: str  # the ClusterPolicy rule's name, the binding's; "" for the others
    file: str
    line: int
    severity: str = "error"
    match: Any = None  # callable(Target) -> bool
    conditions: list[tuple[str, Any]] = field(default_factory=list)
    variables: list[tuple[str, Any]] = field(default_factory=list)
    validations: list[Validation] = field(default_factory=list)
    autogen: frozenset[str] | None = None  # controller kinds (lower-case plurals); None: every kind we know
    pods: bool = False  # matches Pods only: reaches pod templates
    protect_namespace: bool = True  # object.metadata.namespace stays the owner's (CEL policy autogen)
    param_kind: dict | None = None
    param_ref: dict | None = None
    unsupported: str = ""
    namespace_policy: str = ""  # a namespaced Kyverno Policy applies in its namespace only
    # set by finish(): what evaluation needs
    budgeted: bool = False  # an expression is evaluated under the helper's memory and time budget
    names: frozenset[str] = frozenset()  # the activation's variables the expressions read
    uses_resource: bool = False
    kinds: frozenset[str] | None = None  # the kinds (lower-case plurals) it can match; None: any
    needs_context: bool = False  # reads the run's objects: params, namespaces, resource.*
    _spec: str = ""

    def programs(self) -> list[Any]:
        out = [p for _, p in self.conditions] + [p for _, p in self.variables]
        for v in self.validations:
            out.append(v.program)
            if v.message_expression is not None:
                out.append(v.message_expression)
        return [p for p in out if p is not None]

    def finish(self) -> Rule:
        programs = self.programs()
        self.budgeted = any(p.budgeted for p in programs)
        self.names = frozenset(n for p in programs for n in p.variables)
        self.uses_resource = "resource" in self.names
        self.needs_context = (
            self.needs_context or self.uses_resource or "namespaceObject" in self.names or self.param_kind is not None
        )
        return self

    def spec(self) -> str:
        """The rule's sources, for the helper process (which compiles each spec once)."""
        if not self._spec:
            import json

            self._spec = json.dumps(
                [
                    [p.source for _, p in self.conditions],
                    [[n, p.source] for n, p in self.variables],
                    [
                        [v.program.source, v.message, v.message_expression.source if v.message_expression else None]
                        for v in self.validations
                    ],
                    self.first_only,
                ]
            )
        return self._spec

    @property
    def first_only(self) -> bool:
        return self.family in ("ValidatingPolicy", "NamespacedValidatingPolicy")

    def describe(self) -> str:
        if not self.rule:
            return f"{self.family} {self.policy}"
        what = "binding" if self.family == "ValidatingAdmissionPolicy" else "rule"
        return f"{self.family} {self.policy} {what} {self.rule}"


@dataclass(slots=True)
class Target:
    """What a rule is matched against and sees: the object (or a pod template's view of it)."""

    view: dict
    kind: str
    group: str
    version: str
    name: str
    namespace: str  # "" for cluster-scoped
    labels: dict
    annotations: dict
    namespace_labels: dict | None  # None: the namespace is not among the run's objects
    operation: str = "CREATE"
    unknown_selected: bool = True  # see Context.unknown_namespaces_selected
    review: dict | None = None  # the admission request the object came in (serve): user, oldObject
    cache: dict = field(default_factory=dict)  # the activation, built once for every rule


# ----------------------------------------------------------------------------
# Names


def _gv(api: str) -> tuple[str, str]:
    group, _, version = api.rpartition("/")
    return group, version


def _meta(obj: Any) -> dict:
    m = obj.get("metadata") if isinstance(obj, dict) else None
    return m if isinstance(m, dict) else {}


def _submap(d: dict, key: str) -> dict:
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def _glob(pattern: Any, value: str) -> bool:
    p = str(pattern)
    return fnmatch.fnmatchcase(value, p) if ("*" in p or "?" in p) else p == value


def selector_matches(sel: Any, labels: dict | None) -> bool:
    """A label selector (matchLabels, matchExpressions) against labels (``None``: unknown = empty)."""
    if not isinstance(sel, dict):
        return True
    labels = labels if isinstance(labels, dict) else {}
    for k, v in (sel.get("matchLabels") or {}).items():
        if str(labels.get(k)) != str(v) or k not in labels:
            return False
    for e in sel.get("matchExpressions") or []:
        if not isinstance(e, dict):
            continue
        key, op, values = e.get("key"), e.get("operator"), [str(v) for v in e.get("values") or []]
        present = key in labels
        if op == "In" and (not present or str(labels[key]) not in values):
            return False
        if op == "NotIn" and present and str(labels[key]) in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def _render(path: tuple) -> str:
    from kubelint_ml.input.loader import render_path

    return render_path(path)


def _where(doc: Any, path: tuple, file: str) -> str:
    from kubelint_ml.input.loader import locate

    line, col, _ = locate(doc, path)
    return f"{file}:{line}:{col}"


# ----------------------------------------------------------------------------
# Matching: admission resource rules (ValidatingPolicy, VAP) and Kyverno match blocks


def _has(values: Any, value: str) -> bool:
    if values is None:
        return True  # not given: any
    values = [str(v) for v in values or []]
    return "*" in values or value in values


def _resource_rule(rule: dict, t: Target) -> bool:
    if not _has(rule.get("apiGroups"), t.group) or not _has(rule.get("apiVersions"), t.version):
        return False
    ops = rule.get("operations")
    if ops is not None and not _has(ops, t.operation):
        return False
    res = plural(t.kind)
    resources = [str(r) for r in rule.get("resources") or []]
    if not any(r in ("*", "*/*", res) for r in resources):
        return False
    names = rule.get("resourceNames")
    if names and t.name not in [str(n) for n in names]:
        return False
    scope = rule.get("scope", "*")
    return not ((scope == "Namespaced" and not t.namespace) or (scope == "Cluster" and t.namespace))


def resources_match(match: dict, t: Target) -> bool:
    """``matchConstraints`` / a binding's ``matchResources`` against a target."""
    if not isinstance(match, dict):
        return True
    rules = [r for r in match.get("resourceRules") or [] if isinstance(r, dict)]
    if not any(_resource_rule(r, t) for r in rules):
        return False
    if any(_resource_rule(r, t) for r in match.get("excludeResourceRules") or [] if isinstance(r, dict)):
        return False
    if not selector_matches(match.get("objectSelector"), t.labels):
        return False
    ns_sel = match.get("namespaceSelector")
    if isinstance(ns_sel, dict) and (ns_sel.get("matchLabels") or ns_sel.get("matchExpressions")):
        if t.kind == "Namespace":
            return selector_matches(ns_sel, t.labels)
        if t.namespace and not _namespace_selected(ns_sel, t):
            return False
    return True


def _kind_entry(entry: str, t: Target) -> bool:
    entry = str(entry)
    if entry == "*":
        return True
    parts = entry.split("/")
    kind = parts[-1]
    sub = None
    if len(parts) >= 2 and parts[-1][:1].islower() and parts[-2][:1].isupper():  # Pod/ephemeralcontainers
        kind, sub = parts[-2], parts[-1]
        parts = parts[:-1]
    if sub is not None:
        return False  # subresources are never the object itself
    if not _glob(kind, t.kind):
        return False
    if len(parts) == 2:
        return _glob(parts[0], t.version) or _glob(parts[0], f"{t.group}/{t.version}".lstrip("/"))
    if len(parts) == 3:
        return _glob(parts[0], t.group) and _glob(parts[1], t.version)
    return True


def _description(desc: dict, t: Target) -> bool:
    """A Kyverno ResourceDescription (``resources:`` of a match/exclude block)."""
    kinds = desc.get("kinds") or []
    if kinds and not any(_kind_entry(k, t) for k in kinds):
        return False
    if desc.get("name") and not _glob(desc["name"], t.name):
        return False
    if desc.get("names") and not any(_glob(n, t.name) for n in desc["names"]):
        return False
    if desc.get("namespaces") and not any(_glob(n, t.namespace) for n in desc["namespaces"]):
        return False
    ops = desc.get("operations")
    if ops and t.operation not in [str(o) for o in ops]:
        return False
    if isinstance(desc.get("annotations"), dict):
        for k, v in desc["annotations"].items():
            if k not in t.annotations or not _glob(v, str(t.annotations[k])):
                return False
    if isinstance(desc.get("selector"), dict) and not selector_matches(desc["selector"], t.labels):
        return False
    ns_sel = desc.get("namespaceSelector")
    if not isinstance(ns_sel, dict):
        return True
    return selector_matches(ns_sel, t.labels) if t.kind == "Namespace" else _namespace_selected(ns_sel, t)


def _namespace_selected(selector: dict, t: Target) -> bool:
    """A namespaceSelector on the object's namespace. A namespace that is not among the run's
    objects is taken as selected in a lint (its labels live in the cluster: a policy that might
    apply is applied, never silently skipped); in a Kyverno test, as the CLI does, it has no
    labels (or those of the test's values)."""
    if t.namespace_labels is None and t.unknown_selected:
        return True
    return selector_matches(selector, t.namespace_labels)


def _filter(f: dict, t: Target) -> bool:
    """A ResourceFilter (``{resources: ..., subjects, roles, clusterRoles}``): subjects and roles
    are the request's user, empty offline, so a filter that names any does not match."""
    if f.get("subjects") or f.get("roles") or f.get("clusterRoles"):
        return False
    return _description(f.get("resources") or {}, t)


def kyverno_match(block: Any, t: Target, empty: bool) -> bool:
    """A ``match`` / ``exclude`` block: ``any``, ``all`` or a plain ``resources``; ``empty``: the
    answer for a block that says nothing."""
    if not isinstance(block, dict):
        return empty
    if block.get("any"):
        return any(_filter(f, t) for f in block["any"] if isinstance(f, dict))
    if block.get("all"):
        return all(_filter(f, t) for f in block["all"] if isinstance(f, dict))
    if block.get("resources") or block.get("subjects") or block.get("roles") or block.get("clusterRoles"):
        return _filter(block, t)
    return empty


# ----------------------------------------------------------------------------
# Building rules


# Kyverno's own CEL libraries (github.com/kyverno/sdk extensions/cel/libs) not provided here: an
# expression that calls one makes its rule not evaluated (not a malformed policy).
KYVERNO_LIBRARIES = frozenset(
    ("json", "yaml", "hash", "gzip", "random", "x509", "time", "user", "image", "imagedata", "http", "globalContext")
)
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)'")
_OR_VALUE = re.compile(r"\.\s*orValue\s*\(")
_SEGMENT = re.compile(r"\.\??([A-Za-z_][A-Za-z0-9_]*)$")


def or_value_compat(source: str) -> str:
    """Kyverno's ``orValue`` on a value that is not optional (pkg/cel/compiler/env.go,
    OrValueCompatEnvOptions): the value itself, and the default when reading it failed. Written
    here as optional field selection: ``container.volumeMounts.orValue([])`` is read as
    ``container.?volumeMounts.orValue([])`` (every field of the chain before it selected with
    ``.?``), which gives the same for present and missing fields."""
    from kubelint_ml.engine.cel import _STRING_LITERAL

    masked = _STRING_LITERAL.sub(lambda m: '"' + "_" * (len(m.group(0)) - 2) + '"', source)
    edits: list[int] = []  # positions of dots to turn into ".?"
    for m in _OR_VALUE.finditer(masked):
        end = m.start()
        while True:
            seg = _SEGMENT.search(masked, 0, end)
            if seg is None:
                break
            if masked[seg.start() + 1] != "?":
                edits.append(seg.start())
            end = seg.start()
    for pos in sorted(set(edits), reverse=True):
        source = source[: pos + 1] + "?" + source[pos + 1 :]
    return source


class _Compiler:
    def __init__(self, file: str, doc: Any, what: str, compat: bool = False) -> None:
        self.file, self.doc, self.what = file, doc, what
        self.offline: str = ""
        self.compat = compat  # Kyverno's CEL policies: orValue on values that are not optional

    def __call__(self, expr: Any, path: tuple) -> Any:
        from kubelint_ml.engine.cel import CelCompileError, compile_expression

        where = _where(self.doc, path, self.file)
        if not isinstance(expr, str) or not expr.strip():
            raise PolicyError(f"{where}: {self.what}: {_render(path)}: no expression")
        m = _OFFLINE.search(_strip_literals(expr))
        if m:
            if m.group(1):
                why = f"calls {m.group(1)}.*, a Kyverno library that needs the cluster or the network"
            elif m.group(2):
                why = "calls Kyverno's image library (image(), image.GetMetadata: registries are not reached offline)"
            else:
                why = "calls time.now(): a result that depends on the clock is not a lint result"
            self.offline = self.offline or why
            return None

        source = or_value_compat(expr) if self.compat and "orValue" in expr else expr
        try:
            return compile_expression(source, NAMES, libraries=True)
        except CelCompileError as e:
            m = _UNDECLARED.search(str(e))
            if m and m.group(1).split(".")[0] in KYVERNO_LIBRARIES:
                self.offline = self.offline or f"uses {m.group(1)}, a Kyverno CEL library kubelint-ml does not have"
                return None
            raise PolicyError(f"{where}: {self.what}: {_render(path)}: {e}") from None


def _strip_literals(expr: str) -> str:
    from kubelint_ml.engine.cel import _STRING_LITERAL

    return _STRING_LITERAL.sub('""', expr)


def _cel_parts(rule: Rule, spec: dict, base: tuple, compile_: _Compiler, conditions_key: str = "matchConditions"):
    for i, v in enumerate(spec.get("variables") or []):
        if not isinstance(v, dict):
            continue
        rule.variables.append(
            (str(v.get("name")), compile_(v.get("expression"), (*base, "variables", i, "expression")))
        )
    for i, v in enumerate(spec.get(conditions_key) or []):
        if not isinstance(v, dict):
            continue
        rule.conditions.append(
            (str(v.get("name") or i), compile_(v.get("expression"), (*base, conditions_key, i, "expression")))
        )
    key = "expressions" if "expressions" in spec else "validations"
    for i, v in enumerate(spec.get(key) or []):
        if not isinstance(v, dict):
            continue
        mexpr = v.get("messageExpression")
        rule.validations.append(
            Validation(
                compile_(v.get("expression"), (*base, key, i, "expression")),
                str(v.get("message") or ""),
                compile_(mexpr, (*base, key, i, "messageExpression")) if mexpr else None,
            )
        )
    for i, a in enumerate(spec.get("auditAnnotations") or []):
        if isinstance(a, dict):  # checked (they compile); they do not decide anything
            compile_(a.get("valueExpression"), (*base, "auditAnnotations", i, "valueExpression"))
    if compile_.offline:
        rule.unsupported = compile_.offline


def _severity(actions: Any, default: str = "error") -> str:
    sevs = [ACTIONS.get(str(a).lower()) for a in actions or []]
    for s in ("error", "warning", "info"):
        if s in sevs:
            return s
    return default


def _pods_only(match: dict) -> bool:
    """Kyverno's CanAutoGen for CEL policies (pkg/cel/autogen/support.go): one rule, core v1
    ``pods``, no object selector, no exclusions, no resource names."""
    if not isinstance(match, dict):
        return False
    sel = match.get("objectSelector")
    if isinstance(sel, dict) and (sel.get("matchLabels") or sel.get("matchExpressions")):
        return False
    if match.get("excludeResourceRules"):
        return False
    rules = match.get("resourceRules") or []
    if len(rules) != 1 or not isinstance(rules[0], dict):
        return False
    r = rules[0]
    if r.get("resourceNames"):
        return False
    return (
        list(r.get("apiGroups") or [""]) == [""]
        and list(r.get("apiVersions") or ["v1"]) == ["v1"]
        and list(r.get("resources") or []) == ["pods"]
    )


def _resource_kinds(match: dict) -> frozenset[str] | None:
    """The resources (plurals) ``matchConstraints`` can match; None: any."""
    out: set[str] = set()
    for r in match.get("resourceRules") or []:
        for res in (r or {}).get("resources") or [] if isinstance(r, dict) else []:
            res = str(res)
            if res in ("*", "*/*"):
                return None
            out.add(res)
    return frozenset(out)


def _selects_namespaces(match: Any) -> bool:
    """Whether a match block has a namespaceSelector (namespace labels come from the run)."""
    return isinstance(match, dict) and "namespaceSelector" in str(match)


def validating_policy(file: str, doc: dict, line: int) -> list[Rule]:
    name = str(_meta(doc).get("name") or "")
    spec = _submap(doc, "spec")
    kind = str(doc.get("kind"))
    if not name:
        raise PolicyError(f"{file}:{line}: {kind} without metadata.name")
    rule = Rule(f"{kind}/{name}", kind, name, "", file, line)
    if kind not in ("ValidatingPolicy", "NamespacedValidatingPolicy"):
        rule.unsupported = f"{kind} is not evaluated offline (image verification needs registries)"
        return [rule]
    if str(_submap(spec, "evaluation").get("mode") or "Kubernetes") == "JSON":
        rule.unsupported = "evaluation mode JSON (payloads that are not Kubernetes objects) is not evaluated"
        return [rule]
    match = _submap(spec, "matchConstraints")
    if not match.get("resourceRules"):
        raise PolicyError(f"{_where(doc, ('spec', 'matchConstraints'), file)}: {kind} {name}: no resourceRules")
    rule.match = functools.partial(resources_match, match)
    if kind.startswith("Namespaced"):  # applies in its own namespace only
        rule.namespace_policy = str(_meta(doc).get("namespace") or "default")
        rule.match = functools.partial(_in_namespace, rule.namespace_policy, rule.match)
    rule.kinds = _resource_kinds(match)
    rule.needs_context = _selects_namespaces(match)
    rule.severity = _severity(spec.get("validationActions") or ["Deny"])
    _cel_parts(rule, spec, ("spec",), _Compiler(file, doc, f"{kind} {name}", compat=True))
    if not rule.validations and not rule.unsupported:
        raise PolicyError(f"{_where(doc, ('spec',), file)}: {kind} {name}: no validations")
    rule.pods = _pods_only(match)
    controllers = (_submap(_submap(spec, "autogen"), "podControllers")).get("controllers")
    if controllers is not None:
        rule.autogen = frozenset(str(c).lower() for c in controllers)
    return [rule]


def admission_policy(file: str, doc: dict, line: int, bindings: list[tuple[str, dict, int]]) -> list[Rule]:
    name = str(_meta(doc).get("name") or "")
    if not name:
        raise PolicyError(f"{file}:{line}: ValidatingAdmissionPolicy without metadata.name")
    spec = _submap(doc, "spec")
    match = _submap(spec, "matchConstraints")
    base = Rule(f"ValidatingAdmissionPolicy/{name}", "ValidatingAdmissionPolicy", name, "", file, line)
    _cel_parts(base, spec, ("spec",), _Compiler(file, doc, f"ValidatingAdmissionPolicy {name}"))
    if not base.validations and not base.unsupported:
        raise PolicyError(f"{_where(doc, ('spec',), file)}: ValidatingAdmissionPolicy {name}: no validations")
    base.param_kind = spec.get("paramKind") if isinstance(spec.get("paramKind"), dict) else None
    base.kinds = _resource_kinds(match)
    base.needs_context = _selects_namespaces(match)
    base.pods = _pods_only(match)
    mine = [b for b in bindings if str(_submap(b[1], "spec").get("policyName") or "") == name]
    if not mine:
        base.match = functools.partial(resources_match, match)
        return [base]
    out = []
    for bfile, bdoc, bline in mine:
        bname = str(_meta(bdoc).get("name") or "")
        bspec = _submap(bdoc, "spec")
        r = Rule(
            f"ValidatingAdmissionPolicy/{name}/{bname}",
            "ValidatingAdmissionPolicy",
            name,
            bname,
            bfile,
            bline,
            _severity(bspec.get("validationActions") or ["Deny"]),
            None,
            base.conditions,
            base.variables,
            base.validations,
            None,
            base.pods,
            True,
            base.param_kind,
            bspec.get("paramRef") if isinstance(bspec.get("paramRef"), dict) else None,
            base.unsupported,
        )
        r.kinds = base.kinds
        r.needs_context = base.needs_context or _selects_namespaces(bspec.get("matchResources"))
        bmatch = bspec.get("matchResources")
        if isinstance(bmatch, dict) and bmatch.get("resourceRules"):
            r.match = functools.partial(_both, match, bmatch)
            r.pods = r.pods and _pods_only(bmatch)
        elif isinstance(bmatch, dict):  # selectors only: they narrow the policy's own rules
            narrowed = {**match, **{k: v for k, v in bmatch.items() if k != "resourceRules"}}
            r.match = functools.partial(resources_match, narrowed)
        else:
            r.match = functools.partial(resources_match, match)
        out.append(r)
    return out


def kyverno_policy(file: str, doc: dict, line: int) -> list[Rule]:
    kind = str(doc.get("kind"))
    meta = _meta(doc)
    name = str(meta.get("name") or "")
    if not name:
        raise PolicyError(f"{file}:{line}: {kind} without metadata.name")
    spec = _submap(doc, "spec")
    spec_action = str(spec.get("validationFailureAction") or spec.get("failureAction") or "Audit").lower()
    annotations = _submap(meta, "annotations")
    controllers = annotations.get(AUTOGEN_ANNOTATION)
    out = []
    for i, r in enumerate(spec.get("rules") or []):
        if not isinstance(r, dict):
            continue
        rname = str(r.get("name") or i)
        rule = Rule(f"{kind}/{name}/{rname}", kind, name, rname, file, line)
        if kind == "Policy":
            rule.namespace_policy = str(meta.get("namespace") or "default")
        validate = r.get("validate")
        form = _form(r)
        if form:
            rule.unsupported = f"a {form} rule (only validate.cel rules are evaluated)"
            out.append(rule)
            continue
        assert isinstance(validate, dict)
        cel = _submap(validate, "cel")
        action = str(validate.get("failureAction") or validate.get("validationFailureAction") or spec_action).lower()
        rule.severity = FAILURE_ACTIONS.get(action, "info")
        rule.match = functools.partial(_rule_match, r.get("match"), r.get("exclude"), rule.namespace_policy)
        rule.kinds = _match_kinds(r.get("match"))
        rule.needs_context = _selects_namespaces(r.get("match")) or _selects_namespaces(r.get("exclude"))
        compile_ = _Compiler(file, doc, f"{kind} {name} rule {rname}")
        base = ("spec", "rules", i)
        for j, v in enumerate(r.get("celPreconditions") or []):
            if isinstance(v, dict):
                rule.conditions.append(
                    (
                        str(v.get("name") or j),
                        compile_(v.get("expression"), (*base, "celPreconditions", j, "expression")),
                    )
                )
        _cel_parts(rule, cel, (*base, "validate", "cel"), compile_)
        for v in rule.validations:  # an expression without a message has the rule's (validate_cel.go)
            v.message = v.message or str(validate.get("message") or "")
        if not rule.validations and not rule.unsupported:
            raise PolicyError(
                f"{_where(doc, (*base, 'validate', 'cel'), file)}: {kind} {name} rule {rname}: no expressions"
            )
        if r.get("context"):
            rule.unsupported = rule.unsupported or "a rule with a context (API calls, ConfigMaps, globalContext)"
        if r.get("preconditions"):
            rule.unsupported = rule.unsupported or "JMESPath preconditions (only celPreconditions are evaluated)"
        rule.param_kind = cel.get("paramKind") if isinstance(cel.get("paramKind"), dict) else None
        rule.param_ref = cel.get("paramRef") if isinstance(cel.get("paramRef"), dict) else None
        out.append(rule)
    pods = _kyverno_autogen(spec)
    if controllers is not None:
        allowed = frozenset(c.strip().lower() for c in str(controllers).split(",") if c.strip())
        auto: frozenset[str] | None = frozenset() if "none" in allowed else allowed
    else:
        auto = None
    for rule in out:
        rule.pods = pods
        rule.autogen = auto
    if not out:
        raise PolicyError(f"{file}:{line}: {kind} {name}: no rules")
    return out


def _in_namespace(namespace: str, match: Any, t: Target) -> bool:
    return t.namespace == namespace and bool(match(t))


def _both(match: dict, binding: dict, t: Target) -> bool:
    return resources_match(match, t) and resources_match(binding, t)


def _rule_match(match: Any, exclude: Any, namespace: str, t: Target) -> bool:
    """A ClusterPolicy / Policy rule's ``match`` and ``exclude`` (a Policy: its own namespace only)."""
    if namespace and t.namespace != namespace:
        return False
    return kyverno_match(match, t, False) and not kyverno_match(exclude, t, False)


def _match_kinds(block: Any) -> frozenset[str] | None:
    """The resources (plurals) a Kyverno ``match`` block can match; None: any."""
    if not isinstance(block, dict):
        return None
    filters = list(block.get("any") or []) + list(block.get("all") or []) + [block]
    out: set[str] = set()
    for f in filters:
        desc = f.get("resources") if isinstance(f, dict) else None
        if not isinstance(desc, dict):
            continue
        kinds = desc.get("kinds") or []
        if not kinds:
            return None
        for k in kinds:
            kind = str(k).split("/")
            name = kind[-2] if len(kind) >= 2 and kind[-1][:1].islower() and kind[-2][:1].isupper() else kind[-1]
            if "*" in name or "?" in name:
                return None
            out.add(plural(name))
    return frozenset(out) if out else None


def _form(r: dict) -> str:
    for key in ("mutate", "generate", "verifyImages"):
        if r.get(key):
            return key
    validate = r.get("validate")
    if not isinstance(validate, dict):
        return "rule without validate"
    if isinstance(validate.get("cel"), dict):
        return ""
    for key in _RULE_FORMS:
        if key in validate:
            return f"validate.{key}"
    return "validate rule of an unknown form"


def _kyverno_autogen(spec: dict) -> bool:
    """Kyverno's CanAutoGen (pkg/autogen/v1/autogen.go): every rule matches Pods (or controllers)
    by kind only: no names, selectors or annotations, no kind beside Pod."""
    needed = False
    for r in spec.get("rules") or []:
        if not isinstance(r, dict):
            continue
        if r.get("generate"):
            return False
        blocks = []
        for key in ("match", "exclude"):
            b = r.get(key)
            if isinstance(b, dict):
                if isinstance(b.get("resources"), dict):
                    blocks.append(b["resources"])
                for f in list(b.get("any") or []) + list(b.get("all") or []):
                    if isinstance(f, dict) and isinstance(f.get("resources"), dict):
                        blocks.append(f["resources"])
        for d in blocks:
            kinds = [str(k).split("/")[-1] for k in d.get("kinds") or []]
            if d.get("name") or d.get("names") or d.get("selector") or d.get("annotations"):
                return False
            if len(kinds) > 1 and "Pod" in kinds:
                return False
            needed = needed or any(k == "Pod" or k in KYVERNO_CONTROLLERS for k in kinds)
    return needed


def _exception(file: str, doc: dict, line: int, rules: list[Rule]) -> None:
    """A ``policies.kyverno.io`` PolicyException: the policies it names skip an object on which
    all its ``matchConditions`` are true (one more condition of each rule: ``!(c1 && c2 ...)``)."""
    name = str(_meta(doc).get("name") or "")
    spec = _submap(doc, "spec")
    conditions = [c for c in spec.get("matchConditions") or [] if isinstance(c, dict)]
    sources = [str(c.get("expression") or "") for c in conditions]
    if not sources or not all(x.strip() for x in sources):
        raise PolicyError(f"{file}:{line}: PolicyException {name}: no matchConditions (it would except everything)")
    compile_ = _Compiler(file, doc, f"PolicyException {name}", compat=True)
    for i, c in enumerate(conditions):  # each checked where it is written
        compile_(c.get("expression"), ("spec", "matchConditions", i, "expression"))
    combined = "!(" + " && ".join(f"({x})" for x in sources) + ")"
    for ref in spec.get("policyRefs") or []:
        if not isinstance(ref, dict):
            continue
        for r in rules:
            if r.policy == str(ref.get("name")) and (not ref.get("kind") or r.family == str(ref.get("kind"))):
                program = compile_(combined, ("spec", "matchConditions"))
                if program is not None:
                    r.conditions.insert(0, (f"exception {name}", program))


def build(docs: list[tuple[str, dict, int]]) -> list[Rule]:
    """Every rule of the Kyverno and admission documents; :class:`PolicyError` for a malformed one."""
    bindings = [(f, d, line) for f, d, line in docs if d.get("kind") in ("ValidatingAdmissionPolicyBinding",)]
    out: list[Rule] = []
    for file, doc, line in docs:
        group = str(doc.get("apiVersion") or "").split("/", 1)[0]
        kind = doc.get("kind")
        if group == KYVERNO_CEL_GROUP and kind in KYVERNO_CEL_KINDS:
            out.extend(validating_policy(file, doc, line))
        elif group == ADMISSION_GROUP and kind == "ValidatingAdmissionPolicy":
            out.extend(admission_policy(file, doc, line, bindings))
        elif group == KYVERNO_GROUP and kind in ("ClusterPolicy", "Policy"):
            out.extend(kyverno_policy(file, doc, line))
    for file, doc, line in docs:
        if (
            str(doc.get("apiVersion") or "").split("/", 1)[0] == KYVERNO_CEL_GROUP
            and doc.get("kind") == "PolicyException"
        ):
            _exception(file, doc, line, out)
    seen: set[str] = set()
    for r in out:
        if not r.unsupported:
            r.finish()
        if r.rule_id in seen:
            raise PolicyError(f"{r.file}:{r.line}: {r.rule_id} is defined twice")
        seen.add(r.rule_id)
    return out


# ----------------------------------------------------------------------------
# Evaluation


class Outcome:
    """What one rule gave for one target: ``skip``, ``pass``, ``fail`` (with messages) or ``error``
    (the errors first, then the messages of validations that failed, if any)."""

    __slots__ = ("status", "messages")

    def __init__(self, status: str, messages: list[str] | None = None) -> None:
        self.status = status
        self.messages = messages or []


@dataclass
class Context:
    """The run's objects, for params, namespaces and ``resource.Get``/``List``."""

    objects: list[dict] = field(default_factory=list)
    namespaces: dict[str, dict] = field(default_factory=dict)  # name -> labels
    # a namespace the run does not hold is selected by every namespaceSelector (lint) or by none
    # (a Kyverno test, as the CLI)
    unknown_namespaces_selected: bool = True
    namespace_objects: dict[str, dict] = field(default_factory=dict)  # name -> the Namespace
    user_info: dict = field(default_factory=dict)
    _kinds: dict[str, list[dict]] | None = None

    def of_kind(self, kind: str) -> list[dict]:
        if self._kinds is None:
            self._kinds = {}
            for o in self.objects:
                if isinstance(o, dict):
                    self._kinds.setdefault(str(o.get("kind")), []).append(o)
        return self._kinds.get(kind, [])

    @classmethod
    def of(cls, objects: list[dict], namespace_labels: dict[str, dict] | None = None) -> Context:
        ctx = cls(list(objects))
        for o in objects:
            if isinstance(o, dict) and o.get("kind") == "Namespace" and o.get("apiVersion") == "v1":
                ns = str(_meta(o).get("name") or "")
                ctx.namespaces[ns] = dict(_submap(_meta(o), "labels"))
                ctx.namespace_objects[ns] = o
        for ns, labels in (namespace_labels or {}).items():
            ctx.namespaces[ns] = dict(labels)
        return ctx


def target(view: dict, owner: dict | None = None, ctx: Context | None = None, operation: str = "CREATE") -> Target:
    """A target for an object (``owner``: the object a pod template's view comes from)."""
    from kubelint_ml.policy.gatekeeper import CLUSTER_KINDS

    src = owner if owner is not None else view
    group, version = _gv(str(src.get("apiVersion") or ""))
    kind = str(src.get("kind") or "")
    meta = _meta(src)
    namespace = "" if kind in CLUSTER_KINDS or kind == "Namespace" else str(meta.get("namespace") or "default")
    vmeta = _meta(view)
    labels = ctx.namespaces.get(namespace) if ctx is not None and namespace else None
    return Target(
        view,
        kind,
        group,
        version,
        str(meta.get("name") or ""),
        namespace,
        _submap(vmeta, "labels"),
        _submap(vmeta, "annotations"),
        labels,
        operation,
        ctx.unknown_namespaces_selected if ctx is not None else True,
    )


def pod_view(owner: dict, spec: dict, metadata: dict | None, keep_namespace: bool) -> dict:
    """The owner as a pod policy sees it after Kyverno's autogen rewrite: ``object.spec`` is the
    pod template's spec, ``object.metadata`` its metadata (the owner's namespace kept, as the CEL
    policies' autogen keeps ``object.metadata.namespace``). A template written without
    ``metadata`` has an empty one: at admission every pod template has it (a Deployment's
    selector needs its labels, a Job's controller adds its own)."""
    view = {k: v for k, v in owner.items() if k not in ("metadata", "spec")}
    meta = dict(metadata) if isinstance(metadata, dict) else {}
    ns = _meta(owner).get("namespace")
    if keep_namespace:
        meta.pop("namespace", None)
        if ns:
            meta["namespace"] = ns
    view["metadata"] = meta
    view["spec"] = spec
    return view


def _request(t: Target, ctx: Context | None) -> dict:
    old: Any = t.view if t.operation in ("UPDATE", "DELETE") else None
    user: Any = dict(ctx.user_info) if ctx is not None else {}
    if t.review is not None:  # a review's own user and old object
        user = t.review["userInfo"] if isinstance(t.review.get("userInfo"), dict) else user
        old = t.review["oldObject"] if isinstance(t.review.get("oldObject"), dict) else old
    return {
        "kind": {"group": t.group, "version": t.version, "kind": t.kind},
        "resource": {"group": t.group, "version": t.version, "resource": plural(t.kind)},
        "name": t.name,
        "namespace": t.namespace,
        "operation": t.operation,
        "userInfo": user,
        "object": None if t.operation == "DELETE" else t.view,
        "oldObject": old,
        "dryRun": False,
    }


def _namespace_object(t: Target, ctx: Context | None) -> dict | None:
    if not t.namespace:
        return None
    known = ctx.namespace_objects.get(t.namespace) if ctx is not None else None
    if known is not None:
        return known
    meta: dict = {"name": t.namespace}
    labels = ctx.namespaces.get(t.namespace) if ctx is not None else None
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def _params(rule: Rule, t: Target, ctx: Context | None) -> list[Any] | None:
    """The params a rule is evaluated with (``[None]`` without paramKind); ``None`` when the
    binding's params are missing and it says Allow (the rule does not apply)."""
    if rule.param_kind is None:
        return [None]
    api, kind = str(rule.param_kind.get("apiVersion") or ""), str(rule.param_kind.get("kind") or "")
    ref = rule.param_ref or {}
    found = []
    for o in ctx.of_kind(kind) if ctx is not None else []:
        if api and o.get("apiVersion") != api:
            continue
        meta = _meta(o)
        if ref.get("name") and meta.get("name") != ref.get("name"):
            continue
        ns = ref.get("namespace")
        if ns is None and meta.get("namespace") is not None and t.namespace:
            ns = t.namespace
        if ns and str(meta.get("namespace") or "default") != ns:
            continue
        if isinstance(ref.get("selector"), dict) and not selector_matches(ref["selector"], _submap(meta, "labels")):
            continue
        found.append(o)
    if found:
        return found
    if not ref:
        return [None]  # no binding said where: as kyverno apply, the policy runs without params
    if str(ref.get("parameterNotFoundAction") or "Deny") == "Allow":
        return None
    return ["__missing__"]


def evaluate(rule: Rule, t: Target, ctx: Context | None = None, converted: dict | None = None) -> Outcome:
    """One rule on one target (already matched). A rule with an expression that may build large
    values or loop (see ``engine.cel.needs_budget``) is evaluated whole in the budgeted helper
    process (one request per rule and target), the others here."""
    from kubelint_ml.engine.cel import CelEvalError, _convert

    params_list = _params(rule, t, ctx)
    if params_list is None:
        return Outcome("skip")
    messages: list[str] = []
    base = _activation(t, ctx, rule.uses_resource)
    converted = {} if converted is None else converted
    sandbox = _rule_sandbox() if rule.budgeted else None
    applied = False
    for params in params_list:
        if params == "__missing__":
            ref = rule.param_ref or {}
            messages.append(f"no params found for binding {rule.rule}: {ref.get('name') or ref.get('selector')}")
            applied = True
            continue
        data = {k: _convert(v, converted) for k, v in base.items() if k in rule.names and k != "resource"}
        if "resource" in rule.names and "resource" in base:
            data["resource"] = (
                _run_marker(ctx) if sandbox is not None and ctx is not None else _convert(base["resource"], converted)
            )
        if "params" in rule.names:
            data["params"] = _convert(params, converted)
        if sandbox is not None:
            from kubelint_ml.engine.celsandbox import SandboxFailure

            try:
                [(status, found)] = sandbox.evaluate(
                    "0\t" + _spec_line(rule, sandbox), NAMES, {f"{k}#0": v for k, v in data.items()}
                )
            except (SandboxFailure, ValueError) as e:
                return Outcome("error", [str(e)])
        else:
            try:
                status, found = run_programs(rule.conditions, rule.variables, rule.validations, rule.first_only, data)
            except CelEvalError as e:
                return Outcome("error", [_why(e)])
        if status == "error":
            return Outcome("error", found)
        if status != "skip":
            applied = True
            messages.extend(found)
    if not applied:
        return Outcome("skip")
    return Outcome("fail", messages) if messages else Outcome("pass")


def _activation(t: Target, ctx: Context | None, resource: bool) -> dict[str, Any]:
    """The variables a target gives every rule (built once per target)."""
    base = t.cache.get("activation")
    if base is None:
        request = _request(t, ctx)
        base = t.cache["activation"] = {
            "object": request["object"],
            "oldObject": request["oldObject"],
            "request": request,
            "namespaceObject": _namespace_object(t, ctx),
        }
    if resource and "resource" not in base and ctx is not None:
        from kubelint_ml.engine.cellibs import resource_value

        base["resource"] = resource_value(ctx)
    return base


def run_programs(
    conditions: list[tuple[str, Any]],
    variables: list[tuple[str, Any]],
    validations: list[Validation],
    first_only: bool,
    data: dict[str, Any],
    shared: dict | None = None,
) -> tuple[str, list[str]]:
    """``(status, messages)`` of a rule's programs on converted values, evaluated in this process:
    ``skip`` (a condition is not true), ``pass``/``fail`` (the messages of the validations that
    failed) or ``error`` (the errors, then the messages). Raises CelEvalError for an error in a
    condition, or in a validation of a Kyverno ValidatingPolicy (it stops there)."""
    from kubelint_ml.engine.cel import CelEvalError

    activation = dict(data)
    activation["variables"] = {}
    programs = [p for _, p in conditions] + [p for _, p in variables] + [v.program for v in validations]
    env = programs[0].env if programs else None
    if shared is not None:  # the target's Activation (without variables), shared by its rules
        act = shared.get("act")
        if act is None:
            act = shared["act"] = _cel_activation(env, activation)
    else:
        act = _cel_activation(env, activation)
    for _, program in conditions:
        if program.evaluate_here(activation, act) is not True:
            return "skip", []
    values: dict[str, Any] = {}
    failed: dict[str, str] = {}  # why each unset variable is unset
    for name, program in variables:
        activation["variables"] = dict(values)
        try:
            values[name] = program.evaluate_here(activation, _cel_activation(env, activation), plain=env is not None)
        except CelEvalError as e:
            # unset: an expression that reads it fails, as a lazy one would
            failed[name] = _cause(str(e), failed) or f"variables.{name}: {_why(e)}"
    activation["variables"] = values
    act = _cel_activation(env, activation) if variables else act
    errors: list[str] = []
    messages: list[str] = []
    for v in validations:
        try:
            if v.program.evaluate_here(activation, act) is True:
                continue
        except CelEvalError as e:
            cause = _cause(str(e), failed)
            if first_only:
                if cause:
                    raise CelEvalError(cause) from None
                raise
            errors.append(cause or _why(e))  # the API server's validator goes on to the next one
            continue
        messages.append(_message(v, activation))
        if first_only:
            break  # Kyverno's ValidatingPolicy stops at the first validation that fails
    if errors:
        return "error", errors + messages
    return ("fail" if messages else "pass"), messages


_MISSING_KEY = re.compile(r'^Key not found in map : "([^"]+)"$')


def _cause(message: str, failed: dict[str, str]) -> str:
    """For an error reading a variable that is unset: why that variable is unset."""
    m = _MISSING_KEY.match(message)
    return failed.get(m.group(1), "") if m else ""


def _why(e: Exception) -> str:
    """An evaluation error as said in a finding (the runtime's allocation failure is the budget)."""
    text = str(e)
    if "bad_alloc" in text:
        from kubelint_ml.engine.celsandbox import MEMORY_BUDGET

        return f"memory budget exceeded (more than {MEMORY_BUDGET >> 20} MiB)"
    return text


def _cel_activation(env: Any, data: dict[str, Any]) -> Any:
    """One Activation of the environment every Kyverno expression is compiled in, for all the
    programs that see the same values (None: each evaluation converts its values)."""
    if env is None:
        return None
    try:
        return env.Activation(data)
    except Exception:  # noqa: BLE001 - a value the runtime cannot hold: each evaluation says so
        return None


def _message(v: Validation, activation: dict) -> str:
    from kubelint_ml.engine.cel import CelEvalError

    if v.message_expression is not None:
        try:
            value = v.message_expression.evaluate_here(activation)
            if isinstance(value, str) and value.strip():
                return value
        except CelEvalError:
            pass
    return v.message or f"failed expression: {v.program.source}"


@functools.lru_cache(maxsize=256)
def _helper_rule(spec: str) -> tuple:
    """A rule's programs compiled from its spec (in the helper process, once per spec)."""
    import json

    from kubelint_ml.engine.cel import compile_expression

    c, v, x, first = json.loads(spec)

    def compiled(e: str) -> Any:
        return compile_expression(e, NAMES, libraries=True)

    return (
        [(str(i), compiled(e)) for i, e in enumerate(c)],
        [(n, compiled(e)) for n, e in v],
        [Validation(compiled(e), m, compiled(me) if me else None) for e, m, me in x],
        first,
    )


_SANDBOX: list = []


def _rule_sandbox() -> Any:
    """The helper process that evaluates whole rules under the CEL budget (engine.celsandbox), or
    None where processes cannot be forked (or KUBELINT_ML_CEL_IN_PROCESS=1)."""
    from kubelint_ml.engine.cel import sandbox_for

    return sandbox_for(_SANDBOX, _rule_in_helper)


def _rule_in_helper(specs: str, names: tuple, data: dict) -> list[tuple[str, list[str]]]:
    """What the budgeted helper runs: one line per (target, rule), ``<target>\\t<rule spec>``; the
    targets' variables are ``<name>#<target>`` in ``data``."""
    from kubelint_ml.engine.cel import CelEvalError

    del names
    out = []
    shared: dict[str, dict] = {}
    targets: dict[str, dict[str, Any]] = {}
    for k, v in data.items():
        name, _, target = k.rpartition("#")
        targets.setdefault(target, {})[name] = _run_objects(v) if name == "resource" and isinstance(v, str) else v
    for line in specs.split("\n"):
        target, _, spec = line.partition("\t")
        key, _, text = spec.partition("\t")
        if text:
            _HELPER_SPECS[key] = text
        spec = _HELPER_SPECS[key]
        activation = targets.get(target, {})
        conditions, variables, validations, first = _helper_rule(spec)
        try:
            out.append(
                run_programs(conditions, variables, validations, first, activation, shared.setdefault(target, {}))
            )
        except CelEvalError as e:
            out.append(("error", [_why(e)]))
    return out


_HELPER_SPECS: dict[str, str] = {}  # in the helper: rule specs by key, sent once
_SENT_SPECS: dict[str, int] = {}  # in the parent: spec key -> the helper (generation) it was sent to


def _spec_line(rule: Rule, sandbox: Any) -> str:
    """``key`` when the helper has the rule's spec already, else ``key<TAB>spec``."""
    spec = rule.spec()
    key = str(hash(spec) & 0xFFFFFFFFFFFF)
    sandbox.ensure_started()
    if _SENT_SPECS.get(key) == sandbox.generation:
        return key
    _SENT_SPECS[key] = sandbox.generation
    return f"{key}\t{spec}"


# The contexts of this process's runs, by key: the helper process, forked after they are set,
# reads the run's objects from here (resource.Get/List) instead of receiving them each time.
_CONTEXTS: dict[str, Context] = {}


def _run_marker(ctx: Context) -> str:
    key = f"run-{id(ctx)}"
    if _CONTEXTS.get(key) is not ctx:
        _CONTEXTS.clear()
        _CONTEXTS[key] = ctx
        if _SANDBOX and _SANDBOX[0] is not None:
            _SANDBOX[0].stop()  # the next evaluation forks a helper that has this context
    return key


@functools.lru_cache(maxsize=2)
def _run_objects(key: str) -> dict:
    """In the helper: the ``resource`` value of a run, converted once."""
    from kubelint_ml.engine.cel import to_cel_value
    from kubelint_ml.engine.cellibs import resource_value

    ctx = _CONTEXTS.get(key)
    if ctx is None:
        raise ValueError("the objects of the run are not known to the evaluation process")
    return to_cel_value(resource_value(ctx))


# Rule evaluations sent to the helper in one request: few enough that a request stays far below
# the helper's CPU budget per request (about 50 us each), many enough that the round trips of a
# run are few.
REQUEST_RULES = 256


def evaluate_many(pairs: list[tuple[Rule, Target]], ctx: Context | None, converted: dict) -> list[Outcome]:
    """``evaluate`` for each (rule, target): the budgeted rules (without params) are sent to the
    helper REQUEST_RULES at a time; when a request hits a budget, each of its rules is tried
    alone, so that only the rule that ran away gets the error."""
    sandbox = _rule_sandbox()
    batch = [i for i, (r, _) in enumerate(pairs) if sandbox is not None and r.budgeted and r.param_kind is None]
    out: dict[int, Outcome] = {}
    for start in range(0, len(batch) if len(batch) > 1 else 0, REQUEST_RULES):
        _request_batch(pairs, batch[start : start + REQUEST_RULES], ctx, converted, sandbox, out)
    return [out[i] if i in out else evaluate(rule, t, ctx, converted) for i, (rule, t) in enumerate(pairs)]


def _request_batch(
    pairs: list[tuple[Rule, Target]],
    batch: list[int],
    ctx: Context | None,
    converted: dict,
    sandbox: Any,
    out: dict[int, Outcome],
) -> None:
    from kubelint_ml.engine.cel import _convert
    from kubelint_ml.engine.celsandbox import SandboxFailure

    if batch:
        targets: dict[int, int] = {}  # id(target) -> its number in the request
        data: dict[str, Any] = {}
        lines = []
        for i in batch:
            rule, t = pairs[i]
            n = targets.setdefault(id(t), len(targets))
            base = _activation(t, ctx, rule.uses_resource)
            for k in rule.names:
                if k == "resource" and ctx is not None:
                    data[f"resource#{n}"] = _run_marker(ctx)  # the helper has the run's objects
                elif k in base:
                    data.setdefault(f"{k}#{n}", _convert(base[k], converted))
                elif k == "params":
                    data[f"params#{n}"] = None
            lines.append(f"{n}\t{_spec_line(rule, sandbox)}")
        try:
            answers = sandbox.evaluate("\n".join(lines), NAMES, data)
        except (SandboxFailure, ValueError):
            answers = []  # each alone, by the caller
        for i, (status, found) in zip(batch, answers):
            out[i] = _outcome(status, found)


def _outcome(status: str, found: list[str]) -> Outcome:
    if status in ("error", "skip"):
        return Outcome(status, found)
    return Outcome("fail", found) if found else Outcome("pass")


def controller_allowed(rule: Rule, kind: str) -> bool:
    """Whether a rule's autogen settings let it reach the pods of ``kind``."""
    if rule.autogen is None:
        return True
    names = {kind.lower(), plural(kind)}
    return bool(rule.autogen & names)


# ----------------------------------------------------------------------------
# In a lint run


def templates_of(obj: Any) -> list[Any]:
    """The pod templates kubelint-ml builds for an object (every kind it knows)."""
    from kubelint_ml.input.workloads import pod_templates

    try:
        return pod_templates(obj)
    except Exception:  # noqa: BLE001 - a shape the builders refuse: the object itself is still checked
        return []


def plan(
    rules: list[Rule], obj: Any, ctx: Context | None, operation: str = "CREATE", review: dict | None = None
) -> list[tuple[Rule, Target, Any]]:
    """``(rule, target, pod template or None)`` for each evaluation an object gets; ``review``:
    the admission request it came in (its operation, user and old object)."""
    data = defaulted(obj.data)
    if review is not None:
        operation = str(review.get("operation") or operation)
    direct = target(data, ctx=ctx, operation=operation)
    direct.review = review
    out: list[tuple[Rule, Target, Any]] = []
    rest = []
    kind = plural(direct.kind)
    for r in rules:
        if r.unsupported or r.match is None:
            continue
        if (r.kinds is None or kind in r.kinds) and r.match(direct):
            out.append((r, direct, None))
        elif r.pods and direct.kind != "Pod" and controller_allowed(r, direct.kind):
            rest.append(r)
    if not rest:
        return out
    for tpl in templates_of(obj):
        meta = tpl.metadata if isinstance(tpl.metadata, dict) else {}
        views: dict[bool, Target] = {}
        for r in rest:
            t = views.get(r.protect_namespace)
            if t is None:
                view = pod_view(data, tpl.spec, meta, r.protect_namespace)
                t = views[r.protect_namespace] = Target(
                    view,
                    "Pod",
                    "",
                    "v1",
                    direct.name,
                    direct.namespace,
                    _submap(meta, "labels"),
                    _submap(meta, "annotations"),
                    direct.namespace_labels,
                    operation,
                    direct.unknown_selected,
                )
            if r.match(t):
                out.append((r, t, tpl))
    return out


def defaulted(data: dict) -> dict:
    """The object as ``kyverno apply``/``kyverno test`` read it: a namespaced object without a
    namespace is in ``default`` (cmd/cli/kubectl-kyverno/resource/resource.go), and an empty
    ``labels:`` / ``annotations:`` is an empty map."""
    from kubelint_ml.policy.gatekeeper import CLUSTER_KINDS

    meta = data.get("metadata")
    if not isinstance(meta, dict):
        return data
    fix: dict[str, Any] = {}
    if not meta.get("namespace") and data.get("kind") not in CLUSTER_KINDS and data.get("kind") != "Namespace":
        fix["namespace"] = "default"
    for key in ("labels", "annotations"):
        if key in meta and meta[key] is None:
            fix[key] = {}
    if not fix:
        return data
    return {**data, "metadata": {**meta, **fix}}


class CelPolicies:
    """The Kyverno and admission rules of a run, with the run's objects as their context."""

    def __init__(self, rules: list[Rule]) -> None:
        self.all_rules = rules
        self.rules = [r for r in rules if not r.unsupported]
        self.context: Context | None = None
        self._ready: dict[int, tuple[Any, list, list[Outcome]]] = {}  # by prefetch: id(obj) -> results

    def prefetch(self, objects: list[tuple[Any, dict | None]]) -> None:
        """Evaluate every rule on these objects (with the admission request each came in, if any)
        at once, the helper's requests shared by all of them; :meth:`findings` then reads the
        results."""
        pairs: list[tuple[Rule, Target]] = []
        spans = []
        for obj, review in objects:
            planned = plan(self.rules, obj, self.context, review=review)
            spans.append((obj, planned, len(pairs)))
            pairs.extend((r, t) for r, t, _ in planned)
        outcomes = evaluate_many(pairs, self.context, {})
        self._ready = {id(obj): (obj, planned, outcomes[at : at + len(planned)]) for obj, planned, at in spans}

    @property
    def needs_objects(self) -> bool:
        return any(r.needs_context for r in self.rules)

    def set_objects(self, objects: list[dict]) -> None:
        self.context = Context.of(objects)

    def choose(self, off: set[str]) -> None:
        self.all_rules = [r for r in self.all_rules if r.rule_id not in off]
        self.rules = [r for r in self.rules if r.rule_id not in off]

    def findings(self, obj: Any, review: dict | None = None) -> list[Any]:
        from kubelint_ml.engine.api import IGNORE_ANNOTATION, RULE_ERROR
        from kubelint_ml.engine.core import parse_ignore
        from kubelint_ml.findings import Finding
        from kubelint_ml.input.loader import locate

        out: list[Any] = []
        ignore = parse_ignore(obj.annotations.get(IGNORE_ANNOTATION))
        ready = self._ready.pop(id(obj), None)
        if ready is not None and ready[0] is obj:
            _, planned, outcomes = ready
        else:
            planned = plan(self.rules, obj, self.context, review=review)
            outcomes = evaluate_many([(r, t) for r, t, _ in planned], self.context, {})
        for (rule, _, tpl), outcome in zip(planned, outcomes):
            if outcome.status in ("pass", "skip"):
                continue
            path = obj.base if tpl is None else obj.base + tuple(tpl.real_path(tpl.spec_path))
            line, col, _ = locate(obj.root, path)
            where = "" if tpl is None else f" (pod template of {tpl.describe()})"
            if outcome.status == "error":
                what = f"policy {rule.rule_id} failed here (evaluation failed: {outcome.messages[0][:300]}){where}"
                rows = [(RULE_ERROR, "error", f"{what}; the other rules still ran", ERROR_REMEDIATION)]
            else:
                rows = [(rule.rule_id, rule.severity, msg + where, REMEDIATION) for msg in outcome.messages]
            for rid, severity, msg, remediation in rows:
                f = Finding(rid, severity, msg, remediation, obj.file, line, col, "", obj.ref, None, obj.document)
                reason = ignore.get(rule.rule_id) if rid == rule.rule_id else None
                if reason is not None:
                    f.suppressed = reason or "kubelint-ml.io/ignore annotation"
                out.append(f)
        return out

    def unsupported_findings(self) -> list[Any]:
        """One ``rule-error`` warning per rule that is not evaluated, at the policy."""
        from kubelint_ml.engine.api import RULE_ERROR
        from kubelint_ml.findings import Finding

        return [
            Finding(
                RULE_ERROR,
                "warning",
                f"{r.describe()} is not evaluated: {r.unsupported}",
                "Rewrite the rule as a validate.cel rule or a ValidatingPolicy, or check it with Kyverno itself.",
                r.file,
                r.line,
                1,
                "",
                None,
                None,
                0,
            )
            for r in self.all_rules
            if r.unsupported
        ]

    def rule_infos(self) -> dict[str, Any]:
        from kubelint_ml.findings import RuleInfo

        return {
            r.rule_id: RuleInfo(
                r.rule_id,
                r.severity,
                r.describe(),
                f"{r.describe()} ({r.file}:{r.line})" + (f"; not evaluated: {r.unsupported}" if r.unsupported else "."),
                REMEDIATION,
                "policy",
            )
            for r in self.all_rules
        }
