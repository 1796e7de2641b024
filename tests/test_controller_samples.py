"""Controller projects' own samples (fixtures/controllers/, sources in PROVENANCE.md): each kind's
pods built as its controller builds them, with the findings, at their lines, a user would defend."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from clirun import check_findings

from kubelint_ml.admission.review import load_policy, review

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "fixtures" / "controllers"


findings = check_findings


def lint(path: Path, *extra: str) -> list[tuple[str, int, str, str]]:
    return sorted((f["rule"], f["line"], f["path"], f["message"]) for f in findings(path, *extra))


def rules(found: list[tuple[str, int, str, str]]) -> list[tuple[str, int, str]]:
    return [(rule, line, path) for rule, line, path, _ in found]


# --- KServe LLMInferenceService --------------------------------------------------------


def test_llm_inference_service_gets_the_presets_image_and_is_judged() -> None:
    found = lint(SAMPLES / "kserve" / "llm-inference-service-qwen2-7b-gpu.yaml")
    # the template's main container has no image: KServe's preset gives it one, so the pod is whole
    assert rules(found) == [("missing-priority-class", 16, "spec.template")]
    assert "kserve-config-llm-template: image ghcr.io/llm-d/llm-d-cuda:v0.9.0" in found[0][3]


def test_llm_inference_service_prefill_and_decode_get_their_own_presets() -> None:
    found = lint(SAMPLES / "kserve" / "llm-inference-service-pd-qwen2-7b-gpu.yaml")
    assert rules(found) == [
        ("missing-priority-class", 19, "spec.template"),
        ("missing-priority-class", 76, "spec.prefill.template"),
    ]
    assert "kserve-config-llm-decode-template" in found[0][3]
    assert "kserve-config-llm-prefill-template" in found[1][3]


def test_llm_inference_service_data_parallel_workers() -> None:
    found = lint(SAMPLES / "kserve" / "llm-inference-service-dp-ep-deepseek-r1-gpu-deepep-ht.yaml")
    assert rules(found) == [
        ("missing-priority-class", 26, "spec.template"),
        ("missing-priority-class", 109, "spec.worker"),
    ]
    assert all("kserve-config-llm-worker-data-parallel" in f[3] for f in found)


def test_managed_dra_annotation_makes_a_gpu_pod(tmp_path: Path) -> None:
    # No GPU in the template: the exp-dra-device-class annotation makes KServe add a claim.
    sample = SAMPLES / "kserve" / "llm-inference-service-managed-dra-minimal.yaml"
    found = lint(sample)
    assert rules(found) == [("missing-priority-class", 18, "spec.template")]
    assert "a DRA claim of device class gpu.nvidia.com" in found[0][3]
    # without it, a CPU pod: the priority rule leaves it alone
    plain = tmp_path / "plain.yaml"
    plain.write_text(sample.read_text().replace("serving.kserve.io/exp-dra-device-class", "example.com/note"))
    assert lint(plain) == []


def test_a_template_whose_containers_are_not_a_list_is_refused_not_judged(tmp_path: Path) -> None:
    # The API server refuses `containers` written as a mapping: a parse-error at it, and the GPU
    # it names is said to be unjudged, as for a Pod (not a preset-only CPU pod judged instead).
    f = tmp_path / "llmisvc.yaml"
    f.write_text(
        "apiVersion: serving.kserve.io/v1alpha1\n"
        "kind: LLMInferenceService\n"
        "metadata:\n"
        "  name: badtype\n"
        "spec:\n"
        "  model:\n"
        "    uri: hf://Qwen/Qwen2.5-7B-Instruct\n"
        "  template:\n"
        "    containers:\n"
        "      name: main\n"
        "      resources:\n"
        "        limits: {nvidia.com/gpu: 1}\n"
    )
    found = lint(f)
    assert rules(found) == [
        ("accelerator-workload-not-judged", 12, 'spec.template.containers.resources.limits["nvidia.com/gpu"]'),
        ("parse-error", 9, "spec.template.containers"),
    ]
    assert "containers must be a list, found mapping" in found[1][3]


# --- NVIDIA Dynamo v1beta1 -----------------------------------------------------------


def test_dynamo_v1beta1_components_are_judged_from_their_pod_templates() -> None:
    found = rules(lint(SAMPLES / "dynamo" / "v1beta1-agg.yaml"))
    worker = "spec.components[1].podTemplate"
    assert ("besteffort-qos", 24, f"{worker}.spec") in found
    assert ("missing-priority-class", 24, f"{worker}.spec") in found
    assert ("missing-memory-limit", 39, f"{worker}.spec.containers[0].resources.limits") in found
    assert ("missing-memory-request", 41, f"{worker}.spec.containers[0].resources.requests") in found
    assert not [f for f in found if f[0] == "accelerator-workload-not-judged"]


def test_dynamo_v1beta1_multinode_workers() -> None:
    found = rules(lint(SAMPLES / "dynamo" / "v1beta1-disagg-multinode.yaml"))
    for line, i in ((31, 1), (61, 2)):
        assert ("missing-priority-class", line, f"spec.components[{i}].podTemplate.spec") in found


def test_dynamo_shared_memory_and_graph_priority(tmp_path: Path) -> None:
    from kubelint_ml.input.loader import load
    from kubelint_ml.input.objects import unpack
    from kubelint_ml.input.workloads import pod_templates

    text = (SAMPLES / "dynamo" / "v1beta1-disagg-multinode.yaml").read_text()
    text = text.replace("spec:\n  components:", "spec:\n  priorityClassName: inference\n  components:", 1)
    text = text.replace("    name: prefill\n", '    name: prefill\n    sharedMemorySize: "0"\n', 1)
    [doc] = load(text.encode()).documents
    [obj] = unpack(doc, "x.yaml").objects
    frontend, decode, prefill = pod_templates(obj)
    assert (decode.role, decode.replicas) == ("decode", 2)  # replicas x multinode.nodeCount
    assert [v.data["emptyDir"] for v in decode.volumes] == [{"medium": "Memory", "sizeLimit": "8Gi"}]
    assert {"name": "shared-memory", "mountPath": "/dev/shm"} in decode.containers[0].data["volumeMounts"]
    assert prefill.volumes == []
    assert decode.spec["priorityClassName"] == "inference"
    assert decode.real_path(decode.spec_path + ("priorityClassName",)) == ("spec", "priorityClassName")
    path = tmp_path / "p.yaml"
    path.write_text(text)
    assert not [f for f in lint(path) if f[0] == "missing-priority-class"]


def test_dynamo_v1alpha1_multinode_wide_ep_recipe(tmp_path: Path) -> None:
    sample = SAMPLES / "dynamo" / "v1alpha1-sglang-wideep-tep16p-dep16d-disagg.yaml"
    found = lint(sample)
    assert rules(found) == [
        ("besteffort-qos", 11, "spec.services.Frontend"),
        ("besteffort-qos", 25, "spec.services.decode"),
        ("besteffort-qos", 69, "spec.services.prefill"),
        ("missing-memory-limit", 11, "spec.services.Frontend"),
        ("missing-memory-limit", 32, "spec.services.decode.resources.limits"),
        ("missing-memory-limit", 76, "spec.services.prefill.resources.limits"),
        ("missing-memory-request", 11, "spec.services.Frontend"),
        ("missing-memory-request", 31, "spec.services.decode.resources"),
        ("missing-memory-request", 75, "spec.services.prefill.resources"),
        ("missing-priority-class", 11, "spec.services.Frontend"),
        ("missing-priority-class", 25, "spec.services.decode"),
        ("missing-priority-class", 69, "spec.services.prefill"),
    ]
    # a v1alpha1 service has no priorityClassName: the pod's own fields are extraPodSpec's
    details = [f["detail"] for f in findings(sample) if f["rule"] == "missing-priority-class"]
    assert "set spec.services.decode.extraPodSpec.priorityClassName to" in details[1]
    # 16 tensor ranks over 2 nodes of 8 GPUs: 8 schedulers share each pod's /dev/shm (SGLang's DP
    # attention ranks are the tensor group's own); the operator's 80Gi holds them, 64Mi would not
    small = tmp_path / "small.yaml"
    small.write_text(sample.read_text().replace("size: 80Gi", "size: 64Mi"))
    shm = [(line, message) for rule, line, _, message in lint(small) if rule == "shm-too-small-for-workers"]
    assert shm == [  # at sharedMemory.size, the field that sizes the operator's /dev/shm (and that a fix sets)
        (39, "container 'main' runs 8 processes (--tp 16) on a 64Mi /dev/shm"),
        (83, "container 'main' runs 8 processes (--tp 16) on a 64Mi /dev/shm"),
    ]


def test_dynamo_v1alpha1_component_deployment_is_a_service(tmp_path: Path) -> None:
    # written from the CRD (deploy/operator/api/v1alpha1/dynamocomponentdeployment_types.go): a
    # DynamoComponentDeployment's spec is a graph service's fields, its pod built the same way
    path = tmp_path / "dcd.yaml"
    path.write_text(
        "apiVersion: nvidia.com/v1alpha1\n"
        "kind: DynamoComponentDeployment\n"
        "metadata:\n"
        "  name: vllm-worker\n"
        "spec:\n"
        "  backendFramework: vllm\n"
        "  serviceName: VllmDecodeWorker\n"
        "  componentType: worker\n"
        "  resources:\n"
        "    limits:\n"
        '      gpu: "2"\n'
        "  extraPodSpec:\n"
        "    mainContainer:\n"
        "      image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0\n"
    )
    assert rules(lint(path)) == [
        ("besteffort-qos", 5, "spec"),
        ("missing-memory-limit", 10, "spec.resources.limits"),
        ("missing-memory-request", 9, "spec.resources"),
        ("missing-priority-class", 5, "spec"),
    ]
    [detail] = [f["detail"] for f in findings(path) if f["rule"] == "missing-priority-class"]
    assert "set spec.extraPodSpec.priorityClassName to" in detail


# --- NVIDIA NIM Operator -----------------------------------------------------------------


def test_nim_service_basic_sample() -> None:
    found = rules(lint(SAMPLES / "nim" / "standalone-basic-llm.yaml"))
    assert found == [
        ("besteffort-qos", 32, "spec"),
        # dshm: no sharedMemorySizeLimit, no memory limit; at storage, where the size goes
        ("emptydir-memory-unbounded", 40, "spec.storage"),
        ("missing-memory-limit", 46, "spec.resources.limits"),
        ("missing-memory-request", 45, "spec.resources"),
        ("missing-priority-class", 32, "spec"),
    ]


def test_nim_service_dra_resources_make_an_accelerator_pod() -> None:
    found = lint(SAMPLES / "nim" / "advanced-dra-manual-llm.yaml")
    assert ("missing-memory-limit", 49, "spec") in rules(found)
    # the claim template in the file asks for devices of class gpu.nvidia.com: GPUs
    assert all("(GPU pod)" in m for r, _, _, m in found if r == "missing-memory-limit")


def test_nim_service_dra_devices_default_to_the_gpu_class() -> None:
    # claimCreationSpec.devices: [{name: gpu}]: the CRD defaults deviceClassName to gpu.nvidia.com, count to 1
    found = _with_severity(SAMPLES / "nim" / "advanced-dra-auto-creation-example0-llm.yaml")
    assert [f[:3] for f in found] == [
        ("besteffort-qos", 31, "error"),
        ("emptydir-memory-unbounded", 39, "error"),  # at storage, where sharedMemorySizeLimit goes
        ("missing-memory-limit", 31, "error"),
        ("missing-memory-request", 31, "warning"),
        ("missing-priority-class", 31, "warning"),
    ]
    assert all("(GPU pod)" in m for r, _, _, m in found if r in ("besteffort-qos", "missing-memory-limit"))


def test_nim_service_dra_requests_are_the_containers_claims(tmp_path: Path) -> None:
    """A draResources entry's ``requests`` are the requests of the claim its container uses (one
    container claim each, UpdateContainerResourceClaims): one the template does not have gives the
    container nothing, said at the request (the manual DRA sample, at f63f74d7ad22)."""
    text = (SAMPLES / "nim" / "advanced-dra-manual-llm.yaml").read_text()
    path = tmp_path / "dra.yaml"
    path.write_text(
        text.replace(
            "  - resourceClaimTemplateName: gpu-resourceclaimtemplate\n",
            "  - resourceClaimTemplateName: gpu-resourceclaimtemplate\n    requests:\n    - gpu\n    - gpus\n",
        )
    )
    found = _with_severity(path)
    assert [f[:3] for f in found if f[0] == "unknown-resource-claim"] == [("unknown-resource-claim", 66, "error")]
    assert "uses request 'gpus' of claim 'dra-0'" in next(f[3] for f in found if f[0] == "unknown-resource-claim")
    assert ("missing-memory-limit", 49, "error") in [f[:3] for f in found]  # the gpu request: a GPU pod


def test_nim_service_with_a_kata_passthrough_gpu_and_no_profile_runs_as_written(tmp_path: Path) -> None:
    """NVIDIA/k8s-nim-operator config/samples/nim/serving/standalone/confidential-computing/
    llm-kata-sandbox.yaml (at f63f74d7ad22), cut: nvidia.com/pgpu (the sandbox device plugin's
    passthrough GPU) and no model profile, so the operator adds no nvidia.com/gpu; sized and its
    /dev/shm bounded by the memory limit, it is a GPU pod without a priority."""
    path = tmp_path / "kata.yaml"
    path.write_text(
        "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata:\n"
        "  name: meta-llama-3-2-1b-instruct-kata-sandbox\n  namespace: nim-service\nspec:\n  image:\n"
        '    repository: nvcr.io/nim/meta/llama-3.2-1b-instruct\n    tag: "1.12.0"\n  storage:\n'
        '    emptyDir:\n      sizeLimit: 10Gi\n  replicas: 1\n  resources:\n    limits:\n      nvidia.com/pgpu: "1"\n'
        '      cpu: "8"\n      memory: "16Gi"\n  runtimeClassName: kata-qemu-nvidia-gpu\n'
    )
    found = _with_severity(path)
    assert [f[:3] for f in found] == [("missing-priority-class", 6, "warning")]
    assert "as the NIM operator completes it" not in found[0][3]  # no nvidia.com/gpu assumed


def _with_severity(path: Path, *extra: str) -> list[tuple[str, int, str, str]]:
    """(rule, line, severity, message) of each finding, sorted."""
    return sorted((f["rule"], f["line"], f["severity"], f["message"]) for f in findings(path, *extra))


def test_nim_pipeline_services_are_nim_services() -> None:
    found = rules(lint(SAMPLES / "nim" / "rag-rag-pipeline.yaml"))
    assert [f for f in found if f[0] == "missing-priority-class"] == [
        ("missing-priority-class", 11, "spec.services[0].spec"),
        ("missing-priority-class", 33, "spec.services[1].spec"),
        ("missing-priority-class", 57, "spec.services[2].spec"),
    ]
    assert ("missing-memory-limit", 47, "spec.services[1].spec.resources.limits") in found


def test_nim_service_gets_a_gpu_from_the_operator(tmp_path: Path) -> None:
    path = tmp_path / "nim.yaml"
    path.write_text(
        "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata:\n  name: llm\nspec:\n"
        "  image:\n    repository: nvcr.io/nim/meta/llama-3.1-8b-instruct\n    tag: '1.3'\n"
        "  priorityClassName: serving\n  storage:\n    sharedMemorySizeLimit: 16Gi\n"
        "  resources:\n    requests: {cpu: '4', memory: 16Gi}\n    limits: {cpu: '4', memory: 16Gi}\n"
    )
    found = lint(path)
    # no GPU written: the operator assigns one; sized, prioritised, its /dev/shm bounded: nothing to say
    assert found == []
    from kubelint_ml.input.loader import load
    from kubelint_ml.input.objects import unpack
    from kubelint_ml.input.workloads import pod_templates

    [doc] = load(path.read_bytes()).documents
    [tpl] = pod_templates(unpack(doc, "nim.yaml").objects[0])
    [c] = tpl.containers
    assert (c.name, c.data["image"]) == ("llm-ctr", "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3")
    assert c.resources["limits"]["nvidia.com/gpu"] == 1
    assert tpl.volumes[0].data == {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}
    assert "nvidia.com/gpu: 1" in tpl.cache["assumed"]


def _multi_node(tmp_path: Path, tensor: int) -> Path:
    """The multi-node sample (pipeline 2, tensor 8; at f63f74d7ad22) with /dev/shm at Docker's 64Mi and
    ``tensor`` GPUs per pod."""
    text = (SAMPLES / "nim" / "advanced-multi-node-multi-node-nimservice.yaml").read_text()
    text = text.replace(
        "  storage:\n    nimCache:\n      name: deepseek-r1-nimcache\n",
        "  storage:\n    sharedMemorySizeLimit: 64Mi\n    nimCache:\n      name: deepseek-r1-nimcache\n",
    )
    text = text.replace("nvidia.com/gpu: 8", f"nvidia.com/gpu: {tensor}").replace("tensor: 8", f"tensor: {tensor}")
    path = tmp_path / "multi-node.yaml"
    path.write_text(text)
    return path


def test_nim_multi_node_service_runs_its_tensor_parallel_group_on_each_pod(tmp_path: Path) -> None:
    """The operator gives each LeaderWorkerSet pod NIM_TENSOR_PARALLEL_SIZE and
    NIM_PIPELINE_PARALLEL_SIZE (getLWSCommonEnv): 8 workers a pod on a 64Mi /dev/shm, said at the
    size; the pipeline's 2 stages are the group's 2 pods, not processes of one."""
    found = _with_severity(_multi_node(tmp_path, 8))
    assert [f[:3] for f in found if f[0] == "shm-too-small-for-workers"] == [
        ("shm-too-small-for-workers", 78, "warning")
    ]
    [message] = [f[3] for f in found if f[0] == "shm-too-small-for-workers"]
    assert "runs 8 processes (NIM_TENSOR_PARALLEL_SIZE=8)" in message
    # one GPU a pod: one worker a pod, NCCL between pods over the network
    assert not [f for f in _with_severity(_multi_node(tmp_path, 1)) if f[0] == "shm-too-small-for-workers"]


# --- KubeAI ------------------------------------------------------------------------------


def test_kubeai_model_resources_from_the_charts_profile() -> None:
    found = lint(SAMPLES / "kubeai" / "llama-3.1-8b-instruct-fp8-l4.yaml")
    # nvidia-gpu-l4:1 requests 6 cpu and 24Gi but limits only the GPU: no memory limit
    assert rules(found) == [
        ("emptydir-memory-unbounded", 17, "spec.resourceProfile"),
        ("missing-memory-limit", 17, "spec.resourceProfile"),
        ("missing-priority-class", 7, "spec"),
    ]
    assert all("resource profile nvidia-gpu-l4 as the KubeAI chart defines it" in m for *_, m in found)


def test_kubeai_amd_profile_is_a_gpu_pod() -> None:
    found = rules(lint(SAMPLES / "kubeai" / "llama-3.1-70b-instruct-fp8-mi300x.yaml"))
    assert ("besteffort-qos", 7, "spec") in found  # amd-gpu-mi300x limits amd.com/gpu alone
    assert ("missing-priority-class", 7, "spec") in found


def test_kubeai_tpu_profile_from_the_charts_gke_values() -> None:
    # google-tpu-v5e-1x1 is defined by the chart's values-gke.yaml (charts/kubeai/values-gke.yaml):
    # one google.com/tpu per count on tpu-v5-lite-podslice 1x1 nodes, nothing for memory
    found = lint(SAMPLES / "kubeai" / "gemma-2b-it-tpu.yaml")
    assert rules(found) == [
        ("besteffort-qos", 7, "spec"),
        ("emptydir-memory-unbounded", 14, "spec.resourceProfile"),
        ("missing-memory-limit", 14, "spec.resourceProfile"),
        ("missing-memory-request", 14, "spec.resourceProfile"),
        ("missing-priority-class", 7, "spec"),
    ]
    assert all("resource profile google-tpu-v5e-1x1 as the KubeAI chart's GKE values define it" in m for *_, m in found)


def test_kubeai_unknown_profile_is_not_judged_and_says_so(tmp_path: Path) -> None:
    sample = tmp_path / "gemma-2b-it-tpu.yaml"
    sample.write_bytes((SAMPLES / "kubeai" / "gemma-2b-it-tpu.yaml").read_bytes().replace(b"v5e-1x1", b"v6e-1x1"))
    found = lint(sample)
    assert rules(found) == [("accelerator-workload-not-judged", 14, "spec.resourceProfile")]
    # the cluster's profile in the config: judged with it
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text(
        "kinds:\n  kubeai:\n    resourceProfiles:\n      google-tpu-v6e-1x1:\n"
        "        limits: {google.com/tpu: 1, memory: 8Gi}\n        requests: {google.com/tpu: 1, memory: 8Gi, cpu: 2}\n"
    )
    found = lint(sample, "--config", str(config))
    assert rules(found) == [("missing-priority-class", 7, "spec")]
    assert "resource profile google-tpu-v6e-1x1 as the config defines it" in found[0][3]


def test_kubeai_profile_without_a_count_makes_no_pod(tmp_path: Path) -> None:
    # kubeai-project/kubeai internal/modelcontroller/model_controller.go getModelConfig (at f442a2cd620c)
    # refuses a resourceProfile that is not <name>:<count>: the Model gets no pod, and is not judged
    # as a CPU pod without resources
    sample = tmp_path / "gemma-2b-it-tpu.yaml"
    sample.write_bytes((SAMPLES / "kubeai" / "gemma-2b-it-tpu.yaml").read_bytes().replace(b"v5e-1x1:1", b"v5e-1x1"))
    found = lint(sample)
    assert rules(found) == [("accelerator-workload-not-judged", 14, "spec.resourceProfile")]
    assert "not <name>:<count>" in found[0][3]
    sample.write_bytes(
        (SAMPLES / "kubeai" / "gemma-2b-it-tpu.yaml").read_bytes().replace(b"google-tpu-v5e-1x1:1", b"cpu")
    )
    assert lint(sample) == []


def test_kubeai_profile_count_multiplies_the_profile() -> None:
    from kubelint_ml.input.loader import load
    from kubelint_ml.input.objects import unpack
    from kubelint_ml.input.workloads import pod_templates

    text = b"apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: m}\nspec: {resourceProfile: 'nvidia-gpu-l4:4'}\n"
    [doc] = load(text).documents
    [tpl] = pod_templates(unpack(doc, "m.yaml").objects[0])
    assert tpl.containers[0].resources == {
        "requests": {"nvidia.com/gpu": "4", "cpu": "24", "memory": "96Gi"},
        "limits": {"nvidia.com/gpu": "4"},
    }


# --- AIBrix ------------------------------------------------------------------------------


def test_aibrix_storm_service_roles() -> None:
    found = rules(lint(SAMPLES / "aibrix" / "stormservice-vllm-1p1d.yaml"))
    for line, i in ((38, 0), (117, 1)):
        assert ("missing-priority-class", line, f"spec.template.spec.roles[{i}].template.spec") in found
        assert ("besteffort-qos", line, f"spec.template.spec.roles[{i}].template.spec") in found
    assert (
        "missing-memory-limit",
        84,
        "spec.template.spec.roles[0].template.spec.containers[0].resources.limits",
    ) in found


def test_aibrix_ray_cluster_fleet() -> None:
    found = rules(lint(SAMPLES / "aibrix" / "rayclusterfleet.yaml"))
    assert found == [
        ("missing-memory-limit", 50, "spec.template.spec.headGroupSpec.template.spec.containers[0].resources.limits"),
        (
            "missing-memory-request",
            53,
            "spec.template.spec.headGroupSpec.template.spec.containers[0].resources.requests",
        ),
        ("missing-priority-class", 31, "spec.template.spec.headGroupSpec.template.spec"),
    ]


def test_aibrix_pod_counts() -> None:
    from kubelint_ml.input.loader import load
    from kubelint_ml.input.objects import unpack
    from kubelint_ml.input.workloads import pod_templates

    text = (
        b"apiVersion: orchestration.aibrix.ai/v1alpha1\nkind: StormService\nmetadata: {name: s}\nspec:\n"
        b"  replicas: 3\n  template:\n    spec:\n      roles:\n      - name: prefill\n        replicas: 2\n"
        b"        podGroupSize: 4\n        template:\n          spec:\n            containers: [{name: c, image: i}]\n"
    )
    [doc] = load(text).documents
    [tpl] = pod_templates(unpack(doc, "s.yaml").objects[0])
    assert (tpl.role, tpl.replicas, tpl.found_by_search) == ("prefill", 24, False)


# --- OME -------------------------------------------------------------------------------


def severities(path: Path) -> list[tuple[str, int, str, str]]:
    return [(f["rule"], f["line"], f["severity"], f["path"]) for f in findings(path)]


def test_ome_right_sized_runtime_and_its_service_get_nothing() -> None:
    # the engine's runner asks for 24Gi with its GPU, the router for 2Gi; a shared runtime leaves the
    # priority to the services, and the service only scales the runtime's components
    assert findings(SAMPLES / "ome" / "bge-m3-rt.yaml") == []
    assert findings(SAMPLES / "ome" / "isvc-bge-m3.yaml") == []


def test_ome_multinode_runtime_without_memory_gets_the_accelerator_severities() -> None:
    found = severities(SAMPLES / "ome" / "deepseek-rdma-rt.yaml")
    assert found == [
        # the leader: its runner asks for 8 GPUs and no cpu or memory
        ("besteffort-qos", 91, "error", "spec.engineConfig.leader"),
        ("missing-memory-request", 160, "warning", "spec.engineConfig.leader.runner.resources.requests"),
        ("missing-memory-limit", 162, "error", "spec.engineConfig.leader.runner.resources.limits"),
        # the worker: the same runner, and a memory-backed /dev/shm bounded by nothing
        ("besteffort-qos", 200, "error", "spec.engineConfig.worker"),
        ("emptydir-memory-unbounded", 212, "error", "spec.engineConfig.worker.volumes[0].emptyDir"),
        ("missing-memory-limit", 285, "error", "spec.engineConfig.worker.runner.resources.limits"),
        ("missing-memory-request", 287, "warning", "spec.engineConfig.worker.runner.resources.requests"),
    ]
    # the router pod (cpu 1, memory 2Gi) is sized; no priority finding on a shared definition
    assert all(".routerConfig" not in p for *_, p in found)


OME_SERVICE = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama
spec:
  model:
    name: llama-3-3-70b-instruct
  engine:
    minReplicas: 2
    runner:
      name: ome-container
{runner}      resources:
        limits:
          nvidia.com/gpu: 4
"""


