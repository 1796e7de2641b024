"""Policies in a lint run: conftest-style Rego rules on each document, Gatekeeper constraints on
each object; their results become findings like the built-in rules' own.

conftest semantics: each document is ``input``; in every package (or those of
``--policy-namespace``), rules named ``deny``, ``violation``, ``warn`` and
``deny_<name>`` / ``violation_<name>`` / ``warn_<name>`` are evaluated one by
one; a value may be a string, a boolean, a set or array of strings, or
objects with ``msg`` (and ``details``). ``exception`` rules of a package
(sets of arrays of rule names without their ``deny_``/``violation_`` prefix;
``""`` for ``deny`` and ``violation`` themselves) suppress the matching deny
and violation results (never warnings). With ``combine`` all documents of the run are
one input: an array of ``{"path", "contents"}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.engine.api import IGNORE_ANNOTATION, RULE_ERROR
from kubelint_ml.engine.core import parse_ignore
from kubelint_ml.findings import Finding, ObjectRef, RuleInfo
from kubelint_ml.input.loader import locate
from kubelint_ml.policy import gatekeeper as gk
from kubelint_ml.policy.load import Found, PolicyError
from kubelint_ml.policy.rego import Module
from kubelint_ml.policy.runtime import Runtime, dumps

CONFTEST_RULE = re.compile(r"^(deny|violation|warn)(_[A-Za-z0-9_]+)?$")
CONFTEST = "conftest"
BATCH_JOBS = 4096  # evaluations queued before they are sent to the helper process
REMEDIATION = "Change the manifest so that the policy passes (see the policy's message), or suppress it with a reason."


@dataclass(slots=True)
class RegoRule:
    package: str
    name: str
    file: str
    line: int

    @property
    def rule_id(self) -> str:
        return f"{self.package}.{self.name}"

    @property
    def severity(self) -> str:
        return "warning" if self.name.startswith("warn") else "error"

    @property
    def short(self) -> str | None:
        """The name exceptions use (conftest): ``deny_foo`` / ``violation_foo`` -> ``foo``, ``deny`` /
        ``violation`` -> ``""``; ``None`` for warnings, which no exception covers."""
        if self.name in ("deny", "violation"):
            return ""
        for prefix in ("violation_", "deny_"):
            if self.name.startswith(prefix):
                return self.name[len(prefix) :]
        return None


def conftest_rules(modules: list[Module], namespaces: tuple[str, ...] = ()) -> list[RegoRule]:
    seen: dict[str, RegoRule] = {}
    for m in modules:
        if namespaces and m.package not in namespaces:
            continue
        for name, line in m.rules.items():
            if CONFTEST_RULE.match(name):
                seen.setdefault(f"{m.package}.{name}", RegoRule(m.package, name, m.path, line))
    return sorted(seen.values(), key=lambda r: r.rule_id)


def results(value: Any) -> list[tuple[str, Any]]:
    """``(message, details)`` per result of a conftest rule's value."""
    if value is None or value is False:
        return []
    if value is True:
        return [("", None)]
    if isinstance(value, str):
        return [(value, None)] if value else []
    out: list[tuple[str, Any]] = []
    if isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, str):
                out.append((item, None))
            elif isinstance(item, dict):
                msg = item.get("msg")
                out.append((msg if isinstance(msg, str) else dumps(item), item.get("details")))
            elif item is not None and item is not False:
                out.append((dumps(item), None))
    elif isinstance(value, dict):
        msg = value.get("msg")
        out.append((msg if isinstance(msg, str) else dumps(value), value.get("details")))
    return out


def _excepted(exceptions: Any) -> set[str]:
    names: set[str] = set()
    for item in exceptions or []:
        if isinstance(item, (list, tuple)):
            names.update(x for x in item if isinstance(x, str))
        elif isinstance(item, str):
            names.add(item)
    return names


