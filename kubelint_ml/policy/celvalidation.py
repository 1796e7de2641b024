"""Gatekeeper's ``K8sNativeValidation`` engine: CEL validations (Python >= 3.11, cel-expr-python).

Variables as Gatekeeper binds them: ``object``, ``oldObject`` (null for a
CREATE), ``request`` (the review), ``params`` and ``variables.params`` (the
constraint's parameters), and the template's ``variables`` in order, each
visible to the later ones as ``variables.<name>``. A validation whose
expression is false is a violation with its ``message`` (or the value of its
``messageExpression``); ``matchConditions`` that are false skip the object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.policy.load import PolicyError

NAMES = ("object", "oldObject", "request", "params", "namespaceObject", "variables")


@dataclass(slots=True)
class CelValidation:
    variables: list[tuple[str, Any]] = field(default_factory=list)
    conditions: list[Any] = field(default_factory=list)
    validations: list[tuple[Any, str, Any]] = field(default_factory=list)  # (program, message, messageExpression)

    @classmethod
    def build(cls, source: dict, where: str) -> CelValidation:
        from kubelint_ml.engine.cel import CelCompileError, compile_expression

        out = cls()

        def compiled(expr: Any, what: str) -> Any:
            try:
                return compile_expression(str(expr), NAMES)
            except CelCompileError as e:
                raise PolicyError(f"{where}: K8sNativeValidation {what}: {e}") from None

        for i, v in enumerate(source.get("variables") or []):
            out.variables.append((str(v.get("name")), compiled(v.get("expression"), f"variables[{i}]")))
        for i, m in enumerate(source.get("matchConditions") or []):
            out.conditions.append(compiled(m.get("expression"), f"matchConditions[{i}]"))
        for i, v in enumerate(source.get("validations") or []):
            mexpr = v.get("messageExpression")
            out.validations.append(
                (
                    compiled(v.get("expression"), f"validations[{i}]"),
                    str(v.get("message") or ""),
                    compiled(mexpr, f"validations[{i}].messageExpression") if mexpr else None,
                )
            )
        if not out.validations:
            raise PolicyError(f"{where}: K8sNativeValidation has no validations")
        return out

    def violations(self, review: dict, params: Any) -> list[dict]:
        variables: dict[str, Any] = {"params": params}
        activation = {
            "object": review.get("object"),
            "oldObject": review.get("oldObject"),
            "request": review,
            "params": params,
            "namespaceObject": None,
            "variables": variables,
        }
        for name, program in self.variables:
            activation["variables"] = dict(variables)  # a new mapping: the runtime caches conversions by identity
            try:
                variables[name] = program.evaluate(activation)
            except Exception:  # noqa: BLE001 - a variable that fails is absent, as a lazy one never read
                continue
        activation["variables"] = dict(variables)
        for program in self.conditions:
            if program.evaluate(activation) is not True:
                return []
        out = []
        for program, message, mexpr in self.validations:
            if program.evaluate(activation) is True:
                continue
            msg = message
            if mexpr is not None:
                try:
                    value = mexpr.evaluate(activation)
                    msg = value if isinstance(value, str) and value else message
                except Exception:  # noqa: BLE001 - the static message stands
                    pass
            out.append({"msg": msg or f"failed expression: {program.source}", "details": {}})
        return out
