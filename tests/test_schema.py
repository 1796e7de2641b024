"""Schema validation against bundled Kubernetes schemas and supplied CRDs."""

from __future__ import annotations

import copy
import datetime
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubelint_ml.input.loader import load, locate
from kubelint_ml.k8s import schema
from kubelint_ml.k8s.schema import (
    SchemaConfigError,
    SchemaProblem,
    SchemaValidator,
    bundled_versions,
    short_repr,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "schema"
LATEST = bundled_versions()[-1]


def fixture(name: str) -> dict:
    return yaml.safe_load((FIXTURES / name).read_text())


def deployment(**spec_extra: object) -> dict:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "trainer"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "trainer"}},
            "template": {
                "metadata": {"labels": {"app": "trainer"}},
                "spec": {"containers": [{"name": "c", "image": "img", "resources": {"limits": {}}}]},
            },
        },
    }
    obj["spec"].update(spec_extra)
    return obj


def container(obj: dict) -> dict:
    return obj["spec"]["template"]["spec"]["containers"][0]


@pytest.fixture(scope="module")
def plain() -> SchemaValidator:
    return SchemaValidator(LATEST)


@pytest.fixture(scope="module")
def strict() -> SchemaValidator:
    return SchemaValidator(LATEST, strict=True)


def tfjob_validator(strict: bool) -> SchemaValidator:
    v = SchemaValidator(LATEST, strict=strict)
    assert v.add_crd(fixture("tfjob-crd.yaml")) == []
    return v


# ----------------------------------------------------------------------------
# Versions


def test_bundled_versions_are_sorted_minor_versions():
    versions = bundled_versions()
    assert "1.30" in versions and "1.31" in versions
    assert versions == sorted(versions, key=lambda v: tuple(int(x) for x in v.split(".")))
    assert all(v.count(".") == 1 for v in versions)


@pytest.mark.parametrize("spelling", ["1.31", "v1.31", "1.31.4", "v1.31.0-gke.100"])
def test_version_spellings(spelling):
    assert SchemaValidator(spelling).version == "1.31"


def test_unknown_version_lists_bundled_versions():
    with pytest.raises(SchemaConfigError) as info:
        SchemaValidator("1.99")
    text = str(info.value)
    assert text.startswith("no bundled schema for Kubernetes 1.99; bundled: ")
    assert text.endswith(", ".join(bundled_versions()))


def test_malformed_version():
    with pytest.raises(SchemaConfigError, match=r"invalid Kubernetes version 'banana'.*bundled: 1\."):
        SchemaValidator("banana")


def test_version_read_as_a_yaml_number():
    version = yaml.safe_load("kubernetesVersion: 1.30")["kubernetesVersion"]
    expected = r'^Kubernetes version 1.3 was read as a number; quote it \(e.g. "1.30"\)'
    with pytest.raises(SchemaConfigError, match=expected):
        SchemaValidator(version)


