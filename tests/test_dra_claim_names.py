"""What the API server rejects of a pod's claim names (k/k pkg/apis/core/validation/validation.go:
validatePodResourceClaim, validateResourceClaimNames), reported as unknown-resource-claim errors."""

from __future__ import annotations

from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.run.config import Config
from kubelint_ml.run.lint import lint_text

RULES = load_builtin_rules()

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tmpl}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
---
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  priorityClassName: x
  resourceClaims:
{claims}  containers:
  - name: a
    image: x
    resources:
      limits: {{cpu: "1", memory: 1Gi}}
      claims: {uses}
"""


def _claim_findings(text: str) -> list[tuple[int, int, str, str, str]]:
    found = lint_text(text.encode(), RULES, Config())
    return sorted(
        (f.line, f.column, str(f.path), f.severity, f.message) for f in found if f.rule == "unknown-resource-claim"
    )


def test_duplicate_names_in_the_pod_and_in_a_container():
    """The repro: two entries named g, a container listing h (unlisted) and g twice."""
    text = TEMPLATE + POD.format(
        claims="  - {name: g, resourceClaimTemplateName: tmpl}\n  - {name: g, resourceClaimTemplateName: tmpl}\n",
        uses="[{name: h}, {name: g}, {name: g}]",
    )
    found = _claim_findings(text)
    assert found == [
        (18, 12, "spec.resourceClaims[1].name", "error", "claim 'g' is listed twice in spec.resourceClaims"),
        (
            24,
            23,
            "spec.containers[0].resources.claims[0].name",
            "error",
            "container 'a' uses claim 'h', which spec.resourceClaims does not list",
        ),
        (24, 45, "spec.containers[0].resources.claims[2].name", "error", "container 'a' lists claim 'g' twice"),
    ]
    details = {f.message: f.detail for f in lint_text(text.encode(), RULES, Config())}
    assert 'spec.resourceClaims[1].name: Duplicate value: "g"' in details[found[0][4]]
    assert 'resources.claims[2]: Duplicate value: "g"' in details[found[2][4]]


def test_both_sources_or_neither_is_one_finding():
    """The repro: g names both a claim and a template (not defined anywhere), h neither."""
    text = POD.format(
        claims="  - {name: g, resourceClaimTemplateName: tmpl, resourceClaimName: c}\n  - {name: h}\n",
        uses="[{name: g}, {name: h}]",
    )
    assert _claim_findings(text) == [
        (7, 5, "spec.resourceClaims[0]", "error", "claim 'g' names both a ResourceClaim and a template"),
        (8, 5, "spec.resourceClaims[1]", "error", "claim 'h' names no ResourceClaim or template"),
    ]
    # a valid entry beside them is still looked for
    more = text.replace("  - {name: h}\n", "  - {name: h}\n  - {name: k, resourceClaimTemplateName: missing}\n")
    assert _claim_findings(more)[2:] == [
        (
            9,
            42,
            "spec.resourceClaims[2].resourceClaimTemplateName",
            "warning",
            "ResourceClaimTemplate 'missing' is not defined among the inputs or --context",
        )
    ]


def test_a_container_lists_requests_of_a_claim_once():
    """validateResourceClaimNames keys a request as name/request: the same request twice, or the whole
    claim beside one of its requests, is a duplicate; two different requests of a claim are not."""
    nic = "      - name: nic\n        exactly: {deviceClassName: rdma.example.com}\n---\n"
    pod = TEMPLATE.replace("---\n", nic) + POD.format(
        claims="  - {name: g, resourceClaimTemplateName: tmpl}\n", uses="CLAIMS"
    )

    def found(claims: str) -> list[tuple[int, str, str]]:
        return [(col, path, msg) for _, col, path, _, msg in _claim_findings(pod.replace("CLAIMS", claims))]

    assert found("[{name: g, request: gpu}, {name: g, request: nic}]") == []
    assert found("[{name: g, request: gpu}, {name: g, request: gpu}]") == [
        (48, "spec.containers[0].resources.claims[1].name", "container 'a' lists request 'gpu' of claim 'g' twice")
    ]
    assert found("[{name: g, request: gpu}, {name: g}]") == [
        (
            48,
            "spec.containers[0].resources.claims[1].name",
            "container 'a' lists claim 'g' whole and one of its requests",
        )
    ]
    assert found("[{name: g}, {name: g, request: gpu}]") == [
        (34, "spec.containers[0].resources.claims[1].name", "container 'a' lists claim 'g' whole and its request 'gpu'")
    ]
    # each container lists its own: the same claim in two containers is fine
    two = pod.replace("CLAIMS", "[{name: g}]") + "  - {name: b, image: x, resources: {claims: [{name: g}]}}\n"
    assert _claim_findings(two) == []


def test_claim_names_are_dns_labels_and_sources_dns_subdomains():
    """validatePodResourceClaim: a name is required and a DNS label; resourceClaimName and
    resourceClaimTemplateName are DNS subdomains (ValidateResourceClaimName, ...TemplateName). A source
    rejected as a name is not also looked for."""
    text = TEMPLATE + POD.format(
        claims=(
            "  - {name: gpu_claim, resourceClaimTemplateName: tmpl}\n"
            "  - {name: GPU, resourceClaimTemplateName: tmpl}\n"
            "  - {name: g, resourceClaimTemplateName: One_GPU}\n"
            "  - {resourceClaimTemplateName: tmpl}\n"
            "  - {name: s, resourceClaimName: shared.gpu-1}\n"
        ),
        uses="[{name: gpu_claim}, {name: g}]",
    )
    found = _claim_findings(text)
    assert found == [
        (17, 12, "spec.resourceClaims[0].name", "error", "claim name 'gpu_claim' is not a DNS label"),
        (18, 12, "spec.resourceClaims[1].name", "error", "claim name 'GPU' is not a DNS label"),
        (
            19,
            42,
            "spec.resourceClaims[2].resourceClaimTemplateName",
            "error",
            "resourceClaimTemplateName 'One_GPU' is not a valid ResourceClaimTemplate name",
        ),
        (20, 5, "spec.resourceClaims[3]", "error", "spec.resourceClaims entry without a name"),
        (
            21,
            34,
            "spec.resourceClaims[4].resourceClaimName",
            "error",
            "ResourceClaim 'shared.gpu-1' is not defined among the inputs or --context",
        ),
    ]
    details = {f.message: f.detail for f in lint_text(text.encode(), RULES, Config())}
    assert 'spec.resourceClaims[0].name: Invalid value: "gpu_claim": a lowercase RFC 1123 label' in details[found[0][4]]
    assert "spec.resourceClaims[3].name: Required value" in details[found[3][4]]
    # names left for a template engine are not judged
    templated = TEMPLATE + POD.format(
        claims="  - {name: '${CLAIM}', resourceClaimTemplateName: '{{ .Values.tmpl }}'}\n", uses="[]"
    )
    assert [f[4] for f in _claim_findings(templated) if "DNS" in f[4] or "valid" in f[4]] == []


def test_the_v1alpha2_source_form_names_no_claim():
    """PodResourceClaim.source (resource.k8s.io/v1alpha2, 1.26-1.30) was replaced in 1.31 by
    resourceClaimName / resourceClaimTemplateName beside the name: the entry names no claim, and the API
    server rejects the pod (NVIDIA's sharing demo Job)."""
    text = POD.format(
        claims="  - name: g\n    source:\n      resourceClaimName: shared\n",
        uses="[{name: g}]",
    )
    found = lint_text(text.encode(), RULES, Config())
    hits = [f for f in found if f.rule == "unknown-resource-claim"]
    assert [(f.line, f.column, str(f.path), f.severity, f.message) for f in hits] == [
        (8, 5, "spec.resourceClaims[0].source", "error", "claim 'g' uses the source form removed in Kubernetes 1.31")
    ]
    assert "Move source.resourceClaimName up beside name (resourceClaimName: shared)" in hits[0].detail
    assert "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`" in hits[0].detail


def test_long_claim_lists_name_twenty_and_count_the_rest():
    """A container naming a claim the pod does not list: the detail lists the pod's claims, the first
    twenty of them and how many more (a pod of thousands of claims got every name, in every finding)."""
    entries = "".join(f"  - {{name: c{i:02d}, resourceClaimTemplateName: tmpl}}\n" for i in range(30))
    text = TEMPLATE + POD.format(claims=entries, uses="[{name: h}]")
    [found] = [f for f in lint_text(text.encode(), RULES, Config()) if f.rule == "unknown-resource-claim"]
    assert found.message == "container 'a' uses claim 'h', which spec.resourceClaims does not list"
    names = ", ".join(f"c{i:02d}" for i in range(20))
    assert f"pod.spec.resourceClaims: {names}, and 10 more)." in found.detail


def test_thousands_of_claims_and_requests_judged_each_once():
    """4,000 claims listed whole and by request in one container: the only duplicates are the
    ones written (a claim whole after one of its requests, at the end)."""
    n = 4000
    entries = "".join(f"  - {{name: g{i}, resourceClaimTemplateName: tmpl}}\n" for i in range(n))
    uses = [f"{{name: g{i}, request: gpu}}" for i in range(n)] + ["{name: g7}", "{name: g9, request: gpu}"]
    text = TEMPLATE + POD.format(claims=entries, uses="[" + ", ".join(uses) + "]")
    found = [(p, m) for _, _, p, _, m in _claim_findings(text)]
    assert found == [
        (
            f"spec.containers[0].resources.claims[{n}].name",
            "container 'a' lists claim 'g7' whole and one of its requests",
        ),
        (f"spec.containers[0].resources.claims[{n + 1}].name", "container 'a' lists request 'gpu' of claim 'g9' twice"),
    ]
