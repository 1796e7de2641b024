"""``kubelint-ml lsp``: the findings and fixes in the editor, over stdio (pygls, lsprotocol).

Diagnostics are pushed on open and on change (a burst of edits is linted once, the work for an older
version of a buffer is dropped when a newer one arrives) and answered when pulled; code actions give
each fixable finding its quick fix, ``source.fixAll.kubelint-ml`` the buffer `check --fix` would
write, and a "suppress" action per finding; hover on a finding's field shows its rule's help. Only
the protocol goes to stdout; logs go to stderr.

How it holds up (docs/editors.md says it for users):

- The buffers are the server's own (:mod:`kubelint_ml.lsp.documents`): lines broken where the LSP
  breaks them, columns in the position encoding negotiated at ``initialize``. Every edit the server
  returns is applied to the buffer it was computed for and compared with the bytes `check --fix`
  gives before it is sent, and it names that buffer's version.
- One worker thread does all the linting, fixing and rendering, and owns the rule engine and the
  policy engines (a Rego engine must stay on the thread that built it). The event loop only reads
  messages, keeps the buffers and answers from what the worker made: a lint is made once per
  version, the fixes of all its findings once, and a request slices them.
- The frames are read by :mod:`kubelint_ml.lsp.transport`, not pygls's reader, and the lifecycle
  (``initialize`` first and once, nothing but ``exit`` after ``shutdown``, the exit status) and
  invalid parameters are answered as the LSP and JSON-RPC say.
- Nothing is read from disk but regular files within the size limit, inside the workspace folders.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from kubelint_ml import __version__
from kubelint_ml.findings import Finding
from kubelint_ml.lsp import documents as docs_
from kubelint_ml.lsp.documents import Document
from kubelint_ml.lsp.linter import ConfigProblem, Fixes, Linter, finding_range

SOURCE = "kubelint-ml"
FIX_ALL = "source.fixAll.kubelint-ml"
DEBOUNCE = 0.03  # seconds: a burst of keystrokes is linted once
# Seconds a request waits at most for the edits of context buffers to be taken in (a fix made
# before them would be made from the old facts).
TRACK_WAIT = 5.0
# Buffers up to this size get their quick fixes' parse made right after their diagnostics; a larger
# one when a code action first asks (its parse tree is held only once wanted).
WARM_MAX_BYTES = 4 * 1024 * 1024
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
# JSON-RPC and LSP error codes
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
SERVER_NOT_INITIALIZED = -32002
log = logging.getLogger("kubelint-ml.lsp")


def path_of(uri: str) -> str | None:
    """The file a ``file:`` URI names (None for any other scheme: never read)."""
    if not isinstance(uri, str):
        return None
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return os.path.abspath(unquote(parsed.path))


def display_of(uri: str) -> str:
    return path_of(uri) or uri


@dataclass
class Result:
    """What the worker made of one version of a buffer."""

    version: int | None
    gen: int
    doc: Document  # the text it was made from
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    session: Any = None
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # each finding's LSP line
    fixes: Any = None  # linter.Fixes: this version's quick fixes, made on demand
    actions: dict[int, list[tuple[str, bool, list[types.TextEdit]]]] = field(default_factory=dict)
    fix_all: tuple[types.TextEdit, str] | None = None
    fix_all_done: bool = False


class Protocol(LanguageServerProtocol):
    """pygls's protocol with the buffers kept by the server itself (pygls's own document store breaks
    lines at U+2028 and NEL, and applies changes in its own way) and ``exit`` ending the read loop
    with the status the LSP gives it."""

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        did_open(self._server, params)  # type: ignore[arg-type]

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        did_change(self._server, params)  # type: ignore[arg-type]

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        did_close(self._server, params)  # type: ignore[arg-type]


class Server(LanguageServer):
    def __init__(self) -> None:
        super().__init__("kubelint-ml", __version__, protocol_cls=Protocol)
        self.linter = Linter()
        self.unsafe = False
        self.encoding = docs_.UTF16
        self.document_changes = False  # the client takes versioned edits
        self.resolve_edits = False  # the client resolves a code action's edit lazily
        self.docs: dict[str, Document] = {}
        self.gen: dict[str, int] = {}  # uri -> number of the newest lint asked for
        self.results: dict[str, Result] = {}
        self.waiters: dict[str, list[tuple[int, asyncio.Future]]] = {}
        self.owners: dict[str, Any] = {}
        self.rendered: dict[str, list[Finding]] = {}  # uri -> findings mapped back at the last save
        self.rerender: asyncio.Task | None = None  # the open charts' and kustomizations' files rendered again
        self.rerender_again = False  # a save or change arrived while rendering: once more after it
        self.poller: asyncio.Future | None = None  # looks at the configs' context files outside the workspace
        self.tracking = 0  # edits of context buffers not taken in yet (requests wait for them)
        self.tracked: asyncio.Event | None = None  # set when none is left
        self.event_loop: asyncio.AbstractEventLoop | None = None
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kubelint-ml-worker")
        # quick fixes are sliced from a version's parse on their own thread: a lint in progress does
        # not hold up the lightbulb (no rule or policy engine runs there)
        self.slicer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kubelint-ml-fixes")
        self.initialized = False
        self.status: int | None = None
        self._done: asyncio.Event | None = None

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Logged, never a pop-up: an error on every keystroke is no help in the editor."""
        log.error("%s", error)

    def finish(self, status: int) -> None:
        if self.status is None:
            self.status = status
        if self._done is not None:
            self._done.set()

    async def run_in_worker(self, fn: Any, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.worker, fn, *args)

    async def run_in_slicer(self, fn: Any, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.slicer, fn, *args)


