"""Transcripts: what a device prints for each command, per platform.

A platform is a folder ``transcripts/<platform>/`` holding ``platform.toml`` (how the device words its
errors and prompts) and one ``.txt`` file per command: the file name is the command's words joined by
``_`` (``show_ip_route.txt`` answers ``show ip route``). Text may use the placeholders
``{{hostname}}``, ``{{serial}}``, ``{{mac}}`` and ``{{mgmt_ip}}``, filled per device.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from mgmtbench.emulator.device.identity import PlatformIdentity, load_identity
from mgmtbench.errors import TranscriptError

PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
#: What saving the configuration prints unless a platform says otherwise (IOS's words).
#: IOS's line above ``show startup-config``'s configuration.
STARTUP_HEADER = "Using {size} out of {nvram} bytes\n"
SAVE_REPLY = "Building configuration...\n[OK]\n"
FACT_NAMES = frozenset({"hostname", "serial", "mac", "mgmt_ip"})
#: The device clock's placeholders (:mod:`.clock`): ``clock``, ``uptime``, ``restarted`` and the
#: ``uptime_*`` / ``time_*`` ones a platform declares in ``[clock.placeholders]``.
CLOCK_NAMES = re.compile(r"^(clock|uptime|restarted|uptime_\w+|time_\w+)$")
_PLATFORM_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_COMMAND_FILE = re.compile(r"^[a-z0-9][a-z0-9_-]*\.txt$")

CommandWords = tuple[str, ...]


@dataclass(frozen=True)
class PlatformClients:
    """How client libraries name the platform (``[clients]`` in ``platform.toml``; None: the
    library has no driver for it, and its adapter says so)."""

    netmiko_device_type: str | None = None
    scrapli_platform: str | None = None


@dataclass(frozen=True)
class PlatformStyle:
    """How a platform words errors, prompts and paging (from ``platform.toml``)."""

    name: str
    description: str
    invalid: str
    ambiguous: str
    incomplete: str
    more_prompt: str
    password_prompt: str
    bad_secret: str
    default_term_length: int
    default_term_width: int
    privileged: frozenset[CommandWords]
    paging: tuple[str, ...]
    config_banner: str = ""
    prompt_suffix: str = ""
    #: The hostname a device gets when none is given.
    default_hostname: str = ""
    #: Everyday show commands, in the order benchmarks cycle through them.
    show_commands: tuple[str, ...] = ()
    clients: PlatformClients = PlatformClients()
    #: The privilege level an SSH shell starts at: 15 lands at ``host#`` (an automation user at
    #: privilege 15), 1 at ``host>`` (``enable`` and its secret needed).
    login_privilege: int = 1
    #: The device file system that SCP, SFTP and ``dir`` serve (``flash:`` on IOS, ``disk0:`` on
    #: an ASA).
    file_system: str = "flash:"
    #: Which device's file commands (``copy``, ``more``, ``delete``, archive, ``configure
    #: replace``) it has, and worded how: a dialect of :mod:`.fileops` ("": only ``dir``).
    file_commands: str = ""
    #: What erases the ``--More--`` prompt after a key ("": CR, spaces over it, CR).
    more_erase: str = ""
    #: How the real image introduces itself: SSH, HTTPS, serial and MAC form (:mod:`.identity`).
    identity: PlatformIdentity = field(default_factory=PlatformIdentity)
    #: The output filters (``| include ...``) its show commands take (:mod:`filters`).
    filters: tuple[str, ...] = ()
    #: Commands that run another command (``write`` for ``write memory`` on IOS).
    aliases: Mapping[str, str] = field(default_factory=dict)
    #: The emulator's generated commands the platform has (``show users``).
    commands: tuple[str, ...] = ()
    #: Printed instead of ``incomplete`` when the line is one of these words alone (``show``).
    incomplete_hint: str = ""
    incomplete_hint_commands: frozenset[str] = frozenset()
    #: What ``?`` prints after words that match nothing.
    unrecognized: str = "% Unrecognized command\n"
    #: The line ``?`` prints above the exec commands on an empty line ("Exec commands:").
    exec_help_header: str = ""
    #: Prompts per mode: ``{host}`` the hostname, ``{user}`` who logged in, ``{mode}`` the
    #: configuration sub-mode (``config``, ``config-if``); ``prompt_suffix`` follows. Junos:
    #: ``\n{user}@{host}> `` and ``\n[{mode}]\n{user}@{host}# `` (the line above, ``[edit]``,
    #: is part of it).
    prompt_user: str = "{host}>"
    prompt_priv: str = "{host}#"
    prompt_config: str = "{host}({mode})#"
    #: ``{mode}`` at the top of configuration mode (Junos: ``edit``, for ``[edit]``; a session
    #: below it, ``[edit interfaces et-0/0/1]``, sets its own).
    config_mode: str = "config"
    #: Printed instead of ``invalid`` when the first word is no command (Junos's ``unknown
    #: command.``); ``invalid``, ``ambiguous`` and ``incomplete`` may use ``{caret}``,
    #: ``{command}``, ``{word}`` (the word at fault) and ``{token}`` (its index from 0).
    unknown_command: str = ""
    #: More commands that enter configuration mode (``configure`` on Junos and EOS) and that
    #: leave it (``exit configuration-mode``), and what leaving it prints.
    config_commands: tuple[str, ...] = ()
    config_exit_commands: tuple[str, ...] = ()
    config_exit_banner: str = ""
    #: What the paging command prints (``{value}``: the length set; EOS: ``Pagination
    #: disabled.``), the commands that set the terminal width and what they print.
    paging_reply: str = ""
    width: tuple[str, ...] = ("terminal width <0-512>",)
    width_reply: str = ""
    #: Commands that only print a fixed text (Junos's ``set cli complete-on-space off``).
    replies: Mapping[str, str] = field(default_factory=dict)
    #: Commands without an argument that turn paging off (the ASA's ``no terminal pager``).
    no_paging: tuple[str, ...] = ()
    #: What saving the configuration prints (``write memory``, ``copy running-config
    #: startup-config`` where the platform has no file commands of its own).
    save_reply: str = SAVE_REPLY
    #: Spaces per level of ``show running-config`` (IOS 1, NX-OS 2, EOS 3).
    config_indent: int = 1
    #: The platform's own configuration commands, from one module (:mod:`.dialects`; "":
    #: IOS-style configuration lines).
    dialect: str = ""
    #: What ``| json`` prints for a command without structured output
    #: (:mod:`mgmtbench.emulator.structured`).
    unconverted: str = "% This is an unconverted command\n"
    #: The platform's own HTTP APIs, modules of :mod:`mgmtbench.emulator.platformapi` (EOS's
    #: ``eapi``).
    apis: tuple[str, ...] = ()
    #: False: file commands ask no question (``copy``, ``delete``, ``configure replace`` on
    #: EOS), as IOS's do with ``file prompt quiet``.
    file_prompts: bool = True
    #: What ``show startup-config`` prints above the configuration (``{size}``: its bytes,
    #: ``{nvram}``: NVRAM's).
    startup_header: str = STARTUP_HEADER
    #: The platform's own NETCONF RPCs, a module of :mod:`mgmtbench.emulator.netconf` (Junos's
    #: ``junos``: ``get-software-information`` ...); "": the standard operations only.
    netconf_rpcs: str = ""

    @property
    def paging_off(self) -> str:
        """The platform's own command that turns paging off (``terminal length 0`` on IOS)."""
        return self.paging[0].split("<")[0] + "0"

    @property
    def width_511(self) -> str:
        """The platform's own command for a 511-column terminal (``terminal width 511``,
        Junos's ``set cli screen-width 511``), as automation libraries set it."""
        return self.width[0].split("<")[0] + "511"

    @property
    def has_enable(self) -> bool:
        """Whether user and privileged exec differ (IOS ``>``/``#``; not Junos)."""
        return self.prompt_user != self.prompt_priv

    @property
    def prompt_gap(self) -> str:
        """What the device prints before its prompt's line as part of the prompt (Junos's
        empty line: ``"\n"``)."""
        head, newline, _ = self.prompt_priv.rpartition("\n")
        return head + newline


