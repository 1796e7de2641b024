"""Resource names, defaulting, effective pod requests/limits and accelerators."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
import yaml

from kubelint_ml.k8s.resources import (
    ACCELERATOR_PATTERNS,
    accelerator_requests,
    container_requests_limits,
    defaulted_requests,
    effective_pod_limit,
    effective_pod_request,
    is_accelerator_pod,
    is_accelerator_resource,
    is_extended_resource,
    is_hugepages,
    is_native_resource,
    is_sidecar,
    pod_level_resources,
)

GI = 2**30
MI = 2**20


def spec(text: str) -> dict:
    return yaml.safe_load(text)


# --- names ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "native", "extended"),
    [
        ("cpu", True, False),
        ("memory", True, False),
        ("ephemeral-storage", True, False),
        ("hugepages-2Mi", True, False),
        ("kubernetes.io/foo", True, False),
        ("example.kubernetes.io/foo", True, False),
        ("nvidia.com/gpu", False, True),
        ("nvidia.com/mig-1g.5gb", False, True),
        ("vpc.amazonaws.com/efa", False, True),
        ("requests.example.com/foo", False, False),
        ("Nvidia.com/gpu", False, False),  # the domain must be a lower-case DNS subdomain
        ("nvidia.com/", False, False),
        ("a/b/c", False, False),
        ("nvidia.com/-gpu", False, False),
        ("gpu", True, False),  # unprefixed: native by name, rejected by validation
    ],
)
def test_native_and_extended_names(name, native, extended):
    assert is_native_resource(name) is native
    assert is_extended_resource(name) is extended


def test_hugepages():
    assert is_hugepages("hugepages-2Mi")
    assert is_hugepages("hugepages-1Gi")
    assert not is_hugepages("memory")
    assert not is_hugepages("example.com/hugepages-2Mi")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nvidia.com/gpu", True),
        ("nvidia.com/gpu.shared", True),
        ("nvidia.com/mig-1g.5gb", True),
        ("nvidia.com/mig-7g.80gb", True),
        ("amd.com/gpu", True),
        ("gpu.intel.com/i915", True),
        ("gpu.intel.com/xe", True),
        ("habana.ai/gaudi", True),
        ("aws.amazon.com/neuron", True),
        ("aws.amazon.com/neuroncore", True),
        ("aws.amazon.com/neurondevice", True),
        ("google.com/tpu", True),
        # HAMi's count resources and the vendors' device plugins (charts/hami/values.yaml)
        ("npu.intel.com/accel", True),
        ("huawei.com/Ascend910", True),
        ("huawei.com/Ascend910B", True),
        ("huawei.com/Ascend910B3", True),
        ("huawei.com/Ascend310P", True),
        ("huawei.com/Ascend910-4c", True),
        ("hygon.com/dcunum", True),
        ("hygon.com/dcu", True),
        ("cambricon.com/vmlu", True),
        ("cambricon.com/mlu", True),
        ("mthreads.com/vgpu", True),
        ("metax-tech.com/gpu", True),
        ("metax-tech.com/sgpu", True),
        ("iluvatar.ai/vgpu", True),
        ("iluvatar.ai/BI-V150-vgpu", True),
        ("enflame.com/vgcu", True),
        ("enflame.com/gcu", True),
        ("enflame.com/drs-gcu", True),
        ("kunlunxin.com/xpu", True),
        ("kunlunxin.com/vxpu", True),
        ("vastaitech.com/va", True),
        ("birentech.com/gpu", True),
        # amounts of a device (memory, cores, percentages) are not devices
        ("huawei.com/Ascend910B-memory", False),
        ("huawei.com/Ascend910B3-core", False),
        ("hygon.com/dcumem", False),
        ("hygon.com/dcucores", False),
        ("cambricon.com/mlu.smlu.vmemory", False),
        ("mthreads.com/sgpu-memory", False),
        ("metax-tech.com/vcore", False),
        ("iluvatar.ai/vcuda-memory", False),
        ("iluvatar.ai/BI-V150.vMem", False),
        ("enflame.com/vgcu-percentage", False),
        ("enflame.com/gcu-memory", False),
        ("kunlunxin.com/vxpu-memory", False),
        ("nvidia.com/gpumem", False),
        ("nvidia.com/gpumem-percentage", False),
        ("nvidia.com/gpucores", False),
        ("amd.com/gpumem", False),
        ("gpu.intel.com/millicores", False),
        ("gpu.intel.com/memory.max", False),
        ("gpu.intel.com/i915_monitoring", False),
        ("gpu.intel.com/xe_monitoring", False),
        ("huawei.com/ascend910", False),
        ("vpc.amazonaws.com/efa", False),
        ("rdma/hca_shared_devices_a", False),
        ("nvidia.com/gpu2", False),
        ("nvidia.com/gpu.shared.x", False),
        ("NVIDIA.com/gpu", False),
        ("example.com/nvidia.com/gpu", False),
        ("cpu", False),
    ],
)
def test_accelerator_names(name, expected):
    assert is_accelerator_resource(name) is expected


def test_accelerator_patterns_listed():
    assert "nvidia.com/gpu" in ACCELERATOR_PATTERNS
    assert "nvidia.com/mig-*" in ACCELERATOR_PATTERNS
    assert "aws.amazon.com/neuron*" in ACCELERATOR_PATTERNS


# --- container values and defaulting --------------------------------------


def test_container_requests_limits_keeps_valid_values_only():
    container = spec(
        """
        name: c
        resources:
          requests:
            cpu: 0.5
            memory: 1Gi
            nvidia.com/gpu: "0.5"
            ephemeral-storage: -1
            bad: 1 GB
            none: null
          limits:
            cpu: "0.0001"
            memory: " 2Gi "
            nvidia.com/gpu: 2
        """
    )
    requests, limits = container_requests_limits(container)
    assert requests == {"cpu": F(1, 2), "memory": GI}
    # 0.0001 cpu is rounded up to 1m, as SetDefaults_ResourceList does
    assert limits == {"cpu": F(1, 1000), "memory": 2 * GI, "nvidia.com/gpu": 2}


@pytest.mark.parametrize(
    "container",
    [{}, {"resources": None}, {"resources": "big"}, {"resources": {"limits": [1], "requests": "x"}}, "c", 3, None],
)
def test_container_requests_limits_wrong_types(container):
    assert container_requests_limits(container) == ({}, {})


def test_defaulted_requests():
    requests = {"cpu": F(1)}
    limits = {"cpu": F(2), "memory": F(GI), "nvidia.com/gpu": F(1)}
    assert defaulted_requests(requests, limits) == {"cpu": 1, "memory": GI, "nvidia.com/gpu": 1}
    assert requests == {"cpu": F(1)}  # inputs are not modified
    assert defaulted_requests({"cpu": F(0)}, {"cpu": F(1)}) == {"cpu": 0}


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        ({"name": "s", "restartPolicy": "Always"}, True),
        ({"name": "s", "restartPolicy": "OnFailure"}, False),
        ({"name": "s"}, False),
        ({"name": "s", "restartPolicy": "always"}, False),
        ("Always", False),
    ],
)
def test_is_sidecar(container, expected):
    assert is_sidecar(container) is expected


# --- effective pod request: init containers and sidecars -------------------

KEP_753 = """
initContainers:
- name: init-1
  resources: {requests: {cpu: "5"}}
