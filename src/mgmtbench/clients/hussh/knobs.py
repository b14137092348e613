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

``proxy_command`` is the one way to a socket with ``TCP_NODELAY``: the command runs on a Unix
socket pair given to libssh2 (hussh's ``create_proxy_stream``), and the command's own TCP
connection can set the option (socat's ``nodelay``).
"""

from mgmtbench.clients.tuning import Knob

PROXY_NODELAY = Knob(
    name="proxy-nodelay",
    change=('Connection(host, ..., proxy_command="socat - TCP:%h:%p,nodelay")'
            "  # socat on PATH"),
    why=("hussh's own TcpStream keeps Nagle's algorithm on and takes no socket; through "
         "proxy_command the TCP connection is socat's, with TCP_NODELAY, so a channel's "
         "request no longer waits for the device's delayed ACK. hussh sleeps 100 ms after "
         "starting the command (create_proxy_stream: to see it fail fast), holding the GIL. "
         "MEASURED"),
)

KNOBS = (PROXY_NODELAY,)
