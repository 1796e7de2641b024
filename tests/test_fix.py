"""check --fix / --unsafe-fixes / --diff / --fix-only: golden files, guarantees, outputs."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.fix import Fix, append, put
from kubelint_ml.fix.apply import apply_edits, choose
from kubelint_ml.fix.yamltext import Refused, Text
from kubelint_ml.input.loader import load

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "fix"
CASES = sorted(p.name for p in FIX.glob("*.yaml"))


def cli(*args: str, cwd: Path | None = None):
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def changed_lines(before: bytes, after: bytes) -> list[tuple[str, list[bytes], list[bytes]]]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            out.append((op, a[i1:i2], b[j1:j2]))
    return out


def assert_line_local(before: bytes, after: bytes) -> None:
    """Only lines are inserted, or a line keeps its key and its comment while its value changes."""
    for op, old, new in changed_lines(before, after):
        assert op in ("insert", "replace"), (op, old, new)
        if op == "replace":
            for line in old:
                text = line.decode()
                head = text.split(":", 1)[0]
                assert any(n.decode().startswith(head) for n in new), (old, new)
                if " #" in text:
                    comment = text[text.index(" #") :].strip()
                    assert any(comment in n.decode() for n in new), (old, new)


@pytest.mark.parametrize("name", CASES)
def test_golden(tmp_path: Path, name: str) -> None:
    src = (FIX / name).read_bytes()
    target = tmp_path / name
    target.write_bytes(src)
    r = cli("check", "--fix", "--unsafe-fixes", name, cwd=tmp_path)
    assert r.exit_code in (0, 1), r.output
    got = target.read_bytes()
    assert got == (FIX / "golden" / name).read_bytes()
    assert got != src
    assert_line_local(src, got)
    if b"\r\n" in src:
        assert got.count(b"\n") == got.count(b"\r\n")
    # parses, and a second run changes nothing
    assert not load(got).problems
    cli("check", "--fix", "--unsafe-fixes", name, cwd=tmp_path)
    assert target.read_bytes() == got


@pytest.mark.parametrize("name", [n for n in CASES if b"\r\n" not in (FIX / n).read_bytes()])
def test_golden_with_cr_only_line_ends(tmp_path: Path, name: str) -> None:
    """A file whose lines end in a lone CR (a line break for YAML, as for LSP) is fixed as the same
    file with LF is, its line ends kept: the golden file with every LF a CR."""
    src = (FIX / name).read_bytes().replace(b"\n", b"\r")
    target = tmp_path / name
    target.write_bytes(src)
    r = cli("check", "--fix", "--unsafe-fixes", name, cwd=tmp_path)
    assert r.exit_code in (0, 1), r.output
    assert target.read_bytes() == (FIX / "golden" / name).read_bytes().replace(b"\n", b"\r")


def test_mixed_line_ends_keep_each_line_and_insert_the_most_common() -> None:
    data = b"spec:\r  a: 1\r  b: 2\n  c: 3\r"
    t = Text(data)
    (edit,) = t.resolve(Fix("x", changes=(put(("spec", "d"), 4),)))
    assert apply_edits(data, [edit]) == b"spec:\r  a: 1\r  b: 2\n  c: 3\r  d: 4\r"


def test_golden_findings_removed(tmp_path: Path) -> None:
    """The rules each golden file is for no longer fire after the fix."""
    expect_gone = {
        "accelerator-request-limit-mismatch.yaml": ["accelerator-request-limit-mismatch"],
        "invalid-quantity.yaml": [],  # 1Gb (a gigabit?) is left: no fix offered
        "memory.yaml": ["besteffort-qos", "missing-memory-limit", "missing-memory-request"],
        "shm.yaml": ["shm-too-small-for-workers", "emptydir-memory-unbounded"],
        "emptydir.yaml": ["emptydir-no-size-limit", "missing-ephemeral-storage-request"],
        "priority.yaml": ["restart-policy-invalid"],
        "preemption.yaml": ["preemption-consumes-backoff", "restart-policy-invalid"],
        "dra-claims.yaml": ["accelerator-claim-unused", "unknown-resource-claim"],
    }
    for name, rules in expect_gone.items():
        r = cli("check", "--format", "json", str(FIX / "golden" / name))
        found = {f["rule"] for f in json.loads(r.output)["findings"]}
        for rule in rules:
            assert rule not in found, (name, rule)
    r = cli("check", "--format", "json", str(FIX / "golden" / "priority.yaml"))
    left = [f["object"]["name"] for f in json.loads(r.output)["findings"] if f["rule"] == "missing-priority-class"]
    assert left == ["plain"]  # the PyTorchJob got the class it names in runPolicy; the Job names none
    r = cli("check", "--format", "json", str(FIX / "golden" / "invalid-quantity.yaml"))
    bad = [f for f in json.loads(r.output)["findings"] if f["rule"] == "invalid-quantity"]
    assert [f["line"] for f in bad] == [17]  # 1Gb


def test_refused_alias_and_why(tmp_path: Path) -> None:
    shutil.copy(FIX / "refused.yaml", tmp_path / "r.yaml")
    r = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "-v", str(tmp_path / "r.yaml")])
    assert "emptydir-no-size-limit: not fixed: spec.volumes[0].emptyDir is anchored (&disk)" in r.output
    assert "spec.volumes[1].emptyDir is an alias (*disk)" in r.output
    data = (tmp_path / "r.yaml").read_bytes()
    assert b"emptyDir: &disk {}" in data and b"emptyDir: *disk" in data


def test_no_value_no_fix_and_verbose_says_why(tmp_path: Path) -> None:
    text = (FIX / "memory.yaml").read_text().replace("node.kubernetes.io/instance-type: p4d.24xlarge", "pool: unknown")
    (tmp_path / "m.yaml").write_text(text)
    r = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "-v", str(tmp_path / "m.yaml")])
    assert (tmp_path / "m.yaml").read_text() == text
    assert "no fix for memory of container 'pytorch': node type not resolved" in r.output


def test_helm_and_parse_error_documents_are_not_edited(tmp_path: Path) -> None:
    helm = (FIX / "emptydir.yaml").read_text().replace("name: prep", "name: {{ .Values.name }}")
    (tmp_path / "h.yaml").write_text(helm)
    cli("check", "--fix", "--unsafe-fixes", str(tmp_path / "h.yaml"))
    assert (tmp_path / "h.yaml").read_text() == helm
    t = Text((FIX / "emptydir.yaml").read_bytes() + b"---\nkind: [\n")
    with pytest.raises(Refused, match="parse error"):
        t.resolve(Fix("x", changes=(put(("spec",), 1),), document=2))
    t = Text(b"a: {{ x }}\n" if False else b"kind: Pod\nmetadata: {name: '{{ x }}'}\n")
    with pytest.raises(Refused, match="Helm"):
        t.resolve(Fix("x", changes=(put(("spec", "a"), 1),)))


def test_merge_key_refused() -> None:
    t = Text(b"base: &b {x: 1}\nspec:\n  <<: *b\n  y: 2\n")
    with pytest.raises(Refused, match="merge key"):
        t.resolve(Fix("x", changes=(put(("spec", "z"), 1),)))


def test_a_quoted_merge_key_is_a_key_and_looked_up_items_are_the_mappings_own() -> None:
    t = Text(b"spec:\n  '<<': 1\n  a:\n    b: 2\n  c: 3\n")
    edits = t.resolve(Fix("x", changes=(put(("spec", "a", "b"), 4), put(("spec", "d"), 5))))
    assert [(e.start, e.end, e.text) for e in edits] == [(28, 29, "4"), (37, 37, "  d: 5\n")]
    spec = t.docs[0].root.items[0][1]
    a = next(v for k, v in spec.items if k.value == "a")  # read whole after the lookup: the same node
    assert a is spec._found["a"][1] and not spec.merge


def test_suppressed_and_baselined_are_not_fixed(tmp_path: Path) -> None:
    text = (
        (FIX / "emptydir.yaml")
        .read_text()
        .replace(
            "  name: cache\n",
            "  name: cache\n  annotations:\n    kubelint-ml.io/ignore: emptydir-no-size-limit,"
            "missing-ephemeral-storage-request\n",
        )
    )
    (tmp_path / "s.yaml").write_text(text)
    cli("check", "--fix", "--unsafe-fixes", str(tmp_path / "s.yaml"))
    after = (tmp_path / "s.yaml").read_text()
    assert after.split("---")[1] == text.split("---")[1]  # the suppressed Pod is untouched
    assert after.split("---")[0] != text.split("---")[0]
    (tmp_path / "b.yaml").write_text((FIX / "emptydir.yaml").read_text())
    cli("check", "--write-baseline", str(tmp_path / "base.json"), str(tmp_path / "b.yaml"))
    cli("check", "--fix", "--unsafe-fixes", "--baseline", str(tmp_path / "base.json"), str(tmp_path / "b.yaml"))
    assert (tmp_path / "b.yaml").read_text() == (FIX / "emptydir.yaml").read_text()


def test_safe_only_without_unsafe_fixes(tmp_path: Path) -> None:
    for name in ("accelerator-request-limit-mismatch.yaml", "emptydir.yaml"):
        shutil.copy(FIX / name, tmp_path / name)
    r = cli("check", "--fix", str(tmp_path))
    assert (tmp_path / "emptydir.yaml").read_bytes() == (FIX / "emptydir.yaml").read_bytes()
    assert (tmp_path / "accelerator-request-limit-mismatch.yaml").read_bytes() == (
        FIX / "golden" / "accelerator-request-limit-mismatch.yaml"
    ).read_bytes()
    import re

    assert not re.search(r"\berror\s+accelerator-request-limit-mismatch\s", r.output)  # fixed, so not reported
    assert "more fixable with --unsafe-fixes" in r.output


def test_diff_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    shutil.copy(FIX / "priority.yaml", tmp_path / "p.yaml")
    before = (tmp_path / "p.yaml").read_bytes()
    r = cli("check", "--diff", "--unsafe-fixes", "p.yaml", cwd=tmp_path)
    assert r.exit_code == 1
    assert "-      restartPolicy: Always   # rejected by the Job API" in r.output
    assert "+      restartPolicy: Never   # rejected by the Job API" in r.output
    assert (tmp_path / "p.yaml").read_bytes() == before
    r = cli("check", "--diff", "p.yaml", cwd=tmp_path)  # no safe fix here
    assert r.exit_code == 0 and "@@" not in r.output


def test_diff_with_nothing_to_change_says_what_remains(tmp_path: Path) -> None:
    """`--diff` shows only the changes: with none, its summary says the findings are still there, which
    --unsafe-fixes would fix, and that -v says why the others have no fix."""
    (tmp_path / "j.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}\n      restartPolicy: Never\n"
        "      containers:\n        - {name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}\n"
    )
    lines = {
        args: [
            line
            for line in cli("check", "--diff", *args, "j.yaml", cwd=tmp_path).output.splitlines()
            if "would fix" in line
        ]
        for args in ((), ("-v",), ("--unsafe-fixes",))
    }
    assert lines[()] == [
        "would fix 0 findings in 0 files (4 findings remain: 3 fixable with --unsafe-fixes; -v says why the others "
        "have no fix)"
    ]
    assert lines[("-v",)] == ["would fix 0 findings in 0 files (4 findings remain: 3 fixable with --unsafe-fixes)"]
    assert lines[("--unsafe-fixes",)] == ["would fix 3 findings in 1 file"]


def test_fix_only_reports_nothing(tmp_path: Path) -> None:
    shutil.copy(FIX / "priority.yaml", tmp_path / "p.yaml")
    r = CliRunner().invoke(main, ["check", "--fix-only", "--unsafe-fixes", str(tmp_path / "p.yaml")])
    assert r.exit_code == 0
    assert "missing-priority-class" not in r.stdout and "fixed 2 findings in 1 file" in r.output


def test_priority_class_from_the_fix_class_param(tmp_path: Path) -> None:
    shutil.copy(FIX / "priority.yaml", tmp_path / "p.yaml")
    (tmp_path / "cfg.yaml").write_text("overrides:\n  missing-priority-class:\n    params: {fixClass: batch-low}\n")
    cli(
        "check",
        "--fix",
        "--unsafe-fixes",
        "-c",
        str(tmp_path / "cfg.yaml"),
        "--select",
        "missing-priority-class",
        str(tmp_path / "p.yaml"),
    )
    after = (tmp_path / "p.yaml").read_text()
    assert "          priorityClassName: training-high\n" in after
    assert "      priorityClassName: batch-low\n" in after


def test_fix_class_is_not_given_to_serving_pods_and_verbose_says_so(tmp_path: Path) -> None:
    path = tmp_path / "srv.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: srv}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers:\n"
        "      - {name: s, image: vllm/vllm-openai, resources: {limits: {nvidia.com/gpu: 1, memory: 8Gi}}}\n"
    )
    (tmp_path / "cfg.yaml").write_text("overrides:\n  missing-priority-class:\n    params: {fixClass: batch-low}\n")
    r = cli("check", "-v", "--fix", "--unsafe-fixes", "-c", str(tmp_path / "cfg.yaml"), str(path))
    assert "priorityClassName" not in path.read_text()
    assert "fixClass (the default training class) is not given to a workload that does not train" in r.output


def test_select_limits_rules_and_fixes(tmp_path: Path) -> None:
    shutil.copy(FIX / "priority.yaml", tmp_path / "p.yaml")
    cli("check", "--fix", "--unsafe-fixes", "--select", "restart-policy-invalid", str(tmp_path / "p.yaml"))
    after = (tmp_path / "p.yaml").read_text()
    assert "restartPolicy: Never" in after and "priorityClassName" not in after


def test_write_is_atomic_and_keeps_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "p.yaml"
    shutil.copy(FIX / "priority.yaml", target)
    os.chmod(target, 0o640)
    cli("check", "--fix", "--unsafe-fixes", str(target))
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert target.read_bytes() == (FIX / "golden" / "priority.yaml").read_bytes()
    # An interrupted write leaves the old file and no temporary file.
    shutil.copy(FIX / "priority.yaml", target)

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    r = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", str(target)])
    assert r.exit_code != 0  # click turns the interrupt into an abort
    assert target.read_bytes() == (FIX / "priority.yaml").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.yaml"]


def test_json_and_sarif_carry_the_edits(tmp_path: Path) -> None:
    path = FIX / "accelerator-request-limit-mismatch.yaml"
    data = path.read_bytes()
    r = cli("check", "--format", "json", str(path))
    f = next(x for x in json.loads(r.output)["findings"] if x["rule"] == "accelerator-request-limit-mismatch")
    fix = f["fix"]
    assert fix["applicability"] == "safe" and fix["source"] == "the container's request"
    edits = fix["edits"]
    assert len(edits) == 1 and edits[0]["start"] == edits[0]["end"]
    assert edits[0]["text"] == "            nvidia.com/gpu: 2\r\n"
    fixed = data[: edits[0]["start"]] + edits[0]["text"].encode() + data[edits[0]["end"] :]
    assert fixed == (FIX / "golden" / path.name).read_bytes()
    r = cli("check", "--format", "sarif", str(path))
    res = next(
        x for x in json.loads(r.output)["runs"][0]["results"] if x["ruleId"] == "accelerator-request-limit-mismatch"
    )
    (change,) = res["fixes"][0]["artifactChanges"]
    (rep,) = change["replacements"]
    assert rep["deletedRegion"] == {"byteOffset": edits[0]["start"], "byteLength": 0}
    assert rep["insertedContent"]["text"] == edits[0]["text"]
    r = cli("check", "--format", "markdown", str(FIX / "priority.yaml"))
    assert "2 findings fixable by `kubelint-ml check --fix`: 0 safe, 2 unsafe" in r.output


def test_text_marks_fixable() -> None:
    r = cli("check", str(FIX / "accelerator-request-limit-mismatch.yaml"))
    line = next(x for x in r.output.splitlines() if "accelerator-request-limit-mismatch" in x and "17:11" in x)
    assert "accelerator-request-limit-mismatch  [*] container 'trainer'" in line
    other = next(x for x in r.output.splitlines() if "missing-priority-class" in x)
    assert "[*]" not in other  # no fix offered without a class to name
    assert "[*] 1 fixable with --fix" in r.output


def test_overlapping_fixes_skip_then_converge() -> None:
    data = b"spec:\n  a: 1\n"
    t = Text(data)
    one = Fix("one", changes=(put(("spec", "b"), 1),))
    two = Fix("two", changes=(put(("spec", "c"), 2),))
    same = Fix("same", changes=(put(("spec", "b"), 1),))
    for f in (one, two, same):
        f.edits = tuple(t.resolve(f))
    edits, chosen = choose([one, two, same])
    assert chosen == [one, same]  # two inserts at the same point: the second waits for the next round
    assert apply_edits(data, edits) == b"spec:\n  a: 1\n  b: 1\n"


def test_non_ascii_offsets_are_bytes() -> None:
    data = '# é\nspec:\n  a: "ü"   # ö\n'.encode()
    t = Text(data)
    (edit,) = t.resolve(Fix("x", changes=(put(("spec", "a"), "x"),)))
    assert apply_edits(data, [edit]) == '# é\nspec:\n  a: "x"   # ö\n'.encode()


def test_rule_files_say_what_the_templates_do() -> None:
    """Every fix a finding carries has the applicability its rule file's fix: section states, and every
    rule with a fix: section offers one on the fixtures."""
    from kubelint_ml.engine.rulefile import load_builtin_rules

    declared = {r.id: r.fix for r in load_builtin_rules(validate=True)}
    seen: dict[str, set[str]] = {}
    r = cli("check", "--format", "json", "--enable", "gpu-node-unresolved", str(FIX))
    for f in json.loads(r.output)["findings"]:
        if "fix" in f:
            seen.setdefault(f["rule"], set()).add(f["fix"]["applicability"])
    for rule, kinds in seen.items():
        assert declared[rule] is not None, rule
        assert kinds == {declared[rule]["applicability"]}, rule
    assert set(seen) == {rid for rid, fix in declared.items() if fix}


class _Observed:
    """A usage source as kubelint_ml.fix documents it: per container, (median, peak + headroom, source)."""

    def __init__(self, table: dict[str, tuple[int, int]]) -> None:
        self.table = table
        self.asked: list[str] = []

    def recommend(self, obj, tpl, container):
        self.asked.append(container.name)
        found = self.table.get(container.name)
        if found is None:
            return None
        return found[0], found[1], f"observed usage of {container.name} (7 days)"


def test_memory_fix_takes_observed_usage_first() -> None:
    from kubelint_ml.engine.api import Context
    from kubelint_ml.engine.core import Engine
    from kubelint_ml.engine.rulefile import load_builtin_rules
    from kubelint_ml.input.objects import unpack

    data = (FIX / "memory.yaml").read_bytes()
    rules = [r for r in load_builtin_rules() if r.id in ("besteffort-qos", "missing-memory-limit")]
    usage = _Observed({"pytorch": (40 << 30, 52 << 30)})  # the logger has no observation
    (doc,) = load(data).documents
    (obj,) = unpack(doc, "memory.yaml").objects
    found = Engine(rules).evaluate(obj, Context(usage=usage))
    limit = {f.container: f.fix for f in found if f.rule == "missing-memory-limit"}
    assert limit["pytorch"].source == "observed usage of pytorch (7 days)"
    assert [(c.path[-2:], c.value) for c in limit["pytorch"].changes] == [
        (("requests", "memory"), "40Gi"),
        (("limits", "memory"), "52Gi"),
    ]
    # the logger falls back to the GPU share: what is left after the trainer's 40Gi request
    assert limit["logger"].source.startswith("GPU share of node memory: 2 of 8 GPUs on p4d.24xlarge")
    without = Engine(rules).evaluate(obj, Context())
    alone = next(f.fix for f in without if f.rule == "missing-memory-limit" and f.container == "logger")
    share = int(alone.changes[0].value[:-2]) * 2  # split evenly between the two containers before (rounded down)
    assert limit["logger"].changes[0].value in (f"{share - 40}Gi", f"{share - 39}Gi")
    assert set(usage.asked) == {"pytorch", "logger"}
    fixed = apply_edits(data, sorted(Text(data).resolve(limit["pytorch"].bound((), 0)), key=lambda e: e.start))
    assert (
        b"                nvidia.com/gpu: 2   # 2 of 8\n                memory: 52Gi\n              requests:\n"
        b"                memory: 40Gi\n            # a comment" in fixed
    )


def test_bom_block_scalar_and_empty_values() -> None:
    data = "\ufeffspec:  # ü\n  a: |\n    text\n  b:\n  c: {}\n".encode()
    t = Text(data)
    with pytest.raises(Refused, match="block scalar"):
        t.resolve(Fix("x", changes=(put(("spec", "a"), "y"),)))
    edits = t.resolve(
        Fix("x", changes=(put(("spec", "b", "k"), 1), put(("spec", "c", "k"), 2), put(("spec", "d"), [1, "two words"])))
    )
    out = apply_edits(data, edits)
    assert (
        out
        == '\ufeffspec:  # ü\n  a: |\n    text\n  b:\n    k: 1\n  c: {k: 2}\n  d:\n    - 1\n    - "two words"\n'.encode()
    )
    assert load(out).documents[0].data["spec"]["d"] == [1, "two words"]


def test_json_documents_stay_json() -> None:
    data = b'{\n  "kind": "Pod",\n  "spec": {"containers": [{"name": "a"}]}\n}\n'
    t = Text(data)
    out = apply_edits(
        data, t.resolve(Fix("x", changes=(put(("spec", "containers", 0, "resources", "limits", "memory"), "1Gi"),)))
    )
    assert json.loads(out) == {
        "kind": "Pod",
        "spec": {"containers": [{"name": "a", "resources": {"limits": {"memory": "1Gi"}}}]},
    }


def test_a_file_that_cannot_be_written_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "ro"
    d.mkdir()
    shutil.copy(FIX / "priority.yaml", d / "p.yaml")

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    import tempfile

    monkeypatch.setattr(tempfile, "mkstemp", refused)  # a directory the user cannot write in
    r = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", str(d / "p.yaml")])
    assert r.exit_code == 2
    assert "cannot write" in r.output
    assert (d / "p.yaml").read_bytes() == (FIX / "priority.yaml").read_bytes()


def test_memory_fix_from_a_usage_snapshot(tmp_path: Path) -> None:
    """check --usage FILE --fix: request = the observed median, limit = the peak plus headroom."""
    src = FIX.parent / "fix-usage"
    shutil.copy(src / "pod.yaml", tmp_path / "pod.yaml")
    r = cli(
        "check", "--usage", str(src / "snapshot.json"), "--format", "json", "--unsafe-fixes", str(tmp_path / "pod.yaml")
    )
    fix = next(f["fix"] for f in json.loads(r.output)["findings"] if f["rule"] == "missing-memory-limit")
    assert fix["source"].startswith("observed median 5.6Gi and peak 8.4Gi over 14d (20000 samples, ")
    assert fix["source"].endswith("snapshot.json); limit = peak + 20%")
    cli("check", "--usage", str(src / "snapshot.json"), "--fix", "--unsafe-fixes", str(tmp_path / "pod.yaml"))
    after = (tmp_path / "pod.yaml").read_text()
    assert after == (src / "pod.yaml").read_text() + (
        "      resources:\n        requests:\n          memory: 6Gi\n        limits:\n          memory: 11Gi\n"
    )


def test_findings_mapped_back_from_rendered_output_are_not_fixed() -> None:
    """Their field paths and documents are the rendered stream's, not the source file's."""
    from kubelint_ml.findings import Finding
    from kubelint_ml.fix.apply import resolve

    data = (FIX / "priority.yaml").read_bytes()
    fix = Fix("x", changes=(put(("spec", "template", "spec", "restartPolicy"), "Never"),), document=1)
    f = Finding(
        "restart-policy-invalid",
        "error",
        "m",
        "r",
        "base/job.yaml",
        26,
        7,
        related=(("base (kustomize)", 40, 7, "rendered output"),),
        fix=fix,
    )
    resolve([f], data)
    assert fix.edits == () and fix.unfixable and "rendered output" in fix.unfixable


def test_json_edits_come_from_the_parse_that_found_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON prints each fix's edits without parsing the file a second time: the loader's events are used."""
    import yaml as pyyaml

    from kubelint_ml.fix import yamltext

    if getattr(pyyaml, "CSafeLoader", None) is None:
        pytest.skip("PyYAML without LibYAML: the composing loader reads the file, the edits parse it again")
    paths = [str(FIX / name) for name in ("emptydir.yaml", "shm.yaml", "priority.yaml")]  # no anchors
    expected = cli("check", "--format", "json", "--jobs", "1", *paths).output
    edits = [f["fix"]["edits"] for f in json.loads(expected)["findings"] if f.get("fix")]
    assert len(edits) > 5 and all(edits)

    def no_second_parse(*args, **kwargs):
        raise AssertionError("the file was parsed again for its fix edits")

    monkeypatch.setattr(yamltext.yaml, "parse", no_second_parse)
    assert cli("check", "--format", "json", "--jobs", "1", *paths).output == expected


