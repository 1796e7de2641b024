"""Fixes on the pods a controller builds from other fields (docs/kinds.md): each edit lands in the
user's own field, or the fix is not offered and -v says why; pod-level resources stay valid."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubelint_ml.cli import main


def _fix(tmp_path: Path, text: str, *extra: str) -> tuple[str, str]:
    """The file after ``check --fix --unsafe-fixes`` (and a second run, which must change nothing), and
    the -v output of the first run."""
    path = tmp_path / "m.yaml"
    path.write_text(text)
    r = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "-v", *extra, str(path)])
    assert r.exit_code in (0, 1), r.output
    after = path.read_text()
    again = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", *extra, str(path)])
    assert again.exit_code in (0, 1), again.output
    assert path.read_text() == after
    return after, r.output


def _rules(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "check.yaml"
    path.write_text(text)
    r = CliRunner().invoke(main, ["check", "--format", "json", str(path)])
    return sorted(f["rule"] for f in json.loads(r.output)["findings"])


NIM = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: llm
spec:
  image:
    repository: nvcr.io/nim/meta/llama-3.2-1b-instruct
    tag: "1.12.0"
  storage:
    nimCache:
      name: cache  # the model store
  resources:
    limits:
      nvidia.com/gpu: 1
"""


def test_nim_service_shm_size_goes_to_shared_memory_size_limit(tmp_path: Path) -> None:
    """The operator's dshm emptyDir is sized by storage.sharedMemorySizeLimit: the fix sets that (it
    wrote an `emptyDir:` key into the NIMService's spec before, a field the CRD does not have)."""
    after, _ = _fix(tmp_path, NIM)
    assert after == NIM.replace(
        "      name: cache  # the model store\n",
        "      name: cache  # the model store\n    sharedMemorySizeLimit: 1Gi\n",
    )
    assert "emptydir-memory-unbounded" not in _rules(tmp_path, after)


def test_nim_pipeline_service_shm_size_goes_to_its_storage(tmp_path: Path) -> None:
    text = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMPipeline
metadata:
  name: p
spec:
  services:
  - name: llm
    enabled: true
    spec:
      image: {repository: nvcr.io/nim/x, tag: "1"}
      resources: {limits: {nvidia.com/gpu: 1}}
"""
    after, _ = _fix(tmp_path, text)
    assert after == text + "      storage:\n        sharedMemorySizeLimit: 1Gi\n"


def test_kubeai_model_gets_no_fix_in_resource_profile(tmp_path: Path) -> None:
    """A Model has no field for the server's resources or its dshm size: no fix (it wrote
    `resourceProfile: {emptyDir: {sizeLimit: 1Gi}}`, a string field, before)."""
    text = """\
apiVersion: kubeai.org/v1
kind: Model
metadata:
  name: m
spec:
  features: [TextGeneration]
  url: hf://x/y
  engine: VLLM
  resourceProfile: cpu:1
  minReplicas: 1
"""
    after, out = _fix(tmp_path, text)
    assert after == text
    assert (
        "emptydir-memory-unbounded: not fixed: KubeAI builds the container's resources from the resource profile: "
        "change resourceProfile or the profile" in out
    )


LLM = """\
apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata:
  name: llm
spec:
  model:
    uri: hf://meta-llama/Llama-3.1-70B-Instruct
  template:
    nodeSelector:
      node.kubernetes.io/instance-type: p4d.24xlarge
    containers:
    - name: sidecar
      image: busybox
      resources:
        limits:
          nvidia.com/gpu: "8"
"""


def test_llm_inference_service_preset_main_container_is_not_edited(tmp_path: Path) -> None:
    """The main container is the preset's: its memory limit went to spec.template.resources (the
    pod-level resources) before; now only the user's own container is fixed, and -v says why."""
    after, out = _fix(tmp_path, LLM)
    assert after == LLM + "          memory: 475Gi\n"
    assert "missing-memory-limit: not fixed: the main container is kserve-config-llm-template's" in out


DGD = """\
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: dgd
spec:
  components:
  - name: worker
    sharedMemorySize: 64Mi
    podTemplate:
      spec:
        priorityClassName: serving
        nodeSelector:
          node.kubernetes.io/instance-type: p4d.24xlarge
        containers:
        - name: main
          image: vllm
          command: ["torchrun", "--nproc_per_node=8", "serve.py"]
          resources:
            limits:
              nvidia.com/gpu: 8
              memory: 500Gi
"""


