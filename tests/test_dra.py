"""Dynamic Resource Allocation: claims followed to their devices, and what that changes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine.context import Facts
from kubelint_ml.engine.core import Engine
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.k8s.dra import ACCELERATOR, ANY_GPU, GPU, OTHER, SLICE, DraFacts, claim_requests
from kubelint_ml.run.config import Config, Profile
from kubelint_ml.run.lint import Runner, lint_text

ROOT = Path(__file__).resolve().parent.parent
RULES = load_builtin_rules()


def _config(profile: dict | None = None) -> Config:
    cfg = Config()
    if profile:
        cfg.profile = Profile.from_dict(profile, ROOT)
    return cfg


def lint(manifest: str, profile: dict | None = None) -> list[tuple[int, str, str]]:
    findings = lint_text(textwrap.dedent(manifest).encode(), RULES, _config(profile))
    return sorted((f.line, f.rule, f.severity) for f in findings)


def findings_of(manifest: str, rule: str, profile: dict | None = None) -> list:
    findings = lint_text(textwrap.dedent(manifest).encode(), RULES, _config(profile))
    return [f for f in findings if f.rule == rule]


NIC_DEPLOYMENT = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: rdma.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == 'rdma.example.com'
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-nic
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly:
          deviceClassName: rdma.example.com
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx
        resources:
          claims:
          - name: nic
      resourceClaims:
      - name: nic
        resourceClaimTemplateName: one-nic
"""


def test_a_nic_claim_does_not_make_an_accelerator_pod():
    assert lint(NIC_DEPLOYMENT) == [
        (31, "besteffort-qos", "warning"),
        (35, "missing-memory-limit", "warning"),
        (35, "missing-memory-request", "warning"),
    ]


def gpu_claim_pod(request: str, memory: str = "1800Gi", api: str = "resource.k8s.io/v1") -> str:
    return f"""\
apiVersion: {api}
kind: ResourceClaimTemplate
metadata:
  name: gpus
spec:
  spec:
    devices:
      requests:
      - name: gpu
{textwrap.indent(textwrap.dedent(request).strip(), " " * 8)}
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  priorityClassName: training
  nodeSelector:
    node.kubernetes.io/instance-type: p5.48xlarge
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      requests: {{memory: {memory}, cpu: "8"}}
      limits: {{memory: {memory}, cpu: "8"}}
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpus
"""


def test_a_claimed_gpu_is_judged_for_its_share_of_the_node():
    pod = gpu_claim_pod("exactly:\n  deviceClassName: gpu.nvidia.com\n  count: 1")
    found = findings_of(pod, "gpu-memory-share-mismatch")
    assert [(f.line, f.severity, f.message) for f in found] == [
        (26, "warning", "1 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)")
    ]
    # exactly what the device-plugin form gets
    plugin = pod.replace("      claims:\n      - name: gpu\n", "").replace(
        'limits: {memory: 1800Gi, cpu: "8"}', 'limits: {memory: 1800Gi, cpu: "8", nvidia.com/gpu: 1}'
    )
    plugin = plugin[plugin.index("apiVersion: v1") :].replace(
        "  resourceClaims:\n  - name: gpu\n    resourceClaimTemplateName: gpus\n", ""
    )
    assert [f.message for f in findings_of(plugin, "gpu-memory-share-mismatch")] == [found[0].message]


def test_counts_of_the_older_request_form_and_of_all_devices():
    # v1beta1: the fields on the request itself; 4 of 8 GPUs and 95% of the memory
    pod = gpu_claim_pod("deviceClassName: gpu.nvidia.com\ncount: 4", api="resource.k8s.io/v1beta1")
    assert [f.message for f in findings_of(pod, "gpu-memory-share-mismatch")] == [
        "4 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)"
    ]
    # allocationMode All: every GPU of the node, so all of its memory is the pod's share
    pod = gpu_claim_pod("exactly:\n  deviceClassName: gpu.nvidia.com\n  allocationMode: All")
    assert findings_of(pod, "gpu-memory-share-mismatch") == []
    # more GPUs than the node has
    pod = gpu_claim_pod("exactly:\n  deviceClassName: gpu.nvidia.com\n  count: 16", memory="100Gi")
    found = findings_of(pod, "gpu-memory-share-mismatch")
    assert [(f.line, str(f.path), f.message) for f in found] == [
        (32, "spec.resourceClaims[0].resourceClaimTemplateName", "requests 16 GPUs but p5.48xlarge has only 8")
    ]


