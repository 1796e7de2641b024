"""The command line: ``kubelint-ml check``, ``audit``, ``rules``, ``init``.

Exit codes: 0 when nothing reaches the fail level; 1 when findings (a
parse-error included) reach it; 2 when the tool could not do what was asked
(bad option, missing path, invalid config or rule file).
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, NoReturn

import click

from kubelint_ml import __version__
from kubelint_ml.clitypes import FILE, PATH
from kubelint_ml.findings import SEVERITIES as LEVELS  # fail levels are severities
from kubelint_ml.fix.cli import fix_options, selected
from kubelint_ml.policy.cli import load_policies, policy_options
from kubelint_ml.report import FORMATS
from kubelint_ml.usage import cli as usage_cli

# Rules that are off unless the config or --enable turns them on (--verbose never changes results).
VERBOSE_RULES = {"gpu-node-unresolved"}


class UsageFailure(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        from kubelint_ml.report.escape import neutralise

        click.echo(f"kubelint-ml: error: {neutralise(self.format_message())}", err=True)


def _fail(message: str) -> NoReturn:
    raise UsageFailure(message)


def select_rules(
    config: Any,
    extra_dirs: tuple[str, ...],
    verbose: bool,
    enable: tuple[str, ...] = (),
    disable: tuple[str, ...] = (),
    rules: list | None = None,
    policy_ids: set[str] | None = None,
) -> tuple[list, dict, set]:
    """:func:`kubelint_ml.run.selection.select_rules`, its errors as usage failures (exit 2)."""
    from kubelint_ml.run.selection import SelectionError
    from kubelint_ml.run.selection import select_rules as select

    try:
        return select(config, extra_dirs, verbose, enable, disable, rules, policy_ids or set())
    except SelectionError as e:
        _fail(str(e))


def _load_config(path: str | None, start: str | None = None) -> Any:
    from kubelint_ml.run.config import ConfigError, find_config, load_config

    try:
        while start and not os.path.isdir(start):  # a name given to piped input need not exist
            start = os.path.dirname(start) if os.path.dirname(start) != start else None
        found = path if path else find_config(start)
        return load_config(found)
    except ConfigError as e:
        _fail(str(e))


class _Commands(click.Group):
    """The command line: the commands of other stages (``serve``, ``export``, ``lsp``) are imported only
    when one is run or listed, so ``check`` pays nothing for them."""

    # name -> (module, attribute): a click command in a module imported on first use
    LAZY = {
        "serve": ("kubelint_ml.admission.cli", "serve"),
        "export": ("kubelint_ml.admission.cli", "export"),
        "lsp": ("kubelint_ml.lsp", "lsp"),
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.LAZY))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in self.LAZY:
            import importlib

            module, attr = self.LAZY[cmd_name]
            found = getattr(importlib.import_module(module), attr)
            self.add_command(found, cmd_name)
        return found


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="kubelint-ml")
def main() -> None:
    """Lint Kubernetes ML training manifests before `kubectl apply`."""


@main.command()
@click.argument("paths", nargs=-1)
@click.option(
    "-f",
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(FORMATS),
    help="Output format; repeat with --output to write several in one run.",
)
@click.option(
    "-o",
    "--output",
    "outputs",
    multiple=True,
    type=FILE,
    help="Write the matching --format to FILE (default: stdout).",
)
@click.option(
    "--fail-level",
    type=click.Choice(LEVELS),
    default=None,
    help="Lowest severity that makes the exit code 1 [default: error].",
)
@click.option(
    "-c",
    "--config",
    "config_path",
    type=FILE,
    help="Config file [default: .kubelint-ml.yaml found upward from the current directory].",
)
@click.option("--rules", "rules_dirs", multiple=True, type=PATH, help="Directory of custom rules (repeatable).")
@click.option("--enable", multiple=True, help="Turn on a rule by id (repeatable).")
@click.option("--disable", multiple=True, help="Turn off a rule by id (repeatable).")
@click.option(
    "--schema/--no-schema", "schema_flag", default=None, help="Validate against the Kubernetes OpenAPI schema."
)
@click.option(
    "--kubernetes-version",
    help="The cluster's Kubernetes version (e.g. 1.33): the rules judge as that version does "
    "(pod-level resources, DRA, kubelet defaults), and --schema validates against it [default: the profile's].",
)
@click.option("--strict", is_flag=True, default=None, help="With --schema: unknown fields are errors.")
@click.option("--crd", "crds", multiple=True, type=PATH, help="CRD file or directory for --schema (repeatable).")
@click.option("--baseline", type=FILE, help="Report only findings not in this baseline file.")
@click.option("--write-baseline", type=FILE, help="Record the current findings as a baseline and exit 0.")
@click.option("--show-suppressed", is_flag=True, help="Also list suppressed findings.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=0,
    help="Processes that lint [default: the CPUs available; 1 = sequential; small inputs use one].",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only findings (no summary line).")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Remediations, and notes on skipped documents and rules; never changes the findings.",
)
@click.option("--no-color", is_flag=True, help="No ANSI colour (also when NO_COLOR is set).")
@click.option(
    "--statistics", is_flag=True, help="Print how many findings each rule has instead of the findings (text on stdout)."
)
@click.option(
    "--context",
    "context_paths",
    multiple=True,
    type=PATH,
    help="File or directory read for context (PriorityClasses, kubelet configs, CRDs; Nodes, LimitRanges, quotas, "
    "PVCs, Kueue and Volcano queues, e.g. a kubectl get -o json dump), not reported on (repeatable).",
)
@click.option(
    "--helm-values",
    multiple=True,
    type=FILE,
    help="Values file for the charts among the paths (helm template --values; repeatable).",
)
@click.option(
    "--helm-set", multiple=True, help="KEY=VALUE for the charts among the paths (helm template --set; repeatable)."
)
@click.option(
    "--respect-gitignore/--no-respect-gitignore",
    default=None,
    help="Skip what .gitignore files and .git/info/exclude ignore when walking directories [default: on].",
)
@click.option(
    "--stdin-filename",
    metavar="NAME",
    help="Show standard input as NAME in findings; excludes and the config found from NAME's directory apply.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings reach the fail level.")
@click.option(
    "--html-base-url",
    metavar="URL",
    help="With --format html: link each finding to BASE/<file>#L<line> (e.g. the repository's blob URL; "
    "in GitHub Actions the commit's is used when not given).",
)
@fix_options
@usage_cli.check_options
@policy_options
def check(
    paths: tuple[str, ...],
    formats: tuple[str, ...],
    outputs: tuple[str, ...],
    fail_level: str | None,
    config_path: str | None,
    rules_dirs: tuple[str, ...],
    enable: tuple[str, ...],
    disable: tuple[str, ...],
    schema_flag: bool | None,
    kubernetes_version: str | None,
    strict: bool | None,
    crds: tuple[str, ...],
    baseline: str | None,
    write_baseline: str | None,
    show_suppressed: bool,
    jobs: int,
    quiet: bool,
    verbose: bool,
    no_color: bool,
    context_paths: tuple[str, ...] = (),
    helm_values: tuple[str, ...] = (),
    helm_set: tuple[str, ...] = (),
    policy_paths: tuple[str, ...] = (),
    policy_namespaces: tuple[str, ...] = (),
    combine: bool = False,
    statistics: bool = False,
    show_builtin_errors: bool = False,
    respect_gitignore: bool | None = None,
    stdin_filename: str | None = None,
    exit_zero: bool = False,
    html_base_url: str | None = None,
    **fix_args: Any,
) -> None:
    """Lint manifests: files, directories (recursive), quoted globs ('k8s/**/*.yaml') or - for stdin.

    Directories with a Chart.yaml are rendered with helm template, and those with a
    kustomization.yaml built with kustomize (or kubectl kustomize), when the tool is on PATH."""
    from kubelint_ml.input.charts import options as render_options
    from kubelint_ml.run.inputs import RunInputs

    if not paths:
        paths = ("-",) if stdin_filename else (".",)
    if len(outputs) > max(1, len(formats)):
        _fail("each --output needs a --format before it")
    formats = formats or ("text",)
    config = _load_config(config_path, os.path.dirname(os.path.abspath(stdin_filename)) if stdin_filename else None)
    if respect_gitignore is not None:
        config.respect_gitignore = respect_gitignore
    if kubernetes_version is not None:
        config.profile = _cluster_version(config.profile, kubernetes_version)
    level = fail_level or config.fail_level or "error"
    policies = load_policies(
        list(config.rules_dirs) + list(rules_dirs) + list(policy_paths),
        policy_namespaces,
        combine,
        list(config.context) + list(context_paths),
        show_builtin_errors,
    )
    policy_ids = policies.rule_ids() if policies is not None else set()
    rules, severity, all_ids = select_rules(
        config, rules_dirs, verbose, enable + fix_args["select"], disable, policy_ids=policy_ids
    )
    if policies is not None:
        from kubelint_ml.run.selection import policy_off

        policies.choose(policy_off(config, policy_ids, disable), severity)
    usage, rules = usage_cli.for_check(paths, config, rules, verbose)
    html_context = _html_context(formats, paths, html_base_url, usage, config, _jobs(jobs))
    rules = selected(rules, fix_args["select"])
    schema = _schema(config, schema_flag, kubernetes_version, strict, crds)
    session: dict = {}  # what --fix needs to lint a file again
    inputs = RunInputs(
        config,
        rules,
        fail_level=level,
        jobs=_jobs(jobs),
        verbose=verbose,
        schema=schema,
        severity=severity,
        all_rule_ids=all_ids,
        usage=usage,
        policies=policies,
        render=render_options(config, helm_values, helm_set),
        context=context_paths,
        resolve_fixes=any(fmt in ("json", "sarif", "html") for fmt in formats) and not write_baseline,
        stdin_name=stdin_filename,
    )
    result, notes = _lint(list(paths), inputs, session)
    if write_baseline:
        _record_baseline(write_baseline, result, quiet)
        sys.exit(0)
    if baseline:
        _apply_baseline(baseline, result)
    _fixes(result, session, fix_args, formats, baseline, notes, quiet=quiet, verbose=verbose)
    _report(
        result,
        formats,
        outputs,
        show_suppressed=show_suppressed,
        quiet=quiet,
        verbose=verbose,
        color=_color(no_color),
        statistics=statistics,
        context=html_context,
    )
    if verbose:
        _print_notes(notes)
    sys.exit(2 if session.get("fix_errors") else 1 if result.failed() and not exit_zero else 0)


def _color(no_color: bool) -> bool:
    """Colour on a terminal, unless ``--no-color`` or ``NO_COLOR`` (no-color.org) says otherwise."""
    return not no_color and not os.environ.get("NO_COLOR") and sys.stdout.isatty()


def _jobs(jobs: int) -> int:
    """``--jobs 0``: the CPUs this process may run on (taskset, cpusets), else all of them."""
    if jobs:
        return jobs
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _lint(paths: list[str], inputs: Any, session: dict | None = None) -> tuple[Any, list[str]]:
    """The run (:func:`kubelint_ml.run.lint.run`), with the problems of the asking turned into exit 2."""
    from kubelint_ml.input.sources import SourceError
    from kubelint_ml.run.config import ConfigError
    from kubelint_ml.run.lint import run

    try:
        return run(paths, inputs, session)
    except (SourceError, ConfigError) as e:  # a missing path; config-time problems surfacing late (kubelet files)
        _fail(str(e))


def _fixes(
    result: Any,
    session: dict,
    args: dict,
    formats: tuple[str, ...],
    baseline: str | None,
    notes: list[str],
    *,
    quiet: bool,
    verbose: bool,
) -> None:
    """--fix, --diff, --fix-only (:mod:`kubelint_ml.run.fixing`); may exit. JSON and SARIF get the fixes' edits."""
    from kubelint_ml.run import fixing

    keep = None
    if baseline:
        from kubelint_ml.run.baseline import load_baseline

        base = load_baseline(baseline)
        keep = lambda found: base.filter(found)[0]  # noqa: E731
    outcome = fixing.after_run(result, session, {**args, "verbose": verbose}, formats, keep)
    if outcome is None:
        return
    if outcome.diff:
        sys.stdout.write(outcome.diff)
        sys.stdout.flush()
    for error in outcome.errors:
        click.echo(f"kubelint-ml: error: {error}", err=True)
    session["fix_errors"] = bool(outcome.errors)
    if not quiet and outcome.summary:
        click.echo(outcome.summary, err=True)
    notes.extend(outcome.notes)
    if outcome.exit_code is not None:
        if verbose:
            _print_notes(notes)
        sys.exit(outcome.exit_code)


