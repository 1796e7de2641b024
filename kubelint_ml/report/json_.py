"""JSON output: findings, suppressed findings and the run summary.

Written one finding at a time, so a run with a hundred thousand findings
never holds the whole document in memory. The text is exactly what
``json.dumps(doc, indent=2, ensure_ascii=False)`` gives.
"""

from __future__ import annotations

import io
import json
from json.encoder import encode_basestring  # the C string encoder, ensure_ascii=False flavour
from typing import Any, TextIO, cast

from kubelint_ml.findings import Finding, RunResult, related_dicts
from kubelint_ml.report.escape import sanitize_json

# The version of the document's layout: raised when a field changes meaning or goes away
# (adding a field does not raise it). docs/output.md describes version 1.
SCHEMA_VERSION = 1


def _value(value: Any, pad: str) -> str:
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is float and value - value == 0:  # finite (NaN and infinities are refused below)
        return float.__repr__(value)
    if type(value) is dict and all(type(k) is str for k in value):
        return _object(value, pad)  # a finding's data: a few keys (json.dumps with indent is Python code)
    if type(value) is list:
        if not value:
            return "[]"
        inner = pad + "  "
        return "[\n" + ",\n".join(inner + _value(v, inner) for v in value) + "\n" + pad + "]"
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n" + pad)


def _object(d: dict, pad: str) -> str:
    if not d:
        return "{}"
    inner = pad + "  "
    body = ",\n".join(f"{inner}{encode_basestring(k)}: {_value(v, inner)}" for k, v in d.items())
    return "{\n" + body + "\n" + pad + "}"


def _finding(f: Finding, cache: dict) -> str:
    """One finding as ``_object(f.to_dict(), "    ")`` renders it, without building the dict.

    ``cache`` keeps the rendering of the few values that repeat across a whole
    run (rule ids, severities, remediations), and of the last file and object:
    findings are sorted by file, so those repeat in runs.
    """
    try:
        obj = f.object
        if cache.get(_LAST_OBJECT, _NONE)[0] is not obj:
            cache[_LAST_OBJECT] = (
                obj,
                "null"
                if obj is None
                else _OBJECT_BLOCK
                % (
                    encode_basestring(obj.apiVersion),
                    encode_basestring(obj.kind),
                    encode_basestring(obj.namespace),
                    encode_basestring(obj.name),
                ),
            )
        if cache.get(_LAST_FILE, _NONE)[0] != f.file:
            cache[_LAST_FILE] = (f.file, encode_basestring(f.file))
        parts = [
            _HEAD
            % (
                _cached(cache, f.rule),
                _cached(cache, f.severity),
                encode_basestring(f.message),
                _DETAIL + encode_basestring(f.detail) if f.detail is not None else "",
                _cached(cache, f.remediation),
                cache[_LAST_FILE][1],
                int.__repr__(f.line) if type(f.line) is int else _value(f.line, _INNER),
                int.__repr__(f.column) if type(f.column) is int else _value(f.column, _INNER),
                cache[_LAST_OBJECT][1],
                encode_basestring(f.path),
            )
        ]
        if f.container is not None:
            parts += (',\n      "container": ', encode_basestring(f.container))
        if f.suppressed is not None:
            parts += (',\n      "suppressed": ', encode_basestring(f.suppressed))
        if f.data:
            parts += (',\n      "data": ', _value(f.data, _INNER))
        if f.related:
            parts += (',\n      "related": ', _value(related_dicts(f.related), _INNER))
        if f.fix is not None:
            parts += (',\n      "fix": ', _fix(f.fix))
        parts.append("\n    }")
        text = "".join(parts)
        if not text.isascii():  # a lone surrogate does not encode (isascii costs nothing: a flag)
            text.encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError):  # lone surrogates, NaN, odd data: the careful path
        text = _object(cast(dict, sanitize_json(f.to_dict())), "    ")
    return text


