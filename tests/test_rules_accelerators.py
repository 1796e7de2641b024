"""Family 2: accelerators and their share of the node."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine.context import Facts
from kubelint_ml.engine.core import Engine
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.records import replace
from kubelint_ml.run.config import Config, Profile
from kubelint_ml.run.lint import Runner, lint_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "accelerators"
RULES = {r.id: r for r in load_builtin_rules()}
MISMATCH = "accelerator-request-limit-mismatch"
SHARE = "gpu-memory-share-mismatch"
UNRESOLVED = "gpu-node-unresolved"
FAMILY = (MISMATCH, SHARE, UNRESOLVED)


def _config(profile: dict | None) -> Config:
    cfg = Config()
    if profile:
        cfg.profile = Profile.from_dict(profile, ROOT)
    return cfg


def _rules(ids: tuple[str, ...], params: dict | None) -> list:
    out = []
    for rid in ids:
        rule = RULES[rid]
        if params:
            rule = replace(rule, params={**rule.params, **params})
        out.append(rule)
    return out


def lint(manifest: str, *ids: str, profile: dict | None = None, params: dict | None = None) -> list:
    ids = ids or FAMILY
    findings = lint_text(textwrap.dedent(manifest).encode(), _rules(ids, params), _config(profile))
    return [f for f in findings if f.rule in ids]


def notes(manifest: str, rule_id: str, profile: dict | None = None) -> list[str]:
    from kubelint_ml.run.facts import add_facts

    cfg = _config(profile)
    data = textwrap.dedent(manifest).encode()
    facts = Facts()
    add_facts(facts, data, "m.yaml", cfg.limits)  # as a run's first pass (DRA claims, classes)
    runner = Runner(Engine(_rules((rule_id,), None)), cfg, facts, verbose=True)
    return runner.lint_bytes(data, "m.yaml").notes


def pod(resources: str, spec_extra: str = "", containers_extra: str = "") -> str:
    """A Pod with one container whose resources block is ``resources``."""
    body = textwrap.indent(textwrap.dedent(resources).strip(), " " * 8)
    extra = textwrap.indent(textwrap.dedent(spec_extra).strip(), "  ") if spec_extra else ""
    more = textwrap.indent(textwrap.dedent(containers_extra).strip(), "    ") if containers_extra else ""
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
        + (extra + "\n" if extra else "")
        + "  containers:\n    - name: main\n      image: busybox\n      resources:\n"
        + body
        + "\n"
        + (more + "\n" if more else "")
    )


P4D = "nodeSelector:\n  node.kubernetes.io/instance-type: p4d.24xlarge"
TPU7X = "cloud.google.com/gke-tpu-accelerator: tpu7x\ncloud.google.com/gke-tpu-topology: 4x4x4"


def test_rules_are_registered_with_the_catalog_severities():
    assert RULES[MISMATCH].severity == "error"
    assert RULES[SHARE].severity == "warning"
    assert RULES[UNRESOLVED].severity == "info"
    assert RULES[UNRESOLVED].enabled is False
    assert RULES[MISMATCH].enabled and RULES[SHARE].enabled
    assert {RULES[r].family for r in FAMILY} == {"accelerators"}
    assert RULES[SHARE].params == {"tolerance": 0.10, "resources": ["memory", "ephemeral-storage", "cpu"]}


# --------------------------------------------------------------------------
# accelerator-request-limit-mismatch


def test_request_without_limit_points_where_the_limit_belongs():
    text = pod("""
        requests:
          cpu: "4"
          nvidia.com/gpu: 2
        limits:
          memory: 8Gi
    """)
    [f] = lint(text, MISMATCH)
    assert (f.line, f.severity, f.container) == (13, "error", "main")
    assert f.path == "spec.containers[0].resources.limits"
    assert "Pod/p: container 'main' requests 2 nvidia.com/gpu but sets no limit for it" in f.detail
    assert "Limit must be set for non overcommitable resources" in f.detail
    assert "Set limits.nvidia.com/gpu: 2" in f.detail


def test_request_without_any_limits_block_points_at_resources():
    [f] = lint(
        pod("""
        requests:
          rdma/hca_shared_devices_a: 1
    """),
        MISMATCH,
    )
    assert f.path == "spec.containers[0].resources"
    assert "requests 1 rdma/hca_shared_devices_a but sets no limit" in f.detail


def test_request_different_from_limit_points_at_the_request_value():
    text = pod("""
        requests:
          nvidia.com/gpu: "4"
          vpc.amazonaws.com/efa: 1
        limits:
          nvidia.com/gpu: 8
          vpc.amazonaws.com/efa: 1
    """)
    [f] = lint(text, MISMATCH)
    assert (f.line, f.column) == (11, 27)
    assert f.path == 'spec.containers[0].resources.requests["nvidia.com/gpu"]'
    assert "requests 4 nvidia.com/gpu but limits it to 8" in f.detail
    assert '"must be equal to nvidia.com/gpu limit of 8"' in f.detail


@pytest.mark.parametrize(
    "resources",
    [
        "limits:\n  nvidia.com/gpu: 8",  # a limit alone: the request defaults to it
        "requests:\n  nvidia.com/gpu: '1'\nlimits:\n  nvidia.com/gpu: 1",  # equal, written differently
        "requests:\n  amd.com/gpu: 1k\nlimits:\n  amd.com/gpu: 1000",
        "requests:\n  nvidia.com/gpu: $GPUS\nlimits:\n  nvidia.com/gpu: 8",  # unrendered placeholder
        "requests:\n  nvidia.com/gpu: ${NUM_GPUS}",
        "requests:\n  nvidia.com/gpu: 1\nlimits:\n  nvidia.com/gpu: PLACEHOLDER_GPUS",
        "requests:\n  nvidia.com/gpu:\nlimits:\n  nvidia.com/gpu: 1",  # null: not judged
        "requests:\n  nvidia.com/gpu: 0.5\nlimits:\n  nvidia.com/gpu: 1",  # invalid-quantity's finding
        "requests:\n  nvidia.com/gpu: 1GB",
        "requests:\n  cpu: '1'\n  memory: 1Gi",  # overcommittable: no limit needed
        "requests:\n  cpu: '2'\nlimits:\n  cpu: '4'",
    ],
)
def test_valid_or_not_judged(resources):
    assert lint(pod(resources), MISMATCH) == []


def test_every_container_kind_and_replica_is_checked():
    text = """\
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata:
          name: ft
        spec:
          pytorchReplicaSpecs:
            Master:
              template:
                spec:
                  initContainers:
                    - name: warmup
                      image: busybox
                      resources:
                        requests: {nvidia.com/gpu: 1}
                    - name: proxy
                      image: envoy
                      restartPolicy: Always
                      resources:
                        requests: {vpc.amazonaws.com/efa: 1}
                        limits: {vpc.amazonaws.com/efa: 2}
                  containers:
                    - name: pytorch
                      image: pytorch
                      resources:
                        limits: {nvidia.com/gpu: 1}
            Worker:
              template:
                spec:
                  containers:
                    - name: pytorch
                      image: pytorch
                      resources:
                        requests: {nvidia.com/gpu: 2}
                        limits: {nvidia.com/gpu: 1}
    """
    found = lint(text, MISMATCH)
    assert [(f.line, f.container) for f in found] == [(13, "warmup"), (19, "proxy"), (33, "pytorch")]
    assert found[0].detail.startswith(
        "PyTorchJob/ft (Master): init container 'warmup' requests 1 nvidia.com/gpu but sets no limit"
    )
    assert found[1].detail.startswith(
        "PyTorchJob/ft (Master): sidecar 'proxy' requests 1 vpc.amazonaws.com/efa but limits it to 2"
    )
    assert found[2].detail.startswith(
        "PyTorchJob/ft (Worker): container 'pytorch' requests 2 nvidia.com/gpu but limits it to 1"
    )


# --------------------------------------------------------------------------
# gpu-memory-share-mismatch: the share


def test_share_exceeded_on_a_catalog_instance_type():
    text = pod(
        """
        requests: {cpu: "8", memory: 700Gi}
        limits: {memory: 700Gi, nvidia.com/gpu: 2}
    """,
        P4D,
    )
    [f] = lint(text, SHARE)
    assert f.severity == "warning"
    assert (f.line, f.path, f.container) == (12, "spec.containers[0].resources.requests.memory", "main")
    assert f.detail == (
        "Pod/p: uses 2 of 8 GPUs (25%) on p4d.24xlarge but requests 700Gi memory (66.2% of 1057Gi "
        "allocatable), set by container 'main': at most 1 such pod fits on one node, leaving 6 of its 8 GPUs "
        "idle. Request at most about 264Gi memory (its GPU share), more GPUs per pod, or a node type with "
        "more memory per GPU"
    )


def test_tolerance_boundary():
    # p4d.24xlarge: 1082712Mi allocatable; one GPU of eight -> 135339Mi, +10% -> 148872.9Mi
    at = pod("requests: {memory: 148872Mi}\nlimits: {nvidia.com/gpu: 1}", P4D)
    over = pod("requests: {memory: 148873Mi}\nlimits: {nvidia.com/gpu: 1}", P4D)
    assert lint(at, SHARE) == []
    [f] = lint(over, SHARE)
    assert "uses 1 of 8 GPUs (12.5%) on p4d.24xlarge but requests 148873Mi memory (13.8% of 1057Gi" in f.detail
    assert "at most 7 such pods fit on one node, leaving 1 of its 8 GPUs idle" in f.detail
    assert lint(over, SHARE, params={"tolerance": 0.5}) == []


def test_cpu_and_ephemeral_storage_and_the_resources_param():
    text = pod(
        """
        requests: {cpu: "48", memory: 100Gi, ephemeral-storage: 2560Gi}
        limits: {nvidia.com/gpu: 2}
    """,
        P4D,
    )
    found = {f.path.rsplit(".", 1)[1]: f.detail for f in lint(text, SHARE)}
    assert set(found) == {"cpu", "ephemeral-storage"}
    assert "uses 2 of 8 GPUs (25%) on p4d.24xlarge but requests 48 cpu (50.2% of 95.69 allocatable)" in found["cpu"]
    assert "Request at most about 23 cpu (its GPU share)" in found["cpu"]
    assert "requests 2560Gi ephemeral-storage (34.4% of 7451Gi local storage)" in found["ephemeral-storage"]
    assert [f.path for f in lint(text, SHARE, params={"resources": ["memory", "cpu"]})] == [
        "spec.containers[0].resources.requests.cpu"
    ]


def test_whole_node_pod_only_fails_above_allocatable():
    fits = pod("requests: {cpu: '95', memory: 1050Gi}\nlimits: {nvidia.com/gpu: 8}", P4D)
    assert lint(fits, SHARE) == []
    ram = pod("limits: {cpu: '96', memory: 1152Gi, nvidia.com/gpu: 8}", P4D)
    cpu, mem = lint(ram, SHARE)
    assert cpu.path == "spec.containers[0].resources.limits.cpu"  # the request defaults from the limit
    assert cpu.detail == (
        "Pod/p: the pod requests 96 cpu, set by container 'main', but p4d.24xlarge has only 95.69 allocatable: "
        "the pod can never be scheduled. Request at most 95 cpu (less what the node's DaemonSets request), or "
        "select a larger node type"
    )
    assert "requests 1152Gi memory, set by container 'main', but p4d.24xlarge has only 1057Gi allocatable" in mem.detail


def test_more_gpus_than_the_node_has():
    text = pod("limits: {nvidia.com/gpu: 16}", P4D)
    [f] = lint(text, SHARE)
    assert f.path == 'spec.containers[0].resources.limits["nvidia.com/gpu"]'
    assert f.detail == (
        "Pod/p: the pod requests 16 GPUs but p4d.24xlarge has only 8: the pod can never be scheduled. Request "
        "at most 8 GPUs per pod (and more replicas), or select a node type with 16 or more"
    )


def test_accelerator_the_node_does_not_offer():
    [f] = lint(pod("requests: {memory: 64Gi}\nlimits: {amd.com/gpu: 1}", P4D), SHARE)
    assert f.path == 'spec.containers[0].resources.limits["amd.com/gpu"]'
    assert "the pod requests 1 amd.com/gpu but p4d.24xlarge offers nvidia.com/gpu only" in f.detail


def test_several_candidate_node_types_the_pod_fits_one():
    l4 = "nodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-l4"
    # g2-standard-4 has 13Gi, g2-standard-12 has 43Gi: the autoscaler picks one that fits.
    assert lint(pod("requests: {cpu: '10', memory: 40Gi}\nlimits: {nvidia.com/gpu: 1}", l4), SHARE) == []
    # 130Gi fits no one-GPU L4 machine; on the multi-GPU ones it strands GPUs.
    [f] = lint(pod("requests: {memory: 130Gi}\nlimits: {nvidia.com/gpu: 1}", l4), SHARE)
    assert (
        "uses 1 of 8 GPUs (12.5%) on g2-standard-96 (the closest fit among 8 node types nodeSelector "
        "cloud.google.com/gke-accelerator=nvidia-l4 allows) but requests 130Gi memory (35.2% of 369Gi"
    ) in f.detail
    [f] = lint(pod("limits: {nvidia.com/gpu: 12}", l4), SHARE)
    assert (
        "the pod requests 12 GPUs but g2-standard-96 (the largest of 8 node types nodeSelector "
        "cloud.google.com/gke-accelerator=nvidia-l4 allows) has only 8"
    ) in f.detail


def test_required_node_affinity_with_several_instance_types():
    affinity = """
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
                - matchExpressions:
                    - key: karpenter.k8s.aws/instance-family
                      operator: In
                      values: [p5]
    """
    ok = pod("requests: {memory: 200Gi}\nlimits: {nvidia.com/gpu: 1}", affinity)
    assert lint(ok, SHARE) == []  # p5.4xlarge: one H100 with 235Gi
    [f] = lint(pod("requests: {memory: 300Gi}\nlimits: {nvidia.com/gpu: 1}", affinity), SHARE)
    assert "on p5.48xlarge (the closest fit among 2 node types required node affinity" in f.detail
    assert lint(pod("requests: {memory: 300Gi}\nlimits: {nvidia.com/gpu: 4}", affinity), SHARE) == []


def test_preferred_affinity_is_ignored():
    text = pod(
        "requests: {memory: 700Gi}\nlimits: {nvidia.com/gpu: 1}",
        """
        affinity:
          nodeAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
              - weight: 1
                preference:
                  matchExpressions:
                    - {key: node.kubernetes.io/instance-type, operator: In, values: [p4d.24xlarge]}
    """,
    )
    assert lint(text, SHARE) == []
    assert any("node type not resolved: no nodeSelector or required node affinity" in n for n in notes(text, SHARE))
    quiet = Runner(Engine(_rules((SHARE,), None)), _config(None), Facts())  # no --verbose: no notes are made
    assert quiet.lint_bytes(textwrap.dedent(text).encode(), "m.yaml").notes == []


INIT_UNPACK = """
initContainers:
  - name: unpack
    image: busybox
    resources:
      requests: {memory: 400Gi}
