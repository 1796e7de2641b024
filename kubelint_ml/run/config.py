"""The config file, ``.kubelint-ml.yaml``, and the cluster profile in it."""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kubelint_ml.engine.api import did_you_mean
from kubelint_ml.input.loader import Limits, LoadError, load_single
from kubelint_ml.k8s.gates import KNOWN as KNOWN_GATES
from kubelint_ml.records import Record, replace

if TYPE_CHECKING:
    from pathlib import Path

CONFIG_NAMES = (".kubelint-ml.yaml", ".kubelint-ml.yml")


class ConfigError(Exception):
    """An unusable config file; the message names the file and the field."""


class Profile(Record):
    kubernetes_version: str | None
    kubelet_version: str | None
    os: str | None
    cgroup_version: int | None
    kubelet_config: str | None  # path, resolved against the config file
    node_pools: list  # kubelint_ml.k8s.nodes.NodePool
    priority_classes: dict[str, int | None]
    accelerator_device_classes: list  # DRA DeviceClass names, or {name, resource}
    kueue_namespaces: tuple[str, ...]  # where Kueue is to manage every accelerator workload ("*": all)
    feature_gates: dict[str, bool]  # the cluster's --feature-gates over the version's defaults (k8s/gates.py)
    __slots__ = _fields = (
        "kubernetes_version",
        "kubelet_version",
        "os",
        "cgroup_version",
        "kubelet_config",
        "node_pools",
        "priority_classes",
        "accelerator_device_classes",
        "kueue_namespaces",
        "feature_gates",
    )

    def __init__(
        self,
        kubernetes_version: str | None = None,
        kubelet_version: str | None = None,
        os: str | None = None,
        cgroup_version: int | None = None,
        kubelet_config: str | None = None,
        node_pools: list | None = None,
        priority_classes: dict[str, int | None] | None = None,
        accelerator_device_classes: list | None = None,
        kueue_namespaces: tuple[str, ...] = (),
        feature_gates: dict[str, bool] | None = None,
    ) -> None:
        self.kueue_namespaces = tuple(kueue_namespaces)
        self.feature_gates = {} if feature_gates is None else feature_gates
        self.kubernetes_version = kubernetes_version
        self.kubelet_version = kubelet_version
        self.os = os
        self.cgroup_version = cgroup_version
        self.kubelet_config = kubelet_config
        self.node_pools = [] if node_pools is None else node_pools
        self.priority_classes = {} if priority_classes is None else priority_classes
        self.accelerator_device_classes = [] if accelerator_device_classes is None else accelerator_device_classes

    def kubelet_config_paths(self) -> list[str]:
        """The KubeletConfiguration files the profile names (the cluster's, then the pools'), in order."""
        return [p for p in [self.kubelet_config] + [pool.kubelet_config for pool in self.node_pools] if p]

    @classmethod
    def from_dict(cls, data: dict, base: Path) -> Profile:
        from kubelint_ml.k8s.nodes import catalog, node_pool_from_config

        pools = []
        for entry in data.get("nodePools", []):
            pool = node_pool_from_config(entry["name"], entry)
            for attr in ("memory", "cpu", "ephemeralStorage"):  # before the catalog fills in what is missing
                if attr in entry:
                    py = {"ephemeralStorage": "ephemeral_storage"}.get(attr, attr)
                    if getattr(pool, py) is None:
                        raise ConfigError(
                            f"profile.nodePools[{entry['name']}].{attr}: {entry[attr]!r} is not a quantity"
                        )
            itype = entry.get("instanceType")
            if itype:
                known = catalog().get(itype)
                if known is None:
                    line = line_of(entry, ("instanceType",))
                    raise ConfigError(
                        f"{line}: " * bool(line)
                        + f"profile.nodePools[{entry['name']}].instanceType: unknown instance type {itype!r}"
                        + did_you_mean(itype, catalog())
                        + " (the built-in catalog's types are in kubelint_ml/data/gpu-catalog.yaml; or give "
                        "gpus, memory and cpu yourself)"
                    )
                pool = replace(
                    pool,
                    labels=dict(pool.labels) or {"node.kubernetes.io/instance-type": itype},
                    gpus=pool.gpus if pool.gpus is not None else known.gpus,
                    gpu_resource=entry.get("gpuResource", known.gpu_resource),
                    memory=pool.memory if pool.memory is not None else known.memory,
                    cpu=pool.cpu if pool.cpu is not None else known.cpu,
                    ephemeral_storage=pool.ephemeral_storage
                    if pool.ephemeral_storage is not None
                    else known.ephemeral_storage,
                )
            if pool.kubelet_config:
                pool = replace(pool, kubelet_config=str(base / pool.kubelet_config))
            pools.append(pool)
        classes: dict[str, int | None] = {}
        raw = data.get("priorityClasses", {})
        if isinstance(raw, dict):
            classes = {str(k): v for k, v in raw.items()}
        else:
            for item in raw:
                if isinstance(item, str):
                    classes[item] = None
                else:
                    classes[item["name"]] = item.get("value")
        gates = data.get("featureGates") or {}
        for name in gates:
            if name not in KNOWN_GATES:
                line = line_of(data, ("featureGates", name))
                raise ConfigError(
                    f"{line}: "
                    * bool(line)
                    + f"profile.featureGates: unknown feature gate {str(name)!r}{did_you_mean(str(name), KNOWN_GATES)} "
                    f"(kubelint-ml judges by {', '.join(sorted(KNOWN_GATES))})"
                )
        kcfg = data.get("kubeletConfig")
        return cls(
            kubernetes_version=_version(data.get("kubernetesVersion")),
            kubelet_version=_version(data.get("kubeletVersion")),
            os=data.get("os"),
            cgroup_version=data.get("cgroupVersion"),
            kubelet_config=str(base / kcfg) if kcfg else None,
            node_pools=pools,
            priority_classes=classes,
            accelerator_device_classes=list(data.get("acceleratorDeviceClasses") or []),
            kueue_namespaces=tuple(data.get("kueueNamespaces", ())),
            feature_gates={str(k): bool(v) for k, v in gates.items()},
        )

    def effective_kubelet_version(self, pool: Any = None) -> str | None:
        if pool is not None and getattr(pool, "kubelet_version", None):
            return _version(pool.kubelet_version)
        return self.kubelet_version or self.kubernetes_version

    def to_cel(self) -> dict:
        """The profile as CEL sees it: plain data."""

        def num(v: Fraction | None) -> Any:
            if v is None:
                return None
            return int(v) if v.denominator == 1 else float(v)

        return {
            "kubernetesVersion": self.kubernetes_version or "",
            "kubeletVersion": self.kubelet_version or "",
            "os": self.os or "",
            "cgroupVersion": self.cgroup_version or 0,
            "nodePools": [
                {
                    "name": p.name,
                    "labels": dict(p.labels),
                    "gpus": p.gpus if p.gpus is not None else 0,
                    "gpuResource": p.gpu_resource,
                    "memory": num(p.memory),
                    "cpu": num(p.cpu),
                    "ephemeralStorage": num(p.ephemeral_storage),
                }
                for p in self.node_pools
            ],
            "priorityClasses": {k: v for k, v in self.priority_classes.items()},
        }


