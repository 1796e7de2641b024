"""Escaping shared by the reporters.

Manifest content (file names, object names, values quoted in messages) is
untrusted: every reporter passes it through one of these helpers so it cannot
inject terminal escapes, workflow commands, markup or invalid XML/JSON.
"""

from __future__ import annotations

import math
import os
import re

from kubelint_ml.lazyre import LazyPattern

# ANSI/VT escape sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST),
# DCS/SOS/PM/APC strings, and two-character ESC sequences; the 8-bit C1 forms too.
_ANSI_RE = LazyPattern(
    r"""
    (?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]                 # CSI
  | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])          # OSC, DCS, SOS, PM, APC ...
    .*?(?:\x07|\x1b\\|\x9c)                          # ... up to BEL or ST
  | \x1b[ -/]*[0-~]                                  # other ESC sequences
    """,
    re.VERBOSE | re.DOTALL,
)

# C0 controls except tab/LF/CR, DEL, C1 controls, the Unicode bidi controls
# that can reorder what a reader sees ("trojan source"), line and paragraph
# separators, and the invisible characters that make two names look the same
# (soft hyphen, Mongolian vowel separator, zero-width space/joiners, word
# joiner and invisible operators, zero-width no-break space).
_CONTROL_RE = LazyPattern(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\u2028\u2029\ufeff]"
)
_SURROGATE_RE = LazyPattern("[\ud800-\udfff]")
# Characters not allowed anywhere in an XML 1.0 document.
_XML_ILLEGAL_RE = LazyPattern("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def fix_surrogates(text: str) -> str:
    """Replace lone surrogates (not encodable as UTF-8) with U+FFFD."""
    return _SURROGATE_RE.sub("\ufffd", text)


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences."""
    return _ANSI_RE.sub("", text)


def neutralise(text: str, *, keep_newlines: bool = False) -> str:
    """Make untrusted text safe for a terminal or a log line.

    ANSI sequences are removed; other control characters become visible
    `\\xNN` escapes; tab becomes a space; CR/LF become `\\r`/`\\n` unless
    `keep_newlines`; lone surrogates become U+FFFD.
    """
    if text.isascii() and text.isprintable():
        return text  # the usual case: nothing below would change it
    text = fix_surrogates(strip_ansi(text)).replace("\t", " ")
    if not keep_newlines:
        text = text.replace("\r", "\\r").replace("\n", "\\n")
    return _CONTROL_RE.sub(_visible, text)


def safe_block(text: str) -> str:
    """Several lines of untrusted text for a terminal or CI log: each neutralised and :func:`inert`."""
    return "\n".join(inert(neutralise(line)) for line in text.split("\n"))


def line_start(path: str) -> str:
    """A file path that begins an output line, made safe for a CI log.

    Neutralised like any untrusted text, and never read as a GitHub workflow
    command: the runner executes any stdout line that starts with ``::``
    (after leading spaces), so a file named ``::stop-commands::x.yaml`` would
    otherwise switch off every annotation after it. Such a path is shown as
    ``./::stop-commands::x.yaml``, the same file.
    """
    text = neutralise(path)
    return "./" + text if text.lstrip().startswith("::") else text


def inert(line: str) -> str:
    """One output line that a CI runner will not read as a workflow command.

    A line whose first non-blank characters are ``::`` gets a backslash
    before them; anything else is returned unchanged.
    """
    stripped = line.lstrip()
    if not stripped.startswith("::"):
        return line
    return line[: len(line) - len(stripped)] + "\\" + stripped


def xml_text(text: str) -> str:
    """Drop characters that XML 1.0 forbids; ANSI sequences go too."""
    return _XML_ILLEGAL_RE.sub("", strip_ansi(text))


def sanitize_json(value: object) -> object:
    """A copy of `value` that `json.dumps` turns into valid UTF-8 JSON.

    Lone surrogates become U+FFFD, tuples/sets become lists, non-finite floats
    and unknown types become strings, dict keys become strings.
    """
    if isinstance(value, str):
        return fix_surrogates(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {fix_surrogates(str(k)): sanitize_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sanitize_json(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((sanitize_json(v) for v in value), key=repr)
    return fix_surrogates(str(value))


def github_data(text: str) -> str:
    """Escape the message part of a GitHub workflow command."""
    text = neutralise(text, keep_newlines=True)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """Escape a property value (file=, title=) of a GitHub workflow command."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


# Inline Markdown punctuation, backslash-escaped anywhere in a cell.
_MD_INLINE_RE = LazyPattern(r"([\\`*_~\[\]|$])")
# Block syntax that only matters at the start of a line.
_MD_LEADING_RE = LazyPattern(r"^(\d*)([#+\-=.)])")  # `>` becomes &gt; anyway
# Autolink triggers and mentions, broken with an invisible word joiner.
_MD_AUTOLINK_RE = LazyPattern(r"(?i)(://|www\.|@)")
_WORD_JOINER = "\u2060"


def markdown_cell(text: str) -> str:
    """Escape untrusted text for a GitHub-flavoured Markdown table cell.

    No markup, link, autolink, HTML or mention survives: inline Markdown
    punctuation is backslash-escaped, `<>&` become entities, newlines become
    `<br>`, and a word joiner (U+2060) breaks `://`, `www.` and `@`.
    """
    text = neutralise(text, keep_newlines=True)
    out = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = _MD_INLINE_RE.sub(r"\\\1", line.strip())
        line = _MD_LEADING_RE.sub(r"\1\\\2", line)
        line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        out.append(_MD_AUTOLINK_RE.sub(lambda m: m.group(1)[0] + _WORD_JOINER + m.group(1)[1:], line))
    return "<br>".join(out)


def location(file: str, line: int, column: int = 0) -> str:
    """`file:line:col`, leaving out a line or column that is unknown (< 1)."""
    if line < 1:
        return file
    return f"{file}:{line}:{column}" if column >= 1 else f"{file}:{line}"


def relative_posix(file: str, root: str) -> tuple[str, bool]:
    """`file` relative to `root`, with forward slashes and no `./` prefix.

    Returns (path, inside_root). A file outside `root` (or on another drive)
    comes back absolute with inside_root False.
    """
    abs_file = os.path.abspath(file)
    try:
        rel = os.path.relpath(abs_file, os.path.abspath(root))
    except ValueError:
        return abs_file.replace(os.sep, "/"), False
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return abs_file.replace(os.sep, "/"), False
    return rel.replace(os.sep, "/"), True


def uri_path(path: str) -> str:
    """Percent-encode a path for a URI; `/` stays, everything special is encoded.

    Names that came from undecodable bytes (surrogate escapes) are encoded as
    their original bytes.
    """
    from urllib.parse import quote  # SARIF and links only: urllib.parse brings ipaddress, 3 ms of a start

    try:
        return quote(path, safe="/", errors="surrogateescape")
    except UnicodeEncodeError:
        return quote(fix_surrogates(path), safe="/")
