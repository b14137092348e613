"""How the transport benchmark checks RESTCONF rounds, by mode and payload.

- ``cli`` reads: each round is the CLI text of the commands (the study's envelope unwrapped),
  checked as the SSH and HTTPS modes' rounds are (:meth:`~mgmtbench.testing.sites.Site.
  output_check`).
- ``yang`` reads: each round is one document per command (JSON, or XML in ``json-vs-xml``),
  each with data in it, and the first round's valid against the published YANG modules
  (:mod:`mgmtbench.emulator.yang.validate`: names, types and keys, as a ``fields`` reply need
  not hold every mandatory node).
- ``batch-patch``: each round is the patch's status: the study's ``yang-patch-status`` for
  ``cli``, ``ok`` for an RFC 8072 patch (``yang``). The study's batch answers no output, so a
  ``cli`` batch round shows the commands were taken, not what they printed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from lxml import etree

from mgmtbench.clients.netconf import rpcs
from mgmtbench.clients.restconf import requests
from mgmtbench.targets import Target
from mgmtbench.testing.modelled import unsupported_reads
from mgmtbench.testing.sites import OutputCheck, Site

_RESTCONF_DATA = "{urn:ietf:params:xml:ns:yang:ietf-restconf}data"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)


def restconf_unsupported(platform: str, commands: Sequence[str], mode: str,
                         payload: str) -> str | None:
    """Why a RESTCONF benchmark cannot run (a command the ``yang`` payload has no read for),
    or None."""
    return unsupported_reads(platform, commands, mode, payload, rpcs.check_commands)


def json_documents(text: str) -> list[Any]:
    """The JSON documents a round's output holds, in order."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return found
        value, position = decoder.raw_decode(text, position)
        found.append(value)


def xml_documents(text: str) -> list[etree._Element]:
    """The XML documents (elements) a round's output holds, in order."""
    root = etree.fromstring(f"<round>{text}</round>".encode(), _PARSER)
    return [node for node in root if isinstance(node.tag, str)]


def _tops(document: Any) -> Any:
    """A JSON reply's top-level data (the datastore's members for ``ietf-restconf:data``)."""
    if isinstance(document, dict) and set(document) == {"ietf-restconf:data"}:
        return document["ietf-restconf:data"]
    return document


def restconf_output_check(site: Site, target: Target, commands: Sequence[str], mode: str,
                          payload: str) -> OutputCheck:
    """The check for one RESTCONF benchmark (see the module docstring)."""
    if mode == "batch-patch":
        expected = requests.batch_ok(payload)

        def patched(outputs: Sequence[str]) -> str | None:
            wrong = [i for i, out in enumerate(outputs) if out != expected]
            return None if not wrong else (
                f"rounds {wrong} were not the patch's {expected.strip()!r} (first: "
                f"{outputs[wrong[0]][:200]!r})")
        return patched
    if payload == "cli":
        return site.output_check(target, commands)
    xml = mode == "json-vs-xml"
    validate = _validator(xml)

    def modelled(outputs: Sequence[str]) -> str | None:
        for index, out in enumerate(outputs):
            try:
                documents: list[Any] = xml_documents(out) if xml else json_documents(out)
            except (ValueError, etree.XMLSyntaxError) as exc:
                return f"round {index} is not {'XML' if xml else 'JSON'}: {exc}"
            if len(documents) != len(commands):
                return (f"round {index} has {len(documents)} replies for {len(commands)} "
                        "commands")
            empty = [commands[i] for i, doc in enumerate(documents)
                     if not (len(doc) if xml else _tops(doc))]
            if empty:
                return f"round {index}: no data for {empty[0]!r}"
            if index == 0:
                for command, doc in zip(commands, documents, strict=True):
                    problem = validate(doc)
                    if problem:
                        return f"{command!r}: the reply is not valid YANG data: {problem}"
        return None

    return modelled


def _validator(xml: bool) -> Callable[[Any], str | None]:
    """The YANG validator's complaint about one reply (None if valid)."""
    from mgmtbench.emulator.yang.validate import YangValidationError, validator

    checker = validator()

    def problem(document: Any) -> str | None:
        try:
            if xml:
                nodes = list(document) if document.tag == _RESTCONF_DATA else [document]
                checker.validate_xml("".join(etree.tostring(n, encoding="unicode")
                                             for n in nodes), config_only=False,
                                     complete=False)
            else:
                checker.validate_json(_tops(document), config_only=False, complete=False)
        except YangValidationError as exc:
            return str(exc)
        return None

    return problem
