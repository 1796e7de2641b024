"""``kubelint-ml usage export|report`` and the usage options of ``check``.

``check`` takes ``--prometheus URL`` or ``--usage FILE`` (or ``usage:`` in the
config), ``--lookback``, ``--step`` and ``--namespace`` through :func:`check_options`, and
asks :func:`for_check` for the usage source and the rules to run: the rules
of family ``usage`` run only when a source is configured.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from kubelint_ml.clitypes import FILE
from kubelint_ml.usage import USAGE_FAMILY

_META = "kubelint_ml.usage.options"


class UsageFailure(click.ClickException):
    """The tool could not do what was asked: exit 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        # The message may quote a server's text (an error, a label): escaped like any untrusted
        # text, so it can neither colour the terminal nor start a workflow command in a CI log.
        from kubelint_ml.report.escape import neutralise

        click.echo(f"kubelint-ml: error: {neutralise(self.format_message())}", err=True)


def _source_options(f: Callable) -> Callable:
    f = click.option(
        "--namespace", default=None, help="Namespace of manifests without metadata.namespace [default: default]."
    )(f)
    f = click.option(
        "--step", default=None, help="Resolution of the samples the quantiles are computed over [default: 5m]."
    )(f)
    f = click.option("--lookback", default=None, help="How far back usage is read (e.g. 14d, 36h) [default: 14d].")(f)
    return f


