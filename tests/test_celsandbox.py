"""The CEL helper process shared by the threads of one process (``serve`` reviews on several)."""

from __future__ import annotations

import threading

from kubelint_ml.engine.celsandbox import Sandbox


def _echo(source: str, variables: tuple, data: dict) -> tuple:
    return source, data["x"]


def test_threads_take_turns_on_the_helper():
    """Four threads evaluating at once each get their own answers (they read each other's, or a
    torn reply, or waited for ever, when they wrote and read the same pipes at once)."""
    sandbox = Sandbox(_echo)
    wrong: list = []

    def run(k: int) -> None:
        for i in range(300):
            got = sandbox.evaluate(f"e{k}-{i}", (), {"x": f"v{k}-{i}"})
            if got != (f"e{k}-{i}", f"v{k}-{i}"):
                wrong.append(got)

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert wrong == []
    finally:
        sandbox.stop()


def test_stop_from_another_thread_waits_for_the_evaluation():
    """A stop while another thread evaluates waits for its answer; the next evaluation starts a new
    helper (a stop that read the helper's pid after another cleared it signalled process 0: the
    whole process group)."""
    sandbox = Sandbox(_echo)
    errors: list = []

    def run() -> None:
        for i in range(200):
            try:
                assert sandbox.evaluate("e", (), {"x": i}) == ("e", i)
            except Exception as e:  # noqa: BLE001 - collected for the assertion
                errors.append(repr(e))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    generations = set()
    while worker.is_alive():
        sandbox.stop()
        generations.add(sandbox.generation)
        worker.join(0.005)
    sandbox.stop()
    assert errors == []
    assert len(generations) > 1  # the helper was stopped and started again in between
