"""``kubelint-ml lsp``: the findings and fixes in the editor, over stdio (pygls, lsprotocol).

Diagnostics are pushed on open and on change (the work for an older version of a buffer is
dropped when a newer one arrives) and answered when pulled; code actions give each fixable
finding its quick fix, ``source.fixAll.kubelint-ml`` the buffer `check --fix` would write, and a
"suppress" action per finding; hover on a finding's field shows its rule's help. Only the protocol
goes to stdout; logs go to stderr.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from kubelint_ml import __version__
from kubelint_ml.findings import Finding
from kubelint_ml.lsp.linter import ConfigProblem, Linter

SOURCE = "kubelint-ml"
FIX_ALL = "source.fixAll.kubelint-ml"
DEBOUNCE = 0.03  # seconds: a burst of keystrokes is linted once
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
log = logging.getLogger("kubelint-ml.lsp")


def path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return os.path.abspath(unquote(parsed.path)) if parsed.scheme == "file" else uri


class Server(LanguageServer):
    def __init__(self) -> None:
        super().__init__("kubelint-ml", __version__)
        self.linter = Linter()
        self.unsafe = False
        self.latest: dict[str, int] = {}  # uri -> newest version seen
        self.results: dict[str, tuple[int | None, bytes, list[Finding], Any]] = {}
        self.event_loop: asyncio.AbstractEventLoop | None = None
        self.rendered: dict[str, list[Finding]] = {}  # uri -> findings mapped back at the last save


server = Server()


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").split("\n")


def _utf16(text: str, chars: int) -> int:
    """The UTF-16 offset of the ``chars``-th character of ``text`` (LSP positions count UTF-16)."""
    head = text[:chars]
    return len(head) + sum(1 for c in head if ord(c) > 0xFFFF)


def _position(lines: list[str], byte_offset: int, data: bytes) -> types.Position:
    head = data[:byte_offset].decode("utf-8", errors="replace")
    line = head.count("\n")
    col = len(head) - (head.rfind("\n") + 1)
    return types.Position(line=line, character=_utf16(lines[line] if line < len(lines) else "", col))


def _range(f: Finding, lines: list[str]) -> types.Range:
    from kubelint_ml.report.sarif import _token_end

    line = max(f.line - 1, 0)
    text = lines[line] if line < len(lines) else ""
    col = max(f.column - 1, 0)
    end = _token_end(text, col) if text else None
    end = end if end is not None and end > col else len(text.rstrip())
    end = max(end, col)
    return types.Range(
        start=types.Position(line=line, character=_utf16(text, col)),
        end=types.Position(line=line, character=_utf16(text, end)),
    )


def _diagnostic(f: Finding, lines: list[str], infos: dict) -> types.Diagnostic:
    info = infos.get(f.rule)
    href = getattr(info, "help_uri", "") or ""
    return types.Diagnostic(
        range=_range(f, lines),
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


def _lint_now(ls: Server, uri: str, version: int | None, data: bytes) -> list[types.Diagnostic]:
    path = path_of(uri)
    lines = _lines(data)
    try:
        active, _, session = ls.linter.lint(path, data)
    except ConfigProblem as problem:
        if problem.path:
            cfg_uri = "file://" + problem.path
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=cfg_uri, diagnostics=[_config_diagnostic(problem)])
            )
        return []
    if ls.linter.owner(path) is not None:  # part of a chart or kustomization: what rendering gave at
        active = ls.rendered.get(uri, [])  # the last open or save (never the file linted raw)
    ls.results[uri] = (version, data, active, session)
    return [_diagnostic(f, lines, session.infos) for f in active]


async def _publish(ls: Server, uri: str, version: int | None) -> None:
    await asyncio.sleep(DEBOUNCE)
    if ls.latest.get(uri) != version:
        return  # a newer version arrived: its own task lints it
    if uri not in ls.rendered and ls.linter.owner(path_of(uri)) is not None:
        return  # a chart's or kustomization's file: its diagnostics come when it is rendered
    doc = ls.workspace.get_text_document(uri)
    data = doc.source.encode("utf-8")
    loop = asyncio.get_running_loop()
    try:
        diagnostics = await loop.run_in_executor(None, _lint_now, ls, uri, version, data)
    except Exception:  # noqa: BLE001 - a bug must not kill the server: logged, the buffer keeps its diagnostics
        log.exception("linting %s failed", uri)
        return
    if ls.latest.get(uri) != version:
        return
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics)
    )


def _schedule(ls: Server, uri: str, version: int | None) -> None:
    ls.latest[uri] = version if version is not None else -1
    asyncio.ensure_future(_publish(ls, uri, ls.latest[uri]))


def _relint_open(ls: Server) -> None:
    for uri in list(ls.latest):
        _schedule(ls, uri, ls.latest[uri])


@server.feature(types.INITIALIZED)
def initialized(ls: Server, params: types.InitializedParams) -> None:
    """Ask the editor to say when manifests and configs change on disk (context files, configs)."""
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
    roots = [path_of(f.uri) for f in params.workspace_folders or []]
    if not roots and params.root_uri:
        roots = [path_of(params.root_uri)]
    ls.linter.roots = roots
    try:
        ls.event_loop = asyncio.get_running_loop()
    except RuntimeError:
        ls.event_loop = None
    options = params.initialization_options or {}
    if isinstance(options, dict):
        ls.unsafe = bool(options.get("unsafeFixes"))
    threading.Thread(target=_index, args=(ls,), daemon=True, name="kubelint-ml-index").start()


def _index(ls: Server) -> None:
    try:
        ls.linter.index()
    except Exception:  # noqa: BLE001
        log.exception("indexing the workspace failed")
        ls.linter.indexed.set()
        return
    loop = ls.event_loop
    if loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(_relint_open, ls)


def _is_config(uri: str) -> bool:
    from kubelint_ml.run.config import CONFIG_NAMES

    return os.path.basename(path_of(uri)) in CONFIG_NAMES


def _track(ls: Server, uri: str, text: str | None) -> None:
    path = path_of(uri)
    data = text.encode("utf-8") if text is not None else None
    if data is None:
        ls.linter.buffers.pop(path, None)
    else:
        ls.linter.buffers[path] = data
    if ls.linter.file_changed(path, data if data is not None else _disk(path)):
        _relint_open(ls)


def _disk(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(20 * 1024 * 1024 + 1)
    except OSError:
        return None


def _forget_finished(ls: Server) -> None:
    """pygls 2 keeps, for each notification its built-in handlers take first (didOpen, didChange,
    didSave, didClose), a future in ``protocol._request_futures`` that it never removes: about 1 KB
    an edit, 20 MB over an hour of typing. The finished ones are dropped here (a pending request's
    future is not finished; one whose answer is on its way is popped again with ``pop(id, None)``)."""
    futures = getattr(ls.protocol, "_request_futures", None)
    if isinstance(futures, dict) and len(futures) > _KEPT_FUTURES:
        for key in [k for k, f in futures.items() if f.done()]:
            futures.pop(key, None)


_KEPT_FUTURES = 16


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: Server, params: types.DidOpenTextDocumentParams) -> None:
    _forget_finished(ls)
    doc = params.text_document
    _track(ls, doc.uri, doc.text)
    if _is_config(doc.uri):
        _check_config(ls, doc.uri)
        return
    ls.latest[doc.uri] = doc.version
    if ls.linter.owner(path_of(doc.uri)) is not None:
        asyncio.ensure_future(_render(ls, doc.uri))
        return
    _schedule(ls, doc.uri, doc.version)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: Server, params: types.DidChangeTextDocumentParams) -> None:
    _forget_finished(ls)
    uri = params.text_document.uri
    doc = ls.workspace.get_text_document(uri)
    _track(ls, uri, doc.source)
    if _is_config(uri):
        _check_config(ls, uri)
        return
    _schedule(ls, uri, params.text_document.version)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: Server, params: types.DidSaveTextDocumentParams) -> None:
    _forget_finished(ls)
    uri = params.text_document.uri
    _track(ls, uri, ls.workspace.get_text_document(uri).source)
    if _is_config(uri):
        return
    if ls.linter.owner(path_of(uri)) is None:
        _schedule(ls, uri, ls.latest.get(uri))
        return
    await _render(ls, uri)


async def _render(ls: Server, uri: str) -> None:
    """A chart template or a kustomization's file: its findings are those of the rendered output that
    map back to it (as `check <folder>` gives them), computed when it is opened and saved (rendering
    on every keystroke is not expected); they stay until the next save."""
    path = path_of(uri)
    loop = asyncio.get_running_loop()
    try:
        found = await loop.run_in_executor(None, ls.linter.rendered, path)
    except Exception:  # noqa: BLE001
        log.exception("rendering for %s failed", uri)
        return
    ls.rendered[uri] = found
    data = ls.workspace.get_text_document(uri).source.encode("utf-8")
    session = ls.linter.session(path)
    ls.results[uri] = (ls.latest.get(uri), data, found, session)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=uri,
            version=ls.latest.get(uri),
            diagnostics=[_diagnostic(f, _lines(data), session.infos) for f in found],
        )
    )


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: Server, params: types.DidCloseTextDocumentParams) -> None:
    _forget_finished(ls)
    uri = params.text_document.uri
    ls.latest.pop(uri, None)
    ls.results.pop(uri, None)
    ls.rendered.pop(uri, None)
    _track(ls, uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched(ls: Server, params: types.DidChangeWatchedFilesParams) -> None:
    changed = False
    for event in params.changes:
        path = path_of(event.uri)
        if path in ls.linter.buffers:
            continue  # the editor's text wins over the disk's
        gone = event.type == types.FileChangeType.Deleted
        changed = ls.linter.file_changed(path, None if gone else _disk(path)) or changed
    if changed:
        _relint_open(ls)


def _check_config(ls: Server, uri: str) -> None:
    """An edited config: checked at once (a diagnostic on it when invalid), then every buffer again."""
    from kubelint_ml.lsp.linter import load_unsaved_config
    from kubelint_ml.run.config import ConfigError

    path = path_of(uri)
    diagnostics = []
    try:
        load_unsaved_config(path, ls.linter.buffers.get(path, b""))
    except ConfigError as e:
        message = str(e)
        diagnostics.append(_config_diagnostic(ConfigProblem(path, getattr(e, "line", 0) or _line_in(message), message)))
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
    for other in list(ls.latest):
        if other != uri:
            _schedule(ls, other, ls.latest[other])


def _line_in(message: str) -> int:
    import re

    found = re.search(r":(\d+):", message) or re.search(r"line (\d+)", message)
    return int(found.group(1)) if found else 1


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
)
def pull_diagnostics(ls: Server, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    items = _lint_now(ls, doc.uri, doc.version, doc.source.encode("utf-8"))
    return types.RelatedFullDocumentDiagnosticReport(items=items)


def _current(ls: Server, uri: str) -> tuple[bytes, list[Finding], Any] | None:
    doc = ls.workspace.get_text_document(uri)
    data = doc.source.encode("utf-8")
    found = ls.results.get(uri)
    if found is None or found[1] != data:
        _lint_now(ls, uri, doc.version, data)
        found = ls.results.get(uri)
    if found is None:
        return None
    return data, found[2], found[3]


def _edits(fix: Any, data: bytes, lines: list[str]) -> list[types.TextEdit]:
    return [
        types.TextEdit(
            range=types.Range(start=_position(lines, e.start, data), end=_position(lines, e.end, data)),
            new_text=e.text,
        )
        for e in fix.edits
    ]


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL],
        resolve_provider=False,
    ),
)
def code_actions(ls: Server, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    current = _current(ls, uri)
    if current is None:
        return []
    data, findings, _ = current
    lines = _lines(data)
    only = params.context.only
    out: list[types.CodeAction] = []
    want_fix_all = not only or any(str(k).startswith("source") for k in only)
    want_quick = not only or types.CodeActionKind.QuickFix in only
    if want_quick:
        first, last = params.range.start.line, params.range.end.line
        here = [f for f in findings if first <= f.line - 1 <= last]
        import copy

        here = [copy.deepcopy(f) for f in here]
        Linter.resolve(here, data)
        for f in here:
            diag = _diagnostic(f, lines, {})
            if f.fix is not None and f.fix.edits:  # every fixable finding; the unsafe ones say so
                unsafe = f.fix.applicability != "safe"
                out.append(
                    types.CodeAction(
                        title=f"{f.fix.description}{' (unsafe)' if unsafe else ''} [{f.rule}]",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag],
                        is_preferred=not unsafe,
                        edit=types.WorkspaceEdit(changes={uri: _edits(f.fix, data, lines)}),
                    )
                )
            suppress = Linter.suppression(f, data, "reason")
            if suppress is not None:
                out.append(
                    types.CodeAction(
                        title=f"Suppress {f.rule} on this object (kubelint-ml.io/ignore, with a reason)",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag],
                        edit=types.WorkspaceEdit(changes={uri: _edits(suppress, data, lines)}),
                    )
                )
    if want_fix_all and findings:
        path = path_of(uri)
        after = ls.linter.fixed(path, data, ls.unsafe)
        if after != data:
            end = _position(lines, len(data), data)
            out.append(
                types.CodeAction(
                    title="Fix all kubelint-ml findings" + (" (unsafe fixes too)" if ls.unsafe else ""),
                    kind=FIX_ALL,
                    edit=types.WorkspaceEdit(
                        changes={
                            uri: [
                                types.TextEdit(
                                    range=types.Range(start=types.Position(line=0, character=0), end=end),
                                    new_text=after.decode("utf-8"),
                                )
                            ]
                        }
                    ),
                )
            )
    return out


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: Server, params: types.HoverParams) -> types.Hover | None:
    current = _current(ls, params.text_document.uri)
    if current is None:
        return None
    data, findings, session = current
    lines = _lines(data)
    pos = params.position
    texts = []
    for f in findings:
        r = _range(f, lines)
        if r.start.line == pos.line and r.start.character <= pos.character <= max(
            r.end.character, r.start.character + 1
        ):
            texts.append(_help(f.rule, session))
    if not texts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(texts)))


def _help(rule_id: str, session: Any) -> str:
    from kubelint_ml.engine import ruledocs

    rule = session.rules.get(rule_id)
    if rule is None:
        rule = next((r for r in ruledocs.pseudo_rules() if r.id == rule_id), None)
    if rule is None:
        info = session.infos.get(rule_id)
        return f"**{rule_id}**" + (f": {info.title}" if info is not None else "")
    return f"**{rule_id}**: {rule.title}\n\n{ruledocs.render_rule(rule)}"  # what, why, fix: as `rules show`


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="kubelint-ml lsp: %(message)s")
    server.start_io()