def test_alternatives_are_judged_by_the_largest_and_others_are_not_counted(tmp_path):
    pod = gpu_claim_pod(
        """
        firstAvailable:
        - {name: big, deviceClassName: gpu.nvidia.com, count: 2}
        - {name: small, deviceClassName: gpu.nvidia.com, count: 1}
        """
    )
    # 1800Gi is more than 2 of 8 GPUs' share of a p5.48xlarge: the finding holds for either alternative
    [found] = findings_of(pod, "gpu-memory-share-mismatch")
    assert (found.line, found.severity, found.message) == (
        26,
        "warning",
        "2 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)",
    )
    assert "ResourceClaimTemplate 'gpus' lists alternatives (firstAvailable)" in found.detail
    assert "so this holds for every alternative" in found.detail
    # with 8 GPUs as the first choice, the pod may hold the whole node: nothing to say
    whole = pod.replace("count: 2}", "count: 8}")
    assert findings_of(whole, "gpu-memory-share-mismatch") == []
    # they are accelerators: no memory request makes the error severity
    found = findings_of(pod.replace("memory: 1800Gi, ", ""), "missing-memory-limit")
    assert [(f.line, f.severity) for f in found] == [(27, "error")]
    cfg = Config()
    runner = Runner(Engine(RULES), cfg, _facts(pod), verbose=True)
    notes = runner.lint_bytes(pod.encode(), "m.yaml").notes
    assert any(
        "lists alternatives (firstAvailable): its GPUs are counted as the largest the node type can hold (of 2, 1)" in n
        for n in notes
    ), notes
    # alternatives of GPUs and of an accelerator not counted per node: not judged, -v says why
    mixed = pod.replace("deviceClassName: gpu.nvidia.com, count: 1", "deviceClassName: tpu.google.com, count: 1")
    assert findings_of(mixed, "gpu-memory-share-mismatch") == []
    notes = Runner(Engine(RULES), cfg, _facts(mixed), verbose=True).lint_bytes(mixed.encode(), "m.yaml").notes
    assert any("lists alternatives (firstAvailable) that are not all counted GPUs of one kind" in n for n in notes)


def _facts(text: str) -> Facts:
    from kubelint_ml.run.facts import add_facts

    facts = Facts()
    add_facts(facts, text.encode(), "m.yaml", Config().limits)
    return facts


EXTENDED = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == 'gpu.nvidia.com'
  extendedResourceName: example.com/gpu
---
apiVersion: v1
kind: Pod
metadata:
  name: a
spec:
  containers:
  - name: c
    image: x
    resources:
      limits:
        example.com/gpu: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: b
spec:
  containers:
  - name: c
    image: x
    resources:
      limits:
        deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: c
spec:
  containers:
  - name: c
    image: x
    resources:
      limits:
        deviceclass.resource.kubernetes.io/compute-domain-default-channel.nvidia.com: 1
