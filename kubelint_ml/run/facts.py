"""The first pass: what rules that look across files need to know, read before any file is linted.

Every file is read once; only those whose bytes mention a context kind
(PriorityClass, KubeletConfiguration, ...) are parsed, into the small
summaries of :class:`kubelint_ml.engine.context.Facts`. The profile's own
facts (its kubelet configs, its priority classes) are added last.
"""

from __future__ import annotations

import os
from typing import Any

from kubelint_ml.engine.context import CONTEXT_KINDS, Facts, may_hold_context
from kubelint_ml.input.loader import Limits, LoadResult, load, load_matching
from kubelint_ml.input.objects import K8sObject, unpack
from kubelint_ml.input.sources import Source, file_key, read, read_once, read_regular
from kubelint_ml.records import replace
from kubelint_ml.run import pool
from kubelint_ml.run.config import Config, ConfigError

# Bytes kept from the first pass for the second, so that a file is read once;
# past this budget files are read again (memory stays bounded on big trees).
MAX_KEPT_BYTES = 64 * 1024 * 1024
# Of those, the bytes of the files whose documents a sequential run keeps for the second pass, so that
# a file holding context objects is parsed once: a parse tree with its positions takes about ten
# times its file's size (not its LibYAML events: a fix's edits parse them again when asked).
MAX_PARSED_BYTES = 2 * 1024 * 1024
# From this many files, with more than one job, the first pass is shared by forked workers too.
PARALLEL_SCAN_MIN_FILES = 512


def mentions_context(data: bytes, crds: bool = True) -> bool:
    """Whether a file's bytes can hold a context object (every file is asked): :func:`may_hold_context`,
    one search whose literal start the regex engine scans for quickly. ``crds``: whether CRDs are wanted
    (for --schema only)."""
    return may_hold_context(data, crds)


def first_pass(
    sources: list[Source],
    config: Config,
    stdin_data: bytes | None,
    keep: int = MAX_KEPT_BYTES,
    jobs: int = 1,
    parsed: dict[int, LoadResult] | None = None,
    crds: bool = True,
) -> tuple[Facts, list[bytes | None], int]:
    """Read every file once; parse only those whose bytes mention a context kind.

    Returns the facts; per source, its bytes (``None`` when unreadable, over
    the size limit, or past the ``keep`` budget: read again later); and how
    many bytes were read in all. With ``jobs > 1`` and many files the reading
    is shared by forked workers, and no bytes are kept but stdin's.

    ``parsed``: filled, by source index, with the parse of the kept files this pass parsed (up to
    ``MAX_PARSED_BYTES`` of them), for a sequential second pass to lint without parsing again.
    ``crds``: read CustomResourceDefinitions too (only --schema uses them); without, a file that holds
    nothing else of the context is not parsed.
    """
    if jobs > 1 and len(sources) >= PARALLEL_SCAN_MIN_FILES and hasattr(os, "fork"):
        return _first_pass_forked(sources, config, stdin_data, jobs, crds)
    facts = Facts()
    kept: list[bytes | None] = []
    budget = keep
    total = 0
    parsed_budget = MAX_PARSED_BYTES if parsed is not None else -1
    max_bytes = config.limits.max_file_bytes
    for i, s in enumerate(sources):
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
        keeps = len(data) <= budget or s.real == "-"
        if mentions_context(data, crds):
            if keeps and parsed is not None and len(data) <= parsed_budget:
                parsed[i] = loaded = load(data, config.limits)
                parsed_budget -= len(data)
                add_loaded_facts(facts, loaded, s.path, crds=crds)
            else:
                add_facts(facts, data, s.path, config.limits, crds=crds)
        if keeps:
            kept.append(data)
            budget -= len(data)
        else:
            kept.append(None)
    _profile_facts(facts, config)
    return facts, kept, total


def _first_pass_forked(
    sources: list[Source], config: Config, stdin_data: bytes | None, jobs: int, crds: bool = True
) -> tuple[Facts, list[bytes | None], int]:
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
    spans = pool.spans(len(sources), jobs)

    def scan(n: int) -> tuple[int, int, list[list[K8sObject]]]:
        total, context = 0, []
        for i in range(*spans[n]):
            data = kept[i]
            if data is None:
                try:
                    data = read(sources[i], max_bytes)
                except OSError:
                    continue
            total += len(data)
            if len(data) <= max_bytes and mentions_context(data, crds):
                context.append(context_objects(data, sources[i].path, config.limits, crds))
        return n, total, context

    # The workers parse the context objects too, and send them back (pickled, with their positions):
    # this process adds them up in input order, as a sequential pass does, a span as soon as the ones
    # before it are in (so that the objects of the whole run are never held at once).
    facts = Facts()
    waiting: dict[int, list[list[K8sObject]]] = {}
    done = [0]

    def add(part: tuple[int, int, list[list[K8sObject]]]) -> int:
        n, total, context = part
        waiting[n] = context
        while done[0] in waiting:
            for objects in waiting.pop(done[0]):
                for obj in objects:
                    facts.add_object(obj)
            done[0] += 1
        return total

    totals = pool.fork_map(len(spans), jobs, lambda n: add(scan(n)), lambda n: _portable(scan(n)), add)
    _profile_facts(facts, config)
    return facts, kept, sum(totals)


def _portable(part: tuple[int, int, list[list[K8sObject]]]) -> tuple[int, int, list[list[K8sObject]]]:
    """A worker's part of the first pass, its objects' values as plain dicts and lists: facts read
    no positions, and without them an object pickles about ten times faster."""
    n, total, context = part
    return n, total, [_plain_objects(objects) for objects in context]