def test_ome_service_runner_is_merged_over_its_containers_or_said_partial(tmp_path: Path) -> None:
    # a runner override without an image: OME completes it from the runtime, so it is said, not judged
    partial = tmp_path / "partial.yaml"
    partial.write_text(OME_SERVICE.format(runner=""))
    assert severities(partial) == [
        ("accelerator-workload-not-judged", 14, "info", 'spec.engine.runner.resources.limits["nvidia.com/gpu"]')
    ]
    # with its image, the runner is the pod's container: a GPU pod with no memory and no priority
    whole = tmp_path / "whole.yaml"
    whole.write_text(OME_SERVICE.format(runner="      image: docker.io/lmsysorg/sglang:v0.5.5\n"))
    found = severities(whole)
    assert ("missing-priority-class", 8, "warning", "spec.engine") in found
    assert ("besteffort-qos", 8, "error", "spec.engine") in found
    assert ("missing-memory-limit", 14, "error", "spec.engine.runner.resources.limits") in found
    # a component container of the runner's name gets the runner's fields merged over it
    merged = tmp_path / "merged.yaml"
    merged.write_text(
        OME_SERVICE.format(runner="")
        + "    containers:\n    - name: ome-container\n      image: docker.io/lmsysorg/sglang:v0.5.5\n"
    )
    assert "accelerator-workload-not-judged" not in {r for r, *_ in severities(merged)}
    assert ("missing-memory-limit", 13, "error", "spec.engine.runner.resources.limits") in severities(merged)


