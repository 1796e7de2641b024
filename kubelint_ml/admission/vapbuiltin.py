"""Built-in rules as ValidatingAdmissionPolicy CEL (used by :mod:`kubelint_ml.admission.vap`).

At admission an object is single and concrete, so the resource rules' Python
logic can be written in CEL with Kubernetes' ``quantity`` library: Pod
defaulting (a missing request takes its limit), pod-level resources and
their defaulting, sidecars, extended resources, and the templates the Python
rules leave alone (invalid or negative quantities, partial templates, the
trainer job of a Kubeflow Trainer runtime).

Each policy names, once, in ``spec.variables``:

- ``templates``: the pod templates of the object's kind (a Pod is its own);
- ``judged``: those the rule judges (not suppressed by ``kubelint-ml.io/ignore``,
  with known resources for the resource rules, using accelerators or not when
  the rule's severity depends on it);
- ``failures``: one text per failing template, naming its failing containers
  or volumes.

The validation is ``size(variables.failures) == 0``; the message lists the
failures. Every template's expression is checked against ``serve``'s verdict
on the rule examples, the fixtures and the corpus (tests/test_admission_vap.py).

What is approximate, and where it cannot matter at admission:

- Sums of several Memory emptyDirs' sizeLimits are compared as floats
  (``asApproximateFloat``): exact for whole byte counts below 2^53 (8 PiB).
- ``emptydir-memory-exceeds-limit`` compares a container without a memory
  limit with the pod-level ``limits.memory`` as written; the pod-level limit
  that defaulting derives from the containers' limits applies only when every
  container has one, and then the container's own is used.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubelint_ml.input.workloads import KINDS, KUBEFLOW_REPLICA_SPECS, TRAINER_ANCESTOR_LABEL
from kubelint_ml.k8s.dra import AdmissionDra, admission_dra
from kubelint_ml.k8s.quantity import PLACEHOLDER
from kubelint_ml.k8s.resources import (
    ACCELERATOR_AMOUNT_PATTERNS,
    ACCELERATOR_PATTERNS,
    GPU_SHARE_ANNOTATIONS,
    HAMI_FROM_REQUESTS,
    HAMI_IMPLIED_DEVICES,
)

IGNORE = "kubelint-ml.io/ignore"
KUEUE_LABEL = "kueue.x-k8s.io/priority-class"
RAY_LABEL = "ray.io/priority-class-name"
KAI_LABEL = "priorityClassName"


def lit(text: str) -> str:
    """A CEL string literal (JSON's escapes are CEL's)."""
    return json.dumps(text, ensure_ascii=False)


def group_is(group: str) -> str:
    if group:
        return f"object.apiVersion.startsWith({lit(group + '/')})"
    return "!object.apiVersion.contains('/')"


def ignored(meta: str, rule_id: str) -> str:
    """The ``kubelint-ml.io/ignore`` annotation of ``meta`` names the rule or ``*`` (as Engine.parse_ignore reads it)."""
    ann = f"{meta}.annotations"
    return (
        f"(has({meta}) && has({ann}) && {lit(IGNORE)} in {ann} && {ann}[{lit(IGNORE)}].split(',')"
        f".exists(p, p.split('=')[0].trim() in [{lit(rule_id)}, '*']))"
    )


# --- quantities and resource lists ----------------------------------------------------------


def q(v: str) -> str:
    """The quantity ``v`` (a string, or a number as JSON gives it for an int-or-string field, trimmed
    as JSON decoding trims)."""
    return f"quantity(string({v}).trim())"


def is_q(v: str) -> str:
    return f"(type({v}) in [string, int, uint, double] && isQuantity(string({v}).trim()))"


def res(x: str, part: str) -> str:
    """``x.resources.<part>`` (requests or limits), or an empty map."""
    return f"{x}.?resources.?{part}.orValue({{}})"


def zero(rl: str, name: str) -> str:
    """``name`` is absent from the resource list or zero."""
    return f"(!({name} in {rl}) || {q(f'{rl}[{name}]')}.sign() == 0)"


def positive(rl: str, name: str) -> str:
    return f"({name} in {rl} && {q(f'{rl}[{name}]')}.sign() > 0)"


def containers(ps: str, roles: frozenset[str] = frozenset()) -> str:
    """Init containers (sidecars among them) then app containers, as the rules see them."""
    roles = roles or frozenset({"container", "initContainer", "sidecar"})
    parts = []
    if {"initContainer", "sidecar"} & roles:
        sidecar = "has(c.restartPolicy) && c.restartPolicy == 'Always'"
        if {"initContainer", "sidecar"} <= roles:
            inits = f"{ps}.initContainers"
        elif "sidecar" in roles:
            inits = f"{ps}.initContainers.filter(c, {sidecar})"
        else:
            inits = f"{ps}.initContainers.filter(c, !({sidecar}))"
        parts.append(f"{ps}.?initContainers.orValue([])" + inits[len(f"{ps}.initContainers") :])
    if "container" in roles:
        parts.append(f"{ps}.?containers.orValue([])")
    return "(" + " + ".join(parts) + ")" if parts else "[]"


_POD_LEVEL_KEY = "(k == 'cpu' || k == 'memory' || k.startsWith('hugepages-'))"


def pod_level_set(ps: str) -> str:
    """``IsPodLevelResourcesSet``: cpu, memory or hugepages in ``spec.resources``."""
    return f"({res(ps, 'requests')}.exists(k, {_POD_LEVEL_KEY}) || {res(ps, 'limits')}.exists(k, {_POD_LEVEL_KEY}))"


def hugepages_defaulted(ps: str) -> str:
    """``defaultHugePagePodLimits`` adds a pod-level hugepages limit (from the containers' limits)."""
    R = res(ps, "requests")
    return (
        f"((size({R}) > 0 || size({res(ps, 'limits')}) > 0) && {containers(ps)}.exists(c, {res('c', 'limits')}"
        f".exists(k, k.startsWith('hugepages-') && !(k in {R}))))"
    )


def pod_limits_set(ps: str) -> str:
    """Pod-level limits after hugepages defaulting are not empty (so requests default from them)."""
    return f"(size({res(ps, 'limits')}) > 0 || {hugepages_defaulted(ps)})"


def _ok_quantity(v: str) -> str:
    return f"({is_q(v)} && {q(v)}.sign() >= 0)"


def _bad_list(rl: str) -> str:
    return f"{rl}.exists(k, !{_ok_quantity(f'{rl}[k]')})"


def _bad_container_list(rl: str) -> str:
    """:func:`_bad_list` where an extended resource's count that is a placeholder (an accelerator's, an
    EFA device's) is not bad (templates/_common.py ``_any_unjudgeable``)."""
    return f"{rl}.exists(k, !{_ok_quantity(f'{rl}[k]')} && !({extended('k')} && {_placeholder_value(rl)}))"


def _placeholder_value(rl: str) -> str:
    """``rl[k]`` is an unrendered placeholder."""
    return f"(type({rl}[k]) == string && {rl}[k].trim().matches({lit(PLACEHOLDER.pattern)}))"


def resources_unknown(ps: str) -> str:
    """templates/_common.py ``resources_unknown`` (the trainer-job case is left out of ``templates``)."""
    cs = containers(ps)
    return (
        f"(!has({ps}.containers) || size({ps}.containers) == 0"
        f" || {ps}.containers.exists(c, !has(c.image) || c.image == '')"
        f" || {cs}.exists(c, [{res('c', 'requests')}, {res('c', 'limits')}].exists(rl, {_bad_container_list('rl')}))"
        f" || {_bad_list(res(ps, 'requests'))} || {_bad_list(res(ps, 'limits'))}"
        f" || (has({ps}.volumes) && {ps}.volumes.exists(v, has(v.emptyDir) && has(v.emptyDir.sizeLimit)"
        f" && !{_ok_quantity('v.emptyDir.sizeLimit')})))"
    )


def _re2(patterns: tuple[str, ...]) -> str:
    """Glob patterns as one RE2 expression matching a whole name, the names of one domain grouped
    (``nvidia\\.com/(gpu|gpu\\.shared|mig-.*)``): the expressions it goes into have a length limit."""
    by_domain: dict[str, list[str]] = {}
    for p in patterns:
        domain, _, name = p.rpartition("/")
        by_domain.setdefault(domain, []).append(name)

    def glob(text: str) -> str:
        return text.replace(".", "\\.").replace("*", ".*")

    parts = [
        glob(d) + "/" + (glob(names[0]) if len(names) == 1 else "(" + "|".join(map(glob, names)) + ")")
        for d, names in by_domain.items()
    ]
    return "^(" + "|".join(parts) + ")$"


_ACCELERATOR_RE2 = _re2(ACCELERATOR_PATTERNS)
_AMOUNT_RE2 = _re2(ACCELERATOR_AMOUNT_PATTERNS)  # a device's memory or cores, not a device
# IsExtendedResourceName: "requests." + name is a qualified name with a DNS-1123 subdomain prefix.
_EXTENDED_RE2 = (
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
)


def extended(k: str) -> str:
    return (
        f"(!{k}.startsWith('requests.') && !{k}.contains('kubernetes.io/') && {k}.matches({lit(_EXTENDED_RE2)})"
        f" && {k}.split('/')[0].size() <= 244 && {k}.split('/')[1].size() <= 63)"
    )


def _has_items(x: str, field: str) -> str:
    return f"(has({x}.{field}) && size({x}.{field}) > 0)"


def gpu_share_annotated(t: str) -> str:
    """engine/api.py ``gpu_share_annotated``: the template's pod asks KAI Scheduler for a GPU share."""
    annotations = f"{t}.?metadata.?annotations.orValue({{}})"
    return "(" + " || ".join(f"{lit(a)} in {annotations}" for a in GPU_SHARE_ANNOTATIONS) + ")"


def _hami_implied(c: str) -> str:
    """k8s/resources.py ``hami_implied_devices``: the container names an amount of a device (a whole,
    non-negative quantity) and not the device, which HAMi's webhook then adds."""

    def valid(rl: str, name: str) -> str:
        v = f"{rl}[{name}]"
        return f"({name} in {rl} && {is_q(v)} && {q(v)}.sign() >= 0 && {q(v)}.isInteger())"

    parts = []
    for device in sorted(set(HAMI_IMPLIED_DEVICES.values())):
        names = sorted(n for n, d in HAMI_IMPLIED_DEVICES.items() if d == device)
        lists = [res(c, "limits")]
        if all(n in HAMI_FROM_REQUESTS for n in names):
            lists.insert(0, res(c, "requests"))
        where = "[" + ", ".join(lists) + "]"
        parts.append(
            f"({where}.exists(rl, [{', '.join(lit(n) for n in names)}].exists(n, {valid('rl', 'n')}))"
            f" && !{where}.exists(rl, {valid('rl', lit(device))}))"
        )
    return "(" + " || ".join(parts) + ")"


def uses_accelerators(ps: str, dra: AdmissionDra | None = None) -> str:
    """engine/api.py ``is_accelerator_template``: a positive whole amount of an accelerator; a claim
    naming a template or claim known (at export) to hold accelerators; a DRA extended resource of an
    accelerator class (k8s/dra.py ``admission_dra``)."""
    dra = dra or admission_dra(None)
    # a positive whole count, or an unrendered placeholder (k8s/resources.py placeholder_accelerators)
    amount = (
        "[{req}, {lim}].exists(rl, rl.exists(k, k.matches({pat}) && !k.matches({amount}) && {ext}"
        " && (({ok} && {val}.sign() > 0 && {val}.isInteger()) || {placeholder})))"
    ).format(
        req=res("c", "requests"),
        lim=res("c", "limits"),
        pat=lit(_ACCELERATOR_RE2),
        amount=lit(_AMOUNT_RE2),
        ext=extended("k"),
        ok=is_q("rl[k]"),
        val=q("rl[k]"),
        placeholder=_placeholder_value("rl"),
    )
    implicit = (
        f"(k.matches({lit(dra.accel)}) || (!k.matches({lit(dra.other)}) && (k.matches({lit(dra.by_name)})"
        f" || (k.matches({lit(dra.words)}) && !k.matches({lit(dra.not_words)})))))"
    )
    # a class's implicit name asks for whole devices only (k8s/dra.py pod_devices: the scheduler makes no
    # device request for a quantity that is not a whole number)
    dra_names = f"({implicit} && {is_q('rl[k]')} && {q('rl[k]')}.sign() > 0 && {q('rl[k]')}.isInteger())"
    if dra.whole:
        dra_names += (
            f" || (k.matches({lit(dra.whole)}) && {is_q('rl[k]')} && {q('rl[k]')}.sign() > 0"
            f" && {q('rl[k]')}.isInteger())"
        )
    # k8s/dra.py pod_devices reads the defaulted requests: a request, else the limit
    requests = res("c", "requests")
    dra_amount = (
        f"([{requests}].exists(rl, rl.exists(k, {dra_names}))"
        f" || [{res('c', 'limits')}].exists(rl, rl.exists(k, !(k in {requests}) && ({dra_names}))))"
    )
    out = f"{containers(ps)}.exists(c, {amount} || {dra_amount} || {_hami_implied('c')})"
    refs = []
    ns = "object.metadata.?namespace.orValue('')"
    for field, known in (("resourceClaimTemplateName", dra.templates), ("resourceClaimName", dra.claims)):
        if known:
            # the table written once (bound to t), however many names it holds; a claim's name in either
            # form (v1's, and the older source: one), looked up in the pod's namespace, else in any other
            # one (k8s/dra.py admission_dra)
            table = "{" + ", ".join(f"{lit(k)}: {'true' if v else 'false'}" for k, v in sorted(known.items())) + "}"
            names = f"(has(rc.{field}) ? [rc.{field}] : []) + (has(rc.source) && has(rc.source.{field}) ? [rc.source.{field}] : [])"
            refs.append(
                f"[{table}].exists(t, ({names}).exists(n, [[{ns} + '/' + n, '*/' + n]]"
                ".exists(k, k[0] in t ? t[k[0]] : k[1] in t && t[k[1]])))"
            )
    if refs:
        out = f"({ps}.?resourceClaims.orValue([]).exists(rc, {' || '.join(refs)}) || {out})"
    return out


def names(items: str) -> str:
    """``'a', 'b'`` from a CEL list of containers or volumes."""
    return f"{items}.map(x, \"'\" + string(x.name) + \"'\").join(', ')"


# --- the kinds' pod templates ----------------------------------------------------------------


def _at(*path: str) -> str:
    steps = ["object"]
    for p in path:
        steps.append(steps[-1] + "." + p)
    return "(" + " && ".join(f"has({s})" for s in steps[1:]) + f" ? [{steps[-1]}] : [])"


def _guarded(base: str) -> str:
    acc, guards = "object", []
    for part in base.split(".")[1:]:
        acc += "." + part
        guards.append(f"has({acc})")
    return " && ".join(guards)


def _trainer_job(j: str) -> str:
    labels = f"{j}.template.metadata.labels"
    return (
        f"((has({j}.template.metadata) && has({labels}) && {lit(TRAINER_ANCESTOR_LABEL)} in {labels})"
        f" ? {labels}[{lit(TRAINER_ANCESTOR_LABEL)}] == 'trainer' : (has({j}.name) && {j}.name == 'node'))"
    )


def _replicated_jobs(base: str, skip_trainer: bool) -> str:
    keep = "has(j.template) && has(j.template.spec) && has(j.template.spec.template)"
    if skip_trainer:
        keep += f" && !{_trainer_job('j')}"
    return f"({_guarded(base + '.replicatedJobs')} ? {base}.replicatedJobs.filter(j, {keep}).map(j, j.template.spec.template) : [])"


def _ray(base: str) -> str:
    g = _guarded(base)
    return (
        f"({g} && has({base}.headGroupSpec) && has({base}.headGroupSpec.template) ? [{base}.headGroupSpec.template] : [])"
        f" + ({g} && has({base}.workerGroupSpecs) ? {base}.workerGroupSpecs.filter(w, has(w.template)).map(w, w.template) : [])"
    )


def _kubeflow(field: str) -> str:
    m = f"object.spec.{field}"
    return f"(has(object.spec) && has({m}) ? {m}.map(r, {m}[r]).filter(rs, has(rs.template)).map(rs, rs.template) : [])"


_VOLCANO = "(has(object.spec) && has(object.spec.tasks) ? object.spec.tasks.filter(t, has(t.template)).map(t, t.template) : [])"
_VOLCANO_CRON = (
    "(has(object.spec) && has(object.spec.jobTemplate) && has(object.spec.jobTemplate.spec)"
    " && has(object.spec.jobTemplate.spec.tasks)"
    " ? object.spec.jobTemplate.spec.tasks.filter(t, has(t.template)).map(t, t.template) : [])"
)
_LWS = (
    "(has(object.spec) && has(object.spec.leaderWorkerTemplate) && has(object.spec.leaderWorkerTemplate.leaderTemplate)"
    " ? [object.spec.leaderWorkerTemplate.leaderTemplate] : [])"
    " + (has(object.spec) && has(object.spec.leaderWorkerTemplate) && has(object.spec.leaderWorkerTemplate.workerTemplate)"
    " ? [object.spec.leaderWorkerTemplate.workerTemplate] : [])"
)


@dataclass(frozen=True)
class Variant:
    """Which templates of a kind a rule looks at."""

    skip_trainer_job: bool = False  # the resource rules: a Trainer runtime's trainer job is sized by each TrainJob
    skip_runtimes: bool = False  # the priority rule: a runtime is shared; the TrainJob carries the priority
    skip_submitter: bool = False  # the priority rule: a RayJob's short-lived submitter pod


def kind_templates(group: str, kind: str, variant: Variant) -> str | None:
    """CEL list of the templates of ``group/kind``; None for a kind with no fixed template paths."""
    if (group, kind) == ("", "Pod"):
        return "[object]"
    fixed = {
        ("", "PodTemplate"): _at("template"),
        ("", "ReplicationController"): _at("spec", "template"),
        ("batch", "Job"): _at("spec", "template"),
        ("batch", "CronJob"): _at("spec", "jobTemplate", "spec", "template"),
        ("apps", "Deployment"): _at("spec", "template"),
        ("apps", "StatefulSet"): _at("spec", "template"),
        ("apps", "ReplicaSet"): _at("spec", "template"),
        ("apps", "DaemonSet"): _at("spec", "template"),
        ("jobset.x-k8s.io", "JobSet"): _replicated_jobs("object.spec", False),
        ("ray.io", "RayCluster"): _ray("object.spec"),
        ("ray.io", "RayService"): _ray("object.spec.rayClusterConfig"),
        ("batch.volcano.sh", "Job"): _VOLCANO,
        ("flow.volcano.sh", "JobTemplate"): _VOLCANO,
        ("batch.volcano.sh", "CronJob"): _VOLCANO_CRON,
        ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): _LWS,
    }
    if (group, kind) in fixed:
        return fixed[(group, kind)]
    if group == "trainer.kubeflow.org" and kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
        return (
            "[]" if variant.skip_runtimes else _replicated_jobs("object.spec.template.spec", variant.skip_trainer_job)
        )
    if (group, kind) == ("ray.io", "RayJob"):
        out = _ray("object.spec.rayClusterSpec")
        return out if variant.skip_submitter else out + " + " + _at("spec", "submitterPodTemplate")
    if group == "kubeflow.org" and kind in KUBEFLOW_REPLICA_SPECS:
        return _kubeflow(KUBEFLOW_REPLICA_SPECS[kind])
    return None