def test_dynamo_component_shm_size_goes_to_shared_memory_size(tmp_path: Path) -> None:
    """The operator's /dev/shm is sized by the component's sharedMemorySize: the fix raises it (and the
    main container's memory limit by as much); it was refused before (the path went through the
    string)."""
    after, _ = _fix(tmp_path, DGD)
    assert after == DGD.replace("sharedMemorySize: 64Mi", "sharedMemorySize: 8Gi").replace(
        "memory: 500Gi", "memory: 520128Mi"
    )
    assert "shm-too-small-for-workers" not in _rules(tmp_path, after)


POD_LEVEL = """\
apiVersion: v1
kind: Pod
metadata:
  name: plr
spec:
  priorityClassName: x
  resources:
    requests:
      memory: 40Gi
    limits:
      memory: 40Gi
  containers:
  - name: train
    image: pytorch
    command: ["torchrun", "--nproc_per_node=8", "train.py"]
    resources:
      requests:
        memory: 40Gi
      limits:
        nvidia.com/gpu: 8
        memory: 40Gi
"""


def test_shm_fix_raises_pod_level_memory_with_the_containers(tmp_path: Path) -> None:
    """Raising the container's memory for the /dev/shm emptyDir raises the pod-level request and limit
    by as much: before, the fixed pod had a container limit above the pod's and requests adding up past
    the pod's request (pod-level-resources-invalid, rejected by the API server)."""
    after, _ = _fix(tmp_path, POD_LEVEL)
    assert after == POD_LEVEL.replace("memory: 40Gi", "memory: 48Gi") + (
        "    volumeMounts:\n"
        "    - name: dshm\n"
        "      mountPath: /dev/shm\n"
        "  volumes:\n"
        "  - name: dshm\n"
        "    emptyDir:\n"
        "      medium: Memory\n"
        "      sizeLimit: 8Gi\n"
    )
    assert "pod-level-resources-invalid" not in _rules(tmp_path, after)


def test_pod_level_limit_rises_only_with_a_written_request_when_it_must(tmp_path: Path) -> None:
    """A pod-level limit without a written request (it defaults to the containers' aggregate): the limit
    rises by the volume's size, nothing else is written at pod level."""
    text = POD_LEVEL.replace(
        "    requests:\n      memory: 40Gi\n    limits:\n      memory: 40Gi\n", "    limits:\n      memory: 64Gi\n"
    )
    after, _ = _fix(tmp_path, text)
    assert "    limits:\n      memory: 72Gi\n" in after
    assert after.count("memory: 48Gi") == 2
    assert "pod-level-resources-invalid" not in _rules(tmp_path, after)


RAY = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        priorityClassName: x
        containers:
        - name: ray-head
          image: rayproject/ray
          volumeMounts:
          - name: shared-mem
            mountPath: /dev/shm
        volumes:
        - name: shared-mem
          emptyDir:
            medium: Memory
"""


def test_ray_dev_shm_size_holds_the_object_store(tmp_path: Path) -> None:
    """A Ray node's /dev/shm is sized so that Ray's object store fits (at most max(10 GB, 95% of
    /dev/shm) by default): 11Gi, not the 1Gi fixSizeLimit, which put the store on disk once the
    container had a memory limit (ray-object-store-exceeds-shm after the fix)."""
    after, _ = _fix(tmp_path, RAY)
    assert after == RAY + "            sizeLimit: 11Gi\n"
    explicit = RAY.replace("rayStartParams: {}", "rayStartParams: {object-store-memory: '20000000000'}")
    after, _ = _fix(tmp_path, explicit)
    assert after == explicit + "            sizeLimit: 19Gi\n"  # whole Gi above 20 GB
    # with a memory limit the store is 30% of it, capped by the 11Gi /dev/shm: no finding
    limited = (
        RAY.replace(
            "          image: rayproject/ray\n",
            "          image: rayproject/ray\n          resources: {limits: {memory: 1000Gi}}\n",
        )
        + "            sizeLimit: 11Gi\n"
    )
    assert "ray-object-store-exceeds-shm" not in _rules(tmp_path, limited)
    assert "ray-object-store-exceeds-shm" in _rules(tmp_path, limited.replace("sizeLimit: 11Gi", "sizeLimit: 1Gi"))


def test_pod_with_a_pod_level_memory_request_gets_a_pod_level_limit(tmp_path: Path) -> None:
    """A container limit from the GPU share made the container's request (defaulted to it) add up past
    the pod-level request (pod-level-resources-invalid); the fix sets the pod-level limit instead."""
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: plr
spec:
  priorityClassName: x
  nodeSelector:
    node.kubernetes.io/instance-type: p4d.24xlarge
  resources:
    requests:
      memory: 40Gi
  containers:
  - name: train
    image: pytorch
    resources:
      limits:
        nvidia.com/gpu: 8
"""
    after, _ = _fix(tmp_path, text)
    assert after == text.replace("      memory: 40Gi\n", "      memory: 40Gi\n    limits:\n      memory: 951Gi\n")
    assert "pod-level-resources-invalid" not in _rules(tmp_path, after)
    # a share below the pod-level request: no fix, and -v says why
    low = text.replace("      memory: 40Gi\n", "      memory: 1000Gi\n")
    after, out = _fix(tmp_path, low)
    assert after == low
    assert "no fix for the pod-level memory limit: the pod's GPU share less headroom (951Gi) is below" in out


