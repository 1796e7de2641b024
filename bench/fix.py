"""`check --fix` against `check` on the same files (see bench/README.md, "Fixes").

Every measured run gets a fresh copy of the corpus (copied N times; the copy is
not timed), since --fix rewrites it. The cases run in a rotating order inside
each round; the table gives medians and the median of the per-round ratios to
`check`. Target: `--fix --unsafe-fixes` costs at most 2x `check`.

    python bench/fix.py [--sizes 1 10] [--rounds 5] [--kubelint PATH]
"""

from __future__ import annotations

import argparse
import os
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


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


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
        samples: dict[str, list[float]] = {c: [] for c in CASES}
        ratios: dict[str, list[float]] = {c: [] for c in CASES}
        names = list(CASES)
        for r in range(args.rounds + 1):  # round 0 warms the caches and is not counted
            names = names[1:] + names[:1]
            took: dict[str, float] = {}
            for name in names:
                with tempfile.TemporaryDirectory(dir=HERE) as tmp:
                    root = copy(n, Path(tmp))
                    os.sync()
                    took[name] = timed([args.kubelint, "check", str(root), *CASES[name]])
            if r:
                for name, t in took.items():
                    samples[name].append(t)
                    ratios[name].append(t / took["check"])
        for name in CASES:
            ratio = statistics.median(ratios[name])
            if "--fix" in name:
                worst = max(worst, ratio)
            rows.append((f"x{n}", name, statistics.median(samples[name]), min(samples[name]), ratio))
    print("| corpus | command | median | min | x check |")
    print("|---|---|---:|---:|---:|")
    for size, name, med, low, ratio in rows:
        print(f"| {size} | `{name}` | {med:.2f} s | {low:.2f} s | {ratio:.2f}x |")
    print(f"\nworst --fix ratio: {worst:.2f}x (target: at most 2x) {'ok' if worst <= 2 else 'MISS'}")
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