OME_NAMING_ITS_RUNTIME = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: deepseek-r1
  namespace: deepseek-r1
spec:
  model:
    name: deepseek-r1
  runtime:
    name: srt-deepseek-rdma
  engine:
    minReplicas: 1
  router:
    minReplicas: 1
"""


def test_ome_service_is_merged_over_the_runtime_it_names(tmp_path: Path) -> None:
    service = tmp_path / "isvc.yaml"
    service.write_text(OME_NAMING_ITS_RUNTIME)
    # alone, its components are the runtime's: nothing to judge, nothing said
    assert findings(service) == []
    # with the runtime (OME's ClusterServingRuntime srt-deepseek-rdma): the leader and worker pods of
    # its engine and its router, merged as MergeEngineSpec does; the priority is the service's to set
    found = findings(service, "--context", str(SAMPLES / "ome" / "deepseek-rdma-rt.yaml"))
    assert [(f["rule"], f["line"], f["severity"], f["path"]) for f in found] == [
        ("besteffort-qos", 11, "error", "spec.engine"),
        ("besteffort-qos", 11, "error", "spec.engine"),
        ("missing-priority-class", 11, "warning", "spec.engine"),
        ("missing-priority-class", 11, "warning", "spec.engine"),
        ("missing-priority-class", 13, "warning", "spec.router"),
    ]
    assert [f["message"].rsplit("(", 1)[1] for f in found[2:]] == [
        "as OME merges its engine-leader over the runtime srt-deepseek-rdma)",
        "as OME merges its engine-worker over the runtime srt-deepseek-rdma)",
        "as OME merges its router over the runtime srt-deepseek-rdma)",
    ]
    # the runner's missing memory is the runtime's finding, not repeated on each service; a priority
    # class in the service quiets the priority findings of its pods
    prioritised = tmp_path / "prioritised.yaml"
    prioritised.write_text(
        OME_NAMING_ITS_RUNTIME.replace(
            "    minReplicas: 1\n  router:",
            "    minReplicas: 1\n    leader:\n"
            "      priorityClassName: inference\n    worker:\n      priorityClassName: inference\n  router:",
        )
    )
    found = findings(prioritised, "--context", str(SAMPLES / "ome" / "deepseek-rdma-rt.yaml"))
    assert {(f["rule"], f["path"]) for f in found} >= {("missing-priority-class", "spec.router")}
    assert ("missing-priority-class", "spec.engine") not in {(f["rule"], f["path"]) for f in found}
    assert "missing-memory-limit" not in {f["rule"] for f in found}


def test_ome_runner_override_is_completed_by_the_named_runtime(tmp_path: Path) -> None:
    # the service overrides the leader runner's resources only: the runtime gives it its image, so the
    # merged pod is whole, judged with the service's memory (Burstable: no QoS finding), not said partial
    service = tmp_path / "isvc.yaml"
    service.write_text(
        OME_NAMING_ITS_RUNTIME.replace(
            "    minReplicas: 1\n  router:",
            "    minReplicas: 1\n    leader:\n      priorityClassName: inference\n      runner:\n"
            "        name: ome-container\n        resources:\n          limits:\n            memory: 800Gi\n"
            "  router:",
        )
    )
    found = findings(service, "--context", str(SAMPLES / "ome" / "deepseek-rdma-rt.yaml"))
    leader = [f for f in found if "engine-leader" in f["message"]]
    assert leader == []
    assert "accelerator-workload-not-judged" not in {f["rule"] for f in found}
    # the worker, which the service does not override, is still BestEffort and without priority
    assert {(f["rule"], f["line"]) for f in found if "engine-worker" in f["message"]} == {
        ("besteffort-qos", 11),
        ("missing-priority-class", 11),
    }


def test_ome_runtime_at_admission() -> None:
    from kubelint_ml.admission.review import load_policy, review

    runtime = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ServingRuntime",
        "metadata": {"name": "rt", "namespace": "ml"},
        "spec": {
            "engineConfig": {
                "runner": {"name": "ome-container", "image": "sglang", "resources": {"limits": {"nvidia.com/gpu": 1}}}
            }
        },
    }
    v = review(load_policy(None), {"uid": "1", "operation": "CREATE", "namespace": "ml", "object": runtime})
    assert v.allowed is False
    assert [(f.rule, f.severity) for f in v.findings if f.rule == "missing-memory-limit"] == [
        ("missing-memory-limit", "error")
    ]


def test_ome_service_without_its_runtime_says_why_in_verbose(tmp_path: Path) -> None:
    service = tmp_path / "isvc.yaml"
    service.write_text(OME_NAMING_ITS_RUNTIME)
    for path, note in (
        (service, "its pods are completed by the runtime srt-deepseek-rdma, not among the inputs"),
        (SAMPLES / "ome" / "isvc-bge-m3.yaml", "OME selects its runtime by the model (not modelled here)"),
    ):
        r = subprocess.run(
            [sys.executable, "-m", "kubelint_ml", "check", str(path), "-v"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        assert note in r.stdout + r.stderr


OME_PREDICTOR = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: old
spec:
  predictor:
    model:
      baseModel: llama-3-70b
    minReplicas: 1
    containers:
      - name: ome-container
        image: docker.io/lmsysorg/sglang:v0.4
        resources:
          limits:
            nvidia.com/gpu: 8
    workerSpec:
      size: 1
      containers:
        - name: ome-container
          image: docker.io/lmsysorg/sglang:v0.4
          resources:
            limits:
              nvidia.com/gpu: 8
              memory: 1500Gi
              cpu: 100
"""


