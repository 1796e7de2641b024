"""Kubernetes' own gang scheduling (KEP-4671, the Workload API) as the API server and the scheduler
judge it, by version: 1.35 (scheduling.k8s.io/v1alpha1 Workload, pod spec.workloadRef), 1.36
(v1alpha2 Workload podGroupTemplates, PodGroup, pod spec.schedulingGroup) and 1.37 (v1beta1)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.k8s.schema import bundled_versions

JOB_135 = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  completionMode: Indexed
  parallelism: {n}
  completions: {n}
  template:
    spec:
      priorityClassName: training
      restartPolicy: Never
      workloadRef:
        name: training
        podGroup: workers
      containers:
      - name: main
        image: python
        resources:
          requests: {{cpu: "1", memory: 1Gi}}
          limits: {{cpu: "1", memory: 1Gi}}
"""
WORKLOAD_135 = """\
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: training}
spec:
  controllerRef: {apiGroup: batch, kind: Job, name: train}
  podGroups:
  - name: workers
    policy:
      gang:
        minCount: 4
  - name: driver
    policy:
      basic: {}
"""
JOBSET_136 = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: js}}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        completions: {n}
        parallelism: {n}
        template:
          spec:
            priorityClassName: training
            restartPolicy: Never
            schedulingGroup:
              podGroupName: js-workers
            containers:
            - name: main
              image: python
              resources:
                requests: {{cpu: "1", memory: 1Gi}}
                limits: {{cpu: "1", memory: 1Gi}}
"""
PODGROUP = """\
apiVersion: scheduling.k8s.io/{version}
kind: Workload
metadata: {{name: js}}
spec:
  podGroupTemplates:
  - name: workers
    schedulingPolicy:
      gang: {{minCount: 4}}
---
apiVersion: scheduling.k8s.io/{version}
kind: PodGroup
metadata: {{name: js-workers}}
spec:
  podGroupTemplateRef:
    workload: {{workloadName: js, podGroupTemplateName: workers}}
  schedulingPolicy:
    gang: {{minCount: 4}}
"""
PRIORITY = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: training}
value: 1000
"""


def _findings(args: list[str]) -> tuple[int, list[tuple]]:
    r = CliRunner().invoke(main, [*args, "-f", "json"], catch_exceptions=False)
    out = r.stdout
    found = json.loads(out[: out.rindex("}") + 1])["findings"]
    return r.exit_code, [
        (f["file"].rsplit("/", 1)[-1], f["line"], f["rule"], f["severity"], f["message"]) for f in found
    ]


def _write(tmp_path: Path, **files: str) -> None:
    for name, text in files.items():
        (tmp_path / f"{name}.yaml").write_text(text)


def _valid(version: str) -> dict[str, str]:
    if version == "1.35":
        return {"workload": WORKLOAD_135, "job": JOB_135.format(n=4), "priority": PRIORITY}
    api = "v1alpha2" if version == "1.36" else "v1beta1"
    return {
        "podgroup": PODGROUP.format(version=api),
        "job": _scheduling_group(JOB_135.format(n=4)),
        "priority": PRIORITY,
    }


def _scheduling_group(job: str, name: str = "js-workers") -> str:
    return job.replace(
        "workloadRef:\n        name: training\n        podGroup: workers",
        f"schedulingGroup:\n        podGroupName: {name}",
    )


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
@pytest.mark.parametrize("schema", [[], ["--schema"]], ids=["rules", "schema"])
def test_valid_gangs_of_each_version_get_no_finding(tmp_path, version, schema):
    if schema and version not in bundled_versions():
        pytest.skip(f"kubernetes-validate bundles no {version} schema")
    _write(tmp_path, **_valid(version))
    assert _findings(["check", str(tmp_path), "-j1", "--kubernetes-version", version, *schema]) == (0, [])
    # without a profile version nothing is assumed about the gate either
    assert _findings(["check", str(tmp_path), "-j1"]) == (0, [])


def test_workload_gang_above_the_jobs_pods_never_forms(tmp_path):
    _write(tmp_path, workload=WORKLOAD_135, job=JOB_135.format(n=3), priority=PRIORITY)
    for extra in ([], ["--kubernetes-version", "1.35"]):
        assert _findings(["check", str(tmp_path), *extra]) == (
            1,
            [
                (
                    "job.yaml",
                    14,
                    "gang-min-available-unsatisfiable",
                    "error",
                    "Workload 'training' pod group 'workers' needs 4 pods (gang minCount) but this workload creates 3",
                )
            ],
        )


