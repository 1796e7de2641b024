"""Cluster objects as facts: Nodes as node pools, LimitRange defaults and bounds, ResourceQuota's
required values, Kueue and Volcano queues, gangs, and ReadWriteOnce claims shared across nodes.

Each case runs `check --context <cluster objects> <workload>` and asserts the findings with their
lines (the cluster objects are in fixtures/cluster/, as `kubectl get -o yaml` prints a List)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "fixtures" / "cluster"
NODES = str(CLUSTER / "nodes-limitrange.yaml")
QUEUES = str(CLUSTER / "kueue-volcano.yaml")


def _check(tmp_path: Path, manifest: str, *context: str, verbose: bool = False) -> tuple[list[tuple], str]:
    path = tmp_path / "w.yaml"
    path.write_text(manifest)
    args = ["check", str(path), "-f", "json", "-q", "--jobs", "1"]
    for c in context:
        args += ["--context", c]
    if verbose:
        args.append("-v")
    data, output = _run(tmp_path, args)
    return [(f["rule"], f["line"], f["severity"], f["message"]) for f in data["findings"]], output


def _run(cwd: Path, args: list[str]) -> tuple[dict, str]:
    """`kubelint-ml <args>` run in ``cwd`` (paths in findings relative to it): its JSON, and all it printed."""
    here = os.getcwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(here)
    assert r.exit_code in (0, 1), r.output
    out = r.stdout
    return json.loads(out[: out.rindex("}") + 1]), r.output


def _rules(found: list[tuple]) -> list[tuple]:
    return [(rule, line) for rule, line, _, _ in found]


GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
spec:
  template:
    spec:
      restartPolicy: Never
      priorityClassName: high
      nodeSelector:
        node.kubernetes.io/instance-type: dgx-h100
      tolerations:
        - {key: dedicated, operator: Equal, value: training, effect: NoSchedule}
      containers:
        - name: train
          image: python:3.12
          resources:
            limits:
              nvidia.com/gpu: 1
              memory: 1000Gi
"""


def test_a_custom_node_type_resolves_from_the_cluster_nodes(tmp_path: Path) -> None:
    # Without the Nodes, dgx-h100 is not in the catalogue: the share check is silent.
    alone, _ = _check(tmp_path, GPU_JOB)
    assert "gpu-memory-share-mismatch" not in {r for r, *_ in alone}
    found, _ = _check(tmp_path, GPU_JOB, NODES)
    share = [f for f in found if f[0] == "gpu-memory-share-mismatch"]
    assert share == [
        (
            "gpu-memory-share-mismatch",
            21,
            "warning",
            f"1 of 8 GPUs but 50% of node pool dgx-01 (2 Nodes alike from {NODES}) memory (1000Gi)",
        )
    ]


def test_node_pools_from_nodes() -> None:
    from kubelint_ml.engine.context import Facts
    from kubelint_ml.run.config import Config
    from kubelint_ml.run.facts import add_facts

    facts = Facts()
    add_facts(facts, Path(NODES).read_bytes(), "nodes.yaml", Config().limits)
    [pool] = facts.cluster.node_pools()  # two Nodes of one shape
    assert pool.name == "dgx-01 (2 Nodes alike from nodes.yaml)"
    assert (pool.gpus, pool.gpu_resource, pool.memory, pool.cpu) == (8, "nvidia.com/gpu", 2000 * 2**30, 220)
    assert (pool.kubelet_version, pool.os) == ("1.33.1", "linux")
    assert pool.labels == {"node.kubernetes.io/instance-type": "dgx-h100"}  # the hostname is no pool label
    assert pool.taints == (("dedicated", "training", "NoSchedule"),)


def test_a_node_whose_taint_the_pod_does_not_tolerate_is_not_a_candidate(tmp_path: Path) -> None:
    untolerated = GPU_JOB.replace(
        "      tolerations:\n        - {key: dedicated, operator: Equal, value: training, effect: NoSchedule}\n", ""
    )
    found, _ = _check(tmp_path, untolerated, NODES)
    assert "gpu-memory-share-mismatch" not in {r for r, *_ in found}