def _version(value: Any) -> str | None:
    return None if value is None else str(value).lstrip("v")


class Config(Record):
    path: str | None
    rules_dirs: list[str]
    enable: set[str]
    disable: set[str]
    severity: dict[str, str]
    params: dict[str, dict]
    exclude: list[dict]
    fail_level: str | None
    profile: Profile
    schema: dict
    limits: Limits
    rule_lines: dict[str, int]  # rule id -> line of the config that names it
    render: dict  # helm/kustomize rendering (kubelint_ml/input/render.py)
    context: list[str]  # files read for facts only, never reported on
    usage: dict  # the `usage:` section (kubelint_ml.usage.source reads it)
    admission: dict  # `kubelint-ml serve` settings (kubelint_ml.admission)
    kinds: dict  # what is assumed of controllers (kubelint_ml.input.kinds.configure)
    respect_gitignore: bool  # a walk skips what .gitignore files ignore
    __slots__ = _fields = (
        "path",
        "rules_dirs",
        "enable",
        "disable",
        "severity",
        "params",
        "exclude",
        "fail_level",
        "profile",
        "schema",
        "limits",
        "rule_lines",
        "render",
        "context",
        "usage",
        "admission",
        "kinds",
        "respect_gitignore",
    )

    def __init__(
        self,
        path: str | None = None,
        rules_dirs: list[str] | None = None,
        enable: set[str] | None = None,
        disable: set[str] | None = None,
        severity: dict[str, str] | None = None,
        params: dict[str, dict] | None = None,
        exclude: list[dict] | None = None,
        fail_level: str | None = None,
        profile: Profile | None = None,
        schema: dict | None = None,
        limits: Limits | None = None,
        rule_lines: dict[str, int] | None = None,
        render: dict | None = None,
        context: list[str] | None = None,
        usage: dict | None = None,
        admission: dict | None = None,
        kinds: dict | None = None,
        respect_gitignore: bool = True,
    ) -> None:
        self.path = path
        self.rules_dirs = [] if rules_dirs is None else rules_dirs
        self.enable = set() if enable is None else enable
        self.disable = set() if disable is None else disable
        self.severity = {} if severity is None else severity
        self.params = {} if params is None else params
        self.exclude = [] if exclude is None else exclude
        self.fail_level = fail_level
        self.profile = Profile() if profile is None else profile
        self.schema = {} if schema is None else schema
        self.limits = Limits() if limits is None else limits
        self.rule_lines = {} if rule_lines is None else rule_lines
        self.render = {} if render is None else render
        self.context = [] if context is None else context
        self.usage = {} if usage is None else usage
        self.admission = {} if admission is None else admission
        self.kinds = {} if kinds is None else kinds
        self.respect_gitignore = respect_gitignore


