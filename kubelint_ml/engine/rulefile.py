"""Rules as data: loading and validating rule files.

A rule file names a check template (code in ``kubelint_ml/templates``) and its
params, or carries a CEL expression. Built-in rules and user rules share this
one format.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from kubelint_ml.engine.api import UnitKind
from kubelint_ml.findings import RuleInfo
from kubelint_ml.records import Record

if TYPE_CHECKING:
    from pathlib import Path

DOCS_BASE = "https://github.com/kubelint-ml/kubelint-ml/blob/main/docs/rules.md"
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class RuleFileError(Exception):
    """A rule file that cannot be used; the message names the file and field."""


class Rule(Record):
    id: str
    severity: str
    title: str
    description: str
    remediation: str
    unit: UnitKind
    check: dict
    examples: dict
    family: str
    accelerator_severity: str | None
    enabled: bool
    kinds: tuple[str, ...]
    workloads: str
    containers: tuple[str, ...]
    docs: str
    source: str
    builtin: bool
    params: dict
    template: Any  # the template module, or a CelCheck
    fix: dict | None  # the rule file's fix section: applicability, source, description
    __slots__ = _fields = (
        "id",
        "severity",
        "title",
        "description",
        "remediation",
        "unit",
        "check",
        "examples",
        "family",
        "accelerator_severity",
        "enabled",
        "kinds",
        "workloads",
        "containers",
        "docs",
        "source",
        "builtin",
        "params",
        "template",
        "fix",
    )

    def __init__(
        self,
        id: str,
        severity: str,
        title: str,
        description: str,
        remediation: str,
        unit: UnitKind,
        check: dict,
        examples: dict,
        family: str = "",
        accelerator_severity: str | None = None,
        enabled: bool = True,
        kinds: tuple[str, ...] = (),
        workloads: str = "all",
        containers: tuple[str, ...] = (),
        docs: str = "",
        source: str = "",
        builtin: bool = False,
        params: dict | None = None,
        template: Any = None,
        fix: dict | None = None,
    ) -> None:
        self.id = id
        self.severity = severity
        self.title = title
        self.description = description
        self.remediation = remediation
        self.unit = unit
        self.check = check
        self.examples = examples
        self.family = family
        self.accelerator_severity = accelerator_severity
        self.enabled = enabled
        self.kinds = kinds
        self.workloads = workloads
        self.containers = containers
        self.docs = docs
        self.source = source
        self.builtin = builtin
        self.params = {} if params is None else params
        self.template = template
        self.fix = fix

    @classmethod
    def described(cls, info: Any, *, family: str, source: str, check: dict, builtin: bool = False) -> Rule:
        """A rule that only documents findings something else reports (the engine's own, a policy's):
        for `rules list`/`rules show`, the docs and SARIF; never run by the engine."""
        return cls(
            id=info.id,
            severity=info.severity,
            title=info.title,
            description=info.description,
            remediation=info.remediation,
            unit="object",
            check=check,
            examples={},
            family=family,
            builtin=builtin,
            source=source,
        )

    def info(self) -> RuleInfo:
        return RuleInfo(
            id=self.id,
            severity=self.severity,
            title=self.title,
            description=self.description.strip(),
            remediation=self.remediation.strip(),
            family=self.family,
            help_uri=self.help_uri(),
        )

    def help_uri(self) -> str:
        if self.docs.startswith(("http://", "https://")):
            return self.docs
        if self.builtin:
            return f"{DOCS_BASE}#{self.docs.lstrip('#') or self.id}"
        return ""


# ----------------------------------------------------------------------------
# Templates


@cache
def template_module(name: str) -> Any:
    """The template module for ``name`` (a fixed package; names are checked)."""
    if not _NAME.match(name):
        raise KeyError(name)
    try:
        return importlib.import_module("kubelint_ml.templates." + name.replace("-", "_"))
    except ModuleNotFoundError:
        raise KeyError(name) from None


def available_templates() -> list[str]:
    from pathlib import Path

    here = Path(__file__).parent.parent / "templates"
    return sorted(p.stem.replace("_", "-") for p in here.glob("*.py") if not p.stem.startswith("_"))


@lru_cache(maxsize=1)
def _rule_validator() -> Any:
    from pathlib import Path

    import jsonschema

    schema = json.loads((Path(__file__).parent.parent / "schemas" / "rule.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def _error_text(err: Any) -> str:
    where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
    msg = err.message
    if len(msg) > 300:
        msg = msg[:300] + "..."
    return f"{where}: {msg}"


def _validate_params(rule_id: str, module: Any, params: dict, source: str) -> None:
    schema = getattr(module, "PARAMS", None)
    if schema is None:
        return
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(params), key=lambda e: list(e.absolute_path))
    if errors:
        raise RuleFileError(f"{source}: rule {rule_id}: check.params {_error_text(errors[0])}")


def build_rule(data: Any, source: str, *, builtin: bool = False, validate: bool = True) -> Rule:
    if not isinstance(data, dict):
        raise RuleFileError(f"{source}: a rule file must be a mapping")
    if validate:
        errors = sorted(
            _rule_validator().iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path)))
        )
        if errors:
            raise RuleFileError(f"{source}: {_error_text(errors[0])}")
    scope = data["scope"]
    check = data["check"]
    rule = Rule(
        id=data["id"],
        severity=data["severity"],
        title=data["title"],
        description=data["description"],
        remediation=data["remediation"],
        unit=scope["unit"],
        check=check,
        examples=data["examples"],
        family=data.get("family", "custom" if not builtin else ""),
        accelerator_severity=data.get("acceleratorSeverity"),
        enabled=data.get("enabled", True),
        kinds=tuple(scope.get("kinds", ())),
        workloads=scope.get("workloads", "all"),
        containers=tuple(scope.get("containers", ())),
        docs=data.get("docs", ""),
        source=source,
        builtin=builtin,
        fix=data.get("fix"),
    )
    if "template" in check:
        try:
            module = template_module(check["template"])
        except KeyError:
            raise RuleFileError(
                f"{source}: check.template: unknown template {check['template']!r}; "
                f"available: {', '.join(available_templates())}"
            ) from None
        if rule.unit != module.UNIT:
            raise RuleFileError(
                f"{source}: scope.unit: template {check['template']} works on {module.UNIT}, not {rule.unit}"
            )
        params = dict(getattr(module, "DEFAULTS", {}))
        params.update(check.get("params") or {})
        if validate:
            _validate_params(rule.id, module, params, source)
        rule.params = params
        rule.template = module
    else:
        from kubelint_ml.engine.cel import CelCompileError
        from kubelint_ml.engine.celcheck import CelCheck

        try:
            rule.template = CelCheck.build(rule.id, rule.unit, check, rule.title)
        except CelCompileError as e:
            raise RuleFileError(f"{source}: rule {rule.id}: {e}") from None
    return rule


def _read(path: Path, *, trusted: bool = False) -> Any:
    """A rule file. User rule files get the manifest safety limits; the
    package's own (``trusted``) are read with the plain LibYAML loader."""
    from kubelint_ml.input.loader import LoadError, load_single

    try:
        text = path.read_bytes()
    except OSError as e:
        raise RuleFileError(f"{path}: cannot read: {e.strerror}") from None
    if trusted:
        import yaml

        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    try:
        return load_single(text)
    except LoadError as e:
        raise RuleFileError(f"{path}:{e.line}: {e.message}") from None


