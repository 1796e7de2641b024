"""Finding policies in rule paths: Rego files and their data, Gatekeeper templates, constraints and suites.

A path is a file or a directory (searched recursively). What is taken:

- ``*.rego``: Rego modules (conftest policies and their ``test_`` rules);
- ``*.json`` / ``*.yaml`` beside a ``.rego`` file that are not kubelint-ml
  rule files: data, merged at the root of ``data`` (as conftest's data files);
- YAML documents of kind ConstraintTemplate (``templates.gatekeeper.sh``),
  constraints (``constraints.gatekeeper.sh``) and Suites (``test.gatekeeper.sh``).

Other YAML files under a directory (examples, kustomizations) are left alone.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubelint_ml.input.loader import LoadError, load
from kubelint_ml.policy.rego import Module, RegoError, parse

TEMPLATE_GROUP = "templates.gatekeeper.sh"
CONSTRAINT_GROUP = "constraints.gatekeeper.sh"
SUITE_GROUP = "test.gatekeeper.sh"
# Kyverno policies, ValidatingAdmissionPolicies and Kyverno CLI tests (kubelint_ml.policy.kyverno)
KYVERNO_GROUPS = ("kyverno.io", "policies.kyverno.io", "admissionregistration.k8s.io")
KYVERNO_KINDS = frozenset(
    {
        "ClusterPolicy",
        "Policy",
        "ValidatingPolicy",
        "NamespacedValidatingPolicy",
        "ImageValidatingPolicy",
        "NamespacedImageValidatingPolicy",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "PolicyException",
    }
)
KYVERNO_TEST_GROUP = "cli.kyverno.io"
_MARKERS = (TEMPLATE_GROUP.encode(), CONSTRAINT_GROUP.encode(), SUITE_GROUP.encode())
_KYVERNO_API = re.compile(
    rb"^apiVersion:\s*['\"]?(?:policies\.|cli\.)?(?:kyverno\.io|admissionregistration\.k8s\.io)/", re.M
)


class PolicyError(Exception):
    """A policy that cannot be used (exit 2); the message names the file and what is wrong."""


@dataclass(slots=True)
class Found:
    """Everything found under the policy paths of a run."""

    modules: list[Module] = field(default_factory=list)
    data: dict = field(default_factory=dict)
    templates: list[tuple[str, dict]] = field(default_factory=list)  # (file, document)
    constraints: list[tuple[str, dict, int]] = field(default_factory=list)  # (file, document, line)
    suites: list[tuple[str, dict]] = field(default_factory=list)
    kyverno: list[tuple[str, dict, int]] = field(default_factory=list)  # (file, document, line)
    kyverno_tests: list[tuple[str, dict]] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.modules or self.templates or self.constraints or self.suites or self.kyverno)


def is_policy_yaml(path: Path) -> bool:
    """Whether a YAML file holds Gatekeeper documents (read by this package, not as a rule file)."""
    try:
        head = path.read_bytes()[: 1 << 20]
    except OSError:
        return False
    return any(m in head for m in _MARKERS) or _KYVERNO_API.search(head) is not None


def _files(root: Path, tests: bool = False) -> list[Path]:
    if root.is_file():
        return [root]
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        # Kyverno's CLI tests live in .kyverno-test directories (read by ``rules verify``)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") or (tests and d == ".kyverno-test"))
        out.extend(Path(dirpath) / f for f in sorted(filenames))
    return out


def _yaml_docs(path: Path) -> list[tuple[Any, int]]:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise PolicyError(f"{path}: cannot read: {e.strerror}") from None
    if path.suffix == ".json":
        try:
            return [(json.loads(data), 1)]
        except ValueError as e:
            raise PolicyError(f"{path}: invalid JSON: {e}") from None
    result = load(data)
    if result.problems:
        p = result.problems[0]
        raise PolicyError(f"{path}:{p.line}:{p.column}: {p.message}")
    return [(d.data, d.line) for d in result.documents]


def _group(doc: Any) -> str:
    api = doc.get("apiVersion") if isinstance(doc, dict) else None
    return api.split("/", 1)[0] if isinstance(api, str) and "/" in api else ""


def _is_rule_file(doc: Any) -> bool:
    return isinstance(doc, dict) and "check" in doc and "id" in doc


def find(paths: list[str], tests: bool = False) -> Found:
    """Load what the paths hold; :class:`PolicyError` / :class:`RegoError` for unusable files.
    ``tests``: also look in ``.kyverno-test`` directories (``rules verify``)."""
    found = Found()
    for p in paths:
        root = Path(p)
        if not root.exists():
            raise PolicyError(f"{p}: no such file or directory")
        files = _files(root, tests)
        rego_dirs = {f.parent for f in files if f.suffix == ".rego"}
        for f in files:
            if f.suffix == ".rego":
                try:
                    text = f.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as e:
                    raise PolicyError(f"{f}: cannot read: {getattr(e, 'strerror', None) or e}") from None
                found.modules.append(parse(str(f), text))
            elif f.suffix in (".yaml", ".yml", ".json"):
                gatekeeper = f.suffix != ".json" and is_policy_yaml(f)
                data_file = f.parent in rego_dirs and f.name != "kustomization.yaml"
                if not gatekeeper and not data_file:
                    continue
                for doc, line in _yaml_docs(f):
                    group = _group(doc)
                    if group == TEMPLATE_GROUP and doc.get("kind") == "ConstraintTemplate":
                        found.templates.append((str(f), doc))
                    elif group == CONSTRAINT_GROUP:
                        found.constraints.append((str(f), doc, line))
                    elif group == SUITE_GROUP and doc.get("kind") == "Suite":
                        found.suites.append((str(f), doc))
                    elif group in KYVERNO_GROUPS and doc.get("kind") in KYVERNO_KINDS:
                        found.kyverno.append((str(f), doc, line))
                    elif group == KYVERNO_TEST_GROUP and doc.get("kind") == "Test":
                        found.kyverno_tests.append((str(f), doc))
                    elif data_file and isinstance(doc, dict) and not _is_rule_file(doc) and not gatekeeper:
                        _merge(found.data, doc)
    return found


def _merge(into: dict, new: dict) -> None:
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


__all__ = ["Found", "PolicyError", "RegoError", "LoadError", "find", "is_policy_yaml"]
