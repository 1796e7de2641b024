"""Kubernetes CEL libraries beyond what cel-expr-python has, and Kyverno's offline ones.

Kubernetes (k8s.io/apiserver/pkg/cel/library): ``url``, ``ip``/``cidr``, ``semver``, regex
``find``/``findAll``, ``sets`` (``sets.contains``, ``sets.equivalent``, ``sets.intersects``).
URL, IP, CIDR and Semver values are distinct types (one-field protobuf messages, as the
Quantity), so that their methods type-check as in the API server.

Kyverno: ``resource.Get(apiVersion, resource, namespace, name)`` and
``resource.List(apiVersion, resource, namespace)`` read the objects of the run (as ``kyverno
apply`` does offline); ``parseServiceAccount(username)``.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

_TYPES = ("URL", "IP", "CIDR", "Semver")
_USES = re.compile(
    r"\b(url|isURL|ip|isIP|cidr|isCIDR|semver|isSemver|find|findAll|sets\.|parseServiceAccount|math\.|base64\.|cel\.bind)"
)
_RESOURCE = re.compile(r"\bresource\s*\.\s*(Get|List|get|list)\s*\(")


def uses_libraries(source: str) -> bool:
    return _USES.search(source) is not None or uses_resource(source)


def uses_resource(source: str) -> bool:
    return _RESOURCE.search(source) is not None


_CLASSES: dict[str, Any] = {}


def add_types(pool: Any) -> None:
    """Add the URL, IP, CIDR and Semver messages to ``pool`` (the Quantity's, engine.cel), once."""
    if _CLASSES:
        return
    from google.protobuf import descriptor_pb2, message_factory

    fd = descriptor_pb2.FileDescriptorProto(name="kubelint/libs.proto", package="kubernetes", syntax="proto3")
    for name in _TYPES:
        m = fd.message_type.add(name=name)
        m.field.add(name="value", number=1, type=9, label=1)  # string
    pool.AddSerializedFile(fd.SerializeToString())
    for n in _TYPES:
        _CLASSES[n] = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"kubernetes.{n}"))


# --- semver (blang/semver, as Kubernetes' library) -------------------------------

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


def _semver_normalize(v: str) -> str:
    v = v.removeprefix("v")
    m = re.match(r"^([0-9.]*)(.*)$", v)
    core, rest = (m.group(1), m.group(2)) if m else ("", v)
    parts = [p.lstrip("0") or "0" for p in core.split(".")] if core else []
    while len(parts) < 3:
        parts.append("0")
    return ".".join(parts) + rest


def _semver_key(v: str) -> tuple:
    m = _SEMVER.match(v)
    assert m is not None
    pre = m.group(4)
    pre_key: tuple = (
        (1,) if pre is None else (0, *[(0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")])
    )
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), pre_key)


def parse_semver(text: str, normalize: bool = False) -> str:
    v = _semver_normalize(text) if normalize else text
    if not _SEMVER.match(v):
        raise ValueError(f"invalid semver: {text}")
    return v


# --- URL (net/url.ParseRequestURI, as Kubernetes' library) -------------------------


def parse_url(text: str) -> str:
    if not text or not (text.startswith("/") or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text)):
        raise ValueError(f"URL parse error during conversion from string: {text}")
    if "#" in text or " " in text:
        raise ValueError(f"URL parse error during conversion from string: {text}")
    try:
        urlsplit(text)
    except ValueError as e:
        raise ValueError(f"URL parse error during conversion from string: {e}") from None
    return text


def _hostport(u: str) -> str:
    return urlsplit(u).netloc.rpartition("@")[2]


def _hostname(u: str) -> str:
    h = _hostport(u)
    if h.startswith("["):
        return h[1 : h.find("]")] if "]" in h else h
    return h.rsplit(":", 1)[0] if ":" in h else h


def _port(u: str) -> str:
    h = _hostport(u)
    if h.startswith("["):
        rest = h[h.find("]") + 1 :] if "]" in h else ""
        return rest[1:] if rest.startswith(":") else ""
    return h.rsplit(":", 1)[1] if ":" in h else ""


