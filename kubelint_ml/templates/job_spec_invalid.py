"""Job fields combined as the API server rejects them (batch/v1, GA 1.33-1.34).

Followed: ``validateJobSpec``, ``validatePodReplacementPolicy``,
``validatePodFailurePolicyRule`` (with ``...OnExitCodes`` and ``...OnPodConditions``),
``validateSuccessPolicyRule`` and ``parseIndexInterval`` in
pkg/apis/batch/validation/validation.go, after ``SetDefaults_Job``
(pkg/apis/batch/v1/defaults.go: completions and parallelism left out both default to 1);
the reasons are the API server's; ``managedBy`` is dropped before 1.32 (the JobManagedBy gate,
pkg/features/kube_features.go: alpha 1.30, beta and on 1.32, GA 1.35), and an Indexed Job's name is
held to the pod hostnames it makes (``ValidateJob``). A JobSet's Jobs (and a training runtime's, which
become a JobSet) are Indexed unless they say otherwise: JobSet's defaulting
webhook sets ``completionMode: Indexed`` where it is unset.
"""

from __future__ import annotations

import re

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.input.objects import clip
from kubelint_ml.k8s.gates import gate_on
from kubelint_ml.k8s.resources import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from kubelint_ml.templates._common import PLACEHOLDER, is_fragment
from kubelint_ml.templates._priority import is_batch_job, is_jobset_like, job_spec, job_spec_path

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_INDEXED_ONLY = ("backoffLimitPerIndex", "maxFailedIndexes", "successPolicy")
_NON_NEGATIVE = (
    "parallelism",
    "completions",
    "activeDeadlineSeconds",
    "backoffLimit",
    "ttlSecondsAfterFinished",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
)
# The limits of pkg/apis/batch/validation/validation.go.
_INDEXED_PARALLELISM_MAX = 100_000  # maxParallelismForIndexedJob
_FAILED_INDEXES_MAX = 100_000  # maxFailedIndexesForIndexedJob
_COMPLETIONS_SOFT_LIMIT = 100_000  # completionsSoftLimit (with backoffLimitPerIndex)
_HIGH_COMPLETIONS_MAX = 10_000  # parallelismLimitForHighCompletions, maxFailedIndexesLimitForHighCompletions
_PFP_RULES_MAX = 20  # maxPodFailurePolicyRules
_EXIT_CODES_MAX = 255  # maxPodFailurePolicyOnExitCodesValues
_CONDITIONS_MAX = 20  # maxPodFailurePolicyOnPodConditionsPatterns
_SUCCESS_RULES_MAX = 20  # maxSuccessPolicyRule
_SUCCEEDED_INDEXES_MAX_LEN = 64 * 1024  # maxJobSuccessPolicySucceededIndexesLimit
_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
_OPERATORS = ("In", "NotIn")
_STATUSES = ("False", "True", "Unknown")
_MANAGED_BY_MAX = 63  # maxManagedByLength
# apimachinery validation.IsDomainPrefixedPath: the path after the first '/' (RFC 3986 path characters)
_HTTP_PATH_RE = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")


