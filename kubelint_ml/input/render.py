"""Helm charts and kustomizations: rendered by the real tools, findings mapped back.

A directory with ``Chart.yaml`` is a chart; one with ``kustomization.yaml``
(``.yml``, or ``Kustomization``) is a kustomization. Their files are not
linted one by one (a template is not YAML, a base is incomplete without its
overlay); instead the chart is rendered with ``helm template`` and the
kustomization built with ``kustomize build`` or ``kubectl kustomize``, and
the output is linted like any file. A kustomization that another linted one
refers to (a base of an overlay) is not built on its own.

The tools run without a shell, with a timeout, their output capped at the
file size limit. A kustomization is built through a wrapper kustomization in
a temporary directory that turns on origin annotations (the user's files are
never changed). Without the tool, each chart or kustomization gets one
warning that names the tool and the pipe to use instead.

Findings in rendered output (and in ``helm template`` or ``kustomize build``
output piped to ``check -``) are mapped back to the file a person edits: the
template named by helm's ``# Source:`` comment, or the base or patch named by
kustomize's ``config.kubernetes.io/origin`` and
``alpha.config.kubernetes.io/transformations`` annotations. The line is the
field's own line there when it can be found unambiguously, else the start of
the document; the rendered location is kept as a related location.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kubelint_ml.records import replace

if TYPE_CHECKING:
    import subprocess

# shutil, subprocess, tempfile and threading are imported where a chart or kustomization is
# rendered: most runs have none, and they cost a plain run 9 ms of start-up.

from kubelint_ml.findings import Finding
from kubelint_ml.input.charts import (
    CHART_FILE,
    STREAMS,
    Owners,
    RenderOptions,
    has_markers,
    kustomization_file,
    read_kustomization,
)
from kubelint_ml.input.sources import _READ_ONCE, Source, display_path

STDERR_CAP = 64 * 1024


@dataclass(slots=True)
class Stream:
    """Rendered output standing in for a chart or kustomization."""

    tool: str  # "helm" | "kustomize"
    directory: str  # the chart or kustomization directory (real path)
    base: str  # directory that paths in the output are relative to
    seconds: float = 0.0


@dataclass(slots=True)
class Plan:
    sources: list[Source]  # what is linted: plain files and rendered streams, in order
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (file, message): did not render


# ----------------------------------------------------------------------------
# Which files belong to which chart or kustomization: kubelint_ml/input/charts.py


def _kustomization_refs(directory: str) -> list[str]:
    """Directories (real paths) that the kustomization in ``directory`` builds on."""
    data = read_kustomization(kustomization_file(directory))
    out = []
    for key in ("resources", "bases", "components"):
        entries = data.get(key)
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, str) or "://" in entry or entry.startswith("git@"):
                continue
            target = os.path.realpath(os.path.join(directory, entry))
            if os.path.isdir(target):
                out.append(target)
    return out


def plan(
    sources: list[Source], options: RenderOptions, max_bytes: int, owners: Owners | None = None, jobs: int = 1
) -> Plan:
    """Take the files of charts and kustomizations out of ``sources`` and put their rendered output in.

    ``owners``: the search :func:`kubelint_ml.input.charts.owners_for` made (its answers are reused).
    ``jobs``: how many tools run at once (helm and kustomize are other processes: threads wait for them);
    the plan is the same whatever the number."""
    STREAMS.clear()
    if owners is None:
        owners = Owners([os.getcwd()])
    units: dict[str, str] = {}  # real directory -> tool
    shown: dict[str, str] = {}  # real directory -> display
    kept: list[Source] = []
    by_dir: dict[str, tuple[str, str] | None] = {}  # a file's directory as named -> its owner
    for s in sources:
        owner = owners.owner_of(s, by_dir)
        if owner is None:
            kept.append(s)
            continue
        tool, directory = owner
        units.setdefault(directory, tool)
        if directory not in shown:
            shown[directory] = _display_dir(s, directory)
    out = Plan(kept)
    if not units:
        return out
    # Bases and components of a kustomization that is linted too are built as part of it.
    reach = {d: _reachable(d) for d, tool in units.items() if tool == "kustomize"}
    referenced: set[str] = set().union(*reach.values()) if reach else set()
    built: set[str] = set()
    # The bases below, once the kustomizations that use them are built.
    roots = [d for d in sorted(units, key=lambda d: shown[d]) if units[d] != "kustomize" or d not in referenced]
    if not options.enabled:
        for directory in roots:
            kind = "chart" if units[directory] == "helm" else "kustomization"
            out.notes.append(f"{shown[directory]}: {kind} not rendered (rendering is off)")
        roots = []

    def render_one(directory: str) -> tuple[Plan, bool]:
        part = Plan([])
        return part, _render_unit(part, units[directory], directory, shown[directory], options, max_bytes)

    if jobs > 1 and len(roots) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(jobs, len(roots))) as pool:
            parts = list(pool.map(render_one, roots))
    else:
        parts = [render_one(d) for d in roots]
    for directory, (part, ok) in zip(roots, parts):  # in the order of the units, however they ran
        out.sources += part.sources
        out.notes += part.notes
        out.failures += part.failures
        if ok:
            built.add(directory)
    # A base is built on its own when no kustomization that uses it built (a remote resource it could not
    # fetch, a missing patch): its workloads are linted rather than lost with the overlay's render-error.
    # Those that use a base reach more than it does: they come first.
    for directory in sorted(referenced & units.keys(), key=lambda d: (-len(reach[d]), shown[d])):
        users = [u for u, below in reach.items() if directory in below]
        if not options.enabled or built.intersection(users) or kustomize_command() is None:
            out.notes.append(f"{shown[directory]}: built as part of a kustomization that uses it, not on its own")
            continue
        out.notes.append(f"{shown[directory]}: built on its own, as no kustomization that uses it built")
        failed = len(out.failures)
        if _render_unit(out, "kustomize", directory, shown[directory], options, max_bytes):
            built.add(directory)
        else:  # not linted, as the render-error of the kustomization that uses it says already
            out.notes += [f"{message}; not linted" for _, message in out.failures[failed:]]
            del out.failures[failed:]
    out.sources.sort(key=lambda s: s.path)
    return out


def _reachable(directory: str) -> set[str]:
    seen: set[str] = set()
    stack = list(_kustomization_refs(directory))
    while stack:
        d = stack.pop()
        if d in seen:
            continue
        seen.add(d)
        stack.extend(_kustomization_refs(d))
    seen.discard(directory)
    return seen


def _display_dir(source: Source, directory: str) -> str:
    """The directory as the user would name it (relative to the cwd when below it)."""
    shown_file = source.path
    real_file = os.path.realpath(os.path.abspath(source.real))
    rel = os.path.relpath(os.path.dirname(real_file), directory)
    head = os.path.dirname(shown_file)
    if rel != ".":
        for _ in rel.split(os.sep):
            head = os.path.dirname(head)
    return head or display_path(directory)


# ----------------------------------------------------------------------------
# Running the tools


def helm_binary() -> str | None:
    import shutil

    return shutil.which("helm")


def kustomize_command() -> list[str] | None:
    import shutil

    found = shutil.which("kustomize")
    if found:
        return [found, "build"]
    found = shutil.which("kubectl")
    if found:
        return [found, "kustomize"]
    return None


def kustomize_version() -> tuple[int, int] | None:
    """The version of the kustomize :func:`kustomize_command` runs (its own, or kubectl's embedded one)."""
    command = kustomize_command()
    if command is None:
        return None
    argv = [command[0], "version"] + (["--client"] if command[1] == "kustomize" else [])
    code, out, _ = run_capped(argv, None, 30, 1 << 16)
    m = re.search(rb"(?:Kustomize Version: |kustomize/|^)v(\d+)\.(\d+)", out, re.M)
    return (int(m.group(1)), int(m.group(2))) if m and code == 0 else None


def run_capped(argv: list[str], cwd: str | None, timeout: float, cap: int) -> tuple[int | None, bytes, str]:
    """Run ``argv`` (no shell) and return ``(exit code, stdout, stderr)``.

    The exit code is None when the process was stopped: it ran longer than
    ``timeout`` seconds or wrote more than ``cap`` bytes (stdout then holds
    ``cap + 1`` bytes).
    """
    import subprocess
    import threading

    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        return None, b"", f"cannot run {argv[0]}: {e.strerror or e}"
    out = bytearray()
    err = bytearray()
    over = threading.Event()

    def pump(stream: Any, buf: bytearray, limit: int, flag: bool) -> None:
        while True:
            chunk = stream.read1(1 << 16) if hasattr(stream, "read1") else stream.read(1 << 16)
            if not chunk:
                return
            room = limit + 1 - len(buf)
            if room > 0:
                buf += chunk[:room]
            if len(buf) > limit and flag:
                over.set()
                _stop(proc)
                return

    readers = [
        threading.Thread(target=pump, args=(proc.stdout, out, cap, True), daemon=True),
        threading.Thread(target=pump, args=(proc.stderr, err, STDERR_CAP, False), daemon=True),
    ]
    for t in readers:
        t.start()
    stopped = False
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        stopped = True
        _stop(proc)
        proc.wait()
    for t in readers:
        t.join(5)
    for stream in (proc.stdout, proc.stderr):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    if stopped or over.is_set():
        return None, bytes(out), err.decode("utf-8", "replace")
    return proc.returncode, bytes(out), err.decode("utf-8", "replace")


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 9)
    except (OSError, AttributeError):
        try:
            proc.kill()
        except OSError:
            pass


