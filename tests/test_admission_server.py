"""``kubelint-ml serve`` as a real HTTPS server on 127.0.0.1: decisions equal ``check``'s findings,
and the faults an admission webhook meets (bad bodies, slow clients, SIGTERM, a broken config)."""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from webhook import ROOT, Webhook, make_cert, need_server_stack, review_body, write_config

from kubelint_ml.engine import context

# The kinds whose objects a run reads as facts for other objects (PriorityClasses, DRA claims, Nodes,
# LimitRanges, queues, TrainJobs...): serve knows them only from its context files, so they are left out
# of both sides of the comparison.
CONTEXT_KINDS = set(context.CONTEXT_KINDS)

PROFILE_CONFIG = {
    "profile": {
        "kubernetesVersion": "1.33",
        "cgroupVersion": 2,
        "priorityClasses": [{"name": "training-high", "value": 100000}, {"name": "high", "value": 1000}],
    },
    "exclude": [{"namespace": "kube-system"}, {"kind": "Deployment", "rule": "missing-priority-class"}],
    "admission": {"maxWarnings": 100, "maxWarningLength": 4096},
}


@pytest.fixture(scope="module")
def stack() -> None:
    need_server_stack()


def _objects(paths: list[Path]) -> list[dict]:
    out = []
    for path in paths:
        try:
            docs = list(yaml.safe_load_all(path.read_bytes()))
        except (yaml.YAMLError, ValueError):  # the hostile fixtures
            continue
        for doc in docs:
            if (
                isinstance(doc, dict)
                and isinstance(doc.get("kind"), str)
                and doc["kind"] not in CONTEXT_KINDS
                and not doc["kind"].endswith("List")
            ):
                out.append(json.loads(json.dumps(doc, default=str)))  # as the API server sends it: JSON
    return out


def _check_findings(tmp: Path, objects: list[dict], config: Path) -> dict[int, list[dict]]:
    """``kubelint-ml check --format json`` over one file per object; findings by object index."""
    d = tmp / "objects"
    d.mkdir()
    for i, obj in enumerate(objects):
        (d / f"o{i:04d}.yaml").write_text(yaml.safe_dump(obj, sort_keys=False))
    r = subprocess.run(
        [sys.executable, "-m", "kubelint_ml", "check", str(d), "--format", "json", "--config", str(config), "-j1"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp,
        check=False,
    )
    assert r.returncode in (0, 1), r.stderr
    out: dict[int, list[dict]] = {i: [] for i in range(len(objects))}
    for f in json.loads(r.stdout)["findings"]:
        out[int(Path(f["file"]).stem[1:])].append(f)
    return out


def _text(f: dict) -> str:
    at = f" (at {f['path']})" if f["path"] else ""
    return f"{f['rule']}: {f['message']}{at}"


def _assert_as_check(resp: dict, want: list[dict], i: int, obj: dict) -> tuple[list[str], list[str]]:
    """The review's answer says what ``check`` found: denied with its errors, its warnings as warnings."""
    errors = [_text(f) for f in want if f["severity"] == "error"]
    warnings = [_text(f) for f in want if f["severity"] == "warning"]
    where = f"object {i}: {obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
    assert resp["allowed"] is (not errors), where
    assert resp.get("warnings", []) == warnings, where
    if errors:
        message = resp["status"]["message"]
        assert resp["status"]["code"] == 403
        assert message.startswith(f"kubelint-ml: {len(errors)} error finding"), where
        assert message.endswith(
            "; ".join(t[:511] + ("…" if len(t) > 512 else t[511:]) for t in errors[:10])
            + (f"; and {len(errors) - 10} more" if len(errors) > 10 else "")
        ), where
    return errors, warnings


@pytest.mark.slow
def test_decisions_and_warnings_equal_check_over_fixtures_and_corpus(stack, tmp_path, corpus):
    paths = sorted((ROOT / "fixtures").rglob("*.yaml")) + sorted(corpus.rglob("*.yaml"))
    objects = _objects(paths)
    assert len(objects) > 400
    config = write_config(tmp_path / "kubelint-ml.yaml", PROFILE_CONFIG)
    expected = _check_findings(tmp_path, objects, config)
    denied = warned = 0
    with Webhook(tmp_path, config) as hook:
        conn = hook.connection()
        for i, obj in enumerate(objects):
            resp = hook.review(review_body(obj, uid=f"u{i}"), conn=conn)
            assert resp["uid"] == f"u{i}"
            errors, warnings = _assert_as_check(resp, expected[i], i, obj)
            denied += bool(errors)
            warned += bool(warnings)
        conn.close()
        # Metrics count what was answered.
        assert hook.metric('kubelint_ml_admission_requests_total{result="denied"}') == denied
        assert hook.metric('kubelint_ml_admission_denials_total{mode="enforce"}') == denied
        total = sum(1 for fs in expected.values() for f in fs if f["rule"] == "missing-memory-limit")
        assert (
            hook.metric('kubelint_ml_admission_findings_total{rule="missing-memory-limit",severity="error"}')
            + hook.metric('kubelint_ml_admission_findings_total{rule="missing-memory-limit",severity="warning"}')
            == total
        )
        assert hook.metric("kubelint_ml_admission_review_duration_seconds_count") == len(objects)
    assert denied > 50 and warned > 100


def test_context_object_reviewed_as_check_sees_it(stack, tmp_path):
    # A PriorityClass under review is among the facts, as when `check` lints its file.
    obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "system-mine"},
        "value": 2000000000,
    }
    config = write_config(tmp_path / "kubelint-ml.yaml", PROFILE_CONFIG)
    expected = _check_findings(tmp_path, [obj], config)[0]
    assert [f["rule"] for f in expected if f["severity"] == "error"] == ["priority-class-invalid"] * len(
        [f for f in expected if f["severity"] == "error"]
    ) and expected
    with Webhook(tmp_path, config) as hook:
        resp = hook.review(review_body(obj))
    assert resp["allowed"] is False
    assert "priority-class-invalid" in resp["status"]["message"]


