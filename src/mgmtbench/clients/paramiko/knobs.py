"""The settings a paramiko user can change (:mod:`mgmtbench.clients.tuning`); imports nothing of
paramiko."""

from mgmtbench.clients.tuning import Knob

TCP_NODELAY = Knob(
    name="tcp-nodelay",
    change=("sock = socket.create_connection((host, 22))\n"
            "sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
            "client.connect(host, sock=sock, ...)"),
    why=("paramiko leaves Nagle's algorithm on: a channel request written as two segments waits "
         "for the device's delayed ACK of the first (40 ms on Linux) before the second goes"),
)

KNOBS = (TCP_NODELAY,)
