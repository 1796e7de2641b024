"""The finding: the one record every stage after evaluation works with."""

from __future__ import annotations

from typing import Any

from kubelint_ml.records import Frozen, Record

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


# Kinds of the built-in API groups, and kinds several projects define: named with their
# group when they come from a group outside Kubernetes itself.
AMBIGUOUS_KINDS = frozenset(
    {
        "Pod",
        "PodTemplate",
        "ReplicationController",
        "Service",
        "ConfigMap",
        "Secret",
        "Namespace",
        "Node",
        "ServiceAccount",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "LimitRange",
        "ResourceQuota",
        "Event",
        "Job",
        "CronJob",
        "Deployment",
        "StatefulSet",
        "ReplicaSet",
        "DaemonSet",
        "PriorityClass",
        "PodDisruptionBudget",
        "Ingress",
        "NetworkPolicy",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "StorageClass",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "DeviceClass",
        "ResourceSlice",
        "HorizontalPodAutoscaler",
        "Lease",
        "Workload",
        "PodGroup",
        "Queue",
    }
)


def is_builtin_group(group: str) -> bool:
    """The core group, the unqualified built-in groups (apps, batch, ...) and ``*.k8s.io``
    (``*.x-k8s.io`` is for SIG projects' CRDs)."""
    return "." not in group or (group.endswith(".k8s.io") and not group.endswith(".x-k8s.io"))


class ObjectRef(Frozen):
    """Identity of a Kubernetes object: what a finding is about."""

    apiVersion: str
    kind: str
    namespace: str
    name: str
    __slots__ = _fields = ("apiVersion", "kind", "namespace", "name")

    def __init__(self, apiVersion: str = "", kind: str = "", namespace: str = "", name: str = "") -> None:
        object.__setattr__(self, "apiVersion", apiVersion)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "namespace", namespace)
        object.__setattr__(self, "name", name)

    def to_dict(self) -> dict[str, str]:
        return {
            "apiVersion": self.apiVersion,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }

    def qualified_kind(self) -> str:
        """The kind, with its API group where the kind alone would read as a built-in one
        (a Volcano ``batch.volcano.sh/Job`` is not a ``Job``)."""
        kind = self.kind
        group = self.apiVersion.split("/", 1)[0] if "/" in self.apiVersion else ""
        if group and kind in AMBIGUOUS_KINDS and not is_builtin_group(group):
            return f"{group}/{kind}"
        return kind

    def display(self) -> str:
        """`Kind/namespace/name`, or as much of it as is known (the kind qualified when ambiguous)."""
        parts = [self.qualified_kind() or "object"]
        if self.namespace:
            parts.append(self.namespace)
        parts.append(self.name or "<unnamed>")
        return "/".join(parts)


class Finding(Record):
    rule: str
    severity: str
    message: str
    remediation: str
    file: str
    line: int
    column: int
    path: str
    object: ObjectRef | None
    container: str | None
    # Index of the YAML document in its file (0-based); part of identity.
    document: int
    # Reason given by the suppression that matched, when suppressed.
    suppressed: str | None
    # Free-form extra data a rule wants to expose (JSON output only).
    data: dict[str, Any]
    # The longer explanation of this case (rationale, numbers): -v, JSON, SARIF, Markdown.
    detail: str | None
    # Other places that matter: ``(file, line, column, what)``, e.g. the rendered output a
    # finding was mapped back from (SARIF relatedLocations, JSON "related").
    related: tuple
    # kubelint_ml.fix.Fix: the edit that removes this finding, when its rule knows one.
    fix: Any
    __slots__ = _fields = (
        "rule",
        "severity",
        "message",
        "remediation",
        "file",
        "line",
        "column",
        "path",
        "object",
        "container",
        "document",
        "suppressed",
        "data",
        "detail",
        "related",
        "fix",
    )

    def __init__(
        self,
        rule: str,
        severity: str,
        message: str,
        remediation: str,
        file: str,
        line: int,
        column: int,
        path: str = "",
        object: ObjectRef | None = None,
        container: str | None = None,
        document: int = 0,
        suppressed: str | None = None,
        data: dict[str, Any] | None = None,
        detail: str | None = None,
        related: tuple = (),
        fix: Any = None,
    ) -> None:
        self.rule = rule
        self.severity = severity
        self.message = message
        self.remediation = remediation
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.object = object
        self.container = container
        self.document = document
        self.suppressed = suppressed
        self.data = {} if data is None else data
        self.detail = detail
        self.related = related
        self.fix = fix

    def sort_key(self) -> tuple:
        obj = self.object
        return (
            self.file,
            self.line,
            self.column,
            self.rule,
            self.path,
            obj.kind if obj else "",
            obj.name if obj else "",
            self.container or "",
            self.message,
        )

    def identity(self) -> tuple[str, str, str, str, str, str, str]:
        """What stays the same when unrelated lines of the file change.

        Used by baselines and SARIF fingerprints: rule, file, object identity
        and field path -- never the line number.
        """
        obj = self.object or ObjectRef()
        return (
            self.rule,
            self.file,
            obj.apiVersion,
            obj.kind,
            obj.namespace,
            obj.name,
            self.path,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            **({"detail": self.detail} if self.detail is not None else {}),
            "remediation": self.remediation,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "object": self.object.to_dict() if self.object else None,
            "path": self.path,
        }
        if self.container is not None:
            out["container"] = self.container
        if self.suppressed is not None:
            out["suppressed"] = self.suppressed
        if self.data:
            out["data"] = self.data
        if self.related:
            out["related"] = related_dicts(self.related)
        if self.fix is not None:
            out["fix"] = self.fix.to_dict()
        return out


