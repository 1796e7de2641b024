#!/usr/bin/env python3
"""Benchmark: the HTML report against the JSON report, and the page in a real browser.

    python bench/html.py               # the corpus x10 (about 14,000 findings), 5 rounds
    python bench/html.py --copies 1    # smaller

Builds ``bench/work/corpus-xN`` as bench/run.py does, then measures, alternating the cases in
each round so machine noise falls on both alike:

* the whole command, a fresh process each: ``kubelint-ml check DIR -f json -o FILE`` and
  ``... -f html -o FILE`` (wall time; the lint is the same in both);
* the writers alone, in this process, on one lint result: ``report.write("json")`` and
  ``report.write("html")`` (the HTML writer's time includes reading the files with findings
  again to count their GPUs, and each fix's diff);
* the page in headless chromium (tests/browser.py): the time to its load event (parsed, laid
  out, its script run), then a severity filter and a text filter applied to every finding.

Prints a table with the medians and the HTML/JSON ratios; writes ``bench/work/html-results.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# This file is named html.py: its directory, which Python puts first on the path, would shadow
# the standard library's html module.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(REPO))


def _bench_run():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_run", HERE / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


_RUN = _bench_run()
DEFAULT_CORPUS, WORK, build_corpus = _RUN.DEFAULT_CORPUS, _RUN.WORK, _RUN.build_corpus


def command(corpus: Path, fmt: str, out: Path) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(corpus), "-f", fmt, "-o", str(out)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    wall = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"check -f {fmt} exited {r.returncode}: {r.stderr.decode(errors='replace')[-2000:]}")
    return wall


def lint(corpus: Path):
    """One lint result with the fixes resolved, as ``check -f json -f html`` has it."""
    from kubelint_ml.engine.rulefile import load_builtin_rules
    from kubelint_ml.run.config import Config
    from kubelint_ml.run.fixing import resolve_result
    from kubelint_ml.run.inputs import RunInputs
    from kubelint_ml.run.lint import run

    session: dict = {}
    rules = [r for r in load_builtin_rules() if r.family != "usage" and r.id != "gpu-node-unresolved"]
    result, _ = run([str(corpus)], RunInputs(Config(), rules, jobs=1, resolve_fixes=True), session)
    resolve_result(result, session)
    return result


def writer(result, fmt: str) -> tuple[float, int]:
    from kubelint_ml import report

    buf = io.StringIO()
    t0 = time.perf_counter()
    from kubelint_ml.run.gpus import gpu_workloads

    context = {"inputs": ["corpus"], "command": "check", "gpu_workloads": gpu_workloads}  # as check gives it
    report.write(fmt, result, buf, context=context if fmt == "html" else None)
    return time.perf_counter() - t0, len(buf.getvalue().encode())


def browser(page_file: Path, findings: int) -> dict[str, float]:
    from tests import browser as chromium

    if chromium.missing():
        return {}
    b = chromium.Browser(timeout=120)
    try:
        page = b.open(page_file.as_uri())
        out = {"load": page.load_seconds}
        assert page.eval("document.querySelectorAll('#findings .f').length") == findings
        for name, change in (
            ("filter_severity", "{sev:['error']}"),
            ("filter_text", "{sev:['error','warning','info'],q:'memory'}"),
        ):
            t = page.eval(
                "(function(c){var f=document.getElementById('filters');var t0=performance.now();"
                "Object.keys(c).forEach(function(k){if(k==='sev'){f.querySelectorAll('input[name=sev]').forEach("
                "function(x){x.checked=c.sev.indexOf(x.value)>=0;});}else{f.elements[k].value=c[k];}});"
                "f.dispatchEvent(new Event('change'));return performance.now()-t0;})(" + change + ")"
            )
            out[name] = t / 1000
        problems = page.problems()
        if problems:
            raise SystemExit(f"the page has console errors: {problems[:3]}")
        return out
    finally:
        b.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    corpus = build_corpus(args.corpus, WORK / f"corpus-x{args.copies}", args.copies).path
    out = WORK / "out-html"
    out.mkdir(exist_ok=True)
    walls: dict[str, list[float]] = {"json": [], "html": []}
    for _ in range(args.repeat):
        for fmt in ("json", "html"):
            walls[fmt].append(command(corpus, fmt, out / f"report.{fmt}"))
    findings = len(json.loads((out / "report.json").read_text())["findings"])
    result = lint(corpus)
    writes: dict[str, list[float]] = {"json": [], "html": []}
    sizes = {}
    for _ in range(args.repeat):
        for fmt in ("json", "html"):
            seconds, sizes[fmt] = writer(result, fmt)
            writes[fmt].append(seconds)
    page = browser(out / "report.html", findings)
    med = {k: statistics.median(v) for k, v in walls.items()}
    wmed = {k: statistics.median(v) for k, v in writes.items()}
    results = {
        "copies": args.copies,
        "findings": findings,
        "command_seconds": med,
        "command_ratio": med["html"] / med["json"],
        "writer_seconds": wmed,
        "writer_ratio": wmed["html"] / wmed["json"],
        "bytes": sizes,
        "browser_seconds": page,
        "cpus": os.cpu_count(),
    }
    print(f"corpus x{args.copies}: {findings} findings; medians of {args.repeat} rounds")
    print(f"  command  json {med['json']:.2f}s  html {med['html']:.2f}s  html/json {results['command_ratio']:.2f}")
    print(f"  writer   json {wmed['json']:.3f}s  html {wmed['html']:.3f}s  html/json {results['writer_ratio']:.2f}")
    print(f"  size     json {sizes['json'] / 1e6:.1f} MB  html {sizes['html'] / 1e6:.1f} MB")
    if page:
        print(
            f"  chromium load {page['load']:.2f}s; severity filter {page['filter_severity'] * 1000:.0f} ms; "
            f"text filter {page['filter_text'] * 1000:.0f} ms"
        )
    else:
        print("  chromium: not installed")
    (WORK / "html-results.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
