"""What ``?`` prints: the next words of a command with IOS's short description of each.

``show ?`` lists keywords and arguments one a line, two spaces in, the descriptions in a column;
``<cr>`` when the command can run as typed and ``|`` when an output filter may follow. ``sh?``
lists the words the partial word completes to, on lines no wider than the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mgmtbench.emulator.cli.filters import DESCRIPTIONS as FILTER_DESCRIPTIONS
from mgmtbench.emulator.cli.grammar import PIPE, Options

#: IOS's help text of each command word, by the full words that lead to it.
DESCRIPTIONS: dict[tuple[str, ...], str] = {
    ("clear",): "Reset functions",
    ("configure",): "Enter configuration mode",
    ("configure", "confirm"): "Confirm replacement of running-config with a new config file",
    ("configure", "replace"): "Replace the running-config with a new config file",
    ("configure", "revert"): "Parameters for reverting the configuration",
    ("configure", "terminal"): "Configure from the terminal",
    ("delete",): "Delete a file",
    ("copy",): "Copy from one file to another",
    ("dir",): "List files on a filesystem",
    ("disable",): "Turn off privileged commands",
    ("enable",): "Turn on privileged commands",
    ("exit",): "Exit from the EXEC",
    ("logout",): "Exit from the EXEC",
    ("more",): "Display the contents of a file",
    ("quit",): "Exit from the EXEC",
    ("show",): "Show running system information",
    ("show", "arp"): "ARP table",
    ("show", "asp"): "Accelerated Security Path information",
    ("show", "cdp"): "CDP information",
    ("show", "cdp", "neighbors"): "CDP neighbor entries",
    ("show", "clock"): "Display the system clock",
    ("show", "conn"): "Show connection information",
    ("show", "cpu"): "Display CPU usage information",
    ("show", "environment"): "Environmental monitor statistics",
    ("show", "failover"): "Show failover information",
    ("show", "hosts"): "IP domain-name, lookup style, nameservers, and host table",
    ("show", "interface"): "Show interface status and information",
    ("show", "interfaces"): "Interface status and configuration",
    ("show", "inventory"): "Show the physical inventory",
    ("show", "ip"): "IP information",
    ("show", "ip", "arp"): "IP ARP table",
    ("show", "ip", "interface"): "IP interface status and configuration",
    ("show", "ip", "interface", "brief"): "Brief summary of IP status and configuration",
    ("show", "ip", "ospf"): "OSPF information",
    ("show", "ip", "ospf", "neighbor"): "Neighbor list",
    ("show", "ip", "route"): "IP routing table",
    ("show", "lldp"): "LLDP information",
    ("show", "lldp", "neighbors"): "LLDP neighbor entries",
    ("show", "logging"): "Show the contents of logging buffers",
    ("show", "memory"): "Memory statistics",
    ("show", "privilege"): "Show current privilege level",
    ("show", "processes"): "Active process statistics",
    ("show", "processes", "cpu"): "Show CPU use per process",
    ("show", "processes", "memory"): "Show memory use per process",
    ("show", "route"): "Show the routing table",
    ("show", "running-config"): "Current operating configuration",
    ("show", "startup-config"): "Contents of startup configuration",
    ("show", "users"): "Display information about terminal lines",
    ("show", "version"): "System hardware and software status",
    ("show", "xlate"): "Show current translation information",
    ("terminal",): "Set terminal line parameters",
    ("terminal", "length"): "Set number of lines on a screen",
    ("terminal", "monitor"): "Copy debug output to the current terminal line",
    ("terminal", "no"): "Negate a command or set its defaults",
    ("terminal", "pager"): "Control page length for pagination",
    ("terminal", "width"): "Set width of the display terminal",
    ("verify",): "Verify a file",
    ("write",): "Write running configuration to memory, network, or terminal",
    ("write", "memory"): "Write to NV memory",
    ("do",): "To run exec commands in config mode",
    ("end",): "Exit from configure mode",
    ("hostname",): "Set system's network name",
    # Junos's `| display ...` (mgmtbench.emulator.structured.juniper_junos)
    ("|", "display", "xml"): "Show output as XML tags",
    ("|", "display", "json"): "Show output in JSON format",
    ("|", "display", "xml", "rpc"): "Show equivalent XML RPC request",
}
_ARGUMENTS = {"LINE": "Regular Expression", "WORD": ""}


def describe(words: tuple[str, ...]) -> str:
    """The help text of the word at the end of ``words``."""
    if len(words) == 2 and words[0] == PIPE:
        return FILTER_DESCRIPTIONS.get(words[1], "")
    if words == (PIPE,):
        return "Output modifiers"
    return DESCRIPTIONS.get(words, "")


def render(options: Options, width: int, header: str = "",
           words: Callable[[tuple[str, ...]], str] = describe,
           arguments: Mapping[str, str] | None = None) -> str:
    """The text of ``?`` for ``options`` (``width``: the terminal's, for ``sh?``); ``words``
    describes a keyword by the words that lead to it, ``arguments`` an argument's label
    (configuration mode has its own: :mod:`.confighelp`)."""
    if options.partial:
        names = list(options.keywords) + ([options.arg] if options.arg else [])
        return _columns(names, width or 80) + "\n"
    rows = [(k, words((*options.words, k.lower()))) for k in options.keywords]
    if options.arg is not None:
        rows.append((options.arg, (_ARGUMENTS if arguments is None else arguments)
                     .get(options.arg, "")))
    if options.pipe:
        rows.append((PIPE, describe((PIPE,))))
    if options.complete:
        rows.append(("<cr>", "<cr>"))
    pad = max((len(name) for name, _ in rows), default=0)
    lines = [f"  {name:<{pad}}  {text}".rstrip() for name, text in rows]
    return (f"{header}\n" if header else "") + "\n".join(lines) + "\n\n"


def _columns(names: list[str], width: int) -> str:
    """Words two spaces apart, as many a line as ``width`` holds."""
    lines: list[str] = []
    current = ""
    for name in names:
        piece = f"{name}  "
        if current and len(current) + len(piece) > width:
            lines.append(current)
            current = ""
        current += piece
    lines.append(current)
    return "\n".join(lines) + "\n"
