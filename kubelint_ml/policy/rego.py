"""The Rego engine, behind one small interface so that it can be swapped.

Engine: ``gordon-to-regorus`` (a Rust Rego interpreter with Rego v0 and v1;
see the README's Dependencies section for why). Everything else in
``kubelint_ml.policy`` talks to :class:`Modules` and :class:`Evaluator` only.

- Rego v1 or v0 is chosen per file as OPA 1.x does for mixed inputs: a file
  is read as v1, and read as v0 when it does not parse as v1.
- Built-ins that reach outside the policy (network, clock, randomness,
  runtime) are refused when the file is loaded: see :data:`FORBIDDEN`.
- Rules are evaluated one at a time (``data.<package>.<rule>``), never a whole
  package: rules of one package spread over several files are all seen.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from kubelint_ml.policy.builtins import EXTENSIONS
from kubelint_ml.policy.gofmt import rego_order, rego_string, sprintf

# The interpreter's errors carry a captured backtrace unless told not to: slow and useless here.
os.environ.setdefault("RUST_LIB_BACKTRACE", "0")

ENGINE = "gordon-to-regorus"

# Built-ins that are non-deterministic or reach the network: a policy that calls one is refused.
FORBIDDEN = frozenset(
    {
        "http.send",
        "net.lookup_ip_addr",
        "time.now_ns",
        "opa.runtime",
        "rand.intn",
        "uuid.rfc4122",
        "io.jwt.decode_verify",
        "providers.aws.sign_req",
        "crypto.x509.parse_and_verify_certificates",
    }
)

_LOCATION = re.compile(r"-->\s*(?P<file>.*?):(?P<line>\d+):(?P<col>\d+)")
_FUTURE = re.compile(r"^\s*import\s+future\.keywords\b", re.M)
_REGO_V1 = re.compile(r"^\s*import\s+rego\.v1\b", re.M)
_COMMENT_OR_STRING = re.compile(r'#[^\n]*|"(?:[^"\\\n]|\\.)*"|`[^`]*`')
_ERROR = re.compile(r"^error:\s*(?P<msg>.*)$", re.M)


class RegoError(Exception):
    """A policy that cannot be used: a syntax or compile error, with its position."""

    def __init__(self, path: str, line: int, column: int, message: str) -> None:
        super().__init__(f"{path}:{line}:{column}: {message}")
        self.path, self.line, self.column, self.message = path, line, column, message


class EvalError(Exception):
    """An evaluation that failed (a runtime error in the policy)."""


def _engine() -> Any:
    import regorus

    engine = regorus.Engine()
    engine.add_extension("sprintf", 2, _sprintf)
    engine.add_extension(GUARD, 2, _guard)
    engine.add_extension(SPRINTF_JSON, 2, _sprintf_json)
    for name, (nargs, fn) in EXTENSIONS.items():
        engine.add_extension(name, nargs, fn)
    return engine


def _sprintf_json(fmt: Any, args: Any) -> str:
    """``sprintf`` for arguments the interpreter cannot hand to Python (sets of objects or sets):
    each argument comes as ``[json, is_set]``. OPA passes a set to Go's fmt as its Rego text."""
    values: list[Any] = []
    for text, is_set in args:
        v = json.loads(text)
        if is_set:
            v = "{" + ", ".join(rego_string(x) for x in sorted(v, key=rego_order)) + "}" if v else "set()"
        values.append(v)
    return sprintf(str(fmt), values)


def _sprintf(fmt: Any, args: Any) -> str:
    """OPA's ``sprintf`` (Go's fmt), in place of the interpreter's own."""
    if not isinstance(fmt, str):
        raise TypeError(f"sprintf: operand 1 must be string but got {type(fmt).__name__}")
    if not isinstance(args, (list, tuple)):
        raise TypeError("sprintf: operand 2 must be array")
    return sprintf(fmt, list(args))


