"""``kubelint-ml export vap``: rules as ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1).

Exported: the enabled custom rules written in CEL whose scope a policy can
reproduce exactly. One policy and one binding per rule:

- An object rule's expression is used as it is. A pod-template, container or
  volume rule gets one validation per kind that has pod templates
  (:data:`TEMPLATE_KINDS`, the table of kubelint_ml/input/workloads.py): the
  kind's templates are listed in CEL, and the rule's expression runs on each
  template (``podSpec``), container (``container``: init containers,
  sidecars and app containers, as the rule's ``scope.containers`` selects)
  or volume (``volume``), under the names the rule was written with.
- The ``kubelint-ml.io/ignore`` annotation (object and template) suppresses
  the rule, as in ``check``; the config's ``exclude`` entries (kind,
  namespace, name) become ``matchConditions``, ``admission.excludeNamespaces``
  and ``admission.excludeLabels`` the binding's selectors.
- ``validationActions`` from the severity (after config overrides): error:
  Deny, warning: Warn, info: Audit. ``failurePolicy: Fail``: an expression
  that errors rejects the object, as ``cel-evaluation-error`` (an error) fails
  ``check``.
- ``messageExpression`` names every failing container (template, volume),
  with the rule's own message or messageExpression.

Built-in rules: those whose logic CEL can state at admission, where an object
is single and concrete, are translated (:mod:`kubelint_ml.admission.vapbuiltin`:
QoS after Pod defaulting, missing memory requests and limits, requests above
limits, extended resources, priority classes, emptyDir sizes); a rule whose
severity depends on accelerators becomes two policies, Warn for the pod
templates that use none and Deny for those that do. ``restart-policy-invalid``
has its own validations per Job kind.

Not exported, with the reason: the other built-in rules (node catalogs,
command lines, other objects, observed usage), the pseudo-rules, rules that
read ``objects`` or ``profile`` (a policy sees one object), custom CEL rules
whose severity depends on accelerators (``acceleratorSeverity``) or whose
scope is ``workloads: accelerator``/``training``, and rules using a CEL
function newer than the profile's Kubernetes version.
"""

from __future__ import annotations

import re
from typing import Any

from kubelint_ml.admission.review import Policy
from kubelint_ml.admission.vapbuiltin import (
    TRANSLATED,
    Variant,
    containers,
    kind_templates,
    qos_best_effort,
    variables,
)
from kubelint_ml.admission.vapbuiltin import group_is as _group
from kubelint_ml.admission.vapbuiltin import ignored as _ignored
from kubelint_ml.admission.vapbuiltin import lit as _lit
from kubelint_ml.input.workloads import KUBEFLOW_REPLICA_SPECS
from kubelint_ml.k8s.dra import admission_dra
from kubelint_ml.k8s.quantity import PLACEHOLDER
from kubelint_ml.k8s.resources import pod_level_gates
from kubelint_ml.k8s.version import parse_version

API = "admissionregistration.k8s.io/v1"
MIN_VERSION = (1, 30)  # ValidatingAdmissionPolicy v1 is GA in 1.30
ACTIONS = {"error": "Deny", "warning": "Warn", "info": "Audit"}

# Functions of the CEL runtime that Kubernetes added after the base environment, by the
# version whose API server first has them (k8s.io/apiserver/pkg/cel/environment/base.go).
FUNCTIONS_SINCE: dict[str, tuple[int, int]] = {
    "quantity": (1, 28),
    "isQuantity": (1, 28),
    "isGreaterThan": (1, 28),
    "isLessThan": (1, 28),
    "compareTo": (1, 28),
    "asApproximateFloat": (1, 28),
    "asInteger": (1, 28),
    "isInteger": (1, 28),
    "sign": (1, 28),
    "add": (1, 28),
    "sub": (1, 28),
    "orValue": (1, 28),
    "hasValue": (1, 28),
    "optMap": (1, 28),
    "value": (1, 28),
    "format": (1, 29),
    "quote": (1, 29),
}
_OPTIONAL_SYNTAX = re.compile(r"\.\?|\[\?|optional\.")


# (group, kind) -> resource of the kinds with pod templates at fixed paths (input/workloads.py KINDS).
_RESOURCES = {
    ("", "Pod"): "pods",
    ("", "PodTemplate"): "podtemplates",
    ("", "ReplicationController"): "replicationcontrollers",
    ("batch", "Job"): "jobs",
    ("batch", "CronJob"): "cronjobs",
    ("apps", "Deployment"): "deployments",
    ("apps", "StatefulSet"): "statefulsets",
    ("apps", "ReplicaSet"): "replicasets",
    ("apps", "DaemonSet"): "daemonsets",
    ("jobset.x-k8s.io", "JobSet"): "jobsets",
    ("trainer.kubeflow.org", "TrainingRuntime"): "trainingruntimes",
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): "clustertrainingruntimes",
    ("ray.io", "RayCluster"): "rayclusters",
    ("ray.io", "RayJob"): "rayjobs",
    ("ray.io", "RayService"): "rayservices",
    ("batch.volcano.sh", "Job"): "jobs",
    ("batch.volcano.sh", "CronJob"): "cronjobs",
    ("flow.volcano.sh", "JobTemplate"): "jobtemplates",
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "leaderworkersets",
}
for _kind in KUBEFLOW_REPLICA_SPECS:
    _RESOURCES[("kubeflow.org", _kind)] = _kind.lower() + "s"

