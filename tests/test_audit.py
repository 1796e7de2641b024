"""`kubelint-ml audit` on dumps in the exact format `kubectl get -o json|yaml` prints, and `--kubectl`
with a `kubectl` stand-in on PATH that checks its arguments and prints such a dump.

The cluster: a PyTorchJob (in the dump) whose four GPU pods have no memory limit, a JobSet (not in
the dump: its Jobs and pods are) whose GPU pods are BestEffort, a Deployment in a namespace whose
LimitRange filled in the pods' limits (clean: judged as admitted), a Deployment scaled to zero (judged
from its template), Nodes, a LimitRange, and kinds audit does not judge (a Service)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from clusterdump import container, kubectl_list, node, obj, owner, pod  # noqa: E402

from kubelint_ml.cli import main  # noqa: E402

GPU = {"limits": {"nvidia.com/gpu": "8"}, "requests": {"cpu": "8", "nvidia.com/gpu": "8"}}
ADMITTED = {"limits": {"cpu": "1", "memory": "16Gi"}, "requests": {"cpu": "1", "memory": "16Gi"}}


def cluster_items() -> list[dict]:
    items: list[dict] = [
        node(
            "gpu-1",
            {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
            {"cpu": "95", "memory": "1000Gi", "nvidia.com/gpu": "8"},
        ),
        obj(
            "v1",
            "LimitRange",
            "defaults",
            "web",
            {"limits": [{"type": "Container", "default": {"memory": "16Gi", "cpu": "1"}}]},
        ),
        obj("v1", "Service", "web", "web", {"ports": [{"port": 80}]}),
    ]
    # PyTorchJob: master + 3 workers, each pod with its own RANK, node and token volume.
    items.append(obj("kubeflow.org/v1", "PyTorchJob", "bert", "research", {"pytorchReplicaSpecs": {}}))
    for i, role in enumerate(["master", "worker", "worker", "worker"]):
        env = [{"name": "RANK", "value": str(i)}, {"name": "WORLD_SIZE", "value": "4"}]
        items.append(
            pod(
                f"bert-{role}-{max(0, i - 1)}",
                "research",
                [container("pytorch", "pytorch/pytorch:2.3.0", GPU, env, token=f"t{i}x0z")],
                owned_by=owner("kubeflow.org/v1", "PyTorchJob", "bert"),
                labels={"training.kubeflow.org/job-name": "bert", "training.kubeflow.org/replica-type": role},
                node=f"gpu-{i}",
                token=f"t{i}x0z",
                priority_class="high",
                restart="OnFailure",
            )
        )
    # JobSet llama: 2 Jobs × 2 pods, BestEffort GPU pods; the JobSet object itself is not in the dump.
    for j in range(2):
        job = f"llama-workers-{j}"
        items.append(
            obj("batch/v1", "Job", job, "research", {"parallelism": 2, "template": {"spec": {"containers": []}}})
        )
        items[-1]["metadata"]["ownerReferences"] = [owner("jobset.x-k8s.io/v1alpha2", "JobSet", "llama")]
        for k in range(2):
            items.append(
                pod(
                    f"{job}-{k}-abcde",
                    "research",
                    [
                        container(
                            "train",
                            "ghcr.io/llama:1",
                            {"limits": {"nvidia.com/gpu": "4"}, "requests": {"nvidia.com/gpu": "4"}},
                            token=f"j{j}k{k}q",
                        )
                    ],
                    owned_by=owner("batch/v1", "Job", job),
                    labels={"jobset.sigs.k8s.io/jobset-name": "llama", "batch.kubernetes.io/job-name": job},
                    token=f"j{j}k{k}q",
                    priority_class="high",
                    restart="Never",
                )
            )
    # Deployment web in a LimitRange-defaulted namespace: the pods carry the defaults (admitted).
    items.append(
        obj(
            "apps/v1",
            "Deployment",
            "web",
            "web",
            {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
        )
    )
    rs = obj(
        "apps/v1",
        "ReplicaSet",
        "web-7d9f8b6c5",
        "web",
        {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
    )
    rs["metadata"]["ownerReferences"] = [owner("apps/v1", "Deployment", "web")]
    items.append(rs)
    for k in range(2):
        items.append(
            pod(
                f"web-7d9f8b6c5-{k}abcd",
                "web",
                [container("web", "nginx", ADMITTED, token=f"w{k}xyz")],
                owned_by=owner("apps/v1", "ReplicaSet", "web-7d9f8b6c5"),
                labels={"app": "web", "pod-template-hash": "7d9f8b6c5"},
                token=f"w{k}xyz",
            )
        )
    # A Deployment with no pods: judged from its template.
    items.append(
        obj(
            "apps/v1",
            "Deployment",
            "idle",
            "research",
            {
                "replicas": 0,
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "idle", "image": "busybox", "resources": {"requests": {"memory": "1Gi"}}}
                        ]
                    }
                },
            },
        )
    )
    return items


def _run(args: list[str], env: dict | None = None, stdin: str | None = None) -> tuple[int, str, str]:
    r = CliRunner(env=env).invoke(main, args, input=stdin, catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def _line_of(text: str, needle: str, after: str) -> int:
    """1-based line of the first ``needle`` after the first ``after`` (found by text, not by the tool)."""
    start = text.index(after)
    return text[: text.index(needle, start)].count("\n") + 1


def _findings(out: str) -> list[dict]:
    return json.loads(out[: out.rindex("}") + 1])["findings"]


@pytest.fixture
def dump(tmp_path: Path) -> tuple[Path, str]:
    text = kubectl_list(cluster_items())
    path = tmp_path / "cluster.json"
    path.write_text(text)
    return path, text


def test_one_finding_per_owner_with_the_pod_count(dump: tuple[Path, str]) -> None:
    path, text = dump
    code, out, err = _run(["audit", str(path), "-f", "json"])
    assert code == 1, err
    got = sorted(
        (f["object"]["kind"], f["object"]["name"], f["rule"], f["data"]["pods"], f["line"]) for f in _findings(out)
    )
    bert = '"name": "bert-master-0"'
    llama = '"name": "llama-workers-0-0-abcde"'
    idle = _line_of(text, '"resources"', '"name": "idle"')
    assert got == [
        ("Deployment", "idle", "missing-memory-limit", 0, idle),
        ("JobSet", "llama", "besteffort-qos", 4, _line_of(text, '"spec"', llama)),
        ("JobSet", "llama", "missing-memory-limit", 4, _line_of(text, '"limits"', llama)),
        ("JobSet", "llama", "missing-memory-request", 4, _line_of(text, '"requests"', llama)),
        ("PyTorchJob", "bert", "missing-memory-limit", 4, _line_of(text, '"limits"', bert)),
        ("PyTorchJob", "bert", "missing-memory-request", 4, _line_of(text, '"requests"', bert)),
    ]
    messages = {(f["object"]["name"], f["rule"]): f["message"] for f in _findings(out)}
    assert messages[("bert", "missing-memory-limit")] == "container 'pytorch' has no memory limit (GPU pod) [4 pods]"
    # The web Deployment's pods carry their LimitRange defaults (admitted): nothing to say.
    assert not [f for f in _findings(out) if f["object"]["name"] == "web"]


def test_text_output_names_owners_and_the_namespace_summary(dump: tuple[Path, str]) -> None:
    path, _ = dump
    code, out, err = _run(["audit", str(path), "-v"])
    assert code == 1
    assert "no memory limit (GPU pod) [4 pods]" in out
    assert "  PyTorchJob research/bert\n" in out
    summary = out[out.index("NAMESPACE") :].splitlines()
    assert summary[0].split() == ["NAMESPACE", "OWNERS", "PODS", "ERRORS", "WARNINGS", "INFO"]
    rows = {line.split()[0]: line.split()[1:] for line in summary[1:]}
    assert rows["research"] == ["3", "8", "3", "3", "0"]
    assert rows["web"] == ["1", "2", "0", "0", "0"]
    assert "skipped objects of kinds audit does not judge: Service (v1) ×1" in err


def test_yaml_and_stdin_give_the_same_findings(dump: tuple[Path, str], tmp_path: Path) -> None:
    import yaml

    path, text = dump
    _, out_json, _ = _run(["audit", str(path), "-f", "json"])
    as_yaml = yaml.safe_dump(json.loads(text), sort_keys=False)
    ypath = tmp_path / "cluster.yaml"
    ypath.write_text(as_yaml)
    _, out_yaml, _ = _run(["audit", str(ypath), "-f", "json"])
    key = lambda f: (f["object"]["kind"], f["object"]["name"], f["rule"], f["data"]["pods"])  # noqa: E731
    assert sorted(map(key, _findings(out_json))) == sorted(map(key, _findings(out_yaml)))
    _, out_stdin, _ = _run(["audit", "-", "-f", "json"], stdin=text)
    assert [(f["line"], f["rule"]) for f in _findings(out_stdin)] == [
        (f["line"], f["rule"]) for f in _findings(out_json)
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json or yaml: [", "not valid YAML"),
        (
            '{\n    "apiVersion": "v1",\n    "items": [\n        {"kind": "Pod", "apiVersion": "v1", "metadata": {',
            "truncated",
        ),
        ('{"apiVersion": "v1", "items": [{"kind": "Pod",, }], "kind": "List"}', "1:"),
        ('{"hello": "world"}', "not a Kubernetes object or List"),
        ('{"apiVersion": "v1", "items": [1, 2], "kind": "List"}', "an item must be a JSON object"),
    ],
)
def test_bad_input_is_a_clear_error_with_the_position(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = _run(["audit", str(path)])
    assert code == 2
    assert message in err and str(path) in err, err


def test_truncated_dump_says_where(dump: tuple[Path, str], tmp_path: Path) -> None:
    _, text = dump
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    code, _, err = _run(["audit", str(cut)])
    assert code == 2
    assert f"{cut}:" in err and "truncated" in err


STANDIN = r"""#!{python}
import json, sys
args = sys.argv[1:]
with open({log!r}, "a") as fh:
    fh.write(" ".join(args) + "\n")