# Non-strict built-in errors (OPA's default, conftest's and Gatekeeper's): a built-in call that
# fails makes its expression undefined. The interpreter always fails the evaluation instead, so a
# call (or an arithmetic expression) that failed once is rewritten, in this evaluator's copy of the
# module, into a call of a generated function that gives the built-in's value when the built-in
# succeeds on those arguments and is undefined when it fails (GUARD tries it on a side engine).
NONSTRICT = "kubelint_nonstrict"
GUARD = "kubelint_builtin_ok"
SPRINTF_JSON = "kubelint_sprintf_json"
MAX_REWRITES = 64  # per evaluator: a policy with more failing sites keeps failing as errors
# Built-ins whose errors the interpreter reports without a position.
UNLOCATED = frozenset({"time.parse_rfc3339_ns", "time.parse_ns", "time.parse_duration_ns", "net.cidr_expand"})
_OPS = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%", "Union": "|", "Intersection": "&"}
# The side engine, one per thread: an engine is used, and dropped, on the thread that made it.
_sides = threading.local()


def _guard(name: Any, args: Any) -> bool:
    """Whether the built-in (or operator) ``name`` succeeds on ``args``: ``[json, is_set]`` pairs."""
    import regorus

    side = getattr(_sides, "engine", None)
    if side is None:
        side = _sides.engine = regorus.Engine()
        side.add_extension("sprintf", 2, _sprintf)
        for ext, (nargs, fn) in EXTENSIONS.items():
            side.add_extension(ext, nargs, fn)
    values = [
        f"{{v | some v in json.unmarshal(input[{i}][0])}}" if a[1] else f"json.unmarshal(input[{i}][0])"
        for i, a in enumerate(args)
    ]
    name = str(name)
    call = f" {name} ".join(values) if name in _OPS.values() else f"{name}({', '.join(values)})"
    try:
        side.set_input_json(json.dumps(args))
        side.eval_query(f"__x := {call}")
    except Exception:  # noqa: BLE001 - a failing built-in is the answer
        return False
    return True


def error_parts(text: str, default_path: str = "") -> tuple[str, int, int, str]:
    """``(file, line, column, message)`` from one of the interpreter's error texts."""
    text = text.split("Stack backtrace:", 1)[0]
    loc = _LOCATION.search(text)
    msg = _ERROR.search(text)
    message = msg.group("msg").strip() if msg else " ".join(text.split())[:300]
    if loc:
        return loc.group("file"), int(loc.group("line")), int(loc.group("col")), message
    return default_path, 1, 1, message


@dataclass(slots=True)
class Module:
    """One parsed Rego file."""

    path: str
    text: str
    package: str
    v0: bool
    rules: dict[str, int] = field(default_factory=dict)  # rule name -> line of its first definition
    imports: tuple[str, ...] = ()


def _ref_name(node: Any) -> str:
    """Dotted name of a Var / RefDot reference in the interpreter's AST."""
    if not isinstance(node, dict):
        return ""
    if "Var" in node:
        return str(node["Var"].get("value", ""))
    if "RefDot" in node:
        inner = node["RefDot"]
        base = _ref_name(inner.get("refr"))
        fld = inner.get("field")
        name = fld[1] if isinstance(fld, list) and len(fld) > 1 else ""
        return f"{base}.{name}" if base else str(name)
    if "RefBrack" in node:
        return _ref_name(node["RefBrack"].get("refr"))
    return ""


def _calls(node: Any) -> Iterator[tuple[str, int, int]]:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            call = n.get("Call")
            if isinstance(call, dict):
                name = _ref_name(call.get("fcn"))
                span = call.get("span") or {}
                yield name, int(span.get("line", 1)), int(span.get("col", 1))
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)


def _head_name(rule: dict) -> tuple[str, int]:
    spec = rule.get("Spec") or rule.get("Default") or {}
    if "Default" in rule:
        spec = rule["Default"]
        return _ref_name(spec.get("refr")).split(".")[0], int((spec.get("span") or {}).get("line", 1))
    head = spec.get("head") or {}
    for kind in ("Set", "Compr", "Func"):
        if kind in head:
            h = head[kind]
            return _ref_name(h.get("refr")).split(".")[0], int((h.get("span") or {}).get("line", 1))
    return "", 1


def _v1_like(text: str) -> bool:
    """Whether a file that parses in neither version is written in v1 (its errors are v1 errors)."""
    if _REGO_V1.search(text):
        return True
    code = _COMMENT_OR_STRING.sub(" ", text)
    return not _FUTURE.search(text) and bool(re.search(r"\b(contains|if)\b", code))