"""


def test_dra_backed_extended_resources_count_by_their_class():
    found = [(f.line, f.rule, f.severity) for f in lint_text(EXTENDED.encode(), RULES, Config())]
    besteffort = [x for x in found if x[1] == "besteffort-qos"]
    assert besteffort == [
        (15, "besteffort-qos", "error"),
        (27, "besteffort-qos", "error"),
        (39, "besteffort-qos", "warning"),
    ]
    limits = [x for x in found if x[1] == "missing-memory-limit"]
    assert limits == [
        (20, "missing-memory-limit", "error"),
        (32, "missing-memory-limit", "error"),
        (44, "missing-memory-limit", "warning"),
    ]


def test_extended_resource_name_unknown_without_its_class():
    pod = EXTENDED[EXTENDED.index("---\napiVersion: v1") + 4 :]
    found = [
        (f.line, f.rule, f.severity) for f in lint_text(pod.encode(), RULES, Config()) if f.rule == "besteffort-qos"
    ]
    # example.com/gpu means nothing without its DeviceClass; the implicit name does
    assert found == [
        (5, "besteffort-qos", "warning"),
        (17, "besteffort-qos", "error"),
        (29, "besteffort-qos", "warning"),
    ]

    # not guessed: -v says the name is not known to be an accelerator, and how to tell
    notes = Runner(Engine(RULES), Config(), _facts(pod), verbose=True).lint_bytes(pod.encode(), "m.yaml").notes
    unknown = [n for n in notes if "not a device plugin resource known here" in n]
    assert len(unknown) == 1 and unknown[0].startswith("m.yaml: Pod/") and "example.com/gpu" in unknown[0], notes
    assert "profile.acceleratorDeviceClasses" in unknown[0]
    # with its DeviceClass among the inputs it is counted, and nothing is said
    notes = (
        Runner(Engine(RULES), Config(), _facts(EXTENDED), verbose=True).lint_bytes(EXTENDED.encode(), "m.yaml").notes
    )
    assert not [n for n in notes if "not a device plugin resource known here" in n], notes


MISSING = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: single-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: pytorch/pytorch
        resources:
          claims:
          - name: gpu
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: singel-gpu
"""


def test_a_missing_template_is_reported_at_its_name_and_said_in_verbose():
    found = findings_of(MISSING, "unknown-resource-claim")
    assert [(f.line, f.column, f.severity, f.message) for f in found] == [
        (29, 36, "error", "ResourceClaimTemplate 'singel-gpu' is not defined among the inputs or --context")
    ]
    assert str(found[0].path) == "spec.template.spec.resourceClaims[0].resourceClaimTemplateName"
    # its devices are unknown: not an accelerator pod, and -v says why
    assert [(f.line, f.severity) for f in findings_of(MISSING, "besteffort-qos")] == [(19, "warning")]
    runner = Runner(Engine(RULES), Config(), _facts(MISSING), verbose=True)
    notes = runner.lint_bytes(MISSING.encode(), "m.yaml").notes
    assert any(
        "ResourceClaimTemplate 'singel-gpu' is not among the inputs or --context, so its devices are not known; "
        "not counted as an accelerator" in n
        for n in notes
    ), notes


def test_without_claims_in_the_file_a_missing_one_is_a_warning():
    job = MISSING[MISSING.index("apiVersion: batch/v1") :]
    found = findings_of(job, "unknown-resource-claim")
    assert [(f.line, f.severity) for f in found] == [(17, "warning")]


def test_templates_and_classes_from_context_files(tmp_path):
    (tmp_path / "claims.yaml").write_text(MISSING[: MISSING.index("---")].replace("single-gpu", "singel-gpu"))
    (tmp_path / "job.yaml").write_text(MISSING[MISSING.index("apiVersion: batch/v1") :])
    r = CliRunner().invoke(
        main,
        ["check", str(tmp_path / "job.yaml"), "--context", str(tmp_path / "claims.yaml"), "--format", "json"],
    )
    out = json.loads(r.output)["findings"]
    got = sorted((f["line"], f["rule"], f["severity"]) for f in out if f["rule"] != "missing-priority-class")
    assert got == [
        (7, "besteffort-qos", "error"),
        (12, "missing-memory-limit", "error"),
        (12, "missing-memory-request", "warning"),
    ]
    # a context file with claims makes a missing one certain
    (tmp_path / "claims.yaml").write_text(MISSING[: MISSING.index("---")])
    r = CliRunner().invoke(
        main,
        ["check", str(tmp_path / "job.yaml"), "--context", str(tmp_path / "claims.yaml"), "--format", "json"],
    )
    out = json.loads(r.output)["findings"]
    assert [(f["line"], f["severity"]) for f in out if f["rule"] == "unknown-resource-claim"] == [(17, "error")]