def _record_baseline(path: str, result: Any, quiet: bool) -> None:
    """--write-baseline: the findings of this run, recorded."""
    from kubelint_ml.run.baseline import BaselineError, write_baseline

    try:
        write_baseline(path, result.findings)
    except BaselineError as e:
        _fail(str(e))
    if not quiet:
        from kubelint_ml.report.escape import neutralise

        click.echo(f"wrote baseline of {len(result.findings)} findings to {neutralise(path)}", err=True)


def _apply_baseline(path: str, result: Any) -> None:
    """--baseline: the findings it records move from ``result.findings`` to ``result.baselined``."""
    from kubelint_ml.run.baseline import BaselineError, load_baseline

    try:
        base = load_baseline(path)
    except BaselineError as e:
        _fail(str(e))
    result.findings, result.baselined = base.filter(result.findings)


def _report(
    result: Any,
    formats: tuple[str, ...],
    outputs: tuple[str, ...],
    *,
    show_suppressed: bool,
    quiet: bool,
    verbose: bool,
    color: bool,
    statistics: bool = False,
    context: dict | None = None,
) -> None:
    """Each format to its --output (or stdout), and the GitHub step summary when asked for."""
    from kubelint_ml import report
    from kubelint_ml.atomic import write_atomic

    for i, fmt in enumerate(formats):
        target = outputs[i] if i < len(outputs) and outputs[i] != "-" else None
        view = _view(result, show_suppressed, quiet and fmt == "text")
        if target:
            try:
                write_atomic(target, functools.partial(_write_report, report.write, fmt, view, verbose, context))
            except OSError as e:
                _fail(f"cannot write {target}: {e.strerror}")
        elif statistics and fmt == "text":
            from kubelint_ml.report.statistics import render as render_statistics

            sys.stdout.write(render_statistics(view))
            sys.stdout.flush()
        else:
            report.write(fmt, view, sys.stdout, color=color, verbose=verbose, context=context)
            sys.stdout.flush()
    from kubelint_ml.report.escape import neutralise

    for warning in result.warnings:
        click.echo(f"kubelint-ml: warning: {neutralise(warning)}", err=True)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:  # whatever the formats (docs/ci.md)
        try:
            report.write_step_summary(result, summary_path)
        except OSError:
            pass


