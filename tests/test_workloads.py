"""Pod templates are found in every kind, with path, role and count."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelint_ml.input.loader import load, render_path
from kubelint_ml.input.objects import unpack
from kubelint_ml.input.workloads import pod_templates

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "workloads" / "kinds.yaml"


def _templates(text: bytes):
    out = []
    for doc in load(text).documents:
        for obj in unpack(doc, "x.yaml").objects:
            for t in pod_templates(obj):
                out.append(
                    (obj.kind, obj.ref.name, t.role, render_path(t.path), t.replicas, [c.name for c in t.containers], t)
                )
    return out


def test_every_kind_of_the_fixture():
    got = [row[:6] for row in _templates(FIXTURE.read_bytes())]
    assert got == [
        ("Pod", "p", "", "", 1, ["c"]),
        ("CronJob", "cj", "", "spec.jobTemplate.spec.template", 3, ["c"]),
        ("TFJob", "tf", "Chief", "spec.tfReplicaSpecs.Chief.template", 1, ["tensorflow"]),
        ("TFJob", "tf", "PS", "spec.tfReplicaSpecs.PS.template", 2, ["tensorflow"]),
        ("TFJob", "tf", "Worker", "spec.tfReplicaSpecs.Worker.template", 4, ["tensorflow"]),
        ("MPIJob", "mpi", "Launcher", "spec.mpiReplicaSpecs.Launcher.template", 1, ["launcher"]),
        ("MPIJob", "mpi", "Worker", "spec.mpiReplicaSpecs.Worker.template", 0, ["worker"]),
        ("JobSet", "js", "workers", "spec.replicatedJobs[0].template.spec.template", 8, ["c"]),
        ("RayJob", "rj", "head", "spec.rayClusterSpec.headGroupSpec.template", 1, ["head"]),
        ("RayJob", "rj", "gpu", "spec.rayClusterSpec.workerGroupSpecs[0].template", 4, ["w"]),
        ("RayJob", "rj", "", "spec.submitterPodTemplate", 1, ["submit"]),
        ("Job", "vj", "ps", "spec.tasks[0].template", 1, ["c"]),
        ("Job", "vj", "worker", "spec.tasks[1].template", 3, ["c"]),
        (
            "ClusterTrainingRuntime",
            "torch",
            "node",
            "spec.template.spec.replicatedJobs[0].template.spec.template",
            1,
            ["node"],
        ),
        ("LeaderWorkerSet", "lws", "leader", "spec.leaderWorkerTemplate.leaderTemplate", 2, ["leader"]),
        ("LeaderWorkerSet", "lws", "worker", "spec.leaderWorkerTemplate.workerTemplate", 6, ["worker"]),
        ("SomethingNew", "crd", "spec.runner.podTemplate", "spec.runner.podTemplate", 5, ["c"]),
        ("Deployment", "d", "", "spec.template", 3, ["c"]),
    ]


def test_list_items_keep_positions_relative_to_the_document():
    rows = _templates(FIXTURE.read_bytes())
    deploy = rows[-1][-1]
    assert deploy.obj.base == ("items", 0)
    assert deploy.containers[0].path == ("spec", "template", "spec", "containers", 0)


def test_init_containers_and_sidecars_are_told_apart():
    text = b"""apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
    - {name: setup, image: x}
    - {name: proxy, image: x, restartPolicy: Always}
  containers:
    - {name: app, image: x}
"""
    (tpl,) = [row[-1] for row in _templates(text)]
    assert [(c.role, c.name) for c in tpl.all_containers] == [
        ("initContainer", "setup"),
        ("sidecar", "proxy"),
        ("container", "app"),
    ]


@pytest.mark.parametrize(
    "spec, path, message",
    [
        ("containers: 3", "spec.containers", "containers must be a list, found integer"),
        (
            "containers: [{name: c, resources: big}]",
            "spec.containers[0].resources",
            "container 'c' resources must be a mapping, found string",
        ),
        (
            "containers: [{name: c, resources: {limits: [1]}}]",
            "spec.containers[0].resources.limits",
            "container 'c' resources.limits must be a mapping, found list",
        ),
        ("containers: [7]", "spec.containers[0]", "containers[0] must be a mapping, found integer"),
        ("volumes: {a: 1}\n  containers: []", "spec.volumes", "volumes must be a list, found mapping"),
        ("nodeSelector: [a]\n  containers: []", "spec.nodeSelector", "nodeSelector must be a mapping, found list"),
    ],
)
def test_wrong_types_are_shape_problems(spec, path, message):
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  {spec}\n".encode()
    (tpl,) = [row[-1] for row in _templates(text)]
    assert tpl.broken
    assert [(render_path(p.path), p.message) for p in tpl.problems] == [(path, message)]


def test_kinds_without_templates_and_unknown_kinds_without_one():
    text = b"""apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {spec: x}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec: {namespaceSelector: {}}
