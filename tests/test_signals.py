from pathlib import Path

import pytest
import yaml

from kubelint_ml.input.loader import load
from kubelint_ml.k8s.signals import Signal, container_signals, signals_for_template, workload_signals


def sig(text, kind, path, processes=None):
    return Signal(text, kind, path, processes)


# ---------------------------------------------------------------- torchrun


def test_torchrun_list_form_equals_sign():
    c = {"command": ["torchrun"], "args": ["--nnodes=2", "--nproc_per_node=32", "train_torchrun.py"]}
    assert container_signals(c) == [sig("--nproc_per_node=32", "torchrun", ("args", 1), 32)]


def test_torchrun_space_separated_and_dash_spelling():
    c = {"command": ["/usr/local/bin/torchrun", "--nproc-per-node", "4", "train.py"]}
    assert container_signals(c) == [sig("--nproc-per-node 4", "torchrun", ("command", 1), 4)]


def test_torchrun_single_process_is_not_a_signal():
    c = {"command": ["bash", "-c"], "args": ["torchrun --rdzv_id=123 --nnodes=4 --nproc_per_node=1 mnist.py"]}
    assert container_signals(c) == []
    assert container_signals({"command": ["torchrun", "train.py"]}) == []


def test_torchrun_device_words_and_unresolved_variables():
    assert container_signals({"command": ["torchrun", "--nproc_per_node=gpu", "t.py"]}) == [
        sig("--nproc_per_node=gpu", "torchrun", ("command", 1))
    ]
    assert container_signals({"command": ["torchrun", "--nproc_per_node=auto", "t.py"]}) == [
        sig("--nproc_per_node=auto", "torchrun", ("command", 1))
    ]
    # a template placeholder (envsubst) and an unresolvable $(VAR)
    assert container_signals(
        {"command": ["/usr/local/bin/torchrun", "--nproc_per_node=$GPU_PER_NODE", "/fsdp/train.py"]}
    ) == [sig("--nproc_per_node=$GPU_PER_NODE", "torchrun", ("command", 1))]
    assert container_signals({"args": ["torchrun", "--nproc_per_node", "$(NPROC)", "t.py"]}) == [
        sig("--nproc_per_node $(NPROC)", "torchrun", ("args", 1))
    ]


def test_variables_resolve_through_literal_env():
    c = {
        "command": ["torchrun", "--nproc_per_node=$(NPROC)", "t.py"],
        "env": [{"name": "NPROC", "value": "8"}, {"name": "ONE", "value": "1"}],
    }
    assert container_signals(c) == [sig("--nproc_per_node=$(NPROC)", "torchrun", ("command", 1), 8)]
    c["command"][1] = "--nproc_per_node=${ONE}"
    assert container_signals(c) == []


def test_python_m_torch_distributed():
    c = {"command": ["python", "-m", "torch.distributed.launch", "--nproc_per_node=2", "t.py"]}
    assert container_signals(c) == [sig("--nproc_per_node=2", "torchrun", ("command", 3), 2)]
    # -m after the script belongs to the script
    c = {"command": ["python3", "train.py", "-m", "torch.distributed.run", "--nproc_per_node", "1"]}
    assert container_signals(c) == []


def test_pet_nproc_per_node_env():
    c = {"env": [{"name": "PET_NPROC_PER_NODE", "value": "4"}, {"name": "PET_NNODES", "value": "2"}]}
    assert container_signals(c) == [sig("PET_NPROC_PER_NODE=4", "torchrun", ("env", 0, "value"), 4)]
    assert container_signals({"env": [{"name": "PET_NPROC_PER_NODE", "value": "1"}]}) == []
    assert container_signals({"env": [{"name": "PET_NPROC_PER_NODE", "valueFrom": {"x": 1}}]}) == []


# ---------------------------------------------------------------- DataLoader


def test_dataloader_flags():
    c = {"command": ["python", "train.py", "--num_workers=4", "--dataloader_num_workers", "8", "--num-workers", "0"]}
    assert container_signals(c) == [
        sig("--num_workers=4", "dataloader", ("command", 2), 4),
        sig("--dataloader_num_workers 8", "dataloader", ("command", 3), 8),
    ]


