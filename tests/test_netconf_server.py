"""The emulator's NETCONF server (RFC 6241 over SSH, RFC 6242), on a real socket: hellos and
framing, every operation, rpc-errors as the RFC shapes them, hostile input, and one device whose
models and CLI are the same state."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lxml import etree

from mgmtbench.emulator import EmulatorOptions, EmulatorThread
from mgmtbench.emulator.netconf.framing import Framer, FramingError
from tests.netconf_support import CLIENT_HELLO_10, CLIENT_HELLO_11, NS, RawNetconf, data_of, error_tag

IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
OC_SYS = "http://openconfig.net/yang/system"
NATIVE = "http://cisco.com/ns/yang/Cisco-IOS-XE-native"
OC_IF = "http://openconfig.net/yang/interfaces"
JUNOS = "http://yang.juniper.net/junos/conf/root"
RUNNING = ("show", "running-config")


@pytest.fixture
def emu() -> Iterator[EmulatorThread]:
    """A fresh device per test: the tests change its configuration."""
    with EmulatorThread(EmulatorOptions(https=False)) as running:
        yield running


@pytest.fixture
def session(emu: EmulatorThread) -> Iterator[RawNetconf]:
    port = emu.endpoints[0].netconf_port
    assert port
    raw = RawNetconf(port)
    yield raw
    raw.close()


def _description(name: str, text: str, operation: str = "") -> str:
    op = f' xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0" nc:operation="{operation}"' \
        if operation else ""
    return (f'<interfaces xmlns="{IF}"><interface{op}><name>{name}</name>'
            f"<description>{text}</description></interface></interfaces>")


def _edit(target: str, config: str, extra: str = "") -> str:
    return (f"<edit-config><target><{target}/></target>{extra}<config>{config}</config>"
            "</edit-config>")


# --- hello and framing ----------------------------------------------------------------------


def test_hello_offers_base_candidate_and_the_modules(session: RawNetconf) -> None:
    caps = [c.text for c in session.server_hello.iterfind("nc:capabilities/nc:capability", NS)]
    assert "urn:ietf:params:netconf:base:1.1" in caps
    assert "urn:ietf:params:netconf:capability:candidate:1.0" in caps
    assert session.server_hello.findtext("nc:session-id", namespaces=NS)
    modules = {c.split("module=")[1].split("&")[0] for c in caps if c and "module=" in c}
    assert {"ietf-interfaces", "ietf-ip", "openconfig-interfaces", "openconfig-system",
            "Cisco-IOS-XE-native", "ietf-hardware", "ietf-routing"} <= modules


def test_netconf_is_served_on_the_ssh_port_too(emu: EmulatorThread) -> None:
    port = emu.endpoints[0].ssh_port
    assert port
    raw = RawNetconf(port)
    try:
        reply = raw.rpc('<get><filter type="cli">show clock</filter></get>')
        assert "UTC" in (data_of(reply).text or "")
    finally:
        raw.close()


def test_base_10_session_keeps_end_of_message_framing(emu: EmulatorThread) -> None:
    raw = RawNetconf(emu.endpoints[0].netconf_port or 0, hello=CLIENT_HELLO_10)
    try:
        assert not raw.chunked
        reply = raw.rpc("<get-config><source><running/></source></get-config>")
        assert reply.find(f"nc:data/{{{IF}}}interfaces", NS) is not None
    finally:
        raw.close()


def test_a_hello_without_base_capability_ends_the_session(emu: EmulatorThread) -> None:
    raw = RawNetconf(emu.endpoints[0].netconf_port or 0, hello=(
        '<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities>'
        "<capability>urn:example:nothing</capability></capabilities></hello>"))
    try:
        assert raw.closed()
    finally:
        raw.close()


def test_bad_chunk_framing_ends_the_session(session: RawNetconf) -> None:
    session.send_raw(b"\n#abc\n<rpc/>\n##\n")
    assert session.closed()


def test_framer_refuses_a_message_over_its_limit() -> None:
    framer = Framer(max_message=100)
    framer.chunked = True
    with pytest.raises(FramingError, match="over 100 bytes"):
        framer.feed(b"\n#101\n" + b"x" * 101)
    eom = Framer(max_message=100)
    with pytest.raises(FramingError):
        eom.feed(b"y" * 200)


def test_framer_takes_chunks_in_pieces_and_several_per_message() -> None:
    framer = Framer(max_message=1000)
    framer.chunked = True
    stream = b"\n#3\nabc\n#2\nde\n##\n\n#1\nf\n##\n"
    got: list[bytes] = []
    for byte in stream:
        got += framer.feed(bytes([byte]))
    assert got == [b"abcde", b"f"]


def test_a_port_830_session_refuses_the_cli(emu: EmulatorThread) -> None:
    import paramiko

    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", emu.endpoints[0].netconf_port or 0, username="admin",
                   password="admin", look_for_keys=False, allow_agent=False)
    try:
        with pytest.raises(paramiko.SSHException):
            client.exec_command("show version", timeout=5)
    finally:
        client.close()


# --- rpcs: errors -----------------------------------------------------------------------------


def test_rpc_errors_are_shaped_as_the_rfc_says(session: RawNetconf) -> None:
    session.send(f'<rpc xmlns="{NS["nc"]}"><get/></rpc>')
    reply = session.reply()
    assert error_tag(reply) == "missing-attribute"
    assert reply.findtext("nc:rpc-error/nc:error-info/nc:bad-attribute", namespaces=NS) == \
        "message-id"
    assert error_tag(session.rpc("<frobnicate/>")) == "operation-not-supported"
    session.send("<rpc><not-closed>")
    assert error_tag(session.reply()) == "malformed-message"
    reply = session.rpc("<get/>", extra="kept")
    assert reply.get("extra") == "kept"
    assert reply.get("message-id")


def test_replies_keep_message_ids_when_pipelined(session: RawNetconf) -> None:
    for index in range(5):
        session.send(f'<rpc xmlns="{NS["nc"]}" message-id="p{index}"><get><filter type="cli">'
                     "show clock</filter></get></rpc>")
    assert [session.reply().get("message-id") for _ in range(5)] == [f"p{i}" for i in range(5)]


@pytest.mark.parametrize("hello", [CLIENT_HELLO_11, CLIENT_HELLO_10], ids=["chunked", "eom"])
def test_a_long_cli_output_is_sent_as_made_whole_and_in_order(emu: EmulatorThread,
                                                              hello: str) -> None:
    """``show bulk-output`` between two short commands: the reply is sent in pieces as it is
    made (the server holds one at a time), whole, escaped, in the commands' order; a request
    pipelined behind it is answered after it."""
    raw = RawNetconf(emu.endpoints[0].netconf_port or 0, hello=hello)
    size = 3 * 1024 * 1024 + 17
    try:
        raw.send(f'<rpc xmlns="{NS["nc"]}" message-id="long"><get><filter type="cli">'
                 f"show clock\nshow bulk-output {size}\nshow clock</filter></get></rpc>")
        raw.send(f'<rpc xmlns="{NS["nc"]}" message-id="after"><get><filter type="cli">'
                 "show clock</filter></get></rpc>")
        first, second = raw.reply(), raw.reply()
    finally:
        raw.close()
    assert (first.get("message-id"), second.get("message-id")) == ("long", "after")
    text = data_of(first).text or ""
    clock = data_of(second).text or ""
    assert text.count("UTC") == 2 == 2 * clock.count("UTC")
    assert len(text) >= size + 2 * len(clock.strip())


# --- the study's CLI envelope -----------------------------------------------------------------


def test_cli_envelope_answers_the_cli_text(emu: EmulatorThread, session: RawNetconf) -> None:
    reply = session.rpc('<get><filter type="cli">show version</filter></get>')
    text = data_of(reply).text or ""
    assert "Cisco IOS XE Software" in text
    assert "R1 uptime" in text
    assert error_tag(session.rpc(_edit("running", "<cli>interface Loopback9\n description "
                                                   "via cli envelope</cli>"))) is None
    assert "description via cli envelope" in emu.endpoints[0].device.transcript(RUNNING)


def test_the_quick_cli_get_answers_as_the_parsed_one(session: RawNetconf) -> None:
    """The study's exact CLI get skips the XML parser (emulator speed): its reply is the one
    the parser's path gives for the same request written another way."""
    quick = session.rpc('<get><filter type="cli">show inventory</filter></get>')
    session.send(f'<?xml version="1.0"?><rpc message-id="parsed" xmlns="{NS["nc"]}"><get>'
                 '<filter type="cli">show inventory</filter></get></rpc>')
    parsed = session.reply()
    assert data_of(quick).text == data_of(parsed).text
    assert parsed.get("message-id") == "parsed"
    assert quick.get("message-id") == str(session.message_id)


