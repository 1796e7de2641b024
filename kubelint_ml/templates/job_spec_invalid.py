"""Job fields combined as the API server rejects them (batch/v1, GA 1.33-1.34).

Followed: ``validateJobSpec``, ``validatePodReplacementPolicy`` and
``validatePodFailurePolicyRule`` in pkg/apis/batch/validation/validation.go; the
reasons are the API server's. A JobSet's Jobs (and a training runtime's, which
become a JobSet) are Indexed unless they say otherwise: JobSet's defaulting
webhook sets ``completionMode: Indexed`` where it is unset.
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates._priority import is_batch_job, is_jobset_like, job_spec, job_spec_path

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_INDEXED_ONLY = ("backoffLimitPerIndex", "maxFailedIndexes", "successPolicy")


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
        "the API server rejects the Job"
        if batch
        else "the API server rejects each child Job the JobSet controller creates"
    )
    out: list[Hit] = []

    def hit(path: tuple, message: str, reason: str, remedy: str) -> None:
        value = spec.get(path[0]) if len(path) == 1 else None
        out.append(
            Hit(
                base + path,
                message,
                detail=f"{tpl.describe()}: {message}: {rejected} ({reason}). {remedy}",
                at_value=not isinstance(value, (dict, list)),  # a block: at its key
            )
        )

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
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        hit(
            ("maxFailedIndexes",),
            "maxFailedIndexes without backoffLimitPerIndex",
            "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
            "Set backoffLimitPerIndex too",
        )
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
    rules = pfp.get("rules") if isinstance(pfp, dict) else None
    if isinstance(rules, list) and spec.get("backoffLimitPerIndex") is None:
        for i, rule in enumerate(rules):
            if isinstance(rule, dict) and rule.get("action") == "FailIndex":
                hit(
                    ("podFailurePolicy", "rules", i, "action"),
                    "FailIndex action without backoffLimitPerIndex",
                    f'spec.podFailurePolicy.rules[{i}].action: Invalid value: "FailIndex": requires the '
                    "backoffLimitPerIndex to be set",
                    "Set backoffLimitPerIndex (an Indexed Job), or use FailJob",
                )
    success = spec.get("successPolicy")
    if indexed and isinstance(success, dict):
        _success_rules(success, spec.get("completions"), hit)
    return out


def _success_rules(success: dict, completions: object, hit) -> None:
    """``validateSuccessPolicy``: at least one rule, each with succeededCount or succeededIndexes, and
    no succeededCount above the completions."""
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
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        count = rule.get("succeededCount")
        if count is None and rule.get("succeededIndexes") is None:
            hit(
                ("successPolicy", "rules", i),
                "successPolicy rule with neither succeededCount nor succeededIndexes",
                f"spec.successPolicy.rules[{i}]: Required value: at least one of succeededCount or "
                "succeededIndexes must be specified",
                "Give the rule a succeededCount, succeededIndexes, or both",
            )
        if (
            isinstance(count, int)
            and isinstance(completions, int)
            and not isinstance(count, bool)
            and not isinstance(completions, bool)
            and count > completions
        ):
            hit(
                ("successPolicy", "rules", i, "succeededCount"),
                f"succeededCount {count} > completions {completions}",
                f"spec.successPolicy.rules[{i}].succeededCount: Invalid value: {count}: must be less than or "
                f"equal to {completions} (the number of specified completions)",
                "Lower succeededCount to at most the Job's completions",
            )
