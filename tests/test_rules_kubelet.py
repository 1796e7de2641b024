"""Family 5: OOM kill mode and cgroup configuration (docs/k8s-facts.md §6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelint_ml.engine.context import Facts, may_hold_context
from kubelint_ml.engine.core import Engine
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.input.loader import load
from kubelint_ml.input.objects import unpack
from kubelint_ml.run.config import Config, Profile, load_config
from kubelint_ml.run.inputs import RunInputs
from kubelint_ml.run.lint import Runner, run

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "kubelet"
KUBELET = ("oom-kill-cgroup-v1-conflict", "fail-cgroup-v1-conflict", "oom-kill-setting-ignored")
GROUP = "group-oom-kill-multiprocess"
FAMILY = KUBELET + (GROUP,)
RULES = {r.id: r for r in load_builtin_rules() if r.id in FAMILY}
FILE = "nodes.yaml"  # the display name; profile paths resolve against the cwd

KCFG = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def lint(text: str, profile: dict | None = None, ids: tuple[str, ...] = FAMILY):
    """(findings as (rule, line, message), skip notes) for one in-memory file."""
    config = Config()
    if profile is not None:
        config.profile = Profile.from_dict(profile, Path.cwd())
    data = text.encode()
    facts = Facts()
    if may_hold_context(data):
        for doc in load(data, config.limits).documents:
            for obj in unpack(doc, FILE).objects:
                facts.add_object(obj)
    runner = Runner(Engine([RULES[i] for i in ids]), config, facts, verbose=True)  # notes are for --verbose
    result = runner.lint_bytes(data, FILE)
    found = sorted((f.rule, f.line, f.detail) for f in result.findings)
    return found, result.notes


def rules_lines(found) -> list[tuple[str, int]]:
    return [(rule, line) for rule, line, _ in found]


def pool(name: str, **extra) -> dict:
    return {"name": name, "labels": {"pool": name}, **extra}


# ---------------------------------------------------------------------------
# oom-kill-cgroup-v1-conflict


def test_explicit_false_on_cgroup_v1_stops_the_kubelet():
    found, _ = lint(
        KCFG + "singleProcessOOMKill: false\nfailCgroupV1: false\n", {"kubeletVersion": "1.33", "cgroupVersion": 1}
    )
    assert rules_lines(found) == [("oom-kill-cgroup-v1-conflict", 3)]
    msg = found[0][2]
    assert msg.startswith(
        "KubeletConfiguration in nodes.yaml sets singleProcessOOMKill: false for the profile's "
        "nodes (cgroup v1, kubelet 1.33)"
    )
    assert "refuses to start" in msg and "Remove the field" in msg and "cgroup v2" in msg


def test_explicit_false_on_cgroup_v2_is_fine():
    found, notes = lint(KCFG + "singleProcessOOMKill: false\n", {"kubeletVersion": "1.33", "cgroupVersion": 2})
    assert found == [] and notes == []


def test_true_or_unset_on_cgroup_v1_is_fine():
    for line in ("singleProcessOOMKill: true\n", "singleProcessOOMKill: null\n", ""):
        found, _ = lint(KCFG + line, {"kubeletVersion": "1.33", "cgroupVersion": 1})
        assert found == [], line


def test_false_for_an_old_kubelet_is_ignored_not_a_conflict():
    found, _ = lint(KCFG + "singleProcessOOMKill: false\n", {"kubeletVersion": "1.31", "cgroupVersion": 1})
    assert rules_lines(found) == [("oom-kill-setting-ignored", 3)]
    assert "exists only from kubelet 1.32" in found[0][2]


def test_false_on_cgroup_v1_with_unknown_kubelet_version_is_still_a_conflict():
    found, notes = lint(KCFG + "singleProcessOOMKill: false\n", {"cgroupVersion": 1})
    assert rules_lines(found) == [("oom-kill-cgroup-v1-conflict", 3)]
    assert "for the profile's nodes (cgroup v1)" in found[0][2]
    assert notes == [
        f"{FILE}: KubeletConfiguration/<unnamed>: {rule} skipped: no kubelet or Kubernetes version for the "
        "profile's nodes in the profile"
        for rule in ("fail-cgroup-v1-conflict", "oom-kill-setting-ignored")
    ]


def test_no_cgroup_version_skips_with_a_reason():
    found, notes = lint(
        KCFG + "singleProcessOOMKill: false\n", {"kubeletVersion": "1.33"}, ids=("oom-kill-cgroup-v1-conflict",)
    )
    assert found == []
    assert notes == [
        f"{FILE}: KubeletConfiguration/<unnamed>: oom-kill-cgroup-v1-conflict skipped: no cgroup "
        "version for the profile's nodes in the profile"
    ]


def test_pool_that_names_the_file_supplies_the_facts():
    profile = {
        "kubeletVersion": "1.32",
        "cgroupVersion": 2,
        "nodePools": [pool("legacy", cgroupVersion=1, kubeletConfig=FILE), pool("modern", kubeletConfig="other.yaml")],
    }
    found, _ = lint(KCFG + "singleProcessOOMKill: false\n", profile, ids=("oom-kill-cgroup-v1-conflict",))
    assert rules_lines(found) == [("oom-kill-cgroup-v1-conflict", 3)]
    assert "for node pool 'legacy' (cgroup v1, kubelet 1.32)" in found[0][2]


def test_pools_with_the_same_facts_are_named_together():
    profile = {
        "kubeletVersion": "1.33",
        "cgroupVersion": 1,
        "kubeletConfig": FILE,
        "nodePools": [pool("a"), pool("b"), pool("c", kubeletConfig="other.yaml")],
    }
    found, _ = lint(KCFG + "singleProcessOOMKill: false\n", profile, ids=("oom-kill-cgroup-v1-conflict",))
    assert len(found) == 1
    assert "for node pools 'a', 'b' (cgroup v1, kubelet 1.33)" in found[0][2]


def test_unnamed_config_applies_to_pools_without_their_own():
    # 'legacy' (cgroup v1) has its own file; 'modern' (cgroup v2) runs the one unnamed input.
    profile = {
        "kubeletVersion": "1.33",
        "cgroupVersion": 2,
        "nodePools": [pool("legacy", cgroupVersion=1, kubeletConfig="legacy.yaml"), pool("modern")],
    }
    found, notes = lint(KCFG + "singleProcessOOMKill: false\n", profile, ids=("oom-kill-cgroup-v1-conflict",))
    assert found == [] and notes == []


# ---------------------------------------------------------------------------
# fail-cgroup-v1-conflict


def test_fail_cgroup_v1_true_on_cgroup_v1():
    found, _ = lint(KCFG + "failCgroupV1: true\n", {"kubeletVersion": "1.31", "cgroupVersion": 1})
    assert rules_lines(found) == [("fail-cgroup-v1-conflict", 3)]
    assert (
        "sets failCgroupV1: true for the profile's nodes (cgroup v1, kubelet 1.31): the kubelet refuses to "
        "start on a cgroup v1 host" in found[0][2]
    )


def test_fail_cgroup_v1_true_before_1_31_is_ignored_instead():
    found, _ = lint(KCFG + "failCgroupV1: true\n", {"kubeletVersion": "1.30", "cgroupVersion": 1})
    assert rules_lines(found) == [("oom-kill-setting-ignored", 3)]
    assert "exists only from kubelet 1.31" in found[0][2]


@pytest.mark.parametrize(
    "version,expected",
    [("1.34", []), ("1.35", [("fail-cgroup-v1-conflict", 1)]), ("1.36.2", [("fail-cgroup-v1-conflict", 1)])],
)
def test_missing_fail_cgroup_v1_from_1_35(version, expected):
    found, _ = lint(KCFG + "cgroupDriver: cgroupfs\n", {"kubernetesVersion": version, "cgroupVersion": 1})
    assert rules_lines(found) == expected
    if expected:
        assert "does not set failCgroupV1, which defaults to true from kubelet 1.35" in found[0][2]
        assert "Set failCgroupV1: false explicitly" in found[0][2]


def test_missing_fail_cgroup_v1_points_at_the_object():
    cfg = Config()
    cfg.profile = Profile.from_dict({"kubernetesVersion": "1.35", "cgroupVersion": 1}, Path.cwd())
    from kubelint_ml.run.lint import lint_text

    findings = lint_text(("---\n# nodes\n" + KCFG).encode(), [RULES["fail-cgroup-v1-conflict"]], cfg)
    assert [(f.line, f.column, f.path) for f in findings] == [(3, 1, "")]


def test_null_fail_cgroup_v1_is_unset():
    found, _ = lint(KCFG + "failCgroupV1: null\n", {"kubernetesVersion": "1.35", "cgroupVersion": 1})
    assert rules_lines(found) == [("fail-cgroup-v1-conflict", 3)]
    assert "sets failCgroupV1: null, which defaults to true" in found[0][2]


def test_explicit_false_or_cgroup_v2_is_fine():
    assert lint(KCFG + "failCgroupV1: false\n", {"kubernetesVersion": "1.35", "cgroupVersion": 1})[0] == []
    assert lint(KCFG + "failCgroupV1: true\n", {"kubernetesVersion": "1.35", "cgroupVersion": 2})[0] == []
    assert lint(KCFG, {"kubernetesVersion": "1.35", "cgroupVersion": 2})[0] == []


def test_missing_fail_cgroup_v1_without_a_version_is_skipped():
    found, notes = lint(KCFG, {"cgroupVersion": 1}, ids=("fail-cgroup-v1-conflict",))
    assert found == []
    assert notes == [
        f"{FILE}: KubeletConfiguration/<unnamed>: fail-cgroup-v1-conflict skipped: no kubelet or "
        "Kubernetes version for the profile's nodes in the profile"
    ]


# ---------------------------------------------------------------------------
# oom-kill-setting-ignored


def test_single_process_oom_kill_on_windows():
    found, _ = lint(KCFG + "singleProcessOOMKill: true\n", {"kubeletVersion": "1.33", "os": "windows"})
    assert rules_lines(found) == [("oom-kill-setting-ignored", 3)]
    assert (
        "sets singleProcessOOMKill: true for the profile's nodes (windows, kubelet 1.33): the field is used "
        "only on Linux" in found[0][2]
    )


def test_windows_pool_is_not_checked_for_cgroup_conflicts():
    profile = {"kubeletVersion": "1.35", "cgroupVersion": 1, "os": "windows"}
    found, _ = lint(KCFG + "singleProcessOOMKill: false\n", profile)
    assert rules_lines(found) == [("oom-kill-setting-ignored", 3)]


def test_both_fields_on_a_1_30_kubelet():
    found, _ = lint(
        KCFG + "singleProcessOOMKill: true\nfailCgroupV1: false\n", {"kubeletVersion": "1.30", "cgroupVersion": 2}
    )
    assert rules_lines(found) == [("oom-kill-setting-ignored", 3), ("oom-kill-setting-ignored", 4)]
    assert "containers keep group OOM kill (memory.oom.group)" in found[0][2]
    assert "Upgrade these nodes' kubelet to 1.31+" in found[1][2]


def test_fields_a_new_kubelet_knows():
    assert (
        lint(KCFG + "singleProcessOOMKill: true\nfailCgroupV1: true\n", {"kubeletVersion": "1.32", "cgroupVersion": 2})[
            0
        ]
        == []
    )


def test_ignored_without_a_version_is_skipped():
    found, notes = lint(KCFG + "singleProcessOOMKill: true\n", {"cgroupVersion": 2}, ids=("oom-kill-setting-ignored",))
    assert found == [] and len(notes) == 1 and "skipped: no kubelet or Kubernetes version" in notes[0]


def test_only_kubelet_configurations_are_checked():
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nsingleProcessOOMKill: false\n"
    assert lint(text, {"kubeletVersion": "1.33", "cgroupVersion": 1}) == ([], [])


# ---------------------------------------------------------------------------
# group-oom-kill-multiprocess

V2 = {"kubernetesVersion": "1.33", "os": "linux", "cgroupVersion": 2}


def job(command: str, extra_spec: str = "", name: str = "train") -> str:
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  template:
    spec:
      restartPolicy: Never{extra_spec}
      containers:
        - name: trainer
          image: trainer:1.0
          command: {command}
"""


