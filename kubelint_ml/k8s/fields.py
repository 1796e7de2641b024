"""The fields of the pod-spec parts the rules read, as the Kubernetes API knows them.

``kubelint_ml/data/pod-fields.json`` holds, for each part (PodSpec, Container,
EphemeralContainer, ResourceRequirements, Volume, EmptyDirVolumeSource, JobSpec), the
union of its field names over every Kubernetes version whose OpenAPI schema
kubernetes-validate bundles, so a field of any supported version is known; it is
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
def known_fields() -> dict[str, frozenset[str]]:
    """Part name -> the field names any bundled Kubernetes version knows."""
    with open(DATA, encoding="utf-8") as fh:
        data = json.load(fh)
    return {part: frozenset(names) for part, names in data["fields"].items()}


def generate() -> str:
    """The data file's text, from kubernetes-validate's schemas."""
    import kubernetes_validate

    root = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema")
    versions = sorted(d for d in os.listdir(root) if d.endswith("-local"))
    fields: dict[str, set[str]] = {part: set() for part in DEFINITIONS}
    for version in versions:
        with open(os.path.join(root, version, "_definitions.json"), encoding="utf-8") as fh:
            defs = json.load(fh)["$defs"]
        for part, name in DEFINITIONS.items():
            fields[part].update(defs.get(name, {}).get("properties", {}))
    out = {
        "versions": [v.split("-")[0] for v in versions],
        "fields": {part: sorted(names) for part, names in fields.items()},
    }
    return json.dumps(out, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m kubelint_ml.k8s.fields > kubelint_ml/data/pod-fields.json
    import sys

    sys.stdout.write(generate())
