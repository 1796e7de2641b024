"""The Rego engine choice, measured: the gatekeeper-library suites with each engine.

    python bench/rego_engines.py [--engine regorus|regopy]

``regorus`` is the engine the project uses (gordon-to-regorus). ``regopy``
(rego-cpp; install it with `pip install regopy` in a scratch environment)
replaces only the evaluation: parsing, rule discovery and everything around
it stay the same, so the difference is the engine's. Prints cases passed,
templates that do not load, and the time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LIBRARY = ROOT.parent / "shared" / "policy-suites" / "gatekeeper-library" / "library"


class RegopyEvaluator:
    """The interface of kubelint_ml.policy.rego.Evaluator on rego-cpp."""

    def __init__(self, modules: list, data: dict | None = None) -> None:
        import regopy

        self._modules, self._data, self._input = modules, json.dumps(data or {}), "{}"
        self._regopy = regopy

    def set_data_json(self, text: str) -> None:
        self._data = text

    def set_input_json(self, text: str) -> None:
        self._input = text

    def eval(self, rule: str):
        from kubelint_ml.policy.rego import EvalError

        interp = self._regopy.Interpreter()
        for m in self._modules:
            interp.add_module(m.path, m.text)
        interp.add_data_json(self._data)
        interp.set_input_term(self._input)
        out = interp.query("data." + rule)
        if not out.ok():
            raise EvalError(str(out)[:300])
        text = str(out)
        value = json.loads(text)
        exprs = value.get("expressions") if isinstance(value, dict) else None
        if not exprs:
            return None
        return exprs[0]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", choices=("regorus", "regopy"), default="regorus")
    args = ap.parse_args()
    if args.engine == "regopy":
        import kubelint_ml.policy.runtime as runtime

        runtime.Evaluator = RegopyEvaluator  # type: ignore[misc,assignment]
    from kubelint_ml.policy.load import find
    from kubelint_ml.policy.verify import verify

    t = time.perf_counter()
    results = verify(find([str(LIBRARY)]))
    elapsed = time.perf_counter() - t
    passed = sum(r.passed for r in results)
    broken = sorted({r.name.split("/")[0] for r in results if "template or constraint" in r.reason})
    print(
        f"{args.engine}: {passed} of {len(results)} cases pass; templates that do not load: {len(broken)}; "
        f"{elapsed:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
