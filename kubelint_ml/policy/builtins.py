"""OPA built-ins the Rego engine lacks, as extensions: pure functions of their arguments, written
to give OPA's results (checked against OPA in tests/test_policy_opa.py)."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any


def _text(x: Any, name: str, n: int = 1) -> bytes:
    if not isinstance(x, str):
        raise TypeError(f"{name}: operand {n} must be string but got {type(x).__name__}")
    return x.encode()


def _digest(algorithm: str) -> Callable[[Any], str]:
    def digest(x: Any) -> str:
        return hashlib.new(algorithm, _text(x, f"crypto.{algorithm}")).hexdigest()

    return digest


def _hmac(algorithm: str) -> Callable[[Any, Any], str]:
    def mac(x: Any, key: Any) -> str:
        name = f"crypto.hmac.{algorithm}"
        return hmac.new(_text(key, name, 2), _text(x, name), algorithm).hexdigest()

    return mac


def _hmac_equal(a: Any, b: Any) -> bool:
    return hmac.compare_digest(_text(a, "crypto.hmac.equal"), _text(b, "crypto.hmac.equal", 2))


def _cidr(x: Any, n: int) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(_text(x, "net.cidr_intersects", n).decode(), strict=False)
    except ValueError as e:
        raise ValueError(f"net.cidr_intersects: {e}") from None


def _cidr_intersects(a: Any, b: Any) -> bool:
    x, y = _cidr(a, 1), _cidr(b, 2)
    return x.version == y.version and x.overlaps(y)  # type: ignore[arg-type]


def _num_and_unit(s: str) -> tuple[str, str]:
    """OPA's extractNumAndUnit: the number (digits, ``.``, a sign, an exponent) and the rest."""
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if not (c.isdigit() or c in ".+-eE"):
            break
        if c in "eE":
            if i == n - 1 or not (s[i + 1].isdigit() or s[i + 1] in "+-"):
                break
            if s[i + 1] in "+-":
                i += 1
            start = i + 1
            end = start
            while end < n and s[end].isdigit():
                end += 1
            if end - start > 6:
                raise ValueError("exponent too large")
        i += 1
    return s[:i], s[i:]


def _amount(num: str, name: str) -> Fraction:
    try:
        return Fraction(Decimal(num))
    except (InvalidOperation, ValueError):
        raise ValueError(f"{name}: could not parse amount to a number") from None


_BYTES = {"": 1}
for _i, _u in enumerate("kmgtpe", start=1):
    _BYTES[_u] = _BYTES[_u + "b"] = 1000**_i
    _BYTES[_u + "i"] = _BYTES[_u + "ib"] = 1024**_i


def _parse_bytes(x: Any) -> int:
    name = "units.parse_bytes"
    s = _text(x, name).decode().lower().replace('"', "")
    if " " in s:
        raise ValueError(f"{name}: spaces not allowed in resource strings")
    num, unit = _num_and_unit(s)
    if not num:
        raise ValueError(f"{name}: no byte amount provided")
    if unit not in _BYTES:
        raise ValueError(f"{name}: byte unit {unit} not recognized")
    return int(_amount(num, name) * _BYTES[unit])  # truncated, as big.Float.Int


_UNITS: dict[str, Fraction] = {"m": Fraction(0.001), "": Fraction(1), "M": Fraction(1000**2)}
for _i, _u in enumerate("kmgtpe", start=1):
    if _u != "m":
        _UNITS[_u] = _UNITS[_u.upper()] = Fraction(1000**_i)
    _UNITS[_u + "i"] = _UNITS[_u.upper() + "i"] = Fraction(1024**_i)


def _parse_units(x: Any) -> int | float:
    name = "units.parse"
    s = _text(x, name).decode().replace('"', "")
    if " " in s:
        raise ValueError(f"{name}: spaces not allowed in resource strings")
    num, unit = _num_and_unit(s)
    if not num:
        raise ValueError(f"{name}: no amount provided")
    if len(unit) > 1:
        unit = unit[0] + unit[1:].lower()
    if unit not in _UNITS:
        raise ValueError(f"{name}: unit {unit} not recognized")
    value = _amount(num, name) * _UNITS[unit]  # exact, as big.Rat (milli is the float64 0.001)
    if value.denominator == 1:
        return int(value)
    return float(round(Decimal(value.numerator) / Decimal(value.denominator), 10))


_SEMVER_ID = re.compile(r"^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$")


def _semver_is_valid(x: Any) -> bool:
    """OPA's semver.is_valid (its semver package: ``[v]major.minor.patch[-pre][+meta]``, each number
    an int64 as strconv.ParseInt reads it); false for anything but a string."""
    if not isinstance(x, str):
        return False
    version, _, meta = x.removeprefix("v").partition("+")
    version, _, pre = version.partition("-")
    parts = version.split(".", 2)
    if len(parts) != 3:
        return False
    for ident in (pre, meta):
        if ident and not _SEMVER_ID.match(ident):
            return False
    return all(re.fullmatch(r"[+-]?[0-9]+", part) and -(1 << 63) <= int(part) < (1 << 63) for part in parts)


# name -> (number of arguments, function)
EXTENSIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    "crypto.md5": (1, _digest("md5")),
    "crypto.sha1": (1, _digest("sha1")),
    "crypto.sha256": (1, _digest("sha256")),
    "crypto.hmac.md5": (2, _hmac("md5")),
    "crypto.hmac.sha1": (2, _hmac("sha1")),
    "crypto.hmac.sha256": (2, _hmac("sha256")),
    "crypto.hmac.sha512": (2, _hmac("sha512")),
    "crypto.hmac.equal": (2, _hmac_equal),
    "net.cidr_intersects": (2, _cidr_intersects),
    "units.parse_bytes": (1, _parse_bytes),
    "units.parse": (1, _parse_units),
    "semver.is_valid": (1, _semver_is_valid),
}