def test_ome_deprecated_predictor_is_the_engine(tmp_path: Path) -> None:
    # the defaulting webhook migrates a predictor to the engine: its containers (ome-container the runner)
    # and its workerSpec the worker pods; the worker is sized, the leader asks for 8 GPUs and no memory
    service = tmp_path / "isvc.yaml"
    service.write_text(OME_PREDICTOR)
    assert severities(service) == [
        ("besteffort-qos", 6, "error", "spec.predictor"),
        ("missing-priority-class", 6, "warning", "spec.predictor"),
        ("missing-memory-request", 13, "warning", "spec.predictor.containers[0].resources"),
        ("missing-memory-limit", 14, "error", "spec.predictor.containers[0].resources.limits"),
        ("missing-priority-class", 16, "warning", "spec.predictor.workerSpec"),
    ]


# --- vLLM production-stack (production-stack.vllm.ai) ------------------------------------


PSTACK = SAMPLES / "production-stack"


def test_vllm_runtime_sample_is_sized_by_its_deployment_config() -> None:
    # cpu 5 / memory 32Gi / 1 nvidia.com/gpu, each both request and limit (Guaranteed), TP 1, the
    # sidecar at its own 0.5 cpu / 128Mi: only the priority, which the VLLMRuntime has no field for
    found = lint(PSTACK / "vllmruntime.yaml")
    assert rules(found) == [("missing-priority-class", 49, "spec.deploymentConfig")]
    assert "as the production-stack operator builds it: resources as requests and limits" in found[0][3]