def test_workers_flag_only_for_python_commands():
    # the PyTorch imagenet example's data-loading flag
    script = (
        "wget main.py; /usr/local/bin/torchrun --nproc_per_node=1 --nnodes=3 imagenet.py --arch=resnet18 --workers=4"
    )
    assert container_signals({"command": ["/bin/bash", "-c", script]}) == [
        sig("--workers=4", "dataloader", ("command", 2), 4)
    ]
    assert container_signals({"command": ["python", "-m", "torch.distributed.run", "imagenet.py", "--workers=0"]}) == []
    assert container_signals({"command": ["mytool", "--workers", "4"]}) == []


def test_hydra_style_overrides():
    c = {"args": ["python", "train.py", "data.dataloader.num_workers=6", "trainer.devices=8", "num_workers=0"]}
    assert container_signals(c) == [sig("data.dataloader.num_workers=6", "dataloader", ("args", 2), 6)]


def test_inline_python_dataloader_and_multiprocessing():
    code = (
        "import torch\n"
        "loader = DataLoader(ds, batch_size=32, num_workers=4)\n"
        "val = DataLoader(ds, num_workers=0)\n"
        "with multiprocessing.Pool(8) as p:\n    pass\n"
    )
    c = {"command": ["python", "-c", code]}
    assert container_signals(c) == [
        sig("num_workers=4", "dataloader", ("command", 2), 4),
        sig("multiprocessing.Pool(", "multiprocessing", ("command", 2)),
    ]


def test_env_num_workers_is_ambiguous_but_dataloader_names_count():
    c = {
        "env": [
            {"name": "NUM_WORKERS", "value": "4"},  # Ray Train / MPI samples: machines
            {"name": "OMP_NUM_THREADS", "value": "8"},
            {"name": "DATALOADER_NUM_WORKERS", "value": "6"},
            {"name": "NUM_DATA_WORKERS", "value": "0"},
        ]
    }
    assert container_signals(c) == [sig("DATALOADER_NUM_WORKERS=6", "dataloader", ("env", 2, "value"), 6)]


def test_parallel_size_env_is_at_most_the_containers_gpus():
    """A model-parallel size in env starts one worker per GPU of this container: the ranks beyond its
    GPUs run in the other pods of the group (a multi-node NIM's pipeline stages, one per pod)."""
    env = [{"name": "NIM_TENSOR_PARALLEL_SIZE", "value": "8"}, {"name": "NIM_PIPELINE_PARALLEL_SIZE", "value": "2"}]
    c = {"env": env, "resources": {"limits": {"nvidia.com/gpu": 1}}}
    assert container_signals(c) == []
    c["resources"]["limits"]["nvidia.com/gpu"] = 4
    assert container_signals(c) == [
        sig("NIM_TENSOR_PARALLEL_SIZE=8", "model-parallel", ("env", 0, "value"), 4),
        sig("NIM_PIPELINE_PARALLEL_SIZE=2", "model-parallel", ("env", 1, "value"), 2),
    ]
    del c["resources"]  # no GPU limit written: as said
    assert [s.processes for s in container_signals(c)] == [8, 2]


def test_ray_num_workers_is_not_dataloader():
    c = {"command": ["bash", "-c", "ray job submit --address $RAY -- python train.py --num-workers 4"]}
    assert container_signals(c) == []
    c = {"command": ["bash", "-c", "ray start --head --block"]}
    assert container_signals(c) == [sig("ray start", "ray", ("command", 2))]


# ---------------------------------------------------------------- launchers


def test_accelerate_launch_per_machine_count():
    script = (
        "accelerate launch \\\n  --config_file fsdp_config.yaml \\\n  --machine_rank ${JOB_COMPLETION_INDEX} \\\n"
        "  --num_processes 4 \\\n  --num_machines 2 \\\n  fine_tune.py\n"
    )
    c = {"command": ["bash", "-c", script]}
    assert container_signals(c) == [sig("--num_processes 4", "accelerate", ("command", 2), 2)]
    assert container_signals({"command": ["accelerate", "launch", "--num_processes=1", "t.py"]}) == []
    assert container_signals({"command": ["accelerate", "launch", "t.py"]}) == [
        sig("accelerate launch", "accelerate", ("command", 0))
    ]


