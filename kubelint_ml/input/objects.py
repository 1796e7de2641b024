"""Kubernetes object identity, and ``List`` unpacking."""

from __future__ import annotations

from typing import Any

from kubelint_ml.findings import ObjectRef
from kubelint_ml.input.loader import Document
from kubelint_ml.lazyre import LazyPattern
from kubelint_ml.records import Record


class HasMetadata:
    """``annotations`` and ``labels`` of whatever ``metadata`` mapping the class has."""

    __slots__ = ()
    metadata: dict

    @property
    def annotations(self) -> dict:
        return submap(self.metadata, "annotations")

    @property
    def labels(self) -> dict:
        return submap(self.metadata, "labels")


class K8sObject(HasMetadata, Record):
    data: dict  # the object's mapping
    root: Any  # the document it sits in (for positions)
    base: tuple  # path of ``data`` inside ``root``: () or ("items", i)
    ref: ObjectRef
    file: str
    document: int
    group: str  # the API group of ``ref.apiVersion`` ("" for the core group): asked by every rule
    kind: str  # ``ref.kind``, as often
    _fields = ("data", "root", "base", "ref", "file", "document")
    __slots__ = _fields + ("group", "kind")

    def __init__(self, data: dict, root: Any, base: tuple, ref: ObjectRef, file: str, document: int) -> None:
        self.data = data
        self.root = root
        self.base = base
        self.ref = ref
        self.file = file
        self.document = document
        api = ref.apiVersion
        self.group = api.split("/", 1)[0] if "/" in api else ""
        self.kind = ref.kind

    def __reduce__(self) -> tuple:
        # made again by __init__ (its group and kind too), when a forked worker sends one back
        return (K8sObject, (self.data, self.root, self.base, self.ref, self.file, self.document))

    @property
    def metadata(self) -> dict:  # type: ignore[override]
        return submap(self.data, "metadata")


class ObjectProblem(Record):
    """A document that is not a usable object (reported as parse-error)."""

    message: str
    path: tuple
    root: Any
    ref: ObjectRef | None
    __slots__ = _fields = ("message", "path", "root", "ref")

    def __init__(self, message: str, path: tuple, root: Any, ref: ObjectRef | None = None) -> None:
        self.message = message
        self.path = path
        self.root = root
        self.ref = ref


class Skipped(Record):
    """A document that is valid YAML but not a Kubernetes object."""

    reason: str
    line: int
    __slots__ = _fields = ("reason", "line")

    def __init__(self, reason: str, line: int) -> None:
        self.reason = reason
        self.line = line


class Unpacked(Record):
    objects: list[K8sObject]
    problems: list[ObjectProblem]
    skipped: list[Skipped]
    __slots__ = _fields = ("objects", "problems", "skipped")

    def __init__(
        self,
        objects: list[K8sObject] | None = None,
        problems: list[ObjectProblem] | None = None,
        skipped: list[Skipped] | None = None,
    ) -> None:
        self.objects = [] if objects is None else objects
        self.problems = [] if problems is None else problems
        self.skipped = [] if skipped is None else skipped


def dig(node: Any, *keys: Any) -> Any:
    """``node[k1][k2]...`` through mappings (keys) and lists (indices); None when any step is missing."""
    for k in keys:
        if isinstance(node, dict):
            node = node.get(k)
        elif isinstance(node, list) and isinstance(k, int) and 0 <= k < len(node):
            node = node[k]
        else:
            return None
    return node


def submap(mapping: dict, key: str) -> dict:
    """``mapping[key]`` when it is a mapping, else an empty one (wrong types are reported elsewhere)."""
    value = mapping.get(key)
    return value if isinstance(value, dict) else {}


# Kubernetes names are at most 253 characters. Longer text from a manifest is
# cut where it is used to name things in messages, so a megabyte-long name
# cannot be repeated into every finding of its object.
MAX_NAME = 253


def clip(text: str, limit: int = MAX_NAME) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


# How a document's type is named in messages (bool before int: it is one).
_YAML_TYPES = (
    (dict, "a mapping"),
    (list, "a list"),
    (str, "a string"),
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a number"),
)


def yaml_type_name(value: Any) -> str:
    """``a mapping``, ``a list``, ``null``...: a value's YAML type, never an internal class name."""
    if value is None:
        return "null"
    return next((name for kind, name in _YAML_TYPES if isinstance(value, kind)), "a value")