# (group, kind) -> (resource, CEL list of the kind's pod template specs), as input/workloads.py finds them.
TEMPLATE_KINDS: dict[tuple[str, str], tuple[str, str]] = {
    key: (resource, kind_templates(key[0], key[1], Variant()) or "[]") for key, resource in _RESOURCES.items()
}


def _units(rule: Any) -> tuple[str, str, str]:
    """(variable, CEL list of the units inside one template ``klmT`` with ``podSpec`` bound, their label)."""
    if rule.unit == "container":
        return "container", containers("podSpec", frozenset(rule.containers)), "container"
    if rule.unit == "volume":
        return "volume", "(has(podSpec.volumes) ? podSpec.volumes : [])", "volume"
    return "podSpec", "[podSpec]", ""


def _template_validation(rule: Any, kind: tuple[str, str], templates: str) -> dict:
    expr = rule.check["cel"]
    guard = f"object.kind == {_lit(kind[1])} && {_group(kind[0])}"
    var, units, label = _units(rule)
    obj_ignored = _ignored("object.metadata", rule.id)
    tpl_ignored = _ignored("klmT.metadata", rule.id)
    if var == "podSpec":
        inner = f"({expr})"
    else:
        inner = f"({units}).all({var}, ({expr}))"
    body = f"({templates}).all(klmT, {tpl_ignored} || (has(klmT.spec) ? [klmT.spec] : []).all(podSpec, {inner}))"
    validation = f"!({guard}) || {obj_ignored} || {body}"
    message = _message_text(rule)
    if var == "podSpec":
        per_unit = f"({message})"
        failing = f"[podSpec].filter(podSpec, !({expr})).map(podSpec, {per_unit})"
    else:
        per_unit = f"{_lit(label + ' ')} + string({var}.name) + ': ' + ({message})"
        failing = f"({units}).filter({var}, !({expr})).map({var}, {per_unit})"
    msg = (
        f"{_lit(rule.id + ': ')} + ({templates}).map(klmT, {tpl_ignored} ? '' : "
        f"(has(klmT.spec) ? [klmT.spec] : []).map(podSpec, {failing}.join('; ')).join('; '))"
        f".filter(s, s != '').join('; ')"
    )
    return {"expression": validation, "messageExpression": msg, "message": _static(rule), "reason": "Invalid"}


def _message_text(rule: Any) -> str:
    if rule.check.get("messageExpression"):
        return f"({rule.check['messageExpression']})"
    return _lit(rule.check.get("message") or rule.title)


def _static(rule: Any) -> str:
    text = f"{rule.id}: {rule.check.get('message') or rule.title}"
    return " ".join(text.split())[:1000]


def _object_validation(rule: Any) -> dict:
    expr = rule.check["cel"]
    guards = []
    for k in rule.kinds:
        group, _, kind = k.rpartition("/")
        guards.append(f"object.kind == {_lit(kind)}" + (f" && {_group(group)}" if group else ""))
    applies = " || ".join(f"({g})" for g in guards)
    validation = f"{_ignored('object.metadata', rule.id)} || ({expr})"
    if applies:
        validation = f"!({applies}) || {validation}"
    return {
        "expression": validation,
        "messageExpression": f"{_lit(rule.id + ': ')} + {_message_text(rule)}",
        "message": _static(rule),
        "reason": "Invalid",
    }


# --- built-in rules whose logic is one CEL expression ------------------------------------

# k8s/quantity.py PLACEHOLDER (an unrendered $VAR, ${VAR}, $(params.x), {{inputs.parameters.x}},
# ${{ inputs.x }}, VAR_NAME or <value>): RE2 reads it as Python does.
_PLACEHOLDER_RE2 = PLACEHOLDER.pattern

# (group, kind) -> (CEL list of the JobSpecs whose ``template`` is a pod template, batch/v1 Job itself?)
_JOB_SPECS = {
    ("batch", "Job"): ("(has(object.spec) ? [object.spec] : [])", True),
    ("batch", "CronJob"): (
        "(has(object.spec) && has(object.spec.jobTemplate) && has(object.spec.jobTemplate.spec)"
        " ? [object.spec.jobTemplate.spec] : [])",
        True,
    ),
    ("jobset.x-k8s.io", "JobSet"): (
        "(has(object.spec) && has(object.spec.replicatedJobs) ? object.spec.replicatedJobs"
        ".filter(j, has(j.template) && has(j.template.spec)).map(j, j.template.spec) : [])",
        False,
    ),
}
for _k in ("TrainingRuntime", "ClusterTrainingRuntime"):
    _JOB_SPECS[("trainer.kubeflow.org", _k)] = (
        "(has(object.spec) && has(object.spec.template) && has(object.spec.template.spec)"
        " && has(object.spec.template.spec.replicatedJobs) ? object.spec.template.spec.replicatedJobs"
        ".filter(j, has(j.template) && has(j.template.spec)).map(j, j.template.spec) : [])",
        False,
    )