_KLOG_ERR = re.compile(r'err="(.*)"\s*$')


def _first_error(stderr: str) -> str:
    """The tool's error message, its end kept when long (kustomize nests the cause last)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    opened = next((i for i, ln in enumerate(lines) if ln.endswith("err=<")), None)
    if opened is not None:  # klog's multi-line form: `... "command failed" err=<`, the message, then `>`
        body = []
        for ln in lines[opened + 1 :]:
            if ln == ">":
                break
            body.append(ln)
        if body:
            text = " ".join(body)
            return text if len(text) <= 400 else "…" + text[-400:]
    text = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "no message")
    m = _KLOG_ERR.search(text)  # kubectl's log prefix: E1123 20:53:45.509208 2638 run.go:72] "command failed" err="..."
    if m:
        text = m.group(1).replace('\\"', '"')
    return text if len(text) <= 400 else "…" + text[-400:]


def _own_paths(text: str, wrapper: str | None, directory: str, shown: str) -> str:
    """The tool's message with no scratch path in it (the wrapper kustomization's directory, and
    the way from it to the user's directory), and the user's directory as the user named it."""
    shown_dir = shown if shown.endswith(os.sep) else shown + os.sep
    if wrapper is not None:
        for path in {wrapper, os.path.realpath(wrapper)}:
            try:
                text = text.replace(os.path.relpath(directory, path) + os.sep, shown_dir)
                text = text.replace(os.path.relpath(directory, path), shown)
            except ValueError:
                pass
            text = text.replace(path + os.sep, "").replace(path, ".")
    if shown != ".":
        text = text.replace(directory + os.sep, shown_dir)
    return text.replace(directory, shown)


def _render_unit(out: Plan, tool: str, directory: str, shown: str, options: RenderOptions, max_bytes: int) -> bool:
    """Render one chart or kustomization into ``out``; whether it rendered (a failure is in ``out.failures``)."""
    if tool == "helm":
        helm = helm_binary()
        anchor = CHART_FILE if shown == "." else os.path.join(shown, CHART_FILE)
        if helm is None:
            out.failures.append(
                (
                    anchor,
                    f"Helm chart {shown} not linted: helm is not on PATH; install helm, or pipe the "
                    f"rendered chart in: helm template {shown} | kubelint-ml check -",
                )
            )
            return False
        argv = [helm, "template", directory]
        for v in options.helm_values:
            argv += ["--values", os.path.abspath(v)]
        for s in options.helm_set:
            argv += ["--set", s]
        cwd, base, wrapper = None, os.path.dirname(directory), None
        what = "helm template"
    else:
        command = kustomize_command()
        name = os.path.basename(kustomization_file(directory) or "kustomization.yaml")
        anchor = name if shown == "." else os.path.join(shown, name)
        if command is None:
            out.failures.append(
                (
                    anchor,
                    f"kustomization {shown} not linted: neither kustomize nor kubectl is on PATH; "
                    f"install one, or pipe the build in: kubectl kustomize {shown} | kubelint-ml check -",
                )
            )
            return False
        wrapper = _wrapper(directory)
        argv = command + [wrapper or directory]
        cwd, base = wrapper, wrapper or directory
        what = " ".join(os.path.basename(command[0]) if i == 0 else c for i, c in enumerate(command))
    import shutil
    import time

    started = time.monotonic()
    try:
        code, data, err = run_capped(argv, cwd, options.timeout, max_bytes)
        if code not in (0, None) and wrapper is not None:
            # An older kustomize without build metadata: build the directory itself (no origins then).
            # When that fails as well, its message is the one to show: it names the user's files, not ours.
            code2, data2, err2 = run_capped(command + [directory], None, options.timeout, max_bytes)  # type: ignore[operator]
            if code2 is not None:
                code, data, err, base = code2, data2, err2, directory
    finally:
        if wrapper is not None:
            shutil.rmtree(wrapper, ignore_errors=True)
    seconds = time.monotonic() - started
    if code is None:
        why = (
            f"output over the {max_bytes}-byte limit (limits.maxFileBytes)"
            if len(data) > max_bytes
            else f"did not finish in {options.timeout:g} s"
            if not err.startswith("cannot run")
            else err
        )
        out.failures.append((anchor, f"{what} {shown}: {why}; not linted"))
        return False
    if code != 0:
        message = _first_error(_own_paths(err, wrapper, directory, shown))
        out.failures.append((anchor, f"{what} {shown} failed: {message}"))
        return False
    display = f"{shown} ({what})"
    real = f"<render:{tool}:{directory}>"
    _READ_ONCE[real] = data
    STREAMS[display] = Stream(tool, directory, base, seconds)
    out.sources.append(Source(display, real))
    out.notes.append(f"{shown}: rendered with {what} ({len(data)} bytes)")
    return True


def _wrapper(directory: str) -> str | None:
    """A temporary kustomization that builds ``directory`` with origin annotations turned on, or
    None when it cannot be made (no temp space; another drive, which a relative path cannot reach)."""
    import shutil
    import tempfile

    wrapper = None
    try:
        wrapper = tempfile.mkdtemp(prefix="kubelint-ml-kustomize-")
        target = os.path.relpath(directory, wrapper)
        with open(os.path.join(wrapper, "kustomization.yaml"), "w", encoding="utf-8") as fh:
            fh.write(
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                f"resources:\n  - {_yaml_string(target)}\n"
                "buildMetadata: [originAnnotations, transformerAnnotations]\n"
            )
        return wrapper
    except (OSError, ValueError):
        if wrapper:
            shutil.rmtree(wrapper, ignore_errors=True)
        return None


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ----------------------------------------------------------------------------
# Mapping findings back to the files a person edits

_DOC_START = re.compile(rb"^---(?:[ \t].*)?$", re.M)
_HELM_SOURCE = re.compile(r"^# Source: (.+?)\s*$", re.M)
_ORIGIN = re.compile(r"config\.kubernetes\.io/origin: \|\n((?:[ \t]+\S.*\n?)+)")
_TRANSFORMS = re.compile(r"alpha\.config\.kubernetes\.io/transformations: \|\n((?:[ \t]+\S.*\n?)+)")
_PATCH_KINDS = ("PatchTransformer", "PatchStrategicMergeTransformer", "PatchesStrategicMerge")


@dataclass(slots=True)
class _Segment:
    start: int  # first line (1-based)
    end: int  # last line
    text: str
    tree: Any = None  # the loaded document (positions relative to the segment)
    loaded: bool = False


def _segments(data: bytes) -> list[_Segment]:
    text = data.decode("utf-8", "replace")
    starts = [0] + [m.start() for m in _DOC_START.finditer(data)]
    out = []
    for i, begin in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(data)
        if end <= begin and i:
            continue
        chunk = data[begin:end]
        first = data.count(b"\n", 0, begin) + 1
        out.append(_Segment(first, first + chunk.count(b"\n"), chunk.decode("utf-8", "replace")))
    del text
    return out


def map_back(findings: list[Finding], data: bytes, display: str) -> None:
    """Point findings on rendered output at their source files, in place."""
    stream = STREAMS.get(display)
    if stream is None and not has_markers(data):
        return
    segments = _segments(data)
    base = stream.base if stream is not None else os.getcwd()
    chart_dir = stream.directory if stream is not None and stream.tool == "helm" else None
    for i, f in enumerate(findings):
        if f.file != display:
            continue
        seg = _segment_at(segments, f.line)
        if seg is None:
            continue
        target = _helm_target(seg, f, chart_dir) or _kustomize_target(seg, f, base)
        if target is None:
            continue
        file, line, column = target
        related = ((display, f.line, f.column, "rendered output"),) + tuple(f.related)
        findings[i] = replace(f, file=display_path(file), line=line, column=column, related=related)


def _segment_at(segments: list[_Segment], line: int) -> _Segment | None:
    for seg in segments:
        if seg.start <= line <= seg.end:
            return seg
    return None


def parse_path(text: str) -> tuple:
    """The inverse of :func:`kubelint_ml.input.loader.render_path`."""
    out: list = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == ".":
            i += 1
            continue
        if c == "[":
            if text.startswith('["', i):
                j = i + 2
                buf = []
                while j < n and text[j] != '"':
                    if text[j] == "\\" and j + 1 < n:
                        j += 1
                    buf.append(text[j])
                    j += 1
                out.append("".join(buf))
                i = j + 2  # past '"]'
            else:
                j = text.find("]", i)
                j = n if j < 0 else j
                try:
                    out.append(int(text[i + 1 : j]))
                except ValueError:
                    out.append(text[i + 1 : j])
                i = j + 1
            continue
        j = i
        while j < n and text[j] not in ".[":
            j += 1
        out.append(text[i:j])
        i = j
    return tuple(out)


# -- Helm ---------------------------------------------------------------------


def _helm_target(seg: _Segment, f: Finding, chart_dir: str | None) -> tuple[str, int, int] | None:
    m = _HELM_SOURCE.search(seg.text)
    if m is None:
        return None
    path = _template_file(m.group(1), chart_dir)
    if path is None:
        return None
    text = _read_text(path)
    if text is None:
        return None
    kind = f.object.kind if f.object is not None else ""
    line, column = template_position(text, parse_path(f.path), kind)
    return path, line, column


def _template_file(source: str, chart_dir: str | None) -> str | None:
    """The file a ``# Source: chart/templates/x.yaml`` line names, or None when it is not here."""
    parts = source.replace("\\", "/").split("/")
    if len(parts) < 2 or any(p in ("", "..") for p in parts):
        return None
    roots = [chart_dir] if chart_dir else _charts_named(parts[0])
    for root in roots:
        if root is None or os.path.basename(root) != parts[0] and _chart_name(root) != parts[0]:
            continue
        path = _inside_chart(root, parts[1:])
        if path is not None:
            return path
    return None


