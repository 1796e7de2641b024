"""The profile's featureGates over the version's defaults (kubelint_ml/k8s/gates.py): each gate the rules
decide by judges a case one way with the gate on and another with it off, at one version; and an unknown
gate name is a config error that names the one meant."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.k8s.gates import KNOWN, enabled
from kubelint_ml.run.config import Config, ConfigError, Profile, load_config
from kubelint_ml.run.lint import lint_text

ROOT = Path(__file__).resolve().parent.parent
RULES = load_builtin_rules()


def lint(manifest: str, version: str, gates: dict | None = None) -> set[tuple[int, str, str]]:
    cfg = Config()
    data: dict = {"kubernetesVersion": version}
    if gates is not None:
        data["featureGates"] = gates
    cfg.profile = Profile.from_dict(data, ROOT)
    return {(f.line, f.rule, f.severity) for f in lint_text(textwrap.dedent(manifest).encode(), RULES, cfg)}


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  priorityClassName: x
"""

CLAIMED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  priorityClassName: x
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
"""

MANIFESTS = {
    "PodLevelResources": (
        "1.33",
        POD
        + """\
  resources:
    requests: {cpu: "4", memory: 16Gi}
    limits: {cpu: "4", memory: 16Gi}
  containers:
  - name: c
    image: busybox
""",
    ),
    "PodLevelResourcesFixKubeletQOSClass": (
        "1.35",
        POD
        + """\
  resources: {}
  containers:
  - name: c
    image: busybox
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {cpu: "1", memory: 1Gi}
""",
    ),
    "PodLevelResourcesFixUpdateDefaulting": (
        "1.35",
        POD
        + """\
  resources:
    requests: {cpu: "0", memory: "0"}
  containers:
  - name: c
    image: busybox
    resources:
      limits: {cpu: "1", memory: 1Gi}
""",
    ),
    "DynamicResourceAllocation": ("1.33", CLAIMED.replace("resource.k8s.io/v1\n", "resource.k8s.io/v1beta2\n")),
    "DRAExtendedResource": (
        "1.35",
        POD
        + """\
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      limits:
        deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1
""",
    ),
    "DRADeviceTaints": (
        "1.35",
        CLAIMED.replace(
            "deviceClassName: gpu.nvidia.com\n",
            "deviceClassName: gpu.nvidia.com\n          tolerations: [{key: k, operator: In, value: x}]\n",
        ),
    ),
    "ContainerRestartRules": (
        "1.34",
        POD
        + """\
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    restartPolicy: Never
    restartPolicyRules:
    - action: Restart
      exitCodes: {operator: In, values: [42]}
""",
    ),
    "RestartAllContainersOnContainerExits": (
        "1.35",
        POD
        + """\
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    restartPolicy: Never
    restartPolicyRules:
    - action: RestartAllContainers
      exitCodes: {operator: In, values: [42]}
""",
    ),
    "ImageVolume": (
        "1.34",
        POD
        + """\
  containers:
  - name: c
    image: busybox
    volumeMounts:
    - {name: w, mountPath: /models}
  volumes:
  - name: w
    image: {reference: "registry.example.com/m:1"}
""",
    ),
    "ContainerStopSignals": (
        "1.35",
        POD
        + """\
  os: {name: linux}
  containers:
  - name: c
    image: busybox
    lifecycle:
      stopSignal: SIGUSR1
""",
    ),
    "GenericWorkload": (
        "1.35",
        POD
        + """\
  workloadRef:
    name: training
    podGroup: workers
  containers:
  - name: c
    image: busybox
""",
    ),
    "WorkloadWithJob": (
        "1.37",
        """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  parallelism: 2
  completions: 2
  scheduling:
    schedulingPolicy:
      gang: {minCount: 2}
  template:
    spec:
      priorityClassName: x
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
""",
    ),
    "PerPodPIDLimit": (
        "1.37",
        POD
        + """\
  resources:
    limits: {pids: "2048"}
  containers:
  - name: c
    image: busybox
""",
    ),
    "JobManagedBy": (
        "1.33",
        """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  managedBy: kueue
  template:
    spec:
      priorityClassName: x
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
""",
    ),
    "InPlacePodVerticalScaling": (
        "1.33",
        POD
        + """\
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    resizePolicy:
    - {resourceName: memory, restartPolicy: RestartContainer}