def _int(value: object) -> int | None:
    """A YAML integer (not a bool) within int32, as the API decodes these fields; anything else is the
    schema's to report."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31:
        return value
    return None


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    obj, tpl = unit.obj, unit.tpl
    batch = is_batch_job(obj)
    if not batch and not is_jobset_like(obj):
        return None
    spec = job_spec(tpl)
    if not spec:
        return None
    base = job_spec_path(tpl)
    rejected = (
        f"the API server rejects the {obj.kind}"
        if batch
        else "the API server rejects each child Job the JobSet controller creates"
    )
    out: list[Hit] = []

    def hit(path: tuple, message: str, reason: str, remedy: str, at_value: bool | None = None) -> None:
        if at_value is None:
            value = spec.get(path[0]) if len(path) == 1 else None
            at_value = not isinstance(value, (dict, list))  # a block: at its key
        out.append(
            Hit(
                base + path,
                message,
                detail=f"{tpl.describe()}: {message}: {rejected} ({where}{reason}). {remedy}",
                at_value=at_value,
            )
        )

    # the API server's path of the JobSpec (a JobSet's child Job is a Job)
    where = "spec.jobTemplate." if obj.kind == "CronJob" and batch else ""

    mode = spec.get("completionMode")
    if isinstance(mode, str) and mode not in ("NonIndexed", "Indexed"):
        hit(
            ("completionMode",),
            f"completionMode {mode}: only NonIndexed or Indexed",
            f'spec.completionMode: Unsupported value: "{mode}": supported values: "NonIndexed", "Indexed"',
            "Write NonIndexed or Indexed (the case matters)",
        )
    # JobSet's webhook defaults its Jobs' completionMode to Indexed (a Kubeflow Trainer runtime
    # becomes a JobSet); a batch Job's default is NonIndexed.
    indexed = mode == "Indexed" or (mode is None and not batch)
    if not indexed and mode in (None, "NonIndexed"):  # (a misspelt mode is its own finding)
        mode = spec.get("completionMode") or "NonIndexed (the default)"
        for name in _INDEXED_ONLY:
            if spec.get(name) is not None:
                hit(
                    (name,),
                    f"{name} needs completionMode: Indexed, not {mode}",
                    f"spec.{name}: requires indexed completion mode",
                    "Set completionMode: Indexed (with completions), or remove the field",
                )
    # a Kubeflow Trainer runtime's node Job takes its parallelism and completions from each TrainJob
    # (numNodes): the checks that read them are left to the TrainJob
    sized = obj.group != "trainer.kubeflow.org"
    _counts(spec, indexed and sized, hit)
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        hit(
            ("maxFailedIndexes",),
            "maxFailedIndexes without backoffLimitPerIndex",
            "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
            "Set backoffLimitPerIndex too",
        )
    managed = spec.get("managedBy")
    # (with JobManagedBy off the API server drops spec.managedBy)
    if isinstance(managed, str) and not _templated(managed) and gate_on(ctx, "JobManagedBy"):
        _managed_by(managed, hit)
    if batch and obj.kind == "Job" and indexed:
        out += _indexed_hostname(tpl, _completions(spec))
    if batch and (spec.get("selector") is not None or spec.get("manualSelector") is not None):
        _selector(obj, spec, hit)
    pfp = spec.get("podFailurePolicy")
    policy = spec.get("podReplacementPolicy")
    if isinstance(pfp, dict) and isinstance(policy, str) and policy != "Failed":
        hit(
            ("podReplacementPolicy",),
            f"podReplacementPolicy {policy} with a podFailurePolicy: only Failed",
            f'spec.podReplacementPolicy: Unsupported value: "{policy}": supported values: "Failed"',
            "With a podFailurePolicy a pod is replaced only once it has failed: set podReplacementPolicy: Failed "
            "(or remove it: it defaults to Failed then)",
        )
    elif isinstance(policy, str) and policy not in ("Failed", "TerminatingOrFailed"):
        hit(
            ("podReplacementPolicy",),
            f"podReplacementPolicy {policy}: only TerminatingOrFailed or Failed",
            f'spec.podReplacementPolicy: Unsupported value: "{policy}": supported values: "Failed", '
            '"TerminatingOrFailed"',
            "Write TerminatingOrFailed or Failed (the case matters)",
        )
    if isinstance(pfp, dict):
        _pod_failure_policy(pfp, spec, tpl, hit)
    success = spec.get("successPolicy")
    if indexed and isinstance(success, dict):
        _success_rules(success, _completions(spec) if sized else None, hit)
    return out


def _templated(text: str) -> bool:
    """A value left for a template engine or envsubst to fill (``kueue.x-k8s.io/${CLUSTER}``)."""
    return PLACEHOLDER.match(text) is not None or any(mark in text for mark in ("${", "{{", "$(", "<"))


def _managed_by(value: str, hit) -> None:
    """``validateJobSpec``: managedBy is a domain-prefixed path (``IsDomainPrefixedPath``) of at most 63
    characters."""
    host, slash, path = value.partition("/")
    problem = reason = ""
    if not host or not slash or not path:
        problem = "is not a domain-prefixed path"
        reason = 'must be a domain-prefixed path (such as "acme.io/foo")'
    elif not is_dns1123_subdomain(host):
        problem = f"has a domain {clip(host, 40)} that is not a lower-case DNS subdomain"
        reason = (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
            "must start and end with an alphanumeric character"
        )
    elif not _HTTP_PATH_RE.fullmatch(path):
        problem = "has characters a URL path cannot hold after its domain"
        reason = "Invalid path: must match the regex [A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
    if problem:
        hit(
            ("managedBy",),
            f"managedBy {clip(value, 64)} {problem}",
            f'spec.managedBy: Invalid value: "{clip(value)}": {reason}',
            "Name the controller that manages the Job as <domain>/<name> (kueue.x-k8s.io/multikueue), or leave "
            "managedBy out for the built-in Job controller",
        )
    if len(value) > _MANAGED_BY_MAX:
        hit(
            ("managedBy",),
            f"managedBy is {len(value)} characters long, more than {_MANAGED_BY_MAX}",
            f"spec.managedBy: Too long: may not be more than {_MANAGED_BY_MAX} bytes",
            f"Name the controller in at most {_MANAGED_BY_MAX} characters",
        )


_GENERATED = ("batch.kubernetes.io/controller-uid", "controller-uid", "batch.kubernetes.io/job-name", "job-name")


def _selector(obj, spec: dict, hit) -> None:
    """A Job's own selector: without ``manualSelector: true`` the API server adds the generated
    controller-uid to it and rejects a selector the generated labels do not match (``generateSelector`` in
    pkg/registry/batch/job/strategy.go, ``validateGeneratedSelector``); a CronJob's jobTemplate may have
    neither (``ValidateJobTemplateSpec``)."""
    selector = spec.get("selector")
    manual = spec.get("manualSelector") is True
    if obj.kind == "CronJob":
        if selector is not None:
            hit(
                ("selector",),
                "a CronJob's jobTemplate sets a selector",
                "spec.selector: Invalid value: `selector` will be auto-generated",
                "Remove the selector: each Job's is generated from its own uid",
            )
        if manual:
            hit(
                ("manualSelector",),
                "a CronJob's jobTemplate sets manualSelector: true",
                'spec.manualSelector: Unsupported value: true: supported values: "nil", "false"',
                "Remove manualSelector",
            )
        return
    if manual and isinstance(selector, dict):
        _manual_selector(spec, selector, hit)
        return
    if manual or not isinstance(selector, dict):
        return
    meta = obj.data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    # the values the API server generates: the Job's name, and its uid (known only once created: a Job read
    # back from a cluster carries it, and keeps its selector on update)
    generated = {"job-name": meta.get("name"), "controller-uid": meta.get("uid")}
    labels = selector.get("matchLabels")
    foreign = [
        k
        for k, v in (labels.items() if isinstance(labels, dict) else ())
        if k not in _GENERATED or v != generated[k.rsplit("/", 1)[-1]]
    ]
    expressions = selector.get("matchExpressions")
    foreign += [
        e.get("key")
        for e in (expressions if isinstance(expressions, list) else ())
        if isinstance(e, dict) and e.get("key") not in _GENERATED and e.get("operator") in ("In", "Exists")
    ]
    if not foreign:
        return
    hit(
        ("selector",),
        f"selector on {clip(str(foreign[0]), 64)} without manualSelector: true: the Job's selector is generated",
        "spec.selector: Invalid value: `selector` not auto-generated",
        "Remove the selector (the Job's pods are selected by its uid), or set manualSelector: true if the "
        "selector really is yours (and matches only this Job's pods)",
    )


def _manual_selector(spec: dict, selector: dict, hit) -> None:
    """``ValidateJobSpec``: whether written (``manualSelector: true``) or generated, the Job's selector must
    match its pod template's labels ("`selector` does not match template `labels`"); the API server adds
    no label to the template of a Job whose selector is its own."""
    template = spec.get("template")
    meta = template.get("metadata") if isinstance(template, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    labels = labels if isinstance(labels, dict) else {}
    match = selector.get("matchLabels")
    expressions = selector.get("matchExpressions")
    pairs = list(match.items()) if isinstance(match, dict) else []
    exprs = [e for e in (expressions if isinstance(expressions, list) else ()) if isinstance(e, dict)]
    texts = [str(v) for _, v in pairs] + [str(x) for e in exprs for x in (e.get("values") or ()) if x is not None]
    if any(_templated(t) for t in texts + [str(v) for v in labels.values()]):
        return  # left for a template engine
    missed = next((f"{k}={v}" for k, v in pairs if labels.get(k) != v), None)
    for e in exprs if missed is None else ():
        key, op, values = e.get("key"), e.get("operator"), e.get("values")
        if not isinstance(key, str):
            continue  # (the schema's to say)
        values = values if isinstance(values, list) else []
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }.get(str(op))
        if ok is False:
            missed = f"{key} {op} ({', '.join(map(str, values))})" if values else f"{key} {op}"
            break
    if missed is None:
        return
    at = ("template", "metadata", "labels") if labels else ("selector",)
    hit(
        at,
        f"the selector ({clip(missed, 64)}) does not match the pod template's labels",
        "spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`",
        "Label the pod template so that the selector matches it (with manualSelector: true the API server adds "
        "no label), or correct the selector",
    )


def _indexed_hostname(tpl, completions: int | None) -> list[Hit]:
    """``ValidateJob``: an Indexed Job's pods are named (and their hostnames set) ``<job name>-<index>``,
    so ``<name>-<completions - 1>`` must be a DNS label (at most 63 characters, no dots or capitals)."""
    meta = tpl.obj.data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    # (a name the API server rejects on its own, or one left for a template engine, is not judged here)
    if not isinstance(name, str) or not is_dns1123_subdomain(name) or not completions or completions < 1:
        return []
    hostname = f"{name}-{completions - 1}"
    if is_dns1123_label(hostname):
        return []
    why = f"{len(hostname)} characters, more than 63" if len(hostname) > 63 else "not a DNS label"
    return [
        Hit(
            ("metadata", "name"),
            f"Indexed Job's last pod hostname {clip(hostname, 80)} is {why}",
            detail=(
                f"{tpl.describe()}: an Indexed Job names its pods' hostnames <job name>-<index>, up to "
                f"{clip(hostname)} with completions {completions}; the API server rejects the Job "
                f'(metadata.name: Invalid value: "{clip(name)}": will not able to create pod with invalid DNS '
                f"label: {clip(hostname)}). Shorten the name (to at most {63 - len(str(completions - 1)) - 1} "
                "characters here), in lower case letters, digits and '-'"
            ),
            at_value=True,
        )
    ]


def _completions(spec: dict) -> int | None:
    """``completions`` after ``SetDefaults_Job``: 1 when neither it nor parallelism is set."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        return 1
    return _int(spec.get("completions"))


