"""``?`` and Tab in configuration mode: what the platform's configuration grammar
(:mod:`.configgrammar`) takes next in the current mode, with the session's own configuration
commands (``end``, ``exit``, ``do`` ...), each keyword with IOS's description of it.

``interface ?`` lists the interface types, ``ip ?`` the words that may follow ``ip`` in this
mode, ``speed ?`` the speeds; an argument shows as IOS names it (``A.B.C.D``, ``WORD``,
``LINE``, ``<1-4094>``) and ``<cr>`` when the line can end there. ``no ?`` lists what may be
negated, ``do sh?`` the exec commands. ``ho?`` lists the words starting so, and Tab completes
a word only one fits. (The descriptions of the BGP and VRF words — ``address-family``,
``neighbor``, ``exit-address-family`` ... — are written from memory of IOS-XE.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from mgmtbench.emulator.cli import helptext
from mgmtbench.emulator.cli.configgrammar import GLOBAL, ConfigGrammar, ModeGrammar, Rule, Token
from mgmtbench.emulator.cli.grammar import CommandTree, Options, ParseError, ParseErrorKind

A = TypeVar("A")

_WORD = re.compile(r"\S+")
NO = "no"
DO = "do"

#: IOS's help text of configuration words, by the full words that lead to them.
DESCRIPTIONS: dict[tuple[str, ...], str] = {
    ("access-list",): "Add an access list entry",
    ("address-family",): "Enter Address Family command mode",
    ("aggregate-address",): "Configure BGP aggregate entries",
    ("archive",): "Archive the configuration",
    ("bandwidth",): "Set bandwidth informational parameter",
    ("banner",): "Define a login banner",
    ("banner", "exec"): "Set EXEC process creation banner",
    ("banner", "login"): "Set login banner",
    ("banner", "motd"): "Set Message of the Day banner",
    ("description",): "Interface specific description",
    ("do",): "To run exec commands in config mode",
    ("duplex",): "Configure duplex operation.",
    ("duplex", "auto"): "Enable AUTO duplex configuration",
    ("duplex", "full"): "Force full duplex operation",
    ("duplex", "half"): "Force half-duplex operation",
    ("enable",): "Modify enable password parameters",
    ("encapsulation",): "Set encapsulation type for an interface",
    ("end",): "Exit from configure mode",
    ("exit",): "Exit from the current mode",
    ("exit-address-family",): "Exit from Address Family configuration mode",
    ("file",): "Adjust file system parameters",
    ("hostname",): "Set system's network name",
    ("interface",): "Select an interface to configure",
    ("ip",): "Global IP configuration subcommands",
    ("ip", "access-group"): "Specify access control for packets",
    ("ip", "access-list"): "Named access list",
    ("ip", "address"): "Set the IP address of an interface",
    ("ip", "domain"): "IP DNS Resolver",
    ("ip", "helper-address"): "Specify a destination address for UDP broadcasts",
    ("ip", "name-server"): "Specify address of name server to use",
    ("ip", "ospf"): "OSPF interface commands",
    ("ip", "route"): "Establish static routes",
    ("line",): "Configure a terminal line",
    ("logging",): "Modify message logging facilities",
    ("mtu",): "Set the interface Maximum Transmission Unit (MTU)",
    ("maximum-paths",): "Forward packets over multiple paths",
    ("negotiation",): "Select Autonegotiation mode",
    ("neighbor",): "Specify a neighbor router",
    (NO,): "Negate a command or set its defaults",
    ("ntp",): "Configure NTP",
    ("rd",): "Specify Route Distinguisher",
    ("redistribute",): "Redistribute information from another routing protocol",
    ("route-target",): "Specify Target VPN Extended Communities",
    ("router",): "Enable a routing process",
    ("shutdown",): "Shutdown the selected interface",
    ("snmp-server",): "Modify SNMP engine parameters",
    ("speed",): "Configure speed operation.",
    ("speed", "10"): "Force 10 Mbps operation",
    ("speed", "100"): "Force 100 Mbps operation",
    ("speed", "1000"): "Force 1000 Mbps operation",
    ("speed", "auto"): "Enable AUTO speed configuration",
    ("username",): "Establish User Name Authentication",
}


#: What configuration mode's arguments are, by label.
ARGUMENTS = {"LINE": "Text", "WORD": "", "A.B.C.D": "IP address or mask"}


def describe(words: tuple[str, ...]) -> str:
    """The help text of the last of ``words`` (``no`` in front changes nothing; after ``do``,
    an exec command's words)."""
    if len(words) > 1 and words[0] == DO:
        return helptext.describe(words[1:])
    if len(words) > 1 and words[0] == NO:
        words = words[1:]
    return DESCRIPTIONS.get(words, "")


def _label(token: Token) -> str:
    if token.kind == "int":
        return f"<{token.low}-{token.high}>"
    return {"ipv4": "A.B.C.D", "line": "LINE", "word": "WORD", "ifname": "WORD"}[token.kind]


def grammar_options(grammar: ConfigGrammar, mode: ModeGrammar, line: str) -> Options:
    """What may follow ``line`` in ``mode`` (:class:`ParseError` where the grammar refuses a
    word before the end, as :meth:`.ConfigGrammar.parse` would)."""
    spans = list(_WORD.finditer(line))
    partial = ""
    if spans and spans[-1].end() == len(line):
        partial = spans.pop().group()
    negate = bool(spans) and spans[0].group().lower() == NO
    words: list[str] = [NO] if negate else []
    alive: list[Rule] = list(mode.rules)
    for at, span in enumerate(spans[1:] if negate else spans):
        word, lowered = span.group(), span.group().lower()
        here = [rule for rule in alive if at < len(rule.tokens)]
        if any(rule.tokens[at].kind == "line" for rule in here):
            taken = [r for r in here if r.tokens[at].kind == "kw" and r.tokens[at].text == lowered]
            if not taken:  # the rest of the line is text
                return Options(tuple(words), (), partial, None, True)
        exact = [r for r in here if r.tokens[at].kind == "kw" and r.tokens[at].text == lowered]
        prefixed = [r for r in here if r.tokens[at].kind == "kw"
                    and r.tokens[at].text.startswith(lowered)]
        if not exact and len({r.tokens[at].text for r in prefixed}) > 1:
            raise ParseError(ParseErrorKind.AMBIGUOUS, span.start())
        args = [r for r in here if r.tokens[at].kind not in ("kw", "line")
                and r.tokens[at].accepts(word, grammar.iftypes)]
        alive = exact or prefixed or args
        if not alive:
            raise ParseError(ParseErrorKind.INVALID, span.start())
        token = alive[0].tokens[at]
        words.append(token.text if token.kind == "kw" else word)
    count = len(words) - negate
    keywords: dict[str, str] = {}
    arg: str | None = None
    complete = False
    for rule in alive:
        if count < len(rule.tokens):
            token = rule.tokens[count]
            if token.kind == "kw":
                keywords.setdefault(token.text, token.shown or token.text)
            elif token.kind == "ifname":
                keywords.update({t.lower(): t for t in grammar.iftypes})
            elif arg is None:
                arg = _label(token)
        if count == len(rule.tokens) or (negate and count and count >= rule.keywords):
            complete = True
    if not words:
        keywords.setdefault(NO, NO)
    if partial:
        lowered = partial.lower()
        found = tuple(sorted(shown for key, shown in keywords.items() if key.startswith(lowered)))
        fits = arg is not None and any(
            count < len(rule.tokens) and rule.tokens[count].kind not in ("kw", "ifname")
            and rule.tokens[count].accepts(partial, grammar.iftypes) for rule in alive)
        return Options(tuple(words), found, partial, arg if fits else None)
    return Options(tuple(words), tuple(sorted(keywords.values(), key=str.lower)), "", arg,
                   complete and bool(words))


def options(grammar: ConfigGrammar, mode_name: str | None, line: str,
            builtin: CommandTree[A], exec_tree: CommandTree[A] | None = None) -> Options:
    """``?`` at the end of ``line`` in configuration mode ``mode_name`` (None: global): the
    grammar's words and the session's own commands' (``end``, ``do`` ...) together; after
    ``do``, the words of ``exec_tree`` (privileged exec)."""
    first = line.split(None, 1)
    if exec_tree is not None and len(first) == 2 and len(first[0]) >= 2 \
            and DO.startswith(first[0].lower()):
        rest = line[line.index(first[0]) + len(first[0]):].lstrip()
        inner = exec_tree.help(rest)
        return replace(inner, words=(DO, *inner.words))
    mode = grammar.modes.get(mode_name or GLOBAL, grammar.modes[GLOBAL])
    found: list[Options] = []
    errors: list[ParseError] = []
    sources: tuple[Callable[[], Options], ...] = (
        lambda: grammar_options(grammar, mode, line), lambda: builtin.help(line))
    for source in sources:
        try:
            found.append(source())
        except ParseError as exc:
            errors.append(exc)
    if not found:
        raise max(errors, key=lambda exc: (exc.kind is ParseErrorKind.AMBIGUOUS, exc.position))
    merged = found[0]
    for other in found[1:]:
        if other.words != merged.words and other.keywords and merged.keywords:
            continue
        merged = replace(merged, keywords=tuple(sorted({*merged.keywords, *other.keywords},
                                                       key=str.lower)),
                         arg=merged.arg or other.arg, complete=merged.complete or other.complete,
                         words=merged.words or other.words)
    return merged


def complete(grammar: ConfigGrammar, mode_name: str | None, line: str,
             builtin: CommandTree[A], exec_tree: CommandTree[A] | None = None) -> str | None:
    """The word Tab completes the line's last word to, or None when not exactly one fits."""
    try:
        found = options(grammar, mode_name, line, builtin, exec_tree)
    except ParseError:
        return None
    if not found.partial or len(found.keywords) != 1:
        return None
    return found.keywords[0]
