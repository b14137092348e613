"""Cisco NX-API at ``POST /ins``, in both of its JSON forms, as NAPALM's nxos driver (through
its own client, ``napalm.nxapi_plumbing``), Ansible's cisco.nxos (``connection: httpapi``) and
scripts written after Cisco's NX-API sandbox call it.

- JSON-RPC 2.0 (``Content-Type: application/json-rpc``): one call, or a list of calls, each
  ``{"jsonrpc": "2.0", "method": "cli" | "cli_ascii", "params": {"cmd": ..., "version": 1},
  "id": N}``. ``cli`` answers a show command with its structured form
  (:mod:`mgmtbench.emulator.structured`, the same as ``show ... | json``) as ``{"body": ...}``
  and other commands with ``null`` (or ``{"msg": ...}`` when they print something);
  ``cli_ascii`` answers every command with ``{"msg": <what the CLI prints>}``.
- ``ins_api`` (``Content-Type: application/json``): ``{"ins_api": {"version": "1.0", "type":
  "cli_show" | "cli_show_ascii" | "cli_conf", "chunk": "0", "sid": "1", "input": "cmd1 ;cmd2",
  "output_format": "json"}}``, answered with ``{"ins_api": {..., "outputs": {"output": ...}}}``:
  one output object per command (the object itself for one command, a list for several) with
  ``input``, ``code`` ("200"), ``msg`` ("Success") and ``body``.

The commands of one request run in order in one CLI session (a new one per request) at
privilege 15, so N commands in one request get one response. Configuration commands need no
``configure terminal``: a command that is no exec command is typed in configuration mode
(entered as needed), and an exec command typed there leaves it, as NX-API does; what they
change is the state the CLI shows.

Errors, as NX-API gives them (worded from memory of NX-OS 9.3/10.x, not a capture): a command
the CLI refuses is JSON-RPC error -32602 ``Invalid params`` with ``data.msg`` the CLI's error
lines (``% Invalid command at '^' marker.``), and in ``ins_api`` an output with code "400",
msg ``Input CLI command error`` and ``clierror``; a show command without structured output is
-32603 / code "501" ``Structured output unsupported``. The first failing command stops the
request (NX-API's default ``stop-on-error``; ``ins_api``'s ``"rollback": "continue-on-error"``
runs the rest, ``"rollback-on-error"`` also puts the running configuration back as it was): the
JSON-RPC answer holds the replies up to the error, the ``ins_api`` answer the outputs up to it.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from mgmtbench.emulator.cli.configdiff import parse, replace_commands
from mgmtbench.emulator.cli.engine import Reply
from mgmtbench.emulator.cli.fileops import apply_config, running_text, same_setting
from mgmtbench.emulator.cli.grammar import ParseError
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.platformapi import ApiAnswer, ApiRequest

PATH = b"/ins"
#: JSON-RPC 2.0's error codes, as NX-API uses them.
PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS, INTERNAL = (
    -32700, -32600, -32601, -32602, -32603)
UNSUPPORTED = "Structured output unsupported"
#: Seconds of CLI work before the loop's other tasks get a turn (as eAPI).
_SLICE = 0.02

Json = dict[str, Any]


@dataclass(frozen=True)
class _Result:
    """One command's outcome: its text, its JSON (structured commands) or why it failed."""

    ok: bool
    text: str
    value: Json | None = None
    unsupported: bool = False