def test_import_is_lazy():
    code = (
        "import sys; from kubelint_ml.k8s import schema; schema.bundled_versions(); "
        "schema.SchemaValidator('1.31'); "
        "print(sorted(m for m in ('jsonschema', 'referencing', 'kubernetes_validate') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------
# Built-in kinds


def test_valid_deployment(plain, strict):
    assert plain.validate(deployment()) == []
    assert strict.validate(deployment()) == []


def test_wrong_type_gives_one_clear_problem(plain):
    assert plain.validate(deployment(replicas="three")) == [
        SchemaProblem(("spec", "replicas"), "spec.replicas: 'three' is not of type 'integer'")
    ]


def test_quantity_and_int_or_string_accept_strings_and_numbers(plain):
    obj = deployment(strategy={"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}})
    container(obj)["resources"] = {
        "limits": {"memory": "64Gi", "cpu": 4, "nvidia.com/gpu": 8},
        "requests": {"cpu": 0.5, "memory": None},
    }
    container(obj)["ports"] = [{"containerPort": 8080}]
    assert plain.validate(obj) == []


def test_quantity_of_wrong_type_is_one_problem_naming_both_types(plain):
    obj = deployment()
    container(obj)["resources"]["limits"] = {"nvidia.com/gpu": [1], "memory": True}
    assert plain.validate(obj) == [
        SchemaProblem(
            ("spec", "template", "spec", "containers", 0, "resources", "limits", "memory"),
            "spec.template.spec.containers[0].resources.limits.memory: True is not of type 'string' or 'number'",
        ),
        SchemaProblem(
            ("spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"),
            'spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"]: '
            "[1] is not of type 'string' or 'number'",
        ),
    ]


def test_bad_quantity_string_is_left_to_the_quantity_parser(plain):
    obj = deployment()
    container(obj)["resources"]["limits"] = {"memory": "1GB"}
    assert plain.validate(obj) == []


def test_int_or_string_rejects_float(plain):
    obj = deployment(strategy={"rollingUpdate": {"maxSurge": 1.5}})
    assert plain.validate(obj) == [
        SchemaProblem(
            ("spec", "strategy", "rollingUpdate", "maxSurge"),
            "spec.strategy.rollingUpdate.maxSurge: 1.5 is not of type 'string' or 'integer'",
        )
    ]


def test_missing_required_fields_reported_once_at_parent(plain):
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}, "spec": {}}
    assert plain.validate(obj) == [SchemaProblem(("spec",), "spec: 'selector', 'template' are required properties")]


def test_missing_required_at_root(plain):
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    assert plain.validate(obj) == [SchemaProblem(("spec",), "spec: 'containers' is a required property")]
    # A root property every bundled version requires (Deployment's spec is required from 1.37 only).
    assert plain.validate({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"}}) == [
        SchemaProblem((), "(root): 'target' is a required property")
    ]
    if "1.37" in bundled_versions():
        assert SchemaValidator("1.37").validate({"apiVersion": "apps/v1", "kind": "Deployment"}) == [
            SchemaProblem((), "(root): 'spec' is a required property")
        ]


def test_unknown_field_only_in_strict_mode(plain, strict):
    obj = deployment(replicaz=3)
    container(obj)["resource"] = {"limits": {"memory": "1Gi"}}
    assert plain.validate(obj) == []
    assert strict.validate(obj) == [
        SchemaProblem(("spec", "replicaz"), "spec.replicaz: unknown field"),
        SchemaProblem(
            ("spec", "template", "spec", "containers", 0, "resource"),
            "spec.template.spec.containers[0].resource: unknown field",
        ),
    ]


def test_strict_allows_free_form_maps(strict):
    obj = deployment()
    obj["metadata"]["annotations"] = {"kubelint-ml.io/ignore": "gpu-limit", "any.key/at-all": "x"}
    container(obj)["resources"]["limits"] = {"example.com/foo": "1"}
    assert strict.validate(obj) == []


def test_builtin_schemas_leave_value_sets_to_the_api_server(plain):
    # The bundled OpenAPI schemas describe shapes, not allowed values: those
    # are checked by the API server's Go validation, not by the schema.
    obj = deployment(strategy={"type": "Rolling"})
    container(obj)["imagePullPolicy"] = "Sometimes"
    assert plain.validate(obj) == []


def test_null_fields_are_unset_fields(plain):
    obj = deployment(strategy={"type": None, "rollingUpdate": {"maxSurge": None}})
    obj["metadata"]["labels"] = None
    assert plain.validate(obj) == []


def test_unquoted_timestamp_counts_as_string(plain):
    obj = deployment()
    obj["metadata"]["annotations"] = {"built": datetime.date(2024, 5, 1)}
    assert plain.validate(obj) == []


def test_problems_sorted_by_path_one_per_path(plain):
    obj = deployment(replicas="x", minReadySeconds="y", paused="z")
    obj["metadata"]["labels"] = {"b": 1, "a": 2}
    paths = [p.path for p in plain.validate(obj)]
    assert paths == [
        ("metadata", "labels", "a"),
        ("metadata", "labels", "b"),
        ("spec", "minReadySeconds"),
        ("spec", "paused"),
        ("spec", "replicas"),
    ]


def test_item_paths_and_list_order(plain):
    obj = deployment()
    obj["spec"]["template"]["spec"]["containers"] = [
        {"name": "a", "image": "i"},
        {"name": "b", "image": "i", "ports": [{"containerPort": 1}, {"containerPort": "http"}]},
    ]
    assert plain.validate(obj) == [
        SchemaProblem(
            ("spec", "template", "spec", "containers", 1, "ports", 1, "containerPort"),
            "spec.template.spec.containers[1].ports[1].containerPort: 'http' is not of type 'integer'",
        )
    ]


def test_no_schema_returns_none(plain):
    assert plain.validate({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "spec": {}}) is None
    assert not plain.has_schema("kubeflow.org/v1", "TFJob")
    assert plain.has_schema("batch/v1", "Job")
    # Removed API version and case-sensitive kinds.
    assert plain.validate({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PriorityClass", "value": 1}) is None
    assert plain.validate({"apiVersion": "apps/v1", "kind": "deployment", "spec": {}}) is None
    assert plain.validate({"kind": "Pod"}) is None
    assert plain.validate({"apiVersion": 1, "kind": ["Pod"]}) is None


def test_group_must_match_exactly_not_just_first_label(plain):
    # batch.volcano.sh/v1alpha1 Job must not be validated as a batch Job.
    assert not plain.has_schema("batch.volcano.sh/v1alpha1", "Job")
    assert not plain.has_schema("batch.volcano.sh/v1", "Job")
    assert not plain.has_schema("scheduling.incubator.k8s.io/v1alpha1", "PodGroup")
    assert plain.has_schema("rbac.authorization.k8s.io/v1", "Role")


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("v1", "../../../etc/passwd"), ("../v1", "Pod"), ("apps/v1/../..", "Deployment"), ("v1", "Pod/x")],
)
def test_hostile_identity_never_reaches_the_file_system(plain, api_version, kind):
    assert plain.validate({"apiVersion": api_version, "kind": kind}) is None


def test_validators_are_built_once_per_kind():
    v = SchemaValidator(LATEST)
    v.validate(deployment())
    before = schema._builtin_validator.cache_info()
    for _ in range(50):
        v.validate(deployment(replicas="x"))
    after = schema._builtin_validator.cache_info()
    assert after.misses == before.misses
    assert after.hits == before.hits + 50


def test_problem_line_and_column_through_the_loader(strict):
    doc = load((FIXTURES / "deployment-invalid.yaml").read_bytes()).documents[0].data
    problems = strict.validate(doc)
    where = {p.message: locate(doc, p.path)[:2] for p in problems}
    assert where == {
        "spec.replicas: 'three' is not of type 'integer'": (6, 3),
        "spec.template.spec.containers[0].resources.limit: unknown field": (20, 13),
        'spec.template.spec.containers[0].resources.requests["nvidia.com/gpu"]: '
        "[1] is not of type 'string' or 'number'": (24, 15),
    }


# ----------------------------------------------------------------------------
# Bounded messages


def alias_bomb(levels: int = 9, width: int = 10) -> list:
    node: list = ["lol"] * width
    for _ in range(levels - 1):
        node = [node] * width
    return node


def test_alias_bomb_instance_gives_bounded_message(plain):
    obj = deployment(replicas=alias_bomb())
    obj["metadata"]["labels"] = {"huge": alias_bomb()}
    container(obj)["resources"]["limits"] = {"memory": alias_bomb()}
    problems = plain.validate(obj)
    assert [p.path for p in problems] == [
        ("metadata", "labels", "huge"),
        ("spec", "replicas"),
        ("spec", "template", "spec", "containers", 0, "resources", "limits", "memory"),
    ]
    for p in problems:
        assert len(p.message) < 450
        assert ": [[[[[[...], [...], [...]" in p.message and "],... is not of type" in p.message
    assert problems[1].message.startswith("spec.replicas: [[[[[")
    assert problems[1].message.endswith(" is not of type 'integer'")


def test_huge_string_is_cut():
    text = short_repr("x" * 10_000_000)
    assert len(text) == schema.MAX_VALUE_CHARS
    assert text.startswith("'xxx") and text.endswith("...")


def test_short_repr_small_values_match_repr():
    for value in ["a", 1, 1.5, True, None, [1, "b"], {"k": [None]}]:
        assert short_repr(value) == repr(value)
    assert short_repr(datetime.date(2024, 5, 1)) == "'2024-05-01'"
    assert short_repr(b"raw") == "<bytes>"
    assert short_repr(2**5000) == "<5001-bit integer>"


def test_huge_key_paths_are_bounded(strict):
    obj = deployment()
    obj["spec"]["k" * 100_000] = 1
    (problem,) = strict.validate(obj)
    assert problem.path == ("spec", "k" * 100_000)
    assert problem.message == "spec." + "k" * 100 + ": unknown field"


# ----------------------------------------------------------------------------
# CRDs


def test_fixture_crd_is_itself_a_valid_crd(strict):
    crd = fixture("tfjob-crd.yaml")
    assert crd["kind"] == "CustomResourceDefinition" and crd["apiVersion"].startswith("apiextensions.k8s.io/")
    assert strict.validate(crd) == []


def test_valid_tfjob_under_crd():
    for strict in (False, True):
        v = tfjob_validator(strict)
        assert v.has_schema("kubeflow.org/v1", "TFJob")
        assert v.validate(fixture("tfjob-valid.yaml")) == []


QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def test_invalid_tfjob_under_crd():
    expected = [
        ("metadata", "labels", "version"),
        "metadata.labels.version: 2 is not of type 'string'",
        ("spec", "runPolicy", "backoffLimit"),
        "spec.runPolicy.backoffLimit: -1 is less than the minimum of 0",
        ("spec", "runPolicy", "cleanPodPolicy"),
        "spec.runPolicy.cleanPodPolicy: 'Sometimes' is not one of ['All', 'Running', 'None']",
        ("spec", "runPolicy", "schedulingPolicy", "minResources", "cpu"),
        "spec.runPolicy.schedulingPolicy.minResources.cpu: True is not of type 'integer' or 'string'",
        ("spec", "runPolicy", "schedulingPolicy", "minResources", "memory"),
        "spec.runPolicy.schedulingPolicy.minResources.memory: 'lots' does not match the pattern "
        + QUANTITY_PATTERN[:97]
        + "...",
        ("spec", "tfReplicaSpecs", "Chief", "replicas"),
        "spec.tfReplicaSpecs.Chief.replicas: 'one' is not of type 'integer'",
    ]
    pairs = list(zip(expected[::2], expected[1::2]))
    got = tfjob_validator(False).validate(fixture("tfjob-invalid.yaml"))
    assert [(p.path, p.message) for p in got] == pairs


def test_misspelled_replica_type_is_an_unknown_field_in_strict_mode():
    obj = fixture("tfjob-valid.yaml")
    obj["spec"]["tfReplicaSpecs"]["Workers"] = obj["spec"]["tfReplicaSpecs"].pop("Worker")
    assert tfjob_validator(True).validate(obj) == [
        SchemaProblem(("spec", "tfReplicaSpecs", "Workers"), "spec.tfReplicaSpecs.Workers: unknown field")
    ]
    # Without strict, Kubernetes prunes unknown fields silently, and so do we.
    assert tfjob_validator(False).validate(obj) == []


def test_crd_root_requires_nothing_but_checks_metadata_and_spec_requirements():
    v = tfjob_validator(True)
    obj = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "x", "labelz": {}}, "spec": {}}
    assert v.validate(obj) == [
        SchemaProblem(("metadata", "labelz"), "metadata.labelz: unknown field"),
        SchemaProblem(("spec",), "spec: 'tfReplicaSpecs' is a required property"),
    ]


