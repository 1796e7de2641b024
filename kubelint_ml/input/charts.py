"""Which files belong to a Helm chart or a kustomization, the rendering options, and the streams
rendered in this run: what every run asks, without the renderer (kubelint_ml/input/render.py),
which is imported only when a chart or kustomization is among the paths or output is piped in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from kubelint_ml.records import Frozen

CHART_FILE = "Chart.yaml"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
DEFAULT_TIMEOUT = 120.0
# How far above a named file to look for the chart or kustomization it belongs to.
MAX_ANCESTORS = 8

# Rendered streams of this run (render.Stream), by display name (what a finding's file is before mapping).
STREAMS: dict[str, Any] = {}


class RenderOptions(Frozen):
    helm_values: tuple[str, ...]
    helm_set: tuple[str, ...]
    timeout: float
    enabled: bool
    __slots__ = _fields = ("helm_values", "helm_set", "timeout", "enabled")

    def __init__(
        self,
        helm_values: tuple[str, ...] = (),
        helm_set: tuple[str, ...] = (),
        timeout: float = DEFAULT_TIMEOUT,
        enabled: bool = True,
    ) -> None:
        object.__setattr__(self, "helm_values", helm_values)
        object.__setattr__(self, "helm_set", helm_set)
        object.__setattr__(self, "timeout", timeout)
        object.__setattr__(self, "enabled", enabled)


def options(
    config: Any, helm_values: tuple[str, ...] = (), helm_set: tuple[str, ...] = (), enabled: bool | None = None
) -> RenderOptions:
    """The config's ``render`` section with the command line's values files and ``--set`` pairs after it."""
    section = getattr(config, "render", None) or {}
    helm = section.get("helm") or {}
    return RenderOptions(
        helm_values=tuple(helm.get("values", ())) + tuple(helm_values),
        helm_set=tuple(helm.get("set", ())) + tuple(helm_set),
        timeout=float(section.get("timeoutSeconds", DEFAULT_TIMEOUT)),
        enabled=section.get("enabled", True) if enabled is None else enabled,
    )


def is_chart(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, CHART_FILE))


def kustomization_file(directory: str) -> str | None:
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return None


def has_markers(data: bytes) -> bool:
    """Output of ``helm template`` or ``kustomize build`` (piped in): it names the files it came from."""
    return b"# Source: " in data or b"config.kubernetes.io/origin" in data


def read_kustomization(path: str | None) -> dict:
    """A kustomization file's mapping; empty when it is not a regular file or not a mapping."""
    from kubelint_ml.input.loader import LoadError, load_single

    if path is None or not os.path.isfile(path):
        return {}
    try:
        with open(path, "rb") as fh:
            data = load_single(fh.read(1 << 20))
    except (OSError, LoadError):
        return {}
    return data if isinstance(data, dict) else {}


# Strings of a kustomization read for the files it names, at most: a hostile one costs no more.
MAX_KUSTOMIZATION_STRINGS = 10_000


def kustomization_uses(directory: str) -> frozenset[str]:
    """The real paths of the files the kustomization in ``directory`` names, itself among them:
    resources, patches, generators' files (``key=path`` too), crds, replacements, transformers...:
    every string of it that names a file there. ``kustomize build`` reads no other file of the
    directory; those are manifests of their own (a kubebuilder project's samples beside the few its
    ``config/samples/kustomization.yaml`` lists)."""
    kfile = kustomization_file(directory)
    if kfile is None:
        return frozenset()
    out = {os.path.realpath(kfile)}
    stack: list[Any] = [read_kustomization(kfile)]
    seen = 0
    while stack and seen < MAX_KUSTOMIZATION_STRINGS:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            seen += 1
            if "\n" in value or "://" in value or len(value) > 4096:
                continue  # an inline patch, a remote resource
            for name in {value, value.partition("=")[2]} - {""}:
                target = os.path.realpath(os.path.join(directory, name))
                if os.path.isfile(target):
                    out.add(target)
    return frozenset(out)


class Owners:
    """The chart or kustomization directory a file belongs to (the nearest one above it). A file of a
    kustomization's directory that the kustomization does not name belongs to none: it is linted as
    it is (see :func:`kustomization_uses`)."""

    def __init__(self, stops: Iterable[str]) -> None:
        self.stops = {os.path.realpath(s) for s in stops}
        self.cache: dict[str, tuple[str, str] | None] = {}
        self.uses: dict[str, frozenset[str]] = {}

    def of(self, directory: str, depth: int = 0) -> tuple[str, str] | None:
        """``(kind, directory)`` with kind ``helm`` or ``kustomize``, or None."""
        if directory in self.cache:
            return self.cache[directory]
        found: tuple[str, str] | None = None
        if is_chart(directory):
            found = ("helm", directory)
            parent = os.path.dirname(directory)
            if os.path.basename(parent) == "charts" and is_chart(os.path.dirname(parent)):
                found = self.of(os.path.dirname(parent), depth + 2) or found  # a subchart is its parent's
        elif kustomization_file(directory):
            found = ("kustomize", directory)
        elif depth < MAX_ANCESTORS and directory not in self.stops:
            parent = os.path.dirname(directory)
            if parent != directory:
                found = self.of(parent, depth + 1)
        self.cache[directory] = found
        return found

    def owner_of(self, source: Any, by_dir: dict[str, tuple[str, str] | None]) -> tuple[str, str] | None:
        """The owner of a source (a file named on the command line or found below a directory)."""
        if source.real == "-" or source.error:
            return None
        named = os.path.dirname(source.real)
        if named not in by_dir:
            by_dir[named] = self.of(os.path.realpath(os.path.abspath(named or ".")))
        return self._using(by_dir[named], source.real)

    def of_file(self, path: str) -> tuple[str, str] | None:
        """The owner of the file ``path``."""
        return self._using(self.of(os.path.realpath(os.path.dirname(os.path.abspath(path)))), path)

    def _using(self, owner: tuple[str, str] | None, path: str) -> tuple[str, str] | None:
        if owner is None or owner[0] != "kustomize":
            return owner
        uses = self.uses.get(owner[1])
        if uses is None:
            uses = self.uses[owner[1]] = kustomization_uses(owner[1])
        return owner if os.path.realpath(os.path.abspath(path)) in uses else None


def owners_for(sources: Iterable[Any]) -> Owners | None:
    """The owners search of this run when some source belongs to a chart or kustomization, else None.

    The search goes up to the working directory (a named template belongs to its chart even when
    its directory is named). The renderer's plan reuses what it found.
    """
    owners = Owners([os.getcwd()])
    by_dir: dict[str, tuple[str, str] | None] = {}
    return owners if any(owners.owner_of(s, by_dir) is not None for s in sources) else None
