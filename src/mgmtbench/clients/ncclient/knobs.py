"""The settings an ncclient user can change (:mod:`mgmtbench.clients.tuning`); imports nothing of
ncclient.

What the adapter already does as shipped, so is no knob here: ``hostkey_verify=False`` without a
known_hosts file, ``look_for_keys=False, allow_agent=False`` (the password is the only method
tried), and the device handler of the platform (``device_params``; its only cost is the
capabilities it sends in ``<hello>``).
"""

from mgmtbench.clients.tuning import Knob

TCP_NODELAY = Knob(
    name="tcp-nodelay",
    change=("sock = socket.create_connection((host, 830))\n"
            "sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
            "manager.connect(host=host, port=830, sock=sock, ...)"),
    why=("ncclient's SSHSession.connect makes its socket without TCP_NODELAY and hands it to "
         "paramiko, which leaves Nagle's algorithm on: a message written as two segments waits "
         "for the device's delayed ACK of the first. Hidden behind the tick alone (as shipped "
         "vs knob, fresh-session: local 780 vs 671 ms, regional 1,284 vs 1,210); with the "
         "tick knob it is the rest: fresh-session tick vs tick+nodelay (tuned) local 190 vs "
         "102 ms, regional 777 vs 601 (25.6 vs 19.8 RTTs)"),
)

TICK = Knob(
    name="tick",
    change=("import ncclient.transport.session\n"
            "ncclient.transport.session.TICK = 0.001  # a module constant: no option for it"),
    why=("ncclient's transport thread (Session.run) looks at its send queue only when "
         "select(timeout=TICK) returns, TICK = 0.1 s: an RPC queued while the channel is idle "
         "waits for that timeout before it is written. ncclient has no option for it, so the "
         "change assigns the module constant (before connecting). As shipped vs knob, 5 "
         "RPCs: reuse-session local 504 vs 22 ms, regional 672 vs 223 (22.1 vs 7.3 RTTs); "
         "fresh-session local 780 vs 190, regional 1,284 vs 777"),
)

KNOBS = (TCP_NODELAY, TICK)