@dataclass
class Policies:
    """Everything the run needs from the policy paths, compiled."""

    found: Found
    namespaces: tuple[str, ...] = ()
    combine: bool = False
    rego_rules: list[RegoRule] = field(default_factory=list)
    exception_packages: list[str] = field(default_factory=list)
    templates: dict[str, gk.Template] = field(default_factory=dict)
    constraints: list[gk.Constraint] = field(default_factory=list)
    runtime: Runtime = field(default_factory=Runtime)
    inventory_json: str | None = None
    _pending: list = field(default_factory=list)
    _pending_jobs: int = 0
    context_paths: list[str] = field(default_factory=list)  # files whose objects join data.inventory
    severity: dict[str, str] = field(default_factory=dict)  # the config's severity overrides, by rule id
    _untold: dict[tuple[str, str], str] = field(default_factory=dict)  # rules the load-time probe stopped
    _reads_file_info: bool | None = None  # whether a module reads data.conftest (see _file_data)
    kyverno: Any = None  # kyverno.CelPolicies: Kyverno CEL policies and ValidatingAdmissionPolicies

    @classmethod
    def build(
        cls, found: Found, namespaces: tuple[str, ...] = (), combine: bool = False, strict: bool = False
    ) -> Policies:
        """Compile and check everything; :class:`PolicyError` (exit 2) names what is unusable.

        ``strict``: a built-in error in a conftest rule is a ``rule-error`` (conftest's
        ``--show-builtin-errors``); by default it makes its expression undefined, as conftest and
        Gatekeeper run OPA. Gatekeeper templates are never strict (Gatekeeper has no such option)."""
        self = cls(found, tuple(namespaces), combine)
        self.rego_rules = conftest_rules(found.modules, self.namespaces)
        self.exception_packages = sorted(
            {
                m.package
                for m in found.modules
                if "exception" in m.rules and (not self.namespaces or m.package in self.namespaces)
            }
        )
        for file, doc in found.templates:
            tpl = gk.build_template(file, doc)
            other = self.templates.get(tpl.kind)
            if other is not None and other.file != tpl.file:
                raise PolicyError(
                    f"{file}: ConstraintTemplate {tpl.name} defines kind {tpl.kind}, "
                    f"as {other.name} ({other.file}) does"
                )
            self.templates[tpl.kind] = tpl
        seen: dict[str, tuple[str, dict]] = {}
        for f, d, line in found.constraints:
            c = gk.build_constraint(f, d, line, self.templates)
            if c.rule_id in seen:
                if seen[c.rule_id][1] != d:
                    raise PolicyError(
                        f"{f}:{line}: constraint {c.rule_id} is also defined, differently, in {seen[c.rule_id][0]}"
                    )
                continue
            seen[c.rule_id] = (f, d)
            self.constraints.append(c)
        if found.modules:
            self.runtime.strict = strict
            self.runtime.add(CONFTEST, found.modules, found.data)
            self.runtime.strict = False
        for tpl in self.templates.values():
            if tpl.modules:
                self.runtime.add(tpl.kind, tpl.modules)
        if found.kyverno:
            from kubelint_ml.policy import kyverno

            self.kyverno = kyverno.CelPolicies(kyverno.build(found.kyverno))
        self._probe()
        return self

    def _file_data(self, file: str) -> str | None:
        """conftest's ``data.conftest.file`` (``name`` and ``dir`` of the file being tested) beside the
        data files, for policies that read it; ``None`` (the data as loaded) for the others."""
        if self._reads_file_info is None:
            self._reads_file_info = any(re.search(r"\bdata\.conftest\b", m.text) for m in self.found.modules)
        if not self._reads_file_info:
            return None
        import os

        path = os.path.abspath(file)
        data = dict(self.found.data or {})
        conftest = dict(data.get("conftest") or {}) if isinstance(data.get("conftest"), dict) else {}
        conftest["file"] = {"name": os.path.basename(path), "dir": os.path.dirname(path)}
        data["conftest"] = conftest
        return dumps(data)

    def documents(self, data: bytes, units: list[tuple[Any, list[Any]]]) -> list[tuple[Any, list[Any]]]:
        """A file's ``(Document, objects)`` units as conftest reads the file: see
        :mod:`kubelint_ml.policy.documents`."""
        from kubelint_ml.policy.documents import conftest_units

        return conftest_units(data, units)

    def readmit_after(self, seconds: float) -> None:
        """For a long-lived process (``serve``): a rule disabled after it hit a limit is tried again
        once ``seconds`` have passed (in ``check`` it stays disabled for the run), and every
        evaluation it skips meanwhile is a ``rule-error`` finding, so that a review never passes
        silently. A new :class:`Policies` (a config reload) starts with every rule enabled."""
        self.runtime.readmit_after = seconds

    def disabled_rules(self) -> dict[str, str]:
        """The rules disabled after they hit a limit: rule id -> reason."""
        out = {}
        for (key, rule), (_, reason) in self.runtime.disabled.items():
            out[rule if key == CONFTEST else f"ConstraintTemplate for {key}"] = reason
        return out

    def _probe(self) -> None:
        """Evaluate every rule once on an empty input: names that do not resolve, unsafe variables and
        unknown functions are compile errors in OPA, reported here rather than on each document."""
        from kubelint_ml.policy.rego import compile_problem

        jobs = [(CONFTEST, r.rule_id, "{}", None) for r in self.rego_rules]
        jobs += [
            (t.kind, f"{t.package}.violation", '{"review":{},"parameters":{}}', None)
            for t in self.templates.values()
            if t.modules
        ]
        for job, (status, value) in zip(jobs, self.runtime.run(jobs)):
            if status == "error" and compile_problem(str(value)) and not self._builtin_error(job):
                where = job[1] if job[0] == CONFTEST else f"ConstraintTemplate for {job[0]}"
                raise PolicyError(f"{where}: does not compile: {str(value).removeprefix('EvalError: ')}")
            if status == "limit":
                # disabled already (one time limit is enough); said on the first document it skips
                self._untold[(job[0], job[1])] = f"{value}, on an empty input when the policies were loaded"

    def _builtin_error(self, job: tuple) -> bool:
        """Whether a strict evaluator's error on the empty input is a built-in error (gone when not
        strict), which conftest reports per document, not as a policy that does not compile."""
        from kubelint_ml.policy.rego import EvalError, Evaluator

        ev = self.runtime.evaluators.get(job[0])
        if ev is None or not ev.strict:
            return False
        loose = Evaluator(ev.modules, self.found.data if job[0] == CONFTEST else None, strict=False)
        loose.set_input_json(job[2])
        try:
            loose.eval(job[1])
        except EvalError:
            return False
        return True

    @property
    def needs_inventory(self) -> bool:
        return any(c.template.referential for c in self.constraints)

    def set_inventory(self, objects: list[dict]) -> None:
        self.inventory_json = dumps({"inventory": gk.inventory(objects)})

    def prepare(self, sources: list, limits: Any, stdin_data: bytes | None, jobs: int) -> int:
        """Before the lint: ``data.inventory`` from every object of the run and the context paths (when a
        referential template needs it). Returns the jobs to use (one with ``combine``: it sees every
        document in one process)."""
        kyverno = self.kyverno is not None and self.kyverno.needs_objects and self.kyverno.context is None
        if (self.needs_inventory and self.inventory_json is None) or kyverno:
            from kubelint_ml.input.loader import load
            from kubelint_ml.input.objects import unpack
            from kubelint_ml.input.sources import Source, collect, read

            objects: list[dict] = []
            extra = collect(list(self.context_paths)) if self.context_paths else []
            for src in list(sources) + [s for s in extra if isinstance(s, Source)]:
                try:
                    data = (stdin_data or b"") if src.real == "-" else read(src, limits.max_file_bytes)
                except OSError:
                    continue
                if len(data) > limits.max_file_bytes:
                    continue
                for doc in load(data, limits).documents:
                    objects.extend(o.data for o in unpack(doc, src.path).objects)
            if self.needs_inventory:
                self.set_inventory(objects)
            if kyverno:
                self.kyverno.set_objects(objects)
        return 1 if self.combine else jobs

    def choose(self, off: set[str], severity: dict[str, str]) -> None:
        """The config's and the command line's choices: the rules in ``off`` are not evaluated, and
        ``severity`` overrides a rule's own (from ``deny``/``warn`` or the enforcementAction)."""
        self.rego_rules = [r for r in self.rego_rules if r.rule_id not in off]
        self.constraints = [c for c in self.constraints if c.rule_id not in off]
        if self.kyverno is not None:
            self.kyverno.choose(off)
        ids = self.rule_ids()
        self.severity = {rid: sev for rid, sev in severity.items() if rid in ids}

    def _overridden(self, found: list[Finding]) -> list[Finding]:
        if self.severity:
            for f in found:
                f.severity = self.severity.get(f.rule, f.severity)
        return found

    def rule_ids(self) -> set[str]:
        ids = {r.rule_id for r in self.rego_rules} | {c.rule_id for c in self.constraints}
        return ids | ({r.rule_id for r in self.kyverno.all_rules} if self.kyverno is not None else set())

    def rule_infos(self) -> dict[str, RuleInfo]:
        out = {}
        for r in self.rego_rules:
            out[r.rule_id] = RuleInfo(
                r.rule_id,
                r.severity,
                f"Rego rule {r.rule_id}",
                f"Policy rule {r.name} of package {r.package} ({r.file}:{r.line}).",
                REMEDIATION,
                "policy",
            )
        for c in self.constraints:
            out[c.rule_id] = RuleInfo(
                c.rule_id,
                c.severity,
                f"Gatekeeper constraint {c.rule_id}",
                f"Constraint {c.name} ({c.file}) of ConstraintTemplate {c.template.name} "
                f"({c.template.file}); enforcementAction {c.action}.",
                REMEDIATION,
                "policy",
            )
        if self.kyverno is not None:
            out.update(self.kyverno.rule_infos())
        return out

    def load_findings(self) -> list[Finding]:
        """Said once per run (not per file or worker): the Kyverno rules that are not evaluated."""
        return self.kyverno.unsupported_findings() if self.kyverno is not None else []

    def close(self) -> None:
        self.runtime.close()

    # ------------------------------------------------------------------
    # Evaluation

    def lint_file(self, file: str, units: list[tuple[Any, list[Any]]], notes: list[str] | None = None) -> list[Finding]:
        """Findings for one file: ``units`` are ``(Document, [K8sObject])`` pairs."""
        out: list[Finding] = []
        self.defer(file, units, out, notes)
        self.flush()
        return out

    def defer(
        self,
        file: str,
        units: list[tuple[Any, list[Any]]],
        into: list[Finding],
        notes: list[str] | None = None,
        request: dict | None = None,
    ) -> None:
        """Queue the evaluations of one file; :meth:`flush` appends its findings to ``into``.
        Evaluations go to the helper process in batches of many files (one wake-up each).
        ``request``: the AdmissionReview request the objects came in (the webhook), which
        Gatekeeper templates see as ``input.review`` (its operation, userInfo, oldObject)."""
        jobs: list[tuple | None] = []
        plans: list[tuple] = []  # what each job is for
        data_json = self._file_data(file) if self.rego_rules and not self.combine else None
        for doc, objects in units:
            if not self.combine and self.rego_rules:
                text = dumps(doc.data)
                for r in self.rego_rules:
                    jobs.append((CONFTEST, r.rule_id, text, data_json))
                    plans.append(("rego", r, doc, None))
                for pkg in self.exception_packages:
                    jobs.append((CONFTEST, f"{pkg}.exception", text, data_json))
                    plans.append(("exception", pkg, doc, None))
            for obj in objects:
                if self.kyverno is not None:
                    plans.append(("kyverno", None, doc, obj, request))
                    jobs.append(None)
                review_json = None
                for c in self.constraints:
                    ok, note = gk.matches(c.match, obj.data)
                    if not ok:
                        continue
                    if note and notes is not None:
                        notes.append(f"{file}: {obj.ref.display()}: {c.rule_id}: {note}")
                    params = c.parameters if c.parameters is not None else {}
                    review = gk.review(obj.data if request is None else {"kind": "AdmissionReview", "request": request})
                    if c.template.cel is not None:
                        plans.append(("cel", c, doc, obj, review, params))
                        jobs.append(None)
                        continue
                    if review_json is None:
                        review_json = dumps(review)
                    jobs.append(
                        (
                            c.kind,
                            f"{c.template.package}.violation",
                            '{"review":' + review_json + ',"parameters":' + dumps(params) + "}",
                            self.inventory_json if c.template.referential else None,
                        )
                    )
                    plans.append(("gk", c, doc, obj))
        self._pending.append((file, jobs, plans, into))
        self._pending_jobs += len(jobs)
        if self._pending_jobs >= BATCH_JOBS:
            self.flush()

    def flush(self) -> None:
        """Evaluate everything queued by :meth:`defer`, in one batch."""
        pending, self._pending, self._pending_jobs = self._pending, [], 0
        if self.kyverno is not None:  # every object of the batch at once (the helper's requests shared)
            self.kyverno.prefetch([(p[3], p[4]) for _, _, plans, _ in pending for p in plans if p[0] == "kyverno"])
        real = [j for _, jobs, _, _ in pending for j in jobs if j is not None]
        answers = iter(self.runtime.run(real))
        for file, jobs, plans, into in pending:
            into.extend(self._overridden(self._findings(file, jobs, plans, answers)))

    def _findings(self, file: str, jobs: list, plans: list, answers: Any) -> list[Finding]:
        out: list[Finding] = []
        exceptions: dict[tuple[int, str], set[str]] = {}
        pending: list[tuple] = []
        for job, plan in zip(jobs, plans):
            if job is None and plan[0] == "kyverno":
                out.extend(self.kyverno.findings(plan[3], plan[4]))
                continue
            if job is None:
                _, c, doc, obj, review, params = plan
                try:
                    found = c.template.cel.violations(review, params)
                    out.extend(self._gk_findings(c, obj, found))
                except Exception as e:  # noqa: BLE001 - one policy's failure must not hide the others
                    out.append(self._error(c.rule_id, file, doc, obj, f"evaluation failed: {e}"))
                continue
            status, value = next(answers)
            if plan[0] == "exception":
                if status == "ok":
                    exceptions[(id(plan[2]), plan[1])] = _excepted(value)
                continue
            if status == "skipped" and self.runtime.readmit_after is None:
                told = self._untold.pop((job[0], job[1]), None)
                if told is None:
                    continue  # said once, by the finding of the evaluation that hit the limit
                status, value = "limit", told
            if status != "ok":
                rid = plan[1].rule_id
                out.append(self._error(rid, file, plan[2], plan[3], self._what(status, value)))
                continue
            if plan[0] == "rego":
                pending.append((plan[1], plan[2], value))
            else:
                out.extend(self._gk_findings(plan[1], plan[3], [v for v in value or [] if isinstance(v, dict)]))
        for rule, doc, value in pending:
            excepted = exceptions.get((id(doc), rule.package), set())
            for msg, details in results(value):
                f = self._doc_finding(rule, file, doc.data, doc.index, doc.line, msg, details)
                if rule.short is not None and rule.short in excepted:
                    f.suppressed = f"exception in package {rule.package}"
                out.append(f)
        return out

    def lint_combined(self, docs: list[tuple[str, Any]]) -> list[Finding]:
        """``combine``: every document of the run as one input; findings go to the first file."""
        if not self.rego_rules or not docs:
            return []
        text = dumps([{"path": path, "contents": doc.data} for path, doc in docs])
        jobs = [(CONFTEST, r.rule_id, text, None) for r in self.rego_rules]
        jobs += [(CONFTEST, f"{p}.exception", text, None) for p in self.exception_packages]
        answers = self.runtime.run(jobs)
        excepted = {
            p: _excepted(v) if s == "ok" else set()
            for p, (s, v) in zip(self.exception_packages, answers[len(self.rego_rules) :])
        }
        file, first = docs[0]
        out = []
        for rule, (status, value) in zip(self.rego_rules, answers):
            if status != "ok":
                out.append(self._error(rule.rule_id, file, first, None, self._what(status, value)))
                continue
            for msg, details in results(value):
                f = self._combined_finding(rule, docs, msg, details)
                if rule.short is not None and rule.short in excepted.get(rule.package, set()):
                    f.suppressed = f"exception in package {rule.package}"
                out.append(f)
        return self._overridden(out)

    def _combined_finding(self, rule: RegoRule, docs: list[tuple[str, Any]], msg: str, details: Any) -> Finding:
        # details may name the file ("path") the result is about
        target = docs[0]
        if isinstance(details, dict) and isinstance(details.get("file"), str):
            for path, doc in docs:
                if path == details["file"]:
                    target = (path, doc)
                    break
        path, doc = target
        return self._doc_finding(rule, path, doc.data, doc.index, doc.line, msg, None)

    def _what(self, status: str, value: Any) -> str:
        if status == "error":
            return "evaluation failed: " + str(value).removeprefix("EvalError: ")
        later = (
            "it is not evaluated again in this run"
            if self.runtime.readmit_after is None
            else f"it is not evaluated again for {self.runtime.readmit_after:g} s"
        )
        if status == "skipped":
            return f"not evaluated: it stopped earlier ({value}); {later}"
        return f"evaluation stopped: {value}; {later}"

    # ------------------------------------------------------------------
    # Findings

    @staticmethod
    def _doc_finding(rule: RegoRule, file: str, data: Any, index: int, line: int, msg: str, details: Any) -> Finding:
        col = 1
        field_path = ""
        path = gk.details_path(details)
        ref = _ref(data)
        if path is not None:
            fline, fcol, found = locate(data, path)
            if found == path:
                line, col, field_path = fline, fcol, _render(path)
        elif isinstance(data, dict):
            line, col = getattr(data, "start", (line, 1))
        f = Finding(
            rule.rule_id,
            rule.severity,
            msg or f"{rule.rule_id} failed",
            REMEDIATION,
            file,
            line,
            col,
            field_path,
            ref,
            None,
            index,
        )
        reason = parse_ignore(_annotations(data).get(IGNORE_ANNOTATION)).get(rule.rule_id)
        if reason is not None:
            f.suppressed = reason or "kubelint-ml.io/ignore annotation"
        return f

    @staticmethod
    def _gk_findings(c: gk.Constraint, obj: Any, violations: list[dict]) -> list[Finding]:
        out = []
        reason = parse_ignore(obj.annotations.get(IGNORE_ANNOTATION)).get(c.rule_id)
        for v in violations:
            path = gk.details_path(v.get("details"))
            full = obj.base + (path or ())
            line, col, found = locate(obj.root, full)
            field_path = _render(path) if path is not None and found == full else ""
            if path is not None and found != full:
                line, col, _ = locate(obj.root, obj.base)
            msg = v.get("msg")
            f = Finding(
                c.rule_id,
                c.severity,
                msg if isinstance(msg, str) and msg else f"{c.rule_id} violated",
                REMEDIATION,
                obj.file,
                line,
                col,
                field_path,
                obj.ref,
                None,
                obj.document,
            )
            if reason is not None:
                f.suppressed = reason or "kubelint-ml.io/ignore annotation"
            out.append(f)
        return out

    @staticmethod
    def _error(rid: str, file: str, doc: Any, obj: Any, what: str) -> Finding:
        if obj is not None:
            line, col, _ = locate(obj.root, obj.base)
            ref, index = obj.ref, obj.document
        else:
            line, col = getattr(doc.data, "start", (doc.line, 1))
            ref, index = _ref(doc.data), doc.index
        return Finding(
            RULE_ERROR,
            "error",
            f"policy {rid} failed here ({what[:300]}); the other rules still ran",
            "Fix the policy (a runtime error, or a runaway evaluation that hit the time or memory "
            "limit), or remove it.",
            file,
            line,
            col,
            "",
            ref,
            None,
            index,
        )


