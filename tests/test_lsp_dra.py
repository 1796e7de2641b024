"""``kubelint-ml lsp`` on pods whose GPUs come through DRA: the ResourceClaimTemplates and DeviceClasses
in another file of the workspace, or in the pod's own file, give the diagnostics `check <folder>` gives
(severity, unknown-resource-claim), change with the template's file, and fix all writes what `check
--fix` writes."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="pygls is not installed (the language server's dependency)")

from lsprotocol import types  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_lsp import Editor, apply, as_check, run  # noqa: E402
from test_lsp import check_folder as check_dir  # noqa: E402

CLAIMS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
spec:
  selectors:
  - cel:
      expression: device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: dranet
spec:
  selectors:
  - cel:
      expression: device.driver == 'dra.net'
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: single-gpu
  namespace: ml
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 1
"""
# A GPU Deployment with no memory limit and an unbounded /dev/shm, on a p5.48xlarge.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
  namespace: ml
spec:
  selector:
    matchLabels: {app: llm}
  template:
    metadata:
      labels: {app: llm}
    spec:
      priorityClassName: high
      nodeSelector:
        node.kubernetes.io/instance-type: p5.48xlarge
      containers:
      - name: server
        image: vllm/vllm-openai:v0.11.0
        resources:
          requests:
            cpu: "8"
          claims:
          - name: gpu
        volumeMounts:
        - name: shm
          mountPath: /dev/shm
      volumes:
      - name: shm
        emptyDir:
          medium: Memory
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: single-gpu
"""


async def fixed_all(ed: Editor, uri: str, text: str) -> str:
    """The buffer ``text`` after the fix all the server offers for it (resolved when it is lazy)."""
    (action,) = [a for a in await fix_all(ed, uri) if a.kind == "source.fixAll.kubelint-ml"]
    if action.edit is None:
        action = await ed.client.code_action_resolve_async(action)
    return apply(text, action.edit.changes[uri])


def typed(root: Path, path: Path, versions: list[tuple[str, list]]) -> None:
    """The editor opens ``path`` with the first text, then is given each next one: after each, the
    buffer's diagnostics are the findings given with it."""

    async def session() -> None:
        ed = Editor(root)
        await ed.start()
        await asyncio.sleep(0.5)  # the background index
        uri = ed.open(path, versions[0][0])
        for n, (text, want) in enumerate(versions):
            if n:
                ed.change(uri, n + 1, text)
            await ed.diagnostics_until(uri, lambda d, text=text, want=want: as_check(d, text) == want)
        await ed.stop()

    run(session())


def fix_all(ed: Editor, uri: str):  # noqa: ANN201
    return ed.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.kubelint-ml"]),
        )
    )


def test_claims_in_another_file_of_the_workspace(tmp_path: Path) -> None:
    """The claimed GPU makes a GPU pod (missing-memory-limit is an error) as in `check .`; the template's
    buffer changed to a NIC class brings it down to a warning, as `check .` of the changed file; fix all on the pod
    file writes what `check --fix --unsafe-fixes` writes."""
    claims = tmp_path / "claims.yaml"
    claims.write_text(CLAIMS)
    pod = tmp_path / "llm.yaml"
    pod.write_text(DEPLOYMENT)
    gpu = check_dir(tmp_path, "llm.yaml")
    assert ("missing-memory-limit", 19, 9, "error") in gpu
    fixed = tmp_path.parent / (tmp_path.name + "-fixed")
    shutil.copytree(tmp_path, fixed)
    subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", ".", "--fix", "--unsafe-fixes"], capture_output=True, cwd=fixed
    )
    want_fixed = (fixed / "llm.yaml").read_text()
    assert want_fixed != DEPLOYMENT
    nic = CLAIMS.replace("deviceClassName: gpu.nvidia.com", "deviceClassName: dranet")
    claims.write_text(nic)
    as_nic = check_dir(tmp_path, "llm.yaml")
    assert ("missing-memory-limit", 19, 9, "warning") in as_nic
    claims.write_text(CLAIMS)

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start(unsafe=True)
        await asyncio.sleep(0.5)  # the background index
        uri = ed.open(pod, DEPLOYMENT)
        await ed.diagnostics_until(uri, lambda d: as_check(d, DEPLOYMENT) == gpu)
        assert await fixed_all(ed, uri, DEPLOYMENT) == want_fixed
        curi = ed.open(claims, CLAIMS)
        ed.change(curi, 2, nic)  # unsaved: the buffer is the context
        await ed.diagnostics_until(uri, lambda d: as_check(d, DEPLOYMENT) == as_nic)
        ed.change(curi, 3, CLAIMS)
        await ed.diagnostics_until(uri, lambda d: as_check(d, DEPLOYMENT) == gpu)
        await ed.stop()

    run(session())