server = Server()


# ----------------------------------------------------------------------
# Findings as the protocol shows them


def _diagnostic(f: Finding, doc: Document, infos: dict, encoding: str) -> types.Diagnostic:
    info = infos.get(f.rule)
    href = getattr(info, "help_uri", "") or ""
    (sl, sc), (el, ec) = finding_range(doc, f.line, f.column, encoding)
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)),
        message=f.message + (f"\n{f.detail}" if f.detail and f.detail != f.message else ""),
        severity=_SEVERITY.get(f.severity, types.DiagnosticSeverity.Information),
        code=f.rule,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data={"rule": f.rule, "line": f.line, "column": f.column},
    )


def _config_diagnostic(problem: ConfigProblem) -> types.Diagnostic:
    line = max(problem.line - 1, 0)
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line + 1, character=0)),
        message=f"invalid kubelint-ml configuration: {problem.message}",
        severity=types.DiagnosticSeverity.Error,
        code="config",
        source=SOURCE,
    )


def _text_edits(doc: Document, edits: Any, encoding: str) -> list[types.TextEdit]:
    out = []
    for e in edits:
        sl, sc = doc.byte_position(e.start, encoding)
        el, ec = doc.byte_position(e.end, encoding)
        out.append(
            types.TextEdit(
                range=types.Range(
                    start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)
                ),
                new_text=e.text,
            )
        )
    return out


def _edits_hold(doc: Document, edits: list[types.TextEdit], want: bytes, encoding: str) -> bool:
    """Whether ``edits``, applied to ``doc`` as an editor applies them, give the bytes ``want``."""
    spans = [
        (e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character, e.new_text)
        for e in edits
    ]
    try:
        return docs_.encode(docs_.apply_edits(doc.text, doc, spans, encoding)) == want
    except (UnicodeError, ValueError):
        return False


# ----------------------------------------------------------------------
# The worker's jobs (run on the worker thread only)


def _lint_job(ls: Server, uri: str, gen: int, doc: Document) -> Result | None:
    if ls.gen.get(uri) != gen:
        return None  # a newer version (or a re-lint) was asked for since: its own job runs
    path = path_of(uri) or uri
    result = Result(doc.version, gen, doc)
    try:
        active, suppressed, session = ls.linter.lint(path, doc.data)
    except ConfigProblem as problem:
        if problem.path:
            _publish_soon(ls, "file://" + problem.path, None, [_config_diagnostic(problem)])
        return result
    if ls.owners.get(uri) is not None:  # part of a chart or kustomization: what rendering gave at
        active, suppressed = ls.rendered.get(uri, []), []  # the last open or save (never the file raw)
    result.findings, result.suppressed, result.session = active, suppressed, session
    result.diagnostics = [_diagnostic(f, doc, session.infos, ls.encoding) for f in active]
    result.lines = [d.range.start.line for d in result.diagnostics]
    result.fixes = Fixes(doc.data)
    return result


def _warm_job(ls: Server, uri: str, gen: int, result: Result) -> None:
    """After the diagnostics: the parse the quick fixes of this version are made from (skipped when
    a newer version is on its way)."""
    if ls.gen.get(uri) == gen and result.fixes is not None:
        result.fixes.warm()


