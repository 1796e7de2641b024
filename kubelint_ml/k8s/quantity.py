"""Kubernetes resource quantities, parsed exactly as apimachinery parses them.

The grammar, rounding (up to 1n, away from zero), the BinarySI cap at
2^63-1 and the canonical output form follow
``k8s.io/apimachinery/pkg/api/resource`` (quantity.go, suffix.go, amount.go),
including its int32 exponent arithmetic.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

from kubelint_ml.lazyre import LazyPattern
from kubelint_ml.records import Frozen

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "Quantity",
    "QuantityError",
    "format_bytes",
    "format_cpu",
    "is_placeholder",
    "milli_round_up",
    "parse_manifest_quantity",
    "parse_quantity",
]

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_NANO = Fraction(1, 10**9)
_MILLI = Fraction(1, 1000)
_MAX_ALLOWED = 2**63 - 1  # BinarySI values are capped here
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# Numbers with more digits, or decimal exponents beyond this, are refused
# instead of building huge integers (Go keeps a bare scale; no real manifest
# has them). Both stay well under Python's int/str conversion limit.
_MAX_DIGITS = 1000
_MAX_DECIMAL_EXPONENT = 1000


# A value a tool fills in before the object reaches the API server, so not judged as written:
# envsubst/sed/kustomize ($GPUS, ${GPUS}, PLACEHOLDER_GPUS, <gpus>), a shell default or a Terraform
# reference (${GPUS:-1}, ${var.gpus}); a Tekton parameter
# ($(params.gpus), $(params["gpus"])); an Argo Workflows or Go template parameter
# ({{inputs.parameters.mem}}, {{=asInt(inputs.parameters.n) * 2}}, "{{ .Values.gpus }}"); a GitHub
# Actions expression (${{ inputs.gpus }}). A delimited one may carry a unit ({{inputs.parameters.mem}}Gi).
PLACEHOLDER = LazyPattern(
    r"^(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[A-Z][A-Z0-9]*_[A-Z0-9_]+|<[^<>]+>"
    r"|(\$\{[A-Za-z_][^{}]*\}|\$\([A-Za-z_][^()]*\)|\$?\{\{[^{}]+\}\})([KMGTPE]i|[numkMGTPE])?)$"
)


def is_placeholder(value: object) -> bool:
    """``value`` is an unrendered placeholder (:data:`PLACEHOLDER`), surrounding spaces aside."""
    return isinstance(value, str) and PLACEHOLDER.match(value.strip()) is not None


class QuantityError(ValueError):
    """A value that Kubernetes would not accept as a resource quantity."""


class Quantity(Frozen):
    """A parsed quantity: its exact value and the format family it keeps."""

    value: Fraction
    format: str
    __slots__ = _fields = ("value", "format")

    def __init__(self, value: Fraction, format: str) -> None:
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "format", format)

    def canonical(self) -> str:
        """Kubernetes' canonical form (``CanonicalizeBytes``): "1024Mi" -> "1Gi"."""
        return _canonical(self.value, self.format)

    def is_integer(self) -> bool:
        return self.value.denominator == 1


# Same language as apimachinery's parseQuantityString scanner:
# sign, digits, optional "." and digits, suffix letters, optional sign, digits.
_QUANTITY_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_EXPONENT_RE = LazyPattern(r"[+-]?[0-9]+")