def test_a_missing_template_in_a_file_that_defines_claims_is_an_error_as_in_check(tmp_path: Path) -> None:
    """The template renamed in the pod's own file: `check .` is sure it is missing (the file defines
    claims) and says so at error severity at the pod's resourceClaimTemplateName; so does the editor."""
    both = tmp_path / "all.yaml"
    text = CLAIMS + "---\n" + DEPLOYMENT
    renamed = text.replace("name: single-gpu\n", "name: one-gpu\n", 1)
    both.write_text(renamed)
    want = check_dir(tmp_path, "all.yaml")
    line = renamed.split("\n").index("        resourceClaimTemplateName: single-gpu") + 1
    assert [w for w in want if w[0] == "unknown-resource-claim"] == [("unknown-resource-claim", line, 36, "error")]
    both.write_text(text)
    clean = check_dir(tmp_path, "all.yaml")
    assert not [w for w in clean if w[0] == "unknown-resource-claim"]

    typed(tmp_path, both, [(text, clean), (renamed, want)])


def test_a_context_file_of_the_config_inside_the_workspace_is_an_input_as_in_check(tmp_path: Path) -> None:
    """The config names the workspace's claims file as context: `check .` lints it as an input (and does
    not read it again as context), so a template it lacks may still be in the cluster, a warning; the
    editor gives the same severity, and follows the file as `check .` does."""
    claims = tmp_path / "claims.yaml"
    claims.write_text(CLAIMS)
    (tmp_path / ".kubelint-ml.yaml").write_text("context: [claims.yaml]\n")
    pod = tmp_path / "llm.yaml"
    missing = DEPLOYMENT.replace("resourceClaimTemplateName: single-gpu", "resourceClaimTemplateName: two-gpus")
    pod.write_text(missing)
    want = check_dir(tmp_path, "llm.yaml")
    line = missing.split("\n").index("        resourceClaimTemplateName: two-gpus") + 1
    assert ("unknown-resource-claim", line, 36, "warning") in want
    pod.write_text(DEPLOYMENT)
    found = check_dir(tmp_path, "llm.yaml")
    assert ("missing-memory-limit", 19, 9, "error") in found  # the claimed GPU, from the context file

    typed(tmp_path, pod, [(missing, want), (DEPLOYMENT, found)])


CLUSTER_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: h100.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == 'gpu.nvidia.com'
  extendedResourceName: example.com/h100
"""
H100_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: a
spec:
  containers:
  - name: c
    image: x:1
    resources:
      limits:
        example.com/h100: 1
"""


