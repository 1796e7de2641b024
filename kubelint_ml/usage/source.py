"""A usage source from the command line and the config's ``usage:`` section, and the workloads
of the linted paths it is asked about.

Precedence: ``--prometheus`` / ``--usage`` on the command line, then
``usage.prometheus`` / ``usage.snapshot`` in the config. Credentials never come
from the config (see :mod:`kubelint_ml.usage.prometheus`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubelint_ml.usage.model import Usage, UsageError, Window, parse_duration

DEFAULT_LOOKBACK = "14d"
DEFAULT_STEP = "5m"  # the quantiles' resolution: 4,032 samples a series over 14 days
DEFAULT_MIN_SAMPLES = 60
DEFAULT_HEADROOM = 0.2


@dataclass
class Settings:
    prometheus: str | None = None
    snapshot: str | None = None
    lookback: float = 14 * 86400
    step: float = 300
    end: float | None = None
    namespace: str = "default"
    min_samples: int = DEFAULT_MIN_SAMPLES
    headroom: float = DEFAULT_HEADROOM
    cluster: str | None = None
    tenant: str | None = None
    selector: str = ""
    timeout: float = 60.0
    retries: int = 2
    max_response_bytes: int = 64 * 1024 * 1024
    cpu_window: float = 300.0
    concurrency: int = 4
    workloads: list = field(default_factory=list)
    url_from_config: str | None = None  # the config file, when the URL came from it
    snapshot_from_config: bool = False  # the snapshot is usage.snapshot, not --usage

    @property
    def configured(self) -> bool:
        return bool(self.prometheus or self.snapshot)


def settings(
    section: dict | None,
    *,
    config_path: str | None = None,
    prometheus: str | None = None,
    usage_file: str | None = None,
    lookback: str | None = None,
    namespace: str | None = None,
    end: Any = None,
    step: str | None = None,
) -> Settings:
    """The usage settings: command-line values over the config's ``usage:`` section."""
    cfg = dict(section or {})
    if prometheus and usage_file:
        raise UsageError("give --prometheus or --usage, not both")
    s = Settings()
    base = Path(config_path).parent if config_path else Path.cwd()
    if prometheus or usage_file:
        s.prometheus, s.snapshot = prometheus, usage_file
    else:
        s.prometheus = cfg.get("prometheus")
        s.url_from_config = (config_path or ".kubelint-ml.yaml") if s.prometheus else None
        s.snapshot = str(base / cfg["snapshot"]) if cfg.get("snapshot") else None
        s.snapshot_from_config = bool(s.snapshot)
        if s.prometheus and s.snapshot:
            raise UsageError(f"{config_path}: usage: give prometheus or snapshot, not both")
    s.lookback = parse_duration(lookback or cfg.get("lookback") or DEFAULT_LOOKBACK, "--lookback")
    what = "--step" if step else "usage.step"
    s.step = parse_duration(step or cfg.get("step") or DEFAULT_STEP, what)
    if s.step > s.lookback:
        raise UsageError(f"{what} is longer than the lookback")
    if s.step < 1 or s.step != int(s.step):
        raise UsageError(f"{what}: give whole seconds, at least 1s (e.g. 5m, 1m, 30s)")
    end = end if end is not None else cfg.get("end")
    if end is not None:
        s.end = parse_time(end)
    s.namespace = namespace or cfg.get("namespace") or "default"
    s.min_samples = int(cfg.get("minSamples", DEFAULT_MIN_SAMPLES))
    s.headroom = float(cfg.get("headroom", DEFAULT_HEADROOM))
    s.cluster = cfg.get("cluster")
    s.tenant = cfg.get("tenant")
    s.timeout = float(cfg.get("timeout", 60.0))
    s.retries = int(cfg.get("retries", 2))
    if cfg.get("maxResponseBytes") is not None:
        s.max_response_bytes = _byte_size(cfg["maxResponseBytes"], "usage.maxResponseBytes")
    s.concurrency = int(cfg.get("concurrency", 4))
    s.cpu_window = parse_duration(cfg.get("cpuRateWindow") or "5m", "usage.cpuRateWindow")
    if cfg.get("selector"):
        from kubelint_ml.usage.collect import check_selector

        s.selector = check_selector(cfg["selector"])
    s.workloads = list(cfg.get("workloads") or [])
    return s


def _byte_size(value: Any, what: str) -> int:
    """A size in bytes: an integer, or a quantity (``256Mi``); at least 1Ki, at most 16Gi."""
    from kubelint_ml.k8s.quantity import QuantityError, parse_quantity

    try:
        size = value if isinstance(value, int) and not isinstance(value, bool) else parse_quantity(str(value)).value
    except QuantityError:
        raise UsageError(f"{what}: {value!r} is not a size (bytes, or a quantity such as 256Mi)") from None
    if not 1024 <= size <= 16 * 1024**3:
        raise UsageError(f"{what}: {value!r} must be between 1Ki and 16Gi")
    return int(size)