- name: sidecar-1
  restartPolicy: Always
  resources: {requests: {cpu: "1"}}
- name: init-2
  resources: {requests: {cpu: "10"}}
- name: sidecar-2
  restartPolicy: Always
  resources: {requests: {cpu: "2"}}
- name: init-3
  resources: {requests: {cpu: "3"}}
containers:
- name: app
  resources: {requests: {cpu: "4"}}
"""


def test_kep_753_init_peak_includes_earlier_sidecars():
    # init-2 runs next to sidecar-1: 10 + 1 = 11 > apps + sidecars = 4 + 1 + 2
    assert effective_pod_request(spec(KEP_753), "cpu") == 11


def test_kep_753_long_running_sum_wins():
    pod = spec(KEP_753)
    pod["initContainers"][2]["resources"]["requests"]["cpu"] = "2"
    # init peaks: 5, 1, 2+1, 3, 3+3=6; long-running: 4 + 1 + 2 = 7
    assert effective_pod_request(pod, "cpu") == 7


def test_sidecar_declared_after_init_does_not_add_to_it():
    before = spec(
        """
        initContainers:
        - {name: s, restartPolicy: Always, resources: {requests: {memory: 2Gi}}}
        - {name: i, resources: {requests: {memory: 5Gi}}}
        containers:
        - {name: a, resources: {requests: {memory: 1Gi}}}
        """
    )
    assert effective_pod_request(before, "memory") == 7 * GI  # 5 + 2 while i runs
    after = {**before, "initContainers": list(reversed(before["initContainers"]))}
    assert effective_pod_request(after, "memory") == 5 * GI  # max(5, 1 + 2)


def test_effective_request_uses_defaulted_requests():
    pod = spec(
        """
        containers:
        - {name: a, resources: {limits: {cpu: "2", memory: 8Gi}}}
        - {name: b, resources: {requests: {cpu: 500m}, limits: {cpu: "1", memory: 1Gi}}}
        """
    )
    assert effective_pod_request(pod, "cpu") == F(5, 2)
    assert effective_pod_request(pod, "memory") == 9 * GI
    assert effective_pod_request(pod, "ephemeral-storage") == 0


def test_effective_request_of_gpu_with_init_container():
    pod = spec(
        """
        initContainers:
        - {name: check, resources: {limits: {nvidia.com/gpu: 8}}}
        containers:
        - {name: a, resources: {limits: {nvidia.com/gpu: 2}}}
        - {name: b, resources: {limits: {nvidia.com/gpu: 2}}}
        """
    )
    assert effective_pod_request(pod, "nvidia.com/gpu") == 8


def test_pod_level_request_replaces_container_sum():
    pod = spec(
        """
        resources:
          requests: {cpu: "8"}
        containers:
        - {name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}
        - {name: b, resources: {requests: {cpu: "1", memory: 1Gi}}}
        """
    )
    assert effective_pod_request(pod, "cpu") == 8
    assert effective_pod_request(pod, "memory") == 2 * GI  # no pod-level memory request


def test_pod_level_requests_default_from_containers_then_limits():
    pod = spec(
        """
        resources:
          limits: {cpu: "4", memory: 4Gi}
        containers:
        - {name: a, resources: {requests: {memory: 1Gi}}}
        - {name: b, resources: {requests: {memory: 1Gi}}}
        """
    )
    # memory: aggregated container requests; cpu: no container asks, so the pod limit
    assert effective_pod_request(pod, "memory") == 2 * GI
    assert effective_pod_request(pod, "cpu") == 4
    assert pod_level_resources(pod) == ({"memory": 2 * GI, "cpu": 4}, {"cpu": 4, "memory": 4 * GI})


def test_pod_level_extended_resource_is_ignored():
    pod = spec(
        """
        resources:
          requests: {nvidia.com/gpu: 4}
          limits: {nvidia.com/gpu: 4}
        containers:
        - {name: a, resources: {limits: {nvidia.com/gpu: 1}}}
        """
    )
    assert pod_level_resources(pod) is None
    assert effective_pod_request(pod, "nvidia.com/gpu") == 1


@pytest.mark.parametrize("resources", [{}, {"requests": {}}, {"limits": {}}, None, "x", {"requests": {"cpu": "bad"}}])
def test_empty_pod_level_resources_are_not_set(resources):
    pod = {"resources": resources, "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}
    assert pod_level_resources(pod) is None
    assert effective_pod_request(pod, "cpu") == 1


def test_pod_level_resources_values_and_gate():
    pod = spec(
        """
        resources:
          requests: {cpu: 500m, memory: 1Gi}
          limits: {cpu: "1", memory: 2Gi}
        containers:
        - {name: a}
        """
    )
    assert pod_level_resources(pod) == ({"cpu": F(1, 2), "memory": GI}, {"cpu": 1, "memory": 2 * GI})
    assert pod_level_resources(pod, enabled=False) is None


def test_pod_limits_default_only_when_every_container_has_one():
    text = """
        resources:
          requests: {cpu: "2", memory: 2Gi}
        containers:
        - {name: a, resources: {limits: {cpu: "1", memory: 1Gi}}}
        - {name: b, resources: {limits: {cpu: "1"}}}
        """
    assert pod_level_resources(spec(text)) == ({"cpu": 2, "memory": 2 * GI}, {"cpu": 2})


# --- effective pod limit --------------------------------------------------


def test_effective_limit_needs_every_container_limited():
    pod = spec(
        """
        initContainers:
        - {name: s, restartPolicy: Always, resources: {limits: {memory: 1Gi}}}
        - {name: i, resources: {limits: {memory: 6Gi}}}
        containers:
        - {name: a, resources: {limits: {memory: 2Gi, cpu: "1"}}}
        """
    )
    assert effective_pod_limit(pod, "memory") == 7 * GI  # init i + sidecar s
    assert effective_pod_limit(pod, "cpu") is None  # only one container has a cpu limit
    pod["containers"].append({"name": "b"})
    assert effective_pod_limit(pod, "memory") is None


def test_effective_limit_zero_means_unlimited():
    pod = {"containers": [{"name": "a", "resources": {"limits": {"memory": "0"}}}]}
    assert effective_pod_limit(pod, "memory") is None


def test_pod_level_limit_covers_unlimited_containers():
    pod = spec(
        """
        resources:
          limits: {memory: 16Gi}
        containers:
        - {name: a}
        - {name: b, resources: {limits: {memory: 1Gi}}}
        """
    )
    assert effective_pod_limit(pod, "memory") == 16 * GI
    assert effective_pod_limit(pod, "cpu") is None


def test_effective_limit_without_containers():
    assert effective_pod_limit({}, "memory") is None


# --- accelerators ---------------------------------------------------------


def test_accelerator_requests():
    pod = spec(
        """
        initContainers:
        - {name: warmup, resources: {limits: {nvidia.com/gpu: 1}}}
        - {name: agent, restartPolicy: Always, resources: {limits: {nvidia.com/mig-1g.5gb: 1}}}
        containers:
        - name: a
          resources:
            requests: {nvidia.com/gpu: 4, cpu: "8"}
            limits: {nvidia.com/gpu: 4, vpc.amazonaws.com/efa: 1}
        - name: b
          resources:
            limits: {nvidia.com/gpu: 4, nvidia.com/mig-1g.5gb: 2, amd.com/gpu: "0.5", google.com/tpu: 0}
        """
    )
    assert accelerator_requests(pod) == {"nvidia.com/gpu": 8, "nvidia.com/mig-1g.5gb": 3}


def test_hami_gives_a_device_to_a_container_that_asks_only_for_its_memory_or_cores():
    # HAMi's webhook: nvidia.com/gpu (defaultGPUNum 1) for NVIDIA memory or cores in the limits;
    # one Enflame DRS slice for gcu-memory or gcu-core in the limits or the requests.
    pod = spec(
        """
        containers:
        - {name: a, resources: {limits: {nvidia.com/gpumem: 3000, nvidia.com/gpucores: 30}}}
        - {name: b, resources: {limits: {nvidia.com/gpumem-percentage: 50}}}
        - {name: c, resources: {requests: {enflame.com/gcu-core: 40}}}
        """
    )
    assert accelerator_requests(pod) == {"enflame.com/drs-gcu": 1, "nvidia.com/gpu": 2}
    assert is_accelerator_pod(pod)
    # The count written wins; NVIDIA's webhook reads only the limits.
    assert accelerator_requests(
        spec(
            """
        containers:
        - {name: a, resources: {limits: {nvidia.com/gpu: 2, nvidia.com/gpumem: 3000}}}
        - {name: b, resources: {limits: {enflame.com/gcu-memory: 8}, requests: {enflame.com/drs-gcu: 2}}}
        """
        )
    ) == {"enflame.com/drs-gcu": 2, "nvidia.com/gpu": 2}
    assert not is_accelerator_pod(spec("containers: [{name: a, resources: {requests: {nvidia.com/gpumem: 3000}}}]"))
    # Another vendor's amounts give no device without its count resource (HAMi's AMD, Hygon...).
    assert not is_accelerator_pod(spec("containers: [{name: a, resources: {limits: {hygon.com/dcumem: 3000}}}]"))


def test_accelerator_requests_empty():
    assert accelerator_requests({"containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}}]}) == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("containers: [{name: a, resources: {limits: {nvidia.com/gpu: 1}}}]", True),
        ("containers: [{name: a, resources: {requests: {habana.ai/gaudi: 8}}}]", True),
        ("containers: [{name: a, resources: {limits: {gpu.intel.com/i915: 1}}}]", True),
        ("containers: [{name: a, resources: {limits: {aws.amazon.com/neuroncore: 2}}}]", True),
        ("initContainers: [{name: i, resources: {limits: {nvidia.com/gpu: 1}}}]\ncontainers: [{name: a}]", True),
        # what a claim holds is in other objects: kubelint_ml/k8s/dra.py (tests/test_dra.py)
        ("containers: [{name: a, resources: {claims: [{name: gpu}]}}]\nresourceClaims: [{name: gpu}]", False),
        ("containers: [{name: a}]\nresourceClaims: [{name: gpu, resourceClaimTemplateName: t}]", False),
        ("containers: [{name: a, resources: {limits: {nvidia.com/gpu: 0}}}]", False),
        ("containers: [{name: a, resources: {limits: {nvidia.com/gpu: '0.5'}}}]", False),
        ("containers: [{name: a, resources: {limits: {vpc.amazonaws.com/efa: 1}}}]", False),
        ("containers: [{name: a, resources: {limits: {cpu: '1', memory: 1Gi}}}]", False),
        ("containers: [{name: a, resources: {claims: []}}]\nresourceClaims: []", False),
    ],
)
def test_is_accelerator_pod(text, expected):
    assert is_accelerator_pod(spec(text)) is expected


# --- wrong types never raise ----------------------------------------------

WRONG_TYPES = [
    None,
    "pod",
    3,
    [],
    {"containers": 3},
    {"containers": "abc", "initContainers": 7},
    {"containers": [1, None, "x"]},
    {"containers": [{"resources": "big"}]},
    {"containers": [{"resources": {"limits": [1], "requests": {"cpu": [2]}}}]},
    {"containers": [{"resources": {"limits": {None: "1", 5: "2"}}}]},
    {"containers": [{"resources": {"claims": "x"}}], "resourceClaims": {"a": 1}},
    {"containers": [], "resources": {"requests": "x", "limits": [1]}},
    {"containers": [{"restartPolicy": ["Always"]}], "initContainers": [{"restartPolicy": {}}]},
]


@pytest.mark.parametrize("pod", WRONG_TYPES)
def test_wrong_types_do_not_raise(pod):
    assert effective_pod_request(pod, "cpu") == 0
    assert effective_pod_limit(pod, "memory") is None
    assert accelerator_requests(pod) == {}
    assert is_accelerator_pod(pod) is False
    assert pod_level_resources(pod) is None
