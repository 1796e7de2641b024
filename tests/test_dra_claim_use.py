"""A DRA claim of accelerators that no container lists (accelerator-claim-unused): the pod holds the devices
and no container gets them (the kubelet gives a container the CDI devices of the claims it lists only).
check, --fix, serve and the rule's examples agree."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main

CLAIMS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 2}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: nic}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly: {deviceClassName: dranet}
---
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  priorityClassName: training
  containers:
  - name: main
    image: pytorch/pytorch
    resources:
      requests: {cpu: "4", memory: 32Gi}
      limits: {cpu: "4", memory: 32Gi}
CLAIMS_OF_MAIN
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: two-gpus
  - name: net
    resourceClaimTemplateName: nic
"""


def _findings(path: Path, *args: str) -> list[tuple]:
    r = CliRunner().invoke(main, ["check", str(path), "-f", "json", "-j1", *args], catch_exceptions=False)
    return [(f["line"], f["column"], f["rule"], f["severity"], f["message"]) for f in json.loads(r.stdout)["findings"]]


def _line(text: str, line: str) -> int:
    """The 1-based number of the line that is exactly ``line``."""
    return text.split("\n").index(line) + 1


def test_a_gpu_claim_no_container_lists_is_said_at_its_name_and_the_fix_lists_it(tmp_path):
    """The GPU claim unlisted: a warning at the entry's name (the NIC claim, the pod's, is not said); the
    unsafe fix writes resources.claims into the one container, byte for byte, and a second run is clean."""
    text = CLAIMS + POD.replace("CLAIMS_OF_MAIN\n", "")
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    assert _findings(path) == [
        (
            _line(text, "  - name: gpu"),
            11,
            "accelerator-claim-unused",
            "warning",
            "claim 'gpu' holds accelerators (ResourceClaimTemplate 'two-gpus') but no container lists it in "
            "resources.claims",
        )
    ]
    CliRunner().invoke(main, ["check", str(path), "--fix"], catch_exceptions=False)
    assert path.read_text() == text  # unsafe: the container then gets the GPUs
    CliRunner().invoke(main, ["check", str(path), "--fix", "--unsafe-fixes"], catch_exceptions=False)
    want = text.replace(
        '      limits: {cpu: "4", memory: 32Gi}\n',
        '      limits: {cpu: "4", memory: 32Gi}\n      claims:\n      - name: gpu\n',
    )
    assert path.read_bytes() == want.encode()
    assert _findings(path) == []
    CliRunner().invoke(main, ["check", str(path), "--fix", "--unsafe-fixes"], catch_exceptions=False)
    assert path.read_bytes() == want.encode()


def test_a_container_listing_another_claim_gets_the_gpu_claim_appended(tmp_path):
    text = CLAIMS + POD.replace("CLAIMS_OF_MAIN\n", "      claims:\n      - name: net\n")
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    assert [f[:4] for f in _findings(path)] == [
        (_line(text, "  - name: gpu"), 11, "accelerator-claim-unused", "warning")
    ]
    CliRunner().invoke(main, ["check", str(path), "--fix", "--unsafe-fixes"], catch_exceptions=False)
    assert (
        path.read_bytes() == text.replace("      - name: net\n", "      - name: net\n      - name: gpu\n", 1).encode()
    )


def test_claims_used_by_a_container_init_container_or_request_are_fine(tmp_path):
    """Listed whole, by one of its requests, or by an init container: used. A claim whose devices are not
    known (its template nowhere) is not judged by this rule."""
    path = tmp_path / "pod.yaml"
    for claims in (
        "      claims:\n      - name: gpu\n",
        "      claims:\n      - {name: gpu, request: gpu}\n",
    ):
        path.write_text(CLAIMS + POD.replace("CLAIMS_OF_MAIN\n", claims))
        assert _findings(path) == [], claims
    init = POD.replace("CLAIMS_OF_MAIN\n", "").replace(
        "  containers:\n",
        "  initContainers:\n  - name: warm\n    image: x\n    resources:\n      limits: {cpu: '1', memory: 1Gi}\n"
        "      claims: [{name: gpu}]\n  containers:\n",
    )
    path.write_text(CLAIMS + init)
    assert _findings(path) == []
    path.write_text(POD.replace("CLAIMS_OF_MAIN\n", ""))
    assert "accelerator-claim-unused" not in {f[2] for f in _findings(path)}


