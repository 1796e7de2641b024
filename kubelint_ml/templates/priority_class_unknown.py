"""A priority class name that no known PriorityClass (or WorkloadPriorityClass) defines."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, SkipUnit, Unit
from kubelint_ml.engine.context import SYSTEM_PRIORITY_CLASSES
from kubelint_ml.templates._priority import (
    PriorityRef,
    facts_of,
    kai_object_ref,
    object_refs,
    template_refs,
)

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_FORBIDDEN = 'the Priority admission plugin rejects the pods ("no PriorityClass with name {name} was found")'
_CONSEQUENCE = {
    "pod": _FORBIDDEN + ", so the controller never creates them",
    "volcano": "Volcano gives it to the PodGroup and to every pod whose template has no priorityClassName, and "
    + _FORBIDDEN,
    "ray": "KubeRay's Volcano integration copies it into the PodGroup and into every pod's priorityClassName, and "
    + _FORBIDDEN,
    "kai": "KAI Scheduler cannot resolve the workload's priority from it",
    "kubeflow": "the training operator copies it into the gang-scheduling PodGroup, which then names a class "
    "that does not exist",
}


def _known(names: list[str], files: list[str], here: str, limit: int = 8) -> str:
    """The known names, and the other files they come from (linting unrelated trees together
    mixes their clusters' classes)."""
    shown = sorted(names)[:limit]
    more = f", and {len(names) - limit} more" if len(names) > limit else ""
    origins = [f for f in dict.fromkeys(files) if f != here]
    where = ", ".join(origins[:2]) + (f" and {len(origins) - 2} more files" if len(origins) > 2 else "")
    return ", ".join(shown) + more + (f", from {where}" if where else "")


def _refs(unit: Unit) -> list[tuple[PriorityRef, str]]:
    """Every named class with where it is (object, or a template's description), deduplicated by path."""
    obj = unit.obj
    templates = unit.templates()
    if not templates:
        return []  # a Service or ConfigMap carrying the labels: no scheduler reads them there
    out: list[tuple[PriorityRef, str]] = [(r, obj.ref.display()) for r in object_refs(obj)]
    seen = {r.path for r, _ in out}
    for tpl in templates:
        if tpl.broken:
            continue
        # Kueue reads its label from the object it manages (a Pod's labels are the object's).
        found = template_refs(tpl, kueue=False)
        kai = kai_object_ref(obj, tpl)
        if kai is not None:
            found.append(kai)
        for r in found:
            if r.path not in seen:
                seen.add(r.path)
                out.append((r, tpl.describe() if r.source == "pod" else obj.ref.display()))
    return [(r, where) for r, where in out if not r.placeholder]


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    refs = _refs(unit)
    if not refs:
        return None
    facts = facts_of(ctx)
    hits: list[Hit] = []
    skipped: list[str] = []
    for ref, where in refs:
        if ref.source == "kueue":
            if not facts.defines_workload_priority_classes:
                skipped.append(f"no WorkloadPriorityClass among the inputs to check {ref.field} '{ref.name}' against")
                continue
            if ref.name in facts.workload_priority_classes:
                continue
            names = facts.workload_priority_classes_seen_from(unit.obj.file)
            if not names:  # only another project's classes, in a sibling tree of the inputs
                skipped.append(
                    f"no WorkloadPriorityClass in the directory of {ref.field} '{ref.name}' or above it, nor in "
                    "the context, to check it against"
                )
                continue
            hint = _hint(ref.name, names)
            files = [facts.workload_priority_class_files[n] for n in names]  # a file, never the profile
            hits.append(
                Hit(
                    ref.path,
                    f"unknown WorkloadPriorityClass '{ref.name}'{hint}",
                    detail=(
                        f"{where}: {ref.field} '{ref.name}' names no known Kueue WorkloadPriorityClass "
                        f"(known: {_known(names, files, unit.obj.file)}){hint}: Kueue fails to build the Workload, so the job is never admitted; "
                        "correct the name or define the WorkloadPriorityClass"
                    ),
                    at_value=True,
                )
            )
            continue
        if not facts.defines_priority_classes:
            skipped.append(
                f"no PriorityClass among the inputs or in the profile to check {ref.field} '{ref.name}' against"
            )
            continue
        if facts.knows_priority_class(ref.name):
            continue
        names = list(facts.priority_classes)
        hint = _hint(ref.name, names + list(SYSTEM_PRIORITY_CLASSES))
        consequence = _CONSEQUENCE[ref.source].format(name=ref.name)
        files = [
            "the profile" if facts.priority_classes[n].source == "profile" else facts.priority_classes[n].source
            for n in names
        ]
        hits.append(
            Hit(
                ref.path,
                f"unknown PriorityClass '{ref.name}'{hint}",
                detail=(
                    f"{where}: {ref.field} '{ref.name}' names no known PriorityClass (known: {_known(names, files, unit.obj.file)}; "
                    f"plus the built-in system-cluster-critical and system-node-critical){hint}: {consequence}; "
                    "correct the name, or define the PriorityClass (in the linted files or in profile.priorityClasses)"
                ),
                at_value=True,
            )
        )
    if not hits and skipped:
        raise SkipUnit("; ".join(skipped))
    return hits


def _hint(name: str, names: list[str]) -> str:
    from difflib import get_close_matches  # only for a name that is not found

    close = get_close_matches(name, names, n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""
