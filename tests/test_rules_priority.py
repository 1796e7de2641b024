"""Family 4: priority and preemption."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from kubelint_ml.engine.context import Facts
from kubelint_ml.engine.core import Context, Engine
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.input.loader import load
from kubelint_ml.input.objects import unpack
from kubelint_ml.run.config import Config, Profile
from kubelint_ml.run.inputs import RunInputs
from kubelint_ml.run.lint import lint_text, run

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "priority"

FAMILY = {
    "missing-priority-class",
    "unknown-priority-class",
    "priority-class-invalid",
    "preemption-consumes-backoff",
    "restart-policy-invalid",
}
RULES = [r for r in load_builtin_rules() if r.id in FAMILY]


def _config(profile: dict | None) -> Config:
    config = Config()
    if profile:
        config.profile = Profile.from_dict(profile, ROOT)
    return config


def lint(manifest: str, profile: dict | None = None, only: str | None = None) -> list[tuple[str, int, str]]:
    """(rule, line, message) of the family's findings in one in-memory file."""
    rules = [r for r in RULES if only is None or r.id == only]
    found = lint_text(dedent(manifest).encode(), rules, _config(profile))
    return [(f.rule, f.line, f.detail) for f in found if f.rule in FAMILY]


def lint_dir(tmp_path: Path, files: dict[str, str], profile: dict | None = None) -> list[tuple[str, int, str, str]]:
    """Several files linted as one run (facts are collected from all of them)."""
    for name, text in files.items():
        (tmp_path / name).write_text(dedent(text))
    result, _ = run([str(tmp_path)], RunInputs(_config(profile), RULES, jobs=1))
    return [(Path(f.file).name, f.line, f.rule, f.detail) for f in result.findings if f.rule in FAMILY]


def notes(manifest: str, profile: dict | None = None, only: str | None = None) -> list[str]:
    """The --verbose "skipped" notes of the family's rules."""
    rules = [r for r in RULES if only is None or r.id == only]
    data = dedent(manifest).encode()
    config = _config(profile)
    facts = Facts()
    objects = [o for d in load(data).documents for o in unpack(d, "m.yaml").objects]
    for o in objects:
        facts.add_object(o)
    facts.add_profile(config.profile)
    ctx = Context(profile=config.profile, facts=facts)
    engine = Engine(rules)
    for o in objects:
        engine.evaluate(o, ctx)
    return ctx.notes


CLASSES = {"priorityClasses": [{"name": "training-high", "value": 100000}, {"name": "training-low", "value": 1000}]}


# ----------------------------------------------------------------------------
# The fixture directory: realistic manifests, linted together


def test_fixture_directory_findings():
    result, _ = run([str(FIXTURES)], RunInputs(Config(), RULES, jobs=1))
    got = sorted((Path(f.file).name, f.line, f.rule, f.severity) for f in result.findings)
    assert got == [
        ("cronjob-eval.yaml", 14, "preemption-consumes-backoff", "warning"),
        ("cronjob-eval.yaml", 25, "restart-policy-invalid", "error"),
        ("job-preemptible.yaml", 6, "preemption-consumes-backoff", "warning"),
        ("job-restart-always.yaml", 11, "restart-policy-invalid", "error"),
        ("jobset-kueue.yaml", 8, "unknown-priority-class", "error"),
        ("jobset-kueue.yaml", 26, "restart-policy-invalid", "error"),
        ("priorityclasses-bad.yaml", 14, "priority-class-invalid", "error"),
        ("priorityclasses-bad.yaml", 20, "priority-class-invalid", "error"),
        ("priorityclasses.yaml", 7, "priority-class-invalid", "error"),
        ("pytorchjob-gang-only.yaml", 17, "missing-priority-class", "warning"),
        ("pytorchjob-gang-only.yaml", 32, "unknown-priority-class", "error"),
        ("volcano-job.yaml", 14, "missing-priority-class", "warning"),
    ]
    by = {(Path(f.file).name, f.line): f for f in result.findings}
    assert "copied only into the gang-scheduling PodGroup" in by["pytorchjob-gang-only.yaml", 17].detail
    assert "to 'training-high' too" in by["pytorchjob-gang-only.yaml", 17].detail
    assert by["pytorchjob-gang-only.yaml", 17].path == "spec.pytorchReplicaSpecs.Master.template.spec"
    assert "(did you mean 'training-high'?)" in by["pytorchjob-gang-only.yaml", 32].detail
    assert "(did you mean 'research'?)" in by["jobset-kueue.yaml", 8].detail
    assert "spec.priorityClass 'training-high' is not a pod field" in by["volcano-job.yaml", 14].detail
    assert by["volcano-job.yaml", 14].path == "spec.tasks[0].template.spec.priorityClass"
    # the invalid 1.5e9 class never exists, so it does not make every other class preemptible
    assert (
        "below PriorityClass 'training-high' (value 100000, from fixtures/priority/"
        in by["job-preemptible.yaml", 6].detail
    )
    assert "counts against backoffLimit (4)" in by["job-preemptible.yaml", 6].detail
    assert "rules[0] (action FailJob on exit codes NotIn [0])" in by["cronjob-eval.yaml", 14].detail
    assert "PriorityClass 'serving-default' (fixtures/priority/priorityclasses-bad.yaml) already does" in by[
        "priorityclasses.yaml", 7
    ].detail.replace(str(ROOT) + "/", "")
    assert by["priorityclasses.yaml", 7].path == "globalDefault"


