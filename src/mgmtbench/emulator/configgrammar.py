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
be (IOS's ``banner motd ^C``: :mod:`.banner`).

A mode's ``blocks`` are patterns that open a sub-mode (``"interface <ifname>" = "if"``). Lines of
the platform's own ``show running-config`` transcript teach the grammar their shapes too (their
first one or two keywords, then any words), so that pasting back a line the device printed works.

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
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mgmtbench.emulator import banner
from mgmtbench.emulator.banner import PendingText
from mgmtbench.emulator.config import BLOCK_MODES, ConfigLine, RunningConfig, line_key
from mgmtbench.emulator.grammar import ParseError, ParseErrorKind
from mgmtbench.emulator.transcripts import Platform, default_root
from mgmtbench.errors import TranscriptError

GLOBAL = "config"
HOSTNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,62}$")
GRAMMAR_FILE = "config.toml"
_WORD = re.compile(r"\S+")
_RANGE = re.compile(r"^<(\d+)-(\d+)>$")
_IPV4 = re.compile(r"^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$")
_IFNAME = re.compile(r"^([A-Za-z][A-Za-z-]*)\s*([0-9][0-9/.:]*)$")
_KEYWORDISH = re.compile(r"^[a-z][a-z0-9-]*$")
DEFAULT_IFTYPES = ("GigabitEthernet", "TenGigabitEthernet", "FastEthernet", "Ethernet",
                   "Loopback", "Vlan", "Port-channel", "Tunnel", "Management", "Serial")


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
    order: tuple[str, ...] = ()
    sequence_step: int = 0
    #: Commands whose text runs to a delimiter, over several lines (``banner motd``).
    delimited: tuple[str, ...] = ()
    #: Settings at their default (``speed auto``): typed, they remove the setting's line.
    defaults: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rewrite:
    """How the device stores a line it accepted (secrets hashed or masked)."""

    pattern: re.Pattern[str]
    template: str


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


def interface_name(word: str, iftypes: tuple[str, ...]) -> str | None:
    """The full name of interface ``word`` (``gi0/1`` -> ``GigabitEthernet0/1``), or None."""
    found = _IFNAME.match(word)
    if not found:
        return None
    typed, number = found.group(1).lower(), found.group(2)
    exact = [t for t in iftypes if t.lower() == typed]
    types = exact or [t for t in iftypes if t.lower().startswith(typed)]
    if len(types) != 1:
        return None
    return types[0] + number


# --- applying an accepted line -----------------------------------------------------------------


@dataclass
class ConfigState:
    """Where a configuration session is: the block of its sub-mode, that mode's name and prompt
    (None: global configuration)."""

    block: ConfigLine | None = None
    prompt: str | None = None
    mode: str | None = None
    #: Delimited text (a banner) whose next lines the session must collect, if any.
    pending: PendingText | None = None


def configure(platform: Platform, config: RunningConfig, state: ConfigState, line: str,
              rename: Callable[[str], None] | None = None) -> str:
    """Run one configuration line at ``state``: change ``config`` and ``state``, or raise
    :class:`ParseError` (nothing changed); what the device prints (a banner's ``Enter TEXT
    message`` when its text goes on: then ``state.pending`` collects the next lines). A line
    that the sub-mode does not know but global configuration does leaves the sub-mode, as on
    IOS. ``hostname NAME`` renames the device through ``rename``."""
    grammar = config_grammar(platform)
    name = state.mode if state.block is not None and state.mode else GLOBAL
    mode = grammar.modes.get(name, grammar.modes[GLOBAL])
    try:
        parsed = grammar.parse(mode, line)
    except ParseError as first:
        if mode.name == GLOBAL:
            raise
        try:
            parsed = grammar.parse(grammar.modes[GLOBAL], line)
        except ParseError as second:
            raise second if second.position > first.position else first from None
        state.block, state.prompt, state.mode = None, None, None
    words = parsed.text.split()
    if words[0] == "hostname" and len(words) == 2 and rename is not None and not parsed.negate:
        if not HOSTNAME.match(words[1]):
            raise ParseError(ParseErrorKind.INVALID, line.rindex(words[1]))
        rename(words[1])  # the device sets its configuration's hostname line
        return ""
    head = next((h for h in parsed.mode.delimited if _starts(parsed.text, h)), None)
    if head is not None and not parsed.negate:
        started = banner.start(head, parsed.text[len(head):].lstrip(" "))
        if isinstance(started, PendingText):
            state.pending = started
            return banner.prompt(started.mark)
        parsed = Parsed(started, False, parsed.rule, parsed.mode)
    _apply(grammar, config, state, parsed)
    return ""


