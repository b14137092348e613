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
         "open the wait for the device's delayed ACK (40 ms on Linux) of the small write "
         "before it"),
)

TCP_NODELAY_HANDSHAKE = Knob(
    name="tcp-nodelay-handshake",
    change=("class NoDelaySSHClient(SSHClient):\n"
            "    def _connect_socket(self, *args, **kwargs):  # private: may change\n"
            "        super()._connect_socket(*args, **kwargs)\n"
            "        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
            "client = NoDelaySSHClient(host, ...)"),
    why=("TCP_NODELAY from the connect on, so the handshake and login do not wait for delayed "
         "ACKs either: the only way in is overriding the private "
         "``BaseSSHClient._connect_socket``, which makes the socket and connects it (a "
         "parallel-ssh upgrade may break it; ``ParallelSSHClient`` builds its host clients "
         "in private ``_make_ssh_client``, so it does not apply there)"),
)

KNOBS = (TCP_NODELAY, TCP_NODELAY_HANDSHAKE)
