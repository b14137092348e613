"""ssh-agent signing (``benchmarks/test_agent_signing.py``): ms per signature by key type and
message size, unique against same, ratios against ed25519, the published study's figures beside
ours, the signers side by side (what skipping the agent saves) and throughput against the number
of clients with the agent's CPU. The logins are :mod:`.agent_login`'s."""

from __future__ import annotations

import pandas as pd

from mgmtbench.results.charts import agent_concurrency_lines, signing_bars
from mgmtbench.results.sections.base import ReportContext, Section, generic, markdown_table

EXPERIMENT = "agent-signing"
KEYS = ("signer", "how", "kind", "size", "message", "clients")
#: The published ssh-agent benchmark's ms per signature through OpenSSH's agent (its text:
#: "ed25519 about 1.7 ms, RSA-4096 about 7.6 ms"; size and unique/same made little difference).
STUDY_MS = {"ed25519": 1.7, "rsa-4096": 7.6}
#: Key types in the order tables show them.
KIND_ORDER = ("ed25519", "ecdsa-p256", "ecdsa-p384", "ecdsa-p521", "rsa-2048", "rsa-4096")
SIGNER_ORDER = ("raw", "asyncssh", "paramiko", "in-process")
LOAD_HOW = ("processes", "threads")  # how the concurrency benchmark runs its clients


def size_label(size: object) -> str:
    """32 -> ``32 B``, 16384 -> ``16 KB``."""
    n = int(float(str(size)))
    return f"{n // 1024} KB" if n >= 1024 else f"{n} B"


def _kind_rank(kind: object) -> int:
    return KIND_ORDER.index(str(kind)) if kind in KIND_ORDER else len(KIND_ORDER)


def _how(frame: pd.DataFrame) -> pd.Series:
    return frame["how"] if "how" in frame else pd.Series("", index=frame.index)


def single(frame: pd.DataFrame) -> pd.DataFrame:
    """The one-client rows (one signature per round), not the concurrency bursts."""
    return frame[~_how(frame).isin(LOAD_HOW)]


def signing_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows key type x size, columns unique / same ms per signature, their ratio and each
    against ed25519 at the same size."""
    table = rows.pivot_table(index=["kind", "size"], columns="message",
                             values="ms_per_signature", aggfunc="last")
    for column in ("unique", "same"):
        if column not in table:
            table[column] = float("nan")
    table["same/unique"] = table["same"] / table["unique"]
    base = table.xs("ed25519", level="kind") if "ed25519" in table.index.get_level_values(
        "kind") else None
    for column in ("unique", "same"):
        ratios = []
        for kind, size in table.index:
            ref = base[column].get(size) if base is not None else None
            ratios.append(table.loc[(kind, size), column] / ref if ref else float("nan"))
        table[f"x ed25519 ({column})"] = ratios
    out = table.reset_index()
    out["order"] = out["kind"].map(_kind_rank)
    out = out.sort_values(["order", "size"]).drop(columns="order")
    out["size"] = out["size"].map(size_label)
    out.columns.name = None
    return out[["kind", "size", "unique", "same", "same/unique", "x ed25519 (unique)",
                "x ed25519 (same)"]].rename(columns={"unique": "unique ms", "same": "same ms"})


def study_table(rows: pd.DataFrame) -> pd.DataFrame:
    """ed25519 and RSA-4096 at 32 B and 16 KB, unique and same, every agent signer, against the
    study's figure."""
    wanted = rows[rows["kind"].isin(list(STUDY_MS)) & rows["size"].isin([32, 16384])
                  & (rows["signer"] != "in-process")]
    out = []
    for (signer, kind, size, message), group in wanted.groupby(
            ["signer", "kind", "size", "message"], sort=False):
        ms = float(group["ms_per_signature"].iloc[-1])
        out.append({"signer": signer, "kind": kind, "size": size, "message": message,
                    "ms": ms, "study_ms": STUDY_MS[str(kind)],
                    "ratio": ms / STUDY_MS[str(kind)],
                    "agent_cpu_ms": group["agent_cpu_ms_per_signature"].iloc[-1]
                    if "agent_cpu_ms_per_signature" in group else float("nan")})
    table = pd.DataFrame(out)
    if table.empty:
        return table
    table["o1"] = table["signer"].map(lambda s: SIGNER_ORDER.index(s) if s in SIGNER_ORDER else 9)
    table["o2"] = table["kind"].map(_kind_rank)
    table["o3"] = table["message"].map(lambda m: 0 if m == "unique" else 1)
    table = table.sort_values(["o1", "o2", "size", "o3"]).drop(columns=["o1", "o2", "o3"])
    table["size"] = table["size"].map(size_label)
    return table


