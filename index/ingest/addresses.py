"""Reading a link before anything is sent: only plain http(s) links without credentials are
taken, split into what a request needs (a `Target`), the host put in the ASCII form sent on the
wire, and the test of whether an IP address is on the public internet that every address a host
resolves to must pass. Nothing here touches the network: fetch.py resolves the host and connects.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

from index.errors import FetchRefused
from index.messages.catalogue import N_

__all__ = ["DEFAULT_PORTS", "INVALID", "NOT_WEB", "Target", "is_public", "parse_link"]

DEFAULT_PORTS = {"http": 80, "https": 443}

_SHARED = ipaddress.IPv4Network("100.64.0.0/10")  # carrier-grade NAT; not in is_private on 3.11
_IETF = ipaddress.IPv4Network("192.0.0.0/24")  # protocol assignments; only parts are is_private
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # well-known NAT64 prefix; embeds an IPv4 address

_HOST_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?")

NOT_WEB = N_(
    "Only http and https links can be added; paste a web address that starts with https://."
)
INVALID = N_("That link is not a valid web address; check it and try again.")

_IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Target:
    url: str  # without the fragment, which is never sent to a server
    scheme: str
    host: str  # ASCII (IDNA) host name or IP literal, without brackets
    port: int
    path: str  # request target: path and query, percent-encoded


def parse_link(url: str) -> Target:
    """Split a link into what the request needs, refusing anything that is not plain http(s)."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise FetchRefused(NOT_WEB)
        raw_host, port = parts.hostname, parts.port  # .port raises ValueError when out of range
    except ValueError as exc:  # e.g. "http://[::1" or a port of 99999
        raise FetchRefused(INVALID) from exc
    if parts.username is not None or parts.password is not None:
        # Credentials would be sent to the site and kept in the stored URL.
        raise FetchRefused(
            N_(
                "Links with a user name or password cannot be added; "
                "link to the public page instead."
            )
        )
    if not raw_host:
        raise FetchRefused(INVALID)
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    if parts.query:
        path += "?" + quote(parts.query, safe="/?%:@!$&'()*+,;=-._~")
    return Target(
        url=urlunsplit((scheme, parts.netloc, parts.path, parts.query, "")),
        scheme=scheme,
        host=_ascii_host(raw_host),
        port=port or DEFAULT_PORTS[scheme],
        path=path,
    )


def _ascii_host(host: str) -> str:
    """The host as sent on the wire: an IP literal, or the IDNA form of an (international) name."""
    if ":" in host:  # only IPv6 literals contain a colon once urlsplit removed the port
        try:
            ipaddress.IPv6Address(host)
        except ValueError as exc:
            raise FetchRefused(INVALID) from exc
        return host
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise FetchRefused(INVALID) from exc
    # Also keeps control characters and spaces out of the lookup and out of our messages.
    if not _HOST_NAME.fullmatch(ascii_host):
        raise FetchRefused(INVALID)
    return ascii_host


def is_public(address: _IPAddress) -> bool:
    """Whether `address` is on the public internet, looking through IPv4 embedded in IPv6."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
        if embedded is not None:
            # Packets to these go to the IPv4 address, so it alone decides.
            return is_public(embedded)
        tunnelled = [address.sixtofour, *(address.teredo or ())]
        if any(v4 is not None and not is_public(v4) for v4 in tunnelled):
            return False
        if address.is_site_local:
            return False
    elif address in _SHARED or address in _IETF:
        return False
    # is_global alone misses multicast, and its exact meaning has changed between Python versions.
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )
