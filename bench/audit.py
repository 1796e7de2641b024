"""`kubelint-ml audit` on a cluster-sized dump, against the JSON parse of the same file.

    python bench/audit.py                 # 50,000 pods (about 500 MB of `kubectl get -o json`)
    python bench/audit.py --pods 5000     # smaller

The dump is generated once under ``bench/work/`` in kubectl's exact layout (a ``List``, four-space
indentation, pods as a cluster returns them: admitted, with status, ownerReferences and the
service-account token volume; the builder is ``tests/clusterdump.py``): pods of PyTorchJobs (64
workers each), Deployments (through ReplicaSets), JobSets (through Jobs) and bare pods, the owners,
Nodes and a LimitRange. Each pod is padded with env vars and a sidecar to about 10 KB.

Each measurement runs in its own process and reports its wall time and peak RSS: the floor is
``json.load`` of the file (the whole List in memory), with the collector as it comes and with it
off (``gc.disable()``: the parse alone); audit is ``kubelint-ml audit FILE -f json`` with the output
to /dev/null (startup included). Printed: the times, both ratios, the peaks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from tests.clusterdump import container, node, obj, owner, pod  # noqa: E402

PAD_ENV = [{"name": f"SETTING_{k:02d}", "value": "x" * 64} for k in range(20)]


def _pods(total: int):
    """(pod, owner objects it needs first) for ``total`` pods: 60% PyTorchJob workers, 20% Deployments,
    15% JobSets, the rest bare."""
    made = 0
    job = 0
    gpu = {"limits": {"nvidia.com/gpu": "8"}, "requests": {"cpu": "16", "nvidia.com/gpu": "8"}}
    web = {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}}
    sidecar = container(
        "istio-proxy",
        "istio/proxyv2:1.22",
        {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
    )
    while made < total:
        ns = f"team-{job % 20:02d}"
        kind = job % 20
        if kind < 12:  # PyTorchJob, 64 pods
            name = f"train-{job:05d}"
            owners = [obj("kubeflow.org/v1", "PyTorchJob", name, ns, {"pytorchReplicaSpecs": {}})]
            for i in range(min(64, total - made)):
                env = [{"name": "RANK", "value": str(i)}, *PAD_ENV]
                p = pod(
                    f"{name}-worker-{i}",
                    ns,
                    [container("pytorch", "pytorch/pytorch:2.3.0", gpu, env, token=f"{i:05d}"), sidecar],
                    owned_by=owner("kubeflow.org/v1", "PyTorchJob", name),
                    labels={"training.kubeflow.org/job-name": name, "training.kubeflow.org/replica-type": "worker"},
                    node=f"gpu-{i:04d}",
                    token=f"{i:05d}",
                    restart="OnFailure",
                )
                yield p, owners
                owners = []
                made += 1
        elif kind < 16:  # Deployment, 50 pods through a ReplicaSet
            name = f"serve-{job:05d}"
            rs = obj(
                "apps/v1",
                "ReplicaSet",
                f"{name}-6f7d9c8b5",
                ns,
                {"replicas": 50, "template": {"spec": {"containers": []}}},
            )
            rs["metadata"]["ownerReferences"] = [owner("apps/v1", "Deployment", name)]
            dep = obj("apps/v1", "Deployment", name, ns, {"replicas": 50, "template": {"spec": {"containers": []}}})
            owners = [dep, rs]
            for i in range(min(50, total - made)):
                p = pod(
                    f"{name}-6f7d9c8b5-{i:05d}",
                    ns,
                    [container("server", "vllm/vllm-openai:0.6", web, PAD_ENV, token=f"{i:05d}"), sidecar],
                    owned_by=owner("apps/v1", "ReplicaSet", f"{name}-6f7d9c8b5"),
                    labels={"app": name, "pod-template-hash": "6f7d9c8b5"},
                    token=f"{i:05d}",
                )
                yield p, owners
                owners = []
                made += 1
        elif kind < 19:  # JobSet: 2 Jobs of 24 pods (the JobSet object itself not listed)
            name = f"llm-{job:05d}"
            for j in range(2):
                jname = f"{name}-workers-{j}"
                job_obj = obj(
                    "batch/v1", "Job", jname, ns, {"parallelism": 24, "template": {"spec": {"containers": []}}}
                )
                job_obj["metadata"]["ownerReferences"] = [owner("jobset.x-k8s.io/v1alpha2", "JobSet", name)]
                owners = [job_obj]
                for i in range(min(24, total - made)):
                    p = pod(
                        f"{jname}-{i}-abcde",
                        ns,
                        [
                            container(
                                "train", "ghcr.io/llm:1", {"limits": {"nvidia.com/gpu": "4"}}, PAD_ENV, token=f"{i:05d}"
                            )
                        ],
                        owned_by=owner("batch/v1", "Job", jname),
                        labels={"jobset.sigs.k8s.io/jobset-name": name},
                        token=f"{i:05d}",
                        restart="Never",
                    )
                    yield p, owners
                    owners = []
                    made += 1
        else:  # a few bare pods
            for i in range(min(10, total - made)):
                p = pod(
                    f"debug-{job:05d}-{i}",
                    ns,
                    [container("shell", "busybox", {}, PAD_ENV, token=f"{i:05d}")],
                    token=f"{i:05d}",
                )
                yield p, []
                made += 1
        job += 1


def _item(value: dict) -> str:
    """One item as kubectl prints it inside a List: indented by eight spaces."""
    return "\n".join("        " + line for line in json.dumps(value, indent=4).splitlines())


def generate(path: str, pods: int) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        first = True

        def put(value: dict) -> None:
            nonlocal first
            fh.write(("" if first else ",\n") + _item(value))
            first = False

        for i in range(16):
            put(
                node(
                    f"gpu-{i:04d}",
                    {"node.kubernetes.io/instance-type": "p5.48xlarge"},
                    {"cpu": "191", "memory": "1893Gi", "nvidia.com/gpu": "8"},
                )
            )
        put(
            obj(
                "v1",
                "LimitRange",
                "defaults",
                "team-19",
                {"limits": [{"type": "Container", "default": {"memory": "1Gi"}}]},
            )
        )
        for p, owners in _pods(pods):
            for o in owners:
                put(o)
            put(p)
        fh.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
    os.replace(tmp, path)


FLOOR = """
import gc, json, resource, sys, time
if sys.argv[2:] == ["nogc"]:
    gc.disable()