def _counts(spec: dict, indexed: bool, hit) -> None:
    """``validateJobSpec``'s counts: none negative; an Indexed Job's completions, parallelism and
    maxFailedIndexes within their limits (``indexed``: judge those)."""
    for name in _NON_NEGATIVE:
        value = _int(spec.get(name))
        if value is not None and value < 0:
            hit(
                (name,),
                f"{name} {value} is negative",
                f"spec.{name}: Invalid value: {value}: must be greater than or equal to 0",
                f"Set {name} to 0 or more",
            )
    if not indexed:
        return
    completions = _completions(spec)
    parallelism = _int(spec.get("parallelism"))
    failed = _int(spec.get("maxFailedIndexes"))
    if spec.get("completions") is None and spec.get("parallelism") is not None:
        hit(
            ("completionMode",) if "completionMode" in spec else ("parallelism",),
            f"an Indexed Job with parallelism {spec.get('parallelism')} needs completions",
            "spec.completions: Required value: when completion mode is Indexed",
            "Set completions (the number of indexes), or leave parallelism out too (both then default to 1)",
            at_value=True,
        )
    if parallelism is not None and parallelism > _INDEXED_PARALLELISM_MAX:
        hit(
            ("parallelism",),
            f"parallelism {parallelism} > {_INDEXED_PARALLELISM_MAX} in an Indexed Job",
            f"spec.parallelism: Invalid value: {parallelism}: must be less than or equal to "
            f"{_INDEXED_PARALLELISM_MAX} when completion mode is Indexed",
            f"Lower parallelism to at most {_INDEXED_PARALLELISM_MAX}",
        )
    if completions is not None and failed is not None and failed > completions:
        hit(
            ("maxFailedIndexes",),
            f"maxFailedIndexes {failed} > completions {completions}",
            f"spec.maxFailedIndexes: Invalid value: {failed}: must be less than or equal to completions",
            "Lower maxFailedIndexes to at most completions (the number of indexes)",
        )
    if failed is not None and failed > _FAILED_INDEXES_MAX:
        hit(
            ("maxFailedIndexes",),
            f"maxFailedIndexes {failed} > {_FAILED_INDEXES_MAX}",
            f"spec.maxFailedIndexes: Invalid value: {failed}: must be less than or equal to {_FAILED_INDEXES_MAX}",
            f"Lower maxFailedIndexes to at most {_FAILED_INDEXES_MAX}",
        )
    if completions is None or completions <= _COMPLETIONS_SOFT_LIMIT or spec.get("backoffLimitPerIndex") is None:
        return
    high = f"when completions are above {_COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    if failed is None:
        hit(
            ("completions",),
            f"completions {completions} > {_COMPLETIONS_SOFT_LIMIT} with backoffLimitPerIndex and no maxFailedIndexes",
            f"spec.maxFailedIndexes: Required value: must be specified when completions is above "
            f"{_COMPLETIONS_SOFT_LIMIT}",
            f"Set maxFailedIndexes (at most {_HIGH_COMPLETIONS_MAX}), or lower completions to "
            f"{_COMPLETIONS_SOFT_LIMIT}",
        )
    elif failed > _HIGH_COMPLETIONS_MAX:
        hit(
            ("maxFailedIndexes",),
            f"maxFailedIndexes {failed} > {_HIGH_COMPLETIONS_MAX} with completions {completions}",
            f"spec.maxFailedIndexes: Invalid value: {failed}: must be less than or equal to "
            f"{_HIGH_COMPLETIONS_MAX} {high}",
            f"Lower maxFailedIndexes to at most {_HIGH_COMPLETIONS_MAX}",
        )
    if parallelism is not None and parallelism > _HIGH_COMPLETIONS_MAX:
        hit(
            ("parallelism",),
            f"parallelism {parallelism} > {_HIGH_COMPLETIONS_MAX} with completions {completions}",
            f"spec.parallelism: Invalid value: {parallelism}: must be less than or equal to "
            f"{_HIGH_COMPLETIONS_MAX} {high}",
            f"Lower parallelism to at most {_HIGH_COMPLETIONS_MAX}",
        )


