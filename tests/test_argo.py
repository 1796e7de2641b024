"""Argo Workflows: the fields Argo adds to the containers it embeds, template parameters in
resource quantities, GPUs asked for where no pod template can be built, and WorkflowTemplates
judged with the Workflows that use them (docs/kinds.md, Argo Workflows)."""

from __future__ import annotations

from pathlib import Path

from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.run.lint import lint_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "platform"
RULES = [r for r in load_builtin_rules() if r.id != "gpu-node-unresolved"]  # off by default


def found(text: str | bytes) -> list[tuple[str, int, int, str]]:
    data = text.encode() if isinstance(text, str) else text
    return sorted((f.rule, f.line, f.column, f.severity) for f in lint_text(data, RULES))


def fixture(name: str) -> list[tuple[str, int, int, str]]:
    return found((FIXTURES / name).read_bytes())


def test_argo_container_fields_are_not_unknown_and_a_typo_is_reported_at_its_key() -> None:
    # script.source (ScriptTemplate), containerSet.containers[].dependencies (ContainerNode),
    # initContainers[]/sidecars[].mirrorVolumeMounts (UserContainer): Argo's, not typos.
    assert fixture("argo-container-fields.yaml") == [
        ("missing-memory-limit", 42, 7, "warning"),
        ("missing-memory-request", 42, 7, "warning"),
        ("unknown-field", 45, 7, "warning"),  # sidecars[0].resouces, at the key
    ]
