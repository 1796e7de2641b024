"""Pod fields the API server drops at the profile's Kubernetes version, where their feature gate is off by
default, in a way that silently changes what the pod does.

Followed: the versioned gate table (pkg/features/kube_features.go) and ``dropDisabledFields``
(pkg/api/pod/util.go, for pods and the pod templates of the built-in workloads; the API server drops the
field unless the stored object already has it):

- an image volume (``volumes[].image``, KEP-4639; ImageVolume: alpha in 1.31 and 1.32, beta and off in
  1.33 and 1.34, on from 1.35): ``dropImageVolumes`` removes the volume and every container's
  ``volumeMounts`` of it, so the containers find nothing at the mount path;
- a container's ``lifecycle.stopSignal`` (KEP-4960; ContainerStopSignals: alpha and off from 1.33, the
  releases through 1.36): dropped, so the container is stopped with its image's STOPSIGNAL or SIGTERM, not
  the signal its process handles (a trainer that checkpoints on SIGINT or SIGUSR1). KEP-4960 moved to
  beta for 1.37; without the 1.37 gate table at hand nothing is said there.

Before the field exists (an image volume before 1.31) ``unknown-field`` reports it. In an audit, and in
``serve``, an object that kept the field shows the gate on (:mod:`kubelint_ml.k8s.kept`).
"""

from __future__ import annotations

from collections.abc import Mapping

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.gates import enabled, setting
from kubelint_ml.k8s.gates import of as gates_of

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

IMAGE_VOLUME = "ImageVolume", (1, 31)  # Volume.image: its gate, and the first version with the field
STOP_SIGNAL = "ContainerStopSignals", (1, 33)  # Lifecycle.stopSignal


def _off(gate: tuple[str, tuple[int, int]], version: tuple[int, int] | None, overrides: Mapping[str, bool]) -> bool:
    """The field is in the version's API and its gate is off (the API server drops it)."""
    name, first = gate
    if version is None:
        return overrides.get(name) is False
    return version >= first and not enabled(name, version, overrides)


def _why(gate: str, version, overrides: Mapping[str, bool], raw: str | None, alpha: str = "") -> str:
    """ "off by default in 1.34" or "off in profile.featureGates"."""
    return ("" if gate in overrides else alpha) + setting(gate, version, overrides, raw)


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    raw = getattr(getattr(ctx, "profile", None), "kubernetes_version", None)
    version, overrides = gates_of(ctx)
    cache = getattr(ctx, "cache", None)
    kept = cache if isinstance(cache, dict) else {}
    out: list[Hit] = []
    if _off(IMAGE_VOLUME, version, overrides) and kept.get("image_volume") is not True:
        out.extend(_image_volumes(tpl, _why("ImageVolume", version, overrides, raw)))
    if _off(STOP_SIGNAL, version, overrides) and kept.get("container_stop_signals") is not True:
        out.extend(_stop_signals(tpl, _why("ContainerStopSignals", version, overrides, raw, "alpha, ")))
    return out or None


def _image_volumes(tpl, why: str) -> list[Hit]:
    out = []
    for volume in tpl.volumes:
        image = volume.data.get("image")
        if image is None:
            continue
        mounts = [
            f"{c.describe()} at {m.get('mountPath')}"
            for c in tpl.all_containers
            for m in (c.data.get("volumeMounts") if isinstance(c.data.get("volumeMounts"), list) else ())
            if isinstance(m, dict) and m.get("name") == volume.name
        ]
        where = "; " + ", ".join(mounts) + " then find nothing there" if mounts else ""
        reference = image.get("reference") if isinstance(image, dict) else None
        out.append(
            Hit(
                volume.path + ("image",),
                f"image volume '{volume.name}' is dropped unless the ImageVolume gate is on ({why})",
                severity="warning",
                detail=f"{tpl.describe()}: ImageVolume is off by default before 1.35, and with it off the API server "
                f"drops image volume '{volume.name}'"
                + (f" ({reference})" if isinstance(reference, str) else "")
                + f" and the volumeMounts of it{where}. Enable ImageVolume on the API server and the kubelets "
                "(with a container runtime that supports image volumes), or ship the files another way (an init "
                "container copying them to an emptyDir, a PersistentVolumeClaim)",
            )
        )
    return out


def _stop_signals(tpl, why: str) -> list[Hit]:
    out = []
    for c in tpl.all_containers:
        lifecycle = c.data.get("lifecycle")
        signal = lifecycle.get("stopSignal") if isinstance(lifecycle, dict) else None
        if signal is None or signal == "SIGTERM":
            continue  # (SIGTERM: what the kubelet sends anyway, unless the image names another STOPSIGNAL)
        out.append(
            Hit(
                c.path + ("lifecycle", "stopSignal"),
                f"{c.describe()} stopSignal {signal} is dropped unless the ContainerStopSignals gate is on ({why})",
                severity="warning",
                container=c.name,
                at_value=True,
                detail=f"{tpl.describe()}: with ContainerStopSignals off the API server drops {c.describe()}'s "
                f"lifecycle.stopSignal, so the kubelet stops it with its image's STOPSIGNAL or SIGTERM, not {signal}: "
                "a process that saves its state on that signal (a checkpoint on preemption) is killed without "
                "saving. Enable ContainerStopSignals on the API server and the kubelets (and set spec.os.name, "
                "which the field then needs), or handle SIGTERM in the process",
            )
        )
    return out