assert args[0] == "get" and args[2:4] == ["-o", "json"], args
assert "--context" in args and args[args.index("--context") + 1] == "prod", args
resource = args[1]
namespaced = resource not in {cluster_scoped!r}
assert ("--all-namespaces" in args) == namespaced, args
if resource.startswith("pytorchjobs"):
    sys.stderr.write('Error from server (Forbidden): pytorchjobs.kubeflow.org is forbidden: User "dev" cannot list resource "pytorchjobs" in API group "kubeflow.org" at the cluster scope\n')
    sys.exit(1)
if resource.startswith("rayjobs"):
    sys.stderr.write('error: the server doesn\'t have a resource type "rayjobs"\n')
    sys.exit(1)
dump = json.load(open({dump!r}))
kinds = {{"pods": "Pod", "nodes": "Node", "limitranges": "LimitRange", "jobs.batch": "Job", "deployments.apps": "Deployment", "replicasets.apps": "ReplicaSet", "services": "Service"}}
want = kinds.get(resource)
items = [i for i in dump["items"] if i["kind"] == want]
sys.stdout.write(json.dumps({{"apiVersion": "v1", "items": items, "kind": "List", "metadata": {{"resourceVersion": ""}}}}, indent=4))
"""


def test_kubectl_runs_read_only_gets_and_skips_forbidden_kinds(dump: tuple[Path, str], tmp_path: Path) -> None:
    from kubelint_ml.run.kubectl import RESOURCES

    path, _ = dump
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "calls.log"
    script = bindir / "kubectl"
    cluster_scoped = [r for r, namespaced in RESOURCES if not namespaced]
    script.write_text(
        STANDIN.format(python=sys.executable, log=str(log), dump=str(path), cluster_scoped=cluster_scoped)
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    code, out, err = _run(["audit", "--kubectl", "--context-name", "prod", "-A", "-f", "json", "-v"], env=env)
    assert code == 1, err
    calls = log.read_text().splitlines()
    assert {c.split()[0] for c in calls} == {"get"}  # read-only
    assert len(calls) == len(RESOURCES)
    assert "cannot list pytorchjobs.kubeflow.org (RBAC: forbidden); skipped" in err
    assert "the cluster does not serve rayjobs.ray.io; skipped" in err
    owners = {(f["object"]["kind"], f["object"]["name"]) for f in _findings(out)}
    # The PyTorchJob could not be listed: its pods still name it.
    assert owners == {("PyTorchJob", "bert"), ("JobSet", "llama"), ("Deployment", "idle")}


def test_kubectl_missing_from_path(tmp_path: Path) -> None:
    code, _, err = _run(["audit", "--kubectl"], env={"PATH": str(tmp_path)})
    assert code == 2
    assert "kubectl is not on PATH" in err


def test_no_credentials_in_any_output(tmp_path: Path) -> None:
    items = cluster_items()
    secret_env = [{"name": "HF_TOKEN", "value": "hf_SECRETvalue0123456789"}, {"name": "WORLD_SIZE", "value": "4"}]
    for item in items:
        if item["kind"] == "Pod" and item["metadata"]["name"].startswith("bert-"):
            c = item["spec"]["containers"][0]
            c["env"] = secret_env
            c["args"] = ["torchrun", "--nproc_per_node=8", "--api-key=sk-SECRET987654", "train.py"]
    path = tmp_path / "dump.json"
    path.write_text(kubectl_list(items))
    for fmt in ("text", "json", "sarif"):
        code, out, err = _run(["audit", str(path), "-v", "-f", fmt])
        assert code == 1
        assert "SECRET" not in out and "SECRET" not in err, fmt


def test_a_limit_range_namespace_is_clean_even_when_pods_lack_its_defaults(tmp_path: Path) -> None:
    """Pods admitted before their namespace's LimitRange lack its defaults: judged as the next pod will be."""
    items = [
        obj(
            "v1",
            "LimitRange",
            "defaults",
            "lr",
            {"limits": [{"type": "Container", "default": {"memory": "4Gi", "cpu": "1"}}]},
        )
    ]
    for k in range(3):
        items.append(
            pod(
                f"api-5c6d7e8f9-{k}zzzz",
                "lr",
                [container("api", "nginx", {}, token=f"a{k}bcd")],
                owned_by=owner("apps/v1", "ReplicaSet", "api-5c6d7e8f9"),
                labels={"pod-template-hash": "5c6d7e8f9"},
                token=f"a{k}bcd",
            )
        )
    path = tmp_path / "lr.json"
    path.write_text(kubectl_list(items))
    code, out, err = _run(["audit", str(path), "-f", "json"])
    assert code == 0, err
    assert _findings(out) == []
    # Without the LimitRange the same pods are BestEffort, once for the inferred Deployment.
    path.write_text(kubectl_list(items[1:]))
    _, out, _ = _run(["audit", str(path), "-f", "json"])
    assert sorted(
        {(f["object"]["kind"], f["object"]["name"], f["rule"], f["data"]["pods"]) for f in _findings(out)}
    ) == [
        ("Deployment", "api", "besteffort-qos", 3),
        ("Deployment", "api", "missing-memory-limit", 3),
        ("Deployment", "api", "missing-memory-request", 3),
    ]


