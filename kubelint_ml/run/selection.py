"""Which rules a run uses: built-in and user rules, with the config's and the command line's choices.

Shared by ``check``, ``rules list`` and ``serve`` (kubelint_ml.admission): errors are
:class:`SelectionError` with one line naming the file or the command line.
"""

from __future__ import annotations

from typing import Any


class SelectionError(Exception):
    """An unknown rule id, bad params, or a rule file that does not load."""


def all_rules(config: Any, rules_dirs: tuple[str, ...] = ()) -> list:
    """Built-in rules and the user rules of the config and the command line, by id."""
    from kubelint_ml.engine.rulefile import RuleFileError, load_builtin_rules, load_rules_dir

    try:
        builtin = load_builtin_rules()
        user = [r for d in list(config.rules_dirs) + list(rules_dirs) for r in load_rules_dir(d)]
    except RuleFileError as e:
        raise SelectionError(str(e)) from None
    ids = {r.id for r in builtin}
    for r in user:
        if r.id in ids:
            raise SelectionError(f"{r.source}: id: rule {r.id} is already a built-in rule; choose another id")
    return sorted(builtin + user, key=lambda r: r.id)


def select_rules(
    config: Any,
    extra_dirs: tuple[str, ...],
    verbose: bool,
    enable: tuple[str, ...] = (),
    disable: tuple[str, ...] = (),
    rules: list | None = None,
    policy_ids: frozenset[str] | set[str] = frozenset(),
) -> tuple[list, dict, set]:
    """(the rules on, severity overrides, every rule id): built-in plus user rules (``rules``: already
    loaded by :func:`all_rules`), with config and command-line choices applied. ``policy_ids``: the
    Rego rules and Gatekeeper constraints of the run, which ``enable``, ``disable`` and ``overrides``
    may name too (see :func:`policy_off`)."""
    from kubelint_ml.engine.rulefile import RuleFileError, _validate_params

    by_id = {r.id: r for r in (rules if rules is not None else all_rules(config, extra_dirs))}
    all_ids = set(by_id) | set(policy_ids)
    from kubelint_ml.engine.api import did_you_mean

    lines = getattr(config, "rule_lines", {})  # rule id -> the config line that names it
    named = sorted(
        set(config.enable) | set(config.disable) | set(config.severity) | set(config.params),
        key=lambda r: lines.get(r, 0),
    )
    for rid in list(enable) + list(disable) + named:
        if rid not in all_ids:
            line = lines.get(rid) if rid not in enable and rid not in disable else None
            where = f"{config.path}:{line}" if line else config.path if line is not None else "command line"
            raise SelectionError(
                f"{where}: unknown rule id {rid!r}{did_you_mean(rid, all_ids)} (see `kubelint-ml rules list`)"
            )
    for rid, params in config.params.items():
        if rid not in by_id:
            raise SelectionError(f"{config.path}: overrides.{rid}.params: {rid} is a policy rule; it takes no params")
        rule = by_id[rid]
        if not hasattr(rule.template, "PARAMS"):
            raise SelectionError(f"{config.path}: overrides.{rid}.params: rule {rid} takes no params")
        merged = dict(rule.params)
        merged.update(params)
        try:
            _validate_params(rid, rule.template, merged, config.path or "config")
        except RuleFileError as e:
            raise SelectionError(str(e)) from None
        rule.params = merged
    chosen = []
    for rid in sorted(by_id):
        r = by_id[rid]
        on = r.enabled or rid in config.enable or rid in enable
        if rid in config.disable or rid in disable:
            on = False
        if on:
            chosen.append(r)
    return chosen, dict(config.severity), all_ids


def policy_off(config: Any, policy_ids: set[str], disable: tuple[str, ...] = ()) -> set[str]:
    """The policy rules turned off by the config's or the command line's ``disable`` (policy rules are
    on unless disabled)."""
    return {rid for rid in policy_ids if rid in config.disable or rid in disable}