"""
    assert _templates(text) == []


def test_corpus_kinds_are_all_found(corpus):
    kinds = {}
    for f in sorted(corpus.rglob("*.yaml")):
        for row in _templates(f.read_bytes()):
            kinds[row[0]] = kinds.get(row[0], 0) + 1
            assert not row[-1].broken, (f, row[-1].problems)
    for kind in (
        "Pod",
        "Job",
        "JobSet",
        "PyTorchJob",
        "MPIJob",
        "RayCluster",
        "RayJob",
        "RayService",
        "TFJob",
        "XGBoostJob",
        "PaddleJob",
        "JAXJob",
        "MXJob",
        "LeaderWorkerSet",
        "ClusterTrainingRuntime",
        "TrainingRuntime",
        "Deployment",
        "StatefulSet",
        "CronJob",
        "AppWrapper",
        "JobTemplate",
    ):
        assert kinds.get(kind), kind


TRAINER_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-with-init
spec:
  template:
    spec:
      replicatedJobs:
        - name: dataset-initializer
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: dataset-initializer
                      image: init
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: torch
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: mpi
spec:
  template:
    spec:
      replicatedJobs:
        - name: launcher
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: mpi
"""


def test_trainer_runtime_resources_come_from_the_trainjob():
    """The trainer job of a Kubeflow Trainer runtime gets its resources from each TrainJob
    (spec.trainer.resourcesPerNode): only the initializer, which gets none, is judged."""
    from kubelint_ml.engine.rulefile import load_builtin_rules
    from kubelint_ml.run.lint import lint_text

    rules = [
        r for r in load_builtin_rules() if r.id in ("besteffort-qos", "missing-memory-limit", "missing-memory-request")
    ]
    found = sorted((f.rule, f.line, f.path) for f in lint_text(TRAINER_RUNTIME.encode(), rules, display="rt.yaml"))
    assert found == [
        ("besteffort-qos", 13, "spec.template.spec.replicatedJobs[0].template.spec.template.spec"),
        ("missing-memory-limit", 15, "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0]"),
        (
            "missing-memory-request",
            15,
            "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0]",
        ),
    ]


GPU_POD = """      spec:
        containers:
          - name: worker
            image: horovod
            resources:
              limits: {nvidia.com/gpu: 1}
"""


def _kubeflow(api: str, kind: str, body: str) -> bytes:
    return f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: j}}\nspec:\n{body}".encode()


def _replicas(field: str, role: str, count: int | None) -> str:
    """``spec.<field>.<role>`` with a replica count and the GPU pod template."""
    head = f"  {field}:\n    {role}:\n" + (f"      replicas: {count}\n" if count is not None else "")
    return head + "      template:\n" + GPU_POD.replace("\n", "\n  ").replace("      spec:", "        spec:", 1)


