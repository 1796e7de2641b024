"""Family 3: emptyDir, ephemeral storage and /dev/shm."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from textwrap import dedent

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine.api import Context, SkipUnit, Unit
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.input.loader import load
from kubelint_ml.input.objects import unpack
from kubelint_ml.input.workloads import pod_templates
from kubelint_ml.run.config import Config, Profile
from kubelint_ml.run.lint import lint_text
from kubelint_ml.templates import emptydir_exceeds_ephemeral_storage
from kubelint_ml.templates._volumes import (
    DISK,
    HUGEPAGES,
    MEMORY,
    OTHER,
    empty_dirs,
    is_kuberay_pod,
    names,
    pod_ephemeral_storage_limit,
    shm_mount,
    size,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "emptydir"

FAMILY = {
    "emptydir-no-size-limit",
    "emptydir-memory-unbounded",
    "emptydir-memory-exceeds-limit",
    "emptydir-exceeds-ephemeral-storage",
    "missing-ephemeral-storage-request",
    "shm-too-small-for-workers",
}
RULES = [r for r in load_builtin_rules() if r.id in FAMILY]
GI = 1 << 30


def run(manifest: str, profile: dict | None = None, only: str | None = None, params: dict | None = None):
    """(rule, line, severity, message) of the family's findings, in file order."""
    config = Config()
    if profile:
        config.profile = Profile.from_dict(profile, ROOT)
    rules = [r for r in RULES if only is None or r.id == only]
    if params:
        from kubelint_ml.records import replace

        rules = [replace(r, params={**r.params, **params}) for r in rules]
    found = lint_text(dedent(manifest).encode(), rules, config)
    return [(f.rule, f.line, f.severity, f.detail) for f in found if f.rule in FAMILY]


def rules_lines(findings) -> list[tuple[str, int]]:
    return [(rule, line) for rule, line, _, _ in findings]


def templates(manifest: str):
    out = []
    for doc in load(dedent(manifest).encode()).documents:
        for obj in unpack(doc, "t.yaml").objects:
            out.extend(pod_templates(obj))
    return out


def test_family_rules_are_built_in():
    assert {r.id for r in RULES} == FAMILY
    assert {r.family for r in RULES} == {"emptydir"}
    sev = {r.id: r.severity for r in RULES}
    assert sev == {
        "emptydir-no-size-limit": "warning",
        "emptydir-memory-unbounded": "error",
        "emptydir-memory-exceeds-limit": "warning",
        "emptydir-exceeds-ephemeral-storage": "warning",
        "missing-ephemeral-storage-request": "info",
        "shm-too-small-for-workers": "warning",
    }


# ---------------------------------------------------------------- helpers


def test_medium_and_mounts():
    (tpl,) = templates("""
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          initContainers:
            - name: fetch
              image: busybox
              volumeMounts: [{name: a, mountPath: /a}]
          containers:
            - name: c
              image: busybox
              volumeMounts:
                - {name: a, mountPath: /a}
                - {name: a, mountPath: /a2, subPath: x}
                - {name: shm, mountPath: /dev/shm/}
          volumes:
            - {name: a, emptyDir: {}}
            - {name: shm, emptyDir: {medium: Memory, sizeLimit: "0"}}
            - {name: huge, emptyDir: {medium: HugePages-2Mi}}
            - {name: odd, emptyDir: {medium: memory}}
            - {name: pvc, persistentVolumeClaim: {claimName: x}}
    """)
    eds = empty_dirs(tpl)
    assert [(e.name, e.medium, e.size_limit) for e in eds] == [
        ("a", DISK, None),
        ("shm", MEMORY, None),
        ("huge", HUGEPAGES, None),
        ("odd", OTHER, None),
    ]
    assert [(m.container.name, m.path) for m in eds[0].mounts] == [("fetch", "/a"), ("c", "/a"), ("c", "/a2")]
    assert [c.name for c in eds[0].mounted_by()] == ["fetch", "c"]
    assert eds[0].describe_mounts() == "mounted at /a by containers 'fetch' and 'c', at /a2 by container 'c'"
    assert eds[1].raw_size == "0"
    assert shm_mount(tpl.containers[0]) == (2, "shm")
    assert shm_mount(tpl.init_containers[0]) is None


