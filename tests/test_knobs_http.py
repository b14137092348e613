"""The HTTP clients' knobs (:mod:`mgmtbench.clients.tuning`): RESTCONF over httpx, HTTP/3 over
aioquic and niquests. Each knob changes what it says on the connection, against the emulator,
and the outputs stay the transcripts' (the ``+tuned`` clients are in ``tests/test_clients.py``
with every client)."""

from __future__ import annotations

import ssl

import httpx
import pytest

from mgmtbench.clients import Target
from mgmtbench.clients.aioquic_h3.adapter import AioquicH3Client
from mgmtbench.clients.httpx.adapter import base_url
from mgmtbench.clients.httpx_restconf.adapter import HttpxRestconfClient
from mgmtbench.clients.httpx_restconf.knobs import TLS_RESUMPTION
from mgmtbench.clients.niquests_h3.adapter import NiquestsH3Client
from mgmtbench.clients.registry import knobs_of
from mgmtbench.emulator.oracle import expected_output, stable_output
from tests.clients_support import available, drive_rounds

COMMANDS = ["show version", "show clock", "show ip interface brief"]


def expected(commands: list[str]) -> str:
    """What the session's cisco_ios device answers, in its stable form."""
    return stable_output("cisco_ios", expected_output("cisco_ios", "R1", "198.18.0.1", commands))


def test_one_ssl_context_alone_resumes_no_session(ios_target: Target) -> None:
    """What the knob is for: httpx clients sharing one ``SSLContext`` (``verify=context``) still
    make a full handshake on every new connection."""
    assert ios_target.ca_file is not None
    context = ssl.create_default_context(cafile=str(ios_target.ca_file))
    reused = []
    for _ in range(3):
        with httpx.Client(verify=context, auth=(ios_target.username, ios_target.password),
                          trust_env=False) as client:
            response = client.get(f"{base_url(ios_target)}/restconf/yang-library-version")
            assert response.status_code == 200
            ssl_object = response.extensions["network_stream"].get_extra_info("ssl_object")
            reused.append(ssl_object.session_reused)
    assert reused == [False, False, False]


def test_restconf_tls_resumption_change_as_written_resumes(ios_target: Target) -> None:
    """The knob's lines as the report prints them (``...`` filled in): the context made once,
    then a client, a request and the session kept, twice; the second connection resumes."""
    assert ios_target.ca_file is not None
    code = TLS_RESUMPTION.change.replace("...", "auth=auth, trust_env=False")
    once, per_connection = code.split("with httpx")
    scope: dict[str, object] = {
        "ssl": ssl, "httpx": httpx, "ca_file": str(ios_target.ca_file),
        "auth": (ios_target.username, ios_target.password),
        "url": f"{base_url(ios_target)}/restconf/yang-library-version"}
    exec(once, scope)
    reused: list[bool] = []
    scope["reused"] = reused
    for _ in range(2):  # the lines, and one that notes whether the connection resumed
        exec("with httpx" + per_connection
             + '\n    reused.append(stream.get_extra_info("ssl_object").session_reused)', scope)
    assert reused == [False, True]


@pytest.mark.parametrize("mode", ["fresh-conn", "conn-per-iteration"])
def test_restconf_tls_resumption_resumes_every_new_connection_after_the_first(
        mode: str, ios_target: Target) -> None:
    """The device offers TLS 1.2 with tickets: with the knob, each new connection resumes the
    session of the one before it (the adapter fails a round whose connection did not); as
    shipped none does, so the context never holds a session."""
    shipped = available("httpx-restconf")(ios_target, mode)
    tuned = available("httpx-restconf+tls-resumption")(ios_target, mode)
    assert isinstance(shipped, HttpxRestconfClient)
    assert isinstance(tuned, HttpxRestconfClient)
    outputs, _ = drive_rounds(shipped, COMMANDS)
    assert shipped._ssl is not None
    assert not hasattr(shipped._ssl, "resume_with")
    outputs += drive_rounds(tuned, COMMANDS)[0]
    assert [stable_output("cisco_ios", o) for o in outputs] == [expected(COMMANDS)] * 4
    assert getattr(tuned._ssl, "resume_with", None) is not None


def test_restconf_http2_knob_answers_over_http2(ios_target: Target) -> None:
    client = available("httpx-restconf+http2")(ios_target, "keep-alive")
    assert isinstance(client, HttpxRestconfClient)
    client.setup()
    try:
        url, headers = client._get("show clock")
        response = client._client.get(url, headers=headers)
        assert response.http_version == "HTTP/2"
        assert stable_output("cisco_ios", client._output(response)) == expected(["show clock"])
    finally:
        client.teardown()


def test_aioquic_knobs_set_the_quic_configuration(ios_target: Target) -> None:
    shipped = available("aioquic-h3")(ios_target, "keep-alive")
    tuned = available("aioquic-h3+max-datagram-size+cubic")(ios_target, "keep-alive")
    assert isinstance(shipped, AioquicH3Client)
    assert isinstance(tuned, AioquicH3Client)
    before, after = shipped._configuration(None, b""), tuned._configuration(None, b"")
    assert (before.max_datagram_size, before.congestion_control_algorithm) == (1200, "reno")
    assert (after.max_datagram_size, after.congestion_control_algorithm) == (1452, "cubic")


@pytest.mark.parametrize("name", ["aioquic-h3+max-datagram-size+cubic",
                                  "niquests-h3+happy-eyeballs",
                                  "niquests-h3-async+happy-eyeballs"])
def test_http3_knob_clients_return_the_transcripts(name: str, ios_target: Target) -> None:
    for mode in ("fresh-conn", "keep-alive"):
        outputs, _ = drive_rounds(available(name)(ios_target, mode), COMMANDS)
        assert [stable_output("cisco_ios", o) for o in outputs] == [expected(COMMANDS)] * 2


def test_niquests_happy_eyeballs_is_the_session_option(ios_target: Target) -> None:
    assert knobs_of("niquests-h3") == knobs_of("niquests-h3-async")
    for name, want in (("niquests-h3", False), ("niquests-h3+happy-eyeballs", True)):
        client = available(name)(ios_target, "keep-alive")
        assert isinstance(client, NiquestsH3Client)
        with client._new_session() as session:
            assert session._happy_eyeballs is want
