"""The compiled policies of a run and their bounded evaluation (see :mod:`kubelint_ml.policy.sandbox`)."""

from __future__ import annotations

import json
from typing import Any

from kubelint_ml.policy.rego import EvalError, Evaluator, Module
from kubelint_ml.policy.sandbox import Bounded

# After this many evaluations of one policy hit a limit, the run stops evaluating it.
MAX_LIMIT_HITS = 3


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


class Runtime:
    """Evaluators by key; jobs ``(key, rule, input_json, data_json or None)``."""

    def __init__(self, time_limit: float | None = None, memory_limit: int | None = None) -> None:
        self.evaluators: dict[str, Evaluator] = {}
        self.bounded = Bounded(self._work, time_limit, memory_limit)
        self.limit_hits: dict[str, int] = {}

    def add(self, key: str, modules: list[Module], data: dict | None = None) -> None:
        self.bounded.close()  # a helper forked before this evaluator existed does not have it
        self.evaluators[key] = Evaluator(modules, data)

    def _work(self, job: tuple) -> Any:
        key, rule, input_json, data_json = job
        ev = self.evaluators[key]
        if data_json is not None:
            ev.set_data_json(data_json)
        ev.set_input_json(input_json)
        return ev.eval(rule)

    def run(self, jobs: list[tuple]) -> list[tuple[str, Any]]:
        """``("ok", value)``, ``("error", text)`` or ``("limit", reason)`` per job."""
        skip = [self.limit_hits.get(j[0], 0) >= MAX_LIMIT_HITS for j in jobs]
        answers = iter(self.bounded.run([j for j, s in zip(jobs, skip) if not s]))
        out: list[tuple[str, Any]] = []
        for job, skipped in zip(jobs, skip):
            if skipped:
                out.append(("limit", f"not evaluated: it hit a limit {MAX_LIMIT_HITS} times in this run"))
                continue
            answer = next(answers)
            if answer[0] == "limit":
                self.limit_hits[job[0]] = self.limit_hits.get(job[0], 0) + 1
            out.append(answer)
        return out

    def close(self) -> None:
        self.bounded.close()


__all__ = ["Runtime", "EvalError", "dumps"]