def _plain_objects(objects: list[K8sObject]) -> list[K8sObject]:
    """One file's objects as plain values; those of one document (a List's items) share its values."""
    roots: dict[int, Any] = {}
    out = []
    for obj in objects:
        root = roots.get(id(obj.root))
        if root is None:
            root = roots[id(obj.root)] = _plain(obj.root)
        try:
            at, data = obj.root, root
            for key in obj.base:
                at, data = at[key], data[key]
        except (LookupError, TypeError):
            at = None
        if at is not obj.data:  # not the value at its place in the document: a value of its own
            data = _plain(obj.data)
        out.append(K8sObject(data, root, obj.base, obj.ref, obj.file, obj.document))
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def context_objects(data: bytes, file: str, limits: Limits, crds: bool = True) -> list[K8sObject]:
    """The objects of one file that may be context objects (by kind), from the documents that
    mention a context kind (``crds``: CustomResourceDefinitions among them)."""
    loaded = load_matching(data, limits, may_hold_context if crds else _no_crd_context)
    if loaded is None:
        loaded = load(data, limits)
    return [obj for doc in loaded.documents for obj in unpack(doc, file).objects if obj.kind in _CONTEXT_KINDS]


_CONTEXT_KINDS = frozenset(CONTEXT_KINDS)


def _no_crd_context(data: bytes) -> bool:
    return may_hold_context(data, False)


def add_facts(facts: Facts, data: bytes, file: str, limits: Limits, only: str | None = None, crds: bool = True) -> None:
    """The context objects of one file (of kind ``only``, if given) into ``facts``: of a file of
    many documents, only those that mention a context kind are parsed (``crds``: CRDs among them)."""
    for obj in context_objects(data, file, limits, crds):
        if only is None or obj.kind == only:
            facts.add_object(obj)


def add_loaded_facts(facts: Facts, loaded: LoadResult, file: str, only: str | None = None, crds: bool = True) -> None:
    """:func:`add_facts` from a file's parse; each document's objects are kept with it
    (``loaded.unpacked``), for the second pass to lint without unpacking them again."""
    loaded.unpacked = unpacked = [unpack(doc, file) for doc in loaded.documents]
    for found in unpacked:
        for obj in found.objects:
            if (only is None or obj.kind == only) and (crds or obj.kind != "CustomResourceDefinition"):
                facts.add_object(obj)


def context_facts(facts: Facts, paths: list[str], linted: list[Source], config: Config) -> None:
    """Facts from context files (``--context``, ``context`` in the config): read, never reported on.

    A file that is linted too already gave its facts."""
    if not paths:
        return
    from kubelint_ml.input.sources import SourceError, collect

    have = {s.identity or file_key(s.real) for s in linted if s.real != "-"}
    for path in paths:
        try:
            found = collect([path])
        except SourceError:
            raise ConfigError(f"context {path}: no such file or directory") from None
        for s in found:
            if read_once(s):  # stdin, a device, a FIFO, a socket: never waited on for context
                raise ConfigError(f"context {path}: not a regular file (devices, pipes and sockets are not read)")
            key = s.identity or file_key(s.real)
            if key in have:
                continue
            have.add(key)
            _context_file(facts, s, config)


def _context_file(facts: Facts, s: Source, config: Config) -> None:
    """One context file: a JSON dump (``kubectl get -o json``) streamed object by object, whatever its
    size; YAML read whole, with the limits of a cluster dump (one file of many objects)."""
    try:
        fh = open(s.real, "rb")  # noqa: SIM115  (closed below)
    except OSError:
        return
    claim_files, class_files = len(facts.dra.files), len(facts.dra.class_files)
    facts.cluster.context_files.add(s.path)
    _read_context_file(facts, fh, s, config)
    # DRA claims and classes read from context files (kubelint_ml/k8s/dra.py)
    facts.dra.from_context = facts.dra.from_context or len(facts.dra.files) > claim_files
    facts.dra.classes_from_context = facts.dra.classes_from_context or len(facts.dra.class_files) > class_files


def _read_context_file(facts: Facts, fh: Any, s: Source, config: Config) -> None:
    from kubelint_ml.input.dump import DumpError, dump_limits, looks_like_json, plain_object, read_json

    with fh:
        if looks_like_json(fh.peek(64)[:64]):
            try:
                for item in read_json(fh, s.path):
                    if isinstance(item.data, dict) and item.data.get("kind") in CONTEXT_KINDS:
                        facts.add_object(plain_object(item.data, s.path))
            except DumpError as e:
                raise ConfigError(f"context {e}") from None
            return
        data = fh.read()
    if mentions_context(data):
        add_facts(facts, data, s.path, dump_limits(config.limits))


def with_cluster_nodes(config: Config, facts: Facts) -> Config:
    """The config whose profile's node pools start with the cluster's Nodes (one pool per node shape):
    a node type the catalogue does not know (a DGX labelled by its owner) resolves from its Node."""
    pools = facts.cluster.node_pools()
    if not pools:
        return config
    profile = replace(config.profile, node_pools=pools + list(config.profile.node_pools))
    return replace(config, profile=profile)


def _profile_facts(facts: Facts, config: Config) -> None:
    # A profile file is among the inputs (see with_profile_files), so the first pass usually has it already.
    have = {file_key(k.source) for k in facts.kubelet_configs}
    for path in config.profile.kubelet_config_paths():
        if file_key(path) in have:
            continue
        have.add(file_key(path))
        try:
            data = read_regular(path, config.limits.max_file_bytes)
        except OSError as e:
            raise ConfigError(f"profile kubeletConfig {path}: cannot read: {e.strerror}") from None
        add_facts(facts, data, path, config.limits, only="KubeletConfiguration")
    facts.add_profile(config.profile)