IMEX = """\
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata:
  name: imex
spec:
  numNodes: 1
  channel:
    resourceClaimTemplate:
      name: imex-channel-0
---
apiVersion: v1
kind: Pod
metadata:
  name: imex
spec:
  containers:
  - name: ctr
    image: ubuntu:22.04
    resources:
      claims:
      - name: imex-channel-0
  resourceClaims:
  - name: imex-channel-0
    resourceClaimTemplateName: imex-channel-0
"""


def test_imex_channels_are_not_gpus():
    assert [x for x in lint(IMEX) if x[1] != "missing-priority-class"] == [
        (15, "besteffort-qos", "warning"),
        (19, "missing-memory-limit", "warning"),
        (19, "missing-memory-request", "warning"),
    ]


def test_profile_lists_a_clusters_own_accelerator_classes():
    pod = NIC_DEPLOYMENT.replace("rdma.example.com", "fpga.example.com")
    # unknown: not raised
    assert ("besteffort-qos", "warning") in {(r, s) for _, r, s in lint(pod)}
    profile = {"acceleratorDeviceClasses": ["fpga.example.com"]}
    assert ("besteffort-qos", "error") in {(r, s) for _, r, s in lint(pod, profile)}


def test_classification():
    facts = DraFacts()
    assert facts.classify("gpu.nvidia.com").kind == GPU
    assert facts.classify("gpu.nvidia.com").resource == "nvidia.com/gpu"
    assert facts.classify("mig.nvidia.com").kind == SLICE
    assert facts.classify("mig-1g-12gb.gpu.nvidia.com").kind == SLICE
    assert facts.classify("compute-domain-default-channel.nvidia.com").kind == OTHER
    assert facts.classify("gpu.amd.com").resource == "amd.com/gpu"
    assert (facts.classify("gpu.intel.com").kind, facts.classify("gpu.intel.com").resource) == (GPU, ANY_GPU)
    assert facts.classify("neuron.aws.com").kind == ACCELERATOR
    assert facts.classify("tpu.google.com").kind == ACCELERATOR
    assert facts.classify("gpu.example.com").kind == GPU  # one of its node's GPUs
    assert facts.classify("npu.example.com").kind == ACCELERATOR
    assert facts.classify("rdma.example.com").kind == OTHER
    assert facts.classify("resource.example.com") is None
    # a DeviceClass's selectors name its driver
    facts.add_object(
        "DeviceClass",
        "resource.k8s.io",
        {
            "spec": {
                "selectors": [
                    {
                        "cel": {
                            "expression": "device.driver == 'gpu.nvidia.com' && "
                            "device.attributes['gpu.nvidia.com'].type == 'mig' && "
                            "device.attributes['gpu.nvidia.com'].profile == '1g.12gb'"
                        }
                    }
                ]
            }
        },
        "small",
        None,
    )
    info = facts.classify("small")
    assert (info.kind, info.resource, info.profile) == (SLICE, "nvidia.com/gpu", "1g.12gb")


