"""The GitHub Action (action.yml and its two scripts) and the pre-commit hook, run locally.

The scripts run as the Action runs them: bash, inputs in environment variables,
GITHUB_OUTPUT and GITHUB_STEP_SUMMARY pointing at files.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
RUN_SH = ROOT / "action" / "run.sh"
INSTALL_SH = ROOT / "action" / "install.sh"
KUBELINT = Path(sys.executable).parent / "kubelint-ml"
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

INPUTS = [
    "paths",
    "config",
    "fail-level",
    "format",
    "sarif-file",
    "baseline",
    "schema",
    "args",
    "working-directory",
    "version",
    "python-version",
]


def test_action_inputs_and_outputs() -> None:
    inputs = ACTION["inputs"]
    assert list(inputs) == INPUTS
    assert inputs["paths"]["default"] == "."
    assert inputs["fail-level"]["default"] == "error"
    assert inputs["format"]["default"] == "github"
    assert inputs["sarif-file"]["default"] == ""
    assert inputs["working-directory"]["default"] == "."
    assert list(ACTION["outputs"]) == ["errors", "warnings", "info", "findings", "sarif-file", "exit-code"]
    for name, out in ACTION["outputs"].items():
        assert out["value"] == f"${{{{ steps.check.outputs.{name} }}}}"
    assert ACTION["runs"]["using"] == "composite"


def test_python_of_later_steps_is_left_alone_and_pip_is_cached() -> None:
    setup = STEPS[0]
    assert setup["uses"].startswith("actions/setup-python@")
    assert setup["with"]["update-environment"] is False  # no PATH change for the caller's steps
    cache = STEPS[1]
    assert cache["uses"].startswith("actions/cache@")
    assert "~/.cache/pip" in cache["with"]["path"]
    install = STEPS[2]
    assert install["env"]["KUBELINT_ML_PYTHON"] == "${{ steps.python.outputs.python-path }}"
    assert install["env"]["KUBELINT_ML_ACTION_PATH"] == "${{ github.action_path }}"


def test_no_expression_inside_scripts() -> None:
    scripts = [s["run"] for s in STEPS if "run" in s]
    assert scripts == [
        'bash "$KUBELINT_ML_ACTION_PATH/action/install.sh"',
        'bash "$KUBELINT_ML_ACTION_PATH/action/run.sh"',
    ]
    for step in STEPS[2:]:
        for value in step["env"].values():
            assert re.fullmatch(r"\$\{\{ (inputs|github|steps)\.[a-z_.-]+ \}\}", value)
    used = {m for s in STEPS[2:] for v in s["env"].values() for m in re.findall(r"inputs\.([a-z-]+)", v)}
    assert used | {"python-version"} == set(INPUTS)


def _bash(
    script: Path, tmp_path: Path, env: dict[str, str], cwd: Path | None = None, path_prefix: Path | None = None
) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    output = tmp_path / "github_output"
    output.write_text("")
    full_env = {
        "PATH": (f"{path_prefix}{os.pathsep}" if path_prefix else "") + os.environ["PATH"],
        "HOME": str(tmp_path),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(output),
    }
    full_env.update(env)
    proc = subprocess.run(
        ["bash", str(script)], cwd=cwd or tmp_path, env=full_env, capture_output=True, text=True, timeout=120
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return proc, outputs


def _fake_kubelint(tmp_path: Path) -> Path:
    """A stand-in kubelint-ml that prints its argv, one per line."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    fake = bindir / "kubelint-ml"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n', encoding="utf-8")
    fake.chmod(0o755)
    return fake


BASE = {
    "KUBELINT_ML_PATHS": ".",
    "KUBELINT_ML_CONFIG": "",
    "KUBELINT_ML_FAIL_LEVEL": "error",
    "KUBELINT_ML_FORMAT": "github",
    "KUBELINT_ML_SARIF_FILE": "",
}