def _walk_counts(text: Text) -> tuple:
    steps, seqs = text._indents_by_walk()
    return dict(steps), dict(seqs)


def test_indentation_is_counted_alike_from_the_kept_events_and_by_a_walk(corpus: Path) -> None:
    """The file's indentation step and dash offset: counted in the pass that indexes the loader's
    events, counted over a parse of the file, and counted by walking every node agree."""
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
    from_events = 0
    for path in files:
        data = path.read_bytes()
        try:
            parsed = Text(data)
        except UnicodeDecodeError:
            continue
        walk = _walk_counts(parsed)
        steps, seqs = parsed._indents()
        assert (dict(steps), dict(seqs)) == walk, path
        events = load(data, keep_events=True).events
        if events is not None:
            kept = Text(data, events)
            assert kept._counts is not None and tuple(dict(c) for c in kept._counts) == walk, path
            assert kept.style() == parsed.style(), path
            from_events += 1
    import yaml

    assert from_events > 300 or getattr(yaml, "CSafeLoader", None) is None  # without LibYAML no event is kept


def test_a_tie_in_indentation_goes_as_the_walk_meets_it() -> None:
    """Two steps as frequent: the one a walk of the trees meets first (the last document first)."""
    data = b"a:\n  b: 1\n---\nc:\n    d: 1\n"
    assert Text(data).style() == (4, 4)
    assert Text(data, load(data, keep_events=True).events).style() == (4, 4)
    nested = b"items:\n- a:\n    b: 1\nc:\n    d: 1\n"  # the root's own pairs come first
    assert Text(nested).style() == (4, 0)