def test_usage_sizes_the_owners_found(tmp_path: Path) -> None:
    """With a usage snapshot, the usage rules judge the owners the dump holds, keyed as their series are."""
    limits = {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}}
    template = {
        "metadata": {"labels": {"app": "serve"}},
        "spec": {"containers": [{"name": "server", "image": "vllm", "resources": limits}]},
    }
    dep = obj("apps/v1", "Deployment", "serve", "ml", {"replicas": 3, "template": template})
    rs = obj("apps/v1", "ReplicaSet", "serve-6f7d9c8b5", "ml", {"replicas": 3, "template": template})
    rs["metadata"]["ownerReferences"] = [owner("apps/v1", "Deployment", "serve")]
    items = [dep, rs]
    for k in range(3):
        items.append(
            pod(
                f"serve-6f7d9c8b5-{k}abcd",
                "ml",
                [container("server", "vllm", limits, token=f"s{k}xyz")],
                owned_by=owner("apps/v1", "ReplicaSet", "serve-6f7d9c8b5"),
                labels={"app": "serve", "pod-template-hash": "6f7d9c8b5"},
                token=f"s{k}xyz",
            )
        )
    path = tmp_path / "dump.json"
    text = kubectl_list(items)
    path.write_text(text)
    snapshot = {
        "kind": "kubelint-ml/usage-snapshot",
        "version": 1,
        "cluster": None,
        "source": "test",
        "window": {"lookback": "14d", "step": "1m", "end": 1763856000},
        "workloads": [
            {
                "namespace": "ml",
                "group": "apps",
                "kind": "Deployment",
                "name": "serve",
                "template": "",
                "pods": 3,
                "containers": {
                    "server": {
                        "pods": 3,
                        "memory": {
                            "samples": 20000,
                            "median": 2000000000,
                            "p90": 2500000000,
                            "p99": 2900000000,
                            "max": 3221225472,
                        },
                    }
                },
            }
        ],
        "missing": [],
    }
    snap = tmp_path / "snapshot.json"
    snap.write_text(json.dumps(snapshot))
    _, out, _ = _run(["audit", str(path), "-f", "json"])
    assert _findings(out) == []
    code, out, err = _run(["audit", str(path), "-f", "json", "--usage", str(snap)])
    assert code == 1, err
    [f] = _findings(out)
    assert (f["rule"], f["object"]["kind"], f["object"]["name"], f["data"]["pods"]) == (
        "memory-limit-below-peak",
        "Deployment",
        "serve",
        3,
    )
    assert f["line"] == _line_of(text, '"memory": "2Gi"', '"kind": "Deployment"')  # limits.memory
    assert f["message"] == (
        "container 'server': memory limit 2Gi is below the observed peak 3Gi over 14d; set it to 3712Mi (peak + 20%) [3 pods]"
    )