TRAINER_CONTEXT = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-gpu}
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
                  resources: {limits: {nvidia.com/gpu: 8}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llama-ft, namespace: ml}
spec:
  runtimeRef: {name: shared-gpu}
---
apiVersion: v1
kind: LimitRange
metadata: {name: small, namespace: ml}
spec:
  limits:
  - type: Container
    max: {memory: 16Gi}
"""
TRAINER_OBJECTS = [
    {  # its runtime is in the context: a GPU pod without a memory limit
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "ft", "namespace": "ml"},
        "spec": {"runtimeRef": {"name": "torch-gpu"}, "trainer": {"numNodes": 2}},
    },
    {  # its pods' 64Gi limit is above the namespace's LimitRange in the context
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "big", "namespace": "ml"},
        "spec": {
            "runtimeRef": {"name": "torch-gpu"},
            "trainer": {"resourcesPerNode": {"limits": {"nvidia.com/gpu": 8, "memory": "64Gi"}}},
        },
    },
    {  # run by the context's TrainJob, which sets no priority either
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "shared-gpu"},
        "spec": yaml.safe_load(TRAINER_CONTEXT.split("---")[0])["spec"],
    },
]


def test_trainer_objects_reviewed_with_the_context_as_check_sees_them(stack, tmp_path):
    """A TrainJob or a training runtime under review (objects that are context themselves) is judged
    with the config's context still there: the runtime a TrainJob runs, the TrainJobs that run a
    runtime, the namespace's LimitRanges, as `check` judges the object's file with that context."""
    (tmp_path / "trainer.yaml").write_text(TRAINER_CONTEXT)
    config = write_config(tmp_path / "kubelint-ml.yaml", {**PROFILE_CONFIG, "context": ["trainer.yaml"]})
    expected = _check_findings(tmp_path, TRAINER_OBJECTS, config)
    # (its runtime is context, never reported on: the TrainJob carries the missing priority)
    assert [(f["rule"], f["severity"]) for f in expected[0]] == [
        ("missing-memory-limit", "error"),  # (the LimitRange's max is the pods' default limit)
        ("missing-memory-request", "warning"),
        ("missing-priority-class", "warning"),
    ]
    assert [(f["rule"], f["severity"]) for f in expected[1]] == [
        ("missing-priority-class", "warning"),
        ("limit-range-violation", "error"),
    ]
    assert [(f["rule"], f["severity"]) for f in expected[2]] == [("missing-priority-class", "warning")]
    with Webhook(tmp_path, config) as hook:
        for i, obj in enumerate(TRAINER_OBJECTS):
            _assert_as_check(hook.review(review_body(obj)), expected[i], i, obj)


JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "gpu", "namespace": "ml", "labels": {"team": "a"}},
    "spec": {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "train", "image": "t", "resources": {"limits": {"nvidia.com/gpu": "1"}}},
                    {"name": "log", "image": "l"},
                ],
            }
        }
    },
}


def test_modes_exclusions_dry_run_and_endpoints(stack, tmp_path):
    config = write_config(
        tmp_path / "kubelint-ml.yaml",
        {
            "admission": {
                "excludeNamespaces": ["sandbox"],
                "excludeLabels": {"kubelint-ml.io/skip": "*"},
                "maxWarnings": 2,
                "maxWarningLength": 60,
            },
        },
    )
    with Webhook(tmp_path, config) as hook:
        resp = hook.review(review_body(JOB))
        assert resp["allowed"] is False
        assert "besteffort-qos" in resp["status"]["message"] and "missing-memory-limit" in resp["status"]["message"]
        # bounded warnings: two at most, each at most 60 characters, the last counting the rest
        assert len(resp["warnings"]) == 2 and all(len(w) <= 60 for w in resp["warnings"])
        assert resp["warnings"][-1].startswith("kubelint-ml: and ")
        # dryRun: judged the same
        dry = hook.review(review_body(JOB, dry_run=True))
        assert dry["allowed"] is False and dry["status"] == resp["status"]
        # namespace and label exclusions
        assert hook.review(review_body(JOB, namespace="sandbox")) == {"uid": "u-1", "allowed": True}
        labelled = json.loads(json.dumps(JOB))
        labelled["metadata"]["labels"]["kubelint-ml.io/skip"] = "yes"
        assert hook.review(review_body(labelled))["allowed"] is True
        # DELETE carries no object
        assert hook.review(review_body({}, operation="DELETE"))["allowed"] is True
        assert hook.get("/healthz")[0] == 200 and hook.get("/readyz")[0] == 200
        assert hook.request("GET", "/validate")[0] == 405
        assert hook.get("/nope")[0] == 404
        metrics = hook.get("/metrics")[1].decode()
        assert 'kubelint_ml_admission_requests_total{result="excluded"} 3' in metrics
        assert 'kubelint_ml_admission_requests_total{result="denied"} 2' in metrics
        assert "# TYPE kubelint_ml_admission_review_duration_seconds histogram" in metrics
    logs = [r for r in hook.log_records() if r.get("uid") == "u-1"]
    assert logs and all({"time", "level", "msg", "operation", "kind", "allowed", "ms"} <= set(r) for r in logs)
    assert any(r["dryRun"] is True and r["allowed"] is False for r in logs)


def test_audit_mode_allows_logs_and_counts(stack, tmp_path):
    with Webhook(tmp_path, mode="audit") as hook:
        resp = hook.review(review_body(JOB))
        assert resp["allowed"] is True and "warnings" not in resp and "status" not in resp
        assert "besteffort-qos=error" in resp["auditAnnotations"]["findings"]
        assert hook.metric('kubelint_ml_admission_denials_total{mode="audit"}') == 1
        assert hook.metric('kubelint_ml_admission_requests_total{result="allowed"}') == 1
    assert any(r.get("msg") == "would deny (audit mode)" for r in hook.log_records())


def test_context_rules_say_what_the_profile_lacks(stack, tmp_path):
    obj = json.loads(json.dumps(JOB))
    obj["spec"]["template"]["spec"]["priorityClassName"] = "training-high"
    with Webhook(tmp_path) as hook:
        resp = hook.review(review_body(obj))
    assert "preemption-consumes-backoff skipped" in resp["auditAnnotations"]["skipped"]
    start = next(r for r in hook.log_records() if r.get("msg") == "serving")
    assert "profile.priorityClasses" in start["contextMissing"]["unknown-priority-class"]


def test_faults_malformed_oversized_slow_and_unknown_kind(stack, tmp_path):
    config = write_config(
        tmp_path / "kubelint-ml.yaml", {"admission": {"maxBodyBytes": 64 * 1024, "requestTimeoutSeconds": 2}}
    )
    with Webhook(tmp_path, config) as hook:
        for body, word in (
            (b"{not json", "not JSON"),
            (b"[]", "not a JSON object"),
            (
                json.dumps(
                    {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {"uid": "x"}}
                ).encode(),
                "apiVersion",
            ),
            (
                json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}}).encode(),
                "uid",
            ),
            (b"[" * 30000 + b"]" * 30000, "not JSON"),
        ):  # nesting past the parser's depth
            status, data = hook.request("POST", "/validate", body)
            assert status == 400 and word in json.loads(data)["error"], (status, data)
        # oversized: refused from Content-Length, and when streamed without one
        big = review_body({**JOB, "metadata": {**JOB["metadata"], "annotations": {"x": "y" * 70000}}})
        status, data = hook.request("POST", "/validate", big)
        assert status == 413 and "over 65536 bytes" in json.loads(data)["error"]
        conn = hook.connection()
        conn.putrequest("POST", "/validate")
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        for i in range(0, len(big), 16384):
            part = big[i : i + 16384]
            try:
                conn.send(b"%x\r\n%s\r\n" % (len(part), part))
            except OSError:
                break
        try:
            conn.send(b"0\r\n\r\n")
        except OSError:
            pass
        assert conn.getresponse().status == 413
        conn.close()
        # a slow client gets 408 after the time limit; others are answered meanwhile
        slow = socket.create_connection(("127.0.0.1", hook.port))
        tls = hook.context().wrap_socket(slow, server_hostname="127.0.0.1")
        body = review_body(JOB)
        tls.sendall(
            b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body[:100]
        )
        t0 = time.monotonic()
        assert hook.review(review_body(JOB))["allowed"] is False
        if time.monotonic() - t0 < 1.5:  # (on a very busy machine the slow client may have its answer already)
            tls.settimeout(0.2)
            with pytest.raises((TimeoutError, socket.timeout)):
                tls.recv(4096)
        tls.settimeout(15)
        answer = tls.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
        assert 1.9 < time.monotonic() - t0 < 15
        tls.close()
        # an unknown kind: judged as check judges it (a pod template found by its shape), and one without
        widget = {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "spec": {"runner": {"template": JOB["spec"]["template"]}},
        }
        resp = hook.review(review_body(widget))
        assert resp["allowed"] is False and "spec.runner.template.spec" in resp["status"]["message"]
        plain = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": 3}}
        # allowed (no rule judges it), and the audit annotation says it was skipped and why
        assert hook.review(review_body(plain)) == {
            "uid": "u-1",
            "allowed": True,
            "auditAnnotations": {
                "skipped": "example.com/Gadget skipped: kubelint-ml does not know how this kind makes its pods, "
                "and found nothing shaped like a pod template"
            },
        }
        assert hook.metric('kubelint_ml_admission_requests_total{result="invalid"}') == 5
        assert hook.metric('kubelint_ml_admission_requests_total{result="too_large"}') == 2
        assert hook.metric('kubelint_ml_admission_requests_total{result="timeout"}') == 1
        assert hook.get("/healthz")[0] == 200


def test_sigterm_answers_reviews_in_flight(stack, tmp_path):
    hook = Webhook(tmp_path)
    with hook:
        body = review_body(JOB)
        answers: list[bytes] = []
        sockets = []
        for _ in range(6):  # requests whose bodies are not all sent yet when SIGTERM comes
            tls = hook.context().wrap_socket(
                socket.create_connection(("127.0.0.1", hook.port)), server_hostname="127.0.0.1"
            )
            tls.sendall(
                b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body) + body[:50]
            )
            sockets.append(tls)
        assert _wait(lambda: hook.metric("kubelint_ml_admission_in_flight_reviews") == 6)
        hook.proc.send_signal(15)
        time.sleep(0.5)
        assert hook.proc.poll() is None  # still finishing

        def finish(tls):
            tls.sendall(body[50:])
            tls.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < int(
                data.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0]
            ):
                chunk = tls.recv(65536)
                if not chunk:
                    break
                data += chunk
            tls.close()  # as the API server does on "Connection: close"
            answers.append(data)

        threads = [threading.Thread(target=finish, args=(s,)) for s in sockets]
        for t in threads:
            t.start()
        for t in threads:
            t.join(15)
        code = hook.proc.wait(20)
    assert code == 0
    assert len(answers) == 6
    for data in answers:
        assert data.startswith(b"HTTP/1.1 200"), data[:100]
        assert b"connection: close" in data.lower().split(b"\r\n\r\n")[0]
        assert json.loads(data.split(b"\r\n\r\n", 1)[1])["response"]["allowed"] is False
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", hook.port), timeout=1).close()


def _wait(predicate, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_broken_config_keeps_the_last_good_one_and_reloads(stack, tmp_path):
    config = write_config(tmp_path / "kubelint-ml.yaml", {"disable": ["besteffort-qos"]})
    with Webhook(tmp_path, config) as hook:
        resp = hook.review(review_body(JOB))
        assert "besteffort-qos" not in resp["status"]["message"]
        # a broken config (invalid YAML, then an unknown rule id): the last good one stays
        config.write_text("disable: [besteffort-qos\n")
        assert _wait(lambda: hook.metric('kubelint_ml_admission_config_reloads_total{result="failure"}') == 1)
        assert "besteffort-qos" not in hook.review(review_body(JOB))["status"]["message"]
        write_config(config, {"disable": ["no-such-rule"]})
        assert _wait(lambda: hook.metric('kubelint_ml_admission_config_reloads_total{result="failure"}') == 2)
        assert "besteffort-qos" not in hook.review(review_body(JOB))["status"]["message"]
        assert hook.metric("kubelint_ml_admission_config_last_reload_successful") == 0
        assert hook.get("/readyz")[0] == 200
        # a good one is taken
        write_config(config, {"admission": {"mode": "audit"}})
        assert _wait(lambda: hook.metric('kubelint_ml_admission_config_reloads_total{result="success"}') == 1)
        assert hook.review(review_body(JOB))["allowed"] is True
    records = hook.log_records()
    rejected = [r for r in records if r.get("msg") == "config rejected; the last good config stays in force"]
    assert len(rejected) == 2 and "no-such-rule" in rejected[1]["error"]


def test_certificate_reloaded_on_change(stack, tmp_path):
    cert, key = make_cert(tmp_path, "first")
    with Webhook(tmp_path, cert=(cert, key)) as hook:
        import ssl

        def served() -> bytes:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            with ctx.wrap_socket(socket.create_connection(("127.0.0.1", hook.port), timeout=5)) as s:
                return s.getpeercert(binary_form=True)

        before = served()
        new_cert, new_key = make_cert(tmp_path, "second")
        key.write_bytes(new_key.read_bytes())
        cert.write_bytes(new_cert.read_bytes())
        assert _wait(lambda: served() != before)
        assert hook.metric('kubelint_ml_admission_certificate_reloads_total{result="success"}') >= 1
        hook.cert = new_cert  # clients trusting the new certificate are served
        assert hook.review(review_body(JOB))["allowed"] is False


# ----------------------------------------------------------------------------
# Rego and Gatekeeper policies, and observed usage, in the same config


POLICIES = ROOT / "fixtures" / "policies"

# Gatekeeper gives templates the admission request as input.review: who asks, and how.
REQUESTER_TEMPLATE = """\
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: k8snointerngpu
spec:
  crd:
    spec:
      names:
        kind: K8sNoInternGpu
  targets:
    - target: admission.k8s.gatekeeper.sh
      rego: |
        package k8snointerngpu
        violation[{"msg": msg}] {
          input.review.userInfo.username == "intern"
          input.review.operation == "CREATE"
          msg := sprintf("%v may not create GPU jobs", [input.review.userInfo.username])
        }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sNoInternGpu