# --- IP / CIDR (netip, as Kubernetes' library: no zones, no IPv4-mapped IPv6) -----------


def parse_ip(text: str) -> Any:
    if "%" in text:
        raise ValueError(f"IP Address {text!r} with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        raise ValueError(f"IP Address {text!r} parse error during conversion from string") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return addr


def parse_cidr(text: str) -> Any:
    if "%" in text:
        raise ValueError(f"CIDR {text!r} with zone value is not allowed")
    try:
        addr, _, plen = text.partition("/")
        if not plen or not plen.isdigit():
            raise ValueError
        net = ipaddress.ip_interface(f"{parse_ip(addr)}/{int(plen)}")
    except ValueError:
        raise ValueError(f"network address parse error during conversion from string: {text!r}") from None
    return net


def _functions() -> list[Any]:
    from cel_expr_python import cel

    classes = _CLASSES
    T = cel.Type
    U, IP, C, S = (T(f"kubernetes.{n}") for n in _TYPES)
    Ls = T.List(T.STRING)

    def wrap(name: str, value: str) -> Any:
        return classes[name](value=value)

    def ok(fn: Any) -> Any:
        def test(*args: Any) -> bool:
            try:
                fn(*args)
            except ValueError:
                return False
            return True

        return test

    def fn(name: str, *overloads: tuple) -> list[tuple[str, Any]]:
        return [
            (
                name,
                cel.Overload(oid, ret, params, is_member=member, impl=impl)
                if impl
                else cel.Overload(oid, ret, params, is_member=member),
            )
            for oid, ret, params, member, impl in overloads
        ]

    def ip_of(v: Any) -> Any:
        return ipaddress.ip_address(v.value)

    def cidr_of(v: Any) -> Any:
        return ipaddress.ip_interface(v.value)

    def find(s: str, rx: str) -> str:
        m = re.search(_go_regex(rx), s)
        return m.group(0) if m else ""

    def find_all(s: str, rx: str, n: int = -1) -> list[str]:
        found = [m.group(0) for m in re.finditer(_go_regex(rx), s)]
        return found if n < 0 else found[:n]

    def query(v: Any) -> dict:
        return {k: list(vs) for k, vs in parse_qs(urlsplit(v.value).query, keep_blank_values=True).items()}

    def contains_ip(c: Any, ip: Any) -> bool:
        addr = parse_ip(ip) if isinstance(ip, str) else ip_of(ip)
        return addr in cidr_of(c).network

    def contains_cidr(c: Any, other: Any) -> bool:
        o = parse_cidr(other) if isinstance(other, str) else cidr_of(other)
        n = cidr_of(c).network
        return o.network.version == n.version and o.network.subnet_of(n)

    def sets(name: str, test: Any) -> list[tuple[str, Any]]:
        Ld = T.List(T.DYN)
        return fn(
            f"sets.{name}", (f"list_sets_{name}_list", T.BOOL, [Ld, Ld], False, lambda a, b: test(list(a), list(b)))
        )

    return [
        # regex
        fn("find", ("string_find_string", T.STRING, [T.STRING, T.STRING], True, find)),
        fn(
            "findAll",
            ("string_find_all_string", Ls, [T.STRING, T.STRING], True, find_all),
            ("string_find_all_string_int", Ls, [T.STRING, T.STRING, T.INT], True, find_all),
        ),
        # sets
        sets("contains", lambda a, b: all(x in a for x in b)),
        sets("equivalent", lambda a, b: all(x in a for x in b) and all(x in b for x in a)),
        sets("intersects", lambda a, b: any(x in a for x in b)),
        # url
        fn("url", ("string_to_url", U, [T.STRING], False, lambda s: wrap("URL", parse_url(s)))),
        fn("isURL", ("is_url_string", T.BOOL, [T.STRING], False, ok(parse_url))),
        fn("getScheme", ("url_get_scheme", T.STRING, [U], True, lambda v: urlsplit(v.value).scheme)),
        fn("getHost", ("url_get_host", T.STRING, [U], True, lambda v: _hostport(v.value))),
        fn("getHostname", ("url_get_hostname", T.STRING, [U], True, lambda v: _hostname(v.value))),
        fn("getPort", ("url_get_port", T.STRING, [U], True, lambda v: _port(v.value))),
        fn("getEscapedPath", ("url_get_escaped_path", T.STRING, [U], True, lambda v: urlsplit(v.value).path)),
        fn("getQuery", ("url_get_query", T.Map(T.STRING, Ls), [U], True, query)),
        # ip
        fn(
            "ip",
            ("string_to_ip", IP, [T.STRING], False, lambda s: wrap("IP", str(parse_ip(s)))),
            ("cidr_ip", IP, [C], True, lambda c: wrap("IP", str(cidr_of(c).ip))),
        ),
        fn("isIP", ("is_ip", T.BOOL, [T.STRING], False, ok(parse_ip))),
        fn("ip.isCanonical", ("ip_is_canonical", T.BOOL, [T.STRING], False, lambda s: str(parse_ip(s)) == s)),
        fn("family", ("ip_family", T.INT, [IP], True, lambda v: ip_of(v).version)),
        fn("isUnspecified", ("ip_is_unspecified", T.BOOL, [IP], True, lambda v: ip_of(v).is_unspecified)),
        fn("isLoopback", ("ip_is_loopback", T.BOOL, [IP], True, lambda v: ip_of(v).is_loopback)),
        fn(
            "isLinkLocalMulticast",
            (
                "ip_is_link_local_multicast",
                T.BOOL,
                [IP],
                True,
                lambda v: ip_of(v).is_multicast and ip_of(v).is_link_local or _ll_mcast(ip_of(v)),
            ),
        ),
        fn(
            "isLinkLocalUnicast",
            (
                "ip_is_link_local_unicast",
                T.BOOL,
                [IP],
                True,
                lambda v: ip_of(v).is_link_local and not ip_of(v).is_multicast,
            ),
        ),
        fn("isGlobalUnicast", ("ip_is_global_unicast", T.BOOL, [IP], True, lambda v: _global_unicast(ip_of(v)))),
        # cidr
        fn("cidr", ("string_to_cidr", C, [T.STRING], False, lambda s: wrap("CIDR", str(parse_cidr(s))))),
        fn("isCIDR", ("is_cidr", T.BOOL, [T.STRING], False, ok(parse_cidr))),
        fn(
            "containsIP",
            ("cidr_contains_ip_string", T.BOOL, [C, T.STRING], True, contains_ip),
            ("cidr_contains_ip_ip", T.BOOL, [C, IP], True, contains_ip),
        ),
        fn(
            "containsCIDR",
            ("cidr_contains_cidr_string", T.BOOL, [C, T.STRING], True, contains_cidr),
            ("cidr_contains_cidr", T.BOOL, [C, C], True, contains_cidr),
        ),
        fn("masked", ("cidr_masked", C, [C], True, lambda c: wrap("CIDR", str(cidr_of(c).network)))),
        fn("prefixLength", ("cidr_prefix_length", T.INT, [C], True, lambda c: cidr_of(c).network.prefixlen)),
        # semver
        fn(
            "semver",
            ("string_to_semver", S, [T.STRING], False, lambda s: wrap("Semver", parse_semver(s))),
            ("string_bool_to_semver", S, [T.STRING, T.BOOL], False, lambda s, n: wrap("Semver", parse_semver(s, n))),
        ),
        fn(
            "isSemver",
            ("is_semver_string", T.BOOL, [T.STRING], False, ok(parse_semver)),
            ("is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL], False, ok(parse_semver)),
        ),
        fn("major", ("semver_major", T.INT, [S], True, lambda v: _semver_key(v.value)[0])),
        fn("minor", ("semver_minor", T.INT, [S], True, lambda v: _semver_key(v.value)[1])),
        fn("patch", ("semver_patch", T.INT, [S], True, lambda v: _semver_key(v.value)[2])),
        # the runtime tells messages apart by kind only: the Quantity's implementations (engine.cel)
        # serve these overloads too, through compare_semver
        fn("isGreaterThan", ("semver_is_greater_than", T.BOOL, [S, S], True, None)),
        fn("isLessThan", ("semver_is_less_than", T.BOOL, [S, S], True, None)),
        fn("compareTo", ("semver_compare_to", T.INT, [S, S], True, None)),
        # Kyverno's user library
        fn("parseServiceAccount", ("parse_service_account", T.DYN, [T.STRING], False, _service_account)),
    ]


def compare_semver(a: Any, b: Any) -> int:
    x, y = _semver_key(a.value), _semver_key(b.value)
    return (x > y) - (x < y)


def functions() -> list[tuple[str, Any]]:
    """``(name, overload)`` pairs."""
    return [pair for group in _functions() for pair in group]


def resource_functions() -> list[Any]:
    from cel_expr_python import cel

    T = cel.Type

    def get(res: Any, api: str, resource: str, namespace: str, name: str) -> Any:
        for o in _listed(res, api, resource, namespace):
            if (o.get("metadata") or {}).get("name") == name:
                return o
        raise ValueError(f'{resource} "{name}" not found among the objects of the run')

    def listed(res: Any, api: str, resource: str, namespace: str) -> Any:
        return {"apiVersion": api, "kind": "List", "items": _listed(res, api, resource, namespace)}

    M = T.Map(T.STRING, T.DYN)
    out = []
    for name in ("Get", "get"):  # Kyverno's library has both spellings
        params = [M, T.STRING, T.STRING, T.STRING, T.STRING]
        out.append((name, cel.Overload(f"resource_{name}", T.DYN, params, is_member=True, impl=get)))
    for name in ("List", "list"):
        params = [M, T.STRING, T.STRING, T.STRING]
        out.append((name, cel.Overload(f"resource_{name}", T.DYN, params, is_member=True, impl=listed)))
    return out


def _listed(res: Any, api: str, resource: str, namespace: str) -> list:
    out = []
    for o in (res or {}).get("items") or []:
        if not isinstance(o, dict) or (api and o.get("apiVersion") != api):
            continue
        if (
            plural(str(o.get("kind") or "")) != resource.lower()
            and str(o.get("kind") or "").lower() != resource.lower()
        ):
            continue
        ns = str((o.get("metadata") or {}).get("namespace") or "default")
        if namespace and ns != namespace:
            continue
        out.append(o)
    return out


def plural(kind: str) -> str:
    """The resource name of a kind (``Pod`` -> ``pods``, ``NetworkPolicy`` -> ``networkpolicies``)."""
    k = kind.lower()
    if k.endswith("endpoints"):
        return k
    if k.endswith("y") and len(k) > 1 and k[-2] not in "aeiou":
        return k[:-1] + "ies"
    if k.endswith(("s", "x", "z", "ch", "sh")):
        return k + "es"
    return k + "s"


_RESOURCE_VALUES: dict[int, tuple[Any, dict]] = {}


def resource_value(ctx: Any) -> dict:
    """The ``resource`` variable: the objects of the run (one value per context, kept by identity)."""
    hit = _RESOURCE_VALUES.get(id(ctx))
    if hit is not None and hit[0] is ctx:
        return hit[1]
    value = {"items": list(ctx.objects)}
    _RESOURCE_VALUES.clear()
    _RESOURCE_VALUES[id(ctx)] = (ctx, value)
    return value


def _service_account(username: str) -> dict:
    parts = username.split(":")
    if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"]:
        return {"Namespace": parts[2], "Name": parts[3]}
    return {"Namespace": "", "Name": ""}


def _ll_mcast(a: Any) -> bool:
    if a.version == 4:
        return a in ipaddress.ip_network("224.0.0.0/24")
    return a in ipaddress.ip_network("ff02::/16")


def _global_unicast(a: Any) -> bool:
    if a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local:
        return False
    return not (a.version == 4 and a == ipaddress.ip_address("255.255.255.255"))


def _go_regex(rx: str) -> str:
    """RE2 syntax to Python's where they differ in ways policies use (named groups)."""
    return rx.replace("(?P<", "(?P<").replace("\\z", "\\Z")
