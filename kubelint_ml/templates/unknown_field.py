"""A key the Kubernetes API does not know in the pod-spec parts the rules read: the pod spec,
its containers (init and ephemeral too) and their resources, the pod's resources, volumes,
emptyDir, and a Job's spec. The API server rejects it under kubectl's strict field validation
(the default since kubectl 1.27) for the built-in kinds; a custom resource's schema prunes or
rejects it. Either way the field the author meant is not set, and rules that read it judge its
absence: their findings say so (:mod:`kubelint_ml.engine.typos`).

With the profile's ``kubernetesVersion``, a built-in kind is held to the fields of that version's API
(a container's ``restartPolicyRules`` before 1.34 is rejected as any unknown key); a custom resource's
pod template follows its CRD's schema, not the cluster's version, so it is held to every version's
fields. The pod's and the Job's gang fields are ``pod-group-reference-invalid``'s."""

from __future__ import annotations

from functools import lru_cache

from kubelint_ml.engine.api import Hit, Unit, did_you_mean
from kubelint_ml.findings import is_builtin_group
from kubelint_ml.input.workloads import PodTemplate
from kubelint_ml.k8s.fields import DEFINITIONS, field_span, fields_in, known_fields
from kubelint_ml.k8s.version import parse_version
from kubelint_ml.templates._priority import is_batch_job, is_jobset_like, job_spec, job_spec_path

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_CONTAINER_LISTS = (
    ("containers", "container"),
    ("initContainers", "container"),
    ("ephemeralContainers", "ephemeralContainer"),
)
# judged by version in pod-group-reference-invalid
_GANG_FIELDS = {"podSpec": ("workloadRef", "schedulingGroup"), "jobSpec": ("scheduling",)}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    obj, tpl = unit.obj, unit.tpl
    if tpl.found_by_search or (tpl.renames and not tpl.cache.get("fields_as_written")):
        return None  # a pod a controller builds from other fields, or a guess: not a PodTemplateSpec as written
    strict = is_builtin_group(obj.group)
    raw = getattr(getattr(ctx, "profile", None), "kubernetes_version", None) if strict else None
    version = parse_version(raw)
    known = _fields_in(version) if version is not None else known_fields()
    if _all_known(tpl.spec, known) and not (
        (is_batch_job(obj) or is_jobset_like(obj)) and not _known(job_spec(tpl), known["jobSpec"])
    ):
        return None
    severity = "error" if strict else "warning"
    hits: list[Hit] = []

    def scan(mapping: object, part: str, path: tuple, where: str, container: str | None = None) -> None:
        if not isinstance(mapping, dict):
            return
        fields = known[part]
        if fields.issuperset(mapping):
            return
        who = tpl.describe()
        for key in mapping:
            if not isinstance(key, str) or key in fields or key.startswith("$"):
                continue  # `$patch` and the other strategic-merge directives of a kustomize patch
            effect = (
                "the API server rejects the object (strict field validation)"
                if strict
                else "the custom resource's schema drops or rejects it"
            )
            kind = DEFINITIONS[part].rsplit(".", 1)[1]
            span = field_span(part, key) if key in known_fields()[part] else None
            if span is not None:  # a field of other versions than the profile's
                first, last = span
                since = f"from Kubernetes {first[0]}.{first[1]}" + (f" to {last[0]}.{last[1]}" if last else "")
                message = f"'{key}' in {where} is not a field in Kubernetes {raw} ({since})"
                detail = f"'{key}' is a field of {kind} {since}; on {raw} it is unknown: {effect}. Remove it, or raise "
                detail += "the profile's kubernetesVersion if the cluster is newer"
                data: dict = {"unknownField": key}
            else:
                hint = _hint(key, part)
                closest = hint[len(" (did you mean '") : -len("'?)")] if hint else ""
                message = f"unknown field '{key}' in {where}{hint}"
                detail = f"'{key}' is not a field of {kind}{hint}: {effect}, and whatever it holds is not applied"
                data = (
                    {"unknownField": key, "closest": closest, "parent": list(path)}
                    if closest
                    else {"unknownField": key}
                )
            hits.append(
                Hit(
                    path + (key,),
                    message,
                    severity=severity,
                    container=container,
                    detail=f"{who}: {where}: {detail}",
                    data=data,
                )
            )

    spec, spec_path = tpl.spec, tpl.spec_path
    # Where each container and volume is written: a pod a controller builds from other fields
    # (an Argo script, a Tekton step) has them elsewhere than under its spec.
    written = {id(v.data): v.path for v in (*tpl.all_containers, *tpl.volumes)}
    scan(spec, "podSpec", spec_path, "the pod spec")
    scan(spec.get("resources"), "resources", spec_path + ("resources",), "the pod's resources")
    for list_key, part in _CONTAINER_LISTS:
        items = spec.get(list_key)
        if not isinstance(items, list):
            continue
        for i, c in enumerate(items):
            if not isinstance(c, dict):
                continue
            name = c.get("name")
            where = f"{list_key[:-1]} '{name}'" if isinstance(name, str) else f"{list_key}[{i}]"
            path = written.get(id(c), spec_path + (list_key, i))
            container = name if isinstance(name, str) else None
            scan(c, part, path, where, container)
            scan(c.get("resources"), "resources", path + ("resources",), f"the resources of {where}", container)
    volumes = spec.get("volumes")
    if isinstance(volumes, list):
        for i, v in enumerate(volumes):
            if not isinstance(v, dict):
                continue
            name = v.get("name")
            where = f"volume '{name}'" if isinstance(name, str) else f"volumes[{i}]"
            path = written.get(id(v), spec_path + ("volumes", i))
            if path[: len(spec_path)] != spec_path and not _first_with(unit, tpl, path):
                continue  # a volume the pods share (an Argo workflow's): said once, with the first pod
            scan(v, "volume", path, where)
            scan(v.get("emptyDir"), "emptyDir", path + ("emptyDir",), f"the emptyDir of {where}")
    if is_batch_job(obj) or is_jobset_like(obj):
        scan(job_spec(tpl), "jobSpec", job_spec_path(tpl), "the Job spec")
    return hits or None


