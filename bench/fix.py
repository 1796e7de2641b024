"""`check --fix` against `check` on the same files (see bench/README.md, "Fixes").

Every measured run gets a fresh copy of the corpus (copied N times; the copy is
not timed), since --fix rewrites it. The cases run in a rotating order inside
each round; the table gives medians and the median of the per-round ratios to
`check`, for wall time and for CPU time (user + system of the command and its
workers). Target: `--fix --unsafe-fixes` costs at most 2x `check`, judged on
CPU time, which other processes on a shared machine do not inflate as they do
wall time.

    python bench/fix.py [--sizes 1 10] [--rounds 5] [--kubelint PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "corpus"

CASES = {
    "check": [],
    "check --fix": ["--fix"],
    "check --fix --unsafe-fixes": ["--fix", "--unsafe-fixes"],
    "check --diff --unsafe-fixes": ["--diff", "--unsafe-fixes"],
}


def copy(n: int, into: Path) -> Path:
    for i in range(n):
        if shutil.which("cp"):
            subprocess.run(["cp", "-r", str(CORPUS), str(into / f"copy{i:03d}")], check=True)
        else:
            shutil.copytree(CORPUS, into / f"copy{i:03d}")
    return into


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, the command and its workers)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 10])
    ap.add_argument("--rounds", type=int, default=5)
    default = shutil.which("kubelint-ml") or str(Path(sys.executable).with_name("kubelint-ml"))
    ap.add_argument("--kubelint", default=default)
    args = ap.parse_args()
    rows = []
    worst = 0.0
    for n in args.sizes:
        wall: dict[str, list[float]] = {c: [] for c in CASES}
        cpu: dict[str, list[float]] = {c: [] for c in CASES}
        wall_ratio: dict[str, list[float]] = {c: [] for c in CASES}
        cpu_ratio: dict[str, list[float]] = {c: [] for c in CASES}
        names = list(CASES)
        for r in range(args.rounds + 1):  # round 0 warms the caches and is not counted
            names = names[1:] + names[:1]
            took: dict[str, tuple[float, float]] = {}
            for name in names:
                with tempfile.TemporaryDirectory(dir=HERE) as tmp:
                    root = copy(n, Path(tmp))
                    os.sync()
                    took[name] = timed([args.kubelint, "check", str(root), *CASES[name]])
            if r:
                for name, (w, c) in took.items():
                    wall[name].append(w)
                    cpu[name].append(c)
                    wall_ratio[name].append(w / took["check"][0])
                    cpu_ratio[name].append(c / took["check"][1])
        for name in CASES:
            ratio = statistics.median(cpu_ratio[name])
            if "--fix" in name:
                worst = max(worst, ratio)
            rows.append(
                (
                    f"x{n}",
                    name,
                    statistics.median(wall[name]),
                    statistics.median(wall_ratio[name]),
                    statistics.median(cpu[name]),
                    ratio,
                )
            )
    print("| corpus | command | wall (median) | x check | CPU (median) | x check |")
    print("|---|---|---:|---:|---:|---:|")
    for size, name, w, wr, c, cr in rows:
        print(f"| {size} | `{name}` | {w:.2f} s | {wr:.2f}x | {c:.2f} s | {cr:.2f}x |")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average at the end: {load:.1f} on {os.cpu_count()} CPUs")
    print(f"worst --fix CPU ratio: {worst:.2f}x (target: at most 2x) {'ok' if worst <= 2 else 'MISS'}")
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
