"""Differential test against OPA itself: the v1 policies of fixtures/policies/opa-diff over the
shared corpus, per document and rule, here and in OPA (the opa-golib-python-bindings wheel, OPA
v1.20.2 through Go; strict built-in errors). Compared: the rule's value (the set of messages), and
whether it is an error or undefined.

The wheel is test-only: .ci/run fetches it into .ci/cache/opa (or set KUBELINT_OPA_BINDINGS to a
directory holding its ``opa_bindings`` package); without it, or without ../shared/corpus, the tests
skip and say why."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / "fixtures" / "policies" / "opa-diff"
CORPUS = ROOT.parent / "shared" / "corpus"
RULES = [f"{pkg}.{r}" for pkg in ("resources", "strings_", "structure") for r in ("deny", "warn")]


@pytest.fixture(scope="module")
def opa():
    where = Path(os.environ.get("KUBELINT_OPA_BINDINGS") or ROOT / ".ci" / "cache" / "opa")
    if not (where / "opa_bindings").is_dir():
        pytest.skip(f"OPA's Python bindings are not in {where} (.ci/run fetches the opa-golib-python-bindings wheel)")
    sys.path.insert(0, str(where))
    try:
        import opa_bindings
    except (ImportError, OSError) as e:
        pytest.skip(f"OPA's Python bindings do not load here: {e}")
    finally:
        sys.path.remove(str(where))
    engine = opa_bindings.OpaEngine()
    for p in sorted(POLICIES.glob("*.rego")):
        engine.add_policy(p.name, p.read_text())
    yield opa_bindings, engine
    engine.close()


@pytest.fixture(scope="module")
def documents():
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not beside the project")
    from kubelint_ml.input.loader import Limits, load

    out = []
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            continue
        for doc in load(path.read_bytes(), Limits()).documents:
            if isinstance(doc.data, dict):  # OPA's bindings take no null input
                out.append((f"{path.relative_to(CORPUS)}#{doc.index}", json.loads(json.dumps(doc.data, default=str))))
    assert len(out) > 400
    return out


def _ours(strict: bool):
    from kubelint_ml.policy.rego import Evaluator, parse

    modules = [parse(p.name, p.read_text()) for p in sorted(POLICIES.glob("*.rego"))]
    return Evaluator(modules, strict=strict)


def _outcome_ours(ev, rule: str) -> tuple:
    from kubelint_ml.policy.rego import EvalError

    try:
        value = ev.eval(rule)
    except EvalError:
        return ("error",)
    return ("undefined",) if value is None else ("ok", _norm(value))


def _outcome_opa(mod, engine, rule: str, doc: dict) -> tuple:
    try:
        value = engine.eval_document(rule.replace(".", "/").replace("/", ".", 1), input=doc)
    except mod.OpaUndefinedError:
        return ("undefined",)
    except mod.OpaError:
        return ("error",)
    return ("ok", _norm(value))


def _norm(value):
    if isinstance(value, list):
        return sorted(json.dumps(v, sort_keys=True) for v in value)
    return json.dumps(value, sort_keys=True)


def test_strict_outcomes_and_messages_equal_opas(opa, documents):
    mod, engine = opa
    ev = _ours(strict=True)
    differ = []
    compared = 0
    for name, doc in documents:
        ev.set_input_json(json.dumps(doc))
        for rule in RULES:
            want = _outcome_opa(mod, engine, rule, doc)
            got = _outcome_ours(ev, rule)
            compared += 1
            if got != want:
                differ.append((name, rule, want, got))
    assert compared > 2400
    assert differ == []


def test_non_strict_equals_opa_wherever_opa_has_no_builtin_error(opa, documents):
    """Without --show-builtin-errors a built-in error makes its expression undefined: where OPA's
    strict evaluation has no error, non-strict results are the same; where it has one, ours is
    never an error (the rule's other results stay)."""
    mod, engine = opa
    ev = _ours(strict=False)
    differ = []
    errors = 0
    for name, doc in documents:
        ev.set_input_json(json.dumps(doc))
        for rule in RULES:
            want = _outcome_opa(mod, engine, rule, doc)
            got = _outcome_ours(ev, rule)
            if want == ("error",):
                errors += 1
                if got == ("error",):
                    differ.append((name, rule, want, got))
            elif got != want:
                differ.append((name, rule, want, got))
    assert errors > 0  # the corpus has quantities like "500m" that to_number refuses
    assert differ == []
