"""Where the platform's requests to model endpoints may go.

Anyone who may edit endpoints chooses the base URL the workers send requests to (and read replies from). So a
base URL must be ``http`` or ``https``, and every address its host resolves to must be a public one: loopback
(``127.0.0.1``, ``[::1]``), link-local (``169.254.169.254``, a cloud's metadata service), private (``10/8``,
``192.168/16``…), shared, reserved and unspecified (``0.0.0.0``) addresses are refused unless they lie in a
network the operator allows with ``MODEL_ENDPOINT_ALLOWED_NETWORKS`` (comma-separated addresses or CIDR
networks; ``make run``, the tests and the benches allow ``127.0.0.0/8,::1`` for the bundled local model and the
loopback stub).

The check is made on the resolved addresses, twice: when an endpoint is saved (:func:`url_problem`) and when a
connection is opened (:func:`checked_addresses`, called by the HTTP client's network backend, which then
connects to the checked address itself), so a name that later resolves elsewhere is caught too.
"""
from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
SETTING = "MODEL_ENDPOINT_ALLOWED_NETWORKS"


class AddressRefused(ConnectionError):
    """The endpoint's host is (or resolves to) an address requests may not go to."""


@lru_cache(maxsize=8)
def _parse_networks(values: tuple[str, ...]) -> tuple[Network, ...]:
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip().strip("[]"), strict=False))
        except ValueError:
            raise ImproperlyConfigured(f"{SETTING}: {value!r} is not an address or a network (e.g. 127.0.0.0/8, "
                                       "::1, 10.1.2.0/24)") from None
    return tuple(networks)


def allowed_networks() -> tuple[Network, ...]:
    """The non-public networks the operator allows endpoints to reach (``MODEL_ENDPOINT_ALLOWED_NETWORKS``)."""
    return _parse_networks(tuple(getattr(settings, SETTING, None) or ()))


def _kind(ip: IPAddress) -> str:
    for kind in ("loopback", "link_local", "private", "multicast", "unspecified", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return "non-public"


NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_ipv4(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 address carries, judged as that address: IPv4-mapped (``::ffff:a.b.c.d``),
    IPv4-compatible (``::a.b.c.d``), NAT64 (``64:ff9b::/96``, and the local-use ``64:ff9b:1::/48``), 6to4
    (``2002::/16``) and Teredo's client; ``ip`` itself otherwise (``::`` and ``::1`` are themselves)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return ip
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    last32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in NAT64[0] or (ip in NAT64[1] and int(ip) >> 32 & 0xFFFF == 0):
        return last32
    if ip in NAT64[1]:
        return ip  # another layout of the local-use prefix: non-global as it is
    if ip in IPV4_COMPATIBLE and int(ip) > 1:
        return last32
    return ip


def address_problem(address: str, host: str = "") -> str:
    """Why requests may not go to ``address`` (which ``host`` resolved to, if given; "" when they may)."""
    written = ipaddress.ip_address(address.split("%", 1)[0])
    ip = embedded_ipv4(written)
    if ip.is_global and not ip.is_multicast:
        return ""
    if any(ip.version == net.version and ip in net for net in allowed_networks()):
        return ""
    what = f"{host} resolves to {address}, a" if host and host != address else f"{address} is a"
    if ip != written:
        what = f"{what}n IPv6 form of {ip}, a"
    return (f"{what} {_kind(ip)} address: model endpoints may only be reached at public addresses unless "
            f"the operator allows the network in {SETTING} (e.g. 127.0.0.0/8 for a model on this machine)")


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (an address resolves to itself); OSError when it does not resolve."""
    infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def checked_addresses(host: str, port: int) -> list[str]:
    """The addresses of ``host``, all of them allowed; AddressRefused (naming the host) if any is not, so that
    a name with one public and one private address cannot be used to reach the private one."""
    addresses = resolve(host, port)
    for address in addresses:
        if problem := address_problem(address, host.strip("[]")):
            raise AddressRefused(problem)
    return addresses


def url_problem(base_url: str) -> str:
    """Why an endpoint may not have ``base_url`` ("" when it may). A host that does not resolve now is not
    refused here (the pre-flight check says so, and the connection is checked again when it is opened)."""
    try:
        parts = urlsplit(base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        return f"not a valid URL: {exc}"
    if parts.scheme not in ("http", "https"):
        return f"the base URL must start with http:// or https://, not {parts.scheme or 'nothing'}"
    if not parts.hostname:
        return "the base URL names no host"
    if parts.username or parts.password:
        return "the base URL may not carry a user name or password (name the key's variable instead)"
    try:
        checked_addresses(parts.hostname, port)
    except AddressRefused as exc:
        return str(exc)
    except (OSError, UnicodeError):
        return ""
    return ""
