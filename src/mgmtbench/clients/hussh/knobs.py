"""The settings a hussh user can change (:mod:`mgmtbench.clients.tuning`); imports nothing of
hussh.

What hussh 0.3.3 lets a user set, all of it (``Connection(host, port=22, username="root",
password=None, private_key=None, proxy_jump=None, proxy_command=None, timeout=0)`` and
``execute(command, timeout=None)``; no ``.pyi``, the signatures as its bindings report them):
the login, the libssh2 session time-out (``timeout``, in ms, also per ``execute``: a bound on
every wait, 0 none, so no time), and where the SSH stream goes (``proxy_jump``, an ``ssh -W``
through another host, or ``proxy_command``). No keepalive, no algorithm lists, no window or
packet size, and no socket: ``Connection`` opens its ``std::net::TcpStream`` itself with
Nagle's algorithm on (Rust's default), so a new channel on a kept connection waits for the
device's delayed ACK, as ssh2-python and paramiko do as shipped (:mod:`.adapter`).

``proxy_command`` is the one way to a socket with ``TCP_NODELAY``: hussh runs the command
(``sh -c``) on one end of a Unix socket pair and gives libssh2 the other end
(``create_proxy_stream`` in its ``connection.rs``); the TCP connection is the command's own,
and socat's ``nodelay`` sets the option on it. It is ``hussh+tuned``, with socat on PATH.
"""

from mgmtbench.clients.tuning import Knob

PROXY_NODELAY = Knob(
    name="proxy-nodelay",
    change=('Connection(host, ..., proxy_command="socat - TCP:%h:%p,nodelay")'
            "  # socat on PATH"),
    why=("hussh's own TcpStream keeps Nagle's algorithm on and takes no socket; through "
         "proxy_command the TCP connection is socat's, with TCP_NODELAY, so a channel's "
         "request no longer waits for the device's delayed ACK. Its price: hussh sleeps "
         "100 ms after starting the command (create_proxy_stream, to report a command that "
         "fails at once), holding the GIL, and socat copies every byte. 5 commands, mean ms, "
         "as shipped vs knob: reuse-conn local 218.7 vs 6.6, regional 668.8 vs 321.8 (22.1 "
         "vs 10.6 RTTs); fresh-conn local 225.5 vs 117.8, regional 876.9 vs 553.3 (28.9 vs "
         "18.3 RTTs); batch-exec, one exec per connection, local 49.2 vs 113.6 (the 100 ms "
         "sleep), regional 330.6 vs 297.9. Client CPU "
         "0.36 vs 0.40 ms per command (reuse-conn, local, socat counted)"),
)

KNOBS = (PROXY_NODELAY,)