def normalise(text: str) -> str:
    """Two constructs the interpreter reads differently from OPA, written the way OPA reads them
    (line numbers stay):

    - rules with several bodies (``head { a } { b }``, Rego v0) as one rule per body
      (``head { a } head { b }``); the interpreter reads the second body as an ``else``;
    - in a rule body, a line that starts with ``(`` after a line that ends an expression is a new
      expression (a new line ends one in OPA); the interpreter reads it as a call of the previous
      line, so a ``;`` is put at the end of that line.
    """
    out: list[str] = []
    depth = 0
    i, n = 0, len(text)
    line_start = 0  # where the current top-level statement's line begins (in text)
    head = ""
    last = ""  # the last significant character at depth 0
    opened_body = closed_body = False
    last_any = ""  # the last significant character at any depth
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = j
            continue
        if c in '"`':
            j = i + 1
            while j < n and text[j] != c:
                if c == '"' and text[j] == "\\":
                    j += 1
                if c == '"' and text[j] == "\n":
                    break
                j += 1
            out.append(text[i : j + 1])
            i = j + 1
            if depth == 0:
                last = c
            last_any = c
            continue
        if c == "\n" and depth == 1 and opened_body and (last_any.isalnum() or last_any in '_])"`'):
            rest = text[i + 1 : i + 200].lstrip(" \t")
            if rest.startswith("("):
                out.append(";")
        if c == "\n" and depth == 0 and i + 1 < n and text[i + 1] not in " \t\n{}":
            line_start = i + 1
        if c in "{[(":
            if c == "{" and depth == 0:
                opened_body = last != "="  # `p = {...}` / `p := {...}`: a value, not a body
                if last == "}" and closed_body and head:
                    out.append(head + " ")
                elif opened_body:
                    head = " ".join(text[line_start:i].split())
            depth += 1
        elif c in "}])":
            depth = max(0, depth - 1)
            if c == "}" and depth == 0:
                closed_body = opened_body
        if depth == 0 and not c.isspace():
            last = c
        if not c.isspace():
            last_any = c
        out.append(c)
        i += 1
    return "".join(out)


_CALL_KINDS = ("Call", "ArithExpr", "BinExpr")
_COMPOSITES = ("Array", "Object", "Set")


def _kind(node: Any) -> tuple[str, dict]:
    if isinstance(node, dict) and len(node) == 1:
        k, v = next(iter(node.items()))
        if isinstance(v, dict):
            return k, v
    return "", {}


def _dynamic(node: Any) -> bool:
    """Whether a term holds a reference or a call (it may be undefined)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if any(k in n for k in ("RefDot", "RefBrack", *_CALL_KINDS)):
                return True
            if any(k in n for k in ("ArrayCompr", "SetCompr", "ObjectCompr")):
                continue
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)
    return False


def _has_wildcard(node: Any) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            var = n.get("Var")
            if isinstance(var, dict) and var.get("value") == "_":
                return True
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)
    return False


def _dicts(root: Any) -> Iterator[dict]:
    """Every dict of an AST, parents before their children."""
    stack = [root]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(reversed(n))
        elif isinstance(n, dict):
            yield n
            stack.extend(n.values())


def _rewritten(path: str, text: str, v0: bool, tree: dict | None, rewrite: Any) -> str:
    """``rewrite(text, tree)`` when the result still parses (else the text as it was); ``tree``
    ``None``: the text's own, parsed here."""
    if tree is None:
        engine = _engine()
        engine.set_rego_v0(v0)
        try:
            engine.add_policy(path, text)
        except Exception:  # noqa: BLE001
            return text
        tree = json.loads(engine.get_ast_as_json())[0]["ast"]
    new = rewrite(text, tree)
    if new == text:
        return text
    check = _engine()
    check.set_rego_v0(v0)
    try:
        check.add_policy(path, new)
    except Exception:  # noqa: BLE001 - a form the rewrite does not know: left as written
        return text
    return str(new)