def test_pod_ephemeral_storage_limit_follows_pod_limits():
    (tpl,) = templates("""
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          initContainers:
            - name: log
              image: fluent-bit
              restartPolicy: Always
              resources: {limits: {ephemeral-storage: 1Gi}}
            - name: unpack
              image: busybox
              resources: {limits: {ephemeral-storage: 30Gi}}
          containers:
            - name: a
              image: busybox
              resources: {limits: {ephemeral-storage: 10Gi}}
            - name: b
              image: busybox
    """)
    # apps + sidecar = 11Gi; init 'unpack' + the sidecar started before it = 31Gi.
    assert pod_ephemeral_storage_limit(tpl) == 31 * GI
    (none,) = templates("""
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
            - {name: a, image: busybox, resources: {requests: {ephemeral-storage: 10Gi}}}
    """)
    assert pod_ephemeral_storage_limit(none) is None


def test_size_text_and_names():
    assert size(Fraction(3500 * GI)) == "3500Gi"
    assert size(Fraction(8 * 10**12)) == "8T"
    assert size(Fraction(3 * GI, 2)) == "1.5Gi"
    assert names(["a"]) == "'a'"
    assert names(["a", "b"]) == "'a' and 'b'"
    assert names(["a", "b", "c", "d", "e"]) == "'a', 'b', 'c' and 2 more"


def test_kuberay_pods_but_not_the_submitter():
    tpls = templates("""
        apiVersion: ray.io/v1
        kind: RayJob
        metadata: {name: j}
        spec:
          rayClusterSpec:
            headGroupSpec:
              template: {spec: {containers: [{name: head, image: ray}]}}
            workerGroupSpecs:
              - groupName: g
                template: {spec: {containers: [{name: w, image: ray}]}}
          submitterPodTemplate:
            spec: {containers: [{name: s, image: ray}]}
    """)
    assert [(t.role, is_kuberay_pod(t)) for t in tpls] == [("head", True), ("g", True), ("", False)]


# ---------------------------------------------------------------- emptydir-no-size-limit

POD_SCRATCH = """
    apiVersion: v1
    kind: Pod
    metadata: {name: prep}
    spec:
      containers:
        - name: prep
          image: python:3.12
          resources: RESOURCES
          volumeMounts:
            - {name: scratch, mountPath: /scratch}
      volumes:
        - name: scratch
          emptyDir: EMPTYDIR
"""


def scratch(resources: str = "{}", emptydir: str = "{}") -> str:
    return POD_SCRATCH.replace("RESOURCES", resources).replace("EMPTYDIR", emptydir)


def test_no_size_limit_points_at_the_emptydir_key():
    found = run(scratch(), only="emptydir-no-size-limit")
    assert rules_lines(found) == [("emptydir-no-size-limit", 14)]
    msg = found[0][3]
    assert msg.startswith(
        "Pod/prep: emptyDir volume 'scratch' (mounted at /scratch by container 'prep') is on "
        "the node's disk and has no sizeLimit, and no container limits ephemeral-storage"
    )
    assert "Set emptyDir.sizeLimit" in msg


def test_no_size_limit_zero_is_no_limit():
    found = run(scratch(emptydir='{sizeLimit: "0"}'), only="emptydir-no-size-limit")
    assert len(found) == 1 and "has sizeLimit 0, which sets no limit" in found[0][3]


@pytest.mark.parametrize(
    "resources,emptydir",
    [
        ("{}", "{sizeLimit: 10Gi}"),
        ("{limits: {ephemeral-storage: 20Gi}}", "{}"),  # the pod-level eviction bounds it
        ("{}", "{medium: Memory}"),
        ("{}", "{medium: HugePages}"),
        ("{limits: {memory: $MEM}}", "{}"),  # unrendered template: skipped
    ],
)
def test_no_size_limit_quiet(resources, emptydir):
    assert run(scratch(resources, emptydir), only="emptydir-no-size-limit") == []


def test_unmounted_emptydir_is_ignored():
    manifest = """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers: [{name: c, image: busybox}]
          volumes:
            - {name: spare, emptyDir: {}}
            - {name: shm, emptyDir: {medium: Memory}}
    """
    assert run(manifest) == []


# ---------------------------------------------------------------- emptydir-memory-unbounded

SHM_TWO = """
    apiVersion: v1
    kind: Pod
    metadata: {name: serve}
    spec:
      POD_RESOURCES
      containers:
        - name: server
          image: vllm/vllm-openai
          resources: SERVER
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
        - name: sidecar
          image: envoy
          resources: SIDECAR
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
        - name: other
          image: busybox
      volumes:
        - name: dshm
          emptyDir: EMPTYDIR
"""


