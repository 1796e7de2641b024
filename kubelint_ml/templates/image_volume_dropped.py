"""An image volume (``volumes[].image``, KEP-4639: an OCI image or artifact mounted read-only, the way
model weights ship beside a serving image) that the API server drops at the profile's Kubernetes version.

Followed: the ImageVolume gate (pkg/features/kube_features.go: alpha in 1.31 and 1.32, beta and off by
default in 1.33 and 1.34, beta and on from 1.35) and ``dropImageVolumes`` (pkg/api/pod/util.go, for pods
and workloads' pod templates alike): with the gate off, and no image volume in the stored object, the API
server removes every image volume and every container's ``volumeMounts`` of it, so the containers start
with nothing at the mount path. Before 1.31 ``image`` is not a Volume field (``unknown-field``). In an
audit, a stored object that kept an image volume shows the gate on.
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.version import parse_version

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

FIELD = (1, 31)  # Volume.image in the API (ImageVolume alpha)
ON = (1, 35)  # ImageVolume beta and on by default


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    images = [v for v in tpl.volumes if v.data.get("image") is not None]
    if not images:
        return None
    raw = getattr(getattr(ctx, "profile", None), "kubernetes_version", None)
    version = parse_version(raw)
    if version is None or not FIELD <= version < ON:
        return None
    cache = getattr(ctx, "cache", None)
    if isinstance(cache, dict) and cache.get("image_volume") is True:
        return None  # (audit) stored objects kept image volumes: the gate is on
    out = []
    for volume in images:
        mounts = [
            f"{c.describe()} at {m.get('mountPath')}"
            for c in tpl.all_containers
            for m in (c.data.get("volumeMounts") if isinstance(c.data.get("volumeMounts"), list) else ())
            if isinstance(m, dict) and m.get("name") == volume.name
        ]
        where = "; " + ", ".join(mounts) + " then find nothing there" if mounts else ""
        reference = volume.data["image"].get("reference") if isinstance(volume.data["image"], dict) else None
        out.append(
            Hit(
                volume.path + ("image",),
                f"image volume '{volume.name}' is dropped unless the ImageVolume gate is on (off by default in {raw})",
                severity="warning",
                detail=f"{tpl.describe()}: ImageVolume is beta and off by default before 1.35, and with it off the "
                f"API server drops image volume '{volume.name}'"
                + (f" ({reference})" if isinstance(reference, str) else "")
                + f" and the volumeMounts of it{where}. Enable ImageVolume on the API server and the kubelets "
                "(with a container runtime that supports image volumes), or ship the files another way (an init "
                "container copying them to an emptyDir, a PersistentVolumeClaim)",
            )
        )
    return out