@dataclass(frozen=True, eq=False)
class Platform:
    """A platform's style and its command transcripts (templates, not yet rendered)."""

    style: PlatformStyle
    transcripts: Mapping[CommandWords, str]

    @property
    def name(self) -> str:
        """The platform's name."""
        return self.style.name


@cache
def default_root() -> Path:
    """The transcripts folder: inside the installed package, else the repository root (found
    once: a configuration line asks for it, and resolving the path each time cost a quarter of
    the line's time)."""
    package = Path(__file__).resolve().parents[2]  # mgmtbench/ (this is emulator/device/)
    packaged = package / "transcripts"
    if packaged.is_dir():
        return packaged
    return package.parents[1] / "transcripts"  # src/mgmtbench -> the repository root


def available_platforms(root: Path | None = None) -> list[str]:
    """Names of the platforms found under ``root``."""
    base = root or default_root()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "platform.toml").is_file())


def render(template: str, facts: Mapping[str, str]) -> str:
    """Fill ``{{name}}`` placeholders from ``facts``."""
    return PLACEHOLDER.sub(lambda m: facts[m.group(1)], template)


def load_platform(name: str, root: Path | None = None) -> Platform:
    """Load (once) the platform ``name`` from ``root`` (default: :func:`default_root`)."""
    return _load_platform(name, (root or default_root()).resolve())


@cache
def _load_platform(name: str, root: Path) -> Platform:
    known = available_platforms(root)
    if not _PLATFORM_NAME.match(name) or name not in known:
        raise TranscriptError(
            f"unknown platform {name!r}: choose one of {', '.join(known) or '(none found)'} "
            f"(transcripts are read from {root})"
        )
    folder = root / name
    style = _load_style(folder / "platform.toml", name)
    transcripts: dict[CommandWords, str] = {}
    for path in sorted(folder.glob("*.txt")):
        if not _COMMAND_FILE.match(path.name):
            raise TranscriptError(f"{path}: transcript names are lowercase words joined by '_'")
        text = path.read_text(encoding="ascii", errors="strict")
        unknown = {n for n in PLACEHOLDER.findall(text)
                   if n not in FACT_NAMES and not CLOCK_NAMES.match(n)}
        if unknown:
            raise TranscriptError(f"{path}: unknown placeholder(s) {sorted(unknown)}")
        transcripts[tuple(path.name.removesuffix(".txt").split("_"))] = text
    if not transcripts:
        raise TranscriptError(f"{folder}: no transcripts (*.txt) found")
    return Platform(style=style, transcripts=transcripts)