TORCHRUN = job("[torchrun, --nproc_per_node=8, train.py]")


def test_torchrun_on_group_kill_nodes():
    found, _ = lint(TORCHRUN, V2, ids=(GROUP,))
    assert rules_lines(found) == [(GROUP, 12)]
    msg = found[0][2]
    assert msg.startswith(
        "Job/train: container 'trainer' starts several processes (`--nproc_per_node=8`) and runs "
        "on the profile's nodes (cgroup v2, kubelet 1.33), where group OOM kill is in effect"
    )
    assert "kills every process in the container, the trainer included" in msg
    assert "Give resources.limits.memory headroom for all of them" in msg
    assert msg.endswith("set singleProcessOOMKill: true in the KubeletConfiguration of the profile's nodes")


def test_points_at_the_signal():
    from kubelint_ml.run.lint import lint_text

    cfg = Config()
    cfg.profile = Profile.from_dict(V2, Path.cwd())
    findings = lint_text(TORCHRUN.encode(), [RULES[GROUP]], cfg)
    assert [(f.line, f.column, f.path, f.container) for f in findings] == [
        (12, 31, "spec.template.spec.containers[0].command[1]", "trainer")
    ]


def test_single_process_kill_in_the_one_known_config():
    text = TORCHRUN + "---\n" + KCFG + "singleProcessOOMKill: true\n"
    assert lint(text, V2, ids=(GROUP,)) == ([], [])