def test_fixture_patch_and_alternative_priorities_are_quiet():
    result, _ = run([str(FIXTURES)], RunInputs(Config(), RULES, jobs=1))
    files = {Path(f.file).name for f in result.findings}
    # a kustomize patch, a KAI pod with the KAI label, a RayCluster with the KubeRay label, a clean Job
    assert not files & {"kustomize-job-patch.yaml", "kai-pod.yaml", "raycluster-volcano.yaml", "job-good.yaml"}


# ----------------------------------------------------------------------------
# missing-priority-class


def test_missing_plain_pod_message():
    found = lint(
        """
        apiVersion: v1
        kind: Pod
        metadata:
          name: smoke
        spec:
          containers:
            - name: cuda
              image: nvidia/cuda:12.4.0-base-ubuntu22.04
    """,
        only="missing-priority-class",
    )
    assert len(found) == 1
    rule, line, message = found[0]
    assert line == 6
    assert message.startswith(
        "Pod/smoke: pod template has no priorityClassName: its pods run at the cluster's "
        "default priority (0 unless a globalDefault PriorityClass exists)"
    )
    assert "set spec.priorityClassName to a PriorityClass for training" in message


def test_missing_under_kai_scheduler_names_its_default():
    found = lint(
        """
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: train
        spec:
          template:
            spec:
              schedulerName: kai-scheduler
              restartPolicy: Never
              containers:
                - name: t
                  image: python:3.12
    """,
        only="missing-priority-class",
    )
    assert [(rule, line) for rule, line, _ in found] == [("missing-priority-class", 8)]
    message = found[0][2]
    assert (
        ": KAI Scheduler gives its pods its built-in default priority for the workload type ('inference' for a "
        "Deployment, 'train' otherwise), so any higher-priority pod can preempt them mid-run" in message
    )
    assert "(or KAI Scheduler's label priorityClassName on the workload or the Kueue label" in message


def test_missing_names_the_known_global_default(tmp_path):
    found = lint_dir(
        tmp_path,
        {
            "classes.yaml": """
            apiVersion: scheduling.k8s.io/v1
            kind: PriorityClass
            metadata:
              name: batch-default
            value: 100
            globalDefault: true
        """,
            "job.yaml": """
            apiVersion: batch/v1
            kind: Job
            metadata:
              name: train
            spec:
              template:
                spec:
                  restartPolicy: Never
                  containers:
                    - name: t
                      image: python:3.12
        """,
        },
    )
    assert [(f, line, rule) for f, line, rule, _ in found] == [("job.yaml", 8, "missing-priority-class")]
    classes = str(tmp_path / "classes.yaml")
    assert f"(the globalDefault PriorityClass 'batch-default', value 100, from {classes})" in found[0][3]


