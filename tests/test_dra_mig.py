"""MIG partitions claimed through DRA: their share of a GPU follows the profile and the GPU model."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kubelint_ml.engine.context import Facts
from kubelint_ml.engine.core import Engine
from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.k8s.dra import fewest_slices, mig_slices, model_mig_slices
from kubelint_ml.run.config import Config, Profile
from kubelint_ml.run.lint import Runner, lint_text

ROOT = Path(__file__).resolve().parent.parent
RULES = load_builtin_rules()
SHARE = "gpu-memory-share-mismatch"


def _config(profile: dict | None = None) -> Config:
    cfg = Config()
    if profile:
        cfg.profile = Profile.from_dict(profile, ROOT)
    return cfg


def share_findings(manifest: str, profile: dict | None = None) -> list:
    return [f for f in lint_text(manifest.encode(), RULES, _config(profile)) if f.rule == SHARE]


def notes_of(manifest: str, profile: dict | None = None) -> list[str]:
    from kubelint_ml.run.facts import add_facts

    cfg = _config(profile)
    facts = Facts()
    add_facts(facts, manifest.encode(), "m.yaml", cfg.limits)
    return Runner(Engine(RULES), cfg, facts, verbose=True).lint_bytes(manifest.encode(), "m.yaml").notes


_MIG_POD = textwrap.dedent(
    """\
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata:
      name: slices
    spec:
      spec:
        devices:
          requests:
          - name: mig
            exactly:
              deviceClassName: mig.nvidia.com
              count: COUNT
              selectors: SELECTORS
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: tune
    spec:
      priorityClassName: x
      NODE
      containers:
      - name: c
        image: x
        resources:
          requests: {memory: MEMORY, cpu: "1"}
          limits: {memory: MEMORY}
      resourceClaims:
      - name: mig
        resourceClaimTemplateName: slices
    """
)


def mig_pod(selectors: str, memory: str, count: int = 2, node: str = "nodeSelector: {pool: a30}") -> str:
    """A MIG claim of ``count`` devices of class mig.nvidia.com with the request's own ``selectors``
    (CEL expressions, one a line); the pod's memory request at line 26."""
    sel = "[" + ", ".join(f'{{cel: {{expression: "{e}"}}}}' for e in selectors.splitlines() if e) + "]"
    return (
        _MIG_POD.replace("COUNT", str(count)).replace("SELECTORS", sel).replace("NODE", node).replace("MEMORY", memory)
    )


A30_POOL = {
    "nodePools": [
        {
            "name": "a30",
            "labels": {"pool": "a30", "nvidia.com/gpu.product": "NVIDIA-A30"},
            "gpus": 4,
            "memory": "256Gi",
            "cpu": 64,
        }
    ]
}
PLAIN_POOL = {"nodePools": [{"name": "a30", "labels": {"pool": "a30"}, "gpus": 4, "memory": "256Gi", "cpu": 64}]}
PROFILE = "device.attributes['gpu.nvidia.com'].profile == '{}'"
PRODUCT = "device.attributes['gpu.nvidia.com'].productName == '{}'"


