"""parallel-ssh: single-host adapters and ``ParallelSSHClient`` fleet runners, with the libssh2
(``pssh-ssh2``) and libssh (``pssh-ssh``) back ends. Importing this package does not import
parallel-ssh."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="pssh-ssh2", order=30,
               adapter="mgmtbench.clients.pssh.adapter:PsshSsh2Client",
               fleet="mgmtbench.clients.pssh.fleet:PsshSsh2Fleet"),
    ClientSpec(name="pssh-ssh", order=31,
               adapter="mgmtbench.clients.pssh.adapter:PsshSshClient",
               fleet="mgmtbench.clients.pssh.fleet:PsshSshFleet"),
]
