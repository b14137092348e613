"""What configuration mode accepts, per platform, and how an accepted line changes the config.

A platform's grammar is data: ``transcripts/<platform>/config.toml`` lists, per configuration mode
(``config`` is global configuration, others are sub-modes such as ``if``), the command patterns it
takes. A pattern is words and arguments:

- a keyword, which may be typed as any unambiguous prefix (``desc`` for ``description``);
- ``<word>`` any word, ``<line>`` the rest of the line (at least one word), ``<ipv4>`` a dotted
  address or mask, ``<lo-hi>`` an integer in range, ``<ifname>`` an interface name (``gi0/1``
  is stored as ``GigabitEthernet0/1``);
- ``[...]`` an optional part (``ip address <ipv4> <ipv4> [secondary]``).

A mode's ``delimited`` commands take text that runs to a delimiter, over several lines if need
be (IOS's ``banner motd ^C``: :mod:`mgmtbench.emulator.device.banner`).

A mode's ``blocks`` are patterns that open a sub-mode (``"interface <ifname>" = "if"``); a
sub-mode may have blocks of its own, nested as deep as the device nests them (IOS's ``router bgp
N`` -> ``address-family ipv4`` -> ``neighbor X activate``, prompts ``(config-router)#`` then
``(config-router-af)#``; the ASA's ``policy-map global_policy`` -> ``class inspection_default``
-> ``inspect ...``, ``(config-pmap)#`` then ``(config-pmap-c)#``). A nested block's lines are
shown indented one level more than it. ``exit`` goes up one level, ``end`` to exec; a line the
current mode does not know but an enclosing one does leaves for that one (IOS's parser does
the same). A mode's ``closing`` (``exit-address-family``) is shown after each of its blocks, one
level out, and typed it leaves the mode; ``separated`` puts a ``!`` before each block (IOS's
address families). ``apart`` lists lines of a block that the device shows in a second block of
the same name further down (the ASA's ``object network X`` / ``nat ...`` in its NAT section):
typed in the block, they go there. Lines of the platform's own ``show running-config``
transcript teach the grammar their shapes too (their first one or two keywords, then any words,
in the mode of the block they are indented under), so that pasting back a line the device
printed works.

Written from memory, without a device at hand: the sub-mode prompts (``config-router-af``,
``config-vrf-af``, ``config-pmap-c``, ``config-pmap-p``), the commands each nested mode takes
(a common subset, in ``config.toml``), the order a new line takes in a BGP block and in an
address family, and where the ASA puts a new object's NAT block (after the last one of the NAT
section, else before the first twice-NAT ``nat`` line).

Anything else is refused the way the device refuses it (:class:`ParseError`: invalid input at
the word where no pattern fits, ambiguous or incomplete), and nothing is stored. ``no <command>``
removes what it names (the lines that start with the typed words, or the block); for the settings
a mode lists in ``negation_shown`` the device keeps a ``no ...`` line instead (IOS's
``no ip address``). A mode's ``defaults`` (``speed auto``) remove the setting's line as ``no``
does: the device does not show a setting at its default.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from mgmtbench.emulator.cli import banner
from mgmtbench.emulator.cli.banner import PendingText
from mgmtbench.emulator.cli.grammar import ParseError, ParseErrorKind
from mgmtbench.emulator.device.config import (
    BLOCK_MODES,
    GRAMMAR_FILE,
    ConfigLine,
    RunningConfig,
    interface_name,
    interface_types_in,
)
from mgmtbench.emulator.device.transcripts import Platform, default_root
from mgmtbench.errors import TranscriptError

GLOBAL = "config"
HOSTNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,62}$")
_WORD = re.compile(r"\S+")
_RANGE = re.compile(r"^<(\d+)-(\d+)>$")
_IPV4 = re.compile(r"^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$")
_KEYWORDISH = re.compile(r"^[a-z][a-z0-9-]*$")


@dataclass(frozen=True)
class Token:
    """One word of a pattern: a keyword (``kind == "kw"``) or an argument."""

    kind: str  # kw, word, line, int, ipv4, ifname
    text: str = ""  # a keyword, lowered (matched case-insensitively)
    low: int = 0
    high: int = 0
    shown: str = ""  # a keyword as the device prints it (``dot1Q``, ``RO``)

    def accepts(self, word: str, iftypes: tuple[str, ...]) -> bool:
        """Whether ``word`` fits this argument (keywords are matched by the caller)."""
        if self.kind in ("word", "line"):
            return True
        if self.kind == "int":
            return word.isdigit() and self.low <= int(word) <= self.high
        if self.kind == "ipv4":
            return bool(_IPV4.match(word))
        if self.kind == "ifname":
            return interface_name(word, iftypes) is not None
        return False


@dataclass(frozen=True)
class Rule:
    """One pattern of a mode, with the sub-mode it opens (blocks) or None."""

    tokens: tuple[Token, ...]
    opens: str | None = None
    learned: bool = False
    #: The mode's closing command (``exit-address-family``): it leaves the mode, as ``exit``.
    closes: bool = False

    @property
    def keywords(self) -> int:
        """How many keywords it starts with (``no`` needs at least these)."""
        count = 0
        for token in self.tokens:
            if token.kind != "kw":
                break
            count += 1
        return max(count, 1)


@dataclass(frozen=True)
class ModeGrammar:
    """The commands of one configuration mode."""

    name: str
    prompt: str
    rules: tuple[Rule, ...]
    negation_shown: tuple[str, ...] = ()
    #: Settings whose ``no ...`` removes the lines it names in the nested blocks too (IOS's
    #: ``no neighbor X`` in ``router bgp``: the neighbour goes from its address families).
    negation_nested: tuple[str, ...] = ()
    #: Lines whose ``no ...`` removes everything of what they start with: patterns of words,
    #: ``*`` any one word, and the removal is of the line's words up to the last ``*`` (IOS's
    #: ``neighbor * remote-as``: ``no neighbor X remote-as N`` removes neighbour X whole).
    negation_whole: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    sequence_step: int = 0
    #: Commands whose text runs to a delimiter, over several lines (``banner motd``).
    delimited: tuple[str, ...] = ()
    #: Settings at their default (``speed auto``): typed, they remove the setting's line.
    defaults: tuple[str, ...] = ()
    #: The line the device shows after a block of this mode, one level out, and takes as the
    #: command that leaves it (``exit-address-family``); empty: none.
    closing: str = ""
    #: Whether the device shows a ``!`` line before each block of this mode (IOS's
    #: ``address-family`` blocks in ``router bgp``).
    separated: bool = False


@dataclass(frozen=True)
class Rewrite:
    """How the device stores a line it accepted (secrets hashed or masked)."""

    pattern: re.Pattern[str]
    template: str


@dataclass(frozen=True)
class Apart:
    """Lines of a block that the device shows apart, in a second block with the same first
    line further down (the ASA shows an object's ``nat`` in its NAT section)."""

    block: str  # the first words of the block's line (``object network``)
    lines: tuple[str, ...]  # the first words of the lines shown apart (``nat``)
    before: str  # the first words of the top-level line the apart blocks go before


@dataclass(frozen=True)
class Parsed:
    """An accepted line: its words in full (``text``), whether it was ``no ...``, its rule."""

    text: str
    negate: bool
    rule: Rule
    mode: ModeGrammar


@dataclass(frozen=True)
class ConfigGrammar:
    """A platform's configuration grammar (:func:`config_grammar`)."""

    modes: Mapping[str, ModeGrammar]
    iftypes: tuple[str, ...]
    rewrites: tuple[Rewrite, ...] = ()
    apart: tuple[Apart, ...] = ()

    def parse(self, mode: ModeGrammar, line: str) -> Parsed:
        """``line`` resolved in ``mode``, or :class:`ParseError` where the device refuses it."""
        spans = [(m.start(), m.group()) for m in _WORD.finditer(line)]
        negate = bool(spans) and spans[0][1].lower() == "no"
        words = spans[1:] if negate else spans
        if not words:  # "no" alone
            raise ParseError(ParseErrorKind.INCOMPLETE, len(line))
        rule, parts = self._match(mode, words, line, negate)
        return Parsed(" ".join(parts), negate, rule, mode)

    def _match(self, mode: ModeGrammar, words: list[tuple[int, str]], line: str,
               negate: bool) -> tuple[Rule, list[str]]:
        """The rule ``words`` fit. Keywords typed in full win over abbreviations, keywords over
        arguments, and a rule that goes on word by word over one whose ``<line>`` takes the rest
        (kept as the answer should the others not fit)."""
        alive: list[tuple[Rule, list[str]]] = [(rule, []) for rule in mode.rules]
        fallback: list[tuple[Rule, list[str]]] = []
        for at, (position, word) in enumerate(words):
            lowered = word.lower()
            exact: list[tuple[Rule, list[str]]] = []
            prefixed: list[tuple[Rule, list[str]]] = []
            args: list[tuple[Rule, list[str]]] = []
            rest: list[tuple[Rule, list[str]]] = []
            for rule, parts in alive:
                if at >= len(rule.tokens):
                    continue
                token = rule.tokens[at]
                if token.kind == "line":
                    rest.append((rule, [*parts, line[position:].rstrip()]))
                elif token.kind == "kw":
                    if token.text == lowered:
                        exact.append((rule, [*parts, token.shown or token.text]))
                    elif token.text.startswith(lowered):
                        prefixed.append((rule, [*parts, token.shown or token.text]))
                elif token.accepts(word, self.iftypes):
                    value = interface_name(word, self.iftypes) if token.kind == "ifname" else word
                    args.append((rule, [*parts, value or word]))
            if prefixed and not exact and len({parts[-1] for _, parts in prefixed}) > 1:
                if rest or fallback:
                    return _first_explicit(rest or fallback)
                raise ParseError(ParseErrorKind.AMBIGUOUS, position)
            taken = exact or prefixed or args
            if rest:
                fallback = rest
            if not taken:
                if fallback:
                    return _first_explicit(fallback)
                raise ParseError(ParseErrorKind.INVALID, position + _matched(alive, at, lowered))
            alive = taken
        count = len(words)
        done = [(rule, parts) for rule, parts in alive if len(rule.tokens) == count]
        if not done and negate:
            done = [(rule, parts) for rule, parts in alive if count >= rule.keywords]
        if not done and negate and alive and all(
                len(rule.tokens) == count + 1 and rule.tokens[count].kind == "kw"
                for rule, _ in alive):
            done = alive  # `no speed`: the last keyword only chose a value (`speed 100`)
        if not done and fallback:
            done = fallback
        if not done:
            raise ParseError(ParseErrorKind.INCOMPLETE, len(line))
        return _first_explicit(done)

    def store_form(self, text: str) -> str:
        """``text`` as the device keeps it (its secrets hashed or masked)."""
        for rewrite in self.rewrites:
            found = rewrite.pattern.match(text)
            if found:
                stored = found.expand(rewrite.template)
                if "{type9}" in stored:
                    stored = stored.replace("{type9}", _type9(found.groupdict().get("secret", "")))
                return stored
        return text


def _matched(alive: list[tuple[Rule, list[str]]], at: int, word: str) -> int:
    """How many characters of ``word`` some keyword at ``at`` starts with: IOS puts its caret
    under the first character that fits no command."""
    best = 0
    for rule, _ in alive:
        if at < len(rule.tokens) and rule.tokens[at].kind == "kw":
            keyword = rule.tokens[at].text
            common = 0
            while common < min(len(word), len(keyword)) and word[common] == keyword[common]:
                common += 1
            best = max(best, common)
    return best


def _first_explicit(found: list[tuple[Rule, list[str]]]) -> tuple[Rule, list[str]]:
    """The first written rule among ``found``, else the first learned one."""
    for rule, parts in found:
        if not rule.learned:
            return rule, parts
    return found[0]


def _type9(secret: str) -> str:
    """A stand-in for IOS's scrypt ("type 9") hash of ``secret``: same form, fixed per secret."""
    alphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    digest = hashlib.sha256(secret.encode()).digest() * 2
    chars = "".join(alphabet[b % 64] for b in digest)
    return f"$9${chars[:14]}${chars[14:57]}"


# --- applying an accepted line -----------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """A sub-mode a configuration session is in: its block, prompt and mode name."""

    block: ConfigLine
    prompt: str | None
    mode: str | None


@dataclass
class ConfigState:
    """Where a configuration session is: the block of its innermost sub-mode, that mode's name
    and prompt (None: global configuration), and the sub-modes it is nested in, outermost
    first (``router bgp 64500`` while in its ``address-family ipv4``)."""

    block: ConfigLine | None = None
    prompt: str | None = None
    mode: str | None = None
    #: Delimited text (a banner) whose next lines the session must collect, if any.
    pending: PendingText | None = None
    #: The enclosing sub-modes, outermost first.
    outer: list[Frame] = field(default_factory=list)

    @property
    def level(self) -> int:
        """How deep in sub-modes: 0 in global configuration."""
        return 0 if self.block is None else len(self.outer) + 1

    def leave(self) -> bool:
        """Go up one level (``exit``); False in global configuration (nothing to leave)."""
        if self.block is None:
            return False
        if self.outer:
            frame = self.outer.pop()
            self.block, self.prompt, self.mode = frame.block, frame.prompt, frame.mode
        else:
            self.block, self.prompt, self.mode = None, None, None
        return True

    def up_to(self, level: int) -> None:
        """Leave sub-modes until ``level`` deep."""
        while self.level > level:
            self.leave()


def configure(platform: Platform, config: RunningConfig, state: ConfigState, line: str,
              rename: Callable[[str], None] | None = None) -> str:
    """Run one configuration line at ``state``: change ``config`` and ``state``, or raise
    :class:`ParseError` (nothing changed); what the device prints (a banner's ``Enter TEXT
    message`` when its text goes on: then ``state.pending`` collects the next lines). A line
    that the sub-mode does not know but an enclosing mode (or global configuration) does
    leaves for that mode, as on IOS. ``hostname NAME`` renames the device through ``rename``."""
    grammar = config_grammar(platform)
    parsed = _parse_here_or_out(grammar, state, line)
    words = parsed.text.split()
    if words[0] == "hostname" and len(words) == 2 and rename is not None and not parsed.negate:
        if not HOSTNAME.match(words[1]):
            raise ParseError(ParseErrorKind.INVALID, line.rindex(words[1]))
        rename(words[1])  # the device sets its configuration's hostname line
        return ""
    if _adds(config, grammar, state, parsed):
        config.check_room()
    head = next((h for h in parsed.mode.delimited if _starts(parsed.text, h)), None)
    if head is not None and not parsed.negate:
        started = banner.start(head, parsed.text[len(head):].lstrip(" "))
        if isinstance(started, PendingText):
            state.pending = started
            return banner.prompt(started.mark)
        parsed = Parsed(started, False, parsed.rule, parsed.mode)
    _apply(grammar, config, state, parsed)
    return ""


def _parse_here_or_out(grammar: ConfigGrammar, state: ConfigState, line: str) -> Parsed:
    """``line`` parsed in the current mode, else in the enclosing ones from the innermost out
    (the state then leaves for the mode that took it); the error that got furthest into the
    line when none takes it."""
    levels: list[str] = [frame.mode or GLOBAL for frame in state.outer]
    name = state.mode if state.block is not None and state.mode else GLOBAL
    modes = [GLOBAL, *levels, name] if state.block is not None else [GLOBAL]
    error: ParseError | None = None
    for level in range(len(modes) - 1, -1, -1):
        mode = grammar.modes.get(modes[level], grammar.modes[GLOBAL])
        try:
            parsed = grammar.parse(mode, line)
        except ParseError as exc:
            if error is None or exc.position > error.position:
                error = exc
            continue
        state.up_to(level)
        return parsed
    assert error is not None
    raise error


def _adds(config: RunningConfig, grammar: ConfigGrammar, state: ConfigState,
          parsed: Parsed) -> bool:
    """Whether ``parsed`` may add to the configuration: every line but a ``no`` line, one that
    leaves a sub-mode and one that enters a block that is there already (so that a full
    configuration can still be entered and pruned)."""
    if parsed.negate or parsed.rule.closes:
        return False
    if parsed.rule.opens is None:
        return True
    block = state.block if parsed.mode.name != GLOBAL else None
    return config.find(grammar.store_form(parsed.text), block) is None


def finish_text(config: RunningConfig, text: str) -> None:
    """Keep the line that delimited text ended in (``banner motd ^C...^C``: global)."""
    config.set(text)


def _apply(grammar: ConfigGrammar, config: RunningConfig, state: ConfigState,
           parsed: Parsed) -> None:
    text, rule, mode = parsed.text, parsed.rule, parsed.mode
    block = state.block if mode.name != GLOBAL else None
    if rule.closes:
        state.leave()
        return
    if rule.opens is not None:
        sub = grammar.modes.get(rule.opens)
        if parsed.negate:
            _remove_block(config, grammar.store_form(text), block, sub)
            return
        stored = grammar.store_form(text)
        if block is None:
            opened = _open_top(config, grammar, stored)
        else:
            opened = _open_nested(config, block, mode, sub, stored)
            state.outer.append(Frame(block, state.prompt, state.mode))
        state.block = opened
        state.prompt = sub.prompt if sub else (_legacy_prompt(text) or "config-" + rule.opens)
        state.mode = rule.opens
        return
    if not parsed.negate and text.lower() in mode.defaults:  # `speed auto`: no line kept
        remove_prefix(config, text.rsplit(None, 1)[0], block)
        return
    if block is not None and state.level == 1:
        apart = next((a for a in grammar.apart if _starts(block.text, a.block)
                      and any(_starts(text, line) for line in a.lines)), None)
        if apart is not None:
            block = _apart_block(config, block, apart, create=not parsed.negate)
            if block is None:
                return
    if parsed.negate:
        text = _negated_whole(mode, text)
        removed = remove_prefix(config, text, block)
        if block is not None and any(_starts(text, head) for head in mode.negation_nested):
            for child in block.live_children():  # `no neighbor X`: in its address families too
                if child.children:
                    removed += remove_prefix(config, text, child)
        shown = next((s for s in mode.negation_shown if _starts(text, s)), None)
        if shown is not None:
            _place(config, block, mode, f"no {shown}")
        elif not removed:
            config.remove(text, block)
        if block is not state.block and block is not None and not block.live_children():
            config.remove_lines([block])  # the apart block held nothing else
        return
    if block is not None and mode.sequence_step and not text.split()[0].isdigit():
        step = mode.sequence_step  # after the highest entry (an ACL's 10, 20 ...)
        text = f"{(config.highest_number(block) // step + 1) * step} {text}"
    stored = grammar.store_form(text)
    for shown in mode.negation_shown:
        if _starts(stored, shown):
            remove_prefix(config, f"no {shown}", block)
    if stored.lower().endswith(" secondary"):
        _place(config, block, mode, stored, replace=False)
    else:
        _place(config, block, mode, stored)


def _negated_whole(mode: ModeGrammar, text: str) -> str:
    """What ``no <text>`` removes: ``text``, or the start of it that one of the mode's
    ``negation_whole`` patterns names (``neighbor X`` for ``neighbor X remote-as N``)."""
    words = text.split()
    for pattern in mode.negation_whole:
        wanted = pattern.lower().split()
        if len(words) >= len(wanted) and all(
                w == "*" or w == word.lower() for w, word in zip(wanted, words, strict=False)):
            last = max(i for i, w in enumerate(wanted) if w == "*")
            return " ".join(words[:last + 1])
    return text


def _open_top(config: RunningConfig, grammar: ConfigGrammar, text: str) -> ConfigLine:
    """The top-level block ``text``, made if new: a block some of whose lines are shown apart
    (the ASA's ``object network``) goes after the last of its kind outside the apart section."""
    apart = next((a for a in grammar.apart if _starts(text, a.block)), None)
    if apart is None or config.find_top(text) is not None:
        return config.open_block(text)
    seen: set[str] = set()
    at: int | None = None
    for index, line in enumerate(config.root):
        if not line.removed and _starts(line.text, apart.block) and \
                line.text.lower() not in seen:
            seen.add(line.text.lower())
            at = index + 1
    if at is None:
        return config.open_block(text)
    made = ConfigLine(text)
    config.insert_top(made, at)
    return made


def _apart_block(config: RunningConfig, block: ConfigLine, apart: Apart, *,
                 create: bool) -> ConfigLine | None:
    """The block after ``block`` with its first line (the ASA's NAT section's ``object
    network X``), made (``create``) before the first ``apart.before`` line if there is none."""
    same = [line for line in config._index(None).exact(block.text) if line is not block]
    if same:
        return same[-1]
    if not create:
        return None
    made = ConfigLine(block.text)
    head = apart.before.lower().split()
    seen: set[str] = set()
    at: int | None = None
    for index, line in enumerate(config.root):
        if line.removed:
            continue
        if _starts(line.text, apart.block):
            if line.text.lower() in seen:  # a second block: the apart section
                at = index + 1
            seen.add(line.text.lower())
        elif at is None and line.text.lower().split()[:len(head)] == head:
            at = index
            while at > 0 and config.root[at - 1].text == "!":
                at -= 1
            break
    if at is None:
        at = config.root.index(block) + 1
        while at < len(config.root) and (config.root[at].removed
                                         or _starts(config.root[at].text, apart.block)):
            at += 1
    config.insert_top(made, at)
    return made


def _open_nested(config: RunningConfig, parent: ConfigLine, mode: ModeGrammar,
                 sub: ModeGrammar | None, text: str) -> ConfigLine:
    """The block ``text`` in ``parent`` (a block of ``mode``), made if new: with the ``!``
    before it and the closing line after it that ``sub`` asks for, where ``mode``'s order puts
    it (after the plain lines, before ``class class-default``)."""
    found, new = config.open_child(text, parent)
    if not new:
        return found
    group = [found]
    if sub is not None and sub.separated:
        group.insert(0, ConfigLine("!"))
    if sub is not None and sub.closing:
        group.append(ConfigLine(sub.closing))
    parent.children.remove(found)
    at = _insert_at(parent.children, mode, text) if mode.order else len(parent.children)
    parent.children[at:at] = group
    config.grown([line for line in group if line is not found])
    return found


def _remove_block(config: RunningConfig, text: str, parent: ConfigLine | None,
                  sub: ModeGrammar | None) -> None:
    """``no interface Loopback9``, ``no address-family ipv6``: the block goes, and the ``!``
    that separated it (in a block, the closing line after it and the ``!`` before it)."""
    if parent is not None:
        siblings = parent.children
        index = config._index(parent)
        doomed = index.exact(text) or index.named(text)
        extra: list[ConfigLine] = []
        for line in doomed:
            where = siblings.index(line)
            closer = _live_neighbour(siblings, where, 1)
            if closer is not None and sub is not None and sub.closing and \
                    closer.text.lower() == sub.closing.lower():
                extra.append(closer)
            separator = _live_neighbour(siblings, where, -1)
            if separator is not None and separator.text == "!" and sub is not None \
                    and sub.separated:
                extra.append(separator)
        config.remove_lines([*doomed, *extra], parent)
        return
    index = config._index(None)
    doomed = index.exact(text) or index.named(text)
    extra = _lone_separators(config, doomed)
    config.remove(text)
    config.remove_lines(extra)


def _lone_separators(config: RunningConfig, doomed: list[ConfigLine]) -> list[ConfigLine]:
    """The ``!`` lines to go with top-level lines ``doomed`` (still in place: asked before they
    are removed): the ``!`` that follows each one that stands alone between two ``!`` lines, so
    no empty section is left.

    One pass for many lines, each line found once: removing thousands of lines at once stays
    linear (a search back over the lines removed before it, for each, was quadratic), and the
    positions are read before the removal, which may compact the list under them."""
    if not doomed:
        return []
    root = config.root
    gone = {id(line) for line in doomed}
    if len(doomed) <= 8:
        positions = sorted(root.index(line) for line in doomed)
    else:
        positions = [at for at, line in enumerate(root) if id(line) in gone]
    extra: list[ConfigLine] = []
    before_of: dict[int, int] = {}  # a doomed line's position -> the kept line's before it
    hops = config.removal_hops()
    for at in positions:
        before = at - 1
        passed: list[int] = []  # removed lines walked over
        while before >= 0 and (root[before].removed or id(root[before]) in gone):
            if before in before_of:  # a doomed line: what is before it is before this one
                before = before_of[before]
                break
            if root[before].removed:
                passed.append(id(root[before]))
                before = hops.get(id(root[before]), before) - 1 \
                    if id(root[before]) in hops else before - 1
                continue
            before -= 1
        for removed in passed:
            hops[removed] = before + 1
        before_of[at] = before
        after = root[at + 1] if at + 1 < len(root) else None
        if after is not None and after.text == "!" and not after.removed \
                and id(after) not in gone and before >= 0 and root[before].text == "!":
            extra.append(after)
            gone.add(id(after))
    return extra


def _live_neighbour(lines: list[ConfigLine], at: int, step: int) -> ConfigLine | None:
    """The nearest line before (``step`` -1) or after (1) ``lines[at]`` that is not removed."""
    at += step
    while 0 <= at < len(lines):
        if not lines[at].removed:
            return lines[at]
        at += step
    return None


def _starts(text: str, prefix: str) -> bool:
    words, head = text.lower().split(), prefix.lower().split()
    return words[:len(head)] == head


def _legacy_prompt(text: str) -> str | None:
    lowered = text.lower()
    for keyword, prompt in BLOCK_MODES.items():
        if lowered.startswith(keyword + " "):
            return prompt
    return None


def _place(config: RunningConfig, block: ConfigLine | None, mode: ModeGrammar, text: str,
           *, replace: bool = True) -> None:
    """Set ``text`` (replacing the line with its key when ``replace``) and, in a block, put a
    new line where the device lists it (the mode's ``order``)."""
    if block is None:
        config.set(text)
        return
    count = len(block.children)
    if replace:
        config.set(text, block)
    else:
        config.append(text, block)
    if len(block.children) == count or not mode.order:  # replaced in place, or no order
        return
    line = block.children.pop()  # a new line goes at the end: it moves to its place
    block.children.insert(_insert_at(block.children, mode, text), line)


def _insert_at(children: list[ConfigLine], mode: ModeGrammar, text: str) -> int:
    """Where a new line ``text`` goes among ``children``: before the first line that ``mode``'s
    order puts after it (and the ``!`` lines just before that one), else at the end. ``!``
    lines and closing lines (``exit-address-family``) have no place of their own.

    Every line is placed so, so the block is in that order: the lines that go after ``text``
    are the last ones, and the search walks back from the end over them only (from the start,
    it ranked every line of the block for each new one: 8,001 secondaries took minutes)."""
    rank = _rank(mode.order, text)
    first_after = len(children)
    for at in range(len(children) - 1, -1, -1):
        other = children[at]
        if other.removed or other.text == "!" or other.text.startswith("exit-"):
            continue
        if _rank(mode.order, other.text) <= rank:
            break
        first_after = at
    if first_after == len(children):
        return first_after
    at = first_after
    while at > 0 and children[at - 1].text == "!" and not children[at - 1].removed:
        at -= 1
    return at


def _rank(order: tuple[str, ...], text: str) -> int:
    """Where ``text`` goes in a block: its place in ``order``, else the place of ``*`` there
    (the end without one)."""
    body = text[3:] if text.startswith("no ") else text
    for index, prefix in enumerate(order):
        if prefix != "*" and _starts(body, prefix):
            return index
    return order.index("*") if "*" in order else len(order)


def remove_prefix(config: RunningConfig, text: str, block: ConfigLine | None) -> int:
    """Remove the lines of ``block`` (None: global) whose words start with ``text``'s, blocks
    excepted; how many. Global lines are looked up by key first (a whole line typed after
    ``no``), else scanned."""
    head = text.lower().split()
    if block is None:
        exact = config._index(None).keyed(" ".join(head))
        candidates = exact if exact else config.root
    else:  # the line itself, else the block's lines with its first word (a block may hold
        # thousands: `no ip address X Y secondary` 8,001 times searched them all each time)
        index = config._index(block)
        candidates = (index.exact(text) or index.starting(head[0])) if head else block.children
    doomed = [line for line in candidates
              if not line.removed and not line.children
              and line.text.lower().split()[:len(head)] == head]
    extra = _lone_separators(config, doomed) if block is None else []
    config.remove_lines([*doomed, *extra], block)
    return len(doomed)


# --- loading -----------------------------------------------------------------------------------


def config_grammar(platform: Platform) -> ConfigGrammar:
    """The configuration grammar of ``platform`` (read once per platform)."""
    return _load(platform.name, _folder(platform), platform.transcripts.get(
        ("show", "running-config"), ""))


def _folder(platform: Platform) -> Path:
    folder = getattr(platform, "folder", None)
    return Path(folder) if folder is not None else default_root() / platform.name


@cache
def _load(name: str, folder: Path, running: str) -> ConfigGrammar:
    path = folder / GRAMMAR_FILE
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TranscriptError(f"{path}: cannot read configuration grammar ({exc})") from exc
    iftypes = interface_types_in(folder)
    modes_raw: dict[str, dict[str, object]] = {str(k): dict(v)
                                                for k, v in raw.get("modes", {}).items()}
    modes_raw.setdefault(GLOBAL, {})
    prompts = {str(k): str(v) for k, v in raw.get("learned_prompts", {}).items()}
    explicit: dict[str, list[Rule]] = {}
    for mode_name, spec in modes_raw.items():
        rules: list[Rule] = []
        for pattern in _strings(spec.get("commands", [])):
            rules += [Rule(tokens) for tokens in _compile(pattern)]
        for pattern, opens in dict(spec.get("blocks", {})).items():  # type: ignore[call-overload]
            rules += [Rule(tokens, opens=str(opens)) for tokens in _compile(str(pattern))]
        closing = str(spec.get("closing", ""))
        if closing:  # `exit-address-family`: leaves the mode
            rules.append(Rule((Token("kw", text=closing.lower(), shown=closing),), closes=True))
        explicit[mode_name] = rules
    heads = {mode: {_head(rule) for rule in rules} for mode, rules in explicit.items()}
    learned = _learn(running, modes_raw, prompts, heads)
    modes: dict[str, ModeGrammar] = {}
    for mode_name, spec in modes_raw.items():
        rules = explicit.get(mode_name, [])
        rules += [rule for rule in learned.get(mode_name, [])
                  if not _shadowed(_head(rule), heads.get(mode_name, set()))]
        modes[mode_name] = ModeGrammar(
            name=mode_name,
            prompt=str(spec.get("prompt", "config" if mode_name == GLOBAL else
                                f"config-{mode_name}")),
            rules=tuple(rules),
            negation_shown=tuple(_strings(spec.get("negation_shown", []))),
            negation_nested=tuple(_strings(spec.get("negation_nested", []))),
            negation_whole=tuple(_strings(spec.get("negation_whole", []))),
            order=tuple(_strings(spec.get("order", []))),
            sequence_step=int(str(spec.get("sequence_step", 0))),
            delimited=tuple(d.lower() for d in _strings(spec.get("delimited", []))),
            defaults=tuple(d.lower() for d in _strings(spec.get("defaults", []))),
            closing=str(spec.get("closing", "")),
            separated=bool(spec.get("separated", False)),
        )
    rewrites = tuple(Rewrite(re.compile(str(r["match"])), str(r["replace"]))
                     for r in raw.get("rewrite", []))
    apart = tuple(Apart(str(a["block"]), tuple(_strings(a.get("lines", []))),
                        str(a.get("before", ""))) for a in raw.get("apart", []))
    return ConfigGrammar(modes=modes, iftypes=iftypes, rewrites=rewrites, apart=apart)


def _shadowed(head: tuple[str, ...], heads: set[tuple[str, ...]]) -> bool:
    """Whether a written rule starts with ``head``: the written grammar decides those lines."""
    return any(h[:len(head)] == head for h in heads)


def _head(rule: Rule) -> tuple[str, ...]:
    """The keywords a rule starts with."""
    return tuple(t.text for t in rule.tokens[:rule.keywords] if t.kind == "kw")


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _compile(pattern: str) -> list[tuple[Token, ...]]:
    """The token sequences of ``pattern``, one per choice of its ``[...]`` optional parts."""
    match = re.search(r"\[([^\[\]]*)\]", pattern)
    if match:
        head, tail = pattern[:match.start()], pattern[match.end():]
        return (_compile(head + match.group(1) + tail) + _compile(head + tail))
    return [tuple(_token(part) for part in pattern.split())]


def _token(part: str) -> Token:
    ranged = _RANGE.match(part)
    if ranged:
        return Token("int", low=int(ranged.group(1)), high=int(ranged.group(2)))
    if part in ("<word>", "<line>", "<ipv4>", "<ifname>"):
        return Token(part[1:-1])
    if part.startswith("<"):
        raise TranscriptError(f"unknown argument {part!r} in a configuration grammar")
    if "=" in part:  # `console=con`: typed as the keyword (or its abbreviation), shown short
        typed, _, shown = part.partition("=")
        return Token("kw", text=typed.lower(), shown=shown)
    return Token("kw", text=part.lower(), shown=part)


def _learn(running: str, modes: dict[str, dict[str, object]], prompts: Mapping[str, str],
           heads: Mapping[str, set[tuple[str, ...]]]) -> dict[str, list[Rule]]:
    """Rules for the shapes of the lines in the platform's running-config transcript: a line's
    first keyword (two for families such as ``ip ...``) then any words, in the mode of the block
    it is indented under. A line with lines under it opens a block: the mode that its mode's
    block pattern with its first words opens, else a mode of its own (``~`` and its first words,
    after the enclosing learned mode's name when nested) learned from those lines. Closing lines
    (``exit-address-family``) are no commands of the mode they are shown in."""
    openers: dict[str, dict[tuple[str, ...], str]] = {}
    for mode_name, spec in modes.items():
        for pattern, opens in dict(spec.get("blocks", {})).items():  # type: ignore[call-overload]
            head = []
            for word in str(pattern).lower().split()[:3]:
                if word.startswith(("<", "[")):
                    break
                head.append(word)
            openers.setdefault(mode_name, {})[tuple(head)] = str(opens)
    learned: dict[str, list[Rule]] = {}
    seen: set[tuple[str, tuple[str, ...], bool, str | None]] = set()
    lines = [raw for raw in running.splitlines()
             if raw.strip() and not raw.lstrip().startswith(("!", ":"))
             and raw.split()[0][0].islower()]
    stack: list[tuple[int, str | None]] = []  # (indentation, mode) of the blocks open
    for at, raw in enumerate(lines):
        depth = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack and stack[-1][1] is None:
            continue  # under a line that opens no mode
        parent = stack[-1][1] if stack else GLOBAL
        assert parent is not None
        following = lines[at + 1] if at + 1 < len(lines) else ""
        has_children = len(following) - len(following.lstrip(" ")) > depth
        current: str | None = None
        if has_children:
            words = [w.lower() for w in raw.split()]
            known = openers.get(parent, {})
            opener = next((known[tuple(words[:k])] for k in (3, 2, 1)
                           if tuple(words[:k]) in known), None)
            kind = words[:2] if len(words) > 1 and _KEYWORDISH.match(raw.split()[1]) else words[:1]
            own = "~" + " ".join(kind)
            current = opener or (own if parent == GLOBAL else f"{parent}{own}")
        _learn_line(learned, seen, parent, raw, current, heads.get(parent, set()))
        stack.append((depth, current))
    for mode in learned:
        if "~" in mode and mode not in modes:
            name = mode.rsplit("~", 1)[1]
            modes[mode] = {"prompt": prompts.get(name) or prompts.get(name.split()[0])
                           or _legacy_prompt(name + " x") or f"config-{name.split()[0]}"}
    return learned


def _learn_line(learned: dict[str, list[Rule]],
                seen: set[tuple[str, tuple[str, ...], bool, str | None]],
                mode: str, raw: str, opens: str | None, heads: set[tuple[str, ...]]) -> None:
    words = raw.split()
    if words[0] == "no" and len(words) > 1:
        words = words[1:]
    if not _KEYWORDISH.match(words[0]) or words == ["end"] or words[0].startswith("exit-"):
        return  # `end` closes the file; `exit-address-family` closes a block
    two = len(words) > 1 and _KEYWORDISH.match(words[1]) and words[0] not in _NAMED
    head = tuple(words[:2]) if two else (words[0],)
    # Longer while written rules start the same way: `ip ospf network ...` beside `ip ospf cost`.
    while _shadowed(head, heads) and len(head) < len(words) and _KEYWORDISH.match(words[len(head)]):
        head = tuple(words[:len(head) + 1])
    if _shadowed(head, heads):
        return
    more = len(words) > len(head)
    key = (mode, tuple(w.lower() for w in head), more, opens)
    if key in seen:
        return
    seen.add(key)
    tokens = tuple(Token("kw", text=w.lower(), shown=w) for w in head)
    rule = Rule((*tokens, Token("line")) if more else tokens, opens=opens, learned=True)
    learned.setdefault(mode, []).append(rule)


# First words followed by a name, not a keyword: a line learned from the transcript teaches only
# its first word (``description`` and any words). Other lines keep their second keyword
# (``ip domain name ...`` teaches ``ip domain``, not ``ip`` and anything).
_NAMED = frozenset({"hostname", "description", "username", "domain-name", "interface", "remark",
                    "name", "prompt", "mtu", "nameif", "route"})