def test_a_collection_as_a_key_is_counted_by_the_walk() -> None:
    data = b"? [x, y]\n: a:\n    b: 1\nc:\n  d:\n    - 1\n"
    text = Text(data)
    assert text._counts is None
    steps, seqs = text._indents()
    assert (dict(steps), dict(seqs)) == _walk_counts(text)


def test_a_fix_reads_only_the_collections_on_its_path() -> None:
    """The span tree is made as a fix asks for it: a mapping off its path is never read."""
    data = b"kind: Pod\nmetadata:\n  name: p\n  labels: {a: b}\nspec:\n  containers:\n  - name: c\n    image: i\n"
    text = Text(data, load(data, keep_events=True).events)
    edits = text.resolve(Fix("x", changes=(put(("spec", "priorityClassName"), "high"),)))
    assert apply_edits(data, edits).endswith(b"    image: i\n  priorityClassName: high\n")
    root = text.docs[0].root
    metadata = dict((k.value, v) for k, v in root.items)["metadata"]
    assert metadata._tree is not None  # not read
    assert [k.value for k, _ in metadata.items] == ["name", "labels"]  # read when asked for


def test_the_preemption_fix_leaves_a_job_the_api_server_accepts(tmp_path: Path) -> None:
    """A podFailurePolicy admits only podReplacementPolicy Failed (validatePodReplacementPolicy): the fix that
    adds the DisruptionTarget Ignore rule to a Job with TerminatingOrFailed sets Failed too, so the fixed Job
    has no job-spec-invalid, and a second run changes nothing."""
    job = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: batch/v1
