"""MIG partitions asked for as DRA-backed extended resources (NVIDIA's DRA driver demo: a DeviceClass of
profile 1g.12gb with ``extendedResourceName: nvidia.com/mig-1g.12gb``, or the class's implicit
``deviceclass.resource.kubernetes.io/<class>`` name): the scheduler makes a claim of the class for them,
so ``gpu-memory-share-mismatch`` and the memory fix count them as that claim (1/7 of an H100 NVL), in
``check``, ``serve`` and the editor. A device plugin's MIG name no DeviceClass serves is not counted."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
DEMO = (ROOT / "tests" / "data" / "dra-mig-extended.yaml").read_text()
SHARE = "gpu-memory-share-mismatch"
MESSAGE = "1/7 of 2 GPUs but 31.4% of Standard_NC80adis_H100_v5 memory (200Gi)"
CORPUS_DEMO = (
    ROOT.parent
    / "shared"
    / "corpus"
    / "NVIDIA__k8s-dra-driver-gpu"
    / "demo__specs__extended-resources__mig-1g-12gb.yaml"
)
# The same partition claimed through a ResourceClaimTemplate of the class.
CLAIMED = DEMO.replace("  extendedResourceName: nvidia.com/mig-1g.12gb\n", "").replace(
    "        nvidia.com/mig-1g.12gb: 1\n", ""
).replace(
    "  restartPolicy: Never\n",
    "  restartPolicy: Never\n  resourceClaims:\n  - name: mig\n    resourceClaimTemplateName: mig\n",
).replace("    resources:\n      limits:\n", "    resources:\n      claims:\n      - name: mig\n      limits:\n") + (
    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n"
    "  namespace: extended-resource-mig-1g12gb\n  name: mig\nspec:\n  spec:\n    devices:\n      requests:\n"
    "      - name: mig\n        exactly:\n          deviceClassName: mig-1g-12gb.gpu.nvidia.com\n"
)


def check(tmp_path: Path, text: str, *args: str) -> list[dict]:
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    r = CliRunner().invoke(main, ["check", "-f", "json", *args, str(path)])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)["findings"]


def shares(findings: list[dict]) -> list[tuple]:
    return [(f["rule"], f["line"], f["column"], f["severity"], f["message"]) for f in findings if f["rule"] == SHARE]


def test_the_demos_extended_resource_counts_as_its_classs_claim(tmp_path: Path) -> None:
    """nvidia.com/mig-1g.12gb served by the 1g.12gb class: 1/7 of one of the node's two H100 NVL, so 200Gi
    of its 637.7Gi is three times its share; the same as the claim of that class."""
    assert shares(check(tmp_path, DEMO)) == [(SHARE, 30, 17, "warning", MESSAGE)]
    claimed = shares(check(tmp_path, CLAIMED))
    assert [(rule, sev, msg) for rule, _, _, sev, msg in claimed] == [(SHARE, "warning", MESSAGE)]


def test_the_classs_implicit_name_counts_the_same(tmp_path: Path) -> None:
    implicit = DEMO.replace(
        "nvidia.com/mig-1g.12gb: 1", "deviceclass.resource.kubernetes.io/mig-1g-12gb.gpu.nvidia.com: 1"
    )
    assert shares(check(tmp_path, implicit)) == [(SHARE, 30, 17, "warning", MESSAGE)]
    # Without the DeviceClass among the inputs, its name (a class of NVIDIA's driver naming 1g.12gb) tells.
    alone = implicit.split("---\n", 1)[1]
    assert shares(check(tmp_path, alone)) == [(SHARE, 18, 17, "warning", MESSAGE)]


def test_the_memory_fix_sizes_from_the_partitions_share(tmp_path: Path) -> None:
    """No memory: the fix writes 1/14 of the node's allocatable (less headroom), as for the claim."""
    text = DEMO.replace("        memory: 200Gi\n", "")
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    r = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "-q", str(path)])
    assert r.exit_code in (0, 1), r.output
    assert path.read_text() == text.replace(
        "        nvidia.com/mig-1g.12gb: 1\n", "        nvidia.com/mig-1g.12gb: 1\n        memory: 40Gi\n"
    )
    claimed = tmp_path / "claimed.yaml"
    claimed.write_text(CLAIMED.replace("        memory: 200Gi\n", ""))
    CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "-q", str(claimed)])
    assert '        cpu: "4"\n        memory: 40Gi\n' in claimed.read_text()


