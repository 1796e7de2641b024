#!/usr/bin/env python3
"""Benchmark: kubelint-ml against the YAML parser's own limit.

One command (from the repository root)::

    python bench/run.py

builds its inputs from ``../shared/corpus`` replicated N times under
``bench/work/corpus-xN``, then measures, alternating the cases inside each
round and repeating the rounds so machine noise falls on every case alike:

* the parse floor: ``yaml.load_all`` with ``CSafeLoader`` over the same files,
  in one fresh process (start-up, walk and reads included);
* ``kubelint-ml check DIR --format json`` with every built-in rule, once with
  ``-j1`` and once with the default ``--jobs`` (the CPU count);
* ``kubelint-ml check one.yaml`` as a fresh process (the single-file case),
  against the interpreter importing yaml and click, alternated;
* peak RSS (the largest single process, from ``wait4``; and the whole process
  tree's PSS, sampled in separate untimed runs);
* N = 1, 10, 50, to show how the cost per document grows;
* checkov (``checkov -d DIR --framework kubernetes``) when
  ``bench/setup-checkov.sh`` has installed it into ``bench/work/checkov-venv``.

Every parallel run's JSON output is compared with the sequential run of the
same round: a difference fails the benchmark. Nothing is cached between runs.

The console script comes from ``bench/work/venv`` (an editable install of this
checkout, made on first use); ``--kubelint "python -m kubelint_ml"`` uses
another command. A table of medians and ratios is printed, and everything is
written to ``bench/work/results.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / "work"
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
EXTENSIONS = (".yaml", ".yml", ".json")

# The parse floor: what a script that only parses the same files costs.
FLOOR_SCRIPT = r"""
import os, sys, time
import yaml
t0 = time.perf_counter()
docs = files = 0
for root, dirs, names in os.walk(sys.argv[1]):
    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    for name in sorted(names):
        if name.startswith(".") or not name.lower().endswith((".yaml", ".yml", ".json")):
            continue
        with open(os.path.join(root, name), "rb") as fh:
            data = fh.read()
        files += 1
        try:
            for _ in yaml.load_all(data, Loader=yaml.CSafeLoader):
                docs += 1
        except yaml.YAMLError:
            pass
