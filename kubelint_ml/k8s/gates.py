"""The feature gates kubelint-ml judges gated fields by: each one's default for a Kubernetes version, and
the profile's ``featureGates`` overriding it.

A gate named in ``profile.featureGates`` (as the kube-apiserver's ``--feature-gates`` flag names it) is
on or off as written, whatever the version; otherwise it has its default for ``profile.kubernetesVersion``
(k/k pkg/features/kube_features.go and the KEPs), and without a version its newest default. Every rule
that decides by a gate asks :func:`enabled`, so no rule keeps a default of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

Version = tuple[int, int]

# gate -> the first version it is on by default (None: off by default in every version known here)
DEFAULT_ON: dict[str, Version | None] = {
    # pod-level resources (spec.resources): dropped while off
    "PodLevelResources": (1, 34),
    # an empty spec.resources no longer decides the QoS class
    "PodLevelResourcesFixKubeletQOSClass": (1, 36),
    # pod limits default from the containers' limits
    "PodLevelResourcesFixUpdateDefaulting": (1, 36),
    # a pod's spec.resourceClaims and containers' resources.claims: dropped while off
    "DynamicResourceAllocation": (1, 34),
    # extended resources served through DRA (DeviceClass extendedResourceName, KEP-5004)
    "DRAExtendedResource": (1, 36),
    # a request's capacity.requests (KEP-5075): dropped while off, the request takes whole devices
    "DRAConsumableCapacity": (1, 36),
    # a request's tolerations (KEP-5055): dropped while off
    "DRADeviceTaints": (1, 36),
    # a container's restartPolicyRules (KEP-5307): dropped while off
    "ContainerRestartRules": (1, 35),
    # the RestartAllContainers action of restartPolicyRules (KEP-5532)
    "RestartAllContainersOnContainerExits": (1, 36),
    # a volume's image source (KEP-4639): dropped while off
    "ImageVolume": (1, 35),
    # a container's lifecycle.stopSignal (KEP-4960): dropped while off
    "ContainerStopSignals": (1, 37),
    # the Workload API and a pod's workloadRef / schedulingGroup (KEP-4671): dropped while off
    "GenericWorkload": None,
    # a Job's own gang, spec.scheduling (KEP-5547): dropped while off
    "WorkloadWithJob": None,
    # pids in pod-level resources (1.37): dropped while off
    "PerPodPIDLimit": None,
    # a Job's spec.managedBy: dropped while off
    "JobManagedBy": (1, 32),
    # a container's resizePolicy (in-place resize): dropped while off
    "InPlacePodVerticalScaling": (1, 33),
}

KNOWN = tuple(DEFAULT_ON)


def default(name: str, version: Version | None) -> bool:
    """The gate's default in ``version`` (None: the newest version known here)."""
    first = DEFAULT_ON[name]
    return first is not None and (version is None or version >= first)


def enabled(name: str, version: Version | None, overrides: Mapping[str, bool] | None = None) -> bool:
    """Whether gate ``name`` is on in a cluster of ``version`` whose ``--feature-gates`` are ``overrides``."""
    if overrides:
        value = overrides.get(name)
        if value is not None:
            return bool(value)
    return default(name, version)


def decided(name: str, version: Version | None, overrides: Mapping[str, bool] | None = None) -> bool:
    """Whether the cluster's setting of the gate is known: a version, or the gate among the overrides."""
    return version is not None or bool(overrides and name in overrides)


def of(ctx: object) -> tuple[Version | None, Mapping[str, bool]]:
    """The profile's (version, featureGates) of a rule's context (or a profile itself)."""
    from kubelint_ml.k8s.version import parse_version

    profile = getattr(ctx, "profile", ctx)
    return parse_version(getattr(profile, "kubernetes_version", None)), getattr(profile, "feature_gates", None) or {}


def gate_on(ctx: object, name: str) -> bool:
    """:func:`enabled` for the profile of a rule's context."""
    return enabled(name, *of(ctx))


def setting(
    name: str, version: Version | None, overrides: Mapping[str, bool] | None = None, written: str | None = None
) -> str:
    """How the gate comes to be on or off, for messages: "on in profile.featureGates", "off by default in 1.35"
    (``written``: the version as the profile writes it)."""
    state = "on" if enabled(name, version, overrides) else "off"
    if overrides and name in overrides:
        return f"{state} in profile.featureGates"
    shown = written or (f"{version[0]}.{version[1]}" if version else "")
    return f"{state} by default" + (f" in {shown}" if shown else "")