def builtin_rules_dir() -> Path:
    """The shipped rules: ``rules/`` beside the package in a checkout, else package data."""
    from pathlib import Path

    return Path(_builtin_rules_path())


def _builtin_rules_path() -> str:
    # os.path, not pathlib: a plain run reads the built-in rules and nothing else needs pathlib
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    top = os.path.dirname(here)
    source_tree = os.path.join(top, "rules")
    if os.path.isfile(os.path.join(top, "pyproject.toml")) and os.path.isfile(os.path.join(source_tree, "__init__.py")):
        return source_tree
    installed = os.path.join(here, "builtin_rules")  # package data beside the package's modules, as pip installs it
    if os.path.isfile(os.path.join(installed, "__init__.py")):
        return installed  # a plain path: importlib.resources (and the tempfile it imports) cost 11 ms of start-up
    from importlib import resources

    return str(resources.files("kubelint_ml.builtin_rules"))


def rule_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


_POLICY_MARKERS = (b"templates.gatekeeper.sh", b"constraints.gatekeeper.sh", b"test.gatekeeper.sh")
# Kyverno policies and tests, ValidatingAdmissionPolicies (kubelint_ml.policy.kyverno)
_KYVERNO_API = re.compile(
    rb"^apiVersion:\s*['\"]?(?:policies\.|cli\.)?(?:kyverno\.io|admissionregistration\.k8s\.io)/", re.M
)