def test_tekton_v1_sidecar_memory_goes_to_compute_resources(tmp_path: Path) -> None:
    """A v1 Sidecar's resources are computeResources, as a v1 Step's: the fix wrote `resources`, a field
    v1 does not have, for a sidecar that had neither."""
    text = """\
apiVersion: tekton.dev/v1
kind: TaskRun
metadata:
  name: tr
spec:
  podTemplate:
    nodeSelector:
      node.kubernetes.io/instance-type: p4d.24xlarge
    priorityClassName: x
  taskSpec:
    steps:
    - name: train
      image: pytorch
      computeResources:
        limits:
          nvidia.com/gpu: 8
    sidecars:
    - name: side
      image: busybox
"""
    after, _ = _fix(tmp_path, text)
    assert after == text.replace(
        "          nvidia.com/gpu: 8\n", "          nvidia.com/gpu: 8\n          memory: 475Gi\n"
    ) + ("      computeResources:\n        limits:\n          memory: 475Gi\n")
    beta = text.replace("tekton.dev/v1\n", "tekton.dev/v1beta1\n").replace("computeResources", "resources")
    after, _ = _fix(tmp_path, beta)
    assert after.endswith("      image: busybox\n      resources:\n        limits:\n          memory: 475Gi\n")


def test_nim_sidecar_and_init_containers_get_no_resources(tmp_path: Path) -> None:
    """NIMContainerSpec has no resources: a memory limit written there is not the operator's field (the
    API server prunes it); the main container's is set, and -v says why the others are not."""
    text = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: llm
spec:
  image:
    repository: nvcr.io/nim/meta/llama-3.2-1b-instruct
    tag: "1.12.0"
  nodeSelector:
    node.kubernetes.io/instance-type: p4d.24xlarge
  storage:
    sharedMemorySizeLimit: 1Gi
  resources:
    limits:
      nvidia.com/gpu: 1
  sidecarContainers:
  - name: proxy
    image: {repository: envoy, tag: "1"}
  initContainers:
  - name: warm
    image: {repository: busybox, tag: "1"}
"""
    after, out = _fix(tmp_path, text)
    assert after == text.replace("      nvidia.com/gpu: 1\n", "      nvidia.com/gpu: 1\n      memory: 59Gi\n")
    assert (
        "missing-memory-limit: not fixed: a NIMService's sidecarContainers entries have no resources or "
        "volumeMounts (NIMContainerSpec)" in out
    )
    assert "missing-memory-limit: not fixed: a NIMService's initContainers entries have no resources" in out


def test_hami_shared_gpus_get_no_memory_from_a_gpu_share(tmp_path: Path) -> None:
    """nvidia.com/gpu: 2 with HAMi's gpumem and gpucores is two slices of shared GPUs, not 2 of the node's 8:
    the memory fix sized it as 2/8 of the node (425Gi); now no fix, and -v says why."""
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: vgpu
spec:
  priorityClassName: x
  nodeSelector:
    node.kubernetes.io/instance-type: p4d.24xlarge
  containers:
  - name: c
    image: ubuntu
    resources:
      limits:
        nvidia.com/gpu: 2
        nvidia.com/gpumem: 3000
        nvidia.com/gpucores: 30
"""
    after, out = _fix(tmp_path, text)
    assert after == text
    assert (
        "no fix for memory of container 'c': the pod asks for nvidia.com/gpumem beside its devices: they are "
        "shared (HAMi, a shared GPU), so its share of the node is not known" in out
    )
    plain = text.replace("        nvidia.com/gpumem: 3000\n        nvidia.com/gpucores: 30\n", "")
    after, _ = _fix(tmp_path, plain)
    assert after == plain.replace("        nvidia.com/gpu: 2\n", "        nvidia.com/gpu: 2\n        memory: 237Gi\n")


