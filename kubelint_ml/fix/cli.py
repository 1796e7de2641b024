"""The ``check`` options for fixes, as ruff spells them: --fix, --unsafe-fixes, --diff, --fix-only."""

from __future__ import annotations

import sys
from typing import Any, Callable

import click

_OPTIONS = (
    click.option("--fix", "fix", is_flag=True, help="Apply the safe fixes, then report what is left."),
    click.option("--unsafe-fixes", "unsafe_fixes", is_flag=True,
                 help="Also apply (with --fix, --diff, --fix-only) the fixes that change how a workload runs."),
    click.option("--diff", "fix_diff", is_flag=True,
                 help="Print a unified diff of what the fixes would change; write nothing (exit 1 when there is "
                      "something to change)."),
    click.option("--fix-only", "fix_only", is_flag=True, help="Apply the fixes and report nothing that is left."),
    click.option("--select", "select", multiple=True,
                 help="Check (and fix) only this rule id (repeatable; turns it on if it is off by default)."),
)


def selected(rules: list, select: tuple[str, ...] | None) -> list:
    """The rules ``--select`` names (all when it names none)."""
    if not select:
        return rules
    wanted_ids = set(select)
    return [r for r in rules if r.id in wanted_ids]


def fix_options(f: Callable) -> Callable:
    for option in reversed(_OPTIONS):
        f = option(f)
    return f


fix_options.selected = selected  # type: ignore[attr-defined]


def wanted(args: dict) -> bool:
    return bool(args.get("fix") or args.get("fix_diff") or args.get("fix_only"))


def after_run(result: Any, session: dict, args: dict, formats: tuple[str, ...], keep: Callable | None,
              notes: list[str], quiet: bool, verbose: bool) -> None:
    """Apply or show the fixes, as asked; resolve the rest for JSON and SARIF. May exit (--diff, --fix-only)."""
    from kubelint_ml.fix.run import apply_fixes, resolve_result

    unsafe = bool(args.get("unsafe_fixes"))
    result.unsafe_fixes = unsafe
    if args.get("fix_diff"):
        report = apply_fixes(result, session, unsafe=unsafe, write=False, keep=keep)
        notes.extend(report.notes)
        sys.stdout.write(report.diff())
        sys.stdout.flush()
        if not quiet:
            n = len(report.changed)
            click.echo(f"would fix {report.fixed} findings in {n} file{'s' if n != 1 else ''}", err=True)
        _echo_notes(notes, verbose)
        sys.exit(1 if report.changed else 0)
    if args.get("fix") or args.get("fix_only"):
        report = apply_fixes(result, session, unsafe=unsafe, write=True, keep=keep)
        notes.extend(report.notes)
        for error in report.errors:
            click.echo(f"kubelint-ml: error: {error}", err=True)
        if not quiet:
            n = len(report.changed)
            click.echo(f"fixed {report.fixed} findings in {n} file{'s' if n != 1 else ''}", err=True)
        if args.get("fix_only"):
            _echo_notes(notes, verbose)
            sys.exit(2 if report.errors else 0)
    if any(fmt in ("json", "sarif") for fmt in formats):
        resolve_result(result, session)


def _echo_notes(notes: list[str], verbose: bool) -> None:
    if verbose:
        from kubelint_ml.report.escape import neutralise

        for note in notes:
            click.echo(f"note: {neutralise(note)}", err=True)
