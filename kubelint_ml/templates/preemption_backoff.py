"""A preemptible Job whose podFailurePolicy lets each preemption burn a retry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubelint_ml.engine.api import Hit, SkipUnit, Unit
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._common import is_fragment
from kubelint_ml.templates._priority import (
    facts_of,
    is_batch_job,
    is_placeholder,
    job_spec,
    job_spec_path,
    named,
    origin,
)

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

# A preempted pod's containers get SIGTERM, then SIGKILL after the grace period.
_KILLED = (143, 137)
_IGNORE_RULE = "{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}"


def _first_match(rules: list) -> tuple[int, dict, str] | None:
    """The first podFailurePolicy rule a preempted pod matches: (index, rule, "condition" | "exitCodes")."""
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        conds = rule.get("onPodConditions")
        if isinstance(conds, list):
            for c in conds:
                if isinstance(c, dict) and c.get("type") == "DisruptionTarget" and c.get("status", "True") == "True":
                    return i, rule, "condition"
        codes = rule.get("onExitCodes")
        if isinstance(codes, dict) and isinstance(codes.get("values"), list):
            values = {v for v in codes["values"] if isinstance(v, int)}
            op = codes.get("operator")
            hit = (
                any(k in values for k in _KILLED)
                if op == "In"
                else (op == "NotIn" and any(k not in values for k in _KILLED))
            )
            if hit:
                return i, rule, "exitCodes"
    return None


def _retries(spec: dict) -> str:
    per_index = spec.get("backoffLimitPerIndex")
    if isinstance(per_index, int) and not isinstance(per_index, bool):
        return f"counts against its index's backoffLimitPerIndex ({per_index})"
    limit: Any = spec.get("backoffLimit")
    if isinstance(limit, int) and not isinstance(limit, bool):
        return f"counts against backoffLimit ({limit})"
    return "counts against backoffLimit (6 by default)"


def _limit(spec: dict) -> str:
    """``backoffLimit (4)``, ``backoffLimit (6 by default)`` or ``backoffLimitPerIndex (2)``."""
    return _retries(spec).removeprefix("counts against ").removeprefix("its index's ")


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    obj, tpl = unit.obj, unit.tpl
    if not is_batch_job(obj):
        return
    name = named(tpl.spec.get("priorityClassName"))
    if name is None or is_fragment(tpl):
        return  # no class to judge (missing-priority-class reports it), or a patch of a base
    facts = facts_of(ctx)
    top = facts.highest_preempting()
    if top is None or top.value is None:
        raise SkipUnit("no PriorityClass value known from the inputs or the profile")
    if is_placeholder(name):
        raise SkipUnit(f"priorityClassName {name} is an unrendered placeholder")
    value = facts.priority_value(name)
    if value is None:
        raise SkipUnit(f"the value of PriorityClass '{name}' is unknown")
    if value >= top.value:
        return
    runs_as = f"runs at PriorityClass '{name}' (value {value})"
    spec = job_spec(tpl)
    base = job_spec_path(tpl)
    # the nearest class above it that may preempt: among many, the one its own setup most likely
    # defines beside it (the highest of all may come from anywhere in the inputs)
    over = facts.lowest_preempting_above(value) or top
    preemptible = (
        f"{tpl.describe()} {runs_as}, below PriorityClass '{over.name}' (value {over.value}"
        f"{origin(over, obj.file)}), so its pods can be preempted"
    )
    retries = _retries(spec)
    pfp = spec.get("podFailurePolicy")
    rules = pfp.get("rules") if isinstance(pfp, dict) else None
    if not isinstance(pfp, dict):
        yield Hit(
            base + ("podFailurePolicy",),
            f"no podFailurePolicy: preemptions use up {_limit(spec)}",
            detail=(
                f"{preemptible}, and the Job has no podFailurePolicy: every preemption {retries}, so preemptions "
                f"alone can fail the Job; add podFailurePolicy.rules: [{_IGNORE_RULE}] "
                "(podFailurePolicy requires restartPolicy: Never)"
            ),
            fix=_fixes.ignore_disruption(base, tpl, False, spec, ctx),
        )
        return
    match = _first_match(rules if isinstance(rules, list) else [])
    if match is None:
        yield Hit(
            base + ("podFailurePolicy", "rules"),
            f"no Ignore rule for DisruptionTarget: preemptions use up {_limit(spec)}",
            detail=(
                f"{preemptible}, and its podFailurePolicy has no rule with action Ignore on the DisruptionTarget pod "
                f"condition: every preemption {retries}, so preemptions alone can fail the Job; add the rule "
                f"{_IGNORE_RULE} first in podFailurePolicy.rules"
            ),
            fix=_fixes.ignore_disruption(base, tpl, True, spec, ctx),
        )
        return
    index, rule, how = match
    action = rule.get("action")
    if action == "Ignore":
        return
    effect = {
        "FailJob": "one preemption fails the whole Job",
        "FailIndex": "one preemption fails the pod's index",
    }.get(action if isinstance(action, str) else "", f"every preemption {retries}")
    if how == "exitCodes":
        codes = rule["onExitCodes"]
        what = (
            f"podFailurePolicy.rules[{index}] (action {action} on exit codes {codes.get('operator')} "
            f"{codes.get('values')}) matches a preempted container's exit code (143 after SIGTERM, 137 after "
            "SIGKILL) before any rule on the DisruptionTarget condition"
        )
    else:
        what = f"podFailurePolicy.rules[{index}] handles the DisruptionTarget condition with action {action}"
    yield Hit(
        base + ("podFailurePolicy", "rules", index),
        f"podFailurePolicy.rules[{index}] ({action}) matches preemptions first",
        detail=(f"{preemptible}, and {what}: {effect}; put the rule {_IGNORE_RULE} first in podFailurePolicy.rules"),
        fix=_fixes.ignore_disruption(base, tpl, True, spec, ctx),
    )