def test_unserved_versions_and_other_versions_have_no_schema():
    v = tfjob_validator(False)
    assert not v.has_schema("kubeflow.org/v1alpha9", "TFJob")
    assert v.validate({"apiVersion": "kubeflow.org/v2", "kind": "TFJob"}) is None
    assert v.validate({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"}) is None


def wrapper_crd(version_schema: dict, api: str = "apiextensions.k8s.io/v1") -> dict:
    return {
        "apiVersion": api,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "wrappers.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Wrapper", "plural": "wrappers"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": version_schema}}
            ],
        },
    }


WRAPPER_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "strictTemplate": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
                },
                "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "ratio": {"type": "number", "maximum": 1, "exclusiveMaximum": True},
            },
        }
    },
}


def wrapper(spec: dict) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Wrapper", "metadata": {"name": "w"}, "spec": spec}


def test_embedded_resource_int_or_string_and_preserve_unknown_fields():
    v = SchemaValidator(LATEST, strict=True)
    assert v.add_crd(wrapper_crd(WRAPPER_SCHEMA)) == []
    good = wrapper(
        {
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"anything": 1}},
            "strictTemplate": {"apiVersion": "v1", "kind": "Thing", "spec": {"size": 3}},
            "port": "http",
            "extra": {"free": {"form": [1, 2]}},
            "tags": ["a"],
            "ratio": 0.5,
        }
    )
    assert v.validate(good) == []
    assert v.validate(wrapper({"port": 8080})) == []
    bad = wrapper(
        {
            "template": {"metadata": {"name": "p", "labels": {"a": 1}}},
            "strictTemplate": {"apiVersion": "v1", "kind": "Thing", "spec": {"size": 3, "colour": "red"}},
            "port": 1.5,
            "tags": ["a", "b", "c"],
            "ratio": 1,
        }
    )
    assert [p.message for p in v.validate(bad)] == [
        "spec.port: 1.5 is not of type 'integer' or 'string'",
        "spec.ratio: 1 is greater than or equal to the maximum of 1",
        "spec.strictTemplate.spec.colour: unknown field",
        "spec.tags: ['a', 'b', 'c'] should have at most 2 items",
        "spec.template: 'apiVersion', 'kind' are required properties",
        "spec.template.metadata.labels.a: 1 is not of type 'string'",
    ]


