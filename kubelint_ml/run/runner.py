"""The second pass for one file: bytes -> documents -> objects -> findings."""

from __future__ import annotations

import os
from typing import Any

from kubelint_ml.engine import comments
from kubelint_ml.engine.api import SCHEMA_INVALID, SCHEMA_UNAVAILABLE
from kubelint_ml.engine.context import Facts
from kubelint_ml.engine.core import Context, Engine, parse_error
from kubelint_ml.findings import Finding, is_builtin_group
from kubelint_ml.input import charts
from kubelint_ml.input.kinds import configure as configure_kinds
from kubelint_ml.input.loader import (
    Limits,
    LoadResult,
    document_start_before,
    load,
    locate,
    looks_like_template,
    render_path,
)
from kubelint_ml.input.objects import K8sObject, clip, unpack
from kubelint_ml.input.sources import Source, read
from kubelint_ml.lazyre import LazyPattern
from kubelint_ml.records import Record
from kubelint_ml.run.config import Config, tab_hint

# A bare `{{NAME}}` (or `{{ name }}`): a value a script fills in (sed), not Go template syntax (a Go
# template names a field, `{{ .Values.x }}`, a variable, `{{ $x }}`, or a keyword, `{{ end }}`).
_BARE_PLACEHOLDER = LazyPattern(r"\{\{\s*(?!(?:end|else|break|continue)\b)[A-Za-z_][A-Za-z0-9_]*\s*\}\}")
_DIRECTIVE = LazyPattern(r"\{\{.*?\}\}")


HELM_MESSAGE = (
    "Helm/Go template directive ({{ ... }}): this is a template, not a "
    "manifest; lint the rendered output (helm template ... | kubelint-ml check -)"
)


def _bare_placeholder(data: bytes, line: int) -> tuple[int, str] | None:
    """The column and parse-error message of a bare ``{{NAME}}`` placeholder on ``line``, the first
    ``{{ }}`` there; None when that is Go template syntax (or no ``{{ }}`` is there)."""
    text = _line_text(data, line)
    found = _DIRECTIVE.search(text)
    if not found or not _BARE_PLACEHOLDER.fullmatch(found.group()):
        return None
    return found.start() + 1, (
        f"template placeholder {clip(found.group())} where a value should be (YAML reads it as a mapping): "
        "fill it in (envsubst, sed) and lint the result"
    )


# A value that starts with a one-brace placeholder and goes on (`image: {username}/server:latest`): YAML
# reads the braces as a flow mapping, and the text after it is a syntax error.
_BRACE_PLACEHOLDER = LazyPattern(r"(?:^|[:-])[ \t]+(\{[A-Za-z_][A-Za-z0-9_.-]*\})[^\s,}\]]")


def _brace_placeholder(data: bytes, line: int) -> tuple[int, str] | None:
    """The column and parse-error message of a one-brace placeholder that starts a value on ``line``
    (the cause of LibYAML's "did not find expected key" there), or None."""
    found = _BRACE_PLACEHOLDER.search(_line_text(data, line))
    if found is None:
        return None
    return found.start(1) + 1, (
        f"placeholder {clip(found.group(1))} at the start of a value (YAML reads it as a mapping): "
        "fill it in, or quote the value"
    )


def _line_text(data: bytes, line: int) -> str:
    lines = data.split(b"\n", line)
    return lines[line - 1].decode("utf-8", "replace") if len(lines) >= line else ""


class FileResult(Record):
    findings: list[Finding]
    documents: int
    objects: int
    notes: list[str]
    __slots__ = _fields = ("findings", "documents", "objects", "notes")

    def __init__(
        self,
        findings: list[Finding] | None = None,
        documents: int = 0,
        objects: int = 0,
        notes: list[str] | None = None,
    ) -> None:
        self.findings = [] if findings is None else findings
        self.documents = documents
        self.objects = objects
        self.notes = [] if notes is None else notes

    def add(self, other: FileResult) -> None:
        self.findings.extend(other.findings)
        self.notes.extend(other.notes)
        self.documents += other.documents
        self.objects += other.objects


