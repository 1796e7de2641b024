"""What a new user meets in the first hour: `check` with no path, --exit-zero, --stdin-filename."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubelint_ml.cli import main

NO_LIMIT = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: c
      image: busybox
      resources:
        requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}
        limits: {nvidia.com/gpu: 1}
"""


def invoke(args: list[str], input: str | None = None):
    return CliRunner().invoke(main, args, input=input, catch_exceptions=False)


def found(result) -> list[tuple[str, str, int]]:
    return [(f["file"], f["rule"], f["line"]) for f in json.loads(result.stdout)["findings"]]


def test_check_without_a_path_checks_the_current_directory(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "pod.yaml").write_text(NO_LIMIT)
    monkeypatch.chdir(tmp_path)
    r = invoke(["check", "--format", "json"])
    assert r.exit_code == 1
    assert found(r) == [("k8s/pod.yaml", "missing-priority-class", 4), ("k8s/pod.yaml", "missing-memory-limit", 10)]


def test_exit_zero(tmp_path: Path) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text(NO_LIMIT)
    assert invoke(["check", str(p)]).exit_code == 1
    r = invoke(["check", str(p), "--exit-zero"])
    assert r.exit_code == 0
    assert "missing-memory-limit" in r.output  # the findings are still reported
    # A usage error is still exit 2.
    assert invoke(["check", str(tmp_path / "missing.yaml"), "--exit-zero"]).exit_code == 2