def signers_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per key type and size (unique messages): each signer's ms per signature, and what the
    agent costs over the in-process signature (raw - in-process, ms)."""
    unique = rows[rows["message"] == "unique"]
    table = unique.pivot_table(index=["kind", "size"], columns="signer",
                               values="ms_per_signature", aggfunc="last")
    table = table[[s for s in SIGNER_ORDER if s in table]]
    if "raw" in table and "in-process" in table:
        table["agent adds ms"] = table["raw"] - table["in-process"]
    out = table.reset_index()
    out["order"] = out["kind"].map(_kind_rank)
    out = out.sort_values(["order", "size"]).drop(columns="order")
    out["size"] = out["size"].map(size_label)
    out.columns.name = None
    return out


def concurrency_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per signer, how and key type: signatures/s at each number of clients, against one client,
    the agent's CPU, and the ceiling if the agent had one core to itself."""
    part = frame[_how(frame).isin(LOAD_HOW)].copy()
    if part.empty:
        return part
    part["clients"] = pd.to_numeric(part["clients"])
    rows = []
    for (signer, how, kind), group in part.groupby(["signer", "how", "kind"], sort=False):
        group = group.sort_values("clients")
        one = group[group["clients"] == 1]["signatures_per_s"]
        base = float(one.iloc[-1]) if len(one) else float("nan")
        for _, row in group.iterrows():
            cpu_ms = row.get("agent_cpu_ms_per_signature")
            rows.append({"signer": signer, "how": how, "kind": kind,
                         "clients": int(row["clients"]),
                         "signatures/s": row["signatures_per_s"],
                         "x 1 client": row["signatures_per_s"] / base if base else float("nan"),
                         "client ms/signature": row.get("client_ms_per_signature"),
                         "agent CPU %": row.get("agent_cpu_pct"),
                         "agent CPU ms/signature": cpu_ms,
                         "one-core ceiling/s": 1000 / cpu_ms if cpu_ms else float("nan"),
                         "agent threads": _whole(row.get("agent_threads"))})
    table = pd.DataFrame(rows)
    table["order"] = table["kind"].map(_kind_rank)
    return table.sort_values(["signer", "how", "order", "clients"]).drop(columns="order")


def _whole(value: object) -> str:
    """A count as a table shows it (``-``: not recorded)."""
    return "-" if value is None or pd.isna(value) else str(int(float(str(value))))


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """Signing tables per signer, the study's figures, the signers side by side, concurrency."""
    needed = {"signer", "kind", "size", "message", "ms_per_signature", "clients"}
    if not needed <= set(frame.columns):
        return generic(EXPERIMENT, frame)
    frame = frame.copy()
    frame["size"] = pd.to_numeric(frame["size"])
    rows = single(frame)
    lines = ["## ssh-agent signing", "",
             "One signature per round through a real OpenSSH `ssh-agent` (the raw protocol client: "
             "the floor; asyncssh's and paramiko's agent clients), and the same signature made "
             "in-process from the key file. ms per signature (mean); unique = a new message "
             "every round, same = one message throughout. RSA keys sign rsa-sha2-512.", ""]
    charts = []
    for signer in [s for s in SIGNER_ORDER if s in set(rows["signer"])]:
        table = signing_table(rows[rows["signer"] == signer])
        lines += [f"### {signer}", "", markdown_table(table, floats="{:.3f}"), ""]
    study = study_table(rows)
    if not study.empty:
        lines += ["### Against the study (1.7 ms ed25519, 7.6 ms RSA-4096 per signature)", "",
                  "`agent_cpu_ms`: the agent's own CPU time per signature (/proc/PID/stat), "
                  "which depends less on how busy the machine is than the wall time.", "",
                  markdown_table(study, floats="{:.3f}"), ""]
    if rows["signer"].nunique() > 1:
        lines += ["### Signers side by side (unique messages)", "",
                  markdown_table(signers_table(rows), floats="{:.3f}"), ""]
    drawn = signing_bars(rows, context.out)
    if drawn is not None:
        lines += [f"![{drawn.stem}]({drawn.name})", ""]
        charts.append(drawn)
    load = concurrency_table(frame)
    if not load.empty:
        lines += ["### Clients at once", "",
                  "Each client its own agent connection, signing 32 B unique messages back to "
                  "back; a round is one burst of every client. `processes`: each client a process "
                  "(no client GIL in the way); `threads`: one Python process. signatures/s for all "
                  "clients together; agent CPU % of one core over the bursts; the one-core ceiling "
                  "is 1000 / agent CPU ms per signature.", "",
                  markdown_table(load, floats="{:.2f}"), ""]
        drawn = agent_concurrency_lines(load, context.out)
        if drawn is not None:
            lines += [f"![{drawn.stem}]({drawn.name})", ""]
            charts.append(drawn)
    return Section(lines, charts)
