"""The fields of the pod-spec parts the rules read, as the Kubernetes API knows them.

``kubelint_ml/data/pod-fields.json`` holds, for each part (PodSpec, Container,
EphemeralContainer, ResourceRequirements, Volume, EmptyDirVolumeSource, JobSpec), the
union of its field names over every Kubernetes version whose OpenAPI schema
kubernetes-validate bundles, so a field of any supported version is known, and, for a
field not in every one of them, the first and last version that has it (``spans``), so a
profile's version can be judged as its API server judges it; it is
generated from those schemas (``python -m kubelint_ml.k8s.fields >
kubelint_ml/data/pod-fields.json``; a test checks it) and read without jsonschema.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

DEFINITIONS = {
    "podSpec": "io.k8s.api.core.v1.PodSpec",
    "container": "io.k8s.api.core.v1.Container",
    "ephemeralContainer": "io.k8s.api.core.v1.EphemeralContainer",
    "resources": "io.k8s.api.core.v1.ResourceRequirements",
    "volume": "io.k8s.api.core.v1.Volume",
    "emptyDir": "io.k8s.api.core.v1.EmptyDirVolumeSource",
    "jobSpec": "io.k8s.api.batch.v1.JobSpec",
}
DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "pod-fields.json")


@lru_cache(maxsize=1)
def _data() -> dict:
    with open(DATA, encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=1)
def known_fields() -> dict[str, frozenset[str]]:
    """Part name -> the field names any bundled Kubernetes version knows."""
    return {part: frozenset(names) for part, names in _data()["fields"].items()}


def _version(text: str) -> tuple[int, int]:
    major, minor = text.lstrip("v").split(".")[:2]
    return int(major), int(minor)


def field_span(part: str, name: str) -> tuple[tuple[int, int], tuple[int, int] | None] | None:
    """The first and last version whose API has the field (last None: kept to the newest), for a field not
    in every bundled version; else None."""
    span = _data()["spans"].get(part, {}).get(name)
    if not span:
        return None
    last = _version(span[1])
    return _version(span[0]), None if last == _version(_data()["versions"][-1]) else last


@lru_cache(maxsize=16)
def fields_in(version: tuple[int, int]) -> dict[str, frozenset[str]]:
    """Part name -> the field names the API of ``version`` knows (of the bundled versions' fields)."""
    newest = _version(_data()["versions"][-1])
    out = {}
    for part, names in known_fields().items():
        spans = _data()["spans"].get(part, {})
        out[part] = frozenset(n for n in names if n not in spans or _has(spans[n], version, newest))
    return out


def _has(span: list[str], version: tuple[int, int], newest: tuple[int, int]) -> bool:
    """A field kept to the newest bundled version is taken as kept in the versions after it."""
    last = _version(span[1])
    return _version(span[0]) <= version and (version <= last or last == newest)


def generate() -> str:
    """The data file's text, from kubernetes-validate's schemas."""
    import kubernetes_validate

    root = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema")
    versions = sorted((d for d in os.listdir(root) if d.endswith("-local")), key=lambda d: _version(d.split("-")[0]))
    fields: dict[str, set[str]] = {part: set() for part in DEFINITIONS}
    seen: dict[str, dict[str, list[str]]] = {part: {} for part in DEFINITIONS}
    for version in versions:
        with open(os.path.join(root, version, "_definitions.json"), encoding="utf-8") as fh:
            defs = json.load(fh)["$defs"]
        for part, name in DEFINITIONS.items():
            names = defs.get(name, {}).get("properties", {})
            fields[part].update(names)
            for n in names:
                seen[part].setdefault(n, []).append(version.split("-")[0])
    first, last = versions[0].split("-")[0], versions[-1].split("-")[0]
    out = {
        "versions": [v.split("-")[0] for v in versions],
        "fields": {part: sorted(names) for part, names in fields.items()},
        "spans": {
            part: {n: [vs[0], vs[-1]] for n, vs in sorted(by.items()) if (vs[0], vs[-1]) != (first, last)}
            for part, by in seen.items()
        },
    }
    return json.dumps(out, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m kubelint_ml.k8s.fields > kubelint_ml/data/pod-fields.json
    import sys

    sys.stdout.write(generate())
