"""OPA built-ins the Rego engine lacks, as extensions: pure functions of their arguments, written
to give OPA's results (checked against OPA in tests/test_policy_opa.py)."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Callable
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
}