def _actions_job(ls: Server, result: Result, wanted: list[int]) -> None:
    """The quick fix and the suppression of each finding in ``wanted`` (kept: made once a version)."""
    from kubelint_ml.fix.apply import apply_edits

    assert result.fixes is not None
    doc, data = result.doc, result.doc.data
    for i in wanted:
        if i in result.actions:
            continue
        f = result.findings[i]
        here = []
        for fix, suppress in ((result.fixes.fix(f), False), (result.fixes.suppression(f, "reason"), True)):
            if fix is None:
                continue
            after = apply_edits(data, list(fix.edits))
            edits = _text_edits(doc, fix.edits, ls.encoding)
            if not _edits_hold(doc, edits, after, ls.encoding):
                log.error("%s: the edits of %s do not give what check --fix gives; not offered", result.doc.uri, f.rule)
                continue
            if not result.fixes.keeps_parsing(after):
                continue  # check --fix would undo it too
            if suppress:
                title = f"Suppress {f.rule} on this object (kubelint-ml.io/ignore, with a reason)"
                here.append((title, False, edits))
            else:  # every fixable finding; the unsafe ones say so
                unsafe = fix.applicability != "safe"
                here.append((f"{fix.description}{' (unsafe)' if unsafe else ''} [{f.rule}]", not unsafe, edits))
        result.actions[i] = here


def _fix_all_job(ls: Server, uri: str, result: Result) -> None:
    """The buffer as `check --fix` writes it, as one edit of the part that changes: one fix run on
    the findings the version already has."""
    if result.fix_all_done:
        return
    doc = result.doc
    path = path_of(uri) or uri
    active = [copy.copy(f) for f in result.findings]
    for f in active:
        f.fix = copy.deepcopy(f.fix)
    after = ls.linter.fixed_from(path, doc.data, active, list(result.suppressed), ls.unsafe)
    result.fix_all_done = True
    if after == doc.data:
        return
    try:
        new = docs_.decode(after)
    except UnicodeDecodeError:
        log.warning("fix all for %s gave bytes that are not UTF-8: not offered", uri)
        return
    start, end, new_end = docs_.common_span(doc.text, new)
    (sl, sc), (el, ec) = doc.position(start, ls.encoding), doc.position(end, ls.encoding)
    edit = types.TextEdit(
        range=types.Range(start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)),
        new_text=new[start:new_end],
    )
    if not _edits_hold(doc, [edit], after, ls.encoding):
        log.error("fix all for %s: the edit does not give what check --fix gives; not offered", uri)
        return
    result.fix_all = (edit, "")


# ----------------------------------------------------------------------
# The loop's side


def _publish_soon(ls: Server, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> None:
    """Publish from any thread (the protocol writes from the loop only)."""
    loop = ls.event_loop
    params = types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics)
    if loop is None or loop.is_closed():
        return
    if threading.current_thread() is threading.main_thread():
        ls.text_document_publish_diagnostics(params)
    else:
        loop.call_soon_threadsafe(ls.text_document_publish_diagnostics, params)


def _landed(ls: Server, uri: str, result: Result) -> None:
    """A result reached the loop: kept, and the requests waiting for it (or an older one) woken."""
    known = ls.results.get(uri)
    if known is None or known.gen <= result.gen:
        ls.results[uri] = result
    waiting = ls.waiters.get(uri, [])
    keep = []
    for gen, fut in waiting:
        if gen <= result.gen:
            if not fut.done():
                fut.set_result(None)
        else:
            keep.append((gen, fut))
    ls.waiters[uri] = keep


async def _lint(ls: Server, uri: str, gen: int, debounce: bool = True) -> None:
    if debounce:
        await asyncio.sleep(DEBOUNCE)
    doc = ls.docs.get(uri)
    if ls.gen.get(uri) != gen or doc is None:
        return  # a newer version arrived: its own task lints it
    if ls.owners.get(uri) is not None and uri not in ls.rendered:
        return  # a chart's or kustomization's file: its diagnostics come when it is rendered
    snapshot = Document(uri, doc.text, doc.version)
    try:
        result = await ls.run_in_worker(_lint_job, ls, uri, gen, snapshot)
    except Exception:  # noqa: BLE001 - a bug must not kill the server: logged, one line per version
        log.exception("linting %s failed", uri)
        result = Result(snapshot.version, gen, snapshot)
    if result is None:
        return
    _landed(ls, uri, result)
    if ls.gen.get(uri) != gen or uri not in ls.docs:
        return
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, version=result.version, diagnostics=result.diagnostics)
    )
    if result.findings and len(result.doc.data) <= WARM_MAX_BYTES:
        asyncio.ensure_future(ls.run_in_worker(_warm_job, ls, uri, gen, result))


def _schedule(ls: Server, uri: str) -> None:
    gen = ls.gen[uri] = ls.gen.get(uri, 0) + 1
    asyncio.ensure_future(_lint(ls, uri, gen))


def _relint_open(ls: Server, changed: str | None = None) -> None:
    """Every open buffer linted again; with ``changed`` (a context file's path), only those whose
    lint reads its objects (a file of another workspace folder is not among their inputs)."""
    for uri in list(ls.docs):
        if _is_config(uri):
            continue
        path = path_of(uri)
        if changed is None or path is None or ls.linter.reads(path, changed):
            _schedule(ls, uri)