kind: Job
metadata: {name: per-index}
spec:
  completionMode: Indexed
  completions: 8
  backoffLimitPerIndex: 2
  podReplacementPolicy: TerminatingOrFailed
  template:
    spec:
      priorityClassName: low
      restartPolicy: OnFailure
      containers:
      - name: c
        image: x
"""
    path = tmp_path / "job.yaml"
    path.write_text(job)
    cli("check", "--fix", "--unsafe-fixes", "--select", "preemption-consumes-backoff", str(path))
    fixed = path.read_text()
    assert fixed == (
        job.replace("podReplacementPolicy: TerminatingOrFailed", "podReplacementPolicy: Failed").replace(
            "restartPolicy: OnFailure", "restartPolicy: Never"
        )
        + "  podFailurePolicy:\n    rules:\n    - action: Ignore\n      onPodConditions:\n      - type: DisruptionTarget\n"
    )
    r = cli("check", "-f", "json", str(path))
    rules = {f["rule"] for f in json.loads(r.output)["findings"]}
    assert not rules & {"job-spec-invalid", "restart-policy-invalid", "preemption-consumes-backoff"}, rules
    cli("check", "--fix", "--unsafe-fixes", str(path))
    assert path.read_text() == fixed


def test_restart_policy_fixes_keep_a_restart_container_resize_policy_valid(tmp_path: Path) -> None:
    """A Never pod rejects resizePolicy RestartContainer (validateResizePolicy): restart-policy-invalid's fix
    sets OnFailure instead where the Job has no podFailurePolicy; where it has one (Never required), and for
    preemption-consumes-backoff's new podFailurePolicy, no fix is offered and --verbose says why."""
    job = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Always
      containers:
      - name: c
        image: x
        resizePolicy:
        - {resourceName: memory, restartPolicy: RestartContainer}
