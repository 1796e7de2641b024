"""Custom rules written in CEL, evaluated with the cel-expr-python runtime.

The runtime (Google's C++ CEL behind a Python binding) is imported lazily, on
the first compile. Expressions are type-checked at compile time against the
declared variables (all `dyn`), so a typo in a variable or function name fails
at load. Evaluation follows Kubernetes' CEL: reading a missing map key is an
error, not false; `has()` is the way to test presence.

Libraries: CEL standard functions and macros, the cel-go `strings` and
`optional` extensions, the Kubernetes `quantity` library and the Kubernetes
list functions `isSorted`, `sum`, `min`, `max`.

Cost: expressions are at most MAX_EXPRESSION_LENGTH code points, and the
runtime ends any evaluation that runs more than MAX_ITERATIONS comprehension
iterations in total (nested ones included). Activation values are read, never
changed. A caller that evaluates many programs over the same values passes one
``converted`` dict to :meth:`CelProgram.evaluate`, where their converted copies
are remembered by identity (celcheck keeps one per file, in the rules'
Context): it must not mutate a value while that dict lives.
"""

from __future__ import annotations

import datetime
import functools
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

DEFAULT_VARIABLES = ("object", "podSpec", "container", "volume", "objects", "profile")
# Code points an expression may have: cel-go's default parser limit, which the Kubernetes API server
# keeps for ValidatingAdmissionPolicies and CRD rules (and cel-cpp's own).
MAX_EXPRESSION_LENGTH = 100_000
# The runtime stops an evaluation at this many comprehension iterations in
# total (a fixed limit of cel-expr-python; observed, not configurable).
MAX_ITERATIONS = 10_000

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_NANO = 10**9
_STATUS = re.compile(r"^[A-Z_]+: ")  # status code the runtime puts first
_STATUS_TAG = re.compile(r" \[[A-Z_]+\]$")  # ... and last


class CelCompileError(Exception):
    """The expression does not parse or type-check; str() is one line."""


class CelEvalError(Exception):
    """Evaluation failed: missing key, type error, bad quantity, cost exceeded."""


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """True when the CEL runtime can be imported."""
    try:
        from cel_expr_python import cel  # noqa: F401
    except ImportError:
        return False
    return True


# --- Kubernetes quantities ---------------------------------------------------


def parse_quantity_nanos(text: str) -> int:
    """A Kubernetes quantity as an exact integer count of nano-units.

    The grammar, rounding and caps are those of ``resource.ParseQuantity``
    (``kubelint_ml.k8s.quantity``). Raises ValueError.
    """
    from kubelint_ml.k8s.quantity import QuantityError, parse_quantity

    try:
        value = parse_quantity(text).value
    except QuantityError as e:
        raise ValueError(f"invalid quantity {text!r}: {e}") from None
    return int(value * _NANO)  # already a whole number of nano-units


def format_nanos(nanos: int) -> str:
    """Decimal rendering of a nano count: 1536 -> '0.000001536', 5*10**8 -> '0.5'."""
    sign = "-" if nanos < 0 else ""
    whole, frac = divmod(abs(nanos), _NANO)
    if not frac:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{frac:09d}".rstrip("0")


# kubernetes.Quantity is a one-field protobuf message (field `nanos`: decimal
# string), so that CEL sees a distinct type and `==` compares values.
_QUANTITY_FILE = (
    b'\n\x17kubelint/quantity.proto\x12\nkubernetes"\x19\n\x08Quantity\x12\r\n\x05nanos\x18\x01 \x01(\tb\x06proto3'
)


@functools.lru_cache(maxsize=1)
def _quantity_pool() -> tuple[Any, Any]:
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(_QUANTITY_FILE)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("kubernetes.Quantity"))
    return pool, cls