def qualify_with_targets(text: str, tree: dict, package: str, rules: dict[str, int]) -> str:
    """``with allowed as [...]`` names a rule of the package (or an import) as OPA resolves it; the
    interpreter needs the full ``data.<package>.allowed``. Same length of lines: the name grows
    in place."""
    data = text.encode()
    aliases: dict[str, str] = {}
    for imp in tree.get("imports", []):
        if not isinstance(imp, dict):
            continue
        path = _ref_name(imp.get("refr"))
        alias = imp.get("as")
        if isinstance(alias, dict) and "start" in alias:
            name = data[int(alias["start"]) : int(alias["end"])].decode().strip()
        elif isinstance(alias, list) and len(alias) > 1 and isinstance(alias[1], str):
            name = alias[1]
        else:
            name = path.rsplit(".", 1)[-1]
        if path.startswith("data.") and name:
            aliases[name] = path
    edits: list[tuple[int, int, bytes]] = []
    for n in _dicts(tree.get("rules", [])):
        for mod in n.get("with_mods") or []:
            root: Any = mod.get("refr") if isinstance(mod, dict) else None
            while isinstance(root, dict) and ("RefDot" in root or "RefBrack" in root):
                root = (root.get("RefDot") or root.get("RefBrack") or {}).get("refr")
            var = root.get("Var") if isinstance(root, dict) else None
            if not isinstance(var, dict) or not isinstance(var.get("span"), dict):
                continue
            name = str(var.get("value"))
            full = aliases.get(name) or (f"data.{package}.{name}" if name in rules else None)
            if full:
                sp = var["span"]
                edits.append((int(sp["start"]), int(sp["end"]), full.encode()))
    for start, end, new in sorted(set(edits), reverse=True):
        data = data[:start] + new + data[end:]
    return data.decode()


def hoist_negated(text: str, tree: dict) -> str:
    """OPA evaluates the arguments of a call in a negated expression before the negation (its
    compiler binds refs, composites holding refs and nested calls to variables first): when one is
    undefined, ``not f(input.missing)`` is undefined, not true. ``==`` keeps a plain ref operand
    inside (``not input.missing == 1`` is true). The interpreter negates the whole expression, so
    those arguments are bound before the ``not`` here, in the same line: ``x := input.missing;
    not f(x)`` (with the expression's ``with`` modifiers, if any)."""
    data = text.encode()
    edits: list[tuple[int, int, bytes]] = []
    count = 0
    inline: set[int] = set()  # queries of comprehensions: `[x | a; b]` needs no braces
    for n in _dicts(tree.get("rules", [])):
        for compr in ("ArrayCompr", "SetCompr", "ObjectCompr"):
            if isinstance(n.get(compr), dict):
                inline.add(id(n[compr].get("query")))
        stmts = n.get("stmts")
        qspan = n.get("span")
        if not isinstance(stmts, list) or not isinstance(qspan, dict):
            continue
        wrapped = False
        for stmt in stmts:
            prefix, args = _hoisted(data, stmt, count)
            if not prefix:
                continue
            count += len(args)
            edits.extend(args)
            start = int(stmt["span"].get("start", 0))
            edits.append((start, start, prefix))
            first = data[int(qspan.get("start", 0)) : int(qspan.get("start", 0)) + 1]
            if not wrapped and id(n) not in inline and first != b"{":
                # a body without braces (`r if not f(x)`) gets them: two statements need them
                wrapped = True
                edits.append((int(qspan["start"]), int(qspan["start"]), b"{ "))
                edits.append((int(qspan["end"]), int(qspan["end"]), b" }"))
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        data = data[:start] + new + data[end:]
    return data.decode()


def _hoisted(data: bytes, stmt: Any, count: int) -> tuple[bytes, list[tuple[int, int, bytes]]]:
    """For one statement: the assignments to put before it and the edits of its arguments."""
    if not isinstance(stmt, dict) or not isinstance(stmt.get("span"), dict):
        return b"", []
    literal = stmt.get("literal")
    neg = literal.get("NotExpr") if isinstance(literal, dict) else None
    if not isinstance(neg, dict):
        return b"", []
    # the bound arguments are evaluated under the expression's `with` modifiers, as in OPA
    mods = [_span({"With": w}) for w in stmt.get("with_mods") or []]
    if any(m is None for m in mods):
        return b"", []
    suffix = b"".join(b" " + data[m[0] : m[1]] for m in mods if m)
    kind, node = _kind(neg.get("expr"))
    keep_refs = False
    if kind == "Call":
        args = list(node.get("params") or [])
    elif kind == "BoolExpr":
        args, keep_refs = [node.get("lhs"), node.get("rhs")], node.get("op") == "Eq"
    elif kind in ("ArithExpr", "BinExpr"):
        args = [node.get("lhs"), node.get("rhs")]
    elif kind == "Membership":
        args = [x for x in (node.get("key"), node.get("value"), node.get("collection")) if x]
    else:
        return b"", []
    prefix = b""
    edits: list[tuple[int, int, bytes]] = []
    for arg in args:
        ak, _ = _kind(arg)
        hoist = (ak in ("RefDot", "RefBrack") and not keep_refs) or (ak in _CALL_KINDS + _COMPOSITES and _dynamic(arg))
        sp = _span(arg)
        if not hoist or not sp or _has_wildcard(arg):
            continue
        piece = data[sp[0] : sp[1]]
        if b"\n" in piece or not _balanced(piece):
            continue
        name = f"__kubelint_not{count + len(edits)}".encode()
        prefix += name + b" := " + piece + suffix + b"; "
        edits.append((sp[0], sp[1], name))
    return prefix, edits


