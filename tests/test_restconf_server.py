"""The emulator's RESTCONF (RFC 8040) on its HTTPS server, on real sockets over HTTP/1.1 and
HTTP/2: discovery, the data resource with its query parameters in JSON and XML (valid against
the vendored modules), writes that reach the CLI and NETCONF, YANG Patch, entity tags and
preconditions, errors as RFC 8040 section 7 shapes them, and the study's envelope."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from lxml import etree

from mgmtbench.emulator import EmulatorOptions, EmulatorThread
from mgmtbench.emulator.oracle import expected_output, same_output
from mgmtbench.emulator.yang.validate import validator
from mgmtbench.testing.shell import https_client
from tests.netconf_support import RawNetconf, data_of

JSON = "application/yang-data+json"
XML = "application/yang-data+xml"
IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
RC = "urn:ietf:params:xml:ns:yang:ietf-restconf"
DATA = "/restconf/data"
GI = "GigabitEthernet0/0/1"
ENTRY = f"{DATA}/ietf-interfaces:interfaces/interface={quote(GI, safe='')}"


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorThread]:
    """A cisco_ios device (R1, admin/admin) with HTTPS and NETCONF; tests that write use
    interfaces of their own."""
    with EmulatorThread(EmulatorOptions()) as running:
        yield running


@pytest.fixture(scope="module", params=["http1", "h2"])
def client(request: pytest.FixtureRequest, emu: EmulatorThread) -> Iterator[httpx.Client]:
    endpoint = emu.endpoints[0]
    with https_client(emu, http2=request.param == "h2") as made:
        made.auth = ("admin", "admin")
        made.base_url = f"https://{endpoint.host}:{endpoint.https_port}"
        first = made.get("/.well-known/host-meta")
        assert first.http_version == ("HTTP/2" if request.param == "h2" else "HTTP/1.1")
        yield made


def _error(response: httpx.Response) -> dict[str, str]:
    assert response.headers["content-type"] == JSON
    errors = response.json()["ietf-restconf:errors"]["error"]
    assert len(errors) == 1
    return dict(errors[0])


def running_config(emu: EmulatorThread) -> str:
    return emu.endpoints[0].device.transcript(("show", "running-config"))


# --- discovery and the API root ------------------------------------------------------------


def test_host_meta_points_at_restconf(client: httpx.Client) -> None:
    response = client.get("/.well-known/host-meta")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/xrd+xml"
    link = etree.fromstring(response.content).find(
        "{http://docs.oasis-open.org/ns/xri/xrd-1.0}Link")
    assert link is not None
    assert link.get("rel") == "restconf"
    assert link.get("href") == "/restconf"


def test_root_library_version_and_operations(client: httpx.Client) -> None:
    assert client.get("/restconf").json()["ietf-restconf:restconf"]["yang-library-version"] \
        == "2019-01-04"
    assert client.get("/restconf/yang-library-version").json() == {
        "ietf-restconf:yang-library-version": "2019-01-04"}
    assert client.get("/restconf/operations").json() == {"ietf-restconf:operations": {}}
    xml = client.get("/restconf/yang-library-version", headers={"Accept": XML})
    assert etree.fromstring(xml.content).text == "2019-01-04"


def test_yang_library_lists_the_modules_and_is_valid(client: httpx.Client) -> None:
    reply = client.get(f"{DATA}/ietf-yang-library:yang-library")
    assert reply.status_code == 200
    library = reply.json()["ietf-yang-library:yang-library"]
    modules = {m["name"]: m for m in library["module-set"][0]["module"]}
    assert {"ietf-interfaces", "openconfig-system", "ietf-yang-library"} <= set(modules)
    assert modules["ietf-interfaces"]["revision"] == "2018-02-20"
    imported = {m["name"] for m in library["module-set"][0]["import-only-module"]}
    assert "ietf-yang-types" in imported
    validator().validate_json(reply.json(), config_only=False, complete=False)


def test_no_credentials_is_401(emu: EmulatorThread) -> None:
    endpoint = emu.endpoints[0]
    with https_client(emu, auth=False) as anonymous:
        response = anonymous.get(f"https://{endpoint.host}:{endpoint.https_port}{DATA}")
    assert response.status_code == 401


# --- reads ---------------------------------------------------------------------------------


def test_a_list_entry_in_json_is_rfc7951_and_valid(client: httpx.Client) -> None:
    reply = client.get(ENTRY)
    assert reply.status_code == 200
    assert reply.headers["content-type"] == JSON
    entry = reply.json()["ietf-interfaces:interface"][0]
    assert entry["name"] == GI
    assert entry["type"] == "iana-if-type:ethernetCsmacd"  # identityref: module-qualified
    assert isinstance(entry["speed"], str)  # uint64: a string in RFC 7951
    assert isinstance(entry["statistics"]["in-octets"], str)
    wrapped = {"ietf-interfaces:interfaces": {"interface": reply.json()[
        "ietf-interfaces:interface"]}}
    validator().validate_json(wrapped, config_only=False, complete=False)


def test_xml_by_accept_and_valid(client: httpx.Client) -> None:
    reply = client.get(f"{DATA}/ietf-interfaces:interfaces", headers={"Accept": XML})
    assert reply.headers["content-type"] == XML
    root = etree.fromstring(reply.content)
    assert root.tag == f"{{{IF}}}interfaces"
    validator().validate_xml(root, config_only=False, complete=False)
    whole = etree.fromstring(client.get(DATA, headers={"Accept": XML}).content)
    assert whole.tag == f"{{{RC}}}data"
    assert len(whole) >= 5


def test_a_leaf(client: httpx.Client) -> None:
    reply = client.get(f"{DATA}/openconfig-system:system/state/hostname")
    assert reply.json() == {"openconfig-system:hostname": "R1"}


def test_depth(client: httpx.Client) -> None:
    one = client.get(f"{DATA}/ietf-interfaces:interfaces?depth=1").json()
    assert one == {"ietf-interfaces:interfaces": {}}
    two = client.get(f"{DATA}/ietf-interfaces:interfaces?depth=2").json()
    entries = two["ietf-interfaces:interfaces"]["interface"]
    assert entries
    assert all(set(e) == {"name"} for e in entries)
    three = client.get(f"{DATA}/ietf-interfaces:interfaces?depth=3").json()
    assert "description" in three["ietf-interfaces:interfaces"]["interface"][1]
    assert "in-octets" not in json.dumps(three)


def test_fields(client: httpx.Client) -> None:
    reply = client.get(f"{DATA}/ietf-interfaces:interfaces",
                       params={"fields": "interface(name;ietf-ip:ipv4(address))"}).json()
    entries = reply["ietf-interfaces:interfaces"]["interface"]
    assert all(set(e) <= {"name", "ietf-ip:ipv4"} for e in entries)
    assert any("ietf-ip:ipv4" in e for e in entries)
    state = client.get(f"{DATA}/openconfig-system:system?fields=state/hostname").json()
    assert state == {"openconfig-system:system": {"state": {"hostname": "R1"}}}


def test_content_config_nonconfig_all(client: httpx.Client) -> None:
    config = client.get(f"{ENTRY}?content=config").json()["ietf-interfaces:interface"][0]
    state = client.get(f"{ENTRY}?content=nonconfig").json()["ietf-interfaces:interface"][0]
    everything = client.get(f"{ENTRY}?content=all").json()["ietf-interfaces:interface"][0]
    assert "description" in config
    assert "oper-status" not in config
    assert "oper-status" in state
    assert "description" not in state
    assert state["name"] == GI
    assert {"description", "oper-status"} <= set(everything)
    assert "ietf-yang-library:yang-library" not in client.get(
        f"{DATA}?content=config&depth=2").json()["ietf-restconf:data"]


def test_with_defaults_values(client: httpx.Client) -> None:
    for value in ("report-all", "trim", "explicit", "report-all-tagged"):
        assert client.get(f"{ENTRY}?with-defaults={value}").status_code == 200
    bad = client.get(f"{ENTRY}?with-defaults=sometimes")
    assert bad.status_code == 400
    assert _error(bad)["error-tag"] == "invalid-value"


@pytest.mark.parametrize(("url", "headers", "status", "tag"), [
    (f"{DATA}/ietf-interfaces:interfaces/interface=Nope", {}, 404, "invalid-value"),
    (f"{DATA}/no-such-module:thing", {}, 400, "unknown-namespace"),
    (f"{DATA}/ietf-interfaces:interfaces?depth=0", {}, 400, "invalid-value"),
    (f"{DATA}/ietf-interfaces:interfaces?colour=blue", {}, 400, "invalid-value"),
    (f"{DATA}/ietf-interfaces:interfaces?fields=interface(name", {}, 400, "invalid-value"),
    (f"{DATA}/ietf-interfaces:interfaces/interface=a,b", {}, 400, "invalid-value"),
    (f"{DATA}/ietf-interfaces:interfaces", {"Accept": "text/html"}, 406, "invalid-value"),
])
def test_read_errors(client: httpx.Client, url: str, headers: dict[str, str], status: int,
                     tag: str) -> None:
    reply = client.get(url, headers=headers)
    assert reply.status_code == status
    error = _error(reply)
    assert error["error-tag"] == tag
    assert error["error-type"] in ("protocol", "application")
    assert error["error-message"]
    if status == 404:
        assert error["error-path"] == "/ietf-interfaces:interfaces/interface[name='Nope']"


def test_errors_in_xml(client: httpx.Client) -> None:
    reply = client.get(f"{DATA}/ietf-interfaces:interfaces/interface=Nope",
                       headers={"Accept": XML})
    root = etree.fromstring(reply.content)
    assert root.tag == f"{{{RC}}}errors"
    assert root.findtext(f"{{{RC}}}error/{{{RC}}}error-tag") == "invalid-value"


def test_unsupported_method_and_body_type(client: httpx.Client) -> None:
    reply = client.request("TRACE", ENTRY)
    assert reply.status_code == 405
    assert "PATCH" in reply.headers["allow"]
    wrong = client.put(f"{ENTRY}/description", content=b"x",
                       headers={"Content-Type": "text/plain"})
    assert wrong.status_code == 415


# --- writes --------------------------------------------------------------------------------


def _entry(name: str) -> str:
    return f"{DATA}/ietf-interfaces:interfaces/interface={quote(name, safe='')}"


def _netconf_description(emu: EmulatorThread, name: str) -> str | None:
    port = emu.endpoints[0].netconf_port
    assert port
    session = RawNetconf(port)
    try:
        data = data_of(session.rpc(
            '<get-config><source><running/></source><filter type="subtree">'
            f'<interfaces xmlns="{IF}"><interface><name>{name}</name></interface>'
            "</interfaces></filter></get-config>"))
    finally:
        session.close()
    return data.findtext(f".//{{{IF}}}description")


def test_patch_merges_and_shows_on_the_cli_and_netconf(emu: EmulatorThread,
                                                       client: httpx.Client) -> None:
    name = "GigabitEthernet0/1/0"
    text = f"rc-merge-{client.get('/restconf').http_version}"
    reply = client.patch(_entry(name), json={"ietf-interfaces:interface": [
        {"name": name, "description": text}]}, headers={"Content-Type": JSON})
    assert reply.status_code == 204, reply.text
    assert reply.headers["etag"]
    assert f"interface {name}\n description {text}\n" in running_config(emu)
    assert _netconf_description(emu, name) == text
    assert client.get(f"{_entry(name)}/description").json() == {
        "ietf-interfaces:description": text}


def test_put_replaces_a_leaf_in_xml_and_delete_removes_it(emu: EmulatorThread,
                                                         client: httpx.Client) -> None:
    name = "GigabitEthernet0/1/1"
    body = f'<description xmlns="{IF}">rc-put</description>'.encode()
    put = client.put(f"{_entry(name)}/description", content=body,
                     headers={"Content-Type": XML})
    assert put.status_code in (201, 204), put.text
    assert _netconf_description(emu, name) == "rc-put"
    gone = client.delete(f"{_entry(name)}/description")
    assert gone.status_code == 204
    assert _netconf_description(emu, name) is None
    again = client.delete(f"{_entry(name)}/description")
    assert again.status_code == 404


def test_post_creates_and_a_second_post_is_data_exists(emu: EmulatorThread,
                                                       client: httpx.Client) -> None:
    name = f"Loopback{7 if client.get('/restconf').http_version == 'HTTP/2' else 8}"
    body = {"ietf-interfaces:interface": [{"name": name, "description": "rc-post",
                                           "type": "iana-if-type:softwareLoopback"}]}
    made = client.post(f"{DATA}/ietf-interfaces:interfaces", json=body)
    assert made.status_code == 201, made.text
    assert made.headers["location"].endswith(f"/interface={name}")
    assert f"interface {name}\n description rc-post\n" in running_config(emu)
    twice = client.post(f"{DATA}/ietf-interfaces:interfaces", json=body)
    assert twice.status_code == 409
    assert _error(twice)["error-tag"] == "data-exists"


@pytest.mark.parametrize(("body", "status", "tag"), [
    (b"{not json", 400, "malformed-message"),
    (json.dumps({"ietf-interfaces:interface": [{"name": "GigabitEthernet0/1/2",
                                                "enabled": "maybe"}]}).encode(), 400,
     "invalid-value"),
    (json.dumps({"ietf-interfaces:interface": [{"name": "Other0",
                                                "description": "x"}]}).encode(), 400,
     "invalid-value"),
    (json.dumps({"ietf-interfaces:interface": [{"name": "GigabitEthernet0/1/2",
                                                "oper-status": "up"}]}).encode(), 400,
     "invalid-value"),
])
def test_bad_bodies(client: httpx.Client, body: bytes, status: int, tag: str) -> None:
    reply = client.put(_entry("GigabitEthernet0/1/2"), content=body,
                       headers={"Content-Type": JSON})
    assert reply.status_code == status, reply.text
    assert _error(reply)["error-tag"] == tag


def test_etag_if_match_and_if_unmodified_since(client: httpx.Client) -> None:
    name = "GigabitEthernet0/1/3"
    version = client.get("/restconf").http_version
    read = client.get(f"{DATA}/ietf-interfaces:interfaces?depth=1")
    tag, modified = read.headers["etag"], read.headers["last-modified"]
    assert client.get(f"{DATA}/ietf-interfaces:interfaces?depth=1",
                      headers={"If-None-Match": tag}).status_code == 304
    body = {"ietf-interfaces:description": f"rc-etag-1-{version}"}
    first = client.put(f"{_entry(name)}/description", json=body,
                       headers={"If-Match": tag})
    assert first.status_code in (201, 204), first.text
    assert first.headers["etag"] != tag
    stale = client.put(f"{_entry(name)}/description",
                       json={"ietf-interfaces:description": "rc-etag-2"},
                       headers={"If-Match": tag})
    assert stale.status_code == 412
    assert _error(stale)["error-tag"] == "operation-failed"
    old = client.put(f"{_entry(name)}/description",
                     json={"ietf-interfaces:description": "rc-etag-3"},
                     headers={"If-Unmodified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"})
    assert old.status_code == 412
    assert modified
    assert client.get(f"{_entry(name)}/description").json() == {
        "ietf-interfaces:description": f"rc-etag-1-{version}"}


def test_yang_patch_json_and_xml(emu: EmulatorThread, client: httpx.Client) -> None:
    a, b = "GigabitEthernet0/1/4", "GigabitEthernet0/1/5"
    patch = {"ietf-yang-patch:yang-patch": {"patch-id": "p1", "edit": [
        {"edit-id": "1", "operation": "merge", "target": f"/interface={quote(a, safe='')}",
         "value": {"ietf-interfaces:interface": [{"name": a, "description": "rc-yp-a"}]}},
        {"edit-id": "2", "operation": "replace",
         "target": f"/interface={quote(b, safe='')}/description",
         "value": {"ietf-interfaces:description": "rc-yp-b"}}]}}
    reply = client.patch(f"{DATA}/ietf-interfaces:interfaces", json=patch,
                         headers={"Content-Type": "application/yang-patch+json"})
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"ietf-yang-patch:yang-patch-status": {"patch-id": "p1",
                                                                  "ok": [None]}}
    assert (_netconf_description(emu, a), _netconf_description(emu, b)) == ("rc-yp-a",
                                                                             "rc-yp-b")
    xml = (f'<yang-patch xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-patch">'
           "<patch-id>p2</patch-id><edit><edit-id>1</edit-id><operation>remove</operation>"
           f"<target>/ietf-interfaces:interfaces/interface={quote(a, safe='')}/description"
           "</target></edit></yang-patch>")
    removed = client.patch(DATA, content=xml.encode(),
                           headers={"Content-Type": "application/yang-patch+xml"})
    assert removed.status_code == 200, removed.text
    assert b"<ok/>" in removed.content
    assert _netconf_description(emu, a) is None


def test_yang_patch_is_all_or_nothing(emu: EmulatorThread, client: httpx.Client) -> None:
    c = "GigabitEthernet0/1/6"
    patch = {"ietf-yang-patch:yang-patch": {"patch-id": "p3", "edit": [
        {"edit-id": "ok-one", "operation": "merge", "target": f"/interface={quote(c, safe='')}",
         "value": {"ietf-interfaces:interface": [{"name": c, "description": "rc-never"}]}},
        {"edit-id": "bad-one", "operation": "delete", "target": "/interface=Nope/description"}
    ]}}
    reply = client.patch(f"{DATA}/ietf-interfaces:interfaces", json=patch,
                         headers={"Content-Type": "application/yang-patch+json"})
    assert reply.status_code == 409
    status = reply.json()["ietf-yang-patch:yang-patch-status"]
    edit = status["edit-status"]["edit"][0]
    assert edit["edit-id"] == "bad-one"
    assert edit["errors"]["error"][0]["error-tag"] == "data-missing"
    assert _netconf_description(emu, c) != "rc-never"


# --- the study's envelope --------------------------------------------------------------------


def test_the_study_cli_get_json_and_xml(client: httpx.Client) -> None:
    want = expected_output("cisco_ios", "R1", "198.18.0.1", ["show version"])
    reply = client.get(f"{DATA}/cli:show/version", headers={"Accept": JSON})
    assert reply.headers["content-type"] == JSON
    assert reply.content.endswith(b"}}\n")
    assert reply.content.startswith(b'{"cli:output":')
    assert same_output("cisco_ios", reply.json()["cli:output"]["response"], want)
    xml = client.get(f"{DATA}/cli:show/version", headers={"Accept": XML})
    assert xml.content.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<output xmlns="urn:cli">')
    assert b"&#xA;" in xml.content  # Go's encoding/xml escapes newlines
    assert same_output("cisco_ios", etree.fromstring(xml.content).findtext(
        "{urn:cli}response") or "", want)


def test_the_study_batch_patch(client: httpx.Client) -> None:
    reply = client.patch(f"{DATA}/", content=b"show version\n" * 5,
                         headers={"Content-Type": "application/yang-patch+json"})
    assert reply.status_code == 200
    assert reply.content == b'{"ietf-yang-patch:yang-patch-status":{"ok":{}}}'
    shaped = client.patch(f"{DATA}/", json={"ietf-yang-patch:yang-patch": [
        {"edit-id": "1", "operation": "merge", "target": "/cli:show/version", "value": ""}]},
        headers={"Content-Type": "application/yang-patch+json"})
    assert shaped.status_code == 200
    refused = client.patch(f"{DATA}/", content=b"show nonsense-here\n",
                           headers={"Content-Type": "application/yang-patch+json"})
    assert refused.status_code == 400
    assert _error(refused)["error-tag"] == "operation-failed"
