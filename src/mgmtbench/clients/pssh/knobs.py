"""The settings a parallel-ssh user can change (:mod:`mgmtbench.clients.tuning`), the same for
both back ends (``pssh-ssh2``, ``pssh-ssh``); imports nothing of parallel-ssh."""

from mgmtbench.clients.tuning import Knob

TCP_NODELAY = Knob(
    name="tcp-nodelay",
    change=("client = SSHClient(host, ...)  # connects and logs in\n"
            "client.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
            "# ParallelSSHClient: after the first run_command, for each host's output:\n"
            "#   host_out.client.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)"),
    why=("parallel-ssh makes its socket itself (``BaseSSHClient._connect_socket``) with no "
         "option for TCP_NODELAY, and connects in the constructor, so the handshake and login "
         "run with Nagle on; set on the public ``sock`` afterwards, it spares each later channel "
         "open the wait for the device's delayed ACK (40 ms on Linux) of the previous "
         "channel's close"),
)

KNOBS = (TCP_NODELAY,)
