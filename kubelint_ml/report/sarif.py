"""SARIF 2.1.0 output, as GitHub code scanning and other SARIF viewers read it."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

from kubelint_ml.findings import Finding, RuleInfo, RunResult
from kubelint_ml.report.escape import relative_posix, sanitize_json, uri_path

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/kubelint-ml/kubelint-ml"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "kubelintIdentity/v1"

LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _level(severity: str) -> str:
    return LEVELS.get(severity, "warning")


def _pascal(rule_id: str) -> str:
    """`gpu-no-limit` -> `GpuNoLimit` (SARIF `name`)."""
    return "".join(part[:1].upper() + part[1:] for part in rule_id.replace("_", "-").split("-") if part)


def _rule_descriptor(info: RuleInfo) -> dict[str, Any]:
    text = info.description or info.title
    help_text = text
    help_md = text
    if info.remediation:
        help_text += f"\n\nRemediation: {info.remediation}"
        help_md += f"\n\n**Remediation:** {info.remediation}"
    if info.help_uri:
        help_md += f"\n\n[Documentation]({info.help_uri})"
    rule: dict[str, Any] = {
        "id": info.id,
        "name": _pascal(info.id),
        "shortDescription": {"text": info.title or info.id},
        "fullDescription": {"text": text or info.id},
        "help": {"text": help_text or info.id, "markdown": help_md or info.id},
    }
    if info.help_uri:
        rule["helpUri"] = info.help_uri
    rule["defaultConfiguration"] = {"level": _level(info.severity)}
    rule["properties"] = {"tags": [info.family] if info.family else []}
    return rule


def _artifact_location(path: str, inside: bool) -> dict[str, str]:
    if inside:
        return {"uri": uri_path(path), "uriBaseId": SRCROOT}
    return {"uri": "file://" + uri_path(path if path.startswith("/") else "/" + path)}


def _fingerprint(f: Finding, rel_file: str) -> str:
    """Hash of the finding's identity with its file relative to the root."""
    identity = list(f.identity())
    identity[1] = rel_file
    data = "\x00".join(identity).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]


def _token_end(text: str, start: int) -> int | None:
    """The index just past the YAML scalar (a key or a one-line value) that starts at ``start``
    in the line ``text``; None when it is not one (a flow collection, a block scalar)."""
    if start >= len(text):
        return None
    ch = text[start]
    if ch == '"':
        i = start + 1
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == '"':
                return i + 1
            i += 1
        return None
    if ch == "'":
        i = start + 1
        while i < len(text):
            if text[i] == "'":
                if text[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        return None
    if ch in "{[|>&*!#":
        return None
    end = len(text)
    flow = "{" in text[:start] or "[" in text[:start]  # inside a one-line flow collection
    stops = " \t,]}" if flow else " \t"
    for i in range(start, len(text)):
        if text[i] == ":" and (i + 1 == len(text) or text[i + 1] in stops):
            end = i
            break
        if text[i] == "#" and i > start and text[i - 1] in " \t":
            end = i
            break
        if flow and text[i] in ",]}":
            end = i
            break
    end = len(text[:end].rstrip())
    return end if end > start else None


class _Lines:
    """The lines of the linted files, read when a finding needs its end column."""

    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}

    def get(self, file: str, line: int) -> str | None:
        if file not in self._files:
            try:
                with open(file, encoding="utf-8", errors="strict", newline="") as fh:
                    self._files[file] = fh.read().splitlines()
            except (OSError, UnicodeDecodeError, ValueError):
                self._files[file] = None
        lines = self._files[file]
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1]


def _region(f: Finding, lines: _Lines | None) -> dict[str, int] | None:
    """startLine/startColumn, and endLine/endColumn (exclusive) at the end of the key or
    one-line value the finding points at, when the file can be read again."""
    if f.line < 1:
        return None
    region = {"startLine": f.line}
    if f.column >= 1:
        region["startColumn"] = f.column
        text = lines.get(f.file, f.line) if lines is not None and f.file != "-" else None
        end = _token_end(text, f.column - 1) if text is not None else None
        if end is not None:
            region["endLine"] = f.line
            region["endColumn"] = end + 1
    return region