NOTEBOOK = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
  namespace: {ns}
spec:
  priorityClassName: high
  containers:
    - name: lab
      image: jupyter/base-notebook
"""


def test_limit_range_defaults_clear_missing_limits_and_besteffort(tmp_path: Path) -> None:
    found, output = _check(tmp_path, NOTEBOOK.replace("{ns}", "team-a"), NODES, verbose=True)
    assert found == []
    assert "container 'lab': memory limit 16Gi from LimitRange team-a/defaults" in output
    assert "QoS class Guaranteed once admitted" in output
    assert "note: cluster facts: 2 Nodes (1 node pool), 1 LimitRange\n" in output
    # Another namespace has no LimitRange: the same pod is BestEffort with no memory limit.
    other, _ = _check(tmp_path, NOTEBOOK.replace("{ns}", "team-c"), NODES)
    assert _rules(other) == [("besteffort-qos", 6), ("missing-memory-limit", 9), ("missing-memory-request", 9)]


def test_a_limit_range_default_bounds_a_memory_emptydir(tmp_path: Path) -> None:
    shm = (
        NOTEBOOK
        + "      volumeMounts: [{name: shm, mountPath: /dev/shm}]\n  volumes:\n    - name: shm\n      emptyDir: {medium: Memory}\n"
    )
    found, _ = _check(tmp_path, shm.replace("{ns}", "team-a"), NODES)
    assert found == []
    other, _ = _check(tmp_path, shm.replace("{ns}", "team-c"), NODES)
    assert ("emptydir-memory-unbounded", 14) in _rules(other)


def test_limit_range_max_and_the_ratio_and_the_quota(tmp_path: Path) -> None:
    big = GPU_JOB.replace("memory: 1000Gi", "memory: 2Ti")
    found, _ = _check(tmp_path, big, NODES)
    assert ("limit-range-violation", 21) in _rules(found)
    [msg] = [m for r, _, _, m in found if r == "limit-range-violation"]
    assert msg == (
        "container 'train': maximum memory usage per Container is 1Ti, but limit is 2Ti (LimitRange team-a/defaults)"
    )
    team_b = """\
apiVersion: v1
kind: Pod
metadata:
  name: loader
  namespace: team-b
spec:
  priorityClassName: high
  containers:
    - name: a
      image: busybox
      resources:
        requests: {memory: 1Gi}
        limits: {memory: 4Gi}
    - name: b
      image: busybox
      resources:
        requests: {memory: 512Mi, cpu: "40"}
        limits: {memory: 512Mi}
    - name: c
      image: busybox
      resources:
        requests: {memory: 2Gi, cpu: "40"}
"""
    found, _ = _check(tmp_path, team_b, QUEUES)
    got = sorted((line, msg) for rule, line, _, msg in found if rule == "limit-range-violation")
    assert got == [
        (
            6,
            "the pod: maximum cpu usage per Pod is 64, but no limit is specified (LimitRange team-b/bounds)",
        ),
        (
            13,
            "container 'a': memory max limit to request ratio per Container is 2, but provided ratio is 4.00 "
            "(LimitRange team-b/bounds)",
        ),
        (
            17,
            "container 'b': minimum memory usage per Container is 1Gi, but request is 512Mi (LimitRange team-b/bounds)",
        ),
        (
            21,
            "container 'c': memory max limit to request ratio per Container is 2, but no limit is specified "
            "(LimitRange team-b/bounds)",
        ),
        (
            21,
            "container 'c': must specify limits.memory: no memory limit (ResourceQuota team-b/compute)",
        ),
    ]


def _pytorch(queue: str | None, workers: int, gpus: int, extra: str = "") -> str:
    label = f"  labels:\n    kueue.x-k8s.io/queue-name: {queue}\n" if queue else ""
    return f"""\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: bert
  namespace: team-a
{label}spec:
{extra}  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          priorityClassName: high
          containers:
            - name: pytorch
              image: pytorch/pytorch
              resources:
                limits: {{nvidia.com/gpu: {gpus}, memory: 64Gi, cpu: "8"}}
    Worker:
      replicas: {workers}
      template:
        spec:
          priorityClassName: high
          containers:
            - name: pytorch
              image: pytorch/pytorch
              resources:
                limits: {{nvidia.com/gpu: {gpus}, memory: 64Gi, cpu: "8"}}
          volumes:
            - name: data
              persistentVolumeClaim:
                claimName: data
