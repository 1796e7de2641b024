"""job-spec-invalid: the counts, pod failure policy rules and success policy rules the API server rejects.

Each case is a Job spec checked as ``validateJobSpec`` (pkg/apis/batch/validation/validation.go) does after
``SetDefaults_Job``; the expected finding is at the offending field with the API server's reason.
"""

from __future__ import annotations

import textwrap

import pytest

from kubelint_ml.engine.rulefile import load_builtin_rules
from kubelint_ml.run.config import Config
from kubelint_ml.run.lint import lint_text
from kubelint_ml.templates.job_spec_invalid import indexes_total

RULES = load_builtin_rules()

TEMPLATE = """\
  template:
    spec:
      restartPolicy: Never
      initContainers:
      - name: side
        image: x
        restartPolicy: Always
      containers:
      - name: c
        image: x
"""


def job(spec: str) -> str:
    head = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n"
    return head + textwrap.indent(textwrap.dedent(spec), "  ") + TEMPLATE


def found(text: str, rule: str = "job-spec-invalid") -> list:
    return sorted(
        (f.line, f.column, str(f.path), f.severity, f.message, f.detail)
        for f in lint_text(text.encode(), RULES, Config())
        if f.rule == rule
    )


def check(text: str, expected: list[tuple]) -> None:
    """expected: (line, column, path, message, a part of the API server's reason) per finding."""
    got = found(text)
    expected = sorted(expected)
    assert [(line, col, path, sev, msg) for line, col, path, sev, msg, _ in got] == [
        (line, col, path, "error", msg) for line, col, path, msg, _ in expected
    ]
    for (*_, detail), (*_, reason) in zip(got, expected):
        assert reason in detail


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (  # parallelism without completions: nothing defaults completions
            "completionMode: Indexed\nparallelism: 4\n",
            [
                (
                    6,
                    19,
                    "spec.completionMode",
                    "an Indexed Job with parallelism 4 needs completions",
                    "(spec.completions: Required value: when completion mode is Indexed)",
                )
            ],
        ),
        (
            "completionMode: Indexed\ncompletions: 3\nbackoffLimitPerIndex: 1\nmaxFailedIndexes: 5\n",
            [
                (
                    9,
                    21,
                    "spec.maxFailedIndexes",
                    "maxFailedIndexes 5 > completions 3",
                    "(spec.maxFailedIndexes: Invalid value: 5: must be less than or equal to completions)",
                )
            ],
        ),
        (
            "completionMode: Indexed\ncompletions: 200000\nbackoffLimitPerIndex: 1\n",
            [
                (
                    7,
                    16,
                    "spec.completions",
                    "completions 200000 > 100000 with backoffLimitPerIndex and no maxFailedIndexes",
                    "(spec.maxFailedIndexes: Required value: must be specified when completions is above 100000)",
                )
            ],
        ),
        (
            "completionMode: Indexed\ncompletions: 200000\nparallelism: 20000\nbackoffLimitPerIndex: 1\n"
            "maxFailedIndexes: 20000\n",
            [
                (
                    8,
                    16,
                    "spec.parallelism",
                    "parallelism 20000 > 10000 with completions 200000",
                    "must be less than or equal to 10000 when completions are above 100000 and used with backoff "
                    "limit per index",
                ),
                (
                    10,
                    21,
                    "spec.maxFailedIndexes",
                    "maxFailedIndexes 20000 > 10000 with completions 200000",
                    "spec.maxFailedIndexes: Invalid value: 20000: must be less than or equal to 10000 when "
                    "completions are above 100000",
                ),
            ],
        ),
        (
            "completionMode: Indexed\ncompletions: 200000\nparallelism: 100001\nbackoffLimitPerIndex: 1\n"
            "maxFailedIndexes: 100001\n",
            [
                (
                    8,
                    16,
                    "spec.parallelism",
                    "parallelism 100001 > 100000 in an Indexed Job",
                    "must be less than or equal to 100000 when completion mode is Indexed",
                ),
                (8, 16, "spec.parallelism", "parallelism 100001 > 10000 with completions 200000", "10000"),
                (10, 21, "spec.maxFailedIndexes", "maxFailedIndexes 100001 > 100000", "equal to 100000)"),
                (10, 21, "spec.maxFailedIndexes", "maxFailedIndexes 100001 > 10000 with completions 200000", "10000"),
            ],
        ),
        (
            "backoffLimit: -1\nparallelism: -2\n",
            [
                (6, 17, "spec.backoffLimit", "backoffLimit -1 is negative", "must be greater than or equal to 0"),
                (7, 16, "spec.parallelism", "parallelism -2 is negative", "Invalid value: -2"),
            ],
        ),
    ],
)
def test_counts(spec, expected):
    check(job(spec), expected)


