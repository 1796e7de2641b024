"""Kubernetes versions as the rules compare them."""

from __future__ import annotations


def parse_version(text: str | None) -> tuple[int, int] | None:
    """``"1.33"``, ``"v1.33.2"`` -> ``(1, 33)``; None when it is not a version."""
    if not text:
        return None
    parts = str(text).lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None
