"""How a platform's real image introduces itself on the wire: SSH version string, algorithm lists,
host key type and login banner; TLS versions and the User-Agent rule of its HTTPS interface; the
form of its serial numbers and MAC addresses.

All of it is data from the platform folder (``platform.toml``: the ``[ssh]``, ``[https]`` and
``[facts]`` tables); the ``mgmtbench serve`` flags (``--kex``, ``--host-key``, ``--tls-versions``,
...) override the platform's defaults.
"""

from __future__ import annotations

import hashlib
import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

#: TLS version names as ``platform.toml`` and ``--tls-versions`` give them.
TLS_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


@dataclass(frozen=True)
class SshIdentity:
    """What the SSH server offers when not told otherwise (``[ssh]``; None: asyncssh's list)."""

    #: The software version after ``SSH-2.0-`` in the identification string.
    version: str = "mgmtbench"
    #: The host key type generated (a key of :data:`~mgmtbench.emulator.options.HOST_KEY_TYPES`).
    host_key: str = "ed25519"
    kex: tuple[str, ...] | None = None
    ciphers: tuple[str, ...] | None = None
    macs: tuple[str, ...] | None = None
    host_key_algs: tuple[str, ...] | None = None


@dataclass(frozen=True)
class HttpsIdentity:
    """The HTTPS interface (``[https]``): TLS versions offered, in order, and the User-Agent
    prefix that requests to ``/admin/`` must carry (None: any agent)."""

    tls_versions: tuple[str, ...] = ("TLSv1.3",)
    user_agent: str | None = None


@dataclass(frozen=True)
class FactsIdentity:
    """How a device's serial number and base MAC address look (``[facts]``): Cisco's serial is
    a 3-letter site code, the year (since 1996) and week of manufacture, and 4 characters; the
    MAC address starts with one of the vendor's OUIs (dotted, ``00a7.42``)."""

    serial_site: str = "FDO"
    mac_oui: str = "00a7.42"
    #: Where the platform's transcripts print module serials that are not Cisco's ``SN: ...``
    #: (an Arista power supply's, a Juniper transceiver's): regular expressions whose group
    #: ``sn`` is one; :func:`unique_serials` makes each the device's own.
    module_serials: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlatformIdentity:
    """A platform's :class:`SshIdentity`, :class:`HttpsIdentity` and :class:`FactsIdentity`."""

    ssh: SshIdentity = SshIdentity()
    https: HttpsIdentity = HttpsIdentity()
    facts: FactsIdentity = FactsIdentity()


def load_identity(raw: Mapping[str, object]) -> PlatformIdentity:
    """The identity in a parsed ``platform.toml`` (ValueError naming a bad key)."""
    ssh = _table(raw, "ssh", {"version", "host_key", "kex", "ciphers", "macs", "host_key_algs"})
    https = _table(raw, "https", {"tls_versions", "user_agent"})
    facts = _table(raw, "facts", {"serial_site", "mac_oui", "module_serials"})
    tls = _names(https.get("tls_versions")) or HttpsIdentity.tls_versions
    unknown = [v for v in tls if v not in TLS_VERSIONS]
    if unknown:
        raise ValueError(f"[https] tls_versions {unknown} (known: {sorted(TLS_VERSIONS)})")
    site = str(facts.get("serial_site", FactsIdentity.serial_site))
    oui = str(facts.get("mac_oui", FactsIdentity.mac_oui)).lower()
    if not re.fullmatch(r"[A-Z]{3}", site):
        raise ValueError(f"[facts] serial_site {site!r} (three capital letters, e.g. 'FDO')")
    if not re.fullmatch(r"[0-9a-f]{4}\.[0-9a-f]{2}", oui):
        raise ValueError(f"[facts] mac_oui {oui!r} (dotted, e.g. '00a7.42')")
    agent = https.get("user_agent")
    return PlatformIdentity(
        ssh=SshIdentity(
            version=str(ssh.get("version", SshIdentity.version)),
            host_key=str(ssh.get("host_key", SshIdentity.host_key)),
            kex=_names(ssh.get("kex")), ciphers=_names(ssh.get("ciphers")),
            macs=_names(ssh.get("macs")), host_key_algs=_names(ssh.get("host_key_algs"))),
        https=HttpsIdentity(tls_versions=tls, user_agent=None if agent is None else str(agent)),
        facts=FactsIdentity(serial_site=site, mac_oui=oui,
                            module_serials=_serial_patterns(facts.get("module_serials"))),
    )