def test_two_containers_get_the_finding_without_a_fix(tmp_path):
    two = POD.replace(
        "CLAIMS_OF_MAIN\n", "  - name: side\n    image: x\n    resources:\n      limits: {cpu: '1', memory: 1Gi}\n"
    )
    path = tmp_path / "pod.yaml"
    path.write_text(CLAIMS + two)
    before = path.read_bytes()
    assert [f[2:4] for f in _findings(path)] == [("accelerator-claim-unused", "warning")]
    CliRunner().invoke(main, ["check", str(path), "--fix", "--unsafe-fixes"], catch_exceptions=False)
    assert path.read_bytes() == before


def test_serve_says_what_check_says(tmp_path):
    from kubelint_ml.admission.review import lint_object, load_policy

    (tmp_path / "claims.yaml").write_text(CLAIMS)
    pod = POD.replace("CLAIMS_OF_MAIN\n", "")
    (tmp_path / "pod.yaml").write_text(pod)
    checked = _findings(tmp_path / "pod.yaml", "--context", str(tmp_path / "claims.yaml"))
    assert [f[:4] for f in checked] == [(_line(pod, "  - name: gpu"), 11, "accelerator-claim-unused", "warning")]
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("context: [claims.yaml]\n")
    findings, _ = lint_object(load_policy(str(config)), yaml.safe_load(pod))
    assert [(f.rule, f.severity, f.message) for f in findings if f.suppressed is None] == [
        ("accelerator-claim-unused", "warning", checked[0][4])
    ]


BOTH = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu-and-nic}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: nic
        exactly: {deviceClassName: dranet}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  priorityClassName: training
  containers:
  - name: main
    image: pytorch/pytorch
    resources:
      requests: {cpu: "4", memory: 32Gi}
      limits: {cpu: "4", memory: 32Gi}
      claims:
      - {name: devices, request: nic}
  resourceClaims:
  - name: devices
    resourceClaimTemplateName: gpu-and-nic
"""


def test_a_gpu_request_no_container_lists_beside_a_listed_nic_request(tmp_path):
    """KEP-4816's shape, one claim of a GPU and a NIC: the container lists only the NIC request, so the GPU
    request's device is allocated and given to no container. Said at the claim's name; the fix lists the
    request in the one container."""
    path = tmp_path / "pod.yaml"
    path.write_text(BOTH)
    assert _findings(path) == [
        (
            _line(BOTH, "  - name: devices"),
            11,
            "accelerator-claim-unused",
            "warning",
            "request 'gpu' of claim 'devices' holds accelerators (ResourceClaimTemplate 'gpu-and-nic') but no "
            "container lists it",
        )
    ]
    CliRunner().invoke(main, ["check", str(path), "--fix", "--unsafe-fixes"], catch_exceptions=False)
    want = BOTH.replace(
        "      - {name: devices, request: nic}\n",
        "      - {name: devices, request: nic}\n      - name: devices\n        request: gpu\n",
    )
    assert path.read_bytes() == want.encode()
    assert _findings(path) == []


def test_a_request_the_claim_lacks_is_left_to_unknown_resource_claim(tmp_path):
    """A container naming a firstAvailable alternative or a misspelt request: unknown-resource-claim says
    it (and fixes the alternative); the GPU request is not said unused as well, so the two fixes never
    list it twice."""
    path = tmp_path / "pod.yaml"
    for wrong in ("gpus", "gpu/big"):
        path.write_text(BOTH.replace("request: nic}", f"request: {wrong}}}"))
        assert [f[2] for f in _findings(path)] == ["unknown-resource-claim"], wrong
