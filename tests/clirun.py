"""`kubelint-ml check` run as a user runs it: a fresh process, JSON findings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def check_findings(path: Path, *extra: str) -> list[dict]:
    """The JSON findings of ``kubelint-ml check PATH -f json EXTRA...``; the run must not fail (exit 0
    or 1) nor print a traceback."""
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(path), "-f", "json", *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout)["findings"]


def stored_dump(tmp_path: Path, manifest: str, version: str) -> tuple[Path, Path]:
    """A manifest's object as a cluster returns it (a namespace and a uid), written as a ``kubectl get -o
    json`` List, and a config naming the cluster's ``version``: the arguments of ``audit DUMP -c CONFIG``."""
    import yaml

    obj = yaml.safe_load(manifest)
    obj["metadata"].update(namespace="default", uid="u1")
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [obj]}))
    config = tmp_path / "c.yaml"
    config.write_text(f"profile: {{kubernetesVersion: '{version}'}}\n")
    return dump, config