metadata:
  name: no-intern-gpu
spec:
  match:
    kinds:
      - apiGroups: ["batch"]
        kinds: ["Job"]
"""


def _policy_config(tmp: Path) -> Path:
    rules = tmp / "policies"
    rules.mkdir()
    for sub in ("conftest", "gatekeeper"):
        for f in (POLICIES / sub).iterdir():
            if f.suffix in (".rego", ".yaml") and not f.name.endswith("_test.rego"):
                (rules / f.name).write_bytes(f.read_bytes())
    return write_config(tmp / "kubelint-ml.yaml", {**PROFILE_CONFIG, "rules": ["policies"]})


@pytest.mark.slow
def test_rego_and_gatekeeper_policies_judge_as_check(stack, tmp_path):
    objects = _objects([POLICIES / "manifests" / "train.yaml", *sorted((ROOT / "fixtures" / "qos").glob("*.yaml"))])
    config = _policy_config(tmp_path)
    expected = _check_findings(tmp_path, objects, config)
    rules = {f["rule"] for fs in expected.values() for f in fs}
    # check finds conftest rules and both constraints on these objects: the comparison means something
    assert {"main.deny", "gpu.deny_too_many_gpus", "K8sGpuJobDeadline/gpu-jobs-end", "K8sTeamLabel/known-team"} <= rules
    with Webhook(tmp_path, config) as hook:
        conn = hook.connection()
        for i, obj in enumerate(objects):
            _assert_as_check(hook.review(review_body(obj, uid=f"u{i}"), conn=conn), expected[i], i, obj)
        conn.close()
        assert hook.metric('kubelint_ml_admission_findings_total{rule="main.deny",severity="error"}') == sum(
            f["rule"] == "main.deny" for fs in expected.values() for f in fs
        )
    start = next(r for r in hook.log_records() if r.get("msg") == "serving")
    assert "notRun" not in start and start["rules"] > 30


def test_gatekeeper_templates_see_the_admission_request(stack, tmp_path):
    config = _policy_config(tmp_path)
    (tmp_path / "policies" / "requester.yaml").write_text(REQUESTER_TEMPLATE)
    job = json.loads(json.dumps(JOB))
    job["metadata"]["labels"] = {"team": "research", "cost-center": "42"}
    with Webhook(tmp_path, config) as hook:

        def ask(user: str, operation: str = "CREATE") -> dict:
            body = json.loads(review_body(job, operation=operation))
            body["request"]["userInfo"] = {"username": user, "groups": ["system:authenticated"]}
            return hook.review(json.dumps(body).encode())

        denied = ask("intern")
        assert denied["allowed"] is False
        assert "K8sNoInternGpu/no-intern-gpu: intern may not create GPU jobs" in denied["status"]["message"]
        assert "K8sNoInternGpu" not in ask("alice")["status"]["message"]
        assert "K8sNoInternGpu" not in ask("intern", operation="UPDATE")["status"]["message"]


def test_broken_policy_keeps_the_last_good_one(stack, tmp_path):
    config = _policy_config(tmp_path)
    job = json.loads(json.dumps(JOB))
    job["metadata"]["labels"] = {"team": "platform"}  # (team research has an exception for it)
    with Webhook(tmp_path, config) as hook:
        assert (
            "gpu.deny_cost_center: Job gpu has no cost-center label"
            in hook.review(review_body(job))["status"]["message"]
        )
        # A policy that does not compile, pushed while serving: rejected, the last good policies stay.
        (tmp_path / "policies" / "broken.rego").write_text("package broken\n\ndeny contains msg if {\n")
        assert _wait(lambda: hook.metric('kubelint_ml_admission_config_reloads_total{result="failure"}') >= 1)
        assert "gpu.deny_cost_center" in hook.review(review_body(job))["status"]["message"]
        # Fixed, and the cost-center rule removed: taken.
        (tmp_path / "policies" / "broken.rego").unlink()
        (tmp_path / "policies" / "gpu.rego").write_text(
            "package gpu\n\nimport rego.v1\n\ndeny_nothing contains 1 if false\n"
        )
        assert _wait(lambda: hook.metric('kubelint_ml_admission_config_reloads_total{result="success"}') >= 1)
        assert "gpu.deny_cost_center" not in hook.review(review_body(job))["status"]["message"]
        assert "main.deny" in hook.review(review_body(job))["status"]["message"]  # ml.rego still there
    rejected = [r for r in hook.log_records() if r.get("msg") == "config rejected; the last good config stays in force"]
    assert rejected and "broken.rego" in rejected[0]["error"]


def _snapshot(path: Path, peak: float) -> Path:
    stats = {"samples": 20000, "median": 2.0e9, "p90": 3.0e9, "p99": peak * 0.9, "max": peak}
    path.write_text(
        json.dumps(
            {
                "kind": "kubelint-ml/usage-snapshot",
                "version": 1,
                "cluster": None,
                "source": "test",
                "window": {"lookback": "14d", "step": "1m", "end": 1763856000},
                "workloads": [
                    {
                        "namespace": "ml",
                        "group": "batch",
                        "kind": "Job",
                        "name": "sized",
                        "template": "",
                        "pods": 3,
                        "containers": {"train": {"pods": 3, "memory": stats}},
                    }
                ],
                "missing": [],
            }
        )
    )
    return path


SIZED = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "sized", "namespace": "ml"},
    "spec": {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "priorityClassName": "training-high",
                "containers": [
                    {
                        "name": "train",
                        "image": "t",
                        "resources": {
                            "requests": {"cpu": "1", "memory": "4Gi"},
                            "limits": {"cpu": "1", "memory": "4Gi"},
                        },
                    }
                ],
            }
        }
    },
}


def test_usage_snapshot_rules_judge_as_check_and_reload(stack, tmp_path):
    snap = _snapshot(tmp_path / "usage.json", peak=9.0e9)
    config = write_config(tmp_path / "kubelint-ml.yaml", {**PROFILE_CONFIG, "usage": {"snapshot": "usage.json"}})
    expected = _check_findings(tmp_path, [SIZED], config)[0]
    assert "memory-limit-below-peak" in {f["rule"] for f in expected}
    with Webhook(tmp_path, config) as hook:
        resp = hook.review(review_body(SIZED))
        _assert_as_check(resp, expected, 0, SIZED)
        assert "memory-limit-below-peak" in str(resp)
        # A snapshot that does not read is rejected; the last good one stays.
        (tmp_path / "usage.bad").write_text('{"kind": "kubelint-ml/usage-snapshot"')
        (tmp_path / "usage.bad").replace(snap)
        assert _wait(lambda: hook.metric('kubelint_ml_admission_config_reloads_total{result="failure"}') >= 1)
        assert "memory-limit-below-peak" in str(hook.review(review_body(SIZED)))
        # A new snapshot (the job's peak fell) is read on change, like the config.
        _snapshot(tmp_path / "usage.new", peak=3.5e9)
        (tmp_path / "usage.new").replace(snap)
        assert _wait(lambda: hook.metric('kubelint_ml_admission_config_reloads_total{result="success"}') >= 1)
        assert "memory-limit-below-peak" not in str(hook.review(review_body(SIZED)))
    rejected = [r for r in hook.log_records() if r.get("msg") == "config rejected; the last good config stays in force"]
    assert rejected and f"usage.snapshot {snap}: not valid JSON" in rejected[0]["error"]


def test_usage_from_prometheus_is_said_not_run(stack, tmp_path):
    config = write_config(tmp_path / "kubelint-ml.yaml", {"usage": {"prometheus": "http://127.0.0.1:1"}})
    with Webhook(tmp_path, config) as hook:
        assert hook.review(review_body(SIZED))["allowed"] is True
    start = next(r for r in hook.log_records() if r.get("msg") == "serving")
    assert any("usage.snapshot" in n for n in start["notRun"])


# --- connection time limits (kubelint_ml/admission/connections.py): slow TLS handshakes and headers


def _tls(hook: Webhook, timeout: float = 10) -> socket.socket:
    sock = hook.context().wrap_socket(socket.create_connection(("127.0.0.1", hook.port)), server_hostname="127.0.0.1")
    sock.settimeout(timeout)
    return sock


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset counts as closed)."""
    data = b""
    while True:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def _still_open(sock: socket.socket) -> bool:
    """Not closed by the server yet (what it sent meanwhile is read and dropped)."""
    sock.setblocking(False)
    try:
        return sock.recv(4096) != b""
    except (BlockingIOError, ssl.SSLWantReadError):
        return True
    except OSError:
        return False
    finally:
        sock.settimeout(10)