def _fix(fix: Any) -> str:
    """``_value(fix.to_dict(), _INNER)``, written out: json.dumps with ``indent`` runs the
    pure-Python encoder, a tenth of a JSON run for the few hundred findings with a fix."""
    parts = [
        '{\n        "description": ',
        encode_basestring(fix.description),
        ',\n        "applicability": ',
        encode_basestring(fix.applicability),
        ',\n        "source": ',
        encode_basestring(fix.source),
    ]
    if fix.resolved:
        if fix.unfixable:
            parts += (',\n        "unfixable": ', encode_basestring(fix.unfixable))
        elif not fix.edits:
            parts.append(',\n        "edits": []')
        else:
            parts.append(',\n        "edits": [\n')
            parts.append(",\n".join(_EDIT % (_int(e.start), _int(e.end), encode_basestring(e.text)) for e in fix.edits))
            parts.append("\n        ]")
    parts.append("\n      }")
    return "".join(parts)


def _int(value: Any) -> str:
    if type(value) is not int:
        raise TypeError("not an int")  # the careful path renders it
    return int.__repr__(value)


# The fields every finding has, in their order (one formatting, not a join of twenty pieces).
_HEAD = (
    '{\n      "rule": %s,\n      "severity": %s,\n      "message": %s%s,\n      "remediation": %s,\n'
    '      "file": %s,\n      "line": %s,\n      "column": %s,\n      "object": %s,\n      "path": %s'
)
_DETAIL = ',\n      "detail": '
_EDIT = '          {\n            "start": %s,\n            "end": %s,\n            "text": %s\n          }'
_INNER = "      "
# ObjectRef.to_dict() as _value renders it at this depth.
_OBJECT_BLOCK = (
    '{\n        "apiVersion": %s,\n        "kind": %s,\n        "namespace": %s,\n        "name": %s\n      }'
)
_LAST_OBJECT, _LAST_FILE = object(), object()  # cache keys no text can equal
_NONE = (object(), "")


def _cached(cache: dict, text: str) -> str:
    found = cache.get(text)
    if found is None:
        found = cache[text] = _value(text, _INNER)
    return found


def write(result: RunResult, out: TextIO, *, color: bool = False, verbose: bool = False) -> None:
    """`{"schemaVersion": 1, "tool": {...}, "findings": [...], "suppressed": [...], "summary": {...}}`,
    indented, to ``out`` (docs/output.md describes every field).

    Always valid UTF-8 JSON: lone surrogates in input become U+FFFD.
    """
    out.write("{\n")
    out.write(f'  "schemaVersion": {SCHEMA_VERSION},\n')
    out.write('  "tool": ' + _object({"name": "kubelint-ml", "version": _tool_version(result)}, "  ") + ",\n")
    parts = (("findings", result.findings), ("suppressed", result.suppressed if result.show_suppressed else []))
    for key, items in parts:
        out.write(f'  "{key}": ')
        if not items:
            out.write("[],\n")
            continue
        out.write("[\n")
        cache: dict = {}
        batch: list[str] = []  # written some findings at a time: one write per finding costs more
        for i, f in enumerate(items):
            batch.append("    " if i == 0 else ",\n    ")  # appended apart: a finding's text is not copied again
            batch.append(_finding(f, cache))
            if len(batch) >= 128:  # 64 findings: a few writes, and little text held at the end of a run
                out.write("".join(batch))
                batch.clear()
        out.write("".join(batch) + "\n  ],\n")
    summary = json.dumps(sanitize_json(result.summary()), indent=2, ensure_ascii=False, allow_nan=False)
    out.write('  "summary": ' + summary.replace("\n", "\n  ") + "\n}\n")


def _tool_version(result: RunResult) -> str:
    if result.tool_version:
        return result.tool_version
    from kubelint_ml import __version__

    return __version__


def render(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    buf = io.StringIO()
    write(result, buf, color=color, verbose=verbose)
    return buf.getvalue()
