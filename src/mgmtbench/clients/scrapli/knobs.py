"""The settings a scrapli (libscrapli) user can change (:mod:`mgmtbench.clients.tuning`); imports
nothing of scrapli. The same knobs for both transports (``scrapli-bin``, ``scrapli-ssh2``): they
are session options, read by libscrapli's read loop whatever the transport.

Not knobs: the old scrapli's ``timeout_socket``/``timeout_transport``/``timeout_ops``,
``comms_prompt_pattern`` and ``comms_return_char`` do not exist in libscrapli (one
``operation_timeout``, the prompt patterns in the platform definition, ``return_char`` only
changes what ends a line sent). The ssh2 transport makes its socket inside libscrapli and has
no option for it, so TCP_NODELAY cannot be set by a user (strace: libscrapli's connect is followed
by no setsockopt; the bin transport's OpenSSH sets TCP_NODELAY itself for an interactive session).
"""

from collections.abc import Callable
from typing import Any

from mgmtbench.clients.tuning import Knob

READ_MAX_DELAY = Knob(
    name="read-max-delay",
    change="SessionOptions(read_max_delay_ns=1_000_000)",
    why=("libscrapli's read thread polls the transport, doubling its sleep from read_min_delay_ns "
         "(5 us) to read_max_delay_ns (15 ms) while nothing comes: a reply that arrives during a "
         "long sleep waits up to 15 ms to be read; a 1 ms cap bounds that wait, at the cost of "
         "more wake-ups. At regional pty-kept 330 vs 372 ms (bin), 326 vs 383 ms (ssh2), "
         "pty-fresh 978 vs 1,045 and 922 vs 984 ms, client CPU 11 -> 17 ms (bin) and 11 -> 13 ms "
         "(ssh2) per command; no change at local (replies come before the sleeps grow)"),
)

READ_SIZE = Knob(
    name="read-size",
    change="SessionOptions(read_size=65_536)",
    why=("libscrapli reads the transport read_size (4,096) bytes at a time: bigger reads mean "
         "fewer loop turns only for outputs larger than 4 KiB. No change: pty-kept 380 vs 372 ms "
         "(bin) and 375 vs 383 ms (ssh2) at regional, 8 vs 16 and 8 vs 9 ms at local"),
    matters=False,
)

KNOBS = (READ_MAX_DELAY, READ_SIZE)


def session_options(tuned_with: Callable[[str], bool]) -> dict[str, Any]:
    """The ``SessionOptions`` arguments the ``read-max-delay`` and ``read-size`` knobs set, for a
    client whose ``tuned_with`` says which it runs with (scrapli's CLI adapters and
    scrapli-netconf: the same libscrapli session options)."""
    options: dict[str, Any] = {}
    if tuned_with(READ_MAX_DELAY.name):
        options["read_max_delay_ns"] = 1_000_000
    if tuned_with(READ_SIZE.name):
        options["read_size"] = 65_536
    return options
