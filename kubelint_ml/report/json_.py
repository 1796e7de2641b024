"""JSON output: findings, suppressed findings and the run summary.

Written one finding at a time, so a run with a hundred thousand findings
never holds the whole document in memory. The text is exactly what
``json.dumps(doc, indent=2, ensure_ascii=False)`` gives.
"""

from __future__ import annotations

import io
import json
from json.encoder import encode_basestring  # the C string encoder, ensure_ascii=False flavour
from typing import Any, TextIO

from kubelint_ml.findings import RunResult
from kubelint_ml.report.escape import sanitize_json


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
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n" + pad)


def _object(d: dict, pad: str) -> str:
    if not d:
        return "{}"
    inner = pad + "  "
    body = ",\n".join(f"{inner}{encode_basestring(k)}: {_value(v, inner)}" for k, v in d.items())
    return "{\n" + body + "\n" + pad + "}"


def _finding(d: dict) -> str:
    try:
        text = _object(d, "    ")
        text.encode("utf-8")
    except (UnicodeEncodeError, ValueError):  # lone surrogates, NaN: the careful path
        text = _object(sanitize_json(d), "    ")
    return text


def write(result: RunResult, out: TextIO, *, color: bool = False, verbose: bool = False) -> None:
    """`{"findings": [...], "suppressed": [...], "summary": {...}}`, indented, to ``out``.

    Always valid UTF-8 JSON: lone surrogates in input become U+FFFD.
    """
    out.write("{\n")
    parts = (("findings", result.findings), ("suppressed", result.suppressed if result.show_suppressed else []))
    for key, items in parts:
        out.write(f'  "{key}": ')
        if not items:
            out.write("[],\n")
            continue
        out.write("[\n")
        for i, f in enumerate(items):
            out.write(("    " if i == 0 else ",\n    ") + _finding(f.to_dict()))
        out.write("\n  ],\n")
    summary = json.dumps(sanitize_json(result.summary()), indent=2, ensure_ascii=False, allow_nan=False)
    out.write('  "summary": ' + summary.replace("\n", "\n  ") + "\n}\n")


def render(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    buf = io.StringIO()
    write(result, buf, color=color, verbose=verbose)
    return buf.getvalue()