""",
    ),
}

EXPECTED = {  # gate -> (line, rule, severity) found only with it on; only with it off
    "PodLevelResources": (
        [],
        [
            (4, "besteffort-qos", "warning"),
            (6, "pod-level-resources-invalid", "warning"),
            (10, "missing-memory-limit", "warning"),
            (10, "missing-memory-request", "warning"),
        ],
    ),
    "PodLevelResourcesFixKubeletQOSClass": ([], [(6, "besteffort-qos", "warning")]),
    "PodLevelResourcesFixUpdateDefaulting": ([], [(4, "besteffort-qos", "warning")]),
    "DynamicResourceAllocation": (
        [(17, "besteffort-qos", "error"), (17, "gpu-node-unresolved", "info"), (22, "missing-memory-limit", "error")],
        [
            (17, "besteffort-qos", "warning"),
            (22, "missing-memory-limit", "warning"),
            (25, "unknown-resource-claim", "warning"),
        ],
    ),
    "DRAExtendedResource": (
        [(4, "besteffort-qos", "error"), (4, "gpu-node-unresolved", "info"), (10, "missing-memory-limit", "error")],
        [
            (4, "besteffort-qos", "warning"),
            (10, "missing-memory-limit", "warning"),
            (11, "unknown-resource-claim", "warning"),
        ],
    ),
    "DRADeviceTaints": (
        [
            (18, "besteffort-qos", "warning"),
            (23, "missing-memory-limit", "warning"),
            (28, "unknown-resource-claim", "error"),
        ],
        [(18, "besteffort-qos", "error"), (18, "gpu-node-unresolved", "info"), (23, "missing-memory-limit", "error")],
    ),
    "ContainerRestartRules": ([], [(11, "container-restart-rules-invalid", "warning")]),
    "RestartAllContainersOnContainerExits": ([], [(12, "container-restart-rules-invalid", "error")]),
    "ImageVolume": ([], [(13, "pod-field-dropped", "warning")]),
    "ContainerStopSignals": ([], [(11, "pod-field-dropped", "warning")]),
    "GenericWorkload": ([], [(6, "pod-group-reference-invalid", "warning")]),
    "WorkloadWithJob": ([], [(7, "pod-group-reference-invalid", "warning")]),
    "PerPodPIDLimit": ([], [(7, "pod-level-resources-invalid", "warning")]),
    "JobManagedBy": ([(5, "job-spec-invalid", "error")], []),
    "InPlacePodVerticalScaling": ([(11, "resize-policy-invalid", "error")], []),
}


def test_every_gate_has_a_case():
    assert set(MANIFESTS) | {"DRAConsumableCapacity"} == set(KNOWN)


@pytest.mark.parametrize("gate", list(MANIFESTS))
def test_a_gate_on_and_off_at_one_version(gate):
    version, manifest = MANIFESTS[gate]
    on, off = lint(manifest, version, {gate: True}), lint(manifest, version, {gate: False})
    only_on, only_off = EXPECTED[gate]
    assert sorted(on - off) == only_on
    assert sorted(off - on) == only_off
    # without featureGates, the version's default
    assert lint(manifest, version) == (on if enabled(gate, (int(version[0]), int(version[2:]))) else off)


def _check(tmp_path: Path, manifest: str, config: str, *args: str) -> tuple[int, str, str]:
    (tmp_path / "pod.yaml").write_text(textwrap.dedent(manifest))
    (tmp_path / ".kubelint-ml.yaml").write_text(textwrap.dedent(config))
    r = CliRunner().invoke(
        main,
        ["check", "--config", str(tmp_path / ".kubelint-ml.yaml"), *args, str(tmp_path / "pod.yaml")],
        catch_exceptions=False,
    )
    return r.exit_code, r.stdout, r.stderr


def test_the_config_files_feature_gates(tmp_path):
    """Read from the config file's profile, with the gate's name in the message."""
    version, manifest = MANIFESTS["ContainerRestartRules"]
    config = f'profile:\n  kubernetesVersion: "{version}"\n'
    code, out, _ = _check(tmp_path, manifest, config, "-f", "json")
    found = [(f["line"], f["rule"], f["severity"], f["message"]) for f in json.loads(out)["findings"]]
    assert (
        11,
        "container-restart-rules-invalid",
        "warning",
        "container 'c': restartPolicyRules are dropped unless the ContainerRestartRules gate is on (alpha, off by "
        "default in 1.34)",
    ) in found
    code, out, _ = _check(
        tmp_path, manifest, config + "  featureGates:\n    ContainerRestartRules: true\n", "-f", "json"
    )
    assert not [f for f in json.loads(out)["findings"] if f["rule"] == "container-restart-rules-invalid"]


def test_consumable_capacity(tmp_path):
    """DRAConsumableCapacity: on, a request's capacity.requests takes part of each device and the memory fix
    does not size from it; off, the API server drops it and the request takes whole devices."""
    shared = (
        (ROOT / "tests" / "data" / "dra-fix.yaml")
        .read_text()
        .replace(
            "          count: 2\n", "          count: 2\n          capacity:\n            requests: {memory: 10Gi}\n"
        )
    )
    for version, gate, sized in (
        ("1.35", True, False),
        ("1.35", None, True),
        ("1.36", False, True),
        ("1.36", None, False),
    ):
        config = f'profile:\n  kubernetesVersion: "{version}"\n'
        if gate is not None:
            config += f"  featureGates: {{DRAConsumableCapacity: {str(gate).lower()}}}\n"
        _, out, _ = _check(tmp_path, shared, config, "--diff", "--unsafe-fixes")
        assert ("memory: 425Gi" in out) is sized, (version, gate, out)


def test_an_unknown_gate_is_a_config_error(tmp_path):
    path = tmp_path / ".kubelint-ml.yaml"
    path.write_text('profile:\n  kubernetesVersion: "1.35"\n  featureGates:\n    DRAExtendedResources: true\n')
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(e.value).startswith(
        f"{path}:4: profile.featureGates: unknown feature gate 'DRAExtendedResources' (did you mean "
        "'DRAExtendedResource'?)"
    ), str(e.value)
    r = CliRunner().invoke(main, ["check", "--config", str(path), str(ROOT / "tests" / "data" / "dra-fix.yaml")])
    assert r.exit_code == 2
    assert "unknown feature gate 'DRAExtendedResources'" in r.output
    path.write_text('profile:\n  featureGates: {ImageVolume: "yes"}\n')
    with pytest.raises(ConfigError, match="featureGates.ImageVolume"):
        load_config(path)