def test_vllm_runtime_without_memory_is_a_besteffort_gpu_pod() -> None:
    # the autoscaling samples ask for `gpu: "1"` alone: the controller writes no memory, so the
    # GPU pod has no memory limit (accelerator severity) and is BestEffort; the third is sized
    found = findings(PSTACK / "vllmruntime-autoscaling.yaml")
    got = [(f["rule"], f["line"], f["severity"], f["path"]) for f in found]
    for line, resources in ((18, 20), (47, 49)):
        assert ("besteffort-qos", line, "error", "spec.deploymentConfig") in got
        assert ("missing-memory-limit", resources, "error", "spec.deploymentConfig.resources") in got
        assert ("missing-memory-request", resources, "warning", "spec.deploymentConfig.resources") in got
        assert ("missing-priority-class", line, "warning", "spec.deploymentConfig") in got
    assert [g for g in got if g[1] > 50] == [("missing-priority-class", 88, "warning", "spec.deploymentConfig")]
    assert len(got) == 9


def _runtime(tmp_path: Path, **edits: str) -> Path:
    text = (PSTACK / "vllmruntime.yaml").read_text()
    text = text.replace("tensorParallelSize: 1", "tensorParallelSize: 2").replace('gpu: "1"', 'gpu: "2"')
    for old, new in edits.items():
        text = text.replace(old.replace("_", " "), new)
    path = tmp_path / "vllmruntime.yaml"
    path.write_text(text)
    return path