def _balanced(piece: bytes) -> bool:
    depth = 0
    quote = 0
    escaped = False
    for c in piece:
        if quote:
            if escaped:
                escaped = False
            elif c == 0x5C and quote == 0x22:
                escaped = True
            elif c == quote:
                quote = 0
            continue
        if c in (0x22, 0x60):
            quote = c
        elif c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0 and not quote


def parse(path: str, text: str, v0_default: bool = False) -> Module:
    """Parse one file; :class:`RegoError` names the file, line and column.

    ``import rego.v1`` means v1; ``import future.keywords`` (without it) means a
    v0 file written for v1 keywords; otherwise v1 when the file parses as v1,
    else v0.
    """
    errors: dict[bool, RegoError] = {}
    v0_first = (v0_default or bool(_FUTURE.search(text))) and not _REGO_V1.search(text)
    for v0 in (True, False) if v0_first else (False, True):
        engine = _engine()
        engine.set_rego_v0(v0)
        source = normalise(text)
        try:
            engine.add_policy(path, source)
        except Exception as e:  # noqa: BLE001 - the interpreter raises RuntimeError with a rendered message
            errors[v0] = RegoError(*error_parts(str(e), path))
            continue
        tree = json.loads(engine.get_ast_as_json())[0]["ast"]
        package = _ref_name(tree["package"]["refr"])
        rules: dict[str, int] = {}
        for r in tree.get("rules", []):
            name, line = _head_name(r)
            if name and name not in rules:
                rules[name] = line
        for name, line, col in _calls(tree.get("rules", [])):
            if name in FORBIDDEN:
                raise RegoError(
                    path,
                    line,
                    col,
                    f"built-in {name} is not available: policies run offline, without network, clock or randomness",
                )
        imports = tuple(_ref_name(i.get("refr")) for i in tree.get("imports", []) if isinstance(i, dict))
        source = _rewritten(path, source, v0, tree, hoist_negated)
        source = _rewritten(path, source, v0, None, partial(qualify_with_targets, package=package, rules=rules))
        return Module(path, source, package, v0, rules, imports)
    # Report the error of the syntax the file is written in: v1 keywords without future imports mean v1.
    raise errors[False] if _v1_like(text) else errors[True]


