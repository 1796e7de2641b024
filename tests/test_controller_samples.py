"""Controller projects' own samples (fixtures/controllers/, sources in PROVENANCE.md): each kind's
pods built as its controller builds them, with the findings, at their lines, a user would defend."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "fixtures" / "controllers"


def lint(path: Path, *extra: str) -> list[tuple[str, int, str, str]]:
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(path), "-f", "json", *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
    return sorted((f["rule"], f["line"], f["path"], f["message"]) for f in json.loads(r.stdout)["findings"])


def rules(found: list[tuple[str, int, str, str]]) -> list[tuple[str, int, str]]:
    return [(rule, line, path) for rule, line, path, _ in found]


# --- KServe LLMInferenceService --------------------------------------------------------


def test_llm_inference_service_gets_the_presets_image_and_is_judged() -> None:
    found = lint(SAMPLES / "kserve" / "llm-inference-service-qwen2-7b-gpu.yaml")
    # the template's main container has no image: KServe's preset gives it one, so the pod is whole
    assert rules(found) == [("missing-priority-class", 16, "spec.template")]
    assert "kserve-config-llm-template: image ghcr.io/llm-d/llm-d-cuda:v0.9.0" in found[0][3]


def test_llm_inference_service_prefill_and_decode_get_their_own_presets() -> None:
    found = lint(SAMPLES / "kserve" / "llm-inference-service-pd-qwen2-7b-gpu.yaml")
    assert rules(found) == [
        ("missing-priority-class", 19, "spec.template"),
        ("missing-priority-class", 76, "spec.prefill.template"),
    ]
    assert "kserve-config-llm-decode-template" in found[0][3]
    assert "kserve-config-llm-prefill-template" in found[1][3]


def test_llm_inference_service_data_parallel_workers() -> None:
    found = lint(SAMPLES / "kserve" / "llm-inference-service-dp-ep-deepseek-r1-gpu-deepep-ht.yaml")
    assert rules(found) == [
        ("missing-priority-class", 26, "spec.template"),
        ("missing-priority-class", 109, "spec.worker"),
    ]
    assert all("kserve-config-llm-worker-data-parallel" in f[3] for f in found)


def test_managed_dra_annotation_makes_a_gpu_pod(tmp_path: Path) -> None:
    # No GPU in the template: the exp-dra-device-class annotation makes KServe add a claim.
    sample = SAMPLES / "kserve" / "llm-inference-service-managed-dra-minimal.yaml"
    found = lint(sample)
    assert rules(found) == [("missing-priority-class", 18, "spec.template")]
    assert "a DRA claim of device class gpu.nvidia.com" in found[0][3]
    # without it, a CPU pod: the priority rule leaves it alone
    plain = tmp_path / "plain.yaml"
    plain.write_text(sample.read_text().replace("serving.kserve.io/exp-dra-device-class", "example.com/note"))
    assert lint(plain) == []