# --- reads ------------------------------------------------------------------------------------


def test_subtree_filter_selects_one_interface(session: RawNetconf) -> None:
    reply = session.rpc(f'<get><filter type="subtree"><interfaces xmlns="{IF}"><interface>'
                        "<name>Loopback0</name><description/></interface></interfaces>"
                        "</filter></get>")
    entries = data_of(reply).findall(f"{{{IF}}}interfaces/{{{IF}}}interface")
    assert [e.findtext(f"{{{IF}}}name") for e in entries] == ["Loopback0"]
    assert [c.tag.split("}")[1] for c in entries[0]] == ["name", "description"]


def test_xpath_filter(session: RawNetconf) -> None:
    reply = session.rpc(f'<get-config><source><running/></source><filter type="xpath" '
                        f'xmlns:n="{NATIVE}" select="/n:native/n:hostname"/></get-config>')
    assert data_of(reply).findtext(f"{{{NATIVE}}}native/{{{NATIVE}}}hostname") == "R1"
    bad = session.rpc('<get><filter type="xpath" select="/a:b["/></get>')
    assert error_tag(bad) == "invalid-value"


def test_get_has_state_get_config_has_not(session: RawNetconf) -> None:
    state = data_of(session.rpc("<get/>"))
    config = data_of(session.rpc("<get-config><source><running/></source></get-config>"))
    assert state.find(f".//{{{IF}}}oper-status") is not None
    assert config.find(f".//{{{IF}}}oper-status") is None
    assert state.find(f".//{{{OC_SYS}}}current-datetime") is not None