def _write_report(write: Any, fmt: str, view: Any, verbose: bool, context: dict | None, fh: Any) -> None:
    write(fmt, view, fh, color=False, verbose=verbose, context=context)


def _html_context(
    formats: tuple[str, ...], paths: tuple[str, ...], base_url: str | None, usage: Any, config: Any, jobs: int
) -> Any:
    """What the HTML report shows beyond the findings (docs/output.md#html); None without --format html."""
    if "html" not in formats:
        return None
    from kubelint_ml.report.html import base_url_for
    from kubelint_ml.run.gpus import gpu_workloads
    from kubelint_ml.usage.html import for_check

    try:
        base = base_url_for(base_url)
    except ValueError as e:
        _fail(str(e))
    sizing = for_check(usage, paths, config)
    return {
        "inputs": list(paths),
        "base_url": base,
        "command": "check",
        "gpu_workloads": functools.partial(gpu_workloads, jobs=jobs),
        "sizing": sizing,
    }


def _print_notes(notes: list[str]) -> None:
    from kubelint_ml.report.escape import neutralise

    for note in notes:
        click.echo(f"note: {neutralise(note)}", err=True)


def _view(result: Any, show_suppressed: bool, quiet: bool) -> Any:
    from kubelint_ml.records import replace

    return replace(result, show_suppressed=show_suppressed, quiet=quiet)