def _quantity_functions() -> list[Any]:
    from cel_expr_python import cel

    _, qcls = _quantity_pool()
    Q = cel.Type("kubernetes.Quantity")
    T = cel.Type

    def make(nanos: int) -> Any:
        return qcls(nanos=str(nanos))

    def n(q: Any) -> int:
        return int(q.nanos or "0")

    def quantity(s: str) -> Any:
        return make(parse_quantity_nanos(s))

    def is_quantity(s: str) -> bool:
        try:
            parse_quantity_nanos(s)
        except ValueError:
            return False
        return True

    def cmp(a: Any, b: Any) -> int:
        if not hasattr(a, "nanos"):  # a Semver (engine.cellibs): its overloads share these implementations
            from kubelint_ml.engine.cellibs import compare_semver

            return compare_semver(a, b)
        x, y = n(a), n(b)
        return (x > y) - (x < y)

    def sign(q: Any) -> int:
        v = n(q)
        return (v > 0) - (v < 0)

    def is_integer(q: Any) -> bool:
        v = n(q)
        return v % _NANO == 0 and _INT64_MIN <= v // _NANO <= _INT64_MAX

    def as_integer(q: Any) -> int:
        if not is_integer(q):
            raise ValueError("cannot convert value to integer")
        return n(q) // _NANO

    def member(name: str, oid: str, ret: Any, params: list[Any], impl: Any) -> tuple[str, Any]:
        return name, cel.Overload(oid, ret, params, is_member=True, impl=impl)

    return [
        ("quantity", cel.Overload("string_to_quantity", Q, [T.STRING], impl=quantity)),
        ("isQuantity", cel.Overload("is_quantity_string", T.BOOL, [T.STRING], impl=is_quantity)),
        ("sign", cel.Overload("quantity_sign", T.INT, [Q], impl=sign)),
        member("sign", "quantity_sign_member", T.INT, [Q], sign),
        member("isGreaterThan", "quantity_is_greater_than", T.BOOL, [Q, Q], lambda a, b: cmp(a, b) == 1),
        member("isLessThan", "quantity_is_less_than", T.BOOL, [Q, Q], lambda a, b: cmp(a, b) == -1),
        member("compareTo", "quantity_compare_to", T.INT, [Q, Q], cmp),
        member("asApproximateFloat", "quantity_get_float", T.DOUBLE, [Q], lambda q: n(q) / _NANO),
        member("asInteger", "quantity_get_int", T.INT, [Q], as_integer),
        member("isInteger", "quantity_is_integer", T.BOOL, [Q], is_integer),
        member("add", "quantity_add", Q, [Q, Q], lambda a, b: make(n(a) + n(b))),
        member("add", "quantity_add_int", Q, [Q, T.INT], lambda a, i: make(n(a) + i * _NANO)),
        member("sub", "quantity_sub", Q, [Q, Q], lambda a, b: make(n(a) - n(b))),
        member("sub", "quantity_sub_int", Q, [Q, T.INT], lambda a, i: make(n(a) - i * _NANO)),
    ]


# --- Kubernetes list functions ----------------------------------------------


def _list_functions() -> list[Any]:
    from cel_expr_python import cel

    L = cel.Type.List(cel.Type.DYN)

    def need(items: list[Any]) -> list[Any]:
        if not items:
            raise ValueError("list is empty")
        return items

    def decl(name: str, ret: Any, impl: Any) -> tuple[str, Any]:
        return name, cel.Overload(f"list_{name}", ret, [L], is_member=True, impl=impl)

    return [
        decl("isSorted", cel.Type.BOOL, lambda xs: all(a <= b for a, b in zip(xs, xs[1:]))),
        decl("sum", cel.Type.DYN, lambda xs: sum(xs)),
        decl("min", cel.Type.DYN, lambda xs: min(need(xs))),
        decl("max", cel.Type.DYN, lambda xs: max(need(xs))),
    ]


@functools.lru_cache(maxsize=32)
def _env(variables: tuple[str, ...], with_quantity: bool, with_libraries: bool = False) -> Any:
    """An environment; ``with_libraries``: the Kubernetes url, ip, cidr, semver, regex and sets
    libraries and Kyverno's offline ones (``kubelint_ml.engine.cellibs``)."""
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_optional, ext_strings

    overloads = _list_functions()
    pool = None
    if with_quantity or with_libraries:
        pool = _quantity_pool()[0]
        overloads += _quantity_functions()
    if with_libraries:
        from kubelint_ml.engine import cellibs

        cellibs.add_types(pool)
        overloads += cellibs.functions()
        if "resource" in variables:
            overloads += cellibs.resource_functions()
    by_name: dict[str, list[Any]] = {}
    for name, overload in overloads:
        by_name.setdefault(name, []).append(overload)
    extensions = [ext_strings.ExtStrings(), ext_optional.ExtOptional()]
    if with_libraries:  # as Kubernetes' and Kyverno's environments: cel.bind, base64, math.*
        from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math

        extensions += [ext_bindings.ExtBindings(), ext_encoders.ExtEncoders(), ext_math.ExtMath()]
    return cel.NewEnv(
        pool,
        variables={name: cel.Type.DYN for name in variables},
        extensions=extensions,
        functions=[cel.FunctionDecl(name, found) for name, found in by_name.items()],
    )


