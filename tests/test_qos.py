"""QoS class vectors: the cases of k/k qos_test.go and qos_generated_test.go plus defaulting cases (docs/k8s-facts.md §1)."""

from __future__ import annotations

import pytest
import yaml

from kubelint_ml.k8s.resources import qos_class


def c(requests: dict | None = None, limits: dict | None = None, **extra) -> dict:
    """A container with the given resources."""
    out: dict = {"name": "c", "image": "busybox", **extra}
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        out["resources"] = res
    return out


def rl(cpu=None, memory=None, **other) -> dict:
    out = dict(other)
    if cpu is not None:
        out["cpu"] = cpu
    if memory is not None:
        out["memory"] = memory
    return out


GUARANTEED_C = c(rl("100m", "100Mi"), rl("100m", "100Mi"))

# (row, pod spec, expected) -- rows 1-23 of the fact sheet table
VECTORS = [
    (1, {"containers": [GUARANTEED_C]}, "Guaranteed"),
    (2, {"containers": [GUARANTEED_C, GUARANTEED_C]}, "Guaranteed"),
    (3, {"containers": [c()]}, "BestEffort"),
    (4, {"containers": [c(), c()]}, "BestEffort"),
    (5, {"containers": [c(), c(rl(cpu="1"), rl(cpu="2"))]}, "Burstable"),
    (6, {"containers": [c(), c(rl("10m", "100Mi"), rl("10m", "100Mi"))]}, "Burstable"),
    (7, {"containers": [c(rl(memory="100Mi"), rl(memory="100Mi"))]}, "Burstable"),
    (8, {"containers": [c(rl("100m", "100Mi"))]}, "Burstable"),
    (9, {"containers": [c(rl("1", "100Mi"), rl("2", "100Mi")), GUARANTEED_C]}, "Burstable"),
    (10, {"containers": [c(rl("100m", "100Mi"), rl("200m", "200Mi")), c(rl("100m", "100Mi"))]}, "Burstable"),
    (11, {"containers": [c(rl("10m", "100Mi"), rl("100m", "200Mi"))]}, "Burstable"),
    (12, {"containers": [c(rl("0", "0"), rl("100m", "200Mi"))]}, "Burstable"),
    (
        13,
        {"containers": [c(rl("0", "0", **{"hugepages-2Mi": "1Gi"}), rl("0", "0", **{"hugepages-2Mi": "1Gi"}))]},
        "BestEffort",
    ),
    (
        14,
        {"containers": [c()], "initContainers": [c(rl("10m", "100Mi"), rl("100m", "200Mi"))]},
        "Burstable",
    ),
    (
        15,
        {"containers": [c()], "resources": {"requests": rl("10m", "100Mi"), "limits": rl("10m", "100Mi")}},
        "Guaranteed",
    ),
    (
        16,
        {
            "containers": [c(rl("3m", "10Mi"), rl("5m", "20Mi"))],
            "resources": {"requests": rl("10m", "100Mi"), "limits": rl("10m", "100Mi")},
        },
        "Guaranteed",
    ),
    (
        17,
        {"containers": [c()], "resources": {"requests": rl("10m", "10Mi"), "limits": rl("20m", "50Mi")}},
        "Burstable",
    ),
    (
        18,
        {
            "containers": [c(rl("5m", "10Mi"), rl("5m", "10Mi"))],
            "resources": {"requests": rl("10m", "10Mi"), "limits": rl("20m", "50Mi")},
        },
        "Burstable",
    ),
    (
        19,
        {"containers": [c(rl("5m", "10Mi"))], "resources": {"requests": rl("10m", "10Mi")}},
        "Burstable",
    ),
    (20, {"containers": [c(limits=rl("2", "8Gi"))]}, "Guaranteed"),
    (21, {"containers": [c(limits={"nvidia.com/gpu": 8})]}, "BestEffort"),
    (
        22,
        {"containers": [GUARANTEED_C], "initContainers": [c(restartPolicy="Always")]},
        "Burstable",
    ),
    (
        23,
        {
            "containers": [GUARANTEED_C],
            "ephemeralContainers": [{"name": "debug", "image": "busybox", "targetContainerName": "c"}],
        },
        "Guaranteed",
    ),
]


