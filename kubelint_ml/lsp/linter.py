"""What the language server knows, without the protocol: a buffer's findings as `check` gives them,
its fixes as `check --fix` makes them, and the suppression the docs describe.

A buffer is linted with the configuration `check` would use for its file (``.kubelint-ml.yaml``
found upward from it, or the one the editor has open, unsaved), the rules, severities, excludes and
Rego policies it selects, and the context the workspace gives (PriorityClasses,
WorkloadPriorityClasses, KubeletConfigurations, resource claims and device classes; CRDs matter to
schema validation only, which the editor does not run): the files of the workspace folders that
mention a context kind, read in the background, each parsed once per change of its bytes and kept
current from disk and from open buffers. The findings are then those of ``kubelint-ml check
<workspace folder>`` for that file.

Every method that builds or uses a session (its rule engine, its policy engines and their helper
process) is called on the server's one worker thread: a Rego engine must stay on the thread that
built it.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubelint_ml.engine.api import IGNORE_ANNOTATION
from kubelint_ml.engine.context import CONTEXT_KINDS, Facts
from kubelint_ml.findings import Finding, RuleInfo
from kubelint_ml.fix import SAFE, Fix, put

# Files the workspace index reads at most (a huge monorepo is indexed only up to this).
MAX_INDEXED_FILES = 20_000
# Seconds between two looks at the modification times of the config's context files outside the
# workspace (read again when they change, as `serve` reads its context files again).
OUTSIDE_EVERY = 1.0
# The bytes of context files the server holds at most (a buffer or file is at most MAX_FILE_BYTES).
MAX_CONTEXT_BYTES = 256 * 1024 * 1024
MAX_FILE_BYTES = 20 * 1024 * 1024
log = logging.getLogger("kubelint-ml.lsp")


class ConfigProblem(Exception):
    """The configuration cannot be used: a diagnostic on the config file, not a dead server."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(message)
        self.path, self.line, self.message = path, line, message


@dataclass
class Session:
    """One configuration, ready to lint with: built again when the config file changes."""

    config: Any
    runner: Any
    infos: dict[str, RuleInfo]
    rules: dict[str, Any]
    finish: Any
    policies: Any = None
    severity: dict = field(default_factory=dict)
    all_ids: set = field(default_factory=set)
    engine: Any = None
    context_gen: int = 0  # the workspace context its facts were made from
    base_config: Any = None  # the config before the workspace's Nodes were added to its profile
    # The config's context files outside the workspace folders (no file-change notification names
    # them): their size and modification time when its facts were made, looked at again once a second
    outside: tuple = ()
    outside_seen: float = 0.0
    root: str | None = None  # the workspace folder whose files give its facts (`check <folder>`)


