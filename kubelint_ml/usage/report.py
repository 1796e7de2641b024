"""``kubelint-ml usage report``: per workload template and container, requests and limits
today against what was observed, and the recommended values (text, JSON, Markdown; the HTML page
with a chart per container is :mod:`kubelint_ml.usage.html`)."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, TextIO

from kubelint_ml.usage.model import Usage, describe_key, recommended_memory, show_bytes, show_cores, show_quantity
from kubelint_ml.usage.source import TemplateSpec

COLUMNS = (
    "workload",
    "container",
    "pods",
    "samples",
    "memory request",
    "memory limit",
    "median",
    "p99",
    "peak",
    "recommended request",
    "recommended limit",
    "cpu request",
    "cpu median",
    "cpu p99",
    "gpu memory peak",
    "oom",
)


def rows(usage: Usage, templates: list[TemplateSpec]) -> list[dict[str, Any]]:
    out = []
    seen = set()
    for t in templates:
        if t.key in seen:
            continue
        seen.add(t.key)
        w = usage.workloads.get(t.key)
        for c in t.containers:
            cu = w.containers.get(c.name) if w else None
            row: dict[str, Any] = {
                "file": t.file,
                "namespace": t.key[0],
                "group": t.key[1],
                "kind": t.key[2],
                "name": t.key[3],
                "template": t.key[4],
                "workload": describe_key(t.key),
                "container": c.name,
                "requests": {r: _num(v) for r, v in sorted(c.requests.items()) if r in ("memory", "cpu")},
                "limits": {r: _num(v) for r, v in sorted(c.limits.items()) if r in ("memory", "cpu")},
                "usage": cu.to_dict() if cu else None,
                "recommended": None,
                "judged": False,
            }
            left_out = usage.excluded.get(t.key, {}).get(c.name)
            if left_out:
                row["excluded"] = list(left_out)
            if cu is None:
                row["reason"] = usage.missing.get(t.key) or (f"no series for container '{c.name}'" if w else "no data")
                if left_out:
                    row["reason"] = f"no usable series: {left_out[0]}"
            elif cu.memory is None:
                row["reason"] = f"no usable memory series: {left_out[0]}" if left_out else "no memory series"
            elif cu.memory.samples < usage.min_samples:
                row["reason"] = f"{cu.memory.samples} samples, fewer than {usage.min_samples}"
            else:
                request, limit = recommended_memory(cu.memory, usage.headroom)
                row["recommended"] = {"memory": {"request": request, "limit": limit}}
                row["judged"] = True
            out.append(row)
    return out


def _num(v: Fraction) -> int | float:
    return int(v) if v.denominator == 1 else float(v)


def _cells(row: dict[str, Any]) -> list[str]:
    u = row["usage"] or {}
    mem = u.get("memory") or {}
    cpu = u.get("cpu") or {}
    gpu = u.get("gpuMemory") or {}
    rec = (row["recommended"] or {}).get("memory") or {}

    def b(v: Any) -> str:
        return show_bytes(v) if isinstance(v, (int, float)) else "-"

    def q(v: Any) -> str:
        return show_quantity(v) if isinstance(v, int) else "-"

    req, lim = row["requests"], row["limits"]
    return [
        row["workload"],
        row["container"],
        str(u.get("pods", "-")),
        str(mem.get("samples", "-")),
        b(req.get("memory")),
        b(lim.get("memory")),
        b(mem.get("median")),
        b(mem.get("p99")),
        b(mem.get("max")),
        q(rec.get("request")),
        q(rec.get("limit")),
        show_cores(req["cpu"]) if "cpu" in req else "-",
        show_cores(cpu["median"]) if "median" in cpu else "-",
        show_cores(cpu["p99"]) if "p99" in cpu else "-",
        f"{b(gpu.get('peak'))} of {b(gpu.get('deviceMemory')) if gpu.get('deviceMemory') else '?'}" if gpu else "-",
        "-" if u.get("oomKilled") is None else "yes" if u["oomKilled"] else "no",
    ]


def write(usage: Usage, templates: list[TemplateSpec], fmt: str, out: TextIO) -> None:
    table = rows(usage, templates)
    if fmt == "json":
        doc = {
            "window": usage.window.to_dict(),
            "source": usage.source,
            "cluster": usage.cluster,
            "minSamples": usage.min_samples,
            "headroom": usage.headroom,
            "rows": table,
        }
        out.write(json.dumps(doc, indent=1, allow_nan=False) + "\n")
        return
    cells = [_cells(r) for r in table]
    header = list(COLUMNS)
    title = (
        f"Observed usage over {usage.lookback_text} (step {_dur(usage.window.step)}) from {usage.source}; "
        f"recommended: request = median, limit = peak + {usage.headroom:.0%}"
    )
    if fmt == "markdown":
        from kubelint_ml.report.escape import markdown_cell as md_cell

        out.write(f"{md_cell(title)}\n\n")
        out.write("| " + " | ".join(header) + " |\n")
        out.write("|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|\n")
        for c in cells:
            out.write("| " + " | ".join(md_cell(x) for x in c) + " |\n")
        notes = _left_out(table)
        if notes:
            out.write("\nSeries left out (not sized from):\n\n")
            for workload, container, why in notes:
                out.write(f"- {md_cell(workload)}, container {md_cell(container)}: {md_cell(why)}\n")
        return
    from kubelint_ml.report.escape import neutralise

    cells = [[neutralise(x) for x in c] for c in cells]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(header)]
    out.write(neutralise(title) + "\n\n")
    out.write(
        "  ".join(h.ljust(widths[i]) if i < 2 else h.rjust(widths[i]) for i, h in enumerate(header)).rstrip() + "\n"
    )
    for c in cells:
        out.write(
            "  ".join(x.ljust(widths[i]) if i < 2 else x.rjust(widths[i]) for i, x in enumerate(c)).rstrip() + "\n"
        )
    notes = _left_out(table)
    if notes:
        out.write("\nSeries left out (not sized from):\n")
        for workload, container, why in notes:
            out.write(f"  {neutralise(workload)}, container {neutralise(container)}: {neutralise(why)}\n")
    judged = sum(1 for r in table if r["judged"])
    out.write(f"\n{judged} of {len(table)} containers sized\n")


def _left_out(table: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(r["workload"], r["container"], why) for r in table for why in r.get("excluded", ())]


def _dur(seconds: float) -> str:
    from kubelint_ml.usage.model import duration_text

    return duration_text(seconds)
