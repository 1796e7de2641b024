"""Command-line pieces for policies: the ``check`` options and ``rules verify`` for policy paths."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from kubelint_ml.clitypes import PATH


class PolicyFailure(click.ClickException):
    """A policy that cannot be used: exit 2, said as the command line says its errors."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"kubelint-ml: error: {self.format_message()}", err=True)


def policy_options(f: Callable) -> Callable:
    """``--policy``, ``--policy-namespace``, ``--combine`` and ``--show-builtin-errors`` on a command."""
    f = click.option(
        "--show-builtin-errors",
        is_flag=True,
        help='A built-in error in a Rego rule (to_number("500m"), a division by zero) is a rule-error '
        "finding, as with conftest's flag of that name [default: the expression is undefined, as in OPA].",
    )(f)
    f = click.option(
        "--combine",
        is_flag=True,
        help="Rego policies see all documents of the run as one input (an array of {path, contents}).",
    )(f)
    f = click.option(
        "--policy-namespace",
        "policy_namespaces",
        multiple=True,
        metavar="NS",
        help="Evaluate only this Rego package's rules (repeatable) [default: every package].",
    )(f)
    f = click.option(
        "--policy",
        "policy_paths",
        multiple=True,
        type=PATH,
        help="Rego (conftest) policy file or directory, or Gatekeeper templates and constraints; "
        "an alias of --rules (repeatable).",
    )(f)
    return f


def load_policies(
    paths: list[str],
    namespaces: tuple[str, ...] = (),
    combine: bool = False,
    context_paths: list[str] | None = None,
    strict: bool = False,
) -> Any:
    """The compiled policies under ``paths`` (``None`` when there are none); exit 2 when one is unusable."""
    if not paths:  # nothing to look in: the Rego engine is not even imported
        if namespaces or combine:
            raise PolicyFailure("--policy-namespace and --combine need Rego policies (--policy or --rules)")
        return None
    from kubelint_ml.policy.lint import compile_policies
    from kubelint_ml.policy.load import PolicyError

    try:
        return compile_policies(paths, namespaces, combine, context_paths, strict)
    except PolicyError as e:
        raise PolicyFailure(str(e)) from None


def policy_rules(paths: list[str]) -> list:
    """The policies' rules (Rego rules, constraints) as entries of ``rules list``."""
    from kubelint_ml.engine.rulefile import Rule

    policies = load_policies(paths)
    if policies is None:
        return []
    try:
        infos = policies.rule_infos()
        sources = {r.rule_id: r.file for r in policies.rego_rules}
        sources.update({c.rule_id: c.file for c in policies.constraints})
        return [Rule.described(i, family="policy", source=sources.get(i.id, ""), check={}) for i in infos.values()]
    finally:
        policies.close()


def verify_policies(path: str, fmt: str) -> tuple[int, int, list[dict]]:
    """Rego tests, Gatekeeper suites and Kyverno CLI tests under ``path``: (passed, failed, per-case dicts)."""
    from kubelint_ml.policy.load import PolicyError, find
    from kubelint_ml.policy.rego import RegoError
    from kubelint_ml.policy.verify import verify

    try:
        found = find([path], tests=True)
        results = verify(found)
        if found.kyverno_tests:
            from kubelint_ml.policy.kyvernotest import verify as kyverno_verify

            results += kyverno_verify(found.kyverno_tests)
    except (PolicyError, RegoError) as e:
        raise PolicyFailure(str(e)) from None
    cases = [r.to_dict() for r in results]
    passed = sum(r.passed for r in results)
    if fmt == "text":
        from kubelint_ml.report.escape import safe_block

        for r in results:  # names and messages come from the suites and policies: escaped
            click.echo(safe_block(f"{'ok  ' if r.passed else 'FAIL'} {r.name}" + ("" if r.passed else f": {r.reason}")))
    return passed, len(results) - passed, cases


def print_json(cases: list[dict]) -> None:
    json.dump(cases, sys.stdout, indent=2)
    sys.stdout.write("\n")
