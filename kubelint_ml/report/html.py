"""HTML output (``--format html``): one self-contained page for people triaging a run.

At the top, what was checked (inputs, tool version, time) and the totals: by
severity, GPU workloads with findings and the GPUs they request, by rule, by
namespace (by directory for manifests that name none) and by workload. Then
every finding, grouped by file, with its position (a link to the file where a
base URL is given), rule, object, message, detail and the fix as a diff where
one exists; then each rule's help once. Without JavaScript the page is all
there; with it, filters by severity, rule, namespace, GPU and text narrow the
findings in place. With observed usage (``check --usage``/``--prometheus``)
the sizing charts of :mod:`kubelint_ml.usage.html` follow the totals.

``context`` (all optional) is what the command knows beyond the result:
``inputs`` (the paths or the cluster), ``base_url`` (links to files:
``BASE/<path relative to the run's root>#L<line>``), ``command``, ``gpu_workloads``
(:func:`kubelint_ml.run.gpus.gpu_workloads`: without it GPUs are not counted) and
``sizing`` (a :class:`kubelint_ml.usage.html.Sizing`). The report imports nothing of the
stages above it: what they know comes in through ``context``.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from typing import Any, TextIO

from kubelint_ml.findings import SEVERITIES, Finding, RunResult
from kubelint_ml.report.escape import relative_posix, uri_path
from kubelint_ml.report.page import esc, generated_at, head, safe_url, tail

MARK = {"error": "\u2716", "warning": "\u25b2", "info": "\u2139"}  # a shape beside each colour


def sev(severity: str) -> str:
    return f'<span class="sev {esc(severity)}">{MARK.get(severity, "")} {esc(severity)}</span>'


def namespace_key(f: Finding) -> str:
    """The namespace of the finding's object; for one without, ``dir:<directory of the file>``."""
    if f.object is not None and f.object.namespace:
        return f.object.namespace
    return "dir:" + (os.path.dirname(f.file) or ".")


def namespace_label(key: str) -> str:
    return f"(no namespace) {key[4:]}/" if key.startswith("dir:") else key


def workload_label(f: Finding) -> str:
    obj = f.object
    if obj is None:
        return ""
    return (
        f"{obj.qualified_kind() or 'object'} "
        + (f"{obj.namespace}/" if obj.namespace else "")
        + (obj.name or "<unnamed>")
    )


def _workload_key(f: Finding) -> tuple:
    obj = f.object
    return (f.file, obj.kind, obj.namespace, obj.name) if obj is not None else (f.file, "", "", "")


# ----------------------------------------------------------------------------
# Links and fixes


def _linker(result: RunResult, base_url: str | None) -> Any:
    base = safe_url(base_url)
    if base is None:
        return None
    base = base.rstrip("/") + "/"
    cache: dict[str, str | None] = {}

    def link(file: str, line: int) -> str | None:
        if file not in cache:
            rel, inside = relative_posix(file, result.root)
            cache[file] = base + uri_path(rel) if inside and file not in ("-", "<stdin>") else None
        url = cache[file]
        return None if url is None else (f"{url}#L{line}" if line >= 1 else url)

    return link


class _Files:
    """The bytes of the file being reported on (findings come file by file), for the fixes' diffs."""

    def __init__(self) -> None:
        self.name: str | None = None
        self.data: bytes | None = None

    def get(self, file: str) -> bytes | None:
        if file != self.name:
            self.name, self.data = file, None
            if file not in ("-", "<stdin>"):
                try:
                    with open(file, "rb") as fh:
                        self.data = fh.read()
                except OSError:
                    pass
        return self.data