def _restart_policy_validations(rule: Any) -> list[dict]:
    """``job-restart-policy`` (restart-policy-invalid): a Job's pod template needs restartPolicy Never or
    OnFailure, and Never with a podFailurePolicy; JobSet defaults a missing one to OnFailure. Placeholders
    are not judged, nor is a missing restartPolicy in a partial template (no containers, or an app
    container without an image)."""
    rp = "ps.restartPolicy"
    ok = (
        f"(has({rp}) && type({rp}) == string && {rp}.trim().matches({_lit(_PLACEHOLDER_RE2)}))"
        f" || (!has({rp}) && (!has(ps.containers) || ps.containers.size() == 0"
        f" || ps.containers.exists(c, !has(c.image) || c.image == '')))"
        f" || ((!has({rp}) || {rp} == '') ? BATCH_OK"
        f" : ({rp} in ['Never', 'OnFailure'] && !({rp} == 'OnFailure' && has(js.podFailurePolicy))))"
    )
    out = []
    for key, (jobs, batch) in _JOB_SPECS.items():
        if not _kind_selected(rule, key):
            continue
        judged = ok.replace("BATCH_OK", "false" if batch else "!has(js.podFailurePolicy)")
        per_template = (
            f"{_ignored('js.template.metadata', rule.id)} || !has(js.template.spec)"
            f" || [js.template.spec].all(ps, {judged})"
        )
        guard = f"object.kind == {_lit(key[1])} && {_group(key[0])}"
        value = "(has(ps.restartPolicy) ? 'restartPolicy ' + string(ps.restartPolicy) : 'no restartPolicy')"
        message = (
            f"{_lit(rule.id + ': ')} + {jobs}.filter(js, has(js.template) && has(js.template.spec)"
            f" && !({_ignored('js.template.metadata', rule.id)})).map(js, [js.template.spec]"
            f".filter(ps, !({judged})).map(ps, 'pod template has ' + {value} + ': a Job takes only Never or "
            f"OnFailure (Never with a podFailurePolicy)' + (has(ps.restartPolicy) ? '' : "
            f"{_lit(', and the default (Always, or OnFailure from JobSet) is not one')})).join('; '))"
            f".filter(m, m != '').join('; ')"
        )
        out.append(
            {
                "expression": f"!({guard}) || {_ignored('object.metadata', rule.id)}"
                f" || {jobs}.all(js, !has(js.template) || {per_template})",
                "messageExpression": message,
                "message": _static(rule),
                "reason": "Invalid",
            }
        )
    return out


def _kind_selected(rule: Any, key: tuple[str, str]) -> bool:
    if not rule.kinds:
        return True
    return any(k.rpartition("/")[2] == key[1] and (k.rpartition("/")[0] in ("", key[0])) for k in rule.kinds)


# Built-in templates translated to CEL: template name -> validations of a rule using it.
BUILTIN_EXPORTS = {"job-restart-policy": _restart_policy_validations}


def _kinds_for(rule: Any) -> list[tuple[str, str]] | str:
    if not rule.kinds:
        return list(TEMPLATE_KINDS)
    out: list[tuple[str, str]] = []
    for k in rule.kinds:
        group, _, kind = k.rpartition("/")
        matches = [key for key in TEMPLATE_KINDS if key[1] == kind and (not group or key[0] == group)]
        if not matches:
            return f"kind {k} has no pod-template paths in the kind table (check finds its templates by shape)"
        out.extend(m for m in matches if m not in out)
    return out


def _functions_too_new(source: str, version: tuple[int, int]) -> list[str]:
    out = []
    for name, since in FUNCTIONS_SINCE.items():
        if since > version and re.search(rf"\b{name}\s*\(", source):
            out.append(f"{name}() (Kubernetes {since[0]}.{since[1]})")
    if version < (1, 28) and _OPTIONAL_SYNTAX.search(source):
        out.append("optional types (Kubernetes 1.28)")
    return out