print(files, docs, time.perf_counter() - t0)
"""


# ----------------------------------------------------------------------------
# Inputs


@dataclass
class Corpus:
    path: Path
    copies: int
    files: int
    bytes: int


def source_files(src: Path) -> list[Path]:
    """The files kubelint-ml would lint under ``src`` (relative paths, sorted)."""
    out = []
    for root, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith(".") and name.lower().endswith(EXTENSIONS):
                out.append((Path(root) / name).relative_to(src))
    return out


def _fingerprint(src: Path, files: list[Path], copies: int) -> str:
    h = hashlib.sha256(f"{src.resolve()}|{copies}".encode())
    for rel in files:
        st = (src / rel).stat()
        h.update(f"{rel}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def build_corpus(src: Path, dst: Path, copies: int) -> Corpus:
    """``dst/copy000 .. copyNNN``, each a copy of the manifests under ``src``.

    Reused when ``src`` has not changed since it was built (a stamp file holds
    a fingerprint of the names, sizes and times of the source files).
    """
    files = source_files(src)
    if not files:
        raise SystemExit(f"no .yaml/.yml/.json files under {src}")
    stamp = dst / ".stamp"
    want = _fingerprint(src, files, copies)
    size = sum((src / rel).stat().st_size for rel in files)
    if stamp.is_file() and stamp.read_text() == want:
        return Corpus(dst, copies, len(files) * copies, size * copies)
    if dst.exists():
        shutil.rmtree(dst)
    for i in range(copies):
        base = dst / f"copy{i:03d}"
        for rel in files:
            target = base / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, target)
    stamp.write_text(want)
    return Corpus(dst, copies, len(files) * copies, size * copies)


def pick_single_file(src: Path) -> Path:
    """A typical training manifest: the median-sized file that has a pod template with a GPU request."""
    candidates = []
    for rel in source_files(src):
        data = (src / rel).read_bytes()
        if b"nvidia.com/gpu" in data and b"containers:" in data and b"{{" not in data:
            candidates.append((len(data), str(rel)))
    if not candidates:
        candidates = [((src / rel).stat().st_size, str(rel)) for rel in source_files(src)]
    candidates.sort()
    return src / candidates[len(candidates) // 2][1]


# ----------------------------------------------------------------------------
# Outputs


def compare_outputs(expected: bytes, actual: bytes) -> list[str]:
    """Differences between two ``--format json`` outputs (empty when equal).

    Findings are compared as a whole, in order, with the summary; the first
    few differing findings are named.
    """
    try:
        a = json.loads(expected)
        b = json.loads(actual)
    except ValueError as e:
        return [f"not JSON: {e}"]
    problems = []
    if a.get("summary") != b.get("summary"):
        problems.append(f"summary differs: {a.get('summary')} != {b.get('summary')}")
    fa, fb = a.get("findings", []), b.get("findings", [])
    if len(fa) != len(fb):
        problems.append(f"{len(fa)} findings != {len(fb)} findings")
    shown = 0
    for i, (x, y) in enumerate(zip(fa, fb)):
        if x != y:
            problems.append(
                f"finding {i}: {x.get('file')}:{x.get('line')} {x.get('rule')} != "
                f"{y.get('file')}:{y.get('line')} {y.get('rule')}"
            )
            shown += 1
            if shown == 3:
                break
    if not problems and expected != actual:
        problems.append("same findings, different bytes")
    return problems


# ----------------------------------------------------------------------------
# Running one command


@dataclass
class Sample:
    wall: float
    cpu: float  # user + sys of the process and its waited-for children
    max_rss_mb: float  # the largest single process
    rc: int
    tree_pss_mb: float | None = None


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(p) for p in fh.read().split())
    except OSError:
        pass
    return out


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_pss_kb(root: int) -> int:
    total, stack, seen = 0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _pss_kb(pid)
        stack.extend(_children(pid))
    return total


# Runs the measured command as its own child: the child is forked from this
# small process, not from the benchmark (whose memory a vfork'ed child's peak
# RSS would otherwise include), and its rusage comes from wait4.
MEASURE_SCRIPT = r"""
import json, os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(report, "w") as fh:
    json.dump({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_kb": ru.ru_maxrss,
               "rc": os.waitstatus_to_exitcode(status)}, fh)
"""


def run_once(
    argv: list[str], cwd: Path, stdout_path: Path, *, sample_memory: bool = False, env: dict | None = None
) -> Sample:
    """Run ``argv`` once: wall time, CPU (user + sys, children included) and peak RSS.

    With ``sample_memory`` the process tree's PSS (proportional set size:
    pages shared by forked workers counted once) is also sampled every
    10 ms; sampling costs CPU, so those runs are not the timed ones.
    """
    report = stdout_path.with_suffix(".measure.json")
    with open(stdout_path, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", MEASURE_SCRIPT, str(report), *argv],
            cwd=cwd,
            stdout=out,
            stderr=subprocess.PIPE,
            env=env,
        )
        peak = [0]
        stop = threading.Event()
        sampler = None
        if sample_memory and os.path.isdir("/proc"):

            def sample() -> None:
                while not stop.is_set():
                    peak[0] = max(peak[0], sum(_tree_pss_kb(child) for child in _children(proc.pid)))
                    stop.wait(0.01)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
        _, err = proc.communicate()
        stop.set()
        if sampler is not None:
            sampler.join()
    # The outputs (16 MB at x10) sit in the page cache as dirty pages; the kernel writes them
    # back whenever it likes, possibly during a later measured run, where that CPU is taken
    # from the parallel runs first. Written back now, outside any timing.
    if hasattr(os, "sync"):
        os.sync()
    try:
        m = json.loads(report.read_text())
    except (OSError, ValueError):
        m = {"rc": proc.returncode}
    rc = m.get("rc", proc.returncode)
    if proc.returncode != 0 or rc not in (0, 1):
        raise SystemExit(f"{shlex.join(argv)} exited {rc}:\n{err.decode(errors='replace')[-2000:]}")
    return Sample(m["wall"], m["cpu"], m["rss_kb"] / 1024, rc, peak[0] / 1024 if sampler is not None else None)


def busy_cpu_seconds() -> float | None:
    """CPU time the whole machine has spent busy (``/proc/stat``), to tell how loaded it was."""
    try:
        with open("/proc/stat") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


# ----------------------------------------------------------------------------
# The benchmark


@dataclass
class Case:
    name: str
    size: int
    argv: list[str]
    samples: list[Sample] = field(default_factory=list)
    output: str = ""

    def median(self, attr: str = "wall") -> float:
        return statistics.median(getattr(s, attr) for s in self.samples)

    def slug(self) -> str:
        """The case's name as a file name: ``check -j1`` -> ``check-j1`` (every case its own files)."""
        return re.sub(r"[^A-Za-z0-9.]+", "-", self.name).strip("-")

    def median_after(self, other: Case) -> float:
        """Median of the per-round differences of wall times (``other`` ran in the same rounds)."""
        if len(self.samples) != len(other.samples) or not self.samples:
            return self.median() - other.median()
        return statistics.median(a.wall - b.wall for a, b in zip(self.samples, other.samples))

    def ratio_to(self, other: Case) -> float:
        """Median of the per-round ratios of wall times (both ran in every round, next to each other):
        a slow spell of the machine falls on both sides of a ratio, unlike on a ratio of medians."""
        pairs = list(zip(self.samples, other.samples))
        if len(self.samples) != len(other.samples) or not pairs:
            return self.median() / other.median()
        return statistics.median(a.wall / b.wall for a, b in pairs)