def test_a_jobs_pods_are_its_parallelism_capped_by_its_completions(tmp_path):
    job = JOB_135.format(n=8).replace("completions: 8", "completions: 2")
    _write(tmp_path, workload=WORKLOAD_135, job=job, priority=PRIORITY)
    code, found = _findings(["check", str(tmp_path)])
    assert [m for *_, m in found] == [
        "Workload 'training' pod group 'workers' needs 4 pods (gang minCount) but this workload creates 2"
    ]


def test_podgroup_gang_from_context_above_the_jobsets_pods(tmp_path):
    """A PodGroup of the cluster (--context) counts as one among the inputs; a JobSet's pods are its
    replicas x parallelism."""
    work = tmp_path / "work"
    work.mkdir()
    _write(work, jobset=JOBSET_136.format(n=1), priority=PRIORITY)
    (tmp_path / "cluster.yaml").write_text(PODGROUP.format(version="v1beta1"))
    code, found = _findings(["check", str(work), "--context", str(tmp_path / "cluster.yaml")])
    assert found == [
        (
            "jobset.yaml",
            17,
            "gang-min-available-unsatisfiable",
            "error",
            "PodGroup 'js-workers' needs 4 pods (gang minCount) but this workload creates 2",
        )
    ]
    # a PodGroup named by no input, and a reference to one nowhere: nothing (a controller may create it)
    _write(work, jobset=JOBSET_136.format(n=1).replace("js-workers", "made-by-controller"))
    assert _findings(["check", str(work), "--context", str(tmp_path / "cluster.yaml")]) == (0, [])


def test_bare_pods_of_a_gang_are_not_counted_one_by_one(tmp_path):
    pod = yaml.safe_load(JOB_135.format(n=1))["spec"]["template"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker-0"}, **pod}
    _write(tmp_path, workload=WORKLOAD_135, pod=yaml.safe_dump(pod), priority=PRIORITY)
    assert _findings(["check", str(tmp_path)]) == (0, [])


def test_a_pod_group_the_workload_lacks(tmp_path):
    _write(tmp_path, workload=WORKLOAD_135, job=JOB_135.format(n=4).replace("podGroup: workers", "podGroup: worker"))
    code, found = _findings(
        ["check", str(tmp_path), "--disable", "missing-priority-class", "--disable", "unknown-priority-class"]
    )
    assert found == [
        (
            "job.yaml",
            14,
            "pod-group-reference-invalid",
            "error",
            "Workload 'training' has no pod group 'worker' (it has 'driver', 'workers')",
        )
    ]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.34", [(12, "error", "spec.workloadRef is not a pod field in Kubernetes 1.34 (only in Kubernetes 1.35)")]),
        ("1.35", []),
        ("1.36", [(12, "error", "spec.workloadRef is not a pod field in Kubernetes 1.36 (only in Kubernetes 1.35)")]),
        ("1.37", [(12, "error", "spec.workloadRef is not a pod field in Kubernetes 1.37 (only in Kubernetes 1.35)")]),
    ],
)
def test_workload_ref_by_version(tmp_path, version, expected):
    _write(tmp_path, workload=WORKLOAD_135, job=JOB_135.format(n=4), priority=PRIORITY)
    code, found = _findings(["check", str(tmp_path), "--kubernetes-version", version])
    assert [(line, sev, m) for _, line, rule, sev, m in found if rule == "pod-group-reference-invalid"] == expected
    assert not [f for f in found if f[2] == "gang-min-available-unsatisfiable"]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (
            "1.35",
            [(16, "warning", "spec.schedulingGroup is not a pod field in Kubernetes 1.35 (from Kubernetes 1.36)")],
        ),
        ("1.36", []),
        ("1.37", []),
    ],
)
def test_scheduling_group_in_a_custom_resource_by_version(tmp_path, version, expected):
    """In a JobSet's pod template the field is not applied rather than rejected: a warning."""
    _write(tmp_path, podgroup=PODGROUP.format(version="v1beta1"), jobset=JOBSET_136.format(n=2), priority=PRIORITY)
    code, found = _findings(["check", str(tmp_path), "--kubernetes-version", version])
    assert [(line, sev, m) for _, line, rule, sev, m in found if rule == "pod-group-reference-invalid"] == expected


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_gang_field_dropped_with_the_gate_off_by_default(tmp_path, version):
    """With a profile version and no Workload or PodGroup among the inputs or the context to show the API
    served, the field is dropped (GenericWorkload is off by default in every version): a warning."""
    job = JOB_135.format(n=4)
    field = "workloadRef"
    if version != "1.35":
        job, field = _scheduling_group(job, "pg"), "schedulingGroup"
    _write(tmp_path, job=job, priority=PRIORITY)
    code, found = _findings(["check", str(tmp_path), "--kubernetes-version", version])
    assert found == [
        (
            "job.yaml",
            12,
            "pod-group-reference-invalid",
            "warning",
            f"spec.{field} is dropped unless the GenericWorkload gate is on (off by default in {version})",
        )
    ]
    assert _findings(["check", str(tmp_path)]) == (0, [])