def templates_variable(kinds: list[tuple[str, str]], variant: Variant) -> str:
    """One expression: the object's pod templates, from a map of "group/Kind" to the kind's templates
    (a line each; a map, not a chain of conditions, keeps the parse tree shallow)."""
    lines = []
    for group, kind in kinds:
        found = kind_templates(group, kind, variant)
        if found is not None:
            lines.append(f"  {lit(group + '/' + kind)}: {found},")
    key = "(object.apiVersion.contains('/') ? object.apiVersion.split('/')[0] : '') + '/' + object.kind"
    return "{\n" + "\n".join(lines) + f"\n}}[?{key}].orValue([])"


def training_kind() -> str:
    """input/workloads.py KINDS[...].training: a training workload whatever its pods request."""
    parts = [
        f"(object.kind == {lit(kind)} && {group_is(group)})" for (group, kind), info in KINDS.items() if info.training
    ]
    return "(" + " || ".join(parts) + ")"


_CONTAINER_NAME = "'container ' + \"'\" + string(c.name) + \"'\""

# --- the rules -------------------------------------------------------------------------------


@dataclass
class BuiltinPolicy:
    """What one rule's policy needs besides the templates: the failures of one template ``t`` (spec ``ps``)."""

    failures: str  # CEL list of strings: what fails in template t
    resources_known: bool  # judged only where resources_unknown does not hold
    variant: Variant
    object_condition: str = ""  # CEL: the object is judged at all (scope.workloads: training)


