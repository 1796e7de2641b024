"""Container restart rules (``restartPolicyRules``, KEP-5307) the API server rejects.

Followed: the ContainerRestartRules gate (pkg/features/kube_features.go: alpha and off in 1.34, beta and
on from 1.35; off, ``dropContainerRestartRules`` in pkg/api/pod/util.go drops a container's
``restartPolicyRules`` and the regular containers' ``restartPolicy``, so nothing is rejected) and
``validateContainerRestartPolicy`` (pkg/apis/core/validation/validation.go, k/k PRs 132642, 137136,
137369): the rules need the container's own ``restartPolicy`` (the pod's is not enough: "Container
restart policy must be specified if rules are specified"); each rule's ``action`` is ``Restart`` or
``RestartAllContainers``; ``exitCodes`` is required, its ``operator`` ``In`` or ``NotIn``, its ``values``
at most 255; at most 20 rules.

``RestartAllContainers`` and rules on a sidecar (an init container with ``restartPolicy: Always``) need
RestartAllContainersOnContainerExits (KEP-5532: alpha and off in 1.35, beta and on from 1.36). The gate is
a validation option, not a drop: ``GetValidationOptionsFromPodSpecAndMeta`` (pkg/api/pod/util.go) sets
``AllowRestartAllContainers`` from it ("This also allows restart rules on sidecar containers"; an
existing pod that already uses either keeps it, ``restartAllContainersActionInUse``), and
``dropContainerRestartRules`` only runs with ContainerRestartRules off. With the gate off the action is
``Unsupported value: "RestartAllContainers": supported values: "Restart"`` (k/k issue 137368, which shows
the list of supported actions following the gate) and a sidecar's rules are refused (k/k PR 134345; the
KEP's rollback keeps only pods created while it was on).
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.gates import enabled, setting
from kubelint_ml.k8s.gates import of as gates_of

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

RULES_FIELD = (1, 34)  # ContainerRestartRules: the field in the API (its gate's default: k8s/gates.py)
RESTART_ALL = "RestartAllContainers"
MAX_RULES = 20
MAX_VALUES = 255


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    if not any(c.data.get("restartPolicyRules") is not None for c in tpl.all_containers):
        return None
    raw = getattr(getattr(ctx, "profile", None), "kubernetes_version", None)
    version, overrides = gates_of(ctx)
    if version is not None and version < RULES_FIELD:
        return None  # not a field before 1.34: unknown-field's
    if not enabled("ContainerRestartRules", version, overrides):
        # the gate is off: the API server drops the rules
        cache = getattr(ctx, "cache", None)
        kept = isinstance(cache, dict) and cache.get("container_restart_rules") is True  # (audit) stored pods
        return None if kept else _dropped(tpl, _why("ContainerRestartRules", version, overrides, raw)) or None
    restart_all = enabled("RestartAllContainersOnContainerExits", version, overrides)
    actions = ("Restart", RESTART_ALL) if restart_all else ("Restart",)
    supported = " or ".join(actions)
    listed = ", ".join(f'"{a}"' for a in actions)
    gate_off = "RestartAllContainersOnContainerExits is " + (
        "off in profile.featureGates"
        if "RestartAllContainersOnContainerExits" in overrides
        else f"off in {version[0]}.{version[1]}"
        if version
        else "off"
    )
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
        if c.role == "sidecar" and not restart_all:
            message = f"{c.describe()} has restartPolicyRules, which a sidecar may have only from 1.36 ({gate_off})"
            out.append(
                Hit(
                    path,
                    message,
                    detail=(
                        f"{tpl.describe()}: {message}; the API server rejects the pod (restart rules on a sidecar "
                        "need the RestartAllContainersOnContainerExits gate, alpha and off by default in 1.35, beta "
                        "and on from 1.36). Remove the rules (a sidecar restarts on every exit anyway), or target "
                        "1.36 or later"
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
            if isinstance(action, str) and action not in actions:
                later = f", RestartAllContainers from 1.36 ({gate_off})" if action == RESTART_ALL else ""
                hit(
                    (i, "action"),
                    f"restartPolicyRules action {action}: only {supported}{later}",
                    f'Unsupported value: "{action}": supported values: {listed}',
                    "Write Restart to restart only this container, or target 1.36 or later"
                    if action == RESTART_ALL
                    else f"Write {supported} (the case matters)",
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


def _why(gate: str, version, overrides, raw: str | None) -> str:
    """ "alpha, off by default in 1.34" or "off in profile.featureGates"."""
    return ("" if gate in overrides else "alpha, ") + setting(gate, version, overrides, raw)


def _dropped(tpl, why: str) -> list[Hit]:
    """With ContainerRestartRules off (1.34) the rules are dropped: the container is not restarted in place."""
    return [
        Hit(
            c.path + ("restartPolicyRules",),
            f"{c.describe()}: restartPolicyRules are dropped unless the ContainerRestartRules gate is on ({why})",
            severity="warning",
            detail=f"{tpl.describe()}: with ContainerRestartRules off the API server drops the container's "
            "restartPolicyRules and restartPolicy: a matching exit is not restarted in place but ends the container "
            "under the pod's restartPolicy (a Job's pod fails and counts against its backoffLimit). Enable "
            "ContainerRestartRules on the API server and the kubelets, or rely on the Job's podFailurePolicy",
            container=c.name,
        )
        for c in tpl.all_containers
        if isinstance(c.data.get("restartPolicyRules"), list) and c.data["restartPolicyRules"]
    ]