def _schema(config: Any, flag: bool | None, version: str | None, strict: bool | None, crds: tuple[str, ...]) -> Any:
    opts = config.schema
    enabled = flag if flag is not None else opts.get("enabled", False)
    if not enabled:
        if crds:
            _fail("--crd needs --schema")
        return None
    from kubelint_ml.k8s.schema import SchemaConfigError, SchemaValidator, bundled_versions
    from kubelint_ml.report.escape import neutralise

    version = version or opts.get("kubernetesVersion") or config.profile.kubernetes_version
    try:
        validator = SchemaValidator(
            version or bundled_versions()[-1], strict=bool(strict if strict is not None else opts.get("strict"))
        )
        for path in list(opts.get("crds", [])) + list(crds):
            for crd in _crd_objects(path, config):
                for problem in validator.add_crd(crd):
                    click.echo(f"kubelint-ml: warning: {neutralise(f'{path}: {problem}')}", err=True)
    except SchemaConfigError as e:
        _fail(str(e))
    return validator


def _cluster_version(profile: Any, text: str) -> Any:
    """The profile with ``--kubernetes-version`` as its cluster's version (exit 2 when it is not one)."""
    from kubelint_ml.k8s.version import parse_version
    from kubelint_ml.records import replace
    from kubelint_ml.report.escape import neutralise

    if parse_version(text) is None:
        _fail(f"--kubernetes-version {neutralise(text)!r}: not a Kubernetes version (e.g. 1.33)")
    return replace(profile, kubernetes_version=text.strip().lstrip("v"))


