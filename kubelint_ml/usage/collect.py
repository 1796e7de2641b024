"""Sizing from Prometheus: a few queries per namespace, summaries per workload container.

Per namespace, one query per metric, whatever the number of workloads:

* memory: ``container_memory_working_set_bytes`` (cAdvisor);
* cpu: ``rate(container_cpu_usage_seconds_total[w])`` at the step (a subquery);
* GPU memory: ``DCGM_FI_DEV_FB_USED`` and ``DCGM_FI_DEV_FB_FREE`` (MiB), with the
  exporter's ``namespace``/``pod``/``container`` labels or their ``exported_`` forms;
* kube-state-metrics: restarts (``kube_pod_container_status_restarts_total``)
  and OOM kills (``kube_pod_container_status_last_terminated_reason``);
* pod labels and owners (``kube_pod_labels``, ``kube_pod_owner``) from ``/api/v1/series``.

The samples a container's quantiles are computed over are its series read at
the step (``usage.step``): the value each series has (its latest raw sample,
within the server's lookback delta) at every multiple of the step since the
epoch in the lookback ``(end - lookback, end]`` -- what the subquery
``m[lookback:step]`` evaluates, the :class:`Grid`. The count, median, p90 and
p99 are over those; the memory peak is over every raw sample
(``max_over_time(m[lookback])``), so a limit is judged against the real peak.

All of a metric's statistics come back per series in one range query over
three instants 1 ms apart (:func:`stats_query`): the quantile's ``q`` is 0.5,
0.9 and 0.99 at the three instants, so the server reads the samples once for
the three quantiles; the count and the peak are joined with ``or``, each tagged
with a label. A 14-day, 1-minute history is never transferred. Series with an
empty ``container`` label (cAdvisor's pod-level series) or ``container="POD"``
(the pause container) are not containers.

A workload container's samples are those of all its series (replicas, runs of
a CronJob, restarted containers), pooled. When it has one series the server's
statistics are its statistics; when it has several, their samples at the step
are fetched (one more query per metric and namespace, for those pods only) and
the quantiles are computed over the pooled samples, the way
``quantile_over_time`` computes them (and numpy's default, linear
interpolation); the peak is the largest of the series' peaks.
"""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.usage.mapping import Matcher, Pod, matcher_for, overrides_from_config, pods_from_series
from kubelint_ml.usage.model import MI, ContainerUsage, GpuStats, Key, Stats, Usage, UsageError, Window, WorkloadUsage
from kubelint_ml.usage.prometheus import BadSample, Prometheus, PrometheusError, points, server_text, value

MEMORY = "container_memory_working_set_bytes"
CPU = "container_cpu_usage_seconds_total"
FB_USED, FB_FREE = "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"
RESTARTS = "kube_pod_container_status_restarts_total"
TERMINATED = "kube_pod_container_status_last_terminated_reason"
STAT = "kubelint_ml_stat"
QUANTILES = (("median", 0.5), ("p90", 0.9), ("p99", 0.99))
_SELECTOR = re.compile(r'\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*')


