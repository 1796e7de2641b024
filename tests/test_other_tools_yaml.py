"""Other tools' YAML found when a whole repository is checked: skipped as non-manifests (-v says why),
never a parse-error; a manifest written wrong beside them still is one."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubelint_ml.cli import main

OTHER_TOOLS = {
    # kubebuilder's scaffold: a JSON 6902 patch the kustomization leaves commented out
    "config/default/manager_metrics_patch.yaml": "# This patch adds the args\n- op: add\n"
    "  path: /spec/template/spec/containers/0/args/0\n  value: --metrics-bind-address=:8080\n",
    # an Ansible task list (it deploys manifests, it is none)
    "tasks/main.yml": "---\n- name: install\n  kubernetes.core.k8s:\n    state: present\n"
    "    definition:\n      apiVersion: v1\n      kind: Namespace\n",
    # a benchmark runner's config and a Google API discovery document
    "bench.yaml": "# runner settings\nkind: vllm-bench\nimage: vllm/vllm-openai\npodResources: {}\n",
    "api.json": '{"kind": "discovery#restDescription", "name": "iamcredentials"}\n',
}
WRONG = {
    # a list of manifests: kubectl refuses a document that is a list
    "list.yaml": "- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n",
    "strings.yaml": "- a\n- b\n",
    # a Kubernetes kind without its apiVersion
    "pod.yaml": "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: busybox}]\n",
    # operator-sdk's scorecard config as one project writes it: Go's own decoding ignores the case, kubectl not
    "scorecard.yaml": "kind: Configuration\napiversion: scorecard.operatorframework.io/v1alpha3\nstages: []\n",
}


def test_other_tools_yaml_is_skipped_and_manifests_written_wrong_are_parse_errors(tmp_path: Path) -> None:
    for name, text in {**OTHER_TOOLS, **WRONG}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    r = CliRunner().invoke(main, ["check", str(tmp_path), "-f", "json", "-v", "--disable", "missing-priority-class"])
    found = {(Path(f["file"]).name, f["rule"], f["line"], f["message"]) for f in json.loads(r.stdout)["findings"]}
    assert {(name, rule, line) for name, rule, line, _ in found if rule == "parse-error"} == {
        ("list.yaml", "parse-error", 1),
        ("strings.yaml", "parse-error", 1),
        ("pod.yaml", "parse-error", 1),
        ("scorecard.yaml", "parse-error", 2),
    }
    assert (
        "scorecard.yaml",
        "parse-error",
        2,
        "apiVersion is not set (Configuration; 'apiversion' is not it: keys are case-sensitive): kubectl and the API "
        "server refuse the object",
    ) in found
    assert not {name for name, *_ in found} & {Path(n).name for n in OTHER_TOOLS}
    patch = (
        "skipped: a list of mappings without apiVersion or kind (a JSON patch, a playbook): not a Kubernetes manifest"
    )
    assert f"manager_metrics_patch.yaml:2: {patch}" in r.stderr
    assert f"main.yml:2: {patch}" in r.stderr
    assert "bench.yaml:2: skipped: kind 'vllm-bench' and no apiVersion: not a Kubernetes manifest" in r.stderr
    assert "api.json:1: skipped: kind 'discovery#restDescription' and no apiVersion" in r.stderr
    alone = CliRunner().invoke(main, ["check", *(str(tmp_path / n) for n in OTHER_TOOLS)])
    assert alone.exit_code == 0, alone.output


def test_a_one_brace_placeholder_starting_a_value_is_named(tmp_path: Path) -> None:
    """KServe's samples write `image: {username}/torchserve:latest`: YAML reads `{username}` as a flow
    mapping and stops at the text after it. The parse-error names the placeholder at its column; the
    documents after it are still linted, and a flow mapping written as one is no placeholder."""
    (tmp_path / "isvc.yaml").write_text(
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: ts\nspec:\n"
        "  predictor:\n    containers:\n    - image: {username}/torchserve-gpu:latest\n      name: c\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priorityClassName: high\n"
        "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
    )
    (tmp_path / "broken.yaml").write_text("a: {b: 1} c\n")
    r = CliRunner().invoke(main, ["check", str(tmp_path), "-f", "json"])
    found = [
        (Path(f["file"]).name, f["rule"], f["line"], f["column"], f["message"])
        for f in json.loads(r.stdout)["findings"]
    ]
    assert found[0][0] == "broken.yaml" and not found[0][4].startswith("placeholder"), found[0]
    assert found[1] == (
        "isvc.yaml",
        "parse-error",
        8,
        14,
        "placeholder {username} at the start of a value (YAML reads it as a mapping): fill it in, or quote the value",
    )
    assert ("isvc.yaml", "besteffort-qos", 14) in [f[:3] for f in found]
