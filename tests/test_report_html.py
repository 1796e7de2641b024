"""``--format html``: one self-contained page of findings (and of sizing with a usage source).

Read back with the standard library's HTML parser: every finding of the JSON report is on the
page with its rule, position and message; the totals, GPU counts and namespaces are the
ones the findings give; nothing outside the file is referenced; untrusted text is escaped;
fixes are shown as diffs; ``usage report --format html`` has a chart per container.
The same pages in a real browser: tests/test_report_html_browser.py.
"""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "fixtures/examples/pytorchjob-gpu.yaml"


def run(args: list[str], env: dict | None = None):
    return CliRunner(env={"GITHUB_ACTIONS": None, **(env or {})}).invoke(main, args, catch_exceptions=False)


class Page(HTMLParser):
    """The findings (``div.f``: attributes and text), every URL-bearing attribute, the tags and the
    texts of a report."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.findings: list[dict] = []
        self.urls: list[tuple[str, str, str]] = []
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self._stack: list[tuple[str, dict | None]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    VOID = {"meta", "input", "br", "hr", "img", "link", "path", "rect", "line"}

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        for name in ("href", "src", "action", "srcset", "xlink:href", "data", "poster"):
            if name in a:
                self.urls.append((tag, name, a[name] or ""))
        current = None
        if tag == "div" and "f" in (a.get("class") or "").split():
            current = {"attrs": a, "text": []}
            self.findings.append(current)
        elif self._stack and self._stack[-1][1] is not None:
            current = self._stack[-1][1]
        if tag not in self.VOID:
            self._stack.append((tag, current))

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID and self._stack:
            self._stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._stack and self._stack[-1][1] is not None:
            self._stack[-1][1]["text"].append(data)

    def finding_text(self, i: int) -> str:
        return "".join(self.findings[i]["text"])


def check_self_contained(text: str, allowed_prefix: str | None = None) -> Page:
    """Nothing outside the file: no external script, style, image, font or frame, and the page's
    policy forbids fetching anything; the only links out are to the files, under the base URL
    given (``--html-base-url``)."""
    page = Page(text)
    for tag, attr, url in page.urls:
        ok = url.startswith("#") or (
            allowed_prefix is not None and tag == "a" and attr == "href" and url.startswith(allowed_prefix)
        )
        assert ok, (tag, attr, url)
    assert not {"link", "iframe", "img", "object", "embed", "base", "audio", "video"} & set(page.tags)
    assert "@import" not in text and "url(" not in text
    assert "default-src 'none'" in text
    return page


def test_every_finding_with_its_position_rule_and_message(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(ROOT)
    r = run(
        ["check", EXAMPLE, "-f", "json", "-o", str(tmp_path / "r.json"), "-f", "html", "-o", str(tmp_path / "r.html")]
    )
    assert r.exit_code == 1, r.output
    doc = json.loads((tmp_path / "r.json").read_text())
    text = (tmp_path / "r.html").read_text()
    page = check_self_contained(text)
    assert len(page.findings) == len(doc["findings"]) == 8
    for i, (f, shown) in enumerate(zip(doc["findings"], page.findings)):
        attrs = shown["attrs"]
        assert (attrs["data-s"], attrs["data-r"], attrs["data-n"]) == (f["severity"], f["rule"], "research")
        body = page.finding_text(i)
        assert f"{f['line']}:{f['column']}" in body and f["rule"] in body and f["message"] in body
        if "detail" in f:
            assert f["detail"] in body
        assert "data-g" in attrs  # a PyTorchJob asking for GPUs
    # the rule's help once, each rule of the findings
    for rule in {f["rule"] for f in doc["findings"]}:
        assert f"rule-{rule}" in page.ids
    all_text = "".join(page.text)
    assert "inputs" in all_text and EXAMPLE in all_text and "kubelint-ml 0.1.0" in all_text


def _card(text: str, label: str) -> str:
    m = re.search(re.escape(label) + r"</span>[^<]*<b>(\d+)</b>", text)
    assert m, label
    return m.group(1)


def test_totals_gpus_at_risk_and_namespaces(monkeypatch, tmp_path) -> None:
    """The example's PyTorchJob asks for 8 GPUs (Master x1) + 2 x 3 (Worker) and has an error: 14 at risk.
    A Job without GPUs and without a namespace is counted under its directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "gpu.yaml").write_text((ROOT / EXAMPLE).read_text())
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "cpu.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: etl\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n        - name: main\n          image: busybox\n"
    )
    r = run(["check", "team", "other", "-f", "html"])
    assert r.exit_code == 1
    text = r.output
    assert _card(text, "GPUs at risk") == "14"
    assert re.search(r"GPU workloads</span> with findings<b>1</b>1 with errors", text)
    page = Page(text)
    spaces = {f["attrs"]["data-n"] for f in page.findings}
    assert spaces == {"research", "dir:other"}
    assert "(no namespace) other/" in "".join(page.text)
    # the namespace table: research has 1 GPU workload and its 14 GPUs at risk; other/ none
    assert re.search(
        r'data-ns="research">research</a></td>(<td class="n">\d*</td>){3}'
        r'<td class="n">1</td><td class="n">1</td><td class="n">14</td>',
        text,
    )
    assert all(("data-g" in f["attrs"]) == (f["attrs"]["data-n"] == "research") for f in page.findings)


