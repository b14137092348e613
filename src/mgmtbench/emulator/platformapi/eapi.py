"""Arista eAPI: JSON-RPC 2.0 ``runCmds`` at ``POST /command-api``, as pyeapi, NAPALM's eos
driver and Ansible's arista.eos (``connection: httpapi``) call it.

A request carries a list of commands (strings, or ``{"cmd": ..., "input": ...}``) and a format:

- ``"json"`` (the default): one JSON object per command; a ``show`` command's is its structured
  form (:mod:`mgmtbench.emulator.structured`, the same as ``show ... | json``), a show command
  without one fails as EOS's "unconverted command" (code 1003); other commands give ``{}``, or
  ``{"messages": [...]}`` when they print something (``write memory``);
- ``"text"``: ``{"output": <what the CLI prints>}`` per command.

The commands run in order in one CLI session (a new one per request, as on EOS), at privilege 15
as the device's HTTPS API does: ``enable`` is taken as EOS takes it from a privilege-15 user,
whatever its ``input``. The first command that fails stops the request: the answer is a JSON-RPC
error whose ``data`` holds the results before it and ``{"errors": [...]}`` for it, with EOS's
codes (1002 invalid command, 1003 unconverted command, 1000 any other failure) and message
(``CLI command 2 of 3 'show foo' failed: invalid command``). ``timestamps: true`` adds ``_meta``
(start time and duration) to each result.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.platformapi import ApiAnswer, ApiRequest

PATH = b"/command-api"
INVALID = 1002
UNCONVERTED = 1003
FAILED = 1000
#: JSON-RPC 2.0's own error codes.
PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS = -32700, -32600, -32601, -32602
#: Seconds of CLI work before the loop's other tasks get a turn (as the HTTPS API's POST).
_SLICE = 0.02

Json = dict[str, Any]


class _RpcError(Exception):
    def __init__(self, code: int, message: str, data: list[Json] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


async def answer(device: Device, request: ApiRequest) -> ApiAnswer:
    """Answer one eAPI request (HTTP 200 with a JSON-RPC result or error, as EOS does)."""
    if request.method != "POST":
        return ApiAnswer(405, "text/plain", b"eAPI takes JSON-RPC requests by POST\n")
    ident: object = None
    try:
        call = _parse(request.body)
        ident = call.get("id")
        _check(call)
        result = await _run_cmds(device, call.get("params"), request)
        reply: Json = {"jsonrpc": "2.0", "id": ident, "result": result}
    except _RpcError as exc:
        error: Json = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        reply = {"jsonrpc": "2.0", "id": ident, "error": error}
    return ApiAnswer(200, "application/json", json.dumps(reply).encode())


def _parse(body: bytes) -> Json:
    try:
        call = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _RpcError(PARSE_ERROR, f"Parse error: {exc}") from None
    if not isinstance(call, dict):
        raise _RpcError(INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 request object")
    return call


def _check(call: Json) -> None:
    if call.get("jsonrpc") != "2.0":
        raise _RpcError(INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 request object")
    if call.get("method") != "runCmds":
        raise _RpcError(NO_METHOD, f"Method not found: {call.get('method')!r} (use runCmds)")


def _commands(params: object, limit: int) -> tuple[list[str], str, bool]:
    """The commands, the format and whether to add timestamps. A command given as ``{"cmd":
    ..., "input": ...}`` runs without its input: the only one pyeapi sends is ``enable``'s
    password, which a privilege-15 session does not ask for."""
    if not isinstance(params, dict) or "cmds" not in params:
        raise _RpcError(INVALID_PARAMS, "Invalid params: runCmds takes version, cmds and format")
    if params.get("version", 1) not in (1, "latest"):
        raise _RpcError(INVALID_PARAMS, f"Invalid params: unknown version {params['version']!r}")
    form = params.get("format", "json")
    if form not in ("json", "text"):
        raise _RpcError(INVALID_PARAMS, f"Invalid params: format {form!r} (json or text)")
    raw = params["cmds"]
    if not isinstance(raw, list) or not raw:
        raise _RpcError(INVALID_PARAMS, "Invalid params: cmds must be a non-empty list")
    if len(raw) > limit:
        raise _RpcError(INVALID_PARAMS, f"Invalid params: {len(raw)} commands in one request "
                        f"(limit {limit})")
    commands: list[str] = []
    for item in raw:
        if isinstance(item, str):
            commands.append(item)
        elif isinstance(item, dict) and isinstance(item.get("cmd"), str):
            commands.append(item["cmd"])
        else:
            raise _RpcError(INVALID_PARAMS, f"Invalid params: command {item!r} is neither a "
                            "string nor {\"cmd\": ..., \"input\": ...}")
    return commands, form, bool(params.get("timestamps", False))


async def _run_cmds(device: Device, params: object, request: ApiRequest) -> list[Json]:
    limits = request.limits
    commands, form, stamps = _commands(params, limits.max_commands)
    session = CliSession(device, mode=Mode.PRIV, max_line=limits.max_line,
                         max_output=limits.max_output)
    results: list[Json] = []
    yielded = time.monotonic()
    for index, command in enumerate(commands, 1):
        if device.processing_delay and command.strip():
            await asyncio.sleep(device.processing_delay)
        started = time.time()
        code, value = _one(session, command, form)
        if code is not None:
            what = {INVALID: "invalid command", UNCONVERTED: "unconverted command"}.get(
                code, "could not run command")
            raise _RpcError(code, f"CLI command {index} of {len(commands)} {command!r} failed: "
                            f"{what}", [*results, value])
        if stamps:
            value["_meta"] = {"execStartTime": round(started, 6),
                              "execDuration": round(time.time() - started, 6)}
        results.append(value)
        if time.monotonic() - yielded > _SLICE:
            await asyncio.sleep(0)
            yielded = time.monotonic()
    return results


def _one(session: CliSession, command: str, form: str) -> tuple[int | None, Json]:
    """Run one command: (None, its result) or (an error code, ``{"errors": [...]}``)."""
    structured = (form == "json" and "|" not in command
                  and session.command_words(command)[:1] == ("show",))
    reply = session.execute(command + " | json" if structured else command)
    text = reply.text()
    if not reply.ok:
        if structured and text == session.device.platform.style.unconverted:
            return UNCONVERTED, {"errors": [_message(text)]}
        return (INVALID if _refused(session, text) else FAILED), {"errors": [_message(text)]}
    if form == "text":
        return None, {"output": text}
    if structured:
        value: Json = json.loads(text)
        return None, value
    messages = [line for line in text.splitlines() if line.strip()]
    return None, ({"messages": messages} if messages else {})


def _refused(session: CliSession, text: str) -> bool:
    """Whether ``text`` is the platform's refusal of a command it does not know (invalid,
    incomplete or ambiguous), rather than a command that ran and failed."""
    style = session.device.platform.style
    return any(text.startswith(template.split("{")[0]) for template in
               (style.invalid, style.incomplete, style.ambiguous) if template.split("{")[0])


def _message(text: str) -> str:
    """An error line as eAPI words it: without the ``% `` and the newline."""
    return " ".join(line.strip().removeprefix("% ") for line in text.splitlines()
                    if line.strip())