def _inside_chart(root: str, rest: list[str]) -> str | None:
    """``charts/<name>/...`` steps into a subchart whose Chart.yaml says ``name``, whatever its directory."""
    if len(rest) >= 3 and rest[0] == "charts":
        sub = os.path.join(root, "charts")
        try:
            entries = sorted(os.listdir(sub))
        except OSError:
            return None
        for entry in entries:
            candidate = os.path.join(sub, entry)
            if os.path.isdir(candidate) and (entry == rest[1] or _chart_name(candidate) == rest[1]):
                found = _inside_chart(candidate, rest[2:])
                if found:
                    return found
        return None
    path = os.path.join(root, *rest)
    return path if os.path.isfile(path) else None


@lru_cache(maxsize=256)
def _chart_name(directory: str) -> str | None:
    if not os.path.isfile(os.path.join(directory, CHART_FILE)):
        return None
    try:
        with open(os.path.join(directory, CHART_FILE), encoding="utf-8", errors="replace") as fh:
            for line in fh.read(1 << 16).splitlines():
                m = re.match(r"name:\s*['\"]?([^'\"#\s]+)", line)
                if m:
                    return m.group(1)
    except OSError:
        return None
    return None


MAX_CHART_SEARCH_DIRS = 4000


def _charts_named(name: str) -> tuple[str, ...]:
    """Charts below the working directory whose directory or Chart.yaml name is ``name`` (piped input)."""
    return _charts_below(os.getcwd(), name)


