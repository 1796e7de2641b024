"""Serving-stack manifests from the projects' own repositories (llm-d guides, vLLM on TPU, ...):
each excerpt is cut from the file named in its comment, and the test asserts the findings a user
of that file would defend (rule, line, severity), and the ones that would be wrong are absent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from clirun import check_findings

reported = check_findings


def findings(path: Path, *extra: str) -> list[tuple[str, int, str]]:
    return sorted((f["rule"], f["line"], f["severity"]) for f in reported(path, *extra))


# llm-d guides/optimized-baseline/modelserver/tpu/v6/vllm, rendered with `kubectl kustomize`
# (llm-d/llm-d fork zetxqx/llm-d at 7edda66d76cc), the Deployment's pod template: vLLM on a
# TPU v6e host with --tensor-parallel-size=8 and no /dev/shm volume.
TPU_V6E_VLLM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: optimized-baseline-tpu-v6-vllm-decode
spec:
  replicas: 1
  selector:
    matchLabels:
      app: decode
  template:
    metadata:
      labels:
        app: decode
    spec:
      priorityClassName: serving
      containers:
      - args:
        - Qwen/Qwen3-32B
        - --port=8000
        - --tensor-parallel-size=8{extra}
        command:
        - vllm
        - serve
        image: vllm/vllm-tpu:v0.22.0
        name: modelserver
        resources:
          limits:
            cpu: "16"
            memory: 64Gi
            google.com/tpu: "8"
          requests:
            cpu: "16"
            memory: 64Gi
            google.com/tpu: "8"
      nodeSelector:
        cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice
        cloud.google.com/gke-tpu-topology: 2x4
"""


def test_vllm_tensor_parallel_on_tpu_is_one_process_not_a_shm_signal(tmp_path: Path) -> None:
    """vllm-project/tpu-inference (tpu_inference/platforms/tpu_platform.py at b0c2f7dcbacc) runs
    the tensor parallel group as one JAX program in one process on a single host ("Force using
    UniProcExecutor for JAX on single host without pipeline parallelism"): no NCCL, no workers
    sharing /dev/shm, so the 64Mi default is not a finding."""
    path = tmp_path / "tpu.yaml"
    path.write_text(TPU_V6E_VLLM.format(extra=""))
    assert [f for f in findings(path) if f[0] == "shm-too-small-for-workers"] == []


def test_pipeline_parallel_on_tpu_still_starts_processes(tmp_path: Path) -> None:
    """With pipeline parallel the same platform uses its multiprocess executor: one process per
    stage, exchanging through /dev/shm, so the finding stays, at the container."""
    path = tmp_path / "tpu-pp.yaml"
    path.write_text(TPU_V6E_VLLM.format(extra="\n        - --pipeline-parallel-size=2"))
    assert [f for f in findings(path) if f[0] == "shm-too-small-for-workers"] == [
        ("shm-too-small-for-workers", 17, "warning")
    ]


def test_tensor_parallel_env_on_tpu_is_not_a_signal(tmp_path: Path) -> None:
    path = tmp_path / "tpu-env.yaml"
    path.write_text(
        TPU_V6E_VLLM.format(extra="").replace(
            "        - --tensor-parallel-size=8\n",
            "        env:\n        - name: TENSOR_PARALLEL_SIZE\n          value: '8'\n",
        )
    )
    assert [f for f in findings(path) if f[0] == "shm-too-small-for-workers"] == []


# kubernetes-sigs/dra-driver-google-tpu demo/specs/vllm-tpu.yaml (at f5a9d8c8322b): vLLM on every TPU
# of the node, claimed through DRA (class tpu.google.com, allocationMode All); the excerpt adds
# --tensor-parallel-size=4 and leaves out the demo's /dev/shm emptyDir.
TPU_DRA_VLLM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  namespace: tpu-test
  name: multi-tpu
