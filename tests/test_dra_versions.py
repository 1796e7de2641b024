"""DRA on the profile's Kubernetes version: claims dropped before 1.34, DRA extended resources before 1.36."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.run.config import Config, Profile
from kubelint_ml.run.lint import lint_text

ROOT = Path(__file__).resolve().parent.parent
RULES = load_builtin_rules()


def lint(manifest: str, version: str | None) -> list[tuple[int, str, str, str]]:
    cfg = Config()
    if version:
        cfg.profile = Profile.from_dict({"kubernetesVersion": version}, ROOT)
    found = lint_text(textwrap.dedent(manifest).encode(), RULES, cfg)
    return sorted((f.line, f.rule, f.severity, f.message) for f in found)


def rules_of(found: list[tuple[int, str, str, str]]) -> set[tuple[str, str]]:
    return {(r, s) for _, r, s, _ in found}


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
  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      requests: {memory: 1800Gi, cpu: "8"}
      limits: {memory: 1800Gi}
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
"""


def test_claims_are_dropped_before_1_34():
    found = lint(CLAIMED, "1.33")
    dropped = [(line, m) for line, r, s, m in found if r == "unknown-resource-claim"]
    assert dropped == [(28, "DRA claims are dropped before Kubernetes 1.34 (profile: 1.33)")]
    assert [s for _, r, s, _ in found if r == "unknown-resource-claim"] == ["warning"]
    # the claimed GPU is not there: no GPU share to judge
    assert not any(r == "gpu-memory-share-mismatch" for _, r, _, _ in found)
    # from 1.34 the claim holds one GPU of the p5.48xlarge's 8, and 1800Gi is far above its share
    for version in ("1.34", None):
        found = lint(CLAIMED, version)
        assert not any(r == "unknown-resource-claim" for _, r, _, _ in found), version
        assert [(line, m) for line, r, _, m in found if r == "gpu-memory-share-mismatch"][:1] == [
            (24, "1 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)")
        ], version


def test_dropped_claims_do_not_make_an_accelerator_pod_nor_a_missing_template_error():
    pod = CLAIMED.replace('requests: {memory: 1800Gi, cpu: "8"}\n      limits: {memory: 1800Gi}\n      ', "")
    assert ("besteffort-qos", "warning") in rules_of(lint(pod, "1.33"))
    assert ("besteffort-qos", "error") in rules_of(lint(pod, "1.34"))
    # a missing template and a container claim the pod does not list: the API server drops both first
    broken = pod.replace("resourceClaimTemplateName: one-gpu", "resourceClaimTemplateName: missing").replace(
        "      - name: gpu\n  resourceClaims", "      - name: gpus\n  resourceClaims"
    )
    assert [(line, s, m) for line, r, s, m in lint(broken, "1.33") if r == "unknown-resource-claim"] == [
        (26, "warning", "DRA claims are dropped before Kubernetes 1.34 (profile: 1.33)")
    ]
    assert {s for _, r, s, _ in lint(broken, "1.34") if r == "unknown-resource-claim"} == {"error"}


EXTENDED = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: h100
spec:
  extendedResourceName: example.com/h100
  selectors:
  - cel:
      expression: device.driver == 'gpu.nvidia.com'
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
      limits:
        RESOURCE: 1