def test_deepspeed_launcher():
    assert container_signals({"command": ["deepspeed", "--num_gpus=8", "train.py"]}) == [
        sig("--num_gpus=8", "deepspeed", ("command", 1), 8)
    ]
    assert container_signals({"command": ["deepspeed", "train.py", "--deepspeed", "ds.json"]}) == [
        sig("deepspeed", "deepspeed", ("command", 0))
    ]
    # the word in a path or image name is not the launcher
    assert container_signals({"command": ["torchrun"], "args": ["train.py", "/root/deepspeed_data"]}) == []


def test_mpi_launchers():
    c = {
        "command": [
            "/bin/sh",
            "-c",
            "mkdir -p /var/run/sshd; /usr/sbin/sshd; mpiexec --allow-run-as-root --host ${MPI_HOST} -np 2 mpi_hello_world;",
        ]
    }
    assert container_signals(c) == [sig("-np 2", "mpi", ("command", 2), 2)]
    assert container_signals({"command": ["mpirun"], "args": ["-n", "2", "/home/mpiuser/pi"]}) == [
        sig("-n 2", "mpi", ("args", 0), 2)
    ]
    assert container_signals({"args": ["cd bin && mpirun -n $(($NUM_WORKERS * 192)) -ppn 192 ./xhpl"]}) == [
        sig("-n $(($NUM_WORKERS * 192))", "mpi", ("args", 0))
    ]
    assert container_signals({"command": ["horovodrun", "-np", "1", "python", "t.py"]}) == []


def test_servers_and_parallel_tools():
    assert container_signals({"command": ["gunicorn", "-w", "4", "app:app"]}) == [
        sig("-w 4", "server", ("command", 1), 4)
    ]
    assert container_signals({"command": ["gunicorn", "--workers=1", "app:app"]}) == []
    assert container_signals({"command": ["sh", "-c", "make -j8 all && make install"]}) == [
        sig("-j8", "make", ("command", 2), 8)
    ]
    assert container_signals({"command": ["make", "-j", "all"]}) == [sig("-j", "make", ("command", 1))]
    assert container_signals({"command": ["make", "all"]}) == []
    assert container_signals({"command": ["sh", "-c", "ls | xargs -P 4 -n 1 gzip"]}) == [
        sig("-P 4", "xargs", ("command", 2), 4)
    ]
    assert container_signals({"command": ["parallel", "gzip", ":::", "a", "b"]}) == [
        sig("parallel", "parallel", ("command", 0))
    ]
    assert container_signals({"command": ["supervisord", "-n"]}) == [sig("supervisord", "supervisor", ("command", 0))]


def test_omp_and_thread_counts_are_not_signals():
    c = {"command": ["python", "t.py", "--threads", "8"], "env": [{"name": "OMP_NUM_THREADS", "value": "16"}]}
    assert container_signals(c) == []


# ---------------------------------------------------------------- shell jobs


def test_background_jobs():
    two = {"command": ["bash", "-c"], "args": ["python server.py & python train.py"]}
    assert container_signals(two) == [sig("python &", "shell", ("args", 0))]
    # `job & wait` (graceful-termination idiom) is one job
    idiom = {"command": ["bash", "-c"], "args": ["trap 'exit 0' TERM; /tmp/sample --benchmark & wait"]}
    assert container_signals(idiom) == []
    sleeper = {"command": ["bash", "-c"], "args": ["nvidia-smi; trap 'exit 0' TERM; sleep infinity & wait"]}
    assert container_signals(sleeper) == []
    # && is not a background job
    assert container_signals({"args": ["bash", "-c", "pip install x && python t.py"]}) == []


def test_comments_and_quotes_are_not_scanned_as_commands():
    c = {"command": ["bash", "-c", "# torchrun --nproc_per_node=8 old.py\necho 'mpirun -np 4' && python t.py"]}
    assert container_signals(c) == []


