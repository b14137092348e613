"""How the transport benchmark checks NETCONF rounds, by mode and payload.

- ``cli`` reads: each round is the CLI text of the commands, checked as the SSH and HTTPS modes'
  rounds are (:meth:`~mgmtbench.testing.sites.Site.output_check`).
- ``yang`` reads: each round is one ``<data>`` element per command, each with data in it, and
  the first round's valid against the published YANG modules (:mod:`mgmtbench.emulator.yang.
  validate`, libyang: names, types and keys, as a filtered reply need not hold every mandatory
  node); the validator's library comes with ``pip install 'mgmtbench[yang]'`` (in ``[test]``).
- ``edit-commit``: each round is the edit's ``ok`` and the commit's ``ok``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lxml import etree

from mgmtbench.clients.netconf import rpcs
from mgmtbench.errors import UsageError
from mgmtbench.targets import Target
from mgmtbench.testing.modelled import unsupported_reads
from mgmtbench.testing.sites import OutputCheck, Site

_DATA = "{urn:ietf:params:xml:ns:netconf:base:1.0}data"


def netconf_unsupported(platform: str, commands: Sequence[str], mode: str,
                        payload: str) -> str | None:
    """Why a NETCONF benchmark cannot run (a command the ``yang`` payload has no read for),
    or None."""
    return unsupported_reads(platform, commands, mode, payload, rpcs.check_commands)


def _documents(text: str) -> list[etree._Element]:
    """The ``<data>`` elements a round's output holds, in order."""
    wrapped = f"<round>{text}</round>".encode()
    root = etree.fromstring(wrapped, etree.XMLParser(resolve_entities=False, no_network=True))
    return [node for node in root if node.tag == _DATA]


def netconf_output_check(site: Site, target: Target, commands: Sequence[str], mode: str,
                         payload: str) -> OutputCheck:
    """The check for one NETCONF benchmark (see the module docstring)."""
    if mode == "edit-commit":
        def edited(outputs: Sequence[str]) -> str | None:
            wrong = [i for i, out in enumerate(outputs) if out != "ok\nok\n"]
            return None if not wrong else (
                f"rounds {wrong} were not the edit's and the commit's ok (first: "
                f"{outputs[wrong[0]][:200]!r})")
        return edited
    if payload == "cli":
        return site.output_check(target, commands)
    validate = _validator()

    def modelled(outputs: Sequence[str]) -> str | None:
        for index, out in enumerate(outputs):
            try:
                documents = _documents(out)
            except etree.XMLSyntaxError as exc:
                return f"round {index} is not XML: {exc}"
            if len(documents) != len(commands):
                return (f"round {index} has {len(documents)} <data> replies for "
                        f"{len(commands)} commands")
            empty = [commands[i] for i, doc in enumerate(documents) if len(doc) == 0]
            if empty:
                return f"round {index}: no data for {empty[0]!r}"
            if index == 0:  # the first round: the rest are alike
                for command, doc in zip(commands, documents, strict=True):
                    problem = validate(doc)
                    if problem:
                        return f"{command!r}: the reply is not valid YANG data: {problem}"
        return None

    return modelled


def _validator() -> Callable[[etree._Element], str | None]:
    """A function that returns the YANG validator's complaint about a filtered ``<data>``
    element (None if valid); :class:`UsageError` if its library is not installed."""
    try:
        from mgmtbench.emulator.yang.validate import YangValidationError, validator
    except ImportError as exc:
        raise UsageError("the yang payload's replies are checked against the YANG modules: "
                         "pip install 'mgmtbench[yang]'") from exc
    checker = validator()

    def problem(data: etree._Element) -> str | None:
        try:
            checker.validate_xml(data, config_only=False, complete=False)
        except YangValidationError as exc:
            return str(exc)
        return None

    return problem
