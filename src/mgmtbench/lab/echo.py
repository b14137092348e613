"""A TCP echo server for calibration (``python -m mgmtbench.lab.echo ADDR PORT``).

Echoes what it reads. A line ``split N SIZE\\n`` is answered with N separate writes of SIZE bytes,
back to back, the way an SSH server writes a reply in several small pieces. For bulk transfers, a
line ``sink N\\n`` makes the server read and discard the N bytes that follow it, then answer
``ok\\n``; a line ``source N\\n`` is answered with N zero bytes.
"""

from __future__ import annotations

import socket
import socketserver
import sys

CHUNK = 1 << 20


def _sink(sock: socket.socket, count: int, already: int) -> None:
    """Read ``count`` bytes (``already`` of them came with the command) and answer ``ok``."""
    left = count - already
    buffer = bytearray(CHUNK)
    while left > 0:
        got = sock.recv_into(buffer, min(left, CHUNK))
        if not got:
            return
        left -= got
    sock.sendall(b"ok\n")


def _source(sock: socket.socket, count: int) -> None:
    block = bytes(CHUNK)
    while count > 0:
        sock.sendall(block[:count] if count < CHUNK else block)
        count -= CHUNK


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while data := sock.recv(65536):
            if data.startswith(b"split "):
                _, count, size = data.split()
                for _ in range(int(count)):
                    sock.sendall(b"x" * int(size))
            elif data.startswith((b"sink ", b"source ")) and b"\n" in data:
                line, _, rest = data.partition(b"\n")
                verb, size = line.split()
                if verb == b"sink":
                    _sink(sock, int(size), len(rest))
                else:
                    _source(sock, int(size))
            else:
                sock.sendall(data)


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main() -> None:
    """``python -m mgmtbench.lab.echo ADDRESS PORT``."""
    host, port = sys.argv[1], int(sys.argv[2])
    with _Server((host, port), _Handler) as server:
        print("ready", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