def _pod_failure_policy(pfp: dict, spec: dict, tpl, hit) -> None:
    """``validatePodFailurePolicy``: at most 20 rules, each with a known action and exactly one of
    onExitCodes and onPodConditions."""
    rules = pfp.get("rules")
    if not isinstance(rules, list):
        return
    if len(rules) > _PFP_RULES_MAX:
        hit(
            ("podFailurePolicy", "rules"),
            f"podFailurePolicy has {len(rules)} rules, more than {_PFP_RULES_MAX}",
            f"spec.podFailurePolicy.rules: Too many: {len(rules)}: must have at most {_PFP_RULES_MAX} items",
            f"Merge rules: at most {_PFP_RULES_MAX}",
            at_value=False,
        )
    names = None if is_fragment(tpl) else {c.name for c in tpl.all_containers}
    if names is not None and any(PLACEHOLDER.match(n) for n in names):
        names = None  # an unrendered name: what renders it decides
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        at = ("podFailurePolicy", "rules", i)
        field = f"spec.podFailurePolicy.rules[{i}]"
        action = rule.get("action")
        if action == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
            hit(
                at + ("action",),
                "FailIndex action without backoffLimitPerIndex",
                f'{field}.action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
                "Set backoffLimitPerIndex (an Indexed Job), or use FailJob",
            )
        elif action is None or action == "":
            hit(
                at,
                "podFailurePolicy rule without an action",
                f'{field}.action: Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]',
                "Give the rule an action: FailJob, FailIndex, Ignore or Count",
                at_value=True,
            )
        elif isinstance(action, str) and action not in _ACTIONS:
            hit(
                at + ("action",),
                f"podFailurePolicy action {action}: only Count, FailIndex, FailJob or Ignore",
                f'{field}.action: Unsupported value: "{action}": supported values: "Count", "FailIndex", '
                '"FailJob", "Ignore"',
                "Write Count, FailIndex, FailJob or Ignore (the case matters)",
            )
        exits = rule.get("onExitCodes")
        conditions = rule.get("onPodConditions")
        if isinstance(exits, dict):
            _on_exit_codes(exits, at + ("onExitCodes",), f"{field}.onExitCodes", names, hit)
        if isinstance(conditions, list):
            _on_pod_conditions(conditions, at + ("onPodConditions",), f"{field}.onPodConditions", hit)
        has_conditions = isinstance(conditions, list) and len(conditions) > 0
        if exits is not None and has_conditions:
            hit(
                at,
                "podFailurePolicy rule with both onExitCodes and onPodConditions",
                f"{field}: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
                "Split it into two rules, one on exit codes and one on pod conditions",
                at_value=True,
            )
        elif exits is None and not has_conditions:
            hit(
                at,
                "podFailurePolicy rule with neither onExitCodes nor onPodConditions",
                f"{field}: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
                "Give the rule onExitCodes or onPodConditions",
                at_value=True,
            )


