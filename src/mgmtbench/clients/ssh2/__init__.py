"""ssh2-python (libssh2) in blocking mode: the single-session adapter (no fleet runner: its
fleet use is parallel-ssh's, :mod:`mgmtbench.clients.pssh`). Importing this package does not
import ssh2."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="ssh2", order=20, adapter="mgmtbench.clients.ssh2.adapter:Ssh2Client",
               knobs="mgmtbench.clients.ssh2.knobs:KNOBS"),
    ClientSpec(name="ssh2+tuned", order=21,
               adapter="mgmtbench.clients.ssh2.adapter:Ssh2ClientTuned"),
]
