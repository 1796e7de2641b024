"""Rules written in CEL: the expression must be true for a valid unit.

As in a Kubernetes ValidatingAdmissionPolicy, the expression states what a
*good* object looks like; a unit for which it evaluates to ``false`` gets a
finding. An evaluation error (a missing key without ``has()``, a type error,
the iteration budget exceeded) is reported as ``cel-evaluation-error`` at
error severity, as a policy with ``failurePolicy: Fail`` would reject the
object rather than let it through silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kubelint_ml.engine.api import CEL_EVALUATION_ERROR, Hit, Unit, UnitKind

_UNIT_VARIABLES: dict[UnitKind, tuple[str, ...]] = {
    "object": ("object", "objects", "profile"),
    "podTemplate": ("object", "podSpec", "objects", "profile"),
    "container": ("object", "podSpec", "container", "objects", "profile"),
    "volume": ("object", "podSpec", "volume", "objects", "profile"),
}
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_field_path(text: str) -> tuple:
    """``resources.limits`` / ``containers[0].name`` -> a path tuple."""
    out: list[Any] = []
    for m in _SEGMENT.finditer(text or ""):
        out.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
    return tuple(out)


@dataclass(slots=True)
class CelCheck:
    rule_id: str
    program: Any
    message: str
    message_program: Any
    path: tuple

    @classmethod
    def build(cls, rule_id: str, unit: UnitKind, check: dict, title: str) -> CelCheck:
        """The check of a rule whose ``check`` has ``cel``; raises CelCompileError naming the field."""
        from kubelint_ml.engine.cel import CelCompileError, compile_expression

        variables = _UNIT_VARIABLES[unit]
        try:
            program = compile_expression(check["cel"], variables)
        except CelCompileError as e:
            raise CelCompileError(f"check.cel: {_unit_variable(e, unit)}") from None
        message_program = None
        if check.get("messageExpression"):
            try:
                message_program = compile_expression(check["messageExpression"], variables)
            except CelCompileError as e:
                raise CelCompileError(f"check.messageExpression: {_unit_variable(e, unit)}") from None
        return cls(
            rule_id, program, check.get("message") or title, message_program, parse_field_path(check.get("path", ""))
        )

    def check(self, unit: Unit, params: dict, ctx: Any) -> Iterator[Hit]:
        from kubelint_ml.engine.cel import CelEvalError

        cache = _cache(ctx)
        converted = cache.setdefault("cel:converted", {})
        activation: dict[str, Any] = {
            "object": unit.obj.data,
            "objects": _context_objects(ctx),
            "profile": _profile(ctx, cache),
        }
        base: tuple = ()
        what = unit.obj.ref.display()
        where = ""  # the part of the object the message is about (the object itself is named by every report)
        if unit.tpl is not None:
            activation["podSpec"] = unit.tpl.spec
            base = unit.tpl.spec_path
            what = unit.tpl.describe()
        if unit.container is not None:
            activation["container"] = unit.container.data
            base = unit.container.path
            what += f": {unit.container.describe()}"
            where = f"{unit.container.describe()}: "
        if unit.volume is not None:
            activation["volume"] = unit.volume.data
            base = unit.volume.path
            what += f": volume '{unit.volume.name}'"
            where = f"volume '{unit.volume.name}': "
        try:
            ok = self.program.evaluate(activation, converted)
        except CelEvalError as e:
            yield Hit(
                base,
                f"rule {self.rule_id}: CEL evaluation failed: {e}",
                severity="error",
                rule=CEL_EVALUATION_ERROR,
                detail=f"{what}: rule {self.rule_id}: CEL evaluation failed: {e}",
            )
            return
        if ok is True:
            return
        if ok is not False:
            yield Hit(
                base,
                f"rule {self.rule_id}: expression returned {type(ok).__name__}, not a bool",
                severity="error",
                rule=CEL_EVALUATION_ERROR,
            )
            return
        message = self.message
        if self.message_program is not None:
            try:
                value = self.message_program.evaluate(activation, converted)
                if isinstance(value, str) and value.strip():
                    message = value
            except CelEvalError:
                pass  # Kubernetes falls back to the static message too
        yield Hit(base + self.path, f"{where}{message}" if where else message)


_UNDECLARED = re.compile(r"undeclared reference to '([A-Za-z_][A-Za-z0-9_]*)")


def _unit_variable(error: Exception, unit: UnitKind) -> str:
    """The compiler's message, or, when the expression names a variable that another unit has
    (``container`` in an object rule), that in plain words."""
    text = str(error)
    found = _UNDECLARED.search(text)
    if found is not None:
        name = found.group(1)
        if any(name in names for names in _UNIT_VARIABLES.values()) and name not in _UNIT_VARIABLES[unit]:
            units = [u for u, names in _UNIT_VARIABLES.items() if name in names]
            return (
                f"variable '{name}' is not available for unit '{unit}' (it has {', '.join(_UNIT_VARIABLES[unit])}; "
                f"'{name}' is there for unit {' and '.join(repr(u) for u in units)}): {text}"
            )
    return text


def _context_objects(ctx: Any) -> list:
    facts = getattr(ctx, "facts", None)
    return facts.context_objects() if facts is not None else []


def _cache(ctx: Any) -> dict:
    """What CEL checks remember while one file is linted (the Context's scratch; a fresh one without)."""
    cache = getattr(ctx, "cache", None)
    return cache if isinstance(cache, dict) else {}


def _profile(ctx: Any, cache: dict) -> dict:
    """The profile as CEL sees it, worked out once per file (a profile does not change once loaded)."""
    profile = getattr(ctx, "profile", None)
    if profile is None:
        return {}
    found = cache.get("cel:profile")
    if found is None or found[0] is not profile:
        found = cache["cel:profile"] = (profile, profile.to_cel())
    return found[1]