def _text(value: Any) -> str:
    return clip(value) if isinstance(value, str) else ""


def make_ref(data: dict) -> ObjectRef:
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return ObjectRef(
        _text(data.get("apiVersion")),
        _text(data.get("kind")),
        _text(meta.get("namespace")),
        _text(meta.get("name")) or _text(meta.get("generateName")),
    )


# Kinds read by tools, not the API server, that may leave apiVersion out (kustomize's own files).
_NO_API_VERSION = frozenset(("Kustomization", "Component"))


# A kind as Kubernetes types are named (Go type names: Pod, ClusterTrainingRuntime). Without an apiVersion, a
# document whose kind is not one (`vllm-bench`, `discovery#restDescription`) is another tool's file.
_KIND = LazyPattern(r"[A-Z][A-Za-z0-9]*")


def _foreign_list(data: Any) -> bool:
    """A document that is a list of mappings none of which has an apiVersion or a kind: another tool's
    file (a kustomize JSON 6902 patch, an Ansible playbook), not a list of manifests written wrong."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and "apiVersion" not in item and "kind" not in item for item in data)
    )


def _one(data: Any, root: Any, base: tuple, file: str, index: int, out: Unpacked, line: int) -> None:
    if data is None:
        return
    if not isinstance(data, dict):
        if not base and _foreign_list(data):
            out.skipped.append(
                Skipped(
                    "a list of mappings without apiVersion or kind (a JSON patch, a playbook): not a Kubernetes manifest",
                    line,
                )
            )
            return
        what = yaml_type_name(data)
        out.problems.append(ObjectProblem(f"document is {what}, not a mapping (a Kubernetes object)", base, root))
        return
    kind = data.get("kind")
    if kind is None:
        out.skipped.append(Skipped("no 'kind': not a Kubernetes manifest", line))
        return
    if not isinstance(kind, str) or not kind:
        out.problems.append(ObjectProblem(f"kind must be a string, found {kind!r}"[:200], base + ("kind",), root))
        return
    api = data.get("apiVersion")
    if api is not None and not isinstance(api, str):
        out.problems.append(
            ObjectProblem(f"apiVersion must be a string, found {api!r}"[:200], base + ("apiVersion",), root)
        )
        return
    if (api is None or api == "") and not _KIND.fullmatch(kind):
        out.skipped.append(Skipped(f"kind {clip(kind, 60)!r} and no apiVersion: not a Kubernetes manifest", line))
        return
    if (api is None or api == "") and kind not in _NO_API_VERSION:
        # kubectl and the API server refuse it ("Object 'apiVersion' is missing"); the object is still
        # linted as its kind, so that what else it gets wrong is said too
        # A key spelled otherwise (`apiversion`: Go tools that decode into their own types accept it, kubectl not)
        other = next((k for k in data if isinstance(k, str) and k.lower() == "apiversion" and k != "apiVersion"), None)
        spelled = f"; {clip(other, 20)!r} is not it: keys are case-sensitive" if other is not None else ""
        out.problems.append(
            ObjectProblem(
                f"apiVersion is not set ({kind}{spelled}): kubectl and the API server refuse the object"[:200],
                base + (other if other is not None else "kind",),
                root,
                make_ref(data),
            )
        )
    meta = data.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        out.problems.append(
            ObjectProblem(
                f"metadata must be a mapping, found {yaml_type_name(meta)}", base + ("metadata",), root, make_ref(data)
            )
        )
        return
    items = data.get("items")
    if kind.endswith("List") and "items" in data:
        if not isinstance(items, list):
            out.problems.append(ObjectProblem(f"{kind}.items must be a list", base + ("items",), root, make_ref(data)))
            return
        for i, item in enumerate(items):
            if item is None:
                continue
            _one(item, root, base + ("items", i), file, index, out, line)
        return
    for key in ("labels", "annotations"):
        value = (meta or {}).get(key)
        if value is not None and not isinstance(value, dict):
            out.problems.append(
                ObjectProblem(
                    f"metadata.{key} must be a mapping, found {yaml_type_name(value)}",
                    base + ("metadata", key),
                    root,
                    make_ref(data),
                )
            )
            return
    out.objects.append(K8sObject(data, root, base, make_ref(data), file, index))


def unpack(doc: Document, file: str) -> Unpacked:
    out = Unpacked()
    _one(doc.data, doc.data, (), file, doc.index, out, doc.line)
    return out