@pytest.mark.parametrize(("row", "spec", "expected"), VECTORS, ids=[f"row{r}" for r, _, _ in VECTORS])
def test_fact_sheet_qos_vectors(row, spec, expected):
    assert qos_class(spec) == expected


def test_all_23_rows_present():
    assert [row for row, _, _ in VECTORS] == list(range(1, 24))


# The same kind of pods written as YAML, the way they arrive from manifests.
YAML_CASES = [
    (
        """
        containers:
        - name: trainer
          resources:
            limits: {cpu: 8, memory: 64Gi, nvidia.com/gpu: 1}
        """,
        "Guaranteed",
    ),
    (
        """
        containers:
        - name: trainer
          resources:
            limits: {nvidia.com/gpu: 8}
        """,
        "BestEffort",
    ),
    (
        """
        containers:
        - name: trainer
          resources:
            requests: {cpu: 0.5, memory: 1e3}
            limits: {cpu: 500m, memory: "1000"}
        """,
        "Guaranteed",
    ),
    (
        # 0.0001 and 0.0002 cpu both round up to 1m under API defaulting
        """
        containers:
        - name: c
          resources:
            requests: {cpu: "0.0001", memory: 1Gi}
            limits: {cpu: "0.0002", memory: 1Gi}
        """,
        "Guaranteed",
    ),
    (
        # memory equal by value though written differently
        """
        containers:
        - name: c
          resources:
            requests: {cpu: "1", memory: 1024Mi}
            limits: {cpu: 1000m, memory: 1Gi}
        """,
        "Guaranteed",
    ),
    (
        # a cpu-only pod-level limit can never be Guaranteed, whatever the containers say
        """
        resources:
          limits: {cpu: "2"}
        containers:
        - name: c
          resources:
            limits: {cpu: "1", memory: 1Gi}
        """,
        "Burstable",
    ),
    (
        # pod-level requests with all containers limited: pod limits default from them
        """
        resources:
          requests: {cpu: "2", memory: 2Gi}
        containers:
        - name: a
          resources:
            limits: {cpu: "1", memory: 1Gi}
        - name: b
          resources:
            limits: {cpu: "1", memory: 1Gi}
        """,
        "Guaranteed",
    ),
    (
        # pod-level limits only: pod requests default to the aggregated container requests
        """
        resources:
          limits: {cpu: "2", memory: 2Gi}
        containers:
        - name: a
          resources:
            requests: {cpu: "1", memory: 1Gi}
        """,
        "Burstable",
    ),
    (
        # pod-level limits only, containers request nothing: pod requests := pod limits
        """
        resources:
          limits: {cpu: "2", memory: 2Gi}
        containers:
        - name: a
        """,
        "Guaranteed",
    ),
    (
        # only hugepages at pod level: pod-level resources decide; pod requests default
        # to the container cpu/memory requests, but no cpu/memory pod limit exists
        """
        resources:
          limits: {hugepages-2Mi: 1Gi}
        containers:
        - name: a
          resources:
            limits: {cpu: "1", memory: 1Gi}
        """,
        "Burstable",
    ),
    (
        # only hugepages at pod level and nothing in containers: no cpu/memory anywhere
        """
        resources:
          limits: {hugepages-2Mi: 1Gi}
        containers:
        - name: a
          resources:
            limits: {hugepages-2Mi: 1Gi}
        """,
        "BestEffort",
    ),
    (
        # an extended resource at pod level (rejected by the API) does not count as set
        """
        resources:
          limits: {nvidia.com/gpu: 1}
        containers:
        - name: a
          resources:
            limits: {cpu: "1", memory: 1Gi}
        """,
        "Guaranteed",
    ),
    (
        # invalid quantities are treated as absent
        """
        containers:
        - name: a
          resources:
            limits: {cpu: 1 core, memory: 1GB}
        """,
        "BestEffort",
    ),
]


