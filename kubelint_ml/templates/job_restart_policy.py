"""A Job pod template whose restartPolicy the Job API rejects."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._common import is_fragment, raw_text
from kubelint_ml.templates._priority import is_batch_job, is_jobset_like, is_placeholder, job_spec

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_VALID = ("Never", "OnFailure")


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    obj, tpl = unit.obj, unit.tpl
    batch = is_batch_job(obj)
    if not batch and not is_jobset_like(obj):
        return
    spec = tpl.spec
    raw = spec.get("restartPolicy")
    if isinstance(raw, str) and is_placeholder(raw.strip()):
        return
    if raw is None and is_fragment(tpl):
        return  # a kustomize patch: the base it patches sets restartPolicy
    has_pfp = job_spec(tpl).get("podFailurePolicy") is not None
    path = tpl.spec_path + ("restartPolicy",)
    who = tpl.describe()
    if batch:
        rejected = "the API server rejects the Job, so no pod ever runs"
    else:
        rejected = "the API server rejects each child Job the JobSet controller creates, so no pod ever runs"
    fix = "set restartPolicy: Never" + ("" if has_pfp else " (or OnFailure)")
    if raw is None or raw == "":
        if batch:
            yield Hit(
                path,
                "no restartPolicy: a Job needs Never or OnFailure",
                detail=(
                    f"{who}: pod template has no restartPolicy: a Job requires Never or OnFailure (the pod default, "
                    f"Always, is not allowed), and {rejected}; {fix}"
                ),
                fix=_fixes.restart_policy(path, tpl, has_pfp, ctx),
            )
        elif has_pfp:
            yield Hit(
                path,
                "restartPolicy defaults to OnFailure but podFailurePolicy needs Never",
                detail=(
                    f"{who}: pod template has no restartPolicy, so JobSet defaults it to OnFailure, but the Job's "
                    f"podFailurePolicy requires Never: {rejected}; set restartPolicy: Never"
                ),
                fix=_fixes.restart_policy(path, tpl, has_pfp, ctx),
            )
        return
    if raw not in _VALID:
        yield Hit(
            path,
            f"restartPolicy {raw_text(raw)} is not allowed in a Job",
            detail=(
                f"{who}: restartPolicy {raw_text(raw)} is not allowed in a Job (only Never or OnFailure): {rejected}; "
                f"{fix}"
            ),
            at_value=True,
            fix=_fixes.restart_policy(path, tpl, has_pfp, ctx),
        )
        return
    if raw == "OnFailure" and has_pfp:
        yield Hit(
            path,
            "restartPolicy OnFailure with a podFailurePolicy (needs Never)",
            detail=(
                f"{who}: restartPolicy OnFailure with a podFailurePolicy: a Job with podFailurePolicy requires "
                f"restartPolicy Never, and {rejected}; set restartPolicy: Never"
            ),
            at_value=True,
            fix=_fixes.restart_policy(path, tpl, has_pfp, ctx),
        )