def related_dicts(related: tuple) -> list[dict[str, Any]]:
    return [{"file": r[0], "line": r[1], "column": r[2], "message": r[3]} for r in related]


class RuleInfo(Frozen):
    """What reporters need to know about a rule (SARIF rules[], docs)."""

    id: str
    severity: str
    title: str
    description: str
    remediation: str
    family: str
    help_uri: str
    __slots__ = _fields = ("id", "severity", "title", "description", "remediation", "family", "help_uri")

    def __init__(
        self,
        id: str,
        severity: str,
        title: str,
        description: str,
        remediation: str,
        family: str = "",
        help_uri: str = "",
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "severity", severity)
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "remediation", remediation)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "help_uri", help_uri)


class RunResult(Record):
    """Everything a reporter renders."""

    findings: list[Finding]  # sorted, not suppressed, not baselined
    suppressed: list[Finding]  # sorted
    rules: dict[str, RuleInfo]  # every rule that was enabled, plus input-problem ids
    files: int
    documents: int
    objects: int
    baselined: int
    fail_level: str
    root: str  # directory that relative artifact URIs are taken from
    tool_version: str
    show_suppressed: bool  # list suppressed findings (they are always counted)
    quiet: bool  # text: findings only, no summary line
    warnings: list[str]  # said once per run (a chart that could not be rendered)
    unsafe_fixes: bool  # --unsafe-fixes: unsafe fixes count as applicable (text marks, summaries)
    __slots__ = _fields = (
        "findings",
        "suppressed",
        "rules",
        "files",
        "documents",
        "objects",
        "baselined",
        "fail_level",
        "root",
        "tool_version",
        "show_suppressed",
        "quiet",
        "warnings",
        "unsafe_fixes",
    )

    def __init__(
        self,
        findings: list[Finding],
        suppressed: list[Finding],
        rules: dict[str, RuleInfo],
        files: int = 0,
        documents: int = 0,
        objects: int = 0,
        baselined: int = 0,
        fail_level: str = "error",
        root: str = ".",
        tool_version: str = "",
        show_suppressed: bool = False,
        quiet: bool = False,
        warnings: list[str] | None = None,
        unsafe_fixes: bool = False,
    ) -> None:
        self.findings = findings
        self.suppressed = suppressed
        self.rules = rules
        self.files = files
        self.documents = documents
        self.objects = objects
        self.baselined = baselined
        self.fail_level = fail_level
        self.root = root
        self.tool_version = tool_version
        self.show_suppressed = show_suppressed
        self.quiet = quiet
        self.warnings = [] if warnings is None else warnings
        self.unsafe_fixes = unsafe_fixes

    def fixable(self) -> tuple[int, int]:
        """(findings with a fix --fix applies, findings with one only --unsafe-fixes applies)."""
        safe = unsafe = 0
        for f in self.findings:
            fix = f.fix
            if fix is None or fix.unfixable:
                continue
            if fix.applicability == "safe":
                safe += 1
            else:
                unsafe += 1
        return safe, unsafe

    def files_with_findings(self) -> int:
        """How many linted inputs have findings: a finding mapped back from rendered output (a chart,
        a kustomization) counts for the rendered input it was found in, not the source file it names."""
        return len({f.related[0][0] if f.related else f.file for f in self.findings})

    def counts(self) -> dict[str, int]:
        c = {s: 0 for s in SEVERITIES}
        for f in self.findings:
            c[f.severity] = c.get(f.severity, 0) + 1
        return c

    def failed(self) -> bool:
        threshold = SEVERITY_RANK[self.fail_level]
        return any(SEVERITY_RANK[f.severity] >= threshold for f in self.findings)

    def summary(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "documents": self.documents,
            "objects": self.objects,
            "findings": len(self.findings),
            "files_with_findings": self.files_with_findings(),
            "by_severity": self.counts(),
            "suppressed": len(self.suppressed),
            "baselined": self.baselined,
            "fail_level": self.fail_level,
            "failed": self.failed(),
        }