async def answer(device: Device, request: ApiRequest) -> ApiAnswer:
    """Answer one NX-API request."""
    if request.method != "POST":
        return ApiAnswer(405, "text/plain", b"NX-API takes requests by POST\n")
    try:
        body = json.loads(request.body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        if "json-rpc" in request.content_type:
            return _json(_rpc_error(None, PARSE_ERROR, "Parse error", str(exc)))
        return _json(_ins_failure("Request is not valid JSON"), 400)
    if "json-rpc" in request.content_type or isinstance(body, list) or (
            isinstance(body, dict) and "jsonrpc" in body):
        return _json(await _json_rpc(device, body, request))
    if isinstance(body, dict) and isinstance(body.get("ins_api"), dict):
        return await _ins_api(device, body["ins_api"], request)
    return _json(_ins_failure("Request has no ins_api object"), 400)


def _json(value: object, status: int = 200) -> ApiAnswer:
    return ApiAnswer(status, "application/json", json.dumps(value).encode())


# --- running commands ---------------------------------------------------------------------------

def _exec_words(session: CliSession, command: str) -> tuple[str, ...] | None:
    """The words of exec command ``command``, or None when it is no exec command (a
    configuration line)."""
    try:
        return session.trees().priv.match(command).words
    except ParseError:
        return None


def _execute(session: CliSession, command: str, is_exec: bool) -> Reply:
    """Run ``command`` where it belongs: exec commands in exec mode, others in configuration
    mode (entered as needed)."""
    if session.mode is Mode.CONFIG:
        reply = session.execute(command)
        if reply.ok or not is_exec:
            return reply
        session.end_config()
        return session.execute(command)
    if is_exec:
        return session.execute(command)
    session.execute("configure terminal")
    return session.execute(command)


def _run(session: CliSession, command: str, structured: bool) -> _Result:
    """Run one command, as text or (a show command, ``structured``) as its JSON. The command is
    matched once to tell exec from configuration, then run (which matches it again)."""
    words = _exec_words(session, command)
    as_json = structured and "|" not in command and (words or ())[:1] == ("show",)
    reply = _execute(session, command + " | json" if as_json else command, words is not None)
    text = reply.text()
    if not reply.ok:
        unsupported = as_json and text == session.device.platform.style.unconverted
        return _Result(False, UNSUPPORTED if unsupported else text, unsupported=unsupported)
    if as_json:
        value: Json = json.loads(text)
        return _Result(True, text, value)
    return _Result(True, text)


def _session(device: Device, request: ApiRequest) -> CliSession:
    return CliSession(device, mode=Mode.PRIV, user="admin", max_line=request.limits.max_line,
                      max_output=request.limits.max_output)


async def _pace(device: Device, command: str, yielded: float) -> float:
    """The device's processing delay before a command, and a turn for the loop's other tasks
    now and then; the time of the last turn."""
    if device.processing_delay and command.strip():
        await asyncio.sleep(device.processing_delay)
    if time.monotonic() - yielded > _SLICE:
        await asyncio.sleep(0)
        return time.monotonic()
    return yielded


# --- JSON-RPC -----------------------------------------------------------------------------------

def _rpc_error(ident: object, code: int, message: str, msg: str | None = None) -> Json:
    error: Json = {"code": code, "message": message}
    if msg is not None:
        error["data"] = {"msg": msg}
    return {"jsonrpc": "2.0", "error": error, "id": ident}


async def _json_rpc(device: Device, body: object, request: ApiRequest) -> object:
    calls = body if isinstance(body, list) else [body]
    if not calls:
        return _rpc_error(None, INVALID_REQUEST, "Invalid request", "empty batch")
    if len(calls) > request.limits.max_commands:
        return _rpc_error(None, INVALID_REQUEST, "Invalid request",
                          f"{len(calls)} commands in one request (limit "
                          f"{request.limits.max_commands})")
    session = _session(device, request)
    replies: list[Json] = []
    yielded = time.monotonic()
    for call in calls:
        reply = _rpc_call(session, call)
        replies.append(reply)
        if "error" in reply:
            break
        yielded = await _pace(device, "command", yielded)
    return replies if isinstance(body, list) else replies[0]


def _rpc_call(session: CliSession, call: object) -> Json:
    if not isinstance(call, dict) or call.get("jsonrpc") != "2.0":
        return _rpc_error(call.get("id") if isinstance(call, dict) else None, INVALID_REQUEST,
                          "Invalid request")
    ident = call.get("id")
    method = call.get("method")
    if method not in ("cli", "cli_ascii"):
        return _rpc_error(ident, NO_METHOD, "Method not found")
    params = call.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("cmd"), str):
        return _rpc_error(ident, INVALID_PARAMS, "Invalid params", "params need a cmd string")
    if params.get("version", 1) not in (1, 1.0, "1", "1.0"):
        return _rpc_error(ident, INVALID_PARAMS, "Invalid params",
                          f"unknown version {params.get('version')!r}")
    result = _run(session, params["cmd"], method == "cli")
    if not result.ok:
        if result.unsupported:
            return _rpc_error(ident, INTERNAL, "Internal error", UNSUPPORTED)
        return _rpc_error(ident, INVALID_PARAMS, "Invalid params", result.text)
    value: Json | None
    if method == "cli_ascii":
        value = {"msg": result.text}
    elif result.value is not None:
        value = {"body": result.value} if result.value else None
    else:
        value = {"msg": result.text} if result.text.strip() else None
    return {"jsonrpc": "2.0", "result": value, "id": ident}


# --- ins_api ------------------------------------------------------------------------------------

_TYPES = ("cli_show", "cli_show_ascii", "cli_conf", "cli_show_array")


def _ins_failure(message: str) -> Json:
    return {"ins_api": {"outputs": {"output": {"code": "400", "msg": message}}}}


async def _ins_api(device: Device, ins: Json, request: ApiRequest) -> ApiAnswer:
    kind = ins.get("type")
    if kind not in _TYPES:
        return _json(_ins_failure(f"Invalid type {kind!r} (one of {', '.join(_TYPES)})"), 400)
    if str(ins.get("output_format", "json")) != "json":
        return _json(_ins_failure("This server answers output_format json only"), 400)
    if not isinstance(ins.get("input"), str):
        return _json(_ins_failure("input must be a string of commands separated by ' ;'"),
                     400)
    commands = [part.strip() for part in ins["input"].split(";") if part.strip()]
    if not commands:
        return _json(_ins_failure("No command in input"), 400)
    if len(commands) > request.limits.max_commands:
        return _json(_ins_failure(f"{len(commands)} commands in one request (limit "
                                  f"{request.limits.max_commands})"), 400)
    on_error = str(ins.get("rollback", "stop-on-error"))
    session = _session(device, request)
    before = running_text(device) if on_error == "rollback-on-error" else None
    outputs: list[Json] = []
    yielded = time.monotonic()
    for command in commands:
        result = _run(session, command, kind in ("cli_show", "cli_show_array"))
        outputs.append(_ins_output(command, result, kind))
        if not result.ok and on_error != "continue-on-error":
            if before is not None:
                session.end_config()
                apply_config(session, replace_commands(parse(running_text(device)),
                                                       parse(before), same_setting))
            break
        yielded = await _pace(device, command, yielded)
    return _json({"ins_api": {"type": kind, "version": str(ins.get("version", "1.0")),
                              "sid": "eoc",
                              "outputs": {"output": outputs[0] if len(outputs) == 1
                                          else outputs}}})


def _ins_output(command: str, result: _Result, kind: str) -> Json:
    if not result.ok:
        if result.unsupported:
            return {"input": command, "msg": UNSUPPORTED, "code": "501"}
        return {"input": command, "msg": "Input CLI command error", "clierror": result.text,
                "code": "400"}
    body: object
    if kind == "cli_show_ascii":
        body = result.text
    elif result.value is not None:
        body = result.value
    else:
        body = {} if not result.text.strip() or kind == "cli_conf" else result.text
    return {"input": command, "msg": "Success", "code": "200", "body": body}