@dataclass
class Linter:
    roots: list[str] = field(default_factory=list)
    buffers: dict[str, bytes] = field(default_factory=dict)  # open documents, by absolute path
    # The workspace's context: for each file that mentions a context kind, a digest of its bytes and
    # the context objects read from it (each file parsed once per change of its bytes).
    _context: dict[str, tuple[bytes, list]] = field(default_factory=dict)
    _context_bytes: dict[str, int] = field(default_factory=dict)
    _context_gen: int = 0
    # By config file and workspace folder: each folder is its own `check <folder>`, with its own facts.
    _sessions: dict[tuple[str | None, str | None], tuple[bytes | None, Session]] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    indexed: threading.Event = field(default_factory=threading.Event)

    # ------------------------------------------------------------------
    # The workspace index

    def index(self) -> dict[str, bytes]:
        """The workspace folders' files that mention a context kind, read (in the background, within
        :data:`MAX_CONTEXT_BYTES` in all); :meth:`take_index` takes them in on the worker."""
        from kubelint_ml.input.sources import SourceError, collect, read
        from kubelint_ml.run.facts import mentions_context

        found: dict[str, bytes] = {}
        seen = total = 0
        for root in self.roots:
            if not os.path.isdir(root):  # taken as written: a folder that is not there is not a glob
                continue
            try:
                sources = collect([root])
            except SourceError:
                continue
            for s in sources:
                seen += 1
                if seen > MAX_INDEXED_FILES:
                    break
                try:
                    data = read(s, MAX_FILE_BYTES)
                except OSError:
                    continue
                if len(data) > MAX_FILE_BYTES or not mentions_context(data) or not _editor_context(data):
                    continue
                if total + len(data) > MAX_CONTEXT_BYTES:
                    log.warning("the workspace's context files pass %d bytes: the rest are not read", MAX_CONTEXT_BYTES)
                    return found
                total += len(data)
                found[os.path.abspath(s.real)] = data
        return found

    def take_index(self, found: dict[str, bytes]) -> None:
        with self._lock:
            for path, data in found.items():
                if path not in self._context:
                    self._set_context(path, data)
            self._context_gen += 1
        self.indexed.set()

    def _set_context(self, path: str, data: bytes) -> bool:
        """Read one context file's objects (only when its bytes changed). True when they did."""
        from hashlib import blake2b

        from kubelint_ml.input.loader import load
        from kubelint_ml.input.objects import unpack

        digest = blake2b(data, digest_size=16).digest()
        known = self._context.get(path)
        if known is not None and known[0] == digest:
            return False
        objects: list[Any] = []
        if not _editor_context(data):
            self._context[path] = (digest, objects)
            self._context_bytes[path] = 0
            return known is not None and bool(known[1])
        # Named as `check <folder>` names them: the rules compare a fact's file with the linted one (a
        # missing claim is certain when the pod's own file defines claims; LocalQueues hold below their
        # directory) and messages quote it.
        display = _display(path, self.roots)
        try:
            for doc in load(data).documents:
                objects.extend(o for o in unpack(doc, display).objects if o.kind in EDITOR_CONTEXT)
        except Exception:  # noqa: BLE001 - a context file being typed may not parse: it gives nothing
            objects = []
        self._context[path] = (digest, objects)
        self._context_bytes[path] = len(data)
        return True

    def in_workspace(self, path: str) -> bool:
        return any(_inside(path, root) for root in self.roots)

    def disk(self, path: str) -> bytes | None:
        """A workspace file's bytes from disk: a regular file within the size limit, else None (a
        device, a FIFO, a socket is never opened for reading)."""
        from kubelint_ml.input.sources import read_regular

        if not self.in_workspace(path):
            return None
        try:
            return read_regular(path, MAX_FILE_BYTES)
        except OSError:
            return None

    @staticmethod
    def mentions_context(data: bytes) -> bool:
        from kubelint_ml.run.facts import mentions_context

        return mentions_context(data)

    def is_context(self, path: str) -> bool:
        """Whether ``path`` is a context file (read from the event loop: no lock, which a lint in
        progress holds; a dict's membership test is atomic)."""
        return path in self._context

    def file_changed(self, path: str, data: bytes | None) -> bool:
        """A file's new bytes (``None``: deleted), from disk or a buffer. True when the context or a
        configuration changed (every open buffer should then be linted again)."""
        from kubelint_ml.run.config import CONFIG_NAMES
        from kubelint_ml.run.facts import mentions_context

        path = os.path.abspath(path)
        with self._lock:
            if os.path.basename(path) in CONFIG_NAMES:
                self._drop_sessions()  # closed here, on the worker thread that built them
                return True
            had = path in self._context
            if data is not None and len(data) <= MAX_FILE_BYTES and mentions_context(data):
                others = sum(n for p, n in self._context_bytes.items() if p != path)
                if others + len(data) > MAX_CONTEXT_BYTES:
                    log.warning(
                        "%s: not taken as context: the workspace's context passes %d bytes", path, MAX_CONTEXT_BYTES
                    )
                    return False
                changed = self._set_context(path, data)
            else:
                changed = had
                self._context.pop(path, None)
                self._context_bytes.pop(path, None)
            if changed:
                self._context_gen += 1
            return changed

    # ------------------------------------------------------------------
    # Sessions

    def _config_path(self, path: str) -> str | None:
        from kubelint_ml.run.config import find_config

        found = find_config(os.path.dirname(os.path.abspath(path)))
        return str(found) if found else None

    def session(self, path: str) -> Session:
        """The session for a file's config: one per config file, built again (and the one it replaces
        closed: its policy helper process reaped) when the config's text or the context changes."""
        config_path = self._config_path(path)
        text = self.buffers.get(config_path) if config_path else None
        with self._lock:
            root = self.root_of(path)
            found = self._sessions.get((config_path, root))
            if found is not None and found[0] == text:
                session = found[1]
                if session.context_gen != self._context_gen or self._outside_changed(session):
                    self._refresh(session)  # the context changed: new facts, the same rules and
                return session  # policies (no compile, no new helper)
            if found is not None:
                _close(found[1])
                del self._sessions[(config_path, root)]
            session = self._build(config_path, text, root)
            self._sessions[(config_path, root)] = (text, session)
            return session

    def _outside(self, config: Any) -> tuple:
        """(path, size, modification time) of each of the config's context files outside the workspace."""
        from kubelint_ml.input.sources import SourceError, collect

        out = []
        for path in config.context:
            if self.in_workspace(os.path.abspath(path)):
                continue
            try:
                found = [s.real for s in collect([path])]
            except SourceError:
                found = []
            for name in [path, *found]:
                try:
                    st = os.stat(name)
                except OSError:
                    out.append((name, -1, -1))
                    continue
                out.append((name, st.st_size, st.st_mtime_ns))
        return tuple(out)

    def _outside_changed(self, session: Session) -> bool:
        import time

        base = session.base_config if session.base_config is not None else session.config
        if not base.context or time.monotonic() - session.outside_seen < OUTSIDE_EVERY:
            return False
        session.outside_seen = time.monotonic()
        return self._outside(base) != session.outside

    def outside_changed(self, path: str | None = None) -> bool:
        """Whether a config's context file outside the workspace changed (``path``: the one a
        file-change notification names): the sessions that read it take it in at their next lint."""
        changed = False
        with self._lock:
            for _, session in self._sessions.values():
                if not session.outside:
                    continue
                if path is not None and not any(os.path.abspath(name) == path for name, _, _ in session.outside):
                    continue
                session.outside_seen = 0.0  # looked at again at the next lint, whatever the time
                changed = self._outside_changed(session) or changed
                session.outside_seen = 0.0
        return changed

    def reads(self, path: str, context: str) -> bool:
        """Whether the lint of ``path`` takes the objects of the context file ``context`` (as
        :meth:`_facts` chooses them for its folder), or a configuration changed."""
        from kubelint_ml.run.config import CONFIG_NAMES

        context = os.path.abspath(context)
        if os.path.basename(context) in CONFIG_NAMES or not self.in_workspace(context):
            return True
        root = self.root_of(os.path.abspath(path))
        return root is None or _inside(context, root)

    def root_of(self, path: str) -> str | None:
        """The workspace folder holding ``path`` (the first, as the render takes it), or None."""
        return next((r for r in self.roots if _inside(path, r)), None)

    def _facts(self, config: Any, root: str | None) -> Facts:
        from kubelint_ml.input.sources import Source
        from kubelint_ml.run.facts import _profile_facts, context_facts

        facts = Facts()
        # `check <folder>`'s inputs: the folder's files (another folder of the workspace is not among
        # them), and the buffers open from outside the workspace
        mine = [p for p in self._context if root is None or _inside(p, root) or not self.in_workspace(p)]
        for path in mine:
            for obj in self._context[path][1]:
                facts.add_object(obj)
        # A context file of the config inside the folder is one of its inputs: it gave its facts
        # above, once, as an input (as `check` skips a context file it lints).
        inputs = [Source(p, p) for p in mine if self.in_workspace(p)]
        context_facts(facts, list(config.context), inputs, config)
        _profile_facts(facts, config)
        return facts

    def _refresh(self, session: Session) -> None:
        from kubelint_ml.run import lint as run_lint
        from kubelint_ml.run.config import ConfigError
        from kubelint_ml.run.facts import with_cluster_nodes
        from kubelint_ml.run.runner import Runner

        base = session.base_config if session.base_config is not None else session.config
        outside = self._outside(base)  # (before the files are read: a change meanwhile is seen next time)
        try:
            facts = self._facts(base, session.root)
        except ConfigError as e:
            raise ConfigProblem(base.path or "", getattr(e, "line", 0) or 1, str(e)) from None
        config = with_cluster_nodes(base, facts)  # the workspace's Nodes as node pools, as they are now
        session.config = config
        session.finish = lambda f: run_lint._finish(f, config)
        session.runner = Runner(session.engine, config, facts, None, False, None, session.policies)
        session.context_gen = self._context_gen
        session.outside = outside

    def _drop_sessions(self) -> None:
        for _, session in self._sessions.values():
            _close(session)
        self._sessions.clear()

    def close(self) -> None:
        """Close every session (their policy helper processes are reaped)."""
        with self._lock:
            self._drop_sessions()

    def _build(self, config_path: str | None, text: bytes | None, root: str | None) -> Session:
        from kubelint_ml.engine.core import Engine
        from kubelint_ml.run import lint as run_lint
        from kubelint_ml.run.config import ConfigError, load_config
        from kubelint_ml.run.facts import with_cluster_nodes
        from kubelint_ml.run.runner import Runner
        from kubelint_ml.run.selection import SelectionError, policy_off, select_rules

        try:
            if text is not None and config_path:  # the editor's unsaved config
                config = load_unsaved_config(config_path, text)
            else:
                config = load_config(config_path)
            policies = None
            paths = list(config.rules_dirs)
            if paths:
                from kubelint_ml.policy.lint import compile_policies

                policies = compile_policies(paths, (), False, list(config.context), False)
            policy_ids = policies.rule_ids() if policies is not None else set()
            rules, severity, all_ids = select_rules(config, (), False, (), (), None, policy_ids)
            if policies is not None:
                policies.choose(policy_off(config, policy_ids, ()), severity)
            rules = [r for r in rules if r.family != "usage"]  # no Prometheus per keystroke: see docs/editors.md
            base = config
            outside = self._outside(config)
            facts = self._facts(config, root)
            config = with_cluster_nodes(config, facts)  # the workspace's Nodes as node pools
        except (ConfigError, SelectionError) as e:
            raise ConfigProblem(config_path or "", getattr(e, "line", 0) or 1, str(e)) from None
        except Exception as e:  # noqa: BLE001 - a policy that does not compile, a bad context file
            raise ConfigProblem(config_path or "", 1, f"{type(e).__name__}: {e}") from None
        known = set(all_ids) | policy_ids
        engine = Engine(rules, severity_overrides=severity, known_rule_ids=known)
        runner = Runner(engine, config, facts, None, False, None, policies)
        infos = run_lint._rule_infos(rules, severity, None, policies)
        return Session(
            config,
            runner,
            infos,
            {r.id: r for r in rules},
            lambda f: run_lint._finish(f, config),
            policies,
            dict(severity),
            set(all_ids),
            engine,
            self._context_gen,
            base,
            outside,
            root=root,
        )

    # ------------------------------------------------------------------
    # Linting

    def lint(self, path: str, data: bytes) -> tuple[list[Finding], list[Finding], Session]:
        """(active findings, suppressed findings, the session) for a buffer: as `check` finds them."""
        s = self.session(path)
        display = _display(path, self.roots)
        with self._lock:  # one lint at a time: the runner and the policies' helper are not shared
            out = s.runner.lint_bytes(data, display)
            if s.policies is not None:
                s.policies.flush()
        found = s.finish(out.findings)
        return [f for f in found if f.suppressed is None], [f for f in found if f.suppressed is not None], s

    def fixed_from(
        self, path: str, data: bytes, active: list[Finding], suppressed: list[Finding], unsafe: bool
    ) -> bytes:
        """The buffer as `check --fix` (``--unsafe-fixes``) would write it, from the findings a lint of
        ``data`` already gave (copies: they are changed)."""
        from kubelint_ml.fix.apply import fix_file

        display = _display(path, self.roots)

        def relint(new: bytes) -> tuple[list[Finding], list[Finding]]:
            a, b, _ = self.lint(path, new)
            return a, b

        return fix_file(display, data, active, suppressed, unsafe=unsafe, relint=relint).after

    def owner(self, path: str) -> tuple[str, str] | None:
        """``(tool, directory)`` of the Helm chart or kustomization the file belongs to, or None."""
        from kubelint_ml.input.charts import Owners

        stops = self.roots or [os.path.dirname(path)]
        return Owners(stops).of_file(path)

    def rendered(self, paths: list[str]) -> dict[str, list[Finding]]:
        """The findings that map back to each of ``paths`` once the workspace folder holding it is
        rendered and linted as `check <folder>` does (charts with helm, kustomizations built): one
        run per folder (and configuration), whatever the number of its files asked for."""
        from kubelint_ml.run.inputs import RunInputs
        from kubelint_ml.run.lint import run

        groups: dict[tuple[str, int], tuple[Session, list[str]]] = {}
        for path in paths:
            root = next((r for r in self.roots if _inside(path, r)), os.path.dirname(os.path.abspath(path)))
            s = self.session(path)
            groups.setdefault((root, id(s)), (s, []))[1].append(path)
        out: dict[str, list[Finding]] = {}
        for (root, _), (s, members) in groups.items():
            here = os.getcwd()
            os.chdir(root)  # display paths as `check` run from the folder gives them
            try:
                with self._lock:
                    inputs = RunInputs(
                        s.base_config if s.base_config is not None else s.config,  # run adds the Nodes itself
                        list(s.rules.values()),
                        severity=s.severity,
                        all_rule_ids=s.all_ids,
                        policies=s.policies,
                    )
                    result, _ = run(["."], inputs)
            finally:
                os.chdir(here)
            by_file: dict[str, list[Finding]] = {}
            for f in result.findings:
                by_file.setdefault(os.path.realpath(os.path.join(root, f.file)), []).append(f)
            for path in members:
                out[path] = by_file.get(os.path.realpath(path), [])
        return out