def find_config(start: str | None = None) -> str | None:
    """The config file in ``start`` (the working directory) or the nearest directory above it."""
    directory = os.path.realpath(start or os.getcwd())
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def line_of(data: Any, path: tuple) -> int:
    """The line of the key or item at ``path`` in a loaded config (0 when unknown)."""
    from kubelint_ml.input.loader import locate

    try:
        return locate(data, path)[0]
    except Exception:  # a value without positions (an empty file)
        return 0


def _schema_errors(data: Any, text: bytes = b"") -> list[tuple[int, str]]:
    """(line, "where: what") for each way the config breaks its schema, first by position."""
    import jsonschema

    with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "schemas", "config.schema.json"), "rb") as fh:
        schema = json.load(fh)
    validator = jsonschema.Draft202012Validator(schema)
    out = []
    for err in validator.iter_errors(data):
        path = tuple(err.absolute_path)
        msg = err.message if len(err.message) < 300 else err.message[:300] + "..."
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            allowed = list(err.schema.get("properties") or {})
            extra = [k for k in err.instance if k not in allowed]
            if extra:  # name the key, where it is, and the one that was probably meant
                path += (extra[0],)
                msg = f"unknown key {str(extra[0])!r}{did_you_mean(extra[0], allowed)}"
        line = line_of(data, path)
        if err.validator == "type" and isinstance(err.instance, (int, float)) and not isinstance(err.instance, bool):
            wanted = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
            if "string" in wanted:  # `kubernetesVersion: 1.30` is the number 1.3 to YAML
                written = _written(text, line, path[-1] if path else None) or str(err.instance)
                msg += f' (YAML reads {written} as a number; quote it: "{written}")'
        where = ".".join(str(p) for p in path) or "(top level)"
        out.append((line, f"{where}: {msg}"))
    return sorted(out)