def test_claim_request_forms():
    v1 = {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]}}
    beta = {"devices": {"requests": [{"name": "g", "deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}]}}
    first = {
        "devices": {
            "requests": [
                {
                    "name": "g",
                    "firstAvailable": [
                        {"name": "a", "deviceClassName": "x"},
                        {"name": "b", "deviceClassName": "y", "count": 3},
                    ],
                }
            ]
        }
    }
    assert [(s.device_class, s.count) for r in claim_requests(v1) for s in r] == [("gpu.nvidia.com", 2)]
    assert [(s.device_class, s.count) for r in claim_requests(beta) for s in r] == [("gpu.nvidia.com", None)]
    assert [(s.device_class, s.count) for r in claim_requests(first) for s in r] == [("x", 1), ("y", 3)]


def test_serve_judges_dra_pods_as_check_does(tmp_path):
    """serve reads the config's context files once; a reviewed pod's claims resolve against them."""
    import yaml

    from kubelint_ml.admission.review import lint_object, load_policy

    claims = MISSING[: MISSING.index("---")]  # single-gpu: a GPU
    (tmp_path / "claims.yaml").write_text(
        claims + "---\n" + NIC_DEPLOYMENT[: NIC_DEPLOYMENT.index("---\napiVersion: apps")]
    )
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("context: [claims.yaml]\n")
    policy = load_policy(str(config))
    for template, severity in (("single-gpu", "error"), ("one-nic", "warning")):
        job = MISSING[MISSING.index("apiVersion: batch/v1") :].replace("singel-gpu", template)
        served, _ = lint_object(policy, yaml.safe_load(job))
        (tmp_path / "job.yaml").write_text(job)
        r = CliRunner().invoke(main, ["check", str(tmp_path / "job.yaml"), "--config", str(config), "--format", "json"])
        checked = json.loads(r.output)["findings"]
        assert sorted((f.rule, f.severity) for f in served) == sorted((f["rule"], f["severity"]) for f in checked)
        assert ("besteffort-qos", severity) in {(f.rule, f.severity) for f in served}


def test_rules_show_says_how_dra_is_counted():
    for rid in (
        "besteffort-qos",
        "missing-memory-limit",
        "gpu-memory-share-mismatch",
        "gpu-node-unresolved",
        "shm-too-small-for-workers",
        "missing-priority-class",
        "queue-name-missing",
    ):
        out = " ".join(CliRunner().invoke(main, ["rules", "show", rid]).output.split())
        assert "or a DRA claim holds accelerator devices" in out, rid
        assert "does not make an accelerator pod" in out, rid
    out = " ".join(CliRunner().invoke(main, ["rules", "show", "gpu-memory-share-mismatch"]).output.split())
    assert "with `allocationMode: All` it is all of the node's GPUs" in out
    # Rules that leave DRA devices out say so.
    out = " ".join(CliRunner().invoke(main, ["rules", "show", "queue-quota-exceeded"]).output.split())
    assert "Devices claimed through DRA (`resourceClaims`) are not counted" in out
    out = " ".join(CliRunner().invoke(main, ["rules", "show", "gpu-memory-underused"]).output.split())
    assert "GPUs that come through DRA, a claim or a DRA extended resource, are not judged" in out


def test_wrongly_typed_dra_fields_never_crash():
    text = (ROOT / "tests" / "data" / "dra-hostile.yaml").read_text()
    found = lint_text(text.encode(), RULES, Config())
    assert {f.rule for f in found} <= {
        "parse-error",
        "besteffort-qos",
        "missing-priority-class",
        "missing-memory-limit",
        "missing-memory-request",
        "unknown-resource-claim",
        "gpu-node-unresolved",
    }
    assert [(f.line, f.rule) for f in found if f.rule == "parse-error"] == [(5, "parse-error")]
    # the template with odd requests is rejected by the API server (its first request is `exactly: 3`, neither
    # form): it holds no device, and the pod naming it is told so at its resourceClaimTemplateName
    assert ("besteffort-qos", "warning") in {(f.rule, f.severity) for f in found}
    assert [
        (f.line, f.column, f.message)
        for f in found
        if f.rule == "unknown-resource-claim" and "ResourceClaimTemplate" in f.message
    ] == [
        (
            15,
            145,
            "ResourceClaimTemplate 't2' is rejected by the API server: spec.spec.devices.requests[1]: exactly one of "
            "`exactly` or `firstAvailable` is required",
        )
    ]


def test_mig_partitions_count_as_a_fraction_of_a_gpu_where_the_class_names_the_profile():
    text = (ROOT / "tests" / "data" / "dra-mig.yaml").read_text()
    found = findings_of(text, "gpu-memory-share-mismatch")
    assert [(f.line, f.message) for f in found] == [(35, "6/7 of 8 GPUs but 56.7% of p4de.24xlarge memory (600Gi)")]
    assert "leaving 7.14 of its 8 GPUs idle" in found[0].detail
    # a MIG class of no named profile: each device counted as the whole GPU it may be (2 of 8 GPUs)
    generic = text.replace("deviceClassName: mig-3g-40gb.gpu.nvidia.com", "deviceClassName: mig.nvidia.com")
    found = findings_of(generic, "gpu-memory-share-mismatch")
    assert [(f.line, f.message) for f in found] == [(35, "2 of 8 GPUs but 56.7% of p4de.24xlarge memory (600Gi)")]


def test_the_memory_fix_sizes_from_the_claimed_gpus(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text((ROOT / "tests" / "data" / "dra-fix.yaml").read_text())
    r = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", str(path)])
    # 2 of p5.48xlarge's 8 GPUs: a quarter of its 1893Gi allocatable, less the 10% headroom
    assert "+      limits:\n+        memory: 425Gi\n" in r.output, r.output
    # without the template the claim's devices are unknown: no GPU share to size from
    path.write_text(path.read_text().replace("resourceClaimTemplateName: two-gpus", "resourceClaimTemplateName: x"))
    r = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", str(path)])
    assert "memory: 425Gi" not in r.output


def test_a_share_of_a_gpus_capacity_is_counted_whole_and_not_sized_from(tmp_path):
    """KEP-5075 (DRAConsumableCapacity, beta and on from 1.36): a request with capacity.requests takes part of
    each device, which other claims may share. The GPU-share finding counts the whole GPU (it holds whatever
    the part), but the memory fix does not size from it; before 1.36 the API server drops capacity.requests
    and the request takes the whole devices, sized as any claim."""
    path = tmp_path / "pod.yaml"
    shared = (
        (ROOT / "tests" / "data" / "dra-fix.yaml")
        .read_text()
        .replace(
            "          count: 2\n", "          count: 2\n          capacity:\n            requests: {memory: 10Gi}\n"
        )
    )
    path.write_text(shared)
    r = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", "--kubernetes-version", "1.36", str(path)])
    assert "memory: 425Gi" not in r.output
    r = CliRunner().invoke(main, ["check", "-v", "--kubernetes-version", "1.36", str(path)])
    assert (
        "no fix for memory of container 'train': the pod claims part of the capacity of GPUs other claims may share"
        in r.stderr
    )
    assert "asks for part of the capacity of 2 devices of class 'gpu.nvidia.com'" in r.stderr
    r = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", "--kubernetes-version", "1.35", str(path)])
    assert "+      limits:\n+        memory: 425Gi\n" in r.output, r.output
    # the share finding still counts the two GPUs
    path.write_text(
        shared.replace(
            "      claims:", "      requests: {memory: 1000Gi}\n      limits: {memory: 1000Gi}\n      claims:"
        )
    )
    found = json.loads(
        CliRunner().invoke(main, ["check", "-f", "json", "--kubernetes-version", "1.36", str(path)]).stdout
    )["findings"]
    assert [(f["rule"], f["message"]) for f in found] == [
        ("gpu-memory-share-mismatch", "2 of 8 GPUs but 52.8% of p5.48xlarge memory (1000Gi)")
    ]


def test_generated_claims_of_one_template_are_merged_request_by_request():
    """Running pods of one template allocated different firstAvailable alternatives: each request is any of
    those they got; a claim of another shape (the template changed since) is left out, without failing."""
    facts = DraFacts()
    first = {
        "name": "g",
        "firstAvailable": [
            {"name": "two", "deviceClassName": "gpu.nvidia.com", "count": 2},
            {"name": "one", "deviceClassName": "gpu.nvidia.com"},
        ],
    }
    nic = {"name": "n", "exactly": {"deviceClassName": "rdma.example.com"}}
    for name, requests, chosen in (("b", [first, nic], "g/two"), ("d", [first, nic], "g/one"), ("a", [first], "g/one")):
        status = {"allocation": {"devices": {"results": [{"request": chosen, "driver": "gpu.nvidia.com"}]}}}
        data = {"spec": {"devices": {"requests": requests}}, "status": status}
        facts.add_object("ResourceClaim", "resource.k8s.io", data, name, "ml")
    assert facts.generated_claims("t", "ml", ["b", "d", "a"])
    assert [[(s.device_class, s.count) for s in r] for r in facts.find("template", "t", "ml")] == [
        [("gpu.nvidia.com", 2), ("gpu.nvidia.com", 1)],
        [("rdma.example.com", 1)],
    ]
    assert not facts.generated_claims("u", "ml", ["missing"])


def test_a_profile_class_and_its_extended_resource():
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
      containers:
      - name: c
        image: x
        resources:
          requests: {memory: 1800Gi}
          limits: {memory: 1800Gi, example.com/h100: 1}
    """
    assert findings_of(pod, "gpu-memory-share-mismatch") == []  # example.com/h100 means nothing by itself
    profile = {
        "acceleratorDeviceClasses": [
            {"name": "h100.example.com", "resource": "nvidia.com/gpu", "extendedResourceName": "example.com/h100"}
        ]
    }
    found = findings_of(pod, "gpu-memory-share-mismatch", profile)
    assert [(f.line, f.message) for f in found] == [(10, "1 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)")]


def test_claims_in_other_namespaces_and_the_v1beta2_form():
    text = """\
apiVersion: resource.k8s.io/v1beta2
kind: ResourceClaim
metadata: {name: shared-gpus, namespace: research}
spec:
  devices:
    requests:
    - name: gpus
      exactly: {deviceClassName: gpu.nvidia.com, count: 4}
---
apiVersion: v1
kind: Pod
metadata: {name: here, namespace: research}
spec:
  priorityClassName: training
  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
  containers:
  - name: c
    image: x
    resources:
      requests: {memory: 1800Gi}
      limits: {memory: 1800Gi}
  resourceClaims:
  - {name: gpus, resourceClaimName: shared-gpus}
---
apiVersion: v1
kind: Pod
metadata: {name: elsewhere, namespace: prod}
spec:
  containers:
  - name: c
    image: x
  resourceClaims:
  - {name: gpus, resourceClaimName: shared-gpus}
"""
    found = lint_text(text.encode(), RULES, Config())
    share = [(f.line, f.message) for f in found if f.rule == "gpu-memory-share-mismatch"]
    assert share == [(20, "4 of 8 GPUs but 95.1% of p5.48xlarge memory (1800Gi)")]
    # the claim lives in another namespace: not found there, and not an accelerator pod
    missing = [(f.line, f.severity, f.message) for f in found if f.rule == "unknown-resource-claim"]
    assert missing == [(33, "error", "ResourceClaim 'shared-gpus' is not defined in namespace prod (only in research)")]
    assert [(f.line, f.severity) for f in found if f.rule == "besteffort-qos"] == [(28, "warning")]


def test_a_gpu_class_without_a_vendor_resource_is_one_of_its_nodes_gpus():
    text = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
  extendedResourceName: example.com/gpu
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  priorityClassName: training
  nodeSelector: {pool: mi300}
  containers:
  - name: c
    image: x
    resources:
      requests: {memory: 900Gi}
      limits: {memory: 900Gi, example.com/gpu: 1}
"""
    profile = {
        "nodePools": [
            {
                "name": "mi300",
                "labels": {"pool": "mi300"},
                "gpus": 8,
                "gpuResource": "amd.com/gpu",
                "memory": "1000Gi",
                "cpu": "190",
            }
        ]
    }
    found = findings_of(text, "gpu-memory-share-mismatch", profile)
    assert [(f.line, f.message) for f in found] == [(19, "1 of 8 GPUs but 90% of node pool mi300 memory (900Gi)")]
    on_p5 = text.replace("{pool: mi300}", "{node.kubernetes.io/instance-type: p5.48xlarge}")
    assert [f.message for f in findings_of(on_p5, "gpu-memory-share-mismatch")] == [
        "1 of 8 GPUs but 47.5% of p5.48xlarge memory (900Gi)"
    ]


def test_the_configs_severity_wins_over_the_rules_own_choice():
    job = MISSING[MISSING.index("apiVersion: batch/v1") :]
    found = lint_text(job.encode(), RULES, Config(), severity={"unknown-resource-claim": "error"})
    assert [(f.line, f.severity) for f in found if f.rule == "unknown-resource-claim"] == [(17, "error")]


ADMIN_ACCESS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: all-gpus-admin
  namespace: monitoring
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          allocationMode: All
          adminAccess: true
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: dcgm-exporter
  namespace: monitoring
spec:
  selector: {matchLabels: {app: dcgm}}
  template:
    metadata: {labels: {app: dcgm}}
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: p5.48xlarge
      containers:
      - name: exporter
        image: nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04
        resources:
          claims: [{name: gpus}]
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: all-gpus-admin
"""


def test_admin_access_to_gpus_is_not_an_accelerator_pod():
    """A request with adminAccess (a monitoring agent's: KEP-5018, on by default from 1.34) ignores
    every ordinary claim and allocation of the devices: the pod holds no GPU, so it is judged as
    any pod, and its node's GPUs are not counted as its own."""
    assert lint(ADMIN_ACCESS) == [
        (25, "besteffort-qos", "warning"),
        (31, "missing-memory-limit", "warning"),
        (31, "missing-memory-request", "warning"),
    ]
    assert (
        claim_requests(
            {
                "devices": {
                    "requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com", "adminAccess": True}}]
                }
            }
        )
        == ()
    )
    # v1beta1: the field on the request itself; adminAccess: false is an ordinary request
    assert claim_requests({"devices": {"requests": [{"name": "g", "deviceClassName": "c", "adminAccess": True}]}}) == ()
    [[sub]] = claim_requests(
        {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "c", "adminAccess": False}}]}}
    )
    assert (sub.device_class, sub.count) == ("c", 1)
    # the same claim without adminAccess is a GPU pod
    ordinary = ADMIN_ACCESS.replace("          adminAccess: true\n", "")
    assert (24, "besteffort-qos", "error") in lint(ordinary)  # (a line less)


