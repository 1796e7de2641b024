"""``kubelint-ml serve`` against objects shaped to cost it: nested past what it decodes or recurses
into, and costly reviews that must not stop the server answering others. Each is answered with a
verdict (a deny or a judged answer), never refused in a way ``failurePolicy: Ignore`` admits."""

from __future__ import annotations

import json
import threading
import time

import pytest
from webhook import Webhook, need_server_stack, review_body, write_config

from kubelint_ml.admission.review import load_policy, positioned, review

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml"},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "x",
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1"}},
            }
        ]
    },
}
TOO_DEEP = "parse-error: nesting deeper than 200 levels (limits.maxDepth); document not linted"


@pytest.fixture(scope="module")
def stack() -> None:
    need_server_stack()


def _nested_body(levels: int, uid: str = "u-1") -> bytes:
    """A review of POD whose affinity holds ``levels`` nested objects (written as text: json.dumps
    recurses)."""
    obj = json.loads(json.dumps(POD))
    obj["spec"]["affinity"] = "NESTED"
    return review_body(obj, uid=uid).replace(b'"NESTED"', b'{"a":' * levels + b"1" + b"}" * levels)


def _nested(levels: int) -> dict:
    inner: dict = {"x": 1}
    for _ in range(levels - 1):
        inner = {"a": inner}
    return inner


def test_an_object_nested_past_max_depth_is_a_parse_error_as_in_check(tmp_path):
    """As `check` reads a file so nested: one parse-error at the first level past limits.maxDepth,
    nothing else judged (the review recursed into it, and failed on Python 3.13, where the JSON
    decoder goes deeper than the interpreter's recursion limit: a 500 that failurePolicy: Ignore
    admits)."""
    obj = json.loads(json.dumps(POD))
    obj["spec"]["affinity"] = _nested(199)  # the object (level 1), spec, then 199 levels: 201
    policy = load_policy(None)
    v = review(policy, {"uid": "u", "operation": "CREATE", "namespace": "ml", "object": obj})
    assert v.allowed is False
    assert [(f.rule, f.severity, f.path) for f in v.findings] == [
        ("parse-error", "error", "spec.affinity" + ".a" * 198)
    ]
    assert v.response["status"]["message"] == f"kubelint-ml: 1 error finding: {TOO_DEEP} (at {v.findings[0].path})"
    obj["spec"]["affinity"] = _nested(198)  # 200 levels: judged
    v = review(policy, {"uid": "u", "operation": "CREATE", "namespace": "ml", "object": obj})
    assert v.allowed is True and "parse-error" not in {f.rule for f in v.findings}
    # the limit is the config's, as for files
    config = write_config(tmp_path / "c.yaml", {"limits": {"maxDepth": 400}})
    obj["spec"]["affinity"] = _nested(300)
    v = review(load_policy(str(config)), {"uid": "u", "operation": "CREATE", "namespace": "ml", "object": obj})
    assert "parse-error" not in {f.rule for f in v.findings}


def test_positioned_names_the_path_to_the_first_level_past_the_limit():
    from kubelint_ml.admission.review import NestedTooDeep

    with pytest.raises(NestedTooDeep) as e:
        positioned({"a": [{"b": {"c": [1]}}], "z": {}}, max_depth=4)
    assert list(reversed(e.value.path)) == ["a", 0, "b", "c"]
    tree = positioned({"a": [{"b": {"c": 1}}]}, max_depth=4)
    assert tree["a"][0]["b"]["c"] == 1


def test_reviews_nested_past_the_decoder_are_denied_not_refused(stack, tmp_path):
    """The API server decodes 10,000 levels of JSON; Python's decoder fewer (about 1,000 on 3.11 and
    3.12). Such a review was refused with 400, which failurePolicy: Ignore turns into an admission;
    it is denied as the parse-error `check` gives a file nested past limits.maxDepth. A body that is
    not a review stays a 400."""
    with Webhook(tmp_path) as hook:
        for levels in (300, 5000, 20000):
            answer = hook.review(_nested_body(levels, uid=f"u-{levels}"))
            assert answer["uid"] == f"u-{levels}" and answer["allowed"] is False, levels
            assert answer["status"]["message"].startswith(f"kubelint-ml: 1 error finding: {TOO_DEEP}"), levels
        status, data = hook.request("POST", "/validate", b"[" * 20000 + b"]" * 20000)
        assert status == 400 and b"nested deeper" in data
        assert hook.metric('kubelint_ml_admission_requests_total{result="denied"}') == 3
    assert hook.proc is not None and hook.proc.returncode == 0