@pytest.mark.slow  # waits out time limits
def test_slow_headers_and_handshakes_are_closed_in_time(stack, tmp_path):
    config = write_config(tmp_path / "kubelint-ml.yaml", {"admission": {"headerTimeoutSeconds": 1}})
    with Webhook(tmp_path, config) as hook:
        stalled = []  # (what, socket, when its time began)
        for what, data in (
            ("partial request line", b"POST /valid"),
            ("partial headers", b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: appl"),
            ("nothing after the TLS handshake", b""),
        ):
            t0 = time.monotonic()
            sock = _tls(hook)
            sock.sendall(data)
            stalled.append((what, sock, t0))
        raw_t0 = time.monotonic()
        raw = socket.create_connection(("127.0.0.1", hook.port), timeout=10)  # no ClientHello, ever

        # slowloris: a byte every 0.15 s, never idle long, never done
        trickled: dict[str, object] = {}

        def trickle() -> None:
            t0 = time.monotonic()
            sock = _tls(hook)
            request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 200
            try:
                for i in range(len(request)):
                    sock.sendall(request[i : i + 1])
                    time.sleep(0.15)
                    if not _still_open(sock):
                        break
            except OSError:
                pass
            trickled["seconds"] = time.monotonic() - t0
            sock.close()

        trickler = threading.Thread(target=trickle)
        trickler.start()

        # another client is served meanwhile
        t_review = time.monotonic()
        assert hook.review(review_body(JOB))["allowed"] is False
        if time.monotonic() - stalled[0][2] < 0.8:  # (a very busy machine may be past the limit already)
            assert all(_still_open(sock) for _, sock, _ in stalled)
        assert time.monotonic() - t_review < 5

        for what, sock, t0 in stalled:
            answer = _read_until_closed(sock)
            seconds = time.monotonic() - t0
            assert 0.9 < seconds < 4, (what, seconds)
            if what.startswith("partial"):  # a partial request is told why
                assert answer.startswith(b"HTTP/1.1 408 "), (what, answer[:100])
                assert b"connection: close" in answer and b"within 1 s" in answer
            else:
                assert answer == b"", (what, answer[:100])
        # the server lets go of the TCP connection too, though the client never answers its TLS close_notify
        what, sock, t0 = stalled[0]
        plain = socket.socket(fileno=os.dup(sock.fileno()))
        plain.settimeout(10)
        assert _read_until_closed(plain) == b""
        assert time.monotonic() - t0 < 6  # the limit, then one second's grace
        plain.close()
        for _, sock, _ in stalled:
            sock.close()

        assert _read_until_closed(raw) == b""
        assert 0.9 < time.monotonic() - raw_t0 < 4
        raw.close()

        trickler.join(30)
        assert 0.9 < trickled["seconds"] < 4  # type: ignore[operator]

        assert hook.metric('kubelint_ml_admission_connection_timeouts_total{phase="headers"}') == 4
        assert hook.metric('kubelint_ml_admission_connection_timeouts_total{phase="tls_handshake"}') == 1
        assert hook.metric('kubelint_ml_admission_requests_total{result="denied"}') == 1
    warned = [
        r for r in hook.log_records() if r.get("msg") == "request headers not received in time; connection closed"
    ]
    assert len(warned) == 4 and all(r["level"] == "warning" and r["timeoutSeconds"] == 1 for r in warned)
    assert {0, 11, 52} <= {r["receivedBytes"] for r in warned}  # the stalled ones; the trickler's vary


@pytest.mark.slow  # waits out time limits
def test_keep_alive_clients_with_pauses_are_not_cut(stack, tmp_path):
    config = write_config(tmp_path / "kubelint-ml.yaml", {"admission": {"headerTimeoutSeconds": 1}})
    with Webhook(tmp_path, config) as hook:
        conn = hook.connection()
        local = None
        # pauses shorter than the limit, and one longer: idle keep-alive time is not header time
        for i, pause in enumerate((0.3, 0.6, 1.6, 0.2, 0)):
            assert hook.review(review_body(JOB, uid=f"k{i}"), conn=conn)["allowed"] is False
            assert conn.sock is not None
            local = local or conn.sock.getsockname()
            assert conn.sock.getsockname() == local  # the same connection throughout
            time.sleep(pause)
        conn.close()
        assert hook.metric('kubelint_ml_admission_requests_total{result="denied"}') == 5
        assert "connection_timeouts_total{" not in hook.get("/metrics")[1].decode()


@pytest.mark.slow  # waits out time limits
def test_unread_body_after_an_early_answer_and_reloaded_limit(stack, tmp_path):
    config = write_config(
        tmp_path / "kubelint-ml.yaml", {"admission": {"headerTimeoutSeconds": 1, "requestTimeoutSeconds": 1}}
    )
    with Webhook(tmp_path, config) as hook:
        # the body stalls: 408 after requestTimeoutSeconds; trickling the rest then does not keep the connection
        sock = _tls(hook)
        sock.sendall(
            b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"
        )
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]
        t0 = time.monotonic()
        closed = None
        for _ in range(40):
            try:
                sock.sendall(b" ")
            except OSError:
                closed = time.monotonic() - t0
                break
            if not _still_open(sock):
                closed = time.monotonic() - t0
                break
            time.sleep(0.1)
        sock.close()
        assert closed is not None and 0.8 < closed < 4, closed
        assert hook.metric('kubelint_ml_admission_connection_timeouts_total{phase="unread_body"}') == 1
        assert hook.metric('kubelint_ml_admission_requests_total{result="timeout"}') == 1

        # a reloaded limit applies to the connections accepted after it
        write_config(config, {"admission": {"headerTimeoutSeconds": 2.5}})
        assert _wait(lambda: hook.metric('kubelint_ml_admission_config_reloads_total{result="success"}') == 1)
        t0 = time.monotonic()
        idle = _tls(hook)
        assert _read_until_closed(idle) == b""
        assert 2.3 < time.monotonic() - t0 < 6
        idle.close()


