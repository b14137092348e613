"""The settings an ssh2-python user can change (:mod:`mgmtbench.clients.tuning`); imports nothing
of ssh2-python."""

from mgmtbench.clients.tuning import Knob

TCP_NODELAY = Knob(
    name="tcp-nodelay",
    change=("sock = socket.create_connection((host, 22))\n"
            "sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
            "session.handshake(sock)"),
    why=("ssh2-python drives the socket the user gives ``Session.handshake``, and libssh2 sets no "
         "socket option on it: with Nagle's algorithm on, a small write (a channel open, a "
         "request) sent while an earlier one is unacknowledged waits for the device's delayed "
         "ACK (40 ms on Linux)"),
)

KNOBS = (TCP_NODELAY,)
