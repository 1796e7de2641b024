"""Findings for reporter and baseline tests: one set of defaults."""

from __future__ import annotations

from kubelint_ml.findings import Finding, ObjectRef


def make_finding(**overrides) -> Finding:
    """A GPU Job finding; any field can be overridden."""
    base = dict(
        rule="gpu-limit-missing",
        severity="error",
        message="container trainer: no GPU limit",
        remediation="set limits",
        file="jobs/train.yaml",
        line=12,
        column=9,
        object=ObjectRef("batch/v1", "Job", "ml", "train"),
    )
    base.update(overrides)
    return Finding(**base)