spec:
  spec:
    devices:
      requests:
      - name: tpus
        exactly:
          deviceClassName: tpu.google.com
          allocationMode: All
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-tpu
  namespace: tpu-test
spec:
  replicas: 1
  selector:
    matchLabels:
      app: vllm-tpu
  template:
    metadata:
      labels:
        app: vllm-tpu
    spec:
      priorityClassName: serving
      containers:
      - name: vllm-tpu
        image: docker.io/vllm/vllm-tpu:2e33fe419186c65a18da6668972d61d7bbc31564
        command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
        args:
        - --model=Qwen/Qwen2-1.5B
        - --tensor-parallel-size=4{extra}
        resources:
          limits:
            memory: 32Gi
          requests:
            cpu: "8"
            memory: 32Gi
          claims:
          - name: tpus
      resourceClaims:
      - name: tpus
        resourceClaimTemplateName: multi-tpu
"""


def test_tensor_parallel_on_tpus_claimed_through_dra_is_one_process(tmp_path: Path) -> None:
    """TPUs the container claims through DRA are TPUs as much as google.com/tpu chips: vLLM's tensor
    parallel group is one process there, so the default /dev/shm is not a finding; pipeline parallel
    still starts a process per stage, and the finding is at the container."""
    path = tmp_path / "tpu-dra.yaml"
    path.write_text(TPU_DRA_VLLM.format(extra=""))
    assert findings(path) == []
    path.write_text(TPU_DRA_VLLM.format(extra="\n        - --pipeline-parallel-size=2"))
    assert findings(path) == [("shm-too-small-for-workers", 32, "warning")]
    # a container that does not name the claim holds no TPU: its tensor parallel workers are processes
    path.write_text(TPU_DRA_VLLM.format(extra="").replace("          claims:\n          - name: tpus\n", ""))
    assert ("shm-too-small-for-workers", 32, "warning") in findings(path)


# kubeflow/pipelines test_data/compiled-workflows/nvidia_gpu_scheduling_check.yaml (at 09e0220902dd),
# cut to the parameter that carries the component's accelerator and the executor template whose
# podSpecPatch the KFP driver fills in at run time from it.
KFP_GPU_WORKFLOW = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: nvidia-gpu-scheduling-check-
spec:
  arguments:
    parameters:
    - name: kubernetes-comp-verify-gpu-scheduled
      value: '{"tolerations":[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"}]}'
    - name: implementations-22deaaeaf18e6b8634b6ebaa8a34b86426def1687134b6fd3d21779bc7942cf6
      value: '{"args":["echo \\"GPU scheduling check: PASS\\""],"command":["sh","-c"],"image":"python:3.11",RESOURCES}'
  entrypoint: entrypoint
  serviceAccountName: pipeline-runner
  templates:
  - container:
      command:
      - should-be-overridden-during-runtime
      image: gcr.io/ml-pipeline/should-be-overridden-during-runtime
      name: ""
      resources: {}
    inputs:
      parameters:
      - name: pod-spec-patch
    name: system-container-impl
    podSpecPatch: '{{inputs.parameters.pod-spec-patch}}'
"""
KFP_ACCELERATOR = (
    '"resources":{"accelerator":{"count":"1","resourceCount":"1","resourceType":"nvidia.com/gpu",'
    '"type":"nvidia.com/gpu"}}'
)


def test_kfp_component_accelerator_applied_by_a_run_time_pod_spec_patch_is_said(tmp_path: Path) -> None:
    """The GPU a compiled Kubeflow pipeline's component asks for reaches its pod only through the
    driver's podSpecPatch, a parameter at lint time: said at the parameter that carries it, and the
    executor's main container (`name: ""`, which Argo names main) is judged as written."""
    path = tmp_path / "kfp.yaml"
    path.write_text(KFP_GPU_WORKFLOW.replace("RESOURCES", KFP_ACCELERATOR))
    found = findings(path)
    assert [f for f in found if f[0] == "accelerator-workload-not-judged"] == [
        ("accelerator-workload-not-judged", 11, "info")
    ]
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(path), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    messages = {f["rule"]: f["message"] for f in json.loads(r.stdout)["findings"]}
    assert messages["accelerator-workload-not-judged"] == (
        "asks for nvidia.com/gpu through a podSpecPatch set at run time: the pod of template "
        "'system-container-impl' was judged without it"
    )
    assert messages["missing-memory-limit"] == "container 'main' has no memory limit"


