"""Structured output: the JSON a platform gives for a show command, as its own tools read it.

EOS and NX-OS print it for ``show ... | json``, and their HTTP APIs (eAPI, NX-API,
:mod:`mgmtbench.emulator.platformapi`) answer with it. Here it is made from the text the device
prints for the same command, parsed back: the CLI and the APIs show one state, whatever makes the
text (a transcript, a view that follows the configuration, counters that move).

A platform with structured output has a module here named after it (``arista_eos.py``) whose
``SHAPES`` maps a command's words (as the command tree names them, arguments as ``<word>``) to a
:data:`Shape`. A command without one is what EOS calls an unconverted command. A platform whose pipes print
other forms (Junos's ``| display xml``, ``| display json``) also has ``RENDERERS``: the text
each such pipe prints for a command, by the pipe's name (:func:`render`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from mgmtbench.emulator.device.device import Device

__all__ = ["Shape", "ShapeInput", "render", "render_json", "shape_for", "structured"]

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class ShapeInput:
    """What a shape is made from: the command's text output, its arguments and the device."""

    text: str
    args: tuple[str, ...]
    device: Device


#: The JSON object of a command, from its text output.
Shape = Callable[[ShapeInput], JsonObject]


@cache
def _shapes(platform: str) -> Mapping[str, Shape]:
    try:
        module = importlib.import_module(f"{__name__}.{platform}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{platform}":
            raise
        return {}
    shapes: Mapping[str, Shape] = module.SHAPES
    return shapes


#: What a pipe of :data:`~mgmtbench.emulator.cli.filters.FORMATS` prints for a command (its
#: words) whose text output is the input's.
Renderer = Callable[[tuple[str, ...], ShapeInput], str | None]


@cache
def _renderers(platform: str) -> Mapping[str, Renderer]:
    try:
        module = importlib.import_module(f"{__name__}.{platform}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{platform}":
            raise
        return {}
    renderers: Mapping[str, Renderer] = getattr(module, "RENDERERS", {})
    return renderers


def shape_for(platform: str, words: tuple[str, ...]) -> Shape | None:
    """The shape of the command ``words`` on ``platform``, or None (an unconverted command)."""
    return _shapes(platform).get(" ".join(words))


def structured(device: Device, words: tuple[str, ...], args: tuple[str, ...],
               text: str) -> JsonObject | None:
    """The JSON object for command ``words`` (with ``args``) whose text output is ``text``, or
    None when the platform has no structured form of it."""
    shape = shape_for(device.platform.style.name, words)
    if shape is None:
        return None
    return shape(ShapeInput(text, args, device))


#: The pipes that print a command's JSON (NX-OS's ``json-pretty`` too), as :func:`render_json`
#: prints it unless the platform has a renderer of its own for the pipe.
JSON_PIPES = frozenset({"json", "json-pretty"})


def render_json(value: JsonObject) -> str:
    """``value`` as EOS and NX-OS print it after ``| json``: indented by two, keys as made."""
    return json.dumps(value, indent=2) + "\n"


def render(device: Device, pipe: str, words: tuple[str, ...], args: tuple[str, ...],
           text: str) -> str | None:
    """What the pipe ``pipe`` (``json``, Junos's ``junos:display-xml`` ...) prints for command
    ``words`` (with ``args``) whose text output is ``text``; None: the platform has no such
    form of it (an unconverted command)."""
    renderer = _renderers(device.platform.style.name).get(pipe)
    if renderer is not None:
        return renderer(words, ShapeInput(text, args, device))
    if pipe in JSON_PIPES:
        value = structured(device, words, args, text)
        return None if value is None else render_json(value)
    return None
