"""parallel-ssh: single-host adapters and ``ParallelSSHClient`` fleet runners, with the libssh2
(``pssh-ssh2``) and libssh (``pssh-ssh``) back ends. Importing this package does not import
parallel-ssh."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="pssh-ssh2", order=30,
               adapter="mgmtbench.clients.pssh.adapter:PsshSsh2Client",
               fleet="mgmtbench.clients.pssh.fleet:PsshSsh2Fleet",
               knobs="mgmtbench.clients.pssh.knobs:KNOBS"),
    ClientSpec(name="pssh-ssh2+tuned", order=31,
               adapter="mgmtbench.clients.pssh.adapter:PsshSsh2ClientTuned",
               fleet="mgmtbench.clients.pssh.fleet:PsshSsh2FleetTuned"),
    ClientSpec(name="pssh-ssh", order=32,
               adapter="mgmtbench.clients.pssh.adapter:PsshSshClient",
               fleet="mgmtbench.clients.pssh.fleet:PsshSshFleet",
               knobs="mgmtbench.clients.pssh.knobs:KNOBS"),
    ClientSpec(name="pssh-ssh+tuned", order=33,
               adapter="mgmtbench.clients.pssh.adapter:PsshSshClientTuned",
               fleet="mgmtbench.clients.pssh.fleet:PsshSshFleetTuned"),
]