def test_roles_of_one_owner_make_one_finding(tmp_path: Path) -> None:
    """A PyTorchJob's master (no GPU) and workers (GPUs) both lack a memory limit: one finding for the
    job, at the most severe wording (GPU pods: error), holding for all five pods."""
    items = [obj("kubeflow.org/v1", "PyTorchJob", "mixed", "ml", {"pytorchReplicaSpecs": {}})]
    for i, role in enumerate(["master", "worker", "worker", "worker", "worker"]):
        res = {"requests": {"cpu": "2"}} if role == "master" else GPU
        items.append(
            pod(
                f"mixed-{role}-{i}",
                "ml",
                [container("pytorch", "pytorch/pytorch:2.3.0", res, token=f"m{i}abc")],
                owned_by=owner("kubeflow.org/v1", "PyTorchJob", "mixed"),
                labels={"training.kubeflow.org/replica-type": role},
                token=f"m{i}abc",
                priority_class="high",
                restart="OnFailure",
            )
        )
    path = tmp_path / "mixed.json"
    path.write_text(kubectl_list(items))
    _, out, _ = _run(["audit", str(path), "-f", "json"])
    limits = [f for f in _findings(out) if f["rule"] == "missing-memory-limit"]
    assert [(f["severity"], f["data"]["pods"], f["data"]["ownerPods"]) for f in limits] == [("error", 5, 5)]