_USAGE = "observed usage from Prometheus or a usage snapshot, which a policy cannot read"
# Why each built-in template's logic is not one CEL expression (checked: every built-in rule has an entry).
BUILTIN_REASONS = {
    "invalid-quantity": "the apimachinery grammar with its messages, and whole numbers for extended resources",
    "suspicious-quantity": "heuristics over quantity values (empty, unit slips) with their suggestions",
    "overcommit-ratio": "exact rational ratios of quantities (CEL has no quantity division before 1.33)",
    "gpu-share": "the node catalog and the profile's node pools, resolved from selectors and affinity",
    "gpu-node-unresolved": "the node catalog and the profile's node pools",
    "emptydir-exceeds-ephemeral-storage": "the pod's ephemeral-storage budget and the node's local disk from the catalog",
    "emptydir-missing-ephemeral-request": "requests after defaulting across containers, and which volumes are mounted",
    "shm-too-small-for-workers": "process counts read from command lines (torchrun, DataLoader workers, mpirun)",
    "ray-object-store-shm": "Ray's object store size and the /dev/shm KubeRay gives the Ray container",
    "priority-class-unknown": "the PriorityClasses of the cluster (other objects)",
    "priority-class-object": "the cluster's other PriorityClasses (globalDefault conflicts)",
    "preemption-backoff": "the values of other PriorityClasses",
    "group-oom-multiprocess": "the nodes' kubelet configuration and versions, and process counts from command lines",
    "kubelet-fail-cgroup-v1": "the nodes' cgroup and kubelet versions from the profile (KubeletConfiguration is not admitted)",
    "kubelet-oom-kill-cgroup-v1": "the nodes' cgroup version from the profile (KubeletConfiguration is not admitted)",
    "kubelet-setting-ignored": "the kubelet versions of the nodes from the profile (KubeletConfiguration is not admitted)",
    "accelerator-not-judged": "which kinds kubelint-ml builds pods for, and a search of the whole object for accelerators",
    "usage-memory-limit": _USAGE,
    "usage-memory-request-high": _USAGE,
    "usage-memory-request-low": _USAGE,
    "usage-gpu-memory": _USAGE,
    "unknown-field": "the API server decodes the object before any policy runs: strict field validation rejects an "
    "unknown field and lenient decoding drops it, so a policy never sees one",
    "accelerator-claim-unused": "the devices of the pod's claims, from the ResourceClaimTemplates, ResourceClaims "
    "and DeviceClasses of the cluster (other objects)",
    "resource-claim-unknown": "the ResourceClaimTemplates and ResourceClaims of the namespace (other objects); "
    "the API server rejects a container claim the pod does not list itself",
    "pod-level-resources-invalid": "the API server rejects these pod-level resources itself; the profile's "
    "Kubernetes version decides whether the field is dropped",
    "job-spec-invalid": "the API server rejects these Job specs itself, with the same reasons",
    "resize-policy-invalid": "the API server rejects these resizePolicy entries itself, with the same reasons",
    "container-restart-rules-invalid": "the API server rejects these restartPolicyRules itself, with the same reasons",
    "sidecar-restart-policy-missing": "the API server rejects these init containers itself, with the same reason",
    "pod-field-dropped": "the profile's Kubernetes version and the cluster's feature gates: the API server drops "
    "these fields before any policy sees them",
    "limit-range": "the namespace's LimitRanges and ResourceQuotas (other objects), applied as LimitRanger does",
    "queue": "the namespace's Kueue LocalQueues and ClusterQueues, and Volcano Queues (other objects)",
    "gang": "the replicas of every task, and the PodGroups and Workloads of the cluster (other objects)",
    "pod-group-reference-invalid": "the Workloads of the namespace (other objects) and the profile's Kubernetes "
    "version; the API server itself rejects the invalid names, and drops or rejects a field its version lacks",
    "workload-spec-invalid": "the API server rejects these Workloads and PodGroups itself, with the same reasons",
    "volume-single-node": "the access modes of the PersistentVolumeClaims (other objects)",
}


def exportable(rule: Any, version: tuple[int, int]) -> str:
    """Why ``rule`` cannot be a policy; "" when it can."""
    from kubelint_ml.engine.celcheck import CelCheck

    if not isinstance(rule.template, CelCheck):
        template = rule.check.get("template", "")
        if template in TRANSLATED:
            built = TRANSLATED[template](rule)
            return built if isinstance(built, str) else ""
        if template in BUILTIN_EXPORTS and not rule.accelerator_severity and rule.workloads == "all":
            return ""
        return BUILTIN_REASONS.get(template, "its template's logic is Python")
    sources = [rule.check["cel"]] + ([rule.check["messageExpression"]] if rule.check.get("messageExpression") else [])
    for name in ("objects", "profile"):
        if any(re.search(rf"\b{name}\b", s) for s in sources):
            what = "other objects among the inputs" if name == "objects" else "the cluster profile"
            return f"reads `{name}` ({what}); a ValidatingAdmissionPolicy sees one object"
    if rule.accelerator_severity:
        return "acceleratorSeverity: its severity depends on whether the pod uses accelerators"
    if rule.workloads != "all":
        return f"scope.workloads: {rule.workloads}: which objects it applies to is decided in Python"
    too_new = [f for s in sources for f in _functions_too_new(s, version)]
    if too_new:
        return f"uses {', '.join(sorted(set(too_new)))}, newer than the profile's Kubernetes {version[0]}.{version[1]}"
    return ""


def _glob_regex(glob: str) -> str:
    out = []
    for ch in glob:
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
    return "^" + "".join(out) + "$"