def test_order_and_deduplication():
    c = {
        "command": ["bash", "-c"],
        "args": ["torchrun --nproc_per_node=8 t.py --num_workers 4", "ignored"],
        "env": [{"name": "PET_NPROC_PER_NODE", "value": "8"}, {"name": "EXTRA", "value": "--nproc_per_node=2"}],
    }
    assert container_signals(c) == [
        sig("--nproc_per_node=8", "torchrun", ("args", 0), 8),
        sig("--num_workers 4", "dataloader", ("args", 0), 4),
        sig("PET_NPROC_PER_NODE=8", "torchrun", ("env", 0, "value"), 8),
        sig("--nproc_per_node=2", "torchrun", ("env", 1, "value"), 2),
    ]
    assert container_signals(c) == container_signals(c)
    dup = {"command": ["torchrun", "--nproc_per_node=8", "t.py"], "args": []}
    assert len(container_signals(dup)) == 1


@pytest.mark.parametrize(
    "container",
    [
        None,
        3,
        "x",
        {"command": 3, "args": {"a": 1}, "env": "x"},
        {"command": [None, 3, True, ["x"]], "args": [{"a": 1}]},
        {"env": [3, {"name": 1, "value": 2}, {"name": "X"}, {"value": "y"}]},
        {"command": ["bash", "-c", "echo 'unterminated"]},
        {"command": ["bash", "-c", "echo $(( 1 + "]},
        {"command": ["torchrun", "--nproc_per_node"]},
        {"command": ["mpirun", "-np"]},
        {"command": ["bash", "-c"]},
        {"command": ["sh", "-o"]},
        {"command": ["env"]},
        {"command": ["python", "-m"]},
    ],
)
def test_wrong_types_never_crash(container):
    assert isinstance(container_signals(container), list)
    assert isinstance(workload_signals(container), list)


def test_command_as_string_is_scanned_as_script():
    assert container_signals({"command": "torchrun --nproc_per_node=4 t.py"}) == [
        sig("--nproc_per_node=4", "torchrun", ("command",), 4)
    ]


# ---------------------------------------------------------------- workloads


def test_pytorchjob_nproc_per_node():
    obj = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "spec": {"nprocPerNode": "4", "elasticPolicy": {"nProcPerNode": 1}, "pytorchReplicaSpecs": {"Worker": {}}},
    }
    assert workload_signals(obj) == [sig("nprocPerNode: 4", "torchrun", ("spec", "nprocPerNode"), 4)]
    obj["spec"]["nprocPerNode"] = "auto"
    assert workload_signals(obj) == [sig("nprocPerNode: auto", "torchrun", ("spec", "nprocPerNode"))]
    assert signals_for_template(obj, ("spec", "pytorchReplicaSpecs", "Worker", "template"))
    obj["spec"]["elasticPolicy"]["nProcPerNode"] = 8
    assert workload_signals(obj)[1] == sig("nProcPerNode: 8", "torchrun", ("spec", "elasticPolicy", "nProcPerNode"), 8)


def test_mpijob_slots_apply_to_workers():
    obj = {"kind": "MPIJob", "spec": {"slotsPerWorker": 8, "mpiReplicaSpecs": {"Launcher": {}, "Worker": {}}}}
    assert workload_signals(obj) == [sig("slotsPerWorker: 8", "mpi", ("spec", "slotsPerWorker"), 8)]
    assert signals_for_template(obj, ("spec", "mpiReplicaSpecs", "Worker", "template")) == workload_signals(obj)
    assert signals_for_template(obj, ("spec", "mpiReplicaSpecs", "Launcher", "template")) == []
    obj["spec"]["runLauncherAsWorker"] = True
    assert signals_for_template(obj, ("spec", "mpiReplicaSpecs", "Launcher", "template")) == workload_signals(obj)
    obj["spec"]["slotsPerWorker"] = 1
    assert workload_signals(obj) == []