def test_vllm_runtime_tensor_parallel_on_the_default_shm(tmp_path: Path) -> None:
    # --tensor-parallel-size 2 over 2 GPUs: NCCL's shared-memory transport on the container's 64Mi
    # /dev/shm, as the controller mounts none without deploymentConfig.shmSize
    found = lint(_runtime(tmp_path))
    assert rules(found) == [
        ("missing-priority-class", 49, "spec.deploymentConfig"),
        ("shm-too-small-for-workers", 49, "spec.deploymentConfig"),
    ]
    message = found[1][3]
    assert "runs 2 processes (--tensor-parallel-size 2) on the default 64Mi /dev/shm" in message
    assert "no /dev/shm mount without shmSize" in message


def test_vllm_runtime_shm_size_mounts_a_memory_emptydir(tmp_path: Path) -> None:
    # shmSize: the controller mounts a Memory emptyDir of that size at /dev/shm
    sized = lint(_runtime(tmp_path, **{"replicas:_2": 'replicas: 2\n    shmSize: "8Gi"'}))
    assert rules(sized) == [("missing-priority-class", 49, "spec.deploymentConfig")]
    small = lint(_runtime(tmp_path, **{"replicas:_2": 'replicas: 2\n    shmSize: "32Mi"'}))
    assert rules(small)[1:] == [("shm-too-small-for-workers", 66, "spec.deploymentConfig.shmSize")]
    assert "on a 32Mi /dev/shm" in small[1][3]