"""

POD_LEVEL = """
resources:
  requests: {memory: 512Gi}
"""


def test_points_at_the_largest_contributor():
    init_peak = pod("requests: {memory: 10Gi}\nlimits: {nvidia.com/gpu: 1}", P4D + INIT_UNPACK)
    [f] = lint(init_peak, SHARE)
    assert (f.path, f.container) == ("spec.initContainers[0].resources.requests.memory", "unpack")
    assert "requests 400Gi memory (37.8% of 1057Gi allocatable), set by init container 'unpack'" in f.detail

    two = pod(
        "requests: {memory: 300Gi}\nlimits: {nvidia.com/gpu: 2}",
        P4D,
        """
        - name: loader
          image: busybox
          resources:
            requests: {memory: 100Gi}
    """,
    )
    [f] = lint(two, SHARE)
    assert (f.path, f.container) == ("spec.containers[0].resources.requests.memory", "main")
    assert "requests 400Gi memory (37.8% of 1057Gi allocatable), 300Gi of it by container 'main'" in f.detail


def test_pod_level_request():
    text = pod("limits: {nvidia.com/gpu: 1}", P4D + POD_LEVEL)
    [f] = lint(text, SHARE)
    assert (f.path, f.container) == ("spec.resources.requests.memory", None)
    assert "requests 512Gi memory (48.4% of 1057Gi allocatable), set by pod-level resources" in f.detail


def test_profile_pool_without_an_instance_type():
    profile = {"nodePools": [{"name": "dgx", "labels": {"rack": "dgx"}, "gpus": 8, "memory": "2000Gi", "cpu": "224"}]}
    text = pod("requests: {cpu: '56', memory: 500Gi}\nlimits: {nvidia.com/gpu: 1}", "nodeSelector: {rack: dgx}")
    found = lint(text, SHARE, profile=profile)
    assert [f.path.rsplit(".", 1)[1] for f in found] == ["cpu", "memory"]
    assert "uses 1 of 8 GPUs (12.5%) on node pool dgx but requests 56 cpu (25% of 224 allocatable)" in found[0].detail
    assert "requests 500Gi memory (25% of 2000Gi allocatable)" in found[1].detail


def test_pool_with_unknown_memory_judges_only_what_it_knows():
    profile = {"nodePools": [{"name": "onprem", "labels": {"rack": "a"}, "gpus": 4, "cpu": "64"}]}
    text = pod("requests: {cpu: '32', memory: 900Gi}\nlimits: {nvidia.com/gpu: 1}", "nodeSelector: {rack: a}")
    [f] = lint(text, SHARE, profile=profile)
    assert "requests 32 cpu (50% of 64 allocatable)" in f.detail


def test_pod_pinned_to_a_pool_of_another_vendor():
    profile = {
        "nodePools": [
            {"name": "mi300x", "labels": {"pool": "amd"}, "gpus": 8, "gpuResource": "amd.com/gpu", "memory": "1800Gi"}
        ]
    }
    text = pod("limits: {nvidia.com/gpu: 1}", "nodeSelector: {pool: amd}")
    [f] = lint(text, SHARE, profile=profile)
    assert "the pod requests 1 nvidia.com/gpu but node pool mi300x offers amd.com/gpu only" in f.detail
    assert lint(text, UNRESOLVED, profile=profile) == []
    amd = pod("requests: {memory: 200Gi}\nlimits: {amd.com/gpu: 1}", "nodeSelector: {pool: amd}")
    assert lint(amd, SHARE, profile=profile) == []


@pytest.mark.parametrize(
    "resources, reason",
    [
        ("requests: {memory: 900Gi}\nlimits: {nvidia.com/mig-1g.10gb: 1}", "MIG slices or shared GPUs"),
        ("requests: {memory: 900Gi}\nlimits: {nvidia.com/gpu.shared: 1}", "MIG slices or shared GPUs"),
        ("requests: {memory: $MEM}\nlimits: {nvidia.com/gpu: 1}", "invalid or unrendered resource quantities"),
        ("requests: {memory: 900GB}\nlimits: {nvidia.com/gpu: 1}", "invalid or unrendered resource quantities"),
    ],
)
def test_not_judged_and_says_why(resources, reason):
    text = pod(resources, P4D)
    assert lint(text, SHARE) == []
    [note] = notes(text, SHARE)
    assert note.startswith("m.yaml: Pod/p: gpu-memory-share-mismatch skipped: ")
    assert reason in note


def test_cpu_only_and_zero_gpu_pods_are_out_of_scope():
    assert lint(pod("requests: {memory: 1000Gi}", P4D), SHARE) == []
    assert lint(pod("requests: {memory: 1000Gi}\nlimits: {nvidia.com/gpu: 0}", P4D), SHARE) == []


def test_unresolved_node_type_is_a_skip_note():
    text = pod("limits: {nvidia.com/gpu: 1}", "nodeSelector: {eks.amazonaws.com/nodegroup: gpu}")
    assert lint(text, SHARE) == []
    assert notes(text, SHARE) == [
        "m.yaml: Pod/p: gpu-memory-share-mismatch skipped: node type not resolved: no node type label "
        "(instance type, accelerator or GPU product)"
    ]


# --------------------------------------------------------------------------
# gpu-node-unresolved


def test_unresolved_says_what_was_missing_and_points_at_the_selection():
    none = pod("limits: {nvidia.com/gpu: 4}")
    [f] = lint(none, UNRESOLVED)
    assert (f.severity, f.line, f.path) == ("info", 5, "spec")
    assert f.detail.startswith(
        "Pod/p: accelerator pod (4 nvidia.com/gpu) on a node type that cannot be resolved: no nodeSelector or "
        "required node affinity; the GPU-share checks did not run. Pin the node type"
    )
    t4 = pod("limits: {nvidia.com/gpu: 1}", "nodeSelector: {cloud.google.com/gke-accelerator: nvidia-tesla-t4}")
    [f] = lint(t4, UNRESOLVED)
    assert (f.line, f.path) == (6, "spec.nodeSelector")
    assert "cloud.google.com/gke-accelerator=nvidia-tesla-t4 is not in the built-in GPU catalog" in f.detail
    multi = pod(
        "limits: {nvidia.com/gpu: 1}",
        """affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: cloud.google.com/gke-accelerator, operator: In, values: [nvidia-l4, nvidia-x1, nvidia-x2]}""",
    )
    [f] = lint(multi, UNRESOLVED)
    assert (
        "cloud.google.com/gke-accelerator in (nvidia-l4, nvidia-x1, nvidia-x2): nvidia-x1, nvidia-x2 are not in "
        "the built-in GPU catalog"
    ) in f.detail


def test_unresolved_accelerator_family_pod_is_told_to_describe_its_pool():
    text = pod("limits: {habana.ai/gaudi: 8}", "nodeSelector: {node.kubernetes.io/instance-type: dl1.24xlarge}")
    [f] = lint(text, UNRESOLVED)
    assert "accelerator pod (8 habana.ai/gaudi)" in f.detail
    # The real reason first (no Gaudi node types at all), with the pod's selection as written.
    assert f.detail.startswith(
        "Pod/p: accelerator pod (8 habana.ai/gaudi): the built-in catalog has no Gaudi node types, so its node "
        "type cannot be resolved (the pod selects node.kubernetes.io/instance-type=dl1.24xlarge)"
    )
    assert f.message == "no Gaudi node types in the built-in catalog: GPU-share checks skipped for 8 habana.ai/gaudi"


def _one_pool(name: str, labels: dict, gpus: int, resource: str, memory: str, **extra: str) -> dict:
    """A profile with one node pool."""
    pool = {"name": name, "labels": labels, "gpus": gpus, "gpuResource": resource, "memory": memory, **extra}
    return {"nodePools": [pool]}


def test_a_tpu_pod_resolves_through_the_catalog_or_its_pool():
    text = pod(
        "limits: {google.com/tpu: 4}", "nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice}"
    )
    assert lint(text, UNRESOLVED) == []  # the v5e machine types are in the catalog
    profile = _one_pool(
        "v5e", {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice"}, 4, "google.com/tpu", "176Gi", cpu="110"
    )
    assert lint(text, UNRESOLVED, profile=profile) == []
    big = pod(
        "requests: {memory: 100Gi}\nlimits: {google.com/tpu: 1}",
        "nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice}",
    )
    [f] = lint(big, SHARE, profile=profile)
    assert "uses 1 of 4 google.com/tpu (25%) on node pool v5e but requests 100Gi memory (56.8% of 176Gi" in f.detail


def test_resolved_pods_and_cpu_pods_are_not_reported():
    assert lint(pod("limits: {nvidia.com/gpu: 1}", P4D), UNRESOLVED) == []
    assert lint(pod("limits: {cpu: '1'}"), UNRESOLVED) == []


# --------------------------------------------------------------------------
# Fixtures through the CLI


def _run(*args: str) -> list[tuple]:
    result = CliRunner().invoke(main, ["check", *args, "--format", "json"], catch_exceptions=False)
    data = json.loads(result.stdout)
    return sorted(
        (Path(f["file"]).name, f["line"], f["rule"], f["severity"]) for f in data["findings"] if f["rule"] in FAMILY
    )


def test_fixtures_with_the_profile(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert _run("fixtures/accelerators", "--config", "fixtures/accelerators/profile.yaml") == [
        ("llama-pretrain-p4d.yaml", 26, SHARE, "warning"),  # master: 96 cpu > 95.69 allocatable
        ("llama-pretrain-p4d.yaml", 27, SHARE, "warning"),  # master: 1152Gi > 1057Gi allocatable
        ("llama-pretrain-p4d.yaml", 47, SHARE, "warning"),  # worker: init container's 3Ti of 7451Gi NVMe
        ("llama-pretrain-p4d.yaml", 58, SHARE, "warning"),  # worker: 700Gi for 2 of 8 GPUs
        ("llama-pretrain-p4d.yaml", 60, MISMATCH, "error"),  # worker: efa request 1, limit 4
        ("pools.yaml", 19, SHARE, "warning"),  # notebook: 640Gi for 1 of 8 H100s
        ("pools.yaml", 54, SHARE, "warning"),  # nvidia.com/gpu on the AMD pool
        ("pools.yaml", 120, UNRESOLVED, "info"),  # EKS node group nobody describes
        ("vllm-gke-l4.yaml", 31, SHARE, "warning"),  # 16 L4s in one pod
        ("vllm-gke-l4.yaml", 58, SHARE, "warning"),  # 240Gi for 4 L4s
    ]


def test_fixtures_without_the_profile(monkeypatch):
    monkeypatch.chdir(ROOT)
    found = _run("fixtures/accelerators", "--config", "fixtures/accelerators/profile.yaml", "--disable", UNRESOLVED)
    assert ("pools.yaml", 120, UNRESOLVED, "info") not in found
    bare = _run("fixtures/accelerators/pools.yaml", "--enable", UNRESOLVED)
    # Without the pools, only gpu-node-unresolved (when enabled) speaks about pools.yaml.
    assert {rule for _, _, rule, _ in bare} == {UNRESOLVED}
    assert _run("fixtures/accelerators/pools.yaml") == []  # off by default
    assert _run("fixtures/accelerators/pools.yaml", "-v") == []  # and --verbose does not turn it on


ONE_EXAMPLE_GPU = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: tpu.example.com
---
"""