def finish_text(config: RunningConfig, text: str) -> None:
    """Keep the line that delimited text ended in (``banner motd ^C...^C``: global)."""
    config.set(text)


def _apply(grammar: ConfigGrammar, config: RunningConfig, state: ConfigState,
           parsed: Parsed) -> None:
    text, rule, mode = parsed.text, parsed.rule, parsed.mode
    block = state.block if mode.name != GLOBAL else None
    if rule.opens is not None:
        if parsed.negate:
            _remove_block(config, text)
            state.block, state.prompt, state.mode = None, None, None
            return
        sub = grammar.modes.get(rule.opens)
        state.block = config.open_block(grammar.store_form(text))
        state.prompt = sub.prompt if sub else (_legacy_prompt(text) or "config-" + rule.opens)
        state.mode = rule.opens
        return
    if not parsed.negate and text.lower() in mode.defaults:  # `speed auto`: no line kept
        remove_prefix(config, text.rsplit(None, 1)[0], block)
        return
    if parsed.negate:
        removed = remove_prefix(config, text, block)
        shown = next((s for s in mode.negation_shown if _starts(text, s)), None)
        if shown is not None:
            _place(config, block, mode, f"no {shown}")
        elif not removed:
            config.remove(text, block)
        return
    if block is not None and mode.sequence_step and not text.split()[0].isdigit():
        text = f"{_next_sequence(block, mode.sequence_step)} {text}"
    stored = grammar.store_form(text)
    for shown in mode.negation_shown:
        if _starts(stored, shown):
            remove_prefix(config, f"no {shown}", block)
    if stored.lower().endswith(" secondary"):
        _place(config, block, mode, stored, replace=False)
    else:
        _place(config, block, mode, stored)


def _remove_block(config: RunningConfig, text: str) -> None:
    """``no interface Loopback9``: the block goes, and the ``!`` that separated it."""
    index = config._index(None)
    lowered = text.lower()
    doomed = [line for line in index.by_key.get(line_key(text), ())
              if line.text.lower() == lowered] or index.named(text)
    config.remove(text)
    for line in doomed:
        at = config.root.index(line)
        after = at + 1
        before = at - 1
        while before >= 0 and config.root[before].removed:
            before -= 1
        if after < len(config.root) and config.root[after].text == "!" and \
                before >= 0 and config.root[before].text == "!":
            config.remove_lines([config.root[after]])


def _starts(text: str, prefix: str) -> bool:
    words, head = text.lower().split(), prefix.lower().split()
    return words[:len(head)] == head


def _legacy_prompt(text: str) -> str | None:
    lowered = text.lower()
    for keyword, prompt in BLOCK_MODES.items():
        if lowered.startswith(keyword + " "):
            return prompt
    return None


