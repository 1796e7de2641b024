"""What one run is given, as one record: built once by whoever asks for the run (the command line,
`audit`, the editor) and handed down whole, so that a new kind of input is one field here, not a
new parameter in every signature between the command and the runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from kubelint_ml.records import Record
from kubelint_ml.run.config import Config

if TYPE_CHECKING:
    from kubelint_ml.engine.rulefile import Rule
    from kubelint_ml.findings import Finding, RuleInfo
    from kubelint_ml.input.charts import RenderOptions
    from kubelint_ml.input.loader import Limits
    from kubelint_ml.input.sources import Source
    from kubelint_ml.k8s.schema import SchemaValidator
    from kubelint_ml.usage.model import Usage


class PolicySet(Protocol):
    """What a run asks of its Rego and Gatekeeper policies (``kubelint_ml.policy.lint.Policies``)."""

    combine: bool

    def rule_ids(self) -> set[str]: ...
    def rule_infos(self) -> dict[str, RuleInfo]: ...
    def prepare(self, sources: list[Source], limits: Limits, stdin_data: bytes | None, jobs: int) -> int: ...
    def documents(self, data: bytes, units: list[tuple[Any, list[Any]]]) -> list[tuple[Any, list[Any]]]: ...
    def defer(self, file: str, units: list, findings: list[Finding], notes: list[str] | None) -> None: ...
    def flush(self) -> None: ...
    def lint_combined(self, docs: list[tuple[str, Any]]) -> list[Finding]: ...


class RunInputs(Record):
    """A run's inputs beside the paths: config, rules, and every source of facts it judges with."""

    config: Config
    rules: list[Rule]
    fail_level: str
    jobs: int
    verbose: bool
    schema: SchemaValidator | None  # --schema
    severity: dict[str, str] | None  # rule id -> severity, from the config and the command line
    all_rule_ids: set[str] | None  # every rule id known (enabled or not), for suppressions
    usage: Usage | None  # observed usage (--prometheus, a snapshot)
    policies: PolicySet | None  # Rego and Gatekeeper policies
    render: RenderOptions | None  # Helm values and --set for the charts among the paths
    context: tuple[str, ...]  # --context files: read for facts, never reported on
    resolve_fixes: bool  # JSON and SARIF print each fix's edits
    stdin_name: str | None  # --stdin-filename: what standard input is shown as
    __slots__ = _fields = (
        "config",
        "rules",
        "fail_level",
        "jobs",
        "verbose",
        "schema",
        "severity",
        "all_rule_ids",
        "usage",
        "policies",
        "render",
        "context",
        "resolve_fixes",
        "stdin_name",
    )

    def __init__(
        self,
        config: Config,
        rules: list[Rule],
        fail_level: str = "error",
        jobs: int = 1,
        verbose: bool = False,
        schema: SchemaValidator | None = None,
        severity: dict[str, str] | None = None,
        all_rule_ids: set[str] | None = None,
        usage: Usage | None = None,
        policies: PolicySet | None = None,
        render: RenderOptions | None = None,
        context: tuple[str, ...] = (),
        resolve_fixes: bool = False,
        stdin_name: str | None = None,
    ) -> None:
        self.config = config
        self.rules = rules
        self.fail_level = fail_level
        self.jobs = jobs
        self.verbose = verbose
        self.schema = schema
        self.severity = severity
        self.all_rule_ids = all_rule_ids
        self.usage = usage
        self.policies = policies
        self.render = render
        self.context = tuple(context)
        self.resolve_fixes = resolve_fixes
        self.stdin_name = stdin_name

    def context_paths(self) -> list[str]:
        """The context files of the config, then those of the command line."""
        return list(self.config.context) + list(self.context)