def fix_diff(f: Finding, files: _Files) -> str | None:
    """The fix of ``f`` as a few lines of unified diff (its edits with two lines around), or None."""
    fix = f.fix
    if fix is None or not fix.resolved or fix.unfixable or not fix.edits:
        return None
    edits = sorted(fix.edits, key=lambda e: (e.start, e.end))
    data = files.get(f.file)
    end = max(e.end for e in edits)
    if data is None or end > len(data) or edits[0].start < 0:
        return "".join(f"+{line}\n" for e in edits for line in e.text.splitlines())
    lo = data.rfind(b"\n", 0, edits[0].start) + 1
    hi = data.find(b"\n", end)
    hi = len(data) if hi < 0 else hi + 1
    for _ in range(2):  # two lines of context each side
        if lo > 0:
            lo = data.rfind(b"\n", 0, lo - 1) + 1
        if hi < len(data):
            nxt = data.find(b"\n", hi)
            hi = len(data) if nxt < 0 else nxt + 1
    before = data[lo:hi]
    after, at = [], lo
    for e in edits:
        after.append(data[at : e.start])
        after.append(e.text.encode("utf-8", "surrogateescape"))
        at = e.end
    after.append(data[at:hi])
    import difflib

    first = data.count(b"\n", 0, lo) + 1
    a = before.decode("utf-8", "replace").splitlines()
    b = b"".join(after).decode("utf-8", "replace").splitlines()
    lines = [f"@@ line {first} @@"]
    for line in difflib.ndiff(a, b):
        if line.startswith("?"):
            continue
        lines.append(line[0] + line[2:] if line[0] in "+-" else " " + line[2:])
    return "\n".join(lines) + "\n"


def _diff_html(diff: str) -> str:
    out = []
    for line in diff.splitlines():
        cls = {"+": "add", "-": "del", "@": "at"}.get(line[:1], "")
        out.append(f'<span class="{cls}">{esc(line)}</span>' if cls else esc(line))
    return '<pre class="diff" aria-label="fix as a diff">' + "\n".join(out) + "</pre>"


# ----------------------------------------------------------------------------
# The page


