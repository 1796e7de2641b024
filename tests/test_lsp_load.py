"""``kubelint-ml lsp`` under load, over raw JSON-RPC: code actions on a large buffer answered from
the version's lint (never a lint per request), nothing blocked behind a long lint, requests
cancellable, a burst of edits linted once, a bad character one diagnostic. Bounds here are loose
(a shared CI machine); bench/lsp.py measures the numbers."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="pygls is not installed (the language server's dependency)")

from lsp_raw import children, served  # noqa: E402

POD = """apiVersion: v1
kind: Pod
metadata:
  name: train-{i}
spec:
  containers:
    - name: main
      image: pytorch/pytorch
      command: ["torchrun", "--nproc_per_node=4", "train.py"]
      resources:
        limits:
          memory: 64GB
          nvidia.com/gpu: 4
"""


def pods(n: int) -> str:
    return "---\n".join(POD.format(i=i) for i in range(n))


def action_params(uri: str, line: int) -> dict:
    return {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
        "context": {"diagnostics": []},
    }


@pytest.mark.slow  # a load test: seconds of CPU
def test_code_actions_on_a_400_pod_buffer_answer_from_its_lint(tmp_path: Path) -> None:
    text = pods(400)
    path = tmp_path / "pods.yaml"
    path.write_text(text)
    uri = path.as_uri()
    with served(tmp_path, ["utf-16"]) as client:
        client.open(uri, text)
        diags = client.diagnostics(uri, 1, timeout=60)
        bad = [d for d in diags if d["code"] == "invalid-quantity"]
        assert len(bad) == 400
        # a lightbulb on every cursor move: each answered from the version's fixes
        took = []
        for d in bad[::20]:
            t0 = time.monotonic()
            found = client.call("textDocument/codeAction", action_params(uri, d["range"]["start"]["line"]), timeout=10)
            took.append(time.monotonic() - t0)
            titles = [a["title"] for a in found["result"]]
            assert any(t.endswith("[invalid-quantity]") for t in titles), titles
        assert max(took) < 2, took
        assert client.stop() == 0


@pytest.mark.slow  # a load test: seconds of CPU
def test_nothing_waits_behind_a_long_lint_and_requests_can_be_cancelled(tmp_path: Path) -> None:
    small, big = tmp_path / "small.yaml", tmp_path / "big.yaml"
    small.write_text(pods(1))
    big.write_text(pods(2000))  # its lint takes long enough to be under way when the cancel comes
    with served(tmp_path) as client:
        client.open(small.as_uri(), small.read_text())
        (bad,) = [d for d in client.diagnostics(small.as_uri(), 1) if d["code"] == "invalid-quantity"]
        client.open(big.as_uri(), big.read_text())
        time.sleep(0.1)  # the big buffer's lint is under way
        # a code action on the big buffer waits for its lint; cancelled, it is answered at once
        pending = client.request("textDocument/codeAction", action_params(big.as_uri(), 11))
        t0 = time.monotonic()
        found = client.call(
            "textDocument/hover",
            {"textDocument": {"uri": small.as_uri()}, "position": bad["range"]["start"]},
            timeout=10,
        )
        assert "invalid-quantity" in found["result"]["contents"]["value"]
        assert time.monotonic() - t0 < 0.5
        client.notify("$/cancelRequest", {"id": pending})
        assert client.answer(pending, timeout=5)["error"]["code"] == -32800
        assert client.diagnostics(big.as_uri(), 1, timeout=60)
        assert client.stop() == 0


def test_a_burst_of_edits_is_linted_once_and_the_newest_version_published(tmp_path: Path) -> None:
    text = pods(50)
    path = tmp_path / "pods.yaml"
    path.write_text(text)
    uri = path.as_uri()
    with served(tmp_path) as client:
        client.open(uri, text)
        client.diagnostics(uri, 1, timeout=30)
        for v in range(2, 202):
            client.change(uri, v, [{"text": text.replace("train-0\n", f"train-0{v}\n", 1)}])
        client.diagnostics(uri, 201, timeout=30)
        earlier = [
            m["params"]["version"] for m in client.pending if m.get("method") == "textDocument/publishDiagnostics"
        ]
        assert len(earlier) < 20, earlier  # a burst is linted once, not once an edit
        client.pending.clear()
        time.sleep(0.3)
        published = []
        while True:
            try:
                published.append(client.diagnostics(uri, None, timeout=0.2))
            except TimeoutError:
                break
        assert published == []  # no stale version published after the newest
        assert client.stop() == 0


def test_a_lone_surrogate_is_one_diagnostic_not_an_error_per_keystroke(tmp_path: Path) -> None:
    text = pods(1)
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    uri = path.as_uri()
    with served(tmp_path) as client:
        client.open(uri, text)
        client.diagnostics(uri, 1)
        for v in range(2, 12):  # a lone surrogate typed in, as JSON allows it to be sent
            client.send(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uri, "version": v},
                        "contentChanges": [{"text": text.replace("train-0", "train-\ud800" + "x" * v, 1)}],
                    },
                }
            )
            found = client.diagnostics(uri, v, timeout=10)
            assert [d["code"] for d in found] == ["parse-error"], found
        time.sleep(0.2)
        shown = [m for m in client.pending if m.get("method") == "window/showMessage"]
        errors = [m for m in client.pending if m.get("method") == "window/logMessage" and m["params"]["type"] == 1]
        assert not shown and not errors, shown + errors
        assert client.stop() == 0


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@pytest.mark.slow  # a load test: seconds of CPU
def test_policies_while_typing_one_helper_and_the_engine_on_one_thread(tmp_path: Path) -> None:
    """Rego and Gatekeeper policies configured, 120 keystrokes (each linted), a config edit: the
    policy helper processes do not pile up, nothing is logged about an engine used across threads,
    and the server's memory is flat."""
    pol = Path(__file__).resolve().parent.parent / "fixtures" / "policies"
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text(f"rules: [{pol / 'conftest'}, {pol / 'gatekeeper'}]\n")
    job = tmp_path / "job.yaml"
    text = (pol / "manifests" / "train.yaml").read_text()
    job.write_text(text)
    uri = job.as_uri()
    with served(tmp_path) as client:
        client.open(uri, text)
        first = client.diagnostics(uri, 1, timeout=60)
        rules = {d["code"] for d in first}
        assert {"main.deny", "K8sGpuJobDeadline/gpu-jobs-end"} <= rules, rules  # Rego and Gatekeeper
        sizes = []
        for v in range(2, 122):
            client.change(uri, v, [{"text": text.replace("name: train-llm", f"name: train-llm-{v}", 1)}])
            client.diagnostics(uri, v, timeout=30)
            if v in (20, 121):
                sizes.append(rss_kib(client.proc.pid))
        client.open(config.as_uri(), config.read_text())
        client.change(config.as_uri(), 2, [{"text": config.read_text() + "disable: [missing-priority-class]\n"}])
        client.diagnostics(uri, None, timeout=30)
        time.sleep(0.5)
        helpers = children(client.proc.pid)
        assert len(helpers) <= 2, helpers
        assert sizes[1] - sizes[0] < 20 * 1024, sizes  # flat: under 20 MiB over 100 keystrokes
        assert client.stop() == 0
        assert b"unsendable" not in client.stderr, client.stderr[-2000:]