def _argv(tmp_path: Path, env: dict[str, str]) -> list[str]:
    fake = _fake_kubelint(tmp_path)
    proc, _ = _bash(RUN_SH, tmp_path, dict(env, KUBELINT_ML_BIN=str(fake)))
    assert proc.returncode == 0, proc.stderr
    argv = proc.stdout.splitlines()
    # The JSON report the script reads the counts from goes to a temporary file.
    i = argv.index("json")
    assert argv[i - 1] == "--format" and argv[i + 1] == "--output"
    del argv[i - 1 : i + 3]
    return argv


@needs_bash
def test_check_step_arguments(tmp_path: Path) -> None:
    assert _argv(tmp_path, BASE) == ["check", "--fail-level", "error", "--format", "github", "--output", "-", "--", "."]
    env = dict(BASE, KUBELINT_ML_PATHS="k8s/\n  jobs/*.yaml  'training/**/*.yaml'")
    env.update(
        KUBELINT_ML_CONFIG="ci/kl.yaml",
        KUBELINT_ML_SARIF_FILE="out.sarif",
        KUBELINT_ML_BASELINE="base.json",
        KUBELINT_ML_SCHEMA="true",
        KUBELINT_ML_ARGS="--context cluster/\n--helm-set a=b",
    )
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "a.yaml").write_text("x")
    assert _argv(tmp_path, env) == [
        "check", "--fail-level", "error", "--format", "github", "--output", "-",
        "--config", "ci/kl.yaml", "--baseline", "base.json", "--schema", "--format", "sarif", "--output", "out.sarif",
        "--context", "cluster/", "--helm-set", "a=b",
        "--", "k8s/", "jobs/*.yaml", "'training/**/*.yaml'",
    ]  # fmt: skip
    assert _argv(tmp_path, dict(BASE, KUBELINT_ML_PATHS="  "))[-2:] == ["--", "."]
    assert "--schema" not in _argv(tmp_path, dict(BASE, KUBELINT_ML_SCHEMA="false"))