def test_operator_shm_sizes_in_decimal_bytes_are_respelled_where_written(tmp_path: Path) -> None:
    """`2GB` in a NIMService's sharedMemorySizeLimit or a Dynamo component's sharedMemorySize: the
    invalid-quantity fix writes `2G` there (it was refused: its path went through the scalar)."""
    after, _ = _fix(
        tmp_path,
        NIM.replace("      name: cache  # the model store\n", "      name: cache\n    sharedMemorySizeLimit: 2GB\n"),
        "--select",
        "invalid-quantity",
    )
    assert "    sharedMemorySizeLimit: 2G\n" in after
    after, _ = _fix(
        tmp_path, DGD.replace("sharedMemorySize: 64Mi", "sharedMemorySize: 16GB"), "--select", "invalid-quantity"
    )
    assert after == DGD.replace("sharedMemorySize: 64Mi", "sharedMemorySize: 16G")


HELM_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: "{{ .Values.name }}"
spec:
  priorityClassName: x
  nodeSelector:
    node.kubernetes.io/instance-type: p4d.24xlarge
  containers:
  - name: c
    image: x
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def test_fixes_shared_by_workers_report_as_a_sequential_run(tmp_path: Path) -> None:
    """With --jobs, a file left unchanged (its fix refused: a Helm directive) is reported as a sequential
    run reports it: not marked fixable (the workers' reasons came back), and the same files written."""
    outputs = []
    for jobs in ("1", "2"):
        root = tmp_path / jobs
        root.mkdir()
        for i in range(20):
            (root / f"p{i:02}.yaml").write_text(LLM.replace("name: llm", f"name: llm{i}"))
        (root / "zz.yaml").write_text(HELM_POD)
        r = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "-j", jobs, str(root)])
        assert r.exit_code == 1, r.output
        outputs.append((r.output.replace(str(root), "ROOT"), sorted(p.read_text() for p in root.iterdir())))
    assert outputs[0] == outputs[1]
    text, files = outputs[1]
    assert "[*]" not in text.split("zz.yaml")[1]
    assert HELM_POD in files


def test_argo_parameters_are_not_taken_for_a_helm_template(tmp_path: Path) -> None:
    """Argo substitutes {{...}} itself: a workflow whose args use its parameters gets its fixes (the
    whole document was refused as a Helm template); a Pod with a quoted directive still does not."""
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: gpu-
spec:
  entrypoint: train
  templates:
  - name: train
    nodeSelector:
      node.kubernetes.io/instance-type: p4d.24xlarge
    container:
      image: nvcr.io/nvidia/pytorch:24.05-py3
      args: ["--epochs={{workflow.parameters.epochs}}"]
      resources:
        limits:
          nvidia.com/gpu: 1
"""
    after, _ = _fix(tmp_path, text)
    assert after == text + "          memory: 118Gi\n"
    after, out = _fix(tmp_path, HELM_POD)
    assert after == HELM_POD
    assert "not fixed: the document holds a Helm/Go template directive" in out


ARGO_DEFAULTS = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: td-
spec:
  entrypoint: train
  podPriorityClassName: x
  templateDefaults:
    container:
      resources:
        limits:
          memory: 64Gi
  templates:
  - name: train
    container:
      image: pytorch
      command: ["torchrun", "--nproc_per_node=8", "train.py"]
      resources:
        limits:
          nvidia.com/gpu: 8
  - name: eval
    container:
      image: pytorch
"""


