"""Container restart rules (``restartPolicyRules``, KEP-5307) the API server rejects.

Followed: the ContainerRestartRules gate (pkg/features/kube_features.go: alpha and off in 1.34, beta and
on from 1.35; off, ``dropContainerRestartRules`` in pkg/api/pod/util.go drops a container's
``restartPolicyRules`` and the regular containers' ``restartPolicy``, so nothing is rejected) and
``validateContainerRestartPolicy`` (pkg/apis/core/validation/validation.go, k/k PRs 132642, 137136,
137369): the rules need the container's own ``restartPolicy`` (the pod's is not enough: "Container
restart policy must be specified if rules are specified"); each rule's ``action`` is ``Restart`` or
``RestartAllContainers`` (RestartAllContainersOnContainerExits, KEP-5532: beta from 1.36; what an
older API server does with it, drop or reject, is not decided here, so it is not reported);
``exitCodes`` is required, its ``operator`` ``In`` or ``NotIn``, its ``values`` at most 255; at most
20 rules.
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.version import parse_version

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

RULES_ON = (1, 35)  # ContainerRestartRules: beta and on by default
ACTIONS = ("Restart", "RestartAllContainers")
MAX_RULES = 20
MAX_VALUES = 255


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    if not any(c.data.get("restartPolicyRules") is not None for c in tpl.all_containers):
        return None
    version = parse_version(getattr(getattr(ctx, "profile", None), "kubernetes_version", None))
    if version is not None and version < RULES_ON:
        return None  # the gate is off: the API server drops the rules
    out: list[Hit] = []
    for c in tpl.all_containers:
        rules = c.data.get("restartPolicyRules")
        if not isinstance(rules, list) or not rules:
            continue
        path = c.path + ("restartPolicyRules",)

        def hit(at: tuple, message: str, reason: str, fix: str, c=c, path=path) -> None:
            out.append(
                Hit(
                    path + at,
                    f"{c.describe()} {message}",
                    detail=f"{tpl.describe()}: {c.describe()} {message}; the API server rejects the pod ({reason}). {fix}",
                    container=c.name,
                    at_value=True,
                )
            )

        if c.data.get("restartPolicy") in (None, ""):
            out.append(
                Hit(
                    path,
                    f"{c.describe()} has restartPolicyRules but no restartPolicy of its own",
                    detail=(
                        f"{tpl.describe()}: {c.describe()} lists restartPolicyRules without a container "
                        "restartPolicy, which the rules need (the pod's restartPolicy does not stand in for it); "
                        "the API server rejects the pod. Set the container's restartPolicy (Never, to restart only "
                        "on the rules' exit codes)"
                    ),
                    container=c.name,
                )
            )
        if len(rules) > MAX_RULES:
            hit((), f"has {len(rules)} restartPolicyRules, more than {MAX_RULES}", "Too many", "Merge rules")
        for i, rule in enumerate(rules):
            if not isinstance(rule, dict):
                continue  # (the schema's to say)
            action = rule.get("action")
            if isinstance(action, str) and action not in ACTIONS:
                hit(
                    (i, "action"),
                    f"restartPolicyRules action {action}: only Restart or RestartAllContainers",
                    f'Unsupported value: "{action}": supported values: "Restart", "RestartAllContainers"',
                    "Write Restart, or RestartAllContainers (the case matters)",
                )
            codes = rule.get("exitCodes")
            if codes is None:
                hit(
                    (i,),
                    "restartPolicyRules entry without exitCodes",
                    "exitCodes: Required value: must be specified",
                    "Add exitCodes: {operator: In, values: [...]}",
                )
                continue
            if not isinstance(codes, dict):
                continue
            operator = codes.get("operator")
            if isinstance(operator, str) and operator not in ("In", "NotIn"):
                hit(
                    (i, "exitCodes", "operator"),
                    f"restartPolicyRules exitCodes operator {operator}: only In or NotIn",
                    f'Unsupported value: "{operator}": supported values: "In", "NotIn"',
                    "Write In or NotIn",
                )
            values = codes.get("values")
            if isinstance(values, list) and len(values) > MAX_VALUES:
                hit(
                    (i, "exitCodes", "values"),
                    f"restartPolicyRules exitCodes lists {len(values)} values, more than {MAX_VALUES}",
                    f"Too many: {len(values)}: must have at most {MAX_VALUES} items",
                    "Use NotIn with the codes that must not restart instead",
                )
    return out