def test_stdin_filename_names_the_findings(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = invoke(["check", "-", "--stdin-filename", "./k8s/train.yaml", "--format", "json"], input=NO_LIMIT)
    assert found(r) == [("k8s/train.yaml", "missing-priority-class", 4), ("k8s/train.yaml", "missing-memory-limit", 10)]
    # No path at all with --stdin-filename reads standard input.
    r = invoke(["check", "--stdin-filename", "k8s/train.yaml", "--format", "concise"], input=NO_LIMIT)
    assert "k8s/train.yaml:10:9: missing-memory-limit" in r.output


def test_stdin_filename_excludes_and_config_apply(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / ".kubelint-ml.yaml").write_text(
        "exclude:\n  - path: 'team/vendor/**'\n  - path: 'team/k8s/*.yaml'\n    rule: missing-memory-limit\n"
    )
    monkeypatch.chdir(tmp_path)
    # The config is found from the named file's directory upward, as for a file on disk.
    r = invoke(["check", "-", "--stdin-filename", "team/k8s/train.yaml", "--format", "json"], input=NO_LIMIT)
    assert found(r) == [("team/k8s/train.yaml", "missing-priority-class", 4)]
    # A path exclude drops the piped file as it would the file itself.
    r = invoke(["check", "-", "--stdin-filename", "team/vendor/x.yaml", "--format", "json"], input=NO_LIMIT)
    assert r.exit_code == 0 and found(r) == []
    # Without the name, neither applies.
    r = invoke(["check", "-", "--format", "json"], input=NO_LIMIT)
    assert found(r) == [("<stdin>", "missing-priority-class", 4), ("<stdin>", "missing-memory-limit", 10)]


MOVES = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      priorityClassName: high
      containers:
        - name: trainer
          image: pytorch/pytorch
          resources:
            requests:
              memory: 8Gi
              nvidia.com/gpu: 1
"""


def test_fix_counts_only_findings_that_went_away(tmp_path: Path) -> None:
    """The safe fix inserts `limits:` with the GPU; the missing memory limit, reported at
    `resources` before, is reported at the new `limits` after: moved, not fixed."""
    p = tmp_path / "job.yaml"
    p.write_text(MOVES)
    before = found(invoke(["check", str(p), "--format", "json"]))
    assert [(rule, line) for _, rule, line in before] == [
        ("accelerator-request-limit-mismatch", 13),
        ("missing-memory-limit", 13),
    ]
    r = CliRunner().invoke(main, ["check", str(p), "--fix", "--format", "json"])
    assert [(rule, line) for _, rule, line in found(r)] == [("missing-memory-limit", 17)]
    assert "fixed 1 finding in 1 file" in r.stderr
    assert p.read_text() == MOVES + "            limits:\n              nvidia.com/gpu: 1\n"
    p.write_text(MOVES)
    r = CliRunner().invoke(main, ["check", str(p), "--diff"])
    assert "would fix 1 finding in 1 file" in r.stderr


def _config_error(tmp_path: Path, text: str) -> str:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    (tmp_path / "pod.yaml").write_text(NO_LIMIT)
    r = CliRunner().invoke(main, ["check", "--config", str(cfg), str(tmp_path / "pod.yaml")])
    assert r.exit_code == 2
    return r.stderr.strip()


def test_config_traps_have_hints(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    assert _config_error(tmp_path, "profile:\n  kubernetesVersion: 1.30\n") == (
        f"kubelint-ml: error: {cfg}:2: profile.kubernetesVersion: 1.3 is not of type 'string' "
        '(YAML reads 1.30 as a number; quote it: "1.30")'
    )
    assert _config_error(tmp_path, "profile: {kubernetesVersion: 1.30, cgroupVersion: 2}\n") == (
        f"kubelint-ml: error: {cfg}:1: profile.kubernetesVersion: 1.3 is not of type 'string' "
        '(YAML reads 1.30 as a number; quote it: "1.30")'
    )
    assert _config_error(tmp_path, "profile:\n\tkubernetesVersion: '1.30'\n") == (
        f"kubelint-ml: error: {cfg}:2: invalid YAML: while scanning for the next token: found character that "
        "cannot start any token (the line is indented with a tab: YAML indents with spaces only)"
    )
    assert _config_error(tmp_path, "profile:\n  nodePools:\n    - name: a100\n      instanceType: p4d.24xlarg\n") == (
        f"kubelint-ml: error: {cfg}:4: profile.nodePools[a100].instanceType: unknown instance type 'p4d.24xlarg' "
        "(did you mean 'p4d.24xlarge'?) (the built-in catalog's types are in kubelint_ml/data/gpu-catalog.yaml; "
        "or give gpus, memory and cpu yourself)"
    )


def test_quantity_in_the_wrong_case_gets_a_did_you_mean_and_a_fix(tmp_path: Path) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text(NO_LIMIT.replace("limits: {nvidia.com/gpu: 1}", "limits: {nvidia.com/gpu: 1, memory: 8gi}"))
    r = invoke(["check", str(p), "--format", "concise"])
    assert (
        f"{p}:10:45: invalid-quantity container 'c' limits.memory '8gi' is not a valid quantity (did you mean 8Gi?)"
        in r.stdout
    )
    CliRunner().invoke(main, ["check", str(p), "--fix", "--unsafe-fixes"])
    assert "memory: 8Gi}" in p.read_text()


def test_a_tab_in_a_manifest_gets_the_hint(tmp_path: Path) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n\tname: p\n")
    r = invoke(["check", str(p), "--format", "concise"])
    assert r.stdout.strip().endswith(
        "found character that cannot start any token (the line is indented with a tab: YAML indents with spaces only)"
    )


def test_output_to_a_pipe_or_device_is_written_not_replaced(tmp_path: Path) -> None:
    """`--output /dev/null` or a named pipe: written to, never renamed over (as root, a rename would
    put a regular file in /dev)."""
    import os
    import stat
    import threading

    p = tmp_path / "pod.yaml"
    p.write_text(NO_LIMIT)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = CliRunner().invoke(main, ["check", str(p), "--format", "concise", "--output", str(fifo)])
    reader.join(timeout=30)
    assert r.exit_code == 1
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert b"missing-memory-limit" in got[0]
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_fix_never_writes_standard_input_to_a_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for args in (["-"], ["--stdin-filename", "k8s/job.yaml"]):
        r = CliRunner().invoke(main, ["check", *args, "--fix", "-v", "--format", "concise"], input=MOVES)
        assert r.exit_code == 1
        assert "standard input cannot be written back (use --diff)" in r.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == []  # no file named "-" or k8s/job.yaml
    r = CliRunner().invoke(main, ["check", "--stdin-filename", "k8s/job.yaml", "--diff"], input=MOVES)
    assert "+++ b/k8s/job.yaml" in r.stdout and "+            limits:" in r.stdout
