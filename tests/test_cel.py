"""CEL custom-rule runtime: compile errors, Kubernetes semantics, quantity, cost."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from kubelint_ml.engine import cel
from kubelint_ml.engine.cel import (
    CelCompileError,
    CelEvalError,
    compile_expression,
    format_nanos,
    parse_quantity_nanos,
)

JOB_FILE = "GoogleCloudPlatform__kubernetes-engine-samples/ai-ml__mix-train-and-inference__workloads__fine-tune-l4.yaml"

needs_runtime = pytest.mark.skipif(not cel.available(), reason="cel-expr-python not installed")


def _job(corpus: Path) -> dict:
    docs = [d for d in yaml.safe_load_all((corpus / JOB_FILE).read_text()) if d]
    return next(d for d in docs if d["kind"] == "Job")


def ev(source: str, **activation: object) -> object:
    return compile_expression(source).evaluate(activation)


# --- pure-Python parts (no runtime needed) -------------------------------------


@pytest.mark.parametrize(
    "text,nanos",
    [
        ("1", 10**9),
        ("1Gi", 2**30 * 10**9),
        ("1.5Gi", 3 * 2**29 * 10**9),
        ("500m", 5 * 10**8),
        ("0.1n", 1),  # rounds up to 1n
        ("-0.1n", -1),  # away from zero
        ("1e3", 1000 * 10**9),
        ("1E", 10**18 * 10**9),
        ("+2k", 2000 * 10**9),
        (".5", 5 * 10**8),
        ("100Ei", ((1 << 63) - 1) * 10**9),  # binary SI is capped
    ],
)
def test_parse_quantity_nanos(text: str, nanos: int) -> None:
    assert parse_quantity_nanos(text) == nanos


@pytest.mark.parametrize("text", ["", "200K", "1,3G", "Three", " 1", "1Gi ", "1e", "--1"])
def test_parse_quantity_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_quantity_nanos(text)


def test_format_nanos() -> None:
    assert format_nanos(1536 * 10**9) == "1536"
    assert format_nanos(5 * 10**8) == "0.5"
    assert format_nanos(-1) == "-0.000000001"
    assert format_nanos(0) == "0"


def test_compile_rejects_empty_and_long_without_runtime() -> None:
    with pytest.raises(CelCompileError, match="expression is empty"):
        compile_expression("  ")
    with pytest.raises(CelCompileError, match="more than 100000"):
        compile_expression("1 + " * 30_000 + "1")


def test_compile_without_runtime_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cel, "available", lambda: False)
    with pytest.raises(CelCompileError) as err:
        compile_expression("true")
    assert str(err.value) == "CEL runtime not installed (needs Python >= 3.11 and the cel-expr-python package)"


def test_to_cel_value_plain_types() -> None:
    class PosDict(dict):
        pass

    class PosList(list):
        pass

    src = PosDict(a=PosList([1, 2**70, datetime.date(2024, 1, 2), None, True, 1.5]), b=b"x")
    out = cel.to_cel_value(src)
    assert out == {"a": [1, float(2**70), "2024-01-02", None, True, 1.5], "b": "x"}
    assert type(out) is dict and type(out["a"]) is list


# --- runtime -------------------------------------------------------------------


@needs_runtime
def test_realistic_rule_on_corpus_job(corpus) -> None:
    job = _job(corpus)
    rule = (
        "object.spec.template.spec.containers.all(c, has(c.resources) && "
        "has(c.resources.limits) && 'memory' in c.resources.limits)"
    )
    program = compile_expression(rule)
    assert program.source == rule
    # the container limits only nvidia.com/gpu
    assert program.evaluate({"object": job}) is False
    fixed = _job(corpus)
    fixed["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "32Gi"
    assert program.evaluate({"object": fixed}) is True


@needs_runtime
def test_dict_and_list_subclasses_are_accepted() -> None:
    class PosDict(dict):
        pass

    class PosList(list):
        pass

    obj = PosDict(spec=PosDict(items=PosList([PosDict(n=1), PosDict(n=2)])))
    assert ev("object.spec.items.map(i, i.n)", object=obj) == [1, 2]


@needs_runtime
@pytest.mark.parametrize(
    "source,message",
    [
        ("object.spec.(", "1:13: Syntax error: no viable alternative at input '.('"),
        ("foo.bar == 1", "1:4: undeclared reference to 'foo.bar' (in container '')"),
        ("quantity(1)", "1:9: found no matching overload for 'quantity' applied to '(int)'"),
        (
            "quantity('1').isGreaterThan(1)",
            "1:28: found no matching overload for 'isGreaterThan' applied to '(kubernetes.Quantity, int)'",
        ),
    ],
)
def test_compile_errors_are_one_line(source: str, message: str) -> None:
    with pytest.raises(CelCompileError) as err:
        compile_expression(source)
    assert str(err.value) == message


@needs_runtime
def test_variables_are_declared_per_program() -> None:
    compile_expression("container.name == 'x'")
    with pytest.raises(CelCompileError, match="undeclared reference to 'container.name'"):
        compile_expression("container.name == 'x'", variables=("object",))


@needs_runtime
def test_missing_key_is_an_error_like_kubernetes(corpus) -> None:
    job = _job(corpus)
    with pytest.raises(CelEvalError) as err:
        ev("object.spec.template.spec.containers[0].resources.limits.memory == '1Gi'", object=job)
    assert str(err.value) == 'Key not found in map : "memory"'
    # has() on a missing intermediate field is an error too, as in cel-go
    with pytest.raises(CelEvalError, match='"nosuch"'):
        ev("has(object.spec.nosuch.x)", object=job)
    assert ev("has(object.spec.nosuch)", object=job) is False
    # errors are absorbed by a short-circuiting operand, as in CEL
    assert ev("object.spec.nosuch == 1 || true", object=job) is True
    assert ev("object.?spec.?nosuch.orValue('none')", object=job) == "none"


@needs_runtime
def test_type_errors_and_index_errors() -> None:
    with pytest.raises(CelEvalError, match="No matching overloads found"):
        ev("object.kind + 1 == 2", object={"kind": "Job"})
    with pytest.raises(CelEvalError, match="divide by zero"):
        ev("1 / object.n == 0", object={"n": 0})


@needs_runtime
@pytest.mark.parametrize(
    "source,result",
    [
        ("quantity('1Gi') == quantity('1024Mi')", True),
        ("quantity('200M').compareTo(quantity('0.2G'))", 0),
        ("quantity('50M').compareTo(quantity('50Mi'))", -1),
        ("quantity('150Mi').isGreaterThan(quantity('100Mi'))", True),
        ("quantity('50M').isLessThan(quantity('100M'))", True),
        ("quantity('50k').add(20) == quantity('50020')", True),
        ("quantity('50k').sub(20000).asApproximateFloat() == 30000.0", True),
        ("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", True),
        ("quantity('50000000G').isInteger()", True),
        ("quantity('9999999999999999999999999999999999999G').isInteger()", False),
        ("quantity('1.5').isInteger()", False),
        ("quantity('50k').asInteger()", 50000),
        ("quantity('-3').sign()", -1),
        ("sign(quantity('0'))", 0),
        ("isQuantity('1.3Gi')", True),
        ("isQuantity('200K')", False),
        ("quantity('1.5Gi').sub(quantity('512Mi'))", "1073741824"),
        ("type(quantity('1')) == type(quantity('2Gi'))", True),
    ],
)
def test_quantity_library(source: str, result: object) -> None:
    assert ev(source) == result


@needs_runtime
def test_quantity_errors() -> None:
    with pytest.raises(CelEvalError, match=r"^invalid quantity '200K': "):
        ev("quantity('200K').sign() == 1")
    with pytest.raises(CelEvalError, match="^cannot convert value to integer$"):
        ev("quantity('1.5').asInteger()")


@needs_runtime
def test_quantity_rule_over_containers(corpus) -> None:
    job = _job(corpus)
    c = job["spec"]["template"]["spec"]["containers"][0]
    c["resources"]["limits"]["memory"] = "80Gi"
    rule = (
        "!has(container.resources.limits) || !('memory' in container.resources.limits) || "
        "quantity(container.resources.limits.memory).isLessThan(quantity(profile.maxMemory))"
    )
    program = compile_expression(rule)
    assert program.evaluate({"container": c, "profile": {"maxMemory": "64Gi"}}) is False
    assert program.evaluate({"container": c, "profile": {"maxMemory": "96Gi"}}) is True


@needs_runtime
@pytest.mark.parametrize(
    "source,result",
    [
        ("'Abc'.lowerAscii()", "abc"),
        ("'a,b'.split(',')", ["a", "b"]),
        ("['a', 'b'].join('-')", "a-b"),
        ("'nvidia.com/gpu'.startsWith('nvidia.com/')", True),
        ("'%s uses %d GPUs'.format(['trainer', 8])", "trainer uses 8 GPUs"),
        ("[1, 2, 2].isSorted()", True),
        ("[3, 1].isSorted()", False),
        ("[1, 2, 3].sum()", 6),
        ("[4, 2, 9].min()", 2),
        ("[4, 2, 9].max()", 9),
        ("'image:v1'.matches('^[a-z]+:v[0-9]+$')", True),
    ],
)
def test_string_and_list_extensions(source: str, result: object) -> None:
    assert ev(source) == result


@needs_runtime
def test_message_expression_builds_a_string(corpus) -> None:
    job = _job(corpus)
    program = compile_expression("'container ' + object.spec.template.spec.containers[0].name + ' has no memory limit'")
    assert program.evaluate({"object": job}) == "container gpu-job has no memory limit"


@needs_runtime
def test_objects_and_profile_variables() -> None:
    objects = [
        {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
    ]
    rule = "objects.exists(o, o.kind == 'PriorityClass' && o.metadata.name == podSpec.priorityClassName)"
    program = compile_expression(rule)
    assert program.evaluate({"objects": objects, "podSpec": {"priorityClassName": "low"}}) is True
    assert program.evaluate({"objects": objects, "podSpec": {"priorityClassName": "mid"}}) is False


@needs_runtime
def test_iteration_budget_bounds_cost() -> None:
    nested = compile_expression("objects.all(a, objects.exists(b, a == b))")
    assert nested.evaluate({"objects": list(range(50))}) is True
    with pytest.raises(CelEvalError) as err:
        nested.evaluate({"objects": list(range(200))})
    assert str(err.value) == ("iteration budget exceeded: more than 10000 comprehension iterations in one evaluation")
    single = compile_expression("objects.all(a, a >= 0)")
    assert single.evaluate({"objects": list(range(9999))}) is True
    with pytest.raises(CelEvalError, match="iteration budget exceeded"):
        single.evaluate({"objects": list(range(10_000))})


@needs_runtime
def test_unreferenced_and_unknown_activation_keys_are_ignored() -> None:
    program = compile_expression("object.kind == 'Job'", variables=("object",))
    assert program.evaluate({"object": {"kind": "Job"}, "extra": object()}) is True


@needs_runtime
def test_non_boolean_results_are_plain_python() -> None:
    assert ev("{'a': [1, 2.5, null, true]}") == {"a": [1, 2.5, None, True]}