def test_the_slices_of_each_gpu_model_and_profile():
    # 4 compute slices on A30 and RTX PRO 6000, 7 on the rest (NVIDIA MIG user guide)
    assert model_mig_slices("NVIDIA A30") == 4
    assert model_mig_slices("NVIDIA-A30") == 4
    assert model_mig_slices("NVIDIA RTX PRO 6000 Blackwell Server Edition") == 4
    for name in ("NVIDIA-A100-SXM4-40GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200 141GB", "NVIDIA B200", "NVIDIA GB200"):
        assert model_mig_slices(name) == 7, name
    assert model_mig_slices("NVIDIA GH200 480GB") == 7
    assert model_mig_slices("NVIDIA L4") is None
    assert model_mig_slices("NVIDIA A300X") is None  # not a30
    # the profile alone: 1g.6gb, 2g.12gb and 4g.24gb exist on A30 only
    assert mig_slices("1g.6gb", None)[0] == 4
    assert mig_slices("2g.12gb+me", None)[0] == 4
    assert mig_slices("4g.96gb", None)[0] == 4  # RTX PRO 6000
    assert mig_slices("3g.40gb", None)[0] == 7
    assert mig_slices("1g.23gb", None)[0] == 7  # B200, GB200
    assert mig_slices("7g.288gb", None)[0] == 7  # unknown, but a 7g profile needs 7 slices
    # 1g.24gb: H100 NVL / H100 96GB / GH200 (1 of 7) and RTX PRO 6000 (1 of 4)
    slices, how = mig_slices("1g.24gb", None)
    assert slices is None and "RTX PRO 6000" in how
    assert mig_slices("1g.24gb", "NVIDIA RTX PRO 6000 Blackwell")[0] == 4
    assert mig_slices("1g.24gb", "NVIDIA H100 NVL")[0] == 7
    assert mig_slices("2g.99gb", None)[0] is None
    assert mig_slices("3g.99gb", None)[0] == 7  # 3g profiles exist on 7-slice GPUs only
    # 2 compute slices on RTX PRO 5000 and 4500 ("Supported GPUs": at most 2 instances)
    assert model_mig_slices("NVIDIA RTX PRO 5000 Blackwell") == 2
    assert model_mig_slices("NVIDIA-RTX-PRO-4500-Blackwell") == 2
    assert model_mig_slices("NVIDIA RTX PRO 4000 Blackwell") is None
    # the largest share a g-slice partition of an unknown GPU can be
    assert [fewest_slices(g) for g in (1, 2, 3, 4, 7)] == [2, 2, 7, 4, 7]


def test_an_a30_profile_counts_a_quarter_of_a_gpu_per_slice():
    # 2 x 1g.6gb = 2 of the A30's 4 slices: half a GPU, so half of a quarter of 256Gi (32Gi) is its share
    pod = mig_pod(PROFILE.format("1g.6gb"), memory="30Gi")
    assert share_findings(pod, A30_POOL) == []
    found = share_findings(mig_pod(PROFILE.format("1g.6gb"), memory="100Gi"), A30_POOL)
    assert [(f.line, str(f.path), f.message) for f in found] == [
        (26, "spec.containers[0].resources.requests.memory", "1/2 of 4 GPUs but 39.1% of node pool a30 memory (100Gi)")
    ]
    # the same memory with 2 x 2g.20gb (a 7-slice profile: 4/7 of a GPU) is within its share
    assert share_findings(mig_pod(PROFILE.format("2g.20gb"), memory="30Gi"), A30_POOL) == []
    # and 2 x 1g.10gb (2/7 of a GPU: 18.3Gi) is not
    found = share_findings(mig_pod(PROFILE.format("1g.10gb"), memory="30Gi"), A30_POOL)
    assert [f.message for f in found] == ["2/7 of 4 GPUs but 11.7% of node pool a30 memory (30Gi)"]


