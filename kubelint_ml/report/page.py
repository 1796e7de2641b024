"""The HTML page both HTML reports are written into: one self-contained file.

Styles and the script are inline, charts are inline SVG, nothing is fetched
(the Content-Security-Policy says so to the browser too: no connection, no
image, font or frame from anywhere), so the file reads the same from a CI
artifact, an e-mail attachment or GitHub Pages. Every text that came from a
manifest, a rule file or a usage source goes through :func:`esc`: control,
bidi and zero-width characters made visible, then ``& < > " '`` as entities.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from html import escape as _escape

from kubelint_ml.report.escape import neutralise

# No network at all: only what is inline. (A file opened from disk has no origin the
# browser would let a script reach anyway; this says it in the page.)
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


@lru_cache(maxsize=8192)  # rule ids, namespaces, objects and files recur across a report
def _esc(s: str) -> str:
    if not (s.isascii() and s.isprintable()):
        s = neutralise(s, keep_newlines=True)
    return _escape(s, quote=True)


def esc(text: object) -> str:
    """Untrusted text for HTML content or a quoted attribute value."""
    return _esc(text if isinstance(text, str) else str(text))


def safe_url(url: str | None) -> str | None:
    """``url`` when it is http(s) (never ``javascript:`` or ``data:``), else None."""
    if not url:
        return None
    lowered = url.strip().lower()
    if lowered.startswith(("https://", "http://")) and not any(c in url for c in "\"'<> \t\r\n"):
        return url.strip()
    return None


def generated_at() -> str:
    """The time the report is written, UTC; ``SOURCE_DATE_EPOCH`` (reproducible builds) fixes it."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    seconds = int(epoch) if epoch.isdigit() else time.time()
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def head(title: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="kubelint-ml">\n'
        f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    )


def tail(script: str = "") -> str:
    return (f"<script>{script}</script>\n" if script else "") + "</body>\n</html>\n"


# Sizes in rem (text scales with the reader's setting); colours always beside a word or a shape.
STYLE = """
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--err:#b42318;--warn:#8a5a00;
--info:#0b5cad;--ok:#1a7f37;--acc:#6639ba}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9da7b3;--line:#30363d;--bg:#0d1117;--soft:#161b22;
--err:#ff7b72;--warn:#e3b341;--info:#79c0ff;--ok:#56d364;--acc:#d2a8ff}}
*{box-sizing:border-box}[hidden]{display:none!important}
body{font:1rem/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0;
padding:1rem 1.5rem 3rem;max-width:90rem}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin:2rem 0 .5rem;border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:1rem 0 .3rem}
a{color:var(--info)}code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.meta{color:var(--muted);margin:.2rem 0}.meta dt{font-weight:600;display:inline}.meta dd{display:inline;margin:0 1rem 0 .3rem}
nav a{margin-right:1rem}
.cards{display:flex;flex-wrap:wrap;gap:.6rem;margin:.6rem 0}
.card{border:1px solid var(--line);border-radius:.4rem;padding:.5rem .8rem;min-width:9rem;background:var(--soft)}
.card b{display:block;font-size:1.5rem}
table{border-collapse:collapse;margin:.4rem 0;width:100%}th,td{text-align:left;padding:.2rem .5rem;
border-bottom:1px solid var(--line);vertical-align:top}th{background:var(--soft)}td.n,th.n{text-align:right;
font-variant-numeric:tabular-nums}
.sev{font-weight:600;white-space:nowrap}.sev.error{color:var(--err)}.sev.warning{color:var(--warn)}
.sev.info{color:var(--info)}.gpu{color:var(--acc);font-weight:600}
.file{margin:.8rem 0}.file>h3{font-family:ui-monospace,monospace;font-size:.95rem;word-break:break-all;
background:var(--soft);padding:.2rem .4rem;margin:0}
.f{border-left:.3rem solid var(--line);padding:.25rem .6rem;margin:.2rem 0}.f.error{border-left-color:var(--err)}
.f.warning{border-left-color:var(--warn)}.f.info{border-left-color:var(--info)}
.f .h{display:flex;flex-wrap:wrap;gap:.2rem .8rem;align-items:baseline}.f .m{margin:.1rem 0}
.obj,.ctr{color:var(--muted)}
details{margin:.1rem 0}summary{cursor:pointer;color:var(--muted)}
.d{white-space:pre-wrap;margin:.2rem 0}
pre{background:var(--soft);padding:.4rem .6rem;overflow-x:auto;margin:.2rem 0}
.diff .add{color:var(--ok)}.diff .del{color:var(--err)}.diff .at{color:var(--muted)}
.help{white-space:pre-wrap}
#filters{position:sticky;top:0;background:var(--bg);padding:.5rem 0;border-bottom:1px solid var(--line);
display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;z-index:1}
#filters label{white-space:nowrap}#filters input[type=search]{min-width:16rem;font-size:1rem}
#filters select{font-size:1rem;max-width:22rem}
.nojs{color:var(--muted)}
.js .nojs{display:none}
.file,.sz{content-visibility:auto;contain-intrinsic-size:auto 12rem}
.sz{border:1px solid var(--line);border-radius:.4rem;padding:.5rem .8rem;margin:.8rem 0}
.sz .row{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:flex-start;margin:.4rem 0}
.sz svg{max-width:100%;height:auto}.sz table{width:auto}
.risk{color:var(--err);font-weight:600}.waste{color:var(--warn);font-weight:600}
"""