"""


def test_queue_rules(tmp_path: Path) -> None:
    missing, _ = _check(tmp_path, _pytorch(None, 1, 8), QUEUES)
    assert ("queue-name-missing", 3) in _rules(missing)
    unknown, _ = _check(tmp_path, _pytorch("team-z", 1, 8), QUEUES)
    assert [(r, line, m) for r, line, _, m in unknown if r.startswith("queue")] == [
        (
            "queue-unknown",
            7,
            "LocalQueue 'team-z' does not exist in namespace 'team-a' (it has capped, mixed, orphan, shared, team-a)",
        )
    ]
    orphan, _ = _check(tmp_path, _pytorch("orphan", 1, 8), QUEUES)
    assert [(r, line) for r, line, *_ in orphan if r.startswith("queue")] == [("queue-unknown", 7)]
    # 1 + 2 workers × 8 GPUs = 24 > 16 nominal, no cohort
    over, _ = _check(tmp_path, _pytorch("team-a", 2, 8), QUEUES)
    assert [(r, line, m) for r, line, _, m in over if r.startswith("queue")] == [
        (
            "queue-quota-exceeded",
            7,
            "needs 24 nvidia.com/gpu in all (1 × 8 + 2 × 8) but ClusterQueue 'team-a-cq' can provide at most 16",
        )
    ]
    fits, _ = _check(tmp_path, _pytorch("team-a", 1, 8), QUEUES)
    assert not [r for r, *_ in fits if r.startswith("queue")]
    # in a cohort without a borrowing limit: it may borrow any amount, no finding
    cohort, _ = _check(tmp_path, _pytorch("shared", 7, 8), QUEUES)
    assert not [r for r, *_ in cohort if r.startswith("queue")]
    # borrowing limited: 8 + 8 = 16 < 24
    capped, _ = _check(tmp_path, _pytorch("capped", 2, 8), QUEUES)
    assert [(r, line) for r, line, *_ in capped if r.startswith("queue")] == [("queue-quota-exceeded", 7)]


def test_quota_over_the_flavors_a_pod_set_may_use(tmp_path: Path) -> None:
    # 1 + 1 pods × 8 GPUs = 16: fits the two flavors (8 + 64) and, per pod set, the h100 one.
    fits, _ = _check(tmp_path, _pytorch("mixed", 1, 8), QUEUES)
    assert not [r for r, *_ in fits if r.startswith("queue")]
    # Pinned to the a100 flavor's nodes: 8 at most.
    pinned = _pytorch("mixed", 1, 8).replace(
        "          priorityClassName: high\n",
        "          priorityClassName: high\n          nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}\n",
    )
    found, _ = _check(tmp_path, pinned, QUEUES)
    assert [(r, line, m) for r, line, _, m in found if r.startswith("queue")] == [
        (
            "queue-quota-exceeded",
            7,
            "needs 16 nvidia.com/gpu in all (1 × 8 + 1 × 8) but ClusterQueue 'mixed-cq' can provide at most 8",
        )
    ]


def test_gangs(tmp_path: Path) -> None:
    gang = "  runPolicy:\n    schedulingPolicy:\n      minAvailable: 4\n"
    found, _ = _check(tmp_path, _pytorch("team-a", 1, 1, gang), QUEUES)
    assert [(r, line, m) for r, line, _, m in found if r.startswith("gang")] == [
        ("gang-min-available-unsatisfiable", 11, "gang minAvailable 4 is more than the 2 pods the job creates")
    ]
    podgroup = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: workers
  namespace: team-a
spec:
  replicas: 4
  template:
    metadata:
      annotations:
        scheduling.k8s.io/group-name: gang-of-8
    spec:
      schedulerName: volcano
      containers:
        - name: w
          image: busybox
          resources:
            limits: {memory: 1Gi, cpu: "1"}
"""
    found, _ = _check(tmp_path, podgroup, QUEUES)
    assert [(r, line, m) for r, line, _, m in found if r.startswith("gang")] == [
        (
            "gang-min-available-unsatisfiable",
            11,
            "PodGroup 'gang-of-8' needs 8 pods (minMember) but this workload creates 4",
        )
    ]