def _crd_objects(path: str, config: Any) -> list[dict]:
    from kubelint_ml.input.loader import load
    from kubelint_ml.input.objects import unpack
    from kubelint_ml.input.sources import SourceError, collect, read

    if path == "-":
        _fail("--crd: give a file or directory (stdin holds the manifests)")
    try:
        sources = collect([path])
    except SourceError as e:
        _fail(f"--crd: {e}")
    out = []
    for s in sources:
        try:
            loaded = load(read(s, config.limits.max_file_bytes), config.limits)
        except OSError as e:
            _fail(f"--crd {s.path}: cannot read: {e.strerror or e}")
        if loaded.problems:
            p = loaded.problems[0]
            _fail(f"--crd {s.path}:{p.line}: {p.message}")
        for doc in loaded.documents:
            for obj in unpack(doc, s.path).objects:
                if obj.kind == "CustomResourceDefinition":
                    out.append(obj.data)
    return out


# ----------------------------------------------------------------------------
# rules


@main.command()
@click.argument("paths", nargs=-1)
@click.option("--kubectl", "use_kubectl", is_flag=True, help="Run `kubectl get -o json` for the kinds audit reads.")
@click.option("--context-name", help="With --kubectl: the kubeconfig context (kubectl --context).")
@click.option("-n", "--namespace", help="With --kubectl: only this namespace (cluster objects are read whole).")
@click.option("-A", "--all-namespaces", "all_namespaces", is_flag=True, help="With --kubectl: every namespace.")
@click.option("-f", "--format", "formats", multiple=True, type=click.Choice(FORMATS), help="Output format (as check).")
@click.option("-o", "--output", "outputs", multiple=True, type=FILE, help="Write the matching --format to FILE.")
@click.option("--fail-level", type=click.Choice(LEVELS), default=None, help="Lowest severity that exits 1.")
@click.option("-c", "--config", "config_path", type=FILE, help="Config file (as check).")
@click.option("--rules", "rules_dirs", multiple=True, type=PATH, help="Directory of custom rules (repeatable).")
@click.option("--enable", multiple=True, help="Turn on a rule by id (repeatable).")
@click.option("--disable", multiple=True, help="Turn off a rule by id (repeatable).")
@click.option("--show-suppressed", is_flag=True, help="Also list suppressed findings.")
@click.option("-q", "--quiet", is_flag=True, help="Print only findings (no summaries).")
@click.option(
    "-v", "--verbose", is_flag=True, help="Remediations, and notes on skipped kinds and where values came from."
)
@click.option("--no-color", is_flag=True, help="No ANSI colour (also when NO_COLOR is set).")
@click.option("--prometheus", metavar="URL", help="Size the owners found from this Prometheus (as check).")
@click.option("--usage", "usage_file", type=FILE, help="Size the owners found from a usage snapshot.")
@click.option("--lookback", default=None, help="With a usage source: how far back usage is read [default: 14d].")
@click.option("--step", default=None, help="With a usage source: the resolution of the samples [default: 5m].")
def audit(
    paths: tuple[str, ...],
    use_kubectl: bool,
    context_name: str | None,
    namespace: str | None,
    all_namespaces: bool,
    formats: tuple[str, ...],
    outputs: tuple[str, ...],
    fail_level: str | None,
    config_path: str | None,
    rules_dirs: tuple[str, ...],
    enable: tuple[str, ...],
    disable: tuple[str, ...],
    show_suppressed: bool,
    quiet: bool,
    verbose: bool,
    no_color: bool,
    prometheus: str | None = None,
    usage_file: str | None = None,
    lookback: str | None = None,
    step: str | None = None,
) -> None:
    """Judge what runs in a cluster: `kubectl get -o json|yaml` dumps (files, or - for a pipe), or
    --kubectl. Pods are judged as admitted and reported once per owner (Deployment, JobSet,
    PyTorchJob...) with the number of pods; owners without pods from their templates."""
    from kubelint_ml.run.audit import AuditError, render_summary
    from kubelint_ml.run.audit import audit as run_audit
    from kubelint_ml.run.inputs import RunInputs
    from kubelint_ml.usage import USAGE_FAMILY

    if bool(paths) == use_kubectl:
        _fail("give dump files (or - for stdin), or --kubectl" if not paths else "--kubectl reads no files")
    if len(outputs) > max(1, len(formats)):
        _fail("each --output needs a --format before it")
    formats = formats or ("text",)
    config = _load_config(config_path)
    rules, severity, all_ids = select_rules(config, rules_dirs, verbose, enable, disable)
    usage_for = _audit_usage(config, prometheus, usage_file, lookback, step, verbose)
    if usage_for is None:
        rules = [r for r in rules if r.family != USAGE_FAMILY]
    level = fail_level or config.fail_level or "error"
    inputs = RunInputs(config, rules, fail_level=level, verbose=verbose, severity=severity, all_rule_ids=all_ids)
    notes: list[str] = []
    warnings: list[str] = []
    try:
        if use_kubectl:
            from kubelint_ml.run.kubectl import KubectlError, dumps

            try:
                result, run_notes, summary = run_audit(
                    inputs, dumps(context_name, namespace, all_namespaces, notes, warnings), usage_for
                )
            except KubectlError as e:
                _fail(str(e))
        else:
            result, run_notes, summary = run_audit(inputs, _dump_streams(paths), usage_for)
    except AuditError as e:
        _fail(str(e))
    result.warnings.extend(warnings)
    source = list(paths) or [f"kubectl ({'context ' + context_name if context_name else 'the current context'})"]
    _report(
        result,
        formats,
        outputs,
        show_suppressed=show_suppressed,
        quiet=quiet,
        verbose=verbose,
        color=_color(no_color),
        context={"inputs": source, "command": "audit"} if "html" in formats else None,  # the HTML page says what
    )
    if not quiet and summary:
        table = render_summary(summary)
        if formats == ("text",) and not outputs:
            sys.stdout.write("\n" + table)
        else:
            click.echo(table, err=True, nl=False)
    if verbose:
        _print_notes(notes + run_notes)
    sys.exit(1 if result.failed() else 0)