def test_workload_ref_names_the_api_server_rejects(tmp_path):
    job = JOB_135.format(n=4).replace("podGroup: workers", "podGroup: Workers_1\n        podGroupReplicaKey: a.b")
    job = job.replace("name: training\n", "name: Training\n")
    _write(tmp_path, job=job, priority=PRIORITY)
    code, found = _findings(["check", str(tmp_path)])
    assert [(line, rule, m) for _, line, rule, _, m in found] == [
        (13, "pod-group-reference-invalid", "spec.workloadRef.name 'Training' is not a DNS subdomain"),
        (14, "pod-group-reference-invalid", "spec.workloadRef.podGroup 'Workers_1' is not a DNS label"),
        (15, "pod-group-reference-invalid", "spec.workloadRef.podGroupReplicaKey 'a.b' is not a DNS label"),
    ]
    job = JOB_135.format(n=4).replace("        podGroup: workers\n", "")
    _write(tmp_path, job=job)
    code, found = _findings(["check", str(tmp_path)])
    assert [(line, m) for _, line, _, _, m in found] == [(12, "spec.workloadRef.podGroup is required")]


def test_workloads_and_pod_groups_the_api_server_rejects(tmp_path):
    bad = """\
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: w}
spec:
  podGroupTemplates:
  - name: Workers
    schedulingPolicy: {gang: {minCount: 2}}
  - name: driver
    schedulingPolicy: {basic: {}}
  - name: driver
    schedulingPolicy: {}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg}
spec:
  schedulingPolicy:
    gang: {minCount: -1}
---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: empty}
spec:
  podGroups: []
"""
    _write(tmp_path, bad=bad)
    code, found = _findings(["check", str(tmp_path)])
    assert code == 1
    assert [(line, rule, m) for _, line, rule, _, m in found] == [
        (6, "workload-spec-invalid", "pod group name 'Workers' is not a DNS label"),
        (10, "workload-spec-invalid", "pod group 'driver' is listed twice"),
        (11, "workload-spec-invalid", "schedulingPolicy must set exactly one of basic, gang"),
        (18, "workload-spec-invalid", "gang minCount -1 is negative"),
        (24, "workload-spec-invalid", "spec.podGroups has 0 pod groups: a Workload has 1 to 8"),
    ]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the CEL runtime (cel-expr-python) needs Python >= 3.11")
def test_serve_judges_the_gang_as_check_does(tmp_path):
    """serve (one object, the config's context as the cluster) gives check's verdict."""
    from kubelint_ml.admission.review import lint_object

    sys.path.insert(0, str(Path(__file__).parent))
    from test_admission_vap import _builtin_policies

    (tmp_path / "cluster.yaml").write_text(WORKLOAD_135 + "---\n" + PRIORITY)
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("context: [cluster.yaml]\nprofile: {kubernetesVersion: '1.35'}\n")
    policy, _ = _builtin_policies(config)
    findings, _ = lint_object(policy, yaml.safe_load(JOB_135.format(n=3)))
    assert [(f.rule, f.message) for f in findings if f.suppressed is None] == [
        (
            "gang-min-available-unsatisfiable",
            "Workload 'training' pod group 'workers' needs 4 pods (gang minCount) but this workload creates 3",
        )
    ]
    findings, _ = lint_object(policy, yaml.safe_load(JOB_135.format(n=4)))
    assert [(f.rule, f.message) for f in findings if f.suppressed is None] == []