@dataclass(frozen=True, slots=True)
class Target:
    """A workload template linted, and its containers."""

    key: Key
    containers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Grid:
    """The instants a window is read at, in milliseconds: every multiple of the step in
    ``(end - lookback, end]``, from ``first`` to ``last``. ``range`` is the subquery range that,
    evaluated at ``last``, ``last + 1`` or ``last + 2`` ms, covers exactly those instants (half a
    step more than ``last - first``, so neither end sits on a boundary)."""

    first: int
    last: int
    step: int
    range: int

    @classmethod
    def of(cls, window: Window) -> Grid:
        step = int(round(window.step * 1000))
        end, lookback = int(round(window.end * 1000)), int(round(window.lookback * 1000))
        last = end // step * step
        first = (end - lookback) // step * step + step
        return cls(first, last, step, last - first + step // 2)

    def instants(self) -> list[int]:
        return list(range(self.first, self.last + 1, self.step))

    def subquery(self) -> str:
        return f"[{self.range}ms:{_s(self.step / 1000)}]"


@dataclass
class Plan:
    """How to ask: the window, label matchers every selector carries, the CPU rate window."""

    window: Window
    selector: str = ""  # extra matchers, e.g. cluster="prod"
    cpu_window: float = 300.0
    overrides: list = field(default_factory=list)
    concurrency: int = 4  # namespaces asked about at once


def check_selector(text: str) -> str:
    text = (text or "").strip().strip(",")
    if not text:
        return ""
    for part in _split_matchers(text):
        if not _SELECTOR.fullmatch(part):
            raise UsageError(f'usage.selector: {part.strip()!r} is not a label matcher (name="value", =~, !=, !~)')
    return text


def _split_matchers(text: str) -> list[str]:
    parts, cur, quoted, esc = [], "", False, False
    for ch in text:
        if esc:
            cur, esc = cur + ch, False
            continue
        if ch == "\\" and quoted:
            cur, esc = cur + ch, True
            continue
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def _q(text: str) -> str:
    """A PromQL string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _regex_any(names: Iterable[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names))


def _sel(
    plan: Plan, namespace: str, container: bool = True, prefix: str = "", pods: Iterable[str] | None = None
) -> str:
    parts = [f"{prefix}namespace={_q(namespace)}"]
    if container:
        parts += [f'{prefix}container!=""', f'{prefix}container!="POD"']
    if pods is not None:
        parts.append(f"{prefix}pod=~{_q(_regex_any(pods))}")
    if plan.selector:
        parts.append(plan.selector)
    return "{" + ",".join(parts) + "}"


def _s(seconds: float) -> str:
    return f"{int(seconds)}s" if seconds == int(seconds) else f"{int(seconds * 1000)}ms"


def _tagged(parts: list[tuple[str, str]]) -> str:
    return " or ".join(f'label_replace({expr}, "{STAT}", "{name}", "", "")' for name, expr in parts)


def _at(ms: int) -> str:
    return f"{ms // 1000}.{ms % 1000:03d}"


def stats_query(grid: Grid, at_step: str, peak: str) -> str:
    """Count, median, p90, p99 of ``at_step`` (a subquery: the samples at the step) and ``peak``
    (an expression giving each series' peak), for a range query from ``grid.last`` to
    ``grid.last + 2`` ms at a 1 ms step: the quantile's ``q`` is 0.5, 0.9, 0.99 at the three
    instants (:data:`QUANTILES`), so the samples are read and sorted once per quantile but
    fetched from storage once."""
    t = [f"{_at(grid.last + k)}5" for k in range(len(QUANTILES) - 1)]  # between the instants
    q = " + ".join(
        f"{qv} * "
        + " * ".join(
            ([f"(time() > bool {t[k - 1]})"] if k else []) + ([f"(time() < bool {t[k]})"] if k < len(t) else [])
        )
        for k, (_, qv) in enumerate(QUANTILES)
    )
    return _tagged(
        [("quantile", f"quantile_over_time({q}, {at_step})"), ("count", f"count_over_time({at_step})"), ("max", peak)]
    )


def stats_range(grid: Grid) -> tuple[int, int, int]:
    """(start, end, step) in ms of the range query :func:`stats_query` is asked in."""
    return grid.last, grid.last + len(QUANTILES) - 1, 1


def memory_at_step(plan: Plan, ns: str, pods: Iterable[str] | None = None) -> str:
    return f"{MEMORY}{_sel(plan, ns, pods=pods)}{Grid.of(plan.window).subquery()}"


def memory_peak(plan: Plan, ns: str) -> str:
    w = plan.window
    return f"max_over_time({MEMORY}{_sel(plan, ns)}[{_s(w.lookback)}] @ {_at(int(round(w.end * 1000)))})"


def cpu_at_step(plan: Plan, ns: str, pods: Iterable[str] | None = None) -> str:
    rate = f"rate({CPU}{_sel(plan, ns, pods=pods)}[{_s(plan.cpu_window)}])"
    return f"{rate}{Grid.of(plan.window).subquery()}"


def _gpu(fn: str, metric: str, plan: Plan, ns: str) -> str:
    """``fn`` over the metric, for both ways DCGM exporter series name the pod."""
    rng = f"[{_s(plan.window.lookback)}]"
    direct = f"{fn}({metric}{_sel(plan, ns)}{rng})"
    exported = f"{fn}({metric}{_sel(plan, ns, prefix='exported_')}{rng})"
    for label in ("namespace", "pod", "container"):
        exported = f'label_replace({exported}, "{label}", "$1", "exported_{label}", "(.+)")'
    return f"({direct} or {exported})"


def gpu_query(plan: Plan, ns: str) -> str:
    return _tagged(
        [
            ("count", _gpu("count_over_time", FB_USED, plan, ns)),
            ("max", _gpu("max_over_time", FB_USED, plan, ns)),
            ("total", f"({_gpu('last_over_time', FB_USED, plan, ns)} + {_gpu('last_over_time', FB_FREE, plan, ns)})"),
        ]
    )


def ksm_query(plan: Plan, ns: str) -> str:
    rng = f"[{_s(plan.window.lookback)}]"
    restarts = f"{RESTARTS}{_sel(plan, ns)}{rng}"
    oom = f'{TERMINATED}{_sel(plan, ns)[:-1]},reason="OOMKilled"}}{rng}'
    return _tagged(
        [
            ("restarts", f"(max_over_time({restarts}) - min_over_time({restarts}))"),
            ("oom", f"max without (reason) (max_over_time({oom}))"),
        ]
    )


# ----------------------------------------------------------------------------
# Per-series results


SeriesId = tuple[str, str, tuple]  # pod, container, the series' other labels


def _series_id(metric: dict) -> SeriesId:
    other = tuple(sorted((k, v) for k, v in metric.items() if k not in ("pod", "container", STAT, "__name__")))
    return metric.get("pod", ""), metric.get("container", ""), other


def _where(what: str, metric: dict) -> str:
    return f"{what} of pod {server_text(metric.get('pod'))} container {server_text(metric.get('container'))}"


def _is_container(metric: dict) -> bool:
    return bool(metric.get("pod")) and bool(metric.get("container")) and metric.get("container") != "POD"


Excluded = dict[SeriesId, str]  # series left out, with why


def _by_series(
    result: list[dict], what: str, grid: Grid | None = None, bad: Excluded | None = None
) -> dict[SeriesId, dict[str, float]]:
    """Per series, its statistics by name; from an instant query, or from the range query of
    :func:`stats_query` (``grid`` given: the quantile's instants name the quantiles). A series
    with a sample that cannot be sized from is left out, and said in ``bad``."""
    out: dict[SeriesId, dict[str, float]] = defaultdict(dict)
    for r in result:
        metric = r["metric"]
        if not _is_container(metric):
            continue
        sid = _series_id(metric)
        stat = str(metric.get(STAT, ""))
        where = _where(what, metric)
        try:
            found = {}
            for t, raw in points(r, grid is None, where):
                name = stat
                if stat == "quantile":
                    k = _instant(t, grid)
                    if k is None:
                        continue
                    name = QUANTILES[k][0]
                found[name] = value(raw, f"{where} ({name})")
        except BadSample as e:
            if bad is not None:
                bad.setdefault(sid, str(e))
            continue
        if sid not in (bad or {}):
            out[sid].update(found)
    for sid in bad or {}:
        out.pop(sid, None)
    return out


def _instant(t: Any, grid: Grid | None) -> int | None:
    """Which of the stats query's instants ``t`` (unix seconds) is: 0, 1, 2; None otherwise."""
    if grid is None:
        return None
    try:
        k = int(round(float(t) * 1000)) - grid.last
    except (TypeError, ValueError):
        return None
    return k if 0 <= k < len(QUANTILES) else None


def quantile(ordered: list[float], q: float) -> float:
    """The q-quantile of sorted values as Prometheus' quantile_over_time (and numpy) compute it."""
    n = len(ordered)
    rank = q * (n - 1)
    lower = max(0, math.floor(rank))
    upper = min(n - 1, lower + 1)
    weight = rank - math.floor(rank)
    return ordered[lower] * (1 - weight) + ordered[upper] * weight


def stats_of(values: list[float]) -> Stats:
    ordered = sorted(values)
    return Stats(len(ordered), quantile(ordered, 0.5), quantile(ordered, 0.9), quantile(ordered, 0.99), ordered[-1])


def _stats(found: dict[str, float]) -> Stats:
    return Stats(int(found.get("count", 0)), found["median"], found["p90"], found["p99"], found["max"])


# ----------------------------------------------------------------------------


def _pods_of(matcher: Matcher, pods: dict[str, Pod]) -> list[str]:
    return sorted(name for name, pod in pods.items() if matcher.matches(pod))


def collect(prom: Prometheus, targets: list[Target], plan: Plan, verbose_log: list[str] | None = None) -> dict:
    """Summaries for every target: {"workloads": {key: WorkloadUsage}, "missing": {key: why}}."""
    by_ns: dict[str, list[Target]] = defaultdict(list)
    for t in targets:
        by_ns[t.key[0]].append(t)
    workloads: dict[Key, WorkloadUsage] = {}
    missing: dict[Key, str] = {}
    excluded: dict[Key, dict[str, list[str]]] = {}
    any_memory = False

    def one(ns: str) -> tuple[dict[Key, WorkloadUsage], bool, dict[Key, str], dict]:
        gone: dict[Key, str] = {}
        left_out: dict[Key, dict[str, list[str]]] = {}
        found, had_memory = _namespace(prom, ns, by_ns[ns], plan, gone, left_out)
        return found, had_memory, gone, left_out

    namespaces = sorted(by_ns)
    if plan.concurrency > 1 and len(namespaces) > 1:  # the server answers several namespaces at once
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(plan.concurrency, len(namespaces))) as pool:
            results = list(pool.map(one, namespaces))
    else:
        results = [one(ns) for ns in namespaces]
    for found, had_memory, gone, left_out in results:
        workloads.update(found)
        missing.update(gone)
        excluded.update(left_out)
        any_memory = any_memory or had_memory
    if targets and not any_memory:
        names = ", ".join(sorted(by_ns))
        unusable = sorted({why for why in missing.values() if why.startswith("no usable")})
        if unusable:
            raise UsageError(f"{prom.url}: {unusable[0]}; nothing left to size from")
        raise UsageError(
            f"{prom.url}: no {MEMORY} series in namespace(s) {names} over the "
            f"{_s(plan.window.lookback)} before {_iso(plan.window.end)}: is cAdvisor scraped, are "
            "the namespace (--namespace) and --lookback right?"
        )
    return {"workloads": workloads, "missing": missing, "excluded": excluded}


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _namespace(
    prom: Prometheus,
    ns: str,
    targets: list[Target],
    plan: Plan,
    missing: dict[Key, str],
    excluded: dict[Key, dict[str, list[str]]],
) -> tuple[dict[Key, WorkloadUsage], bool]:
    w = plan.window
    at = w.end
    grid = Grid.of(w)
    start, end, step = stats_range(grid)

    bad: dict[str, Excluded] = {"memory": {}, "cpu": {}, "gpu": {}, "ksm": {}}

    def stats(at_step: str, peak: str, what: str, into: Excluded) -> dict[SeriesId, dict[str, float]]:
        found = prom.query_range(stats_query(grid, at_step, peak), start / 1000, end / 1000, step / 1000)
        return _by_series(found, what, grid, into)

    memory = stats(memory_at_step(plan, ns), memory_peak(plan, ns), MEMORY, bad["memory"])
    if not memory:
        why = f"no {MEMORY} series in namespace {ns}; not judged"
        if bad["memory"]:
            first = next(iter(sorted(bad["memory"].items())))[1]
            why = f"no usable {MEMORY} series in namespace {ns} ({len(bad['memory'])} left out: {first}); not judged"
        for t in targets:
            missing[t.key] = why
        return {}, False
    cpu_samples = cpu_at_step(plan, ns)
    cpu = stats(cpu_samples, f"max_over_time({cpu_samples})", CPU, bad["cpu"])
    gpu = _by_series(prom.query(gpu_query(plan, ns), at)[1], FB_USED, bad=bad["gpu"])
    ksm = _by_series(prom.query(ksm_query(plan, ns), at)[1], "kube-state-metrics", bad=bad["ksm"])
    sel = _sel(plan, ns, container=False)
    found = prom.series([f"kube_pod_labels{sel}", f"kube_pod_owner{sel}"], at - w.lookback, at)
    pods = pods_from_series(
        [s for s in found if s.get("__name__") == "kube_pod_labels"],
        [s for s in found if s.get("__name__") == "kube_pod_owner"],
    )
    tables: list[dict[SeriesId, Any]] = [memory, cpu, gpu, ksm, *bad.values()]
    for table in tables:  # series left out still name their pods
        for pod, _, _ in table:
            pods.setdefault(pod, Pod(pod))

    # Workload template -> its pods; series -> (template, container)
    owned: dict[Key, list[str]] = {}
    for t in targets:
        matcher = matcher_for(*t.key, plan.overrides)
        if matcher is None:
            missing[t.key] = (
                f"no pod mapping for kind {t.key[2]}; map it under usage.workloads (a pods regex or labels)"
            )
            continue
        names = _pods_of(matcher, pods)
        if not names:
            missing[t.key] = f"no pods in namespace {ns} over the lookback ({matcher.how or 'by name'}); not judged"
            continue
        owned[t.key] = names

    def group(table: dict[SeriesId, dict[str, float]], key: Key, container: str) -> list[SeriesId]:
        mine = set(owned[key])
        return sorted(s for s in table if s[0] in mine and s[1] == container)

    # Containers with several series need their samples pooled: fetched in one query per metric.
    pooled_pods: dict[str, set[str]] = {"memory": set(), "cpu": set()}
    for t in targets:
        if t.key not in owned:
            continue
        for c in t.containers:
            for metric, table in (("memory", memory), ("cpu", cpu)):
                ids = [s for s in group(table, t.key, c) if table[s].get("count", 0) > 0]
                if len(ids) > 1:
                    pooled_pods[metric].update(s[0] for s in ids)
    raw: dict[str, dict[SeriesId, list[float]]] = {"memory": {}, "cpu": {}}
    if pooled_pods["memory"]:
        raw["memory"] = _samples(
            prom, memory_at_step(plan, ns, pooled_pods["memory"]), grid.last / 1000, MEMORY, bad["memory"]
        )
    if pooled_pods["cpu"]:
        raw["cpu"] = _samples(prom, cpu_at_step(plan, ns, pooled_pods["cpu"]), grid.last / 1000, CPU, bad["cpu"])

    out: dict[Key, WorkloadUsage] = {}
    for t in targets:
        if t.key not in owned:
            continue
        wu = WorkloadUsage(*t.key, pods=len(owned[t.key]))
        for c in t.containers:
            mem_ids = group(memory, t.key, c)
            if not mem_ids and not group(gpu, t.key, c):
                continue
            cu = ContainerUsage(pods=len({s[0] for s in mem_ids}))
            cu.memory = _pooled(memory, mem_ids, raw["memory"], MEMORY, c, bad["memory"])
            cu.cpu = _pooled(cpu, group(cpu, t.key, c), raw["cpu"], CPU, c, bad["cpu"])
            cu.gpu = _gpu_stats(gpu, group(gpu, t.key, c))
            ksm_ids = group(ksm, t.key, c)
            if ksm_ids:
                cu.restarts = int(sum(ksm[s].get("restarts", 0) for s in ksm_ids))
                cu.oom_killed = any(ksm[s].get("oom", 0) > 0 for s in ksm_ids)
            wu.containers[c] = cu
        mine = set(owned[t.key])
        for c in t.containers:
            left_out = [
                why for table in bad.values() for sid, why in sorted(table.items()) if sid[0] in mine and sid[1] == c
            ]
            if left_out:
                excluded.setdefault(t.key, {})[c] = left_out
        if not wu.containers:
            missing[t.key] = f"{len(owned[t.key])} pods, but no usable series for its containers; not judged"
            continue
        out[t.key] = wu
    return out, True


def _samples(prom: Prometheus, promql: str, at: float, what: str, bad: Excluded) -> dict[SeriesId, list[float]]:
    kind, result = prom.query(promql, at)
    out: dict[SeriesId, list[float]] = {}
    for r in result:
        metric = r["metric"]
        if not _is_container(metric):
            continue
        where = _where(what, metric)
        sid = _series_id(metric)
        try:
            out[sid] = [value(v, where) for _, v in points(r, False, where)]
        except BadSample as e:
            bad.setdefault(sid, str(e))
    return out


def _pooled(
    table: dict[SeriesId, dict[str, float]],
    ids: list[SeriesId],
    raw: dict[SeriesId, list[float]],
    what: str,
    container: str,
    bad: Excluded,
) -> Stats | None:
    ids = [s for s in ids if table[s].get("count", 0) > 0]
    for s in ids:
        if not {"median", "p90", "p99", "max"} <= set(table[s]):
            bad.setdefault(
                s,
                f"{what} of pod {server_text(s[0])} container {server_text(container)}: the server "
                "answered without every statistic",
            )
    ids = [s for s in ids if s not in bad]
    if not ids:
        return None
    if len(ids) == 1:
        return _stats(table[ids[0]])
    values: list[float] = []
    for s in ids:
        if s in bad:
            continue
        if s not in raw:
            raise UsageError(
                f"{what} of pod {server_text(s[0])} container {server_text(container)}: the samples vanished "
                "between two queries (data deleted or compacted?); run again"
            )
        values.extend(raw[s])
    ids = [s for s in ids if s not in bad]
    if not values:
        return None
    # The quantiles over the pooled samples at the step; the peak over every raw sample, as the server gave it.
    pooled = stats_of(values)
    return Stats(pooled.samples, pooled.median, pooled.p90, pooled.p99, max(table[s]["max"] for s in ids))


def _gpu_stats(table: dict[SeriesId, dict[str, float]], ids: list[SeriesId]) -> GpuStats | None:
    ids = [s for s in ids if table[s].get("count", 0) > 0 and "max" in table[s]]
    if not ids:
        return None
    totals = [table[s]["total"] for s in ids if "total" in table[s]]
    # Without DCGM_FI_DEV_FB_FREE beside it the device's size is unknown: 0, and nothing is judged on it.
    return GpuStats(
        int(sum(table[s]["count"] for s in ids)),
        len(ids),
        max(table[s]["max"] for s in ids) * MI,
        min(totals) * MI if len(totals) == len(ids) else 0.0,
    )


def from_prometheus(prom: Prometheus, targets: list[Target], plan: Plan, **settings: Any) -> Usage:
    try:
        found = collect(prom, targets, plan)
    except PrometheusError as e:
        raise UsageError(str(e)) from None
    usage = Usage(
        window=plan.window,
        source=prom.url,
        workloads=found["workloads"],
        missing=found["missing"],
        excluded=found["excluded"],
        queries=prom.queries,
        **settings,
    )
    return usage


__all__ = [
    "Grid",
    "Plan",
    "Target",
    "collect",
    "from_prometheus",
    "overrides_from_config",
    "check_selector",
    "stats_of",
]