def test_kfp_component_without_an_accelerator_is_not_said(tmp_path: Path) -> None:
    """A toleration for GPU nodes is no request for a GPU."""
    path = tmp_path / "kfp-cpu.yaml"
    path.write_text(KFP_GPU_WORKFLOW.replace("RESOURCES", '"resources":{"cpuLimit":1}'))
    assert [f for f in findings(path) if f[0] == "accelerator-workload-not-judged"] == []


def test_spark_driver_core_request_is_the_pods_cpu_request(tmp_path: Path) -> None:
    """kubeflow/spark-operator examples/spark-pi-custom-resource.yaml (at 38082f3318e9): the
    driver's coreRequest 0.5 is its pod's cpu request (the operator passes it as
    spark.kubernetes.driver.request.cores, which Spark takes over spark.driver.cores), under its
    800m coreLimit: no request-exceeds-limit from the default 1 core."""
    path = tmp_path / "spark.yaml"
    path.write_text(
        "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata:\n"
        "  name: spark-pi-custom-resource\n  namespace: default\nspec:\n  type: Scala\n  mode: cluster\n"
        "  image: docker.io/apache/spark:4.0.4\n  mainClass: org.apache.spark.examples.SparkPi\n"
        "  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar\n  sparkVersion: 4.0.4\n"
        '  driver:\n    coreRequest: "0.5"\n    coreLimit: 800m\n    memory: 512m\n'
        '  executor:\n    instances: 1\n    coreRequest: "1200m"\n    coreLimit: 1500m\n    memory: 512m\n'
    )
    assert [f for f in findings(path) if f[0] == "request-exceeds-limit"] == []
    # a request over the limit is still one, at the driver (as the executor's is)
    path.write_text(path.read_text().replace('coreRequest: "0.5"', 'coreRequest: "2"'))
    assert [f for f in findings(path) if f[0] == "request-exceeds-limit"] == [("request-exceeds-limit", 13, "error")]


# kubeflow/spark-operator examples/sparkconnect/spark-connect.yaml (at 38082f3318e9), the executor
# part: its template sets no resources, Spark sizes the executors from cores and memory.
SPARK_CONNECT = """\
apiVersion: sparkoperator.k8s.io/v1alpha1
kind: SparkConnect
metadata:
  name: spark-connect
  namespace: default
spec:
  sparkVersion: 4.0.4
  server:
    template:
      spec:
        containers:
        - name: spark-kubernetes-driver
          image: docker.io/apache/spark:4.0.4
          resources:
            requests:
              cpu: 1
              memory: 1Gi
            limits:
              cpu: 1
              memory: 1Gi
  executor:
    instances: 2
    cores: 1
    memory: 512m
    template:
      spec:
        containers:
        - name: spark-kubernetes-executor
          image: docker.io/apache/spark:4.0.4
          imagePullPolicy: Always
"""


def test_spark_connect_executors_get_their_resources_from_cores_and_memory(tmp_path: Path) -> None:
    """Not BestEffort, not without a memory limit: Spark gives each executor 1 cpu and 512m plus
    the 384Mi overhead, request and limit, as it does a SparkApplication's."""
    path = tmp_path / "connect.yaml"
    path.write_text(SPARK_CONNECT)
    assert findings(path) == []


