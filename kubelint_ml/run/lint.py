"""One run: sources -> documents -> objects -> evaluation -> filtering."""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass, field, fields
from fnmatch import fnmatch
from operator import attrgetter
from typing import Any, Callable

from kubelint_ml import __version__
from kubelint_ml.run.config import Config
from kubelint_ml.engine.context import CONTEXT_KINDS, Facts, may_hold_context
from kubelint_ml.engine.api import PSEUDO_RULES, SCHEMA_INVALID, SCHEMA_UNAVAILABLE
from kubelint_ml.engine.core import Context, Engine, parse_error
from kubelint_ml.findings import Finding, ObjectRef, RunResult
from kubelint_ml.input.loader import Limits, load, locate, looks_like_template, render_path
from kubelint_ml.input.objects import K8sObject, unpack
from kubelint_ml.engine.rulefile import Rule
from kubelint_ml.input.sources import Source, collect, display_path, excluded, file_key, read, read_once

# Below this many files, or this many bytes, a run stays in one process: forking costs more.
PARALLEL_MIN_FILES = 48
PARALLEL_MIN_BYTES = 256 * 1024
GC_YOUNG_THRESHOLD = 50_000

# Every pseudo-rule (parse-error, schema-invalid, ...) is described in every run's rule metadata.
INPUT_RULES = PSEUDO_RULES


@dataclass(slots=True)
class FileResult:
    findings: list[Finding] = field(default_factory=list)
    documents: int = 0
    objects: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, other: "FileResult") -> None:
        self.findings.extend(other.findings)
        self.notes.extend(other.notes)
        self.documents += other.documents
        self.objects += other.objects