def test_unresolved_skips_pods_with_uncounted_claims():
    # tpu.example.com is an accelerator by its name, but no node type counts its devices
    text = ONE_EXAMPLE_GPU + pod(
        "claims: [{name: gpu}]", "resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]"
    )
    assert lint(text, UNRESOLVED) == []
    [note] = notes(text, UNRESOLVED)
    assert note.endswith(
        "gpu-node-unresolved skipped: ResourceClaimTemplate 'one-gpu' asks for accelerators of class "
        "'tpu.example.com', whose count per node is not known"
    )
    # nor is the share judged
    text = ONE_EXAMPLE_GPU + pod(
        "requests: {memory: 900Gi}\nclaims: [{name: gpu}]",
        "resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n" + P4D,
    )
    assert lint(text, SHARE) == []
    assert notes(text, SHARE)[-1].endswith("whose count per node is not known")


# --------------------------------------------------------------------------
# Current accelerators pinned to their node types


@pytest.mark.parametrize(
    ("resources", "selector", "expected"),
    [
        (
            "requests: {memory: 600Gi}\nlimits: {nvidia.com/gpu: 1, memory: 600Gi}",
            "node.kubernetes.io/instance-type: p6-b200.48xlarge",
            "uses 1 of 8 GPUs (12.5%) on p6-b200.48xlarge but requests 600Gi memory",
        ),
        (
            "requests: {memory: 400Gi}\nlimits: {nvidia.com/gpu: 1, memory: 400Gi}",
            "cloud.google.com/gke-accelerator: nvidia-gb200",
            "uses 1 of 4 GPUs (25%) on a4x-highgpu-4g but requests 400Gi memory",
        ),
        (
            "requests: {memory: 500Gi}\nlimits: {amd.com/gpu: 1, memory: 500Gi}",
            "node.kubernetes.io/instance-type: Standard_ND96isr_MI300X_v5",
            "uses 1 of 8 GPUs (12.5%) on Standard_ND96isr_MI300X_v5 but requests 500Gi memory",
        ),
        (
            "requests: {memory: 400Gi}\nlimits: {nvidia.com/gpu: 1, memory: 400Gi}",
            "node.kubernetes.io/instance-type: p6e-gb200.36xlarge",
            "uses 1 of 4 GPUs (25%) on p6e-gb200.36xlarge but requests 400Gi memory (45.1% of 888Gi allocatable)",
        ),
        (
            "requests: {memory: 16Gi}\nlimits: {nvidia.com/gpu: 1, memory: 16Gi}",
            "node.kubernetes.io/instance-type: g6f.xlarge",
            "requests 16Gi memory, set by container 'main', but g6f.xlarge has only 13.8Gi allocatable",
        ),
        (
            "requests: {memory: 300Gi}\nlimits: {google.com/tpu: 1, memory: 300Gi}",
            "cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice\ncloud.google.com/gke-tpu-topology: 2x2",
            "uses 1 of 4 google.com/tpu (25%) on ct6e-standard-4t but requests 300Gi memory",
        ),
    ],
)
def test_gpu_share_on_current_accelerators(resources, selector, expected):
    text = pod(resources, "nodeSelector:\n" + textwrap.indent(selector, "  "))
    [f] = lint(text, SHARE)
    assert expected in f.detail, f.detail