def test_a_burst_in_a_context_file_relints_its_dependents_once(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    text = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n"
        "      priorityClassName: training-high\n      restartPolicy: Never\n      containers:\n"
        "        - name: main\n          image: pytorch/pytorch\n"
    )
    job.write_text(text)
    classes = tmp_path / "classes.yaml"
    pclass = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: {}\nvalue: 1000\n"
    classes.write_text(pclass.format("batch-low"))
    with served(tmp_path) as client:
        client.open(job.as_uri(), text)
        time.sleep(1)  # the index, and the lint after it
        before = client.diagnostics(job.as_uri(), None, timeout=10)
        client.pending.clear()
        client.open(classes.as_uri(), pclass.format("batch-low"))
        names = ["t", "tr", "tra", "trai", "training-high"]
        for v, name in enumerate(names, start=2):
            client.change(classes.as_uri(), v, [{"text": pclass.format(name)}])
        after = client.diagnostics(job.as_uri(), None, timeout=10)
        assert {d["code"] for d in after} != {d["code"] for d in before}  # the class is known now
        time.sleep(0.5)
        again = [
            m
            for m in client.pending
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == job.as_uri()
        ]
        assert len(again) <= 1, again  # once per burst, not once per keystroke
        assert client.stop() == 0


def test_hover_while_typing_elsewhere_answers_from_the_last_lint(tmp_path: Path) -> None:
    """A keystroke on another line of a large buffer: hover on a finding is answered from the last
    lint at once, not after the newest version's lint."""
    text = pods(600)
    path = tmp_path / "pods.yaml"
    path.write_text(text)
    uri = path.as_uri()
    with served(tmp_path) as client:
        client.open(uri, text)
        bad = [d for d in client.diagnostics(uri, 1, timeout=60) if d["code"] == "invalid-quantity"]
        client.change(uri, 2, [{"text": text.replace("name: train-0\n", "name: train-00\n", 1)}])
        t0 = time.monotonic()
        found = client.call(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": bad[-1]["range"]["start"]},
            timeout=30,
        )
        assert "invalid-quantity" in found["result"]["contents"]["value"]
        assert time.monotonic() - t0 < 0.5
        client.diagnostics(uri, 2, timeout=60)
        assert client.stop() == 0


