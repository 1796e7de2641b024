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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

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

    return regorus.Engine()


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
        return Module(path, source, package, v0, rules, imports)
    # Report the error of the syntax the file is written in: v1 keywords without future imports mean v1.
    raise errors[False] if _v1_like(text) else errors[True]


class Evaluator:
    """Compiled modules and data, evaluated one rule at a time against an input."""

    def __init__(self, modules: list[Module], data: dict | None = None) -> None:
        self.modules = modules
        self._engine = _engine()
        for m in modules:
            self._engine.set_rego_v0(m.v0)
            try:
                self._engine.add_policy(m.path, m.text)
            except Exception as e:  # noqa: BLE001
                raise RegoError(*error_parts(str(e), m.path)) from None
        self._data = json.dumps(data or {})
        if data:
            self._engine.add_data_json(self._data)
        self._input: str | None = None

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
        try:
            out = self._engine.eval_rule_as_json("data." + rule)
        except Exception as e:  # noqa: BLE001
            path, line, col, message = error_parts(str(e))
            if message == "not a valid rule path":  # no such rule: undefined, as in OPA
                return None
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