def test_an_ambiguous_profile_follows_the_product_name_then_the_node_type():
    # 1g.24gb: 1/7 (H100 NVL) or 1/4 (RTX PRO 6000). 2 of them on a 4-GPU 256Gi pool:
    # 2/4 -> share 32Gi, 2/7 -> share 18.3Gi; 25Gi is within the first only (10% tolerance).
    ambiguous = PROFILE.format("1g.24gb")
    # the claim names the product
    pod = mig_pod(ambiguous + "\n" + PRODUCT.format("NVIDIA RTX PRO 6000 Blackwell Server Edition"), memory="25Gi")
    assert share_findings(pod, PLAIN_POOL) == []
    pod = mig_pod(ambiguous + "\n" + PRODUCT.format("NVIDIA H100 NVL"), memory="25Gi")
    assert [f.message for f in share_findings(pod, PLAIN_POOL)] == [
        "2/7 of 4 GPUs but 9.8% of node pool a30 memory (25Gi)"
    ]
    # the node type's GPU names it
    rtx = {
        "nodePools": [
            {
                **PLAIN_POOL["nodePools"][0],
                "labels": {"pool": "a30", "nvidia.com/gpu.product": "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"},
            }
        ]
    }
    assert share_findings(mig_pod(ambiguous, memory="25Gi"), rtx) == []
    # a catalog type: g4-standard-384 (8 RTX PRO 6000), 1g.24gb x 2 = 1/2 GPU of 8
    catalog = mig_pod(
        ambiguous, memory="1000Gi", node="nodeSelector: {node.kubernetes.io/instance-type: g4-standard-384}"
    )
    assert [f.message.split(" but ")[0] for f in share_findings(catalog)] == ["1/2 of 8 GPUs"]
    # the node type's GPU is an H100 NVL: 1 of 7
    nvl = {
        "nodePools": [
            {**PLAIN_POOL["nodePools"][0], "labels": {"pool": "a30", "nvidia.com/gpu.product": "NVIDIA-H100-NVL"}}
        ]
    }
    assert [f.message for f in share_findings(mig_pod(ambiguous, memory="25Gi"), nvl)] == [
        "2/7 of 4 GPUs but 9.8% of node pool a30 memory (25Gi)"
    ]
    # neither: the largest share a 1g partition can be (1 of the 2 slices of an RTX PRO 5000) is
    # assumed, so a finding holds on any GPU, and -v says so: 2 x 1/2 = 1 GPU, 64Gi
    assert share_findings(mig_pod(ambiguous, memory="60Gi"), PLAIN_POOL) == []
    assert [f.message for f in share_findings(mig_pod(ambiguous, memory="100Gi"), PLAIN_POOL)] == [
        "1 of 4 GPUs but 39.1% of node pool a30 memory (100Gi)"
    ]
    notes = notes_of(mig_pod(ambiguous, memory="25Gi"), PLAIN_POOL)
    assert any(
        "ResourceClaimTemplate 'slices' asks for 2 MIG devices of profile 1g.24gb: 1g.24gb exists on H100 NVL, "
        "H100 96GB and GH200 (7 slices) and RTX PRO 6000 (4 slices), so 1/2 of a GPU each is assumed, the most a "
        "1g partition can be (of a 2-slice GPU; the node type's GPU decides where it is known)" in n
        for n in notes
    ), notes
    # a profile kubelint-ml does not know, on a GPU it knows: the GPU's slices
    unknown = PROFILE.format("2g.30gb")
    assert share_findings(mig_pod(unknown, memory="40Gi"), nvl) == []  # 4/7: 36.6Gi, +10%
    assert [f.message for f in share_findings(mig_pod(unknown, memory="60Gi"), nvl)] == [
        "4/7 of 4 GPUs but 23.4% of node pool a30 memory (60Gi)"
    ]
    # without the GPU: 2/2 each (an RTX PRO 5000's whole GPU), 2 GPUs for the two (128Gi)
    assert share_findings(mig_pod(unknown, memory="60Gi"), PLAIN_POOL) == []


def test_the_device_class_names_the_profile_and_the_product():
    pod = mig_pod("", memory="25Gi").replace("mig.nvidia.com", "mig-a30-small")
    classes = textwrap.dedent(
        """\
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: mig-a30-small}
        spec:
          selectors:
          - cel:
              expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
          - cel:
              expression: "device.attributes['gpu.nvidia.com']['profile'] == '1g.24gb' && device.attributes['gpu.nvidia.com'].productName == 'NVIDIA RTX PRO 6000'"
        ---
        """
    )
    assert share_findings(classes + pod, PLAIN_POOL) == []
    assert len(share_findings(classes.replace("RTX PRO 6000", "H100 NVL") + pod, PLAIN_POOL)) == 1
    # a class named for its profile (mig-1g-6gb...): the A30's 4 slices
    named = mig_pod("", memory="100Gi").replace(
        "deviceClassName: mig.nvidia.com", "deviceClassName: mig-1g-6gb.gpu.nvidia.com"
    )
    assert [f.message for f in share_findings(named, A30_POOL)] == [
        "1/2 of 4 GPUs but 39.1% of node pool a30 memory (100Gi)"
    ]