async def _current(ls: Server, uri: str) -> Result | None:
    """The result for the buffer as it is now (waiting for its lint when it is on its way); None
    when the buffer is not open or changed while waiting."""
    doc = ls.docs.get(uri)
    if doc is None or _is_config(uri):
        return None
    if ls.tracking:  # an edit of a context buffer not taken in yet: the facts of the answer may change
        ls.tracked = ls.tracked or asyncio.Event()
        ls.tracked.clear()
        try:
            await asyncio.wait_for(ls.tracked.wait(), TRACK_WAIT)
        except asyncio.TimeoutError:
            pass
        doc = ls.docs.get(uri)
        if doc is None:
            return None
    version = doc.version
    known = ls.results.get(uri)
    gen = ls.gen.get(uri, 0)
    if known is None or known.gen < gen:
        if ls.owners.get(uri) is not None and known is None:
            return None
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        ls.waiters.setdefault(uri, []).append((gen, fut))
        if known is None or known.gen < gen:
            await fut
        known = ls.results.get(uri)
    doc = ls.docs.get(uri)
    if known is None or doc is None or doc.version != version or known.doc.text != doc.text:
        return None
    return known


async def _poll_outside(ls: Server) -> None:
    """The configs' context files outside the workspace (no editor tells of their changes) are looked
    at every second or two; a change lints the open buffers again with the new facts."""
    from kubelint_ml.lsp.linter import OUTSIDE_EVERY

    while ls.status is None:
        await asyncio.sleep(2 * OUTSIDE_EVERY)
        try:
            changed = await ls.run_in_worker(ls.linter.outside_changed)
        except Exception:  # noqa: BLE001
            log.exception("looking at the context files failed")
            continue
        if changed:
            _relint_open(ls)


@server.feature(types.INITIALIZED)
def initialized(ls: Server, params: types.InitializedParams) -> None:
    """Ask the editor to say when manifests and configs change on disk (context files, configs)."""
    if ls.poller is None:  # (an editor that says `initialized` twice gets one)
        ls.poller = asyncio.ensure_future(_poll_outside(ls))
    caps = ls.client_capabilities.workspace
    watched = getattr(caps, "did_change_watched_files", None) if caps is not None else None
    if watched is None or not watched.dynamic_registration:
        return
    ls.client_register_capability(
        types.RegistrationParams(
            registrations=[
                types.Registration(
                    id="kubelint-ml-watch",
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(
                        watchers=[types.FileSystemWatcher(glob_pattern="**/*.{yaml,yml,json}")]
                    ),
                )
            ]
        )
    )