@lru_cache(maxsize=64)
def _charts_below(top: str, name: str) -> tuple[str, ...]:
    found = []
    for seen, (root, dirs, files) in enumerate(os.walk(top), 1):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        if CHART_FILE in files and (os.path.basename(root) == name or _chart_name(root) == name):
            found.append(root)
        if root.count(os.sep) - top.count(os.sep) >= 6:
            dirs[:] = []
        if seen >= MAX_CHART_SEARCH_DIRS:
            break
    return tuple(found)


def _read_text(path: str) -> str | None:
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read(4 << 20).decode("utf-8", "replace")
    except OSError:
        return None


ITEM = "[]"  # a list item in a template key path
_KEY = re.compile(r"""(?:"([^"\\]*)"|'([^']*)'|([^\s'"{}#\[\]&*!|>%@`,][^:#{}]*?))\s*:(?:\s|$)""")
_BLOCK = re.compile(r":\s*[|>][-+0-9]*\s*(?:#.*)?$")


def template_keys(text: str) -> list[tuple[int, int, tuple[str, ...], int]]:
    """Every mapping key of a (Helm template) YAML text: ``(line, column, keys above and itself, document)``.

    Tolerant: template directive lines are skipped, indentation decides
    nesting, list items are not numbered (a ``range`` repeats them: every item
    is :data:`ITEM`), block scalars are stepped over.
    """
    out = []
    stack: list[tuple[int, str]] = []  # (indent, key or ITEM)
    block_indent: int | None = None
    document = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip(" "))
        if block_indent is not None:
            if not stripped or indent > block_indent:
                continue
            block_indent = None
        if not stripped or stripped.startswith("#"):
            continue
        if raw.startswith("---"):
            document += 1
            stack = []
            continue
        if stripped.startswith("{{") and "}}" in stripped:
            # A directive alone on its line; `{{ ... }}: value` keys are rare and ambiguous anyway.
            continue
        col = indent
        rest = raw[indent:]
        while rest.startswith("- ") or rest == "-":
            while stack and (stack[-1][0] > col or (stack[-1][0] == col and stack[-1][1] == ITEM)):
                stack.pop()
            stack.append((col, ITEM))
            out.append((number, col + 1, tuple(k for _, k in stack), document))
            step = 2 + len(rest[2:]) - len(rest[2:].lstrip(" ")) if rest != "-" else 1
            col += step
            rest = rest[step:]
        m = _KEY.match(rest)
        if not m:
            continue
        key = next(g for g in m.groups() if g is not None).strip()
        if "{{" in key:
            continue
        while stack and stack[-1][0] >= col:
            stack.pop()
        stack.append((col, key))
        out.append((number, col + 1, tuple(k for _, k in stack), document))
        if _BLOCK.search(rest):
            block_indent = col
    return out


