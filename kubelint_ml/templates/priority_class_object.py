"""A PriorityClass object the API server rejects (or one globalDefault too many)."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.engine.context import HIGHEST_USER_PRIORITY, SYSTEM_PREFIX, SYSTEM_PRIORITY_CLASSES, object_key
from kubelint_ml.templates._priority import facts_of

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    obj = unit.obj
    data = obj.data
    name = obj.ref.name
    raw = data.get("value")
    value = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
    label = f"PriorityClass '{name}'"
    if name.startswith(SYSTEM_PREFIX):
        expected = SYSTEM_PRIORITY_CLASSES.get(name)
        if expected is None:
            yield Hit(
                ("metadata", "name"),
                f"name prefix '{SYSTEM_PREFIX}' is reserved (API server rejects it)",
                detail=(
                    f"{label}: names starting with '{SYSTEM_PREFIX}' are reserved for the built-in "
                    "system-cluster-critical and system-node-critical classes, and the API server rejects this one; "
                    "rename it (and the priorityClassName fields that use it)"
                ),
                at_value=True,
            )
        elif (value is not None and value != expected) or data.get("globalDefault") is True:
            yield Hit(
                ("value",) if value is not None and value != expected else ("globalDefault",),
                f"built-in class redefined (value must be {expected}, globalDefault false)",
                detail=(
                    f"{label} is built into every cluster with value {expected} and globalDefault false; the API "
                    "server rejects any other definition; remove this object (the class already exists)"
                ),
                at_value=True,
            )
    elif value is not None and value > HIGHEST_USER_PRIORITY:
        yield Hit(
            ("value",),
            f"value {value} is above the user maximum {HIGHEST_USER_PRIORITY}",
            detail=(
                f"{label}: value {value} is above {HIGHEST_USER_PRIORITY}, the highest a user-defined class may have "
                "(higher values are reserved for system-* classes); the API server rejects it; use a value of at most "
                f"{HIGHEST_USER_PRIORITY}"
            ),
            at_value=True,
        )
    if data.get("globalDefault") is True:
        yield from _extra_default(unit, ctx, label)


def _extra_default(unit: Unit, ctx, label: str) -> Iterator[Hit]:
    defaults = facts_of(ctx).global_defaults()
    if len(defaults) < 2:
        return
    key = object_key(unit.obj)
    first = defaults[0]
    if first.key == key or key not in facts_of(ctx).global_default_keys():
        return  # the first one, or a copy of a class already counted under its name
    where = f" ({first.source})" if first.source != unit.obj.file else ""
    yield Hit(
        ("globalDefault",),
        f"second globalDefault class ('{first.name}' already is one)",
        detail=(
            f"{label} sets globalDefault: true, but PriorityClass '{first.name}'{where} already does: only one "
            "globalDefault class may exist, so creating this one fails (and where both exist, pods without a "
            "priorityClassName get the lower value); set globalDefault: false on all but one class"
        ),
        at_value=True,
    )