def test_a_context_file_outside_the_workspace_is_followed_on_disk(tmp_path: Path) -> None:
    """The config's context names the cluster's DeviceClasses in a file outside the workspace folder,
    which no editor reports changes of: its class's driver changed on disk (a GPU class becomes a NIC
    class) changes the open pod's findings to what `check .` then gives, without a keystroke."""
    ws, cluster = tmp_path / "ws", tmp_path / "cluster"
    ws.mkdir()
    cluster.mkdir()
    classes = cluster / "classes.yaml"
    classes.write_text(CLUSTER_CLASS)
    (ws / ".kubelint-ml.yaml").write_text("context: [../cluster/classes.yaml]\n")
    pod = ws / "pod.yaml"
    pod.write_text(H100_POD)
    gpu = check_dir(ws, "pod.yaml")
    assert ("missing-memory-limit", 10, 7, "error") in gpu
    nic = CLUSTER_CLASS.replace("'gpu.nvidia.com'", "'dra.net'")
    classes.write_text(nic)
    not_gpu = check_dir(ws, "pod.yaml")
    assert ("missing-memory-limit", 10, 7, "warning") in not_gpu
    classes.write_text(CLUSTER_CLASS)

    async def session() -> None:
        ed = Editor(ws)
        await ed.start()
        uri = ed.open(pod, H100_POD)
        await ed.diagnostics_until(uri, lambda d: as_check(d, H100_POD) == gpu)
        classes.write_text(nic)
        await ed.diagnostics_until(uri, lambda d: as_check(d, H100_POD) == not_gpu)
        classes.write_text(CLUSTER_CLASS)  # and when the editor does tell, at once
        ed.changed_on_disk(classes)
        await ed.diagnostics_until(uri, lambda d: as_check(d, H100_POD) == gpu, timeout=1.5)
        await ed.stop()

    run(session())


def test_each_workspace_folder_is_its_own_check(tmp_path: Path) -> None:
    """Two workspace folders: the GPU template of one is no context for the other's pod, as `check
    <folder>` of the pod's folder does not read the other folder (the claim is unknown there); a
    template in the pod's own folder is."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (b / "claims.yaml").write_text(CLAIMS)
    pod = a / "llm.yaml"
    pod.write_text(DEPLOYMENT)
    alone = check_dir(a, "llm.yaml")
    line = DEPLOYMENT.split("\n").index("        resourceClaimTemplateName: single-gpu") + 1
    assert ("unknown-resource-claim", line, 36, "warning") in alone
    (a / "claims.yaml").write_text(CLAIMS)
    with_claims = check_dir(a, "llm.yaml")
    assert ("missing-memory-limit", 19, 9, "error") in with_claims
    (a / "claims.yaml").unlink()

    async def session() -> None:
        ed = Editor(a)
        await ed.start(folders=(a, b))
        await asyncio.sleep(0.5)  # the background index
        uri = ed.open(pod, DEPLOYMENT)
        await ed.diagnostics_until(uri, lambda d: as_check(d, DEPLOYMENT) == alone)
        (a / "claims.yaml").write_text(CLAIMS)
        ed.changed_on_disk(a / "claims.yaml")
        await ed.diagnostics_until(uri, lambda d: as_check(d, DEPLOYMENT) == with_claims)
        await ed.stop()

    run(session())


SIZED_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      priorityClassName: high
      nodeSelector:
        node.kubernetes.io/instance-type: p5.48xlarge
      containers:
      - name: main
        image: pytorch/pytorch:2.4.0
        resources:
          requests:
            cpu: "8"
          claims:
          - name: gpu
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: single-gpu
"""


def test_fix_all_right_after_a_template_edit_sizes_from_the_new_count(tmp_path: Path) -> None:
    """The memory limit fix all writes is the claimed GPUs' share of the node: asked for right after the
    template's count is changed in its buffer (not saved), it is sized from the new count, as `check
    --fix` sizes it with the template so changed, not from the lint made before the change."""
    claims = tmp_path / "claims.yaml"
    claims.write_text(CLAIMS)
    job = tmp_path / "job.yaml"
    job.write_text(SIZED_JOB)
    four = CLAIMS.replace("count: 1", "count: 4")

    def check_fix() -> str:
        fixed = tmp_path.parent / f"{tmp_path.name}-fixed"
        shutil.rmtree(fixed, ignore_errors=True)
        shutil.copytree(tmp_path, fixed)
        subprocess.run(
            [sys.executable, "-m", "kubelint_ml", "check", ".", "--fix", "--unsafe-fixes"],
            capture_output=True,
            cwd=fixed,
        )
        return (fixed / "job.yaml").read_text()

    one_fixed = check_fix()
    claims.write_text(four)
    four_fixed = check_fix()
    claims.write_text(CLAIMS)
    assert "memory: 212Gi" in one_fixed and "memory: 851Gi" in four_fixed
    want = check_dir(tmp_path, "job.yaml")

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start(unsafe=True)
        await asyncio.sleep(0.5)  # the background index
        uri = ed.open(job, SIZED_JOB)
        await ed.diagnostics_until(uri, lambda d: as_check(d, SIZED_JOB) == want)
        assert await fixed_all(ed, uri, SIZED_JOB) == one_fixed
        curi = ed.open(claims, CLAIMS)
        ed.change(curi, 2, four)
        assert await fixed_all(ed, uri, SIZED_JOB) == four_fixed  # at once: no wait for the diagnostics
        await ed.stop()

    run(session())