CLAIMS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {name}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
"""
CLAIMING_JOB = """\
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
        resourceClaimTemplateName: single-gpu
"""


@pytest.mark.parametrize("name", ["single-gpu", "other-gpu"])
def test_resource_claims_elsewhere_in_the_workspace_are_context(tmp_path: Path, name: str) -> None:
    """A ResourceClaimTemplate in another file of the workspace: the Job's findings are those of
    `check <folder>` for it, whether the template it names is there or not."""
    import json
    import subprocess
    import sys

    (tmp_path / "claims.yaml").write_text(CLAIMS.format(name=name))
    job = tmp_path / "job.yaml"
    job.write_text(CLAIMING_JOB)
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", ".", "-f", "json"], capture_output=True, text=True, cwd=tmp_path
    )
    want = sorted((f["rule"], f["line"]) for f in json.loads(r.stdout)["findings"] if f["file"] == "job.yaml")
    with served(tmp_path) as client:
        client.wait(lambda m: "context indexed" in str(m.get("params", {}).get("message")), timeout=30)
        client.open(job.as_uri(), CLAIMING_JOB)
        got = sorted((d["code"], d["range"]["start"]["line"] + 1) for d in client.diagnostics(job.as_uri(), 1))
        assert got == want
        assert client.stop() == 0


GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
spec:
  template:
    spec:
      restartPolicy: Never
      priorityClassName: high
      nodeSelector:
        node.kubernetes.io/instance-type: dgx-h100
      tolerations:
        - {key: dedicated, operator: Equal, value: training, effect: NoSchedule}
      containers:
        - name: train
          image: python:3.12
          resources:
            limits:
              nvidia.com/gpu: 1
              memory: 1000Gi
"""


def test_cluster_nodes_in_the_workspace_are_node_pools_and_follow_their_edits(tmp_path: Path) -> None:
    """The workspace's Nodes are node pools, as `check <folder>` takes them; emptied in the editor,
    the Job is linted again with the new context (the same session, new facts and pools)."""
    import json
    import shutil
    import subprocess
    import sys

    nodes = tmp_path / "nodes.yaml"
    shutil.copy(Path(__file__).resolve().parent.parent / "fixtures" / "cluster" / "nodes-limitrange.yaml", nodes)
    job = tmp_path / "job.yaml"
    job.write_text(GPU_JOB)
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", ".", "-f", "json"], capture_output=True, text=True, cwd=tmp_path
    )
    want = sorted((f["rule"], f["line"]) for f in json.loads(r.stdout)["findings"] if f["file"] == "job.yaml")
    assert ("gpu-memory-share-mismatch", 21) in want
    with served(tmp_path) as client:
        client.wait(lambda m: "context indexed" in str(m.get("params", {}).get("message")), timeout=30)
        client.open(job.as_uri(), GPU_JOB)
        got = sorted((d["code"], d["range"]["start"]["line"] + 1) for d in client.diagnostics(job.as_uri(), 1))
        assert got == want
        client.open(nodes.as_uri(), nodes.read_text())
        client.change(nodes.as_uri(), 2, [{"text": "apiVersion: v1\nkind: List\nitems: []\n"}])
        deadline = time.monotonic() + 20
        while True:
            codes = {d["code"] for d in client.diagnostics(job.as_uri(), 1, timeout=20)}
            if "gpu-memory-share-mismatch" not in codes or time.monotonic() > deadline:
                break
        assert "gpu-memory-share-mismatch" not in codes
        assert client.stop() == 0