def test_get_schema(session: RawNetconf) -> None:
    mon = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
    reply = session.rpc(f'<get-schema xmlns="{mon}"><identifier>ietf-interfaces</identifier>'
                        "<format>yang</format></get-schema>")
    text = reply.findtext(f"{{{mon}}}data") or ""
    assert text.lstrip().startswith("module ietf-interfaces")
    missing = session.rpc(f'<get-schema xmlns="{mon}"><identifier>no-such</identifier>'
                          "</get-schema>")
    assert error_tag(missing) == "invalid-value"


# --- one device: the models and the CLI are the same state --------------------------------------


def test_description_set_over_netconf_shows_on_the_cli(emu: EmulatorThread,
                                                        session: RawNetconf) -> None:
    device = emu.endpoints[0].device
    assert error_tag(session.rpc(_edit("running", _description("GigabitEthernet0/0/3",
                                                               "set over netconf")))) is None
    assert "description set over netconf" in device.transcript(RUNNING)
    assert "Description: set over netconf" in device.transcript(("show", "interfaces"))


def test_cli_shutdown_shows_as_disabled_and_down(emu: EmulatorThread,
                                                session: RawNetconf) -> None:
    from mgmtbench.emulator import CliSession
    from mgmtbench.emulator.cli.session import Mode

    cli = CliSession(emu.endpoints[0].device, mode=Mode.PRIV)
    for line in ("configure terminal", "interface GigabitEthernet0/0/1", "shutdown", "end"):
        assert cli.execute(line).ok
    reply = session.rpc(f'<get><filter type="subtree"><interfaces xmlns="{IF}"><interface>'
                        "<name>GigabitEthernet0/0/1</name></interface></interfaces></filter></get>")
    entry = data_of(reply).find(f"{{{IF}}}interfaces/{{{IF}}}interface")
    assert entry is not None
    assert entry.findtext(f"{{{IF}}}enabled") == "false"
    assert entry.findtext(f"{{{IF}}}oper-status") == "down"
    native = data_of(session.rpc(
        f'<get-config><source><running/></source><filter><native xmlns="{NATIVE}"><interface>'
        "<GigabitEthernet><name>0/0/1</name></GigabitEthernet></interface></native></filter>"
        "</get-config>"))
    assert native.find(f".//{{{NATIVE}}}GigabitEthernet/{{{NATIVE}}}shutdown") is not None