def test_vllm_runtime_extra_args_and_nccl_shm_disable(tmp_path: Path) -> None:
    # -tp in vllmConfig.extraArgs (no tensorParallelSize) is a tensor-parallel degree too; NCCL_SHM_DISABLE=1 in
    # vllmConfig.env (after the controller's own variables) is the way out
    extra = (PSTACK / "vllmruntime.yaml").read_text().replace('gpu: "1"', 'gpu: "4"')
    extra = extra.replace("    tensorParallelSize: 1\n", "")
    extra = extra.replace("    maxLoras: 4\n", '    maxLoras: 4\n    extraArgs: ["-tp", "4"]\n')
    path = tmp_path / "extra.yaml"
    path.write_text(extra)
    found = lint(path)
    assert rules(found)[1:] == [("shm-too-small-for-workers", 49, "spec.deploymentConfig")]
    assert "runs 4 processes (-tp 4)" in found[1][3]
    path.write_text(
        extra.replace('value: "/data"\n', 'value: "/data"\n      - name: NCCL_SHM_DISABLE\n        value: "1"\n')
    )
    assert rules(lint(path)) == [("missing-priority-class", 51, "spec.deploymentConfig")]


def test_vllm_runtime_resources_of_the_wrong_type_are_refused_at_their_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: production-stack.vllm.ai/v1alpha1\nkind: VLLMRuntime\nmetadata:\n  name: bad\nspec:\n"
        "  model:\n    modelURL: m\n  deploymentConfig:\n    resources: 8 GPUs\n"
        "    image: {registry: docker.io, name: vllm/vllm-openai}\n"
    )
    assert rules(lint(path)) == [("parse-error", 9, "spec.deploymentConfig.resources")]


