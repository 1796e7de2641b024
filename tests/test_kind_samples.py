"""One test per platform kind with its controller project's own sample (fixtures/controllers/<family>/,
sources in PROVENANCE.md and on each file's first line): the findings, with their rule, line,
column and severity, a user would defend to the sample's author, or none for a right-sized
sample, with the pods it was judged on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kubelint_ml.input.loader import load
from kubelint_ml.input.objects import unpack
from kubelint_ml.input.workloads import pod_templates

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "controllers"


def found(name: str) -> list[tuple[str, int, int, str, str]]:
    """(rule, line, column, severity, path) of ``kubelint-ml check`` on one sample, sorted."""
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(SAMPLES / name), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode in (0, 1), r.stderr
    return sorted(
        (f["rule"], f["line"], f["column"], f["severity"], f["path"]) for f in json.loads(r.stdout)["findings"]
    )


def pods(name: str) -> list[tuple[str, str, int | None, list]]:
    """(kind, role, replicas, [(container, resources)]) of every pod the sample's objects make."""
    out = []
    for doc in load((SAMPLES / name).read_bytes()).documents:
        for obj in unpack(doc, name).objects:
            for tpl in pod_templates(obj):
                containers = [(c.data.get("name"), c.data.get("resources")) for c in tpl.containers]
                out.append((obj.kind, tpl.role, tpl.replicas, containers))
    return out


def best_effort(spec: str, spec_line: int, container: str, container_line: int, column: int) -> list[tuple]:
    """A container with no resources in a pod that has no other: BestEffort, no memory limit or request."""
    return [
        ("besteffort-qos", spec_line, column, "warning", spec),
        ("missing-memory-limit", container_line, column, "warning", container),
        ("missing-memory-request", container_line, column, "warning", container),
    ]


# --- KServe ------------------------------------------------------------------------------


def test_kserve_inference_service_gpu_predictor() -> None:
    """A GPU predictor with a 4Gi memory limit: KServe's defaults give it a request of 1 cpu and 2Gi
    (and a 1 cpu limit), so it is not BestEffort and has its limit; only its priority is missing."""
    assert found("kserve/inferenceservice-torchserve-gpu.yaml") == [
        ("missing-priority-class", 7, 3, "warning", "spec.predictor"),
    ]
    [(kind, role, replicas, [(name, res)])] = pods("kserve/inferenceservice-torchserve-gpu.yaml")
    assert (kind, role, replicas, name) == ("InferenceService", "predictor", 1, "kserve-container")
    assert res == {
        "limits": {"memory": "4Gi", "nvidia.com/gpu": "1", "cpu": "1"},
        "requests": {"cpu": "1", "memory": "2Gi"},
    }


def test_kserve_cluster_serving_runtime_is_right_sized() -> None:
    """KServe's Hugging Face runtime: 1 cpu and 2Gi as request and limit, its Memory /dev/shm bounded
    by that limit; a shared definition, so its priority is the InferenceService's."""
    assert found("kserve/clusterservingruntime-huggingfaceserver.yaml") == []
    [(kind, _, _, [(name, res)])] = pods("kserve/clusterservingruntime-huggingfaceserver.yaml")
    assert (kind, name) == ("ClusterServingRuntime", "kserve-container")
    assert res == {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}


def test_kserve_llm_inference_service_config_preset_is_left_to_its_services() -> None:
    """KServe's own preset (Go templates inside its strings are valid YAML): it sets no resources
    and no priority, which the services built over it set; judged alone it gets nothing."""
    assert found("kserve/llminferenceserviceconfig-llm-template.yaml") == []
    [(kind, _, _, [(name, res)])] = pods("kserve/llminferenceserviceconfig-llm-template.yaml")
    assert (kind, name, res) == ("LLMInferenceServiceConfig", "main", None)


# --- Argo Workflows ------------------------------------------------------------------------


def test_argo_cron_workflow() -> None:
    assert found("argo/cron-workflow.yaml") == best_effort(
        "spec.workflowSpec.templates[0]", 18, "spec.workflowSpec.templates[0].container", 19, 9
    )


def test_argo_workflow_pod_level_resources() -> None:
    """Argo's podResources are each pod's pod-level resources: the pod is bounded, no finding."""
    assert found("argo/pod-resources.yaml") == []
    [(kind, role, _, [(name, res)])] = pods("argo/pod-resources.yaml")
    assert (kind, role, name, res) == ("Workflow", "hello-world", "main", None)


