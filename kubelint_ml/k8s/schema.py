"""Offline OpenAPI schema validation of Kubernetes objects.

Built-in kinds are checked against the JSON schemas bundled with the
``kubernetes-validate`` package (one directory per Kubernetes version, one
file per kind, ``$ref``-ing a shared ``_definitions.json``; a ``-strict``
twin of each directory sets ``additionalProperties: false`` everywhere).
Custom resources are checked against the ``openAPIV3Schema`` of the
CustomResourceDefinitions handed to :meth:`SchemaValidator.add_crd`.

Validators are built lazily, once per (version, strictness, apiVersion,
kind); ``jsonschema`` and ``referencing`` are imported only when the first
one is built. Messages never contain a full repr of the instance: every
value shown is cut to about 200 characters without walking it whole.
"""

from __future__ import annotations

import datetime
import functools
import glob
import importlib.util
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from kubelint_ml.input.loader import render_path

DEFS_URI = "https://kubernetes.io/api/_definitions.json"
OBJECT_META_REF = DEFS_URI + "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

MAX_VALUE_CHARS = 200
MAX_PATH_CHARS = 300
MAX_MESSAGE_CHARS = 600
MAX_CRD_SCHEMA_DEPTH = 100

_DIR_RE = re.compile(r"^v(\d+)\.(\d+)\.\d+-local$")
_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?$")
_KIND_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,99}$")
_API_VERSION_RE = re.compile(r"^(?:([a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?)/)?(v[0-9][a-z0-9]{0,30})$")
_JSON_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")


class SchemaConfigError(Exception):
    """Schema validation cannot be set up (unknown version, missing package)."""


@dataclass(frozen=True)
class SchemaProblem:
    path: tuple
    message: str


# ----------------------------------------------------------------------------
# Bundled schemas


def _schema_root() -> Path:
    """The ``kubernetes-json-schema`` directory, found without importing the package."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise SchemaConfigError(
            "schema validation needs the kubernetes-validate package (pip install kubernetes-validate)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


@functools.lru_cache(maxsize=1)
def _version_dirs() -> dict[str, str]:
    """``{"1.31": "v1.31.0-local", ...}``."""
    found: dict[str, str] = {}
    root = _schema_root()
    if root.is_dir():
        for entry in root.iterdir():
            m = _DIR_RE.match(entry.name)
            if m and entry.is_dir():
                found[f"{m.group(1)}.{m.group(2)}"] = entry.name
    return found


def _version_key(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def bundled_versions() -> list[str]:
    """Kubernetes minor versions with bundled schemas, oldest first (e.g. ``"1.31"``)."""
    return sorted(_version_dirs(), key=_version_key)


def _resolve_version(requested: str) -> str:
    versions = bundled_versions()
    listing = ", ".join(versions) or "none"
    if isinstance(requested, float):
        raise SchemaConfigError(
            f'Kubernetes version {requested!r} was read as a number; quote it (e.g. "1.30"); bundled: {listing}'
        )
    m = _VERSION_RE.match(str(requested).strip())
    if not m:
        raise SchemaConfigError(
            f"invalid Kubernetes version {str(requested)[:50]!r} (expected e.g. 1.31); bundled: {listing}"
        )
    minor = f"{int(m.group(1))}.{int(m.group(2))}"
    if minor not in versions:
        raise SchemaConfigError(f"no bundled schema for Kubernetes {minor}; bundled: {listing}")
    return minor


# Fields the generated OpenAPI marks required although the API server defaults them before it
# validates, or accepts them left out: a manifest may leave them out. onPodConditions[].status
# defaults to True (SetDefaults_Job, pkg/apis/batch/v1/defaults.go); the schemas say so from 1.35
# only. A DRA object's spec (and a ResourceClaimTemplate's claim spec) may be empty: the zero value
# is a valid claim of no devices or a class selecting every device (pkg/apis/resource/validation);
# the schemas say so from 1.37 only. A PriorityClass's value may be left out: it is 0
# (ValidatePriorityClass only bounds it); the schemas say so from 1.36 only.
DEFAULTED_REQUIRED = {
    "io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern": ("status",),
    "io.k8s.api.scheduling.v1.PriorityClass": ("value",),
    **{
        f"io.k8s.api.resource.{version}.{kind}": ("spec",)
        for version in ("v1", "v1beta1", "v1beta2")
        for kind in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceClaimTemplateSpec")
    },
}


def _not_required(node: object, fields: tuple[str, ...]) -> None:
    if isinstance(node, dict) and isinstance(node.get("required"), list):
        node["required"] = [f for f in node["required"] if f not in fields]


def _defaulted_not_required(defs: dict) -> None:
    table = defs.get("$defs") if isinstance(defs.get("$defs"), dict) else defs.get("definitions")
    if not isinstance(table, dict):
        return
    for name, fields in DEFAULTED_REQUIRED.items():
        _not_required(table.get(name), fields)


@functools.lru_cache(maxsize=8)
def _registry(directory: str) -> Any:
    """A crawled referencing registry holding one version's ``_definitions.json``."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    with open(_schema_root() / directory / "_definitions.json", encoding="utf-8") as fh:
        defs = json.load(fh)
    _defaulted_not_required(defs)
    resource = Resource.from_contents(defs, default_specification=DRAFT202012)
    return Registry().with_resource(DEFS_URI, resource).crawl()


