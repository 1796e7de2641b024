"""The GitHub Action and the pre-commit hook definitions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]


def test_action_inputs() -> None:
    inputs = ACTION["inputs"]
    assert list(inputs) == ["paths", "config", "fail-level", "format", "sarif-file", "version", "python-version"]
    assert inputs["paths"]["default"] == "."
    assert inputs["fail-level"]["default"] == "error"
    assert inputs["format"]["default"] == "github"
    assert inputs["sarif-file"]["default"] == ""
    assert ACTION["runs"]["using"] == "composite"
    assert STEPS[0]["uses"].startswith("actions/setup-python@")


def test_no_expression_inside_scripts() -> None:
    scripts = [s["run"] for s in STEPS if "run" in s]
    assert len(scripts) == 2
    for script in scripts:
        assert "${{" not in script
    for step in STEPS[1:]:
        for value in step["env"].values():
            assert re.fullmatch(r"\$\{\{ (inputs|github)\.[a-z_-]+ \}\}", value)


def _run_step(tmp_path: Path, env: dict[str, str]) -> list[str]:
    """Run the action's check step with a stand-in kubelint-ml that prints its argv."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    fake = bindir / "kubelint-ml"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n', encoding="utf-8")
    fake.chmod(0o755)
    script = STEPS[2]["run"]
    full_env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    full_env.update(env)
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=full_env, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


BASE = {
    "KUBELINT_ML_PATHS": ".",
    "KUBELINT_ML_CONFIG": "",
    "KUBELINT_ML_FAIL_LEVEL": "error",
    "KUBELINT_ML_FORMAT": "github",
    "KUBELINT_ML_SARIF_FILE": "",
}


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_check_step_arguments(tmp_path: Path) -> None:
    expected = ["check", "--fail-level", "error", "--format", "github", "--output", "-", "--", "."]
    assert _run_step(tmp_path, BASE) == expected
    env = dict(BASE, KUBELINT_ML_PATHS="k8s/\n  jobs/*.yaml  ")
    env.update(KUBELINT_ML_CONFIG="ci/kl.yaml", KUBELINT_ML_SARIF_FILE="out.sarif")
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "a.yaml").write_text("x")
    assert _run_step(tmp_path, env) == [
        "check", "--fail-level", "error", "--format", "github", "--output", "-",
        "--config", "ci/kl.yaml", "--format", "sarif", "--output", "out.sarif",
        "--", "k8s/", "jobs/*.yaml",
    ]  # fmt: skip
    assert _run_step(tmp_path, dict(BASE, KUBELINT_ML_PATHS="  ")) [-2:] == ["--", "."]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_hostile_inputs_stay_data(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = f'$(touch {marker}) `touch {marker}`; touch {marker} "\'$HOME'
    env = dict(BASE)
    for key in ("KUBELINT_ML_CONFIG", "KUBELINT_ML_FAIL_LEVEL", "KUBELINT_ML_FORMAT", "KUBELINT_ML_SARIF_FILE"):
        env[key] = evil
    args = _run_step(tmp_path, env)
    assert args[:3] == ["check", "--fail-level", evil]
    assert args.count(evil) == 4
    assert not marker.exists()


def test_pre_commit_hook() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert len(hooks) == 1
    hook = hooks[0]
    assert hook["id"] == "kubelint-ml"
    assert hook["entry"] == "kubelint-ml check"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["yaml", "json"]