@pytest.mark.parametrize(
    ("resources", "selector"),
    [
        # the one vGPU a g6f node advertises is the whole node's GPU share
        ("requests: {memory: 12Gi}\nlimits: {nvidia.com/gpu: 1, memory: 12Gi}", "g6f.xlarge"),
        ("requests: {memory: 56Gi}\nlimits: {nvidia.com/gpu: 1, memory: 56Gi}", "g6f.4xlarge"),
        ("requests: {memory: 200Gi}\nlimits: {nvidia.com/gpu: 1, memory: 200Gi}", "p6e-gb200.36xlarge"),
        ("requests: {memory: 500Gi}\nlimits: {nvidia.com/gpu: 1, memory: 500Gi}", "BM.GPU.B300.8"),  # share 512Gi
        ("requests: {memory: 4000Gi}\nlimits: {nvidia.com/gpu: 8, memory: 4000Gi}", "BM.GPU.B300.8"),
        ("requests: {memory: 300Gi}\nlimits: {nvidia.com/gpu: 1, memory: 300Gi}", "Standard_NCC40ads_H100_v5"),
        ("requests: {memory: 230Gi}\nlimits: {nvidia.com/gpu: 1, memory: 230Gi}", "BM.GPU.GB200-v3.4"),
        # the one vGPU a fractional G4 node offers is the whole node's GPU share
        ("requests: {memory: 40Gi}\nlimits: {nvidia.com/gpu: 1, memory: 40Gi}", "g4-standard-12"),
        ("requests: {memory: 80Gi}\nlimits: {nvidia.com/gpu: 1, memory: 80Gi}", "g4-standard-24"),
        ("requests: {memory: 240Gi}\nlimits: {google.com/tpu: 1, memory: 240Gi}", "tpu7x-ultranet-4t"),
    ],
)
def test_gpu_share_holds_on_current_accelerators(resources, selector):
    text = pod(resources, "nodeSelector:\n  node.kubernetes.io/instance-type: " + selector)
    assert lint(text, SHARE) == []
    assert not any("not in the built-in GPU catalog" in n for n in notes(text, SHARE))


