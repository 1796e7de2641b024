"""resize-policy-invalid on Kubeflow training-operator jobs: the pods take the replica's restartPolicy."""

from __future__ import annotations

import textwrap

from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.run.config import Config
from kubelint_ml.run.lint import lint_text

RULES = load_builtin_rules()

JOB = """\
apiVersion: kubeflow.org/v1
kind: KIND
metadata: {name: train}
spec:
  FIELD:
    Worker:
      replicas: 2
      REPLICA_POLICY
      template:
        spec:
          TEMPLATE_POLICY
          containers:
          - name: pytorch
            image: x
            resizePolicy:
            - resourceName: memory
              restartPolicy: RestartContainer
"""


def resize(kind: str, field: str, replica: str = "", template: str = "") -> list[tuple[int, str, str]]:
    text = (
        JOB.replace("KIND", kind)
        .replace("FIELD", field)
        .replace("REPLICA_POLICY", f"restartPolicy: {replica}" if replica else "")
        .replace("TEMPLATE_POLICY", f"restartPolicy: {template}" if template else "")
    )
    found = lint_text(textwrap.dedent(text).encode(), RULES, Config())
    return [(f.line, str(f.path), f.detail) for f in found if f.rule == "resize-policy-invalid"]


def test_the_replica_restart_policy_never_is_the_pods():
    found = resize("PyTorchJob", "pytorchReplicaSpecs", replica="Never")
    assert [(line, path) for line, path, _ in found] == [
        (17, "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resizePolicy[0].restartPolicy")
    ]
    assert (
        "the pod's restartPolicy is Never (the replica's restartPolicy, which the operator copies into the pod)"
        in (found[0][2])
    )
    # ExitCode runs the pods with Never
    found = resize("PyTorchJob", "pytorchReplicaSpecs", replica="ExitCode")
    assert [line for line, _, _ in found] == [17]
    assert "(the replica's restartPolicy ExitCode, which the operator runs as Never)" in found[0][2]


def test_the_replica_policy_overrides_the_templates():
    # the operator writes OnFailure over the template's Never: the pods may restart their containers
    assert resize("PyTorchJob", "pytorchReplicaSpecs", replica="OnFailure", template="Never") == []
    # a PyTorchJob replica with none defaults to OnFailure, whatever the template says
    assert resize("PyTorchJob", "pytorchReplicaSpecs", template="Never") == []
    assert resize("PaddleJob", "paddleReplicaSpecs", template="Never") == []


def test_kinds_whose_replicas_default_to_never():
    for kind, field in (
        ("TFJob", "tfReplicaSpecs"),
        ("XGBoostJob", "xgbReplicaSpecs"),
        ("JAXJob", "jaxReplicaSpecs"),
        ("MXJob", "mxReplicaSpecs"),
    ):
        found = resize(kind, field)
        assert [(line, path) for line, path, _ in found] == [
            (17, f"spec.{field}.Worker.template.spec.containers[0].resizePolicy[0].restartPolicy")
        ], kind
        assert f"({kind}'s default replica restartPolicy, which the operator copies into the pod)" in found[0][2]
        assert resize(kind, field, replica="OnFailure", template="Never") == [], kind


def test_other_kinds_keep_the_templates_policy():
    # the same shape outside kubeflow.org/v1 is not the training operator's: the template's Never decides
    text = (
        JOB.replace("KIND", "PyTorchJob")
        .replace("FIELD", "pytorchReplicaSpecs")
        .replace("kubeflow.org/v1", "example.com/v1")
        .replace("REPLICA_POLICY", "restartPolicy: OnFailure")
        .replace("TEMPLATE_POLICY", "restartPolicy: Never")
    )
    found = [f for f in lint_text(text.encode(), RULES, Config()) if f.rule == "resize-policy-invalid"]
    assert [f.line for f in found] == [17]
    assert "(the replica's" not in found[0].detail
