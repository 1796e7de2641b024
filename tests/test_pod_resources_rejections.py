"""Pod resources the API server rejects, and what it accepts: hugepages at pod level and in a container,
a pod-level request above the limit 1.36 defaults, a resizePolicy on an init container.

``validateResourceRequirements`` rejects hugepages without cpu or memory beside them ("HugePages require
cpu or memory"); ``validatePodResourceConsistency`` a pod-level hugepages request below the containers'
aggregate, also when that request is left out and defaults to the pod-level limit. A Pod is judged after
``SetDefaults_Pod`` (container requests from limits, then pod-level defaults); a Deployment's or a Job's
template as written (``SetDefaults_Pod`` does not touch templates).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from kubelint_ml.engine.context import Facts
from kubelint_ml.engine.core import Engine
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.run.config import Config, Profile
from kubelint_ml.run.facts import add_facts
from kubelint_ml.run.lint import Runner, lint_text

RULES = load_builtin_rules()
ROOT = Path(__file__).resolve().parent.parent


def found(text: str, rules: tuple[str, ...], version: str | None = None) -> list[tuple]:
    cfg = Config()
    if version:
        cfg.profile = Profile.from_dict({"kubernetesVersion": version}, ROOT)
    return sorted(
        (f.line, f.column, f.rule, str(f.path), f.severity, f.message, f.detail)
        for f in lint_text(textwrap.dedent(text).encode(), RULES, cfg)
        if f.rule in rules
    )


def short(text: str, rules: tuple[str, ...]) -> list[tuple]:
    return [f[:6] for f in found(text, rules)]


PLR = ("pod-level-resources-invalid", "request-exceeds-limit")

HUGE_INIT = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources:
    requests: {cpu: "2", memory: 4Gi}
    limits: {cpu: "2", memory: 4Gi, hugepages-2Mi: 1Gi}
  initContainers:
  - name: init
    image: x
    resources:
      limits: {cpu: "1", memory: 1Gi, hugepages-2Mi: 2Gi}
  containers:
  - name: a
    image: x
    resources:
      limits: {cpu: "1", memory: 1Gi}
"""


def test_a_defaulted_pod_hugepages_request_below_the_containers_is_rejected_as_a_written_one():
    # the request left out defaults to the pod-level limit, 1Gi; the init container asks for 2Gi
    got = found(HUGE_INIT, PLR)
    assert [f[:6] for f in got] == [
        (
            7,
            52,
            "pod-level-resources-invalid",
            "spec.resources.limits.hugepages-2Mi",
            "error",
            "pod hugepages-2Mi limit 1Gi (the request's default) < the containers' 2Gi",
        )
    ]
    assert (
        'the API server rejects the pod (spec.resources.requests[hugepages-2Mi]: Invalid value: "1Gi": must be '
        "greater than or equal to aggregate container requests of 2Gi)"
    ) in got[0][6]
    written = HUGE_INIT.replace(
        'requests: {cpu: "2", memory: 4Gi}', 'requests: {cpu: "2", memory: 4Gi, hugepages-2Mi: 1Gi}'
    )
    assert short(written, PLR) == [
        (
            6,
            54,
            "pod-level-resources-invalid",
            "spec.resources.requests.hugepages-2Mi",
            "error",
            "pod hugepages-2Mi request 1Gi < the containers' 2Gi",
        )
    ]
    # a pod-level limit that covers the init container: valid
    assert short(HUGE_INIT.replace("hugepages-2Mi: 1Gi", "hugepages-2Mi: 2Gi"), PLR) == []
    # no pod-level hugepages: the pod-level limit defaults to the containers' (2Gi), and the request to it
    assert short(HUGE_INIT.replace(", hugepages-2Mi: 1Gi}", "}"), PLR) == []


HUGE_ONLY_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Never
      resources:
        limits: {hugepages-2Mi: 1Gi}
      containers:
      - name: c
        image: x
        resources:
          limits: {cpu: "1", memory: 1Gi}
