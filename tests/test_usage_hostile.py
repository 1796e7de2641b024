"""What a Prometheus answers is untrusted input: wrong shapes, injected text, a huge answer, odd
values, against a real HTTP server on 127.0.0.1 (tests/fakeprom.py) that says what no healthy
Prometheus would; and the same for the usage snapshot file.

Each run is a real ``kubelint-ml`` process, so that a traceback, a raw escape or a line that a CI
log would read as a workflow command is seen as a user would see it.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import fakeprom
from tests.fakeprom import Answer, good, healthy, ok, raw

pytestmark = pytest.mark.slow  # hardening: a kubelint-ml process per hostile answer: the full suite runs them

END = 1_763_856_000
POD = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: pytorch/pytorch
          resources:
            requests:
              memory: 4Gi
            limits:
              memory: 4Gi
"""
LIMIT_LINE = 17  # limits.memory


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "train.yaml").write_text(POD)
    (tmp_path / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n  retries: 0\n  timeout: 5\n")
    return tmp_path


def run(project: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBELINT_ML_")}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "kubelint_ml", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def clean(stderr: str) -> None:
    """Nothing the tool did not mean: no traceback, no escape sequence, no workflow command."""
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert "\x1b" not in stderr and "\u202e" not in stderr and "\u200b" not in stderr, stderr
    assert not [line for line in stderr.splitlines() if line.lstrip().startswith("::")], stderr


def check(project: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    return run(project, "check", "k8s", "--prometheus", url, "-f", "json", *extra)


def usage_findings(out: str) -> list[tuple[str, int]]:
    return sorted((f["rule"], f["line"]) for f in json.loads(out)["findings"] if f["rule"].startswith("memory-"))


def test_a_healthy_fake_sizes_the_workload(project: Path) -> None:
    """The baseline the other tests break: the fake's statistics size the Job."""
    with fakeprom.Server(healthy({("train-abcde", "main"): good(peak=9e9)})) as s:
        r = check(project, s.url)
    assert r.returncode == 1, r.stderr
    assert ("memory-limit-below-peak", LIMIT_LINE) in usage_findings(r.stdout)


def _range(result: object) -> dict:
    return {"resultType": "matrix", "result": result}


MALFORMED = {
    "not json": (Answer(b"<html>proxy login</html>"), "the answer is not JSON"),
    "a list": (Answer(b"[1, 2]"), "the answer is a list, not an object"),
    "data a string": (raw({"status": "success", "data": "x"}), "data is a string, not an object"),
    "no status": (raw({"data": _range([])}), "status is None, not success"),
    "resultType scalar": (ok({"resultType": "scalar", "result": [1, "2"]}), "resultType is scalar, not matrix"),
    "result an object": (ok(_range({"a": 1})), "data.result is an object, not a list"),
    "item a number": (ok(_range([42])), "data.result[0] is a number, not an object"),
    "metric null": (ok(_range([{"metric": None, "values": []}])), "data.result[0].metric is null"),
    "metric a list": (ok(_range([{"metric": [], "values": []}])), "data.result[0].metric is a list"),
    "label a number": (
        ok(_range([{"metric": {"pod": 7}, "values": []}])),
        "data.result[0].metric label pod is a number, not a string",
    ),
    "deep json": (Answer(b"[" * 200_000 + b"]" * 200_000), "the answer is not JSON"),
    "gzip unasked": (
        Answer(b"\x1f\x8b\x08\x00", headers={"Content-Encoding": "gzip"}),
        "the answer is gzip-encoded, which was not asked for",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_is_refused_with_where_it_is_wrong(project: Path, case: str) -> None:
    answer, message = MALFORMED[case]

    def override(path: str, form: dict) -> Answer | None:
        return answer if path == "/api/v1/query_range" else None

    with fakeprom.Server(healthy({}, override)) as s:
        r = check(project, s.url)
    assert r.returncode == 2, r.stderr
    clean(r.stderr)
    assert message in r.stderr, r.stderr
    assert r.stderr.startswith("kubelint-ml: error: ") and r.stderr.count("\n") == 1


def _item(pod: str, stat: str, values: object) -> dict:
    return {"metric": {"namespace": "ml", "pod": pod, "container": "main", "kubelint_ml_stat": stat}, "values": values}


BAD_SERIES = {
    "values a string": ("values", "values is a string, not a list of [time, value] pairs"),
    "a pair of three": ([[1, "1", "2"]], "a sample is a list, not a [time, value] pair"),
    "a sample null": ([None], "a sample is null, not a [time, value] pair"),
    "value a list": ("value-list", "sample value is a list, not a number"),
    "value not a number": ("value-text", "sample value 'lots' is not a number"),
    "NaN": ("NaN", "sample value is nan"),
    "+Inf": ("+Inf", "sample value is inf"),
    "-Inf": ("-Inf", "sample value is -inf"),
    "negative": ("-5", "sample value -5 is negative"),
}


@pytest.mark.parametrize("case", sorted(BAD_SERIES))
def test_a_series_that_cannot_be_sized_is_named_and_the_others_are_used(project: Path, case: str) -> None:
    """Two replicas of the Job: the bad one is left out (named under -v and in the report), the good
    one sizes the container, so the finding is still there."""
    bad, message = BAD_SERIES[case]

    def override(path: str, form: dict) -> Answer | None:
        if path != "/api/v1/query_range" or "working_set" not in form["query"][0]:
            return None
        start = float(form["start"][0])
        items = fakeprom.stats_items({("train-abcde", "main"): good(peak=9e9)}, start)
        t = [start, start + 0.001, start + 0.002]
        if isinstance(bad, str) and bad in ("values", "value-list", "value-text"):
            values: object = {
                "values": "zzz",
                "value-list": [[x, [1]] for x in t],
                "value-text": [[x, "lots"] for x in t],
            }[bad]
        elif isinstance(bad, str):
            values = [[x, bad] for x in t]
        else:
            values = bad
        items += [_item("train-fghij", "max", values), _item("train-fghij", "count", [[x, "100"] for x in t])]
        items += [_item("train-fghij", "quantile", [[t[0], "1"], [t[1], "2"], [t[2], "3"]])]
        return ok(_range(items))

    with fakeprom.Server(healthy({}, override)) as s:
        r = check(project, s.url, "-v")
        report = run(project, "usage", "report", "k8s", "--prometheus", s.url, "-f", "json")
        text = run(project, "usage", "report", "k8s", "--prometheus", s.url)
    assert r.returncode == 1, r.stderr
    clean(r.stderr)
    assert ("memory-limit-below-peak", LIMIT_LINE) in usage_findings(r.stdout)
    assert "series left out: container_memory_working_set_bytes of pod train-fghij container main" in r.stderr
    assert message in r.stderr
    (row,) = json.loads(report.stdout)["rows"]
    assert row["judged"] and row["usage"]["memory"]["max"] == 9e9
    assert any("train-fghij" in why and message in why for why in row["excluded"])
    assert "Series left out (not sized from):" in text.stdout and "train-fghij" in text.stdout
    assert "1 of 1 containers sized" in text.stdout


def test_nothing_left_to_size_from_is_exit_2_naming_the_series(project: Path) -> None:
    memory = {("train-abcde", "main"): {**good(), "max": "NaN"}, ("train-fghij", "main"): {**good(), "p99": "-1"}}
    with fakeprom.Server(healthy(memory)) as s:
        r = check(project, s.url)
    assert r.returncode == 2
    clean(r.stderr)
    assert "no usable container_memory_working_set_bytes series in namespace ml (2 left out:" in r.stderr
    assert "nothing left to size from" in r.stderr


HOSTILE = (
    "boom\n::error file=x::pwned\x1b[31mred\x1b]8;;http://evil\x07link\x1b]8;;\x07\u202eevil\u200b\r\n::warning::x"
)


def test_an_error_text_from_the_server_is_escaped(project: Path) -> None:
    for status in (400, 422, 503):
        with fakeprom.Server(lambda path, form, st=status: raw({"status": "error", "error": HOSTILE}, st)) as s:
            r = check(project, s.url)
        assert r.returncode == 2
        clean(r.stderr)
        assert "boom\\n::error file=x::pwned" in r.stderr and "\\u202eevil\\u200b" in r.stderr
    with fakeprom.Server(lambda path, form: raw({"status": "error", "error": "x" * 100_000})) as s:
        r = check(project, s.url)
    assert r.returncode == 2 and "... (100000 characters)" in r.stderr and len(r.stderr) < 2000


def test_hostile_pod_and_container_names_are_escaped_everywhere(project: Path) -> None:
    """A label a server sends reaches -v notes, the report's table and its Markdown: escaped in each."""
    pod = "train-fghij::error::x\x1b[2J\u202e"

    def override(path: str, form: dict) -> Answer | None:
        if path != "/api/v1/query_range" or "working_set" not in form["query"][0]:
            return None
        start = float(form["start"][0])
        items = fakeprom.stats_items({("train-abcde", "main"): good(peak=9e9)}, start)
        items += [_item(pod, "max", [[start, "NaN"]])]
        return ok(_range(items))

    (project / "k8s" / "train.yaml").write_text(POD.replace("name: main", "name: main\n          # x"))
    with fakeprom.Server(healthy({}, override)) as s:
        verbose = check(project, s.url, "-v")
        text = run(project, "usage", "report", "k8s", "--prometheus", s.url, "-v")
        md = run(project, "usage", "report", "k8s", "--prometheus", s.url, "-f", "markdown")
    for r in (verbose, text, md):
        clean(r.stderr)
        assert "\x1b" not in r.stdout and "\u202e" not in r.stdout
        assert not [line for line in r.stdout.splitlines() if line.lstrip().startswith("::")]
    # The pod name is not one of the Job's (the mapping reads names as Kubernetes makes them): not
    # named; a name that does map is escaped where it is named.
    assert verbose.returncode == 1


def test_an_answer_over_the_size_limit_is_refused_without_reading_the_rest(project: Path) -> None:
    """An endless matrix, chunked: refused at the limit (64 MiB by default), in well under a minute
    and a GiB; the server could send no more than the limit and the socket buffers."""
    chunk = b'{"metric":{"pod":"train-abcde","container":"main"},"values":[[1,"1"]]},' * 2000

    def endless(path: str, form: dict) -> Answer | None:
        return Answer(fakeprom.endless(chunk)) if path == "/api/v1/query_range" else None

    with fakeprom.Server(healthy({}, endless)) as s:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.monotonic()
        r = check(project, s.url)
        took = time.monotonic() - started
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        sent = s.sent
    assert r.returncode == 2
    clean(r.stderr)
    assert "over the limit of 67108864 bytes (usage.maxResponseBytes); the rest was not read" in r.stderr
    assert took < 60
    assert sent < 64 * 2**20 + 32 * 2**20
    if peak_kib > before:  # this run raised the children's peak: it is this run's
        assert peak_kib < 1024 * 1024, f"peak {peak_kib} KiB"


def test_an_announced_size_over_the_limit_is_refused_before_reading(project: Path) -> None:
    chunk = b" " * 65536

    def huge(path: str, form: dict) -> Answer | None:
        return Answer(fakeprom.endless(chunk), length=3 * 2**30) if path == "/api/v1/query_range" else None

    with fakeprom.Server(healthy({}, huge)) as s:
        r = check(project, s.url)
        sent = s.sent
    assert r.returncode == 2
    assert "the answer is 3221225472 bytes, over the limit of 67108864 bytes" in r.stderr
    assert sent < 32 * 2**20


def test_the_size_limit_is_a_setting(project: Path) -> None:
    (project / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n  retries: 0\n  maxResponseBytes: 1Mi\n")
    chunk = b" " * 4096
    with fakeprom.Server(healthy({}, lambda p, f: Answer(fakeprom.endless(chunk), length=None))) as s:
        r = check(project, s.url)
    assert r.returncode == 2 and "over the limit of 1048576 bytes" in r.stderr
    (project / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n  maxResponseBytes: 12\n")
    r = run(project, "check", "k8s", "--prometheus", "http://127.0.0.1:9")
    assert r.returncode == 2 and "usage.maxResponseBytes: 12 must be between 1Ki and 16Gi" in r.stderr
    (project / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n  maxResponseBytes: lots\n")
    r = run(project, "check", "k8s", "--prometheus", "http://127.0.0.1:9")
    assert r.returncode == 2 and "is not a size" in r.stderr


def test_an_answer_that_trickles_in_meets_the_time_limit(project: Path) -> None:
    """Each read returns before the socket's timeout, but the whole answer is bounded too."""
    (project / ".kubelint-ml.yaml").write_text(f"usage:\n  end: {END}\n  retries: 0\n  timeout: 1\n")

    def trickle(path: str, form: dict) -> Answer | None:
        return Answer(fakeprom.endless(b" ", delay=0.05), length=None) if path == "/api/v1/query_range" else None

    with fakeprom.Server(healthy({}, trickle)) as s:
        started = time.monotonic()
        r = check(project, s.url)
        took = time.monotonic() - started
    assert r.returncode == 2 and "the answer took over 1s to arrive" in r.stderr
    assert took < 15


def test_series_endpoint_shapes(project: Path) -> None:
    for data, message in (("x", "data is a string, not a list of label sets"), ([3], "data[0] is a number")):
        override = (lambda d: lambda p, f: ok(d) if p == "/api/v1/series" else None)(data)
        with fakeprom.Server(healthy({("train-abcde", "main"): good()}, override)) as s:
            r = check(project, s.url)
        assert r.returncode == 2 and message in r.stderr, r.stderr
        clean(r.stderr)


# ----------------------------------------------------------------------------
# The usage snapshot file


def _snapshot(name: str = "main", workload: str = "train") -> dict:
    return {
        "kind": "kubelint-ml/usage-snapshot",
        "version": 2,
        "cluster": None,
        "source": "test",
        "window": {"lookback": "14d", "step": "5m", "end": END},
        "workloads": [
            {
                "namespace": "ml",
                "group": "batch",
                "kind": "Job",
                "name": workload,
                "template": "",
                "pods": 1,
                "containers": {
                    name: {
                        "pods": 1,
                        "memory": {"samples": 20000, "median": 6e9, "p90": 7e9, "p99": 8e9, "max": 9e9},
                    }
                },
            }
        ],
        "missing": [],
    }


SNAPSHOTS = {
    "deep": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "huge": (None, "over 33554432 bytes; not a usage snapshot"),
    "workloads a number": (json.dumps({**_snapshot(), "workloads": 3}).encode(), "workloads: must be a list"),
    "a workload a string": (json.dumps({**_snapshot(), "workloads": ["x"]}).encode(), "must be an object"),
    "samples a string": (
        json.dumps(_snapshot()).replace('"samples": 20000', '"samples": "many"').encode(),
        "samples: must be a integer, found str",
    ),
    "NaN": (json.dumps(_snapshot()).replace("9000000000.0", "NaN").encode(), "NaN is not a number a snapshot may hold"),
    "a huge integer": (
        json.dumps(_snapshot()).replace('"pods": 1,', '"pods": ' + "9" * 5000 + ",", 1).encode(),
        "not valid JSON",
    ),
    "hostile field": (
        json.dumps({**_snapshot(), "x\n::error::pwned\x1b[31m": 1}).encode(),
        "unknown field",
    ),
}


@pytest.mark.parametrize("case", sorted(SNAPSHOTS))
def test_a_bad_snapshot_is_refused_clearly(project: Path, case: str) -> None:
    data, message = SNAPSHOTS[case]
    path = project / "snap.json"
    if data is None:
        with open(path, "wb") as fh:
            fh.write(b'{"kind": "kubelint-ml/usage-snapshot", "pad": "')
            fh.truncate(33 * 2**20)
    else:
        path.write_bytes(data)
    r = run(project, "check", "k8s", "--usage", "snap.json")
    assert r.returncode == 2, r.stderr
    clean(r.stderr)
    assert message in r.stderr, r.stderr
    assert len(r.stderr) < 1000


def test_hostile_names_in_a_snapshot_are_escaped_in_every_report(project: Path) -> None:
    name = "main::error::x\x1b[31m\u202e"
    (project / "k8s" / "train.yaml").write_text(POD.replace("- name: main", f"- name: {json.dumps(name)}"))
    (project / "snap.json").write_text(json.dumps(_snapshot(name=name)))
    for fmt in ("text", "markdown", "json"):
        r = run(project, "usage", "report", "k8s", "--usage", "snap.json", "-f", fmt, "-v")
        assert r.returncode == 0, r.stderr
        clean(r.stderr)
        assert "\x1b" not in r.stdout and "\u202e" not in r.stdout, (fmt, r.stdout)
        assert not [line for line in r.stdout.splitlines() if line.lstrip().startswith("::")]
        if fmt == "json":
            (row,) = json.loads(r.stdout)["rows"]
            assert row["container"] == name and row["judged"]
    r = run(project, "check", "k8s", "--usage", "snap.json", "-f", "github")
    assert r.returncode == 1
    assert "\x1b" not in r.stdout and "\u202e" not in r.stdout