def test_v1beta1_crd_with_top_level_validation():
    crd = wrapper_crd({}, api="apiextensions.k8s.io/v1beta1")
    crd["spec"].pop("versions")
    crd["spec"]["version"] = "v1"
    crd["spec"]["validation"] = {
        "openAPIV3Schema": {"properties": {"spec": {"properties": {"size": {"type": "integer", "minimum": 1}}}}}
    }
    v = SchemaValidator(LATEST)
    assert v.add_crd(crd) == []
    assert v.validate(wrapper({"size": 0})) == [
        SchemaProblem(("spec", "size"), "spec.size: 0 is less than the minimum of 1")
    ]


def test_crd_problems_are_reported_and_unsafe_keywords_dropped():
    bad_schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "a": {"$ref": "https://example.com/evil.json"},
                    "b": {"type": "string", "pattern": "(unclosed"},
                    "c": {"type": "strange", "minimum": "3"},
                    "$ref": {"type": "string"},
                },
            }
        },
    }
    v = SchemaValidator(LATEST)
    assert v.add_crd(wrapper_crd(bad_schema)) == [
        "CustomResourceDefinition 'wrappers.example.com': version v1: "
        "properties.spec.properties.a: keyword '$ref' is not supported in CRD schemas; ignored",
        "CustomResourceDefinition 'wrappers.example.com': version v1: "
        "properties.spec.properties.b: pattern '(unclosed' is not a valid RE2 regular expression "
        "(missing ): (unclosed); the API server rejects it; ignored",
        "CustomResourceDefinition 'wrappers.example.com': version v1: "
        "properties.spec.properties.c: unknown type 'strange'; ignored",
        "CustomResourceDefinition 'wrappers.example.com': version v1: "
        "properties.spec.properties.c: 'minimum' is not a number; ignored",
    ]
    # A property that is merely named "$ref" is a field, not a keyword.
    assert v.validate(wrapper({"a": {"x": 1}, "b": "(", "c": 5, "$ref": 3})) == [
        SchemaProblem(("spec", "$ref"), "spec.$ref: 3 is not of type 'string'")
    ]