def _serial_patterns(value: object) -> tuple[str, ...]:
    """``[facts] module_serials``, each a regular expression with a group ``sn``."""
    patterns = _names(value) or ()
    for pattern in patterns:
        try:
            compiled = re.compile(pattern, re.MULTILINE)
        except re.error as exc:
            raise ValueError(f"[facts] module_serials {pattern!r}: {exc}") from None
        if "sn" not in compiled.groupindex:
            raise ValueError(f"[facts] module_serials {pattern!r}: no group (?P<sn>...)")
    return patterns


def _table(raw: Mapping[str, object], name: str, known: set[str]) -> Mapping[str, object]:
    table = raw.get(name, {})
    if not isinstance(table, Mapping):
        raise ValueError(f"[{name}] is not a table")
    unknown = set(table) - known
    if unknown:
        raise ValueError(f"[{name}] {sorted(unknown)} (known: {sorted(known)})")
    return table


def _names(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise ValueError(f"{value!r}: give a non-empty list of names")
    return tuple(str(v) for v in value)


def serial_number(site: str, digest: str) -> str:
    """A Cisco-form serial (``FDO2213A0PN``: site, year since 1996, week, 4 characters) from a
    hex ``digest``: made in 2017-2023 (years 21-27), weeks 01-52."""
    value = int(digest[:16], 16)
    year = 21 + value % 7
    week = 1 + (value // 7) % 52
    alphabet = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"  # no I or O, as Cisco's suffixes
    rest, suffix = value // (7 * 52), ""
    for _ in range(4):
        rest, index = divmod(rest, len(alphabet))
        suffix += alphabet[index]
    return f"{site}{year:02d}{week:02d}{suffix}"


def mac_address(oui: str, digest: str) -> str:
    """A dotted MAC address in ``oui`` (``00a7.42``) from a hex ``digest``."""
    tail = digest[:6].lower()
    return f"{oui}{tail[:2]}.{tail[2:]}"


# MAC addresses as transcripts print them: dotted (Cisco, Arista: ``00a7.4201.1a2b``) and colon
# (Junos: ``00:05:86:71:1a:2b``), split after the OUI (the first three bytes).
_MAC_DOTTED = re.compile(r"\b([0-9a-fA-F]{4}\.[0-9a-fA-F]{2})([0-9a-fA-F]{2}\.[0-9a-fA-F]{4})\b")
_MAC_COLON = re.compile(r"(?<![:\w])((?:[0-9a-fA-F]{2}:){2}[0-9a-fA-F]{2}):"
                        r"((?:[0-9a-fA-F]{2}:){2}[0-9a-fA-F]{2})(?![:\w])")


def unique_macs(text: str, key: str) -> str:
    """``text`` with every unicast MAC address made this device's own: the same OUI (the
    vendor), the last three bytes from ``key`` (a device's own, such as its base MAC) and the
    address, so two devices never share one and each address reads the same in every output of
    one device. Broadcast and multicast addresses (``ffff.ffff.ffff``, ``0100.5e..``) are left
    as they are, as is the all-zero one."""
    def tail(oui: str, rest: str, sep: str) -> str | None:
        hexes = (oui + rest).replace(".", "").replace(":", "")
        if int(hexes[:2], 16) & 1 or set(hexes) <= {"0"}:  # group bit, or no address
            return None
        new = hashlib.sha256(f"{key} {hexes.lower()}".encode()).hexdigest()[:6]
        new = new.upper() if rest.isupper() else new
        return f"{new[:2]}.{new[2:]}" if sep == "." else f"{new[:2]}:{new[2:4]}:{new[4:]}"

    def dotted(found: re.Match[str]) -> str:
        made = tail(found.group(1), found.group(2), ".")
        return found.group(0) if made is None else found.group(1) + made

    def colon(found: re.Match[str]) -> str:
        made = tail(found.group(1), found.group(2), ":")
        return found.group(0) if made is None else f"{found.group(1)}:{made}"

    return _MAC_COLON.sub(colon, _MAC_DOTTED.sub(dotted, text))


# A module's serial in Cisco's inventory (``SN: FOC24327ZKD``; the chassis's own is a placeholder).
_MODULE_SERIAL = re.compile(r"(?<=SN: )([A-Z0-9]{7})([A-Z0-9]{2,})\b")
_DIGITS, _LETTERS = "0123456789", "ABCDEFGHJKLMNPQRSTUVWXYZ"  # no I or O, as Cisco's


def unique_serials(text: str, key: str, patterns: tuple[str, ...] = ()) -> str:
    """``text`` with every module serial made this device's own: a Cisco inventory's (``SN:
    ART2433F1KQ``: the first seven characters, factory, year and week, kept) and those the
    platform's ``patterns`` find (group ``sn``: the first three kept), each character after
    them a digit for a digit and a letter for a letter, from ``key`` and the serial, so two
    devices' power supplies and transceivers never share a serial."""
    text = _MODULE_SERIAL.sub(lambda found: found.group(1) + _own(found.group(2), key,
                                                                  found.group(1)), text)
    for pattern in patterns:
        text = re.sub(pattern, lambda found: _own_group(found, key), text, flags=re.MULTILINE)
    return text


def _own(rest: str, key: str, site: str) -> str:
    digest = hashlib.sha256(f"{key} {site}{rest}".encode()).digest()
    return "".join((_DIGITS if c.isdigit() else _LETTERS)[b % (10 if c.isdigit() else 24)]
                   for c, b in zip(rest, digest, strict=False))


def _own_group(found: re.Match[str], key: str) -> str:
    """The match with its ``sn`` group made the device's own (its first three kept)."""
    whole, start, end = found.group(0), found.start("sn") - found.start(), \
        found.end("sn") - found.start()
    serial = whole[start:end]
    return whole[:start] + serial[:3] + _own(serial[3:], key, serial[:3]) + whole[end:]


def made_own(text: str, mac: str, serial: str, serials: tuple[str, ...] = ()) -> str:
    """``text`` (a transcript) with its MAC addresses and module serials made the device's own
    (:func:`unique_macs` keyed by its base ``mac``, :func:`unique_serials` by its ``serial``,
    with the platform's ``serials`` patterns)."""
    return unique_serials(unique_macs(text, mac), serial, serials)


_IOS_BANNER = re.compile(r"^banner login \^C(.*?)\^C", re.MULTILINE | re.DOTALL)
_LINE_BANNER = re.compile(r"^banner login (.*)$", re.MULTILINE)


def login_banner(config: str) -> str:
    """The ``banner login`` of a running configuration, as the device sends it before the
    password (SSH_MSG_USERAUTH_BANNER): IOS's delimited form (``banner login ^C...^C``) or the
    ASA's one line per ``banner login`` command; "" when there is none."""
    found = _IOS_BANNER.search(config)
    if found is not None:
        return found.group(1).strip("\n") + "\n"
    lines = _LINE_BANNER.findall(config)
    return "".join(line + "\n" for line in lines)


def tls_range(versions: tuple[str, ...]) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    """The lowest and highest of ``versions`` (names of :data:`TLS_VERSIONS`)."""
    chosen = sorted(TLS_VERSIONS[v] for v in versions)
    return chosen[0], chosen[-1]