def parse_time(value: Any) -> float:
    """Unix seconds, or an RFC 3339 time (``2026-11-01T00:00:00Z``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text)
        except ValueError:
            pass
        from datetime import datetime

        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return parsed.timestamp()
    raise UsageError(f"usage end {value!r}: give unix seconds or an RFC 3339 time with a zone (2026-11-01T00:00:00Z)")


# ----------------------------------------------------------------------------
# The workloads of the linted paths


@dataclass(slots=True)
class ContainerSpec:
    name: str
    requests: dict  # resource -> Fraction (after defaulting)
    limits: dict


@dataclass(slots=True)
class TemplateSpec:
    file: str
    key: tuple  # namespace, group, kind, name, role
    containers: list[ContainerSpec]


def scan(paths: list[str], config: Any, namespace: str) -> list[TemplateSpec]:
    """Every pod template of every object in ``paths`` (files that do not parse are left to the lint)."""
    from kubelint_ml.input.loader import load
    from kubelint_ml.input.objects import unpack
    from kubelint_ml.input.sources import SourceError, collect, read
    from kubelint_ml.input.workloads import pod_templates
    from kubelint_ml.k8s.resources import container_requests_limits, defaulted_requests

    if "-" in paths:
        raise UsageError("usage sources need the manifests as files or directories, not stdin")
    try:
        sources = collect(paths)
    except SourceError as e:
        raise UsageError(str(e)) from None
    out = []
    for src in sources:
        try:
            data = read(src, config.limits.max_file_bytes)
        except OSError:
            continue
        if len(data) > config.limits.max_file_bytes:
            continue
        for doc in load(data, config.limits).documents:
            for obj in unpack(doc, src.path).objects:
                for tpl in pod_templates(obj):
                    if tpl.broken:
                        continue
                    containers = []
                    for c in tpl.all_containers:
                        try:
                            req, lim = container_requests_limits(c.data)
                        except Exception:  # noqa: BLE001 - invalid quantities: the lint reports them
                            req, lim = {}, {}
                        containers.append(ContainerSpec(c.name, dict(defaulted_requests(req, lim)), dict(lim)))
                    key = (obj.ref.namespace or namespace, obj.group, obj.kind, obj.ref.name, tpl.role)
                    out.append(TemplateSpec(src.path, key, containers))
    return out


def load_usage(s: Settings, templates: list[TemplateSpec]) -> Usage:
    """The Usage for these templates, from Prometheus or the snapshot."""
    common = dict(default_namespace=s.namespace, min_samples=s.min_samples, headroom=s.headroom)
    if s.snapshot:
        from kubelint_ml.usage import snapshot

        name = "usage.snapshot" if s.snapshot_from_config else "--usage"
        usage = snapshot.read(s.snapshot, cluster=s.cluster, name=name, **common)
        for t in templates:
            if t.key not in usage.workloads and t.key not in usage.missing:
                usage.missing[t.key] = "not in the snapshot; not judged"
        return usage
    from kubelint_ml.usage.collect import Plan, Target, from_prometheus
    from kubelint_ml.usage.mapping import overrides_from_config
    from kubelint_ml.usage.prometheus import Prometheus, PrometheusError, auth_from_env

    try:
        auth = auth_from_env(tenant=s.tenant)
        prom = Prometheus(
            s.prometheus or "", auth, timeout=s.timeout, retries=s.retries, max_bytes=s.max_response_bytes
        )
    except PrometheusError as e:
        raise UsageError(str(e)) from None
    _check_credential_target(s, auth)
    end = s.end if s.end is not None else float(int(time.time()))
    plan = Plan(
        Window(s.lookback, s.step, end), s.selector, s.cpu_window, overrides_from_config(s.workloads), s.concurrency
    )
    targets: dict[tuple, set[str]] = {}
    for t in templates:
        targets.setdefault(t.key, set()).update(c.name for c in t.containers)
    ordered = [Target(k, tuple(sorted(v))) for k, v in sorted(targets.items())]
    return from_prometheus(prom, ordered, plan, cluster=s.cluster, **common)


def _check_credential_target(s: Settings, auth: object) -> None:
    """Credentials from the environment go to a URL from the command line, or to a config file's URL
    only when ``KUBELINT_ML_PROMETHEUS_URL`` names the same one: a pull request can change the config."""
    import os

    from kubelint_ml.usage.prometheus import ENV

    if not s.url_from_config or not (getattr(auth, "bearer", None) or getattr(auth, "basic", None)):
        return
    allowed = (os.environ.get(ENV + "URL") or "").rstrip("/")
    if allowed != (s.prometheus or "").rstrip("/"):
        raise UsageError(
            f"{s.url_from_config}: usage.prometheus {s.prometheus!r} would get the credentials in "
            f"{ENV}*; give the URL with --prometheus, or set {ENV}URL to it to allow it "
            "(a pull request can change the config file)"
        )


def for_check(section: dict | None, paths: list[str], config: Any, **options: Any) -> Usage | None:
    """The usage source of a ``check`` run (None when none is configured)."""
    s = settings(section, config_path=getattr(config, "path", None), **options)
    if not s.configured:
        return None
    return load_usage(s, scan(paths, config, s.namespace))