def _audit_usage(
    config: Any, prometheus: str | None, usage_file: str | None, lookback: str | None, step: str | None, verbose: bool
) -> Any:
    """With a usage source (options or the config's ``usage:``): a function from the owners' templates to
    their Usage, for audit; else None (and nothing of usage/ is imported)."""
    if not getattr(config, "usage", None) and not (prometheus or usage_file):
        return None
    from kubelint_ml.usage.model import UsageError
    from kubelint_ml.usage.source import load_usage, settings

    try:
        s = settings(
            getattr(config, "usage", None),
            config_path=getattr(config, "path", None),
            prometheus=prometheus,
            usage_file=usage_file,
            lookback=lookback,
            step=step,
        )
    except UsageError as e:
        _fail(str(e))
    if not s.configured:
        return None

    def load(templates: list) -> Any:
        try:
            usage = load_usage(s, templates)
        except UsageError as e:
            _fail(str(e))
        if verbose:
            usage_cli._notes(usage)
        return usage

    return load


def _dump_streams(paths: tuple[str, ...]) -> Any:
    """Each dump path opened in turn ("-": stdin); a missing file is a usage failure."""
    for path in paths:
        if path == "-":
            yield sys.stdin.buffer, "<stdin>"
            continue
        try:
            fh = open(path, "rb")  # noqa: SIM115  (closed below, once the reader is done with it)
        except OSError as e:
            _fail(f"{path}: cannot read: {e.strerror}")
        with fh:
            yield fh, path