def test_g6f_offers_one_vgpu_per_node():
    text = pod(
        "requests: {memory: 12Gi}\nlimits: {nvidia.com/gpu: 2, memory: 12Gi}",
        "nodeSelector:\n  node.kubernetes.io/instance-type: g6f.2xlarge",
    )
    [f] = lint(text, SHARE)
    assert f.line == 13
    assert "the pod requests 2 GPUs but g6f.2xlarge has only 1: the pod can never be scheduled" in f.detail


def _neuron_pod(resource: str, count: int, memory: str, instance_type: str) -> str:
    return pod(
        f"requests: {{memory: {memory}}}\nlimits: {{{resource}: {count}, memory: {memory}}}",
        f"nodeSelector:\n  node.kubernetes.io/instance-type: {instance_type}",
    )


@pytest.mark.parametrize(
    ("resource", "count", "memory", "instance_type", "message"),
    [
        # the device plugin registers neuron, neurondevice (the same devices) and neuroncore
        (
            "aws.amazon.com/neuroncore",
            2,
            "400Gi",
            "trn1.32xlarge",
            "2 of 32 aws.amazon.com/neuroncore but 85% of trn1.32xlarge memory (400Gi)",
        ),
        (
            "aws.amazon.com/neurondevice",
            1,
            "400Gi",
            "trn1.32xlarge",
            "1 of 16 aws.amazon.com/neurondevice but 85% of trn1.32xlarge memory (400Gi)",
        ),
        (
            "aws.amazon.com/neuroncore",
            2,
            "400Gi",
            "inf2.48xlarge",
            "2 of 24 aws.amazon.com/neuroncore but 57% of inf2.48xlarge memory (400Gi)",
        ),
        # Trainium2: 8 NeuronCores a device, 4 logical ones under the default LNC=2 (the larger share)
        (
            "aws.amazon.com/neuroncore",
            2,
            "200Gi",
            "trn2.48xlarge",
            "2 of 64 aws.amazon.com/neuroncore but 10.6% of trn2.48xlarge memory (200Gi)",
        ),
        # more cores than the node has even under LNC=1
        (
            "aws.amazon.com/neuroncore",
            130,
            "64Gi",
            "trn2.48xlarge",
            "requests 130 aws.amazon.com/neuroncore but trn2.48xlarge has only 128",
        ),
        (
            "aws.amazon.com/neuroncore",
            40,
            "64Gi",
            "trn1.32xlarge",
            "requests 40 aws.amazon.com/neuroncore but trn1.32xlarge has only 32",
        ),
    ],
)
def test_neuron_cores_and_devices_are_counted_on_neuron_nodes(resource, count, memory, instance_type, message):
    text = _neuron_pod(resource, count, memory, instance_type)
    [f] = lint(text, SHARE)
    line = 13 if "has only" in message else 12
    assert (f.rule, f.line, f.severity, f.message) == (SHARE, line, "warning", message)