@needs_bash
def test_hostile_inputs_stay_data(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = f"$(touch {marker}) `touch {marker}`; touch {marker} \"'$HOME"
    env = dict(BASE)
    for key in (
        "KUBELINT_ML_CONFIG",
        "KUBELINT_ML_FAIL_LEVEL",
        "KUBELINT_ML_FORMAT",
        "KUBELINT_ML_SARIF_FILE",
        "KUBELINT_ML_BASELINE",
    ):
        env[key] = evil
    args = _argv(tmp_path, env)
    assert args[:3] == ["check", "--fail-level", evil]
    assert args.count(evil) == 5
    assert not marker.exists()
    proc, outputs = _bash(
        RUN_SH,
        tmp_path,
        dict(BASE, KUBELINT_ML_BIN=str(_fake_kubelint(tmp_path)), KUBELINT_ML_WORKING_DIRECTORY="a\nexit-code=0"),
    )
    assert proc.returncode == 2 and "exit-code" not in outputs


GPU_JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: pytorch
          resources:
            limits: {nvidia.com/gpu: 1}
"""


@needs_bash
@pytest.mark.skipif(not KUBELINT.exists(), reason="kubelint-ml is not installed beside this Python")
def test_check_step_with_the_real_tool(tmp_path: Path) -> None:
    """The documented example, run: a quoted glob, a SARIF file, outputs and the job summary."""
    repo = tmp_path / "repo"
    (repo / "training" / "team").mkdir(parents=True)
    (repo / "training" / "team" / "job.yaml").write_text(GPU_JOB)
    summary = tmp_path / "summary.md"
    env = dict(
        BASE,
        KUBELINT_ML_BIN=str(KUBELINT),
        KUBELINT_ML_PYTHON=sys.executable,
        KUBELINT_ML_PATHS="training/**/*.yaml",
        KUBELINT_ML_SARIF_FILE="kubelint-ml.sarif",
        KUBELINT_ML_FAIL_LEVEL="warning",
        KUBELINT_ML_WORKING_DIRECTORY="repo",
        GITHUB_STEP_SUMMARY=str(summary),
    )
    proc, outputs = _bash(RUN_SH, tmp_path, env)
    assert proc.returncode == 1, proc.stderr
    assert outputs["exit-code"] == "1"
    assert int(outputs["errors"]) >= 1 and int(outputs["findings"]) == sum(
        int(outputs[k]) for k in ("errors", "warnings", "info")
    )
    assert outputs["sarif-file"] == "repo/kubelint-ml.sarif"
    assert (repo / "kubelint-ml.sarif").is_file()
    assert "::error file=training/team/job.yaml,line=" in proc.stdout
    assert summary.read_text().startswith("## kubelint-ml")
    assert not list(tmp_path.glob("kubelint-ml-*"))  # the temporary JSON report is gone

    # A usage error (no file matches): exit 2, no SARIF path for the upload step, no stale report.
    env["KUBELINT_ML_PATHS"] = "nothing/*.yaml"
    proc, outputs = _bash(RUN_SH, tmp_path, env)
    assert proc.returncode == 2
    assert outputs == {"exit-code": "2"}
    assert not (repo / "kubelint-ml.sarif").exists()
    assert "no YAML or JSON file matches nothing/*.yaml" in proc.stderr


@needs_bash
def test_install_step(tmp_path: Path) -> None:
    """A venv of its own in RUNNER_TEMP, the action's checkout installed into it, its paths as outputs."""
    log = tmp_path / "log"
    fake_python = tmp_path / "python"
    fake_python.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$0 $*" >> "{log}"\n'
        'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; fi\n',
        encoding="utf-8",
    )
    fake_python.chmod(0o755)
    env = {"KUBELINT_ML_PYTHON": str(fake_python), "KUBELINT_ML_ACTION_PATH": str(ROOT), "KUBELINT_ML_VERSION": ""}
    proc, outputs = _bash(INSTALL_SH, tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    venv = tmp_path / "kubelint-ml-venv"
    assert log.read_text().splitlines() == [
        f"{fake_python} -m venv {venv}",
        f"{venv}/bin/python -m pip install --disable-pip-version-check --quiet -c {ROOT}/constraints.txt {ROOT}",
    ]
    assert outputs == {"bin": f"{venv}/bin/kubelint-ml", "python": f"{venv}/bin/python"}
    log.unlink()
    proc, _ = _bash(INSTALL_SH, tmp_path, dict(env, KUBELINT_ML_VERSION="1.0; rm -rf /"))
    assert proc.returncode == 2 and not log.exists()
    proc, _ = _bash(INSTALL_SH, tmp_path, dict(env, KUBELINT_ML_VERSION="0.3.1"))
    assert proc.returncode == 0
    assert log.read_text().splitlines()[-1].endswith("--quiet kubelint-ml==0.3.1")


def _doc_workflows() -> list[dict]:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    return [yaml.safe_load(b) for b in blocks if "uses: kubelint-ml/kubelint-ml" in b]


def test_documented_workflows_use_real_inputs_and_a_safe_upload() -> None:
    workflows = _doc_workflows()
    assert workflows
    for wf in workflows:
        for job in wf["jobs"].values():
            steps = job["steps"]
            ours = [s for s in steps if str(s.get("uses", "")).startswith("kubelint-ml/kubelint-ml")]
            assert len(ours) == 1
            assert set(ours[0].get("with", {})) <= set(INPUTS)
            for s in steps:
                if "upload-sarif" in str(s.get("uses", "")):
                    # Uploads only a file that exists (a usage error writes none).
                    assert "outputs.sarif-file != ''" in s["if"]
                    assert s["with"]["sarif_file"] == "${{ steps.kubelint-ml.outputs.sarif-file }}"


def test_pre_commit_hook() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert len(hooks) == 1
    hook = hooks[0]
    assert hook["id"] == "kubelint-ml"
    assert hook["entry"] == "kubelint-ml check"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["yaml", "json"]