def test_trainjob_and_training_runtime():
    tj = {"kind": "TrainJob", "spec": {"trainer": {"numNodes": 2, "numProcPerNode": 4}}}
    assert workload_signals(tj) == [sig("numProcPerNode: 4", "trainjob", ("spec", "trainer", "numProcPerNode"), 4)]
    rt = {
        "kind": "ClusterTrainingRuntime",
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
            "template": {"spec": {"replicatedJobs": [{"name": "initializer"}, {"name": "node"}]}},
        },
    }
    signals = workload_signals(rt)
    assert signals == [sig("numProcPerNode: auto", "torchrun", ("spec", "mlPolicy", "torch", "numProcPerNode"))]
    node_tpl = ("spec", "template", "spec", "replicatedJobs", 1, "template", "spec", "template")
    init_tpl = ("spec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template")
    assert signals_for_template(rt, node_tpl) == signals
    assert signals_for_template(rt, init_tpl) == []
    # The trainer job marked by the ancestor-step label, whatever its name (as the resource rules read it).
    jobs = rt["spec"]["template"]["spec"]["replicatedJobs"]
    jobs[0] = {
        "name": "trainer-main",
        "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}}},
    }
    jobs[1] = {
        "name": "node",
        "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "model-initializer"}}},
    }
    assert signals_for_template(rt, init_tpl) == signals
    assert signals_for_template(rt, node_tpl) == []


def test_kuberay_groups():
    obj = {"kind": "RayJob", "spec": {"rayClusterSpec": {"headGroupSpec": {}, "workerGroupSpecs": [{}, 3]}}}
    assert workload_signals(obj) == [
        sig("ray start (KubeRay head)", "ray", ("spec", "rayClusterSpec", "headGroupSpec")),
        sig("ray start (KubeRay worker)", "ray", ("spec", "rayClusterSpec", "workerGroupSpecs", 0)),
    ]
    assert signals_for_template(obj, ("spec", "submitterPodTemplate")) == []
    assert workload_signals({"kind": "Job", "spec": {"nprocPerNode": 8}}) == []


# ---------------------------------------------------------------- corpus


def corpus_doc(corpus, name, kind):
    docs = yaml.safe_load_all((corpus / name).read_text())
    return next(d for d in docs if isinstance(d, dict) and d.get("kind") == kind)


def test_corpus_trainium_torchrun(corpus):
    job = corpus_doc(
        corpus, "awslabs__ai-on-eks/infra__trainium-inferentia__examples__mlp_train__trn1-mlp-karpenter.yaml", "Job"
    )
    container = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]  # Volcano Job
    assert container_signals(container) == [sig("--nproc_per_node=32", "torchrun", ("args", 1), 32)]


def test_corpus_bionemo_pytorchjob(corpus):
    obj = corpus_doc(
        corpus, "awslabs__ai-on-eks/infra__bionemo__examples__esm2nv__esm2nv-training-job.yaml", "PyTorchJob"
    )
    assert workload_signals(obj) == [sig("nprocPerNode: 4", "torchrun", ("spec", "nprocPerNode"), 4)]


def test_corpus_gke_accelerate_job(corpus):
    job = corpus_doc(
        corpus,
        "GoogleCloudPlatform__kubernetes-engine-samples/ai-ml__mix-train-and-inference__workloads__fine-tune-l4.yaml",
        "Job",
    )
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container_signals(container) == [sig("--num_processes 4", "accelerate", ("command", 2), 2)]


def test_corpus_dra_sleep_idiom_is_quiet(corpus):
    pod = corpus_doc(corpus, "NVIDIA__KAI-Scheduler/examples__quickstart__pods__gpu-pod.yaml", "Pod")
    assert container_signals(pod["spec"]["containers"][0]) == []


# ---------------------------------------------------------------- the word pre-filter


def _containers_of(value):
    if isinstance(value, dict):
        if isinstance(value.get("name"), str) and ("command" in value or "args" in value or "env" in value):
            yield value
        for v in value.values():
            yield from _containers_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from _containers_of(v)


def _unfiltered(container):
    import re

    import kubelint_ml.k8s.signals as signals

    saved = signals.MAY_SIGNAL
    signals.MAY_SIGNAL = re.compile("")
    try:
        return container_signals(container)
    finally:
        signals.MAY_SIGNAL = saved