@pytest.mark.parametrize(
    ("resource", "count", "memory", "instance_type"),
    [
        ("aws.amazon.com/neuroncore", 2, "64Gi", "trn2.48xlarge"),  # 2 of 64 cores: 1/32 of the node
        ("aws.amazon.com/neuroncore", 100, "64Gi", "trn2.48xlarge"),  # fits under LNC=1 (128 cores)
        ("aws.amazon.com/neuroncore", 4, "58Gi", "trn1.32xlarge"),  # 4 of 32 cores: 1/8 of 471Gi
        ("aws.amazon.com/neurondevice", 2, "58Gi", "trn1.32xlarge"),
        ("aws.amazon.com/neuroncore", 2, "58Gi", "inf2.48xlarge"),
    ],
)
def test_neuron_requests_within_their_share_pass(resource, count, memory, instance_type):
    assert lint(_neuron_pod(resource, count, memory, instance_type), SHARE) == []


def test_neuron_pod_on_a_pool_from_a_cluster_node_offering_neuron():
    profile = {
        "nodePools": [
            {
                "name": "trn1",
                "labels": {"node.kubernetes.io/instance-type": "trn1.32xlarge"},
                "instanceType": "trn1.32xlarge",
            }
        ]
    }
    [f] = lint(_neuron_pod("aws.amazon.com/neuroncore", 2, "400Gi", "trn1.32xlarge"), SHARE, profile=profile)
    assert f.message == "2 of 32 aws.amazon.com/neuroncore but 85% of node pool trn1 memory (400Gi)"


def test_unresolved_neuron_core_pod_is_told_to_pin_a_node_type():
    text = pod("limits: {aws.amazon.com/neuroncore: 2, memory: 8Gi}", "nodeSelector: {pool: trn}")
    [f] = lint(text, UNRESOLVED)
    assert (f.line, f.severity, f.message) == (
        6,
        "info",
        "node type unknown for 2 aws.amazon.com/neuroncore: GPU-share checks skipped",
    )


@pytest.mark.parametrize(
    ("family", "resources", "message"),
    [
        # GKE's machine-family label alone: every catalog machine type of the family is a candidate
        (
            "a4",
            "requests: {memory: 3000Gi}\nlimits: {nvidia.com/gpu: 1, memory: 3000Gi}",
            "1 of 8 GPUs but 77.3% of a4-highgpu-8g memory (3000Gi)",
        ),
        (
            "a4x",  # GB200 (a4x-highgpu-4g) and GB300 (a4x-maxgpu-4g-metal): worded for the closest
            "requests: {memory: 800Gi}\nlimits: {nvidia.com/gpu: 1, memory: 800Gi}",
            "1 of 4 GPUs but 85.7% of a4x-maxgpu-4g-metal memory (800Gi)",
        ),
        (
            "a3",
            "requests: {memory: 3000Gi}\nlimits: {nvidia.com/gpu: 1, memory: 3000Gi}",
            "requests 3000Gi memory but a3-ultragpu-8g has 2886Gi allocatable",
        ),
        (
            "g2",
            "requests: {memory: 400Gi}\nlimits: {nvidia.com/gpu: 1, memory: 400Gi}",
            "requests 400Gi memory but g2-standard-96 has 369Gi allocatable",
        ),
        (
            "ct6e",
            "requests: {memory: 8Gi}\nlimits: {nvidia.com/gpu: 1, memory: 8Gi}",
            "requests 1 nvidia.com/gpu but ct6e-standard-1t offers google.com/tpu only",
        ),
    ],
)
def test_gke_machine_family_resolves_to_its_machine_types(family, resources, message):
    text = pod(resources, f"nodeSelector:\n  cloud.google.com/machine-family: {family}")
    [f] = lint(text, SHARE)
    assert (f.rule, f.line, f.severity, f.message) == (SHARE, 13 if "offers" in message else 12, "warning", message)


def test_gke_machine_family_within_the_share_of_some_machine_type_passes():
    # 40Gi on one L4: g2-standard-12 (43Gi allocatable) holds it
    text = pod(
        "requests: {memory: 40Gi}\nlimits: {nvidia.com/gpu: 1, memory: 40Gi}",
        "nodeSelector:\n  cloud.google.com/machine-family: g2",
    )
    assert lint(text, SHARE) == []
    unknown = pod("limits: {nvidia.com/gpu: 1}", "nodeSelector:\n  cloud.google.com/machine-family: a3-ultragpu")
    assert lint(unknown, SHARE) == []
    assert any(
        "cloud.google.com/machine-family=a3-ultragpu is not in the built-in GPU catalog" in n
        for n in notes(unknown, SHARE)
    )