@pytest.mark.parametrize(
    "manifest",
    [
        # Kueue label on the object
        """
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: j
      labels: {kueue.x-k8s.io/priority-class: research}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: t, image: busybox}]
    """,
        # Kueue label on the pod template
        """
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: j
    spec:
      template:
        metadata:
          labels: {kueue.x-k8s.io/priority-class: research}
        spec:
          restartPolicy: Never
          containers: [{name: t, image: busybox}]
    """,
        # Kueue label on a CronJob's jobTemplate
        """
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: c
    spec:
      schedule: "@daily"
      jobTemplate:
        metadata:
          labels: {kueue.x-k8s.io/priority-class: research}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{name: t, image: busybox}]
    """,
        # KubeRay label
        """
    apiVersion: ray.io/v1
    kind: RayJob
    metadata:
      name: r
      labels: {ray.io/priority-class-name: training-low}
    spec:
      entrypoint: python train.py
      rayClusterSpec:
        headGroupSpec:
          template:
            spec:
              containers: [{name: head, image: rayproject/ray:2.9.0}]
    """,
        # KAI label on the workload, pods scheduled by KAI
        """
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: j
      labels: {priorityClassName: train}
    spec:
      template:
        spec:
          schedulerName: kai-scheduler
          restartPolicy: Never
          containers: [{name: t, image: busybox}]
    """,
        # an unrendered placeholder is still a value
        """
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: j
    spec:
      template:
        spec:
          priorityClassName: ${PRIORITY_CLASS}
          restartPolicy: Never
          containers: [{name: t, image: busybox}]
    """,
        # a shared runtime: the TrainJob carries the priority
        """
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-distributed
    spec:
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers: [{name: node, image: pytorch/pytorch:2.3.0}]
    """,
        # not a training workload: no accelerator
        """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: api
    spec:
      template:
        spec:
          containers: [{name: api, image: nginx}]
    """,
    ],
)
def test_missing_quiet(manifest):
    assert lint(manifest, only="missing-priority-class") == []


def test_missing_skips_the_rayjob_submitter():
    found = lint(
        """
        apiVersion: ray.io/v1
        kind: RayJob
        metadata:
          name: r
        spec:
          entrypoint: python train.py
          submitterPodTemplate:
            spec:
              restartPolicy: Never
              containers: [{name: submit, image: rayproject/ray:2.9.0}]
          rayClusterSpec:
            headGroupSpec:
              template:
                spec:
                  priorityClassName: training-low
                  containers: [{name: head, image: rayproject/ray:2.9.0}]
    """,
        only="missing-priority-class",
    )
    assert found == []


