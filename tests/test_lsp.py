"""``kubelint-ml lsp`` driven by pygls's own client over stdio: the diagnostics equal `check`'s,
fix all equals `check --fix`, quick fixes, hover, a YAML error while typing, a bad config."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="pygls is not installed (the language server's dependency)")

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
JOB = ROOT / "fixtures" / "lsp" / "job.yaml"
SEVERITY = {1: "error", 2: "warning", 3: "info"}


def check_json(path: Path, cwd: Path) -> list[tuple[str, int, int, str]]:
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(path), "-f", "json"], capture_output=True, text=True, cwd=cwd
    )
    return sorted((f["rule"], f["line"], f["column"], f["severity"]) for f in json.loads(r.stdout)["findings"])


def check_folder(root: Path, name: str) -> list[tuple[str, int, int, str]]:
    """`kubelint-ml check .` run in ``root``: the findings of the file ``name``."""
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", ".", "-f", "json"], capture_output=True, text=True, cwd=root
    )
    findings = json.loads(r.stdout)["findings"]
    return sorted((f["rule"], f["line"], f["column"], f["severity"]) for f in findings if f["file"] == name)


def need_kustomize() -> None:
    from kubelint_ml.input import render

    version = render.kustomize_version()
    if version is None or version < (4, 5):
        pytest.skip("needs kustomize v4.5 or later (kustomize, or kubectl 1.24+ which embeds it) on PATH")


class Editor:
    """A client session: what the server published, by uri."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = LanguageClient("test-editor", "1")
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.events: dict[str, asyncio.Event] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def got(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
            self.published[params.uri] = params.diagnostics
            self.events.setdefault(params.uri, asyncio.Event()).set()

    async def start(self, unsafe: bool = False, folders: tuple[Path, ...] = ()) -> None:
        """``folders``: the workspace folders (default: the root alone)."""
        await self.client.start_io(sys.executable, "-m", "kubelint_ml", "lsp")
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=self.root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders or (self.root,)],
                initialization_options={"unsafeFixes": unsafe},
            )
        )
        self.client.initialized(types.InitializedParams())

    async def diagnostics(self, uri: str, timeout: float = 10) -> list[types.Diagnostic]:
        event = self.events.setdefault(uri, asyncio.Event())
        await asyncio.wait_for(event.wait(), timeout)
        event.clear()
        return self.published[uri]

    async def diagnostics_until(self, uri: str, ok, timeout: float = 10) -> list[types.Diagnostic]:
        """The uri's diagnostics once they satisfy ``ok``: a change elsewhere (a config) re-lints it, and an
        earlier publish may still be unread when the test asks."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.published.get(uri)
            if found is not None and ok(found):
                return found
            left = deadline - time.monotonic()
            assert left > 0, f"diagnostics of {uri} not as expected within {timeout} s: {found}"
            event = self.events.setdefault(uri, asyncio.Event())
            event.clear()
            try:
                await asyncio.wait_for(event.wait(), left)
            except asyncio.TimeoutError:
                pass

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
            )
        )
        return uri

    def change(self, uri: str, version: int, text: str) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def changed_on_disk(self, path: Path) -> None:
        """The editor tells the server that ``path`` changed on disk."""
        self.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]
            )
        )

    def save(self, uri: str, path: Path, version: int, text: str) -> None:
        """A buffer edited to ``text`` and saved: the change, the file written, the save announced."""
        self.change(uri, version, text)
        path.write_text(text)
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def close_then_write(self, uri: str, path: Path, text: str) -> None:
        """The buffer closed, then the file changed on disk (a checkout, another tool) and announced."""
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        path.write_text(text)
        self.changed_on_disk(path)

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), 10)


def as_check(diags: list[types.Diagnostic], text: str) -> list[tuple[str, int, int, str]]:
    lines = text.split("\n")
    out = []
    for d in diags:
        line = lines[d.range.start.line]
        col = len(line.encode("utf-16-le")[: d.range.start.character * 2].decode("utf-16-le")) + 1
        out.append((str(d.code), d.range.start.line + 1, col, SEVERITY[d.severity]))
    return sorted(out)


def apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    out = text
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = offsets[e.range.start.line] + e.range.start.character
        end = offsets[e.range.end.line] + e.range.end.character if e.range.end.line < len(lines) else len(text)
        out = out[:start] + e.new_text + out[end:]
    return out


def run(coro):  # noqa: ANN001, ANN201
    return asyncio.run(asyncio.wait_for(coro, 90))


def test_diagnostics_fix_all_quick_fix_and_hover(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    shutil.copy(JOB, job)
    text = job.read_text()
    expected = check_json(job, tmp_path)
    fixed = tmp_path / "fixed.yaml"
    shutil.copy(JOB, fixed)
    subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(fixed), "--fix", "--unsafe-fixes"],
        capture_output=True,
        cwd=tmp_path,
    )
    assert fixed.read_text() != text  # (every fix of this file is unsafe: --fix alone changes nothing)

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start(unsafe=True)
        uri = ed.open(job, text)
        diags = await ed.diagnostics(uri)
        assert as_check(diags, text) == expected
        assert all(
            d.source == "kubelint-ml" and d.code_description and "rules" in d.code_description.href for d in diags
        )
        # fix all: the buffer check --fix writes
        actions = await ed.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.kubelint-ml"]),
            )
        )
        (fix_all,) = [a for a in actions if a.kind == "source.fixAll.kubelint-ml"]
        assert apply(text, fix_all.edit.changes[uri]) == fixed.read_text()
        # a quick fix at a fixable finding, and a suppression
        fixable = next(d for d in diags if d.code == "invalid-quantity")
        line = fixable.range.start.line
        actions = await ed.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=fixable.range,
                context=types.CodeActionContext(diagnostics=[fixable], only=[types.CodeActionKind.QuickFix]),
            )
        )
        titles = [a.title for a in actions]
        assert any("[invalid-quantity]" in t for t in titles), titles
        quick = next(a for a in actions if "[invalid-quantity]" in a.title)
        assert "64G" in apply(text, quick.edit.changes[uri]).split("\n")[line]
        suppress = next(a for a in actions if a.title.startswith("Suppress invalid-quantity"))
        suppressed = apply(text, suppress.edit.changes[uri])
        assert 'kubelint-ml.io/ignore: "invalid-quantity=reason"' in suppressed
        # hover names the rule
        found = await ed.client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=fixable.range.start)
        )
        assert (
            found is not None
            and "invalid-quantity" in found.contents.value
            and "Why it matters" in found.contents.value
        )
        # a YAML error while typing: a parse-error within half a second, gone when undone
        broken = text.replace("kind: PyTorchJob", "kind: [PyTorchJob", 1)
        t0 = time.monotonic()
        ed.change(uri, 2, broken)
        diags = await ed.diagnostics(uri)
        assert time.monotonic() - t0 < 0.5
        assert [d.code for d in diags] == ["parse-error"]
        ed.change(uri, 3, text)
        diags = await ed.diagnostics(uri)
        assert as_check(diags, text) == expected
        await ed.stop()

    run(session())


def test_a_bad_config_is_a_diagnostic_on_the_config_not_a_dead_server(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    shutil.copy(JOB, job)
    text = job.read_text()
    config = tmp_path / ".kubelint-ml.yaml"
    config.write_text("disable: [invalid-quantity]\n")

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start()
        uri = ed.open(job, text)
        diags = await ed.diagnostics(uri)
        assert "invalid-quantity" not in [d.code for d in diags]
        assert as_check(diags, text) == check_json(job, tmp_path)
        # the config edited in the editor (unsaved): taken at once
        cfg_uri = ed.open(config, "disable: [invalid-quantity]\n")
        await ed.diagnostics(cfg_uri)
        ed.change(cfg_uri, 2, "disable: []\n")
        assert list(await ed.diagnostics(cfg_uri)) == []  # a valid config: no diagnostic on it
        await ed.diagnostics_until(uri, lambda diags: "invalid-quantity" in [d.code for d in diags])
        ed.change(cfg_uri, 3, "disable: [no-such-rule]\nbogus: 1\n")
        cfg = await ed.diagnostics(cfg_uri)
        assert cfg and cfg[0].severity == 1 and "invalid kubelint-ml configuration" in cfg[0].message
        # the server is alive: a hover still answers
        await ed.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)
            )
        )
        await ed.stop()

    run(session())


def test_context_from_the_workspace(tmp_path: Path) -> None:
    """A PriorityClass elsewhere in the workspace: the job's class is known (as `check <folder>`)."""
    job = tmp_path / "job.yaml"
    text = JOB.read_text().replace("  runPolicy:", "  runPolicy:", 1)
    job.write_text(text)
    (tmp_path / "classes.yaml").write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: training-high\nvalue: 1000\n"
    )
    want = sorted(
        (f["rule"], f["line"], f["column"], f["severity"])
        for f in json.loads(
            subprocess.run(
                [sys.executable, "-m", "kubelint_ml", "check", ".", "-f", "json"],
                capture_output=True,
                text=True,
                cwd=tmp_path,
            ).stdout
        )["findings"]
        if f["file"] == "job.yaml"
    )

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start()
        await asyncio.sleep(0.5)  # the background index
        uri = ed.open(job, text)
        # the background index may finish after the first lint: a later publish has the class
        await ed.diagnostics_until(uri, lambda diags: as_check(diags, text) == want)
        await ed.stop()

    run(session())