@server.feature(types.INITIALIZE)
def initialize(ls: Server, params: types.InitializeParams) -> None:
    uris = [f.uri for f in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    roots = []
    for uri in uris:  # a folder is a directory named by a file: URI, taken as it is written
        path = path_of(uri)
        if path is not None and os.path.isdir(path):
            roots.append(path)
        else:
            log.warning("workspace folder %r is not a directory: not read", uri)
    ls.linter.roots = roots
    ls.encoding = ServerCapabilitiesBuilder.choose_position_encoding(params.capabilities) or docs_.UTF16
    ls.encoding = str(getattr(ls.encoding, "value", ls.encoding))
    edit_caps = params.capabilities.workspace.workspace_edit if params.capabilities.workspace else None
    ls.document_changes = bool(edit_caps and edit_caps.document_changes)
    action_caps = params.capabilities.text_document.code_action if params.capabilities.text_document else None
    resolve = action_caps.resolve_support if action_caps else None
    ls.resolve_edits = bool(resolve and "edit" in (resolve.properties or []))
    try:
        ls.event_loop = asyncio.get_running_loop()
    except RuntimeError:
        ls.event_loop = None
    options = params.initialization_options or {}
    if isinstance(options, dict):
        ls.unsafe = bool(options.get("unsafeFixes"))
    ls.initialized = True
    threading.Thread(target=_index, args=(ls,), daemon=True, name="kubelint-ml-index").start()


def _index(ls: Server) -> None:
    """Read the workspace's context files (this thread), take them in on the worker (which owns the
    sessions), then lint the open buffers again."""
    import time

    t0 = time.monotonic()
    try:
        found = ls.linter.index()
        ls.worker.submit(ls.linter.take_index, found).result()
    except Exception:  # noqa: BLE001
        log.exception("indexing the workspace failed")
        ls.linter.indexed.set()
        return
    loop = ls.event_loop
    if loop is not None and not loop.is_closed():
        message = (
            f"kubelint-ml: the workspace's context indexed: {len(found)} files, "
            f"{sum(map(len, found.values()))} bytes, {time.monotonic() - t0:.1f} s"
        )
        params = types.LogMessageParams(type=types.MessageType.Info, message=message)
        loop.call_soon_threadsafe(ls.window_log_message, params)
        loop.call_soon_threadsafe(_relint_open, ls)


def _is_config(uri: str) -> bool:
    from kubelint_ml.run.config import CONFIG_NAMES

    path = path_of(uri)
    return path is not None and os.path.basename(path) in CONFIG_NAMES


def _track_job(ls: Server, path: str | None, data: bytes | None, opened: bool) -> bool:
    """A buffer opened, changed or closed (``data`` None): the context and configs follow (worker)."""
    if path is None:
        return False
    if opened and data is not None:
        ls.linter.buffers[path] = data
    else:
        ls.linter.buffers.pop(path, None)
        data = ls.linter.disk(path)
    return ls.linter.file_changed(path, data)


async def _track(ls: Server, uri: str, data: bytes | None, opened: bool = True) -> None:
    try:
        changed = await ls.run_in_worker(_track_job, ls, path_of(uri), data, opened)
    except Exception:  # noqa: BLE001
        log.exception("taking in %s failed", uri)
        return
    if changed:
        _relint_open(ls, path_of(uri))


def did_open(ls: Server, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    uri = item.uri
    doc = ls.docs[uri] = Document(uri, item.text, item.version)
    path = path_of(uri)
    if _is_config(uri):
        asyncio.ensure_future(_track_config(ls, uri, doc.data))
        return
    ls.owners[uri] = ls.linter.owner(path) if path is not None else None
    if ls.linter.mentions_context(doc.data) or (path is not None and ls.linter.is_context(path)):
        asyncio.ensure_future(_track(ls, uri, doc.data))
    if ls.owners[uri] is not None:
        asyncio.ensure_future(_render(ls, [uri]))
        return
    _schedule(ls, uri)


def did_change(ls: Server, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    doc = ls.docs.get(uri)
    if doc is None:
        log.warning("a change to %s, which is not open: ignored", uri)
        return
    for change in params.content_changes:
        rng = getattr(change, "range", None)
        if rng is None:
            doc.replace(0, len(doc.text), change.text)
        else:
            start = doc.offset(rng.start.line, rng.start.character, ls.encoding)
            end = doc.offset(rng.end.line, rng.end.character, ls.encoding)
            doc.replace(min(start, end), max(start, end), change.text)
    doc.version = params.text_document.version
    if _is_config(uri):
        asyncio.ensure_future(_track_config(ls, uri, doc.data))
        return
    path = path_of(uri)
    if ls.linter.mentions_context(doc.data) or (path is not None and ls.linter.is_context(path)):
        _track_soon(ls, uri)
    _schedule(ls, uri)


def _track_soon(ls: Server, uri: str) -> None:
    """A context file edited: taken in once per burst (after the debounce), in the worker."""
    gen = ls.gen.get(uri, 0) + 1

    ls.tracking += 1

    async def later() -> None:
        try:
            await asyncio.sleep(DEBOUNCE)
            doc = ls.docs.get(uri)
            if doc is not None and ls.gen.get(uri) == gen:
                await _track(ls, uri, doc.data)
        finally:
            ls.tracking -= 1
            if not ls.tracking and ls.tracked is not None:
                ls.tracked.set()

    asyncio.ensure_future(later())


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: Server, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    doc = ls.docs.get(uri)
    if doc is None or _is_config(uri):
        return
    path = path_of(uri)
    if ls.owners.get(uri) is None:
        _schedule(ls, uri)
        if path is None or not ls.linter.is_context(path):
            return
    _render_open(ls)  # the saved file may feed the render of every open file of the folder


def _render_open(ls: Server) -> None:
    """Every open file of a chart or kustomization rendered again, as `check <folder>` would now
    render it (a template, a values file, a patch or a context file of the folder saved or changed on
    disk changes what the others get): one render at a time, and one more for what came meanwhile.
    A kustomization that now names an open file, or no longer does, makes it rendered, or linted as
    it is typed."""
    if ls.rerender is not None and not ls.rerender.done():
        ls.rerender_again = True
        return

    async def loop() -> None:
        while True:
            ls.rerender_again = False
            uris = [u for u in ls.docs if not _is_config(u)]
            try:
                owners = await ls.run_in_worker(_owners_job, ls, uris)
            except Exception:  # noqa: BLE001
                log.exception("finding the charts and kustomizations of the open files failed")
                owners = {}
            for uri, owner in owners.items():
                if uri in ls.docs and ls.owners.get(uri) is not None and owner is None:
                    ls.owners[uri] = None
                    ls.rendered.pop(uri, None)
                    _schedule(ls, uri)  # no longer part of a render: linted as it is
                elif uri in ls.docs:
                    ls.owners[uri] = owner
            await _render(ls, [u for u in ls.docs if ls.owners.get(u) is not None])
            if not ls.rerender_again:
                return

    ls.rerender = asyncio.ensure_future(loop())


def _owners_job(ls: Server, uris: list[str]) -> dict[str, Any]:
    return {uri: ls.linter.owner(path) for uri in uris if (path := path_of(uri)) is not None}


async def _render(ls: Server, uris: list[str]) -> None:
    """Files of charts and kustomizations: their findings are those of the rendered output that map
    back to them (as `check <folder>` gives them), computed when one is opened and when a file the
    render reads is saved (rendering on every keystroke is not expected); they stay until then."""
    paths = {uri: path for uri in uris if (path := path_of(uri)) is not None}
    if not paths:
        return
    try:
        found = await ls.run_in_worker(ls.linter.rendered, list(paths.values()))
    except Exception:  # noqa: BLE001
        log.exception("rendering for %s failed", ", ".join(paths))
        return
    for uri, path in paths.items():
        if ls.docs.get(uri) is None or ls.owners.get(uri) is None:
            continue  # closed while rendering
        ls.rendered[uri] = found.get(path, [])
        gen = ls.gen[uri] = ls.gen.get(uri, 0) + 1
        asyncio.ensure_future(_lint(ls, uri, gen, debounce=False))


def did_close(ls: Server, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    if ls.docs.pop(uri, None) is None:
        return
    ls.gen.pop(uri, None)
    ls.results.pop(uri, None)
    ls.rendered.pop(uri, None)
    ls.owners.pop(uri, None)
    for _, fut in ls.waiters.pop(uri, []):
        if not fut.done():
            fut.set_result(None)
    asyncio.ensure_future(_track(ls, uri, None, opened=False))
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def _watched_job(ls: Server, changes: list[tuple[str, bool]]) -> tuple[bool, bool]:
    """Take in files changed on disk: whether the context changed, and whether a file of a chart or
    kustomization (which the render of the open ones reads) did."""
    changed = owned = False
    for path, gone in changes:
        if not ls.linter.in_workspace(path):  # nothing outside the workspace is read, but a context
            changed = ls.linter.outside_changed(os.path.abspath(path)) or changed  # file of a config
            continue
        if path in ls.linter.buffers:
            continue  # the editor's text wins over the disk's
        changed = ls.linter.file_changed(path, None if gone else ls.linter.disk(path)) or changed
        owned = owned or ls.linter.owner(path) is not None
    return changed, owned


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched(ls: Server, params: types.DidChangeWatchedFilesParams) -> None:
    changes = []
    for event in params.changes:
        path = path_of(event.uri)
        if path is not None:
            changes.append((path, event.type == types.FileChangeType.Deleted))
    try:
        changed, owned = await ls.run_in_worker(_watched_job, ls, changes)
    except Exception:  # noqa: BLE001
        log.exception("taking in changed files failed")
        return
    if changed:
        _relint_open(ls)
    if changed or owned:
        _render_open(ls)


def _config_job(ls: Server, uri: str, data: bytes) -> list[types.Diagnostic]:
    from kubelint_ml.lsp.linter import load_unsaved_config
    from kubelint_ml.run.config import ConfigError

    path = path_of(uri) or uri
    ls.linter.buffers[path] = data
    ls.linter.file_changed(path, data)
    try:
        load_unsaved_config(path, data)
    except ConfigError as e:
        message = str(e)
        return [_config_diagnostic(ConfigProblem(path, getattr(e, "line", 0) or _line_in(message), message))]
    return []


async def _track_config(ls: Server, uri: str, data: bytes) -> None:
    """An edited config: checked at once (a diagnostic on it when invalid), then every buffer again."""
    try:
        diagnostics = await ls.run_in_worker(_config_job, ls, uri, data)
    except Exception:  # noqa: BLE001
        log.exception("checking the config %s failed", uri)
        return
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
    _relint_open(ls)


def _line_in(message: str) -> int:
    import re

    found = re.search(r":(\d+):", message) or re.search(r"line (\d+)", message)
    return int(found.group(1)) if found else 1


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
)
async def pull_diagnostics(ls: Server, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    """Only open buffers are linted for a request (a URI is never read from disk for one)."""
    result = await _current(ls, params.text_document.uri)
    return types.RelatedFullDocumentDiagnosticReport(items=result.diagnostics if result is not None else [])


def _workspace_edit(ls: Server, uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    """Edits that name the version they were made for, when the client takes them so: an editor then
    refuses them once the buffer has changed."""
    if ls.document_changes and version is not None:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                    edits=list(edits),
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: list(edits)})


def _fix_all_action(ls: Server, uri: str, result: Result, lazy: bool) -> types.CodeAction | None:
    title = "Fix all kubelint-ml findings" + (" (unsafe fixes too)" if ls.unsafe else "")
    if lazy:
        return types.CodeAction(title=title, kind=FIX_ALL, data={"uri": uri, "version": result.version})
    if result.fix_all is None:
        return None
    return types.CodeAction(
        title=title, kind=FIX_ALL, edit=_workspace_edit(ls, uri, result.version, [result.fix_all[0]])
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL],
        resolve_provider=True,
    ),
)
async def code_actions(ls: Server, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    result = await _current(ls, uri)
    if result is None:
        return []
    only = [str(k) for k in params.context.only or []]
    asked_fix_all = any(k in ("source", "source.fixAll", FIX_ALL) for k in only)
    want_fix_all = not only or asked_fix_all
    want_quick = not only or "quickfix" in only
    out: list[types.CodeAction] = []
    if want_quick and result.findings:
        first, last = params.range.start.line, params.range.end.line
        wanted = [i for i, line in enumerate(result.lines) if first <= line <= last]
        if any(i not in result.actions for i in wanted):
            await ls.run_in_slicer(_actions_job, ls, result, wanted)
        for i in wanted:
            diag = result.diagnostics[i]
            for title, preferred, edits in result.actions.get(i, []):
                out.append(
                    types.CodeAction(
                        title=title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag],
                        is_preferred=preferred or None,
                        edit=_workspace_edit(ls, uri, result.version, edits),
                    )
                )
    if want_fix_all and any(f.fix is not None for f in result.findings):
        # Asked for by kind (fix all on save, a command): made now. Offered in a lightbulb (which
        # an editor asks for on every cursor move): made when the client resolves the action, or
        # offered once made (a fix run per cursor move would cost a --fix each).
        if asked_fix_all and not result.fix_all_done:
            await ls.run_in_worker(_fix_all_job, ls, uri, result)
        lazy = not result.fix_all_done and ls.resolve_edits
        action = _fix_all_action(ls, uri, result, lazy=lazy)
        if action is not None:
            out.append(action)
    current = ls.docs.get(uri)
    if current is None or current.version != result.version:
        return []  # the buffer changed meanwhile: these edits are for a text it no longer has
    return out


@server.feature(types.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: Server, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    if action.kind != FIX_ALL or not isinstance(uri, str):
        return action
    result = await _current(ls, uri)
    if result is None or result.version != data.get("version"):
        return action  # the buffer changed: no edit
    await ls.run_in_worker(_fix_all_job, ls, uri, result)
    if result.fix_all is not None and ls.docs.get(uri) is not None and ls.docs[uri].version == result.version:
        action.edit = _workspace_edit(ls, uri, result.version, [result.fix_all[0]])
    return action


def _still_valid(ls: Server, uri: str, line: int) -> Result | None:
    """The last result, when the buffer changed since but not on ``line`` nor in its number of lines
    (a keystroke elsewhere on a large buffer): hover need not wait for the newest lint."""
    doc, known = ls.docs.get(uri), ls.results.get(uri)
    if doc is None or known is None or known.doc.version == doc.version:
        return None
    if len(known.doc.starts) != len(doc.starts) or known.doc.line_text(line) != doc.line_text(line):
        return None
    return known


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: Server, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    result = _still_valid(ls, uri, params.position.line) or await _current(ls, uri)
    if result is None:
        return None
    pos = params.position
    texts = []
    for f, d in zip(result.findings, result.diagnostics):
        r = d.range
        if r.start.line == pos.line and r.start.character <= pos.character <= max(
            r.end.character, r.start.character + 1
        ):
            texts.append(_help(f.rule, result.session))
    if not texts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(texts)))


