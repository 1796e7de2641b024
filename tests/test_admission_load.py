"""Admission that holds under size and load (real `kubelint-ml serve` over HTTPS on 127.0.0.1):
a review that cannot be finished or started in time gets the onTimeout answer (deny by default),
never a free pass; the work in flight stays inside the memory the server may use."""

from __future__ import annotations

import concurrent.futures
import json
from pathlib import Path

import pytest
from webhook import Webhook, need_server_stack, review_body, write_config

from kubelint_ml.admission.app import BYTES_PER_BODY_BYTE, Budget, memory_limit


@pytest.fixture(scope="module")
def stack() -> None:
    need_server_stack()


def big_pod(containers: int, name: str = "big") -> dict:
    """A Pod the rules deny (GPU containers with no memory limit), made large."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "containers": [
                {"name": f"c{i}", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
                for i in range(containers)
            ]
        },
    }


def test_a_review_that_takes_too_long_is_denied_by_default(stack, tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yaml", {"admission": {"requestTimeoutSeconds": 0.2}})
    with Webhook(tmp_path, config) as hook:
        resp = hook.review(review_body(big_pod(18000)))
        assert resp["allowed"] is False
        assert "review took longer than 0.2 s" in resp["status"]["message"]
        assert "admission.onTimeout: deny" in resp["status"]["message"]
        assert hook.metric('kubelint_ml_admission_requests_total{result="timeout"}') == 1
    allow = write_config(tmp_path / "a.yaml", {"admission": {"requestTimeoutSeconds": 0.2, "onTimeout": "allow"}})
    with Webhook(tmp_path, allow) as hook:
        resp = hook.review(review_body(big_pod(18000)))
        assert resp["allowed"] is True and "review took longer than 0.2 s" in resp["warnings"][0]


@pytest.mark.slow  # a load test: seconds of CPU
def test_many_large_objects_at_once_none_admitted_and_memory_inside_the_limit(stack, tmp_path: Path) -> None:
    """Eight 1.5 MB Pods the rules deny, sent at once, with the server held to 256 MiB: each is
    denied (judged, or refused in time for want of memory), and the server's peak stays under it."""
    limit = 256 * 1024 * 1024
    config = write_config(tmp_path / "c.yaml", {"admission": {"memoryLimitBytes": limit, "requestTimeoutSeconds": 5}})
    bodies = [review_body(big_pod(18000, f"big-{i}"), uid=f"u-{i}") for i in range(8)]
    with Webhook(tmp_path, config) as hook:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda b: hook.review(b, hook.connection(timeout=60)), bodies))
        assert [a["allowed"] for a in answers] == [False] * 8
        assert sorted(a["uid"] for a in answers) == sorted(f"u-{i}" for i in range(8))
        status = Path(f"/proc/{hook.proc.pid}/status").read_text()
        peak_kib = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))
        assert peak_kib * 1024 < limit, f"peak {peak_kib // 1024} MiB"
        # small objects are still answered: the budget was given back
        ok = hook.review(review_body(big_pod(1, "small")))
        assert ok["allowed"] is False and "missing-memory-limit" in ok["status"]["message"]


def test_budget_and_limit() -> None:
    import asyncio

    async def go() -> tuple[bool, bool, bool]:
        b = Budget(1_000_000)
        first = await b.take(800_000, 0.1)
        second = await b.take(800_000, 0.1)  # does not fit: waits, then gives up
        b.give(800_000)
        third = await b.take(5_000_000, 0.1)  # larger than the whole budget: alone, it fits
        return first, second, third

    assert asyncio.run(go()) == (True, False, True)
    assert memory_limit(123456789) == 123456789
    assert memory_limit() > 0
    assert BYTES_PER_BODY_BYTE >= 40


def test_once_denied_a_template_of_many_containers_is_not_judged_further() -> None:
    """At admission, once an error stands, later rules skip a template of more than 100 containers
    (the rules that can deny run first); up to 100 containers every rule runs, as in `check`."""
    from kubelint_ml.admission.review import lint_object, load_policy
    from kubelint_ml.run.lint import lint_text

    policy = load_policy(None)
    findings, _ = lint_object(policy, big_pod(101))
    assert [(f.rule, f.severity) for f in findings if f.suppressed is None] == [("besteffort-qos", "error")]
    findings, _ = lint_object(policy, big_pod(100))
    rules = {f.rule for f in findings if f.suppressed is None}
    assert {"besteffort-qos", "missing-memory-limit", "missing-memory-request", "missing-priority-class"} <= rules
    # check judges everything, whatever the size
    text = json.dumps(big_pod(101)).encode()
    found = lint_text(text, policy.engine.rules)
    assert sum(f.rule == "missing-memory-limit" for f in found) == 101


def test_memory_limit_from_the_cgroup_named_in_proc_self_cgroup(tmp_path) -> None:
    """The limit of the process's own cgroup or of one above it (systemd's MemoryMax on the unit or
    its slice), on cgroup v2 and v1; a runtime's namespace root; else 1 GiB."""
    from kubelint_ml.admission.app import DEFAULT_MEMORY_BYTES

    def tree(files: dict[str, str], proc: str) -> tuple[str, str]:
        root = tmp_path / f"t{len(list(tmp_path.iterdir()))}"
        for rel, text in files.items():
            (root / "fs" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "fs" / rel).write_text(text + "\n")
        (root / "cgroup").parent.mkdir(parents=True, exist_ok=True)
        (root / "cgroup").write_text(proc)
        return str(root / "cgroup"), str(root / "fs")

    # v2, under systemd: the service says max, its slice 512 MiB.
    proc, fs = tree(
        {
            "memory.max": "max",
            "system.slice/memory.max": str(512 << 20),
            "system.slice/kubelint.service/memory.max": "max",
        },
        "0::/system.slice/kubelint.service\n",
    )
    assert memory_limit(None, proc, fs) == 512 << 20
    # v1: the container's own cgroup, below the pod's.
    proc, fs = tree(
        {
            "memory/memory.limit_in_bytes": "9223372036854771712",
            "memory/kubepods/pod1/memory.limit_in_bytes": str(1 << 30),
            "memory/kubepods/pod1/ctr/memory.limit_in_bytes": str(256 << 20),
        },
        "12:pids:/kubepods/pod1/ctr\n4:memory:/kubepods/pod1/ctr\n1:name=systemd:/kubepods/pod1/ctr\n",
    )
    assert memory_limit(None, proc, fs) == 256 << 20
    # A container runtime with its own cgroup namespace: the path is / and the limit at the root.
    proc, fs = tree({"memory.max": str(300 << 20)}, "0::/\n")
    assert memory_limit(None, proc, fs) == 300 << 20
    # A path this view does not mount: the levels that exist are read.
    proc, fs = tree({"memory.max": str(200 << 20)}, "0::/kubepods.slice/elsewhere\n")
    assert memory_limit(None, proc, fs) == 200 << 20
    # No limit anywhere.
    proc, fs = tree({"memory.max": "max"}, "0::/user.slice\n")
    assert memory_limit(None, proc, fs) == DEFAULT_MEMORY_BYTES
    # The setting wins.
    assert memory_limit(123, proc, fs) == 123
