"""Sizing from observed usage at fleet scale, against a real Prometheus on 127.0.0.1.

    python bench/usage.py                  # 1,000 workloads x 3 containers, 14 days at a 1-minute step
    python bench/usage.py --workloads 100  # smaller

The series (``container_memory_working_set_bytes``, one sample a minute for
the whole lookback, for every container of every workload) are written as
OpenMetrics, backfilled with ``promtool tsdb create-blocks-from openmetrics``
and kept under ``bench/work/usage-<shape>/`` (made once: about 60 million
samples for the default shape, several minutes). Each round starts
``prometheus`` on that TSDB, sizes every workload of the generated manifests
the way ``check --prometheus`` does (the manifests are scanned, the queries
sent, the summaries built), and prints the time and the number of queries.
Needs the ``prometheus`` and ``promtool`` binaries.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from tests import promserver  # noqa: E402  (the same server the tests start)

END = 1_790_000_000
GI = 1024**3


def generate(path: str, workloads: int, containers: int, namespaces: int, points: int, step: int) -> int:
    """OpenMetrics for every container of every workload; returns the sample count."""
    times = [str(END - k * step) for k in range(points - 1, -1, -1)]
    offsets = [((k * 7919) % 4096) * 65536 for k in range(points)]
    total = 0
    with open(path, "w", encoding="ascii") as fh:
        fh.write("# TYPE container_memory_working_set_bytes gauge\n")
        for i in range(workloads):
            ns = f"team-{i % namespaces:02d}"
            for c in range(containers):
                prefix = (
                    f'container_memory_working_set_bytes{{namespace="{ns}",pod="w{i:04d}-abcde",container="c{c}"}} '
                )
                base = (1 + c) * GI + i * 1048576
                fh.write("".join(f"{prefix}{base + o} {t}\n" for o, t in zip(offsets, times)))
                total += points
        fh.write("# EOF\n")
    return total


def manifests(directory: str, workloads: int, containers: int, namespaces: int) -> None:
    os.makedirs(directory, exist_ok=True)
    for i in range(workloads):
        ctrs = "".join(
            f"""
        - name: c{c}
          image: busybox
          resources:
            requests: {{memory: {1 + c}Gi}}
            limits: {{memory: {2 + c}Gi}}"""
            for c in range(containers)
        )
        with open(os.path.join(directory, f"w{i:04d}.yaml"), "w") as fh:
            fh.write(f"""apiVersion: batch/v1
kind: Job
metadata:
  name: w{i:04d}
  namespace: team-{i % namespaces:02d}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:{ctrs}
""")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc), 0.0 elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=int, default=1000)
    ap.add_argument("--containers", type=int, default=3)
    ap.add_argument("--namespaces", type=int, default=10)
    ap.add_argument("--days", type=int, default=14)
    ap.add_argument("--step", type=int, default=60, help="seconds between samples")
    ap.add_argument("--query-step", default="5m", help="usage.step: the quantiles' resolution [default: 5m]")
    ap.add_argument("--concurrency", type=int, default=4, help="usage.concurrency")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    why = promserver.missing()
    if why:
        sys.exit(f"bench/usage.py: {why}")
    from kubelint_ml.run.config import Config
    from kubelint_ml.usage.model import parse_duration
    from kubelint_ml.usage.source import Settings, load_usage, scan

    shape = f"{args.workloads}x{args.containers}-{args.namespaces}ns-{args.days}d-{args.step}s"
    work = os.path.join(HERE, "work", f"usage-{shape}")
    tsdb = os.path.join(work, "tsdb")
    points = args.days * 86400 // args.step
    samples = args.workloads * args.containers * points
    if not os.path.isdir(tsdb):
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        om = os.path.join(work, "series.om")
        t = time.monotonic()
        generate(om, args.workloads, args.containers, args.namespaces, points, args.step)
        print(f"wrote {samples:,} samples as OpenMetrics in {time.monotonic() - t:.0f}s", flush=True)
        t = time.monotonic()
        # Blocks as long as the data allows: promtool reads the file once per block range.
        hours = -(-args.days * 24 // 1) + 48
        subprocess.run(
            [
                "promtool",
                "tsdb",
                "create-blocks-from",
                "openmetrics",
                f"--max-block-duration={hours}h",
                om,
                tsdb + ".tmp",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        os.rename(tsdb + ".tmp", tsdb)
        os.unlink(om)
        print(f"backfilled with promtool in {time.monotonic() - t:.0f}s", flush=True)
    mdir = os.path.join(work, "manifests")
    if not os.path.isdir(mdir):
        manifests(mdir, args.workloads, args.containers, args.namespaces)
    server = promserver.Server(tsdb, work, ready_timeout=120)
    try:
        times, queries, server_cpu, client_cpu = [], 0, [], []
        for r in range(args.rounds):
            settings = Settings(
                prometheus=server.url,
                lookback=args.days * 86400.0,
                step=parse_duration(args.query_step, "--query-step"),
                end=float(END),
                timeout=300.0,
                concurrency=args.concurrency,
            )
            t, s0, c0 = time.monotonic(), cpu_seconds(server.proc.pid), time.process_time()
            usage = load_usage(settings, scan([mdir], Config(), "default"))
            elapsed = time.monotonic() - t
            server_cpu.append(cpu_seconds(server.proc.pid) - s0)
            client_cpu.append(time.process_time() - c0)
            sized = sum(
                1
                for w in usage.workloads.values()
                for c in w.containers.values()
                if c.memory and c.memory.samples >= usage.min_samples
            )
            times.append(elapsed)
            queries = usage.queries
            print(
                f"round {r + 1}: {elapsed:.2f}s, {usage.queries} queries, {sized} containers sized; cpu: server "
                f"{server_cpu[-1]:.1f}s, client {client_cpu[-1]:.1f}s; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        result = {
            "workloads": args.workloads,
            "containers": args.containers,
            "namespaces": args.namespaces,
            "days": args.days,
            "step": args.step,
            "queryStep": args.query_step,
            "concurrency": args.concurrency,
            "samples": samples,
            "queries": queries,
            "seconds": times,
            "median": statistics.median(times),
            "serverCpu": server_cpu,
            "clientCpu": client_cpu,
            "load": os.getloadavg(),
        }
        print(json.dumps(result))
        with open(os.path.join(HERE, "work", "usage-results.json"), "w") as fh:
            json.dump(result, fh, indent=1)
    finally:
        server.stop()
        shutil.rmtree(server.data, ignore_errors=True)


if __name__ == "__main__":
    main()