class Evaluator:
    """Compiled modules and data, evaluated one rule at a time against an input.

    ``strict``: a built-in error fails the evaluation (OPA's strict mode, conftest's
    ``--show-builtin-errors``); otherwise it makes its expression undefined, as OPA does by default.
    """

    def __init__(self, modules: list[Module], data: dict | None = None, strict: bool = False) -> None:
        self.modules = modules
        self.strict = strict
        self._texts = {m.path: m.text.encode() for m in modules}
        self._wrappers: list[str] = []
        self._asts: dict[str, Any] | None = None
        self._functions: set[str] | None = None
        self._unlocated_done = False
        self._data = json.dumps(data or {})
        self._input: str | None = None
        self._build()

    def _build(self) -> None:
        engine = _engine()
        for m in self.modules:
            engine.set_rego_v0(m.v0)
            try:
                engine.add_policy(m.path, self._texts[m.path].decode())
            except Exception as e:  # noqa: BLE001
                raise RegoError(*error_parts(str(e), m.path)) from None
        if self._wrappers:
            engine.set_rego_v0(False)
            engine.add_policy(f"{NONSTRICT}.rego", f"package {NONSTRICT}\n\n" + "\n".join(self._wrappers) + "\n")
        if self._data != "{}":
            engine.add_data_json(self._data)
        if self._input is not None:
            engine.set_input_json(self._input)
        self._engine = engine
        self._asts = None

    def _nodes(self, path: str) -> list[tuple[int, int, str, dict]]:
        """``(start, end, kind, node)`` of the calls, operators and ``some .. in`` collections of one
        module (byte offsets)."""
        if self._asts is None:
            trees = json.loads(self._engine.get_ast_as_json())
            self._asts = {}
            funcs: set[str] = set()
            for t in trees:
                ast = t.get("ast") or {}
                self._asts[str((t.get("source") or {}).get("file") or "")] = ast
                for r in ast.get("rules", []):
                    head = ((r.get("Spec") or {}).get("head") or {}).get("Func")
                    if head:
                        funcs.add(_ref_name(head.get("refr")).split(".")[-1])
            self._functions = funcs
        out: list[tuple[int, int, str, dict]] = []
        stack: list[Any] = [self._asts.get(path)]
        while stack:
            n = stack.pop()
            if isinstance(n, dict):
                for kind in ("Call", "ArithExpr", "BinExpr", "SomeIn"):
                    node = n.get(kind)
                    if isinstance(node, dict):
                        sp = _span(node.get("collection") if kind == "SomeIn" else {kind: node})
                        if sp:
                            out.append((sp[0], sp[1], kind, node))
                stack.extend(n.values())
            elif isinstance(n, list):
                stack.extend(n)
        return out

    def _rewrite(self, path: str, line: int, col: int, message: str) -> bool:
        """Rewrite the failing site at ``path:line:col`` (see :data:`NONSTRICT`); ``False`` when it
        is not a built-in error this layer makes undefined."""
        text = self._texts.get(path)
        if text is None or len(self._wrappers) >= MAX_REWRITES:
            return False
        iteration = "`some .. in collection` expects" in message
        unpassable = "unhashable type" in message  # a set of objects or sets to sprintf
        if self.strict and not iteration and not unpassable:
            return False
        lines = text.split(b"\n")
        if line < 1 or line > len(lines):
            return False
        offset = sum(len(x) + 1 for x in lines[: line - 1]) + col - 1
        kinds = ("SomeIn",) if iteration else ("Call", "ArithExpr", "BinExpr")
        candidates = [c for c in self._nodes(path) if c[2] in kinds and c[0] <= offset < max(c[1], c[0] + 1)]
        if not candidates:
            return False

        # The position is that of the argument the built-in refused (to_number("3m") points in "3m",
        # lower(object.get(...)) at object.get, null | {1} at null): the innermost call or operator
        # one of whose operands holds it, else the innermost expression holding it (8 / 0 points at
        # the operator).
        def holds(arg: Any) -> bool:
            sp = _span(arg)
            return sp is not None and sp[0] <= offset < max(sp[1], sp[0] + 1)

        def operands(c: tuple) -> list:
            return list(c[3].get("params") or []) if c[2] == "Call" else [c[3].get("lhs"), c[3].get("rhs")]

        by_argument = [c for c in candidates if c[2] != "SomeIn" and any(holds(a) for a in operands(c))]
        start, end, kind, node = min(by_argument or candidates, key=lambda c: c[1] - c[0])
        name = f"w{len(self._wrappers)}"
        ref = f"data.{NONSTRICT}.{name}".encode()
        if unpassable:
            calls = sorted(
                (c for c in candidates if _ref_name(c[3].get("fcn")) == "sprintf"), key=lambda c: c[1] - c[0]
            )
            fsp = _span(calls[0][3].get("fcn")) if calls else None
            if not fsp:
                return False
            self._wrappers.append(
                f"{name}(f, args) := {SPRINTF_JSON}(f, [[json.marshal(a), is_set(a)] | some a in args])\n"
            )
            start, end = fsp
            new = ref
        elif kind == "SomeIn":
            # OPA: iterating over anything but a collection (null, a string) is undefined, strict or not.
            self._wrappers.append(
                f"{name}(x) := x if is_array(x)\n{name}(x) := x if is_object(x)\n{name}(x) := x if is_set(x)\n"
            )
            new = ref + b"(" + text[start:end] + b")"
        elif kind == "Call":
            fname = _ref_name(node.get("fcn"))
            params = node.get("params") or []
            if not fname or fname.split(".")[-1] in (self._functions or set()) or fname.startswith("data."):
                return False
            args = [f"a{i}" for i in range(len(params))]
            self._wrappers.append(self._wrapper(name, fname, args, f"{fname}({', '.join(args)})"))
            fsp = _span(node.get("fcn"))
            if not fsp:
                return False
            start, end = fsp
            new = ref
        else:
            op = _OPS.get(str(node.get("op")))
            lsp, rsp = _span(node.get("lhs")), _span(node.get("rhs"))
            if op is None or not lsp or not rsp:
                return False
            self._wrappers.append(self._wrapper(name, op, ["a", "b"], f"a {op} b"))
            new = ref + b"(" + text[lsp[0] : lsp[1]] + b", " + text[rsp[0] : rsp[1]] + b")"
            start, end = min(start, lsp[0]), max(end, rsp[1])
        self._texts[path] = text[:start] + new + text[end:]
        try:
            self._build()
        except RegoError:
            self._texts[path] = text
            self._wrappers.pop()
            self._build()
            return False
        return True

    def _wrap_unlocated(self) -> bool:
        """Non-strict: the built-ins whose errors carry no position (:data:`UNLOCATED`) are all
        rewritten at once, the first time one fails."""
        if self.strict or self._unlocated_done:
            return False
        self._unlocated_done = True
        changed = False
        for path in list(self._texts):
            text = self._texts[path]
            sites = []
            for _, _, kind, node in self._nodes(path):
                fname = _ref_name(node.get("fcn")) if kind == "Call" else ""
                fsp = _span(node.get("fcn")) if fname in UNLOCATED else None
                if fsp:
                    sites.append((fsp, fname, len(node.get("params") or [])))
            for (start, end), fname, n in sorted(sites, reverse=True):
                name = f"w{len(self._wrappers)}"
                args = [f"a{i}" for i in range(n)]
                self._wrappers.append(self._wrapper(name, fname, args, f"{fname}({', '.join(args)})"))
                text = text[:start] + f"data.{NONSTRICT}.{name}".encode() + text[end:]
                changed = True
            self._texts[path] = text
        if changed:
            self._build()
        return changed

    @staticmethod
    def _wrapper(name: str, op: str, args: list[str], expr: str) -> str:
        guard = ", ".join(f"[json.marshal({a}), is_set({a})]" for a in args)
        return f"{name}({', '.join(args)}) := r if {{\n\t{GUARD}({json.dumps(op)}, [{guard}])\n\tr := {expr}\n}}\n"

    def set_data_json(self, text: str) -> None:
        """Replace the data (``data.<key>`` for each top-level key) with this JSON document."""
        if text != self._data:
            self._engine.clear_data()
            self._engine.add_data_json(text)
            self._data = text

    def set_input_json(self, text: str) -> None:
        if text != self._input:
            self._engine.set_input_json(text)
            self._input = text

    def eval(self, rule: str) -> Any:
        """The value of ``data.<rule>`` for the current input; ``None`` when undefined."""
        while True:
            try:
                out = self._engine.eval_rule_as_json("data." + rule)
                break
            except Exception as e:  # noqa: BLE001
                path, line, col, message = error_parts(str(e))
                if message == "not a valid rule path":  # no such rule: undefined, as in OPA
                    return None
                if path and self._rewrite(path, line, col, message):
                    continue
                if not path and self._wrap_unlocated():
                    continue
                where = f"{path}:{line}:{col}: " if path else ""
                raise EvalError(where + message) from None
        if out == '"<undefined>"':
            return None
        return json.loads(out)

    def eval_query(self, query: str) -> list[Any]:
        try:
            result = self._engine.eval_query(query)
        except Exception as e:  # noqa: BLE001
            path, line, col, message = error_parts(str(e))
            raise EvalError((f"{path}:{line}:{col}: " if path else "") + message) from None
        return [r["expressions"][0]["value"] for r in result.get("result", []) if r.get("expressions")]


def _span(node: Any) -> tuple[int, int] | None:
    """``(start, end)`` byte offsets of an expression node of the interpreter's AST."""
    if isinstance(node, dict):
        for v in node.values():
            if isinstance(v, dict) and isinstance(v.get("span"), dict):
                sp = v["span"]
                return int(sp.get("start", 0)), int(sp.get("end", 0))
    return None


def compile_problem(message: str) -> bool:
    """Whether an evaluation error (of a rule on an empty input, when the policies load) is one OPA
    reports when it compiles: unsafe variables, unknown functions, recursion, type errors."""
    return any(
        s in message
        for s in (
            "is unsafe",
            "could not find function",
            "recursion",
            "not a valid rule path",
            "is not defined",
            "unknown function",
            "rego_type_error",
            " expects ",
        )
    )