def compile_policies(
    paths: list[str],
    namespaces: tuple[str, ...] = (),
    combine: bool = False,
    context_paths: list[str] | None = None,
    strict: bool = False,
) -> Policies | None:
    """The compiled policies under ``paths`` (``None`` when there are none); :class:`PolicyError` names
    what is unusable (a Rego syntax or compile error included)."""
    from kubelint_ml.policy.load import find
    from kubelint_ml.policy.rego import RegoError

    try:
        found = find(paths)
        if not (found.modules or found.templates or found.constraints or found.kyverno):
            if namespaces or combine:
                raise PolicyError("--policy-namespace and --combine need Rego policies (--policy or --rules)")
            return None
        policies = Policies.build(found, namespaces, combine, strict)
    except RegoError as e:
        raise PolicyError(str(e)) from None
    policies.context_paths = list(context_paths or [])
    return policies


def _annotations(data: Any) -> dict:
    ann = gk.metadata(data).get("annotations")
    return ann if isinstance(ann, dict) else {}


def _ref(data: Any) -> ObjectRef | None:
    if not isinstance(data, dict):
        return None
    meta = gk.metadata(data)
    return ObjectRef(
        str(data.get("apiVersion") or ""),
        str(data.get("kind") or ""),
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
    )


def _render(path: tuple) -> str:
    from kubelint_ml.input.loader import render_path

    return render_path(path)
