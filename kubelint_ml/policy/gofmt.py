"""OPA's ``sprintf``: Go's ``fmt.Sprintf`` over the values OPA makes of Rego's.

OPA (topdown/strings.go) hands ``fmt.Sprintf`` a Go value per element of the
argument array: a number that is an integer (``1``, ``1.0``) as ``int64`` (or
``*big.Int`` beyond it), a number with a fraction as ``float64``, a string as
``string``, anything else (booleans, null, arrays, objects, sets) as the
``string`` of its Rego form (``true``, ``null``, ``["a", 1]``,
``{"a": 1}``, ``{1, 2}``, ``set()``). Go then formats them by the verbs,
flags, width and precision, with its own texts for a verb that does not fit
(``%!d(string=x)``), a missing argument (``%!v(MISSING)``) and extra ones
(``%!(EXTRA int64=1)``). This module does the same, message for message.
"""

from __future__ import annotations

import math
from typing import Any

INT64 = (-(1 << 63), (1 << 63) - 1)


class _Big(int):
    """An integer beyond int64: Go's ``*big.Int``."""


def _type(arg: Any) -> str:
    if isinstance(arg, _Big):
        return "*big.Int"
    if isinstance(arg, int):
        return "int64"
    if isinstance(arg, float):
        return "float64"
    return "string"


def rego_order(v: Any) -> tuple:
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, v)
    if isinstance(v, (int, float)):
        return (2, v)
    if isinstance(v, str):
        return (3, v)
    if isinstance(v, list):
        return (4, [rego_order(x) for x in v])
    if isinstance(v, dict):
        keys = sorted(v, key=rego_order)
        return (5, [(rego_order(k), rego_order(v[k])) for k in keys])
    if isinstance(v, (set, frozenset)):
        return (6, sorted(rego_order(x) for x in v))
    return (7, str(v))