@main.group()
def rules() -> None:
    """List, show and verify rules."""


@rules.command("list")
@click.option("--format", "fmt", type=click.Choice(("text", "json", "markdown")), default="text")
@click.option("--rules", "rules_dirs", multiple=True, type=PATH, help="Also list custom rules from DIR.")
def rules_list(fmt: str, rules_dirs: tuple[str, ...]) -> None:
    """A table of every rule: id, severity, family, title."""
    from kubelint_ml.engine import ruledocs

    config = _load_config(None)
    everything = _all_rules(config, rules_dirs)
    chosen, _, _ = select_rules(config, rules_dirs, verbose=False, rules=everything)  # on in a plain run
    from kubelint_ml.policy.cli import policy_rules

    policy = policy_rules(list(config.rules_dirs) + list(rules_dirs))
    pseudo = ruledocs.pseudo_rules()
    text = ruledocs.render_list(everything + policy + pseudo, fmt, enabled={r.id for r in chosen + policy + pseudo})
    click.echo(_safe_text(text) if fmt == "text" else text, nl=False)


@rules.command("show")
@click.argument("rule_id")
@click.option("--rules", "rules_dirs", multiple=True, type=PATH)
def rules_show(rule_id: str, rules_dirs: tuple[str, ...]) -> None:
    """Description, remediation and the fail/pass examples of one rule."""
    from kubelint_ml.engine import ruledocs

    config = _load_config(None)
    for r in _all_rules(config, rules_dirs) + ruledocs.pseudo_rules():
        if r.id == rule_id:
            click.echo(_safe_text(ruledocs.render_rule(r)), nl=False)
            return
    _fail(f"unknown rule id {rule_id!r} (see `kubelint-ml rules list`)")