def _services(count: int) -> dict:
    """A DynamoGraphDeployment of ``count`` GPU worker services (about 75 bytes each): each service is
    a pod template every rule judges."""
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "graph", "namespace": "ml"},
        "spec": {
            "services": {
                f"s{i}": {"componentType": "worker", "resources": {"limits": {"gpu": "1"}}} for i in range(count)
            }
        },
    }


def test_a_costly_review_does_not_hold_the_others(stack, tmp_path):
    """A 250 KiB object whose review takes a second or more (3,300 services) is judged in a worker
    thread: while it runs, the server answers its metrics and judges a small object (it was judged on
    the event loop, which nothing else could use meanwhile: no time limit answered, and a stream of
    such objects kept every review waiting past the API server's timeout)."""
    big = review_body(_services(3300), uid="big")
    assert 200_000 < len(big) < 256 * 1024
    small = review_body(POD, uid="small")
    done: dict = {}
    with Webhook(tmp_path) as hook:

        def send_big() -> None:
            done["big"] = hook.review(big, conn=hook.connection(timeout=60))
            done["at"] = time.monotonic()

        sender = threading.Thread(target=send_big, daemon=True)
        sender.start()
        deadline = time.monotonic() + 30
        while hook.metric("kubelint_ml_admission_in_flight_reviews") < 1:
            assert time.monotonic() < deadline and "big" not in done, "the big review was never seen in flight"
            time.sleep(0.01)
        answer = hook.review(small)
        answered = time.monotonic()
        assert answer["uid"] == "small" and answer["allowed"] is True
        sender.join(60)
        assert done["at"] > answered  # the small one was judged while the big one was
        assert done["big"]["uid"] == "big" and done["big"]["allowed"] is False
        message = done["big"]["status"]["message"]
        # judged, or (on a machine too loaded to judge it within the time limit) denied for that
        assert message.startswith("kubelint-ml: 6600 error findings: besteffort-qos: ") or message.startswith(
            "kubelint-ml: review took longer than 5 s; not judged; denied"
        ), message


def _ask(webhook, body: bytes) -> tuple[int, dict]:
    import asyncio

    sent: list = []

    async def receive() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "path": "/validate", "method": "POST", "headers": [(b"content-length", b"%d" % len(body))]}
    asyncio.run(webhook(scope, receive, send))
    return sent[0]["status"], json.loads(sent[1]["body"])


def test_a_review_that_fails_is_answered_as_one_not_judged(tmp_path, monkeypatch):
    """A review that raises (a bug the object found) is answered as onTimeout says for an object not
    judged: denied in enforce mode, allowed with a warning with onTimeout: allow. It was a 500, which
    failurePolicy: Ignore admits."""
    from kubelint_ml.admission import app
    from kubelint_ml.admission.metrics import Metrics

    def broken(policy, request):
        raise KeyError("containers")

    monkeypatch.setattr(app, "review", broken)
    webhook = app.WebhookApp(app.Holder(load_policy(None)), Metrics())
    status, answer = _ask(webhook, review_body(POD, uid="u-9"))
    assert status == 200
    assert answer["response"] == {
        "uid": "u-9",
        "allowed": False,
        "status": {
            "code": 403,
            "message": "kubelint-ml: review failed (KeyError); not judged; denied (admission.onTimeout: deny): "
            "the webhook's log has the error",
        },
    }
    assert webhook.metrics.counters["requests_total"][(("result", "error"),)] == 1
    lenient = write_config(tmp_path / "c.yaml", {"admission": {"onTimeout": "allow"}})
    webhook = app.WebhookApp(app.Holder(load_policy(str(lenient))), Metrics())
    status, answer = _ask(webhook, review_body(POD, uid="u-10"))
    assert (status, answer["response"]["allowed"]) == (200, True)
    assert answer["response"]["warnings"] == ["kubelint-ml: review failed (KeyError); not judged"]
