"""Reporters: one module per output format, imported only when used."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from kubelint_ml.findings import RunResult

# Format -> module (imported only when used).
_MODULES = {
    "text": "text",
    "json": "json_",
    "sarif": "sarif",
    "github": "github",
    "junit": "junit",
    "markdown": "markdown",
    "concise": "concise",
    "html": "html",
}
# Formats whose writer also takes what the command knows beyond the result (inputs, links, sizing).
_WITH_CONTEXT = frozenset({"html"})
FORMATS = tuple(_MODULES)


def _module(fmt: str):
    if fmt not in _MODULES:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return import_module(f"{__name__}.{_MODULES[fmt]}")


def render(fmt: str, result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    """Render `result` in format `fmt` (one of FORMATS)."""
    return _module(fmt).render(result, color=color, verbose=verbose)


def write(
    fmt: str,
    result: RunResult,
    out: TextIO,
    *,
    color: bool = False,
    verbose: bool = False,
    context: dict | None = None,
) -> None:
    """Write `result` in format `fmt` to `out`, streaming where the format can.

    `context`: what the command knows beyond the result, for the formats that show it (HTML:
    the inputs, a base URL for links to files, sizing from observed usage)."""
    module = _module(fmt)
    if fmt in _WITH_CONTEXT:
        module.write(result, out, color=color, verbose=verbose, context=context)
    elif hasattr(module, "write"):
        module.write(result, out, color=color, verbose=verbose)
    else:
        out.write(module.render(result, color=color, verbose=verbose))


def write_step_summary(result: RunResult, path: str) -> None:
    """Append the Markdown report to a GitHub step summary file."""
    from kubelint_ml.report.markdown import render as render_markdown

    text = render_markdown(result)
    with open(path, "a", encoding="utf-8", errors="replace") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")