def _exclusions(policy: Policy, rule_id: str) -> list[dict]:
    conditions = []
    for i, ex in enumerate(policy.config.exclude):
        if "path" in ex or ("rule" in ex and ex["rule"] != rule_id):
            continue
        parts = []
        if "kind" in ex:
            parts.append(f"object.kind == {_lit(ex['kind'])}")
        if "namespace" in ex:
            parts.append(f"request.namespace == {_lit(ex['namespace'])}")
        if "name" in ex:
            parts.append(f"has(object.metadata.name) && object.metadata.name.matches({_lit(_glob_regex(ex['name']))})")
        if parts:
            conditions.append({"name": f"exclude-{i}", "expression": "!(" + " && ".join(parts) + ")"})
    return conditions


def policy_documents(
    policy: Policy, audit: bool = False
) -> tuple[list[dict], list[tuple[str, str]], tuple[int, int], bool]:
    """(policies and bindings, (rule id, why not exported), the Kubernetes version used, whether it was assumed)."""
    version = parse_version(policy.config.profile.kubernetes_version)
    assumed = version is None
    overrides = policy.config.profile.feature_gates
    pod_level_dropped = not pod_level_gates(version, overrides)[0]
    version = version or MIN_VERSION
    docs: list[dict] = []
    skipped: list[tuple[str, str]] = []
    dra = admission_dra(getattr(policy.facts, "dra", None))
    if version < MIN_VERSION:
        return (
            [],
            [
                (
                    "*",
                    f"ValidatingAdmissionPolicy {API} needs Kubernetes 1.30; the profile says "
                    f"{version[0]}.{version[1]}",
                )
            ],
            version,
            assumed,
        )
    for rule in sorted(policy.engine.rules + _usage_rules_left_out(policy), key=lambda r: r.id):
        why = exportable(rule, version)
        if why:
            skipped.append((rule.id, why))
            continue
        template = rule.check.get("template", "")
        severity = policy.engine.overrides.get(rule.id) or rule.severity
        if template in TRANSLATED:
            # the QoS class by the cluster's version (pod-level resources' 1.36 fixes)
            built = (
                qos_best_effort(rule, None if assumed else version, overrides)
                if template == "qos-class"
                else TRANSLATED[template](rule)
            )
            assert not isinstance(built, str)
            kinds = [k for k in TEMPLATE_KINDS if _kind_selected(rule, k)]
            accelerator_severity = rule.accelerator_severity or severity
            split = (
                not policy.engine.overrides.get(rule.id)
                and accelerator_severity != severity
                and rule.workloads != "accelerator"
            )
            # A severity that depends on accelerators: one policy for the pods that use them, one for the rest.
            parts: list[tuple[str, str, bool | None]] = (
                [("", severity, False), ("-accelerators", accelerator_severity, True)]
                if split
                else [("", severity, None)]
            )
            for suffix, sev, accelerators in parts:
                spec = _spec(
                    _template_rules(kinds),
                    [
                        {
                            "expression": "size(variables.failures) == 0",
                            "messageExpression": f"{_lit(rule.id + ': ')} + variables.failures.join('; ')",
                            "message": _static(rule),
                            "reason": "Invalid",
                        }
                    ],
                    policy,
                    rule.id,
                )
                spec["variables"] = variables(rule, built, kinds, accelerators, dra)
                if pod_level_dropped:
                    spec["variables"] = _without_pod_level(spec["variables"])
                docs.extend(_pair(policy, rule, f"kubelint-ml-{rule.id}{suffix}", sev, spec, accelerators, audit))
            continue
        builtin = BUILTIN_EXPORTS.get(template)
        kinds = []
        if builtin is not None:
            kinds = [k for k in _JOB_SPECS if _kind_selected(rule, k)]
        elif rule.unit != "object":
            found = _kinds_for(rule)
            if isinstance(found, str):
                skipped.append((rule.id, found))
                continue
            kinds = found
        if rule.unit == "object":
            validations = [_object_validation(rule)]
            if rule.kinds:
                resource_rules, unknown = _kind_resource_rules(rule.kinds, _plurals(policy))
                if unknown:
                    why = (
                        f"no resource (plural) known for {', '.join(unknown)}: no CustomResourceDefinition among the "
                        "context files names it; add its CRD under `context:`"
                    )
                    if not resource_rules:
                        skipped.append((rule.id, why))
                        continue
                    skipped.append((f"{rule.id} ({', '.join(unknown)})", why + "; the policy matches the other kinds"))
            else:
                resource_rules = [
                    {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["*"]}
                ]
        else:
            validations = (
                builtin(rule)
                if builtin is not None
                else [_template_validation(rule, k, TEMPLATE_KINDS[k][1]) for k in kinds]
            )
            resource_rules = _template_rules(kinds)
        spec = _spec(resource_rules, validations, policy, rule.id)
        docs.extend(_pair(policy, rule, f"kubelint-ml-{rule.id}", severity, spec, None, audit))
    skipped.extend(_policy_rules_skipped(policy))
    return docs, skipped, version, assumed