def _load_style(path: Path, name: str) -> PlatformStyle:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TranscriptError(f"{path}: cannot read platform file ({exc})") from exc
    try:
        return PlatformStyle(
            name=name,
            description=str(raw.get("description", name)),
            invalid=str(raw["invalid"]),
            ambiguous=str(raw["ambiguous"]),
            incomplete=str(raw["incomplete"]),
            more_prompt=str(raw["more_prompt"]),
            password_prompt=str(raw["password_prompt"]),
            bad_secret=str(raw["bad_secret"]),
            default_term_length=int(raw["default_term_length"]),
            default_term_width=int(raw["default_term_width"]),
            privileged=frozenset(tuple(c.split()) for c in raw.get("privileged", [])),
            paging=tuple(str(c) for c in raw["paging"]),
            config_banner=str(raw.get("config_banner", "")),
            prompt_suffix=str(raw.get("prompt_suffix", "")),
            default_hostname=str(raw.get("default_hostname", "")),
            show_commands=tuple(str(c) for c in raw.get("show_commands", [])),
            clients=_load_clients(raw.get("clients", {})),
            login_privilege=check_login_privilege(int(raw.get("login_privilege", 1))),
            file_system=_file_system(str(raw.get("file_system", "flash:"))),
            file_commands=str(raw.get("file_commands", "")),
            more_erase=str(raw.get("more_erase", "")),
            identity=load_identity(raw),
            filters=tuple(str(f) for f in raw.get("filters", [])),
            aliases={str(k): str(v) for k, v in raw.get("aliases", {}).items()},
            commands=tuple(str(c) for c in raw.get("commands", [])),
            incomplete_hint=str(raw.get("incomplete_hint", "")),
            incomplete_hint_commands=frozenset(
                str(c) for c in raw.get("incomplete_hint_commands", [])),
            unrecognized=str(raw.get("unrecognized", "% Unrecognized command\n")),
            exec_help_header=str(raw.get("exec_help_header", "")),
            prompt_user=str(raw.get("prompt_user", "{host}>")),
            prompt_priv=str(raw.get("prompt_priv", "{host}#")),
            prompt_config=str(raw.get("prompt_config", "{host}({mode})#")),
            config_mode=str(raw.get("config_mode", "config")),
            unknown_command=str(raw.get("unknown_command", "")),
            config_commands=tuple(str(c) for c in raw.get("config_commands", [])),
            config_exit_commands=tuple(str(c) for c in raw.get("config_exit_commands", [])),
            config_exit_banner=str(raw.get("config_exit_banner", "")),
            paging_reply=str(raw.get("paging_reply", "")),
            width=tuple(str(c) for c in raw.get("width", ["terminal width <0-512>"])),
            width_reply=str(raw.get("width_reply", "")),
            replies={str(k): str(v) for k, v in raw.get("replies", {}).items()},
            no_paging=tuple(str(c) for c in raw.get("no_paging", [])),
            save_reply=str(raw.get("save_reply", SAVE_REPLY)),
            config_indent=int(raw.get("config_indent", 1)),
            dialect=str(raw.get("dialect", "")),
            unconverted=str(raw.get("unconverted", "% This is an unconverted command\n")),
            apis=tuple(str(a) for a in raw.get("apis", [])),
            file_prompts=bool(raw.get("file_prompts", True)),
            startup_header=str(raw.get("startup_header", STARTUP_HEADER)),
            netconf_rpcs=str(raw.get("netconf_rpcs", "")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise TranscriptError(f"{path}: missing or bad field {exc}") from exc


#: The login privilege levels a device can have: user exec and privileged exec.
LOGIN_PRIVILEGES = (1, 15)


def check_login_privilege(level: int) -> int:
    """``level`` if it is one of :data:`LOGIN_PRIVILEGES`, else :class:`ValueError`."""
    if level not in LOGIN_PRIVILEGES:
        raise ValueError(f"login_privilege {level} (choose 1 or 15)")
    return level


_FILE_SYSTEM = re.compile(r"^[a-z][a-z0-9-]{0,31}:$")


def _file_system(name: str) -> str:
    if not _FILE_SYSTEM.match(name):
        raise ValueError(f"file_system {name!r} (a lowercase name ending in ':', e.g. 'flash:')")
    return name


def _load_clients(raw: Mapping[str, object]) -> PlatformClients:
    known = {"netmiko_device_type", "scrapli_platform"}
    unknown = set(raw) - known
    if unknown:
        raise ValueError(f"[clients] {sorted(unknown)} (known: {sorted(known)})")
    return PlatformClients(**{k: str(v) for k, v in raw.items()})