def test_word_prefilter_changes_nothing_on_corpus_and_fixtures(corpus):
    """Skipping the tokenizer for text without a signal word gives the same signals for every real container."""
    roots = [corpus, Path(__file__).resolve().parents[1] / "fixtures"]
    checked = with_signals = 0
    for root in roots:
        for path in sorted(root.rglob("*.y*ml")):
            for doc in (d.data for d in load(path.read_bytes()).documents):
                for c in _containers_of(doc):
                    got = container_signals(c)
                    assert got == _unfiltered(c), (path, c.get("name"))
                    checked += 1
                    with_signals += bool(got)
    assert checked > 400 and with_signals > 50


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_WORDS = [
    "torchrun",
    "tor'ch'run",
    'deep"speed"',
    "mpi\\run",
    "python",
    "-m",
    "torch.distributed.run",
    "--nproc_per_node",
    "--nproc-per-node=4",
    "8",
    "auto",
    "$(N)",
    "&",
    "&&",
    ";",
    "|",
    "\\\n",
    "\n",
    "bash",
    "-c",
    "sleep",
    "10",
    "--num_workers",
    "num_workers=4",
    "--workers",
    "2",
    "make",
    "-j8",
    "xargs",
    "-P",
    "0",
    "ray",
    "start",
    "gunicorn",
    "-w",
    "mp.Pool(",
    "n_jobs=-1",
    "echo",
    "'",
    '"',
    "#",
    "accelerate",
    "launch",
    "supervisord",
]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(_WORDS), max_size=12),
    st.lists(st.sampled_from(_WORDS), max_size=6),
    st.sampled_from([" ", "", "\t"]),
)
def test_word_prefilter_changes_nothing_on_generated_commands(args, env_words, sep):
    container = {
        "name": "c",
        "command": ["sh", "-c"],
        "args": [sep.join(args)],
        "env": [{"name": "LAUNCH", "value": " ".join(env_words)}],
    }
    assert container_signals(container) == _unfiltered(container)