def _on_exit_codes(exits: dict, at: tuple, field: str, names: set | None, hit) -> None:
    """``validatePodFailurePolicyRuleOnExitCodes``: a known operator, a container of the template,
    1-255 values, none 0 with In, none twice, in increasing order."""
    operator = exits.get("operator")
    if operator is None or operator == "":
        hit(
            at,
            "onExitCodes without an operator",
            f'{field}.operator: Required value: valid values: ["In" "NotIn"]',
            "Write operator: In or NotIn",
            at_value=False,
        )
    elif isinstance(operator, str) and operator not in _OPERATORS:
        hit(
            at + ("operator",),
            f"onExitCodes operator {operator}: only In or NotIn",
            f'{field}.operator: Unsupported value: "{operator}": supported values: "In", "NotIn"',
            "Write In or NotIn (the case matters)",
        )
    name = exits.get("containerName")
    if names is not None and isinstance(name, str) and name not in names and not PLACEHOLDER.match(name):
        hit(
            at + ("containerName",),
            f"onExitCodes containerName {name} is not a container of the pod template",
            f'{field}.containerName: Invalid value: "{name}": must be one of the container or initContainer '
            "names in the pod template",
            f"Name one of the template's containers ({', '.join(sorted(names))}), or leave containerName out",
            at_value=True,
        )
    values = exits.get("values")
    if not isinstance(values, list):
        return
    if not values:
        hit(
            at + ("values",),
            "onExitCodes with no values",
            f"{field}.values: Invalid value: []: at least one value is required",
            "List the exit codes the rule matches",
            at_value=False,
        )
    elif len(values) > _EXIT_CODES_MAX:
        hit(
            at + ("values",),
            f"onExitCodes has {len(values)} values, more than {_EXIT_CODES_MAX}",
            f"{field}.values: Too many: {len(values)}: must have at most {_EXIT_CODES_MAX} items",
            f"List at most {_EXIT_CODES_MAX} exit codes (NotIn matches the others)",
            at_value=False,
        )
    seen: set[int] = set()
    previous: int | None = None
    ordered = True
    for j, raw in enumerate(values):
        value = _int(raw)
        if value is None:
            continue
        if operator == "In" and value == 0:
            hit(
                at + ("values", j),
                "onExitCodes In 0: exit code 0 is a success",
                f"{field}.values[{j}]: Invalid value: 0: must not be 0 for the In operator",
                "Remove 0: a container that exits 0 has not failed",
                at_value=True,
            )
        if value in seen:
            hit(
                at + ("values", j),
                f"onExitCodes lists {value} twice",
                f"{field}.values[{j}]: Duplicate value: {value}",
                "Keep one",
                at_value=True,
            )
        seen.add(value)
        if previous is not None and previous > value:
            ordered = False
        previous = value
    if not ordered:
        shown = ", ".join(str(v) for v in values if _int(v) is not None)
        hit(
            at + ("values",),
            "onExitCodes values not in increasing order",
            f"{field}.values: Invalid value: [{shown}]: must be ordered",
            "List the exit codes in increasing order",
            at_value=False,
        )