VOLCANO_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: mpi
  namespace: team-a
spec:
  queue: research
  schedulerName: volcano
  tasks:
    - name: worker
      replicas: {n}
      template:
        spec:
          containers:
            - name: worker
              image: mpioperator/mpi-pi
              resources:
                limits: {{nvidia.com/gpu: 8, memory: 64Gi, cpu: "8"}}
"""


def test_a_gang_above_its_volcano_queue_capability(tmp_path: Path) -> None:
    found, _ = _check(tmp_path, VOLCANO_JOB.format(n=3), QUEUES)  # 24 GPUs > 16
    assert [(r, line, m) for r, line, _, m in found if r.startswith("gang")] == [
        (
            "gang-min-available-unsatisfiable",
            7,
            "the gang needs 24 nvidia.com/gpu at once, above Volcano Queue 'research' capability 16",
        )
    ]
    fits, _ = _check(tmp_path, VOLCANO_JOB.format(n=2), QUEUES)
    assert not [r for r, *_ in fits if r.startswith("gang")]
    # The PodGroup of the context itself: reported when it is linted.
    found, _ = _check(tmp_path, (CLUSTER / "kueue-volcano.yaml").read_text())
    [(line, msg)] = [(line, m) for r, line, _, m in found if r.startswith("gang")]
    text = (CLUSTER / "kueue-volcano.yaml").read_text()
    assert line == text[: text.index("nvidia.com/gpu: 32")].count("\n") + 1
    assert msg == "the gang needs 32 nvidia.com/gpu at once, above Volcano Queue 'research' capability 16"


def test_a_read_write_once_claim_shared_by_workers(tmp_path: Path) -> None:
    one, _ = _check(tmp_path, _pytorch("team-a", 1, 8), QUEUES)  # one worker mounts it: one pod
    assert not [r for r, *_ in one if r.startswith("volume")]
    found, _ = _check(tmp_path, _pytorch("team-a", 3, 1), QUEUES)
    assert [(r, line, s) for r, line, s, _ in found if r.startswith("volume")] == [
        ("volume-single-node-shared", 33, "warning")
    ]
    # Unknown claim (no context): nothing said.
    alone, _ = _check(tmp_path, _pytorch("team-a", 1, 8))
    assert not [r for r, *_ in alone if r.startswith("volume")]


def test_queue_name_missing_where_the_profile_says_kueue_manages_jobs(tmp_path: Path) -> None:
    job = _pytorch(None, 1, 8).replace("namespace: team-a", "namespace: team-n")
    alone, _ = _check(tmp_path, job)
    assert not [r for r, *_ in alone if r == "queue-name-missing"]
    (tmp_path / ".kubelint-ml.yaml").write_text("profile:\n  kueueNamespaces: [team-n]\n")
    found, _ = _check(tmp_path, job)
    assert [(r, line, m) for r, line, _, m in found if r == "queue-name-missing"] == [
        (
            "queue-name-missing",
            3,
            "no kueue.x-k8s.io/queue-name label: Kueue ignores this accelerator workload (the profile's kueueNamespaces)",
        )
    ]


def test_a_namespace_known_to_have_no_local_queue(tmp_path: Path) -> None:
    job = _pytorch("team-a", 1, 8).replace("namespace: team-a", "namespace: team-n")
    # team-n has no LocalQueue, but nothing says the dump covers it: no finding.
    found, _ = _check(tmp_path, job, QUEUES)
    assert not [r for r, *_ in found if r == "queue-unknown"]
    ns = tmp_path / "ns.yaml"
    ns.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-n\n")
    found, _ = _check(tmp_path, job, QUEUES, str(ns))
    assert [(r, line, m) for r, line, _, m in found if r == "queue-unknown"] == [
        ("queue-unknown", 7, "LocalQueue 'team-a' does not exist in namespace 'team-n' (it has no LocalQueue)")
    ]


def test_a_json_dump_as_context_is_streamed(tmp_path: Path) -> None:
    import yaml

    from kubelint_ml.input import dump

    as_json = tmp_path / "cluster.json"
    as_json.write_text(json.dumps(yaml.safe_load(Path(NODES).read_text()), indent=4))
    from_yaml, _ = _check(tmp_path, GPU_JOB, NODES)
    old = dump.CHUNK
    dump.CHUNK = 100  # many chunks
    try:
        from_json, _ = _check(tmp_path, GPU_JOB, str(as_json))
    finally:
        dump.CHUNK = old
    strip = lambda found: [(r, line, s) for r, line, s, _ in found]  # noqa: E731
    assert strip(from_json) == strip(from_yaml)
    assert ("gpu-memory-share-mismatch", 21, "warning") in strip(from_json)
    broken = tmp_path / "broken.json"
    broken.write_text(as_json.read_text()[:-40])
    path = tmp_path / "w.yaml"
    r = CliRunner().invoke(main, ["check", str(path), "--context", str(broken)])
    assert r.exit_code == 2
    assert f"context {broken}:" in r.stderr and "truncated" in r.stderr


def test_pod_totals_are_limitrangers() -> None:
    """A Pod-type bound sees the sum of a resource only when every app container states it, and the
    largest init container where it is larger (plugin/pkg/admission/limitranger)."""
    from kubelint_ml.k8s.limitrange import admitted_containers, limit_range_violations, parse_limit_range

    lr = parse_limit_range(
        {"spec": {"limits": [{"type": "Pod", "min": {"memory": "1Gi"}, "max": {"memory": "8Gi"}}]}}, "ns", "pod", "f"
    )
    spec = {
        "initContainers": [{"name": "init", "resources": {"limits": {"memory": "9Gi"}}}],
        "containers": [
            {"name": "a", "resources": {"limits": {"memory": "2Gi"}}},
            {"name": "b", "resources": {}},
        ],
    }
    found = [v.message for v in limit_range_violations(admitted_containers(spec, (lr,)), (lr,))]
    # b states no memory: the app sum leaves memory out, and the init container's 9Gi is the total.
    assert found == ["maximum memory usage per Pod is 8Gi, but limit is 9Gi"]
    spec["initContainers"] = []
    found = [v.message for v in limit_range_violations(admitted_containers(spec, (lr,)), (lr,))]
    assert found == [
        "minimum memory usage per Pod is 1Gi, but no request is specified",
        "maximum memory usage per Pod is 8Gi, but no limit is specified",
    ]


def test_a_pod_larger_than_its_namespace_quota(tmp_path: Path) -> None:
    job = _pytorch(None, 1, 32).replace("namespace: team-a", "namespace: team-b")
    job = job.replace(
        'limits: {nvidia.com/gpu: 32, memory: 64Gi, cpu: "8"}',
        'limits: {nvidia.com/gpu: 32, memory: 64Gi, cpu: "8"}\n                requests: {memory: 64Gi}',
    )
    found, _ = _check(tmp_path, job, QUEUES)
    got = sorted((line, m) for r, line, _, m in found if r == "limit-range-violation")
    message = (
        "the pod: asks for 32 nvidia.com/gpu, above the quota's requests.nvidia.com/gpu: 16 "
        "(ResourceQuota team-b/compute)"
    )
    assert got == [(11, message), (22, message)]  # each pod template's spec


def test_a_jobs_pods_are_its_parallelism_or_its_completions_when_fewer(tmp_path: Path) -> None:
    job = GPU_JOB.replace("spec:\n  template:", "spec:\n  parallelism: 4\n  completions: {c}\n  template:", 1)
    job = job.replace(
        "  namespace: team-a\n", "  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: team-a}\n", 1
    )
    job = job.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 8").replace("memory: 1000Gi", "memory: 100Gi")
    fits, _ = _check(tmp_path, job.replace("{c}", "2"), QUEUES)  # 2 × 8 = 16: the nominal quota
    assert not [r for r, *_ in fits if r == "queue-quota-exceeded"]
    over, _ = _check(tmp_path, job.replace("{c}", "3"), QUEUES)
    assert [m for r, _, _, m in over if r == "queue-quota-exceeded"] == [
        "needs 24 nvidia.com/gpu in all (3 × 8) but ClusterQueue 'team-a-cq' can provide at most 16"
    ]


def test_rules_idle_for_a_runs_facts_wake_when_a_fact_arrives() -> None:
    """Rules that need cluster facts (LimitRanges, PVCs, queues) are left out of a run that has none,
    once per run; a fact added later (the editor, a server) brings them back."""
    from kubelint_ml.engine.context import Facts
    from kubelint_ml.engine.core import Engine
    from kubelint_ml.engine.rulefile import load_builtin_rules
    from kubelint_ml.run.config import Config
    from kubelint_ml.run.facts import add_facts
    from kubelint_ml.run.lint import Runner

    pod = b"""\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team-a}