def shm_two(server="{}", sidecar="{}", emptydir="{medium: Memory}", pod="") -> str:
    return (
        SHM_TWO.replace("SERVER", server)
        .replace("SIDECAR", sidecar)
        .replace("EMPTYDIR", emptydir)
        .replace("POD_RESOURCES", pod)
    )


def test_memory_unbounded_names_the_unlimited_writers():
    found = run(shm_two(server="{limits: {memory: 8Gi}}"), only="emptydir-memory-unbounded")
    assert rules_lines(found) == [("emptydir-memory-unbounded", 20)]
    assert found[0][2] == "error"
    assert (
        "Pod/serve: medium: Memory emptyDir 'dshm' (mounted at /dev/shm by containers 'server' and "
        "'sidecar') has no sizeLimit, and container 'sidecar' has no memory limit"
    ) in found[0][3]
    both = run(shm_two(), only="emptydir-memory-unbounded")
    assert "containers 'server' and 'sidecar' have no memory limit" in both[0][3]


@pytest.mark.parametrize(
    "kwargs",
    [
        # every writer is limited; the unlimited 'other' does not mount it
        {"server": "{limits: {memory: 8Gi}}", "sidecar": "{limits: {memory: 1Gi}}"},
        {"pod": "resources: {limits: {memory: 16Gi}}"},
        {"emptydir": "{medium: Memory, sizeLimit: 2Gi}"},
        {"emptydir": "{}"},
    ],
)
def test_memory_unbounded_quiet(kwargs):
    assert run(shm_two(**kwargs), only="emptydir-memory-unbounded") == []


def test_memory_unbounded_size_limit_zero():
    found = run(shm_two(emptydir="{medium: Memory, sizeLimit: 0}"), only="emptydir-memory-unbounded")
    assert len(found) == 1 and "has sizeLimit 0, which sets no limit" in found[0][3]


# ---------------------------------------------------------------- emptydir-memory-exceeds-limit


def test_memory_exceeds_container_limit_per_container():
    found = run(
        shm_two(
            server="{limits: {memory: 8Gi}}",
            sidecar="{limits: {memory: 64Gi}}",
            emptydir="{medium: Memory, sizeLimit: 16Gi}",
        ),
        only="emptydir-memory-exceeds-limit",
    )
    assert rules_lines(found) == [("emptydir-memory-exceeds-limit", 20)]
    assert (
        "Pod/serve: container 'server' mounts medium: Memory emptyDir 'dshm' with sizeLimit 16Gi but its "
        "memory limit is 8Gi"
    ) in found[0][3]


def test_memory_exceeds_pod_level_limit_when_the_container_has_none():
    found = run(
        shm_two(pod="resources: {limits: {memory: 4Gi}}", emptydir="{medium: Memory, sizeLimit: 8Gi}"),
        only="emptydir-memory-exceeds-limit",
    )
    assert [m for _, _, _, m in found if "the pod-level memory limit is 4Gi" in m] and len(found) == 2


def test_memory_exceeds_counts_a_volume_mounted_twice_once():
    manifest = """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
            - name: c
              image: busybox
              resources: {limits: {memory: 10Gi}}
              volumeMounts:
                - {name: dshm, mountPath: /dev/shm}
                - {name: dshm, mountPath: /tmp/shm}
          volumes:
            - {name: dshm, emptyDir: {medium: Memory, sizeLimit: 6Gi}}
    """
    assert run(manifest, only="emptydir-memory-exceeds-limit") == []


@pytest.mark.parametrize(
    "server,emptydir",
    [
        ("{limits: {memory: 16Gi}}", "{medium: Memory, sizeLimit: 16Gi}"),  # equal is fine
        ("{}", "{medium: Memory, sizeLimit: 16Gi}"),  # no limit to compare with
        ("{limits: {memory: 1Gi}}", "{sizeLimit: 16Gi}"),  # disk
    ],
)
def test_memory_exceeds_quiet(server, emptydir):
    assert [
        f
        for f in run(shm_two(server=server, emptydir=emptydir), only="emptydir-memory-exceeds-limit")
        if "'server'" in f[3]
    ] == []


# ---------------------------------------------------------------- emptydir-exceeds-ephemeral-storage