def test_missing_accelerator_deployment_and_notes():
    found = lint(
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: vllm
          labels: {priorityClassName: serving}
        spec:
          template:
            spec:
              priority: 1000
              containers:
                - name: vllm
                  image: vllm/vllm-openai:v0.5.0
                  resources:
                    limits: {nvidia.com/gpu: 1}
    """,
        only="missing-priority-class",
    )
    assert [(r, line) for r, line, _ in found] == [("missing-priority-class", 9)]
    message = found[0][2]
    assert "the label priorityClassName is read only by KAI Scheduler" in message
    assert "spec.priority 1000 cannot set it" in message


def test_missing_one_finding_per_template():
    found = lint(
        """
        apiVersion: kubeflow.org/v1
        kind: TFJob
        metadata:
          name: mnist
        spec:
          tfReplicaSpecs:
            PS:
              replicas: 1
              template:
                spec:
                  containers: [{name: tensorflow, image: tensorflow/tensorflow:2.16.1}]
            Worker:
              replicas: 2
              template:
                spec:
                  priorityClassName: training-low
                  containers: [{name: tensorflow, image: tensorflow/tensorflow:2.16.1}]
    """,
        only="missing-priority-class",
    )
    assert [(line, m.split(":")[0]) for _, line, m in found] == [(11, "TFJob/mnist (PS)")]
    assert "set spec.tfReplicaSpecs.PS.template.spec.priorityClassName to a PriorityClass" in found[0][2]


# ----------------------------------------------------------------------------
# unknown-priority-class


def test_unknown_against_the_profile():
    found = lint(
        """
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: j
        spec:
          template:
            spec:
              priorityClassName: training-hgh
              restartPolicy: Never
              containers: [{name: t, image: busybox}]
    """,
        profile=CLASSES,
        only="unknown-priority-class",
    )
    assert len(found) == 1
    _, line, message = found[0]
    assert line == 9
    assert message.startswith(
        "Job/j: priorityClassName 'training-hgh' names no known PriorityClass "
        "(known: training-high, training-low, from the profile; plus the built-in"
    )
    assert "(did you mean 'training-high'?)" in message
    assert 'rejects the pods ("no PriorityClass with name training-hgh was found")' in message


def test_unknown_volcano_and_kubeflow_fields():
    volcano = lint(
        """
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata:
          name: v
        spec:
          priorityClassName: urgent
          tasks:
            - name: w
              template:
                spec:
                  containers: [{name: w, image: busybox}]
    """,
        profile=CLASSES,
        only="unknown-priority-class",
    )
    assert [(line, "spec.priorityClassName 'urgent'" in m) for _, line, m in volcano] == [(7, True)]
    kubeflow = lint(
        """
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata:
          name: p
        spec:
          runPolicy:
            schedulingPolicy:
              priorityClass: gang-high
          pytorchReplicaSpecs:
            Master:
              template:
                spec:
                  priorityClassName: training-high
                  containers: [{name: pytorch, image: busybox}]
    """,
        profile=CLASSES,
        only="unknown-priority-class",
    )
    assert [(line, "gang-scheduling PodGroup" in m) for _, line, m in kubeflow] == [(9, True)]


@pytest.mark.parametrize("name", ["system-node-critical", "system-cluster-critical", "$PRIORITY", "<priority>"])
def test_unknown_system_and_placeholders_pass(name):
    assert (
        lint(
            f"""
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          priorityClassName: "{name}"
          containers: [{{name: c, image: busybox}}]
    """,
            profile=CLASSES,
            only="unknown-priority-class",
        )
        == []
    )


def test_unknown_skipped_without_known_classes():
    manifest = """
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          priorityClassName: anything
          containers: [{name: c, image: busybox}]
    """
    assert lint(manifest, only="unknown-priority-class") == []
    assert notes(manifest, only="unknown-priority-class") == [
        "m.yaml: Pod/p: unknown-priority-class skipped: no PriorityClass among the inputs or in the profile "
        "to check priorityClassName 'anything' against"
    ]


def test_unknown_kueue_label_only_on_workloads(tmp_path):
    found = lint_dir(
        tmp_path,
        {
            "wpc.yaml": """
            apiVersion: kueue.x-k8s.io/v1beta1
            kind: WorkloadPriorityClass
            metadata:
              name: production
            value: 10000
        """,
            "svc.yaml": """
            apiVersion: v1
            kind: Service
            metadata:
              name: etcd
              labels: {kueue.x-k8s.io/priority-class: prod}
            spec:
              ports: [{port: 2379}]
        """,
            "job.yaml": """
            apiVersion: batch/v1
            kind: Job
            metadata:
              name: j
              labels: {kueue.x-k8s.io/priority-class: prod}
            spec:
              template:
                metadata:
                  labels: {kueue.x-k8s.io/priority-class: prod}
                spec:
                  priorityClassName: whatever
                  restartPolicy: Never
                  containers: [{name: t, image: busybox}]
        """,
        },
    )
    # once, at the object's label; no PriorityClass is known, so priorityClassName is not judged
    assert [(f, line, rule) for f, line, rule, _ in found] == [("job.yaml", 6, "unknown-priority-class")]
    assert (
        f"names no known Kueue WorkloadPriorityClass (known: production, from {tmp_path / 'wpc.yaml'})" in found[0][3]
    )


# ----------------------------------------------------------------------------
# priority-class-invalid


def test_invalid_value_and_names():
    over = lint(
        """
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata:
          name: huge
        value: 1000000001
    """,
        only="priority-class-invalid",
    )
    assert [(line, "value 1000000001 is above 1000000000" in m) for _, line, m in over] == [(6, True)]
    assert (
        lint(
            """
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata:
          name: top
        value: 1000000000
    """,
            only="priority-class-invalid",
        )
        == []
    )
    reserved = lint(
        """
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata:
          name: system-gpu
        value: 2000000000
    """,
        only="priority-class-invalid",
    )
    assert [(line, "names starting with 'system-' are reserved" in m) for _, line, m in reserved] == [(5, True)]


def test_invalid_builtin_system_class_redefinitions():
    same = """
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata:
          name: system-cluster-critical
        value: 2000000000
    """
    assert lint(same, only="priority-class-invalid") == []
    other = lint(same.replace("2000000000", "1000"), only="priority-class-invalid")
    assert [(line, "is built into every cluster with value 2000000000" in m) for _, line, m in other] == [(6, True)]


def test_invalid_each_extra_global_default(tmp_path):
    default = """
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata:
          name: {name}
        value: {value}
        globalDefault: true
    """
    found = lint_dir(
        tmp_path,
        {
            "a.yaml": default.format(name="default-a", value=10),
            "b.yaml": default.format(name="default-b", value=20),
            "c.yaml": default.format(name="default-c", value=30),
            # the same class again (a copy in an overlay) is one class, not a second default
            "d.yaml": default.format(name="default-a", value=10),
        },
    )
    assert [(f, line, rule) for f, line, rule, _ in found] == [
        ("b.yaml", 7, "priority-class-invalid"),
        ("c.yaml", 7, "priority-class-invalid"),
    ]
    assert all("but PriorityClass 'default-a'" in m for *_, m in found)


# ----------------------------------------------------------------------------
# preemption-consumes-backoff


JOB = """
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: j
    spec:
      {spec}
      template:
        spec:
          priorityClassName: {cls}
          restartPolicy: Never
          containers: [{{name: t, image: busybox}}]
"""


def job(cls: str = "training-low", spec: str = "backoffLimit: 6") -> str:
    return JOB.format(cls=cls, spec=spec.replace("\n", "\n      "))


def test_preemption_without_policy():
    found = lint(job(), profile=CLASSES, only="preemption-consumes-backoff")
    assert len(found) == 1
    _, line, message = found[0]
    assert line == 6
    assert message.startswith(
        "Job/j runs at PriorityClass 'training-low' (value 1000), below PriorityClass "
        "'training-high' (value 100000, from the profile), so its pods can be preempted, and the Job has no "
        "podFailurePolicy: every preemption counts against backoffLimit (6)"
    )


def test_preemption_per_index_limit():
    found = lint(
        job(spec="completionMode: Indexed\ncompletions: 4\nbackoffLimitPerIndex: 1"),
        profile=CLASSES,
        only="preemption-consumes-backoff",
    )
    assert "counts against its index's backoffLimitPerIndex (1)" in found[0][2]


@pytest.mark.parametrize(
    "rules,expect",
    [
        ("[{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]", None),
        (
            "[{action: FailJob, onExitCodes: {operator: In, values: [42]}}, "
            "{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]",
            None,
        ),
        (
            "[{action: Ignore, onPodConditions: [{type: DisruptionTarget, status: 'False'}]}]",
            "has no rule with action Ignore on the DisruptionTarget",
        ),
        (
            "[{action: Count, onPodConditions: [{type: DisruptionTarget}]}]",
            "rules[0] handles the DisruptionTarget condition with action Count: every preemption counts",
        ),
        ("[{action: FailJob, onPodConditions: [{type: DisruptionTarget}]}]", "one preemption fails the whole Job"),
        (
            "[{action: Count, onExitCodes: {operator: In, values: [137, 143]}}, "
            "{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]",
            "matches a preempted container's exit code",
        ),
        ("[]", "has no rule with action Ignore"),
    ],
)
def test_preemption_rule_order(rules, expect):
    found = lint(job(spec=f"podFailurePolicy:\n  rules: {rules}"), profile=CLASSES, only="preemption-consumes-backoff")
    if expect is None:
        assert found == []
    else:
        assert len(found) == 1 and expect in found[0][2]


def test_preemption_needs_a_lower_value():
    assert lint(job("training-high"), profile=CLASSES, only="preemption-consumes-backoff") == []
    assert lint(job("system-cluster-critical"), profile=CLASSES, only="preemption-consumes-backoff") == []
    # the only higher class never preempts
    never = {"priorityClasses": [{"name": "training-low", "value": 1000}]}
    assert lint(job(), profile=never, only="preemption-consumes-backoff") == []


def test_preemption_classes_that_never_preempt_do_not_count(tmp_path):
    found = lint_dir(
        tmp_path,
        {
            "classes.yaml": """
            apiVersion: scheduling.k8s.io/v1
            kind: PriorityClass
            metadata:
              name: inference
            value: 1000000
            preemptionPolicy: Never
        """,
            "low.yaml": """
            apiVersion: scheduling.k8s.io/v1
            kind: PriorityClass
            metadata:
              name: training-low
            value: 1000
        """,
            "job.yaml": job(),
        },
    )
    assert found == []


def test_preemption_skips_unknown_values():
    profile = {"priorityClasses": [{"name": "training-high", "value": 100000}, "training-low"]}
    assert lint(job(), profile=profile, only="preemption-consumes-backoff") == []
    assert notes(job(), profile=profile, only="preemption-consumes-backoff") == [
        "m.yaml: Job/j: preemption-consumes-backoff skipped: the value of PriorityClass 'training-low' is unknown"
    ]
    assert notes(job(), only="preemption-consumes-backoff") == [
        "m.yaml: Job/j: preemption-consumes-backoff skipped: no PriorityClass value known from the inputs or the "
        "profile"
    ]


# ----------------------------------------------------------------------------
# restart-policy-invalid


def restart(kind_block: str) -> list[tuple[str, int, str]]:
    return lint(kind_block, only="restart-policy-invalid")


@pytest.mark.parametrize(
    "policy,pfp,expect",
    [
        (None, False, "pod template has no restartPolicy: a Job requires Never or OnFailure"),
        ("Always", False, "restartPolicy 'Always' is not allowed in a Job"),
        ("never", False, "restartPolicy 'never' is not allowed in a Job"),
        ("OnFailure", True, "restartPolicy OnFailure with a podFailurePolicy"),
        ("OnFailure", False, None),
        ("Never", True, None),
        ("$RESTART", False, None),
    ],
)
def test_restart_batch_job(policy, pfp, expect):
    policy_line = f"restartPolicy: {policy}" if policy else "dnsPolicy: ClusterFirst"
    pfp_block = "podFailurePolicy: {rules: []}" if pfp else "backoffLimit: 2"
    found = restart(f"""
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: j
        spec:
          {pfp_block}
          template:
            spec:
              {policy_line}
              containers: [{{name: t, image: busybox}}]
    """)
    if expect is None:
        assert found == []
    else:
        assert len(found) == 1 and expect in found[0][2]
        assert found[0][1] == (10 if policy else 9)


def jobset(policy: str | None, pfp: bool) -> str:
    policy_line = f"restartPolicy: {policy}" if policy else "dnsPolicy: ClusterFirst"
    pfp_block = (
        "podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]}"
        if pfp
        else "backoffLimit: 0"
    )
    return f"""
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata:
          name: js
        spec:
          replicatedJobs:
            - name: workers
              template:
                spec:
                  {pfp_block}
                  template:
                    spec:
                      {policy_line}
                      containers: [{{name: t, image: busybox}}]
    """


@pytest.mark.parametrize(
    "policy,pfp,expect",
    [
        (None, False, None),  # JobSet's webhook defaults it to OnFailure
        ("Always", False, "restartPolicy 'Always' is not allowed in a Job"),
        (None, True, "JobSet defaults it to OnFailure, but the Job's podFailurePolicy requires Never"),
        ("OnFailure", True, "restartPolicy OnFailure with a podFailurePolicy"),
        ("Never", True, None),
    ],
)
def test_restart_jobset(policy, pfp, expect):
    found = restart(jobset(policy, pfp))
    if expect is None:
        assert found == []
    else:
        assert len(found) == 1 and expect in found[0][2]
        assert "each child Job the JobSet controller creates" in found[0][2]


def test_restart_training_runtime_and_kubeflow():
    runtime = """
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: TrainingRuntime
        metadata:
          name: rt
        spec:
          template:
            spec:
              replicatedJobs:
                - name: node
                  template:
                    spec:
                      template:
                        spec:
                          restartPolicy: Always
                          containers: [{name: node, image: busybox}]
    """
    assert [line for _, line, _ in restart(runtime)] == [15]
    # a Kubeflow replica spec's restartPolicy overrides the template; Always is valid there
    assert (
        restart("""
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata:
          name: p
        spec:
          pytorchReplicaSpecs:
            Worker:
              restartPolicy: Always
              template:
                spec:
                  restartPolicy: Always
                  containers: [{name: pytorch, image: busybox}]
    """)
        == []
    )


def test_restart_kustomize_patch_is_quiet():
    assert (
        restart("""
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: j
        spec:
          template:
            spec:
              containers:
                - name: t
                  resources: {limits: {nvidia.com/gpu: 2}}
    """)
        == []
    )


# ----------------------------------------------------------------------------
# The real corpus


def test_corpus_findings_are_few_and_pointed(corpus):
    result, _ = run([str(corpus)], RunInputs(Config(), RULES, jobs=1))
    counts: dict[str, int] = {}
    for f in result.findings:
        counts[f.rule] = counts.get(f.rule, 0) + 1
    assert counts.get("priority-class-invalid", 0) == 0
    assert counts.get("restart-policy-invalid", 0) == 0
    preempt = [f for f in result.findings if f.rule == "preemption-consumes-backoff"]
    assert [(Path(f.file).name, f.line) for f in preempt] == [
        ("ai-ml__mix-train-and-inference__workloads__fine-tune-l4.yaml", 31)
    ]
    volcano = [f for f in result.findings if f.rule == "missing-priority-class" and "spec.priorityClass '" in f.detail]
    assert sorted((Path(f.file).name, f.line) for f in volcano) == [
        ("example__kubecon-2019-china__task-priority__elastic-job.yaml", 16),
        ("example__kubecon-2019-china__task-priority__elastic-job.yaml", 29),
    ]


# --- Kubeflow Trainer: a runtime judged with the TrainJobs that use it ------------------------

_RUNTIME = """apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-gpu
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
                      resources: {limits: {nvidia.com/gpu: 8}}
"""
_TRAINJOB = """apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: llama-ft
{labels}spec:
  runtimeRef:
    name: torch-gpu
  trainer:
    numNodes: 2
"""


def _trainer_findings(tmp_path, trainjob: str | None):
    import json

    from click.testing import CliRunner

    from kubelint_ml.cli import main

    (tmp_path / "runtime.yaml").write_text(_RUNTIME)
    if trainjob is not None:
        (tmp_path / "job.yaml").write_text(trainjob)
    r = CliRunner().invoke(main, ["check", str(tmp_path), "-f", "json"], catch_exceptions=False)
    return [
        (f["file"].rsplit("/", 1)[-1], f["line"], f["path"], f["message"], f.get("detail", ""))
        for f in json.loads(r.output)["findings"]
        if f["rule"] == "missing-priority-class"
    ]


def test_a_runtime_whose_trainjob_sets_no_priority_gets_the_finding(tmp_path):
    found = _trainer_findings(tmp_path, _TRAINJOB.format(labels=""))
    assert [f[:3] for f in found] == [
        ("runtime.yaml", 14, "spec.template.spec.replicatedJobs[0].template.spec.template.spec")
    ]
    assert "TrainJob 'llama-ft' sets none either" in found[0][3]


def test_a_runtime_alone_or_with_a_trainjob_that_sets_the_priority_is_left_to_it(tmp_path):
    assert _trainer_findings(tmp_path, None) == []
    kueue = "  labels:\n    kueue.x-k8s.io/priority-class: research\n"
    assert _trainer_findings(tmp_path, _TRAINJOB.format(labels=kueue)) == []


def test_a_priority_class_in_runtime_patches_is_dropped_so_the_finding_stays(tmp_path):
    # Trainer's PodSpecPatch has no priorityClassName: the API server prunes it, the pods get none.
    patched = _TRAINJOB.format(labels="") + (
        "  runtimePatches:\n    - manager: team\n      trainingRuntimeSpec:\n        template:\n          spec:\n"
        "            replicatedJobs:\n              - name: node\n                template:\n                  spec:\n"
        "                    template:\n                      spec:\n                        priorityClassName: research\n"
    )
    found = _trainer_findings(tmp_path, patched)
    assert [f[:3] for f in found] == [
        ("runtime.yaml", 14, "spec.template.spec.replicatedJobs[0].template.spec.template.spec")
    ]
    assert "the priorityClassName in its runtime patches is not a field Trainer patches" in found[0][4]


def test_a_priority_class_without_a_value_is_worth_zero():
    """PriorityClass.value left out is 0 (ValidatePriorityClass only bounds it): a Job at such a class can be
    preempted by a higher one, and no finding says the class is invalid."""
    manifest = """\
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: batch-default}
    description: the default priority, written out
    ---
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: serving}
    value: 1000
    ---
    apiVersion: batch/v1
    kind: Job
    metadata: {name: eval}
    spec:
      template:
        spec:
          priorityClassName: batch-default
          restartPolicy: Never
          containers: [{name: c, image: x}]
    """
    [(rule, line, detail)] = lint(manifest)
    assert (rule, line) == ("preemption-consumes-backoff", 14)
    assert "runs at PriorityClass 'batch-default' (value 0), below PriorityClass 'serving' (value 1000)" in detail


def test_a_preemptible_job_names_the_nearest_class_above_it_that_may_preempt(tmp_path):
    # GKE's mix-train-and-inference sample: the fine-tuning Job at low-priority-preempting (20) is
    # preempted by the sample's own high-priority-preempting (30); a far higher class elsewhere in the
    # run (another project's 100000), and one above it that never preempts, are not the ones named
    classes = """\
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: low-priority-preempting}
    value: 20
    ---
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: default-priority-nonpreempting}
    value: 25
    preemptionPolicy: Never
    ---
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: high-priority-preempting}
    value: 30
    """
    other = """\
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: high-priority}
    value: 100000
    """
    for name, text in {
        "classes.yaml": classes,
        "other.yaml": other,
        "job.yaml": job("low-priority-preempting"),
    }.items():
        (tmp_path / name).write_text(dedent(text))
    result, _ = run([str(tmp_path)], RunInputs(_config(None), RULES, jobs=1))
    [f] = [f for f in result.findings if f.rule == "preemption-consumes-backoff"]
    assert (Path(f.file).name, f.line, f.severity) == ("job.yaml", 6, "warning")
    assert f.detail.startswith(
        "Job/j runs at PriorityClass 'low-priority-preempting' (value 20), below PriorityClass "
        "'high-priority-preempting' (value 30, from "
    )


def test_workload_priority_classes_of_another_project_in_the_tree_do_not_speak_for_a_workload(tmp_path):
    # AWS's HyperPod task-governance samples name classes the HyperPod cluster policy makes
    # (training-priority); Kueue's own samples, linted in a sibling directory, define others: they say
    # nothing of the AWS job. Classes in the job's directory or above it, or the cluster's, do.
    classes = (
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: research}\nvalue: 100\n"
    )
    job = dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: train
          labels:
            kueue.x-k8s.io/priority-class: training-priority
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c, image: x}]
        """)
    for d in ("kueue-samples", "aws/jobs"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "kueue-samples" / "classes.yaml").write_text(classes)
    (tmp_path / "aws" / "jobs" / "job.yaml").write_text(job)

    def unknown(*paths: str, context: str | None = None) -> list[tuple[str, int, str]]:
        config = _config(None)
        inputs = RunInputs(config, RULES, jobs=1, context=(context,) if context else ())
        result, _ = run([str(tmp_path / p) for p in paths], inputs)
        return [(Path(f.file).name, f.line, f.severity) for f in result.findings if f.rule == "unknown-priority-class"]

    assert unknown("kueue-samples", "aws") == []
    # the same classes in the repository above the job, or as the cluster's: the name is unknown
    (tmp_path / "aws" / "classes.yaml").write_text(classes)
    assert unknown("kueue-samples", "aws") == [("job.yaml", 6, "error")]
    (tmp_path / "aws" / "classes.yaml").unlink()
    assert unknown("aws", context=str(tmp_path / "kueue-samples" / "classes.yaml")) == [("job.yaml", 6, "error")]
