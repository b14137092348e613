"""Streaming telemetry against polling, over the lab's link at each ``--profiles`` profile.

- ``test_sample_rate``: a gNMI STREAM subscription in SAMPLE mode at 1 s, 100 ms and 10 ms (an
  interface's state): the updates per second the device delivers over a window, against the
  rate asked for, and the bytes per second on the link.
- ``test_on_change_latency``: a STREAM ON_CHANGE subscription of an interface; each round a
  change is made from outside gNMI (``cli``: ``shutdown`` / ``no shutdown`` typed over a kept
  SSH connection; ``netconf``: an ``edit-config`` of its description and a ``commit`` on a
  kept NETCONF session) and the notification awaited. Recorded: the time from the device's
  change (the notification's timestamp: the lab's namespaces share the host's clock) to its
  arrival at the client, and from the client sending the change to the notification.
- ``test_polling``: what seeing a change by polling costs: one poll (a gNMI Get of the same
  path on a warm channel; a RESTCONF GET of its OpenConfig state on a kept HTTPS connection;
  ``show interfaces <name>`` over a kept SSH connection) timed, its
  bytes on the link counted; recorded with what polling every 1, 10 and 60 s costs per hour in
  requests and bytes, and how long a change then takes to be seen on average (half the period
  plus one poll).

The benchmark's own time is the window (sample), the change round (on-change) or one poll.
"""

from __future__ import annotations

import queue
import ssl
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients import adapter
from mgmtbench.clients.netconf.rpcs import edit_interface
from mgmtbench.targets import Service, Target
from mgmtbench.testing import Driver, record
from mgmtbench.testing.sites import Site

PLATFORM = "cisco_ios"
INTERFACE = edit_interface(PLATFORM)
STATE = f"/interfaces/interface[name={INTERFACE}]/state"
#: SAMPLE intervals (ns) and the window each is counted over (s).
SAMPLES = {"1s": (1_000_000_000, 4.0), "100ms": (100_000_000, 2.0), "10ms": (10_000_000, 2.0)}
CHANGE_ROUNDS = 6
POLL_PERIODS = (1, 10, 60)
AUTH = (("username", "admin"), ("password", "admin"))


class Stream:
    """A gNMI Subscribe call on its own channel, its responses stamped on arrival by a reader
    thread."""

    def __init__(self, target: Target, request: Any) -> None:
        import grpc

        from mgmtbench.emulator.gnmi.protos import rpc

        assert target.ca_file is not None
        self.channel = grpc.secure_channel(
            f"{target.host}:{target.gnmi_port}",
            grpc.ssl_channel_credentials(target.ca_file.read_bytes()))
        self.requests: queue.Queue[Any] = queue.Queue()
        self.requests.put(request)
        self.arrived: queue.Queue[tuple[int, Any]] = queue.Queue()
        self.call = rpc.gNMIStub(self.channel).Subscribe(
            iter(self.requests.get, None), metadata=(("username", target.username),
                                                     ("password", target.password)))
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        import grpc

        try:
            for response in self.call:
                self.arrived.put((time.time_ns(), response))
        except grpc.RpcError:
            return

    def next(self, timeout: float = 10.0) -> tuple[int, Any]:
        """The next response and when it arrived (ns)."""
        return self.arrived.get(timeout=timeout)

    def until_sync(self) -> None:
        while not self.next()[1].sync_response:
            pass

    def close(self) -> None:
        self.requests.put(None)
        self.call.cancel()
        self.thread.join(5)
        self.channel.close()


def _subscription(mode: str, interval: int = 0, path: str = STATE) -> Any:
    from mgmtbench.emulator.gnmi.paths import parse
    from mgmtbench.emulator.gnmi.protos import pb

    return pb.SubscribeRequest(subscribe=pb.SubscriptionList(
        subscription=[pb.Subscription(path=parse(path),
                                      mode=pb.SubscriptionMode.Value(mode),
                                      sample_interval=interval)],
        mode=pb.SubscriptionList.Mode.Value("STREAM"),
        encoding=pb.Encoding.Value("JSON_IETF")))