def test_spark_connect_gpu_executors_are_judged_as_gpu_pods(tmp_path: Path) -> None:
    path = tmp_path / "connect-gpu.yaml"
    path.write_text(
        SPARK_CONNECT.replace(
            "  sparkVersion: 4.0.4\n",
            "  sparkVersion: 4.0.4\n  sparkConf:\n    spark.executor.resource.gpu.amount: '1'\n"
            "    spark.executor.resource.gpu.vendor: nvidia.com\n",
        )
    )
    # the executors ask for nvidia.com/gpu: the workload's pods (the server's too) want a priority
    assert findings(path) == [("missing-priority-class", 13, "warning"), ("missing-priority-class", 24, "warning")]


# kubeflow/trainer manifests/base/runtimes/torch_distributed.yaml (at 8c0f5059bd51), the runtime a
# cluster installs with Trainer: given as context (never reported on), as a user lints a TrainJob.
TORCH_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
  labels:
    trainer.kubeflow.org/framework: torch
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
"""
# kubeflow/trainer examples/yaml/01-multi-node.yaml (at 8c0f5059bd51), with a GPU per node.
GPU_TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: multi-node-example
spec:
  runtimeRef:
    apiGroup: trainer.kubeflow.org
    kind: ClusterTrainingRuntime
    name: torch-distributed
  trainer:
    numNodes: 3
    resourcesPerNode:
      limits:
        nvidia.com/gpu: 2
        memory: 64Gi
      requests:
        cpu: "8"
        memory: 64Gi
"""


def test_trainjob_whose_runtime_is_context_carries_the_missing_priority(tmp_path: Path) -> None:
    """Neither the GPU TrainJob nor the runtime it runs (read as context, so never reported on) gives
    its pods a priority: the TrainJob gets missing-priority-class, at its runtimeRef, with no fix
    there (Trainer patches no priorityClassName into the pods)."""
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text(TORCH_RUNTIME)
    job = tmp_path / "job.yaml"
    job.write_text(GPU_TRAINJOB)
    found = [f for f in findings(job, "--context", str(runtime)) if f[0] == "missing-priority-class"]
    assert found == [("missing-priority-class", 6, "warning")]
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(job), "--context", str(runtime), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    [f] = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "missing-priority-class"]
    assert (
        f["message"]
        == "no priorityClassName: runtime 'torch-distributed' sets none either; pods run at the default priority"
    )
    assert "fix" not in f
    # the Kueue label on the TrainJob gives the workload its priority
    job.write_text(
        GPU_TRAINJOB.replace(
            "  name: multi-node-example\n",
            "  name: multi-node-example\n  labels:\n    kueue.x-k8s.io/priority-class: research\n",
        )
    )
    assert [f for f in findings(job, "--context", str(runtime)) if f[0] == "missing-priority-class"] == []