# (group, kind) -> resource of kinds a custom rule may name besides those with pod templates.
_MORE_RESOURCES = {
    ("", "ConfigMap"): "configmaps",
    ("", "Secret"): "secrets",
    ("", "Service"): "services",
    ("", "ServiceAccount"): "serviceaccounts",
    ("", "Namespace"): "namespaces",
    ("", "PersistentVolumeClaim"): "persistentvolumeclaims",
    ("", "LimitRange"): "limitranges",
    ("", "ResourceQuota"): "resourcequotas",
    ("scheduling.k8s.io", "PriorityClass"): "priorityclasses",
    ("policy", "PodDisruptionBudget"): "poddisruptionbudgets",
    ("networking.k8s.io", "Ingress"): "ingresses",
    ("networking.k8s.io", "NetworkPolicy"): "networkpolicies",
    ("autoscaling", "HorizontalPodAutoscaler"): "horizontalpodautoscalers",
    ("resource.k8s.io", "ResourceClaim"): "resourceclaims",
    ("resource.k8s.io", "ResourceClaimTemplate"): "resourceclaimtemplates",
    ("kueue.x-k8s.io", "LocalQueue"): "localqueues",
    ("kueue.x-k8s.io", "ClusterQueue"): "clusterqueues",
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): "workloadpriorityclasses",
    ("trainer.kubeflow.org", "TrainJob"): "trainjobs",
    ("serving.kserve.io", "InferenceService"): "inferenceservices",
    ("serving.kserve.io", "ServingRuntime"): "servingruntimes",
    ("argoproj.io", "Workflow"): "workflows",
    ("argoproj.io", "CronWorkflow"): "cronworkflows",
    ("tekton.dev", "TaskRun"): "taskruns",
    ("tekton.dev", "PipelineRun"): "pipelineruns",
}


def _plurals(policy: Policy) -> dict[tuple[str, str], str]:
    """(group, kind) -> resource: the built-in table, then the CRDs among the context files."""
    out = {**_MORE_RESOURCES, **_RESOURCES}
    for crd in getattr(policy.facts, "crds", ()):
        spec = crd.get("spec") if isinstance(crd, dict) else None
        if not isinstance(spec, dict):
            continue
        names, group = spec.get("names"), spec.get("group")
        if isinstance(names, dict) and isinstance(group, str):
            kind, plural = names.get("kind"), names.get("plural")
            if isinstance(kind, str) and isinstance(plural, str) and plural:
                out[(group, kind)] = plural
    return out


def _kind_resource_rules(kinds: list[str], plurals: dict[tuple[str, str], str]) -> tuple[list[dict], list[str]]:
    """resourceRules for a rule's ``scope.kinds`` (``group/Kind``, or a bare ``Kind`` for every group
    that has it, as `check` reads it), and the kinds whose resource is not known."""
    by_group: dict[str, set[str]] = {}
    unknown: list[str] = []
    for k in kinds:
        group, slash, kind = k.rpartition("/")
        found = [(g, r) for (g, kd), r in plurals.items() if kd == kind and (not slash or g == group)]
        if not found:
            unknown.append(k)
        for g, r in found:
            by_group.setdefault(g, set()).add(r)
    rules = [
        {"apiGroups": [g], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": sorted(r)}
        for g, r in sorted(by_group.items())
    ]
    return rules, unknown


def _usage_rules_left_out(policy: Policy) -> list:
    """The built-in usage rules a config without a usage source leaves out of the run: listed as not
    exported, with the reason, like every other rule."""
    from kubelint_ml.engine.rulefile import load_builtin_rules

    have = {r.id for r in policy.engine.rules}
    return [
        r
        for r in load_builtin_rules()
        if r.family == "usage" and r.id not in have and r.id not in policy.config.disable
    ]


def _template_rules(kinds: list[tuple[str, str]]) -> list[dict]:
    by_group: dict[str, list[str]] = {}
    for group, kind in kinds:
        res = TEMPLATE_KINDS[(group, kind)][0]
        if res not in by_group.setdefault(group, []):
            by_group[group].append(res)
    return [
        {"apiGroups": [g], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": sorted(r)}
        for g, r in sorted(by_group.items())
    ]


def _spec(resource_rules: list[dict], validations: list[dict], policy: Policy, rule_id: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": {"matchPolicy": "Equivalent", "resourceRules": resource_rules},
        "validations": validations,
    }
    conditions = _exclusions(policy, rule_id)
    if conditions:
        spec["matchConditions"] = conditions
    return spec


def _pair(
    policy: Policy, rule: Any, name: str, severity: str, spec: dict, accelerators: bool | None, audit: bool
) -> list[dict]:
    """The policy and its binding."""
    settings = policy.settings
    labels = {"app.kubernetes.io/managed-by": "kubelint-ml", "kubelint-ml.io/rule": rule.id}
    annotations = {"kubelint-ml.io/severity": severity, "kubelint-ml.io/title": " ".join(rule.title.split())}
    if accelerators is not None:
        annotations["kubelint-ml.io/pods"] = (
            "pod templates that use accelerators" if accelerators else "pod templates that use no accelerators"
        )
    vap = {
        "apiVersion": API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": spec,
    }
    actions = [ACTIONS[severity]]
    if audit and actions != ["Audit"]:
        actions.append("Audit")
    binding: dict[str, Any] = {"policyName": name, "validationActions": actions}
    match: dict[str, Any] = {}
    if settings.get("excludeNamespaces"):
        match["namespaceSelector"] = {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": list(settings["excludeNamespaces"]),
                }
            ]
        }
    if settings.get("excludeLabels"):
        exprs = []
        for key, value in settings["excludeLabels"].items():
            exprs.append(
                {"key": key, "operator": "DoesNotExist"}
                if value == "*"
                else {"key": key, "operator": "NotIn", "values": [value]}
            )
        match["objectSelector"] = {"matchExpressions": exprs}
    if match:
        binding["matchResources"] = match
    return [
        vap,
        {
            "apiVersion": API,
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name, "labels": labels},
            "spec": binding,
        },
    ]


