"""Sizing from observed usage at fleet scale, against a real Prometheus on 127.0.0.1.

    python bench/usage.py                  # 1,000 workloads x 3 containers, 14 days at a 1-minute step
    python bench/usage.py --workloads 100  # smaller

The series, one sample a minute for the whole lookback, are written as
OpenMetrics, backfilled with ``promtool tsdb create-blocks-from openmetrics``
and kept under ``bench/work/usage-<shape>/`` (made once: several minutes):
``container_memory_working_set_bytes`` and ``container_cpu_usage_seconds_total``
for every container of every workload, and the DCGM exporter's
``DCGM_FI_DEV_FB_USED`` and ``DCGM_FI_DEV_FB_FREE`` for the first container of
each (it asks for a GPU). Each round starts ``prometheus`` on that TSDB, sizes
every workload of the generated manifests the way ``check --prometheus`` does
(the manifests are scanned, the queries sent, the summaries built), and prints
the time and the number of queries. Then, as the baseline, the plain PromQL
queries that give the same statistics (for memory and cpu: the median, p90,
p99 and count of the samples at the step and the peak; for GPU memory: the
count, the peak and the device's size) are sent one after the other, over
every series at once, and timed. Needs the ``prometheus`` and ``promtool``
binaries.
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
    jitter = [((k * 7919) % 4096) / 4096 for k in range(points)]  # under one CPU-second: the counter only grows
    total = 0

    def pod(i: int) -> tuple[str, str]:
        return f"team-{i % namespaces:02d}", f"w{i:04d}-abcde"

    with open(path, "w", encoding="ascii") as fh:
        fh.write("# TYPE container_memory_working_set_bytes gauge\n")
        for i in range(workloads):
            ns, name = pod(i)
            for c in range(containers):
                prefix = f'container_memory_working_set_bytes{{namespace="{ns}",pod="{name}",container="c{c}"}} '
                base = (1 + c) * GI + i * 1048576
                fh.write("".join(f"{prefix}{base + o} {t}\n" for o, t in zip(offsets, times)))
                total += points
        fh.write("# TYPE container_cpu_usage_seconds counter\n")
        for i in range(workloads):
            ns, name = pod(i)
            for c in range(containers):
                prefix = f'container_cpu_usage_seconds_total{{namespace="{ns}",pod="{name}",container="c{c}"}} '
                rate = (0.5 + c + (i % 7) / 10) * step  # cores x seconds per step
                fh.write("".join(f"{prefix}{k * rate + j:.3f} {t}\n" for k, (j, t) in enumerate(zip(jitter, times))))
                total += points
        for metric in ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"):
            fh.write(f"# TYPE {metric} gauge\n")
            for i in range(workloads):
                ns, name = pod(i)
                prefix = (
                    f'{metric}{{gpu="0",UUID="GPU-{i:08d}",modelName="NVIDIA A100-SXM4-80GB",'
                    f'namespace="{ns}",pod="{name}",container="c0"}} '
                )
                used = [20000 + i + (o >> 16) for o in offsets]  # MiB of the 81,920 of an 80 GB A100
                values = used if metric.endswith("USED") else [81920 - u for u in used]
                fh.write("".join(f"{prefix}{v} {t}\n" for v, t in zip(values, times)))
                total += points
        fh.write("# EOF\n")
    return total


def baseline(url: str, args: argparse.Namespace) -> tuple[float, int]:
    """The plain PromQL queries that give the same statistics, one after the other, over every series
    at once: (seconds, queries)."""
    import urllib.parse
    import urllib.request

    lookback, step = f"{args.days * 86400}s", args.query_step
    sel = '{container!="",container!="POD"}'
    memory = f"container_memory_working_set_bytes{sel}"
    cpu = f"rate(container_cpu_usage_seconds_total{sel}[5m])[{lookback}:{step}]"
    queries = []
    for at_step, peak in ((f"{memory}[{lookback}:{step}]", f"max_over_time({memory}[{lookback}])"), (cpu, None)):
        queries += [f"quantile_over_time({q}, {at_step})" for q in ("0.5", "0.9", "0.99")]
        queries += [f"count_over_time({at_step})", peak or f"max_over_time({at_step})"]
    used, free = f"DCGM_FI_DEV_FB_USED{sel}", f"DCGM_FI_DEV_FB_FREE{sel}"
    queries += [
        f"count_over_time({used}[{lookback}])",
        f"max_over_time({used}[{lookback}])",
        f"last_over_time({used}[{lookback}]) + last_over_time({free}[{lookback}])",
    ]
    t = time.monotonic()
    for q in queries:
        query = urllib.parse.urlencode({"query": q, "time": str(END)})
        with urllib.request.urlopen(f"{url}/api/v1/query?{query}", timeout=600) as r:
            answer = json.loads(r.read())
        if answer.get("status") != "success" or not answer["data"]["result"]:
            raise SystemExit(f"bench/usage.py: the baseline query {q} gave no result: {str(answer)[:300]}")
    return time.monotonic() - t, len(queries)


def manifests(directory: str, workloads: int, containers: int, namespaces: int) -> None:
    os.makedirs(directory, exist_ok=True)
    for i in range(workloads):
        ctrs = "".join(
            f"""
        - name: c{c}
          image: busybox
          resources:
            requests: {{memory: {1 + c}Gi, cpu: "{1 + c}"}}
            limits: {{memory: {2 + c}Gi{", nvidia.com/gpu: 1" if c == 0 else ""}}}"""
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

    shape = f"{args.workloads}x{args.containers}-{args.namespaces}ns-{args.days}d-{args.step}s-mem-cpu-gpu"
    work = os.path.join(HERE, "work", f"usage-{shape}")
    tsdb = os.path.join(work, "tsdb")
    points = args.days * 86400 // args.step
    # memory and CPU for every container, GPU memory used and free for the first of each workload
    samples = 2 * args.workloads * args.containers * points + 2 * args.workloads * points
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
        times, queries, server_cpu, client_cpu, plain, plain_cpu = [], 0, [], [], [], []
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
            with_cpu = sum(1 for w in usage.workloads.values() for c in w.containers.values() if c.cpu)
            with_gpu = sum(1 for w in usage.workloads.values() for c in w.containers.values() if c.gpu)
            times.append(elapsed)
            queries = usage.queries
            s1 = cpu_seconds(server.proc.pid)
            base, base_queries = baseline(server.url, args)
            plain.append(base)
            plain_cpu.append(cpu_seconds(server.proc.pid) - s1)
            print(
                f"round {r + 1}: {elapsed:.2f}s, {usage.queries} queries, {sized} containers sized ({with_cpu} with "
                f"cpu, {with_gpu} with GPU memory); cpu: server {server_cpu[-1]:.1f}s, client {client_cpu[-1]:.1f}s; "
                f"plain PromQL ({base_queries} queries, one after the other) {base:.2f}s, server cpu "
                f"{plain_cpu[-1]:.1f}s; ratio {elapsed / base:.2f}; load {os.getloadavg()[0]:.1f}",
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
            "plainSeconds": plain,
            "plainMedian": statistics.median(plain),
            "plainServerCpu": plain_cpu,
        }
        print(json.dumps(result))
        with open(os.path.join(HERE, "work", "usage-results.json"), "w") as fh:
            json.dump(result, fh, indent=1)
    finally:
        server.stop()
        shutil.rmtree(server.data, ignore_errors=True)


if __name__ == "__main__":
    main()