def test_a_first_available_alternative_named_by_a_container_as_in_check(tmp_path: Path) -> None:
    """A container naming a firstAvailable alternative (``gpu/one``) of the template in its own file: the
    editor gives check's error at the container's ``request``, and clears it when the request is named."""
    alternatives = CLAIMS.replace(
        "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: 1\n",
        "      - name: gpu\n        firstAvailable:\n        - {name: two, deviceClassName: gpu.nvidia.com, count: 2}\n"
        "        - {name: one, deviceClassName: gpu.nvidia.com}\n",
    )
    assert alternatives != CLAIMS
    both = tmp_path / "all.yaml"
    named = (
        alternatives
        + "---\n"
        + DEPLOYMENT.replace("          - name: gpu\n", "          - name: gpu\n            request: gpu\n")
    )
    wrong = named.replace("request: gpu\n", "request: gpu/one\n")
    both.write_text(wrong)
    want = check_dir(tmp_path, "all.yaml")
    line = wrong.split("\n").index("            request: gpu/one") + 1
    assert [w for w in want if w[0] == "unknown-resource-claim"] == [("unknown-resource-claim", line, 22, "error")]
    both.write_text(named)
    clean = check_dir(tmp_path, "all.yaml")
    assert not [w for w in clean if w[0] == "unknown-resource-claim"]

    typed(tmp_path, both, [(named, clean), (wrong, want)])


def test_a_claims_edit_relints_the_buffers_of_its_folder_only(tmp_path: Path) -> None:
    """Typing in a file of claims re-lints the open buffers whose check reads it (its workspace folder's),
    not every open buffer of every folder: the pod beside it gets its new diagnostics, the same pod in
    another folder is not linted again."""
    from lsp_raw import RawClient
    from test_dra_claim_use import CLAIMS as TWO_CLAIMS
    from test_dra_claim_use import POD as CLAIM_POD

    pod = CLAIM_POD.replace("CLAIMS_OF_MAIN\n", "")
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
        (folder / "pod.yaml").write_text(pod)
    claims = tmp_path / "a" / "claims.yaml"
    claims.write_text(TWO_CLAIMS)
    client = RawClient(cwd=tmp_path)
    try:
        client.initialize_folders(tmp_path, folders)
        a_pod, b_pod = (f / "pod.yaml" for f in folders)
        for path in (a_pod, b_pod):
            client.open(path.as_uri(), pod)
        codes = {p: sorted(d["code"] for d in client.diagnostics(p.as_uri(), 1, timeout=60)) for p in (a_pod, b_pod)}
        assert "accelerator-claim-unused" in codes[a_pod]
        assert "accelerator-claim-unused" not in codes[b_pod]  # its folder defines no claims
        client.open(claims.as_uri(), TWO_CLAIMS)
        client.diagnostics(claims.as_uri(), 1, timeout=60)
        time.sleep(1)  # the lints the open started have published
        client.pending = [m for m in client.pending if m.get("method") != "textDocument/publishDiagnostics"]
        renamed = TWO_CLAIMS.replace("{name: two-gpus}", "{name: other-gpus}")
        client.change(claims.as_uri(), 2, [{"text": renamed}])
        after = sorted(d["code"] for d in client.diagnostics(a_pod.as_uri(), 1, timeout=60))
        assert "unknown-resource-claim" in after and "accelerator-claim-unused" not in after
        time.sleep(1)
        assert not [
            m
            for m in client.pending
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == b_pod.as_uri()
        ]
        with pytest.raises(TimeoutError):
            client.diagnostics(b_pod.as_uri(), timeout=1)
    finally:
        assert client.stop() == 0
        client.kill()