def test_a_bare_mig_claim_counts_each_device_as_the_whole_gpu_it_may_be():
    # 2 MIG devices of any profile: at most 2 whole GPUs, so a share finding holds whatever is allocated
    pod = mig_pod("", memory="200Gi")
    found = share_findings(pod, A30_POOL)
    assert [(f.line, f.message) for f in found] == [(26, "2 of 4 GPUs but 78.1% of node pool a30 memory (200Gi)")]
    assert "its MIG devices name no profile, so each is counted as the whole GPU it may be" in found[0].detail
    # within 2 GPUs' share (128Gi): nothing, though two 1g.6gb slices would have only 32Gi
    assert share_findings(mig_pod("", memory="120Gi"), A30_POOL) == []
    # more MIG devices than the node has GPUs: they may be small slices, so not "never fits"
    assert share_findings(mig_pod("", memory="100Gi", count=6), A30_POOL) == []
    notes = notes_of(pod, A30_POOL)
    assert any(
        "asks for 2 MIG devices of no named profile, which may be anything from one compute slice to a whole GPU: "
        "counted as 2 whole GPUs, the most they can be" in n
        for n in notes
    ), notes


def test_alternatives_of_different_profiles_are_judged_by_the_largest():
    pod = mig_pod("", memory="100Gi").replace(
        """        exactly:
          deviceClassName: mig.nvidia.com
          count: 2
          selectors: []""",
        """        firstAvailable:
        - {name: a, deviceClassName: mig.nvidia.com, selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '1g.6gb'"}}]}
        - {name: b, deviceClassName: mig.nvidia.com, selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '2g.12gb'"}}]}""",
    )
    assert "firstAvailable" in pod
    # 1g.6gb (1/4 of an A30) or 2g.12gb (2/4): 100Gi is more than half a GPU's share of the node
    found = share_findings(pod, A30_POOL)
    assert [(f.line, f.message) for f in found] == [(25, "1/2 of 4 GPUs but 39.1% of node pool a30 memory (100Gi)")]
    assert "so this holds for every alternative" in found[0].detail
    # within half a GPU's share (32Gi, +10%): nothing, though 1g.6gb alone would have only 16Gi
    assert share_findings(pod.replace("100Gi", "34Gi"), A30_POOL) == []
    notes = notes_of(pod, A30_POOL)
    assert any("its GPUs are counted as the largest the node type can hold (of 0.25, 0.5)" in n for n in notes), notes


def test_the_memory_fix_sizes_from_a_named_profile_only(tmp_path):
    from click.testing import CliRunner

    from kubelint_ml.cli import main

    base = (ROOT / "tests" / "data" / "dra-fix.yaml").read_text()
    path = tmp_path / "pod.yaml"
    # 2 x 3g.40gb on p4de.24xlarge (A100 80GB, 8 GPUs): 6/7 of 1/8 of its allocatable, less 10% headroom
    path.write_text(
        base.replace("deviceClassName: gpu.nvidia.com", "deviceClassName: mig-3g-40gb.gpu.nvidia.com").replace(
            "p5.48xlarge", "p4de.24xlarge"
        )
    )
    r = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", str(path)])
    assert "+      limits:\n+        memory: 101Gi\n" in r.output, r.output
    # MIG devices of no named profile: no share to size from (it depends on which are allocated)
    path.write_text(
        base.replace("deviceClassName: gpu.nvidia.com", "deviceClassName: mig.nvidia.com").replace(
            "p5.48xlarge", "p4de.24xlarge"
        )
    )
    r = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", str(path)])
    assert "+        memory:" not in r.output, r.output


def test_the_memory_fix_does_not_size_from_an_assumed_share():
    from kubelint_ml.run.facts import add_facts

    # 1g.24gb x 2 on a pool whose GPU is not named: the share is assumed, so no memory is proposed
    pod = "\n".join(line for line in mig_pod(PROFILE.format("1g.24gb"), memory="1Gi").splitlines() if "1Gi" not in line)
    pod = pod.replace("resources:\n", "resources: {}\n")
    assert "memory: 1Gi" not in pod
    for profile, proposed in ((PLAIN_POOL, False), (A30_POOL, True)):
        cfg = _config(profile)
        facts = Facts()
        add_facts(facts, pod.encode(), "m.yaml", cfg.limits)
        result = Runner(Engine(RULES), cfg, facts, verbose=True).lint_bytes(pod.encode(), "m.yaml")
        fixes = [f for f in result.findings if f.rule == "missing-memory-limit" and f.fix is not None]
        assert bool(fixes) == proposed, (profile, result.notes)
        if not proposed:
            assert any("the GPU its MIG partitions are cut from is not known" in n for n in result.notes), result.notes