class Fixes:
    """The quick fixes of one version of a buffer, made on demand from one parse of it: the buffer's
    span tree and its objects are made once (:meth:`warm`, after the diagnostics are out); a finding's
    fix and suppression then cost that finding's edits, whatever the size of the buffer."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._text: Any = None
        self._why: str | None = None
        self._docs: dict[int, Any] | None = None
        self._objects: dict[int, list] = {}
        self._parses: bool | None = None
        self._lock = threading.Lock()

    def warm(self) -> None:
        with self._lock:
            self._warm()

    def _warm(self) -> None:
        from kubelint_ml.fix.yamltext import Text
        from kubelint_ml.input.loader import load

        if self._text is None and self._why is None:
            try:
                self._text = Text(self.data)
            except UnicodeDecodeError:
                self._why = "the file is not UTF-8"
        if self._docs is None:
            try:
                loaded = load(self.data)
                self._docs = {d.index: d for d in loaded.documents}
                self._parses = not loaded.problems
            except Exception:  # noqa: BLE001 - a buffer the loader refuses: no suppression offered
                self._docs, self._parses = {}, False

    def fix(self, f: Finding) -> Fix | None:
        """A copy of the finding's fix, resolved against the buffer (None: no edit to offer)."""
        from kubelint_ml.fix.apply import rendered
        from kubelint_ml.fix.yamltext import Refused

        if f.fix is None or rendered(f):
            return None
        self.warm()
        if self._text is None:
            return None
        fix = copy.deepcopy(f.fix)
        try:
            fix.edits = tuple(self._text.resolve(fix))
        except Refused:
            return None
        fix.resolved = True
        return fix if fix.edits else None

    def suppression(self, f: Finding, reason: str) -> Fix | None:
        self.warm()
        assert self._docs is not None
        doc = self._docs.get(f.document)
        if doc is None or f.object is None or self._text is None:
            return None
        from kubelint_ml.input.objects import unpack

        if f.document not in self._objects:
            self._objects[f.document] = unpack(doc, f.file).objects
        for obj in self._objects[f.document]:
            if obj.ref.kind == f.object.kind and obj.ref.name == f.object.name:
                probe = _suppression_probe(f, obj, reason)
                return self.fix(probe)
        return None

    def keeps_parsing(self, after: bytes) -> bool:
        """Whether the buffer, which parsed, still parses after an edit (as `check --fix` undoes a
        round whose text would not parse). Checked where a parse is cheap, and always on text with
        CR-only line ends, where the fix engine's edits are known to go wrong."""
        from kubelint_ml.input.loader import load

        self.warm()
        if not self._parses:
            return True
        if len(self.data) > 256 * 1024 and not _LONE_CR.search(self.data):
            return True
        try:
            return not load(after).problems
        except Exception:  # noqa: BLE001
            return False


