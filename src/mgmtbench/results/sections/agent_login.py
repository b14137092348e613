"""What agent-based login costs (``benchmarks/test_agent_login.py``): per profile and client,
one login (connect, log in, one exec and its output, close) with a password, a key file and the
same key held by an ssh-agent; the server's host key type; and fleets logging in through one
agent, with the agent's CPU."""

from __future__ import annotations

import pandas as pd

from mgmtbench.results.charts import login_bars
from mgmtbench.results.sections.agent import KIND_ORDER
from mgmtbench.results.sections.base import ReportContext, Section, generic, markdown_table

EXPERIMENT = "agent-login"
KEYS = ("client", "auth", "kind", "profile", "sessions", "server", "host_key")
CLIENT_ORDER = ("asyncssh", "paramiko", "openssh")


def _rank(values: pd.Series, order: tuple[str, ...]) -> pd.Series:
    return values.map(lambda v: order.index(v) if v in order else len(order))


def logins(frame: pd.DataFrame) -> pd.DataFrame:
    """Single logins to the lab's emulator (not the host-key or fleet rows)."""
    sessions = pd.to_numeric(frame["sessions"], errors="coerce")
    return frame[(sessions == 1) & (frame["server"] == "emulator")
                 & (frame["profile"] != "loopback")]


def login_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per client and key type: median ms with a key file and through the agent, the password
    login beside them, agent - key and agent / key, the agent's CPU per login."""
    keyed = rows[rows["auth"] != "password"]
    table = keyed.pivot_table(index=["client", "kind"], columns="auth", values="median_ms",
                              aggfunc="last")
    for column in ("key", "agent"):
        if column not in table:
            table[column] = float("nan")
    password = rows[rows["auth"] == "password"].groupby("client")["median_ms"].last()
    table["password"] = [password.get(client, float("nan")) for client, _ in table.index]
    table["agent - key"] = table["agent"] - table["key"]
    table["agent / key"] = table["agent"] / table["key"]
    if "agent_cpu_ms_per_login" in keyed:
        cpu = keyed[keyed["auth"] == "agent"].groupby(["client", "kind"])[
            "agent_cpu_ms_per_login"].last()
        table["agent CPU ms/login"] = [cpu.get(i, float("nan")) for i in table.index]
    out = table.reset_index()
    out.columns.name = None
    out = out.assign(o1=_rank(out["client"], CLIENT_ORDER), o2=_rank(out["kind"], KIND_ORDER))
    out = out.sort_values(["o1", "o2"]).drop(columns=["o1", "o2"])
    return out[[c for c in ("client", "kind", "password", "key", "agent", "agent - key",
                            "agent / key", "agent CPU ms/login") if c in out]]


def host_key_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows server, columns host key type: median ms of a key-file login."""
    part = frame[frame["profile"] == "loopback"]
    if part.empty:
        return part
    table = part.pivot_table(index="server", columns="host_key", values="median_ms",
                             aggfunc="last")
    table = table[[h for h in ("ed25519", "ecdsa", "rsa") if h in table]]
    out = table.reset_index()
    out.columns.name = None
    return out


def fleet_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Fleet runs: per profile, client, login method, key type and sessions."""
    sessions = pd.to_numeric(frame["sessions"], errors="coerce")
    part = frame[sessions > 1].copy()
    if part.empty:
        return part
    part["sessions"] = pd.to_numeric(part["sessions"]).astype(int)
    part = part.assign(o1=_rank(part["client"], CLIENT_ORDER), o2=_rank(part["kind"], KIND_ORDER))
    part = part.sort_values(["profile", "o1", "sessions", "o2", "auth"])
    columns = ["profile", "client", "sessions", "kind", "auth", "makespan_ms", "connect_exec_ms",
               "connect_exec_p95_ms", "agent_cpu_pct", "agent_cpu_ms_per_login",
               "client_cpu_pct"]
    return part[[c for c in columns if c in part]]


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """Login tables and bars per profile, the host-key table, the fleet table."""
    if not {"client", "auth", "kind", "profile", "sessions", "server"} <= set(frame.columns):
        return generic(EXPERIMENT, frame)
    lines: list[str] = ["## What agent-based login costs", ""]
    charts = []
    single = logins(frame)
    for profile, rows in single.groupby("profile", sort=False):
        info = rows.iloc[0]
        lines += [f"### Login at {profile}", "",
                  f"Backend {info.get('backend')}, measured RTT {info.get('measured_rtt_ms')} ms. "
                  "One login per round (connect, key exchange, login, one exec of "
                  f"{info.get('command')!r} and its output, close), median ms. `key`: the client "
                  "reads the private key file (every connection); `agent`: an ssh-agent holding "
                  "only that key signs. `ssh` cannot type a password.", "",
                  markdown_table(login_table(rows), floats="{:.2f}"), ""]
        drawn = login_bars(rows, context.out, str(profile))
        if drawn is not None:
            lines += [f"![{drawn.stem}]({drawn.name})", ""]
            charts.append(drawn)
    hosts = host_key_table(frame)
    if not hosts.empty:
        lines += ["### The server's host key", "",
                  "asyncssh with an ed25519 key file against the emulator and a real OpenSSH "
                  "sshd on loopback, each with that host key (the server signs every handshake "
                  "with it); median ms per login.", "",
                  markdown_table(hosts, floats="{:.1f}"), ""]
    fleets = fleet_table(frame)
    if not fleets.empty:
        lines += ["### Fleets logging in through one agent", "",
                  "Each session to its own device: connect, log in, run the command twice; all "
                  "sessions at once, every agent login through ONE agent. Medians in ms; "
                  "`connect_exec`: login to the first exec started; agent CPU % of one core over "
                  "the runs (/proc/PID/stat).", "",
                  markdown_table(fleets, floats="{:.1f}"), ""]
    if len(lines) == 2:
        return generic(EXPERIMENT, frame)
    return Section(lines, charts)