def write(
    result: RunResult, out: TextIO, *, color: bool = False, verbose: bool = False, context: dict | None = None
) -> None:
    ctx = context or {}
    findings = result.findings
    shown_suppressed = result.suppressed if result.show_suppressed else []
    counts = result.counts()
    count_gpus = ctx.get("gpu_workloads")
    gpu = count_gpus(sorted({f.file for f in findings if f.object is not None})) if count_gpus else {}
    link = _linker(result, ctx.get("base_url"))
    sizing = ctx.get("sizing")
    charts = _chart_links(sizing) if sizing is not None else None
    w = out.write
    w(head("kubelint-ml report"))
    w("<header><h1>kubelint-ml report</h1>\n")
    w(_meta(result, ctx))
    w("</header>\n")
    w(
        '<nav aria-label="sections"><a href="#totals">Totals</a><a href="#rules">By rule</a>'
        '<a href="#namespaces">By namespace</a><a href="#workloads">By workload</a>'
        + ('<a href="#sizing">Sizing</a>' if sizing is not None else "")
        + '<a href="#findings">Findings</a><a href="#help">Rules\' help</a></nav>\n'
    )

    # --- totals
    by_workload: dict[tuple, Counter] = defaultdict(Counter)
    labels: dict[tuple, str] = {}
    by_ns: dict[str, Counter] = defaultdict(Counter)
    ns_workloads: dict[str, set] = defaultdict(set)
    by_rule: dict[str, Counter] = defaultdict(Counter)
    rule_files: dict[str, set] = defaultdict(set)
    for f in findings:
        by_rule[f.rule][f.severity] += 1
        rule_files[f.rule].add(f.file)
        ns = namespace_key(f)
        by_ns[ns][f.severity] += 1
        if f.object is not None:
            key = _workload_key(f)
            by_workload[key][f.severity] += 1
            if key not in labels:
                labels[key] = workload_label(f)
            ns_workloads[ns].add(key)
    gpu_hit = [k for k in by_workload if k in gpu]
    gpu_err = [k for k in gpu_hit if by_workload[k]["error"]]
    gpus_at_risk = sum(gpu[k] for k in gpu_err)
    fixable = sum(1 for f in findings if f.fix is not None and not f.fix.unfixable)
    w('<section id="totals"><h2>Totals</h2>\n<div class="cards">')
    for s in SEVERITIES:
        w(f'<div class="card">{sev(s)}<b>{counts.get(s, 0)}</b></div>')
    w(
        f'<div class="card">findings<b>{len(findings)}</b>in {result.files_with_findings()} of {result.files} files</div>'
    )
    if count_gpus:
        w(
            f'<div class="card"><span class="gpu">GPU workloads</span> with findings<b>{len(gpu_hit)}</b>'
            f"{len(gpu_err)} with errors</div>"
        )
        w(
            f'<div class="card"><span class="gpu">GPUs at risk</span><b>{gpus_at_risk}</b>'
            "requested by GPU workloads with errors</div>"
        )
    w("</div>\n")
    w(
        f"<p>{result.objects} objects in {result.documents} documents; {len(result.suppressed)} suppressed, "
        f"{result.baselined} baselined; {fixable} with a fix (<code>kubelint-ml check --fix</code>). "
        f"Fail level <b>{esc(result.fail_level)}</b>: <b>{'failed' if result.failed() else 'passed'}</b>.</p>\n"
    )
    for warning in result.warnings:
        w(f'<p role="note"><b>Warning:</b> {esc(warning)}</p>\n')
    w("</section>\n")

    # --- by rule
    w('<section id="rules"><h2>By rule</h2>\n')
    if by_rule:
        w(
            '<table><thead><tr><th scope="col">rule</th><th scope="col">title</th>'
            + "".join(f'<th scope="col" class="n">{sev(s)}</th>' for s in SEVERITIES)
            + '<th scope="col" class="n">files</th></tr></thead><tbody>\n'
        )
        for rule, c in sorted(by_rule.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
            info = result.rules.get(rule)
            w(
                f'<tr><td><a class="mono" href="#rule-{esc(rule)}" data-rule="{esc(rule)}">{esc(rule)}</a></td>'
                f"<td>{esc(info.title) if info else ''}</td>"
                + "".join(f'<td class="n">{c[s] or ""}</td>' for s in SEVERITIES)
                + f'<td class="n">{len(rule_files[rule])}</td></tr>\n'
            )
        w("</tbody></table>\n")
    else:
        w("<p>No findings.</p>\n")
    w("</section>\n")

    # --- by namespace
    w(
        '<section id="namespaces"><h2>By namespace</h2>\n<p class="meta">Manifests without '
        "<code>metadata.namespace</code> are counted by directory.</p>\n"
    )
    if by_ns:
        w(
            '<table><thead><tr><th scope="col">namespace</th>'
            + "".join(f'<th scope="col" class="n">{sev(s)}</th>' for s in SEVERITIES)
            + '<th scope="col" class="n">workloads</th><th scope="col" class="n">GPU workloads</th>'
            '<th scope="col" class="n">GPUs at risk</th></tr></thead><tbody>\n'
        )
        for ns, c in sorted(by_ns.items(), key=lambda kv: (-kv[1]["error"], -sum(kv[1].values()), kv[0])):
            n_gpu = sum(1 for k in ns_workloads[ns] if k in gpu)
            at_risk = sum(gpu[k] for k in ns_workloads[ns] if k in gpu and by_workload[k]["error"])
            w(
                f'<tr><td><a href="#findings" data-ns="{esc(ns)}">{esc(namespace_label(ns))}</a></td>'
                + "".join(f'<td class="n">{c[s] or ""}</td>' for s in SEVERITIES)
                + f'<td class="n">{len(ns_workloads[ns])}</td><td class="n">{n_gpu or ""}</td>'
                f'<td class="n">{at_risk or ""}</td></tr>\n'
            )
        w("</tbody></table>\n")
    w("</section>\n")

    # --- by workload
    w(
        f'<section id="workloads"><h2>By workload</h2>\n<details{" open" if len(by_workload) <= 50 else ""}>'
        f"<summary>{len(by_workload)} objects with findings, most errors first</summary>\n"
    )
    if by_workload:
        w(
            '<table><thead><tr><th scope="col">object</th><th scope="col">file</th>'
            + "".join(f'<th scope="col" class="n">{sev(s)}</th>' for s in SEVERITIES)
            + '<th scope="col" class="n">GPUs</th></tr></thead><tbody>\n'
        )
        order = sorted(
            by_workload.items(), key=lambda kv: (-kv[1]["error"], -(kv[0] in gpu), -sum(kv[1].values()), kv[0])
        )
        for key, c in order:
            g = f'<span class="gpu">GPU</span> {gpu[key]}' if key in gpu else ""
            w(
                f'<tr><td>{esc(labels[key])}</td><td class="mono">{esc(key[0])}</td>'
                + "".join(f'<td class="n">{c[s] or ""}</td>' for s in SEVERITIES)
                + f'<td class="n">{g}</td></tr>\n'
            )
        w("</tbody></table>\n")
    w("</details></section>\n")

    if sizing is not None:
        sizing.write_section(out)

    # --- findings
    w('<section id="findings"><h2>Findings</h2>\n')
    w(_filters(by_rule, by_ns, len(findings) + len(shown_suppressed), bool(shown_suppressed)))
    files = _Files()
    entries = [(f, None) for f in findings] + [(f, f.suppressed or "") for f in shown_suppressed]
    if shown_suppressed:
        entries.sort(key=lambda e: e[0].sort_key())
    current: str | None = None
    buf: list[str] = []
    for i, (f, suppressed) in enumerate(entries):
        if f.file != current:
            if current is not None:
                buf.append("</section>\n")
            current = f.file
            buf.append(f'<section class="file"><h3>{esc(f.file)}</h3>\n')
        buf.append(_finding(f, i, suppressed, link, files, f.object is not None and _workload_key(f) in gpu, charts))
        if len(buf) >= 256:
            w("".join(buf))
            buf.clear()
    if current is not None:
        buf.append("</section>\n")
    w("".join(buf))
    if not entries:
        w("<p>No findings.</p>\n")
    w("</section>\n")

    # --- rules' help
    w('<section id="help"><h2>Rules\' help</h2>\n')
    for rule in sorted(by_rule):
        info = result.rules.get(rule)
        w(
            f'<article id="rule-{esc(rule)}"><h3><code>{esc(rule)}</code>'
            + (f" — {esc(info.title)}" if info and info.title else "")
            + "</h3>\n"
        )
        if info is not None:
            if info.description:
                w(f'<p class="help">{esc(info.description.strip())}</p>\n')
            if info.remediation:
                w(f'<p><b>Fix:</b></p><p class="help">{esc(info.remediation.strip())}</p>\n')
            if info.help_uri:  # as text: the page links out only to the files, and only when asked to
                w(f'<p class="meta">Documentation: <code>{esc(info.help_uri)}</code></p>\n')
        w(f'<p class="meta"><code>kubelint-ml rules show {esc(rule)}</code></p></article>\n')
    w("</section>\n")
    w(f'<footer class="meta"><p>Written by kubelint-ml {esc(result.tool_version or _version())}.</p></footer>\n')
    w(tail(SCRIPT))


def _version() -> str:
    from kubelint_ml import __version__

    return __version__


def _meta(result: RunResult, ctx: dict) -> str:
    inputs = ctx.get("inputs") or []
    parts = [
        ("inputs", ", ".join(inputs) if inputs else "(not recorded)"),
        ("tool", f"kubelint-ml {result.tool_version or _version()}"),
        ("written", generated_at()),
        ("files", f"{result.files}"),
    ]
    if ctx.get("command"):
        parts.insert(0, ("command", str(ctx["command"])))
    body = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in parts)
    return f'<dl class="meta">{body}</dl>\n'