def test_vllm_runtime_labels_are_the_pods_and_a_bad_shm_size_is_said(tmp_path: Path) -> None:
    # the controller copies the VLLMRuntime's labels into the pods' (a Kueue priority label counts);
    # an shmSize that is no quantity is said at its field (the controller mounts /dev/shm unbounded)
    text = (PSTACK / "vllmruntime.yaml").read_text()
    text = text.replace("    model: Llama", "    kueue.x-k8s.io/priority-class: high\n    model: Llama")
    text = text.replace("    replicas: 2\n", '    replicas: 2\n    shmSize: "8 Gi"\n')
    path = tmp_path / "labelled.yaml"
    path.write_text(text)
    found = lint(path)
    assert rules(found) == [("invalid-quantity", 67, "spec.deploymentConfig.shmSize")]
    assert "sizeLimit '8 Gi' is not a valid quantity" in found[0][3]


def test_vllm_runtime_gpu_type_and_node_affinity(tmp_path: Path) -> None:
    # gpuType names the resource the gpu count asks for; nodeSelectorTerms is the pod's required node
    # affinity, so the node type is known: 64Gi for one L4 of a g6.xlarge (16Gi of memory) is too much
    text = (PSTACK / "vllmruntime.yaml").read_text()
    text = text.replace('memory: "32Gi"', 'memory: "64Gi"').replace(
        "    replicas: 2\n",
        "    replicas: 2\n    nodeSelectorTerms:\n      - matchExpressions:\n"
        "          - {key: node.kubernetes.io/instance-type, operator: In, values: [g6.xlarge]}\n",
    )
    path = tmp_path / "g6.yaml"
    path.write_text(text)
    found = rules(lint(path))
    assert ("missing-priority-class", 49, "spec.deploymentConfig") in found
    assert any(
        rule == "gpu-memory-share-mismatch" and p == "spec.deploymentConfig.resources.memory" for rule, _, p in found
    )
    amd = tmp_path / "amd.yaml"
    amd.write_text(
        (PSTACK / "vllmruntime-autoscaling.yaml")
        .read_text()
        .replace('gpu: "1"\n', 'gpu: "1"\n      gpuType: amd.com/gpu\n', 1)
    )
    assert ("besteffort-qos", 18, "spec.deploymentConfig") in rules(lint(amd))


def test_vllm_runtime_fixes_are_not_offered_in_fields_it_lacks(tmp_path: Path) -> None:
    # On a known node type a memory limit could be sized, but the file has no field for the
    # container's resources: unfixable, saying why, and --fix leaves the file alone
    path = tmp_path / "g6.yaml"
    text = (PSTACK / "vllmruntime-autoscaling.yaml").read_text()
    text = text.replace(
        '    replicas: 1\n    resources:\n      gpu: "1"\n',
        "    replicas: 1\n    nodeSelectorTerms:\n      - matchExpressions:\n"
        "          - {key: node.kubernetes.io/instance-type, operator: In, values: [g6.xlarge]}\n"
        '    resources:\n      gpu: "1"\n',
        1,
    )
    path.write_text(text)
    fixes = {f["rule"]: f["fix"] for f in findings(path) if f["line"] == 23}
    assert "GPU share of node memory: 1 of 1 GPUs on g6.xlarge" in fixes["missing-memory-limit"]["source"]
    assert "deploymentConfig.resources" in fixes["missing-memory-limit"]["unfixable"]
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(path), "--fix", "--unsafe-fixes"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in r.stderr
    assert path.read_text() == text


def test_cache_server_and_router_are_cpu_pods() -> None:
    # cpu and memory both request and limit: Guaranteed CPU pods, nothing to say
    assert lint(PSTACK / "cacheserver.yaml") == []
    assert lint(PSTACK / "vllmrouter.yaml") == []


def test_cache_server_without_memory(tmp_path: Path) -> None:
    path = tmp_path / "cache.yaml"
    path.write_text((PSTACK / "cacheserver.yaml").read_text().replace('    memory: "16Gi"\n', ""))
    found = rules(lint(path))
    assert ("missing-memory-limit", 21, "spec.resources") in found


def test_vllm_runtime_at_admission() -> None:
    # serve builds the same pod: a GPU runtime without memory is denied, with the finding at its field
    runtime = {
        "apiVersion": "production-stack.vllm.ai/v1alpha1",
        "kind": "VLLMRuntime",
        "metadata": {"name": "llama", "namespace": "ml"},
        "spec": {
            "model": {"modelURL": "meta-llama/Llama-3.1-8B-Instruct"},
            "vllmConfig": {"tensorParallelSize": 2},
            "deploymentConfig": {"resources": {"gpu": "2"}, "image": {"registry": "docker.io", "name": "vllm"}},
        },
    }
    v = review(load_policy(None), {"uid": "1", "operation": "CREATE", "namespace": "ml", "object": runtime})
    assert v.allowed is False
    errors = {(f.rule, f.path) for f in v.findings if f.severity == "error"}
    assert ("missing-memory-limit", "spec.deploymentConfig.resources") in errors
    assert ("shm-too-small-for-workers", "spec.deploymentConfig") in {(f.rule, f.path) for f in v.findings}
