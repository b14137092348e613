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

WINDOW_SIZE = Knob(
    name="window-size",
    change=("transport = client.get_transport()\n"
            "transport.default_window_size = 16 * 2**20  # shipped: 2 MiB\n"
            "transport.default_max_packet_size = 2**18  # shipped: 32 KiB"),
    why=("every channel's receive window and largest packet (``Transport.open_session`` takes "
         "``default_window_size``/``default_max_packet_size``): the device stops sending only "
         "when the 2 MiB window is spent, which show outputs never reach. No change, 5 "
         "commands: reuse-conn 224.9 vs 225.3 ms local, 669 vs 663 ms regional; fresh-conn "
         "282 vs 292 ms local, 947 vs 933 ms regional"),
    matters=False,
)

KNOBS = (TCP_NODELAY, WINDOW_SIZE)
