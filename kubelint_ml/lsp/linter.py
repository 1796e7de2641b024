"""What the language server knows, without the protocol: a buffer's findings as `check` gives them,
its fixes as `check --fix` makes them, and the suppression the docs describe.

A buffer is linted with the configuration `check` would use for its file (``.kubelint-ml.yaml``
found upward from it, or the one the editor has open, unsaved), the rules, severities, excludes and
Rego policies it selects, and the context the workspace gives (PriorityClasses,
WorkloadPriorityClasses, KubeletConfigurations, CRDs): the files of the workspace folders that
mention a context kind, read in the background and kept current from disk and from open buffers.
The findings are then those of ``kubelint-ml check <workspace folder>`` for that file.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubelint_ml.engine.api import IGNORE_ANNOTATION
from kubelint_ml.engine.context import Facts
from kubelint_ml.findings import Finding, RuleInfo
from kubelint_ml.fix import SAFE, Fix, put

# Files the workspace index reads at most (a huge monorepo is indexed only up to this).
MAX_INDEXED_FILES = 20_000


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


@dataclass
class Linter:
    roots: list[str] = field(default_factory=list)
    buffers: dict[str, bytes] = field(default_factory=dict)  # open documents, by absolute path
    _context: dict[str, bytes] = field(default_factory=dict)  # files that mention a context kind
    _sessions: dict[tuple, Session] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    indexed: threading.Event = field(default_factory=threading.Event)

    # ------------------------------------------------------------------
    # The workspace index

    def index(self) -> None:
        """Read the workspace folders' files that mention a context kind (in the background)."""
        from kubelint_ml.input.sources import SourceError, collect, read
        from kubelint_ml.run.facts import mentions_context

        found: dict[str, bytes] = {}
        seen = 0
        for root in self.roots:
            try:
                sources = collect([root])
            except SourceError:
                continue
            for s in sources:
                seen += 1
                if seen > MAX_INDEXED_FILES:
                    break
                try:
                    data = read(s, 20 * 1024 * 1024)
                except OSError:
                    continue
                if mentions_context(data):
                    found[os.path.abspath(s.real)] = data
        with self._lock:
            for path, data in found.items():
                self._context.setdefault(path, data)
            self._sessions.clear()
        self.indexed.set()

    def file_changed(self, path: str, data: bytes | None) -> bool:
        """A file's new bytes (``None``: deleted), from disk or a buffer. True when the context or a
        configuration changed (every open buffer should then be linted again)."""
        from kubelint_ml.run.config import CONFIG_NAMES
        from kubelint_ml.run.facts import mentions_context

        path = os.path.abspath(path)
        with self._lock:
            if os.path.basename(path) in CONFIG_NAMES:
                self._sessions.clear()
                return True
            had = path in self._context
            if data is not None and mentions_context(data):
                changed = self._context.get(path) != data
                self._context[path] = data
            else:
                changed = had
                self._context.pop(path, None)
            if changed:
                self._sessions.clear()
            return changed

    # ------------------------------------------------------------------
    # Sessions

    def _config_path(self, path: str) -> str | None:
        from kubelint_ml.run.config import find_config

        found = find_config(os.path.dirname(os.path.abspath(path)))
        return str(found) if found else None

    def session(self, path: str) -> Session:
        config_path = self._config_path(path)
        text = self.buffers.get(config_path) if config_path else None
        key = (config_path, text)
        with self._lock:
            found = self._sessions.get(key)
            if found is None:
                found = self._sessions[key] = self._build(config_path, text)
            return found

    def _build(self, config_path: str | None, text: bytes | None) -> Session:
        from kubelint_ml.engine.core import Engine
        from kubelint_ml.run import lint as run_lint
        from kubelint_ml.run.config import ConfigError, load_config
        from kubelint_ml.run.facts import _profile_facts, add_facts, context_facts, with_cluster_nodes
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
            facts = Facts()
            for path, data in self._context.items():
                add_facts(facts, self.buffers.get(path, data), path, config.limits)
            context_facts(facts, list(config.context), [], config)
            _profile_facts(facts, config)
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

    def fixed(self, path: str, data: bytes, unsafe: bool) -> bytes:
        """The buffer as `check --fix` (``--unsafe-fixes``) would write it."""
        from kubelint_ml.fix.apply import fix_file

        active, suppressed, s = self.lint(path, data)
        display = _display(path, self.roots)

        def relint(new: bytes) -> tuple[list[Finding], list[Finding]]:
            a, b, _ = self.lint(path, new)
            return a, b

        return fix_file(display, data, active, suppressed, unsafe=unsafe, relint=relint).after

    def owner(self, path: str) -> tuple[str, str] | None:
        """``(tool, directory)`` of the Helm chart or kustomization the file belongs to, or None."""
        from kubelint_ml.input.charts import Owners

        stops = self.roots or [os.path.dirname(path)]
        return Owners(stops).of(os.path.realpath(os.path.dirname(os.path.abspath(path))))

    def rendered(self, path: str) -> list[Finding]:
        """The findings that map back to ``path`` once the workspace folder holding it is rendered and
        linted as `check <folder>` does (charts with helm, kustomizations built): run on save."""
        from kubelint_ml.run.inputs import RunInputs
        from kubelint_ml.run.lint import run

        root = next((r for r in self.roots if _inside(path, r)), os.path.dirname(os.path.abspath(path)))
        s = self.session(path)
        here = os.getcwd()
        os.chdir(root)  # display paths as `check` run from the folder gives them
        try:
            with self._lock:
                inputs = RunInputs(
                    s.config,
                    list(s.rules.values()),
                    severity=s.severity,
                    all_rule_ids=s.all_ids,
                    policies=s.policies,
                )
                result, _ = run(["."], inputs)
        finally:
            os.chdir(here)
        real = os.path.realpath(path)
        return [f for f in result.findings if os.path.realpath(os.path.join(root, f.file)) == real]

    @staticmethod
    def resolve(findings: list[Finding], data: bytes) -> None:
        from kubelint_ml.fix.apply import resolve

        resolve([f for f in findings if f.fix is not None], data)

    @staticmethod
    def suppression(f: Finding, data: bytes, reason: str) -> Fix | None:
        """The edit that adds ``rule=reason`` to the object's ``kubelint-ml.io/ignore`` annotation."""
        from kubelint_ml.fix.apply import resolve
        from kubelint_ml.input.loader import load
        from kubelint_ml.input.objects import unpack

        docs = load(data).documents
        doc = next((d for d in docs if d.index == f.document), None)
        if doc is None or f.object is None:
            return None
        for obj in unpack(doc, f.file).objects:
            if obj.ref.kind == f.object.kind and obj.ref.name == f.object.name:
                current = obj.annotations.get(IGNORE_ANNOTATION)
                entry = f"{f.rule}={reason}" if reason else f.rule
                value = f"{current},{entry}" if isinstance(current, str) and current.strip() else entry
                fix = Fix(f"suppress {f.rule}", SAFE, "", (put(("metadata", "annotations", IGNORE_ANNOTATION), value),))
                probe = Finding(f.rule, f.severity, f.message, "", f.file, f.line, f.column, document=f.document)
                probe.fix = fix.bound(obj.base, f.document)
                resolve([probe], data)
                return probe.fix if probe.fix.edits else None
        return None


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
