"""Argo Workflows: the fields Argo adds to the containers it embeds, template parameters in
resource quantities, GPUs asked for where no pod template can be built, and WorkflowTemplates
judged with the Workflows that use them (docs/kinds.md, Argo Workflows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.k8s.quantity import is_placeholder
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


def test_template_parameters_in_quantities_are_placeholders_and_a_parameter_gpu_count_is_a_gpu_pod() -> None:
    # No invalid-quantity on {{inputs.parameters.mem}}, {{workflow.parameters.gpus}}, ${{ inputs.gpus }},
    # $(params.gpus), $(params.mem); each GPU pod (the count a parameter or not) has no priority.
    assert fixture("template-parameters.yaml") == [
        ("missing-priority-class", 14, 5, "warning"),  # Argo script, memory a parameter
        ("missing-priority-class", 37, 5, "warning"),  # Argo container, GPU count a parameter
        ("missing-priority-class", 52, 5, "warning"),  # Job, GPU count a GitHub Actions expression
        ("missing-priority-class", 70, 3, "warning"),  # Tekton TaskRun, GPU count a parameter
        ("missing-priority-class", 94, 3, "warning"),  # Tekton TaskRun, memory a parameter
    ]


@pytest.mark.parametrize(
    "value",
    [
        "$GPUS",
        "${GPUS}",
        "PLACEHOLDER_GPUS",
        "<gpus>",
        "$(params.gpus)",
        '$(params["gpus"])',
        "{{inputs.parameters.mem}}",
        " {{ .Values.gpus }} ",
        "{{=asInt(inputs.parameters.n) * 2}}",
        "${{ inputs.gpus }}",
        "{{inputs.parameters.mem}}Gi",
        "${MEM}Mi",
    ],
)
def test_placeholders(value: str) -> None:
    assert is_placeholder(value)


@pytest.mark.parametrize("value", ["1", "16Gi", "gpu", "{{}}", "{{x}}GB", "$()", "{{a}}{{b}}", "1 {{x}}", 1, None])
def test_not_placeholders(value: object) -> None:
    assert not is_placeholder(value)