def test_a_device_plugin_mig_name_no_class_serves_is_not_counted(tmp_path: Path) -> None:
    """Without the DeviceClass (the device plugin's mixed strategy), or before 1.36 (DRAExtendedResource
    off by default: the device plugin serves the name), the partition is the plugin's: no share judged."""
    plugin = DEMO.split("---\n", 1)[1]
    assert shares(check(tmp_path, plugin)) == []
    assert shares(check(tmp_path, DEMO, "--kubernetes-version", "1.35")) == []
    assert shares(check(tmp_path, DEMO, "--kubernetes-version", "1.36")) == [(SHARE, 30, 17, "warning", MESSAGE)]


@pytest.mark.skipif(not CORPUS_DEMO.exists(), reason="the shared corpus is not at ../shared/corpus")
def test_the_corpus_demo_keeps_its_findings(tmp_path: Path) -> None:
    """As published (no node type, no memory): the same four findings; the share and fix wait for a node type."""
    r = CliRunner().invoke(main, ["check", "-f", "json", str(CORPUS_DEMO)])
    seen = sorted((f["rule"], f["line"], f["severity"]) for f in json.loads(r.stdout)["findings"])
    assert seen == [
        ("besteffort-qos", 76, "error"),
        ("missing-memory-limit", 83, "error"),
        ("missing-memory-request", 82, "warning"),
        ("missing-priority-class", 76, "warning"),
    ]


def test_serve_judges_the_pod_as_check_does(tmp_path: Path) -> None:
    """At admission the DeviceClass comes from the context files: the same finding as `check`."""
    from kubelint_ml.admission.review import load_policy, review

    klass, pod = DEMO.split("---\n", 1)
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "classes.yaml").write_text(klass)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("context: [cluster/]\n")
    policy = load_policy(str(cfg))
    found = review(policy, {"uid": "1", "operation": "CREATE", "object": yaml.safe_load(pod)}).findings
    assert [(f.rule, str(f.severity), f.message) for f in found if f.rule == SHARE] == [(SHARE, "warning", MESSAGE)]


def test_the_editor_gives_what_check_gives(tmp_path: Path) -> None:
    """The diagnostics are `check .`'s; on the pod with no memory, fix all writes what `check --fix` writes."""
    pytest.importorskip("pygls", reason="pygls is not installed (the language server's dependency)")
    sys.path.insert(0, str(Path(__file__).parent))
    from test_lsp import Editor, as_check, run
    from test_lsp import check_folder as check_dir
    from test_lsp_dra import fixed_all

    pod = tmp_path / "pod.yaml"
    pod.write_text(DEMO)
    want = check_dir(tmp_path, "pod.yaml")
    assert (SHARE, 30, 17, "warning") in want
    bare = tmp_path / "bare.yaml"
    no_memory = DEMO.replace("        memory: 200Gi\n", "")
    bare.write_text(no_memory)
    want_fixed = no_memory.replace(
        "        nvidia.com/mig-1g.12gb: 1\n", "        nvidia.com/mig-1g.12gb: 1\n        memory: 40Gi\n"
    )

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start(unsafe=True)
        await asyncio.sleep(0.5)  # the background index
        uri = ed.open(pod, DEMO)
        await ed.diagnostics_until(uri, lambda d: as_check(d, DEMO) == want)
        buri = ed.open(bare, no_memory)
        await ed.diagnostics_until(buri, lambda d: bool(d))
        assert await fixed_all(ed, buri, no_memory) == want_fixed
        await ed.stop()

    run(session())


def test_audit_judges_the_running_pod_as_check_does(tmp_path: Path) -> None:
    """A `kubectl get -o json` dump of the class and the pod: the same finding, at the pod's memory limit."""
    klass, pod = (yaml.safe_load(d) for d in DEMO.split("---\n", 1))
    pod["metadata"]["uid"] = "6c01cc40-3527-43a9-a241-89c9e7d18921"
    pod["status"] = {"phase": "Pending"}
    dump = tmp_path / "dump.json"
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [klass, pod]}, indent=1)
    dump.write_text(text)
    r = CliRunner().invoke(main, ["audit", "-f", "json", str(dump)])
    found = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == SHARE]
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.strip() == '"memory": "200Gi",')
    assert [(f["line"], f["severity"], f["message"]) for f in found] == [(line, "warning", MESSAGE + " [1 pod]")]