def _is_rule_file(path: Path) -> bool:
    """Rego files, Gatekeeper documents and the data files beside Rego files are policies
    (kubelint_ml.policy reads them), not rule files."""
    if path.suffix not in (".yaml", ".yml"):
        return path.suffix != ".rego" and path.suffix != ".json"
    if path.name in ("kustomization.yaml", "kustomization.yml"):
        return False
    try:
        head = path.read_bytes()[: 1 << 20]
    except OSError:
        return True  # reported when read
    if any(m in head for m in _POLICY_MARKERS) or _KYVERNO_API.search(head):
        return False
    if any(p.suffix == ".rego" for p in path.parent.iterdir()) or _kyverno_dir(path.parent):
        return re.search(rb"^check:", head, re.M) is not None
    return True


def _kyverno_dir(directory: Path) -> bool:
    """Whether a directory holds Kyverno policies (its other YAML, such as artifacthub-pkg.yml, is
    then a rule file only when it has a ``check:``)."""
    for p in directory.iterdir():
        if p.suffix in (".yaml", ".yml") and p.is_file():
            try:
                with open(p, "rb") as fh:
                    if _KYVERNO_API.search(fh.read(1 << 16)):
                        return True
            except OSError:
                continue
    return False


def load_rules_dir(directory: str | os.PathLike, *, builtin: bool = False, validate: bool = True) -> list[Rule]:
    from pathlib import Path

    path = Path(directory)
    if not path.is_dir():
        if path.is_file():
            files = [path] if _is_rule_file(path) else []
        else:
            raise RuleFileError(f"{path}: no such rules directory")
    else:
        files = [f for f in rule_files(path) if _is_rule_file(f)]
    rules = [build_rule(_read(f, trusted=builtin), str(f), builtin=builtin, validate=validate) for f in files]
    seen: dict[str, str] = {}
    for r in rules:
        if r.id in seen:
            raise RuleFileError(f"{r.source}: id: rule {r.id} is also defined in {seen[r.id]}")
        seen[r.id] = r.source
    return rules


BUILTIN_INDEX = "builtin.json"


def load_builtin_rules(validate: bool = False) -> list[Rule]:
    """Built-in rules. Their files are validated by the test suite, not at every start.

    A run reads them from ``builtin.json`` beside the YAML (the same documents, made by
    :func:`builtin_index` when the rules change; a test keeps it equal to the YAML): one JSON read
    instead of 30 YAML parses, a tenth of a one-file run. ``rules verify`` and ``validate`` read
    the YAML itself."""
    directory = _builtin_rules_path()
    index = os.path.join(directory, BUILTIN_INDEX)
    if not validate and os.path.isfile(index):
        with open(index, "rb") as fh:
            entries = json.load(fh)["rules"]
        return [build_rule(doc, os.path.join(directory, name), builtin=True, validate=False) for name, doc in entries]
    return load_rules_dir(directory, builtin=True, validate=validate)


def builtin_index(directory: Path | None = None) -> str:
    """``builtin.json``: every built-in rule file's document, by file name, in file order."""
    import json

    directory = directory or builtin_rules_dir()
    entries = [[f.name, _read(f, trusted=True)] for f in rule_files(directory) if _is_rule_file(f)]
    return json.dumps({"rules": entries}, indent=None, separators=(",", ":"), sort_keys=False) + "\n"


if __name__ == "__main__":  # python -m kubelint_ml.engine.rulefile > rules/builtin.json
    import sys

    sys.stdout.write(builtin_index())