_LONE_CR = re.compile(rb"\r(?!\n)")


# The context kinds the editor's rules read. CustomResourceDefinitions are context for `check
# --schema` only (schema validation is not run in the editor): a file of CRDs is neither parsed nor
# kept, however large.
EDITOR_CONTEXT = frozenset(k for k in CONTEXT_KINDS if k != "CustomResourceDefinition")
_EDITOR_CONTEXT_RE = re.compile(
    rb"""kind["']?\s*:\s*["']?(""" + "|".join(sorted(EDITOR_CONTEXT)).encode() + rb""")\b"""
)


def _editor_context(data: bytes) -> bool:
    return _EDITOR_CONTEXT_RE.search(data) is not None


def _suppression_probe(f: Finding, obj: Any, reason: str) -> Finding:
    current = obj.annotations.get(IGNORE_ANNOTATION)
    entry = f"{f.rule}={reason}" if reason else f.rule
    value = f"{current},{entry}" if isinstance(current, str) and current.strip() else entry
    fix = Fix(f"suppress {f.rule}", SAFE, "", (put(("metadata", "annotations", IGNORE_ANNOTATION), value),))
    probe = Finding(f.rule, f.severity, f.message, "", f.file, f.line, f.column, document=f.document)
    probe.fix = fix.bound(obj.base, f.document)
    return probe