def test_a_kustomization_file_gets_the_rendered_findings_on_open_and_save(tmp_path: Path) -> None:
    need_kustomize()
    shutil.copytree(ROOT / "fixtures" / "render" / "kustomize", tmp_path / "k")
    base = tmp_path / "k" / "base" / "job.yaml"
    text = base.read_text()
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", ".", "-f", "json"], capture_output=True, text=True, cwd=tmp_path
    )
    want = sorted(
        (f["rule"], f["line"], f["column"], f["severity"])
        for f in json.loads(r.stdout)["findings"]
        if f["file"] == "k/base/job.yaml"
    )
    assert want  # the overlay's findings that map to the base

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start()
        uri = ed.open(base, text)
        diags = await ed.diagnostics(uri, timeout=60)
        assert as_check(diags, text) == want
        await ed.stop()

    run(session())


KUSTOMIZED_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        node.kubernetes.io/instance-type: p5.48xlarge
      containers:
      - name: main
        image: pytorch/pytorch:2.4.0
        resources:
          requests: {cpu: "8", memory: 1800Gi}
          limits: {memory: 1800Gi}
          claims:
          - name: gpu
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: gpu-tmpl
"""
KUSTOMIZED_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu-tmpl
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 1}
"""


def test_a_kustomizations_file_follows_the_other_files_of_its_render(tmp_path: Path) -> None:
    """The Job of a kustomization claims a GPU whose template is another file of the same build: when
    the template is saved in the editor, or changed on disk, the open Job gets what `check .` now gives
    (its GPU share follows the template's count), not what the render at its own open gave."""
    need_kustomize()
    k = tmp_path / "k"
    k.mkdir()
    (k / "kustomization.yaml").write_text("resources: [job.yaml, claims.yaml]\nnamespace: ml\n")
    job, claims = k / "job.yaml", k / "claims.yaml"
    job.write_text(KUSTOMIZED_JOB)
    claims.write_text(KUSTOMIZED_CLAIM)

    def check_dir() -> list[tuple[str, int, int, str]]:
        return check_folder(tmp_path, "k/job.yaml")

    one = check_dir()
    assert "gpu-memory-share-mismatch" in [w[0] for w in one]  # 1 of 8 GPUs, 95% of the memory
    eight = KUSTOMIZED_CLAIM.replace("count: 1", "count: 8")
    claims.write_text(eight)
    all_eight = check_dir()
    assert "gpu-memory-share-mismatch" not in [w[0] for w in all_eight]
    claims.write_text(KUSTOMIZED_CLAIM)

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start()
        uri = ed.open(job, KUSTOMIZED_JOB)
        await ed.diagnostics_until(uri, lambda d: as_check(d, KUSTOMIZED_JOB) == one, timeout=60)
        # the template edited and saved in the editor
        curi = ed.open(claims, KUSTOMIZED_CLAIM)
        ed.save(curi, claims, 2, eight)
        await ed.diagnostics_until(uri, lambda d: as_check(d, KUSTOMIZED_JOB) == all_eight, timeout=60)
        ed.close_then_write(curi, claims, KUSTOMIZED_CLAIM)
        await ed.diagnostics_until(uri, lambda d: as_check(d, KUSTOMIZED_JOB) == one, timeout=60)
        await ed.stop()

    run(session())


