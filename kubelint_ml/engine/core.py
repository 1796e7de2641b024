"""Evaluation: every enabled rule on its scope, with a context.

A rule's template yields :class:`Hit` records (a field path from the object's
root and a message); the engine turns them into findings with positions,
severity (including the accelerator escalation and user overrides), and
applies suppressions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from kubelint_ml.engine import typos
from kubelint_ml.engine.api import (
    IGNORE_ANNOTATION,
    PARSE_ERROR,
    PSEUDO_RULES,
    RENDER_ERROR,
    RULE_ERROR,
    UNIT_KINDS,
    UNKNOWN_IGNORE,
    Context,
    SkipUnit,
    Unit,
    UnitKind,
    did_you_mean,
    is_accelerator_template,
    is_training_workload,
)
from kubelint_ml.engine.rulefile import Rule
from kubelint_ml.findings import Finding, ObjectRef
from kubelint_ml.input.loader import locate, render_path, value_position
from kubelint_ml.input.objects import K8sObject
from kubelint_ml.input.workloads import PodTemplate
from kubelint_ml.k8s import resources
from kubelint_ml.records import replace


def _kind_matches(rule: Rule, obj: K8sObject) -> bool:
    if not rule.kinds:
        return True
    for k in rule.kinds:
        if "/" in k:
            group, kind = k.rsplit("/", 1)
            if obj.kind == kind and obj.group == group:
                return True
        elif obj.kind == k:
            return True
    return False


IGNORE_ALL = "*"  # kubelint-ml.io/ignore: "*" (or "*=reason"): every rule on the object or template


def _ignored(ignores: dict[str, str], rule_id: str) -> str | None:
    """The reason the annotation gives for ignoring ``rule_id`` ("" for none), or None."""
    reason = ignores.get(rule_id)
    return ignores.get(IGNORE_ALL) if reason is None else reason


_NO_CAP: dict[int, int] = {}  # never written: see hits_on
_NONE_HUGE: frozenset[int] = frozenset()


# After a reason, a comma starts the next entry only when a rule id follows it: a hyphenated
# id (`emptydir-no-size-limit`), a policy's (`main.deny`, `K8sRequiredLabels/team`) or `*`,
# then `=`, another comma or the end. Otherwise the comma is the reason's own.
_NEXT_ENTRY = re.compile(r"\s*(?:\*|[a-z0-9]+(?:-[a-z0-9]+)+|[A-Za-z0-9_]+(?:[./][A-Za-z0-9_-]+)+)\s*(?:=|,|$)")


def parse_ignore(value: Any) -> dict[str, str]:
    """``"rule-a,rule-b=reason, with a comma"`` -> ``{"rule-a": "", "rule-b": "reason, with a comma"}``."""
    out: dict[str, str] = {}
    if not isinstance(value, str):
        return out
    entries: list[str] = []
    for part in value.split(","):
        if entries and "=" in entries[-1] and not _NEXT_ENTRY.match(part):
            entries[-1] += "," + part  # prose of the reason, not a rule id
        else:
            entries.append(part)
    for part in entries:
        part = part.strip()
        if not part:
            continue
        rid, _, reason = part.partition("=")
        out[rid.strip()] = reason.strip()
    return out


class Engine:
    def __init__(
        self, rules: list[Rule], *, severity_overrides: dict[str, str] | None = None, known_rule_ids: Iterable[str] = ()
    ) -> None:
        self.rules = rules
        self.overrides = severity_overrides or {}
        self.known_ids = set(known_rule_ids) | {r.id for r in rules} | set(PSEUDO_RULES)
        self.reads_typos = any(r.id == typos.UNKNOWN_FIELD for r in rules)
        self.by_unit: dict[UnitKind, list[Rule]] = {unit: [] for unit in UNIT_KINDS}
        for r in rules:
            self.by_unit[r.unit].append(r)
        self.remediation = {r.id: r.remediation.strip() for r in rules}
        self._for_kind: dict[tuple[str, str], list[Rule]] = {}
        self._plans: dict[tuple[str, str], list[tuple]] = {}
        self._for_objects: dict[int, tuple[list[tuple], list[tuple]]] = {}  # id(plans) -> (plans, object rules')
        # Rules whose template can tell, once per run, that the run's facts give it nothing to find
        # (no LimitRange, no PVC, no queue): ``active(params, ctx)`` (see :meth:`_run_plans_for`).
        self._gated = [r for r in rules if getattr(r.template, "active", None) is not None]
        # Rules with the same scope run on the same units; a scope is named by a small int (a
        # cheap key for the per-object memo of units).
        scopes: dict[tuple, int] = {}
        self._scope = {
            r.id: scopes.setdefault((r.unit, r.workloads == "accelerator", r.containers), len(scopes)) for r in rules
        }

    def rules_for(self, obj: K8sObject) -> list[Rule]:
        """The rules whose ``kinds`` match the object's kind and group (worked out once per kind)."""
        key = (obj.kind, obj.group)
        found = self._for_kind.get(key)
        if found is None:
            found = self._for_kind[key] = [r for r in self.rules if _kind_matches(r, obj)]
        return found

    def _plans_for(self, obj: K8sObject) -> list[tuple]:
        """:meth:`rules_for`, each rule with what the loop reads of it: (rule, scope, check, params,
        training only); worked out once per kind."""
        key = (obj.kind, obj.group)
        found = self._plans.get(key)
        if found is None:
            found = self._plans[key] = [
                (r, self._scope[r.id], r.template.check, r.params, r.workloads == "training")
                for r in self.rules_for(obj)
            ]
        return found

    def _run_plans_for(self, obj: K8sObject, ctx: Context) -> list[tuple]:
        """:meth:`_plans_for` without the rules that cannot find anything with this run's facts and
        profile: asked once per run (the answers live in the facts' memo, which a new fact clears)."""
        plans = self._plans_for(obj)
        memo = getattr(ctx.facts, "_memo", None) if self._gated else None
        if memo is None:
            return plans
        key = ("engine.active", id(self), id(ctx.profile))
        found = memo.get(key)
        if found is None or found[0] is not self or found[1] is not ctx.profile:
            idle = frozenset(r.id for r in self._gated if not r.template.active(r.params, ctx))
            found = memo[key] = (self, ctx.profile, idle, {})
        idle, by_kind = found[2], found[3]
        if not idle:
            return plans
        kind = (obj.kind, obj.group)
        gated = by_kind.get(kind)
        if gated is None:
            gated = by_kind[kind] = [p for p in plans if p[0].id not in idle]
        return gated

    def _object_plans(self, plans: list[tuple]) -> list[tuple]:
        """Of ``plans``, those whose rules work on whole objects (kept per plans list)."""
        found = self._for_objects.get(id(plans))
        if found is None or found[0] is not plans:
            if len(self._for_objects) >= 1024:  # a server whose facts keep changing makes new lists
                self._for_objects.clear()
            found = self._for_objects[id(plans)] = (plans, [p for p in plans if p[0].unit == "object"])
        return found[1]

    # ------------------------------------------------------------------

    def _units(
        self, rule: Rule, obj: K8sObject, ctx: Context, templates: list[PodTemplate], memo: dict[int, list[Unit]]
    ) -> list[Unit]:
        """The units ``rule`` runs on, kept in ``memo`` under its scope: rules with the same scope
        share one list, built once per object (the caller looks there first)."""
        out: list[Unit] = []
        kind = rule.unit
        if kind == "object":
            out.append(Unit(obj, None, None, None, ctx))
        else:
            accelerator_only = rule.workloads == "accelerator"
            roles = rule.containers
            for tpl in templates:
                if tpl.broken or (accelerator_only and not is_accelerator_template(tpl)):
                    continue
                if kind == "podTemplate":
                    out.append(Unit(obj, tpl, None, None, ctx))
                elif kind == "container":
                    out.extend(Unit(obj, tpl, c, None, ctx) for c in tpl.all_containers if not roles or c.role in roles)
                else:
                    out.extend(Unit(obj, tpl, None, v, ctx) for v in tpl.volumes)
        memo[self._scope[rule.id]] = out
        return out

    def evaluate(self, obj: K8sObject, ctx: Context) -> list[Finding]:
        token = resources.remember()  # the rules share the defaulted containers of a large pod spec
        try:
            return self._evaluate(obj, ctx)
        finally:
            resources.forget(token)

    def _evaluate(self, obj: K8sObject, ctx: Context) -> list[Finding]:
        templates = ctx.templates(obj)
        out: list[Finding] = []
        for tpl in templates:
            for problem in tpl.problems:
                out.append(
                    self.finding_at(
                        obj,
                        problem.path,
                        PARSE_ERROR,
                        "error",
                        problem.message,
                        "Fix the field's type; Kubernetes rejects this object.",
                        None,
                    )
                )
        training: bool | None = None
        obj_ignores = parse_ignore(obj.annotations.get(IGNORE_ANNOTATION))
        # A Pod's template metadata is the object's own: count it once.
        tpl_ignores = {id(t): parse_ignore(t.annotations.get(IGNORE_ANNOTATION)) if t.path else {} for t in templates}
        memo: dict[int, list[Unit]] = {}
        settled = False  # an unsuppressed error stands: the object is denied whatever else is found
        cap = ctx.max_hits_per_template
        # At admission, templates with more containers than the cap: once an error stands, later rules
        # skip them (their findings would only lengthen a denial), and rules that can deny run first.
        huge = {id(t) for t in templates if len(t.all_containers) > cap} if cap is not None else _NONE_HUGE
        plans = self._run_plans_for(obj, ctx)
        if not templates:  # no pod template (a Service, a queue): only the rules on whole objects have units
            plans = self._object_plans(plans)
        if huge:
            plans = sorted(plans, key=lambda p: not self._can_deny(p[0]))
        for rule, scope, check, params, training_only in plans:
            if settled and huge and rule.unit != "object" and all(id(t) in huge for t in templates if not t.broken):
                continue
            if training_only:
                if training is None:
                    training = is_training_workload(obj, templates)
                if not training:
                    continue
            units = memo.get(scope)
            if units is None:
                units = self._units(rule, obj, ctx, templates, memo)
            # id(template) -> this rule's hits on it (admission: written only when there is a cap)
            hits_on: dict[int, int] = {} if cap is not None else _NO_CAP
            for unit in units:
                if (
                    cap is not None
                    and settled
                    and unit.tpl is not None
                    and (hits_on.get(id(unit.tpl), 0) >= cap or id(unit.tpl) in huge)
                ):
                    continue  # the verdict is settled (an error stands): more of the same changes nothing
                try:
                    # A check returns its hits as a list (None: none), or yields them (a generator).
                    hits = check(unit, params, ctx)
                    if not hits:
                        continue
                    if hits.__class__ is not list:
                        hits = list(hits)  # run the generator here: what it raises is this rule's
                except SkipUnit as skip:
                    if ctx.wants_notes:
                        ctx.note(f"{obj.file}: {obj.ref.display()}: {rule.id} skipped: {skip}")
                    continue
                except Exception as exc:  # a bug in one rule must not hide the others' results
                    out.append(
                        self.finding_at(
                            obj,
                            _unit_path(unit),
                            RULE_ERROR,
                            "error",
                            f"rule {rule.id} failed: {type(exc).__name__}: {str(exc)[:200]}",
                            "This is a bug in the rule (for a custom rule, in its template or expression): report it "
                            "with the manifest, or disable the rule.",
                            None,
                        )
                    )
                    continue
                elsewhere = unit.tpl.cache.get("elsewhere") if unit.tpl is not None else None
                for hit in hits:
                    if elsewhere and any(tuple(hit.path)[: len(p)] == p for p in elsewhere):
                        continue  # a shared definition's part, judged where it is defined (docs/kinds.md)
                    severity = hit.severity
                    if severity is None or rule.id in self.overrides:  # the config's severity wins
                        severity = self.severity_for(rule, unit)
                    if unit.tpl is not None and (
                        unit.tpl.renames or unit.tpl.fix_note or (hit.fix is not None and "foreign" in unit.tpl.cache)
                    ):
                        _to_the_users_fields(hit, unit.tpl)
                    f = self.finding_at(
                        obj,
                        hit.path,
                        hit.rule or rule.id,
                        severity,
                        hit.message,
                        self.remediation[rule.id],
                        hit.container
                        if hit.container is not None
                        else (unit.container.name if unit.container else None),
                        at_value=hit.at_value,
                    )
                    if hit.detail:
                        f.detail = hit.detail
                    if hit.data:
                        f.data = hit.data
                    if hit.fix is not None:
                        f.fix = hit.fix.bound(obj.base, obj.document)
                    reason = _ignored(obj_ignores, rule.id) if obj_ignores else None
                    if reason is None and unit.tpl is not None:
                        tpl_ignore = tpl_ignores[id(unit.tpl)]
                        if tpl_ignore:
                            reason = _ignored(tpl_ignore, rule.id)
                    if reason is not None:
                        f.suppressed = reason or "kubelint-ml.io/ignore annotation"
                    out.append(f)
                    if cap is not None:
                        if unit.tpl is not None:
                            hits_on[id(unit.tpl)] = hits_on.get(id(unit.tpl), 0) + 1
                        settled = settled or (severity == "error" and f.suppressed is None)
        if obj_ignores:
            out.extend(self._unknown_ignores(obj, obj_ignores, ("metadata", "annotations", IGNORE_ANNOTATION)))
        for t in templates:
            if tpl_ignores[id(t)]:
                out.extend(
                    self._unknown_ignores(
                        obj, tpl_ignores[id(t)], t.path + ("metadata", "annotations", IGNORE_ANNOTATION)
                    )
                )
        if self.reads_typos:
            for f in out:
                if f.rule == typos.UNKNOWN_FIELD:  # findings that may follow from a misspelt key say so
                    typos.annotate(out)
                    break
        return out

    def _unknown_ignores(self, obj: K8sObject, ignores: dict[str, str], path: tuple) -> Iterator[Finding]:
        for rid in ignores:
            if rid not in self.known_ids and rid != IGNORE_ALL:
                yield self.finding_at(
                    obj,
                    path,
                    UNKNOWN_IGNORE,
                    "info",
                    f"{IGNORE_ANNOTATION} names unknown rule '{rid}'{did_you_mean(rid, self.known_ids)}",
                    "Correct the rule id (see `kubelint-ml rules list`) or remove it.",
                    None,
                    at_value=True,
                )

    def _can_deny(self, rule: Rule) -> bool:
        """Some finding of the rule can be an error (as :meth:`severity_for` decides)."""
        override = self.overrides.get(rule.id)
        return override == "error" if override else "error" in (rule.severity, rule.accelerator_severity)

    def severity_for(self, rule: Rule, unit: Unit) -> str:
        override = self.overrides.get(rule.id)
        if override:
            return override
        if rule.accelerator_severity:
            accel = False
            if unit.tpl is not None:
                accel = is_accelerator_template(unit.tpl)
            else:
                accel = any(is_accelerator_template(t) for t in unit.templates())
            if accel:
                return rule.accelerator_severity
        return rule.severity

    @staticmethod
    def finding_at(
        obj: K8sObject,
        path: tuple,
        rule: str,
        severity: str,
        message: str,
        remediation: str,
        container: str | None,
        *,
        at_value: bool = False,
    ) -> Finding:
        full = obj.base + tuple(path)
        if at_value:
            line, col, found = value_position(obj.root, full)
        else:
            line, col, found = locate(obj.root, full)
        rel = found[len(obj.base) :] if len(found) >= len(obj.base) else ()
        return Finding(
            rule,
            severity,
            message,
            remediation,
            obj.file,
            line,
            col,
            render_path(rel),
            obj.ref,
            container,
            obj.document,
        )