def test_trainjob_and_its_linted_runtime_report_the_priority_once_on_the_runtime(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text(TORCH_RUNTIME)
    (tmp_path / "job.yaml").write_text(GPU_TRAINJOB)
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(tmp_path), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = [
        (Path(f["file"]).name, f["line"])
        for f in json.loads(r.stdout)["findings"]
        if f["rule"] == "missing-priority-class"
    ]
    assert found == [("runtime.yaml", 21)]  # the pod template's spec


# kserve/kserve docs/samples/istio-dex/sklearn.yaml (at aaac4e294dae): a `model:` spec that leaves
# the resources to the serving runtime KServe selects for sklearn (kserve-sklearnserver: requests
# and limits of 1 cpu and 2Gi, config/runtimes/kserve-sklearnserver.yaml).
SKLEARN_MODEL = """\
apiVersion: "serving.kserve.io/v1beta1"
kind: "InferenceService"
metadata:
  name: "sklearn-iris"
  annotations:
    sidecar.istio.io/inject: "false"
spec:
  predictor:
    model:
      modelFormat:
        name: sklearn
      storageUri: "gs://kfserving-examples/models/sklearn/1.0/model"
"""


def test_kserve_model_spec_gets_its_shipped_runtimes_resources(tmp_path: Path) -> None:
    path = tmp_path / "sklearn.yaml"
    path.write_text(SKLEARN_MODEL)
    assert findings(path) == []
    # the multi-node runtime's (kserve/website docs/model-serving/generative-inference/multi-node):
    # a 4Gi limit of the service's own over the runtime's 6Gi request is a request above its limit
    path.write_text(
        SKLEARN_MODEL.replace(
            "      modelFormat:", "      runtime: kserve-huggingfaceserver-multinode\n      modelFormat:"
        )
        + "      resources:\n        limits:\n          memory: 4Gi\n"
    )
    assert [f for f in findings(path) if f[0] == "request-exceeds-limit"] == [
        ("request-exceeds-limit", 14, "error")
    ]  # (the request is the runtime's)
    # a runtime of the user's own: its resources are not known here, the service is judged as written
    path.write_text(SKLEARN_MODEL.replace("      modelFormat:", "      runtime: my-sklearn\n      modelFormat:"))
    assert ("missing-memory-limit", 9, "warning") in findings(path)


def test_dynamo_graph_deployment_request_is_said_not_passed(tmp_path: Path) -> None:
    """ai-dynamo/dynamo benchmarks/profiler/deploy/profile_sla_moe_dgdr.yaml (at 0044eb903566),
    cut: its GPU workers come from profiling at run time, said at the hardware it sizes them by;
    profile_sla_dgdr.yaml (at 179449ffd14b) names no hardware: said at its model."""
    path = tmp_path / "dgdr.yaml"
    path.write_text(
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeploymentRequest\nmetadata:\n  name: sla-moe\n"
        "spec:\n  model: deepseek-ai/DeepSeek-R1\n  backend: sglang\n  profilingConfig:\n"
        '    profilerImage: "nvcr.io/nvidia/ai-dynamo/sglang-runtime:${VERSION}"\n    config:\n'
        "      hardware:\n        minNumGpusPerEngine: 8\n        maxNumGpusPerEngine: 16\n"
        "        numGpusPerNode: 8\n  autoApply: true\n"
    )
    assert findings(path) == [("accelerator-workload-not-judged", 11, "info")]
    path.write_text(
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeploymentRequest\nmetadata:\n  name: sla-online\n"
        "spec:\n  model: Qwen/Qwen3-0.6B\n  backend: vllm\n  autoApply: true\n"
    )
    assert findings(path) == [("accelerator-workload-not-judged", 6, "info")]


NEMO_CUSTOMIZER = (
    "apiVersion: apps.nvidia.com/v1alpha1\nkind: NemoCustomizer\nmetadata:\n  name: nemocustomizer-sample\n"
    '  namespace: nemo\nspec:\n  scheduler:\n    type: "volcano"\n  image:\n'
    '    repository: nvcr.io/nvidia/nemo-microservices/customizer-api\n    tag: "25.08"\n'
    "  trainingConfig:\n    image:\n      repository: nvcr.io/nvidia/nemo-microservices/customizer\n"
    '      tag: "25.08"\n    ttlSecondsAfterFinished: 3600\n    tolerations:\n'
    '      - key: "nvidia.com/gpu"\n        operator: "Exists"\n        effect: "NoSchedule"\n'
)


def test_nemo_customizer_training_jobs_are_said_not_passed(tmp_path: Path) -> None:
    """NVIDIA/k8s-nim-operator config/samples/nemo/latest/apps_v1alpha1_nemocustomizer.yaml (at
    f63f74d7ad22), cut: its GPU fine-tuning jobs are made by the customizer at run time, said at
    trainingConfig (a toleration's key asks for nothing); a GPU in trainingConfig.resources is said
    there."""
    path = tmp_path / "customizer.yaml"
    path.write_text(NEMO_CUSTOMIZER)
    assert findings(path) == [("accelerator-workload-not-judged", 12, "info")]
    path.write_text(NEMO_CUSTOMIZER + "    resources:\n      limits:\n        nvidia.com/gpu: 2\n")
    assert findings(path) == [("accelerator-workload-not-judged", 23, "info")]


def test_nim_build_engine_pod_is_said_not_passed(tmp_path: Path) -> None:
    """NVIDIA/k8s-nim-operator bundle/manifests/k8s-nim-operator.clusterserviceversion.yaml (at
    f63f74d7ad22), the NIMBuild of its alm-examples: the engine-build pod gets the NIMCache profile's
    GPUs, said at nimCache; one with GPUs in resources is said there."""
    path = tmp_path / "nimbuild.yaml"
    build = (
        "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMBuild\nmetadata:\n  name: meta-llama3-8b-instruct\n"
        "  namespace: nim-service\nspec:\n  nimCache:\n    name: meta-llama3-8b-instruct\n"
        "    profile: 7cc8597690a35aba19a3636f35e7f1c7e7dbc005fe88ce9394cad4a4adeed414\n  image:\n"
        "    repository: nvcr.io/nim/meta/llama-3.1-8b-instruct\n    tag: 1.3.3\n"
    )
    path.write_text(build)
    assert findings(path) == [("accelerator-workload-not-judged", 7, "info")]
    path.write_text(build + "  resources:\n    limits:\n      nvidia.com/gpu: 1\n")
    assert findings(path) == [("accelerator-workload-not-judged", 15, "info")]


def test_nemo_cpu_services_get_nothing(tmp_path: Path) -> None:
    """NVIDIA/k8s-nim-operator config/samples/nemo/latest/apps_v1alpha1_nemoguardrails.yaml (at
    f63f74d7ad22), cut: the guardrails service (like the evaluator, data store and entity store) is a
    CPU Deployment calling a NIM: nothing to say."""
    path = tmp_path / "guardrail.yaml"
    path.write_text(
        "apiVersion: apps.nvidia.com/v1alpha1\nkind: NemoGuardrail\nmetadata:\n  name: nemoguardrails-sample\n"
        "  namespace: nemo\nspec:\n  nimEndpoint:\n"
        '    baseURL: "http://meta-llama-3-1-8b-instruct.nemo.svc.cluster.local:8000/v1"\n  image:\n'
        '    repository: nvcr.io/nvidia/nemo-microservices/guardrails\n    tag: "25.10"\n  replicas: 1\n'
        '  resources:\n    limits:\n      cpu: "1"\n'
    )
    assert findings(path) == []


def test_kserve_model_over_a_named_runtime_among_the_context(tmp_path: Path) -> None:
    """The runtime a model names, given with --context, is merged as KServe merges it: its GPU and its
    16Gi request come from there, and the service's own 8Gi limit under that request is refused."""
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata:\n  name: my-vllm\nspec:\n"
        "  supportedModelFormats:\n    - name: huggingface\n  containers:\n    - name: kserve-container\n"
        "      image: vllm/vllm-openai:v0.11.0\n      resources:\n        requests:\n          cpu: '4'\n"
        "          memory: 16Gi\n        limits:\n          cpu: '8'\n          memory: 32Gi\n"
        "          nvidia.com/gpu: '1'\n"
    )
    path = tmp_path / "isvc.yaml"
    path.write_text(
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: llama\nspec:\n"
        "  predictor:\n    model:\n      runtime: my-vllm\n      modelFormat:\n        name: huggingface\n"
        "      storageUri: pvc://m\n      resources:\n        limits:\n          memory: 8Gi\n"
    )
    assert findings(path) == []  # its own runtime is not known: judged with what it sets
    assert findings(path, "--context", str(runtime)) == [
        ("missing-priority-class", 6, "warning"),
        ("request-exceeds-limit", 12, "error"),
    ]