@pytest.fixture
def gnmi_site(site_for: Callable[[str], Site], profile: str) -> tuple[Site, Target]:
    site = site_for(profile)
    reason = site.unsupported(Service.GNMI)
    if reason:
        pytest.skip(reason)
    target = site.targets(1, PLATFORM)[0]
    if target.ca_file is None or not target.gnmi_port:
        pytest.skip(f"{profile}: the device has no gNMI port or CA file")
    return site, target


def _bytes(site: Site, work: Callable[[], Any]) -> tuple[Any, int | None]:
    before = site.counters()
    result = work()
    after = site.counters()
    return result, (None if before is None or after is None else (after - before).bytes)


@pytest.mark.parametrize("interval", list(SAMPLES))
def test_sample_rate(benchmark: BenchmarkFixture, gnmi_site: tuple[Site, Target],
                     interval: str, profile: str) -> None:
    site, target = gnmi_site
    period, window = SAMPLES[interval]
    stream = Stream(target, _subscription("SAMPLE", period))
    counted: list[int] = []
    stamps: list[int] = []

    def one_window() -> None:
        stream.until_sync()
        end = time.monotonic() + window
        while (left := end - time.monotonic()) > 0:
            try:
                arrived, response = stream.next(timeout=left)
            except queue.Empty:
                break
            if response.update.update:
                stamps.append(arrived)
        counted.append(len(stamps))

    try:
        _, on_link = _bytes(site, lambda: benchmark.pedantic(one_window, rounds=1,
                                                             iterations=1))
    finally:
        stream.close()
    # Updates per second between the first and the last arrival (a window's edges would cut
    # off a period at 1 s).
    assert len(stamps) >= 2, f"{len(stamps)} updates in {window} s"
    rate = (len(stamps) - 1) / ((stamps[-1] - stamps[0]) / 1e9)
    asked = 1e9 / period
    benchmark.group = f"telemetry sample, {profile}"
    figures: dict[str, Any] = {} if on_link is None else {
        "bytes_per_second": round(on_link / window)}
    record(benchmark, "telemetry", lab=None, **site.record_info(), profile=site.name,
           op="sample", interval=interval, window_s=window, updates=counted[0],
           updates_per_second=round(rate, 1), asked_per_second=asked,
           delivered_share=round(rate / asked, 3), **figures)


def _cli_trigger(target: Target) -> tuple[Driver, Callable[[int], None]]:
    driver = Driver(adapter("asyncssh")(target, "reuse-conn"))
    driver.setup()

    def change(index: int) -> None:
        word = "shutdown" if index % 2 == 0 else "no shutdown"
        driver.run([f"configure terminal\ninterface {INTERFACE}\n {word}\nend"])

    return driver, change


def _netconf_trigger(target: Target) -> tuple[Driver, Callable[[int], None]]:
    driver = Driver(adapter("asyncssh-netconf")(target, "edit-commit", "yang"))
    driver.setup()

    def change(index: int) -> None:
        driver.run(["show version"] * (1 + index % 2))  # describes mgmtbench-0, -1, -0 ...

    return driver, change


TRIGGERS = {"cli": _cli_trigger, "netconf": _netconf_trigger}


def _drain(stream: Stream) -> None:
    """Take what arrives until 50 ms pass without a response."""
    while True:
        try:
            stream.arrived.get(timeout=0.05)
        except queue.Empty:
            return


@pytest.mark.parametrize("trigger", list(TRIGGERS))
def test_on_change_latency(benchmark: BenchmarkFixture, gnmi_site: tuple[Site, Target],
                           trigger: str, profile: str) -> None:
    site, target = gnmi_site
    driver, change = TRIGGERS[trigger](target)
    stream = Stream(target, _subscription("ON_CHANGE", path=f"/interfaces/interface"
                                                             f"[name={INTERFACE}]"))
    device_to_client: list[float] = []
    sent_to_client: list[float] = []
    sizes: list[int] = []
    try:
        stream.until_sync()
        change(-1)  # untimed: a known state (no shutdown; mgmtbench-1), so round 0 changes it
        _drain(stream)
        rounds = iter(range(10_000))

        def one_change() -> None:
            index = next(rounds)
            sent = time.time_ns()
            change(index)
            while True:
                arrived, response = stream.next()
                if response.update.update or response.update.delete:
                    break
            device_to_client.append((arrived - response.update.timestamp) / 1e6)
            sent_to_client.append((arrived - sent) / 1e6)
            sizes.append(response.ByteSize())
            _drain(stream)  # a change may come as more than one notification

        benchmark.group = f"telemetry on-change, {profile}"
        benchmark.pedantic(one_change, rounds=CHANGE_ROUNDS, iterations=1)
    finally:
        stream.close()
        driver.teardown()
    assert len(device_to_client) == CHANGE_ROUNDS
    record(benchmark, "telemetry", lab=None, **site.record_info(), profile=site.name,
           op="on-change", trigger=trigger,
           device_to_client_ms=round(statistics.median(device_to_client), 2),
           sent_to_client_ms=round(statistics.median(sent_to_client), 2),
           notification_bytes=round(statistics.median(sizes)), rtt_ms=site.rtt_ms())


