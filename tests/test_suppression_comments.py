"""Suppression in the manifest's text (`# kubelint-ml: ignore[...] reason`), and annotation
reasons with commas in them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.engine.core import parse_ignore

POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:{spec_comment}
  containers:
    - name: c
      image: busybox
      resources:{res_comment}
        requests: {{cpu: "1", memory: 1Gi}}
"""


def lint(tmp_path: Path, text: str, *extra: str) -> dict:
    p = tmp_path / "pod.yaml"
    p.write_text(text)
    r = CliRunner().invoke(main, ["check", str(p), "--format", "json", *extra], catch_exceptions=False)
    return json.loads(r.output)


def rows(data: dict, key: str = "findings") -> list[tuple]:
    return [(f["rule"], f["line"]) for f in data[key]]


def test_baseline_without_comments(tmp_path: Path) -> None:
    assert rows(lint(tmp_path, POD.format(spec_comment="", res_comment=""))) == [
        ("missing-priority-class", 5),
        ("missing-memory-limit", 9),
    ]


def test_comment_on_the_line_and_above_it(tmp_path: Path) -> None:
    text = POD.format(
        spec_comment="  # kubelint-ml: ignore[missing-priority-class] batch pods, default priority",
        res_comment="  # kubelint-ml: ignore[missing-memory-limit,besteffort-qos] sized by the VPA",
    )
    data = lint(tmp_path, text, "--show-suppressed")
    assert rows(data) == []
    assert {(f["rule"], f["line"], f["suppressed"]) for f in data["suppressed"]} == {
        ("missing-priority-class", 5, "batch pods, default priority"),
        ("missing-memory-limit", 9, "sized by the VPA"),
    }
    out = CliRunner().invoke(main, ["check", str(tmp_path / "pod.yaml"), "--show-suppressed"]).output
    assert "batch pods, default priority" in out and "2 suppressed" in out
    # Alone on the line above the finding's (blank and comment lines between are passed over).
    text = POD.format(spec_comment="", res_comment="").replace(
        "      resources:",
        "      # kubelint-ml: ignore[missing-memory-limit] sized by the VPA\n\n      # note\n      resources:",
    )
    data = lint(tmp_path, text, "--show-suppressed")
    assert rows(data) == [("missing-priority-class", 5)]
    assert rows(data, "suppressed") == [("missing-memory-limit", 12)]


def test_comment_applies_only_to_its_line_and_rules(tmp_path: Path) -> None:
    # On the image line: the missing-memory-limit finding is on the resources line.
    text = POD.format(spec_comment="", res_comment="").replace(
        "image: busybox", "image: busybox  # kubelint-ml: ignore[missing-memory-limit] not this line"
    )
    assert rows(lint(tmp_path, text)) == [("missing-priority-class", 5), ("missing-memory-limit", 9)]
    # Another rule's id on the right line suppresses nothing else.
    text = POD.format(spec_comment="  # kubelint-ml: ignore[emptydir-no-size-limit] other rule", res_comment="")
    assert rows(lint(tmp_path, text)) == [("missing-priority-class", 5), ("missing-memory-limit", 9)]


def test_ignore_file_and_star(tmp_path: Path) -> None:
    text = "# kubelint-ml: ignore-file[missing-memory-limit, missing-priority-class] a scratch pod\n" + POD.format(
        spec_comment="", res_comment=""
    )
    data = lint(tmp_path, text, "--show-suppressed")
    assert rows(data) == [] and rows(data, "suppressed") == [
        ("missing-priority-class", 6),
        ("missing-memory-limit", 10),
    ]
    text = POD.format(spec_comment="  # kubelint-ml: ignore[*] everything here is known", res_comment="")
    assert rows(lint(tmp_path, text)) == [("missing-memory-limit", 9)]


def test_unknown_rule_and_missing_reason_are_reported(tmp_path: Path) -> None:
    text = POD.format(spec_comment="  # kubelint-ml: ignore[missing-priorty-class] typo", res_comment="")
    data = lint(tmp_path, text)
    got = [(f["rule"], f["line"], f["column"], f["message"]) for f in data["findings"]]
    assert (
        "unknown-ignore-rule",
        5,
        text.splitlines()[4].index("missing-priorty") + 1,  # at the id
        "ignore comment names unknown rule 'missing-priorty-class' (did you mean 'missing-priority-class'?)",
    ) in got
    assert ("missing-priority-class", 5) in rows(data)  # not suppressed
    text = POD.format(spec_comment="  # kubelint-ml: ignore[missing-priority-class]", res_comment="")
    data = lint(tmp_path, text)
    assert ("missing-priority-class", 5) in rows(data)
    [problem] = [f for f in data["findings"] if f["rule"] == "unknown-ignore-rule"]
    assert "gives no reason" in problem["message"] and problem["line"] == 5


def test_a_quoted_marker_is_not_a_comment(tmp_path: Path) -> None:
    text = POD.format(spec_comment="", res_comment="").replace(
        "  name: p\n", '  name: p\n  annotations: {note: "x#kubelint-ml: ignore[*] no"}\n'
    )
    assert [r for r, _ in rows(lint(tmp_path, text))] == ["missing-priority-class", "missing-memory-limit"]


def test_annotation_reason_with_commas() -> None:
    assert parse_ignore("missing-priority-class=interactive notebook, default priority is fine") == {
        "missing-priority-class": "interactive notebook, default priority is fine"
    }
    assert parse_ignore("missing-priority-class=by design,emptydir-no-size-limit") == {
        "missing-priority-class": "by design",
        "emptydir-no-size-limit": "",
    }
    assert parse_ignore("a-rule=x, y,main.deny=z, K8sRequiredLabels/team,*=all") == {
        "a-rule": "x, y",
        "main.deny": "z",
        "K8sRequiredLabels/team": "",
        "*": "all",
    }
    # Without a reason before it, a comma separates as always.
    assert parse_ignore("missing-priority-class,emptydir-no-size-limit") == {
        "missing-priority-class": "",
        "emptydir-no-size-limit": "",
    }


def test_annotation_reason_with_a_comma_suppresses_and_reports_nothing_else(tmp_path: Path) -> None:
    text = POD.format(spec_comment="", res_comment="").replace(
        "  name: p\n",
        "  name: p\n  annotations:\n    kubelint-ml.io/ignore: "
        '"missing-priority-class=interactive notebook, default priority is fine"\n',
    )
    data = lint(tmp_path, text, "--show-suppressed")
    assert [r for r, _ in rows(data)] == ["missing-memory-limit"]
    assert [f["suppressed"] for f in data["suppressed"]] == ["interactive notebook, default priority is fine"]


def test_hostile_comment_lines_are_read_in_linear_time() -> None:
    import time

    from kubelint_ml.engine import comments

    data = ("# kubelint-ml: ignore[x] " + " " * 4000 + "a\n").encode() * 200
    data += ("x: 1 " + "# kubelint-ml: ignore[" * 50_000 + "\n").encode()
    started = time.process_time()
    found = comments.read(data)
    assert time.process_time() - started < 1
    assert len(found) == 200 and found[0].reason == "a"  # the long line is not read