def _next_sequence(block: ConfigLine, step: int) -> int:
    numbers = [int(w[0]) for w in (c.text.split() for c in block.live_children())
               if w and w[0].isdigit()]
    return (max(numbers) // step + 1) * step if numbers else step


def _place(config: RunningConfig, block: ConfigLine | None, mode: ModeGrammar, text: str,
           *, replace: bool = True) -> None:
    """Set ``text`` (replacing the line with its key when ``replace``) and, in a block, put a
    new line where the device lists it (the mode's ``order``)."""
    if block is None:
        config.set(text)
        return
    before = {id(line) for line in block.children}
    if replace:
        config.set(text, block)
    else:
        config.append(text, block)
    new = [line for line in block.children if id(line) not in before]
    if not new or not mode.order:
        return
    rank = _rank(mode.order, text)
    line = new[0]
    block.children.remove(line)
    at = len(block.children)
    for index, other in enumerate(block.children):
        if not other.removed and _rank(mode.order, other.text) > rank:
            at = index
            break
    block.children.insert(at, line)


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
        exact = config._index(None).by_key.get(" ".join(head))
        candidates = list(exact) if exact else config.root
    else:
        candidates = block.children
    doomed = [line for line in candidates
              if not line.removed and not line.children
              and line.text.lower().split()[:len(head)] == head]
    config.remove_lines(doomed, block)
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
    iftypes = tuple(str(t) for t in raw.get("interface_types", DEFAULT_IFTYPES))
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
            order=tuple(_strings(spec.get("order", []))),
            sequence_step=int(str(spec.get("sequence_step", 0))),
            delimited=tuple(d.lower() for d in _strings(spec.get("delimited", []))),
            defaults=tuple(d.lower() for d in _strings(spec.get("defaults", []))),
        )
    rewrites = tuple(Rewrite(re.compile(str(r["match"])), str(r["replace"]))
                     for r in raw.get("rewrite", []))
    return ConfigGrammar(modes=modes, iftypes=iftypes, rewrites=rewrites)


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
    return Token("kw", text=part.lower(), shown=part)


def _learn(running: str, modes: dict[str, dict[str, object]], prompts: Mapping[str, str],
           heads: Mapping[str, set[tuple[str, ...]]]) -> dict[str, list[Rule]]:
    """Rules for the shapes of the lines in the platform's running-config transcript: a line's
    first keyword (two for families such as ``ip ...``) then any words. A top-level line with
    lines under it opens a block: the mode that the grammar's block pattern with its first word
    opens, else a mode of its own (``~`` and its first word) learned from those lines."""
    openers: dict[tuple[str, ...], str] = {}
    for spec in modes.values():
        for pattern, opens in dict(spec.get("blocks", {})).items():  # type: ignore[call-overload]
            head = []
            for word in str(pattern).lower().split()[:3]:
                if word.startswith(("<", "[")):
                    break
                head.append(word)
            openers[tuple(head)] = str(opens)
    learned: dict[str, list[Rule]] = {}
    seen: set[tuple[str, tuple[str, ...], bool, str | None]] = set()
    lines = [raw for raw in running.splitlines()
             if raw.strip() and not raw.lstrip().startswith(("!", ":"))
             and raw.split()[0][0].islower()]
    current: str | None = None
    # One level of indentation: 1 space on IOS, 2 on NX-OS, 3 on EOS.
    unit = min((len(r) - len(r.lstrip(" ")) for r in lines if r.startswith(" ")), default=1)
    for at, raw in enumerate(lines):
        depth = len(raw) - len(raw.lstrip(" "))
        if depth == 0:
            has_children = at + 1 < len(lines) and lines[at + 1].startswith(" ")
            words = [w.lower() for w in raw.split()]
            opener = next((openers[tuple(words[:k])] for k in (3, 2, 1)
                           if tuple(words[:k]) in openers), None)
            kind = words[:2] if len(words) > 1 and _KEYWORDISH.match(raw.split()[1]) else words[:1]
            current = (opener or "~" + " ".join(kind)) if has_children else None
            _learn_line(learned, seen, GLOBAL, raw, current, heads.get(GLOBAL, set()))
        elif depth == unit and current is not None:
            _learn_line(learned, seen, current, raw, None, heads.get(current, set()))
    for mode in learned:
        if mode.startswith("~") and mode not in modes:
            modes[mode] = {"prompt": prompts.get(mode[1:]) or prompts.get(mode[1:].split()[0])
                           or _legacy_prompt(mode[1:] + " x") or f"config-{mode[1:].split()[0]}"}
    return learned


def _learn_line(learned: dict[str, list[Rule]],
                seen: set[tuple[str, tuple[str, ...], bool, str | None]],
                mode: str, raw: str, opens: str | None, heads: set[tuple[str, ...]]) -> None:
    words = raw.split()
    if words[0] == "no" and len(words) > 1:
        words = words[1:]
    if not _KEYWORDISH.match(words[0]) or words == ["end"]:  # `end` closes the file
        return
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