def test_counts_at_their_limits_are_valid():
    # completions and parallelism left out default to 1 (SetDefaults_Job): an Indexed Job of one index
    assert found(job("completionMode: Indexed\n")) == []
    assert (
        found(job("completionMode: Indexed\ncompletions: 100000\nparallelism: 100000\nbackoffLimitPerIndex: 1\n")) == []
    )
    high = "completionMode: Indexed\ncompletions: 1000000\nparallelism: 10000\nbackoffLimitPerIndex: 1\nmaxFailedIndexes: 10000\n"
    assert found(job(high)) == []
    # a NonIndexed Job has no such limits (and needs no completions)
    assert found(job("parallelism: 200000\n")) == []


POLICY = """\
podFailurePolicy:
  rules:
  - action: FailJob
    onExitCodes: {operator: In, values: [1]}
    onPodConditions: [{type: DisruptionTarget}]
  - action: Ignore
  - action: FailJob
    onExitCodes: {operator: In, values: [0, 42, 3, 42]}
  - action: Count
    onExitCodes: {containerName: nosuch, operator: NotIn, values: [0]}
  - action: failjob
    onExitCodes: {containerName: side, operator: Equals, values: []}
  - action: Ignore
    onPodConditions: [{type: DisruptionTarget, status: Maybe}]
"""


def test_pod_failure_policy_rules():
    check(
        job(POLICY),
        [
            (
                8,
                7,
                "spec.podFailurePolicy.rules[0]",
                "podFailurePolicy rule with both onExitCodes and onPodConditions",
                "(spec.podFailurePolicy.rules[0]: Invalid value: specifying both OnExitCodes and OnPodConditions is "
                "not supported)",
            ),
            (
                11,
                7,
                "spec.podFailurePolicy.rules[1]",
                "podFailurePolicy rule with neither onExitCodes nor onPodConditions",
                "specifying one of OnExitCodes and OnPodConditions is required",
            ),
            (
                13,
                35,
                "spec.podFailurePolicy.rules[2].onExitCodes.values",
                "onExitCodes values not in increasing order",
                "(spec.podFailurePolicy.rules[2].onExitCodes.values: Invalid value: [0, 42, 3, 42]: must be ordered)",
            ),
            (
                13,
                44,
                "spec.podFailurePolicy.rules[2].onExitCodes.values[0]",
                "onExitCodes In 0: exit code 0 is a success",
                "values[0]: Invalid value: 0: must not be 0 for the In operator",
            ),
            (
                13,
                54,
                "spec.podFailurePolicy.rules[2].onExitCodes.values[3]",
                "onExitCodes lists 42 twice",
                "values[3]: Duplicate value: 42",
            ),
            (
                15,
                36,
                "spec.podFailurePolicy.rules[3].onExitCodes.containerName",
                "onExitCodes containerName nosuch is not a container of the pod template",
                'containerName: Invalid value: "nosuch": must be one of the container or initContainer names in the '
                "pod template",
            ),
            (
                16,
                15,
                "spec.podFailurePolicy.rules[4].action",
                "podFailurePolicy action failjob: only Count, FailIndex, FailJob or Ignore",
                'action: Unsupported value: "failjob": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
            ),
            (
                17,
                52,
                "spec.podFailurePolicy.rules[4].onExitCodes.operator",
                "onExitCodes operator Equals: only In or NotIn",
                'operator: Unsupported value: "Equals": supported values: "In", "NotIn"',
            ),
            (
                17,
                60,
                "spec.podFailurePolicy.rules[4].onExitCodes.values",
                "onExitCodes with no values",
                "values: Invalid value: []: at least one value is required",
            ),
            (
                19,
                58,
                "spec.podFailurePolicy.rules[5].onPodConditions[0].status",
                "onPodConditions status Maybe: only True, False or Unknown",
                'status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
            ),
        ],
    )