def test_explicit_false_in_the_config():
    text = TORCHRUN + "---\n" + KCFG + "singleProcessOOMKill: false\n"
    assert rules_lines(lint(text, V2, ids=(GROUP,))[0]) == [(GROUP, 12)]


def test_several_configs_and_no_pools_is_skipped():
    text = TORCHRUN + "---\n" + KCFG + "singleProcessOOMKill: true\n---\n" + KCFG + "singleProcessOOMKill: false\n"
    found, notes = lint(text, V2, ids=(GROUP,))
    assert found == []
    assert notes == [
        f"{FILE}: Job/train: {GROUP} skipped: the profile's nodes: cannot tell which KubeletConfiguration the nodes run"
    ]


def test_kubelet_1_30_has_no_opt_out():
    # The 1.30 kubelet ignores singleProcessOOMKill: the container still gets group kill.
    text = TORCHRUN + "---\n" + KCFG + "singleProcessOOMKill: true\n"
    found, _ = lint(text, {**V2, "kubernetesVersion": "1.30"}, ids=(GROUP,))
    assert rules_lines(found) == [(GROUP, 12)]
    assert found[0][2].endswith("upgrade the profile's nodes to kubelet 1.32+ and set singleProcessOOMKill: true there")


@pytest.mark.parametrize(
    "profile",
    [
        {**V2, "kubernetesVersion": "1.27"},
        {**V2, "cgroupVersion": 1},
        {"kubernetesVersion": "1.33", "os": "windows"},
    ],
)
def test_no_group_kill(profile):
    assert lint(TORCHRUN, profile, ids=(GROUP,)) == ([], [])