@dataclass(slots=True)
class Runner:
    engine: Engine
    config: Config
    facts: Facts
    schema: Any = None  # kubelint_ml.k8s.schema.SchemaValidator when --schema
    verbose: bool = False

    def lint_bytes(self, data: bytes, display: str, size: int | None = None) -> FileResult:
        out = FileResult()
        limits: Limits = self.config.limits
        if len(data) > limits.max_file_bytes:
            real = max(size or 0, len(data))
            # A stream read up to the limit (stdin) says only that it is longer.
            amount = "" if size is None and real == limits.max_file_bytes + 1 else f"{real} bytes, "
            out.findings.append(parse_error(display, 1, 1,
                                            f"file is {amount}over the {limits.max_file_bytes}-byte limit "
                                            "(limits.maxFileBytes); not linted"))
            return out
        tline = looks_like_template(data)
        if tline:
            out.findings.append(parse_error(display, tline, 1,
                                            "Helm/Go template directive ({{ ... }}): this is a template, not a "
                                            "manifest; lint the rendered output (helm template ... | kubelint-ml check -)"))
            return out
        loaded = load(data, limits)
        for p in loaded.problems:
            out.findings.append(parse_error(display, p.line, p.column, p.message, p.document))
        if self.verbose and not loaded.documents and not loaded.problems:
            out.notes.append(f"{display}: skipped: empty file (no YAML documents)")
        ctx = Context(profile=self.config.profile, facts=self.facts, wants_notes=self.verbose)
        for doc in loaded.documents:
            out.documents += 1
            unpacked = unpack(doc, display)
            for prob in unpacked.problems:
                line, col, found = locate(prob.root, prob.path)
                out.findings.append(parse_error(display, line, col, prob.message, doc.index, prob.ref,
                                                render_path(found)))
            if self.verbose:
                for s in unpacked.skipped:
                    out.notes.append(f"{display}:{s.line}: skipped: {s.reason}")
            for obj in unpacked.objects:
                out.objects += 1
                out.findings.extend(self.engine.evaluate(obj, ctx))
                if self.schema is not None:
                    out.findings.extend(self._schema(obj))
        out.notes.extend(ctx.notes)
        return out

    def _schema(self, obj: K8sObject) -> list[Finding]:
        problems = self.schema.validate(obj.data)
        if problems is None:
            ref = obj.ref
            f = self.engine.finding_at(obj, ("kind",), SCHEMA_UNAVAILABLE, "info",
                                       f"no schema for {ref.apiVersion} {ref.kind}; pass --crd with its "
                                       "CustomResourceDefinition to validate it",
                                       "Pass the CRD with --crd FILE (or schema.crds in the config).", None)
            f.data = {"noSchema": True}
            return [f]
        return [
            self.engine.finding_at(obj, p.path, SCHEMA_INVALID, "error", p.message,
                                   "Fix the field so the object matches the API schema.", None)
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
        return self.lint_bytes(data, source.path, size)


# ----------------------------------------------------------------------------
# Facts from the inputs and the profile

# Bytes kept from the first pass for the second, so that a file is read once;
# past this budget files are read again (memory stays bounded on big trees).
MAX_KEPT_BYTES = 64 * 1024 * 1024
# "WorkloadPriorityClass" contains "PriorityClass": one scan finds both.
_CONTEXT_WORDS = tuple(k.encode() for k in CONTEXT_KINDS if k != "WorkloadPriorityClass")


def _mentions_context(data: bytes) -> bool:
    """Cheap necessary condition for :func:`may_hold_context` (substring scans, no regex)."""
    for word in _CONTEXT_WORDS:
        if word in data:
            return may_hold_context(data)
    return False


# From this many files, with more than one job, the first pass is shared by forked workers too.
PARALLEL_SCAN_MIN_FILES = 512


def first_pass(sources: list[Source], config: Config, stdin_data: bytes | None,
               keep: int = MAX_KEPT_BYTES, jobs: int = 1) -> tuple[Facts, list[bytes | None], int]:
    """Read every file once; parse only those whose bytes mention a context kind.

    Returns the facts; per source, its bytes (``None`` when unreadable, over
    the size limit, or past the ``keep`` budget: read again later); and how
    many bytes were read in all. With ``jobs > 1`` and many files the reading
    is shared by forked workers, and no bytes are kept but stdin's.
    """
    if jobs > 1 and len(sources) >= PARALLEL_SCAN_MIN_FILES and hasattr(os, "fork"):
        return _first_pass_forked(sources, config, stdin_data, jobs)
    facts = Facts()
    kept: list[bytes | None] = []
    budget = keep
    total = 0
    max_bytes = config.limits.max_file_bytes
    for s in sources:
        if s.real == "-":
            data = stdin_data or b""
        else:
            try:
                data = read(s, max_bytes)
            except OSError:
                kept.append(None)
                continue
        total += len(data)
        if len(data) > max_bytes:
            kept.append(data if s.real == "-" else None)  # stdin cannot be read again; a file's size is checked
            continue
        if _mentions_context(data):
            _add_facts(facts, data, s.path, config.limits)
        if len(data) <= budget or s.real == "-":
            kept.append(data)
            budget -= len(data)
        else:
            kept.append(None)
    _profile_facts(facts, config)
    return facts, kept, total


def _first_pass_forked(sources: list[Source], config: Config, stdin_data: bytes | None,
                       jobs: int) -> tuple[Facts, list[bytes | None], int]:
    """:func:`first_pass` with the reading shared out: the workers tell which files mention a
    context kind, and this process parses those (in input order, as a sequential pass does)."""
    max_bytes = config.limits.max_file_bytes
    kept: list[bytes | None] = [(stdin_data or b"") if s.real == "-" else None for s in sources]
    # A pipe or device (`<(helm template ...)`) can be read once: here, before forking, so that
    # every process has its bytes (read() remembers them) rather than the one worker that read it.
    for i, s in enumerate(sources):
        if kept[i] is None and read_once(s):
            try:
                kept[i] = read(s, max_bytes)
            except OSError:
                pass  # the lint reports it
    spans = _spans(len(sources), jobs)

    def scan(n: int) -> tuple[int, list[int]]:
        total, context = 0, []
        for i in range(*spans[n]):
            data = kept[i]
            if data is None:
                try:
                    data = read(sources[i], max_bytes)
                except OSError:
                    continue
            total += len(data)
            if len(data) <= max_bytes and _mentions_context(data):
                context.append(i)
        return total, context

    parts = _fork_map(len(spans), jobs, scan, scan, lambda part: part)
    facts = Facts()
    for i in sorted(i for _, context in parts for i in context):
        try:
            data = kept[i] if kept[i] is not None else read(sources[i], max_bytes)
        except OSError:
            continue  # gone since: the lint reports it
        _add_facts(facts, data, sources[i].path, config.limits)
    _profile_facts(facts, config)
    return facts, kept, sum(total for total, _ in parts)


def _add_facts(facts: Facts, data: bytes, file: str, limits: Limits, only: str | None = None) -> None:
    """The context objects of one file (of kind ``only``, if given) into ``facts``."""
    for doc in load(data, limits).documents:
        for obj in unpack(doc, file).objects:
            if only is None or obj.kind == only:
                facts.add_object(obj)


def _profile_facts(facts: Facts, config: Config) -> None:
    # A profile file is among the inputs (see with_profile_files), so the first pass usually has it already.
    have = {file_key(k.source) for k in facts.kubelet_configs}
    for path in config.profile.kubelet_config_paths():
        if file_key(path) in have:
            continue
        have.add(file_key(path))
        try:
            with open(path, "rb") as fh:
                data = fh.read(config.limits.max_file_bytes + 1)
        except OSError as e:
            from kubelint_ml.run.config import ConfigError

            raise ConfigError(f"profile kubeletConfig {path}: cannot read: {e.strerror}") from None
        _add_facts(facts, data, path, config.limits, only="KubeletConfiguration")
    facts.add_profile(config.profile)


# ----------------------------------------------------------------------------
# Filtering


def apply_excludes(findings: list[Finding], config: Config) -> None:
    rules = config.exclude
    if not rules:
        return
    for f in findings:
        if f.suppressed is not None:
            continue
        obj = f.object
        for ex in rules:
            if "rule" in ex and ex["rule"] != f.rule:
                continue
            if "path" in ex and not excluded(f.file, (ex["path"],)):
                continue
            if "kind" in ex and (obj is None or obj.kind != ex["kind"]):
                continue
            if "namespace" in ex and (obj is None or obj.namespace != ex["namespace"]):
                continue
            if "name" in ex and (obj is None or not fnmatch(obj.name, ex["name"])):
                continue
            f.suppressed = ex.get("reason") or "excluded by config"
            break


def with_profile_files(sources: list[Source], config: Config) -> list[Source]:
    """KubeletConfiguration files named in the profile are linted too, once."""
    paths = config.profile.kubelet_config_paths()
    if not paths:
        return sources
    seen = {os.path.normcase(s.identity) if s.identity else file_key(s.real) for s in sources if s.real != "-"}
    extra = []
    for path in paths:
        real = file_key(path)
        if real not in seen and os.path.isfile(path):
            seen.add(real)
            extra.append(Source(display_path(path), path))
    return sources + sorted(extra, key=lambda s: s.path) if extra else sources


def repo_root() -> str:
    """The repository root (nearest directory with .git), else the cwd: SARIF URIs are relative to it."""
    here = os.getcwd()
    probe = here
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def _finish(findings: list[Finding], config: Config, in_order: bool = False) -> list[Finding]:
    """Config excludes applied, sorted (unless ``in_order``: already), one "no schema" note per kind."""
    apply_excludes(findings, config)
    if not in_order:
        findings.sort(key=Finding.sort_key)
    return once_per_kind(findings)


def _concatenation_sorted(parts: list[FileResult]) -> bool:
    """Whether parts whose findings are each sorted are sorted as a whole: true when each part's
    files all come before the next part's (the sort key starts with the file)."""
    last = None
    for part in parts:
        if part.findings:
            if last is not None and not last < part.findings[0].file:
                return False
            last = part.findings[-1].file
    return True


def once_per_kind(findings: list[Finding]) -> list[Finding]:
    """Keep the first "no schema for <kind>" note of each kind (findings are sorted)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for f in findings:
        if f.data.get("noSchema") and f.object is not None:
            key = (f.object.apiVersion, f.object.kind)
            if key in seen:
                continue
            seen.add(key)
        out.append(f)
    return out


_FINDING_FIELDS = tuple(f.name for f in fields(Finding))
_OBJECT_AT = _FINDING_FIELDS.index("object")
_SHARED_AT = tuple(_FINDING_FIELDS.index(n) for n in ("rule", "severity", "remediation", "file"))
_finding_tuple = attrgetter(*_FINDING_FIELDS)
Inputs = list[tuple[Source, "bytes | None"]]


def _lint_item(runner: Runner, source: Source, data: bytes | None) -> FileResult:
    return runner.lint_bytes(data, source.path) if data is not None else runner.lint_source(source)


def _lint_span(runner: Runner, inputs: Inputs, span: tuple[int, int]) -> FileResult:
    """The files of one span, as one result, its findings sorted (spans are sorted in the
    process that lints them, so that the parent has no sort left to do; see _concatenation_sorted)."""
    out = FileResult()
    for source, data in inputs[span[0]:span[1]]:
        out.add(_lint_item(runner, source, data))
    out.findings.sort(key=Finding.sort_key)
    return out


def _work(runner: Runner, inputs: Inputs, span: tuple[int, int]) -> tuple[list[tuple], list[str], int, int]:
    """A span linted in a worker; findings go back as plain tuples (cheap to pickle)."""
    r = _lint_span(runner, inputs, span)
    return list(map(_encode, r.findings)), r.notes, r.documents, r.objects


def _encode(f: Finding) -> tuple:
    t = list(_finding_tuple(f))
    ref = t[_OBJECT_AT]
    if ref is not None:
        t[_OBJECT_AT] = (ref.apiVersion, ref.kind, ref.namespace, ref.name)
    return tuple(t)


def _rebuild(rows: list[tuple], shared: dict) -> list[Finding]:
    """Findings from :func:`_work` rows; repeated strings (rule ids, remediations, files) and
    object identities are shared across the whole run."""
    out = []
    for row in rows:
        t = list(row)
        for i in _SHARED_AT:
            t[i] = shared.setdefault(t[i], t[i])
        ref = t[_OBJECT_AT]
        if ref is not None:
            found = shared.get(ref)
            if found is None:
                found = shared[ref] = ObjectRef(*ref)
            t[_OBJECT_AT] = found
        out.append(Finding(*t))
    return out


# The span queue: span numbers as 4-byte records in one pipe, written whole before
# any worker starts, that the parent and every worker read from (a read of one
# record is atomic). At most MAX_SPANS records: the queue fits in a pipe's buffer.
MAX_SPANS = 1024
_RECORD = 4


def _spans(count: int, jobs: int) -> list[tuple[int, int]]:
    """Contiguous slices of the inputs, in order.

    About 32 per process, at most 64 files each (more only when there would be
    over :data:`MAX_SPANS`). The first is a few files: the parent lints it
    before forking, to warm up. The last ``2 * jobs`` spans' worth come in
    quarter-size spans, so that the processes run out of work together.
    """
    size = max(1, min(64, count // (jobs * 32)), -(-count // MAX_SPANS))
    out: list[tuple[int, int]] = []
    i = min(4, size, count)
    if i:
        out.append((0, i))
    tail_start = max(i, count - 2 * jobs * size)
    for step, end in ((size, tail_start), (max(1, size // 4), count)):
        while i < end:
            out.append((i, min(end, i + step)))
            i = out[-1][1]
    if len(out) > MAX_SPANS:  # many jobs: no finer tail
        return [(i, min(count, i + size)) for i in range(0, count, size)]
    return out


def _next_span(queue: int) -> int | None:
    record = os.read(queue, _RECORD)
    return int.from_bytes(record, "little") if len(record) == _RECORD else None


def _child(queue: int, out: int, work: Callable[[int], Any]) -> None:
    """A forked worker: run ``work`` on spans from the queue, sending each result back as a
    length-prefixed pickle; never returns."""
    import pickle

    code = 0
    try:
        while (n := _next_span(queue)) is not None:
            payload = pickle.dumps((n, work(n)), pickle.HIGHEST_PROTOCOL)
            data = memoryview(len(payload).to_bytes(8, "little") + payload)
            while data:
                data = data[os.write(out, data):]
    except BaseException:  # noqa: BLE001 - the parent does whatever this worker did not return
        code = 70
    finally:
        os._exit(code)


class _Inbox:
    """What one worker has sent so far: complete records are taken out as they arrive."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd
        self.buffer = bytearray()
        self.open = True

    def read(self, block: bool) -> list[tuple[int, tuple]]:
        """Read what is there (``block``: wait for more, until the worker closes its end)."""
        import pickle

        if block:
            os.set_blocking(self.fd, True)
        while self.open:
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                break
            if not data:
                self.open = False
                break
            self.buffer += data
        out = []
        view = memoryview(self.buffer)
        at = 0
        while len(view) - at >= 8:
            size = int.from_bytes(view[at:at + 8], "little")
            if len(view) - at - 8 < size:
                break
            try:
                out.append(pickle.loads(view[at + 8:at + 8 + size]))
            except Exception:  # noqa: BLE001 - cannot happen short of a bug; the span is linted again
                pass
            at += 8 + size
        view.release()
        del self.buffer[:at]
        return out


def _fork_map(count: int, jobs: int, local: Callable[[int], Any], remote: Callable[[int], Any],
              decode: Callable[[Any], Any], first: Any = None, notes: list[str] | None = None) -> list[Any]:
    """Every span's result, computed by this process and ``jobs - 1`` forked workers.

    Spans ``0 .. count - 1`` are taken from one queue: this process runs
    ``local(n)``, a worker runs ``remote(n)`` (the functions and everything they
    reach are inherited through fork, never pickled) and sends the result back,
    which ``decode`` turns into a local one; the parent does that between its
    own spans, so that work is shared out by the queue too. ``first``: span 0's
    result, when the caller computed it before the fork (to warm up). A worker
    that dies (killed by the OOM killer, say) loses nothing: the spans it did
    not return are computed here.
    """
    import signal

    results: list[Any] = [None] * count
    start = 0
    if first is not None:
        results[0], start = first, 1
    queue, feed = os.pipe()
    children: list[_Inbox] = []
    try:
        records = b"".join(n.to_bytes(_RECORD, "little") for n in range(start, count))
        while records:
            records = records[os.write(feed, records):]
        os.close(feed)
        gc.freeze()  # what the workers inherit is never scanned by their collector (nor copied for it)
        try:
            for _ in range(min(jobs, count - start) - 1):
                read_end, write_end = os.pipe()
                try:
                    pid = os.fork()
                except OSError:  # no more processes or memory: go on with the workers there are
                    os.close(read_end)
                    os.close(write_end)
                    break
                if pid == 0:
                    os.close(read_end)
                    _child(queue, write_end, remote)
                os.close(write_end)
                os.set_blocking(read_end, False)
                _grow_pipe(read_end)
                children.append(_Inbox(pid, read_end))
        finally:
            gc.unfreeze()

        def receive(block: bool) -> None:
            for inbox in children:
                for n, payload in inbox.read(block):
                    results[n] = decode(payload)

        while (n := _next_span(queue)) is not None:
            results[n] = local(n)
            receive(block=False)
        receive(block=True)
        lost = [n for n, r in enumerate(results) if r is None]
        if lost and notes is not None:
            notes.append(f"a worker process exited early; {len(lost)} of {count} parts were done again")
        for n in lost:
            results[n] = local(n)
    except BaseException:
        for inbox in children:
            try:
                os.kill(inbox.pid, signal.SIGKILL)
            except OSError:
                pass
        raise
    finally:
        os.close(queue)
        for inbox in children:
            os.close(inbox.fd)
            try:
                os.waitpid(inbox.pid, 0)
            except ChildProcessError:
                pass
    return results


def _parallel(runner: Runner, inputs: Inputs, jobs: int, notes: list[str] | None = None) -> list[FileResult]:
    """Lint ``inputs`` in this process and ``jobs - 1`` forked workers (see :func:`_fork_map`).

    The parent keeps its own findings as they are; only the workers' travel,
    as plain tuples, and are rebuilt with their repeated strings shared.
    """
    spans = _spans(len(inputs), jobs)
    shared: dict = {}

    def decode(part: tuple) -> FileResult:
        rows, part_notes, docs, objs = part
        return FileResult(_rebuild(rows, shared), docs, objs, part_notes)

    # The first span is linted before forking: lazily built tables, caches and the
    # interpreter's specialised code are then set up once, and the workers inherit them.
    first = _lint_span(runner, inputs, spans[0])
    return _fork_map(len(spans), jobs, lambda n: _lint_span(runner, inputs, spans[n]),
                     lambda n: _work(runner, inputs, spans[n]), decode, first, notes)


def _grow_pipe(fd: int) -> None:
    """Room for several parts in a result pipe (Linux), so a worker rarely waits for the parent to read."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def use_parallel(jobs: int, files: int, size: int) -> bool:
    """Fork workers only when there is enough input to pay for them (and the system can fork)."""
    return jobs > 1 and files >= PARALLEL_MIN_FILES and size >= PARALLEL_MIN_BYTES and hasattr(os, "fork")


def run(paths: list[str], config: Config, rules: list[Rule], *, fail_level: str = "error", jobs: int = 1,
        verbose: bool = False, schema: Any = None, severity: dict[str, str] | None = None,
        all_rule_ids: set[str] | None = None) -> tuple[RunResult, list[str]]:
    # Parse trees are many young, acyclic containers: collecting every 700 allocations
    # only costs time (about 7% of a run). Cycles are still collected, less often.
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], GC_YOUNG_THRESHOLD), *threshold[1:])
    try:
        return _run(paths, config, rules, fail_level=fail_level, jobs=jobs, verbose=verbose, schema=schema,
                    severity=severity, all_rule_ids=all_rule_ids)
    finally:
        gc.set_threshold(*threshold)


def _run(paths: list[str], config: Config, rules: list[Rule], *, fail_level: str, jobs: int, verbose: bool,
         schema: Any, severity: dict[str, str] | None, all_rule_ids: set[str] | None) -> tuple[RunResult, list[str]]:
    path_excludes = tuple(ex["path"] for ex in config.exclude if set(ex) <= {"path", "reason"} and "path" in ex)
    sources = with_profile_files(collect(paths, path_excludes), config)
    stdin_data = None
    if any(s.real == "-" for s in sources):
        import sys

        stdin_data = sys.stdin.buffer.read(config.limits.max_file_bytes + 1)
    # A run big enough to go parallel keeps no bytes past the threshold: its workers read
    # their files again (from the page cache) rather than every process hold the whole input.
    may_fork = use_parallel(jobs, len(sources), PARALLEL_MIN_BYTES)
    facts, kept, size = first_pass(sources, config, stdin_data, PARALLEL_MIN_BYTES if may_fork else MAX_KEPT_BYTES,
                                   jobs)
    if schema is not None:
        for crd in facts.crds:
            schema.add_crd(crd)
    engine = Engine(rules, severity_overrides=severity, known_rule_ids=all_rule_ids or ())
    runner = Runner(engine, config, facts, schema, verbose)
    inputs = list(zip(sources, kept))
    del kept
    results: list[FileResult]
    run_notes: list[str] = []
    in_order = False
    if use_parallel(jobs, len(inputs), size):
        results = _parallel(runner, inputs, jobs, run_notes)
        in_order = _concatenation_sorted(results)
    else:
        results = []
        for i, (source, data) in enumerate(inputs):
            inputs[i] = (source, None)  # the bytes are not needed after this file
            results.append(_lint_item(runner, source, data))
    total = FileResult()
    for r in results:
        total.add(r)
    notes = total.notes + run_notes
    findings = _finish(total.findings, config, in_order)
    active = [f for f in findings if f.suppressed is None]
    suppressed = [f for f in findings if f.suppressed is not None]
    infos = {r.id: r.info() for r in rules}
    infos.update(INPUT_RULES)
    for rid, sev in (severity or {}).items():
        if rid in infos:
            from dataclasses import replace

            infos[rid] = replace(infos[rid], severity=sev)
    result = RunResult(
        findings=active,
        suppressed=suppressed,
        rules=dict(sorted(infos.items())),
        files=len(sources),
        documents=total.documents,
        objects=total.objects,
        fail_level=fail_level,
        root=repo_root(),
        tool_version=__version__,
    )
    return result, notes


def lint_text(data: bytes, rules: list[Rule], config: Config | None = None, display: str = "<input>",
              severity: dict[str, str] | None = None, schema: Any = None) -> list[Finding]:
    """Lint one in-memory file with the given rules (examples, tests, embedding)."""
    config = config or Config()
    facts = Facts()
    if may_hold_context(data):
        _add_facts(facts, data, display, config.limits)
    facts.add_profile(config.profile)
    if schema is not None:
        for crd in facts.crds:
            schema.add_crd(crd)
    runner = Runner(Engine(rules, severity_overrides=severity), config, facts, schema)
    findings = runner.lint_bytes(data, display).findings
    return _finish(findings, config)