# ---------------------------------------------------------------- model-parallel servers


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        ({"args": ["--model", "m", "--tensor-parallel-size=2"]}, [("--tensor-parallel-size=2", 2)]),
        ({"args": ["--model", "m", "--tensor_parallel_size", "8"]}, [("--tensor_parallel_size 8", 8)]),
        ({"command": ["vllm", "serve", "m", "-tp", "2", "-pp", "2"]}, [("-tp 2 -pp 2", 4)]),  # tensor x pipeline
        ({"command": ["vllm", "serve", "m", "--pipeline-parallel-size", "4"]}, [("--pipeline-parallel-size 4", 4)]),
        ({"command": ["python3", "-m", "sglang.launch_server", "--tp", "8"]}, [("--tp 8", 8)]),
        (
            {"command": ["python3", "-m", "sglang.launch_server", "--tp-size=4", "--pp-size", "2"]},
            [("--tp-size=4 --pp-size 2", 8)],
        ),
        ({"args": ["--model-id", "m", "--num-shard", "4"]}, [("--num-shard 4", 4)]),
        ({"env": [{"name": "NUM_SHARD", "value": "2"}]}, [("NUM_SHARD=2", 2)]),
        ({"env": [{"name": "TENSOR_PARALLEL_SIZE", "value": "4"}]}, [("TENSOR_PARALLEL_SIZE=4", 4)]),
        ({"env": [{"name": "NIM_TENSOR_PARALLEL_SIZE", "value": "2"}]}, [("NIM_TENSOR_PARALLEL_SIZE=2", 2)]),
        (
            {"env": [{"name": "VLLM_ADDITIONAL_ARGS", "value": "--max-model-len 8192 --tensor-parallel-size 2"}]},
            [("--tensor-parallel-size 2", 2)],
        ),
        ({"args": ["--tensor-parallel-size", "$(TP)"]}, [("--tensor-parallel-size $(TP)", None)]),
        # data parallel replicas each start their own tensor x pipeline group on this node
        # (SGLang's DataParallelController, vLLM's -dp/-dpl); with DP attention SGLang's dp ranks
        # share the tensor parallel group; --nnodes spreads the ranks over the nodes
        ({"command": ["python3", "-m", "sglang.launch_server", "--tp", "2", "--dp", "2"]}, [("--tp 2 --dp 2", 4)]),
        (
            {"command": ["python3", "-m", "sglang.launch_server", "--tp", "8", "--dp", "8", "--enable-dp-attention"]},
            [("--tp 8", 8)],
        ),
        (
            {"command": ["python3", "-m", "sglang.launch_server", "--tp", "16", "--nnodes", "2"]},
            [("--tp 16 --nnodes 2", 8)],
        ),
        ({"command": ["vllm", "serve", "m", "-tp", "2", "-dp", "4"]}, [("-tp 2 -dp 4", 8)]),
        (
            {"command": ["vllm", "serve", "m", "-tp", "2", "-dp", "4", "--data-parallel-size-local", "2"]},
            [("-tp 2 --data-parallel-size-local 2", 4)],
        ),
        ({"command": ["vllm", "serve", "m", "-pp", "2", "-tp", "1"]}, [("-pp 2", 2)]),
        ({"args": ["--tp", "8", "--nnodes", "$(LWS_GROUP_SIZE)"]}, [("--tp 8 --nnodes $(LWS_GROUP_SIZE)", None)]),
        # a count past int()'s digit limit is a count that cannot be read, not a crash
        ({"args": ["--tp", "9" * 5000]}, [("--tp " + "9" * 5000, None)]),
        (
            {"args": ["--tp", "2", "-dp", "9" * 5000, "--nnodes", "0"]},
            [("--tp 2 -dp " + "9" * 5000 + " --nnodes 0", None)],
        ),
        # data parallel alone: one GPU per replica, no group to share /dev/shm with
        ({"command": ["vllm", "serve", "m", "--data-parallel-size", "4"]}, []),
        # ...unless vLLM's expert parallelism runs its all-to-all between the replicas here
        (
            {"command": ["vllm", "serve", "m", "-dp", "16", "--data-parallel-size-local", "8", "-ep"]},
            [("--data-parallel-size-local 8 -ep", 8)],
        ),
        # one worker per GPU: the ranks beyond the container's GPUs run in the group's other pods
        (
            {"args": ["--tp", "2", "--nnodes", "$(LWS_GROUP_SIZE)"], "resources": {"limits": {"nvidia.com/gpu": "1"}}},
            [],
        ),
        (
            {"args": ["-tp", "8", "-pp", "2"], "resources": {"limits": {"nvidia.com/gpu": 8}}},
            [("-tp 8 -pp 2", 8)],
        ),
        (
            {"args": ["--tp", "16", "--nnodes", "$(N)"], "resources": {"limits": {"amd.com/gpu": "8"}}},
            [("--tp 16 --nnodes $(N)", 8)],
        ),
        # a server keeps the last of a repeated flag, as argparse does: an operator's flag, then the
        # user's extra args (production-stack's tensorParallelSize, then extraArgs)
        ({"command": ["vllm", "serve", "m", "--tensor-parallel-size", "1", "-tp", "4"]}, [("-tp 4", 4)]),
        ({"command": ["vllm", "serve", "m", "--tensor-parallel-size", "4", "-tp", "1"]}, []),
        # on TPUs vLLM's and SGLang's tensor (and data) parallel group is one JAX program in one
        # process; pipeline stages and TGI's shards are still processes of their own
        ({"args": ["--tensor-parallel-size=8"], "resources": {"limits": {"google.com/tpu": "8"}}}, []),
        ({"args": ["--tp", "4", "--dp", "2"], "resources": {"requests": {"google.com/tpu": 8}}}, []),
        ({"env": [{"name": "TENSOR_PARALLEL_SIZE", "value": "4"}], "resources": {"limits": {"google.com/tpu": 4}}}, []),
        ({"args": ["-tp", "4", "-pp", "2"], "resources": {"limits": {"google.com/tpu": 8}}}, [("-pp 2", 2)]),
        ({"args": ["--num-shard", "4"], "resources": {"limits": {"google.com/tpu": 4}}}, [("--num-shard 4", 4)]),
        # one GPU is one process; -tp inside another word is not the flag
        ({"args": ["--model", "m", "--tensor-parallel-size", "1"]}, []),
        ({"env": [{"name": "NUM_SHARD", "value": "1"}]}, []),
        ({"args": ["--http-port", "8080"]}, []),
    ],
)
def test_model_parallel_servers(container: dict, expected: list) -> None:
    found = [(s.text, s.processes) for s in container_signals(container) if s.kind == "model-parallel"]
    assert found == expected