@pytest.mark.parametrize(
    "api, kind, body, path, role, replicas",
    [
        # The first MPIJob layout: one template for every worker, no replica specs.
        (
            "kubeflow.org/v1alpha1",
            "MPIJob",
            "  replicas: 4\n  template:\n" + GPU_POD.replace("      ", "    ", 1),
            ("spec", "template"),
            "spec.template",
            4,
        ),
        *[
            (
                f"kubeflow.org/{v}",
                "MPIJob",
                _replicas("mpiReplicaSpecs", "Worker", 2),
                ("spec", "mpiReplicaSpecs", "Worker", "template"),
                "Worker",
                2,
            )
            for v in ("v1alpha2", "v1", "v2beta1")
        ],
        (
            "kubeflow.org/v1",
            "TFJob",
            _replicas("tfReplicaSpecs", "Worker", 3),
            ("spec", "tfReplicaSpecs", "Worker", "template"),
            "Worker",
            3,
        ),
        (
            "kubeflow.org/v1",
            "PyTorchJob",
            _replicas("pytorchReplicaSpecs", "Master", None),
            ("spec", "pytorchReplicaSpecs", "Master", "template"),
            "Master",
            1,
        ),
    ],
)
def test_every_served_kubeflow_layout_has_its_template(api, kind, body, path, role, replicas):
    [(*_, tpl)] = _templates(_kubeflow(api, kind, body))
    assert (tpl.path, tpl.role, tpl.replicas) == (path, role, replicas)
    assert tpl.containers[0].resources["limits"] == {"nvidia.com/gpu": 1}
    assert tpl.found_by_search == (api == "kubeflow.org/v1alpha1")


def test_old_layout_mpijob_is_linted_and_verbose_says_how(tmp_path):
    from click.testing import CliRunner

    from kubelint_ml.cli import main

    doc = _kubeflow(
        "kubeflow.org/v1alpha1", "MPIJob", "  replicas: 2\n  template:\n" + GPU_POD.replace("      ", "    ", 1)
    )
    (tmp_path / "mpi.yaml").write_bytes(doc)
    r = CliRunner().invoke(main, ["check", str(tmp_path / "mpi.yaml"), "-v", "--no-color"])
    assert r.exit_code == 1
    assert "error    missing-memory-limit    container 'worker' has no memory limit (GPU pod)" in r.stdout
    # The detail (under -v) names the template the generic search found.
    assert "MPIJob/j (spec.template): container 'worker' has no memory limit" in r.stdout
    assert (
        "note: " + str(tmp_path / "mpi.yaml") + ": MPIJob/j: no pod template where a kubeflow.org/MPIJob usually "
        "has it; found by the generic search at spec.template (an older layout of the kind?)"
    ) in r.stderr


def test_trainjob_has_no_template_of_its_own_and_verbose_says_so(tmp_path):
    from kubelint_ml.engine.api import Context

    doc = (
        b"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec:\n"
        b"  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 2\n"
        b"    resourcesPerNode: {limits: {nvidia.com/gpu: 8}}\n"
    )
    [obj] = unpack(load(doc).documents[0], "t.yaml").objects
    ctx = Context()
    assert ctx.templates(obj) == []  # its pods come from the runtime's JobSet template


def test_kinds_that_read_as_built_in_ones_are_named_with_their_group():
    from kubelint_ml.findings import ObjectRef

    assert ObjectRef("batch.volcano.sh/v1alpha1", "Job", "ml", "vc").display() == "batch.volcano.sh/Job/ml/vc"
    assert ObjectRef("batch/v1", "Job", "", "j").display() == "Job/j"
    assert ObjectRef("kubeflow.org/v1", "PyTorchJob", "", "p").display() == "PyTorchJob/p"
    assert (
        ObjectRef("scheduling.volcano.sh/v1beta1", "PodGroup", "", "g").display() == "scheduling.volcano.sh/PodGroup/g"
    )
    assert ObjectRef("scheduling.k8s.io/v1", "PriorityClass", "", "h").display() == "PriorityClass/h"
    assert ObjectRef("v1", "Pod", "", "p").display() == "Pod/p"


def test_a_trainjob_asking_for_gpus_is_not_judged_and_says_where_its_pods_come_from():
    from kubelint_ml.engine.rulefile import load_builtin_rules
    from kubelint_ml.run.lint import lint_text

    doc = (
        b"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec:\n"
        b"  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 2\n"
        b"    resourcesPerNode:\n      limits: {nvidia.com/gpu: 8}\n"
    )
    found = [f for f in lint_text(doc, load_builtin_rules()) if f.suppressed is None]
    assert [(f.rule, f.line, f.severity, f.message) for f in found] == [
        (
            "accelerator-workload-not-judged",
            9,
            "info",
            "asks for nvidia.com/gpu but its pods were not judged: made from runtime 'torch-distributed'",
        )
    ]
    assert "spec.runtimeRef.name" in found[0].detail