def test_exceeds_ephemeral_storage_sum_of_volumes():
    manifest = """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
            - name: c
              image: busybox
              resources: {limits: {ephemeral-storage: 50Gi}}
              volumeMounts:
                - {name: a, mountPath: /a}
                - {name: b, mountPath: /b}
          volumes:
            - {name: a, emptyDir: {sizeLimit: 30Gi}}
            - {name: b, emptyDir: {sizeLimit: 40Gi}}
            - {name: m, emptyDir: {medium: Memory, sizeLimit: 100Gi}}
    """
    found = run(manifest, only="emptydir-exceeds-ephemeral-storage")
    assert rules_lines(found) == [("emptydir-exceeds-ephemeral-storage", 15)]  # the larger volume
    assert (
        "Pod/p: disk emptyDir sizeLimits add up to 70Gi ('a' 30Gi, 'b' 40Gi), but the containers' "
        "ephemeral-storage limits add up to 50Gi"
    ) in found[0][3]


NODE_POD = """
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      nodeSelector: {pool: big}
      containers:
        - name: c
          image: busybox
          resources: {limits: {nvidia.com/gpu: GPUS}}
          volumeMounts: [{name: s, mountPath: /s}]
      volumes:
        - {name: s, emptyDir: {sizeLimit: SIZE}}
"""
PROFILE = {"nodePools": [{"name": "big", "labels": {"pool": "big"}, "gpus": 8, "ephemeralStorage": "8Ti"}]}


@pytest.mark.parametrize(
    "gpus,size_limit,params,expect",
    [
        (2, "3Ti", None, "it uses 2 of 8 GPUs of big, and 2/8 of 8Ti is 2Ti"),
        (2, "2Ti", None, None),
        (2, "3Ti", {"nodeShare": False}, None),
        (8, "9Ti", None, "more than the node's local storage (big: 8Ti)"),
        (8, "8Ti", None, None),
    ],
)
def test_exceeds_node_local_storage(gpus, size_limit, params, expect):
    manifest = NODE_POD.replace("GPUS", str(gpus)).replace("SIZE", size_limit)
    found = run(manifest, profile=PROFILE, only="emptydir-exceeds-ephemeral-storage", params=params)
    if expect is None:
        assert found == []
    else:
        assert len(found) == 1 and expect in found[0][3] and "profile pool big" in found[0][3]


def test_exceeds_skips_without_limits_or_node_type():
    manifest = NODE_POD.replace("GPUS", "1").replace("SIZE", "1Ti").replace("nodeSelector: {pool: big}", "")
    (tpl,) = templates(manifest)
    unit = Unit(tpl.obj, tpl, ctx=Context(profile=Profile()))
    with pytest.raises(SkipUnit, match="no container limits ephemeral-storage and the node type is unknown"):
        list(emptydir_exceeds_ephemeral_storage.check(unit, {"nodeShare": True}, unit.ctx))


# ---------------------------------------------------------------- missing-ephemeral-storage-request


def test_missing_request_points_at_the_app_container():
    manifest = """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j}
        spec:
          template:
            spec:
              restartPolicy: Never
              initContainers:
                - name: fetch
                  image: busybox
                  volumeMounts: [{name: data, mountPath: /data}]
              containers:
                - name: train
                  image: busybox
                  volumeMounts: [{name: data, mountPath: /data}]
              volumes:
                - {name: data, emptyDir: {}}
    """
    found = run(manifest, only="missing-ephemeral-storage-request")
    assert rules_lines(found) == [("missing-ephemeral-storage-request", 14)]
    assert found[0][2] == "info"
    assert (
        "Job/j: disk emptyDir volume 'data' but no container requests ephemeral-storage: the scheduler "
        "reserves no local disk for it"
    ) in found[0][3]
    assert "set resources.requests.ephemeral-storage on container 'train'" in found[0][3]


@pytest.mark.parametrize("resources", ["{requests: {ephemeral-storage: 1Gi}}", "{limits: {ephemeral-storage: 1Gi}}"])
def test_missing_request_quiet_when_requested(resources):
    assert run(scratch(resources=resources), only="missing-ephemeral-storage-request") == []


# ---------------------------------------------------------------- shm-too-small-for-workers

GPU_POD = """
    apiVersion: v1
    kind: Pod
    metadata: {name: train}
    spec:
      containers:
        - name: trainer
          image: nvcr.io/nvidia/pytorch:24.07-py3
          command: COMMAND
          resources: {limits: {memory: 64Gi, nvidia.com/gpu: 4}}
"""
GPU_POD_SHM = (
    GPU_POD.replace("COMMAND", '["torchrun", "--nproc_per_node=4", "t.py"]')
    + """\
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      volumes:
        - VOLUME
"""
)