def _written(text: bytes, line: int, key: Any) -> str | None:
    """The scalar as written after ``key:`` on the config's ``line`` (1-based)."""
    if not line or not isinstance(key, str):
        return None
    lines = text.decode("utf-8", "replace").splitlines()
    if line > len(lines):
        return None
    _, sep, rest = lines[line - 1].partition(key + ":")
    value = re.split(r"[#,}\]]", rest, maxsplit=1)[0].strip()  # a flow mapping's value ends at , } or ]
    return value if sep and value else None


def tab_hint(text: bytes, line: int) -> str:
    """A hint for a YAML error on a line indented with a tab (YAML allows only spaces)."""
    lines = text.decode("utf-8", "replace").splitlines()
    if 0 < line <= len(lines) and "\t" in lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]:
        return " (the line is indented with a tab: YAML indents with spaces only)"
    return ""


def load_config(path: str | os.PathLike | None) -> Config:
    if path is None:
        return Config()
    from pathlib import Path  # only with a config: a plain run never needs it

    p = Path(path)
    try:
        text = p.read_bytes()
    except OSError as e:
        raise ConfigError(f"{p}: cannot read config: {e.strerror}") from None
    try:  # the manifest loader's limits: a config from a pull request is untrusted too
        data = load_single(text)
    except LoadError as e:
        raise ConfigError(f"{p}:{e.line}: {e.message}{tab_hint(text, e.line)}") from None
    if data is None:
        data = {}
    errors = _schema_errors(data, text)
    if errors:
        line, first = errors[0]
        raise ConfigError(
            f"{p}{f':{line}' if line else ''}: {first}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        )
    base = p.parent
    cfg = Config(path=str(p))
    cfg.rules_dirs = [str(base / d) for d in list(data.get("rules", [])) + list(data.get("policy", []))]
    cfg.enable = set(data.get("enable", []))
    cfg.disable = set(data.get("disable", []))
    for rid, o in (data.get("overrides") or {}).items():
        if "severity" in o:
            cfg.severity[rid] = o["severity"]
        if "params" in o:
            cfg.params[rid] = o["params"]
    cfg.exclude = list(data.get("exclude", []))
    for key in ("enable", "disable"):  # where each rule id is written, for errors about unknown ids
        for i, rid in enumerate(data.get(key) or []):
            cfg.rule_lines.setdefault(rid, line_of(data, (key, i)))
    for rid in data.get("overrides") or {}:
        cfg.rule_lines.setdefault(rid, line_of(data, ("overrides", rid)))
    cfg.fail_level = data.get("failLevel")
    try:
        cfg.profile = Profile.from_dict(data.get("profile") or {}, base)
    except ConfigError as e:
        where = f"{p}:" if str(e)[:1].isdigit() else f"{p}: "  # "12: ..." when the line is known
        raise ConfigError(f"{where}{e}") from None
    schema = dict(data.get("schema") or {})
    if "crds" in schema:
        schema["crds"] = [str(base / c) for c in schema["crds"]]
    cfg.schema = schema
    render = dict(data.get("render") or {})
    if "helm" in render:
        helm = dict(render["helm"])
        helm["values"] = [str(base / v) for v in helm.get("values", [])]
        render["helm"] = helm
    cfg.render = render
    cfg.context = [str(base / c) for c in data.get("context", [])]
    cfg.usage = dict(data.get("usage") or {})
    cfg.admission = dict(data.get("admission") or {})
    cfg.kinds = dict(data.get("kinds") or {})
    cfg.respect_gitignore = data.get("respectGitignore", True)
    lim = data.get("limits") or {}
    defaults = Limits()
    cfg.limits = Limits(
        max_file_bytes=lim.get("maxFileBytes", defaults.max_file_bytes),
        max_depth=lim.get("maxDepth", defaults.max_depth),
        max_documents=lim.get("maxDocuments", defaults.max_documents),
        max_expanded_nodes=lim.get("maxExpandedNodes", defaults.max_expanded_nodes),
        max_nodes=lim.get("maxNodes", defaults.max_nodes),
    )
    return cfg


STARTER = """\
# kubelint-ml configuration. Every key is optional.
# Docs: https://github.com/kubelint-ml/kubelint-ml/blob/main/README.md#configuration

# Lowest severity that makes `kubelint-ml check` exit 1: error | warning | info
failLevel: error

# Directories of your own rules (YAML files: a template + params, or CEL).
# rules:
#   - policies/

# Rules that are off by default, to turn on; rules to turn off.
# enable: [gpu-node-unresolved]
# disable: [memory-overcommit-ratio]

# Per-rule severity and params.
# overrides:
#   memory-overcommit-ratio:
#     severity: warning
#     params: {ratio: 3.0}
#   gpu-memory-share-mismatch:
#     params: {tolerance: 0.2}

# Findings to drop: by path glob, kind, namespace, name glob, optionally one rule.
# exclude:
#   - path: "charts/**"
#   - kind: ConfigMap
#   - namespace: kube-system
#   - name: "smoke-test-*"
#     rule: missing-priority-class
#     reason: smoke tests run at default priority

# What kubelint-ml knows about the cluster the manifests run on. kubelint-ml never
# guesses: a rule that needs a fact the profile does not give is skipped (`-v` says
# which and why). Uncomment only what is true of your cluster; each field turns on
# the checks named beside it, and they may add findings.
# profile:
#   # Kubelet version of every node (unless a pool sets kubeletVersion), and the
#   # default of --schema: group-oom-kill-multiprocess, oom-kill-setting-ignored,
#   # fail-cgroup-v1-conflict (failCgroupV1 defaults to true from 1.35).
#   kubernetesVersion: "1.33"
#   # Feature gates the cluster sets (as kube-apiserver --feature-gates names them),
#   # over the version's defaults: rules that judge gated fields (pod-level
#   # resources, DRA, restart rules, image volumes, Workloads, ...) follow them.
#   featureGates:
#     DynamicResourceAllocation: true
#     ImageVolume: true
#   # linux | windows: oom-kill-setting-ignored (singleProcessOOMKill is Linux-only).
#   os: linux
#   # 1 | 2: on 2, group-oom-kill-multiprocess (the kubelet kills the whole container
#   # on an OOM); on 1, oom-kill-cgroup-v1-conflict and fail-cgroup-v1-conflict.
#   cgroupVersion: 2
#   # The nodes' KubeletConfiguration (singleProcessOOMKill, failCgroupV1): the same
#   # kubelet rules read it instead of the version's defaults.
#   kubeletConfig: nodes/kubelet-config.yaml
#   # GPU node types, matched by labels: gpu-memory-share-mismatch and
#   # emptydir-exceeds-ephemeral-storage compare a pod with its share of the node;
#   # without a pool, a pod's own nodeSelector resolves it from the built-in catalog.
#   nodePools:
#     - name: a100
#       labels: {node.kubernetes.io/instance-type: p4d.24xlarge}
#       instanceType: p4d.24xlarge   # facts from the built-in catalog
#     - name: h100-onprem
#       labels: {pool: h100}
#       gpus: 8
#       memory: 1800Gi               # allocatable
#       cpu: "190"
#       ephemeralStorage: 25Ti
#       kubeletVersion: "1.32"
#       kubeletConfig: nodes/h100-kubelet.yaml
#   # PriorityClasses that exist in the cluster but not in the linted files:
#   # unknown-priority-class checks names against them, preemption-consumes-backoff
#   # compares values, missing-priority-class names the globalDefault.
#   priorityClasses:
#     - {name: training-high, value: 100000}
#     - {name: training-low, value: 1000}

# Files read for context (PriorityClasses, KubeletConfigurations, CRDs), never reported on:
# what a pre-commit run needs when it sees only the staged files.
# context: [cluster/]

# Helm charts and kustomizations among the paths are rendered (helm template,
# kustomize build or kubectl kustomize) and the output linted.
# render:
#   timeoutSeconds: 120
#   helm:
#     values: [ci/values.yaml]
#     set: [image.tag=test]

# Offline schema validation against Kubernetes' OpenAPI (and your CRDs).
# schema:
#   enabled: true
#   kubernetesVersion: "1.33"
#   strict: false
#   crds: [crds/]
"""