def quote(s: str, ascii_only: bool = False) -> str:
    """Go's ``strconv.Quote`` (``QuoteToASCII`` with ``ascii_only``)."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}[ch])
        elif (o < 0x80 and ch.isprintable()) or (o >= 0x80 and not ascii_only and ch.isprintable()):
            out.append(ch)
        elif o < 0x80:
            out.append(f"\\x{o:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\\ufffd")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def rego_string(v: Any) -> str:
    """The text OPA's ``ast.Value.String()`` gives a value."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _shortest(v)
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, list):
        return "[" + ", ".join(rego_string(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=rego_order)
        return "{" + ", ".join(f"{rego_string(k)}: {rego_string(v[k])}" for k in keys) + "}"
    if isinstance(v, (set, frozenset)):
        if not v:
            return "set()"
        return "{" + ", ".join(rego_string(x) for x in sorted(v, key=rego_order)) + "}"
    return str(v)


def _shortest(v: float) -> str:
    """A number's text as OPA keeps it for a computed float (Go's shortest ``%g``-like form)."""
    if v == int(v) and abs(v) < 1e21:
        return str(int(v))
    return repr(v).replace("e-0", "e-").replace("e+", "e")


def go_value(v: Any) -> Any:
    """The Go value OPA passes to ``fmt.Sprintf`` for one Rego value."""
    if isinstance(v, bool) or v is None:
        return rego_string(v)
    if isinstance(v, int):
        return v if INT64[0] <= v <= INT64[1] else _Big(v)
    if isinstance(v, float):
        if v == int(v) and INT64[0] <= v <= INT64[1] and "e" not in repr(v):
            return int(v)
        text = repr(v)
        # OPA keeps a number's text: one with an exponent and no fraction ("1e-07") is passed as it
        # is, a string; the engine hands over the value, whose JSON text is what OPA would have read.
        return v if "." in text else text
    if isinstance(v, str):
        return v
    return rego_string(v)


class _Flags:
    __slots__ = ("plus", "minus", "sharp", "space", "zero", "wid", "prec", "sharp_v", "plus_v")

    def __init__(self) -> None:
        self.plus = self.minus = self.sharp = self.space = self.zero = False
        self.sharp_v = self.plus_v = False
        self.wid: int | None = None
        self.prec: int | None = None


class _Printer:
    def __init__(self) -> None:
        self.buf: list[str] = []
        self.f = _Flags()

    def write(self, s: str) -> None:
        self.buf.append(s)

    # -- padding -----------------------------------------------------
    def padding(self, n: int) -> str:
        return ("0" if self.f.zero else " ") * max(n, 0)

    def pad(self, s: str) -> None:
        f = self.f
        if not f.wid:
            self.write(s)
            return
        n = f.wid - len(s)
        if not f.minus:
            self.write(self.padding(n) + s)
        else:
            self.write(s + " " * max(n, 0))

    # -- verbs -------------------------------------------------------
    def bad_verb(self, verb: str, arg: Any) -> None:
        self.write(f"%!{verb}(")
        self.write(_type(arg) + "=")
        self.print_arg(arg, "v")
        self.write(")")

    def print_arg(self, arg: Any, verb: str) -> None:
        if verb == "T":
            self.fmt_s(_type(arg))
            return
        if verb == "p":
            self.bad_verb(verb, arg)
            return
        if isinstance(arg, _Big):
            self.fmt_big(arg, verb)
        elif isinstance(arg, int):
            self.fmt_int(arg, verb)
        elif isinstance(arg, float):
            self.fmt_float(arg, verb)
        else:
            self.fmt_string(arg, verb)

    def fmt_big(self, v: int, verb: str) -> None:
        base = {"b": 2, "o": 8, "O": 8, "d": 10, "s": 10, "v": 10, "x": 16, "X": 16}.get(verb)
        if base is None:
            self.write(f"%!{verb}(big.Int={v})")
            return
        old = self.f.plus
        self.f.plus = self.f.plus or self.f.plus_v
        self.fmt_integer(v, base, verb)
        self.f.plus = old

    def fmt_int(self, v: int, verb: str) -> None:
        if verb in "vd":
            self.fmt_integer(v, 10, verb)
        elif verb == "b":
            self.fmt_integer(v, 2, verb)
        elif verb in "oO":
            self.fmt_integer(v, 8, verb)
        elif verb in "xX":
            self.fmt_integer(v, 16, verb)
        elif verb == "c":
            self.pad(_rune(v))
        elif verb == "q":
            self.pad(_quote_rune(v, self.f.plus))
        elif verb == "U":
            s = f"U+{v:04X}" if v >= 0 else f"U+{v & 0xFFFFFFFFFFFFFFFF:04X}"
            if self.f.sharp and 0 <= v <= 0x10FFFF and chr(v).isprintable():
                s += f" '{chr(v)}'"
            self.pad(s)
        else:
            self.bad_verb(verb, v)

    def fmt_integer(self, v: int, base: int, verb: str) -> None:
        f = self.f
        negative = v < 0
        u = -v if negative else v
        if f.prec is not None:
            prec = f.prec
            if prec == 0 and u == 0:
                old, f.zero = f.zero, False
                self.write(self.padding(f.wid or 0))
                f.zero = old
                return
        elif f.zero and not f.minus and f.wid is not None:
            prec = f.wid
            if negative or f.plus or f.space:
                prec -= 1
        else:
            prec = 0
        digits = _digits(u, base, upper=verb == "X")
        if len(digits) < prec:
            digits = "0" * (prec - len(digits)) + digits
        if f.sharp:
            if base == 2:
                digits = "0b" + digits
            elif base == 8 and not digits.startswith("0"):
                digits = "0" + digits
            elif base == 16:
                digits = ("0X" if verb == "X" else "0x") + digits
        if verb == "O":
            digits = "0o" + digits
        if negative:
            digits = "-" + digits
        elif f.plus:
            digits = "+" + digits
        elif f.space:
            digits = " " + digits
        old, f.zero = f.zero, False
        self.pad(digits)
        f.zero = old

    def fmt_float(self, v: float, verb: str) -> None:
        if verb == "v":
            self.fmt_float_with(v, "g", -1)
        elif verb in "gG":
            self.fmt_float_with(v, verb, -1)
        elif verb in "eEfF":
            self.fmt_float_with(v, "f" if verb == "F" else verb, 6)
        elif verb in "xXb" and not self.f.sharp and self.f.prec is None:
            self.fmt_float_with(v, verb, -1)
        else:
            self.bad_verb(verb, v)

    def fmt_float_with(self, v: float, verb: str, prec: int) -> None:
        f = self.f
        if f.prec is not None:
            prec = f.prec
        num = _format_float(v, verb, prec)
        if f.sharp:
            num = _sharp_float(num, verb, prec)
        num = num if num[0] in "+-" else "+" + num
        if f.space and num[0] == "+" and not f.plus:
            num = " " + num[1:]
        if f.plus or num[0] != "+":
            if f.zero and not f.minus and f.wid is not None and f.wid > len(num):
                self.write(num[0] + "0" * (f.wid - len(num)) + num[1:])
                return
            self.pad(num)
            return
        self.pad(num[1:])

    def fmt_string(self, s: str, verb: str) -> None:
        f = self.f
        if verb == "v":
            if f.sharp_v:
                self.fmt_q(s)
            else:
                self.fmt_s(s)
        elif verb == "s":
            self.fmt_s(s)
        elif verb in "xX":
            self.fmt_sx(s, verb)
        elif verb == "q":
            self.fmt_q(s)
        else:
            self.bad_verb(verb, s)

    def fmt_s(self, s: str) -> None:
        if self.f.prec is not None:
            s = s[: self.f.prec]
        self.pad(s)

    def fmt_q(self, s: str) -> None:
        if self.f.prec is not None:
            s = s[: self.f.prec]
        if self.f.sharp and "`" not in s and all(c == "\t" or (c.isprintable() and c != "\ufeff") for c in s):
            self.pad("`" + s + "`")
        else:
            self.pad(quote(s, ascii_only=self.f.plus))

    def fmt_sx(self, s: str, verb: str) -> None:
        f = self.f
        data = s.encode("utf-8", "surrogatepass")
        if f.prec is not None:
            data = data[: f.prec]
        hexs = data.hex()
        if verb == "X":
            hexs = hexs.upper()
        if not data:
            self.pad("")
            return
        prefix = ("0X" if verb == "X" else "0x") if f.sharp else ""
        if f.space:
            out = " ".join(prefix + hexs[i : i + 2] for i in range(0, len(hexs), 2))
        else:
            out = prefix + hexs
        self.pad(out)


def _digits(u: int, base: int, upper: bool) -> str:
    if base == 10:
        return str(u)
    if base == 16:
        return f"{u:X}" if upper else f"{u:x}"
    if base == 8:
        return f"{u:o}"
    return f"{u:b}"


def _rune(v: int) -> str:
    if 0 <= v <= 0x10FFFF and not 0xD800 <= v <= 0xDFFF:
        return chr(v)
    return "\ufffd"


def _quote_rune(v: int, ascii_only: bool) -> str:
    ch = _rune(v)
    if ch == "'":
        return "'\\''"
    body = quote(ch, ascii_only)[1:-1]
    if body == '\\"':
        body = '"'
    return "'" + body + "'"


def _shortest_digits(v: float) -> tuple[str, int]:
    """The shortest decimal digits of ``v`` (no sign) and the decimal point's position."""
    r = repr(abs(v))
    mant, _, exp = r.partition("e")
    e = int(exp) if exp else 0
    intpart, _, frac = mant.partition(".")
    digits = (intpart + frac).lstrip("0")
    dp = len(intpart) + e
    if intpart.strip("0") == "":  # 0.000ddd
        stripped = frac.lstrip("0")
        dp = e - (len(frac) - len(stripped))
        digits = stripped
    digits = digits.rstrip("0")
    if not digits:
        return "0", 1
    return digits, dp


def _format_float(v: float, verb: str, prec: int) -> str:
    sign = "-" if math.copysign(1.0, v) < 0 else ""
    if verb in "xX":  # hexadecimal mantissa, binary exponent: 0x1.8p+00
        if v == 0:
            s = "0x0p+00"
        else:
            mant, _, ptext = float.hex(abs(v)).partition("p")
            mant = mant.rstrip("0").rstrip(".")
            e = int(ptext)
            s = f"{mant}p{'-' if e < 0 else '+'}{abs(e):02d}"
        return sign + (s.upper().replace("0X", "0X") if verb == "X" else s)
    if verb == "b":  # decimal mantissa, binary exponent: 6755399441055744p-52
        m, e = math.frexp(abs(v))
        return sign + f"{int(m * (1 << 53))}p{'-' if e - 53 < 0 else '+'}{abs(e - 53)}"
    upper = verb in "EG"
    low = verb.lower()
    if low in "ef" and prec >= 0:
        s = f"{abs(v):.{prec}{low}}"
        return sign + (s.upper() if upper else s)
    if low == "e":  # shortest
        digits, dp = _shortest_digits(v)
        return sign + _e_form(digits, dp, len(digits) - 1, upper)
    if low == "f":
        digits, dp = _shortest_digits(v)
        return sign + _f_form(digits, dp, max(len(digits) - dp, 0))
    # %g
    if prec < 0:
        digits, dp = _shortest_digits(v)
        eprec = 6
    else:
        if prec == 0:
            prec = 1
        if v == 0:
            digits, dp = "0", 1
        else:
            s = f"{abs(v):.{prec - 1}e}"
            mant, _, etext = s.partition("e")
            digits = mant.replace(".", "").rstrip("0") or "0"
            dp = int(etext) + 1
        eprec = prec
        if eprec > len(digits) and len(digits) >= dp:
            eprec = len(digits)
    if v == 0:
        digits, dp = "0", 1
    exp = dp - 1
    if exp < -4 or exp >= eprec:
        return sign + _e_form(digits, dp, len(digits) - 1, upper)
    return sign + _f_form(digits, dp, max(len(digits) - dp, 0))


def _e_form(digits: str, dp: int, prec: int, upper: bool) -> str:
    d = digits.ljust(prec + 1, "0")
    exp = dp - 1 if digits != "0" else 0
    s = d[0] + ("." + d[1 : prec + 1] if prec > 0 else "")
    e = "E" if upper else "e"
    return f"{s}{e}{'-' if exp < 0 else '+'}{abs(exp):02d}"


def _f_form(digits: str, dp: int, prec: int) -> str:
    if dp > 0:
        whole = digits[:dp].ljust(dp, "0")
        frac = digits[dp:]
    else:
        whole = "0"
        frac = "0" * (-dp) + digits
    frac = frac.ljust(prec, "0")[:prec]
    return whole + ("." + frac if prec > 0 else "")


def _sharp_float(num: str, verb: str, prec: int) -> str:
    """Go's ``#`` flag on a float: always a decimal point; ``%g`` keeps its trailing zeros."""
    sign = num[0] if num[0] in "+-" else ""
    body = num[len(sign) :]
    mant, sep, tail = body.partition("e") if "e" in body else body.partition("E")
    if verb.lower() == "g":
        digits = sum(c.isdigit() for c in mant.lstrip("0.")) if mant.strip("0.") else 1
        want = 6 if prec < 0 else (prec or 1)
        if "." not in mant:
            mant += "."
        if digits < want:
            mant += "0" * (want - digits)
    elif "." not in mant:
        mant += "."
    return sign + mant + sep + tail


def _parse_num(s: str, i: int) -> tuple[int | None, int]:
    j = i
    while j < len(s) and s[j].isdigit():
        j += 1
        if j - i > 6:  # Go: too large a width or precision is no number
            return None, j
    return (int(s[i:j]), j) if j > i else (None, j)


def sprintf(fmt: str, values: list[Any]) -> str:
    """``fmt.Sprintf(fmt, args...)`` with the arguments OPA makes of ``values``."""
    args = [go_value(v) for v in values]
    p = _Printer()
    n = len(fmt)
    i = 0
    argnum = 0
    reordered = False
    while i < n:
        j = fmt.find("%", i)
        if j < 0:
            p.write(fmt[i:])
            break
        p.write(fmt[i:j])
        i = j + 1
        f = p.f = _Flags()
        # flags
        while i < n and fmt[i] in "#0+- ":
            c = fmt[i]
            if c == "#":
                f.sharp = True
            elif c == "0":
                f.zero = not f.minus
            elif c == "+":
                f.plus = True
            elif c == "-":
                f.minus, f.zero = True, False
            else:
                f.space = True
            i += 1
        good = True
        after_index = False

        def index(i: int, argnum: int) -> tuple[int, int, bool, bool]:
            nonlocal reordered, good
            if i < n and fmt[i] == "[":
                reordered = True
                k = fmt.find("]", i + 1)
                if k < 0:
                    good = False
                    return argnum, i + 1, False, good
                num, end = _parse_num(fmt, i + 1)
                if num is None or end != k or not (1 <= num <= len(args)):
                    good = False
                    return argnum, k + 1, True, good
                return num - 1, k + 1, True, good
            return argnum, i, False, good

        argnum, i, after_index, _ = index(i, argnum)
        # width
        if i < n and fmt[i] == "*":
            i += 1
            wid = args[argnum] if argnum < len(args) else None
            argnum += 1
            if isinstance(wid, int) and not isinstance(wid, _Big) and -1_000_000 <= wid <= 1_000_000:
                f.wid = abs(wid)
                if wid < 0:
                    f.minus, f.zero = True, False
            else:
                p.write("%!(BADWIDTH)")
            after_index = False
        else:
            f.wid, i = _parse_num(fmt, i)
            if after_index and f.wid is not None:
                good = False
        # precision
        if i + 1 < n and fmt[i] == ".":
            i += 1
            if after_index:
                good = False
            argnum, i, after_index, _ = index(i, argnum)
            if i < n and fmt[i] == "*":
                i += 1
                prec = args[argnum] if argnum < len(args) else None
                argnum += 1
                if isinstance(prec, int) and not isinstance(prec, _Big) and 0 <= prec <= 1_000_000:
                    f.prec = prec
                else:
                    if not (isinstance(prec, int) and not isinstance(prec, _Big) and prec < 0):
                        p.write("%!(BADPREC)")
                after_index = False
            else:
                f.prec, i = _parse_num(fmt, i)
                if f.prec is None:
                    f.prec = 0
        if not after_index:
            argnum, i, after_index, _ = index(i, argnum)
        if i >= n:
            p.write("%!(NOVERB)")
            break
        verb = fmt[i]
        i += 1
        if verb == "%":
            p.write("%")
        elif not good:
            p.write(f"%!{verb}(BADINDEX)")
        elif argnum >= len(args):
            p.write(f"%!{verb}(MISSING)")
        else:
            if verb == "v":
                f.sharp_v, f.sharp = f.sharp, False
                f.plus_v, f.plus = f.plus, False
            p.print_arg(args[argnum], verb)
            argnum += 1
    if not reordered and argnum < len(args):
        p.f = _Flags()
        p.write("%!(EXTRA ")
        for k, arg in enumerate(args[argnum:]):
            if k:
                p.write(", ")
            p.write(_type(arg) + "=")
            p.print_arg(arg, "v")
        p.write(")")
    return "".join(p.buf)
