"""The compiled policies of a run and their bounded evaluation (see :mod:`kubelint_ml.policy.sandbox`)."""

from __future__ import annotations

import json
import time
from typing import Any

from kubelint_ml.policy.rego import EvalError, Evaluator, Module
from kubelint_ml.policy.sandbox import Bounded


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


class Runtime:
    """Evaluators by key; jobs ``(key, rule, input_json, data_json or None)``.

    A rule (key and rule name) whose evaluation hits the time or memory limit is disabled: its
    later jobs are answered ``("skipped", reason)`` without being run, for the rest of the run, or,
    with :attr:`readmit_after` set (``serve``), until that many seconds have passed; so a runaway
    rule costs one time limit per run (per period in ``serve``), not one per document.
    """

    def __init__(self, time_limit: float | None = None, memory_limit: int | None = None, strict: bool = False) -> None:
        self.evaluators: dict[str, Evaluator] = {}
        self.bounded = Bounded(self._work, time_limit, memory_limit, related=_same_rule)
        self.strict = strict  # built-in errors fail the evaluation (conftest's --show-builtin-errors)
        self.disabled: dict[tuple[str, str], tuple[float, str]] = {}  # (key, rule) -> (when, reason)
        self.readmit_after: float | None = None

    def add(self, key: str, modules: list[Module], data: dict | None = None) -> None:
        self.bounded.close()  # a helper forked before this evaluator existed does not have it
        self.evaluators[key] = Evaluator(modules, data, strict=self.strict)

    def _work(self, job: tuple) -> Any:
        key, rule, input_json, data_json = job
        ev = self.evaluators[key]
        if data_json is not None:
            ev.set_data_json(data_json)
        ev.set_input_json(input_json)
        return ev.eval(rule)

    def _disabled(self, job: tuple, now: float) -> str | None:
        hit = self.disabled.get((job[0], job[1]))
        if hit is None:
            return None
        if self.readmit_after is not None and now - hit[0] >= self.readmit_after:
            del self.disabled[(job[0], job[1])]
            return None
        return hit[1]

    def run(self, jobs: list[tuple]) -> list[tuple[str, Any]]:
        """``("ok", value)``, ``("error", text)``, ``("limit", reason)`` (this job hit the limit) or
        ``("skipped", reason)`` (its rule hit a limit before) per job."""
        now = time.monotonic()
        skip = [self._disabled(j, now) for j in jobs]
        answers = iter(self.bounded.run([j for j, s in zip(jobs, skip) if s is None]))
        out: list[tuple[str, Any]] = []
        for job, reason in zip(jobs, skip):
            if reason is not None:
                out.append(("skipped", reason))
                continue
            answer = next(answers)
            if answer[0] == "limit":
                self.disabled[(job[0], job[1])] = (time.monotonic(), str(answer[1]))
            out.append(answer)
        return out

    def close(self) -> None:
        self.bounded.close()


def _same_rule(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and a[1] == b[1]


__all__ = ["Runtime", "EvalError", "dumps"]