def test_argo_workflow_template_is_judged_as_written() -> None:
    """A WorkflowTemplate's containers are the pods' (the Workflows that run it do not set their
    resources): one without resources is BestEffort, as in a Workflow."""
    assert found("argo/workflow-template-templates.yaml") == best_effort(
        "spec.templates[0]", 9, "spec.templates[0].container", 13, 5
    )


def test_argo_cluster_workflow_template_is_judged_as_written() -> None:
    assert found("argo/clustertemplates.yaml") == best_effort(
        "spec.templates[0]", 8, "spec.templates[0].container", 12, 5
    )


# --- Tekton -------------------------------------------------------------------------------


def test_tekton_task_run_with_a_sidecar() -> None:
    """The docker client step has no resources; the dind sidecar requests 512Mi with no limit; the
    certificates' emptyDir is unbounded disk."""
    assert found("tekton/taskrun-dind-sidecar.yaml") == [
        ("emptydir-no-size-limit", 78, 7, "warning", "spec.taskSpec.volumes[0].emptyDir"),
        ("missing-ephemeral-storage-request", 9, 7, "info", "spec.taskSpec.steps[0]"),
        ("missing-memory-limit", 9, 7, "warning", "spec.taskSpec.steps[0]"),
        ("missing-memory-limit", 49, 7, "warning", "spec.taskSpec.sidecars[0].computeResources"),
        ("missing-memory-request", 9, 7, "warning", "spec.taskSpec.steps[0]"),
    ]


def test_tekton_tasks_pipeline_and_pipeline_run() -> None:
    """Two Tasks whose steps set no resources are BestEffort pods; the Pipeline runs them by
    taskRef and the PipelineRun by pipelineRef, so neither has a pod of its own."""
    assert found("tekton/pipelinerun-4808-regression.yaml") == [
        ("besteffort-qos", 7, 1, "warning", "spec"),
        ("besteffort-qos", 28, 1, "warning", "spec"),
        ("missing-memory-limit", 14, 7, "warning", "spec.steps[0]"),
        ("missing-memory-limit", 42, 7, "warning", "spec.steps[0]"),
        ("missing-memory-request", 14, 7, "warning", "spec.steps[0]"),
        ("missing-memory-request", 42, 7, "warning", "spec.steps[0]"),
    ]
    assert [(kind, name) for kind, _, _, [(name, _)] in pods("tekton/pipelinerun-4808-regression.yaml")] == [
        ("Task", "print-result"),
        ("Task", "gen-result"),
    ]


# --- Seldon, Spark, AIBrix --------------------------------------------------------------------


def test_seldon_deployment_sized_component() -> None:
    assert found("seldon/model-resources.yaml") == []
    assert pods("seldon/model-resources.yaml") == [
        (
            "SeldonDeployment",
            "example[0]",
            1,
            [("classifier", {"requests": {"memory": "1Gi", "cpu": 1}, "limits": {"memory": "1Gi", "cpu": 2}})],
        )
    ]


SPARK_PI_PODS = [
    ("spark-kubernetes-driver", {"requests": {"cpu": "1", "memory": "896Mi"}, "limits": {"memory": "896Mi"}}),
    ("executor", {"requests": {"cpu": "1", "memory": "896Mi"}, "limits": {"memory": "896Mi"}}),
]


def test_spark_application_resources_the_operator_computes() -> None:
    """`memory: 512m` with the 384Mi minimum overhead is an 896Mi request and limit, `cores: 1` the cpu
    request: right-sized, no finding."""
    assert found("spark/spark-pi.yaml") == []
    got = pods("spark/spark-pi.yaml")
    assert [(k, role, n) for k, role, n, _ in got] == [
        ("SparkApplication", "driver", 1),
        ("SparkApplication", "executor", 1),
    ]
    assert [c for *_, [c] in got] == SPARK_PI_PODS


def test_scheduled_spark_application_is_its_template() -> None:
    assert found("spark/spark-pi-scheduled.yaml") == []
    got = pods("spark/spark-pi-scheduled.yaml")
    assert [(k, role) for k, role, _, _ in got] == [
        ("ScheduledSparkApplication", "driver"),
        ("ScheduledSparkApplication", "executor"),
    ]
    assert [c for *_, [c] in got] == SPARK_PI_PODS