def _gnmi_poller(target: Target) -> tuple[Callable[[], str], Callable[[], None]]:
    import grpc

    from mgmtbench.emulator.gnmi.paths import parse
    from mgmtbench.emulator.gnmi.protos import pb, rpc

    assert target.ca_file is not None
    channel = grpc.secure_channel(f"{target.host}:{target.gnmi_port}",
                                  grpc.ssl_channel_credentials(target.ca_file.read_bytes()))
    stub = rpc.gNMIStub(channel)
    request = pb.GetRequest(path=[parse(STATE)], encoding=pb.Encoding.Value("JSON_IETF"))
    auth = (("username", target.username), ("password", target.password))

    def poll() -> str:
        return str(stub.Get(request, metadata=auth, timeout=30).notification[0].update[0].val
                   .json_ietf_val.decode())

    return poll, channel.close


def _ssh_poller(target: Target) -> tuple[Callable[[], str], Callable[[], None]]:
    driver = Driver(adapter("asyncssh")(target, "reuse-conn"))
    driver.setup()
    return (lambda: driver.run([f"show interfaces {INTERFACE}"])), driver.teardown


def _restconf_poller(target: Target) -> tuple[Callable[[], str], Callable[[], None]]:
    import httpx

    assert target.ca_file is not None
    client = httpx.Client(verify=ssl.create_default_context(cafile=str(target.ca_file)),
                          auth=(target.username, target.password))
    url = (f"https://{target.host}:{target.https_port}/restconf/data/openconfig-interfaces:"
           f"interfaces/interface={quote(INTERFACE, safe='')}/state")

    def poll() -> str:
        response = client.get(url, headers={"Accept": "application/yang-data+json"})
        assert response.status_code == 200, response.text[:200]
        return response.text

    return poll, client.close


POLLERS = {"gnmi-get": _gnmi_poller, "restconf-get": _restconf_poller,
           "ssh-show": _ssh_poller}


@pytest.mark.parametrize("method", list(POLLERS))
def test_polling(benchmark: BenchmarkFixture, gnmi_site: tuple[Site, Target], method: str,
                 profile: str) -> None:
    site, target = gnmi_site
    poll, close = POLLERS[method](target)
    try:
        assert INTERFACE.split("/")[0][:4] in poll() or "oper-status" in poll()
        polls = 10
        _, on_link = _bytes(site, lambda: [poll() for _ in range(polls)])
        benchmark.group = f"telemetry polling, {profile}"
        benchmark.pedantic(poll, rounds=polls, iterations=1)
    finally:
        close()
    one = benchmark.stats.stats.median * 1000 if benchmark.stats else float("nan")
    per_poll = None if on_link is None else on_link / polls
    figures: dict[str, Any] = {}
    for period in POLL_PERIODS:
        figures[f"every_{period}s_requests_per_hour"] = 3600 // period
        figures[f"every_{period}s_seen_after_ms"] = round(period * 500 + one, 1)
        if per_poll is not None:
            figures[f"every_{period}s_bytes_per_hour"] = round(per_poll * 3600 / period)
    if per_poll is not None:
        figures["bytes_per_poll"] = round(per_poll)
    record(benchmark, "telemetry", lab=None, **site.record_info(), profile=site.name,
           op="poll", method=method, poll_ms=round(one, 2), **figures)