def _chart_links(sizing: Any) -> Any:
    """A finding -> the id of its container's sizing chart, or None."""
    anchors, default_ns = sizing.anchors(), sizing.default_namespace

    def chart(f: Finding) -> str | None:
        obj = f.object
        if obj is None or f.container is None:
            return None
        return anchors.get((obj.namespace or default_ns, obj.kind, obj.name, f.container))

    return chart


def _finding(
    f: Finding, i: int, suppressed: str | None, link: Any, files: _Files, is_gpu: bool, charts: Any = None
) -> str:
    obj = workload_label(f)
    pos = f"{f.line}:{f.column}" if f.line >= 1 and f.column >= 1 else (str(f.line) if f.line >= 1 else "-")
    url = link(f.file, f.line) if link is not None else None
    loc = f'<a class="mono" href="{esc(url)}">{pos}</a>' if url else f'<span class="mono">{pos}</span>'
    s = "suppressed" if suppressed is not None else f.severity
    parts = [
        f'<div class="f {esc(f.severity)}" id="f{i}" data-s="{esc(s)}" data-r="{esc(f.rule)}" '
        f'data-n="{esc(namespace_key(f))}"{" data-g" if is_gpu else ""}>'
        f'<div class="h">{sev(f.severity)}{loc}<a class="mono" href="#rule-{esc(f.rule)}">{esc(f.rule)}</a>',
    ]
    if obj:
        parts.append(f'<span class="obj">{esc(obj)}</span>')
    if f.container:
        parts.append(f'<span class="ctr">container {esc(f.container)}</span>')
    if is_gpu:
        parts.append('<span class="gpu">GPU</span>')
    chart = charts(f) if charts is not None else None
    if chart:
        parts.append(f'<a href="#{chart}">sizing chart</a>')
    if suppressed is not None:
        parts.append(f"<span>(suppressed{': ' + esc(suppressed) if suppressed else ''})</span>")
    parts.append(f'</div><p class="m">{esc(f.message)}</p>')
    diff = fix_diff(f, files)
    if f.detail or diff:
        parts.append(
            "<details><summary>"
            + " and ".join(x for x, on in (("detail", bool(f.detail)), ("fix", bool(diff))) if on)
            + "</summary>"
        )
        if f.detail:
            parts.append(f'<p class="d">{esc(f.detail)}</p>')
        if diff:
            applies = f" ({esc(f.fix.applicability)}: {esc(f.fix.description)})" if f.fix.description else ""
            parts.append(f"<p>Fix{applies}:</p>{_diff_html(diff)}")
        parts.append("</details>")
    parts.append("</div>\n")
    return "".join(parts)