def _result(
    f: Finding, rule_index: int, root: str, occurrence: Counter[str], lines: _Lines | None = None
) -> dict[str, Any]:
    text = f.message
    if f.detail:
        text += f"\n\n{f.detail}"
    if f.remediation:
        text += f"\n\nRemediation: {f.remediation}"
    rel, inside = relative_posix(f.file, root)
    physical: dict[str, Any] = {"artifactLocation": _artifact_location(rel, inside)}
    region = _region(f, lines)
    if region is not None:
        physical["region"] = region
    location: dict[str, Any] = {"physicalLocation": physical}
    logical = []
    if f.object is not None:
        obj = f.object
        logical.append(
            {
                "name": obj.name or "<unnamed>",
                "fullyQualifiedName": obj.display(),
                "kind": "resource",
                "properties": {"apiVersion": obj.apiVersion, "kind": obj.kind, "namespace": obj.namespace},
            }
        )
    if f.path:
        owner = f.object.display() if f.object is not None else rel
        logical.append({"name": f.path, "fullyQualifiedName": f"{owner}:{f.path}", "kind": "member"})
    if logical:
        location["logicalLocations"] = logical

    fp = _fingerprint(f, rel)
    occurrence[fp] += 1
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": _level(f.severity),
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: f"{fp}:{occurrence[fp]}"},
    }
    props: dict[str, Any] = {"severity": f.severity}
    if f.container is not None:
        props["container"] = f.container
    props["document"] = f.document
    if f.data:
        props["data"] = f.data
    if f.detail:
        props["detail"] = f.detail
    out["properties"] = props
    if f.related:
        out["relatedLocations"] = [_related(i, r, root) for i, r in enumerate(f.related, 1)]
    if f.suppressed is not None:
        out["suppressions"] = [{"kind": "inSource", "justification": f.suppressed}]
    if f.fix is not None and f.fix.edits:
        out["fixes"] = [sarif_fix(f.fix, physical["artifactLocation"])]
    return out


def _related(index: int, related: tuple, root: str) -> dict[str, Any]:
    """A related location: ``(file, line, column, what)``."""
    file, line, column, what = related
    rel, inside = relative_posix(file, root)
    physical: dict[str, Any] = {"artifactLocation": _artifact_location(rel, inside)}
    if line >= 1:
        physical["region"] = {"startLine": line, **({"startColumn": column} if column >= 1 else {})}
    return {"id": index, "physicalLocation": physical, "message": {"text": f"{what}: {file}:{line}"}}


def sarif_fix(fix: Any, artifact: dict[str, Any]) -> dict[str, Any]:
    """A SARIF ``fix``: one artifactChange whose replacements are the fix's byte edits."""
    return {
        "description": {"text": f"{fix.description} ({fix.applicability}; value from {fix.source})"},
        "artifactChanges": [
            {
                "artifactLocation": artifact,
                "replacements": [
                    {
                        "deletedRegion": {"byteOffset": e.start, "byteLength": e.end - e.start},
                        "insertedContent": {"text": e.text},
                    }
                    for e in fix.edits
                ],
            }
        ],
    }


def _version(result: RunResult) -> str:
    if result.tool_version:
        return result.tool_version
    from kubelint_ml import __version__

    return __version__


def build(result: RunResult) -> dict[str, Any]:
    """The SARIF log as a dict."""
    infos = dict(result.rules)
    for f in (*result.findings, *result.suppressed):
        if f.rule not in infos:  # a finding whose rule the run did not describe
            infos[f.rule] = RuleInfo(id=f.rule, severity=f.severity, title=f.rule, description=f.rule, remediation="")
    ids = sorted(infos)
    index = {rule_id: i for i, rule_id in enumerate(ids)}

    occurrence: Counter[str] = Counter()
    everything = sorted((*result.findings, *result.suppressed), key=Finding.sort_key)
    lines = _Lines()
    results = [_result(f, index[f.rule], result.root, occurrence, lines) for f in everything]
    version = _version(result)
    driver: dict[str, Any] = {
        "name": "kubelint-ml",
        "version": version,
        "informationUri": INFORMATION_URI,
        "rules": [_rule_descriptor(infos[i]) for i in ids],
    }
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "invocations": [{"executionSuccessful": True}],
                # No absolute local path: a viewer resolves %SRCROOT% to its own checkout.
                "originalUriBaseIds": {
                    SRCROOT: {"description": {"text": "The root of the repository that was linted."}}
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    """SARIF 2.1.0 JSON text, always valid UTF-8 (the document is made valid only when it is not)."""
    doc = build(result)
    try:
        text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError):  # lone surrogates, NaN, odd data: the careful path
        text = json.dumps(sanitize_json(doc), indent=2, ensure_ascii=False, allow_nan=False)
    return text + "\n"