def qos_best_effort(
    rule: Any, version: tuple[int, int] | None = None, overrides: Mapping[str, bool] | None = None
) -> BuiltinPolicy | str:
    """``version``: the cluster's; before 1.36 (PodLevelResourcesFixKubeletQOSClass and
    PodLevelResourcesFixUpdateDefaulting off) any ``spec.resources`` decides the QoS class, and pod
    limits are not defaulted from the containers' (before 1.34 the API server drops the field, so a
    policy never sees it); ``overrides``: the profile's featureGates over the version's defaults."""
    if list(rule.params.get("classes", [])) != ["BestEffort"]:
        return "QoS classes other than BestEffort (params.classes) are not translated"
    from kubelint_ml.k8s.resources import pod_level_gates

    _, fixed, defaulting = pod_level_gates(version, overrides)
    ps, cs = "ps", containers("ps")
    R, L = res(ps, "requests"), res(ps, "limits")
    default_req_zero = f"{cs}.all(c, x in {res('c', 'requests')} ? {q(res('c', 'requests') + '[x]')}.sign() == 0 : {zero(res('c', 'limits'), 'x')})"
    # no pod limits: they default from the containers' when every one has a limit (from 1.36)
    defaulted_limit_zero = (
        f" && (!{cs}.all(c, x in {res('c', 'limits')}) || {cs}.all(c, {zero(res('c', 'limits'), 'x')}))"
        if defaulting
        else ""
    )
    pod_level = (
        f"['cpu', 'memory'].all(x, {pod_limits_set(ps)}"
        f" ? ((x in {R} ? {q(R + '[x]')}.sign() == 0 : {default_req_zero}) && {zero(L, 'x')})"
        f" : ({zero(R, 'x')}{defaulted_limit_zero}))"
    )
    per_container = (
        f"{cs}.all(c, ['cpu', 'memory'].all(x, {zero(res('c', 'requests'), 'x')} && {zero(res('c', 'limits'), 'x')}))"
    )
    decides = pod_level_set(ps) if fixed else f"has({ps}.resources)"
    best_effort = f"({decides} ? {pod_level} : {per_container})"
    why = "'no cpu or memory requests or limits'"
    if not fixed:  # the containers would not make it BestEffort: the empty block does (k/k issue 135082)
        why = (
            f"(!{pod_level_set(ps)} && !({per_container}) ? 'the empty spec.resources decides it before Kubernetes "
            f"1.36' : {why})"
        )
    message = f"'pod template of containers ' + {names(cs)} + ': BestEffort QoS: ' + {why}"
    return BuiltinPolicy(f"({best_effort} ? [{message}] : [])", True, Variant(skip_trainer_job=True))


