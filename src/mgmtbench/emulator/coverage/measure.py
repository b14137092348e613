"""Run one tool against one platform's served device and count what the device answered."""

from __future__ import annotations

import re
import tempfile

from mgmtbench.emulator.coverage import Target, ToolRun
from mgmtbench.emulator.coverage.parsers import PARSERS, parser
from mgmtbench.emulator.coverage.tools import drivers, tool
from mgmtbench.emulator.device.device import Heard
from mgmtbench.emulator.options import Credentials, EmulatorOptions
from mgmtbench.emulator.server import EmulatorThread

USERNAME, PASSWORD, SECRET = "netops", "coverage-pw", "coverage-en"
#: The lines a CLI session types in configuration mode are configuration, not commands.
_CONFIG = "config"
_STRUCTURED = re.compile(r"\|\s*(json|display\s+(xml|json))")


def measure(tool_name: str, platform: str, hostname: str = "cov1") -> ToolRun:
    """Serve one ``platform`` device on loopback, run ``tool_name`` against it, and return
    what it sent, what was answered, and what the parsers made of the answers."""
    driver = drivers(tool_name)[platform]
    run = ToolRun(tool_name, platform, driver)
    options = EmulatorOptions(platform=platform, hostname=hostname,
                              credentials=Credentials(USERNAME, PASSWORD, SECRET))
    with EmulatorThread(options) as emu, tempfile.TemporaryDirectory() as work:
        endpoint = emu.endpoints[0]
        assert endpoint.ssh_port is not None
        tls = emu.emulator.tls
        heard: list[Heard] = []
        endpoint.device.heard = heard
        target = Target(platform, endpoint.host, endpoint.ssh_port, endpoint.https_port,
                        hostname, USERNAME, PASSWORD, SECRET,
                        str(tls.ca) if tls is not None else None, work,
                        endpoint.netconf_port or endpoint.ssh_port)
        try:
            run.outcomes = tool(tool_name).run(target)
        except Exception as exc:  # a tool that cannot run at all is reported
            run.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        endpoint.device.heard = None
    answers: dict[str, str] = {}
    for line in heard:
        if line.mode == _CONFIG or not line.line.strip():
            continue
        command = " ".join(line.line.split())
        run.sent[command] = run.sent.get(command, False) or line.ok
        if line.ok:
            answers.setdefault(command, line.output)
    for name in PARSERS:
        tried = parsed = 0
        for command, text in answers.items():
            if not command.startswith("show ") or _STRUCTURED.search(command):
                continue  # text parsers parse text, not ``| json`` or ``| display xml``
            verdict = parser(name).parses(platform, command, text)
            if verdict is None:
                continue
            tried += 1
            parsed += verdict
        run.parsed[name] = (parsed, tried)
    return run