def test_audit_takes_stored_pods_that_kept_the_field_as_the_gate_on(tmp_path):
    """The API server drops the field with GenericWorkload off, so a stored pod that has it shows the gate on:
    no 'dropped' warning in an audit, though the dump has no PodGroup."""
    pod = yaml.safe_load(_scheduling_group(JOB_135.format(n=1), "pg"))["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "worker-0", "namespace": "default", "uid": "u1"},
        **pod,
        "status": {"phase": "Running"},
    }
    priority = {**yaml.safe_load(PRIORITY), "metadata": {"name": "training", "uid": "u2"}}
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod, priority]}))
    config = tmp_path / "c.yaml"
    config.write_text("profile: {kubernetesVersion: '1.36'}\n")
    assert _findings(["audit", str(dump), "-c", str(config)]) == (0, [])
    # the same pod as a manifest, on the same version, with nothing to show the gate on: dropped
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod))
    code, found = _findings(["check", str(tmp_path / "pod.yaml"), "-c", str(config)])
    assert [(rule, sev) for _, _, rule, sev, _ in found] == [("pod-group-reference-invalid", "warning")]


def _job_gang(min_count: int) -> str:
    """A Job asking for its own gang (1.37's spec.scheduling, KEP-5547) of ``min_count`` of its 4 pods."""
    job = JOB_135.format(n=4).replace(
        "  template:\n",
        f"  scheduling:\n    schedulingPolicy:\n      gang: {{minCount: {min_count}}}\n  template:\n",
        1,
    )
    return job.replace("      workloadRef:\n        name: training\n        podGroup: workers\n", "")


@pytest.mark.parametrize(("version", "found"), [(None, True), ("1.36", False), ("1.37", True)])
def test_a_jobs_own_gang_above_its_parallelism(tmp_path, version, found):
    """1.37's Job spec.scheduling (KEP-5547): the API server rejects a gang minCount above the parallelism;
    before 1.37 the Job has no such field (pod-group-reference-invalid's)."""
    _write(tmp_path, job=_job_gang(8), priority=PRIORITY)
    expected = [
        (
            "job.yaml",
            10,
            "gang-min-available-unsatisfiable",
            "error",
            "gang minCount 8 is more than the Job's parallelism 4",
        )
    ]
    args = ["check", str(tmp_path)] + (["--kubernetes-version", version] if version else [])
    gang = [f for f in _findings(args)[1] if f[2] == "gang-min-available-unsatisfiable"]
    assert gang == (expected if found else [])
    _write(tmp_path, job=_job_gang(4))
    assert _findings(["check", str(tmp_path)]) == (0, [])


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.33", [(8, "error", "spec.scheduling is not a Job field in Kubernetes 1.33 (from Kubernetes 1.37)")]),
        ("1.35", [(8, "error", "spec.scheduling is not a Job field in Kubernetes 1.35 (from Kubernetes 1.37)")]),
        ("1.36", [(8, "error", "spec.scheduling is not a Job field in Kubernetes 1.36 (from Kubernetes 1.37)")]),
        (
            "1.37",
            [
                (
                    8,
                    "warning",
                    "spec.scheduling is dropped unless the WorkloadWithJob gate is on (alpha, off by default in 1.37)",
                )
            ],
        ),
    ],
)
def test_a_jobs_own_gang_by_version(tmp_path, version, expected):
    """A Job's spec.scheduling is a batch/v1 field from 1.37 only (strict field validation rejects it before);
    in 1.37 WorkloadWithJob is alpha and off, so the API server drops it and the pods get no gang. serve
    judges the Job as check does, but for the drop: a Job that reaches a validating webhook with the field
    kept it, so the gate is on."""
    _write(tmp_path, job=_job_gang(4), priority=PRIORITY)
    code, found = _findings(["check", str(tmp_path), "--kubernetes-version", version])
    assert [(line, sev, m) for _, line, rule, sev, m in found if rule == "pod-group-reference-invalid"] == expected
    assert [f[2] for f in found] == ["pod-group-reference-invalid"]
    assert code == (1 if expected[0][1] == "error" else 0)
    cron = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: '0 0 * * *'\n"
    cron += "  jobTemplate:\n" + "".join(f"    {line}\n" for line in _job_gang(4).split("\n", 3)[3].splitlines())
    _write(tmp_path, job=cron)
    found = _findings(["check", str(tmp_path), "--kubernetes-version", version])[1]
    assert [(line, sev, m) for _, line, rule, sev, m in found if rule == "pod-group-reference-invalid"] == [
        (11, sev, m) for _, sev, m in expected
    ]
    # a Workload or PodGroup among the inputs shows the Workload API served: no "dropped" warning
    _write(tmp_path, job=_job_gang(4), podgroup=PODGROUP.format(version="v1beta1"))
    found = _findings(["check", str(tmp_path), "--kubernetes-version", version])[1]
    assert [(line, sev) for _, line, rule, sev, _ in found if rule == "pod-group-reference-invalid"] == [
        (line, sev) for line, sev, _ in expected if sev == "error"
    ]
    if sys.version_info >= (3, 11):
        from kubelint_ml.admission.review import lint_object

        sys.path.insert(0, str(Path(__file__).parent))
        from test_admission_vap import _builtin_policies

        (tmp_path / "podgroup.yaml").unlink()
        config = tmp_path / ".kubelint-ml.yaml"
        config.write_text(f"context: [priority.yaml]\nprofile: {{kubernetesVersion: '{version}'}}\n")
        policy, _ = _builtin_policies(config)
        served, _ = lint_object(policy, yaml.safe_load(_job_gang(4)))
        assert [(f.rule, f.severity, f.message) for f in served if f.suppressed is None] == [
            ("pod-group-reference-invalid", sev, m) for _, sev, m in expected if sev == "error"
        ]