@pytest.mark.parametrize(("text", "expected"), YAML_CASES)
def test_yaml_pods(text, expected):
    assert qos_class(yaml.safe_load(text)) == expected


@pytest.mark.parametrize("resources", [{}, {"requests": {}}, {"limits": {}}, {"requests": {}, "limits": {}}])
def test_empty_pod_level_resources_are_not_set(resources):
    spec = {"containers": [GUARANTEED_C], "resources": resources}
    assert qos_class(spec) == "Guaranteed"
    # clusters without PodLevelResourcesFixKubeletQOSClass compute it from the empty block
    assert qos_class(spec, pod_level_qos_fix=False) == "BestEffort"


def test_pod_level_resources_ignored_when_gate_off():
    spec = {"containers": [c()], "resources": {"requests": rl("10m", "100Mi"), "limits": rl("10m", "100Mi")}}
    assert qos_class(spec) == "Guaranteed"
    assert qos_class(spec, pod_level_enabled=False) == "BestEffort"


def test_request_defaulting_only_fills_missing_keys():
    # explicit request 0 with a limit: not defaulted, so cpu is Burstable
    spec = {"containers": [c(rl(cpu="0", memory="1Gi"), rl("1", "1Gi"))]}
    assert qos_class(spec) == "Burstable"


def test_sidecar_and_init_containers_count_like_containers():
    guaranteed_init = c(rl("1", "1Gi"), rl("1", "1Gi"))
    spec = {
        "containers": [GUARANTEED_C],
        "initContainers": [guaranteed_init, dict(guaranteed_init, restartPolicy="Always")],
    }
    assert qos_class(spec) == "Guaranteed"


@pytest.mark.parametrize(
    "spec",
    [
        None,
        "pod",
        {},
        {"containers": 3},
        {"containers": "abc"},
        {"containers": [1, "x", None]},
        {"containers": [{"resources": "big"}]},
        {"containers": [{"resources": {"limits": [1], "requests": "x"}}]},
        {"containers": [{"resources": {"limits": {1: "1", "cpu": None, "memory": True}}}]},
        {"containers": [c()], "resources": "lots"},
        {"containers": [c()], "initContainers": {"a": 1}},
    ],
)
def test_wrong_types_are_best_effort_not_errors(spec):
    assert qos_class(spec) == "BestEffort"


FRAGMENTS = {
    # a kustomize patch: the base Job sets the image and the resources it leaves out
    "patch": "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
    "      containers:\n      - name: worker\n        resources:\n          limits: {nvidia.com/gpu: 1}\n",
    # a Spark driver pod template: Spark adds the container, with its cpu and memory
    "no containers": "apiVersion: v1\nkind: Pod\nmetadata: {name: driver}\nspec:\n  nodeSelector: {group: cpu}\n",
}


@pytest.mark.parametrize("name", sorted(FRAGMENTS))
def test_partial_templates_get_no_resource_or_qos_findings(name: str) -> None:
    from kubelint_ml.engine.rulefile import load_builtin_rules
    from kubelint_ml.run.lint import lint_text

    text = FRAGMENTS[name]
    quiet = {"besteffort-qos", "missing-memory-limit", "missing-memory-request", "missing-priority-class"}
    assert [f.rule for f in lint_text(text.encode(), load_builtin_rules()) if f.rule in quiet] == []
    # With an image, the same patch is a whole pod, and is judged.
    whole = text.replace("- name: worker\n", "- name: worker\n        image: jax\n")
    if whole != text:
        found = {(f.rule, f.line) for f in lint_text(whole.encode(), load_builtin_rules())}
        assert {("besteffort-qos", 6), ("missing-memory-limit", 11), ("missing-memory-request", 10)} <= found, found