def test_valid_pod_failure_policies():
    valid = """\
    podFailurePolicy:
      rules:
      - action: FailJob
        onExitCodes: {containerName: side, operator: In, values: [1, 2, 42]}
      - action: Count
        onExitCodes: {containerName: c, operator: NotIn, values: [0]}
      - action: Ignore
        onPodConditions: [{type: DisruptionTarget}, {type: Custom, status: "False"}]
    """
    assert found(job(valid)) == []
    # a partial template (a patch another tool completes): its containers are not all known
    partial = job(valid).replace("        image: x\n", "")
    assert [f[4] for f in found(partial)] == []


def test_a_cronjobs_job_template_is_held_to_the_same_rules():
    text = """\
    apiVersion: batch/v1
    kind: CronJob
    metadata: {name: cj}
    spec:
      schedule: "* * * * *"
      jobTemplate:
        spec:
          completionMode: Indexed
          completions: 3
          backoffLimitPerIndex: 1
          maxFailedIndexes: 4
          podFailurePolicy:
            rules:
            - action: FailIndex
              onExitCodes: {operator: In, values: [42, 7]}
          template:
            spec:
              restartPolicy: Never
              containers:
              - name: c
                image: x
    """
    check(
        textwrap.dedent(text),
        [
            (
                11,
                25,
                "spec.jobTemplate.spec.maxFailedIndexes",
                "maxFailedIndexes 4 > completions 3",
                "(spec.jobTemplate.spec.maxFailedIndexes: Invalid value: 4",
            ),
            (
                15,
                39,
                "spec.jobTemplate.spec.podFailurePolicy.rules[0].onExitCodes.values",
                "onExitCodes values not in increasing order",
                "must be ordered",
            ),
        ],
    )


def test_a_jobsets_jobs_are_indexed_and_need_completions_with_parallelism():
    text = """\
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata: {name: js}
    spec:
      replicatedJobs:
      - name: workers
        template:
          spec:
            parallelism: 4
            template:
              spec:
                containers:
                - name: c
                  image: x
    """
    check(
        textwrap.dedent(text),
        [
            (
                9,
                22,
                "spec.replicatedJobs[0].template.spec.parallelism",
                "an Indexed Job with parallelism 4 needs completions",
                "the API server rejects each child Job the JobSet controller creates (spec.completions: Required "
                "value: when completion mode is Indexed)",
            )
        ],
    )
    assert found(textwrap.dedent(text).replace("parallelism: 4", "parallelism: 4\n        completions: 4")) == []


SUCCESS = """\
completionMode: Indexed
completions: 10
successPolicy:
  rules:
  - {succeededIndexes: "0-1", succeededCount: 3}
  - {succeededIndexes: "0-12"}
  - {succeededIndexes: "3,1"}
  - {succeededIndexes: "1-x"}
  - {succeededIndexes: "0,2,4-7", succeededCount: 6}
  - {succeededCount: -1}
"""


def test_success_policy_rules():
    check(
        job(SUCCESS),
        [
            (
                10,
                49,
                "spec.successPolicy.rules[0].succeededCount",
                "succeededCount 3 > the 2 indexes of succeededIndexes",
                "(spec.successPolicy.rules[0].succeededCount: Invalid value: 3: must be less than or equal to 2 (the "
                "number of indexes in the specified succeededIndexes field))",
            ),
            (
                11,
                26,
                "spec.successPolicy.rules[1].succeededIndexes",
                'succeededIndexes 0-12: too large index: "12" (completions 10)',
                'succeededIndexes: Invalid value: "0-12": error parsing succeededIndexes: too large index: "12"',
            ),
            (
                12,
                26,
                "spec.successPolicy.rules[2].succeededIndexes",
                "succeededIndexes 3,1: non-increasing order, previous: 3, current: 1 (completions 10)",
                "error parsing succeededIndexes: non-increasing order, previous: 3, current: 1",
            ),
            (
                13,
                26,
                "spec.successPolicy.rules[3].succeededIndexes",
                'succeededIndexes 1-x: cannot convert string to integer for index: "x" (completions 10)',
                'cannot convert string to integer for index: "x"',
            ),
            (
                15,
                24,
                "spec.successPolicy.rules[5].succeededCount",
                "succeededCount -1 is negative",
                "succeededCount: Invalid value: -1: must be greater than or equal to 0",
            ),
        ],
    )


