"""Round trips counted on the wire: a capture of the lab's link in a process of its own.

::

    with lab.wire_tap() as tap:
        ...                                   # talk to the devices
    count = tap.result()                      # a WireCount, or None on loopback
    print(count.turns, count.wire_rtts, count.data_packets)

What is counted. The tap sees every packet on the link's benchmark-side interface (``host_if``,
``mgb{index}h`` in the benchmark's namespace: the veth end for ``netem`` and ``none``, the delay
line's TUN interface for ``tun``; docker devices sit behind the same link). A packet goes *to the
devices* when the kernel sends it out of that interface (``sll_pkttype`` ``PACKET_OUTGOING``),
*from the devices* otherwise. IPv4 TCP and UDP count; a TCP packet is *data-bearing* when it
carries payload, SYN or FIN (pure ACKs, RSTs and window updates are not: nobody waits for them).
ICMP, ARP and anything else are tallied as ``other`` and ignored.

UDP (QUIC). A UDP datagram is data-bearing unless it is a QUIC packet that carries nothing but
ACK frames. QUIC is encrypted, so the tap cannot read the frames; it goes by the header and the
size, for QUIC as aioquic sends it (``connection_id_length`` 8, a 2-byte packet number, a 16-byte
AEAD tag):

* a *long-header* packet (first bit set: Initial, 0-RTT, Handshake, Retry) always counts: the
  handshake is what it carries (``quic_long``);
* a *short-header* (1-RTT) datagram of :data:`QUIC_SHORT_MIN` .. :data:`QUIC_ACK_ONLY_MAX` bytes
  of UDP payload is taken as ACK-only and does not count (``quic_ack_only``): 1 flags byte + 8
  connection ID + 2 packet number + 16 tag = 27 bytes around the frames, and an ACK frame of one
  range as aioquic writes it (type 1, largest acknowledged 2, ACK delay 2, range count 1, first
  range 2: 8 bytes) makes 35; anything larger holds more than that ACK and counts. Below
  QUIC_SHORT_MIN (29: aioquic pads a packet so header protection has its 4-byte sample, RFC
  9001 5.4.2) or without the fixed bit (0x40), a datagram is no QUIC packet and counts, as
  any other UDP payload.

The rule's error, checked against aioquic's own log of every packet it sent (qlog frames and
lengths) in ``tests/test_wiretap_quic.py``: on an HTTP/3 exchange, ACK-only packets were 32-33
bytes and request/response packets 39 bytes and more. Wrong either way: an ACK-only packet with
gaps (ranges after loss or reordering, +2 to 4 bytes each) may exceed 35 bytes and count, one turn
too many at most per such ACK, so under loss QUIC's turns are an upper bound; a data-bearing packet
of 35 bytes or less (a lone PING, MAX_STREAM_DATA, a QPACK decoder acknowledgement of 1-2 bytes,
a CONNECTION_CLOSE without a reason phrase) does not count: none of those is anything the other
side waits for to answer, except a request whose HEADERS frame encodes to 4 bytes or less (a
repeated request from QPACK's dynamic table can come close: 39 bytes seen). Another QUIC stack
with longer connection IDs or packet numbers has larger ACK-only packets, which then count.

UDP's data-bearing datagrams count in ``data_to_devices`` and ``data_from_devices`` with TCP's
(and apart in ``udp_to_devices``, ``udp_from_devices``); ``udp_turns`` are the turns a UDP
datagram made, so ``turns - udp_turns`` are TCP's and ``quic_rtts`` is ``udp_turns / 2``.

Retransmissions (TCP). ``tcp_retransmits`` counts data-bearing TCP packets whose last sequence
number is not beyond the highest already seen for their connection and direction (a segment sent
again after a loss, a SYN or FIN sent again); a keep-alive probe would count too. QUIC never sends
a packet number twice, and its frames are encrypted: its retransmissions are not visible on the
wire (a benchmark takes the link's drops, :meth:`~mgmtbench.lab.Lab.link_stats`, for both).

A *turn* is a data-bearing packet whose direction differs from the previous data-bearing packet's.
The tap starts as if the last one had come *from* the devices, so the client's first packet is a
turn: ``n`` request/response exchanges, one after another, are exactly ``2n`` turns, and
``wire_rtts = turns / 2``. Examples:

* connect, one request and its response, close (the server closes too): SYN out, SYN-ACK in,
  request out, response in, FIN out, FIN in: 6 turns, 3 wire RTTs (the ACKs in between are not
  data-bearing);
* on an open connection, 3 request/response pairs: 6 turns, 3 wire RTTs;
* a response in several segments is still one turn; a request pipelined behind another before
  its response is no turn of its own: it costs no round trip.

Turns are counted over the whole link, not per connection: a client that closes one connection and
opens the next at once sends FIN and SYN back to back (no turn between them), and the server's FIN
and SYN-ACK come back together (one turn), so a close the client does not wait for costs no wire
RTT. Both sides sending at once (the SSH banners) is one turn more than the time spent, and with
several requests in flight (pipelined commands, channels side by side) every answer that comes
back between two later requests is two turns that nobody waited for: this is a count of direction
changes seen at the benchmark's end of the link, an upper bound of the round trips the client
waited for, exact for one request at a time. A benchmark divides the totals by its iterations
(``per_iteration``: wire RTTs to 1 decimal); a window that ends before the server's last FIN is
back leaves that turn out, as :meth:`~mgmtbench.lab.Lab.counters` does its packet.

GSO packets (a train of TCP segments the kernel hands over as one, on veth and on the ``tun``
backend's offloaded delay-only links) count as one data packet, as the interface counters do; they
never change the turns. ``dropped`` says how many packets the kernel could not queue for the tap
(none expected: its buffer holds seconds of traffic); with drops the counts are lower bounds.

Why a process: the capture reads and parses every packet in Python; in the benchmark's process it
would take the GIL from the timed client. The tap process (``python -P wiretap.py IFNAME``, standard
library only, so it starts in tens of milliseconds) binds an ``AF_PACKET`` socket to that one
interface, says ``ready``, then sleeps and drains its socket every ``POLL`` seconds (a packet costs
the timed path only the kernel's clone of it). It ends when its stdin closes: when :meth:`stop`
asks for the totals (one JSON line), or when the benchmark process dies, however it dies. The tap
only reads: no promiscuous mode, no interface it was not given.

The link's RTT while the window runs (``probe``: an address behind the link, e.g. the lab's echo
address). A lab's calibration measures its RTT on a quiet link before a benchmark; a delay line or
a qdisc may hold packets longer while the client and the emulator keep the CPUs busy. With a
probe, the tap process also sends an ICMP echo request every :data:`PROBE_INTERVAL` seconds during
the window, and times each from its request leaving ``interface`` to its reply arriving there, both
kernel timestamps of the capture: the link's own round trip, under the benchmark's load, without
this host's stack or any process's wake-up. The probes (a 46-byte request and its reply each
``PROBE_INTERVAL``) are counted apart (``probe_packets``, ``probe_bytes`` as the interface counters
count them), so a benchmark takes them out of its packet counts; ICMP is never a turn.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import struct
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from types import TracebackType

from mgmtbench.errors import LabError, UsageError
from mgmtbench.lab import processes
from mgmtbench.lab.calibrate import icmp_checksum

ETH_P_ALL, ETH_P_IP = 0x0003, 0x0800
PACKET_OUTGOING = 4  # sll_pkttype of a packet this host sends
SOL_PACKET, PACKET_STATISTICS = 263, 6  # struct tpacket_stats {unsigned tp_packets, tp_drops}
SO_RCVBUFFORCE = 33
RCVBUF = 64 << 20  # queued packets are clones: truesize counts, 64 MB holds seconds of traffic
SNAP = 128  # bytes read per packet: the IPv4 header (<= 60) and the TCP header's first 14
# (or the UDP header and the first byte of its payload)
POLL = 0.05  # seconds between drains: one wake-up per POLL, not one per packet
PROBE_INTERVAL = 0.1  # seconds between ICMP probes of the link's RTT (a multiple of POLL)
IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP = 1, 6, 17
UDP_HLEN = 8
#: QUIC as aioquic sends it (see the module docstring): the smallest short-header packet (flags,
#: 8-byte connection ID, the 4 bytes of packet number and payload header protection samples from,
#: 16-byte tag) and the largest one taken as ACK-only (flags, connection ID, 2-byte packet number,
#: a one-range ACK frame of 8 bytes, tag).
QUIC_CID, QUIC_PN, QUIC_TAG, QUIC_ACK_FRAME = 8, 2, 16, 8
QUIC_SHORT_MIN = 1 + QUIC_CID + 4 + QUIC_TAG
QUIC_ACK_ONLY_MAX = 1 + QUIC_CID + QUIC_PN + QUIC_ACK_FRAME + QUIC_TAG
QUIC_LONG_HEADER, QUIC_FIXED_BIT = 0x80, 0x40
ICMP_ECHO_REPLY, ICMP_ECHO = 0, 8
SO_TIMESTAMPNS = 35
ARPHRD_ETHER, ETH_HLEN = 1, 14  # a veth end's counters count the Ethernet header; TUN has none
PROBE_BODY = b"mgmtbench-link-probe"
TCP_FIN, TCP_SYN = 0x01, 0x02
# Seconds to wait for the tap process to start capturing, and to report. A lab's helper
# processes wait MGMTBENCH_LAB_START_TIMEOUT (set high in a VM under software emulation, where
# starting Python on a busy machine took over 10 s): so does the tap, if that is longer.
START_TIMEOUT = STOP_TIMEOUT = max(10.0, float(os.environ.get("MGMTBENCH_LAB_START_TIMEOUT", "10")))


@dataclass(frozen=True)
class WireCount:
    """Totals of one tap window (rules in the module docstring)."""

    turns: int = 0  # direction changes of data-bearing packets (TCP and UDP)
    data_to_devices: int = 0  # data-bearing packets out of host_if (TCP payload, SYN or FIN; UDP)
    data_from_devices: int = 0
    syn: int = 0  # SYN and SYN-ACK packets, both ways
    fin: int = 0  # FIN packets, both ways
    empty_tcp: int = 0  # TCP packets carrying none of those (ACKs, RSTs, window updates)
    tcp_retransmits: int = 0  # data-bearing TCP packets sent again (see the module docstring)
    udp_turns: int = 0  # the turns a UDP datagram made
    udp_to_devices: int = 0  # data-bearing UDP datagrams (in data_to_devices too)
    udp_from_devices: int = 0
    quic_long: int = 0  # long-header QUIC datagrams (the handshake), both ways: data-bearing
    quic_ack_only: int = 0  # short-header QUIC datagrams taken as ACK-only, both ways: not counted
    other: int = 0  # packets that are neither IPv4 TCP nor UDP (ICMP, ARP, ...), probes apart
    dropped: int = 0  # packets the kernel could not queue for the tap
    # The link's RTT while the window ran (with a probe; see the module docstring).
    probes: int = 0  # echo requests seen leaving (the interface counts them as tx)
    probe_replies: int = 0  # their replies seen arriving (rx)
    probe_tx_bytes: int = 0  # as the interface counters count them
    probe_rx_bytes: int = 0
    link_probes: int = 0  # requests whose replies were timed
    link_rtt_p50_ms: float | None = None
    link_rtt_max_ms: float | None = None

    @property
    def data_packets(self) -> int:
        """Data-bearing packets (TCP and UDP) both ways."""
        return self.data_to_devices + self.data_from_devices

    @property
    def wire_rtts(self) -> float:
        """Round trips on the wire: half the turns."""
        return self.turns / 2

    @property
    def quic_rtts(self) -> float:
        """Round trips on the wire that UDP (QUIC) made: half its turns."""
        return self.udp_turns / 2

    def per_iteration(self, iterations: int) -> dict[str, float]:
        """What a benchmark records per iteration: ``wire_rtts_per_iteration`` (1 decimal),
        ``wire_turns_per_iteration`` and ``data_packets_per_iteration`` (1 decimal);
        ``quic_rtts_per_iteration`` when UDP was seen, ``tcp_retransmits`` (the window's total)
        when there were any, and ``wire_dropped_packets`` when the kernel dropped any."""
        out = {"wire_rtts_per_iteration": round(self.wire_rtts / iterations, 1),
               "wire_turns_per_iteration": round(self.turns / iterations, 1),
               "data_packets_per_iteration": round(self.data_packets / iterations, 1)}
        if self.udp_turns or self.udp_to_devices or self.udp_from_devices:
            out["quic_rtts_per_iteration"] = round(self.quic_rtts / iterations, 1)
        if self.tcp_retransmits:
            out["tcp_retransmits"] = self.tcp_retransmits
        if self.dropped:
            out["wire_dropped_packets"] = self.dropped
        return out

    def link_rtt(self) -> dict[str, float]:
        """The link's RTT while the window ran, as a benchmark records it: ``link_rtt_under_load_ms``
        (the median probe) and ``link_rtt_under_load_max_ms``, with ``link_probes``; nothing
        without replies."""
        if self.link_rtt_p50_ms is None or self.link_rtt_max_ms is None:
            return {}
        return {"link_rtt_under_load_ms": round(self.link_rtt_p50_ms, 3),
                "link_rtt_under_load_max_ms": round(self.link_rtt_max_ms, 3),
                "link_probes": self.link_probes}


class WireTap:
    """A capture of ``interface`` in a process of its own, from :meth:`start` to :meth:`stop`.

    ``interface`` None: nothing can be measured (a loopback lab: ``reason`` says why); the tap
    starts no process and :meth:`result` is None. ``settle``: seconds :meth:`stop` waits before
    taking the totals (for packets still in flight, e.g. the server's FIN). As a context manager
    the tap starts on entry and stops on exit; on an exception it ends its process without
    reading the totals. Either way the process is gone when the ``with`` block is left.
    ``lab_id``: the lab whose link it taps. Its process is then started as the lab's other
    processes are (:func:`mgmtbench.lab.processes.spawn`): marked as the lab's and, for a lab of
    this process, recorded in the lab's state (``wire tap on IFNAME``, pid and start time) before
    anything waits on it; the lab's watchdog reports its death, the lab's ``down`` and a later
    ``mgmtbench lab down`` stop it like any other. Its record leaves the state once it is stopped
    and reaped.
    """

    def __init__(self, interface: str | None, *, reason: str = "", settle: float = 0.0,
                 probe: str | None = None, lab_id: str | None = None) -> None:
        self.interface = interface
        self.reason = "" if interface is not None else (reason or "no link to capture")
        self.settle = settle
        self.probe = probe
        self.lab_id = lab_id
        self._process: subprocess.Popen[str] | None = None
        self._result: WireCount | None = None

    @property
    def pid(self) -> int | None:
        """The tap process's pid while it runs."""
        return self._process.pid if self._process is not None else None

    def start(self) -> WireTap:
        """Start the tap process and wait until it captures (a running tap stays as it is)."""
        if self.interface is None or self._process is not None:
            return self
        self._result = None
        argv = [sys.executable, "-P", __file__, self.interface,
                *([self.probe] if self.probe else [])]
        process: subprocess.Popen[str]
        if self.lab_id is not None:
            process = processes.spawn(
                self.lab_id, f"wire tap on {self.interface}", argv, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        else:
            process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, start_new_session=True)
        try:
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT)
            line = process.stdout.readline() if ready else ""
            if line.strip() != "ready":
                if process.poll() is None:
                    process.kill()
                _, err = process.communicate()
                lines = err.strip().splitlines()
                why = lines[-1] if lines else f"nothing said within {START_TIMEOUT:.0f} s"
                raise LabError(f"the wire tap on {self.interface} did not start: {why}")
        except BaseException:  # Ctrl-C while it starts too: the process goes with the error
            self._end(process)
            raise
        self._process = process
        return self

    def stop(self) -> WireCount | None:
        """Wait ``settle`` seconds, end the tap process and return the window's totals (None
        without a link). Stopping twice returns the same totals."""
        process, self._process = self._process, None
        if process is None:
            return self._result
        try:
            if self.settle > 0:
                time.sleep(self.settle)
            if self.lab_id is not None:
                processes.retire(process.pid)  # its end is no death for the watchdog
            out, err = process.communicate(timeout=STOP_TIMEOUT)  # closes stdin: "stop"
        except subprocess.TimeoutExpired as exc:
            raise LabError(f"the wire tap on {self.interface} did not report within "
                           f"{STOP_TIMEOUT:.0f} s") from exc
        finally:
            self._end(process)
        if process.returncode != 0 or not out.strip():
            lines = err.strip().splitlines()
            raise LabError(f"the wire tap on {self.interface} failed: "
                           f"{lines[-1] if lines else 'exit ' + str(process.returncode)}")
        self._result = WireCount(**json.loads(out.strip().splitlines()[-1]))
        return self._result

    def abort(self) -> None:
        """End the tap process without its totals (safe to call at any time)."""
        process, self._process = self._process, None
        if process is not None:
            self._end(process)

    def result(self) -> WireCount | None:
        """The totals of the last window (None without a link)."""
        if self._process is not None:
            raise UsageError("the wire tap is still capturing: leave its with block (or call "
                             "stop()) first")
        return self._result

    def __enter__(self) -> WireTap:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.stop()
        else:
            self.abort()

    def _end(self, process: subprocess.Popen[str]) -> None:
        """The process ended and reaped, its pipes closed (SIGKILL if it is still there), and
        its record out of the lab's state."""
        if self.lab_id is not None:
            processes.retire(process.pid)
        try:
            if process.poll() is None:
                process.kill()
            process.wait()
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None and not pipe.closed:
                    pipe.close()
        finally:
            if self.lab_id is not None:
                processes.release(self.lab_id, process.pid)


# --- the tap process ---------------------------------------------------------------------------


class _Tally:
    """Counts packets as the module docstring says."""

    def __init__(self, probe_ident: int | None = None) -> None:
        self.outgoing = False  # as if the last data-bearing packet had come from the devices
        self.counts = dict.fromkeys(
            ("turns", "data_to_devices", "data_from_devices", "syn", "fin", "empty_tcp",
             "tcp_retransmits", "udp_turns", "udp_to_devices", "udp_from_devices", "quic_long",
             "quic_ack_only", "other", "probes", "probe_replies", "probe_tx_bytes",
             "probe_rx_bytes"), 0)
        # (addresses, ports) of a TCP connection's one direction -> the sequence number after
        # the highest data-bearing segment seen.
        self.tcp_next: dict[bytes, int] = {}
        self._buffer = bytearray(SNAP)
        self.probe_ident = probe_ident
        self.probe_sent: dict[int, float] = {}  # sequence -> kernel time the request left
        self.link_rtts: list[float] = []  # seconds

    def drain(self, sock: socket.socket) -> None:
        """Count every packet queued on ``sock`` (non-blocking)."""
        buffer, counts = self._buffer, self.counts
        recvmsg_into = sock.recvmsg_into
        while True:
            try:  # MSG_TRUNC: the packet's real length, though only SNAP bytes are copied
                size, ancillary, _, address = recvmsg_into([buffer], 64, socket.MSG_TRUNC)
            except BlockingIOError:
                return
            outgoing = address[2] == PACKET_OUTGOING
            if address[1] != ETH_P_IP or (
                    not self._tcp(buffer, size, outgoing) and not self._udp(buffer, size, outgoing)
                    and not self._probe(buffer, size, outgoing, address[3], ancillary)):
                counts["other"] += 1

    def _probe(self, packet: bytearray, size: int, outgoing: bool, hatype: int,
               ancillary: list[tuple[int, int, bytes]]) -> bool:
        """Time a probe's request or reply (False: the packet is not one)."""
        if self.probe_ident is None or size < 28 or packet[9] != IPPROTO_ICMP:
            return False
        ihl = (packet[0] & 0x0F) * 4
        kind, ident, seq = packet[ihl], packet[ihl + 4] << 8 | packet[ihl + 5], \
            packet[ihl + 6] << 8 | packet[ihl + 7]
        if ident != self.probe_ident or kind != (ICMP_ECHO if outgoing else ICMP_ECHO_REPLY):
            return False
        stamp = next((struct.unpack("qq", data[:16]) for level, kind_, data in ancillary
                      if level == socket.SOL_SOCKET and kind_ == SO_TIMESTAMPNS), None)
        counts = self.counts
        counts["probes" if outgoing else "probe_replies"] += 1
        counts["probe_tx_bytes" if outgoing else "probe_rx_bytes"] += size + (
            ETH_HLEN if hatype == ARPHRD_ETHER else 0)
        if stamp is not None:
            at = stamp[0] + stamp[1] * 1e-9
            if outgoing:
                self.probe_sent[seq] = at
            elif seq in self.probe_sent:
                self.link_rtts.append(at - self.probe_sent.pop(seq))
        return True

    def result(self, dropped: int) -> WireCount:
        """The window's totals."""
        rtts = sorted(self.link_rtts)
        return WireCount(**self.counts, dropped=dropped, link_probes=len(rtts),
                         link_rtt_p50_ms=rtts[len(rtts) // 2] * 1000 if rtts else None,
                         link_rtt_max_ms=rtts[-1] * 1000 if rtts else None)

    def _tcp(self, packet: bytearray, size: int, outgoing: bool) -> bool:
        """Count an IPv4 packet if it is TCP (False: it is not)."""
        if size < 20 or packet[0] >> 4 != 4 or packet[9] != IPPROTO_TCP:
            return False
        ihl = (packet[0] & 0x0F) * 4
        if (packet[6] & 0x1F) or packet[7] or size < ihl + 14:  # a later fragment, or cut short
            return False
        total = (packet[2] << 8 | packet[3]) or size  # 0: a BIG TCP packet over 64 KB
        flags = packet[ihl + 13]
        payload = total - ihl - (packet[ihl + 12] >> 4) * 4
        counts = self.counts
        if payload <= 0 and not flags & (TCP_SYN | TCP_FIN):
            counts["empty_tcp"] += 1
            return True
        counts["syn"] += bool(flags & TCP_SYN)
        counts["fin"] += bool(flags & TCP_FIN)
        # Sequence space: the payload, and one each for SYN and FIN.
        seq = int.from_bytes(packet[ihl + 4:ihl + 8], "big")
        end = (seq + max(payload, 0) + bool(flags & TCP_SYN) + bool(flags & TCP_FIN)) & 0xFFFFFFFF
        flow = bytes(packet[12:20]) + bytes(packet[ihl:ihl + 4])
        highest = self.tcp_next.get(flow)
        if highest is not None and not 0 < (end - highest) & 0xFFFFFFFF < 0x80000000:
            counts["tcp_retransmits"] += 1
        else:
            self.tcp_next[flow] = end
        self._data(outgoing)
        return True

    def _data(self, outgoing: bool, udp: bool = False) -> None:
        """Count one data-bearing packet, and its turn if it makes one."""
        counts = self.counts
        counts["data_to_devices" if outgoing else "data_from_devices"] += 1
        if udp:
            counts["udp_to_devices" if outgoing else "udp_from_devices"] += 1
        if outgoing != self.outgoing:
            counts["turns"] += 1
            counts["udp_turns"] += udp
            self.outgoing = outgoing

    def _udp(self, packet: bytearray, size: int, outgoing: bool) -> bool:
        """Count an IPv4 packet if it is UDP (False: it is not); QUIC's ACK-only packets are
        tallied but not data-bearing (the rule in the module docstring)."""
        if size < 20 or packet[0] >> 4 != 4 or packet[9] != IPPROTO_UDP:
            return False
        ihl = (packet[0] & 0x0F) * 4
        if (packet[6] & 0x1F) or packet[7]:  # a later fragment: its datagram counted already
            return True
        payload = (packet[2] << 8 | packet[3]) - ihl - UDP_HLEN
        first = packet[ihl + UDP_HLEN] if payload > 0 and size > ihl + UDP_HLEN else 0
        counts = self.counts
        if first & QUIC_FIXED_BIT:
            if first & QUIC_LONG_HEADER:
                counts["quic_long"] += 1
            elif QUIC_SHORT_MIN <= payload <= QUIC_ACK_ONLY_MAX:
                counts["quic_ack_only"] += 1
                return True
        self._data(outgoing, udp=True)
        return True


def _echo_request(ident: int, seq: int) -> bytes:
    header = struct.pack("!BBHHH", ICMP_ECHO, 0, 0, ident, seq)
    checksum = icmp_checksum(header + PROBE_BODY)
    return struct.pack("!BBHHH", ICMP_ECHO, 0, checksum, ident, seq) + PROBE_BODY


def _capture(interface: str, probe: str | None = None) -> int:
    """The tap process: capture on ``interface`` until stdin closes, then print the totals
    (probing the link's RTT to ``probe`` every PROBE_INTERVAL seconds meanwhile)."""
    # Protocol 0 until bound: a socket made with ETH_P_ALL would queue every interface's packets
    # until bind() narrows it to one.
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0)
    with sock:
        try:
            try:
                sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF)
            except PermissionError:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            sock.bind((interface, ETH_P_ALL))
            pinger = None
            if probe is not None:
                pinger = socket.socket(socket.AF_INET, socket.SOCK_RAW, IPPROTO_ICMP)
                pinger.setblocking(False)
        except OSError as exc:
            print(f"cannot capture on {interface}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        sock.setblocking(False)
        ident = os.getpid() & 0xFFFF
        tally = _Tally(ident if pinger is not None else None)
        print("ready", flush=True)
        stdin = sys.stdin.fileno()
        seq, next_probe = 0, time.monotonic()
        while True:
            stop, _, _ = select.select([stdin], [], [], POLL)
            if pinger is not None and probe is not None:
                if time.monotonic() >= next_probe and not stop:
                    with contextlib.suppress(OSError):  # a full queue: the next one goes
                        pinger.sendto(_echo_request(ident, seq), (probe, 0))
                    seq, next_probe = (seq + 1) & 0xFFFF, next_probe + PROBE_INTERVAL
                with contextlib.suppress(OSError):  # its own copies of ICMP: not needed
                    while pinger.recv(2048):
                        pass
            tally.drain(sock)
            if stop:  # EOF (or anything written): the window is over
                break
        if pinger is not None:
            pinger.close()
        _, dropped = struct.unpack("II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
        print(json.dumps(asdict(tally.result(dropped))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_capture(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