def _split_api_version(api_version: str) -> tuple[str, str] | None:
    m = _API_VERSION_RE.match(api_version)
    if not m:
        return None
    return m.group(1) or "", m.group(3)


@functools.lru_cache(maxsize=4096)
def _builtin_validator(directory: str, api_version: str, kind: str) -> Any | None:
    """Validator for a built-in kind, or None when the version bundles no such kind."""
    schema = _builtin_schema(directory, api_version, kind)
    return None if schema is None else _validator_class()(schema, registry=_registry(directory))


def _builtin_schema(directory: str, api_version: str, kind: str) -> dict | None:
    """The schema file of a built-in kind, or None when the version bundles no such kind."""
    split = _split_api_version(api_version)
    if split is None or not _KIND_RE.match(kind):
        return None
    group, version = split
    label = group.split(".")[0]
    name = f"{kind.lower()}-{label}-{version}.json" if group else f"{kind.lower()}-{version}.json"
    path = _schema_root() / directory / name
    try:
        with open(path, encoding="utf-8") as fh:
            schema = json.load(fh)
    except (FileNotFoundError, NotADirectoryError):
        return None
    # File names drop all but the first label of the group, so
    # batch.volcano.sh/v1alpha1 Job would find batch/v1alpha1's file: check.
    gvks = schema.get("x-kubernetes-group-version-kind") or []
    if {"group": group, "version": version, "kind": kind} not in gvks:
        return None
    fields = DEFAULTED_REQUIRED.get(f"io.k8s.api.{label or 'core'}.{version}.{kind}")
    if fields:  # a kind's file holds its own root, not a $ref to the definitions
        _not_required(schema, fields)
    return schema if isinstance(schema, dict) else None


@functools.lru_cache(maxsize=1024)
def built_in_from(api_version: str, kind: str, after: str) -> str | None:
    """The first bundled Kubernetes version after ``after`` in which ``api_version`` ``kind`` is built
    in (``resource.k8s.io/v1`` from 1.34), or None."""
    for version in bundled_versions():
        if _version_key(version) > _version_key(after) and _builtin_schema(_version_dirs()[version], api_version, kind):
            return version
    return None


@functools.lru_cache(maxsize=1024)
def built_in_until(api_version: str, kind: str, before: str) -> str | None:
    """The last bundled Kubernetes version before ``before`` in which ``api_version`` ``kind`` is built
    in (an API version since removed: ``resource.k8s.io/v1alpha3``), or None."""
    for version in reversed(bundled_versions()):
        if _version_key(version) < _version_key(before) and _builtin_schema(
            _version_dirs()[version], api_version, kind
        ):
            return version
    return None