@pytest.mark.parametrize(
    "command,expect",
    [
        ('["torchrun", "--nproc_per_node=4", "t.py"]', "runs '--nproc_per_node=4' (4 processes)"),
        ('["deepspeed", "t.py"]', "runs 'deepspeed'"),
        ('["accelerate", "launch", "t.py"]', "runs 'accelerate launch'"),
        ('["mpirun", "-np", "4", "python", "t.py"]', "runs '-np 4' (4 processes)"),
        ('["python", "t.py", "--num_workers", "8"]', "runs '--num_workers 8' (8 workers)"),
        ('["python", "t.py", "--num_workers", "0"]', None),
        ('["torchrun", "--nproc_per_node=1", "t.py"]', None),
        ('["mpirun", "-np", "1", "t.py"]', None),
        ('["gunicorn", "-w", "4", "app:app"]', None),  # server workers: not data loading
        ('["make", "-j8"]', None),
    ],
)
def test_shm_signals(command, expect):
    found = run(GPU_POD.replace("COMMAND", command), only="shm-too-small-for-workers")
    if expect is None:
        assert found == []
    else:
        assert rules_lines(found) == [("shm-too-small-for-workers", 7)]
        assert found[0][3].startswith(f"Pod/train: container 'trainer' {expect}")
        assert "mounts nothing at /dev/shm" in found[0][3]


def test_shm_only_for_accelerator_pods():
    manifest = GPU_POD.replace("COMMAND", '["torchrun", "--nproc_per_node=4", "t.py"]').replace(
        ", nvidia.com/gpu: 4", ""
    )
    assert run(manifest, only="shm-too-small-for-workers") == []


def test_shm_workload_signal_applies_to_gpu_containers_only():
    manifest = """
        apiVersion: kubeflow.org/v2beta1
        kind: MPIJob
        metadata: {name: nccl}
        spec:
          slotsPerWorker: 8
          mpiReplicaSpecs:
            Launcher:
              replicas: 1
              template:
                spec:
                  containers: [{name: launcher, image: mpi, command: [mpirun, -np, "16", all_reduce_perf]}]
            Worker:
              replicas: 2
              template:
                spec:
                  containers:
                    - name: worker
                      image: mpi
                      command: [/usr/sbin/sshd, -De]
                      resources: {limits: {nvidia.com/gpu: 8}}
                    - name: exporter
                      image: dcgm-exporter
    """
    found = run(manifest, only="shm-too-small-for-workers")
    assert rules_lines(found) == [("shm-too-small-for-workers", 18)]
    assert "container 'worker' runs 'slotsPerWorker: 8' (8 processes)" in found[0][3]
    assert "MPI's and NCCL's intra-node shared-memory transports" in found[0][3]


def test_shm_message_names_the_collective_library_of_the_accelerator_only():
    manifest = """
        apiVersion: v1
        kind: Pod
        metadata: {name: trn}
        spec:
          containers:
            - name: train
              image: neuron
              command: [torchrun, --nproc_per_node=32, train.py]
              resources: {limits: {aws.amazon.com/neuron: 16}}
    """
    found = run(manifest, only="shm-too-small-for-workers")
    assert rules_lines(found) == [("shm-too-small-for-workers", 7)]  # the container: it mounts nothing
    assert "share it for intra-node collectives and their DataLoader workers" in found[0][3]
    assert "NCCL" not in found[0][3]
    gpu = run(manifest.replace("aws.amazon.com/neuron: 16", "amd.com/gpu: 8"), only="shm-too-small-for-workers")
    assert "intra-node collectives (RCCL's shared-memory transport)" in gpu[0][3]


@pytest.mark.parametrize(
    "volume,size_limit",
    [
        ("{name: dshm, hostPath: {path: /dev/shm}}", None),
        ("{name: dshm, emptyDir: {medium: Memory}}", None),
        ("{name: dshm, emptyDir: {medium: Memory, sizeLimit: 65Mi}}", None),
        ("{name: dshm, emptyDir: {medium: Memory, sizeLimit: 0}}", None),
        ("{name: dshm, emptyDir: {medium: Memory, sizeLimit: 64Mi}}", "64Mi"),
        ("{name: dshm, emptyDir: {sizeLimit: 32Mi}}", "32Mi"),
    ],
)
def test_shm_mounted_volumes(volume, size_limit):
    manifest = GPU_POD_SHM.replace("VOLUME", volume)
    found = run(manifest, only="shm-too-small-for-workers")
    if size_limit is None:
        assert found == []
    else:
        assert len(found) == 1
        assert (
            f"the emptyDir 'dshm' it mounts at /dev/shm has sizeLimit {size_limit}, no more than the "
            "container runtime's 64Mi default"
        ) in found[0][3]