def test_success_policy_with_defaulted_completions():
    # completions and parallelism left out: one index (0)
    spec = 'completionMode: Indexed\nsuccessPolicy:\n  rules:\n  - {succeededIndexes: "0-1", succeededCount: 2}\n'
    got = sorted((f[2], f[4]) for f in found(job(spec)))
    # an index list that does not parse counts no index (validateIndexesFormat returns 0 with its error)
    assert got == [
        ("spec.successPolicy.rules[0].succeededCount", "succeededCount 2 > completions 1"),
        ("spec.successPolicy.rules[0].succeededCount", "succeededCount 2 > the 0 indexes of succeededIndexes"),
        ("spec.successPolicy.rules[0].succeededIndexes", 'succeededIndexes 0-1: too large index: "1" (completions 1)'),
    ]


@pytest.mark.parametrize(
    ("text", "completions", "expected"),
    [
        ("", 3, (0, "")),
        ("0", 1, (1, "")),
        ("0,2,4-7", 8, (6, "")),
        ("+1", 3, (1, "")),
        ("1-1", 3, (0, "non-increasing order, previous: 1, current: 1")),
        (
            "1-2-3",
            9,
            (
                0,
                "the fragment \"1-2-3\" violates the requirement that an index interval can have at most two parts separated by '-'",
            ),
        ),
        ("-1", 3, (0, 'cannot convert string to integer for index: ""')),
        ("0,,1", 3, (0, 'cannot convert string to integer for index: ""')),
        ("0-2,2", 3, (0, "non-increasing order, previous: 2, current: 2")),
        (" 1", 3, (0, 'cannot convert string to integer for index: " 1"')),
        ("١", 3, (0, 'cannot convert string to integer for index: "١"')),
    ],
)
def test_indexes_parse_as_the_api_server_does(text, completions, expected):
    assert indexes_total(text, completions) == expected


def test_hostile_values_neither_crash_nor_flood():
    """Numbers the API cannot decode are the schema's; a 5000-digit index is a conversion error (Go's
    Atoi), told in a clipped message; wrong types are skipped."""
    digits = "9" * 5000
    spec = f"""\
    completionMode: Indexed
    completions: 99999999999999999999999
    parallelism: true
    successPolicy:
      rules:
      - {{succeededIndexes: "{digits}"}}
      - 7
    podFailurePolicy:
      rules:
      - 3
      - {{action: [1], onExitCodes: {{operator: {{a: 1}}, containerName: 5, values: [null, "1", true, 3, 2]}}}}
      - {{action: Ignore, onPodConditions: [7, {{status: 1}}]}}
    """
    got = found(job(spec))
    assert [(f[0], f[2], f[4]) for f in got] == [
        (16, "spec.podFailurePolicy.rules[1].onExitCodes.values", "onExitCodes values not in increasing order"),
        (17, "spec.podFailurePolicy.rules[2].onPodConditions[1]", "onPodConditions pattern without a type"),
    ]
    assert "Invalid value: [3, 2]: must be ordered" in got[0][5]
    indexed = job(
        f'completionMode: Indexed\ncompletions: 3\nsuccessPolicy:\n  rules:\n  - {{succeededIndexes: "{digits}"}}\n'
    )
    (hit,) = found(indexed)
    assert hit[4].startswith("succeededIndexes 999") and hit[4].endswith("… (completions 3)")
    assert len(hit[4]) < 250 and len(hit[5]) < 1200
    assert 'cannot convert string to integer for index: "999' in hit[5]


def test_a_trainer_runtimes_counts_are_the_trainjobs():
    """A Trainer runtime's node Job takes parallelism and completions from each TrainJob (numNodes): what
    depends on them is not judged there; the rest is."""
    text = """\
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata: {name: rt}
    spec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                parallelism: 1
                maxFailedIndexes: 4
                backoffLimitPerIndex: 1
                podFailurePolicy:
                  rules:
                  - action: FailJob
                    onExitCodes: {operator: In, values: [0]}
                template:
                  spec:
                    containers:
                    - name: node
                      image: x
    """
    got = found(textwrap.dedent(text))
    assert [(f[0], f[2], f[4]) for f in got] == [
        (
            17,
            "spec.template.spec.replicatedJobs[0].template.spec.podFailurePolicy.rules[0].onExitCodes.values[0]",
            "onExitCodes In 0: exit code 0 is a success",
        )
    ]