def _on_pod_conditions(conditions: list, at: tuple, field: str, hit) -> None:
    """``validatePodFailurePolicyRuleOnPodConditions``: at most 20 patterns, each status True, False or
    Unknown (True when left out: ``SetDefaults_Job``)."""
    if len(conditions) > _CONDITIONS_MAX:
        hit(
            at,
            f"onPodConditions has {len(conditions)} patterns, more than {_CONDITIONS_MAX}",
            f"{field}: Too many: {len(conditions)}: must have at most {_CONDITIONS_MAX} items",
            f"List at most {_CONDITIONS_MAX} patterns",
            at_value=False,
        )
    for j, pattern in enumerate(conditions):
        kind = pattern.get("type") if isinstance(pattern, dict) else None
        if isinstance(pattern, dict) and (kind is None or kind == ""):
            hit(
                at + (j,),
                "onPodConditions pattern without a type",
                f'{field}[{j}].type: Invalid value: "": name part must be non-empty',
                "Name the pod condition the pattern matches (type: DisruptionTarget)",
                at_value=False,
            )
        elif isinstance(kind, str) and not _templated(kind) and not is_qualified_name(kind):
            hit(
                at + (j, "type"),
                f"onPodConditions type {clip(kind, 64)} is not a qualified name",
                f'{field}[{j}].type: Invalid value: "{clip(kind)}": name part must consist of alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character (an optional "
                "DNS subdomain prefix and '/' before it)",
                "Write the condition type as Kubernetes names it (DisruptionTarget, ConfigIssue), with no spaces",
                at_value=True,
            )
        status = pattern.get("status") if isinstance(pattern, dict) else None
        if isinstance(status, str) and status and status not in _STATUSES:  # ("" defaults to True)
            hit(
                at + (j, "status"),
                f"onPodConditions status {status}: only True, False or Unknown",
                f'{field}[{j}].status: Unsupported value: "{status}": supported values: "False", "True", "Unknown"',
                "Write True, False or Unknown (the case matters), or leave status out (True)",
                at_value=True,
            )