def _first_with(unit: Unit, tpl: PodTemplate, path: tuple) -> bool:
    """``tpl`` is the first of the object's pod templates with the volume written at ``path``."""
    for t in unit.templates():
        if not t.broken and any(v.path == path for v in t.volumes):
            return t.path == tpl.path
    return False


@lru_cache(maxsize=16)
def _fields_in(version: tuple[int, int]) -> dict[str, frozenset[str]]:
    """The fields of ``version``'s API, with the gang fields (judged by version elsewhere) kept known."""
    fields = dict(fields_in(version))
    for part, names in _GANG_FIELDS.items():
        fields[part] = fields[part] | frozenset(names)
    return fields


@lru_cache(maxsize=256)
def _hint(key: str, part: str) -> str:
    """:func:`did_you_mean` among the part's fields (the same misspelling recurs across files)."""
    return did_you_mean(key, known_fields()[part])


def _known(mapping: object, fields: frozenset[str]) -> bool:
    return not isinstance(mapping, dict) or fields.issuperset(mapping)


def _all_known(spec: dict, known: dict[str, frozenset[str]]) -> bool:
    """Every key of the parts :func:`check` reads is known: the usual case, asked a set at a time."""
    if not known["podSpec"].issuperset(spec) or not _known(spec.get("resources"), known["resources"]):
        return False
    resources = known["resources"]
    for list_key, part in _CONTAINER_LISTS:
        items = spec.get(list_key)
        if isinstance(items, list):
            fields = known[part]
            for c in items:
                if isinstance(c, dict) and not (fields.issuperset(c) and _known(c.get("resources"), resources)):
                    return False
    volumes = spec.get("volumes")
    if isinstance(volumes, list):
        fields, empty_dir = known["volume"], known["emptyDir"]
        for v in volumes:
            if isinstance(v, dict) and not (fields.issuperset(v) and _known(v.get("emptyDir"), empty_dir)):
                return False
    return True
