"""The refs the docs tell users to pin are the ones the release step creates (CONTRIBUTING.md, Releasing)."""

from __future__ import annotations

import re
from pathlib import Path

from kubelint_ml import __version__

ROOT = Path(__file__).resolve().parent.parent


def test_the_version_is_semver() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__), __version__


def test_the_ci_examples_name_this_version() -> None:
    text = (ROOT / "docs" / "ci.md").read_text()
    assert re.findall(r"uses: kubelint-ml/kubelint-ml@(\S+)", text) == [f"v{__version__.split('.')[0]}"]
    rev = re.findall(r"repo: https://github.com/kubelint-ml/kubelint-ml\n\s+rev: (\S+)", text)
    assert rev == [f"v{__version__}"]


def test_the_changelog_has_an_unreleased_section_and_no_later_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "\n## [Unreleased]\n" in text
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", text, flags=re.M)
    assert all(tuple(map(int, v.split("."))) <= tuple(map(int, __version__.split("."))) for v in released)


def test_the_license_is_the_apache_license_the_package_declares() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert 'license = {text = "Apache-2.0"}' in (ROOT / "pyproject.toml").read_text()


def test_every_package_directory_is_installed() -> None:
    """A subpackage missing from pyproject.toml's list works in an editable install and is absent
    from a wheel: every directory of kubelint_ml/ with an __init__.py is listed."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "kubelint_ml").rglob("__init__.py")}
    assert found - {"kubelint_ml.builtin_rules"} <= listed, sorted(found - listed)
