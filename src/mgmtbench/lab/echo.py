"""A TCP echo server for calibration (``python -m mgmtbench.lab.echo ADDR PORT``).

Echoes what it reads. A line ``split N SIZE\\n`` is answered with N separate writes of SIZE bytes,
back to back, the way an SSH server writes a reply in several small pieces.
"""

from __future__ import annotations

import socket
import socketserver
import sys


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while data := sock.recv(65536):
            if data.startswith(b"split "):
                _, count, size = data.split()
                for _ in range(int(count)):
                    sock.sendall(b"x" * int(size))
            else:
                sock.sendall(data)


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    with _Server((host, port), _Handler) as server:
        print("ready", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
