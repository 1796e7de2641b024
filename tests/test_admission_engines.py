"""The engines and helper processes of ``serve`` under its threads: a Rego engine lives and dies on
the thread that owns it; the CEL helper answers each thread its own evaluations.

An engine of the Rego interpreter belongs to the thread that made it: used from another it
panics, and released on another it is never freed (its memory stays; the binding reports it as an
unraisable ``RuntimeError``). ``serve`` loads configs on reload threads, reviews on the event loop's
worker threads and retires configs on others: these tests run those steps on those threads, as the
server does, and count what would leak.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
from pathlib import Path

import pytest
from webhook import ROOT, write_config

from kubelint_ml.admission.app import Holder
from kubelint_ml.admission.metrics import Metrics
from kubelint_ml.admission.review import load_policy, review
from kubelint_ml.admission.server import Reloader, ServeOptions
from kubelint_ml.policy.rego import Evaluator

POLICIES = ROOT / "fixtures" / "policies"
POLICY_THREAD = "kubelint-ml-policies"

TEAM = """package team
import rego.v1
deny contains "no team label" if { not input.metadata.labels.team }
"""

# Runs for seconds on an object labelled slow=yes: over any time limit below.
SLOW = """package slow
import rego.v1
deny contains "slow label" if {
  input.metadata.labels.slow == "yes"
  count([1 | some a in numbers.range(1, 3000); some b in numbers.range(1, 3000)]) > 0
}
"""


def _pod(labels: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml", "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
    }


def _request(labels: dict, uid: str = "u") -> dict:
    return {"uid": uid, "operation": "CREATE", "namespace": "ml", "object": _pod(labels)}


def _job_request(uid: str = "u") -> dict:
    """A Job the conftest rules (main.deny: an image from outside the registry) and the Gatekeeper
    constraints (no activeDeadlineSeconds, no team label) deny."""
    pod = _pod({})["spec"]
    pod["restartPolicy"] = "Never"
    pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1"
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": pod}}}
    return {"uid": uid, "operation": "CREATE", "namespace": "ml", "object": job}


@pytest.fixture
def unraisable(monkeypatch) -> list[str]:
    """What the process could not raise (an engine released on a thread not its own) while the test
    runs: what earlier tests in this process left for the collector is collected first, unwatched."""
    gc.collect()
    seen: list[str] = []
    monkeypatch.setattr(
        sys,
        "unraisablehook",
        lambda u: seen.append(f"{u.exc_type.__name__}: {u.exc_value} (on {threading.current_thread().name})"),
    )
    return seen


def _policy_dir(tmp: Path) -> Path:
    rules = tmp / "policies"
    rules.mkdir()
    for sub in ("conftest", "gatekeeper"):
        for f in (POLICIES / sub).iterdir():
            if f.suffix in (".rego", ".yaml") and not f.name.endswith("_test.rego"):
                (rules / f.name).write_bytes(f.read_bytes())
    return rules


def _live_evaluators() -> int:
    gc.collect()
    return sum(type(o) is Evaluator for o in gc.get_objects())


def _policy_threads() -> int:
    return sum(t.name.startswith(POLICY_THREAD) for t in threading.enumerate())


def test_reloads_release_every_engine_on_its_own_thread(tmp_path, unraisable):
    """Twelve reloads as the server makes them (load in a worker thread, reviews in others, the old
    config retired in yet another): no engine is released on a foreign thread, and what stays is
    the engines of the config in force, on one thread."""
    _policy_dir(tmp_path)
    config = write_config(tmp_path / "c.yaml", {"rules": ["policies"], "admission": {"requestTimeoutSeconds": 0.2}})
    before = _live_evaluators()

    async def serve() -> tuple[int, int]:
        holder = Holder(await asyncio.to_thread(load_policy, str(config)))
        await asyncio.to_thread(review, holder.policy, _job_request())  # (serve's warm-up, on another thread)
        reloader = Reloader(ServeOptions(cert="-", key="-", config=str(config)), holder, Metrics(), None)
        for i in range(12):
            await reloader.reload_config()
            verdict = await asyncio.to_thread(review, holder.policy, _job_request(uid=f"u{i}"))
            assert {"main.deny", "K8sGpuJobDeadline/gpu-jobs-end"} <= {f.rule for f in verdict.findings}
        await asyncio.sleep(1.5)  # each old config is retired 1.2 s after its replacement
        in_force = _live_evaluators() - before
        threads = _policy_threads()
        await asyncio.to_thread(holder.policy.retire)
        return in_force, threads

    in_force, threads = asyncio.run(serve())
    gc.collect()
    assert unraisable == []
    # the config in force (the conftest modules, the Rego ConstraintTemplate), nothing of the 12 before
    assert in_force == 2
    assert threads == 1
    assert _live_evaluators() == before


def test_a_policy_dropped_without_retiring_releases_its_engines_on_its_thread(tmp_path, unraisable):
    """A policy that is only garbage collected (``export vap``, a test) releases its engines on the
    thread that owns them, wherever the last reference goes."""
    _policy_dir(tmp_path)
    config = write_config(tmp_path / "c.yaml", {"rules": ["policies"]})
    before = _live_evaluators()
    box: list = []
    worker = threading.Thread(target=lambda: box.append(load_policy(str(config))))
    worker.start()
    worker.join()
    verdict = review(box[0], _job_request())  # evaluated from this thread, not the loader's
    assert {"main.deny", "K8sGpuJobDeadline/gpu-jobs-end"} <= {f.rule for f in verdict.findings}
    box.clear()  # the last reference, on this thread
    for _ in range(100):  # its thread releases the engines, then ends (counted after: gc.get_objects() refers)
        if _policy_threads() == 0:
            break
        threading.Event().wait(0.05)
    assert unraisable == []
    assert _live_evaluators() == before and _policy_threads() == 0


def test_a_runaway_policy_does_not_take_the_other_rules_with_it(tmp_path, unraisable):
    """The helper that evaluates policies is replaced after a rule runs over its time limit, from a
    review's thread; the new one runs the other rules as before (they were said to have run out of
    memory, and were disabled for five minutes: every review denied with rule-errors)."""
    rules = tmp_path / "policies"
    rules.mkdir()
    (rules / "team.rego").write_text(TEAM)
    (rules / "slow.rego").write_text(SLOW)
    config = write_config(tmp_path / "c.yaml", {"rules": ["policies"], "admission": {"requestTimeoutSeconds": 0.5}})
    policy = load_policy(str(config))
    assert review(policy, _request({})).allowed is False  # the helper forked from this thread, as at start-up

    def in_thread(labels: dict) -> dict:
        box: list = []
        t = threading.Thread(target=lambda: box.append(review(policy, _request(labels))))
        t.start()
        t.join(60)
        return box[0].response

    try:
        assert in_thread({"team": "a"})["allowed"] is True
        slow = in_thread({"team": "a", "slow": "yes"})
        assert slow["allowed"] is False
        assert slow["status"]["message"] == (
            "kubelint-ml: 1 error finding: rule-error: policy slow.deny failed here (evaluation stopped: did not "
            "finish within 0.4 s; it is not evaluated again for 300 s); the other rules still ran"
        )
        # the innocent rule still judges, on a new helper, from yet another thread
        assert in_thread({"team": "a"})["allowed"] is False  # slow.deny: skipped, said as a rule-error
        told = in_thread({})["status"]["message"]
        assert told.startswith("kubelint-ml: 2 error findings: ") and told.endswith("; team.deny: no team label")
        assert "team.deny failed" not in told
    finally:
        policy.retire()
    assert unraisable == []


NAME_RULE = """\
id: name-prefix
severity: error
title: No container named bad-*
description: A container name the team reserves.
remediation: Rename the container.
scope: {unit: container}
check:
  cel: "!container.name.replace('-', '_').startsWith('bad_')"
  messageExpression: "'reserved name ' + container.name"