# suffix -> (base, exponent, format)
_SUFFIXES: dict[str, tuple[int, int, str]] = {
    "": (10, 0, DECIMAL_SI),
    "n": (10, -9, DECIMAL_SI),
    "u": (10, -6, DECIMAL_SI),
    "m": (10, -3, DECIMAL_SI),
    "k": (10, 3, DECIMAL_SI),
    "M": (10, 6, DECIMAL_SI),
    "G": (10, 9, DECIMAL_SI),
    "T": (10, 12, DECIMAL_SI),
    "P": (10, 15, DECIMAL_SI),
    "E": (10, 18, DECIMAL_SI),
    "Ki": (2, 10, BINARY_SI),
    "Mi": (2, 20, BINARY_SI),
    "Gi": (2, 30, BINARY_SI),
    "Ti": (2, 40, BINARY_SI),
    "Pi": (2, 50, BINARY_SI),
    "Ei": (2, 60, BINARY_SI),
}
_DECIMAL_SUFFIX_BY_EXP = {e: s for s, (b, e, _) in _SUFFIXES.items() if b == 10}
_BINARY_SUFFIX_BY_POWER = {e // 10: s for s, (b, e, _) in _SUFFIXES.items() if b == 2}

_ZERO = Quantity(Fraction(0), DECIMAL_SI)
_CACHE: dict[str, Quantity | str] = {}
_CACHE_LIMIT = 8192


def _i32(x: int) -> int:
    """Wrap to a signed 32-bit integer, as Go's int32 arithmetic does."""
    return (x + 2**31) % 2**32 - 2**31


def _round_up(value: Fraction, unit: Fraction) -> Fraction:
    """Round to a multiple of ``unit``, away from zero."""
    if unit.numerator == 1 and unit.denominator % value.denominator == 0:
        return value  # already a multiple (the usual case: whole numbers, millis)
    steps = value / unit
    if steps.denominator == 1:
        return value
    whole = math.ceil(steps) if steps > 0 else math.floor(steps)
    return whole * unit


def milli_round_up(value: Fraction) -> Fraction:
    """Round up (away from zero) to milli precision, as API defaulting does."""
    return _round_up(value, _MILLI)


def _pow10(exp: int) -> Fraction:
    return Fraction(10**exp) if exp >= 0 else Fraction(1, 10 ** (-exp))


def _decimal_value(negative: bool, digits: str, exp: int) -> Fraction:
    """sign * int(digits) * 10**exp, rounded up to 1n, refusing absurd exponents."""
    mantissa = int(digits) if digits else 0
    if mantissa == 0:
        return Fraction(0)
    if negative:
        mantissa = -mantissa
    if exp > _MAX_DECIMAL_EXPONENT:
        raise QuantityError(f"exponent too large (10^{exp})")
    if exp < -9 - len(digits):
        # Far below 1n: rounds up to exactly one nano unit.
        return _NANO if mantissa > 0 else -_NANO
    return _round_up(mantissa * _pow10(exp), _NANO)


_NUMBER_PREFIX_RE = LazyPattern(r"[+-]?[0-9]*(?:\.[0-9]*)?")
_SUFFIX_HINT = " (suffixes are case-sensitive: n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or e<exponent>)"


def _explain(text: str) -> str:
    """Why ``text`` does not match the quantity grammar."""
    if any(ch.isspace() for ch in text):
        return f"invalid quantity {text!r}: whitespace is not allowed"
    prefix = _NUMBER_PREFIX_RE.match(text)  # matches at least the empty string
    number = prefix.group() if prefix else ""
    rest = text[len(number) :]
    if any(ch in "0123456789" for ch in number) and rest[0] not in ".+-":
        return f"invalid quantity {text!r}: unknown suffix {rest!r}{_SUFFIX_HINT}"
    return f"invalid quantity {text!r}: not a number with an optional suffix (e.g. 500m, 2, 1.5Gi, 1e3)"


def _parse(text: str) -> Quantity:
    if not text:
        raise QuantityError("empty quantity")
    if text == "0":
        return _ZERO
    m = _QUANTITY_RE.fullmatch(text)
    if m is None:
        raise QuantityError(_explain(text))
    sign, int_part, denom, suffix = m.groups()
    denom = denom or ""
    negative = sign == "-"
    num = int_part.lstrip("0") or "0"

    entry = _SUFFIXES.get(suffix)
    if entry is not None:
        base, exponent, fmt = entry
    elif len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT_RE.fullmatch(suffix[1:]):
        digits = suffix[1:].lstrip("+-").lstrip("0")
        # Beyond 19 digits it is out of int64 range anyway (and int() refuses over 4300 digits).
        parsed = int(suffix[1:]) if len(digits) <= 19 else _INT64_MAX + 1
        if not _INT64_MIN <= parsed <= _INT64_MAX:
            raise QuantityError(f"invalid quantity {text!r}: exponent out of range")
        base, exponent, fmt = 10, _i32(parsed), DECIMAL_EXPONENT
    else:
        raise QuantityError(f"invalid quantity {text!r}: unknown suffix {suffix!r}{_SUFFIX_HINT}")

    # Fast path of ParseQuantity: exact int64 arithmetic, no rounding or cap.
    if base == 10:
        if 18 - (len(num) + len(denom)) >= 0:
            scale = _i32(exponent - len(denom))
            if scale >= -9:
                return Quantity(_decimal_value(negative, num + denom, scale), fmt)
    elif not denom and 15 - len(num) - exponent * 3 // 10 - 1 >= 0:
        result = int(num) << exponent
        if result <= _INT64_MAX:
            return Quantity(Fraction(-result if negative else result), fmt)

    # Slow path: arbitrary precision, round up to 1n, cap BinarySI.
    digits = int_part + denom
    if not digits:
        raise QuantityError(f"invalid quantity {text!r}: no digits in the number")
    if len(digits) > _MAX_DIGITS:
        raise QuantityError(f"invalid quantity: more than {_MAX_DIGITS} digits")
    if base == 10:
        inf_scale = _i32(len(denom) + _i32(-exponent))
        value = _decimal_value(negative, digits, -inf_scale)
    else:
        value = Fraction(int(digits) << exponent, 10 ** len(denom))
        if negative:
            value = -value
        value = _round_up(value, _NANO)
    if fmt == BINARY_SI:
        if abs(value) > _MAX_ALLOWED:
            value = Fraction(_MAX_ALLOWED if value > 0 else -_MAX_ALLOWED)
        if 0 < abs(value) < 1:
            fmt = DECIMAL_SI
    return Quantity(value, fmt)


def rational_lt(a: Fraction | int, b: Fraction | int) -> bool:
    """``a < b`` for two Fractions (or ints), as Fraction compares them, in integers: Fraction's own
    comparison first asks ``numbers.Rational`` (an ABC) about the other operand, a few times the cost."""
    return a.numerator * b.denominator < b.numerator * a.denominator


def parse_quantity(text: str) -> Quantity:
    """Parse like apimachinery's ``ParseQuantity``: no whitespace trimming."""
    if not isinstance(text, str):
        raise QuantityError(f"expected a quantity string, got {_type_name(text)}")
    hit = _CACHE.get(text)
    if hit is None:
        try:
            hit = _parse(text)
        except QuantityError as exc:
            hit = str(exc)
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[text] = hit
    if isinstance(hit, str):
        raise QuantityError(hit)
    return hit


# Go's strings.TrimSpace set (unicode.IsSpace), which differs from str.strip().
_GO_SPACE = (
    " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict) or hasattr(value, "keys"):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def _float_text(value: float) -> str:
    """The text Go's JSON encoder would write for a YAML float."""
    dec = Decimal(repr(value))
    if value == 0 or 1e-6 <= abs(value) < 1e21:
        return format(dec, "f")
    return repr(value)


def parse_manifest_quantity(value: object) -> Quantity:
    """Parse a quantity as the API server accepts it from a YAML/JSON manifest.

    Strings are trimmed (JSON decoding trims); YAML ints and floats are read
    as the decimal text of the number. Anything else is an error.
    """
    if isinstance(value, str):
        return parse_quantity(value.strip(_GO_SPACE))
    if isinstance(value, bool) or value is None:
        raise QuantityError(f"expected a quantity, got {_type_name(value)}")
    if isinstance(value, int):
        return parse_quantity(str(int(value)))
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise QuantityError(f"expected a quantity, got {value!r}")
        return parse_quantity(_float_text(value))
    raise QuantityError(f"expected a quantity, got {_type_name(value)}")


def _canonical(value: Fraction, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = DECIMAL_SI  # shown in decimal so no precision is lost
        else:
            mantissa, power = int(value), 0
            while abs(mantissa) >= 1024 and mantissa % 1024 == 0:
                mantissa //= 1024
                power += 1
            return f"{mantissa}{_BINARY_SUFFIX_BY_POWER.get(power, '')}"
    # value = mantissa * 10**exp with the exponent a multiple of 3, as large as possible
    rest = value.denominator
    for prime in (2, 5):
        while rest % prime == 0:
            rest //= prime
    if rest != 1:  # not a finite decimal: only possible for a hand-built Quantity
        value = _round_up(value, _NANO)
    num, den = value.numerator, value.denominator
    exp = 0
    while den != 1:
        num *= 10
        exp -= 1
        g = math.gcd(num, den)
        num //= g
        den //= g
    while num % 10 == 0:
        num //= 10
        exp += 1
    shift = exp % 3
    num *= 10**shift
    exp -= shift
    if fmt == DECIMAL_EXPONENT:
        return f"{num}e{exp}" if exp else str(num)
    # Go emits no suffix for an exponent it has no name for (above 10^18).
    return f"{num}{_DECIMAL_SUFFIX_BY_EXP.get(exp, '')}"


def _trim(value: Fraction, places: int = 2) -> tuple[str, bool]:
    """Decimal text with at most ``places`` decimals, and whether it is exact."""
    scaled = value * 10**places
    rounded = math.floor(scaled + Fraction(1, 2))
    text = format(Decimal(rounded).scaleb(-places), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text, rounded == scaled


def format_bytes(value: Fraction) -> str:
    """Human text for a byte amount: "512Mi", "1.5Gi", "100M", "500m bytes"."""
    value = Fraction(value)
    if value < 0:
        return "-" + format_bytes(-value)
    if value == 0:
        return "0"
    if value < 1024:
        if value.denominator == 1:
            return f"{value.numerator} bytes"
        return f"{_canonical(value, DECIMAL_SI)} bytes"
    power = 1
    while power < 6 and value >= 1024 ** (power + 1):
        power += 1
    text, exact = _trim(value / 1024**power)
    if exact:
        return f"{text}{_BINARY_SUFFIX_BY_POWER[power]}"
    if value.denominator == 1 and value % 1000 == 0:
        return _canonical(value, DECIMAL_SI)
    return f"~{text}{_BINARY_SUFFIX_BY_POWER[power]}"


def format_cpu(value: Fraction) -> str:
    """Human text for a cpu amount: "2", "500m", "1500m", "250u"."""
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return _canonical(value, DECIMAL_SI)