spec:
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {cpu: "1", memory: 64Gi}
"""
    limit_range = b"""\
apiVersion: v1
kind: LimitRange
metadata: {name: lr, namespace: team-a}
spec:
  limits:
  - type: Container
    max: {memory: 32Gi}
"""
    engine = Engine(load_builtin_rules())
    facts = Facts()
    runner = Runner(engine, Config(), facts)
    assert "limit-range-violation" not in {f.rule for f in runner.lint_bytes(pod, "p.yaml").findings}
    add_facts(facts, limit_range, "lr.yaml", Config().limits)
    found = [(f.rule, f.line) for f in runner.lint_bytes(pod, "p.yaml").findings if f.rule == "limit-range-violation"]
    assert found == [("limit-range-violation", 10)]


def test_local_queues_of_another_project_in_the_tree_do_not_speak_for_a_workload(tmp_path: Path) -> None:
    """Queues among the inputs hold for workloads in their directory and below it; a tree of unrelated
    samples (a sibling directory's Kueue setup) says nothing of this one. The cluster (`--context`)
    holds everywhere."""
    queue = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: team, namespace: ml}\nspec:\n  clusterQueue: gpus\n"
    job = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      priorityClassName: high
      containers:
      - name: train
        image: python:3.12
        resources:
          limits: {nvidia.com/gpu: 1, memory: 8Gi, cpu: "1"}
"""
    for d in ("kueue-samples", "finetune", "repo/jobs"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "kueue-samples" / "queues.yaml").write_text(queue)
    (tmp_path / "finetune" / "job.yaml").write_text(job)
    (tmp_path / "repo" / "queues.yaml").write_text(queue.replace("team", "repo-team"))
    (tmp_path / "repo" / "jobs" / "job.yaml").write_text(job)

    def missing(*args: str) -> list[tuple[str, int, str]]:
        data, _ = _run(tmp_path, ["check", "-f", "json", "-q", "--jobs", "1", *args])
        return [(f["file"], f["line"], f["message"]) for f in data["findings"] if f["rule"] == "queue-name-missing"]

    # the sibling project's queue: no finding; the queue of the repository above the job: one
    assert missing("kueue-samples", "finetune", "repo") == [
        (
            "repo/jobs/job.yaml",
            3,
            "no kueue.x-k8s.io/queue-name label: Kueue ignores this accelerator workload "
            "(namespace 'ml' has 1 LocalQueue)",
        )
    ]
    # the same queue as the cluster's holds for every input
    assert [(f, line) for f, line, _ in missing("finetune", "--context", "kueue-samples/queues.yaml")] == [
        ("finetune/job.yaml", 3)
    ]


_JOBSET_CLAIMS = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: ml}
spec:
  volumeClaimPolicies:
    - templates:
        - metadata: {name: model}
          spec:
            accessModes: [MODE]
            resources: {requests: {storage: 1Gi}}
  replicatedJobs:
    - name: node
      replicas: 1
      template:
        spec:
          parallelism: PODS
          completions: PODS
          template:
            spec:
              containers:
                - name: node
                  image: busybox
                  volumeMounts: [{name: model, mountPath: /model}]
