"""What a DRA device class is: a known DeviceClass's driver decides, whatever its name; else whole
parts of its name; profile.acceleratorDeviceClasses wins over both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.k8s.dra import ACCELERATOR, GPU, OTHER, SLICE, DraFacts
from kubelint_ml.run.config import Config, Profile
from kubelint_ml.run.lint import lint_text

ROOT = Path(__file__).resolve().parent.parent
RULES = load_builtin_rules()

DEVICE_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {name}}}
spec:
  selectors:
  - cel: {{expression: "{expression}"}}
---
"""

BEST_EFFORT_POD = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: tmpl}}
spec:
  spec:
    devices:
      requests:
      - name: d
        exactly: {{deviceClassName: {name}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  priorityClassName: x
  resourceClaims:
  - name: g
    resourceClaimTemplateName: tmpl
  containers:
  - name: c
    image: x
    resources:
      claims: [{{name: g}}]
"""

# The pod's lines after a DeviceClass of 6 lines (and its separator): besteffort-qos at the pod spec,
# the memory findings at the container.
WITH_CLASS = [(21, "besteffort-qos"), (29, "missing-memory-limit"), (29, "missing-memory-request")]
WITHOUT_CLASS = [(14, "besteffort-qos"), (22, "missing-memory-limit"), (22, "missing-memory-request")]
ACCELERATOR_SEVERITIES = ("error", "error", "warning")
OTHER_SEVERITIES = ("warning", "warning", "warning")


def _findings(text: str, profile: dict | None = None) -> list[tuple[int, str, str]]:
    cfg = Config()
    if profile:
        cfg.profile = Profile.from_dict(profile, ROOT)
    found = lint_text(text.encode(), RULES, cfg)
    return sorted((f.line, f.rule, f.severity) for f in found if f.rule != "unknown-priority-class")


def _expect(
    lines: list[tuple[int, str]], severities: tuple[str, ...], gpus: bool = False
) -> list[tuple[int, str, str]]:
    """The three findings of the best-effort pod; counted GPUs (whole or MIG) also ask for the node
    type, at the pod spec (gpu-node-unresolved)."""
    out = [(line, rule, sev) for (line, rule), sev in zip(lines, severities, strict=True)]
    if gpus:
        out.append((lines[0][0], "gpu-node-unresolved", "info"))
    return sorted(out)


def _class_pod(name: str, driver: str) -> str:
    return DEVICE_CLASS.format(name=name, expression=f"device.driver == '{driver}'") + BEST_EFFORT_POD.format(name=name)


@pytest.mark.parametrize(
    ("name", "driver"),
    [
        ("gpu-scratch.example.com", "csi.example.com"),
        ("tpu-cache.example.com", "csi.example.com"),
        ("gpu-burst.example.com", "nvme.storage.example.com"),
        ("gpu.example.com", "csi.example.com"),
        ("mig.example.com", "csi.example.com"),
        ("gpu.nvidia.com", "csi.example.com"),  # even a known class name: the object says what it selects
    ],
)
def test_a_known_device_class_with_a_non_accelerator_driver_is_not_an_accelerator(name, driver):
    assert _findings(_class_pod(name, driver)) == _expect(WITH_CLASS, OTHER_SEVERITIES)
    info = _facts_with_class(name, f"device.driver == '{driver}'").classify(name)
    assert info.kind == OTHER and not info.accelerator
    assert f"DeviceClass '{name}' selects devices of {driver}, not an accelerator driver" in info.how


@pytest.mark.parametrize(
    ("name", "driver", "kind"),
    [
        ("scratch.example.com", "gpu.nvidia.com", GPU),
        ("big-accel", "gpu.amd.com", GPU),
        ("fast", "gpu.intel.com", GPU),
        ("gaudi3", "gaudi.intel.com", ACCELERATOR),
        ("trainium", "neuron.aws.com", ACCELERATOR),
        ("v5e", "tpu.google.com", ACCELERATOR),
        ("rdma-storage.example.com", "gpu.nvidia.com", GPU),  # a non-accelerator name, a GPU driver
        ("example-gpus", "gpu.example.com", GPU),  # the DRA example driver
    ],
)
def test_a_known_device_class_with_an_accelerator_driver_is_one_whatever_its_name(name, driver, kind):
    assert _findings(_class_pod(name, driver)) == _expect(WITH_CLASS, ACCELERATOR_SEVERITIES, kind == GPU)
    assert _facts_with_class(name, f"device.driver == '{driver}'").classify(name).kind == kind


def test_every_driver_a_class_selects_is_read():
    both = "device.driver == 'csi.example.com' || device.driver == 'gpu.nvidia.com'"
    assert _facts_with_class("c", both).classify("c").kind == GPU
    listed = "device.driver in ['csi.example.com', 'gpu.amd.com']"
    assert _facts_with_class("c", listed).classify("c").resource == "amd.com/gpu"
    text = DEVICE_CLASS.format(name="c", expression=listed) + BEST_EFFORT_POD.format(name="c")
    assert _findings(text) == _expect(WITH_CLASS, ACCELERATOR_SEVERITIES, gpus=True)
    # MIG devices of the GPU driver, whatever the class is called
    mig = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
    assert _facts_with_class("storage-thing", mig).classify("storage-thing").kind == SLICE


def test_a_class_whose_selectors_name_no_driver_is_judged_by_its_name():
    text = DEVICE_CLASS.format(
        name="gpu-a100.example.com", expression="device.attributes['example.com'].model == 'a100'"
    ) + BEST_EFFORT_POD.format(name="gpu-a100.example.com")
    assert _findings(text) == _expect(WITH_CLASS, ACCELERATOR_SEVERITIES, gpus=True)


def test_the_profiles_list_wins_over_the_driver():
    text = _class_pod("gpu-scratch.example.com", "csi.example.com")
    profile = {"acceleratorDeviceClasses": ["gpu-scratch.example.com"]}
    assert _findings(text, profile) == _expect(WITH_CLASS, ACCELERATOR_SEVERITIES)


def test_the_driver_decides_for_a_class_given_with_context(tmp_path):
    (tmp_path / "classes.yaml").write_text(
        DEVICE_CLASS.format(name="gpu-scratch.example.com", expression="device.driver == 'csi.example.com'")
    )
    (tmp_path / "pod.yaml").write_text(BEST_EFFORT_POD.format(name="gpu-scratch.example.com"))
    r = CliRunner().invoke(
        main,
        ["check", str(tmp_path / "pod.yaml"), "--context", str(tmp_path / "classes.yaml"), "-f", "json", "-j", "1"],
    )
    got = sorted(
        (f["line"], f["rule"], f["severity"])
        for f in json.loads(r.output)["findings"]
        if f["rule"] != "unknown-priority-class"
    )
    assert got == _expect(WITHOUT_CLASS, OTHER_SEVERITIES)
    # without the DeviceClass, its name decides
    r = CliRunner().invoke(main, ["check", str(tmp_path / "pod.yaml"), "-f", "json", "-j", "1"])
    got = sorted(
        (f["line"], f["rule"], f["severity"])
        for f in json.loads(r.output)["findings"]
        if f["rule"] != "unknown-priority-class"
    )
    assert got == _expect(WITHOUT_CLASS, ACCELERATOR_SEVERITIES)


# Class names with no DeviceClass known: whole parts of the first label decide.
@pytest.mark.parametrize(
    ("name", "kind"),
    [
        # a "mig" inside a word is no MIG
        ("data-migration.example.com", None),
        ("livemigration.storage.example.com", None),
        ("migrate.example.com", None),
        ("smig.example.com", None),
        # ... nor are gpu, tpu, npu inside a word
        ("gpudirect-rdma.example.com", OTHER),  # GPUDirect RDMA: a NIC (its rdma part says so)
        ("gpudirect.example.com", None),
        ("nvgpu.example.com", None),
        ("tpuvm-storage.example.com", OTHER),
        ("snpu.example.com", None),
        # a name that also names a non-accelerator device is not an accelerator
        ("mig-storage.example.com", OTHER),
        ("gpu-nic.example.com", OTHER),
        ("rdma-gpu.example.com", OTHER),
        ("npu-dranet.example.com", OTHER),
        ("accelerator-nic.example.com", OTHER),
        # whole parts
        ("mig.nvidia.com", SLICE),
        ("mig.example.com", SLICE),
        ("mig-1g.10gb.example.com", SLICE),
        ("nvidia-mig.example.com", SLICE),
        ("mig-1g-12gb.gpu.nvidia.com", SLICE),
        ("gpu.example.com", GPU),
        ("a100-gpus.example.com", GPU),
        ("tpu-v5e.example.com", ACCELERATOR),
        ("npu.example.com", ACCELERATOR),
        ("x.gpu.nvidia.com", GPU),
    ],
)
def test_class_names_are_judged_by_whole_parts(name, kind):
    info = DraFacts().classify(name)
    assert (info.kind if info is not None else None) == kind
    severities = ACCELERATOR_SEVERITIES if kind in (GPU, SLICE, ACCELERATOR) else OTHER_SEVERITIES
    assert _findings(BEST_EFFORT_POD.format(name=name)) == _expect(WITHOUT_CLASS, severities, kind in (GPU, SLICE))


def test_the_mig_profile_of_a_class_name():
    info = DraFacts().classify("mig-1g.10gb.example.com")
    assert (info.kind, info.profile) == (SLICE, "1g.10gb")


def _facts_with_class(name: str, expression: str) -> DraFacts:
    facts = DraFacts()
    spec = {"selectors": [{"cel": {"expression": expression}}]}
    assert facts.add_object("DeviceClass", "resource.k8s.io", {"spec": spec}, name, None)
    return facts


def test_serve_judges_a_context_device_class_by_its_driver(tmp_path):
    """serve reads the DeviceClass from the config's context files as check does."""
    import yaml

    from kubelint_ml.admission.review import lint_object, load_policy

    (tmp_path / "classes.yaml").write_text(
        DEVICE_CLASS.format(name="gpu-scratch.example.com", expression="device.driver == 'csi.example.com'")
        + BEST_EFFORT_POD.format(name="gpu-scratch.example.com").split("---")[0]
    )
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("context: [classes.yaml]\n")
    pod = yaml.safe_load(BEST_EFFORT_POD.format(name="gpu-scratch.example.com").split("---\n")[1])
    served, _ = lint_object(load_policy(str(config)), pod)
    assert sorted((f.rule, f.severity) for f in served if f.rule != "unknown-priority-class") == [
        ("besteffort-qos", "warning"),
        ("missing-memory-limit", "warning"),
        ("missing-memory-request", "warning"),
    ]


def test_rules_show_says_the_driver_decides():
    out = " ".join(CliRunner().invoke(main, ["rules", "show", "besteffort-qos"]).output.split())
    assert "by the driver its selectors pin when the DeviceClass is among them" in out
    assert "any other driver is no accelerator, whatever the class is called" in out
    assert "a whole part of its first label such as gpu, tpu, npu or mig" in out


def _typed_pod(expression: str, request_type: str | None) -> str:
    """The best-effort pod, its class pinning a driver by ``expression`` and its request selecting
    devices whose ``type`` attribute is ``request_type`` (as the DRA example driver's are)."""
    pod = BEST_EFFORT_POD.format(name="example-device-class")
    if request_type is not None:
        selector = f'selectors: [{{cel: {{expression: \'device.attributes["driver.example.com"].type == "{request_type}"\'}}}}]'
        pod = pod.replace(
            "exactly: {deviceClassName: example-device-class}",
            f"exactly: {{deviceClassName: example-device-class, {selector}}}",
        )
    return DEVICE_CLASS.format(name="example-device-class", expression=expression) + pod


def test_a_request_that_selects_gpus_of_a_driver_known_for_nothing_is_a_gpu_pod():
    # The Kubernetes DRA tutorial: a class over driver.example.com, a claim selecting `type == "gpu"`.
    unknown = "device.driver == 'driver.example.com'"
    assert _findings(_typed_pod(unknown, "gpu")) == _expect(WITH_CLASS, ACCELERATOR_SEVERITIES, gpus=True)
    assert _findings(_typed_pod(unknown, None)) == _expect(WITH_CLASS, OTHER_SEVERITIES)
    assert _findings(_typed_pod(unknown, "nvme")) == _expect(WITH_CLASS, OTHER_SEVERITIES)
    # a driver known for another device (a NIC) keeps its verdict whatever a selector compares
    assert _findings(_typed_pod("device.driver == 'dranet'", "gpu")) == _expect(WITH_CLASS, OTHER_SEVERITIES)
    # the class's own selectors may say it too
    typed_class = unknown + ' && device.attributes[\\"driver.example.com\\"].type == \\"gpu\\"'
    assert _findings(_typed_pod(typed_class, None)) == _expect(WITH_CLASS, ACCELERATOR_SEVERITIES, gpus=True)


def test_a_request_type_and_a_class_named_for_another_device():
    facts = DraFacts()
    from kubelint_ml.k8s.dra import SubRequest

    # no DeviceClass known: the class's name decides when it names a device; the request's type otherwise
    assert facts.classify_request(SubRequest("rdma-nic.example.com", 1, device_type="gpu")).kind == OTHER
    assert facts.classify_request(SubRequest("example-device-class", 1, device_type="gpu")).kind == GPU
    assert facts.classify_request(SubRequest("example-device-class", 1, device_type="tpu")).kind == ACCELERATOR
    assert facts.classify_request(SubRequest("example-device-class", 1)) is None