# --- activation conversion ----------------------------------------------------


def to_cel_value(value: Any) -> Any:
    """A plain dict/list/str/int/float/bool/None copy the runtime accepts.

    Dict and list subclasses become dict and list, timestamps become ISO
    strings (as Kubernetes sees them), integers outside int64 become floats.
    """
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        if _INT64_MIN <= value <= _INT64_MAX:
            return value
        try:
            return float(value)
        except OverflowError:  # beyond ~1.8e308
            return float("inf") if value > 0 else float("-inf")
    if isinstance(value, Mapping):
        return {str(k): to_cel_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_cel_value(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# Converted values a ``converted`` dict keeps: a few objects' worth (an object's own
# values are converted again and again, one unit and one rule after another).
CONVERTED_KEPT = 64


def _convert(value: Any, converted: dict[int, tuple[Any, Any]] | None) -> Any:
    """to_cel_value, remembered in ``converted`` for the same (unchanged) input object.

    Keyed by identity, with the object itself held so that its id cannot be
    reused while the entry lives.
    """
    if converted is None or not isinstance(value, (Mapping, list, tuple)):
        return to_cel_value(value)
    hit = converted.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    out = to_cel_value(value)
    if len(converted) >= CONVERTED_KEPT:
        converted.pop(next(iter(converted)))
    converted[id(value)] = (value, out)
    return out


def _one_line(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else "unknown error"
    first = _STATUS_TAG.sub("", _STATUS.sub("", first)).removeprefix("ERROR: ")
    if first == "Iteration budget exceeded":
        return f"iteration budget exceeded: more than {MAX_ITERATIONS} comprehension iterations in one evaluation"
    return first.replace("<input>:", "", 1)


# --- programs ------------------------------------------------------------------


class CelProgram:
    """A compiled expression, ready to evaluate against many activations."""

    __slots__ = ("source", "variables", "_expr", "budgeted", "env")

    def __init__(self, source: str, variables: tuple[str, ...], expr: Any, env: Any = None) -> None:
        self.source = source
        self.variables = variables
        self._expr = expr
        self.env = env  # the environment it was compiled in (its Activations serve all its programs)
        # Whether its cost can exceed a few passes over the input (see needs_budget).
        self.budgeted = needs_budget(source)

    def __repr__(self) -> str:
        return f"CelProgram({self.source!r})"

    def evaluate(self, activation: Mapping[str, object], converted: dict[int, tuple[Any, Any]] | None = None) -> object:
        """The expression's value as a plain Python value; raises CelEvalError.

        ``converted``: where the runtime's copies of the activation's values are
        remembered between evaluations (see the module's docstring); none by default.
        An expression that may build large values is evaluated in the budgeted helper
        process (``celsandbox``) where there is one.
        """
        data = {k: _convert(v, converted) for k, v in activation.items() if k in self.variables}
        sandbox = _sandbox() if self.budgeted else None
        if sandbox is None:
            return self.evaluate_here(data)
        from kubelint_ml.engine.celsandbox import SandboxFailure

        try:
            return sandbox.evaluate(self.source, self.variables, data)
        except SandboxFailure as exc:
            raise CelEvalError(str(exc)) from None
        except ValueError as exc:
            raise CelEvalError(str(exc)) from None

    def evaluate_here(self, data: Mapping[str, object], activation: Any = None, plain: bool = False) -> object:
        """Evaluate in this process, on already converted values (iteration budget only).
        ``activation``: an Activation of ``self.env`` holding them, reused by several programs
        of one environment (much cheaper than converting ``data`` at each evaluation).
        ``plain``: the runtime's own value, Quantities left as messages (for a value that goes
        back into an Activation, not to the caller)."""
        from cel_expr_python import cel

        try:
            result = self._expr.eval(activation=activation) if activation is not None else self._expr.eval(data=data)
        except Exception as exc:  # the binding raises for bad activations
            raise CelEvalError(_one_line(str(exc))) from None
        if result.type() == cel.Type.ERROR:
            raise CelEvalError(_one_line(str(result.value())))
        return result.plain_value() if plain else _to_python(result.plain_value())


@functools.lru_cache(maxsize=256)
def _helper_program(source: str, variables: tuple[str, ...]) -> CelProgram:
    program = compile_expression(source, variables)
    program.variables = variables
    return program


def _evaluate_in_helper(source: str, variables: tuple[str, ...], data: dict) -> object:
    """What the helper process runs for one request (it compiles each expression once)."""
    return _helper_program(source, variables).evaluate_here(data)


_SANDBOX: list = []


def _sandbox() -> Any:
    """The helper-process evaluator of this process, or None where processes cannot be forked."""
    return sandbox_for(_SANDBOX, _evaluate_in_helper)


def sandbox_for(holder: list, evaluate: Any) -> Any:
    """The helper process running ``evaluate`` (kept in ``holder``, started on first use), or None
    where processes cannot be forked or with KUBELINT_ML_CEL_IN_PROCESS=1."""
    if not holder:
        if not hasattr(os, "fork") or os.environ.get("KUBELINT_ML_CEL_IN_PROCESS") == "1":
            holder.append(None)
        else:
            from kubelint_ml.engine.celsandbox import Sandbox

            holder.append(Sandbox(evaluate))
    return holder[0]


def _to_python(value: Any) -> Any:
    if isinstance(value, dict):
        return {_to_python(k): _to_python(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_python(v) for v in value]
    nanos = getattr(value, "nanos", None)
    if isinstance(nanos, str):  # kubernetes.Quantity
        return format_nanos(int(nanos or "0"))
    return value


# CEL string literals (raw, bytes, triple-quoted), removed before the source is read for calls.
_STRING_LITERAL = re.compile(
    r'[rRbB]{0,2}(?:"""[\s\S]*?"""' r"|'''[\s\S]*?'''" r'|"(?:\\.|[^"\\\n])*"' r"|'(?:\\.|[^'\\\n])*')"
)
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
# Calls whose cost is one pass over their arguments at most and which build no large value:
# an expression made only of these (and operators other than `+`) costs at most its number of
# operations times the size of the input, and allocates little.
_CHEAP_CALLS = frozenset(
    (
        "has",
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "int",
        "uint",
        "double",
        "bool",
        "type",
        "dyn",
        "isQuantity",
        "quantity",
        "sign",
        "isGreaterThan",
        "isLessThan",
        "compareTo",
        "asApproximateFloat",
        "asInteger",
        "isInteger",
        "isSorted",
        "sum",
        "min",
        "max",
        "hasValue",
        "orValue",
    )
)


def needs_budget(source: str) -> bool:
    """Whether an expression is evaluated under the memory and time budget (``celsandbox``).

    Estimated once, from the source: any comprehension (``all``, ``map``, ...: up to
    MAX_ITERATIONS passes), any `+` (string and list concatenation), and any call outside
    the cheap set (``replace``, ``join``, ``format``, ``split``, ``lowerAscii``, ``string``,
    ...: they build new values, and chained they grow exponentially) put it under the budget.
    The rest runs in this process: each operation is at most one pass over the input.
    """
    code = _STRING_LITERAL.sub('""', source)
    if "+" in code:
        return True
    return any(name not in _CHEAP_CALLS for name in _CALL.findall(code))


def _uses_quantity(source: str) -> bool:
    return "uantity" in source


def compile_expression(
    source: str, variables: Sequence[str] = DEFAULT_VARIABLES, libraries: bool = False
) -> CelProgram:
    """Parse and type-check `source`; raises CelCompileError (one line). ``libraries``: compile in
    the environment with every library (quantity, url, ip, cidr, semver, ...), whichever the
    source uses, so that programs compiled so share one environment (and its Activations)."""
    if not isinstance(source, str) or not source.strip():
        raise CelCompileError("expression is empty")
    if len(source) > MAX_EXPRESSION_LENGTH:
        raise CelCompileError(
            f"expression is {len(source)} code points long, more than {MAX_EXPRESSION_LENGTH} (the CEL parser's limit)"
        )
    if not available():
        raise CelCompileError("CEL runtime not installed (needs Python >= 3.11 and the cel-expr-python package)")
    names = tuple(variables)
    from kubelint_ml.engine.cellibs import uses_libraries

    env = _env(names, True, True) if libraries else _env(names, _uses_quantity(source), uses_libraries(source))
    try:
        expr = env.compile(source)
    except Exception as exc:
        raise CelCompileError(_one_line(str(exc))) from None
    # Only the variables the source names are converted at each evaluation. CEL has no
    # dynamic lookup, so a word test can only keep too many, never too few.
    used = tuple(n for n in names if re.search(rf"\b{re.escape(n)}\b", source))
    return CelProgram(source, used, expr, env)