def template_position(text: str, path: tuple, kind: str = "") -> tuple[int, int]:
    """Where the field at ``path`` is written in a template: its key's line when exactly one key
    matches (the deepest ancestor that is written, when the field itself is not), else the
    document's first line."""
    keys = tuple(ITEM if isinstance(p, int) else p for p in path)
    entries = template_keys(text)
    docs = _kind_documents(text, kind)
    if docs is not None:
        entries = [e for e in entries if e[3] in docs]
    doc_line = _document_line(text, docs)
    for depth in range(len(keys), 0, -1):
        want = keys[:depth]
        hits = [e for e in entries if e[2] == want]
        if len(hits) == 1:
            return hits[0][0], hits[0][1]
        if hits:
            return doc_line, 1
    return doc_line, 1


_KIND_LINE = re.compile(r"^kind:\s*['\"]?([A-Za-z0-9]+)", re.M)


def _kind_documents(text: str, kind: str) -> set[int] | None:
    """Documents of a template file that are of ``kind`` (None: cannot tell)."""
    if not kind:
        return None
    found = set()
    document = 0
    for raw in text.splitlines():
        if raw.startswith("---"):
            document += 1
            continue
        m = _KIND_LINE.match(raw)
        if m and m.group(1) == kind:
            found.add(document)
    return found or None