def test_neuron_cores_on_a_pool_of_unknown_generation_are_not_judged():
    profile = _one_pool("trn", {"pool": "trn"}, 16, "aws.amazon.com/neuron", "500Gi")
    text = pod(
        "requests: {memory: 400Gi}\nlimits: {aws.amazon.com/neuroncore: 2, memory: 400Gi}", "nodeSelector: {pool: trn}"
    )
    assert lint(text, SHARE, profile=profile) == []
    assert any("Neuron generation (NeuronCores per device) is not known" in n for n in notes(text, SHARE, profile))
    # devices are devices under either name: judged
    devices = pod(
        "requests: {memory: 400Gi}\nlimits: {aws.amazon.com/neurondevice: 1, memory: 400Gi}",
        "nodeSelector: {pool: trn}",
    )
    [f] = lint(devices, SHARE, profile=profile)
    assert (f.line, f.severity, f.message) == (
        11,
        "warning",
        "1 of 16 aws.amazon.com/neurondevice but 80% of node pool trn memory (400Gi)",
    )


@pytest.mark.parametrize(
    ("resources", "selector", "message", "detail"),
    [
        # a 1x1x1 TPU7x slice is the 1-chip host (240 GB); it was judged as a quarter of the 4-chip one
        (
            "requests: {memory: 240Gi}\nlimits: {google.com/tpu: 1, memory: 240Gi}",
            "cloud.google.com/gke-tpu-accelerator: tpu7x\ncloud.google.com/gke-tpu-topology: 1x1x1",
            "requests 240Gi memory but tpu7x-standard-1t has 228Gi allocatable",
            "but tpu7x-standard-1t has only 228Gi allocatable: the pod can never be scheduled",
        ),
        # GKE's ct6e-standard-8t runs one thread per core: 180 vCPU less kube-reserved, not 360
        (
            'requests: {cpu: "200", memory: 1000Gi}\nlimits: {google.com/tpu: 8, memory: 1000Gi}',
            "cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice\ncloud.google.com/gke-tpu-topology: 2x4",
            "requests 200 cpu but ct6e-standard-8t has 179.48 allocatable",
            "but ct6e-standard-8t has only 179.48 allocatable: the pod can never be scheduled",
        ),
        (
            "requests: {memory: 400Gi}\nlimits: {google.com/tpu: 4, memory: 400Gi}",
            "cloud.google.com/gke-tpu-accelerator: tpu-v4-podslice\ncloud.google.com/gke-tpu-topology: 2x2x1",
            "requests 400Gi memory but ct4p-hightpu-4t has 392Gi allocatable",
            "but ct4p-hightpu-4t has only 392Gi allocatable",
        ),
        (
            "requests: {memory: 1000Gi}\nlimits: {amd.com/gpu: 1, memory: 1000Gi}",
            "node.kubernetes.io/instance-type: BM.GPU.MI355X.8",
            "1 of 8 GPUs but 32.6% of BM.GPU.MI355X.8 memory (1000Gi)",
            "uses 1 of 8 GPUs (12.5%) on BM.GPU.MI355X.8 but requests 1000Gi memory (32.6% of 3072Gi allocatable)",
        ),
        (
            "requests: {memory: 500Gi}\nlimits: {nvidia.com/gpu: 1, memory: 500Gi}",
            "node.kubernetes.io/instance-type: a4x-highgpu-4g-nolssd",
            "1 of 4 GPUs but 58.2% of a4x-highgpu-4g-nolssd memory (500Gi)",
            "uses 1 of 4 GPUs (25%) on a4x-highgpu-4g-nolssd but requests 500Gi memory (58.2% of 859Gi allocatable)",
        ),
        (
            "requests: {memory: 120Gi}\nlimits: {aws.amazon.com/neuron: 1, memory: 120Gi}",
            "node.kubernetes.io/instance-type: trn2.3xlarge",
            "requests 120Gi memory but trn2.3xlarge has 118Gi allocatable",
            "but trn2.3xlarge has only 118Gi allocatable",
        ),
        # By hand (docs/k8s-facts.md §9): BM.GPU.B300.8 4096 GB less the 100 MiB eviction threshold,
        # 4194204 MiB (4095.9Gi, shown 4096Gi); 1000Gi is 24.4% of it on 1 of 8 GPUs
        (
            "requests: {memory: 1000Gi}\nlimits: {nvidia.com/gpu: 1, memory: 1000Gi}",
            "node.kubernetes.io/instance-type: BM.GPU.B300.8",
            "1 of 8 GPUs but 24.4% of BM.GPU.B300.8 memory (1000Gi)",
            "uses 1 of 8 GPUs (12.5%) on BM.GPU.B300.8 but requests 1000Gi memory (24.4% of 4096Gi allocatable)",
        ),
        # BM.GPU.GB200-v3.4: 960 GB less 100 MiB, 982940 MiB (959.9Gi, shown 960Gi); 400Gi is 41.7%
        (
            "requests: {memory: 400Gi}\nlimits: {nvidia.com/gpu: 1, memory: 400Gi}",
            "node.kubernetes.io/instance-type: BM.GPU.GB200-v3.4",
            "1 of 4 GPUs but 41.7% of BM.GPU.GB200-v3.4 memory (400Gi)",
            "uses 1 of 4 GPUs (25%) on BM.GPU.GB200-v3.4 but requests 400Gi memory (41.7% of 960Gi allocatable)",
        ),
        # Standard_NCC40ads_H100_v5: 320 GiB less AKS's 2250 MiB kube-reserved and 100 MiB, 325330 MiB (317.7Gi)
        (
            "requests: {memory: 320Gi}\nlimits: {nvidia.com/gpu: 1, memory: 320Gi}",
            "node.kubernetes.io/instance-type: Standard_NCC40ads_H100_v5",
            "requests 320Gi memory but Standard_NCC40ads_H100_v5 has 318Gi allocatable",
            "but Standard_NCC40ads_H100_v5 has only 318Gi allocatable: the pod can never be scheduled",
        ),
        # g4-standard-12: 45 GB less GKE's 1 + 0.8 + 0.8 + 6% x 29 = 4.34 GiB and 100 MiB, 41535 MiB (40.6Gi)
        (
            "requests: {memory: 45Gi}\nlimits: {nvidia.com/gpu: 1, memory: 45Gi}",
            "node.kubernetes.io/instance-type: g4-standard-12",
            "requests 45Gi memory but g4-standard-12 has 40.6Gi allocatable",
            "but g4-standard-12 has only 40.6Gi allocatable: the pod can never be scheduled",
        ),
        # g4-standard-6: 22 GB less 2.96 GiB and 100 MiB, 19396 MiB (18.9Gi)
        (
            "requests: {memory: 20Gi}\nlimits: {nvidia.com/gpu: 1, memory: 20Gi}",
            "node.kubernetes.io/instance-type: g4-standard-6",
            "requests 20Gi memory but g4-standard-6 has 18.9Gi allocatable",
            "but g4-standard-6 has only 18.9Gi allocatable",
        ),
        # tpu7x-ultranet-4t, named: 992 GB less 26.6 GiB and 100 MiB, 988469 MiB (965.3Gi); 400Gi is 41.4%
        (
            "requests: {memory: 400Gi}\nlimits: {google.com/tpu: 1, memory: 400Gi}",
            TPU7X + "\nnode.kubernetes.io/instance-type: tpu7x-ultranet-4t",
            "1 of 4 google.com/tpu but 41.4% of tpu7x-ultranet-4t memory (400Gi)",
            "uses 1 of 4 google.com/tpu (25%) on tpu7x-ultranet-4t but requests 400Gi memory (41.4% of 965Gi allocatable)",
        ),
        # not named, a TPU7x slice is tpu7x-standard-4t hosts: 960 GB give 956356 MiB (933.9Gi)
        (
            "requests: {memory: 950Gi}\nlimits: {google.com/tpu: 4, memory: 950Gi}",
            TPU7X,
            "requests 950Gi memory but tpu7x-standard-4t has 934Gi allocatable",
            "but tpu7x-standard-4t has only 934Gi allocatable",
        ),
    ],
)
def test_gpu_share_on_the_catalogues_newest_rows(resources, selector, message, detail):
    text = pod(resources, "nodeSelector:\n" + textwrap.indent(selector, "  "))
    [f] = lint(text, SHARE)
    resource = "cpu" if " cpu " in message else "memory"
    line = 11 + len(selector.splitlines())  # the request's line, below the selector's labels
    assert (f.severity, f.line, f.path) == ("warning", line, f"spec.containers[0].resources.requests.{resource}")
    assert f.message == message
    assert detail in f.detail, f.detail