def test_argo_fix_of_an_inherited_field_sets_the_templates_own(tmp_path: Path) -> None:
    """A memory limit the template takes from templateDefaults is raised in the template's own container
    (Argo merges it over the default): it was raised in templateDefaults, for every template."""
    after, _ = _fix(tmp_path, ARGO_DEFAULTS)
    assert after == ARGO_DEFAULTS.replace(
        "          nvidia.com/gpu: 8\n",
        "          nvidia.com/gpu: 8\n"
        "          memory: 72Gi\n"
        "      volumeMounts:\n"
        "      - name: dshm\n"
        "        mountPath: /dev/shm\n"
        "    volumes:\n"
        "    - name: dshm\n"
        "      emptyDir:\n"
        "        medium: Memory\n"
        "        sizeLimit: 8Gi\n",
    )


def test_argo_pod_level_resources_of_the_workflow_are_not_replaced(tmp_path: Path) -> None:
    """Pod-level resources from templateDefaults are raised in the template's own podResources (merged
    over them); the workflow's podResources, which a template's own would replace whole, get no fix."""
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: pr-
spec:
  entrypoint: train
  podPriorityClassName: x
  templateDefaults:
    podResources:
      requests: {memory: 40Gi}
      limits: {memory: 40Gi}
  templates:
  - name: train
    container:
      image: pytorch
      command: ["torchrun", "--nproc_per_node=8", "train.py"]
      resources:
        requests: {memory: 40Gi}
        limits: {nvidia.com/gpu: 8, memory: 40Gi}
"""
    after, _ = _fix(tmp_path, text, "--kubernetes-version", "1.34")
    assert after.startswith(text.split("        requests: {memory: 40Gi}\n        limits: {nvidia")[0])
    assert after.endswith(
        "        requests: {memory: 48Gi}\n"
        "        limits: {nvidia.com/gpu: 8, memory: 48Gi}\n"
        "      volumeMounts:\n"
        "      - name: dshm\n"
        "        mountPath: /dev/shm\n"
        "    volumes:\n"
        "    - name: dshm\n"
        "      emptyDir:\n"
        "        medium: Memory\n"
        "        sizeLimit: 8Gi\n"
        "    podResources:\n"
        "      requests:\n"
        "        memory: 48Gi\n"
        "      limits:\n"
        "        memory: 48Gi\n"
    )
    workflow_level = text.replace(
        "  templateDefaults:\n    podResources:\n      requests: {memory: 40Gi}\n      limits: {memory: 40Gi}\n",
        "  podResources:\n    requests: {memory: 40Gi}\n    limits: {memory: 40Gi}\n",
    )
    after, out = _fix(tmp_path, workflow_level, "--kubernetes-version", "1.34")
    assert after == workflow_level
    assert "shm-too-small-for-workers: not fixed: the pod-level resources are the workflow's podResources" in out


DGD_V1ALPHA1 = """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: vllm-agg
spec:
  services:
    VllmDecodeWorker:
      componentType: worker
      replicas: 1
      sharedMemory:
        size: 64Mi  # too small for eight workers
      resources:
        limits:
          gpu: "8"
      extraPodSpec:
        nodeSelector:
          node.kubernetes.io/instance-type: p4d.24xlarge
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.5.0
          command: ["python3", "-m", "dynamo.vllm"]
          args: ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8"]
"""


def test_dynamo_v1alpha1_memory_goes_to_the_services_resources(tmp_path: Path) -> None:
    """A v1alpha1 service's resources (cpu, memory, gpu strings) are what the operator copies into the main
    container: the memory limit and the /dev/shm size are set in the service's own fields (the fix was
    refused for the whole kind before); every other byte stays, and a second run changes nothing."""
    after, _ = _fix(tmp_path, DGD_V1ALPHA1)
    assert after == DGD_V1ALPHA1.replace("size: 64Mi  #", "size: 8Gi  #").replace(
        '          gpu: "8"\n', '          gpu: "8"\n          memory: 951Gi\n'
    )
    assert _rules(tmp_path, after) == ["missing-priority-class"]


def test_dynamo_v1alpha1_main_container_resources_keep_the_fix_refused(tmp_path: Path) -> None:
    """With mainContainer.resources beside the service's, which one the operator keeps for a key is not the
    file's to say: the memory fix is not offered, and -v says why."""
    text = DGD_V1ALPHA1.replace("size: 64Mi  # too small for eight workers", "size: 8Gi").replace(
        '          args: ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8"]\n',
        '          args: ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8"]\n'
        '          resources:\n            requests:\n              cpu: "8"\n',
    )
    after, out = _fix(tmp_path, text)
    assert after == text
    assert "missing-memory-limit: not fixed: the Dynamo operator builds the main container's resources" in out