def _close(session: Session) -> None:
    if session.policies is not None:
        try:
            session.policies.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass


def finding_range(doc: Any, line: int, column: int, encoding: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The LSP range of a finding's field: the key or one-line value that starts at its line and
    column (the loader counts lines as the LSP does, at CR, LF and CRLF, and columns in characters),
    in the negotiated encoding."""
    from kubelint_ml.report.sarif import _token_end

    i = max(line - 1, 0)
    if i >= len(doc.starts):
        end = doc.position(len(doc.text), encoding)
        return end, end
    text = doc.line_text(i)
    col = min(max(column - 1, 0), len(text))
    end = _token_end(text, col) if text else None
    end = end if end is not None and end > col else len(text.rstrip())
    end = max(end, col)
    start = doc.starts[i]
    return doc.position(start + col, encoding), doc.position(start + end, encoding)


def load_unsaved_config(path: str, text: bytes) -> Any:
    """A config as the editor holds it, unsaved: read from a temporary file beside ``path`` (its
    relative paths mean what they will mean once saved), errors naming ``path``. Raises ConfigError."""
    import tempfile

    from kubelint_ml.run.config import ConfigError, load_config

    try:
        fd, name = tempfile.mkstemp(prefix=".kubelint-ml-", suffix=".yaml", dir=os.path.dirname(path))
    except OSError as e:
        raise ConfigError(f"{path}: the unsaved config cannot be checked here ({e.strerror}); save it") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(text)
        try:
            config = load_config(name)
        except ConfigError as e:
            raise ConfigError(str(e).replace(name, path)) from None
    finally:
        os.unlink(name)
    config.path = path
    return config


def _inside(path: str, root: str) -> bool:
    try:
        Path(path).resolve().relative_to(Path(root).resolve())
    except ValueError:
        return False
    return True


def _display(path: str, roots: list[str]) -> str:
    """The path as `check` run from the workspace folder would show it."""
    for root in roots:
        try:
            rel = Path(path).resolve().relative_to(Path(root).resolve())
        except ValueError:
            continue
        return rel.as_posix()
    return path