def _filters(by_rule: dict, by_ns: dict, total: int, suppressed: bool) -> str:
    rules = "".join(f'<option value="{esc(r)}">{esc(r)}</option>' for r in sorted(by_rule))
    namespaces = "".join(f'<option value="{esc(n)}">{esc(namespace_label(n))}</option>' for n in sorted(by_ns))
    checks = "".join(
        f'<label><input type="checkbox" name="sev" value="{s}" checked> {sev(s)}</label>'
        for s in (*SEVERITIES, *(("suppressed",) if suppressed else ()))
    )
    return (
        '<p class="nojs">Every finding is listed below; the filters need JavaScript.</p>\n'
        '<form id="filters" hidden role="search" aria-label="filter findings">'
        f"{checks}"
        f'<label>rule <select name="rule"><option value="">all</option>{rules}</select></label>'
        f'<label>namespace <select name="ns"><option value="">all</option>{namespaces}</select></label>'
        '<label><input type="checkbox" name="gpu"> <span class="gpu">GPU</span> workloads only</label>'
        '<label>text <input type="search" name="q" placeholder="file, object, message…"></label>'
        f'<output id="shown" aria-live="polite">{total} of {total} shown</output></form>\n'
    )


# Filters: each finding's text is read once; a change hides what does not match (and files left
# empty), in one pass over the findings: 14,000 of them in tens of milliseconds. The filters are
# kept in the address (#filter?hide=info&rule=...&ns=...&gpu=1&q=...), so a filtered view can be
# linked to, and opening such an address shows it.
SCRIPT = r"""
(function(){
"use strict";
document.documentElement.classList.add("js");
var form=document.getElementById("filters");if(!form)return;form.hidden=false;
var rows=Array.prototype.slice.call(document.querySelectorAll("#findings .f"));
var files=Array.prototype.slice.call(document.querySelectorAll("#findings .file"));
var texts=null,total=rows.length,out=document.getElementById("shown");
function apply(){
  var sev={};Array.prototype.forEach.call(form.querySelectorAll("input[name=sev]"),function(c){sev[c.value]=c.checked;});
  var rule=form.elements.rule.value,ns=form.elements.ns.value,gpu=form.elements.gpu.checked;
  var q=form.elements.q.value.trim().toLowerCase();
  if(q&&texts===null){texts=rows.map(function(r){return (r.parentNode.firstChild.textContent+" "+r.textContent).toLowerCase();});}
  var shown=0;
  for(var i=0;i<rows.length;i++){
    var r=rows[i],ok=sev[r.getAttribute("data-s")]!==false&&(!rule||r.getAttribute("data-r")===rule)&&
      (!ns||r.getAttribute("data-n")===ns)&&(!gpu||r.hasAttribute("data-g"))&&(!q||texts[i].indexOf(q)>=0);
    if(r.hidden===ok)r.hidden=!ok;if(ok)shown++;
  }
  for(var j=0;j<files.length;j++){files[j].hidden=!files[j].querySelector(".f:not([hidden])");}
  out.textContent=shown+" of "+total+" shown";
  save();
}
function save(){
  var p=[],off=[];
  Array.prototype.forEach.call(form.querySelectorAll("input[name=sev]"),function(c){if(!c.checked)off.push(c.value);});
  if(off.length)p.push("hide="+encodeURIComponent(off.join(",")));
  ["rule","ns","q"].forEach(function(k){var v=form.elements[k].value;if(v)p.push(k+"="+encodeURIComponent(v));});
  if(form.elements.gpu.checked)p.push("gpu=1");
  var want=p.length?"#filter?"+p.join("&"):"";
  if(want!==(location.hash.indexOf("#filter?")===0?location.hash:"")){
    try{history.replaceState(null,"",want||location.pathname+location.search);}catch(e){}
  }
}
function load(){
  var h=location.hash;if(h.indexOf("#filter?")!==0)return false;
  h.slice(8).split("&").forEach(function(kv){
    var i=kv.indexOf("="),k=kv.slice(0,i),v;try{v=decodeURIComponent(kv.slice(i+1));}catch(e){return;}
    if(k==="hide"){var off=v.split(",");Array.prototype.forEach.call(form.querySelectorAll("input[name=sev]"),
      function(c){c.checked=off.indexOf(c.value)<0;});}
    else if(k==="gpu"){form.elements.gpu.checked=v==="1";}
    else if(k==="rule"||k==="ns"||k==="q"){form.elements[k].value=v;}
  });
  return true;
}
var timer=null;
form.addEventListener("input",function(){clearTimeout(timer);timer=setTimeout(apply,120);});
form.addEventListener("change",apply);
form.addEventListener("submit",function(e){e.preventDefault();apply();});
document.addEventListener("click",function(e){
  var a=e.target.closest&&e.target.closest("a[data-rule],a[data-ns]");if(!a)return;
  if(a.hasAttribute("data-rule")){form.elements.rule.value=a.getAttribute("data-rule");}
  if(a.hasAttribute("data-ns")){form.elements.ns.value=a.getAttribute("data-ns");}
  e.preventDefault();apply();form.scrollIntoView();
});
if(load()){apply();form.scrollIntoView();}
})();
"""


def render(result: RunResult, *, color: bool = False, verbose: bool = False, context: dict | None = None) -> str:
    import io

    buf = io.StringIO()
    write(result, buf, color=color, verbose=verbose, context=context)
    return buf.getvalue()


def base_url_for(given: str | None) -> str | None:
    """The base URL of links to files: ``given`` (http or https only, else ValueError); without it, in
    GitHub Actions, the commit's blob URL (``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/$GITHUB_SHA``)."""
    if given:
        url = safe_url(given)
        if url is None:
            raise ValueError(f"--html-base-url: {given!r} is not an http or https URL")
        return url
    env = os.environ
    if env.get("GITHUB_ACTIONS") == "true" and env.get("GITHUB_REPOSITORY") and env.get("GITHUB_SHA"):
        server = env.get("GITHUB_SERVER_URL") or "https://github.com"
        return safe_url(f"{server.rstrip('/')}/{env['GITHUB_REPOSITORY']}/blob/{env['GITHUB_SHA']}")
    return None
