"""End to end in a real editor: headless Neovim (Debian's `neovim`) with `kubelint-ml lsp` as its
language server, on a manifest. What the editor shows equals `check`; fix all equals `check --fix`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (.ci/run installs Debian's neovim)")
pytest.importorskip("pygls", reason="pygls is not installed (the language server's dependency)")

ROOT = Path(__file__).resolve().parent.parent
SEVERITY = {"error": 1, "warning": 2, "info": 3}


def test_neovim_shows_what_check_finds_and_fix_all_writes_what_check_fix_does(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    shutil.copy(ROOT / "fixtures" / "lsp" / "job.yaml", job)
    text = job.read_text()
    found = json.loads(
        subprocess.run(
            [sys.executable, "-m", "kubelint_ml", "check", str(job), "-f", "json"], capture_output=True, text=True
        ).stdout
    )["findings"]
    fixed = tmp_path / "fixed.yaml"
    shutil.copy(job, fixed)
    subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(fixed), "--fix", "--unsafe-fixes"], capture_output=True
    )
    out = tmp_path / "editor.json"
    env = {**os.environ, "KLM_PYTHON": sys.executable, "KLM_FILE": str(job), "KLM_OUT": str(out), "HOME": str(tmp_path)}
    subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-c", f"luafile {ROOT / 'tests' / 'data' / 'nvim_lsp.lua'}"],
        env=env,
        timeout=120,
        capture_output=True,
    )
    editor = json.loads(out.read_text())
    assert "error" not in editor, editor.get("error")
    # Neovim's columns are 0-based UTF-16 offsets; this file is ASCII.
    shown = sorted((d["code"], d["line"], d["col"] + 1, d["severity"]) for d in editor["diagnostics"])
    assert shown == sorted((f["rule"], f["line"], f["column"], SEVERITY[f["severity"]]) for f in found)
    assert any("[invalid-quantity]" in t for t in editor["quickfixes"])
    assert editor["hover"].startswith("**invalid-quantity**")
    assert [d["code"] for d in editor["after_error"]] == ["parse-error"]
    assert editor["parse_error_ms"] < 500
    assert sorted((d["code"], d["line"]) for d in editor["after_undo"]) == sorted(
        (d["code"], d["line"]) for d in editor["diagnostics"]
    )
    assert editor["fixed"] == fixed.read_text() != text
    assert editor["alive"] is True
