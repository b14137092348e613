"""``python -m mgmtbench.lab.nsexec NAMESPACE PROGRAM [ARGS...]``: run a program inside a lab namespace.

Like ``ip netns exec`` without needing iproute2, and without a ``preexec_fn`` (which is not safe in
a threaded parent): enter the namespace, then replace this process with the program.
"""

from __future__ import annotations

import os
import sys

from mgmtbench.lab.netns import setns


def main() -> None:
    """Enter the namespace, then become the program."""
    if len(sys.argv) < 3:
        sys.exit("usage: python -m mgmtbench.lab.nsexec NAMESPACE PROGRAM [ARGS...]")
    setns(sys.argv[1])
    os.execvp(sys.argv[2], sys.argv[2:])


if __name__ == "__main__":
    main()