def _policy_rules_skipped(policy: Policy) -> list[tuple[str, str]]:
    """The Rego rules and Gatekeeper constraints under ``rules:``: the API server runs neither."""
    policies = policy.policies
    if policies is None:
        return []
    out = [
        (r.rule_id, "a Rego rule: the API server evaluates CEL only (`kubelint-ml serve` runs it at admission)")
        for r in policies.rego_rules
    ]
    for c in policies.constraints:
        if c.template.cel is not None:
            why = (
                "a Gatekeeper constraint: Gatekeeper makes its own ValidatingAdmissionPolicy from a "
                "K8sNativeValidation template (generateVAP); `kubelint-ml serve` runs it too"
            )
        else:
            why = "a Gatekeeper constraint with a Rego template: the API server evaluates CEL only"
        out.append((c.rule_id, why))
    return sorted(out)


# Why each pseudo-rule (reported by kubelint-ml about its input and its rules) is no policy.
PSEUDO_REASONS = {
    "parse-error": "the API server decodes the object itself and rejects one that is not a valid manifest",
    "render-error": "the API server receives rendered objects, never a chart or a kustomization",
    "schema-invalid": "the API server validates the object against its schema before any policy runs",
    "schema-unavailable": "the API server knows the schema of every kind it serves",
    "cel-evaluation-error": "an exported policy has failurePolicy: Fail: an expression that errors rejects the object",
    "unknown-ignore-rule": "a check of the annotation's text, not of the object; `check` and `serve` report it",
    "rule-error": "a failure of kubelint-ml's own Python code, which policies do not run",
}


class ExportError(Exception):
    """Policies the API server would refuse: nothing is written."""


def _too_long(docs: list[dict], facts: Any) -> str | None:
    """Why the API server would refuse one of ``docs``: an expression longer than its CEL parser reads."""
    from kubelint_ml.engine.cel import MAX_EXPRESSION_LENGTH

    for d in docs:
        if d["kind"] != "ValidatingAdmissionPolicy":
            continue
        spec = d["spec"]
        for part in ("variables", "validations", "matchConditions"):
            for item in spec.get(part) or ():
                for key in ("expression", "messageExpression"):
                    size = len(item.get(key) or "")
                    if size > MAX_EXPRESSION_LENGTH:
                        what = {"variables": f"variable {item.get('name')!r}", "validations": "validation"}
                        why = (
                            f"export vap: policy {d['metadata']['name']}: the {key} of its "
                            f"{what.get(part, 'match condition')} is {size} code points long, more than the {MAX_EXPRESSION_LENGTH} the API "
                            "server's CEL parser reads"
                        )
                        dra = admission_dra(getattr(facts, "dra", None))
                        names = len({k.partition("/")[2] for k in (*dra.templates, *dra.claims)})
                        if names:
                            why += (
                                f"; it lists the {names} ResourceClaimTemplates and ResourceClaims with accelerators "
                                "found in the context: give a context with only those pods name, or judge claims "
                                "with `kubelint-ml serve`"
                            )
                        return why
    return None


