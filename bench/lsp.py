"""The language server as an editor sees it.

``edits`` (the default case): starts ``kubelint-ml lsp`` (this checkout's Python), opens a manifest
of about 300 lines (the bundled PyTorchJob, its documents repeated), then makes ``--edits`` edits
one after another, each changing one value, and times from the change notification to the
diagnostics for that version: median and p95. Memory: the server's resident set after the first and
after the last quarter of the edits (``--edits 20000`` is about as many as an hour of typing), and
its peak.

``pods``: a buffer of ``--pods`` Pods (1,000) each with an invalid quantity. After its diagnostics,
``--moves`` cursor moves, each a code action request for the cursor's line (what an editor's
lightbulb asks): p50/p95 of their answers. Then 20 keystrokes at 10 a second, each followed by a
lightbulb, and the time from the last keystroke to its diagnostics; and a hover asked in the middle
of the keystrokes. Peak memory.

``crds``: a workspace of ``--crds`` CustomResourceDefinitions of ``--crd-mb`` MB each and a Job.
The time from ``initialize`` until the workspace's context is indexed (the server logs it); then one
CRD opened and 5 keystrokes made in it, a hover on the Job after each: p50/p95 of the hovers, how
many times the Job was linted again after the burst, peak memory.

    python bench/lsp.py                 # 200 edits
    python bench/lsp.py --edits 20000   # memory over a long session
    python bench/lsp.py --case pods     # the 1,000-Pod buffer
    python bench/lsp.py --case crds     # 100 CRDs of 1 MB (about 100 MB written under a temporary folder)
    python bench/lsp.py --case policies # 1,000 keystrokes with Rego, Gatekeeper and CEL policies
    python bench/lsp.py --case all

``policies``: the conftest and Gatekeeper fixtures (Rego, Gatekeeper Rego and CEL templates)
configured, ``--keystrokes`` edits of a Job, each linted: p50/p95, memory after 100 and at the end,
the policy helper processes left, errors about an engine used across threads.

The last line is JSON: the results of each case run, by name.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent


def manifest(lines: int = 300) -> str:
    one = (ROOT / "fixtures" / "lsp" / "job.yaml").read_text()
    docs = []
    n = 0
    while sum(d.count("\n") for d in docs) < lines:
        docs.append(one.replace("name: llama-finetune", f"name: llama-finetune-{n}"))
        n += 1
    return "---\n".join(docs)


def rss_mib(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    found = {
        k: float(v.split()[0]) / 1024
        for k, v in (line.split(":", 1) for line in status.splitlines())
        if k in ("VmRSS", "VmHWM")
    }
    return found.get("VmRSS", 0.0), found.get("VmHWM", 0.0)


async def main(edits: int) -> dict:
    work = Path(tempfile.mkdtemp())
    path = work / "job.yaml"
    text = manifest()
    path.write_text(text)
    uri = path.as_uri()
    client = LanguageClient("bench", "1")
    got: dict[int, float] = {}
    waiting: dict[int, asyncio.Event] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(_: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            got[params.version] = time.perf_counter()
            waiting.setdefault(params.version, asyncio.Event()).set()

    t0 = time.perf_counter()
    await client.start_io(sys.executable, "-m", "kubelint_ml", "lsp")
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=work.as_uri(), workspace_folders=[])
    )
    client.initialized(types.InitializedParams())
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        )
    )
    await asyncio.wait_for(waiting.setdefault(1, asyncio.Event()).wait(), 30)
    start_ms = (got[1] - t0) * 1000
    pid = client._server.pid  # noqa: SLF001 - the server process, for its memory
    times: list[float] = []
    rss_first = 0.0
    for i in range(edits):
        version = i + 2
        edited = text.replace("memory: 64GB", f"memory: {64 + i % 7}GB", 1)
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
        await asyncio.wait_for(waiting.setdefault(version, asyncio.Event()).wait(), 30)
        times.append((got[version] - sent) * 1000)
        waiting.pop(version, None)
        got.pop(version, None)
        if i == edits // 4:
            rss_first = rss_mib(pid)[0]
    rss_last, peak = rss_mib(pid)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    times.sort()
    return {
        "edits": edits,
        "median_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[int(len(times) * 0.95) - 1], 1),
        "start_ms": round(start_ms, 1),
        "rss_mib_first": round(rss_first, 1),
        "rss_mib_last": round(rss_last, 1),
        "peak_mib": round(peak, 1),
    }


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, max(0, int(round(p * len(values))) - 1))], 1)


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


def raw_client(work: Path):  # noqa: ANN201
    sys.path.insert(0, str(ROOT / "tests"))
    from lsp_raw import RawClient

    return RawClient(cwd=work)


def action(uri: str, line: int) -> dict:
    return {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
        "context": {"diagnostics": []},
    }


def pods_case(n: int, moves: int) -> dict:
    work = Path(tempfile.mkdtemp())
    text = "---\n".join(POD.format(i=i) for i in range(n))
    path = work / "pods.yaml"
    path.write_text(text)
    uri = path.as_uri()
    lines = text.count("\n")
    client = raw_client(work)
    try:
        client.initialize(work)
        t0 = time.perf_counter()
        client.open(uri, text)
        client.diagnostics(uri, 1, timeout=300)
        first_ms = (time.perf_counter() - t0) * 1000
        took = []
        for k in range(moves):
            line = (k * 7919) % lines
            t = time.perf_counter()
            client.call("textDocument/codeAction", action(uri, line), timeout=300)
            took.append((time.perf_counter() - t) * 1000)
        # typing: 20 keystrokes at 10 a second, a lightbulb after each, a hover in the middle
        hover_ms = 0.0
        for v in range(2, 22):
            edited = text.replace("name: train-0\n", f"name: train-0{v}\n", 1)
            client.change(uri, v, [{"text": edited}])
            client.request("textDocument/codeAction", action(uri, (v * 13) % lines))
            if v == 11:
                t = time.perf_counter()
                client.call(
                    "textDocument/hover",
                    {"textDocument": {"uri": uri}, "position": {"line": 11, "character": 18}},
                    timeout=300,
                )
                hover_ms = (time.perf_counter() - t) * 1000
            time.sleep(0.1)
        sent = time.perf_counter()
        client.diagnostics(uri, 21, timeout=300)
        last_ms = (time.perf_counter() - sent) * 1000
        peak = rss_mib(client.proc.pid)[1]
        client.stop(60)
    finally:
        client.kill()
    return {
        "pods": n,
        "lines": lines,
        "first_diagnostics_ms": round(first_ms, 1),
        "moves": moves,
        "lightbulb_p50_ms": pct(took, 0.5),
        "lightbulb_p95_ms": pct(took, 0.95),
        "hover_while_typing_ms": round(hover_ms, 1),
        "last_diagnostics_after_typing_ms": round(last_ms, 1),
        "peak_mib": round(peak, 1),
    }


def policies_case(keystrokes: int) -> dict:
    """Rego, Gatekeeper and CEL policies configured: ``keystrokes`` edits of a Job, each linted."""
    work = Path(tempfile.mkdtemp())
    pol = ROOT / "fixtures" / "policies"
    (work / ".kubelint-ml.yaml").write_text(f"rules: [{pol / 'conftest'}, {pol / 'gatekeeper'}]\n")
    text = (pol / "manifests" / "train.yaml").read_text()
    path = work / "train.yaml"
    path.write_text(text)
    uri = path.as_uri()
    client = raw_client(work)
    took, rss = [], {}
    try:
        client.initialize(work)
        client.open(uri, text)
        client.diagnostics(uri, 1, timeout=120)
        for v in range(2, keystrokes + 2):
            t = time.perf_counter()
            client.change(uri, v, [{"text": text.replace("name: train-llm", f"name: train-llm-{v}", 1)}])
            client.diagnostics(uri, v, timeout=120)
            took.append((time.perf_counter() - t) * 1000)
            if v - 1 in (100, keystrokes):
                rss[v - 1] = rss_mib(client.proc.pid)[0]
        sys.path.insert(0, str(ROOT / "tests"))
        from lsp_raw import children

        helpers = len(children(client.proc.pid))
        peak = rss_mib(client.proc.pid)[1]
        client.stop(60)
        unsendable = client.stderr.count(b"unsendable")
    finally:
        client.kill()
    return {
        "keystrokes": keystrokes,
        "diagnostics_p50_ms": pct(took, 0.5),
        "diagnostics_p95_ms": pct(took, 0.95),
        "rss_mib_at_100": round(rss.get(100, 0.0), 1),
        "rss_mib_at_end": round(rss.get(keystrokes, 0.0), 1),
        "peak_mib": round(peak, 1),
        "helper_processes": helpers,
        "unsendable_errors": unsendable,
    }


def crd(i: int, mb: float) -> str:
    """A CustomResourceDefinition of about ``mb`` MB: a schema with many properties."""
    head = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
        f"  name: trainings{i}.example.com\nspec:\n  group: example.com\n  names:\n"
        f"    kind: Training{i}\n    plural: trainings{i}\n  scope: Namespaced\n  versions:\n"
        "    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n"
        "          type: object\n          properties:\n"
    )
    prop = "            field{j}:\n              type: string\n              description: a field of the training resource, number {j}\n"
    out = [head]
    size, j = len(head), 0
    while size < mb * 1_000_000:
        p = prop.format(j=j)
        out.append(p)
        size += len(p)
        j += 1
    return "".join(out)


def crds_case(n: int, mb: float) -> dict:
    work = Path(tempfile.mkdtemp())
    for i in range(n):
        (work / f"crd-{i:03}.yaml").write_text(crd(i, mb))
    job = work / "job.yaml"
    job_text = (ROOT / "fixtures" / "lsp" / "job.yaml").read_text()
    job.write_text(job_text)
    juri = job.as_uri()
    client = raw_client(work)
    try:
        t0 = time.perf_counter()
        client.initialize(work)
        client.open(juri, job_text)
        client.wait(lambda m: "context indexed" in str(m.get("params", {}).get("message")), timeout=900)
        index_ms = (time.perf_counter() - t0) * 1000
        client.diagnostics(juri, 1, timeout=600)
        index_peak = rss_mib(client.proc.pid)[1]
        target = work / "crd-000.yaml"
        text = target.read_text()
        client.open(target.as_uri(), text)
        client.wait(lambda m: m.get("params", {}).get("uri") == target.as_uri(), timeout=600)
        time.sleep(0.5)
        client.pending.clear()
        hovers = []
        for v in range(2, 7):
            text = text.replace("description: a field", "description: a  field", 1)
            client.change(target.as_uri(), v, [{"text": text}])
            t = time.perf_counter()
            client.call(
                "textDocument/hover",
                {"textDocument": {"uri": juri}, "position": {"line": 25, "character": 28}},
                timeout=600,
            )
            hovers.append((time.perf_counter() - t) * 1000)
            time.sleep(0.05)
        # the Job again: only when the context it reads changed (a CRD is not context in the editor)
        time.sleep(2)
        relints = sum(1 for m in client.pending if m.get("params", {}).get("uri") == juri)
        client.pending.clear()
        peak = rss_mib(client.proc.pid)[1]
        client.stop(60)
    finally:
        client.kill()
        shutil.rmtree(work, ignore_errors=True)
    return {
        "crds": n,
        "crd_mb": mb,
        "index_ms": round(index_ms, 1),
        "index_peak_mib": round(index_peak, 1),
        "hover_p50_ms": pct(hovers, 0.5),
        "hover_p95_ms": pct(hovers, 0.95),
        "dependent_relints": relints,
        "peak_mib": round(peak, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=["edits", "pods", "crds", "policies", "all"], default="edits")
    parser.add_argument("--keystrokes", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--crds", type=int, default=100)
    parser.add_argument("--crd-mb", type=float, default=1.0)
    args = parser.parse_args()
    results: dict = {}
    if args.case in ("edits", "all"):
        result = results["edits"] = asyncio.run(main(args.edits))
        print(
            f"{result['edits']} edits of a {manifest().count(chr(10))}-line manifest: diagnostics {result['median_ms']} ms median, "
            f"{result['p95_ms']} ms p95; first diagnostics {result['start_ms']} ms after start; RSS "
            f"{result['rss_mib_first']} MiB after a quarter, {result['rss_mib_last']} MiB at the end (peak {result['peak_mib']})"
        )
    if args.case in ("pods", "all"):
        r = results["pods"] = pods_case(args.pods, args.moves)
        print(
            f"{r['pods']} Pods ({r['lines']} lines): first diagnostics {r['first_diagnostics_ms']} ms; lightbulb "
            f"{r['lightbulb_p50_ms']} ms p50, {r['lightbulb_p95_ms']} ms p95 over {r['moves']} cursor moves; hover while "
            f"typing {r['hover_while_typing_ms']} ms; last diagnostics {r['last_diagnostics_after_typing_ms']} ms after "
            f"20 keystrokes at 10/s; peak {r['peak_mib']} MiB"
        )
    if args.case in ("crds", "all"):
        r = results["crds"] = crds_case(args.crds, args.crd_mb)
        print(
            f"{r['crds']} CRDs of {r['crd_mb']} MB: indexed {r['index_ms']} ms (peak {r['index_peak_mib']} MiB); hover "
            f"during 5 keystrokes in one CRD {r['hover_p50_ms']} ms p50, {r['hover_p95_ms']} ms p95; the dependent Job "
            f"linted again {r['dependent_relints']} time(s); peak {r['peak_mib']} MiB"
        )
    if args.case in ("policies", "all"):
        r = results["policies"] = policies_case(args.keystrokes)
        print(
            f"{r['keystrokes']} keystrokes with Rego, Gatekeeper and CEL policies: diagnostics {r['diagnostics_p50_ms']} ms "
            f"p50, {r['diagnostics_p95_ms']} ms p95; RSS {r['rss_mib_at_100']} MiB after 100, {r['rss_mib_at_end']} MiB "
            f"at the end (peak {r['peak_mib']}); {r['helper_processes']} helper process(es); "
            f"{r['unsendable_errors']} engine-thread errors"
        )
    print(json.dumps(results))