"""


def test_dra_extended_resources_need_1_36():
    implicit = EXTENDED.replace("RESOURCE", "deviceclass.resource.kubernetes.io/gpu.nvidia.com")
    found = lint(implicit, "1.35")
    assert [(line, s, m) for line, r, s, m in found if r == "unknown-resource-claim"] == [
        (
            22,
            "warning",
            "deviceclass.resource.kubernetes.io/gpu.nvidia.com is served through DRA only from Kubernetes 1.36 "
            "(profile: 1.35)",
        )
    ]
    # not served: not a GPU pod on 1.35; a GPU pod from 1.36 (and with no version)
    assert ("besteffort-qos", "warning") in rules_of(found)
    for version in ("1.36", None):
        found = lint(implicit, version)
        assert ("besteffort-qos", "error") in rules_of(found), version
        assert not any(r == "unknown-resource-claim" for _, r, _, _ in found), version
    # a DeviceClass's extendedResourceName: only a device plugin can serve it before 1.36
    named = EXTENDED.replace("RESOURCE", "example.com/h100")
    found = lint(named, "1.34")
    assert [(line, s, m) for line, r, s, m in found if r == "unknown-resource-claim"] == [
        (22, "warning", "example.com/h100 is served through DRA only from Kubernetes 1.36 (profile: 1.34)")
    ]
    assert ("besteffort-qos", "error") in rules_of(lint(named, "1.36"))
    # the device plugin's own name, also declared by a class: counted as the plugin's, no warning
    plugin = named.replace("example.com/h100", "nvidia.com/gpu")
    found = lint(plugin, "1.35")
    assert not any(r == "unknown-resource-claim" for _, r, _, _ in found)
    assert ("besteffort-qos", "error") in rules_of(found)


V1ALPHA3 = CLAIMED.replace("apiVersion: resource.k8s.io/v1\n", "apiVersion: resource.k8s.io/v1alpha3\n", 1).replace(
    "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n",
    "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n",
)


def test_a_claim_version_the_profiles_release_does_not_serve_is_never_created():
    """resource.k8s.io/v1alpha3 served claims and templates in 1.31-1.33 only: applied to a 1.34-1.37
    cluster it is refused (no matches for kind), so the pod's claim is never made and the pod stays Pending:
    one error at the pod's claim, and its GPU is not counted. v1beta1 and v1beta2 are still served, and with
    no version named nothing is said of the version (the file may be written for an older cluster)."""
    assert V1ALPHA3 != CLAIMED
    for version in ("1.34", "1.35", "1.36", "1.37"):
        assert lint(V1ALPHA3, version) == [
            (
                29,
                "unknown-resource-claim",
                "error",
                "ResourceClaimTemplate 'one-gpu' is rejected by the API server: no matches for kind "
                '"ResourceClaimTemplate" in version "resource.k8s.io/v1alpha3": Kubernetes '
                f"{version} serves it in resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1beta1",
            )
        ], version
    share = ("gpu-memory-share-mismatch", "warning")
    assert rules_of(lint(V1ALPHA3, None)) == {share}
    for beta in ("v1beta1", "v1beta2"):
        text = V1ALPHA3.replace("resource.k8s.io/v1alpha3", f"resource.k8s.io/{beta}")
        if beta == "v1beta2":
            text = CLAIMED.replace("resource.k8s.io/v1\n", "resource.k8s.io/v1beta2\n", 1)
        assert rules_of(lint(text, "1.37")) == {share}, beta


def test_the_served_claim_versions_are_the_bundled_schemas():
    """The table of the resource.k8s.io versions each release serves claims in (a plain check does not load
    the schemas) is what the bundled OpenAPI of each release has."""
    from kubelint_ml.k8s.dra import served_claim_versions
    from kubelint_ml.k8s.schema import bundled_versions, served_api_versions

    for version in bundled_versions():
        major, minor = (int(x) for x in version.split("."))
        if (major, minor) < (1, 26):
            continue
        for kind in ("ResourceClaimTemplate", "ResourceClaim"):
            assert sorted(served_claim_versions((major, minor))) == sorted(
                v.rpartition("/")[2] for v in served_api_versions("resource.k8s.io", kind, version)
            ), (version, kind)


def test_serve_refuses_a_pod_whose_template_is_in_a_version_the_cluster_does_not_serve(tmp_path):
    """serve, with the v1alpha3 template as context and a 1.35 profile, says what check says."""
    import yaml

    from kubelint_ml.admission.review import lint_object, load_policy

    template, pod = V1ALPHA3.split("---\n")
    (tmp_path / "claims.yaml").write_text(template)
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text('context: [claims.yaml]\nprofile:\n  kubernetesVersion: "1.35"\n')
    findings, _ = lint_object(load_policy(str(config)), yaml.safe_load(pod))
    assert [(f.rule, f.severity, f.message) for f in findings if f.suppressed is None] == [
        (
            "unknown-resource-claim",
            "error",
            "ResourceClaimTemplate 'one-gpu' is rejected by the API server: no matches for kind "
            '"ResourceClaimTemplate" in version "resource.k8s.io/v1alpha3": Kubernetes 1.35 serves it in '
            "resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1beta1",
        )
    ]


FRACTION = """\
apiVersion: v1
kind: Pod
metadata:
  name: half