def test_a_v6e_2x4_pod_is_judged_on_the_host_its_tpu_request_gets():
    """A 2x4 v6e slice is one ct6e-standard-8t or two ct6e-standard-4t (xpk makes v6e-8 so): a pod
    asking 4 chips may have a whole 4-chip host (180 vCPU), so its cpu is no share of an 8-chip one;
    asking 8 chips it is the 8-chip host, which GKE runs with 180 vCPU too."""
    selector = "cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice\ncloud.google.com/gke-tpu-topology: 2x4"
    four = pod(
        'requests: {cpu: "170", memory: 600Gi}\nlimits: {google.com/tpu: 4, memory: 600Gi}',
        "nodeSelector:\n" + textwrap.indent(selector, "  "),
    )
    assert lint(four, SHARE) == []
    too_big = pod(
        'requests: {cpu: "170", memory: 800Gi}\nlimits: {google.com/tpu: 4, memory: 800Gi}',
        "nodeSelector:\n" + textwrap.indent(selector, "  "),
    )
    [f] = lint(too_big, SHARE)
    assert f.message == "4 of 8 google.com/tpu but 57% of ct6e-standard-8t memory (800Gi)"
    assert "ct6e-standard-8t (the closest fit among 2 node types" in f.detail


@pytest.mark.parametrize(
    ("resources", "selector"),
    [
        (
            "requests: {memory: 200Gi}\nlimits: {google.com/tpu: 1, memory: 200Gi}",
            "cloud.google.com/gke-tpu-accelerator: tpu7x\ncloud.google.com/gke-tpu-topology: 1x1x1",
        ),
        (
            'requests: {cpu: "170", memory: 1300Gi}\nlimits: {google.com/tpu: 8, memory: 1300Gi}',
            "cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice\ncloud.google.com/gke-tpu-topology: 2x4",
        ),
        (
            "requests: {memory: 2900Gi}\nlimits: {amd.com/gpu: 8, memory: 2900Gi}",
            "node.kubernetes.io/instance-type: BM.GPU.MI355X.8",
        ),
        (
            "requests: {memory: 200Gi}\nlimits: {nvidia.com/gpu: 1, memory: 200Gi}",
            "cloud.google.com/gke-accelerator: nvidia-gb200",
        ),
        # the 950Gi that never fits tpu7x-standard-4t fits the tpu7x-ultranet-4t the pod names
        (
            "requests: {memory: 950Gi}\nlimits: {google.com/tpu: 4, memory: 950Gi}",
            TPU7X + "\nnode.kubernetes.io/instance-type: tpu7x-ultranet-4t",
        ),
    ],
)
def test_right_sized_pods_on_the_catalogues_newest_rows_pass(resources, selector):
    text = pod(resources, "nodeSelector:\n" + textwrap.indent(selector, "  "))
    assert lint(text, SHARE) == []


def test_hami_memory_only_request_is_a_gpu_pod():
    """HAMi gives a container that limits only nvidia.com/gpumem (or gpucores, gpumem-percentage) one
    nvidia.com/gpu: the accelerator severities, and the GPU share of the node it lands on."""
    found = lint(
        pod("limits:\n  nvidia.com/gpumem: 3000\n  nvidia.com/gpucores: 30"),
        "besteffort-qos",
        "missing-memory-limit",
    )
    assert [(f.rule, f.line, f.severity, f.message) for f in found] == [
        ("besteffort-qos", 5, "error", "BestEffort QoS: no cpu or memory requests or limits (GPU pod)"),
        ("missing-memory-limit", 10, "error", "container 'main' has no memory limit (GPU pod)"),
    ]
    found = lint(pod("limits:\n  memory: 900Gi\n  nvidia.com/gpumem-percentage: 50", P4D), SHARE)
    assert [(f.rule, f.line, f.message) for f in found] == [
        (SHARE, 13, "1 of 8 GPUs but 85.1% of p4d.24xlarge memory (900Gi)")
    ]


@pytest.mark.parametrize(
    ("device", "note"),
    [
        ("nvidia.com/mig-1g.12gb", "(GPU pod)"),  # a MIG instance is a slice of a GPU
        ("nvidia.com/gpu", "(GPU pod)"),
        ("google.com/tpu", "(accelerator pod)"),
        ("aws.amazon.com/neuron", "(accelerator pod)"),
    ],
)
def test_a_pod_is_said_to_be_a_gpu_pod_for_a_gpu_or_a_slice_of_one(device: str, note: str) -> None:
    text = pod(f"limits:\n  {device}: 1")
    rules = [r for r in load_builtin_rules() if r.id in ("besteffort-qos", "missing-memory-limit")]
    found = [(f.rule, f.line, f.severity, f.message) for f in lint_text(text.encode(), rules, _config(None))]
    assert found == [
        ("besteffort-qos", 5, "error", f"BestEffort QoS: no cpu or memory requests or limits {note}"),
        ("missing-memory-limit", 10, "error", f"container 'main' has no memory limit {note}"),
    ]
