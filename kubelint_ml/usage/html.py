"""Sizing in HTML: per workload template and container, the observed distribution against
today's requests and limits and the recommended ones, as an inline SVG chart with the numbers
beside it and the recommended resources as YAML to paste.

Used by ``usage report --format html`` (a page of its own, :func:`write_page`) and by
``check --format html`` with a usage source: the command line hands the findings page
(:mod:`kubelint_ml.report.html`) a :class:`Sizing`, whose ``write_section`` writes the
section and whose ``anchors`` let each usage finding link to its chart. Rows are :func:`kubelint_ml.usage.report.rows`' dicts, so both read
the same numbers as the text, JSON and Markdown reports.

Workloads come most at risk first (a memory limit under the observed peak, or an OOM kill:
the larger the shortfall the earlier), then by what they waste (GiB-hours of memory requested
and not used: request minus median, over the window, per pod), then those not judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TextIO

from kubelint_ml.report.page import esc, generated_at, head, tail

GI = 1024**3


@dataclass
class Sizing:
    rows: list[dict[str, Any]]
    window: dict[str, Any]  # lookback, step, end (unix seconds)
    source: str
    cluster: str | None = None
    min_samples: int = 0
    headroom: float = 0.2
    lookback_seconds: float = 0.0
    inputs: list[str] = field(default_factory=list)
    default_namespace: str = "default"

    def write_section(self, out: TextIO) -> None:
        write_section(self, out)

    def anchors(self) -> dict[tuple[str, str, str, str], str]:
        """(namespace, kind, name, container) -> the id of its chart (a finding links to it)."""
        out: dict[tuple[str, str, str, str], str] = {}
        for i, (row, _) in enumerate(ordered(self)):
            out.setdefault((row["namespace"], row["kind"], row["name"], row["container"]), f"sz{i}")
        return out


def from_usage(usage: Any, templates: list) -> Sizing:
    from kubelint_ml.usage.report import rows

    source = usage.source
    if getattr(usage, "origin", ""):
        source = f"snapshot {usage.source}, exported from {usage.origin}"
    return Sizing(
        rows(usage, templates),
        usage.window.to_dict(),
        source,
        usage.cluster,
        usage.min_samples,
        usage.headroom,
        usage.window.lookback,
        default_namespace=usage.default_namespace,
    )


def for_check(usage: Any, paths: tuple[str, ...] | list[str], config: Any) -> Sizing | None:
    """The sizing section of ``check --format html`` when a usage source is configured, else None."""
    if usage is None:
        return None
    from kubelint_ml.usage.source import scan

    return from_usage(usage, scan(list(paths), config, usage.default_namespace))


# ----------------------------------------------------------------------------
# Numbers


def _bytes(v: Any) -> str:
    from kubelint_ml.usage.model import show_bytes

    return show_bytes(v) if isinstance(v, (int, float)) else "-"


def _cores(v: Any) -> str:
    from kubelint_ml.usage.model import show_cores

    return show_cores(v) if isinstance(v, (int, float)) else "-"


def _quantity(v: Any) -> str:
    from kubelint_ml.usage.model import show_quantity

    return show_quantity(v) if isinstance(v, int) else _bytes(v)


def judge(row: dict[str, Any], lookback_seconds: float) -> dict[str, Any]:
    """What the order and the badges rest on: risk (bytes the peak is over the limit; OOM kill),
    waste (GiB-hours requested and unused per pod), headroom (limit minus peak)."""
    mem = ((row.get("usage") or {}).get("memory")) or {}
    req, lim = row["requests"].get("memory"), row["limits"].get("memory")
    peak, median = mem.get("max"), mem.get("median")
    out: dict[str, Any] = {"over": 0.0, "oom": bool((row.get("usage") or {}).get("oomKilled")), "waste": 0.0}
    if row["judged"] and isinstance(peak, (int, float)):
        if isinstance(lim, (int, float)):
            out["headroom"] = lim - peak
            out["over"] = max(0.0, peak - lim)
        if isinstance(req, (int, float)) and isinstance(median, (int, float)):
            out["waste"] = max(0.0, req - median) / GI * lookback_seconds / 3600
    return out


def ordered(sizing: Sizing) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    judged = [(r, judge(r, sizing.lookback_seconds)) for r in sizing.rows]

    def key(item: tuple[dict[str, Any], dict[str, Any]]) -> tuple:
        r, j = item
        at_risk = j["over"] > 0 or j["oom"]
        return (not r["judged"], not at_risk, -j["over"], -j["waste"], r["workload"], r["container"])

    return sorted(judged, key=key)


# ----------------------------------------------------------------------------
# The chart

W, H, LEFT, RIGHT = 460, 92, 10, 10
# Reference lines: name, dash pattern (the pattern and the letter tell them apart, not the colour).
LINES = {
    "request": ("R", "", "var(--info)"),
    "limit": ("L", "6 3", "var(--err)"),
    "recommended request": ("R\u2032", "2 2", "var(--ok)"),
    "recommended limit": ("L\u2032", "8 2 2 2", "var(--ok)"),
    "device memory": ("D", "6 3", "var(--acc)"),
}


def chart(title: str, stats: dict[str, Any], lines: dict[str, float], show: Any) -> str:
    """An SVG: the range 0..peak, a box from the median to p99 with p90 marked, the peak as a
    diamond, and a vertical line per request/limit (today's and recommended), each lettered."""
    values = [v for v in (stats.get("median"), stats.get("p90"), stats.get("p99"), stats.get("max")) if v is not None]
    top = _scale(max(values + list(lines.values()) + [1e-9]) * 1.05, show is _bytes)
    span = W - LEFT - RIGHT

    def x(v: float) -> float:
        return round(LEFT + span * (v / top), 1)

    summary = "; ".join(
        [
            f"{k if k != 'max' else 'peak'} {show(stats[k])}"
            for k in ("median", "p90", "p99", "max")
            if stats.get(k) is not None
        ]
        + [f"{k} {show(v)}" for k, v in lines.items()]
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
        f'aria-label="{esc(title + ": " + summary)}" class="chart"><title>{esc(title + ": " + summary)}</title>',
        f'<line x1="{LEFT}" y1="56" x2="{W - RIGHT}" y2="56" stroke="currentColor" stroke-width="1"/>',
    ]
    for k in range(5):  # ticks at quarters of the scale, labelled
        v = top * k / 4
        anchor = "start" if k == 0 else "end" if k == 4 else "middle"
        parts.append(
            f'<line x1="{x(v)}" y1="56" x2="{x(v)}" y2="74" stroke="currentColor" stroke-width=".5"/>'
            f'<text x="{x(v)}" y="{H - 2}" font-size="12" fill="currentColor" text-anchor="{anchor}">'
            f"{esc(show(v) if k else '0')}</text>"
        )
    peak = stats.get("max")
    if peak is not None:
        parts.append(f'<rect x="{LEFT}" y="53" width="{x(peak) - LEFT}" height="6" fill="currentColor" opacity=".25"/>')
    med, p90, p99 = stats.get("median"), stats.get("p90"), stats.get("p99")
    if med is not None and p99 is not None:
        parts.append(
            f'<rect x="{x(med)}" y="46" width="{max(1.5, x(p99) - x(med))}" height="20" fill="currentColor" '
            'opacity=".45"><title>median to p99</title></rect>'
        )
    if med is not None:
        parts.append(f'<line x1="{x(med)}" y1="44" x2="{x(med)}" y2="68" stroke="currentColor" stroke-width="3"/>')
    if p90 is not None:
        parts.append(f'<line x1="{x(p90)}" y1="48" x2="{x(p90)}" y2="64" stroke="currentColor" stroke-width="1.5"/>')
    if peak is not None:
        px = x(peak)
        parts.append(
            f'<path d="M{px} 48 L{px + 6} 56 L{px} 64 L{px - 6} 56 Z" fill="currentColor"><title>peak</title></path>'
        )
    for name, value in lines.items():
        letter, dash, colour = LINES[name]
        lx = x(value)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        y = 28 if name.startswith("recommended") else 14  # today's letters above the recommended ones
        parts.append(
            f'<line x1="{lx}" y1="{y + 2}" x2="{lx}" y2="72" style="stroke:{colour}" stroke-width="2"{dash_attr}>'
            f"<title>{esc(name)} {esc(show(value))}</title></line>"
            f'<text x="{lx}" y="{y}" font-size="14" font-weight="700" style="fill:{colour}" text-anchor="middle">'
            f"{letter}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _scale(value: float, in_bytes: bool) -> float:
    """The end of the axis: four ticks of a round size (1 to 8 times a power of ten, in
    GiB or MiB for bytes, in cores for cpu) reaching ``value``."""
    import math

    unit = (GI if value >= GI else 1024**2) if in_bytes else 1.0
    quarter = value / unit / 4
    power = 10 ** math.floor(math.log10(quarter)) if quarter > 0 else 1.0
    step = next(m * power for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * power >= quarter)
    return step * 4 * unit


def _legend(stats: dict[str, Any], lines: dict[str, float], show: Any, extra: list[tuple[str, str]]) -> str:
    rows = [
        (label, show(stats[k]))
        for k, label in (("median", "median"), ("p90", "p90"), ("p99", "p99"), ("max", "peak"))
        if stats.get(k) is not None
    ]
    rows += [(f"{name} ({LINES[name][0]})", show(v)) for name, v in lines.items()]
    rows += extra
    body = "".join(f'<tr><th scope="row">{esc(a)}</th><td class="n">{esc(b)}</td></tr>' for a, b in rows)
    return f"<table>{body}</table>"


def _yaml(row: dict[str, Any]) -> str:
    rec = ((row.get("recommended") or {}).get("memory")) or {}
    if not rec:
        return ""
    from kubelint_ml.usage.model import show_quantity

    return (
        f"# {row['workload']}, container {row['container']}\n"
        f"- name: {row['container']}\n  resources:\n    requests:\n      memory: {show_quantity(rec['request'])}\n"
        f"    limits:\n      memory: {show_quantity(rec['limit'])}\n"
    )


def _container(row: dict[str, Any], j: dict[str, Any], index: int) -> str:
    u = row.get("usage") or {}
    mem, cpu, gpu = u.get("memory") or {}, u.get("cpu") or {}, u.get("gpuMemory") or {}
    req, lim = row["requests"], row["limits"]
    rec = ((row.get("recommended") or {}).get("memory")) or {}
    badges = []
    if j["oom"]:
        badges.append('<span class="risk">\u2716 OOM-killed</span>')
    if j["over"] > 0:
        badges.append(f'<span class="risk">\u2716 peak over the limit by {esc(_bytes(j["over"]))}</span>')
    if j["waste"] >= 0.05:
        badges.append(f'<span class="waste">\u25b2 {j["waste"]:,.1f} GiB-hours requested and unused per pod</span>')
    if "headroom" in j and j["headroom"] >= 0:
        badges.append(f"<span>headroom under the limit at the peak: {esc(_bytes(j['headroom']))}</span>")
    if not row["judged"]:
        why = row.get("reason") or "no data"
        badges.append(f"<span>{esc(why if 'not judged' in why else 'not judged: ' + why)}</span>")
    out = [
        f'<article class="sz" id="sz{index}" data-workload="{esc(row["workload"])}" '
        f'data-container="{esc(row["container"])}">'
        f"<h3>{esc(row['workload'])} · container <code>{esc(row['container'])}</code></h3>"
        f'<p class="meta">{esc(row.get("file", ""))}; {_count(u.get("pods", 0), "pod")}; '
        f"{esc(mem.get('samples', 0))} memory samples</p>"
        f"<p>{' · '.join(badges)}</p>",
    ]
    if mem:
        lines = {k: v for k, v in (("request", req.get("memory")), ("limit", lim.get("memory"))) if v is not None}
        if rec:
            lines["recommended request"] = rec["request"]
            lines["recommended limit"] = rec["limit"]
        extra = [(f"{k} today", "none") for k in ("request", "limit") if k not in lines]
        if rec and req.get("memory") is not None:
            extra.append(("request change", _signed(rec["request"] - req["memory"])))
        if rec and lim.get("memory") is not None:
            extra.append(("limit change", _signed(rec["limit"] - lim["memory"])))
        out.append(
            '<div class="row"><div><h4>memory (working set)</h4>'
            + chart(f"memory of {row['container']}", mem, lines, _bytes)
            + "</div>"
            + _legend(mem, lines, _bytes, extra)
            + "</div>"
        )
    if cpu:
        lines = {k: v for k, v in (("request", req.get("cpu")), ("limit", lim.get("cpu"))) if v is not None}
        out.append(
            '<div class="row"><div><h4>cpu (cores)</h4>'
            + chart(f"cpu of {row['container']}", cpu, lines, _cores)
            + '<p class="meta">No cpu recommendation: sized from memory.</p></div>'
            + _legend(cpu, lines, _cores, [])
            + "</div>"
        )
    if gpu:
        dev = gpu.get("deviceMemory") or 0
        lines = {"device memory": dev} if dev else {}
        share = f"{gpu['peak'] / dev:.0%}" if dev else "device size unknown"
        out.append(
            '<div class="row"><div><h4>GPU memory (peak per device)</h4>'
            + chart(f"GPU memory of {row['container']}", {"max": gpu.get("peak")}, lines, _bytes)
            + "</div>"
            + _legend(
                {"max": gpu.get("peak")},
                lines,
                _bytes,
                [("devices", str(gpu.get("devices", 0))), ("peak share", share)],
            )
            + "</div>"
        )
    snippet = _yaml(row)
    if snippet:
        out.append(
            f'<details open><summary>recommended resources (YAML)</summary><pre class="yaml">{esc(snippet)}</pre></details>'
        )
    for why in row.get("excluded", ()):
        out.append(f'<p class="meta">series left out: {esc(why)}</p>')
    out.append("</article>\n")
    return "".join(out)


def _count(n: Any, word: str) -> str:
    return f"{esc(n)} {word}" + ("" if n == 1 else "s")


def _signed(delta: float) -> str:
    return ("+" if delta > 0 else "\u2212" if delta < 0 else "\u00b1") + _bytes(abs(delta))


def _end_text(end: Any) -> str:
    import time

    try:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(end)))
    except (TypeError, ValueError, OverflowError, OSError):
        return str(end)


