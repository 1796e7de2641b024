"""The language server as an editor sees it: diagnostics after each edit of a 300-line manifest.

Starts ``kubelint-ml lsp`` (this checkout's Python), opens a manifest of about 300 lines (the
bundled PyTorchJob, its documents repeated), then makes ``--edits`` edits one after another, each
changing one value, and times from the change notification to the diagnostics for that version:
median and p95. Memory: the server's resident set after the first and after the last quarter of
the edits (``--edits 20000`` is about as many as an hour of typing), and its peak.

    python bench/lsp.py                 # 200 edits
    python bench/lsp.py --edits 20000   # memory over a long session

The last line is JSON: {"edits", "median_ms", "p95_ms", "start_ms", "rss_mib_first", "rss_mib_last",
"peak_mib"}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=200)
    args = parser.parse_args()
    result = asyncio.run(main(args.edits))
    print(
        f"{result['edits']} edits of a {manifest().count(chr(10))}-line manifest: diagnostics {result['median_ms']} ms median, "
        f"{result['p95_ms']} ms p95; first diagnostics {result['start_ms']} ms after start; RSS "
        f"{result['rss_mib_first']} MiB after a quarter, {result['rss_mib_last']} MiB at the end (peak {result['peak_mib']})"
    )
    print(json.dumps(result))
