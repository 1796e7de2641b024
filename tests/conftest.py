"""Hypothesis profiles; the shared corpus; a fixture that makes small runs fork.

``ci`` (the default) is quick and deterministic: derandomized, no example
database, no deadline (the fuzz tests assert their own time bound instead of
failing on a slow machine). ``long`` is the fuzzing run, selected with
``HYPOTHESIS_PROFILE=long``; see SECURITY.md for the command.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("ci", deadline=None, derandomize=True, database=None, suppress_health_check=_SLOW_OK)
# 20,000 examples for each of the fuzz tests in tests/test_hardening_fuzz.py
# (more than 100,000 cases in all), random seeds, failures printed as blobs.
settings.register_profile("long", max_examples=20_000, deadline=None, print_blob=True, suppress_health_check=_SLOW_OK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# The 384 real manifests beside the project (never copied in): ../shared/corpus from the project root.
CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus directory; a test that reads it is skipped, with the reason, when it is missing."""
    if not CORPUS.is_dir():
        pytest.skip(
            f"the shared corpus is not beside the project ({CORPUS} is missing); "
            "corpus tests run where ../shared/corpus exists, as in CI"
        )
    return CORPUS


@pytest.fixture()
def force_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of any size take the parallel paths (forked lint and shared first pass) when jobs > 1."""
    from kubelint_ml.run import facts, parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(facts, "PARALLEL_SCAN_MIN_FILES", 1)
