"""JSON output: findings, suppressed findings and the run summary."""

from __future__ import annotations

import json

from kubelint_ml.findings import RunResult
from kubelint_ml.report.escape import sanitize_json


def render(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    """`{"findings": [...], "suppressed": [...], "summary": {...}}`, indented.

    Always valid UTF-8 JSON: lone surrogates in input become U+FFFD.
    """
    doc = {
        "findings": [f.to_dict() for f in result.findings],
        "suppressed": [f.to_dict() for f in result.suppressed] if result.show_suppressed else [],
        "summary": result.summary(),
    }
    return json.dumps(sanitize_json(doc), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