def _resource_missing(rule: Any) -> BuiltinPolicy | str:
    resource, missing = rule.params.get("resource"), rule.params.get("missing")
    if resource not in ("cpu", "memory"):
        return f"resource {resource}: only cpu and memory are translated"
    ps, cs = "ps", containers("ps", frozenset(rule.containers))
    every = containers("ps")
    r = lit(resource)
    R, L = res(ps, "requests"), res(ps, "limits")
    own_req, own_lim = f"{r} in {res('c', 'requests')}", f"{r} in {res('c', 'limits')}"
    if missing == "limit":
        ok = f"{own_lim} || {r} in {L}"
        what = f"no {resource} limit"
    else:
        # the pod-level request after defaulting: as written, from the limit, or from the containers'
        anyone = f"{every}.exists(d, {r} in {res('d', 'requests')} || {r} in {res('d', 'limits')})"
        pod = f"{r} in {R} || {r} in {L} || ({pod_limits_set(ps)} && {anyone})"
        # a pod-level limit defaults the pod-level request too, so both modes ask the same
        ok = f"{own_req} || {own_lim} || {pod}"
        what = f"no {resource} request" if missing == "request" else f"no {resource} request or limit"
    failures = f"{cs}.filter(c, !({ok})).map(c, 'container ' + \"'\" + string(c.name) + \"' has {what}\")"
    return BuiltinPolicy(failures, True, Variant(skip_trainer_job=True))