def test_a_file_the_kustomization_comes_to_name_is_rendered_and_back(tmp_path: Path) -> None:
    """A Pod beside a kustomization that does not name it is linted as it is; once the kustomization
    is saved naming it (with a patch that gives it a memory limit), the open Pod gets what `check .`
    then gives, the rendered findings; named no more (on disk), it is linted as it is again."""
    need_kustomize()
    k = tmp_path / "k"
    k.mkdir()
    alone = "resources: [job.yaml]\n"
    naming = (
        "resources: [job.yaml, sample.yaml]\npatches:\n- target: {kind: Pod, name: s}\n  patch: |-\n"
        "    - {op: add, path: /spec/containers/0/resources, value: {limits: {memory: 1Gi}}}\n"
    )
    kustomization = k / "kustomization.yaml"
    kustomization.write_text(alone)
    (k / "job.yaml").write_text(KUSTOMIZED_JOB)
    sample = k / "sample.yaml"
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: s\nspec:\n  containers:\n  - name: c\n    image: x:1\n"
    sample.write_text(text)
    as_typed = check_folder(tmp_path, "k/sample.yaml")
    kustomization.write_text(naming)
    rendered = check_folder(tmp_path, "k/sample.yaml")
    assert "missing-memory-limit" in [w[0] for w in as_typed] and "missing-memory-limit" not in [w[0] for w in rendered]
    kustomization.write_text(alone)

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start()
        uri = ed.open(sample, text)
        await ed.diagnostics_until(uri, lambda d: as_check(d, text) == as_typed, timeout=30)
        kuri = ed.open(kustomization, alone)
        ed.save(kuri, kustomization, 2, naming)
        await ed.diagnostics_until(uri, lambda d: as_check(d, text) == rendered, timeout=60)
        ed.close_then_write(kuri, kustomization, alone)
        await ed.diagnostics_until(uri, lambda d: as_check(d, text) == as_typed, timeout=60)
        await ed.stop()

    run(session())