def _document_line(text: str, docs: set[int] | None) -> int:
    """First content line of the (only) matching document, else 1."""
    if docs is not None and len(docs) != 1:
        return 1
    want = next(iter(docs)) if docs else 0
    document = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.startswith("---"):
            document += 1
            continue
        stripped = raw.strip()
        if document == want and stripped and not stripped.startswith("#") and not stripped.startswith("{{"):
            return number
    return 1


# -- kustomize ----------------------------------------------------------------


def _block_lines(m: re.Match | None) -> list[str]:
    if m is None:
        return []
    return [ln.strip() for ln in m.group(1).splitlines() if ln.strip()]


def _kustomize_target(seg: _Segment, f: Finding, base: str) -> tuple[str, int, int] | None:
    origin = _block_lines(_ORIGIN.search(seg.text))
    origin_path = next((ln[len("path:") :].strip() for ln in origin if ln.startswith("path:")), None)
    if origin_path is None or any(ln.startswith("repo:") for ln in origin):
        return None
    tree = _segment_tree(seg)
    path = parse_path(f.path)
    kind = f.object.kind if f.object is not None else ""
    name = f.object.name if f.object is not None else ""
    candidates: list[tuple[int, int, int, int, str]] = []  # (depth found, order, line, column, file)
    resource = os.path.normpath(os.path.join(base, _unquote(origin_path)))
    best = _locate_in_file(resource, kind, name, path, tree)
    if best is not None:
        candidates.append((best[0], 0, best[1], best[2], resource))
    for order, patch in enumerate(_patch_files(seg, base), 1):
        found = _locate_in_file(patch, kind, name, path, tree)
        if found is not None and found[0] > 0:
            candidates.append((found[0], order, found[1], found[2], patch))
    if not candidates:
        return None
    # A value is where it was last written (a patch overrides the base); a mapping or list
    # that several files write (a container), and a field no file has whole, are the
    # base's, where most of it is.
    full = [c for c in candidates if c[0] == len(path)]
    if full and not isinstance(_node_at(tree, path), (dict, list)):
        pick = max(full, key=lambda c: c[1])
    else:
        pick = max(full or candidates, key=lambda c: (c[0], -c[1]))
    return pick[4], pick[2], pick[3]