def _to_the_users_fields(hit: Any, tpl: Any) -> None:
    """A hit on a pod a controller builds from other fields (docs/kinds.md): its path and its
    fix's paths moved to where the user wrote the field; a fix that would not be the user's
    edit made unfixable, with the reason."""
    hit.path = tpl.real_path(tuple(hit.path))
    assumed = tpl.cache.get("assumed")
    if assumed:  # what the controller adds that the file does not show (an image, a preset's volume)
        hit.message = f"{hit.message} ({assumed})"
    fix = hit.fix
    if fix is None:
        return
    why = tpl.fix_note
    if why and _within(fix, tpl.cache.get("fixable")):
        why = None  # every edit is in a field of the user's that the controller copies as it is
    why = why or _not_the_users(fix, tpl.cache.get("foreign"))
    if why:
        hit.fix = replace(fix, changes=(), unfixable=why, resolved=True)
    elif "fix_renames" in tpl.cache:  # some fields are a shared default's: a fix sets the pod's own
        table = tpl.cache["fix_renames"]
        hit.fix = replace(fix, changes=tuple(replace(c, path=_renamed(table, c.path)) for c in fix.changes))
    elif tpl.renames:
        hit.fix = replace(fix, changes=tuple(replace(c, path=tpl.real_path(c.path)) for c in fix.changes))