t = time.perf_counter()
with open(sys.argv[1], "rb") as fh:
    data = json.load(fh)
print(json.dumps({"seconds": time.perf_counter() - t, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "items": len(data["items"])}))
"""

AUDIT = """
import json, resource, sys, time
t = time.perf_counter()
from kubelint_ml.cli import main
try:
    main(["audit", sys.argv[1], "-f", "json", "-o", "/dev/null", "-q"])
except SystemExit as e:
    code = e.code
print(json.dumps({"seconds": time.perf_counter() - t, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "exit": code}))
"""


def measure(script: str, path: str, *extra: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", script, path, *extra], capture_output=True, text=True, cwd=ROOT, check=False
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pods", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    work = os.path.join(HERE, "work")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, f"audit-{args.pods}.json")
    if not os.path.exists(path):
        print(f"generating {path} ...", file=sys.stderr)
        generate(path, args.pods)
    size = os.path.getsize(path)
    floors = [measure(FLOOR, path) for _ in range(args.rounds)]
    bare = [measure(FLOOR, path, "nogc") for _ in range(args.rounds)]
    audits = [measure(AUDIT, path) for _ in range(args.rounds)]
    floor = min(floors, key=lambda r: r["seconds"])
    nogc = min(bare, key=lambda r: r["seconds"])
    audit = min(audits, key=lambda r: r["seconds"])
    result = {
        "pods": args.pods,
        "bytes": size,
        "json_load_seconds": round(floor["seconds"], 2),
        "json_load_peak_mb": round(floor["peak_mb"]),
        "json_load_gc_off_seconds": round(nogc["seconds"], 2),
        "audit_seconds": round(audit["seconds"], 2),
        "audit_peak_mb": round(audit["peak_mb"]),
        "ratio": round(audit["seconds"] / floor["seconds"], 2),
        "ratio_gc_off": round(audit["seconds"] / nogc["seconds"], 2),
        "audit_exit": audit["exit"],
    }
    print(json.dumps(result, indent=2))
    with open(os.path.join(work, f"audit-{args.pods}-results.json"), "w") as fh:
        json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