class Runner(Record):
    engine: Engine
    config: Config
    facts: Facts
    schema: Any  # kubelint_ml.k8s.schema.SchemaValidator when --schema
    verbose: bool
    usage: Any  # kubelint_ml.usage.model.Usage when a usage source is configured
    policies: Any  # kubelint_ml.policy.lint.Policies: Rego and Gatekeeper policies
    combined: list  # (file, document) pairs, for policies.combine
    # JSON and SARIF print each fix's edits: resolved here, against the bytes just parsed (in the
    # worker that linted the file), instead of reading and parsing every file again after the run
    resolve_fixes: bool
    __slots__ = _fields = (
        "engine",
        "config",
        "facts",
        "schema",
        "verbose",
        "usage",
        "policies",
        "combined",
        "resolve_fixes",
    )

    def __init__(
        self,
        engine: Engine,
        config: Config,
        facts: Facts,
        schema: Any = None,
        verbose: bool = False,
        usage: Any = None,
        policies: Any = None,
        combined: list | None = None,
        resolve_fixes: bool = False,
    ) -> None:
        self.engine = engine
        self.config = config
        self.facts = facts
        self.schema = schema
        self.verbose = verbose
        self.usage = usage
        self.policies = policies
        self.combined = [] if combined is None else combined
        self.resolve_fixes = resolve_fixes

    def lint_bytes(
        self,
        data: bytes,
        display: str,
        size: int | None = None,
        piped: bool | None = None,
        loaded: LoadResult | None = None,
    ) -> FileResult:
        """One file's findings; ``piped``: read from standard input (by default: shown as ``<stdin>``);
        ``loaded``: the parse of ``data`` the first pass made (:func:`kubelint_ml.run.facts.first_pass`): without
        LibYAML's events, which fix edits then parse again (only for a file with a fix to resolve)."""
        out = FileResult()
        limits: Limits = self.config.limits
        if len(data) > limits.max_file_bytes:
            real = max(size or 0, len(data))
            # A stream read up to the limit (stdin) says only that it is longer.
            amount = "" if size is None and real == limits.max_file_bytes + 1 else f"{real} bytes, "
            out.findings.append(
                parse_error(
                    display,
                    1,
                    1,
                    f"file is {amount}over the {limits.max_file_bytes}-byte limit (limits.maxFileBytes); not linted",
                )
            )
            return out
        # Rendered output (ours, or helm's or kustomize's piped in) is YAML whatever `{{` its
        # strings hold (an Alertmanager template in a ConfigMap): no template check there.
        if piped is None:
            piped = display == "<stdin>"
        rendered = display in charts.STREAMS or (piped and charts.has_markers(data))
        tline = 0 if rendered else looks_like_template(data)
        configure_kinds(self.config.kinds)
        if loaded is None:
            loaded = load(data, limits, keep_events=self.resolve_fixes)  # fix edits come from its events
        # A `{{` the YAML reads as text (an Argo parameter in a script or a quoted string) is
        # the workflow's business: only a file that does not read as YAML from the directive on
        # is a template.
        placeholder = _bare_placeholder(data, tline) if tline and loaded.problems else None
        if placeholder is None and tline and loaded.problems and loaded.problems[0].line >= tline:
            out.findings.append(parse_error(display, tline, 1, HELM_MESSAGE))
            # The documents that end before the directive's document are YAML as written (a GKE
            # sample's Deployment above a Secret whose token is `{{HF_TOKEN}}`): linted as they are.
            opened = document_start_before(data, tline)
            kept = [d for d in loaded.documents if d.line < opened] if opened else []
            if not kept:
                return out
            loaded = LoadResult(kept, [], loaded.events)
        for p in loaded.problems:
            if p.foreign:  # another tool's file (CloudFormation, mkdocs): skipped as any non-manifest is
                if self.verbose:
                    out.notes.append(f"{display}:{p.line}: skipped: not a Kubernetes manifest ({p.message})")
                continue
            message, column = p.message, p.column
            if "cannot start any token" in message:
                message += tab_hint(data, p.line)
            # A bare `{{NAME}}` a script fills in is no Go template: its document is the parse-error,
            # said as what it is, and the other documents are read as YAML (GKE's `{{HF_TOKEN}}`).
            found = _bare_placeholder(data, p.line) if placeholder is not None else None
            if found is None and message.startswith("invalid YAML"):
                found = _brace_placeholder(data, p.line)
            if found is not None:
                column, message = found
            out.findings.append(parse_error(display, p.line, column, message, p.document))
        if self.verbose and not loaded.documents and not loaded.problems:
            out.notes.append(f"{display}: skipped: empty file (no YAML documents)")
        ctx = Context(profile=self.config.profile, facts=self.facts, usage=self.usage, wants_notes=self.verbose)
        policy_units: list = []
        # the first pass's objects of this file, when it unpacked them (for the same file name)
        done = loaded.unpacked
        for i, doc in enumerate(loaded.documents):
            out.documents += 1
            unpacked = done[i] if done is not None else unpack(doc, display)
            if self.policies is not None:
                policy_units.append((doc, unpacked.objects))
            for prob in unpacked.problems:
                line, col, found = locate(prob.root, prob.path)
                out.findings.append(
                    parse_error(display, line, col, prob.message, doc.index, prob.ref, render_path(found))
                )
            if self.verbose:
                for s in unpacked.skipped:
                    out.notes.append(f"{display}:{s.line}: skipped: {s.reason}")
            for obj in unpacked.objects:
                out.objects += 1
                out.findings.extend(self.engine.evaluate(obj, ctx))
                if self.schema is not None:
                    out.findings.extend(self._schema(obj))
        if self.policies is not None:
            # the documents as conftest reads them (a licence header above `---` is a null document)
            policy_units = self.policies.documents(data, policy_units)
        if policy_units:
            if self.policies.combine:
                self.combined.extend((display, doc) for doc, _ in policy_units)
            # evaluated in batches: see Policies.flush, called by whoever adds up the results
            self.policies.defer(display, policy_units, out.findings, out.notes if self.verbose else None)
        out.notes.extend(ctx.notes)
        if comments.MARKER in data:  # `# kubelint-ml: ignore[...]` comments
            out.findings.extend(comments.apply(out.findings, data, display, self.engine.known_ids))
        if rendered:
            from kubelint_ml.input.render import map_back

            map_back(out.findings, data, display)
        if self.resolve_fixes:
            fixable = [f for f in out.findings if f.fix is not None and not f.fix.resolved]
            if fixable:
                from kubelint_ml.fix.apply import resolve

                resolve(fixable, data, loaded.events)
        return out

    def _schema(self, obj: K8sObject) -> list[Finding]:
        problems = self.schema.validate(obj.data)
        if obj.kind == "CustomResourceDefinition":  # what the API server would refuse in the CRD itself
            problems = (problems or []) + self.schema.crd_rejections(obj.data)
        if problems is None:
            ref = obj.ref
            builtin = is_builtin_group(obj.group) and bool(ref.apiVersion)
            since = self.schema.built_in_from(ref.apiVersion, ref.kind) if builtin else None
            until = self.schema.built_in_until(ref.apiVersion, ref.kind) if builtin and since is None else None
            served = self.schema.served_api_versions(obj.group, ref.kind) if until or "." not in obj.group else ()
            use = f" ({', '.join(served)})" if served else ""
            if since is not None:  # a built-in group the chosen version does not have yet
                message = (
                    f"no schema for {ref.apiVersion} {ref.kind} in Kubernetes {self.schema.version}: it is built in "
                    f"from {since}"
                )
                remedy = f"Validate against Kubernetes {since} or later (--kubernetes-version), or use an API version the cluster serves."
            elif until is not None:  # removed since
                message = (
                    f"no schema for {ref.apiVersion} {ref.kind} in Kubernetes {self.schema.version}: it is built in "
                    f"only up to {until}"
                )
                remedy = f"Use an API version Kubernetes {self.schema.version} serves{use}."
            elif builtin and obj.group.endswith(".config.k8s.io"):  # KubeletConfiguration, KubeProxyConfiguration...
                component = obj.group.split(".", 1)[0]
                message = (
                    f"no schema for {ref.apiVersion} {ref.kind}: a configuration file the {component} reads, not an "
                    "object the API server serves"
                )
                remedy = (
                    f"Nothing to pass: --schema validates API objects; the {component} validates its own configuration."
                )
            elif builtin and "." not in obj.group and ref.kind:  # core, apps, batch...: no CRD can add to them
                message = (
                    f"no schema for {ref.apiVersion} {ref.kind}: Kubernetes {self.schema.version} does not serve it"
                    + (f"; it serves {', '.join(served)}" if served else "")
                )
                remedy = f"Use an API version Kubernetes {self.schema.version} serves{use}."
            else:
                message = (
                    f"no schema for {ref.apiVersion} {ref.kind}; pass --crd with its CustomResourceDefinition to "
                    "validate it"
                )
                remedy = "Pass the CRD with --crd FILE (or schema.crds in the config)."
            f = self.engine.finding_at(obj, ("kind",), SCHEMA_UNAVAILABLE, "info", message, remedy, None)
            f.data = {"noSchema": True}
            return [f]
        return [
            self.engine.finding_at(
                obj,
                p.path,
                SCHEMA_INVALID,
                "error",
                p.message,
                "Fix the field so the object matches the API schema.",
                None,
            )
            for p in problems
        ]

    def lint_source(self, source: Source) -> FileResult:
        try:
            data = read(source, self.config.limits.max_file_bytes)
            size = None
            if len(data) > self.config.limits.max_file_bytes and source.real != "-":
                size = os.path.getsize(source.real)
        except OSError as e:
            return FileResult([parse_error(source.path, 1, 1, f"cannot read file: {e.strerror or e}")])
        return self.lint_bytes(data, source.path, size, source.real == "-")

    def lint(self, source: Source, data: bytes | None, loaded: LoadResult | None = None) -> FileResult:
        """``source`` from the bytes the first pass kept (and its parse of them, if it kept that), else read again."""
        if source.skipped:
            return FileResult(notes=[f"{source.path}: skipped: {source.skipped}"] if self.verbose else [])
        if data is None:
            return self.lint_source(source)
        return self.lint_bytes(data, source.path, piped=source.real == "-", loaded=loaded)