def _success_rules(success: dict, completions: int | None, hit) -> None:
    """``validateSuccessPolicy``: 1-20 rules, each with succeededCount or succeededIndexes; indexes that
    parse, in increasing order, below the completions; a succeededCount at most the completions and the
    number of indexes it names."""
    rules = success.get("rules")
    if not isinstance(rules, list) or not rules:
        hit(
            ("successPolicy",),
            "successPolicy without rules",
            "spec.successPolicy.rules: Required value: at least one rules must be specified when the "
            "successPolicy is specified",
            "Add a rule (succeededCount and/or succeededIndexes), or remove the successPolicy",
        )
        return
    if len(rules) > _SUCCESS_RULES_MAX:
        hit(
            ("successPolicy", "rules"),
            f"successPolicy has {len(rules)} rules, more than {_SUCCESS_RULES_MAX}",
            f"spec.successPolicy.rules: Too many: {len(rules)}: must have at most {_SUCCESS_RULES_MAX} items",
            f"Merge rules: at most {_SUCCESS_RULES_MAX}",
            at_value=False,
        )
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        at = ("successPolicy", "rules", i)
        field = f"spec.successPolicy.rules[{i}]"
        count = _int(rule.get("succeededCount"))
        indexes = rule.get("succeededIndexes")
        if rule.get("succeededCount") is None and indexes is None:
            hit(
                at,
                "successPolicy rule with neither succeededCount nor succeededIndexes",
                f"{field}: Required value: at least one of succeededCount or succeededIndexes must be specified",
                "Give the rule a succeededCount, succeededIndexes, or both",
            )
        total: int | None = None
        if isinstance(indexes, str) and completions is not None:
            if len(indexes) > _SUCCEEDED_INDEXES_MAX_LEN:
                hit(
                    at + ("succeededIndexes",),
                    f"succeededIndexes is {len(indexes)} characters long, more than {_SUCCEEDED_INDEXES_MAX_LEN}",
                    f"{field}.succeededIndexes: Too long: may not be more than {_SUCCEEDED_INDEXES_MAX_LEN} bytes",
                    "Name the indexes with ranges (0-99)",
                    at_value=True,
                )
            total, error = indexes_total(indexes, completions)
            if error:
                hit(
                    at + ("succeededIndexes",),
                    f"succeededIndexes {clip(indexes, 64)}: {clip(error, 100)} (completions {completions})",
                    f'{field}.succeededIndexes: Invalid value: "{clip(indexes)}": error parsing succeededIndexes: '
                    f"{clip(error)}",
                    f"Write indexes from 0 to {completions - 1} (completions - 1), as increasing numbers and "
                    "ranges separated by commas (0,2,4-7)",
                    at_value=True,
                )
                total = 0  # (the API server counts nothing from it)
        if count is None:
            continue
        if count < 0:
            hit(
                at + ("succeededCount",),
                f"succeededCount {count} is negative",
                f"{field}.succeededCount: Invalid value: {count}: must be greater than or equal to 0",
                "Set succeededCount to 0 or more",
            )
        if completions is not None and count > completions:
            hit(
                at + ("succeededCount",),
                f"succeededCount {count} > completions {completions}",
                f"{field}.succeededCount: Invalid value: {count}: must be less than or equal to {completions} "
                "(the number of specified completions)",
                "Lower succeededCount to at most the Job's completions",
            )
        if total is not None and count > total:
            hit(
                at + ("succeededCount",),
                f"succeededCount {count} > the {total} indexes of succeededIndexes",
                f"{field}.succeededCount: Invalid value: {count}: must be less than or equal to {total} (the "
                "number of indexes in the specified succeededIndexes field)",
                "Lower succeededCount to at most the number of indexes succeededIndexes names, or name more",
            )