def export_policies(policy: Policy, audit: bool = False) -> tuple[str, list[tuple[str, str]]]:
    """The YAML stream, and the rules not exported with the reason. Raises :class:`ExportError` for
    policies the API server would refuse."""
    import yaml

    from kubelint_ml.engine.api import PSEUDO_RULES

    docs, skipped, version, assumed = policy_documents(policy, audit)
    refused = _too_long(docs, policy.facts)
    if refused:
        raise ExportError(refused)
    skipped = skipped + [(rid, PSEUDO_REASONS.get(rid, "reported by kubelint-ml itself")) for rid in PSEUDO_RULES]
    rules = len({d["metadata"]["labels"]["kubelint-ml.io/rule"] for d in docs})
    head = [
        f"# kubelint-ml export vap: {rules} rule(s) as {len(docs) // 2} ValidatingAdmissionPolicies ({API}),",
        f"# CEL functions of Kubernetes {version[0]}.{version[1]}"
        + (" (no profile.kubernetesVersion: the first version with VAP v1)" if assumed else "")
        + ".",
        "# Pod templates are looked for in the kinds kubelint-ml knows (Pod, Job, CronJob, the Deployment",
        "# family, Kubeflow, JobSet, Trainer runtimes, Ray, Volcano, LeaderWorkerSet); other kinds, which",
        "# `check` searches by shape or builds pods for (KServe, Argo, Tekton, Seldon, Spark, NVIDIA NIM and",
        "# Dynamo, KubeAI, AIBrix, OME, vLLM production-stack, TrainJob), are not matched: `kubelint-ml serve`",
        "# judges them.",
        *_dra_header(getattr(policy.facts, "dra", None)),
    ]
    head += _gates_header(policy.config.profile, None if assumed else version)
    if skipped:
        head.append("# Not exported:")
        head.extend(f"#   {rid}: {why}" for rid, why in skipped)
    text = "\n".join(head) + "\n"
    dumper = _literal_blocks()
    for d in docs:
        text += "---\n" + yaml.dump(d, Dumper=dumper, sort_keys=False, width=1_000_000, allow_unicode=True)
    return text, skipped


def _gates_header(profile: Any, version: tuple[int, int] | None) -> list[str]:
    """The feature gates the policies assume (the profile's featureGates over the version's defaults)."""
    overrides = getattr(profile, "feature_gates", None) or {}
    head = []
    if overrides:
        listed = ", ".join(f"{name}={'true' if on else 'false'}" for name, on in sorted(overrides.items()))
        head.append(f"# Feature gates (profile.featureGates, over the version's defaults): {listed}.")
    if not pod_level_gates(version, overrides)[0]:
        head += [
            "# profile.featureGates turns PodLevelResources off: the API server drops pod-level resources"
            if "PodLevelResources" in overrides
            else "# profile.kubernetesVersion drops pod-level resources (spec.resources) before 1.34, from custom",
            "# (spec.resources), from custom resources' pods too (a Kubeflow job's, a JobSet's): the policies judge"
            " pods without them."
            if "PodLevelResources" in overrides
            else "# resources' pods too (a Kubeflow job's, a JobSet's): the policies judge pods without them.",
        ]
    return head


# With PodLevelResources off (by default before 1.34) the API server drops a pod's spec.resources, and a
# built-in template's (the Deployment family, Job, CronJob), before any admission sees the object; a custom
# resource (a Kubeflow job, a JobSet) keeps it, and the pods its controller makes lose it. `check` and
# `serve` judge every pod without it; so do the policies.
_POD_LEVEL = (
    ("ps.?resources.?requests.orValue({})", "{}"),
    ("ps.?resources.?limits.orValue({})", "{}"),
    ("has(ps.resources)", "false"),
)


def _without_pod_level(variables: list[dict]) -> list[dict]:
    """The variables with the pod spec's ``resources`` read as absent."""
    out = []
    for v in variables:
        expression = v["expression"]
        for written, dropped in _POD_LEVEL:
            expression = expression.replace(written, dropped)
        out.append({**v, "expression": expression})
    return out


def _dra_header(facts: Any) -> list[str]:
    """What the policies assume of DRA claims: a policy sees one object, never the claims it names."""
    dra = admission_dra(facts)
    known = [
        f"{kind} {name}"
        for kind, table in (("ResourceClaimTemplate", dra.templates), ("ResourceClaim", dra.claims))
        for name in dict.fromkeys(k.partition("/")[2] for k in sorted(table))
    ]
    listed = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    return (
        [
            "# DRA: a policy cannot read the ResourceClaimTemplates, ResourceClaims and DeviceClasses a pod names.",
            "# A pod's resourceClaims make it an accelerator pod only when they name one known at export (from the",
            "# config's context files) to hold accelerator devices in the pod's namespace: "
            + (listed or "none known")
            + ";",
            "# other claims (NICs, IMEX channels, unknown ones) do not. DRA extended resources count by their class:",
            "# deviceclass.resource.kubernetes.io/<class> by its name (or a known DeviceClass), and a known",
            "# DeviceClass's extendedResourceName. As `check` with the same context files decides.",
        ]
        + (
            [
                "# profile.featureGates turns DynamicResourceAllocation off: claims are dropped, none makes an "
                "accelerator pod."
                if "DynamicResourceAllocation" in facts.gates
                else "# profile.kubernetesVersion drops claims before 1.34: none makes an accelerator pod."
            ]
            if facts is not None and not facts.claims_enabled
            else []
        )
        + (
            [
                "# profile.featureGates turns DRAExtendedResource off: no DRA extended resource counts."
                if "DRAExtendedResource" in facts.gates
                else "# profile.kubernetesVersion serves no DRA extended resources before 1.36: none counts."
            ]
            if facts is not None and not facts.extended_enabled
            else []
        )
    )


def _literal_blocks() -> Any:
    import yaml

    class Dumper(yaml.SafeDumper):
        """Multi-line expressions as literal blocks, to be read."""

    def text(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return Dumper