def _request_exceeds_limit(rule: Any) -> BuiltinPolicy | str:
    wanted = "[" + ", ".join(lit(r) for r in rule.params.get("resources", [])) + "]"

    def over(x: str, label: str) -> str:
        R, L = res(x, "requests"), res(x, "limits")
        bad = (
            f"{wanted}.filter(r, r in {R} && r in {L} && {is_q(R + '[r]')} && {is_q(L + '[r]')}"
            f" && {q(R + '[r]')}.isGreaterThan({q(L + '[r]')}))"
        )
        return f"{bad}.map(r, {label} + ' ' + r + ' request ' + string({R}[r]) + ' > limit ' + string({L}[r]))"

    cs = containers("ps")
    container = over("c", _CONTAINER_NAME)
    per_container = f"{cs}.map(c, {container}.join('; ')).filter(s, s != '')"
    failures = f"{per_container} + {over('ps', lit('pod-level resources'))}"
    return BuiltinPolicy(failures, False, Variant())


def _extended_mismatch(rule: Any) -> BuiltinPolicy | str:
    R, L = res("c", "requests"), res("c", "limits")

    def judged(v: str) -> str:
        return f"({is_q(v)} && {q(v)}.sign() >= 0 && {q(v)}.isInteger())"

    bad = (
        f"{R}.filter(k, {extended('k')} && {judged(R + '[k]')}"
        f" && (!(k in {L}) || ({judged(L + '[k]')} && {q(L + '[k]')}.compareTo({q(R + '[k]')}) != 0)))"
    )
    text = (
        f"{bad}.map(k, 'container ' + \"'\" + string(c.name) + \"' requests \" + string({R}[k]) + ' ' + k"
        f" + (k in {L} ? ' != limit ' + string({L}[k]) : ' without a limit'))"
    )
    failures = f"{containers('ps')}.map(c, {text}.join('; ')).filter(s, s != '')"
    return BuiltinPolicy(failures, False, Variant())


