"""CI runs what the README says, and the lock agrees with pyproject.toml's ranges."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _locked() -> dict[str, tuple[str, Marker | None]]:
    """constraints.txt: name -> (version, marker)."""
    out: dict[str, tuple[str, Marker | None]] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith((" ", "#")):
            continue
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==", line
        out[req.name.lower().replace("_", "-")] = (spec.version, req.marker)
    return out


def test_ci_ends_with_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Run the tests:\n\n```sh\n(.*?)\n```", readme, re.S)
    assert block, "the README's test command"
    last = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip("\n").splitlines()[-1]
    assert last.replace(" --quiet", "") == block.group(1)
    assert "-c constraints.txt" in last


def test_the_lock_pins_every_dependency_inside_its_range() -> None:
    import tomllib  # (standard library from Python 3.11)

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    locked = _locked()
    requirements = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]
    for req in requirements:
        name = req.name.lower().replace("_", "-")
        assert name in locked, f"{name} is not in constraints.txt: run .ci/lock"
        version, _ = locked[name]
        assert req.specifier.contains(version, prereleases=True), (
            f"constraints.txt pins {name} {version}, outside pyproject.toml's {req.specifier}: run .ci/lock"
        )