def test_required_action_and_operator_and_a_defaulted_status():
    spec = """\
    podFailurePolicy:
      rules:
      - onExitCodes: {values: [1]}
      - action: Ignore
        onPodConditions: [{type: DisruptionTarget, status: ""}]
    """
    check(
        job(spec),
        [
            (
                8,
                7,
                "spec.podFailurePolicy.rules[0]",
                "podFailurePolicy rule without an action",
                "(spec.podFailurePolicy.rules[0].action: Required value: valid values: "
                '["Count" "FailIndex" "FailJob" "Ignore"])',
            ),
            (
                8,
                7,
                "spec.podFailurePolicy.rules[0].onExitCodes",
                "onExitCodes without an operator",
                'onExitCodes.operator: Required value: valid values: ["In" "NotIn"]',
            ),
        ],
    )


def _versioned(text: str, version: str) -> list:
    from pathlib import Path

    from kubelint_ml.run.config import Profile

    cfg = Config()
    cfg.profile = Profile.from_dict({"kubernetesVersion": version}, Path(__file__).resolve().parent.parent)
    return sorted((f.line, f.message) for f in lint_text(text.encode(), RULES, cfg) if f.rule == "job-spec-invalid")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("kueue", [(6, 14, "spec.managedBy", "managedBy kueue is not a domain-prefixed path", "(such as")]),
        (
            "Example.com/ctl",
            [
                (
                    6,
                    14,
                    "spec.managedBy",
                    "managedBy Example.com/ctl has a domain Example.com that is not a lower-case DNS subdomain",
                    'Invalid value: "Example.com/ctl": a lowercase RFC 1123 subdomain',
                )
            ],
        ),
        ("example.com/", [(6, 14, "spec.managedBy", "managedBy example.com/ is not a domain-prefixed path", "")]),
        (
            "example.com/" + "a" * 60,
            [
                (
                    6,
                    14,
                    "spec.managedBy",
                    "managedBy is 72 characters long, more than 63",
                    "spec.managedBy: Too long: may not be more than 63 bytes",
                )
            ],
        ),
        ("kueue.x-k8s.io/multikueue", []),
        ("example.com/a/b:c", []),
    ],
)
def test_managed_by_is_a_domain_prefixed_path(value, expected):
    check(job(f"managedBy: {value}\n"), expected)


def test_managed_by_is_dropped_before_1_32():
    text = job("managedBy: kueue\n")
    assert _versioned(text, "1.31") == []
    assert _versioned(text, "1.32") == [(6, "managedBy kueue is not a domain-prefixed path")]


def test_pod_condition_types_are_qualified_names():
    spec = """\
    podFailurePolicy:
      rules:
      - action: Ignore
        onPodConditions:
        - type: Disruption Target
        - status: "True"
        - type: example.com/Preempted
        - type: DisruptionTarget
    """
    check(
        job(spec),
        [
            (
                10,
                15,
                "spec.podFailurePolicy.rules[0].onPodConditions[0].type",
                "onPodConditions type Disruption Target is not a qualified name",
                'onPodConditions[0].type: Invalid value: "Disruption Target": name part must consist of',
            ),
            (
                11,
                9,
                "spec.podFailurePolicy.rules[0].onPodConditions[1]",
                "onPodConditions pattern without a type",
                'onPodConditions[1].type: Invalid value: "": name part must be non-empty',
            ),
        ],
    )


def test_an_indexed_jobs_name_makes_dns_label_hostnames():
    def named(name: str, completions: int, mode: str = "Indexed") -> str:
        spec = f"completionMode: {mode}\ncompletions: {completions}\n"
        return job(spec).replace("name: j\n", f"name: {name}\n", 1)

    long = "a" * 61
    check(
        named(long, 100),
        [
            (
                4,
                9,
                "metadata.name",
                f"Indexed Job's last pod hostname {long}-99 is 64 characters, more than 63",
                f"will not able to create pod with invalid DNS label: {long}-99",
            )
        ],
    )
    check(named(long, 10), [])  # a-...-9: 63 characters
    check(named(long, 100, "NonIndexed"), [])  # pods named with a random suffix
    check(
        named("train.v1", 2),
        [(4, 9, "metadata.name", "Indexed Job's last pod hostname train.v1-1 is not a DNS label", "train.v1-1")],
    )


