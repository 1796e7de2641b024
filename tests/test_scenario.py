"""A whole ML platform's manifests with a cluster profile: the full finding list.

TFJob with Chief/PS/Worker, PyTorchJob with torchrun, MPIJob, JobSet on TPUs,
RayJob, Volcano Job, a Kueue-labelled Job, PriorityClasses, and the kubelet
configs of a cgroup v2 pool and a cgroup v1 pool, all named in the profile.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "fixtures" / "scenario"

EXPECTED = [
    ("manifests/jobset.yaml", 17, "besteffort-qos", "error"),
    ("manifests/jobset.yaml", 17, "missing-priority-class", "warning"),
    ("manifests/jobset.yaml", 23, "missing-memory-request", "warning"),
    ("manifests/jobset.yaml", 24, "missing-memory-limit", "error"),
    ("manifests/kueue-job.yaml", 8, "preemption-consumes-backoff", "warning"),
    ("manifests/kueue-job.yaml", 17, "group-oom-kill-multiprocess", "warning"),
    ("manifests/kueue-job.yaml", 19, "missing-ephemeral-storage-request", "info"),
    ("manifests/kueue-job.yaml", 21, "shm-too-small-for-workers", "warning"),
    ("manifests/kueue-job.yaml", 26, "emptydir-no-size-limit", "warning"),
    ("manifests/mpijob.yaml", 6, "group-oom-kill-multiprocess", "warning"),
    ("manifests/mpijob.yaml", 23, "unknown-priority-class", "error"),
    ("manifests/mpijob.yaml", 25, "shm-too-small-for-workers", "warning"),
    ("manifests/mpijob.yaml", 29, "gpu-memory-share-mismatch", "warning"),
    ("manifests/mpijob.yaml", 30, "gpu-memory-share-mismatch", "warning"),
    ("manifests/mpijob.yaml", 33, "accelerator-request-limit-mismatch", "error"),
    ("manifests/pytorchjob.yaml", 17, "shm-too-small-for-workers", "warning"),
    ("manifests/pytorchjob.yaml", 21, "group-oom-kill-multiprocess", "warning"),
    ("manifests/rayjob.yaml", 9, "group-oom-kill-multiprocess", "warning"),
    ("manifests/rayjob.yaml", 19, "group-oom-kill-multiprocess", "warning"),
    ("manifests/tfjob.yaml", 14, "missing-priority-class", "warning"),
    ("manifests/tfjob.yaml", 25, "besteffort-qos", "warning"),
    ("manifests/tfjob.yaml", 25, "missing-priority-class", "warning"),
    ("manifests/tfjob.yaml", 27, "missing-memory-limit", "warning"),
    ("manifests/tfjob.yaml", 27, "missing-memory-request", "warning"),
    ("manifests/tfjob.yaml", 32, "missing-priority-class", "warning"),
    ("manifests/tfjob.yaml", 41, "gpu-memory-share-mismatch", "warning"),
    ("nodes/kubelet-cgroupv1.yaml", 1, "fail-cgroup-v1-conflict", "error"),
    ("nodes/kubelet-cgroupv1.yaml", 4, "oom-kill-cgroup-v1-conflict", "error"),
]


def _run(monkeypatch, *extra):
    monkeypatch.chdir(ROOT)
    r = CliRunner().invoke(
        main,
        [
            "check",
            "--config",
            str(SCENARIO / "kubelint-ml.yaml"),
            "fixtures/scenario/manifests",
            "--format",
            "json",
            *extra,
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 1
    return json.loads(r.output)


def test_full_finding_list(monkeypatch):
    data = _run(monkeypatch, "--jobs", "1")
    got = [(f["file"].split("scenario/")[1], f["line"], f["rule"], f["severity"]) for f in data["findings"]]
    assert got == EXPECTED


def test_messages_carry_the_numbers_and_the_caveats(monkeypatch):
    by = {(f["file"].split("scenario/")[1], f["line"], f["rule"]): f["detail"] for f in _run(monkeypatch)["findings"]}
    share = by[("manifests/tfjob.yaml", 41, "gpu-memory-share-mismatch")]
    assert "uses 2 of 8 GPUs (25%)" in share and "600Gi memory (56.7% of 1057Gi allocatable)" in share
    assert "copied only into the gang-scheduling PodGroup" in by[("manifests/tfjob.yaml", 14, "missing-priority-class")]
    assert "did you mean 'training-high'?" in by[("manifests/mpijob.yaml", 23, "unknown-priority-class")]
    oom = by[("manifests/pytorchjob.yaml", 21, "group-oom-kill-multiprocess")]
    assert "--nproc_per_node=8" in oom and "singleProcessOOMKill: true" in oom
    assert "legacy-v100" in by[("nodes/kubelet-cgroupv1.yaml", 4, "oom-kill-cgroup-v1-conflict")]


def test_without_the_profile_the_profile_rules_stay_quiet(monkeypatch):
    monkeypatch.chdir(ROOT)
    missing = CliRunner().invoke(main, ["check", "--config", "no-such-config.yaml", "fixtures/scenario/manifests"])
    assert missing.exit_code == 2  # a named config that does not exist is an error
    r = CliRunner().invoke(main, ["check", "fixtures/scenario/manifests", "--format", "json"])
    rules = {f["rule"] for f in json.loads(r.output)["findings"]}
    assert "group-oom-kill-multiprocess" not in rules  # needs the cgroup version
    assert "fail-cgroup-v1-conflict" not in rules
    assert "gpu-memory-share-mismatch" in rules  # the catalog alone knows p4d.24xlarge