# An Argo WorkflowTemplate a cluster holds (given as context, never reported on) with a GPU step, and
# the Workflow a user submits from it (`argo submit --from workflowtemplate/gpu-train` writes this).
GPU_WORKFLOW_TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata:
  name: gpu-train
spec:
  entrypoint: train
  templates:
  - name: train
    container:
      image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
      command: [python, train.py]
      resources:
        limits:
          nvidia.com/gpu: 1
          memory: 32Gi
        requests:
          cpu: "4"
          memory: 32Gi
"""
FROM_TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: gpu-train-
spec:
  workflowTemplateRef:
    name: gpu-train
"""


def test_workflow_running_a_context_template_is_judged_with_its_pods(tmp_path: Path) -> None:
    template = tmp_path / "template.yaml"
    template.write_text(GPU_WORKFLOW_TEMPLATE)
    workflow = tmp_path / "workflow.yaml"
    workflow.write_text(FROM_TEMPLATE)
    assert findings(workflow) == []  # the template is not known: nothing to judge
    assert findings(workflow, "--context", str(template)) == [("missing-priority-class", 6, "warning")]
    # the workflow's podPriorityClassName gives every pod its priority
    workflow.write_text(FROM_TEMPLATE.replace("spec:\n", "spec:\n  podPriorityClassName: training\n"))
    assert [f for f in findings(workflow, "--context", str(template)) if f[0] == "missing-priority-class"] == []
    # both linted: the template carries the finding, naming the workflow, once
    workflow.write_text(FROM_TEMPLATE)
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(tmp_path), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = [(Path(f["file"]).name, f["line"]) for f in json.loads(r.stdout)["findings"]]
    assert found == [("template.yaml", 8)]