TRAIN_JOB = """\
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
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: trainer
          spec:
            template:
              spec:
                priorityClassName: training
                nodeSelector:
                  node.kubernetes.io/instance-type: p4d.24xlarge
                containers:
                - name: node
                  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: gpu-job
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 2
    resourcesPerNode:
      limits:
        nvidia.com/gpu: 4
"""


def test_train_job_memory_goes_to_resources_per_node(tmp_path: Path) -> None:
    """resourcesPerNode is the trainer container's resources as written: the memory limit is set there (the
    fix was refused for every TrainJob before). Without resourcesPerNode the runtime's resources are the
    container's, and writing resourcesPerNode would replace them all: no fix, -v says why."""
    after, _ = _fix(tmp_path, TRAIN_JOB)
    assert after == TRAIN_JOB + "        memory: 475Gi\n"
    assert _rules(tmp_path, after) == []
    runtime_only = TRAIN_JOB.replace("    resourcesPerNode:\n      limits:\n        nvidia.com/gpu: 4\n", "").replace(
        "                  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime\n",
        "                  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime\n"
        "                  resources:\n                    limits:\n                      nvidia.com/gpu: 4\n",
    )
    after, out = _fix(tmp_path, runtime_only)
    assert after == runtime_only
    assert "not fixed: the trainer's node container takes its resources from spec.trainer.resourcesPerNode" in out


SPARK = """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-gpu
spec:
  type: Scala
  mode: cluster
  image: nvcr.io/nvidia/spark-rapids:24.10
  mainClass: com.example.Main
  mainApplicationFile: local:///opt/app.jar
  sparkVersion: 3.5.3
  volumes:
  - name: spark-local-dir-1
    emptyDir: {}
  driver:
    cores: 1
    memory: 4g
    priorityClassName: batch
    volumeMounts:
    - name: spark-local-dir-1
      mountPath: /tmp/spark-local
  executor:
    cores: 4
    instances: 2
    nodeSelector:
      node.kubernetes.io/instance-type: g5.12xlarge
    memory: 16g
    priorityClassName: batch
    gpu:
      name: nvidia.com/gpu
      quantity: 1
    volumeMounts:
    - name: spark-local-dir-1
      mountPath: /tmp/spark-local
    template:
      spec:
        containers:
        - name: executor
        - name: log-shipper
          image: fluent/fluent-bit:3.1
"""


def test_spark_fixes_of_the_pod_template_and_volumes_are_the_users(tmp_path: Path) -> None:
    """The application's volumes and a role's pod template are pod fields Spark keeps as written: a disk
    emptyDir's sizeLimit and a sidecar's memory limit are fixed there (refused for the whole kind before);
    the containers' ephemeral-storage requests, which the operator builds, stay refused with the reason."""
    after, out = _fix(tmp_path, SPARK)
    assert after == SPARK.replace("    emptyDir: {}\n", "    emptyDir: {sizeLimit: 10Gi}\n") + (
        "          resources:\n            limits:\n              memory: 20Gi\n"
    )
    assert "missing-ephemeral-storage-request: not fixed: the Spark operator builds the pod's resources" in out
    assert _rules(tmp_path, after) == ["missing-ephemeral-storage-request", "missing-ephemeral-storage-request"]


def test_optimization_job_memory_goes_to_its_train_job_template(tmp_path: Path) -> None:
    """An OptimizationJob's trials are TrainJobs of its trainJobTemplate: the memory fix lands in the
    template's resourcesPerNode, every other byte kept."""
    job = TRAIN_JOB.split("---\n")[1]
    spec = job.split("spec:\n", 1)[1]
    optimization = (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: OptimizationJob\nmetadata:\n  name: tune\nspec:\n"
        "  numTrials: 4\n  parallelTrials: 2\n  trainJobTemplate:\n    spec:\n"
        + "".join("    " + line + "\n" for line in spec.splitlines())
    )
    text = TRAIN_JOB.split("---\n")[0] + "---\n" + optimization
    after, _ = _fix(tmp_path, text)
    assert after == text + "            memory: 475Gi\n"
