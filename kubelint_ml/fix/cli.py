"""The ``check`` options for fixes, as ruff spells them: --fix, --unsafe-fixes, --diff, --fix-only."""

from __future__ import annotations

from collections.abc import Callable

import click

_OPTIONS = (
    click.option("--fix", "fix", is_flag=True, help="Apply the safe fixes, then report what is left."),
    click.option(
        "--unsafe-fixes",
        "unsafe_fixes",
        is_flag=True,
        help="Also apply (with --fix, --diff, --fix-only) the fixes that change how a workload runs.",
    ),
    click.option(
        "--diff",
        "fix_diff",
        is_flag=True,
        help="Print a unified diff of what the fixes would change; write nothing (exit 1 when there is "
        "something to change).",
    ),
    click.option("--fix-only", "fix_only", is_flag=True, help="Apply the fixes and report nothing that is left."),
    click.option(
        "--select",
        "select",
        multiple=True,
        help="Check (and fix) only this rule id (repeatable; turns it on if it is off by default).",
    ),
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