spec:
  priorityClassName: x
  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      limits:
        memory: 1800Gi
        deviceclass.resource.kubernetes.io/gpu.nvidia.com: 500m
"""


def test_a_fraction_of_a_class_asked_as_an_extended_resource_gets_no_device():
    """The implicit name contains kubernetes.io/, so the API server does not hold it to whole numbers; the
    scheduler asks a container's DRA extended resource as ExactCount devices of its quantity as a whole
    number and makes no request when it is not one (createResourceRequestAndMappings: AsInt64). So 500m is
    an error at the value, and no half GPU is counted (no GPU-share finding); 1 is one GPU of eight."""
    for version in ("1.36", "1.37", None):
        assert lint(FRACTION, version) == [
            (
                14,
                "invalid-quantity",
                "error",
                "container 'train' limits.deviceclass.resource.kubernetes.io/gpu.nvidia.com '500m' is not a whole "
                "number: the container gets no device",
            )
        ], version
    whole = lint(FRACTION.replace(": 500m", ": 1"), "1.36")
    assert [(line, r, s) for line, r, s, _ in whole] == [(13, "gpu-memory-share-mismatch", "warning")]


def test_the_pods_own_files_template_decides_its_version(tmp_path):
    """Two files define a template of one name and namespace (a driver's v1 and older demo directories):
    each pod is judged by its own file's, so only the pod beside the v1alpha3 template is told."""
    from click.testing import CliRunner

    from kubelint_ml.cli import main

    (tmp_path / "old.yaml").write_text(V1ALPHA3)
    (tmp_path / "new.yaml").write_text(CLAIMED)
    r = CliRunner().invoke(
        main, ["check", str(tmp_path), "-f", "json", "-j1", "--kubernetes-version", "1.35"], catch_exceptions=False
    )
    import json

    found = [(f["file"].rsplit("/", 1)[-1], f["rule"]) for f in json.loads(r.stdout)["findings"]]
    assert ("old.yaml", "unknown-resource-claim") in found
    assert ("new.yaml", "unknown-resource-claim") not in found


def test_the_policies_take_an_unserved_template_for_no_accelerator():
    """export vap's table of the claims that hold accelerators follows check: at 1.35 the v1alpha3 template
    is never created, so a pod naming it is no accelerator pod; with no version named, it holds a GPU."""
    import yaml

    from kubelint_ml.k8s.dra import DraFacts, admission_dra

    template = next(d for d in yaml.safe_load_all(V1ALPHA3) if d["kind"] == "ResourceClaimTemplate")
    for version, holds in (("1.35", False), (None, True)):
        facts = DraFacts()
        facts.add_object("ResourceClaimTemplate", "resource.k8s.io", template, "one-gpu", None, "t.yaml")
        facts.add_profile(None, version)
        assert admission_dra(facts).templates.get("*/one-gpu", False) is holds, version


def test_the_policies_take_a_template_with_refused_device_tolerations_for_no_accelerator():
    """From 1.36 (DRADeviceTaints on) a device toleration of an unknown operator is refused, so the template
    is never created: no accelerator in the policies' table; at 1.35 the tolerations are dropped."""
    import yaml

    from kubelint_ml.k8s.dra import DraFacts, admission_dra

    template = next(d for d in yaml.safe_load_all(CLAIMED) if d["kind"] == "ResourceClaimTemplate")
    exact = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    exact["tolerations"] = [{"key": "gpu.example.com/unhealthy", "operator": "Matches"}]
    for version, holds in (("1.36", False), ("1.35", True)):
        facts = DraFacts()
        facts.add_object("ResourceClaimTemplate", "resource.k8s.io", template, "one-gpu", None, "t.yaml")
        facts.add_profile(None, version)
        assert admission_dra(facts).templates.get("*/one-gpu", False) is holds, version