def test_a_file_its_kustomization_does_not_name_is_linted_as_typed(tmp_path: Path) -> None:
    """A sample beside a kustomization that does not list it is no part of its build: the editor
    lints the buffer as it is typed, as `check` lints the file."""
    shutil.copytree(ROOT / "fixtures" / "render" / "kustomize", tmp_path / "k")
    sample = tmp_path / "k" / "base" / "sample.yaml"
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: s\nspec:\n  containers:\n    - name: c\n      image: x\n"
    sample.write_text(text)
    want = check_folder(tmp_path, "k/base/sample.yaml")
    assert ("besteffort-qos", 5, 1, "warning") in want

    async def session() -> None:
        ed = Editor(tmp_path)
        await ed.start()
        uri = ed.open(sample, text)
        assert as_check(await ed.diagnostics(uri, timeout=60), text) == want
        await ed.stop()

    run(session())


def test_a_context_file_changed_on_disk_is_taken_in(tmp_path: Path) -> None:
    """The server asks to watch the workspace's manifests; a PriorityClass written to disk and
    announced changes the open job's findings to what `check .` then gives."""
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

    def check_dir() -> list[tuple[str, int, int, str]]:
        return check_folder(tmp_path, "job.yaml")

    before = check_dir()

    async def session() -> None:
        ed = Editor(tmp_path)
        registered: list[str] = []

        @ed.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(client: LanguageClient, params: types.RegistrationParams) -> None:
            registered.extend(r.method for r in params.registrations)

        await ed.client.start_io(sys.executable, "-m", "kubelint_ml", "lsp")
        await ed.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(
                    workspace=types.WorkspaceClientCapabilities(
                        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                            dynamic_registration=True
                        )
                    )
                ),
                root_uri=tmp_path.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="w")],
            )
        )
        ed.client.initialized(types.InitializedParams())
        uri = ed.open(job, text)
        assert as_check(await ed.diagnostics(uri), text) == before
        assert registered == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
        classes.write_text(pclass.format("training-high"))
        after = check_dir()
        assert after != before
        ed.changed_on_disk(classes)
        assert as_check(await ed.diagnostics(uri), text) == after
        await ed.stop()

    run(session())


LEAK_PROBE = r"""
import asyncio, json, sys
from kubelint_ml.lsp import server as srv

class Writer:
    def __init__(self):
        self.out = []
    def write(self, data):
        self.out.append(data)
    def close(self):
        pass

async def run(n, job):
    ls = srv.server
    w = Writer()
    ls.protocol.set_writer(w)
    def send(msg):
        ls.protocol.handle_message(ls.protocol.structure_message(msg))
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "rootUri": None}})
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    uri = "file:///nowhere/job.yaml"
    text = open(job).read()
    doc = {"uri": uri, "languageId": "yaml", "version": 1, "text": text}
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}})
    for i in range(n):
        change = [{"text": text.replace("64GB", f"{64 + i % 7}GB")}]
        params = {"textDocument": {"uri": uri, "version": i + 2}, "contentChanges": change}
        send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params})
        await asyncio.sleep(0)
    await asyncio.sleep(1.0)
    versions = []
    for data in w.out:
        text = data.decode() if isinstance(data, bytes) else data
        body = json.loads(text[text.index("{"):])
        if body.get("method") == "textDocument/publishDiagnostics":
            versions.append(body["params"].get("version"))
    print(json.dumps({"futures": len(ls.protocol._request_futures), "last": versions[-1] if versions else None}))

asyncio.run(run(int(sys.argv[1]), sys.argv[2]))
"""


def test_the_server_keeps_nothing_per_edit():
    """pygls keeps a future for each notification its built-in handlers see first and never drops it
    (about 1 KB an edit); the server drops the finished ones. Real JSON-RPC messages through pygls's
    own protocol: after 300 edits, a handful of futures are held, not 300, and the newest version's
    diagnostics were published."""
    r = subprocess.run(
        [sys.executable, "-c", LEAK_PROBE, "300", str(JOB)], capture_output=True, text=True, timeout=120, check=False
    )
    assert r.returncode == 0, r.stderr[-2000:]
    found = json.loads(r.stdout.strip().splitlines()[-1])
    assert found["futures"] <= 20, found
    assert found["last"] == 301, found