def test_aibrix_role_set() -> None:
    """The sample's prefill role runs vLLM with no resources at all."""
    assert found("aibrix/roleset.yaml") == [
        ("besteffort-qos", 18, 7, "warning", "spec.roles[0].template.spec"),
        ("missing-memory-limit", 20, 11, "warning", "spec.roles[0].template.spec.containers[0]"),
        ("missing-memory-request", 20, 11, "warning", "spec.roles[0].template.spec.containers[0]"),
    ]
    assert [(k, role, n) for k, role, n, _ in pods("aibrix/roleset.yaml")] == [("RoleSet", "prefill", 1)]


def test_aibrix_ray_cluster_replica_set() -> None:
    """Head and worker group sized 1 cpu and 1024Mi, request equal to limit: no finding."""
    assert found("aibrix/rayclusterreplicaset.yaml") == []
    assert [(k, role, n) for k, role, n, _ in pods("aibrix/rayclusterreplicaset.yaml")] == [
        ("RayClusterReplicaSet", "head", 1),
        ("RayClusterReplicaSet", "small-group", 1),
    ]


# --- NVIDIA Dynamo -----------------------------------------------------------------------------


def test_dynamo_component_deployment_minimal_example() -> None:
    """A standalone v1beta1 DCD: its podTemplate's `main` sets no resources (the operator adds command,
    env, ports and probes, not resources), and gets the operator's 8Gi Memory /dev/shm."""
    spec = "spec.podTemplate.spec"
    assert found("dynamo/v1beta1-dcd-minimal.yaml") == [
        ("besteffort-qos", 11, 5, "warning", spec),
        ("missing-memory-limit", 13, 11, "warning", spec + ".containers[0]"),
        ("missing-memory-request", 13, 11, "warning", spec + ".containers[0]"),
    ]
    [(kind, _, replicas, [(name, res)])] = pods("dynamo/v1beta1-dcd-minimal.yaml")
    assert (kind, replicas, name, res) == ("DynamoComponentDeployment", 1, "main", None)


# --- Kubernetes' own controllers (kubernetes/website examples) ---------------------------------


def test_kubernetes_daemonset_sized_fluentd() -> None:
    """A memory request equal to its limit and a cpu request: Burstable but bounded, no finding; a
    DaemonSet's pods are one per node, not counted."""
    assert found("kubernetes/daemonset.yaml") == []
    [(kind, _, replicas, [(name, res)])] = pods("kubernetes/daemonset.yaml")
    assert (kind, replicas, name) == ("DaemonSet", None, "fluentd-elasticsearch")
    assert res == {"limits": {"memory": "200Mi"}, "requests": {"cpu": "100m", "memory": "200Mi"}}


def test_kubernetes_replicaset_without_resources() -> None:
    assert found("kubernetes/replicaset-frontend.yaml") == [
        ("besteffort-qos", 19, 5, "warning", "spec.template.spec"),
        ("missing-memory-limit", 21, 9, "warning", "spec.template.spec.containers[0]"),
        ("missing-memory-request", 21, 9, "warning", "spec.template.spec.containers[0]"),
    ]
    assert [(k, n) for k, _, n, _ in pods("kubernetes/replicaset-frontend.yaml")] == [("ReplicaSet", 3)]


def test_kubernetes_replication_controller_in_flow_style() -> None:
    """The sample is JSON-like flow YAML: findings are at its keys and brackets all the same."""
    assert found("kubernetes/replication.yaml") == [
        ("besteffort-qos", 21, 7, "warning", "spec.template.spec"),
        ("missing-memory-limit", 22, 22, "warning", "spec.template.spec.containers[0]"),
        ("missing-memory-request", 22, 22, "warning", "spec.template.spec.containers[0]"),
    ]
    assert [(k, n) for k, _, n, _ in pods("kubernetes/replication.yaml")] == [("ReplicationController", 3)]


def test_kubernetes_statefulset_without_resources() -> None:
    """The headless Service is not a workload; the StatefulSet's nginx sets no resources."""
    assert found("kubernetes/statefulset.yaml") == [
        ("besteffort-qos", 31, 5, "warning", "spec.template.spec"),
        ("missing-memory-limit", 34, 9, "warning", "spec.template.spec.containers[0]"),
        ("missing-memory-request", 34, 9, "warning", "spec.template.spec.containers[0]"),
    ]
    assert [(k, n) for k, _, n, _ in pods("kubernetes/statefulset.yaml")] == [("StatefulSet", 3)]