def _renamed(table: tuple, path: tuple) -> tuple:
    """``path`` by the first (longest) of ``table``'s (pod prefix, file prefix) that it starts with."""
    for pod, real in table:
        if path[: len(pod)] == pod:
            return real + tuple(path[len(pod) :])
    return path


def _within(fix: Any, fixable: Any) -> bool:
    """Every change of ``fix`` is at or under one of the pod paths ``fixable`` (a kind whose fixes are
    otherwise not the user's edit: the fields the controller copies into the pod as they are)."""
    return bool(fixable) and all(any(c.path[: len(p)] == p for p in fixable) for c in fix.changes)


def _not_the_users(fix: Any, foreign: Any) -> str | None:
    """Why a fix would edit a container or volume the controller adds (``foreign``: its path in the
    built pod and the reason, docs/kinds.md), or None."""
    for prefix, why in foreign or ():
        if any(c.path[: len(prefix)] == prefix for c in fix.changes):
            return why
    return None


def _unit_path(unit: Unit) -> tuple:
    if unit.container is not None:
        return unit.container.path
    if unit.volume is not None:
        return unit.volume.path
    if unit.tpl is not None:
        return unit.tpl.spec_path
    return ()


def render_error(file: str, message: str) -> Finding:
    """A chart or kustomization that could not be rendered, on its Chart.yaml or kustomization.yaml."""
    return Finding(
        RENDER_ERROR,
        "error",
        message,
        "Fix what the tool reports, install the tool, or pipe the rendered output in (or exclude the path).",
        file,
        1,
        1,
        "",
        None,
        None,
        0,
    )


def parse_error(
    file: str, line: int, column: int, message: str, document: int = 0, ref: ObjectRef | None = None, path: str = ""
) -> Finding:
    return Finding(
        PARSE_ERROR,
        "error",
        message,
        "Fix the file so it is a valid Kubernetes manifest (or exclude it in the config).",
        file,
        line,
        column,
        path,
        ref,
        None,
        document,
    )