@pytest.mark.parametrize(
    "profile,why",
    [
        ({"kubernetesVersion": "1.33"}, "no cgroup version in the profile"),
        ({"cgroupVersion": 2}, "no kubelet or Kubernetes version in the profile"),
    ],
)
def test_missing_facts_skip(profile, why):
    found, notes = lint(TORCHRUN, profile, ids=(GROUP,))
    assert found == []
    assert notes == [f"{FILE}: Job/train: {GROUP} skipped: the profile's nodes: {why}"]


def test_no_signal_no_skip_note():
    assert lint(job("[python, train.py]"), {}, ids=(GROUP,)) == ([], [])


def test_node_pools_by_selector():
    profile = {**V2, "nodePools": [pool("group"), pool("single", kubeletConfig=FILE)]}
    config = "---\n" + KCFG + "singleProcessOOMKill: true\n"
    on_single = job("[torchrun, --nproc_per_node=8, train.py]", "\n      nodeSelector: {pool: single}")
    assert lint(on_single + config, profile, ids=(GROUP,)) == ([], [])
    anywhere = lint(TORCHRUN + config, profile, ids=(GROUP,))[0]
    assert rules_lines(anywhere) == [(GROUP, 12)]
    assert "runs on node pool 'group' (cgroup v2, kubelet 1.33)" in anywhere[0][2]
    assert anywhere[0][2].endswith("KubeletConfiguration of node pool 'group'")
    nowhere = job("[torchrun, --nproc_per_node=8, train.py]", "\n      nodeSelector: {pool: gpu}")
    found, notes = lint(nowhere + config, profile, ids=(GROUP,))
    assert found == []
    assert notes == [f"{FILE}: Job/train: {GROUP} skipped: the pod matches none of the profile's node pools"]


