"""The pre-commit hook as users run it: through pre-commit itself, on staged files.

The hook runs once over all the staged files (``require_serial: true``; kubelint-ml shares
the work out to its own processes), so files that give each other context (a PriorityClass
beside the Job that names it) are read together, and there is one summary. The test needs no
network: the published hook's settings are copied into a ``repo: local`` hook that runs the
kubelint-ml installed beside this interpreter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / ".pre-commit-hooks.yaml"
GIT = shutil.which("git")
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
KUBELINT = shutil.which("kubelint-ml", path=str(Path(sys.executable).parent)) or shutil.which("kubelint-ml")

PRIORITY = """apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: training-high
value: 100000
"""
JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train-{n}
spec:
  template:
    spec:
      priorityClassName: training-high
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          resources:
            requests: {{cpu: "1", memory: 1Gi}}
            limits: {{memory: 1Gi}}
"""


def test_published_hook_runs_serially() -> None:
    [hook] = yaml.safe_load(HOOKS.read_text())
    assert hook["id"] == "kubelint-ml"
    assert hook["require_serial"] is True
    assert hook["entry"] == "kubelint-ml check"
    assert hook["types_or"] == ["yaml", "json"]


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (pip install -e '.[test]')")
@pytest.mark.skipif(KUBELINT is None, reason="the kubelint-ml command is not installed")
def test_hook_through_pre_commit_sees_the_staged_files_together(tmp_path: Path) -> None:
    [published] = yaml.safe_load(HOOKS.read_text())
    repo = tmp_path / "repo"
    repo.mkdir()
    # Nothing of the calling environment's git or pre-commit settings (a test runner's, a hook's).
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))},
        "HOME": str(tmp_path),
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "NO_COLOR": "1",
    }

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)

    def config(require_serial: bool) -> None:
        hook = {k: v for k, v in published.items() if k not in ("language", "entry")}
        hook.update(language="system", entry=f"{KUBELINT} check", require_serial=require_serial)
        (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}))

    (tmp_path / "gitconfig").write_text("")
    assert run(GIT, "init", "-q").returncode == 0
    (repo / "k8s").mkdir()
    # Eight Jobs that name training-high, each beside a PriorityClass of its own, and training-high
    # in a file of its own: however pre-commit would split the files (it shuffles them, then cuts
    # them into parts of at least four), a part without training-high would know other classes.
    for n in range(8):
        other = PRIORITY.replace("training-high", f"batch-{n}")
        (repo / "k8s" / f"job-{n}.yaml").write_text(JOB.format(n=n) + "---\n" + other)
    (repo / "k8s" / "priority.yaml").write_text(PRIORITY)
    config(published["require_serial"])
    assert run(GIT, "add", "-A").returncode == 0
    r = run(PRE_COMMIT, "run", "--hook-stage", "pre-commit")
    out = r.stdout + r.stderr
    assert "unknown-priority-class" not in out, out
    assert r.returncode == 0, out
    assert "Passed" in out

    # A finding in a staged file fails the commit, and the output has one summary.
    job = repo / "k8s" / "job-7.yaml"
    job.write_text(job.read_text().replace("training-high", "training-hihg"))
    assert run(GIT, "add", "-A").returncode == 0
    r = run(PRE_COMMIT, "run", "--hook-stage", "pre-commit", "--verbose")
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "Failed" in out, out
    assert out.count("unknown-priority-class") == 1, out
    assert "k8s/job-7.yaml" in out
    assert sum(1 for line in out.splitlines() if " in " in line and " files" in line and "error" in line) == 1, out

    # The control: with require_serial false, pre-commit splits the files over processes on a
    # machine with two CPUs or more, and a Job in the batch without the PriorityClass gets a
    # false unknown-priority-class.
    if (os.cpu_count() or 1) >= 2:
        job.write_text(job.read_text().replace("training-hihg", "training-high"))
        config(False)
        assert run(GIT, "add", "-A").returncode == 0
        r = run(PRE_COMMIT, "run", "--hook-stage", "pre-commit")
        assert "unknown-priority-class" in r.stdout + r.stderr