def test_sigterm_does_not_wait_for_idle_or_stalled_connections(stack, tmp_path):
    # Neither client answers the server's TLS close_notify; the limit (10 s) is not what ends them.
    config = write_config(tmp_path / "kubelint-ml.yaml", {"admission": {"headerTimeoutSeconds": 10}})
    hook = Webhook(tmp_path, config)
    with hook:
        idle = _tls(hook)
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert idle.recv(4096).startswith(b"HTTP/1.1 200 ")  # then kept alive, and never read again
        stalled = _tls(hook)
        stalled.sendall(b"POST /validate HTTP/1.1\r\nHo")
        assert _wait(lambda: hook.get("/healthz")[0] == 200)
        t0 = time.monotonic()
        assert hook.stop() == 0
        assert time.monotonic() - t0 < 6  # about one second's grace; 25 s and more before
        idle.close()
        stalled.close()


@pytest.mark.parametrize("value", [0, -1, 61, "5", None])
def test_header_timeout_setting_is_validated(tmp_path, value):
    from kubelint_ml.admission.review import PolicyError, load_policy

    config = write_config(tmp_path / "kubelint-ml.yaml", {"admission": {"headerTimeoutSeconds": value}})
    with pytest.raises(PolicyError, match="headerTimeoutSeconds"):
        load_policy(str(config))


def test_header_timeout_setting_default_and_value(tmp_path):
    need_server_stack()
    from kubelint_ml.admission.app import Holder
    from kubelint_ml.admission.connections import HEADER_TIMEOUT_SECONDS, header_timeout
    from kubelint_ml.admission.review import load_policy

    assert header_timeout(Holder(load_policy(None))) == HEADER_TIMEOUT_SECONDS == 5
    config = write_config(tmp_path / "kubelint-ml.yaml", {"admission": {"headerTimeoutSeconds": 0.5}})
    assert header_timeout(Holder(load_policy(str(config)))) == 0.5