"""
    path = tmp_path / "job.yaml"
    path.write_text(job)
    cli("check", "--fix", "--unsafe-fixes", "--select", "restart-policy-invalid", str(path))
    assert path.read_text() == job.replace("restartPolicy: Always", "restartPolicy: OnFailure")
    with_policy = job.replace(
        "spec:\n  template:",
        "spec:\n  podFailurePolicy:\n    rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]\n"
        "  template:",
    )
    path.write_text(with_policy)
    r = cli("check", "-v", "--fix", "--unsafe-fixes", "--select", "restart-policy-invalid", str(path))
    assert path.read_text() == with_policy
    assert (
        "no fix for restartPolicy: a podFailurePolicy needs restartPolicy Never, with which the API server rejects "
        "the resizePolicy RestartContainer of container 'c'" in r.stderr
    )
    low = (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n"
    )
    preemptible = low + job.replace("restartPolicy: Always", "priorityClassName: low\n      restartPolicy: OnFailure")
    path.write_text(preemptible)
    r = cli("check", "-v", "--fix", "--unsafe-fixes", "--select", "preemption-consumes-backoff", str(path))
    assert path.read_text() == preemptible
    assert "no fix for preemption-consumes-backoff: a podFailurePolicy needs restartPolicy Never" in r.stderr


def test_lines_inserted_after_a_block_keep_its_deeper_comments_with_it() -> None:
    # a commented-out limit at the limits' own indentation stays in limits: the new key of the
    # container (and the new item of the list) goes after it, not between it and its mapping
    data = (
        b"spec:\n"
        b"  containers:\n"
        b"    - name: trn1\n"
        b"      resources:\n"
        b"        limits:\n"
        b"          aws.amazon.com/neuron: 16\n"
        b"          # vpc.amazonaws.com/efa: 8  # not yet\n"
        b"\n"
        b"          # cpu: 2\n"
        b"\n"
        b"  # the pod's volumes\n"
        b"  volumes:\n"
        b"    - name: data\n"
        b"      emptyDir: {}\n"
        b"      # - name: scratch"
    )
    t = Text(data)
    edits = t.resolve(
        Fix(
            "x",
            changes=(
                put(("spec", "containers", 0, "volumeMounts"), [{"name": "dshm", "mountPath": "/dev/shm"}]),
                append(("spec", "volumes"), {"name": "dshm", "emptyDir": {"medium": "Memory"}}),
            ),
        )
    )
    mounts = b"      volumeMounts:\n        - name: dshm\n          mountPath: /dev/shm\n"
    volume = b"\n    - name: dshm\n      emptyDir:\n        medium: Memory\n"
    assert apply_edits(data, sorted(edits, key=lambda e: e.start)) == (
        data.replace(b"# cpu: 2\n", b"# cpu: 2\n" + mounts) + volume
    )