# kserve/website docs/model-serving/generative-inference/multi-node/multi-node.md (at 1f649fcadfbe):
# the multi-node Hugging Face vLLM InferenceService, which sets no GPU anywhere; KServe's controller
# gives the head and each worker theirs from tensorParallelSize x pipelineParallelSize
# (kserve/kserve pkg/controller/v1beta1/inferenceservice/components/predictor.go computeRayNodeAndGPUs,
# reconcilers/deployment/deployment_reconciler.go addGPUResourceToDeployment, at aaac4e294dae).
KSERVE_MULTINODE = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: huggingface-llama3
  annotations:
    serving.kserve.io/deploymentMode: Standard
    serving.kserve.io/autoscalerClass: none
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      storageUri: pvc://llama-3-8b-pvc/hf/8b_instruction_tuned
    workerSpec:
      pipelineParallelSize: 2
      tensorParallelSize: 1
"""


def test_kserve_multinode_head_and_workers_are_gpu_pods(tmp_path: Path) -> None:
    """Two GPUs (1 x 2) on a head and one worker of one GPU each: both pods are GPU pods, judged for
    priority at the predictor and at its workerSpec (the worker's own pod spec: the predictor's
    priorityClassName does not reach it)."""
    path = tmp_path / "isvc.yaml"
    path.write_text(KSERVE_MULTINODE)
    assert findings(path) == [("missing-priority-class", 9, "warning"), ("missing-priority-class", 14, "warning")]
    path.write_text(KSERVE_MULTINODE.replace("  predictor:\n", "  predictor:\n    priorityClassName: serving\n"))
    assert findings(path) == [("missing-priority-class", 15, "warning")]
    # the doc's Case 3: tensorParallelSize 8 on workers of 8 GPUs fits on the head alone, no worker pod
    path.write_text(
        KSERVE_MULTINODE.replace("  predictor:\n", "  predictor:\n    priorityClassName: serving\n").replace(
            "      pipelineParallelSize: 2\n      tensorParallelSize: 1\n",
            "      pipelineParallelSize: 1\n      tensorParallelSize: 8\n      containers:\n"
            '      - name: worker-container\n        resources:\n          requests:\n            nvidia.com/gpu: "8"\n',
        )
    )
    assert findings(path) == []
    # a runtime of the user's own that is not among the inputs: its workers and executor are not known (the
    # head is judged as the service writes it, as for any such runtime), and the GPUs the service asks for
    # through tensorParallelSize x pipelineParallelSize are said, not passed in silence
    path.write_text(KSERVE_MULTINODE.replace("    model:\n", "    model:\n      runtime: my-multinode\n"))
    found = findings(path)
    assert found[0] == ("accelerator-workload-not-judged", 17, "info")
    assert found[1:] and all(line < 15 and severity == "warning" for _, line, severity in found[1:])


def test_kserve_multinode_gpu_counts_follow_the_controller() -> None:
    from kubelint_ml.input.kinds.kserve import _ray_gpus

    # (nodes, worker GPUs, head GPUs) for (total, head GPUs requested, worker GPUs requested)
    assert _ray_gpus(2, 0, 0) == (2, 1, 1)  # no GPUs set: one per node
    assert _ray_gpus(16, 0, 8) == (2, 8, 8)  # the doc's Case 1
    assert _ray_gpus(8, 0, 8) == (1, 0, 8)  # Case 3: the head alone
    assert _ray_gpus(12, 4, 4) == (3, 4, 4)
    assert _ray_gpus(5, 2, 0) == (4, 1, 2)  # the head's 2, then single-GPU workers


# kserve/kserve config/runtimes/kserve-huggingfaceserver-multinode.yaml (at aaac4e294dae), cut to the
# containers' resources, with the annotation that picks the mp executor (constants.go
# MultiNodeExecutorBackendAnnotationKey).
KSERVE_MULTINODE_RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata:
  name: kserve-huggingfaceserver-multinode
  annotations:
    serving.kserve.io/server-type: huggingfaceserver
    multinode/executor-backend: mp
spec:
  supportedModelFormats:
  - name: huggingface
    version: "1"
  containers:
  - name: kserve-container
    image: huggingfaceserver-gpu:replace
    resources:
      requests: {cpu: "2", memory: 6Gi}
      limits: {cpu: "4", memory: 12Gi}
  workerSpec:
    pipelineParallelSize: 1
    tensorParallelSize: 1
    containers:
    - name: worker-container
      image: huggingfaceserver-gpu:replace
      resources:
        requests: {cpu: "2", memory: 6Gi}
        limits: {cpu: "4", memory: 12Gi}
"""