"""


def test_pod_level_hugepages_without_cpu_or_memory():
    got = found(HUGE_ONLY_JOB, PLR)
    assert [f[:6] for f in got] == [
        (
            8,
            7,
            "pod-level-resources-invalid",
            "spec.template.spec.resources",
            "error",
            "pod-level resources have hugepages-2Mi but no cpu or memory",
        )
    ]
    assert "the API server validates the Job's pod template as written and rejects it" in got[0][6]
    assert "(spec.resources: Forbidden: HugePages require cpu or memory)" in got[0][6]
    # A Pod is defaulted first: its pod-level requests take the containers' cpu and memory, so it is valid...
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      resources:
        limits: {hugepages-2Mi: 1Gi}
      containers:
      - name: c
        image: x
        resources:
          limits: {cpu: "1", memory: 1Gi}
    """
    assert short(pod, PLR) == []
    # ...unless the containers have neither
    bare = textwrap.dedent(pod).replace('    resources:\n      limits: {cpu: "1", memory: 1Gi}\n', "")
    got = found(bare, PLR)
    assert [f[:6] for f in got] == [
        (
            5,
            3,
            "pod-level-resources-invalid",
            "spec.resources",
            "error",
            "pod-level resources have hugepages-2Mi but no cpu or memory",
        )
    ]
    assert "after defaulting" in got[0][6]
    # with a pod-level memory limit the template is valid
    assert short(HUGE_ONLY_JOB.replace("{hugepages-2Mi: 1Gi}", "{memory: 2Gi, hugepages-2Mi: 1Gi}"), PLR) == []


CONTAINER_ONLY_HUGEPAGES = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: team-a}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
      - name: c
        image: x
        resources:
          limits: {hugepages-2Mi: 1Gi}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team-a}
spec:
  containers:
  - name: c
    image: x
    resources:
      limits: {hugepages-2Mi: 1Gi}
"""


def test_container_hugepages_without_cpu_or_memory():
    """The same check as at pod level, in each container; reported with the pod's other resource rejections
    (pod-level-resources-invalid is not exported as a policy: the API server enforces it itself)."""
    rules = ("pod-level-resources-invalid",)
    got = found(CONTAINER_ONLY_HUGEPAGES, rules)
    assert [f[:6] for f in got] == [
        (
            12,
            9,
            "pod-level-resources-invalid",
            "spec.template.spec.containers[0].resources",
            "error",
            "container 'c' has hugepages-2Mi but no cpu or memory: the API server rejects it",
        )
    ]
    assert (
        "the API server rejects the Deployment's pod template (spec.template.spec.containers[0].resources: "
        "Forbidden: HugePages require cpu or memory)"
    ) in got[0][6]
    got = found(POD, rules)
    assert [f[:6] for f in got] == [
        (
            8,
            5,
            "pod-level-resources-invalid",
            "spec.containers[0].resources",
            "error",
            "container 'c' has hugepages-2Mi but no cpu or memory: the API server rejects it",
        )
    ]
    assert "rejects the pod (spec.containers[0].resources: Forbidden" in got[0][6]
    # cpu alone satisfies the API server: then only the usual warning about memory
    with_cpu = POD.replace("{hugepages-2Mi: 1Gi}", '{cpu: "1", hugepages-2Mi: 1Gi}')
    assert [f[2:6] for f in found(with_cpu, rules + ("missing-memory-request",))] == [
        (
            "missing-memory-request",
            "spec.containers[0].resources",
            "warning",
            "container 'c' has no memory request or limit",
        )
    ]


def test_a_limit_range_default_saves_a_pod_but_not_a_template():
    """LimitRanger fills in a Pod's defaults before the Pod is validated; a Deployment's template is
    validated as written."""
    limit_range = b"""\
apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: team-a}
spec:
  limits:
  - type: Container
    default: {memory: 1Gi}
"""
    facts = Facts()
    add_facts(facts, limit_range, "lr.yaml", Config().limits)
    runner = Runner(Engine(RULES), Config(), facts)

    def rules_of(text: str) -> list[tuple]:
        return [
            (f.rule, f.line, f.severity)
            for f in runner.lint_bytes(text.encode(), "w.yaml").findings
            if f.rule == "pod-level-resources-invalid"
        ]

    assert rules_of(POD) == []
    assert rules_of(CONTAINER_ONLY_HUGEPAGES) == [("pod-level-resources-invalid", 12, "error")]


def test_a_resize_policy_on_an_init_container_is_accepted():
    """``validateInitContainers`` rejects an init container's resizePolicy only without
    ``AllowSidecarResizePolicy``, which InPlacePodVerticalScaling sets (on from 1.33; before, the field is
    dropped): no rejection to report, for a regular init container or a sidecar."""
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      initContainers:
      - name: i
        image: x
        resizePolicy:
        - {resourceName: memory, restartPolicy: NotRequired}
      - name: side
        image: x
        restartPolicy: Always
        resizePolicy:
        - {resourceName: cpu, restartPolicy: RestartContainer}
      containers:
      - name: c
        image: x
    """
    assert found(pod, ("resize-policy-invalid",)) == []


DEFAULTED_LIMIT = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources:
    requests: {cpu: "1", memory: 2Gi}
  containers:
  - name: a
    image: x
    resources:
      limits: {cpu: 500m, memory: 512Mi}
  - name: b
    image: x
    resources:
      limits: {cpu: 500m, memory: 512Mi}
