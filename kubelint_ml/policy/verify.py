"""``rules verify`` for policies: Rego ``test_`` rules (as ``opa test`` and ``conftest verify``)
and Gatekeeper Suite files (``test.gatekeeper.sh/v1alpha1``, as ``gator verify``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubelint_ml.policy import gatekeeper as gk
from kubelint_ml.policy.load import Found, PolicyError, _yaml_docs
from kubelint_ml.policy.runtime import Runtime, dumps


@dataclass(slots=True)
class CaseResult:
    name: str
    passed: bool
    file: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "passed": self.passed, "file": self.file}
        if self.reason:
            out["reason"] = self.reason
        return out


def verify(found: Found) -> list[CaseResult]:
    out = rego_tests(found)
    for file, suite in found.suites:
        out.extend(run_suite(file, suite))
    return out


def rego_tests(found: Found) -> list[CaseResult]:
    tests = [(m, name) for m in found.modules for name in m.rules if name.startswith("test_")]
    if not tests:
        return []
    runtime = Runtime()
    try:
        runtime.add("rego", found.modules, found.data)
        seen: set[str] = set()
        jobs, names = [], []
        for m, name in tests:
            rid = f"{m.package}.{name}"
            if rid in seen:
                continue
            seen.add(rid)
            jobs.append(("rego", rid, "{}", None))
            names.append((rid, m.path))
        out = []
        for (rid, path), (status, value) in zip(names, runtime.run(jobs)):
            if status != "ok":
                out.append(CaseResult(f"data.{rid}", False, path, str(value)))
            elif value is True:
                out.append(CaseResult(f"data.{rid}", True, path))
            else:
                out.append(
                    CaseResult(
                        f"data.{rid}", False, path, "undefined" if value is None else f"value {dumps(value)[:200]}"
                    )
                )
        return out
    finally:
        runtime.close()


def _one(path: Path) -> dict:
    docs = [d for d, _ in _yaml_docs(path) if d is not None]
    if not docs or not isinstance(docs[0], dict):
        raise PolicyError(f"{path}: no object in the file")
    return docs[0]


def run_suite(file: str, suite: dict) -> list[CaseResult]:
    base = Path(file).parent
    suite_name = str((suite.get("metadata") or {}).get("name") or Path(file).parent.name)
    out: list[CaseResult] = []
    for test in suite.get("tests") or []:
        tname = f"{suite_name}/{test.get('name', '?')}"
        cases = test.get("cases") or []
        if test.get("skip"):
            continue
        try:
            tdoc = _one(base / str(test.get("template")))
            tpl = gk.build_template(str(base / str(test.get("template"))), tdoc)
            cfile = base / str(test.get("constraint"))
            constraint = gk.build_constraint(str(cfile), _one(cfile), 1, {tpl.kind: tpl})
        except (PolicyError, OSError) as e:
            out.extend(
                CaseResult(f"{tname}/{c.get('name', '?')}", False, file, f"template or constraint: {e}") for c in cases
            )
            continue
        runtime = Runtime()
        try:
            if tpl.modules:
                runtime.add(tpl.kind, tpl.modules)
            for case in cases:
                if case.get("skip"):
                    continue
                out.append(_case(base, file, f"{tname}/{case.get('name', '?')}", case, constraint, runtime))
        finally:
            runtime.close()
    return out


def evaluate(constraint: gk.Constraint, obj: dict, runtime: Runtime | None, data_json: str | None) -> list[dict]:
    """The violations of one object for one constraint (``[]`` when the constraint does not match)."""
    ok, _ = gk.matches(constraint.match, gk.target_object(obj))
    if not ok:
        return []
    review = gk.review(obj)
    params = constraint.parameters if constraint.parameters is not None else {}
    tpl = constraint.template
    if tpl.cel is not None:
        return tpl.cel.violations(review, params)
    assert runtime is not None
    [(status, value)] = runtime.run(
        [(tpl.kind, f"{tpl.package}.violation", dumps({"review": review, "parameters": params}), data_json)]
    )
    if status != "ok":
        raise RuntimeError(str(value))
    return [v for v in (value or []) if isinstance(v, dict)]


def _case(base: Path, file: str, name: str, case: dict, constraint: gk.Constraint, runtime: Runtime) -> CaseResult:
    try:
        obj = _one(base / str(case.get("object")))
        inv: list[dict] = []
        for p in case.get("inventory") or []:
            inv.extend(d for d, _ in _yaml_docs(base / str(p)) if isinstance(d, dict))
        data = dumps({"inventory": gk.inventory(inv)})
        found = evaluate(constraint, obj, runtime, data)
    except (PolicyError, OSError) as e:
        return CaseResult(name, False, file, str(e))
    except RuntimeError as e:
        return CaseResult(name, False, file, f"evaluation failed: {e}")
    for a in case.get("assertions") or []:
        problem = _assertion(a, found)
        if problem:
            return CaseResult(name, False, file, problem)
    return CaseResult(name, True, file)


def _assertion(a: dict, violations: list[dict]) -> str:
    msgs = [str(v.get("msg", "")) for v in violations]
    want = a.get("violations", "yes")
    if "message" in a:
        pattern = str(a["message"])
        try:
            rx = re.compile(pattern)
            msgs = [m for m in msgs if rx.search(m)]
        except re.error:
            msgs = [m for m in msgs if pattern in m]
    n = len(msgs)
    about = f" matching {a['message']!r}" if "message" in a else ""
    if want is True or want == "yes":
        return "" if n else f"expected violations{about}, got none"
    if want is False or want == "no":
        return "" if n == 0 else f"expected no violations{about}, got {n}: {msgs[:3]}"
    try:
        count = int(want)
    except (TypeError, ValueError):
        return f"assertion violations: {want!r} is not yes, no or a number"
    return "" if n == count else f"expected {count} violations{about}, got {n}: {msgs[:3]}"