def indexes_total(text: str, completions: int) -> tuple[int, str]:
    """``validateIndexesFormat``: (the number of indexes, "") or (0, the API server's error) for an
    interval list such as ``0,2,4-7`` of indexes below ``completions``."""
    if not text:
        return 0, ""
    total = 0
    last: int | None = None
    for interval in text.split(","):
        parts = interval.split("-")
        if len(parts) > 2:
            return 0, (
                f'the fragment "{interval}" violates the requirement that an index interval can have at most two '
                "parts separated by '-'"
            )
        bounds: list[int] = []
        for part in parts:
            number = _atoi(part)
            if number is None:
                return 0, f'cannot convert string to integer for index: "{part}"'
            if number >= completions:
                return 0, f'too large index: "{part}"'
            bounds.append(number)
        first, end = bounds[0], bounds[-1]
        if len(bounds) == 2 and first >= end:
            return 0, f"non-increasing order, previous: {first}, current: {end}"
        if last is not None and last >= first:
            return 0, f"non-increasing order, previous: {last}, current: {first}"
        total += end - first + 1
        last = end
    return total, ""


def _atoi(text: str) -> int | None:
    """Go's ``strconv.Atoi``: an optional sign and ASCII digits, nothing else, within int64 (a longer
    number is an error there, and never reaches Python's int)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or len(digits) > 19 or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None