examples:
  fail:
    - manifest: |
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
            - {name: bad-1, image: x}
      findings: [{line: 6}]
  pass:
    - manifest: |
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
            - {name: good-1, image: x}
"""


def test_concurrent_reviews_of_small_and_large_objects_get_their_own_verdicts(tmp_path):
    """A CEL rule whose expression is evaluated in the helper process, and reviews at once on the
    event loop (small objects) and in worker threads (over 256 KiB): each answer is its object's.
    The threads used to share the helper's pipes: answers of other objects (a denied object
    admitted), torn replies, reviews that never ended."""
    from webhook import Webhook, need_server_stack, review_body

    need_server_stack()
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "name-prefix.yaml").write_text(NAME_RULE)
    config = write_config(tmp_path / "c.yaml", {"rules": ["rules"], "admission": {"requestTimeoutSeconds": 20}})
    wrong: list = []
    with Webhook(tmp_path, config) as hook:

        def client(k: int) -> None:
            conn = hook.connection(timeout=60)
            try:
                for i in range(24):
                    name = f"{'bad' if (i + k) % 2 else 'good'}-{k}-{i}"
                    pod = _pod({"team": "a"})
                    pod["spec"]["containers"][0]["name"] = name
                    if i % 3 == 0:  # over 256 KiB: reviewed in a worker thread
                        pod["metadata"]["annotations"] = {"padding": "x" * 300_000}
                    answer = hook.review(review_body(pod, uid=f"u-{k}-{i}"), conn=conn)
                    message = answer.get("status", {}).get("message", "")
                    if (
                        answer["uid"] != f"u-{k}-{i}"
                        or answer["allowed"] != name.startswith("good")
                        or (name.startswith("bad") and f"reserved name {name} " not in message + " ")
                    ):
                        wrong.append((name, answer["allowed"], message[:200]))
            finally:
                conn.close()

        clients = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(4)]
        for t in clients:
            t.start()
        for t in clients:
            t.join(120)
        assert not any(t.is_alive() for t in clients)
    assert wrong == []


def test_a_review_past_its_deadline_is_not_judged_and_never_passes(tmp_path, unraisable):
    """A review whose time limit passed while it waited (for a worker thread, or for the policies
    another review holds) is not worked on for nothing: not started at all, or its policies are not
    evaluated, and then a rule-error says so (denied if it were ever used, never admitted without
    them)."""
    import time

    from kubelint_ml.admission.app import _review_until

    rules = tmp_path / "policies"
    rules.mkdir()
    (rules / "team.rego").write_text(TEAM)
    policy = load_policy(str(write_config(tmp_path / "c.yaml", {"rules": ["policies"]})))
    try:
        ahead = time.perf_counter() + 60
        judged = _review_until(policy, _request({}), ahead)
        assert judged is not None and [f.rule for f in judged.findings if f.severity == "error"] == ["team.deny"]
        assert _review_until(policy, _request({}), time.perf_counter() - 1) is None
        late = review(policy, _request({}), deadline=time.perf_counter() - 1)
        assert late.allowed is False
        assert late.response["status"]["message"] == (
            "kubelint-ml: 1 error finding: rule-error: the policies were not evaluated: the review's time limit "
            "passed while it waited for them"
        )
    finally:
        policy.retire()
    assert unraisable == []
