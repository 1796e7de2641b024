"""The package's imports run one way: no module reaches itself again through what it imports.

Every import counts, the ones inside functions too (they only defer the cycle
to the first call). Read from the source with ``ast``, nothing is imported.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kubelint_ml"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports (``from pkg import sub`` counts as ``pkg.sub``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` -> the deepest module that exists
                target = target.rpartition(".")[0]
            if target and target != name and target != "kubelint_ml":
                found.add(target)
    return found


@lru_cache(maxsize=1)
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_graph_is_read_from_the_source() -> None:
    graph = _graph()
    assert {"kubelint_ml.run.lint", "kubelint_ml.engine.api", "kubelint_ml.cli"} <= set(graph)
    assert "kubelint_ml.run.pool" in graph["kubelint_ml.run.parallel"]  # `from kubelint_ml.run import pool`
    assert "kubelint_ml.engine.api" in graph["kubelint_ml.engine.celcheck"]


def test_the_package_has_no_import_cycle() -> None:
    assert _cycle(_graph()) is None


def test_a_cycle_is_found_when_there_is_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_nothing_below_the_command_line_imports_it() -> None:
    graph = _graph()
    assert not [name for name, deps in graph.items() if "kubelint_ml.cli" in deps and name != "kubelint_ml.__main__"]


# What each part of the package may import, from the command line down. A new subpackage
# (kubelint_ml/fix/, ...) is judged once it has its line here.
LAYERS = {
    "cli": {"admission", "run", "report", "engine", "templates", "usage", "k8s", "input", "findings", "policy", "fix"},
    "admission": {"run", "policy", "usage", "engine", "templates", "k8s", "input", "findings"},
    # The language server: the run's pieces (config, rules, runner, fixes) behind the protocol.
    "lsp": {"run", "policy", "engine", "k8s", "input", "findings", "fix", "report"},
    "policy": {"engine", "input", "findings", "report"},
    "run": {"engine", "templates", "usage", "k8s", "input", "findings", "fix"},
    "report": {"findings"},
    "engine": {"k8s", "input", "findings"},  # templates are found by name (rulefile.template_module)
    "templates": {"engine", "usage", "k8s", "input", "findings", "fix"},
    # Observed usage: the data the usage rules and the example runner read; its command group gets
    # the command line's config loader when registered.
    "usage": {"report", "k8s", "input", "findings"},
    # The fix records templates attach, and the text editor that turns them into byte edits;
    # the --fix run that applies them is run/fixing.py.
    "fix": {"input", "findings"},
    "k8s": {"input", "findings"},
    "input": {"findings"},
    "findings": set(),
}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_each_part_imports_only_the_parts_below_it() -> None:
    upward = sorted(
        f"{name} imports {target}"
        for name, deps in _graph().items()
        if _part(name) in LAYERS
        for target in deps
        if _part(target) in LAYERS and _part(target) != _part(name) and _part(target) not in LAYERS[_part(name)]
    )
    assert upward == []


def test_the_run_flows_one_way() -> None:
    """lint -> facts, runner, parallel; parallel -> runner, pool; facts -> pool; the pool knows none of them."""
    graph = _graph()
    run = {name for name in graph if name.startswith("kubelint_ml.run.")}
    within = {name.rsplit(".", 1)[1]: {d.rsplit(".", 1)[1] for d in graph[name] if d in run} for name in run}
    assert within["pool"] == set()
    assert within["runner"] <= {"config"}
    assert within["facts"] <= {"pool", "config"}
    assert within["parallel"] <= {"pool", "runner", "config"}
    assert not any("lint" in deps for name, deps in within.items() if name not in ("examples", "audit"))