def test_shm_too_small_threshold_is_a_param():
    manifest = GPU_POD_SHM.replace("VOLUME", "{name: dshm, emptyDir: {medium: Memory, sizeLimit: 512Mi}}")
    found = run(manifest, only="shm-too-small-for-workers", params={"tooSmall": "1Gi"})
    assert len(found) == 1 and "sizeLimit 512Mi, at or below the rule's 1Gi threshold" in found[0][3]


def test_shm_host_ipc_shares_the_hosts_shm():
    manifest = GPU_POD.replace("COMMAND", '["deepspeed", "t.py"]').replace("spec:\n", "spec:\n      hostIPC: true\n", 1)
    assert run(manifest, only="shm-too-small-for-workers") == []


# ---------------------------------------------------------------- fixtures


EXPECTED_FIXTURES = {
    "pytorchjob-llama.yaml": [
        (
            "shm-too-small-for-workers",
            34,
            "(Master): container 'pytorch' runs '--nproc_per_node=8' (8 processes) and 2 more multi-process settings",
        ),
        ("emptydir-no-size-limit", 39, "emptyDir volume 'hf-cache' (mounted at /root/.cache/huggingface"),
        ("emptydir-memory-exceeds-limit", 63, "'dshm' with sizeLimit 512Gi but its memory limit is 256Gi"),
    ],
    "serving.yaml": [
        ("emptydir-memory-unbounded", 37, "Deployment/vllm-llama: medium: Memory emptyDir 'dshm'"),
    ],
    "batch-scratch.yaml": [
        (
            "emptydir-exceeds-ephemeral-storage",
            37,
            "'work' has sizeLimit 300Gi, but the containers' ephemeral-storage limits add up to 40Gi",
        ),
        ("missing-ephemeral-storage-request", 51, "Job/shard: disk emptyDir volume 'out'"),
        ("emptydir-exceeds-ephemeral-storage", 89, "it uses 1 of 8 GPUs of p4d.24xlarge, and 1/8 of 8T is 1T"),
    ],
    "shm-variants.yaml": [
        ("shm-too-small-for-workers", 67, "Pod/tiny-shm: container 'train' runs 'DATALOADER_NUM_WORKERS=8'"),
        ("shm-too-small-for-workers", 92, "RayJob/finetune: container 'submitter' runs '--nproc_per_node=2'"),
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED_FIXTURES))
def test_fixture_findings(name):
    found = run((FIXTURES / name).read_text())
    assert [(rule, line) for rule, line, _, _ in found] == [(r, ln) for r, ln, _ in EXPECTED_FIXTURES[name]]
    for (_, _, _, message), (_, _, fragment) in zip(found, EXPECTED_FIXTURES[name]):
        assert fragment in message


def test_fixtures_through_the_cli():
    result = CliRunner().invoke(
        main, ["check", str(FIXTURES), "--format", "json", "--jobs", "1"], catch_exceptions=False
    )
    data = json.loads(result.output)
    mine = sorted(
        (Path(f["file"]).name, f["line"], f["rule"], f["path"]) for f in data["findings"] if f["rule"] in FAMILY
    )
    assert (
        "pytorchjob-llama.yaml",
        39,
        "emptydir-no-size-limit",
        "spec.pytorchReplicaSpecs.Master.template.spec.volumes[0].emptyDir",
    ) in mine
    assert (
        "pytorchjob-llama.yaml",
        34,
        "shm-too-small-for-workers",
        "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].volumeMounts",
    ) in mine
    assert ("serving.yaml", 37, "emptydir-memory-unbounded", "spec.template.spec.volumes[0].emptyDir") in mine
    assert len(mine) == sum(len(v) for v in EXPECTED_FIXTURES.values())


def test_fixture_manifests_are_valid_yaml():
    for path in FIXTURES.glob("*.yaml"):
        assert list(yaml.safe_load_all(path.read_text()))


# ---------------------------------------------------------------- real corpus


CORPUS_CASES = {
    "awslabs__ai-on-eks/infra__bionemo__examples__esm1nv__esm1nv_pretrain-job.yaml": [
        ("shm-too-small-for-workers", 50),
    ],
    "kubeflow__trainer/examples__paddlepaddle__simple-gpu.yaml": [("emptydir-memory-unbounded", 34)],
    "ray-project__kuberay/ray-operator__config__samples__ray-cluster.complete.yaml": [
        ("missing-ephemeral-storage-request", 51),
        ("emptydir-no-size-limit", 60),
        ("missing-ephemeral-storage-request", 107),
        ("emptydir-no-size-limit", 119),
    ],
    # Memory emptyDirs within every writer's limit, Ray pods with their own /dev/shm.
    "GoogleCloudPlatform__kubernetes-engine-samples/ai-ml__verl-on-gke__ray-cluster-auto.yaml": [],
    "kubernetes-sigs__lws/docs__examples__vllm__GPU__lws.yaml": [],
}


