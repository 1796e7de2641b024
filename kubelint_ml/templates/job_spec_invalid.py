"""Job fields combined as the API server rejects them (batch/v1, GA 1.33-1.34).

Followed: ``validateJobSpec``, ``validatePodReplacementPolicy`` and
``validatePodFailurePolicyRule`` in pkg/apis/batch/validation/validation.go; the
reasons are the API server's.
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

    indexed = spec.get("completionMode") == "Indexed"
    if not indexed:
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
    return out
