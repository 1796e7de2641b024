"""One run: sources -> first pass (facts) -> second pass (lint) -> filtering -> the result.

The rooms it uses, each on its own: :mod:`kubelint_ml.run.facts` (the first
pass), :mod:`kubelint_ml.run.runner` (one file), :mod:`kubelint_ml.run.parallel`
(the second pass shared by forked workers, over :mod:`kubelint_ml.run.pool`).
"""

from __future__ import annotations

import gc
import os
import sys
from fnmatch import fnmatch
from typing import Any

from kubelint_ml import __version__
from kubelint_ml.engine.api import PSEUDO_RULES
from kubelint_ml.engine.context import Facts, may_hold_context
from kubelint_ml.engine.core import Engine, render_error
from kubelint_ml.engine.rulefile import Rule
from kubelint_ml.findings import Finding, RuleInfo, RunResult
from kubelint_ml.input import charts
from kubelint_ml.input.loader import LoadResult
from kubelint_ml.input.sources import Source, collect, display_path, excluded, file_key
from kubelint_ml.records import replace
from kubelint_ml.run import parallel
from kubelint_ml.run.config import Config
from kubelint_ml.run.facts import MAX_KEPT_BYTES, add_facts, context_facts, first_pass, with_cluster_nodes
from kubelint_ml.run.inputs import RunInputs
from kubelint_ml.run.runner import FileResult, Runner

GC_YOUNG_THRESHOLD = 50_000
GC_MIDDLE_THRESHOLD = 50

# Every pseudo-rule (parse-error, schema-invalid, ...) is described in every run's rule metadata.
INPUT_RULES = PSEUDO_RULES


# ----------------------------------------------------------------------------
# Filtering


def apply_excludes(findings: list[Finding], config: Config) -> None:
    rules = config.exclude
    if not rules:
        return
    for f in findings:
        if f.suppressed is not None:
            continue
        obj = f.object
        for ex in rules:
            if "rule" in ex and ex["rule"] != f.rule:
                continue
            if "path" in ex and not excluded(f.file, (ex["path"],)):
                continue
            if "kind" in ex and (obj is None or obj.kind != ex["kind"]):
                continue
            if "namespace" in ex and (obj is None or obj.namespace != ex["namespace"]):
                continue
            if "name" in ex and (obj is None or not fnmatch(obj.name, ex["name"])):
                continue
            f.suppressed = ex.get("reason") or "excluded by config"
            break


def with_profile_files(sources: list[Source], config: Config) -> list[Source]:
    """KubeletConfiguration files named in the profile are linted too, once."""
    paths = config.profile.kubelet_config_paths()
    if not paths:
        return sources
    seen = {os.path.normcase(s.identity) if s.identity else file_key(s.real) for s in sources if s.real != "-"}
    extra = []
    for path in paths:
        real = file_key(path)
        if real not in seen and os.path.isfile(path):
            seen.add(real)
            extra.append(Source(display_path(path), path))
    return sources + sorted(extra, key=lambda s: s.path) if extra else sources


def repo_root() -> str:
    """The repository root (nearest directory with .git), else the cwd: SARIF URIs are relative to it."""
    here = os.getcwd()
    probe = here
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def _finish(findings: list[Finding], config: Config, in_order: bool = False) -> list[Finding]:
    """Config excludes applied, sorted (unless ``in_order``: already), one "no schema" note per kind."""
    apply_excludes(findings, config)
    if not in_order:
        findings.sort(key=Finding.sort_key)
    return once_per_kind(once_per_source(findings))


def once_per_source(findings: list[Finding]) -> list[Finding]:
    """One finding for each place of a base or patch that several rendered outputs share.

    Overlays that build on one base (``aws/``, ``gke/`` over ``base/``) each render its objects,
    and a finding on such an object maps back to the same line of the same file each time: the
    user sees it once, with every rendered location it comes from among its related locations.
    Findings that differ in anything shown (the object's name an overlay prefixes, the numbers an
    overlay's patch changes) stay apart."""
    if not any(f.related for f in findings):
        return findings
    first: dict[tuple, int] = {}
    out: list[Finding] = []
    for f in findings:
        if not any(len(r) > 3 and r[3] == "rendered output" for r in f.related):
            out.append(f)
            continue
        key = (
            f.rule,
            f.severity,
            f.message,
            f.detail,
            f.file,
            f.line,
            f.column,
            f.path,
            f.object,
            f.container,
            f.suppressed,
        )
        at = first.get(key)
        if at is None:
            first[key] = len(out)
            out.append(f)
            continue
        kept = out[at]
        more = tuple(r for r in f.related if r not in kept.related)
        if more:
            out[at] = replace(kept, related=kept.related + more)
    return out