def test_a_container_claim_the_pod_does_not_list_is_rejected():
    """validateResourceClaimNames: every container's (and init container's) resources.claims[].name
    is one of spec.resourceClaims[].name, else the API server rejects the pod."""
    pod = MISSING.replace("singel-gpu", "single-gpu").replace(
        "          claims:\n          - name: gpu\n",
        "          claims:\n          - name: gpu\n          - name: gpus\n",
    )
    found = findings_of(pod, "unknown-resource-claim")
    assert [(f.line, f.column, str(f.path), f.severity, f.message) for f in found] == [
        (
            27,
            19,
            "spec.template.spec.containers[0].resources.claims[1].name",
            "error",
            "container 'train' uses claim 'gpus', which spec.resourceClaims does not list",
        )
    ]
    assert 'Not found: "gpus": must be one of the names in pod.spec.resourceClaims: gpu' in found[0].detail
    # no spec.resourceClaims at all, in an init container
    bare = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  initContainers:
  - name: warmup
    image: x
    resources:
      claims:
      - name: gpu
  containers:
  - name: c
    image: x
"""
    [f] = findings_of(bare, "unknown-resource-claim")
    assert (f.line, str(f.path)) == (11, "spec.initContainers[0].resources.claims[0].name")
    assert "pod.spec.resourceClaims which is empty" in f.detail
    # the names listed: nothing to say
    assert findings_of(MISSING.replace("singel-gpu", "single-gpu"), "unknown-resource-claim") == []


def test_a_pod_claim_names_exactly_one_source():
    """validatePodResourceClaim: resourceClaimName or resourceClaimTemplateName, not neither, not both."""
    pod = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: x
    resources:
      claims: [{name: gpu}, {name: nic}]
  resourceClaims:
  - name: gpu
  - name: nic
    resourceClaimName: a
    resourceClaimTemplateName: b
"""
    found = findings_of(pod, "unknown-resource-claim")
    assert [(f.line, str(f.path), f.severity, f.message) for f in found] == [
        (12, "spec.resourceClaims[0]", "error", "claim 'gpu' names no ResourceClaim or template"),
        (13, "spec.resourceClaims[1]", "error", "claim 'nic' names both a ResourceClaim and a template"),
    ]  # (one finding for the entry naming both: its template is not looked for)
    assert "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`" in found[0].detail
    assert "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified" in found[1].detail