def test_scheduling_group_names_the_api_server_rejects(tmp_path):
    """PodSchedulingGroup is a union whose one member, podGroupName (a DNS subdomain), must be set."""
    _write(tmp_path, job=_scheduling_group(JOB_135.format(n=4), "Pod_Group"), priority=PRIORITY)
    assert [(line, m) for _, line, _, _, m in _findings(["check", str(tmp_path)])[1]] == [
        (13, "spec.schedulingGroup.podGroupName 'Pod_Group' is not a DNS subdomain")
    ]
    job = JOB_135.format(n=4).replace(
        "workloadRef:\n        name: training\n        podGroup: workers", "schedulingGroup: {}"
    )
    _write(tmp_path, job=job)
    assert [(line, m) for _, line, _, _, m in _findings(["check", str(tmp_path)])[1]] == [
        (12, "spec.schedulingGroup.podGroupName is required")
    ]


def test_audit_takes_a_stored_job_that_kept_its_scheduling_as_the_gate_on(tmp_path):
    """The API server drops a Job's spec.scheduling with WorkloadWithJob off, so a stored Job that has it shows
    the gate on: no 'dropped' warning in an audit."""
    sys.path.insert(0, str(Path(__file__).parent))
    from clirun import stored_dump

    dump, config = stored_dump(tmp_path, _job_gang(4), "1.37")
    assert [f[2] for f in _findings(["audit", str(dump), "-c", str(config)])[1]] == []
    (tmp_path / "job.yaml").write_text(_job_gang(4))
    code, found = _findings(["check", str(tmp_path / "job.yaml"), "-c", str(config)])
    assert [(line, rule, sev) for _, line, rule, sev, _ in found] == [(8, "pod-group-reference-invalid", "warning")]


def test_a_pod_group_naming_a_template_its_workload_lacks_is_not_judged(tmp_path):
    """A PodGroup carries its own schedulingPolicy and is scheduled on its own ("the PodGroup inlines all
    runtime state making it self-contained", KEP-4671): its podGroupTemplateRef only records where the policy
    came from, so a reference to a template the Workload lacks changes nothing and gets no finding."""
    pod_group = PODGROUP.format(version="v1beta1").replace("podGroupTemplateName: workers", "podGroupTemplateName: w")
    _write(tmp_path, podgroup=pod_group, job=_scheduling_group(JOB_135.format(n=4)), priority=PRIORITY)
    assert _findings(["check", str(tmp_path), "--kubernetes-version", "1.37"]) == (0, [])