@pytest.mark.parametrize("name", sorted(CORPUS_CASES))
def test_corpus_files(corpus, name):
    found = run((corpus / name).read_text())
    assert rules_lines(found) == CORPUS_CASES[name]


# --- ray-object-store-exceeds-shm ------------------------------------------------------------

_RAY = """apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: llm
spec:
  headGroupSpec:
    rayStartParams:
      object-store-memory: "{store}"{extra}
    template:
      spec:
        containers:
          - name: ray-head
            image: rayproject/ray:2.49.0-gpu
            env: [{env}]
            resources:
              limits: {{cpu: "8", memory: 32Gi, nvidia.com/gpu: 1}}
              requests: {{cpu: "8", memory: 32Gi, nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(
    ("store", "extra", "env", "expected"),
    [
        ("40000000000", "", "", [(8, "error", "Ray refuses to start")]),
        # allowed to go to slow storage: a warning, the store on disk
        (
            "40000000000",
            "",
            "{name: RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE, value: '1'}",
            [(8, "warning", "the store goes to /tmp, on disk")],
        ),
        ("8000000000", "", "", []),  # fits KubeRay's 32Gi /dev/shm
        ("40000000000", "\n      plasma-directory: /mnt/plasma", "", []),  # put elsewhere on purpose
    ],
)
def test_ray_object_store_against_kuberays_shm(tmp_path, store, extra, env, expected):
    import json

    from click.testing import CliRunner

    from kubelint_ml.cli import main

    path = tmp_path / "ray.yaml"
    path.write_text(_RAY.format(store=store, extra=extra, env=env))
    r = CliRunner().invoke(main, ["check", str(path), "-f", "json"], catch_exceptions=False)
    found = [
        (f["line"], f["severity"], f["message"])
        for f in json.loads(r.output)["findings"]
        if f["rule"] == "ray-object-store-exceeds-shm"
    ]
    assert [(line, sev) for line, sev, _ in found] == [(line, sev) for line, sev, _ in expected]
    assert all(e[2] in f[2] for e, f in zip(expected, found))


def test_unbounded_shm_is_sized_for_the_servers_processes(corpus: Path) -> None:
    # LWS's own TensorRT-LLM sample: `server.py leader --pp=8 --tp=2` over groups of 8-GPU pods runs
    # 8 ranks a pod, sharing a /dev/shm with no sizeLimit; the fix sizes it as shm-too-small-for-workers
    # would (1Gi a process), not the one-process fixSizeLimit default
    path = corpus / "kubernetes-sigs__lws" / "docs__examples__tensorrt-llm__lws.yaml"
    r = CliRunner().invoke(main, ["check", "-f", "json", "--select", "emptydir-memory-unbounded", str(path)])
    found = [(f["line"], f["fix"]["description"], f["fix"]["source"]) for f in json.loads(r.output)["findings"]]
    assert found == [
        (39, "set the emptyDir's sizeLimit to 8Gi", "shm-too-small-for-workers' size for 8 processes sharing /dev/shm"),
        # the worker's command says nothing of its ranks (the leader's mpirun starts them there): a rank
        # for each of its 8 GPUs, not the one-process fixSizeLimit default
        (
            62,
            "set the emptyDir's sizeLimit to 8Gi",
            "shm-too-small-for-workers' size for 8 processes sharing /dev/shm (one per accelerator device "
            "of the containers that mount it)",
        ),
    ]


_SHM_UNBOUNDED = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: trainer:1
          command: ["python", "train.py"]
          resources:
            limits: {{{devices}}}
          volumeMounts:
            - {{name: dshm, mountPath: /dev/shm}}
{sidecar}      volumes:
        - name: dshm
          emptyDir:
            medium: Memory
"""