def test_yaml_on_stdin_and_a_list_item_that_is_not_an_object(dump: tuple[Path, str], tmp_path: Path) -> None:
    import yaml

    path, text = dump
    as_yaml = yaml.safe_dump(json.loads(text), sort_keys=False)
    _, from_file, _ = _run(["audit", str(path), "-f", "json"])
    code, from_stdin, err = _run(["audit", "-", "-f", "json"], stdin=as_yaml)
    assert code == 1, err
    key = lambda f: (f["object"]["kind"], f["object"]["name"], f["rule"], f["data"]["pods"])  # noqa: E731
    assert sorted(map(key, _findings(from_stdin))) == sorted(map(key, _findings(from_file)))
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n  - 42\n"
    )
    code, _, err = _run(["audit", str(bad)])
    assert code == 2
    assert f"{bad}:7:5: not a Kubernetes object or List" in err, err


def test_a_read_write_once_claim_on_several_nodes(tmp_path: Path) -> None:
    pvc = obj(
        "v1",
        "PersistentVolumeClaim",
        "ckpt",
        "ml",
        {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Ti"}}},
    )
    items = [pvc]
    claim = {"volumes": [{"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}}]}
    for i in range(3):  # a JobSet's pods spread over three nodes
        p = pod(
            f"ft-workers-0-{i}-xyz",
            "ml",
            [container("train", "img", ADMITTED, token=f"f{i}abc")],
            owned_by=owner("batch/v1", "Job", "ft-workers-0"),
            labels={"jobset.sigs.k8s.io/jobset-name": "ft"},
            node=f"gpu-{i}",
            token=f"f{i}abc",
            priority_class="high",
            restart="Never",
        )
        p["spec"]["volumes"] = claim["volumes"] + p["spec"]["volumes"]
        items.append(p)
    for i in range(2):  # a Deployment's two pods on one node: they share the attachment
        p = pod(
            f"cache-5d6f7-{i}abcd",
            "ml",
            [container("cache", "img", ADMITTED, token=f"c{i}abc")],
            owned_by=owner("apps/v1", "ReplicaSet", "cache-5d6f7"),
            labels={"pod-template-hash": "5d6f7"},
            node="cpu-1",
            token=f"c{i}abc",
        )
        p["spec"]["volumes"] = claim["volumes"] + p["spec"]["volumes"]
        items.append(p)
    path = tmp_path / "pvc.json"
    text = kubectl_list(items)
    path.write_text(text)
    _, out, _ = _run(["audit", str(path), "-f", "json"])
    shared = [f for f in _findings(out) if f["rule"] == "volume-single-node-shared"]
    assert [(f["object"]["kind"], f["object"]["name"], f["data"]["pods"], f["line"], f["message"]) for f in shared] == [
        (
            "JobSet",
            "ft",
            3,
            _line_of(text, '"claimName": "ckpt"', '"name": "ft-workers-0-0-xyz"'),
            "PVC 'ckpt' is ReadWriteOnce but its pods run on 3 nodes: all but one node's fail with a "
            "Multi-Attach error [3 pods]",
        )
    ]


@pytest.mark.parametrize(
    ("owned_by", "labels", "top"),
    [
        (owner("apps/v1", "ReplicaSet", "web-6c7d8e9f"), {"pod-template-hash": "6c7d8e9f"}, ("Deployment", "web")),
        (owner("batch/v1", "Job", "ls-workers-0"), {"jobset.sigs.k8s.io/jobset-name": "ls"}, ("JobSet", "ls")),
        (
            owner("apps/v1", "ReplicaSet", "pred-00001-deployment-5f6"),
            {"serving.kserve.io/inferenceservice": "pred", "pod-template-hash": "5f6"},
            ("InferenceService", "pred"),
        ),
        (
            owner("ray.io/v1", "RayCluster", "rj-raycluster-x1"),
            {"ray.io/originated-from-crd": "RayJob", "ray.io/originated-from-cr-name": "rj"},
            ("RayJob", "rj"),
        ),
        (
            owner("apps/v1", "StatefulSet", "lws-0"),
            {"leaderworkerset.sigs.k8s.io/name": "lws"},
            ("LeaderWorkerSet", "lws"),
        ),
        (owner("kubeflow.org/v1", "PyTorchJob", "pt"), {}, ("PyTorchJob", "pt")),
        (None, {}, ("Pod", "bare")),
    ],
)
def test_the_top_owner_from_labels_when_the_dump_lacks_it(tmp_path: Path, owned_by, labels, top) -> None:
    p = pod("bare", "ml", [container("c", "img", {}, token="zzzzz")], owned_by=owned_by, labels=labels, token="zzzzz")
    path = tmp_path / "one.json"
    path.write_text(kubectl_list([p]))
    _, out, _ = _run(["audit", str(path), "-f", "json"])
    assert {(f["object"]["kind"], f["object"]["name"]) for f in _findings(out)} == {top}


def test_queue_rules_judge_the_owner_not_its_pods(tmp_path: Path) -> None:
    queue = obj("kueue.x-k8s.io/v1beta1", "LocalQueue", "team", "research", {"clusterQueue": "cq"})
    items = [queue] + [i for i in cluster_items() if i["kind"] != "Service"]
    [job] = [i for i in items if i["kind"] == "PyTorchJob"]
    gpu_template = {"spec": {"containers": [{"name": "pytorch", "image": "pytorch/pytorch:2.3.0", "resources": GPU}]}}
    job["spec"] = {"pytorchReplicaSpecs": {"Worker": {"replicas": 4, "template": gpu_template}}}
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team"}
    path = tmp_path / "q.json"
    path.write_text(kubectl_list(items))
    _, out, _ = _run(["audit", str(path), "-f", "json"])
    # The labelled PyTorchJob is queued, though its pods carry no label of their own.
    assert [f for f in _findings(out) if f["rule"] == "queue-name-missing"] == []
    job["metadata"]["labels"] = {}
    path.write_text(kubectl_list(items))
    _, out, _ = _run(["audit", str(path), "-f", "json"])
    missing = [
        (f["object"]["kind"], f["object"]["name"], f["data"]["pods"])
        for f in _findings(out)
        if f["rule"] == "queue-name-missing"
    ]
    assert missing == [("PyTorchJob", "bert", 4)]


def test_a_running_pod_is_judged_on_the_node_it_runs_on(tmp_path: Path) -> None:
    """8 GPUs and 1000Gi, or 4 GPUs and 2000Gi: 1 GPU with 400Gi of memory strands the first node's
    GPUs (12.5% of its GPUs, 40% of its memory) but not the second's (25%, 20%)."""
    nodes = [
        node("gpu-a", {"pool": "a"}, {"cpu": "96", "memory": "1000Gi", "nvidia.com/gpu": "8"}),
        node("gpu-b", {"pool": "b"}, {"cpu": "96", "memory": "2000Gi", "nvidia.com/gpu": "4"}),
    ]
    res = {
        "limits": {"nvidia.com/gpu": "1", "memory": "400Gi", "cpu": "8"},
        "requests": {"nvidia.com/gpu": "1", "memory": "400Gi", "cpu": "8"},
    }

    def dump(on: str) -> list[dict]:
        p = pod("one", "ml", [container("c", "img", res, token="zzzzz")], node=on, token="zzzzz", priority_class="high")
        return nodes + [p]

    shares = {}
    for on in ("gpu-a", "gpu-b", "elsewhere"):
        path = tmp_path / f"{on}.json"
        path.write_text(kubectl_list(dump(on)))
        _, out, _ = _run(["audit", str(path), "-f", "json"])
        shares[on] = [f["message"] for f in _findings(out) if f["rule"] == "gpu-memory-share-mismatch"]
    assert shares["gpu-a"] == [
        "1 of 8 GPUs but 40% of node pool gpu-a (Node from " + str(tmp_path / "gpu-a.json") + ") memory (400Gi) [1 pod]"
    ]
    assert shares["gpu-b"] == []
    assert shares["elsewhere"] == []  # an unknown node: judged on every pool, and it does not hold on all


def test_pods_of_one_shape_on_nodes_of_several_shapes_are_judged_on_every_pool(tmp_path: Path) -> None:
    nodes = [
        node("gpu-a", {"pool": "a"}, {"cpu": "96", "memory": "1000Gi", "nvidia.com/gpu": "8"}),
        node("gpu-b", {"pool": "b"}, {"cpu": "96", "memory": "2000Gi", "nvidia.com/gpu": "4"}),
    ]
    res = {
        "limits": {"nvidia.com/gpu": "1", "memory": "400Gi", "cpu": "8"},
        "requests": {"nvidia.com/gpu": "1", "memory": "400Gi", "cpu": "8"},
    }

    def run(on: list[str]) -> list[tuple]:
        items = list(nodes)
        for k, name in enumerate(on):
            items.append(
                pod(
                    f"inf-7f8d9-{k}abcd",
                    "ml",
                    [container("c", "img", res, token=f"i{k}abc")],
                    owned_by=owner("apps/v1", "ReplicaSet", "inf-7f8d9"),
                    labels={"pod-template-hash": "7f8d9"},
                    node=name,
                    token=f"i{k}abc",
                )
            )
        path = tmp_path / "d.json"
        path.write_text(kubectl_list(items))
        _, out, _ = _run(["audit", str(path), "-f", "json"])
        return [
            (f["object"]["name"], f["data"]["pods"]) for f in _findings(out) if f["rule"] == "gpu-memory-share-mismatch"
        ]

    assert run(["gpu-a", "gpu-a"]) == [("inf", 2)]
    assert run(["gpu-a", "gpu-b"]) == []  # it does not hold on gpu-b's shape


def test_compact_json_gives_the_same_findings_at_the_same_fields(dump: tuple[Path, str], tmp_path: Path) -> None:
    """A dump on one line (`jq -c`, an API client's json.dumps): every object is judged, as in kubectl's
    indented output, each finding at line 1 and the column of the same field."""
    path, text = dump
    compact = json.dumps(json.loads(text))
    one_line = tmp_path / "compact.json"
    one_line.write_text(compact)
    _, out, _ = _run(["audit", str(path), "-f", "json"])
    _, out_compact, _ = _run(["audit", str(one_line), "-f", "json"])
    indented, flat = _findings(out), _findings(out_compact)
    assert len(indented) > 3
    assert [(f["rule"], f["severity"], f["message"]) for f in flat] == [
        (f["rule"], f["severity"], f["message"]) for f in indented
    ]
    lines = text.split("\n")
    for f, g in zip(indented, flat):
        assert g["line"] == 1
        field = lines[f["line"] - 1][f["column"] - 1 :].split(":")[0]
        assert compact[g["column"] - 1 :].startswith(field), (f["rule"], field)