def test_not_a_crd_and_broken_crds():
    v = SchemaValidator(LATEST)
    assert v.add_crd(deployment()) == [
        "CustomResourceDefinition 'trainer': not an apiextensions.k8s.io CustomResourceDefinition"
    ]
    crd = wrapper_crd(WRAPPER_SCHEMA)
    crd["spec"]["names"] = {}
    assert v.add_crd(crd) == [
        "CustomResourceDefinition 'wrappers.example.com': spec.names.kind: missing or not a valid kind"
    ]
    crd = wrapper_crd(WRAPPER_SCHEMA)
    del crd["spec"]["versions"][0]["schema"]
    assert v.add_crd(crd) == [
        "CustomResourceDefinition 'wrappers.example.com': spec.versions[0] (v1): no openAPIV3Schema"
    ]
    assert not v.has_schema("example.com/v1", "Wrapper")


def test_adding_a_crd_again_replaces_its_schema():
    v = SchemaValidator(LATEST)
    v.add_crd(wrapper_crd(WRAPPER_SCHEMA))
    assert v.validate(wrapper({"tags": [1]})) == [
        SchemaProblem(("spec", "tags", 0), "spec.tags[0]: 1 is not of type 'string'")
    ]
    loose = copy.deepcopy(WRAPPER_SCHEMA)
    loose["properties"]["spec"]["properties"]["tags"]["items"] = {"type": "integer"}
    v.add_crd(wrapper_crd(loose))
    assert v.validate(wrapper({"tags": [1]})) == []