@functools.lru_cache(maxsize=256)
def served_api_versions(group: str, kind: str, version: str) -> tuple[str, ...]:
    """The API versions of ``group`` in which Kubernetes ``version`` has ``kind`` built in (``batch/v1``
    for CronJob), newest file names last."""
    directory = _version_dirs().get(version)
    if directory is None or not _KIND_RE.match(kind):
        return ()
    prefix = f"{kind.lower()}-{group.split('.')[0]}-" if group else f"{kind.lower()}-"
    found = []
    for path in sorted((_schema_root() / directory).glob(glob.escape(prefix) + "v*.json")):
        api_version = f"{group}/{path.stem[len(prefix) :]}" if group else path.stem[len(prefix) :]
        if _API_VERSION_RE.match(api_version) and _builtin_schema(directory, api_version, kind) is not None:
            found.append(api_version)
    return tuple(found)


# ----------------------------------------------------------------------------
# Validator with bounded messages


def short_repr(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A repr of ``value`` cut to ``limit`` characters, built without walking all of it."""
    parts: list[str] = []
    budget = [limit + 1]

    def put(text: str) -> bool:
        parts.append(text[: budget[0]])
        budget[0] -= len(text)
        return budget[0] > 0

    def emit(v: Any, depth: int) -> bool:
        if isinstance(v, str):
            return put(repr(v[: limit + 1]))
        if v is None or isinstance(v, (bool, float)):
            return put(repr(v))
        if isinstance(v, int):
            return put(repr(v) if v.bit_length() < 1000 else f"<{v.bit_length()}-bit integer>")
        if isinstance(v, (datetime.date, datetime.time)):
            return put(repr(v.isoformat()))
        if isinstance(v, Mapping):
            if depth > 4:
                return put("{...}")
            if not put("{"):
                return False
            for i, (k, item) in enumerate(v.items()):
                if i and not put(", "):
                    return False
                if not (emit(k, depth + 1) and put(": ") and emit(item, depth + 1)):
                    return False
            return put("}")
        if isinstance(v, Sequence) and not isinstance(v, (bytes, bytearray)):
            if depth > 4:
                return put("[...]")
            if not put("["):
                return False
            for i, item in enumerate(v):
                if i and not put(", "):
                    return False
                if not emit(item, depth + 1):
                    return False
            return put("]")
        return put(f"<{type(v).__name__}>")

    emit(value, 0)
    text = "".join(parts)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _type_names(types: Iterable[str]) -> str:
    names = [t for t in dict.fromkeys(types) if t != "null"] or ["null"]
    quoted = [repr(t) for t in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _listify(types: Any) -> list[str]:
    return [types] if isinstance(types, str) else list(types)


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: booleans are not numbers, 1 == 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


class PatternError(Exception):
    """A schema pattern that RE2 (the engine of the Kubernetes API server) cannot compile."""


@functools.lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> Any:
    """``pattern`` compiled with RE2: matching is linear in the text, whatever the pattern.

    Kubernetes evaluates schema patterns with Go's RE2; patterns it cannot
    compile (backreferences, lookaround) raise :class:`PatternError`.
    """
    import re2

    options = re2.Options()
    options.log_errors = False  # the reason is returned, not printed on stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as e:
        reason = e.args[0] if e.args else "invalid pattern"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(str(reason)[:200]) from None
    except (TypeError, ValueError) as e:
        raise PatternError(str(e)[:200]) from None


def is_multiple(value: Any, factor: Any) -> bool:
    """``multipleOf`` evaluated exactly, for any int and any float (no overflow, no zero division)."""
    if isinstance(value, bool) or isinstance(factor, bool):
        return True
    if not isinstance(factor, (int, float)) or factor <= 0 or not math.isfinite(factor):
        return True  # not a valid multipleOf (the CRD gets the finding)
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if isinstance(value, int) and isinstance(factor, int):
        return value % factor == 0
    # Floats as the shortest decimal that reads back the same (0.1 is one tenth), as JSON writes them.
    quotient = Fraction(repr(value) if isinstance(value, float) else value) / Fraction(
        repr(factor) if isinstance(factor, float) else factor
    )
    return quotient.denominator == 1


@functools.lru_cache(maxsize=1)
def _validator_class() -> Any:
    """Draft 2020-12 with keywords whose stock messages repr the whole instance replaced."""
    from jsonschema import Draft202012Validator, ValidationError, validators

    def type_(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[Any]:
        types = _listify(types)
        if not any(validator.is_type(instance, t) for t in types):
            yield ValidationError(f"{short_repr(instance)} is not of type {_type_names(types)}")

    def enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # A null field is an unset field in Kubernetes.
        if instance is not None and not any(_equal(each, instance) for each in enums):
            yield ValidationError(f"{short_repr(instance)} is not one of {short_repr(enums)}")

    def branch_errors(validator: Any, instance: Any, branches: Any) -> tuple[list, list]:
        valid: list[int] = []
        errors: list = []
        for index, sub in enumerate(branches):
            errs = list(validator.descend(instance, sub, schema_path=index))
            if errs:
                errors.extend(errs)
            else:
                valid.append(index)
        return valid, errors

    def none_matched(instance: Any, errors: list) -> Any:
        # Branches that differ only by type read as one type error.
        if errors and all(e.validator == "type" and not e.relative_path for e in errors):
            types = [t for e in errors for t in _listify(e.validator_value)]
            return ValidationError(
                f"{short_repr(instance)} is not of type {_type_names(types)}",
                validator="type",
                validator_value=types,
            )
        return ValidationError(f"{short_repr(instance)} is not valid under any of the given schemas", context=errors)

    def any_of(validator: Any, branches: Any, instance: Any, schema: Any) -> Iterator[Any]:
        errors: list = []
        for index, sub in enumerate(branches):
            errs = list(validator.descend(instance, sub, schema_path=index))
            if not errs:
                return
            errors.extend(errs)
        yield none_matched(instance, errors)

    def one_of(validator: Any, branches: Any, instance: Any, schema: Any) -> Iterator[Any]:
        valid, errors = branch_errors(validator, instance, branches)
        if not valid:
            yield none_matched(instance, errors)
        elif len(valid) > 1 and instance is not None:
            # Kubernetes' generated schemas let null through every branch
            # (Quantity, IntOrString); only non-null ambiguity is an error.
            yield ValidationError(f"{short_repr(instance)} is valid under more than one of the given schemas")

    def not_(validator: Any, sub: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.evolve(schema=sub).is_valid(instance):
            yield ValidationError(f"{short_repr(instance)} should not be valid under {short_repr(sub)}")

    def sized(kind: str, check: Any, low: bool) -> Any:
        unit = {"array": "items", "object": "properties", "string": "characters"}[kind]
        limit = "at least" if low else "at most"

        def keyword(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterator[Any]:
            if validator.is_type(instance, kind) and check(len(instance), bound):
                yield ValidationError(f"{short_repr(instance)} should have {limit} {bound} {unit}")

        return keyword

    def unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if unique and validator.is_type(instance, "array"):
            for i, a in enumerate(instance):
                if any(_equal(a, b) for b in instance[i + 1 :]):
                    yield ValidationError(f"{short_repr(instance)} has non-unique elements")
                    return

    def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "string"):
            return
        shown = patrn if len(patrn) <= 100 else patrn[:97] + "..."
        try:
            found = compile_pattern(patrn).search(instance)
        except PatternError as e:
            yield ValidationError(f"the pattern {shown} cannot be evaluated: {e}")
            return
        if found is None:
            yield ValidationError(f"{short_repr(instance)} does not match the pattern {shown}")

    def multiple_of(validator: Any, factor: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "number"):
            return
        if not is_multiple(instance, factor):
            yield ValidationError(f"{short_repr(instance)} is not a multiple of {short_repr(factor)}")

    def is_string(checker: Any, instance: Any) -> bool:
        # Kubernetes reads YAML through JSON: an unquoted timestamp is a string.
        return isinstance(instance, (str, datetime.date, datetime.time))

    base = Draft202012Validator
    return validators.extend(
        base,
        validators={
            "type": type_,
            "enum": enum,
            "anyOf": any_of,
            "oneOf": one_of,
            "not": not_,
            "minItems": sized("array", lambda n, b: n < b, True),
            "maxItems": sized("array", lambda n, b: n > b, False),
            "minProperties": sized("object", lambda n, b: n < b, True),
            "maxProperties": sized("object", lambda n, b: n > b, False),
            "minLength": sized("string", lambda n, b: n < b, True),
            "maxLength": sized("string", lambda n, b: n > b, False),
            "uniqueItems": unique_items,
            "pattern": pattern,
            "multipleOf": multiple_of,
        },
        type_checker=base.TYPE_CHECKER.redefine("string", is_string),
    )


# ----------------------------------------------------------------------------
# Errors to problems


def _path_key(path: tuple) -> tuple:
    return tuple((0, p, "") if isinstance(p, int) and not isinstance(p, bool) else (1, 0, str(p)) for p in path)


def _render(path: tuple) -> str:
    if not path:
        return "(root)"
    text = render_path(tuple(p if isinstance(p, int) else str(p)[:100] for p in path))
    return text if len(text) <= MAX_PATH_CHARS else "..." + text[-(MAX_PATH_CHARS - 3) :]


def _unknown_keys(instance: Any, schema: Mapping) -> list:
    if not isinstance(instance, Mapping):
        return []
    known = schema.get("properties") or {}
    patterns = list(schema.get("patternProperties") or {})
    return [k for k in instance if k not in known and not any(isinstance(k, str) and re.search(p, k) for p in patterns)]


def _required_message(errors: list) -> str:
    missing: list = []
    for err in errors:
        if err.validator == "required" and isinstance(err.instance, Mapping):
            missing += [n for n in err.validator_value if n not in err.instance and n not in missing]
    names = ", ".join(short_repr(n, 60) for n in missing[:10]) + (", ..." if len(missing) > 10 else "")
    return f"{names} is a required property" if len(missing) == 1 else f"{names} are required properties"


def _best(errors: list) -> Any:
    from jsonschema.exceptions import best_match

    try:
        return best_match(errors)
    except TypeError:  # sibling paths mixing int and str keys do not order
        return errors[0]


def _problems(errors: Iterable[Any]) -> list[SchemaProblem]:
    by_path: dict[tuple, list] = {}
    unknown: set[tuple] = set()
    for top in errors:
        err = _best([top])
        path = tuple(err.absolute_path)
        if err.validator == "additionalProperties" and err.validator_value is False:
            unknown.update(path + (k,) for k in _unknown_keys(err.instance, err.schema))
        else:
            by_path.setdefault(path, []).append(err)
    out: list[SchemaProblem] = []
    for path in sorted(set(by_path) | unknown, key=_path_key):
        if path in unknown:
            text = "unknown field"
        else:
            errs = by_path[path]
            best = _best(errs)
            text = _required_message(errs) if best.validator == "required" else best.message
        message = f"{_render(path)}: {text}"
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[: MAX_MESSAGE_CHARS - 3] + "..."
        out.append(SchemaProblem(path, message))
    return out


# ----------------------------------------------------------------------------
# CRD schemas

_CRD_NUMBER_KEYWORDS = ("maximum", "minimum", "multipleOf")
_CRD_COUNT_KEYWORDS = ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties")
_CRD_UNSUPPORTED = ("$ref", "$schema", "id", "definitions", "dependencies", "patternProperties", "additionalItems")


class _CrdConverter:
    """OpenAPI v3 (as used in CRDs) to JSON Schema 2020-12 with Kubernetes' extensions."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.problems: list[str] = []
        # Schema paths and texts of what the API server rejects (the CRD would not be created).
        self.rejected: list[tuple[tuple, str]] = []

    def problem(self, where: tuple, text: str, *, rejected: str = "") -> None:
        """``rejected``: the keyword the API server refuses here (the finding points at it)."""
        if len(self.problems) < 50:
            self.problems.append(f"{_render(where) if where else 'openAPIV3Schema'}: {text}")
        if rejected and len(self.rejected) < 50:
            self.rejected.append((where + (rejected,), text))

    def root(self, node: Any, where: tuple) -> dict:
        out = self.convert(node, where, 0, structural=True)
        props = out.setdefault("properties", {})
        props["apiVersion"] = {"type": ["string", "null"]}
        props["kind"] = {"type": ["string", "null"]}
        # Only name/generateName may be constrained; the rest is ObjectMeta.
        props_in = node.get("properties") if isinstance(node, Mapping) else None
        meta = props_in.get("metadata") if isinstance(props_in, Mapping) else None
        own = self.convert(meta, where + ("properties", "metadata"), 1, structural=False) if meta else {}
        props["metadata"] = {"allOf": [{"$ref": OBJECT_META_REF}, own]} if own else {"$ref": OBJECT_META_REF}
        return out

    def convert(self, node: Any, where: tuple, depth: int, structural: bool) -> dict:
        if not isinstance(node, Mapping):
            self.problem(where, "schema is not a mapping; ignored")
            return {}
        if depth > MAX_CRD_SCHEMA_DEPTH:
            self.problem(where, "schema nested too deeply; ignored below this point")
            return {}
        out: dict[str, Any] = {}
        for key in _CRD_UNSUPPORTED:
            if key in node:
                self.problem(where, f"keyword {key!r} is not supported in CRD schemas; ignored")
        self._scalars(node, where, out)
        props = node.get("properties")
        if isinstance(props, Mapping):
            out["properties"] = {
                k: self.convert(v, where + ("properties", k), depth + 1, structural) for k, v in props.items()
            }
        elif props is not None:
            self.problem(where, "'properties' is not a mapping; ignored")
        extra = node.get("additionalProperties")
        if isinstance(extra, bool):
            out["additionalProperties"] = extra
        elif extra is not None:
            out["additionalProperties"] = self.convert(extra, where + ("additionalProperties",), depth + 1, structural)
        items = node.get("items")
        if items is not None:
            if isinstance(items, Mapping):
                out["items"] = self.convert(items, where + ("items",), depth + 1, structural)
            else:
                self.problem(where, "'items' must be a single schema; ignored")
        for key in ("allOf", "anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list) and branches:
                out[key] = [
                    self.convert(b, where + (key, i), depth + 1, structural=False) for i, b in enumerate(branches)
                ]
            elif branches is not None:
                self.problem(where, f"{key!r} must be a non-empty list; ignored")
        if "not" in node:
            out["not"] = self.convert(node["not"], where + ("not",), depth + 1, structural=False)
        return self._extensions(node, out, structural)

    def _scalars(self, node: Mapping, where: tuple, out: dict) -> None:
        if "type" in node:
            t = node["type"]
            if isinstance(t, str) and t in _JSON_TYPES:
                out["type"] = [t, "null"]
            else:
                self.problem(where, f"unknown type {short_repr(t, 40)}; ignored")
        for key in _CRD_NUMBER_KEYWORDS:
            value = node.get(key)
            if value is not None:
                if key == "multipleOf" and isinstance(value, (int, float)) and not (value > 0 and math.isfinite(value)):
                    self.problem(
                        where,
                        f"multipleOf must be greater than zero, found {short_repr(value, 40)}; ignored",
                        rejected=key,
                    )
                elif isinstance(value, (int, float)) and not isinstance(value, bool):
                    out[key] = value
                else:
                    self.problem(where, f"{key!r} is not a number; ignored")
        for key in _CRD_COUNT_KEYWORDS:
            value = node.get(key)
            if value is not None:
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    out[key] = value
                else:
                    self.problem(where, f"{key!r} is not a non-negative integer; ignored")
        for key, bound in (("exclusiveMaximum", "maximum"), ("exclusiveMinimum", "minimum")):
            # OpenAPI v3.0: a boolean modifying maximum/minimum.
            if node.get(key) is True and bound in out:
                out[key] = out.pop(bound)
        if node.get("uniqueItems") is True:
            out["uniqueItems"] = True
        if "enum" in node:
            if isinstance(node["enum"], list):
                out["enum"] = list(node["enum"])
            else:
                self.problem(where, "'enum' is not a list; ignored")
        if "required" in node:
            req = node["required"]
            if isinstance(req, list) and all(isinstance(r, str) for r in req):
                out["required"] = list(req)
            else:
                self.problem(where, "'required' is not a list of strings; ignored")
        if "pattern" in node:
            pat = node["pattern"]
            if not isinstance(pat, str):
                self.problem(where, f"pattern {short_repr(pat, 80)} is not a string; ignored", rejected="pattern")
            else:
                try:
                    compile_pattern(pat)
                    out["pattern"] = pat
                except PatternError as e:
                    self.problem(
                        where,
                        f"pattern {short_repr(pat, 80)} is not a valid RE2 regular expression "
                        f"({e}); the API server rejects it; ignored",
                        rejected="pattern",
                    )

    def _extensions(self, node: Mapping, out: dict, structural: bool) -> dict:
        preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
        if node.get("x-kubernetes-int-or-string") is True and "type" not in out:
            out["type"] = ["integer", "string", "null"]
        if node.get("x-kubernetes-embedded-resource") is True:
            props = out.setdefault("properties", {})
            props.setdefault("apiVersion", {"type": ["string", "null"]})
            props.setdefault("kind", {"type": ["string", "null"]})
            props.setdefault("metadata", {"$ref": OBJECT_META_REF})
            out["required"] = list(dict.fromkeys([*out.get("required", []), "apiVersion", "kind"]))
        if preserve:
            if out.get("additionalProperties") is False:
                out.pop("additionalProperties")
        elif (
            self.strict
            and structural
            and "additionalProperties" not in out
            and ("properties" in out or out.get("type") == ["object", "null"])
        ):
            out["additionalProperties"] = False
        return out


def _crd_versions(crd: Mapping) -> tuple[str, str, list[tuple[str, Any, bool, tuple]], list[str]]:
    """group, kind, [(version, openAPIV3Schema, preserve_unknown, path of the schema)], problems."""
    spec = crd.get("spec")
    if not isinstance(spec, Mapping):
        return "", "", [], ["spec: missing or not a mapping"]
    group, names = spec.get("group"), spec.get("names")
    kind = names.get("kind") if isinstance(names, Mapping) else None
    problems = []
    if not isinstance(group, str) or not group:
        problems.append("spec.group: missing")
    if not isinstance(kind, str) or not _KIND_RE.match(kind):
        problems.append("spec.names.kind: missing or not a valid kind")
    if problems or not isinstance(group, str) or not isinstance(kind, str):
        return "", "", [], problems
    legacy = spec.get("validation")
    legacy_schema = legacy.get("openAPIV3Schema") if isinstance(legacy, Mapping) else None
    # v1beta1 keeps unknown fields unless told otherwise; v1 never does.
    legacy_default = crd.get("apiVersion") == "apiextensions.k8s.io/v1beta1"
    preserve = spec.get("preserveUnknownFields", legacy_default) is True
    versions = spec.get("versions")
    if not versions and isinstance(spec.get("version"), str):
        versions = [{"name": spec["version"], "served": True}]
    if not isinstance(versions, list) or not versions:
        return group, kind, [], ["spec.versions: missing or empty"]
    found = []
    for i, v in enumerate(versions):
        if not isinstance(v, Mapping) or not isinstance(v.get("name"), str):
            problems.append(f"spec.versions[{i}]: not a version entry with a name")
            continue
        if v.get("served", True) is not True:
            continue
        schema_box = v.get("schema")
        schema = schema_box.get("openAPIV3Schema") if isinstance(schema_box, Mapping) else None
        where: tuple = ("spec", "versions", i, "schema", "openAPIV3Schema")
        if schema is None:
            schema, where = legacy_schema, ("spec", "validation", "openAPIV3Schema")
        if schema is None:
            problems.append(f"spec.versions[{i}] ({v['name'][:80]}): no openAPIV3Schema")
            continue
        found.append((v["name"], schema, preserve, where))
    return group, kind, found, problems


# ----------------------------------------------------------------------------
# The validator


class SchemaValidator:
    """Validates objects against bundled Kubernetes schemas and supplied CRD schemas."""

    def __init__(self, kubernetes_version: str, *, strict: bool = False) -> None:
        self.version = _resolve_version(kubernetes_version)
        self.strict = strict
        self._directory = _version_dirs()[self.version] + ("-strict" if strict else "")
        if not (_schema_root() / self._directory).is_dir():
            raise SchemaConfigError(f"bundled schemas for Kubernetes {self.version} are incomplete")
        self._crd_schemas: dict[tuple[str, str], dict] = {}
        self._crd_validators: dict[tuple[str, str], Any] = {}

    def add_crd(self, crd: Mapping) -> list[str]:
        """Register every served version of a CustomResourceDefinition; return problems with it."""
        api_version, kind = crd.get("apiVersion"), crd.get("kind")
        meta = crd.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        label = f"CustomResourceDefinition {short_repr(name, 80) if name else '<unnamed>'}"
        if kind != "CustomResourceDefinition" or api_version not in (
            "apiextensions.k8s.io/v1",
            "apiextensions.k8s.io/v1beta1",
        ):
            return [f"{label}: not an apiextensions.k8s.io CustomResourceDefinition"]
        group, crd_kind, versions, problems = _crd_versions(crd)
        out = [f"{label}: {p}" for p in problems]
        for version, schema, preserve, _ in versions:
            converter = _CrdConverter(self.strict and not preserve)
            converted = converter.root(schema, ())
            out += [f"{label}: version {version[:80]}: {p}" for p in converter.problems]
            key = (f"{group}/{version}", crd_kind)
            self._crd_schemas[key] = converted
            self._crd_validators.pop(key, None)
        return out

    def crd_rejections(self, crd: Mapping) -> list[SchemaProblem]:
        """What in a CRD's schemas the API server would refuse (an invalid pattern, multipleOf <= 0), by path."""
        out: list[SchemaProblem] = []
        if crd.get("kind") != "CustomResourceDefinition" or not str(crd.get("apiVersion")).startswith(
            "apiextensions.k8s.io/"
        ):
            return out
        seen: set[int] = set()
        for _, schema, _, base in _crd_versions(crd)[2]:
            if id(schema) in seen:
                continue  # one legacy schema shared by every version
            seen.add(id(schema))
            converter = _CrdConverter(False)
            converter.root(schema, ())
            out += [
                SchemaProblem(base + where, f"{_render(base + where)}: {text}") for where, text in converter.rejected
            ]
        return out

    def built_in_from(self, api_version: str, kind: str) -> str | None:
        """A later Kubernetes version that has ``api_version`` ``kind`` built in (see :func:`built_in_from`)."""
        return built_in_from(api_version, kind, self.version)

    def built_in_until(self, api_version: str, kind: str) -> str | None:
        """An earlier Kubernetes version that had ``api_version`` ``kind`` built in (see :func:`built_in_until`)."""
        return built_in_until(api_version, kind, self.version)

    def served_api_versions(self, group: str, kind: str) -> tuple[str, ...]:
        """The API versions of ``group`` that serve ``kind`` in this version (see :func:`served_api_versions`)."""
        return served_api_versions(group, kind, self.version)

    def has_schema(self, api_version: str, kind: str) -> bool:
        return self._validator_for(api_version, kind) is not None

    def validate(self, obj: Mapping) -> list[SchemaProblem] | None:
        """Problems of ``obj``, one per field path, sorted; None when its kind has no schema."""
        validator = self._validator_for(obj.get("apiVersion"), obj.get("kind"))
        if validator is None:
            return None
        try:
            return _problems(validator.iter_errors(obj))
        except RecursionError:
            return [SchemaProblem((), "(root): object nested too deeply to validate")]
        except Exception as e:  # a schema keyword this object breaks must not end the run
            return [
                SchemaProblem(
                    (), f"(root): the schema could not be evaluated on this object ({type(e).__name__}: {str(e)[:200]})"
                )
            ]

    def _validator_for(self, api_version: Any, kind: Any) -> Any | None:
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return None
        builtin = _builtin_validator(self._directory, api_version, kind)
        if builtin is not None:
            return builtin
        key = (api_version, kind)
        if key not in self._crd_schemas:
            return None
        if key not in self._crd_validators:
            self._crd_validators[key] = _validator_class()(self._crd_schemas[key], registry=_registry(self._directory))
        return self._crd_validators[key]