def test_init_containers_are_not_checked_but_sidecars_are():
    text = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  initContainers:
    - name: build
      image: b
      command: [make, -j8]
    - name: server
      image: s
      restartPolicy: Always
      command: [gunicorn, -w, "4", app:app]
  containers:
    - name: main
      image: m
"""
    found, _ = lint(text, V2, ids=(GROUP,))
    assert rules_lines(found) == [(GROUP, 13)]
    assert "Pod/p: sidecar 'server' starts several processes (`-w 4`)" in found[0][2]
    assert "the main process included" in found[0][2]


def test_workload_signal_reported_once_for_every_role():
    text = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: elastic
spec:
  nprocPerNode: "4"
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: t
    Worker:
      replicas: 3
      template:
        spec:
          containers:
            - name: pytorch
              image: t
"""
    found, _ = lint(text, V2, ids=(GROUP,))
    assert rules_lines(found) == [(GROUP, 6)]
    assert found[0][2].startswith(
        "PyTorchJob/elastic (Master, Worker): each pod's training container starts several "
        "processes (`nprocPerNode: 4`)"
    )


MPIJOB = """apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: nccl
spec:
  slotsPerWorker: 8{extra}
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
            - name: launcher
              image: mpi
              command: [mpirun, -np, "16", --bind-to, none, /opt/all_reduce_perf]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: worker
              image: mpi
"""


def test_mpijob_launcher_is_skipped():
    found, _ = lint(MPIJOB.format(extra=""), V2, ids=(GROUP,))
    assert rules_lines(found) == [(GROUP, 6)]
    assert found[0][2].startswith(
        "MPIJob/nccl (Worker): each pod's training container starts several processes (`slotsPerWorker: 8`)"
    )


def test_mpijob_launcher_running_as_worker_is_checked():
    found, _ = lint(MPIJOB.format(extra="\n  runLauncherAsWorker: true"), V2, ids=(GROUP,))
    assert rules_lines(found) == [(GROUP, 6), (GROUP, 15)]
    assert "MPIJob/nccl (Worker): each pod's" in found[0][2]
    assert "MPIJob/nccl (Launcher): container 'launcher' starts several processes (`-np 16`)" in found[1][2]


def test_mpirun_with_remote_hosts_starts_no_local_ranks():
    remote = job('["/bin/sh", "-c", "mpiexec --allow-run-as-root --host ${HOSTS} -np 2 hello"]')
    assert lint(remote, V2, ids=(GROUP,)) == ([], [])
    local = job('["/bin/sh", "-c", "mpiexec --allow-run-as-root -np 2 hello"]')
    found, _ = lint(local, V2, ids=(GROUP,))
    assert rules_lines(found) == [(GROUP, 12)] and "(`-np 2`)" in found[0][2]