def test_junos_configuration_over_netconf_is_the_clis() -> None:
    """On juniper_junos, an edit of Juniper's YANG configuration to the candidate and a
    commit are set commands committed: they show in ``show configuration``."""
    from mgmtbench.emulator import CliSession
    from mgmtbench.emulator.cli.session import Mode

    interfaces = "http://yang.juniper.net/junos/conf/interfaces"
    with EmulatorThread(EmulatorOptions(https=False, platform="juniper_junos")) as emu:
        raw = RawNetconf(emu.endpoints[0].netconf_port or 0)
        try:
            edit = (f'<configuration xmlns="{JUNOS}"><interfaces xmlns="{interfaces}">'
                    "<interface><name>et-0/0/1</name><description>via netconf</description>"
                    "<disable/></interface></interfaces></configuration>")
            assert error_tag(raw.rpc(_edit("candidate", edit))) is None
            assert error_tag(raw.rpc("<commit/>")) is None
            running = data_of(raw.rpc("<get-config><source><running/></source></get-config>"))
            assert b"via netconf" in etree.tostring(running)  # the models read the commit
        finally:
            raw.close()
        cli = CliSession(emu.endpoints[0].device, mode=Mode.PRIV)
        shown = cli.execute("show configuration interfaces et-0/0/1").output
        assert 'description "via netconf";' in shown
        assert "disable;" in shown


def test_openconfig_hostname_renames_the_device(emu: EmulatorThread,
                                                session: RawNetconf) -> None:
    config = f'<system xmlns="{OC_SYS}"><config><hostname>R9</hostname></config></system>'
    assert error_tag(session.rpc(_edit("running", config))) is None
    assert emu.endpoints[0].device.hostname == "R9"
    assert "hostname R9" in emu.endpoints[0].device.transcript(RUNNING)


# --- edit-config's operations ---------------------------------------------------------------


def test_create_delete_remove_and_their_errors(emu: EmulatorThread, session: RawNetconf) -> None:
    device = emu.endpoints[0].device
    new = (f'<interfaces xmlns="{IF}"><interface><name>Loopback77</name><type '
           'xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">ianaift:softwareLoopback'
           "</type></interface></interfaces>")
    create = new.replace("<interface>", '<interface xmlns:nc="urn:ietf:params:xml:ns:netconf:'
                         'base:1.0" nc:operation="create">')
    assert error_tag(session.rpc(_edit("running", create))) is None
    assert "interface Loopback77" in device.transcript(RUNNING)
    assert error_tag(session.rpc(_edit("running", create))) == "data-exists"
    delete = create.replace('"create"', '"delete"')
    assert error_tag(session.rpc(_edit("running", delete))) is None
    assert "interface Loopback77" not in device.transcript(RUNNING)
    assert error_tag(session.rpc(_edit("running", delete))) == "data-missing"
    remove = create.replace('"create"', '"remove"')
    assert error_tag(session.rpc(_edit("running", remove))) is None