def _named(v: str) -> str:
    return f"(type({v}) == string && {v}.trim() != '')"


def _label(meta: str, key: str) -> str:
    labels = f"{meta}.labels"
    return f"(has({meta}) && has({labels}) && {lit(key)} in {labels} && {_named(f'{labels}[{lit(key)}]')})"


def _priority_missing(rule: Any) -> BuiltinPolicy | str:
    ps = "ps"
    fragment = (
        "(!has(ps.containers) || size(ps.containers) == 0 || ps.containers.exists(c, !has(c.image) || c.image == ''))"
    )
    kai = "(has(ps.schedulerName) && ps.schedulerName == 'kai-scheduler')"
    volcano = (
        "((object.kind == 'Job' && object.apiVersion.startsWith('batch.volcano.sh/'))"
        " || (object.kind == 'JobTemplate' && object.apiVersion.startsWith('flow.volcano.sh/')))"
    )
    volcano_cron = "(object.kind == 'CronJob' && object.apiVersion.startsWith('batch.volcano.sh/'))"
    cron = "object.kind == 'CronJob' && object.apiVersion.startsWith('batch/')"
    has_priority = " || ".join(
        [
            f"(has(ps.priorityClassName) && {_named('ps.priorityClassName')})",
            fragment,
            f"({volcano} && has(object.spec) && has(object.spec.priorityClassName) && {_named('object.spec.priorityClassName')})",
            f"({volcano_cron} && has(object.spec) && has(object.spec.jobTemplate) && has(object.spec.jobTemplate.spec)"
            f" && has(object.spec.jobTemplate.spec.priorityClassName)"
            f" && {_named('object.spec.jobTemplate.spec.priorityClassName')})",
            f"(object.apiVersion.startsWith('ray.io/') && {_label('object.metadata', RAY_LABEL)})",
            _label("object.metadata", KUEUE_LABEL),
            f"({cron} && has(object.spec) && has(object.spec.jobTemplate) && {_label('object.spec.jobTemplate.metadata', KUEUE_LABEL)})",
            _label("t.metadata", KUEUE_LABEL),
            f"({kai} && ({_label('t.metadata', KAI_LABEL)} || {_label('object.metadata', KAI_LABEL)}))",
        ]
    )
    message = f"'pod template of containers ' + {names(containers(ps))} + ': no priorityClassName: pods run at the default priority'"
    return BuiltinPolicy(
        f"({has_priority}) ? [] : [{message}]",
        False,
        Variant(skip_runtimes=True, skip_submitter=True),
    )