"""


def test_a_jobset_volume_claim_policy_is_a_claim_its_pods_share(tmp_path: Path) -> None:
    # JobSet makes the claim model-train from the template and adds it to every pod template whose
    # containers mount `model`: three pods on one ReadWriteOnce claim, said at its accessModes
    def found(mode: str, pods: int) -> list[tuple]:
        manifest = _JOBSET_CLAIMS.replace("MODE", mode).replace("PODS", str(pods))
        return [f for f in _check(tmp_path, manifest)[0] if f[0] == "volume-single-node-shared"]

    assert found("ReadWriteOnce", 3) == [
        (
            "volume-single-node-shared",
            9,
            "warning",
            "PVC 'model-train' is ReadWriteOnce but 3 pods mount it: pods on a second node fail with a "
            "Multi-Attach error",
        )
    ]
    assert [(r, line, s) for r, line, s, _ in found("ReadWriteOncePod", 3)] == [
        ("volume-single-node-shared", 9, "error")
    ]
    assert found("ReadWriteMany", 3) == []
    assert found("ReadWriteOnce", 1) == []  # one pod


def test_replicated_jobs_that_run_one_after_another_share_a_claim_in_turn(tmp_path: Path) -> None:
    # JobSet's single-pvc example: an initializer writes the model, then (dependsOn Complete) 3 nodes
    # read it: 3 pods at once, not 4; an initializer and one trainer in turn never share it at once,
    # but one that waits only for the initializer to be Ready runs beside it
    def found(pods: int, status: str) -> list[tuple]:
        init = (
            "    - name: init\n      template:\n        spec:\n          template:\n            spec:\n"
            "              containers:\n                - name: init\n                  image: busybox\n"
            "                  volumeMounts: [{name: model, mountPath: /model}]\n"
        )
        manifest = _JOBSET_CLAIMS.replace("MODE", "ReadWriteOnce").replace("PODS", str(pods))
        manifest = manifest.replace(
            "  replicatedJobs:\n    - name: node\n",
            f"  replicatedJobs:\n{init}    - name: node\n      dependsOn: [{{name: init, status: {status}}}]\n",
        )
        return [
            (r, line, m.split(": ")[0]) for r, line, _, m in _check(tmp_path, manifest)[0] if r.startswith("volume")
        ]

    assert found(3, "Complete") == [
        ("volume-single-node-shared", 9, "PVC 'model-train' is ReadWriteOnce but 3 pods mount it")
    ]
    assert found(1, "Complete") == []
    assert found(1, "Ready") == [
        ("volume-single-node-shared", 9, "PVC 'model-train' is ReadWriteOnce but 2 pods mount it")
    ]