def write_section(sizing: Sizing, out: TextIO) -> None:
    items = ordered(sizing)
    judged = sum(1 for r, _ in items if r["judged"])
    risk = sum(1 for r, j in items if j["over"] > 0 or j["oom"])
    waste = sum(j["waste"] for _, j in items)
    w = sizing.window
    out.write(
        '<section id="sizing"><h2>Sizing from observed usage</h2>\n'
        f'<dl class="meta"><dt>window</dt><dd>{esc(w.get("lookback"))} to {esc(_end_text(w.get("end")))} '
        f"(samples every {esc(w.get('step'))})</dd><dt>source</dt><dd>{esc(sizing.source)}</dd>"
        + (f"<dt>cluster</dt><dd>{esc(sizing.cluster)}</dd>" if sizing.cluster else "")
        + f"<dt>judged</dt><dd>from {esc(sizing.min_samples)} samples on</dd></dl>\n"
        f"<p>Recommended: request at the median working set, limit at the peak + {sizing.headroom:.0%} "
        "(rounded up). In each chart the bar is the range up to the peak (\u25c6), the box the median (thick) "
        f"to p99 (p90 marked); lines: R request, L limit (dashed), R\u2032 recommended request "
        f"(dotted), L\u2032 recommended limit (dash-dot).</p>\n"
        f"<p>{judged} of {len(items)} containers sized; <b>{risk}</b> at risk (limit under the peak, or "
        f"OOM-killed); <b>{waste:,.1f}</b> GiB-hours of memory requested and unused per pod in the window.</p>\n"
    )
    out.write(_namespaces(items))
    for i, (row, j) in enumerate(items):
        out.write(_container(row, j, i))
    out.write("</section>\n")