def _mounted(c: str, v: str) -> str:
    return f"(has({c}.volumeMounts) && {c}.volumeMounts.exists(m, has(m.name) && m.name == {v}.name))"


def _no_size(v: str) -> str:
    return f"(!has({v}.emptyDir.sizeLimit) || {q(v + '.emptyDir.sizeLimit')}.sign() <= 0)"


_DISK = "(has(v.emptyDir) && (!has(v.emptyDir.medium) || v.emptyDir.medium == ''))"
_MEMORY = "(has(v.emptyDir) && has(v.emptyDir.medium) && v.emptyDir.medium == 'Memory')"


def _volumes(predicate: str) -> str:
    return f"(has(ps.volumes) ? ps.volumes.filter(v, {predicate}) : [])"


def _emptydir_no_size(rule: Any) -> BuiltinPolicy | str:
    cs = containers("ps")
    storage_limit = f"{cs}.exists(c, {positive(res('c', 'limits'), lit('ephemeral-storage'))})"
    bad = _volumes(f"{_DISK} && {_no_size('v')} && {cs}.exists(c, {_mounted('c', 'v')})")
    failures = (
        f'{storage_limit} ? [] : {bad}.map(v, "disk emptyDir \'" + string(v.name) + "\' has no sizeLimit and no '
        f'ephemeral-storage limit")'
    )
    return BuiltinPolicy(failures, True, Variant(skip_trainer_job=True))


def _pod_memory_limit(ps: str) -> str:
    """A positive pod-level memory limit, after pod-level defaulting."""
    cs = containers(ps)
    R, L = res(ps, "requests"), res(ps, "limits")
    return (
        f"({positive(L, lit('memory'))} || (!{L}.exists(k, {_POD_LEVEL_KEY}) && !{hugepages_defaulted(ps)}"
        f" && {R}.exists(k, {_POD_LEVEL_KEY})"
        f" && {cs}.all(c, 'memory' in {res('c', 'limits')}) && {cs}.exists(c, {positive(res('c', 'limits'), lit('memory'))})))"
    )


