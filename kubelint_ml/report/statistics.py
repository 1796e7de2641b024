"""``check --statistics``: how many findings each rule has, most first (as ruff's ``--statistics``).

count  rule                    severity             files  title
  445  missing-priority-class  warning                301  Training pod template has no priority class
  346  missing-memory-limit    error 95, warning 251  290  Container has no memory limit
"""

from __future__ import annotations

from collections import Counter, defaultdict

from kubelint_ml.findings import SEVERITIES, RunResult
from kubelint_ml.report.escape import inert, neutralise
from kubelint_ml.report.text import summary_line


def rows(result: RunResult) -> list[dict]:
    """One row per rule with findings: id, count, count by severity, files, title; most findings first."""
    counts: Counter[str] = Counter()
    severities: dict[str, Counter[str]] = defaultdict(Counter)
    files: dict[str, set[str]] = defaultdict(set)
    for f in result.findings:
        counts[f.rule] += 1
        severities[f.rule][f.severity] += 1
        files[f.rule].add(f.file)
    out = []
    for rule, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        info = result.rules.get(rule)
        out.append(
            {
                "rule": rule,
                "count": n,
                "bySeverity": {s: severities[rule][s] for s in SEVERITIES if severities[rule][s]},
                "files": len(files[rule]),
                "title": info.title if info is not None else "",
            }
        )
    return out


def render(result: RunResult) -> str:
    table = rows(result)
    if not table:
        return summary_line(result) + "\n"
    sev = [", ".join(f"{s} {n}" if len(r["bySeverity"]) > 1 else s for s, n in r["bySeverity"].items()) for r in table]
    rule_w = max(len("rule"), *(len(neutralise(r["rule"])) for r in table))
    sev_w = max(len("severity"), *map(len, sev))
    count_w = max(len("count"), *(len(str(r["count"])) for r in table))
    lines = [f"{'count':>{count_w}}  {'rule':<{rule_w}}  {'severity':<{sev_w}}  files  title"]
    for r, s in zip(table, sev):
        lines.append(
            inert(
                f"{r['count']:>{count_w}}  {neutralise(r['rule']):<{rule_w}}  {s:<{sev_w}}  "
                f"{r['files']:>5}  {neutralise(r['title'])}".rstrip()
            )
        )
    lines += ["", summary_line(result)]
    return "\n".join(lines) + "\n"
