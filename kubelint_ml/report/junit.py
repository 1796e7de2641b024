"""JUnit XML output, for CI systems that show test reports.

Layout: `<testsuites name="kubelint-ml">` holds one `<testsuite>` per file
with findings (suppressed ones included); each suite holds one `<testcase>`
per object x rule, named `Kind/namespace/name rule-id` with the file as
classname. A test case fails (`<failure type=rule-id>`) when the rule has
unsuppressed findings on that object, and is skipped when all of them are
suppressed. Objects that pass are not listed (the linter does not know which
rules apply to which object). When no file has findings, one suite named
`kubelint-ml` holds a single passing test case, so consumers that reject
empty reports still show a green run.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from kubelint_ml.findings import Finding, RunResult
from kubelint_ml.report.escape import inert, line_start, location, neutralise, xml_text


def _case_name(f: Finding) -> str:
    owner = f.object.display() if f.object is not None else "(file)"
    return f"{owner} {f.rule}"


def _detail(f: Finding) -> str:
    """One finding as lines of text; manifest content cannot start a line of its own."""
    lines = [f"{location(line_start(f.file), f.line, f.column)}: {f.severity} {f.rule} {neutralise(f.message)}"]
    if f.path:
        lines.append(f"  field: {neutralise(f.path)}")
    if f.remediation:
        lines.append(f"  remediation: {f.remediation}")
    if f.suppressed is not None:
        lines.append(f"  suppressed: {neutralise(f.suppressed)}")
    return "\n".join(inert(line) for line in "\n".join(lines).split("\n"))


def _set(elem: ET.Element, key: str, value: str) -> None:
    elem.set(key, xml_text(value))


def _testcase(parent: ET.Element, file: str, name: str, findings: list[Finding]) -> tuple[int, int]:
    """Add one test case; returns (failures, skipped) it counts for."""
    case = ET.SubElement(parent, "testcase")
    _set(case, "classname", file)
    _set(case, "name", name)
    open_ = [f for f in findings if f.suppressed is None]
    body = "\n\n".join(_detail(f) for f in findings)
    if open_:
        first = open_[0]
        message = first.message if len(open_) == 1 else f"{first.message} (and {len(open_) - 1} more)"
        failure = ET.SubElement(case, "failure")
        _set(failure, "message", f"{first.severity}: {message}")
        _set(failure, "type", first.rule)
        failure.text = xml_text(body)
        return 1, 0
    skipped = ET.SubElement(case, "skipped")
    _set(skipped, "message", "suppressed: " + "; ".join(f.suppressed or "" for f in findings))
    skipped.text = xml_text(body)
    return 0, 1


def build(result: RunResult) -> ET.Element:
    """The `<testsuites>` element."""
    by_file: dict[str, dict[str, list[Finding]]] = defaultdict(lambda: defaultdict(list))
    for f in sorted((*result.findings, *result.suppressed), key=Finding.sort_key):
        by_file[f.file][_case_name(f)].append(f)

    root = ET.Element("testsuites", name="kubelint-ml")
    total_tests = total_failures = total_skipped = 0
    for file in sorted(by_file):
        suite = ET.SubElement(root, "testsuite")
        _set(suite, "name", file)
        failures = skipped = 0
        cases = by_file[file]
        for name in sorted(cases):
            fails, skips = _testcase(suite, file, name, cases[name])
            failures += fails
            skipped += skips
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", str(skipped))
        total_tests += len(cases)
        total_failures += failures
        total_skipped += skipped
    if not by_file:
        suite = ET.SubElement(root, "testsuite", name="kubelint-ml", tests="1", failures="0", errors="0", skipped="0")
        ET.SubElement(suite, "testcase", classname="kubelint-ml", name=f"{result.files} files checked")
        total_tests = 1
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", "0")
    root.set("skipped", str(total_skipped))
    return root


def render(result: RunResult, *, color: bool = False, verbose: bool = False) -> str:
    """JUnit XML text (XML 1.0, UTF-8)."""
    root = build(result)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