def _emptydir_memory_unbounded(rule: Any) -> BuiltinPolicy | str:
    cs = containers("ps")
    unlimited = f"{cs}.filter(c, {_mounted('c', 'v')} && !{positive(res('c', 'limits'), lit('memory'))})"
    bad = _volumes(f"{_MEMORY} && {_no_size('v')} && {cs}.exists(c, {_mounted('c', 'v')}) && size({unlimited}) > 0")
    failures = (
        f'{_pod_memory_limit("ps")} ? [] : {bad}.map(v, "Memory emptyDir \'" + string(v.name) + "\' has no sizeLimit '
        f"and \" + {names(unlimited)} + ' no memory limit')"
    )
    return BuiltinPolicy(failures, True, Variant(skip_trainer_job=True))


def _emptydir_memory_exceeds(rule: Any) -> BuiltinPolicy | str:
    mine = _volumes(
        f"{_MEMORY} && has(v.emptyDir.sizeLimit) && {q('v.emptyDir.sizeLimit')}.sign() > 0 && {_mounted('c', 'v')}"
    )
    own = res("c", "limits")
    pod = res("ps", "limits")
    limit = f"({positive(own, lit('memory'))} ? {q(own + '.memory')} : {q(pod + '.memory')})"
    has_limit = f"({positive(own, lit('memory'))} || {positive(pod, lit('memory'))})"
    sizes = "m.map(v, " + q("v.emptyDir.sizeLimit") + ".asApproximateFloat())"
    over = (
        f"(size(m) == 1 ? {q('m[0].emptyDir.sizeLimit')}.isGreaterThan({limit})"
        f" : {sizes}.sum() > {limit}.asApproximateFloat())"
    )
    text = (
        f"'container ' + \"'\" + string(c.name) + \"' mounts Memory emptyDir \" + {names('m')}"
        f" + ' with sizeLimit above its memory limit'"
    )
    failures = f"{containers('ps')}.filter(c, [{mine}].exists(m, size(m) > 0 && {has_limit} && {over})).map(c, [{mine}].map(m, {text})[0])"
    return BuiltinPolicy(failures, True, Variant(skip_trainer_job=True))


# template name -> the rule's policy, or why its parameters cannot be translated
TRANSLATED: dict[str, Callable[[Any], BuiltinPolicy | str]] = {
    "qos-class": qos_best_effort,
    "container-resource-missing": _resource_missing,
    "request-exceeds-limit": _request_exceeds_limit,
    "extended-resource-mismatch": _extended_mismatch,
    "priority-class-missing": _priority_missing,
    "emptydir-no-size-limit": _emptydir_no_size,
    "emptydir-memory-unbounded": _emptydir_memory_unbounded,
    "emptydir-memory-exceeds-limit": _emptydir_memory_exceeds,
}


def variables(
    rule: Any,
    built: BuiltinPolicy,
    kinds: list[tuple[str, str]],
    accelerators: bool | None,
    dra: AdmissionDra | None = None,
) -> list[dict]:
    """The policy's ``spec.variables``: templates, judged, failures (and training where the scope asks).

    ``dra``: what is known of DRA claims at export (see :func:`uses_accelerators`)."""
    keep = ["has(t.spec)", f"!{ignored('t.metadata', rule.id)}"]
    if built.resources_known:
        keep.append(f"![t.spec].exists(ps, {resources_unknown('ps')})")
    if accelerators is None and rule.workloads == "accelerator":
        accelerators = True
    if accelerators is not None:
        uses = f"([t.spec].exists(ps, {uses_accelerators('ps', dra)}) || {gpu_share_annotated('t')})"
        keep.append(uses if accelerators else f"!{uses}")
    judged = f"{ignored('object.metadata', rule.id)} ? [] : variables.templates.filter(t, {' && '.join(keep)})"
    out = [{"name": "templates", "expression": templates_variable(kinds, built.variant)}]
    if rule.workloads == "training":
        # The kinds a variant leaves templates out of (runtimes, RayJob) are training kinds.
        out.append(
            {
                "name": "training",
                "expression": f"{training_kind()}\n|| variables.templates.exists(t, has(t.spec) && ([t.spec].exists(ps, {uses_accelerators('ps', dra)}) || {gpu_share_annotated('t')}))",
            }
        )
        judged = f"!variables.training ? [] : {judged}"
    out.append({"name": "judged", "expression": judged})
    out.append(
        {
            "name": "failures",
            "expression": f"variables.judged.map(t, [t.spec].map(ps, ({built.failures}).join('; '))[0]).filter(s, s != '')",
        }
    )
    return out
