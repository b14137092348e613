"""TLS for the HTTPS API: a throwaway CA (trustme) whose certificate clients can verify against."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import trustme

from mgmtbench.emulator.device.identity import TLS_VERSIONS, tls_range
from mgmtbench.errors import UsageError
from mgmtbench.privatefiles import private_folder, replace_private


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of one run: the CA to trust, and the server's certificate chain and key."""

    ca: Path
    cert: Path
    key: Path


def make_tls_files(directory: Path, names: Iterable[str]) -> TlsFiles:
    """Generate a CA and a server certificate valid for ``names`` (IP addresses or DNS names)."""
    private_folder(directory)
    ca = trustme.CA(organization_name="mgmtbench emulator CA")
    unique = list(dict.fromkeys(["127.0.0.1", "localhost", *names]))
    server = ca.issue_cert(*unique, common_name=unique[0])
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    # Each file 0600 from the start (the key is never readable by others, not even briefly).
    replace_private(files.ca, ca.cert_pem.bytes())
    replace_private(files.key, server.private_key_pem.bytes())
    replace_private(files.cert, b"".join(blob.bytes() for blob in server.cert_chain_pems))
    return files


def server_context(files: TlsFiles, alpn: Iterable[str] = ("h2", "http/1.1"),
                   versions: Iterable[str] = ("TLSv1.3",)) -> ssl.SSLContext:
    """The TLS ``versions`` given (names of :data:`TLS_VERSIONS`: a device's, from its
    platform; TLS 1.3 only by default, as the edge proxy), ALPN for HTTP/2, session resumption
    (TLS 1.3 tickets, TLS 1.2 tickets), no compression."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version, context.maximum_version = tls_range(tuple(versions))
    context.options |= ssl.OP_NO_COMPRESSION
    context.set_alpn_protocols(list(alpn))
    context.load_cert_chain(str(files.cert), str(files.key))
    context.num_tickets = 2  # TLS 1.3 session tickets, so clients can resume
    return context


#: How ``mgmtbench serve --user-agent-rule`` treats the platform's User-Agent rule.
USER_AGENT_RULES = ("any", "device")


def check_https(versions: Iterable[str], user_agent_rule: str) -> None:
    """A one-line :class:`UsageError` for an unknown TLS version or User-Agent rule."""
    for version in versions:
        if version not in TLS_VERSIONS:
            raise UsageError(f"unknown TLS version {version!r} (--tls-versions): choose from "
                             f"{', '.join(TLS_VERSIONS)}")
    if user_agent_rule not in USER_AGENT_RULES:
        raise UsageError(f"--user-agent-rule {user_agent_rule!r}: choose "
                         f"{' or '.join(USER_AGENT_RULES)}")


def is_ip(name: str) -> bool:
    """Whether ``name`` is an IP address rather than a DNS name."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