"""


def test_a_pod_request_above_the_limit_1_36_defaults_from_the_containers():
    """PodLevelResourcesFixUpdateDefaulting (beta and on in 1.36, KEP-2837): with pod-level requests, no
    pod-level limits and a limit in every container, the pod-level limit defaults to the containers'
    aggregate (1Gi of memory here), below the 2Gi request."""
    for version in (None, "1.36"):
        got = found(DEFAULTED_LIMIT, PLR, version)
        assert [f[:6] for f in got] == [
            (
                6,
                34,
                "pod-level-resources-invalid",
                "spec.resources.requests.memory",
                "error",
                "pod memory request 2Gi > the pod limit 1Gi it gets from the containers' limits",
            )
        ]
        assert (
            'the API server rejects the pod (spec.resources.requests[memory]: Invalid value: "2Gi": must be less '
            "than or equal to memory limit of 1Gi)"
        ) in got[0][6]
    # an empty limits block is no pod-level limit
    empty = DEFAULTED_LIMIT.replace(
        'requests: {cpu: "1", memory: 2Gi}', 'requests: {cpu: "1", memory: 2Gi}\n    limits: {}'
    )
    assert [f[3] for f in found(empty, PLR)] == ["spec.resources.requests.memory"]
    # before 1.36 no pod-level limit is defaulted: valid
    assert short_at(DEFAULTED_LIMIT, "1.35") == []
    # a container without a memory limit: no memory limit is defaulted (cpu is, and 1 <= 1)
    assert (
        short_at(DEFAULTED_LIMIT.replace("{cpu: 500m, memory: 512Mi}\n  - name: b", "{cpu: 500m}\n  - name: b"), None)
        == []
    )
    # a written pod-level limit is not defaulted over
    written = DEFAULTED_LIMIT.replace(
        'requests: {cpu: "1", memory: 2Gi}', 'requests: {cpu: "1", memory: 2Gi}\n    limits: {memory: 4Gi}'
    )
    assert short_at(written, None) == []


def short_at(text: str, version: str | None) -> list[tuple]:
    return [f[:6] for f in found(text, PLR, version)]


def test_a_resize_policy_entry_needs_both_fields():
    """Both fields of a ContainerResizePolicy are required and nothing defaults them (an unlisted resource
    resizes without a restart; a listed one needs its policy): ``validateResizePolicy``'s Required value."""
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers:
      - name: c
        image: x
        resizePolicy:
        - {resourceName: cpu}
        - {restartPolicy: NotRequired}
        - {resourceName: memory, restartPolicy: RestartContainer}
    """
    got = found(pod, ("resize-policy-invalid",))
    assert [f[:6] for f in got] == [
        (
            9,
            7,
            "resize-policy-invalid",
            "spec.containers[0].resizePolicy[0]",
            "error",
            "container 'c' resizePolicy entry without restartPolicy",
        ),
        (
            10,
            7,
            "resize-policy-invalid",
            "spec.containers[0].resizePolicy[1]",
            "error",
            "container 'c' resizePolicy entry without resourceName",
        ),
    ]
    assert "the API server rejects the pod (Required value)" in got[0][6]
    assert found(pod, ("resize-policy-invalid",), "1.32") == []  # the field is dropped before 1.33


def test_pod_level_pids_are_dropped_from_1_37_and_rejected_before():
    """kubernetes/website's pods/resource/pod-level-pid-limit.yaml: a per-pod PID limit at pod level
    (KEP-6063, the PerPodPIDLimit gate, alpha and off by default from 1.37). With the gate off the API server
    drops the field: a warning, not a rejection. Before 1.37 the name is an unsupported pod-level resource."""
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata:
      name: pid-demo
      namespace: pod-resources-example
    spec:
      resources:
        limits:
          pids: "2048"
      containers:
      - name: pid-demo-ctr
        image: registry.k8s.io/pause:3.10
    """
    rule = ("pod-level-resources-invalid",)
    dropped = (9, 7, rule[0], "spec.resources.limits.pids", "warning")
    assert [f[:5] for f in found(pod, rule, "1.37")] == [f[:5] for f in found(pod, rule)] == [dropped]
    assert found(pod, rule)[0][5] == "pod-level limits pids is dropped: per-pod PID limits are alpha and off by default"
    assert [f[:6] for f in found(pod, rule, "1.36")] == [
        (
            9,
            7,
            rule[0],
            "spec.resources.limits.pids",
            "error",
            "pod-level limits cannot hold pids: only cpu, memory and hugepages",
        )
    ]