def test_replace_and_test_only(emu: EmulatorThread, session: RawNetconf) -> None:
    device = emu.endpoints[0].device
    test_only = _edit("running", _description("Loopback0", "only tested"),
                      "<test-option>test-only</test-option>")
    assert error_tag(session.rpc(test_only)) is None
    assert "only tested" not in device.transcript(RUNNING)
    typeless = _description("Loopback0", "replaced", operation="replace")
    assert error_tag(session.rpc(_edit("running", typeless))) == "data-missing"
    replace = typeless.replace("<description>", '<type xmlns:ianaift="urn:ietf:params:xml:ns:'
                               'yang:iana-if-type">ianaift:softwareLoopback</type><description>')
    assert error_tag(session.rpc(_edit("running", replace))) is None
    assert "description replaced" in device.transcript(RUNNING)
    bad = _edit("running", _description("Loopback0", "x"),
                "<default-operation>sideways</default-operation>")
    assert error_tag(session.rpc(bad)) == "bad-element"


def test_a_new_interface_needs_its_type(session: RawNetconf) -> None:
    reply = session.rpc(_edit("running", _description("Loopback55", "no type")))
    assert error_tag(reply) == "data-missing"
    assert "type" in (reply.findtext("nc:rpc-error/nc:error-path", namespaces=NS) or "")


def test_invalid_address_is_refused_and_nothing_changes(emu: EmulatorThread,
                                                        session: RawNetconf) -> None:
    before = emu.endpoints[0].device.transcript(RUNNING)
    bad = (f'<interfaces xmlns="{IF}"><interface><name>Loopback0</name>'
           '<ipv4 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip"><address><ip>300.1.1.1</ip>'
           "<prefix-length>24</prefix-length></address></ipv4></interface></interfaces>")
    assert error_tag(session.rpc(_edit("running", bad))) == "invalid-value"
    assert emu.endpoints[0].device.transcript(RUNNING) == before


# --- candidate, commit, locks -------------------------------------------------------------------


def test_candidate_changes_only_at_commit(emu: EmulatorThread, session: RawNetconf) -> None:
    device = emu.endpoints[0].device
    assert error_tag(session.rpc(_edit("candidate", _description("Loopback1", "staged")))) \
        is None
    assert "description staged" not in device.transcript(RUNNING)
    staged = data_of(session.rpc("<get-config><source><candidate/></source></get-config>"))
    assert b"staged" in etree.tostring(staged)
    assert error_tag(session.rpc("<commit/>")) is None
    assert "description staged" in device.transcript(RUNNING)
    assert error_tag(session.rpc(_edit("candidate", _description("Loopback1", "dropped")))) \
        is None
    assert error_tag(session.rpc("<discard-changes/>")) is None
    assert error_tag(session.rpc("<commit/>")) is None
    assert "dropped" not in device.transcript(RUNNING)


def test_confirmed_commit_rolls_back_when_not_confirmed(emu: EmulatorThread,
                                                        session: RawNetconf) -> None:
    import time

    device = emu.endpoints[0].device
    session.rpc(_edit("candidate", _description("Loopback1", "on probation")))
    assert error_tag(session.rpc("<commit><confirmed/><confirm-timeout>1</confirm-timeout>"
                                 "</commit>")) is None
    assert "on probation" in device.transcript(RUNNING)
    deadline = time.monotonic() + 10
    while "on probation" in device.transcript(RUNNING) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "on probation" not in device.transcript(RUNNING)
    session.rpc(_edit("candidate", _description("Loopback1", "kept")))
    session.rpc("<commit><confirmed/><persist>p1</persist></commit>")
    assert error_tag(session.rpc("<commit><persist-id>p1</persist-id></commit>")) is None
    time.sleep(0.2)
    assert "description kept" in device.transcript(RUNNING)
    assert error_tag(session.rpc("<cancel-commit/>")) == "invalid-value"