# ----------------------------------------------------------------------------
# Corpus


def corpus_objects(corpus: Path) -> list[tuple[str, dict]]:
    out = []
    for path in sorted(corpus.glob("*/*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict):
                out.append((f"{path.parent.name}/{path.name}", doc))
    return out


@pytest.mark.slow
def test_corpus_latest_version(corpus):
    objects = corpus_objects(corpus)
    plain, strict = SchemaValidator(LATEST), SchemaValidator(LATEST, strict=True)
    results = {"plain": [], "strict": []}
    no_schema = set()
    for name, obj in objects:
        for label, v in (("plain", plain), ("strict", strict)):
            problems = v.validate(obj)
            if problems is None:
                no_schema.add((obj["apiVersion"], obj["kind"]))
                continue
            results[label] += [f"{name} {p.message}" for p in problems]
    for line in results["strict"]:
        print(line)
    assert len(objects) == 563
    # The one real error: a Spark driver pod *template* with no containers.
    assert results["plain"] == [
        "awslabs__ai-on-eks/infra__emr-spark-rapids__examples__xgboost__driver-pod-template.yaml "
        "spec: 'containers' is a required property"
    ]
    # Strict adds the pre-1.31 DRA claim shape (resourceClaims[].source), gone since 1.31.
    extra = [line for line in results["strict"] if line not in results["plain"]]
    assert len(extra) == 7
    assert all(line.startswith("NVIDIA__k8s-dra-driver-gpu/demo__specs__") for line in extra)
    assert all("resourceClaims[" in line and line.endswith("].source: unknown field") for line in extra)
    assert ("kubeflow.org/v1", "PyTorchJob") in no_schema
    assert ("scheduling.k8s.io/v1beta1", "PriorityClass") in no_schema
    assert ("batch.volcano.sh/v1alpha1", "Job") in no_schema
    assert ("batch/v1", "Job") not in no_schema


JOB_POD_FAILURE_POLICY_IGNORE = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: job-pod-failure-policy-ignore
spec:
  completions: 4
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: docker.io/library/bash:5
        command: ["bash"]
        args:
        - -c
        - echo "Hello world! I'm going to exit with 0 (success)." && sleep 90 && exit 0
  backoffLimit: 0
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions:
      - type: DisruptionTarget
"""


@pytest.mark.parametrize("version", [v for v in ("1.31", "1.33", "1.34", "1.35", "1.37") if v in bundled_versions()])
@pytest.mark.parametrize("strict_mode", [False, True])
def test_on_pod_conditions_status_is_defaulted(version, strict_mode):
    """Kubernetes' own job-pod-failure-policy-ignore.yaml: status defaults to True (the schemas
    before 1.35 mark it required)."""
    job = yaml.safe_load(JOB_POD_FAILURE_POLICY_IGNORE)
    assert SchemaValidator(version, strict=strict_mode).validate(job) == []
    # the type stays required, and a status must still be a string
    job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"] = [{"status": 3}]
    problems = SchemaValidator(version).validate(job)
    assert problems and all("onPodConditions[0]" in p.message for p in problems)


EMPTY_DRA_OBJECTS = """\
apiVersion: resource.k8s.io/{v}
kind: DeviceClass
metadata: {{name: every-device}}
---
apiVersion: resource.k8s.io/{v}
kind: ResourceClaim
metadata: {{name: no-devices}}
---
apiVersion: resource.k8s.io/{v}
kind: ResourceClaimTemplate
metadata: {{name: no-spec}}
---
apiVersion: resource.k8s.io/{v}
kind: ResourceClaimTemplate
metadata: {{name: no-claim-spec}}
spec: {{metadata: {{labels: {{app: x}}}}}}
"""


@pytest.mark.parametrize("version", [v for v in ("1.34", "1.35", "1.36", "1.37") if v in bundled_versions()])
@pytest.mark.parametrize("api", ["v1", "v1beta1", "v1beta2"])
def test_dra_objects_may_leave_their_spec_out(version, api):
    """The API server accepts a DeviceClass, ResourceClaim or ResourceClaimTemplate without a spec (its zero
    value is valid: pkg/apis/resource/validation), though the schemas before 1.37 mark it required."""
    docs = list(yaml.safe_load_all(EMPTY_DRA_OBJECTS.format(v=api)))
    for strict_mode in (False, True):
        validator = SchemaValidator(version, strict=strict_mode)
        assert [validator.validate(d) for d in docs] == [[], [], [], []], (version, api)
    # what a spec holds is still checked
    docs[1]["spec"] = {"devices": {"requests": "gpu"}}
    [problem] = SchemaValidator(version).validate(docs[1])
    assert problem.path == ("spec", "devices", "requests")


@pytest.mark.parametrize("version", bundled_versions())
def test_a_priority_class_may_leave_its_value_out(version):
    """value is 0 when left out (ValidatePriorityClass accepts it); the schemas before 1.36 mark it required."""
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "batch-default"}}
    assert SchemaValidator(version, strict=True).validate(pc) == []
    [problem] = SchemaValidator(version).validate({**pc, "value": "high"})
    assert problem.path == ("value",)


def test_the_documented_example_passes_check_with_schema(tmp_path):
    from click.testing import CliRunner

    from kubelint_ml.cli import main

    path = tmp_path / "job-pod-failure-policy-ignore.yaml"
    path.write_text(JOB_POD_FAILURE_POLICY_IGNORE)
    r = CliRunner().invoke(main, ["check", "--schema", "--kubernetes-version", "1.33", str(path), "--format", "json"])
    import json

    rules = {f["rule"] for f in json.loads(r.output)["findings"]}
    assert "schema-invalid" not in rules
    assert r.exit_code == 0


def test_a_built_in_group_names_the_version_that_brings_it(tmp_path):
    import json

    from click.testing import CliRunner

    from kubelint_ml.cli import main

    path = tmp_path / "claims.yaml"
    path.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpu}\n"
        "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}\n"
    )
    r = CliRunner().invoke(main, ["check", "--schema", "--kubernetes-version", "1.33", str(path), "--format", "json"])
    [f] = json.loads(r.output)["findings"]
    assert (f["rule"], f["line"]) == ("schema-unavailable", 2)
    assert (
        f["message"]
        == "no schema for resource.k8s.io/v1 ResourceClaimTemplate in Kubernetes 1.33: it is built in from 1.34"
    )
    assert "--crd" not in f["remediation"]
    r = CliRunner().invoke(main, ["check", "--schema", "--kubernetes-version", "1.34", str(path), "--format", "json"])
    assert json.loads(r.output)["findings"] == []
    assert schema.built_in_from("kubeflow.org/v1", "TFJob", "1.33") is None


@pytest.mark.parametrize(
    ("manifest", "version", "message", "remediation"),
    [
        (  # a DRA API version since removed: the versions this one serves instead
            "apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClaimTemplate\nmetadata: {name: gpu}\nspec: {}\n",
            "1.34",
            "no schema for resource.k8s.io/v1alpha2 ResourceClaimTemplate in Kubernetes 1.34: it is built in only up "
            "to 1.30",
            "Use an API version Kubernetes 1.34 serves (resource.k8s.io/v1, resource.k8s.io/v1beta1, "
            "resource.k8s.io/v1beta2).",
        ),
        (  # removed before the oldest bundled version, in a group no CRD can add to
            "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\nspec: {}\n",
            "1.33",
            "no schema for batch/v1beta1 CronJob: Kubernetes 1.33 does not serve it; it serves batch/v1",
            "Use an API version Kubernetes 1.33 serves (batch/v1).",
        ),
        (  # a CRD group under k8s.io (Gateway API): a CRD may define it
            "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec: {}\n",
            "1.33",
            "no schema for gateway.networking.k8s.io/v1 Gateway; pass --crd with its CustomResourceDefinition to "
            "validate it",
            "Pass the CRD with --crd FILE (or schema.crds in the config).",
        ),
    ],
)
def test_a_built_in_group_says_when_a_version_is_not_served(tmp_path, manifest, version, message, remediation):
    import json

    from click.testing import CliRunner

    from kubelint_ml.cli import main

    path = tmp_path / "old.yaml"
    path.write_text(manifest)
    r = CliRunner().invoke(main, ["check", "--schema", "--kubernetes-version", version, str(path), "--format", "json"])
    found = [f for f in json.loads(r.output)["findings"] if f["rule"] == "schema-unavailable"]
    assert [(f["line"], f["message"], f["remediation"]) for f in found] == [(2, message, remediation)]
