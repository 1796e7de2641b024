"""Argo Workflows: the fields Argo adds to the containers it embeds, template parameters in
resource quantities, GPUs asked for where no pod template can be built, and WorkflowTemplates
judged with the Workflows that use them (docs/kinds.md, Argo Workflows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
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
        # With podPriorityClassName inherited: the workflow's volume once, the container at its key.
        ("unknown-field", 64, 32, "warning"),
        ("unknown-field", 74, 7, "warning"),
    ]


def test_template_parameters_in_quantities_are_placeholders_and_a_parameter_gpu_count_is_a_gpu_pod() -> None:
    # No invalid-quantity on {{inputs.parameters.mem}}, {{workflow.parameters.gpus}}, ${{ inputs.gpus }},
    # $(params.gpus), $(params.mem); each GPU pod (the count a parameter or not) has no priority. A
    # memory placeholder leaves the resource rules quiet; a GPU count placeholder leaves quiet only
    # those that need the count (the GPU's share of node memory).
    assert sorted(fixture("template-parameters.yaml")) == sorted(
        [
            ("missing-priority-class", 14, 5, "warning"),  # Argo script, memory a parameter
            ("missing-priority-class", 37, 5, "warning"),  # Argo container, GPU count a parameter
            ("missing-priority-class", 52, 5, "warning"),  # Job, GPU count a GitHub Actions expression
            ("missing-priority-class", 70, 3, "warning"),  # Tekton TaskRun, GPU count a parameter
            ("missing-priority-class", 94, 3, "warning"),  # Tekton TaskRun, memory a parameter
            # A GPU count left to envsubst: the other resources are known, judged as a GPU pod's.
            ("besteffort-qos", 117, 5, "error"),
            ("missing-memory-request", 123, 9, "warning"),
            ("missing-memory-limit", 124, 11, "error"),
        ]
    )


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
        "${GPUS:-1}",
        "${var.gpus}",
    ],
)
def test_placeholders(value: str) -> None:
    assert is_placeholder(value)


@pytest.mark.parametrize("value", ["1", "16Gi", "gpu", "{{}}", "{{x}}GB", "$()", "{{a}}{{b}}", "1 {{x}}", 1, None])
def test_not_placeholders(value: object) -> None:
    assert not is_placeholder(value)


def test_workflow_templates_are_judged_with_the_workflows_that_run_them() -> None:
    assert fixture("argo-workflowtemplates.yaml") == [
        ("missing-priority-class", 9, 5, "warning"),  # 'alone': run by no Workflow here, judged on its own
        ("missing-priority-class", 22, 5, "warning"),  # 'gpu-tmpl': Workflow 'run-' sets no priority
        ("missing-priority-class", 82, 5, "warning"),  # 'library' eval: no step runs it with a priority
    ]
    # 'patched' (the CronWorkflow patches its template) and 'library' train (run by a step of a
    # Workflow with podPriorityClassName) are given a priority by what runs them.
    details = {
        f.line: f.detail
        for f in lint_text((FIXTURES / "argo-workflowtemplates.yaml").read_bytes(), RULES)
        if f.rule == "missing-priority-class"
    }
    assert "Workflow 'run-' runs this template and sets no priority" in details[22]
    assert "Workflow '" not in details[9]


def test_a_workflow_in_another_file_gives_the_template_its_priority(tmp_path: Path) -> None:
    template = tmp_path / "template.yaml"
    template.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata:\n  name: gpu-tmpl\n  namespace: ml\n"
        "spec:\n  templates:\n  - name: train\n    container:\n      image: nvcr.io/nvidia/pytorch:24.05-py3\n"
        "      resources:\n        limits: {nvidia.com/gpu: 1, memory: 16Gi}\n"
    )
    run = tmp_path / "run.yaml"
    run.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  generateName: run-\n  namespace: ml\n"
        "spec:\n  podPriorityClassName: training\n  workflowTemplateRef:\n    name: gpu-tmpl\n"
    )
    assert _cli(template, run) == []
    assert _cli(template) == [("missing-priority-class", str(template), 8, 5)]
    # A Workflow in another namespace does not run it.
    run.write_text(run.read_text().replace("namespace: ml", "namespace: other"))
    assert _cli(template, run) == [("missing-priority-class", str(template), 8, 5)]


def _cli(*paths: Path) -> list[tuple[str, str, int, int]]:
    r = CliRunner().invoke(main, ["check", *map(str, paths), "-f", "json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return [(f["rule"], f["file"], f["line"], f["column"]) for f in json.loads(r.output)["findings"]]


def test_accelerators_in_a_resource_manifest_or_a_pod_spec_patch_are_said_not_judged() -> None:
    assert fixture("argo-embedded.yaml") == [
        ("accelerator-workload-not-judged", 14, 7, "info"),  # the JobSet's 8 GPUs, at resource.manifest
        ("accelerator-workload-not-judged", 43, 5, "info"),  # a templated patch adds a GPU to a CPU pod
        ("accelerator-workload-not-judged", 69, 3, "info"),  # the workflow's patch, for all its pods
        ("missing-priority-class", 92, 5, "warning"),  # 'train2'; 'train' gets its class from its podSpecPatch
    ]
    # The ConfigMap manifest asks for nothing; the patch of a pod judged as a GPU pod already is not reported.
    messages = {f.line: f.message for f in lint_text((FIXTURES / "argo-embedded.yaml").read_bytes(), RULES)}
    assert messages == {
        14: "asks for nvidia.com/gpu but its pods were not judged: created by the resource manifest of template 'jobset'",
        43: "podSpecPatch asks for nvidia.com/gpu: the pod of template 'patched' was judged without it",
        69: "podSpecPatch asks for amd.com/gpu: the workflow's pods were judged without it",
        92: "no priorityClassName: pods run at the default priority",
    }


def test_pod_fields_from_template_defaults_pod_resources_and_resource_claims() -> None:
    text = (FIXTURES / "argo-pod-fields.yaml").read_text()
    # (The containerSet at the end mounts /dev/shm through its set-level volumeMounts: no finding.)
    # templateDefaults gives both pods their class ('claim' sets an empty one, which Argo leaves out);
    # 'train' has its own pod-level resources, 'claim' the workflow's memory limit and GPU claim. The
    # workflow's claim is every pod's: 'train' is allocated a GPU through it too, which its container (on
    # nvidia.com/gpu) does not list, so no container gets it (accelerator-claim-unused, at the claim).
    assert found(text) == [("accelerator-claim-unused", 13, 11, "warning"), ("request-exceeds-limit", 18, 36, "error")]
    # Without the default class (a line less), both are GPU pods without priority ('claim' by its DRA claim).
    assert found(text.replace("    priorityClassName: training\n", "")) == [
        ("accelerator-claim-unused", 12, 11, "warning"),
        ("missing-priority-class", 15, 5, "warning"),
        ("missing-priority-class", 24, 5, "warning"),  # at its empty priorityClassName
        ("request-exceeds-limit", 17, 36, "error"),
    ]


def test_argo_fields_of_the_wrong_type_and_a_manifest_alias_bomb() -> None:
    assert fixture("argo-hostile.yaml") == [
        ("accelerator-workload-not-judged", 14, 7, "info"),  # found under the aliases, at the manifest
        ("parse-error", 10, 3, "error"),  # podResources: a string where the pod's resources go
        ("parse-error", 26, 52, "error"),  # containerSet.containers[0]: an integer
    ]