def test_locks_between_sessions(emu: EmulatorThread, session: RawNetconf) -> None:
    other = RawNetconf(emu.endpoints[0].netconf_port or 0)
    try:
        assert error_tag(session.rpc("<lock><target><running/></target></lock>")) is None
        denied = other.rpc("<lock><target><running/></target></lock>")
        assert error_tag(denied) == "lock-denied"
        assert denied.findtext("nc:rpc-error/nc:error-info/nc:session-id", namespaces=NS) == \
            session.server_hello.findtext("nc:session-id", namespaces=NS)
        assert error_tag(other.rpc(_edit("running", _description("Loopback0", "x")))) == \
            "in-use"
        assert error_tag(other.rpc("<unlock><target><running/></target></unlock>")) == \
            "operation-failed"
        own_id = other.server_hello.findtext("nc:session-id", namespaces=NS)
        assert error_tag(session.rpc(f"<kill-session><session-id>{own_id}</session-id>"
                                     "</kill-session>")) is None
        assert other.closed()
        assert error_tag(session.rpc("<unlock><target><running/></target></unlock>")) is None
    finally:
        other.close()


def test_a_lock_goes_with_its_session(emu: EmulatorThread) -> None:
    first = RawNetconf(emu.endpoints[0].netconf_port or 0)
    assert error_tag(first.rpc("<lock><target><candidate/></target></lock>")) is None
    assert error_tag(first.rpc("<close-session/>")) is None
    first.close()
    second = RawNetconf(emu.endpoints[0].netconf_port or 0)
    try:
        for _ in range(50):
            if error_tag(reply := second.rpc("<lock><target><candidate/></target></lock>")) \
                    is None:
                break
        assert error_tag(reply) is None
    finally:
        second.close()


def test_validate(session: RawNetconf) -> None:
    assert error_tag(session.rpc("<validate><source><candidate/></source></validate>")) is None
    bad = (f'<interfaces xmlns="{IF}"><interface><name>Loopback0</name>'
           '<ipv4 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip"><address><ip>1.2.3.4</ip>'
           "<prefix-length>40</prefix-length></address></ipv4></interface></interfaces>")
    reply = session.rpc(f"<validate><source><config>{bad}</config></source></validate>")
    assert error_tag(reply) == "invalid-value"


# --- every reply is valid YANG data -------------------------------------------------------------


@pytest.mark.parametrize("platform", ["cisco_ios", "cisco_nxos", "arista_eos", "juniper_junos"])
def test_every_reply_validates_against_the_advertised_modules(platform: str) -> None:
    """Whole datastores (get, get-config of running and of an edited candidate) are complete,
    valid data (mandatory nodes, musts, leafrefs); filtered replies are valid as far as they go;
    every module the data use is one the hello advertises."""
    from mgmtbench.emulator.yang.validate import validator

    check = validator()
    with EmulatorThread(EmulatorOptions(https=False, platform=platform)) as emu:
        raw = RawNetconf(emu.endpoints[0].netconf_port or 0)
        try:
            advertised = {c.text.split("?")[0] for c in raw.server_hello.iterfind(
                "nc:capabilities/nc:capability", NS) if c.text and "module=" in c.text}
            whole = data_of(raw.rpc("<get/>"))
            check.validate_xml(whole, config_only=False)
            used = {etree.QName(node).namespace for node in whole.iter()
                    if isinstance(node.tag, str)} - {NS["nc"]}
            assert used <= advertised
            check.validate_xml(data_of(raw.rpc(
                "<get-config><source><running/></source></get-config>")), config_only=True)
            first = whole.findtext(f".//{{{OC_IF}}}interfaces/{{{OC_IF}}}interface/"
                                   f"{{{OC_IF}}}name")
            assert first
            edit = (f'<interfaces xmlns="{OC_IF}"><interface><name>{first}</name><config>'
                    "<description>checked</description></config></interface></interfaces>")
            assert error_tag(raw.rpc(_edit("candidate", edit))) is None
            check.validate_xml(data_of(raw.rpc(
                "<get-config><source><candidate/></source></get-config>")), config_only=True)
            from mgmtbench.clients.netconf.rpcs import READS

            for command, spec in READS.items():
                if spec is None or etree.fromstring(spec).tag.split("}")[0][1:] not in used:
                    continue  # a model the platform does not write in
                reply = raw.rpc(f'<get><filter type="subtree">{spec}</filter></get>')
                data = data_of(reply)
                assert len(data), f"{command}: no data"
                check.validate_xml(data, config_only=False, complete=False)
        finally:
            raw.close()