@rules.command("verify")
@click.argument("directory", required=False, type=PATH)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "json")),
    default="text",
    help="json: one object per case (name, passed).",
)
def rules_verify(directory: str | None, fmt: str = "text") -> None:
    """Run rules against their own examples (built-in rules when DIR is omitted); for a path with
    policies, also their Rego test_ rules, Gatekeeper Suite files and Kyverno kyverno-test.yaml files."""
    from kubelint_ml.engine.rulefile import RuleFileError, load_builtin_rules, load_rules_dir
    from kubelint_ml.run.examples import verify_rules

    try:
        rules_ = load_rules_dir(directory) if directory else load_builtin_rules(validate=True)
    except RuleFileError as e:
        _fail(str(e))
    failures = 0
    cases = []
    for rule, problems in verify_rules(rules_):
        cases.append({"name": rule.id, "passed": not problems, "file": rule.source})
        if problems:
            failures += 1
            cases[-1]["reason"] = "; ".join(problems)
        if fmt == "json":
            continue
        if problems:
            click.echo(_safe_text(f"FAIL {rule.id} ({rule.source})"))
            for p in problems:
                click.echo(_safe_text(f"  - {p}"))
        else:
            click.echo(f"ok   {rule.id}")
    passed = len(rules_) - failures
    if directory:
        from kubelint_ml.policy.cli import verify_policies

        ok, bad, more = verify_policies(directory, fmt)
        passed, failures, cases = passed + ok, failures + bad, cases + more
        if not rules_ and not ok and not bad:
            _fail(f"{directory}: no rules or policies to verify")
    if fmt == "json":
        from kubelint_ml.policy.cli import print_json

        print_json(cases)
    else:
        click.echo(f"{passed} passed, {failures} failed")
    sys.exit(1 if failures else 0)


def _safe_text(text: str) -> str:
    """Rule-file text for the terminal: escaped like findings, no line read as a workflow command."""
    from kubelint_ml.report.escape import safe_block

    return safe_block(text)


def _all_rules(config: Any, rules_dirs: tuple[str, ...]) -> list:
    """Built-in rules and the user rules of the config and the command line, by id."""
    from kubelint_ml.run.selection import SelectionError, all_rules

    try:
        return all_rules(config, rules_dirs)
    except SelectionError as e:
        _fail(str(e))


@main.command()
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.argument("path", default=".kubelint-ml.yaml", type=FILE)
def init(force: bool, path: str) -> None:
    """Write a commented starter config."""
    from kubelint_ml.run.config import STARTER

    if os.path.exists(path) and not force:
        _fail(f"{path} exists; use --force to overwrite")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(STARTER)
    click.echo(f"wrote {path}")


main.add_command(usage_cli.group(_load_config))


class Interrupted(BaseException):
    """SIGINT or SIGTERM: not a KeyboardInterrupt, which click turns into exit code 1."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.exit_code = 128 + signum


def _interrupted(signum: int, frame: Any) -> None:
    raise Interrupted(signum)


def entry() -> None:
    """The console script: run the command, flush, and leave without tearing the heap down.

    Freeing every finding and module one by one at interpreter exit costs tens
    of milliseconds on a big run and changes nothing: the output is written and
    flushed, and every file the command wrote was closed by then. Ctrl-C exits
    130 and SIGTERM 143, as a shell expects (a file being written is left as it
    was); an internal error exits 2, never 1 (which means findings).
    """
    try:  # the C module: the `signal` module makes its enums at import, a millisecond of every start
        import _signal as signal
    except ImportError:  # pragma: no cover - an interpreter without it
        import signal  # type: ignore[no-redef]

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupted)
    try:
        main.main(prog_name="kubelint-ml")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    except Interrupted as e:
        code = e.exit_code
        print("kubelint-ml: interrupted", file=sys.stderr)
    except Exception:  # a bug: say so, escaped, with the traceback to report
        import traceback

        from kubelint_ml.report.escape import safe_block

        code = 2
        print(safe_block(traceback.format_exc().rstrip()), file=sys.stderr)
        print("kubelint-ml: internal error (a bug; please report it with the traceback above)", file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`): nothing more to say
            pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