def once_per_kind(findings: list[Finding]) -> list[Finding]:
    """Keep the first "no schema for <kind>" note of each kind (findings are sorted)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for f in findings:
        if f.data.get("noSchema") and f.object is not None:
            key = (f.object.apiVersion, f.object.kind)
            if key in seen:
                continue
            seen.add(key)
        out.append(f)
    return out


def run(paths: list[str], inputs: RunInputs, session: dict | None = None) -> tuple[RunResult, list[str]]:
    """Lint ``paths`` with ``inputs``; ``session``, when given, gets what --fix needs to lint a file again."""
    # Parse trees are many young, acyclic containers: collecting every 700 allocations
    # only costs time (about 7% of a run). Cycles are still collected, less often. What
    # survives (the findings) is scanned again at each middle-generation collection: those
    # come every GC_MIDDLE_THRESHOLD young ones, not every 10.
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], GC_YOUNG_THRESHOLD), max(threshold[1], GC_MIDDLE_THRESHOLD), *threshold[2:])
    try:
        return _run(paths, inputs, session)
    finally:
        gc.set_threshold(*threshold)


def _run(paths: list[str], inputs: RunInputs, session: dict | None) -> tuple[RunResult, list[str]]:
    config, rules, jobs, policies, schema = inputs.config, inputs.rules, inputs.jobs, inputs.policies, inputs.schema
    path_excludes = tuple(ex["path"] for ex in config.exclude if set(ex) <= {"path", "reason"} and "path" in ex)
    sources = with_profile_files(collect(paths, path_excludes, config.respect_gitignore, inputs.stdin_name), config)
    # Charts and kustomizations: their files out, their rendered output in (kubelint_ml/input/render.py).
    owners = charts.owners_for(sources)
    if owners is not None:  # the renderer is imported only then
        from kubelint_ml.input import render as rendering

        plan = rendering.plan(
            sources, inputs.render or charts.options(config), config.limits.max_file_bytes, owners, max(jobs, 1)
        )
        sources, warnings, notes, failures = plan.sources, plan.warnings, plan.notes, plan.failures
    else:
        charts.STREAMS.clear()
        warnings, notes, failures = [], [], []
    stdin_data = None
    if any(s.real == "-" for s in sources):
        stdin_data = sys.stdin.buffer.read(config.limits.max_file_bytes + 1)
    # A run big enough to go parallel keeps no bytes past the threshold: its workers read
    # their files again (from the page cache) rather than every process hold the whole input.
    may_fork = parallel.use_parallel(jobs, len(sources), parallel.PARALLEL_MIN_BYTES)
    # A sequential run lints the files that hold context objects from the first pass's parse.
    parsed: dict[int, LoadResult] | None = None if may_fork else {}
    facts, kept, size = first_pass(
        sources,
        config,
        stdin_data,
        parallel.PARALLEL_MIN_BYTES if may_fork else MAX_KEPT_BYTES,
        jobs,
        parsed,
        crds=schema is not None,  # read only to validate against
    )
    context_facts(facts, inputs.context_paths(), sources, config)
    config = with_cluster_nodes(config, facts)
    if schema is not None:
        for crd in facts.crds:
            schema.add_crd(crd)
    known = set(inputs.all_rule_ids or ()) | (policies.rule_ids() if policies is not None else set())
    engine = Engine(rules, severity_overrides=inputs.severity, known_rule_ids=known)
    runner = Runner(
        engine, config, facts, schema, inputs.verbose, inputs.usage, policies, resolve_fixes=inputs.resolve_fixes
    )
    if policies is not None:  # data.inventory for referential templates; --combine runs in one process
        jobs = policies.prepare(sources, config.limits, stdin_data, jobs)
    if session is not None:  # what --fix needs to lint a file again (kubelint_ml.run.fixing)
        session.update(
            runner=runner,
            config=config,
            sources=sources,
            stdin=stdin_data,
            jobs=jobs,
            finish=lambda found: _finish(found, config),
        )
    files = list(zip(sources, kept))
    del kept  # each file's bytes are let go as soon as it is linted
    total, run_notes, in_order = _second_pass(runner, files, jobs, size, parsed or {})
    if failures:  # a chart or kustomization that did not render: a render-error on its file, counted
        total.findings.extend(render_error(file, message) for file, message in failures)
        in_order = False
    findings = _finish(total.findings, config, in_order)
    result = RunResult(
        findings=[f for f in findings if f.suppressed is None],
        suppressed=[f for f in findings if f.suppressed is not None],
        rules=_rule_infos(rules, inputs.severity, schema, policies),
        files=len(sources) + len({file for file, _ in failures}),
        documents=total.documents,
        objects=total.objects,
        fail_level=inputs.fail_level,
        root=repo_root(),
        tool_version=__version__,
        warnings=warnings,
    )
    if inputs.verbose and facts.cluster:
        run_notes.append(facts.cluster.describe())
    return result, notes + total.notes + run_notes


def _second_pass(
    runner: Runner, inputs: parallel.Inputs, jobs: int, size: int, parsed: dict[int, LoadResult]
) -> tuple[FileResult, list[str], bool]:
    """Every file linted, in this process or shared with forked workers: the results added up,
    the run's own notes, and whether the findings are already in order. ``parsed``: the first
    pass's parse of some files, by index (a sequential run's)."""
    run_notes: list[str] = []
    joined = parallel.Concatenation()
    if parallel.use_parallel(jobs, len(inputs), size):
        results = parallel.lint_parallel(runner, inputs, jobs, run_notes)  # each span's findings sorted
        results.reverse()
        while results:
            joined.add(results.pop())  # each span's own list let go as it is added
    else:
        # Each file's findings sorted, as the parallel path sorts each span's: on a tree whose files
        # come in order, no sort of every finding (a key for each at once) is left for the end.
        # Policies add findings to the files' results later (Policies.flush): those wait for it.
        waiting: list[FileResult] = []
        for i, (source, data) in enumerate(inputs):
            inputs[i] = (source, None)  # the bytes are not needed after this file
            result = runner.lint(source, data, parsed.pop(i, None))
            if runner.policies is None:
                result.findings.sort(key=Finding.sort_key)
                joined.add(result)
            else:
                waiting.append(result)
        if runner.policies is not None:
            runner.policies.flush()
            for result in waiting:
                result.findings.sort(key=Finding.sort_key)
                joined.add(result)
    total, in_order = joined.total, joined.sorted
    if runner.policies is not None and runner.policies.load_findings():  # once per run, not per worker
        total.findings.extend(runner.policies.load_findings())
        in_order = False
    if runner.policies is not None and runner.policies.combine:
        combined = runner.policies.lint_combined(runner.combined)
        if combined:
            total.findings.extend(combined)
            in_order = False  # appended after every file's
    return total, run_notes, in_order


def _rule_infos(
    rules: list[Rule], severity: dict[str, str] | None, schema: Any, policies: Any = None
) -> dict[str, RuleInfo]:
    """What the reports say of each rule that can appear in the run, by id."""
    infos = {r.id: r.info() for r in rules}
    infos.update(INPUT_RULES)
    if policies is not None:
        infos.update(policies.rule_infos())
    for rid, sev in (severity or {}).items():
        if rid in infos:
            infos[rid] = replace(infos[rid], severity=sev)
    return dict(sorted(infos.items()))


def lint_text(
    data: bytes,
    rules: list[Rule],
    config: Config | None = None,
    display: str = "<input>",
    severity: dict[str, str] | None = None,
    schema: Any = None,
    usage: Any = None,
) -> list[Finding]:
    """Lint one in-memory file with the given rules (examples, tests, embedding)."""
    config = config or Config()
    facts = Facts()
    if may_hold_context(data, schema is not None):
        add_facts(facts, data, display, config.limits, crds=schema is not None)
    facts.add_profile(config.profile)
    config = with_cluster_nodes(config, facts)
    if schema is not None:
        for crd in facts.crds:
            schema.add_crd(crd)
    runner = Runner(Engine(rules, severity_overrides=severity), config, facts, schema, usage=usage)
    findings = runner.lint_bytes(data, display).findings
    return _finish(findings, config)