def check_options(f: Callable) -> Callable:
    """The usage options of ``check``; their values wait in the click context for :func:`for_check`."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        options = {k: kwargs.pop(k) for k in ("prometheus", "usage_file", "lookback", "namespace", "step")}
        click.get_current_context().meta[_META] = options
        return f(*args, **kwargs)

    out: Callable = _source_options(wrapper)
    out = click.option(
        "--usage",
        "usage_file",
        type=FILE,
        help="Judge with observed usage from a snapshot (`kubelint-ml usage export`).",
    )(out)
    return click.option(
        "--prometheus",
        metavar="URL",
        help="Judge with observed usage from this Prometheus (or Thanos, Mimir, VictoriaMetrics).",
    )(out)


def for_check(paths: tuple[str, ...] | list[str], config: Any, rules: list, verbose: bool) -> tuple[Any, list]:
    """(the Usage, or None without a source; the rules to run). Exits 2 on a source that cannot
    be used; under -v says which workloads have no series or too few samples."""
    ctx = click.get_current_context(silent=True)
    options = dict(ctx.meta.get(_META, {})) if ctx is not None else {}
    if not getattr(config, "usage", None) and not any(options.values()):
        # No usage source anywhere: the usage rules are left out, and nothing of usage/ is imported.
        return None, [r for r in rules if r.family != USAGE_FAMILY]
    from kubelint_ml.usage.model import UsageError

    try:
        from kubelint_ml.usage.source import for_check as load

        usage = load(getattr(config, "usage", None), list(paths), config, **options)
    except UsageError as e:
        raise UsageFailure(str(e)) from None
    if usage is None:
        return None, [r for r in rules if r.family != USAGE_FAMILY]
    if verbose:
        _notes(usage)
    return usage, rules


def _notes(usage: Any) -> None:
    from kubelint_ml.report.escape import neutralise

    for note in usage.notes():
        click.echo(f"note: {neutralise(note)}", err=True)
    if usage.queries:
        click.echo(f"note: usage: {usage.queries} queries to {neutralise(usage.source)}", err=True)


# ----------------------------------------------------------------------------
# kubelint-ml usage ...


def _load(
    load_config: Callable[[str | None], Any],
    paths: tuple[str, ...],
    config_path: str | None,
    prometheus: str | None,
    usage_file: str | None,
    lookback: str | None,
    namespace: str | None,
    end: str | None,
    need_prometheus: bool,
    step: str | None = None,
) -> tuple[Any, list]:
    from kubelint_ml.usage.model import UsageError
    from kubelint_ml.usage.source import load_usage, scan, settings

    if not paths:
        raise UsageFailure("no paths given")
    config = load_config(config_path)
    try:
        s = settings(
            getattr(config, "usage", None),
            config_path=config.path,
            prometheus=prometheus,
            usage_file=usage_file,
            lookback=lookback,
            namespace=namespace,
            end=end,
            step=step,
        )
        if need_prometheus and not s.prometheus:
            raise UsageError("give --prometheus URL (or usage.prometheus in the config)")
        if not s.configured:
            raise UsageError("give --prometheus URL or --usage FILE (or usage: in the config)")
        templates = scan(list(paths), config, s.namespace)
        return load_usage(s, templates), templates
    except UsageError as e:
        raise UsageFailure(str(e)) from None


def _common(f: Callable) -> Callable:
    f = click.option("-v", "--verbose", is_flag=True, help="Say which workloads have no series or too few samples.")(f)
    f = click.option("--end", default=None, help="End of the lookback: unix seconds or RFC 3339 [default: now].")(f)
    f = _source_options(f)
    f = click.option(
        "-c",
        "--config",
        "config_path",
        type=FILE,
        help="Config file [default: .kubelint-ml.yaml found upward].",
    )(f)
    return f


def _write_report(found: Any, templates: list, fmt: str, paths: tuple[str, ...], out: Any) -> None:
    if fmt == "html":  # a chart per container
        from kubelint_ml.usage.html import from_usage, write_page

        page = from_usage(found, templates)
        page.inputs = list(paths)
        write_page(page, out)
    else:
        from kubelint_ml.usage.report import write

        write(found, templates, fmt, out)


def group(load_config: Callable[[str | None], Any]) -> click.Group:
    """The ``usage`` command group; ``load_config(path or None)`` is the command line's config loader
    (it exits 2 on a bad config)."""

    @click.group("usage")
    def usage() -> None:
        """Observed usage from Prometheus: snapshots and sizing reports."""

    @usage.command("export")
    @click.argument("paths", nargs=-1)
    @click.option(
        "--prometheus", metavar="URL", help="The Prometheus (or compatible) server [default: usage.prometheus]."
    )
    @click.option("-o", "--output", "output", required=True, type=FILE, help="The snapshot file to write.")
    @_common
    def export(
        paths: tuple[str, ...],
        prometheus: str | None,
        output: str,
        config_path: str | None,
        lookback: str | None,
        step: str | None,
        namespace: str | None,
        end: str | None,
        verbose: bool,
    ) -> None:
        """Write a usage snapshot (versioned JSON) for the workloads in PATH..."""
        from kubelint_ml.usage import snapshot
        from kubelint_ml.usage.model import UsageError

        found, _ = _load(
            load_config, paths, config_path, prometheus, None, lookback, namespace, end, need_prometheus=True, step=step
        )
        if verbose:
            _notes(found)
        try:
            snapshot.write(found, output)
        except UsageError as e:
            raise UsageFailure(str(e)) from None
        click.echo(
            f"wrote {output}: {sum(len(w.containers) for w in found.workloads.values())} containers of "
            f"{len(found.workloads)} workload templates ({found.queries} queries)",
            err=True,
        )

    @usage.command("report")
    @click.argument("paths", nargs=-1)
    @click.option("--prometheus", metavar="URL", help="The Prometheus (or compatible) server.")
    @click.option("--usage", "usage_file", type=FILE, help="A snapshot from `usage export`.")
    @click.option("-f", "--format", "fmt", type=click.Choice(("text", "json", "markdown", "html")), default="text")
    @click.option("-o", "--output", "output", type=FILE, help="Write the report to FILE [default: stdout].")
    @_common
    def report(
        paths: tuple[str, ...],
        prometheus: str | None,
        usage_file: str | None,
        fmt: str,
        output: str | None,
        config_path: str | None,
        lookback: str | None,
        step: str | None,
        namespace: str | None,
        end: str | None,
        verbose: bool,
    ) -> None:
        """A table per workload and container: requests and limits today, median, p99, peak, recommended
        (html: a chart per container, most at risk first)."""

        found, templates = _load(
            load_config,
            paths,
            config_path,
            prometheus,
            usage_file,
            lookback,
            namespace,
            end,
            need_prometheus=False,
            step=step,
        )
        if verbose:
            _notes(found)
        if output and output != "-":
            from kubelint_ml.atomic import write_atomic

            try:
                write_atomic(output, functools.partial(_write_report, found, templates, fmt, paths))
            except OSError as e:
                raise UsageFailure(f"cannot write {output}: {e.strerror}") from None
        else:
            _write_report(found, templates, fmt, paths, sys.stdout)

    return usage