def test_a_selector_of_its_own_needs_manual_selector():
    def with_selector(spec: str) -> str:
        return job(spec)

    check(
        with_selector("selector:\n  matchLabels: {app: train}\n"),
        [
            (
                6,
                3,
                "spec.selector",
                "selector on app without manualSelector: true: the Job's selector is generated",
                "(spec.selector: Invalid value: `selector` not auto-generated)",
            )
        ],
    )
    check(
        with_selector("selector:\n  matchExpressions: [{key: app, operator: In, values: [train]}]\n"),
        [
            (
                6,
                3,
                "spec.selector",
                "selector on app without manualSelector: true: the Job's selector is generated",
                "not auto-generated",
            )
        ],
    )
    # manual, or only the labels the API server generates for this Job
    labelled = job("manualSelector: true\nselector:\n  matchLabels: {app: train}\n").replace(
        "  template:\n", "  template:\n    metadata: {labels: {app: train, team: ml}}\n"
    )
    check(labelled, [])
    # ... but a selector of its own must match the template's labels (ValidateJobSpec): the API server adds
    # none to a manual Job's template
    check(
        with_selector("manualSelector: true\nselector:\n  matchLabels: {app: train}\n"),
        [
            (
                7,
                3,
                "spec.selector",
                "the selector (app=train) does not match the pod template's labels",
                "(spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`)",
            )
        ],
    )
    check(
        labelled.replace("matchLabels: {app: train}", "matchExpressions: [{key: team, operator: NotIn, values: [ml]}]"),
        [
            (
                10,
                24,
                "spec.template.metadata.labels",
                "the selector (team NotIn (ml)) does not match the pod template's labels",
                "does not match template `labels`",
            )
        ],
    )
    check(labelled.replace("matchLabels: {app: train}", "matchExpressions: [{key: team, operator: Exists}]"), [])
    check(with_selector("selector:\n  matchLabels: {batch.kubernetes.io/job-name: j}\n"), [])
    check(with_selector("selector:\n  matchExpressions: [{key: app, operator: NotIn, values: [x]}]\n"), [])
    # a Job read back from a cluster: its selector is on the uid it was created with
    dumped = with_selector("selector:\n  matchLabels: {batch.kubernetes.io/controller-uid: 0a1b}\n")
    check(dumped.replace("name: j\n", "name: j\n  uid: 0a1b\n", 1), [])
    check(
        dumped,
        [
            (
                6,
                3,
                "spec.selector",
                "selector on batch.kubernetes.io/controller-uid without manualSelector: true: the Job's selector is "
                "generated",
                "not auto-generated",
            )
        ],
    )


def test_a_cronjobs_job_template_leaves_the_selector_to_the_api_server():
    text = """\
    apiVersion: batch/v1
    kind: CronJob
    metadata: {name: cj}
    spec:
      schedule: "* * * * *"
      jobTemplate:
        spec:
          manualSelector: true
          selector:
            matchLabels: {app: x}
          template:
            metadata: {labels: {app: x}}
            spec:
              restartPolicy: Never
              containers:
              - name: c
                image: x
    """
    check(
        textwrap.dedent(text),
        [
            (
                8,
                23,
                "spec.jobTemplate.spec.manualSelector",
                "a CronJob's jobTemplate sets manualSelector: true",
                "the API server rejects the CronJob (spec.jobTemplate.spec.manualSelector: Unsupported value: true",
            ),
            (
                9,
                7,
                "spec.jobTemplate.spec.selector",
                "a CronJob's jobTemplate sets a selector",
                "(spec.jobTemplate.spec.selector: Invalid value: `selector` will be auto-generated)",
            ),
        ],
    )


def test_values_left_for_a_template_engine_are_not_judged():
    spec = """\
    managedBy: kueue.x-k8s.io/${CLUSTER}
    completionMode: Indexed
    completions: 4
    podFailurePolicy:
      rules:
      - action: Ignore
        onPodConditions: [{type: "{{ .Values.condition }}"}]
    """
    text = job(spec).replace("name: j\n", "name: ${PREFIX}-train\n", 1)
    check(text, [])