def test_kubernetes_cronjob_without_resources_or_priority() -> None:
    """A batch workload: BestEffort, and no priority class (restartPolicy OnFailure is valid)."""
    spec = "spec.jobTemplate.spec.template.spec"
    assert found("kubernetes/cronjob.yaml") == [
        ("besteffort-qos", 11, 9, "warning", spec),
        ("missing-memory-limit", 13, 13, "warning", spec + ".containers[0]"),
        ("missing-memory-request", 13, 13, "warning", spec + ".containers[0]"),
        ("missing-priority-class", 11, 9, "warning", spec),
    ]


# --- The earlier samples' severities -------------------------------------------------------------

# tests/test_controller_samples.py asserts each earlier sample's findings with their lines; here, their
# columns and severities: a GPU (or TPU) pod's BestEffort QoS and missing memory limit are errors, an
# unbounded Memory emptyDir always; a missing memory request or priority class a warning.
EARLIER_SAMPLES = {
    "kserve/llm-inference-service-dp-ep-deepseek-r1-gpu-deepep-ht.yaml": [
        ("missing-priority-class", 26, 3, "warning"),
        ("missing-priority-class", 109, 3, "warning"),
    ],
    "kserve/llm-inference-service-managed-dra-minimal.yaml": [
        ("missing-priority-class", 18, 3, "warning"),
    ],
    "kserve/llm-inference-service-pd-qwen2-7b-gpu.yaml": [
        ("missing-priority-class", 19, 3, "warning"),
        ("missing-priority-class", 76, 5, "warning"),
    ],
    "kserve/llm-inference-service-qwen2-7b-gpu.yaml": [
        ("missing-priority-class", 16, 3, "warning"),
    ],
    "dynamo/v1alpha1-sglang-wideep-tep16p-dep16d-disagg.yaml": [
        ("besteffort-qos", 11, 5, "warning"),
        ("besteffort-qos", 25, 5, "error"),
        ("besteffort-qos", 69, 5, "error"),
        ("missing-memory-limit", 11, 5, "warning"),
        ("missing-memory-limit", 32, 9, "error"),
        ("missing-memory-limit", 76, 9, "error"),
        ("missing-memory-request", 11, 5, "warning"),
        ("missing-memory-request", 31, 7, "warning"),
        ("missing-memory-request", 75, 7, "warning"),
        ("missing-priority-class", 11, 5, "warning"),
        ("missing-priority-class", 25, 5, "warning"),
        ("missing-priority-class", 69, 5, "warning"),
    ],
    "dynamo/v1beta1-agg.yaml": [
        ("besteffort-qos", 13, 7, "warning"),
        ("besteffort-qos", 24, 7, "error"),
        ("missing-memory-limit", 15, 11, "warning"),
        ("missing-memory-limit", 39, 13, "error"),
        ("missing-memory-request", 15, 11, "warning"),
        ("missing-memory-request", 41, 13, "warning"),
        ("missing-priority-class", 13, 7, "warning"),
        ("missing-priority-class", 24, 7, "warning"),
    ],
    "dynamo/v1beta1-disagg-multinode.yaml": [
        ("besteffort-qos", 13, 7, "warning"),
        ("besteffort-qos", 31, 7, "error"),
        ("besteffort-qos", 61, 7, "error"),
        ("missing-memory-limit", 15, 11, "warning"),
        ("missing-memory-limit", 52, 13, "error"),
        ("missing-memory-limit", 83, 13, "error"),
        ("missing-memory-request", 15, 11, "warning"),
        ("missing-memory-request", 51, 11, "warning"),
        ("missing-memory-request", 82, 11, "warning"),
        ("missing-priority-class", 13, 7, "warning"),
        ("missing-priority-class", 31, 7, "warning"),
        ("missing-priority-class", 61, 7, "warning"),
    ],
    "nim/standalone-basic-llm.yaml": [
        ("besteffort-qos", 32, 1, "error"),
        ("emptydir-memory-unbounded", 40, 3, "error"),
        ("missing-memory-limit", 46, 5, "error"),
        ("missing-memory-request", 45, 3, "warning"),
        ("missing-priority-class", 32, 1, "warning"),
    ],
    "nim/advanced-multi-node-multi-node-nimservice.yaml": [
        ("besteffort-qos", 30, 1, "error"),
        ("emptydir-memory-unbounded", 77, 3, "error"),
        ("missing-memory-limit", 82, 5, "error"),
        ("missing-memory-request", 84, 5, "warning"),
        ("missing-priority-class", 30, 1, "warning"),
    ],
    "nim/rag-rag-pipeline.yaml": [
        ("besteffort-qos", 11, 7, "error"),
        ("besteffort-qos", 33, 7, "error"),
        ("besteffort-qos", 57, 7, "error"),
        ("emptydir-memory-unbounded", 19, 9, "error"),
        ("emptydir-memory-unbounded", 41, 9, "error"),
        ("emptydir-memory-unbounded", 65, 9, "error"),
        ("missing-memory-limit", 25, 11, "error"),
        ("missing-memory-limit", 47, 11, "error"),
        ("missing-memory-limit", 71, 11, "error"),
        ("missing-memory-request", 24, 9, "warning"),
        ("missing-memory-request", 46, 9, "warning"),
        ("missing-memory-request", 70, 9, "warning"),
        ("missing-priority-class", 11, 7, "warning"),
        ("missing-priority-class", 33, 7, "warning"),
        ("missing-priority-class", 57, 7, "warning"),
    ],
    "kubeai/llama-3.1-8b-instruct-fp8-l4.yaml": [
        ("emptydir-memory-unbounded", 17, 3, "error"),
        ("missing-memory-limit", 17, 3, "error"),
        ("missing-priority-class", 7, 1, "warning"),
    ],
    "kubeai/llama-3.1-70b-instruct-fp8-mi300x.yaml": [
        ("besteffort-qos", 7, 1, "error"),
        ("emptydir-memory-unbounded", 28, 3, "error"),
        ("missing-memory-limit", 28, 3, "error"),
        ("missing-memory-request", 28, 3, "warning"),
        ("missing-priority-class", 7, 1, "warning"),
    ],
    "kubeai/gemma-2b-it-tpu.yaml": [
        ("besteffort-qos", 7, 1, "error"),
        ("emptydir-memory-unbounded", 14, 3, "error"),
        ("missing-memory-limit", 14, 3, "error"),
        ("missing-memory-request", 14, 3, "warning"),
        ("missing-priority-class", 7, 1, "warning"),
    ],
    "aibrix/stormservice-vllm-1p1d.yaml": [
        ("besteffort-qos", 38, 13, "error"),
        ("besteffort-qos", 117, 13, "error"),
        ("emptydir-memory-unbounded", 96, 19, "error"),
        ("emptydir-memory-unbounded", 175, 19, "error"),
        ("missing-memory-limit", 84, 21, "error"),
        ("missing-memory-limit", 163, 21, "error"),
        ("missing-memory-request", 83, 19, "warning"),
        ("missing-memory-request", 162, 19, "warning"),
        ("missing-priority-class", 38, 13, "warning"),
        ("missing-priority-class", 117, 13, "warning"),
    ],
    "aibrix/rayclusterfleet.yaml": [
        ("missing-memory-limit", 50, 19, "error"),
        ("missing-memory-request", 53, 19, "warning"),
        ("missing-priority-class", 31, 11, "warning"),
    ],
}


def test_earlier_samples_findings_have_their_columns_and_severities() -> None:
    for name, expected in EARLIER_SAMPLES.items():
        got = {f[:4] for f in found(name)}
        assert set(expected) <= got, (name, sorted(set(expected) - got))


def test_kubernetes_job_without_resources_or_priority() -> None:
    """Kubernetes' pi Job: BestEffort with no priority class; backoffLimit 4 and restartPolicy Never
    are valid."""
    spec = "spec.template.spec"
    assert found("kubernetes/job.yaml") == [
        ("besteffort-qos", 8, 5, "warning", spec),
        ("missing-memory-limit", 10, 9, "warning", spec + ".containers[0]"),
        ("missing-memory-request", 10, 9, "warning", spec + ".containers[0]"),
        ("missing-priority-class", 8, 5, "warning", spec),
    ]