def _namespaces(items: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    """Per namespace: containers, sized, at risk, GiB-hours requested and unused; most at risk first."""
    table: dict[str, list[float]] = {}
    for row, j in items:
        t = table.setdefault(row["namespace"], [0, 0, 0, 0.0])
        t[0] += 1
        t[1] += 1 if row["judged"] else 0
        t[2] += 1 if j["over"] > 0 or j["oom"] else 0
        t[3] += j["waste"]
    body = "".join(
        f'<tr><td>{esc(ns)}</td><td class="n">{int(c)}</td><td class="n">{int(sized)}</td>'
        f'<td class="n">{int(risk)}</td><td class="n">{waste:,.1f}</td></tr>'
        for ns, (c, sized, risk, waste) in sorted(table.items(), key=lambda kv: (-kv[1][2], -kv[1][3], kv[0]))
    )
    return (
        '<table class="by-namespace"><thead><tr><th scope="col">namespace</th><th scope="col" class="n">containers</th>'
        '<th scope="col" class="n">sized</th><th scope="col" class="n">at risk</th>'
        f'<th scope="col" class="n">GiB-hours unused per pod</th></tr></thead><tbody>{body}</tbody></table>\n'
    )


def write_page(sizing: Sizing, out: TextIO) -> None:
    """``usage report --format html``."""
    from kubelint_ml import __version__

    out.write(head("kubelint-ml sizing report"))
    out.write(
        '<header><h1>kubelint-ml sizing report</h1>\n<dl class="meta">'
        f"<dt>inputs</dt><dd>{esc(', '.join(sizing.inputs) or '(not recorded)')}</dd>"
        f"<dt>tool</dt><dd>kubelint-ml {esc(__version__)}</dd><dt>written</dt><dd>{esc(generated_at())}</dd></dl>"
        "</header>\n"
    )
    write_section(sizing, out)
    out.write(tail())
