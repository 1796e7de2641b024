"""The HTML reports in a real browser: Debian's ``chromium``, headless, over the DevTools protocol
(tests/browser.py). The page after its script has run holds every finding; the filters show what
they should; no console error; nothing is requested but the file itself; the screenshot is not
blank. Skipped, with the reason, without chromium (``.ci/run`` installs it).

With ``KUBELINT_ML_SCREENSHOTS=DIR`` the screenshots are kept in DIR (docs/img is made so).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubelint_ml.cli import main
from kubelint_ml.report.html import namespace_key
from tests import browser as chromium

pytestmark = pytest.mark.skipif(chromium.missing() is not None, reason=chromium.missing() or "")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def browser():
    b = chromium.Browser(timeout=90, width=1100, height=760)
    yield b
    b.close()


def run(cwd: Path, *args: str) -> None:
    here = os.getcwd()
    os.chdir(cwd)
    try:
        r = CliRunner(env={"GITHUB_ACTIONS": None, "SOURCE_DATE_EPOCH": "1790000000"}).invoke(
            main, list(args), catch_exceptions=False
        )
    finally:
        os.chdir(here)
    assert r.exit_code in (0, 1), r.output


def keep(png: bytes, name: str) -> None:
    where = os.environ.get("KUBELINT_ML_SCREENSHOTS")
    if where:
        os.makedirs(where, exist_ok=True)
        Path(where, name).write_bytes(png)


def not_blank(png: bytes) -> None:
    width, height = chromium.png_size(png)
    assert width >= 600 and height >= 400
    assert chromium.png_distinct_colours(png) >= 8  # text, badges, borders: not one flat colour


SET_FILTER = """
(function(changes){
  var form=document.getElementById("filters");
  Object.keys(changes).forEach(function(k){
    if(k==="sev"){form.querySelectorAll("input[name=sev]").forEach(function(c){c.checked=changes.sev.indexOf(c.value)>=0;});}
    else if(k==="gpu"){form.elements.gpu.checked=changes.gpu;}
    else{form.elements[k].value=changes[k];}
  });
  form.dispatchEvent(new Event("change"));
  var shown=Array.prototype.filter.call(document.querySelectorAll("#findings .f"),function(r){return !r.hidden;});
  return {shown:shown.map(function(r){return r.id;}), label:document.getElementById("shown").textContent};
})(%s)
"""


def test_corpus_report_in_chromium(browser, corpus, tmp_path) -> None:
    report_in_chromium(browser, os.path.relpath(corpus, ROOT), tmp_path, screenshots=True)  # as a user writes it


@pytest.mark.slow
def test_corpus_x10_report_in_chromium(browser, corpus, tmp_path) -> None:
    """The corpus ten times (14,000 findings): every finding in the page, the filters right, loaded
    well within a minute."""
    tree = tmp_path / "x10"
    for i in range(10):
        shutil.copytree(corpus, tree / f"copy{i:03d}")
    page = report_in_chromium(browser, str(tree), tmp_path)
    assert page.load_seconds < 60


def report_in_chromium(browser, target: str, tmp_path: Path, screenshots: bool = False):
    run(
        ROOT,
        "check",
        target,
        "-f",
        "json",
        "-o",
        str(tmp_path / "r.json"),
        "-f",
        "html",
        "-o",
        str(tmp_path / "r.html"),
    )
    findings = json.loads((tmp_path / "r.json").read_text())["findings"]
    assert len(findings) > 1000
    page = browser.open((tmp_path / "r.html").as_uri())
    assert page.requests() == [(tmp_path / "r.html").as_uri()]  # nothing but the file itself
    assert page.problems() == []
    assert page.eval("document.documentElement.classList.contains('js') && !document.getElementById('filters').hidden")

    # Every finding is in the page after the script, in order, with its rule, position and message.
    rows = page.eval(
        "Array.prototype.map.call(document.querySelectorAll('#findings .f'),function(r){"
        "return [r.id,r.getAttribute('data-r'),r.getAttribute('data-s'),r.querySelector('.m').textContent,"
        "r.querySelector('.h .mono').textContent];})"
    )
    assert len(rows) == len(findings)
    for i, (row, f) in enumerate(zip(rows, findings)):
        assert row[0] == f"f{i}" and row[1] == f["rule"] and row[2] == f["severity"], (row, f)
        assert row[4] == f"{f['line']}:{f['column']}"
        if f["message"].isascii() and f["message"].isprintable():
            assert row[3] == f["message"]

    # The counts by rule are the findings'.
    table = page.eval(
        "Array.prototype.map.call(document.querySelectorAll('#rules tbody tr'),function(t){"
        "return Array.prototype.map.call(t.cells,function(c){return c.textContent;});})"
    )
    by_rule = Counter((f["rule"], f["severity"]) for f in findings)
    assert {r[0] for r in table} == {f["rule"] for f in findings}
    for rule, _title, err, warn, info, _files in table:
        for sev, shown in (("error", err), ("warning", warn), ("info", info)):
            assert int(shown or 0) == by_rule[(rule, sev)], (rule, sev)

    # Filters: severity, rule, namespace, GPU, text, and back to everything.
    def ids(pred) -> list[str]:
        return [f"f{i}" for i, f in enumerate(findings) if pred(f)]

    got = page.eval(SET_FILTER % json.dumps({"sev": ["error"]}))
    assert got["shown"] == ids(lambda f: f["severity"] == "error")
    assert got["label"] == f"{len(got['shown'])} of {len(findings)} shown"
    got = page.eval(SET_FILTER % json.dumps({"sev": ["error", "warning", "info"], "rule": "besteffort-qos"}))
    assert got["shown"] == ids(lambda f: f["rule"] == "besteffort-qos")
    ns = Counter(_ns(f) for f in findings).most_common(1)[0][0]
    got = page.eval(SET_FILTER % json.dumps({"rule": "", "ns": ns}))
    assert got["shown"] == ids(lambda f: _ns(f) == ns) and got["shown"]
    got = page.eval(SET_FILTER % json.dumps({"ns": "", "gpu": True}))
    gpu_ids = got["shown"]
    assert 0 < len(gpu_ids) < len(findings)
    assert all("GPU" in page.eval(f"document.getElementById('{i}').textContent") for i in gpu_ids[:20])
    name = _unique_file(findings)
    got = page.eval(SET_FILTER % json.dumps({"gpu": False, "q": name.upper()}))
    assert got["shown"] == ids(lambda f: os.path.basename(f["file"]) == name)
    hidden_files = page.eval("document.querySelectorAll('#findings .file[hidden]').length")
    files = {f["file"] for f in findings}
    assert hidden_files == len(files) - sum(1 for f in files if os.path.basename(f) == name)  # left empty
    got = page.eval(SET_FILTER % json.dumps({"q": ""}))
    assert len(got["shown"]) == len(findings)
    assert page.problems() == []

    page.eval("window.scrollTo(0,0)")
    png = page.screenshot()
    not_blank(png)
    if screenshots:
        keep(png, "html-report-corpus.png")
        page.eval("document.getElementById('findings').scrollIntoView()")
        keep(page.screenshot(), "html-report-corpus-findings.png")
    return page


def _ns(f: dict) -> str:
    from kubelint_ml.findings import Finding, ObjectRef

    obj = ObjectRef(**f["object"]) if f["object"] else None
    return namespace_key(Finding(f["rule"], f["severity"], "", "", f["file"], 0, 0, object=obj))


def _unique_file(findings: list[dict]) -> str:
    """The base name of a file with several findings that no other text of the findings contains."""
    names = Counter(os.path.basename(f["file"]) for f in findings)
    for name, n in names.most_common():
        if n < 3 or len(name) < 8:
            continue
        needle = name.lower()
        if all(
            os.path.basename(f["file"]) == name
            or needle not in " ".join(str(v) for v in (f["file"], f["message"], f.get("detail"), f["object"])).lower()
            for f in findings
        ):
            return name
    raise AssertionError("no file name to search for")


def test_sizing_report_in_chromium(browser, tmp_path) -> None:
    """``usage report --format html`` of the fixture snapshot, and ``check`` with it: a chart per
    container, numbers beside it, no console error, nothing fetched."""
    work = tmp_path / "w"
    shutil.copytree(ROOT / "fixtures" / "fix-usage", work)
    out = tmp_path / "sizing.html"
    here = os.getcwd()
    os.chdir(work)
    try:
        r = CliRunner(env={"SOURCE_DATE_EPOCH": "1790000000"}).invoke(
            main, ["usage", "report", "pod.yaml", "--usage", "snapshot.json", "-f", "html"], catch_exceptions=False
        )
    finally:
        os.chdir(here)
    assert r.exit_code == 0, r.output
    out.write_text(r.output)
    page = browser.open(out.as_uri())
    assert page.requests() == [out.as_uri()] and page.problems() == []
    charts = page.eval(
        "Array.prototype.map.call(document.querySelectorAll('.sz'),function(a){return [a.getAttribute('data-workload'),"
        "a.getAttribute('data-container'),a.querySelectorAll('svg').length,"
        "a.querySelector('svg').getBoundingClientRect().width];})"
    )
    assert [c[:3] for c in charts] == [["Pod/ml/trainer", "main", 1]]  # memory only: the snapshot has no cpu
    assert charts[0][3] > 200  # drawn, not collapsed
    text = page.eval("document.body.innerText")
    assert "5.6Gi" in text and "8.4Gi" in text and "memory: 6Gi" in text and "memory: 11Gi" in text
    png = page.screenshot()
    not_blank(png)
    keep(png, "html-sizing-fixture.png")

    run(work, "check", "pod.yaml", "--usage", "snapshot.json", "-f", "html", "-o", str(tmp_path / "check.html"))
    page = browser.open((tmp_path / "check.html").as_uri())
    assert page.problems() == [] and page.eval("document.querySelectorAll('#sizing svg').length") == 1
    assert page.eval("document.querySelectorAll('#findings .f').length") >= 1


def test_check_with_usage_in_chromium(browser, tmp_path) -> None:
    """``check --usage`` on two pods (one over its limit at the peak, one asking for ten times its
    median and a GPU it barely uses): the sizing section draws memory, cpu and GPU memory."""
    from tests.test_report_html import PODS, SNAPSHOT

    (tmp_path / "pods.yaml").write_text(PODS)
    (tmp_path / "snap.json").write_text(json.dumps(SNAPSHOT))
    run(tmp_path, "check", "pods.yaml", "--usage", "snap.json", "-f", "html", "-o", "report.html")
    page = browser.open((tmp_path / "report.html").as_uri())
    assert page.problems() == [] and page.requests() == [(tmp_path / "report.html").as_uri()]
    charts = page.eval(
        "Array.prototype.map.call(document.querySelectorAll('#sizing .sz'),function(a){"
        "return [a.getAttribute('data-workload'),Array.prototype.map.call(a.querySelectorAll('h4'),"
        "function(h){return h.textContent;})];})"
    )
    assert charts == [
        ["Pod/ml/tight", ["memory (working set)"]],
        ["Pod/ml/idle", ["memory (working set)", "cpu (cores)", "GPU memory (peak per device)"]],
    ]
    page.eval("document.getElementById('sizing').scrollIntoView()")
    png = page.screenshot()
    not_blank(png)
    keep(png, "html-sizing-check.png")


def test_readable_without_javascript(browser, tmp_path) -> None:
    run(ROOT, "check", "fixtures/examples/pytorchjob-gpu.yaml", "-f", "html", "-o", str(tmp_path / "r.html"))
    page = browser.open((tmp_path / "r.html").as_uri(), scripts=False)
    assert page.eval("document.documentElement.classList.contains('js')") is False  # the script did not run
    shown = page.eval(
        "Array.prototype.filter.call(document.querySelectorAll('#findings .f'),function(r){"
        "return r.offsetParent!==null;}).length"
    )
    assert shown == 8
    assert page.eval("getComputedStyle(document.querySelector('.nojs')).display") != "none"
    assert page.eval("document.getElementById('filters').offsetParent") is None  # no filters that do nothing
    not_blank(page.screenshot())


def test_filters_are_kept_in_the_address(browser, tmp_path) -> None:
    example = "fixtures/examples/pytorchjob-gpu.yaml"
    run(
        ROOT,
        "check",
        example,
        "-f",
        "html",
        "-o",
        str(tmp_path / "r.html"),
        "-f",
        "json",
        "-o",
        str(tmp_path / "r.json"),
    )
    findings = json.loads((tmp_path / "r.json").read_text())["findings"]
    url = (tmp_path / "r.html").as_uri()
    page = browser.open(url)
    got = page.eval(SET_FILTER % json.dumps({"sev": ["error", "warning"], "rule": "missing-priority-class"}))
    assert got["shown"] == [f"f{i}" for i, f in enumerate(findings) if f["rule"] == "missing-priority-class"]
    assert page.eval("location.hash") == "#filter?hide=info&rule=missing-priority-class"
    page.eval(SET_FILTER % json.dumps({"sev": ["error", "warning", "info"], "rule": ""}))
    assert page.eval("location.hash") == ""
    linked = browser.open(url + "#filter?hide=warning%2Cinfo&q=64GB")  # the errors that say 64GB
    shown = linked.eval(
        "Array.prototype.filter.call(document.querySelectorAll('#findings .f'),function(r){return !r.hidden;}).length"
    )
    assert shown == 1 and linked.eval("document.getElementById('shown').textContent") == "1 of 8 shown"
    assert linked.eval("document.querySelector('#filters input[name=q]').value") == "64GB"
    broken = browser.open(url + "#filter?q=%E0%A4%A&rule=<x>")  # malformed: ignored, no error
    assert broken.problems() == [] and page.problems() == [] and linked.problems() == []