def ensure_venv(python: str) -> Path:
    """``bench/work/venv``: an editable install of this checkout (console script included), installed
    again when ``pyproject.toml`` has changed since (a dependency added, say)."""
    venv = WORK / "venv"
    script = venv / "bin" / "kubelint-ml"
    stamp = venv / ".pyproject-sha256"
    wanted = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()
    if script.exists() and stamp.exists() and stamp.read_text() == wanted:
        return script
    print(f"setting up {venv} (editable install of {REPO})", file=sys.stderr)
    if not venv.exists():
        subprocess.run([python, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    constraints = REPO / "constraints.txt"
    subprocess.run(pip + (["-c", str(constraints)] if constraints.exists() else []) + ["-e", str(REPO)], check=True)
    stamp.write_text(wanted)
    return script


def all_rule_flags(kubelint: list[str], env: dict) -> tuple[list[str], int]:
    """``--enable ID`` for every built-in rule that is off by default."""
    out = subprocess.run(
        kubelint + ["rules", "list", "--format", "json"], capture_output=True, check=True, cwd=WORK, env=env
    )
    flags = []
    rules = json.loads(out.stdout)
    for r in rules:
        if r.get("builtin") and not r.get("enabled"):
            flags += ["--enable", r["id"]]
    return flags, len(rules)


def checkov_command() -> list[str] | None:
    exe = WORK / "checkov-venv" / "bin" / "checkov"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("checkov")
    return [found] if found else None


def fmt_s(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="source manifests [../shared/corpus]")
    ap.add_argument("--sizes", default="1,10,50", help="replication factors [1,10,50]")
    ap.add_argument("--repeat", type=int, default=0, help="rounds per size [0 = 11 for x1, 7 for x10, 3 for larger]")
    ap.add_argument("--single-repeat", type=int, default=21, help="runs of the single-file case [21]")
    ap.add_argument("--kubelint", help="command to run [bench/work/venv/bin/kubelint-ml]")
    ap.add_argument(
        "--checkov-sizes",
        default="1,10",
        help="sizes to run checkov on (once each), when installed [1,10]; '' for none",
    )
    ap.add_argument("--no-memory", action="store_true", help="skip the sampled process-tree PSS runs")
    ap.add_argument("--quick", action="store_true", help="sizes 1,10, 3 rounds, no checkov (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.repeat, args.checkov_sizes, args.single_repeat = "1,10", 3, "", 9

    WORK.mkdir(parents=True, exist_ok=True)
    outdir = WORK / "out"
    shutil.rmtree(outdir, ignore_errors=True)  # no output of an earlier run is ever compared
    outdir.mkdir()
    if args.kubelint:
        kubelint = shlex.split(args.kubelint)
    else:
        kubelint = [str(ensure_venv(sys.executable))]
    # The interpreter of the environment the measured command runs in (the baselines import
    # what it imports at start-up: an editable install's path hooks, say).
    beside = Path(kubelint[0]).parent / "python"
    venv_python = beside if beside.exists() else WORK / "venv" / "bin" / "python"
    python = str(venv_python) if venv_python.exists() else sys.executable
    env = dict(os.environ)
    # Measure what an installed tool costs: byte-code caches written once and reused (pip compiles
    # them at install time), not every module compiled again at every start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.kubelint and "-m" in kubelint and "PYTHONPATH" not in env:
        # `python -m kubelint_ml`: this checkout. A console script runs what its environment holds
        # (another version's install is measured as that version, not as this checkout).
        env["PYTHONPATH"] = str(REPO)
    enable, nrules = all_rule_flags(kubelint, env)
    cpus = os.cpu_count() or 1
    sizes = [int(s) for s in args.sizes.split(",") if s]
    checkov = checkov_command()
    checkov_sizes = {int(s) for s in args.checkov_sizes.split(",") if s} if checkov else set()

    corpora = {n: build_corpus(args.corpus, WORK / f"corpus-x{n}", n) for n in sizes}
    print(
        f"kubelint-ml: {shlex.join(kubelint)} ({nrules} rules, all enabled); {cpus} CPUs; "
        f"checkov: {checkov[0] if checkov else 'not installed (bench/setup-checkov.sh)'}",
        file=sys.stderr,
    )

    one = pick_single_file(args.corpus)
    single_argv = kubelint + ["check", str(one), *enable]
    cases: dict[tuple[str, int], Case] = {}
    mismatches: list[str] = []
    docs: dict[int, int] = {}
    findings: dict[int, int] = {}
    others: dict[int, float] = {}  # CPUs used by other processes during the rounds
    for n in sizes:
        c = corpora[n]
        rel = os.path.relpath(c.path, WORK)
        check = kubelint + ["check", rel, "--format", "json", *enable]
        group = [
            Case("parse floor", n, [python, "-c", FLOOR_SCRIPT, rel]),
            Case("check -j1", n, check + ["-j1"]),
            Case(f"check (default -j{cpus})", n, check),
            # Start-up, in the same rounds: the time per document is taken after it, round by round.
            Case("check one.yaml", n, single_argv),
        ]
        if n in checkov_sizes:
            group.append(
                Case("checkov", n, checkov + ["-d", rel, "--framework", "kubernetes", "--quiet", "-o", "json"])
            )
        for case in group:
            cases[(case.name, n)] = case
        rounds = args.repeat or (11 if n == 1 else 7 if n <= 10 else 3)
        print(f"x{n}: {c.files} files, {c.bytes / 1e6:.1f} MB, {rounds} rounds", file=sys.stderr)
        # A warm-up run of each case (page cache, .pyc), not counted.
        for case in group:
            if case.name != "checkov":
                run_once(case.argv, WORK, outdir / "warmup.out", env=env)
        busy0, clock0 = busy_cpu_seconds(), time.perf_counter()
        ours = 0.0
        for r in range(rounds):
            order = group[r % len(group) :] + group[: r % len(group)]
            for case in order:
                if case.name == "checkov" and r > 0:
                    continue  # slow and far away: one run is enough for a ratio
                out = outdir / f"{case.slug()}-x{case.size}.out"  # this round's: compared below, then overwritten
                s = run_once(case.argv, WORK, out, env=env)
                ours += s.cpu
                case.samples.append(s)
                case.output = str(out)
                print(
                    f"  round {r + 1}: {case.name:<22} {s.wall:8.3f} s  cpu {s.cpu:7.3f} s  rss {s.max_rss_mb:6.1f} MB",
                    file=sys.stderr,
                )
            # The parallel run must report exactly what the sequential run of the same round reports.
            seq = Path(cases[("check -j1", n)].output).read_bytes()
            par = Path(cases[(f"check (default -j{cpus})", n)].output).read_bytes()
            diff = compare_outputs(seq, par)
            if diff:
                mismatches.append(f"x{n} round {r + 1}: " + "; ".join(diff))
        busy1 = busy_cpu_seconds()
        if busy0 is not None and busy1 is not None:
            others[n] = max(0.0, (busy1 - busy0 - ours) / (time.perf_counter() - clock0))
        floor_out = Path(cases[("parse floor", n)].output).read_text().split()
        docs[n] = int(floor_out[1])
        findings[n] = json.loads(seq)["summary"]["findings"]
        if not args.no_memory:
            for name in ("check -j1", f"check (default -j{cpus})"):
                case = cases[(name, n)]
                s = run_once(case.argv, WORK, outdir / "memory.out", sample_memory=True, env=env)
                for sample in case.samples:
                    sample.tree_pss_mb = s.tree_pss_mb

    # The single-file case, against a bare interpreter and against parsing that one file.
    single = Case("check one.yaml", 1, single_argv)
    bare = Case("python -c pass", 1, [python, "-c", "pass"])
    # What every run of a click command that reads YAML pays before it does anything.
    base = Case("python: import yaml, click", 1, [python, "-c", "import yaml, click"])
    parse_one = Case(
        "python: import yaml + parse it",
        1,
        [
            python,
            "-c",
            "import sys, yaml; list(yaml.load_all(open(sys.argv[1], 'rb'), Loader=yaml.CSafeLoader))",
            str(one),
        ],
    )
    run_once(single.argv, WORK, outdir / "warmup.out", env=env)
    for _ in range(args.single_repeat):
        for case in (single, bare, base, parse_one):
            case.samples.append(run_once(case.argv, WORK, outdir / "single.out", env=env))

    # ------------------------------------------------------------------
    # Report
    lines = []
    lines.append(f"kubelint-ml benchmark: {nrules} rules (all on), {cpus} CPUs, corpus {args.corpus}")
    lines.append("")
    lines.append("x floor: the median of the per-round ratios to the parse floor (each round runs every case once).")
    lines.append("")
    lines.append("| case | N | files | docs | median s | min s | cpu s | ms/doc | x floor | max RSS MB | tree PSS MB |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        floor = cases[("parse floor", n)]
        for (name, size), case in cases.items():
            if size != n:
                continue
            med = case.median()
            pss = case.samples[0].tree_pss_mb
            whole = name != "check one.yaml"  # the start-up case lints one file, not the corpus
            lines.append(
                f"| {name} | {n} | {corpora[n].files if whole else 1} | {docs[n] if whole else ''} | {fmt_s(med)} "
                f"| {fmt_s(min(s.wall for s in case.samples))} | {fmt_s(case.median('cpu'))} "
                f"| {f'{med / docs[n] * 1000:.3f}' if whole else ''} | {f'{case.ratio_to(floor):.2f}' if whole else ''} "
                f"| {max(s.max_rss_mb for s in case.samples):.0f} | {'' if pss is None else f'{pss:.0f}'} |"
            )
    if others:
        lines.append("")
        lines.append(
            "other processes on the machine during the rounds (average CPUs busy, of "
            f"{cpus}): "
            + ", ".join(f"x{n} {others[n]:.2f}" for n in sizes if n in others)
            + ("  -- a busy machine slows the parallel runs first" if max(others.values()) > 0.3 else "")
        )
    lines.append("")
    lines.append(
        f"single file ({one.name}, {one.stat().st_size} bytes), median of {args.single_repeat}: "
        f"check {single.median():.3f} s, bare interpreter {bare.median():.3f} s, "
        f"import yaml, click {base.median():.3f} s, "
        f"import yaml + parse {parse_one.median():.3f} s; max RSS {max(s.max_rss_mb for s in single.samples):.0f} MB"
    )
    par_name = f"check (default -j{cpus})"
    summary: dict = {
        "rules": nrules,
        "cpus": cpus,
        "sizes": sizes,
        "docs": docs,
        "findings": findings,
        "other_cpus": others,
    }

    def target(label: str, ok: bool, detail: str) -> None:
        lines.append(f"  [{'ok' if ok else 'MISS'}] {label}: {detail}")

    lines.append("")
    lines.append("targets:")
    if 10 in sizes:
        floor10 = cases[("parse floor", 10)]
        for name, bound in (("check -j1", 1.3), (par_name, 0.8)):
            ratio = cases[(name, 10)].ratio_to(floor10)
            target(f"x10 {name} <= {bound}x parse floor", ratio <= bound, f"{ratio:.2f}x")
            summary[f"x10_{'j1' if name == 'check -j1' else 'jobs'}_floor_ratio"] = ratio
        seq10, par10 = cases[("check -j1", 10)], cases[(par_name, 10)]
        speed = seq10.ratio_to(par10)
        target(
            f"x10 --jobs {cpus} speed-up >= 1.6x",
            speed >= 1.6,
            f"{speed:.2f}x per round (medians: {seq10.median() / par10.median():.2f}x), "
            f"output identical: {not mismatches}",
        )
        summary["jobs_speedup_x10"] = speed
    for n in sizes:
        if n != 10:
            lines.append(
                f"  [--] x{n} --jobs {cpus} speed-up: "
                f"{cases[('check -j1', n)].ratio_to(cases[(par_name, n)]):.2f}x per round"
            )
    start = single.ratio_to(base)
    target(
        "single file <= 1.5x the interpreter importing yaml and click",
        start <= 1.5,
        f"{start:.2f}x per round ({single.median():.3f} s against {base.median():.3f} s)",
    )
    summary["single_file_ratio"] = start
    big = max(sizes)
    rss = max(s.max_rss_mb for s in cases[("check -j1", big)].samples)
    target(f"peak RSS x{big} -j1 <= 150 MB", rss <= 150, f"{rss:.0f} MB")
    tree = cases[(par_name, big)].samples[0].tree_pss_mb
    if tree is not None:
        target(f"peak PSS x{big} default jobs (all processes) <= 150 MB", tree <= 150, f"{tree:.0f} MB")
    if len(sizes) > 1:
        # Per document after start-up (the single-file run's time): what grows with the input.
        for name in ("check -j1", par_name):
            per = [cases[(name, n)].median_after(cases[("check one.yaml", n)]) / docs[n] for n in sizes]
            spread = max(per) / min(per)
            target(
                f"{name}: time per document after start-up constant within 20% (x{sizes[0]}..x{big})",
                spread <= 1.2,
                " / ".join(f"x{n} {p * 1000:.3f} ms" for n, p in zip(sizes, per)) + f" (max/min {spread:.2f})",
            )
    for n in sorted(checkov_sizes):
        ck = cases[("checkov", n)]
        ratio = ck.median() / cases[(par_name, n)].median()
        rss_ratio = max(s.max_rss_mb for s in ck.samples) / max(s.max_rss_mb for s in cases[(par_name, n)].samples)
        bound = ck.median() / cases[("parse floor", n)].median()
        target(
            f"x{n} >= 50x faster than checkov",
            ratio >= 50,
            f"checkov {ck.median():.1f} s = {ratio:.0f}x; "
            f"memory {rss_ratio:.1f}x (the parse floor alone is {bound:.0f}x faster than checkov)",
        )
    if not checkov:
        lines.append("  [--] checkov not installed: run bench/setup-checkov.sh")
    target(
        "parallel output equals the sequential run", not mismatches, "; ".join(mismatches) or "identical in every round"
    )
    lines.append("findings: " + ", ".join(f"x{n} {findings[n]}" for n in sizes))

    text = "\n".join(lines)
    print(text)
    summary["cases"] = [
        {"name": c.name, "size": c.size, "median": c.median(), "samples": [asdict(s) for s in c.samples]}
        for c in list(cases.values()) + [single, bare, base, parse_one]
    ]
    summary["mismatches"] = mismatches
    (WORK / "results.json").write_text(json.dumps(summary, indent=1) + "\n")
    (WORK / "results.md").write_text(text + "\n")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