def _node_at(tree: Any, path: tuple) -> Any:
    node = tree
    for part in path:
        in_map = isinstance(node, dict) and part in node
        if not in_map and not (isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)):
            return None
        node = node[part]
    return node


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _segment_tree(seg: _Segment) -> Any:
    if not seg.loaded:
        from kubelint_ml.input.loader import load

        seg.loaded = True
        loaded = load(seg.text.encode("utf-8"))
        seg.tree = loaded.documents[0].data if loaded.documents else None
    return seg.tree


def _patch_files(seg: _Segment, base: str) -> list[str]:
    """Strategic-merge patch files of the kustomizations that patched this object."""
    lines = _block_lines(_TRANSFORMS.search(seg.text))
    configured: list[str] = []
    current: str | None = None
    for ln in lines:
        if ln.startswith("- configuredIn:") or ln.startswith("configuredIn:"):
            current = ln.split(":", 1)[1].strip()
        elif ln.startswith("kind:") and current and ln.split(":", 1)[1].strip() in _PATCH_KINDS:
            kpath = os.path.normpath(os.path.join(base, _unquote(current)))
            if kpath not in configured:
                configured.append(kpath)
    out = []
    for kfile in configured:
        for p in _kustomization_patches(kfile):
            if p not in out:
                out.append(p)
    return out