def _help(rule_id: str, session: Any) -> str:
    from kubelint_ml.engine import ruledocs

    rule = session.rules.get(rule_id) if session is not None else None
    if rule is None:
        rule = next((r for r in ruledocs.pseudo_rules() if r.id == rule_id), None)
    if rule is None:
        info = session.infos.get(rule_id) if session is not None else None
        return f"**{rule_id}**" + (f": {info.title}" if info is not None else "")
    return f"**{rule_id}**: {rule.title}\n\n{ruledocs.render_rule(rule)}"  # what, why, fix: as `rules show`


# ----------------------------------------------------------------------
# Messages in: the lifecycle and invalid parameters answered here, the rest handed to pygls


def _error(ls: Server, msg_id: Any, code: int, message: str) -> None:
    ls.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def dispatch(ls: Server, raw: Any, why: str, pre: tuple[Any, Exception | None] | None = None) -> None:
    """One message from the client. ``pre``: the message as pygls's types, made on the reader thread
    (structuring 50,000 file events is not done on the event loop), or the error that made."""
    if raw is None:
        log.warning("dropped a frame that is not JSON (%s)", why)
        _error(ls, None, PARSE_ERROR, f"the frame is not JSON: {why}")
        return
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        log.warning("dropped a message that is not JSON-RPC 2.0")
        _error(ls, raw.get("id") if isinstance(raw, dict) else None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        return
    method = raw.get("method")
    is_request = "id" in raw and method is not None
    msg_id = raw.get("id")
    if method is not None and not isinstance(method, str):
        _error(ls, msg_id, INVALID_REQUEST, "the method is not a string")
        return
    if method == types.EXIT:
        ls.finish(0 if ls.protocol._shutdown else 1)
        return
    if method is not None:
        if ls.protocol._shutdown:
            if is_request:
                _error(ls, msg_id, INVALID_REQUEST, "the server is shut down: only exit is taken")
            return
        if method == types.INITIALIZE and ls.initialized:
            if is_request:
                _error(ls, msg_id, INVALID_REQUEST, "initialize was already received")
            return
        if not ls.initialized and method != types.INITIALIZE:
            if is_request:
                _error(ls, msg_id, SERVER_NOT_INITIALIZED, "the server is not initialized")
            return
    try:
        if pre is None:
            message = ls.protocol.structure_message(raw)
        elif pre[1] is not None:
            raise pre[1]
        else:
            message = pre[0]
    except JsonRpcException as e:
        log.warning("invalid %s: %s", method or "message", e)
        if is_request:
            _error(ls, msg_id, INVALID_PARAMS, f"invalid params for {method}")
        return
    except Exception as e:  # noqa: BLE001
        log.warning("invalid %s: %s", method or "message", e)
        if is_request:
            _error(ls, msg_id, INVALID_PARAMS, f"invalid params for {method}")
        return
    try:
        ls.protocol.handle_message(message)
    except Exception:  # noqa: BLE001 - logged; a request gets an error, the server goes on
        log.exception("handling %s failed", method)
        if is_request:
            _error(ls, msg_id, -32603, f"handling {method} failed")
    _forget_finished(ls)


def _forget_finished(ls: Server) -> None:
    """pygls 2 keeps, for each notification handled by a coroutine (didSave, watched files), a future
    in ``protocol._request_futures`` that it never removes; the finished ones are dropped here (a
    pending request's future is not finished)."""
    futures = getattr(ls.protocol, "_request_futures", None)
    if isinstance(futures, dict) and len(futures) > 16:
        for key in [k for k, f in futures.items() if f.done()]:
            futures.pop(key, None)


async def _serve(ls: Server, fd: int) -> int:
    from kubelint_ml.lsp.transport import read_messages

    loop = asyncio.get_running_loop()
    ls.event_loop = loop
    ls._done = asyncio.Event()

    def deliver(message: Any, why: str) -> None:
        pre: tuple[Any, Exception | None] | None = None
        if isinstance(message, dict) and isinstance(message.get("method"), str) and message.get("jsonrpc") == "2.0":
            try:  # requests and notifications only: a response's type is known on the loop
                pre = (ls.protocol.structure_message(message), None)
            except Exception as e:  # noqa: BLE001 - answered by dispatch
                pre = (None, e)
        loop.call_soon_threadsafe(dispatch, ls, message, why, pre)

    def read() -> None:
        status = read_messages(fd, deliver)
        # the end of the input without `exit`: as `exit` without `shutdown` (1), or the frame's error (2)
        loop.call_soon_threadsafe(ls.finish, status if status else 1)

    threading.Thread(target=read, daemon=True, name="kubelint-ml-reader").start()
    await ls._done.wait()
    return ls.status if ls.status is not None else 1


def main() -> None:
    from pygls.io_ import StdoutWriter

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="kubelint-ml lsp: %(message)s")
    out = sys.stdout.buffer
    server.protocol.set_writer(StdoutWriter(out))
    try:
        status = asyncio.run(_serve(server, sys.stdin.fileno()))
    except BrokenPipeError:
        log.error("the connection to the client is lost")
        status = 1
    try:
        out.flush()
    except OSError:
        pass
    try:  # the sessions closed on the worker that built them (their policy helpers reaped)
        server.worker.submit(server.linter.close).result(timeout=2)
    except Exception:  # noqa: BLE001 - a worker in a long lint is not waited for
        pass
    os._exit(status)