def test_ray_pods():
    text = """apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
spec:
  headGroupSpec:
    template:
      spec:
        containers:
          - name: ray-head
            image: rayproject/ray
  workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      template:
        spec:
          containers:
            - name: ray-worker
              image: rayproject/ray
"""
    found, _ = lint(text, V2, ids=(GROUP,))
    assert rules_lines(found) == [(GROUP, 7), (GROUP, 13)]
    head, worker = found[0][2], found[1][2]
    assert head.startswith(
        "RayCluster/rc (head): container 'ray-head' starts several processes (`ray start (KubeRay head)`)"
    )
    assert "the raylet and the GCS server (the cluster's control plane) included" in head
    assert worker.startswith("RayCluster/rc (gpu): container 'ray-worker' starts several processes")
    assert "the raylet included" in worker


# ---------------------------------------------------------------------------
# A whole run: profile with node pools, each with its own KubeletConfiguration


def family_findings(paths: list[str]) -> list[tuple[str, str, int]]:
    config = load_config(FIXTURES / "kubelint-ml.yaml")
    result, _ = run(paths, RunInputs(config, list(RULES.values()), jobs=1))
    return sorted((Path(f.file).name, f.rule, f.line) for f in result.findings)


def test_fixture_cluster():
    assert family_findings([str(FIXTURES)]) == [
        ("kubelet-cgroup-v1.yaml", "fail-cgroup-v1-conflict", 2),
        ("kubelet-cgroup-v1.yaml", "oom-kill-cgroup-v1-conflict", 5),
        ("kubelet-old.yaml", "oom-kill-setting-ignored", 5),
        ("kubelet-old.yaml", "oom-kill-setting-ignored", 6),
        # Worker on pool h100 (group kill); the Master's pool kills single processes.
        ("pytorchjob-torchrun.yaml", GROUP, 31),
        # 1.30 ignores singleProcessOOMKill: true; the legacy-v100 pool is cgroup v1.
        ("pytorchjob-torchrun.yaml", GROUP, 48),
    ]


def test_profile_kubelet_configs_reach_the_workload_rule():
    """KubeletConfigurations named only in the profile are still facts."""
    found = family_findings([str(FIXTURES / "pytorchjob-torchrun.yaml")])
    assert [f for f in found if f[1] == GROUP] == [
        ("pytorchjob-torchrun.yaml", GROUP, 31),
        ("pytorchjob-torchrun.yaml", GROUP, 48),
    ]


def test_profile_kubelet_configs_are_linted():
    """Named only in the profile, they are linted as inputs."""
    found = family_findings([str(FIXTURES / "pytorchjob-torchrun.yaml")])
    assert [f for f in found if f[1] != GROUP] == [
        ("kubelet-cgroup-v1.yaml", "fail-cgroup-v1-conflict", 2),
        ("kubelet-cgroup-v1.yaml", "oom-kill-cgroup-v1-conflict", 5),
        ("kubelet-old.yaml", "oom-kill-setting-ignored", 5),
        ("kubelet-old.yaml", "oom-kill-setting-ignored", 6),
    ]


def test_a_profile_kubelet_file_that_is_also_an_input_is_one_fact(tmp_path, monkeypatch):
    """Named in the profile by its absolute path, linted by a relative one: one KubeletConfiguration, read once."""
    from kubelint_ml.input.sources import collect
    from kubelint_ml.run import facts as facts_module
    from kubelint_ml.run import lint as lint_module

    (tmp_path / "nodes").mkdir()
    kubelet = tmp_path / "nodes" / "kubelet.yaml"
    kubelet.write_text(KCFG + "singleProcessOOMKill: true\n")
    monkeypatch.chdir(tmp_path)
    config = Config()
    config.profile = Profile.from_dict({"cgroupVersion": 2, "kubeletConfig": str(kubelet)}, tmp_path)
    loads = []
    real_load = facts_module.load
    monkeypatch.setattr(facts_module, "load", lambda *a, **k: loads.append(1) or real_load(*a, **k))
    sources = lint_module.with_profile_files(collect(["nodes"], ()), config)
    facts, _, _ = facts_module.first_pass(sources, config, None)
    assert [s.path for s in sources] == ["nodes/kubelet.yaml"]
    assert [k.source for k in facts.kubelet_configs] == ["nodes/kubelet.yaml"]
    assert len(loads) == 1