def test_untrusted_text_is_escaped(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    evil = '<script>alert(1)</script>"onmouseover="x'
    (tmp_path / "evil.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n"
        f"  name: '{evil}'\n  namespace: \"ns\\u202e<img src=x>\"\n"
        "spec:\n  containers:\n    - name: '<b>c</b>'\n      image: busybox\n"
    )
    r = run(["check", "evil.yaml", "-f", "html"])
    text = r.output
    page = check_self_contained(text)
    assert "<script>alert" not in text and "<b>c</b>" not in text and "<img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;onmouseover=&quot;x" in text
    assert "\u202e" not in text and "\\u202e" in text  # a bidi override made visible
    assert page.tags.count("script") == 1  # only the page's own


def test_links_to_files_with_a_base_url(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(ROOT)
    base = "https://github.com/example/ml/blob/0123abc"
    r = run(["check", EXAMPLE, "-f", "html", "--html-base-url", base])
    page = check_self_contained(r.output, base)
    links = [u for _, _, u in page.urls if u.startswith(base)]
    assert f"{base}/{EXAMPLE}#L42" in links and len(links) == 8
    bad = run(["check", EXAMPLE, "-f", "html", "--html-base-url", "javascript:alert(1)//"])
    assert bad.exit_code == 2 and "not an http or https URL" in bad.output
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_SHA": "f00d",
    }
    r = run(["check", EXAMPLE, "-f", "html"], env=env)
    assert f'href="https://github.com/o/r/blob/f00d/{EXAMPLE}#L17"' in r.output


def test_fix_is_shown_as_a_diff(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shm.yaml").write_text((ROOT / "fixtures" / "fix" / "emptydir.yaml").read_text())
    r = run(["check", "shm.yaml", "-f", "json"])
    fixes = [f for f in json.loads(r.output)["findings"] if f.get("fix", {}).get("edits")]
    assert fixes
    text = run(["check", "shm.yaml", "-f", "html"]).output
    page = Page(text)
    first = fixes[0]
    i = next(
        k
        for k, f in enumerate(page.findings)
        if f["attrs"]["data-r"] == first["rule"] and f"{first['line']}:{first['column']}" in page.finding_text(k)
    )
    body = page.finding_text(i)
    added = [line for e in first["fix"]["edits"] for line in e["text"].splitlines() if line.strip()]
    assert "@@ line" in body and all(f"+{line}" in body for line in added)
    assert text.count('class="diff"') == len(fixes)


def test_html_beside_other_formats_and_sarif_unchanged(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(ROOT)
    alone = run(["check", EXAMPLE, "-f", "sarif"]).output
    r = run(
        ["check", EXAMPLE, "-f", "sarif", "-o", str(tmp_path / "a.sarif"), "-f", "html", "-o", str(tmp_path / "a.html")]
    )
    assert r.exit_code == 1
    assert (tmp_path / "a.sarif").read_text() == alone
    assert (tmp_path / "a.html").read_text().startswith("<!DOCTYPE html>")


def test_the_time_is_stated_and_reproducible(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    a = run(["check", EXAMPLE, "-f", "html"]).output
    b = run(["check", EXAMPLE, "-f", "html"]).output
    assert a == b and "2026-09-21 14:13:20 UTC" in a


def test_no_findings(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    r = run(["check", "cm.yaml", "-f", "html"])
    assert r.exit_code == 0 and "No findings." in r.output
    check_self_contained(r.output)


# ----------------------------------------------------------------------------
# Sizing


GIB = 2**30


def _pod(name: str, gib: tuple[int, int, int, int], **more: dict) -> dict:
    """A snapshot's workload: a Pod in ml whose container main's working set had this median, p90,
    p99 and peak (GiB) over 4,000 samples."""
    memory = dict(zip(("median", "p90", "p99", "max"), (g * GIB for g in gib)), samples=4000)
    return {
        "namespace": "ml",
        "group": "",
        "kind": "Pod",
        "name": name,
        "template": "",
        "pods": 1,
        "containers": {"main": {"pods": 1, "memory": memory, **more}},
    }


SNAPSHOT = {
    "kind": "kubelint-ml/usage-snapshot",
    "version": 2,
    "cluster": None,
    "source": "http://prometheus.example:9090",
    "window": {"lookback": "14d", "step": "5m", "end": 1790000000},
    "workloads": [
        _pod(
            "idle",
            (2, 3, 4, 5),
            cpu={"samples": 4000, "median": 0.5, "p90": 1.0, "p99": 1.5, "max": 2.0},
            gpuMemory={"samples": 4000, "devices": 1, "peak": 9000 * 2**20, "deviceMemory": 81920 * 2**20},
        ),
        _pod("tight", (6, 7, 9, 12)),
    ],
    "missing": [],
}

PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: idle, namespace: ml}
spec:
  containers:
    - name: main
      image: busybox
      resources:
        requests: {memory: 64Gi, cpu: "1"}
        limits: {memory: 64Gi, nvidia.com/gpu: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: tight, namespace: ml}
spec:
  containers:
    - name: main
      image: busybox
      resources:
        requests: {memory: 6Gi}
        limits: {memory: 8Gi}
"""


@pytest.fixture
def sized(tmp_path: Path) -> Path:
    (tmp_path / "pods.yaml").write_text(PODS)
    (tmp_path / "snap.json").write_text(json.dumps(SNAPSHOT))
    return tmp_path


def test_usage_report_html_has_a_chart_per_container_most_at_risk_first(monkeypatch, sized) -> None:
    monkeypatch.chdir(sized)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")  # the two pages below are written alike
    r = run(["usage", "report", "pods.yaml", "--usage", "snap.json", "--format", "html"])
    assert r.exit_code == 0, r.output
    text = r.output
    written = run(["usage", "report", "pods.yaml", "--usage", "snap.json", "-f", "html", "-o", "sizing.html"])
    assert written.exit_code == 0 and written.output == ""
    assert (sized / "sizing.html").read_text() == text  # -o writes the same page
    page = check_self_contained(text)
    articles = re.findall(r'<article class="sz" id="sz\d+" data-workload="([^"]+)" data-container="([^"]+)"', text)
    assert articles == [("Pod/ml/tight", "main"), ("Pod/ml/idle", "main")]  # over its limit first
    assert page.tags.count("svg") == 1 + 3  # tight: memory; idle: memory, cpu, GPU memory
    words = " ".join(" ".join(page.text).split())
    assert "peak over the limit by 4Gi" in words  # 12Gi peak, 8Gi limit
    assert "20,832.0 GiB-hours requested and unused per pod" in words  # (64Gi - 2Gi) x 336 hours
    assert "memory: 2Gi" in text and "memory: 6Gi" in text  # recommended requests (YAML)
    assert "memory: 15Gi" in text  # tight: 12Gi x 1.2 = 14.4Gi, rounded up to a whole GiB
    assert "14d" in words and "http://prometheus.example:9090" in words and "2026-09-21 14:13:20 UTC" in words
    assert "peak share 11%" in words
    assert re.search(
        r'<table class="by-namespace">.*<td>ml</td><td class="n">2</td><td class="n">2</td>'
        r'<td class="n">1</td><td class="n">20,832.0</td>',
        text,
    )
    for label in ("median", "p90", "p99", "peak", "request (R)", "limit (L)", "recommended request (R′)"):
        assert label in words
    assert "request change −62Gi" in words  # idle: 2Gi recommended against 64Gi today
    assert "memory of main: median 2Gi; p90 3Gi; p99 4Gi; peak 5Gi; request 64Gi; limit 64Gi" in text  # aria-label


def test_check_html_with_usage_has_the_sizing_section(monkeypatch, sized) -> None:
    monkeypatch.chdir(sized)
    r = run(["check", "pods.yaml", "--usage", "snap.json", "-f", "html"])
    assert r.exit_code == 1
    assert 'id="sizing"' in r.output and r.output.count("<svg") == 4
    page = Page(r.output)
    rules = {f["attrs"]["data-r"] for f in page.findings}
    assert {"memory-limit-below-peak", "memory-request-above-usage", "gpu-memory-underused"} <= rules


def test_html_is_imported_only_when_asked_for(tmp_path: Path) -> None:
    from tests.test_imports import EXAMPLE as EXAMPLES
    from tests.test_imports import heavy, imported

    assert "kubelint_ml.report.html" not in imported(tmp_path, "check", EXAMPLES, "-f", "text")
    found = imported(tmp_path, "check", EXAMPLES, "-f", "html")
    assert "kubelint_ml.report.html" in found
    # the fixes' edits are resolved for their diffs; no usage, policy or server module
    assert heavy(found, ("kubelint_ml.fix.apply", "kubelint_ml.fix.yamltext")) == []


def test_hostile_file_names(monkeypatch, tmp_path) -> None:
    """A file name with markup, an escape sequence and a byte that is not UTF-8: written escaped,
    the page still valid UTF-8."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k8s").mkdir()
    name = os.fsdecode(b"<i>x\xff\x1b[2J.yaml")
    (tmp_path / "k8s" / name).write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - {name: c, image: busybox}\n"
    )
    out = tmp_path / "r.html"
    r = run(["check", "k8s", "-f", "html", "-o", str(out)])
    assert r.exit_code == 0, r.output  # warnings only
    text = out.read_bytes().decode("utf-8")  # valid UTF-8
    check_self_contained(text)
    assert "<i>" not in text and "\x1b" not in text
    assert "&lt;i&gt;x\ufffd.yaml" in text  # the escape sequence removed, as in the text output


def test_usage_findings_link_to_their_chart(monkeypatch, sized) -> None:
    monkeypatch.chdir(sized)
    text = run(["check", "pods.yaml", "--usage", "snap.json", "-f", "html"]).output
    page = Page(text)
    for f in page.findings:
        if f["attrs"]["data-r"] == "memory-limit-below-peak":
            assert "sizing chart" in "".join(f["text"])
    assert re.search(r'data-r="memory-limit-below-peak".*?<a href="#sz0">sizing chart</a>', text)  # tight: first
    assert re.search(r'data-r="memory-request-above-usage".*?<a href="#sz1">sizing chart</a>', text)


def test_gpu_count_shared_with_forked_workers_is_the_same(monkeypatch, tmp_path) -> None:
    from kubelint_ml.run import gpus

    files = []
    for i in range(6):
        path = tmp_path / f"job{i}.yaml"
        path.write_text((ROOT / EXAMPLE).read_text().replace("llama-finetune", f"llama-{i}"))
        files.append(str(path))
    (tmp_path / "cpu.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n")
    files.append(str(tmp_path / "cpu.yaml"))
    alone = gpus.gpu_workloads(files)
    assert alone == {(f, "PyTorchJob", "research", f"llama-{i}"): 14 for i, f in enumerate(files[:6])}
    monkeypatch.setattr(gpus, "PARALLEL_MIN_FILES", 1)
    assert gpus.gpu_workloads(files, jobs=2) == alone


def test_a_container_not_judged_says_why_and_comes_last(monkeypatch, sized) -> None:
    monkeypatch.chdir(sized)
    (sized / "pods.yaml").write_text(
        PODS + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: ghost, namespace: ml}\n"
        "spec:\n  containers:\n    - {name: main, image: busybox}\n"
    )
    text = run(["usage", "report", "pods.yaml", "--usage", "snap.json", "-f", "html"]).output
    order = re.findall(r'data-workload="([^"]+)"', text)
    assert order == ["Pod/ml/tight", "Pod/ml/idle", "Pod/ml/ghost"]
    ghost = text[text.index('data-workload="Pod/ml/ghost"') :]
    assert "<span>not in the snapshot; not judged</span>" in ghost and "<svg" not in ghost.split("</article>")[0]


def test_sizing_page_escapes_what_the_snapshot_says(monkeypatch, sized) -> None:
    monkeypatch.chdir(sized)
    hostile = dict(SNAPSHOT, source="<script>alert(1)</script>", cluster="c\u202e<img src=x>")
    (sized / "snap.json").write_text(json.dumps(hostile))
    (sized / ".kubelint-ml.yaml").write_text('usage:\n  cluster: "c\\u202e<img src=x>"\n')
    r = run(["usage", "report", "pods.yaml", "--usage", "snap.json", "-f", "html"])
    assert r.exit_code == 0, r.output
    page = check_self_contained(r.output)
    assert page.tags.count("script") == 0 and "<img" not in r.output and "\u202e" not in r.output
    assert "exported from &lt;script&gt;alert(1)&lt;/script&gt;" in r.output


def test_audit_writes_the_html_page_too(tmp_path) -> None:
    """``audit`` takes check's formats: its page says what was audited, and holds every finding."""
    from tests.test_audit import cluster_items, kubectl_list

    (tmp_path / "cluster.json").write_text(kubectl_list(cluster_items()))
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = run(["audit", "cluster.json", "-f", "json", "-o", "a.json", "-f", "html", "-o", "a.html"])
    finally:
        os.chdir(here)
    assert r.exit_code == 1, r.output
    findings = json.loads((tmp_path / "a.json").read_text())["findings"]
    text = (tmp_path / "a.html").read_text()
    page = check_self_contained(text)
    assert [(f["attrs"]["data-r"], f["attrs"]["data-s"]) for f in page.findings] == [
        (f["rule"], f["severity"]) for f in findings
    ]
    assert "<dt>command</dt><dd>audit</dd><dt>inputs</dt><dd>cluster.json</dd>" in text