def _kustomization_patches(kfile: str) -> list[str]:
    data = read_kustomization(kfile)
    directory = os.path.dirname(kfile)
    out = []
    for key in ("patches", "patchesStrategicMerge"):
        entries = data.get(key)
        if not isinstance(entries, list):
            continue
        for e in entries:
            rel = e.get("path") if isinstance(e, dict) else e if isinstance(e, str) and "\n" not in e else None
            if isinstance(rel, str):
                out.append(os.path.normpath(os.path.join(directory, rel)))
    return out


def _locate_in_file(file: str, kind: str, name: str, path: tuple, rendered: Any) -> tuple[int, int, int] | None:
    """``(keys matched, line, column)`` of ``path`` in the document of ``file`` that is this object."""
    from kubelint_ml.input.loader import locate

    docs = _file_documents(file)
    if not docs:
        return None
    same_kind = [d for d in docs if isinstance(d, dict) and d.get("kind") == kind]
    named = [d for d in same_kind if _name_of(d) and _name_of(d) in name]
    pick = named if len(named) == 1 else same_kind if len(same_kind) == 1 else []
    if not pick:
        return None
    doc = pick[0]
    translated = _translate(path, rendered, doc)
    line, column, found = locate(doc, translated)
    return len(found), line, column


@lru_cache(maxsize=128)
def _file_documents_cached(file: str, mtime: float) -> tuple:
    from kubelint_ml.input.loader import load

    try:
        with open(file, "rb") as fh:
            data = fh.read(4 << 20)
    except OSError:
        return ()
    return tuple(d.data for d in load(data).documents)


def _file_documents(file: str) -> tuple:
    if not os.path.isfile(file):  # paths come from the rendered text: never a FIFO or a device
        return ()
    try:
        return _file_documents_cached(file, os.path.getmtime(file))
    except OSError:
        return ()


def _name_of(doc: dict) -> str:
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def _translate(path: tuple, rendered: Any, source: Any) -> tuple:
    """``path`` in the rendered object, as the same field's path in a source document: list
    items are matched by ``name`` (as strategic merge does), else by position."""
    out: list = []
    node_r, node_s = rendered, source
    for part in path:
        if isinstance(part, int) and isinstance(node_s, list):
            item = node_r[part] if isinstance(node_r, list) and 0 <= part < len(node_r) else None
            index = part
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                match = [i for i, x in enumerate(node_s) if isinstance(x, dict) and x.get("name") == item["name"]]
                if len(match) == 1:
                    index = match[0]
                elif not match:
                    out.append(len(node_s))  # not in this file: stops the walk at the list
                    return tuple(out)
            out.append(index)
            node_r = item
            node_s = node_s[index] if 0 <= index < len(node_s) else None
        else:
            out.append(part)
            node_r = node_r.get(part) if isinstance(node_r, dict) else None
            node_s = node_s.get(part) if isinstance(node_s, dict) else None
    return tuple(out)