@pytest.mark.parametrize(
    ("devices", "sidecar", "size"),
    [
        # a rank per GPU, whatever the command says: 1Gi each, not the one-process 1Gi default
        ('nvidia.com/gpu: "8"', "", "8Gi"),
        ("amd.com/gpu: 2", "", "2Gi"),
        ("aws.amazon.com/neuron: 16", "", "16Gi"),  # at most shmMax
        ("nvidia.com/gpu: 32", "", "16Gi"),
        ("nvidia.com/gpu: 1", "", "1Gi"),
        # a TPU host runs one program, whatever its chips
        ("google.com/tpu: 4", "", "1Gi"),
        # two containers' GPUs share the one /dev/shm
        (
            "nvidia.com/gpu: 2",
            "        - name: eval\n          image: eval:1\n          resources: {limits: {nvidia.com/gpu: 2}}\n"
            "          volumeMounts: [{name: dshm, mountPath: /dev/shm}]\n",
            "4Gi",
        ),
    ],
)
def test_unbounded_shm_of_a_multi_device_container_is_sized_for_a_process_per_device(
    tmp_path: Path, devices: str, sidecar: str, size: str
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(_SHM_UNBOUNDED.format(devices=devices, sidecar=sidecar))
    r = CliRunner().invoke(main, ["check", "-f", "json", "--select", "emptydir-memory-unbounded", str(path)])
    [found] = json.loads(r.output)["findings"]
    line = 19 + sidecar.count("\n")  # the emptyDir
    assert (found["rule"], found["line"], found["severity"]) == ("emptydir-memory-unbounded", line, "error")
    assert found["fix"]["description"] == f"set the emptyDir's sizeLimit to {size}"
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(path.read_text())
    CliRunner().invoke(
        main, ["check", "--fix-only", "--unsafe-fixes", "--select", "emptydir-memory-unbounded", str(fixed)]
    )
    assert yaml.safe_load(fixed.read_text())["spec"]["template"]["spec"]["volumes"][0]["emptyDir"] == {
        "medium": "Memory",
        "sizeLimit": size,
    }


def test_a_server_spread_over_a_leaderworkerset_counts_the_ranks_of_its_own_gpus(tmp_path: Path, corpus: Path) -> None:
    # LWS's own vLLM sample: --tensor-parallel-size 8 --pipeline_parallel_size 2 over groups of two
    # 8-GPU pods; Ray runs the ranks of each pod's 8 GPUs there, so a pod's /dev/shm serves 8, not 16
    text = (corpus / "kubernetes-sigs__lws" / "docs__examples__vllm__GPU__lws.yaml").read_text()
    path = tmp_path / "lws.yaml"
    path.write_text(text.replace("sizeLimit: 15Gi", "sizeLimit: 64Mi", 1))
    r = CliRunner().invoke(main, ["check", "-f", "json", "--select", "shm-too-small-for-workers", str(path)])
    [found] = json.loads(r.output)["findings"]
    assert found["message"] == (
        "container 'vllm-leader' runs 8 processes (--tensor-parallel-size 8...) on a 64Mi /dev/shm"
    )
    assert "--tensor-parallel-size 8 --pipeline_parallel_size 2' (8 processes)" in found["detail"]


def test_the_shm_fix_keeps_a_commented_out_limit_in_its_limits(tmp_path: Path) -> None:
    # AWS's Trainium MLP job: the container ends with a commented-out EFA limit; the /dev/shm
    # mount goes after it, where uncommenting it later still puts it in limits
    path = tmp_path / "trn1.yaml"
    path.write_text(
        dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: trn1-mlp}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: trn1-mlp
                  command: [torchrun, --nproc_per_node=32, train.py]
                  image: mlp:1
                  resources:
                    limits:
                      aws.amazon.com/neuron: 16
                      memory: 400Gi
                      # vpc.amazonaws.com/efa: 8  # not supported yet
              nodeSelector: {instance-type: trn1-32xl}
        """)
    )
    r = CliRunner().invoke(main, ["check", "-f", "json", "--select", "shm-too-small-for-workers", str(path)])
    [found] = json.loads(r.output)["findings"]
    assert (found["rule"], found["line"], found["severity"]) == ("shm-too-small-for-workers", 9, "warning")
    CliRunner().invoke(
        main, ["check", "--fix-only", "--unsafe-fixes", "--select", "shm-too-small-for-workers", str(path)]
    )
    assert (
        "              memory: 416Gi\n"  # raised by the 16Gi tmpfs
        "              # vpc.amazonaws.com/efa: 8  # not supported yet\n"
        "          volumeMounts:\n"
        "            - name: dshm\n"
        "              mountPath: /dev/shm\n"
        "      nodeSelector: {instance-type: trn1-32xl}\n"
        "      volumes:\n"
    ) in path.read_text()