def test_kserve_multinode_mp_executor_runs_a_node_per_pipeline_stage(tmp_path: Path) -> None:
    service = tmp_path / "isvc.yaml"
    service.write_text(
        KSERVE_MULTINODE.replace("    model:\n", "    model:\n      runtime: kserve-huggingfaceserver-multinode\n")
        .replace("pipelineParallelSize: 2", "pipelineParallelSize: 3")
        .replace("tensorParallelSize: 1", "tensorParallelSize: 4")
    )
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text(KSERVE_MULTINODE_RUNTIME)

    def said(*extra: str) -> list[tuple[str, int, str]]:
        return [(f["rule"], f["line"], f["message"]) for f in reported(service, *extra)]

    spread = "12 GPUs over the head and {} workers"
    assert [(rule, line, spread.format(2) in m) for rule, line, m in said("--context", str(runtime))] == [
        ("missing-priority-class", 9, True),
        ("missing-priority-class", 15, True),
    ]
    # the same runtime on the ray executor: one GPU per node, 11 workers
    runtime.write_text(KSERVE_MULTINODE_RUNTIME.replace("    multinode/executor-backend: mp\n", ""))
    assert [(rule, line, spread.format(11) in m) for rule, line, m in said("--context", str(runtime))] == [
        ("missing-priority-class", 9, True),
        ("missing-priority-class", 15, True),
    ]
