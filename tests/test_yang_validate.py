"""The YANG validator (mgmtbench.emulator.yang.validate) against the vendored modules: a valid
sample of each model family passes, as XML (NETCONF replies) and RFC 7951 JSON, and wrong data
fail with libyang's message and the node's path."""

from __future__ import annotations

import json
from typing import Any

import pytest

validate = pytest.importorskip("mgmtbench.emulator.yang.validate",
                               reason="the YANG library (oopt-gnpy-libyang) is not installed")

NC = "urn:ietf:params:xml:ns:netconf:base:1.0"

IETF_CONFIG = """
<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"
            xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">
  <interface>
    <name>GigabitEthernet1</name>
    <description>uplink to core</description>
    <type>ianaift:ethernetCsmacd</type>
    <enabled>true</enabled>
    <ipv4 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip">
      <address><ip>192.0.2.1</ip><prefix-length>24</prefix-length></address>
    </ipv4>
  </interface>
</interfaces>"""

IETF_STATE = """
    <admin-status>up</admin-status>
    <oper-status>up</oper-status>
    <if-index>1</if-index>
    <phys-address>52:54:00:12:34:56</phys-address>
    <statistics>
      <discontinuity-time>2026-11-23T05:42:17+00:00</discontinuity-time>
      <in-octets>1234</in-octets>
    </statistics>
  </interface>"""

IETF_GET = (f'<?xml version="1.0" encoding="UTF-8"?>\n<rpc-reply xmlns="{NC}" message-id="7">'
            f"<data>{IETF_CONFIG.replace('</interface>', IETF_STATE, 1)}</data></rpc-reply>")

OPENCONFIG = f"""
<data xmlns="{NC}">
  <interfaces xmlns="http://openconfig.net/yang/interfaces"
              xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">
    <interface>
      <name>Ethernet1</name>
      <config>
        <name>Ethernet1</name>
        <type>ianaift:ethernetCsmacd</type>
        <description>uplink</description>
        <enabled>true</enabled>
      </config>
      <state>
        <name>Ethernet1</name>
        <type>ianaift:ethernetCsmacd</type>
        <admin-status>UP</admin-status>
        <oper-status>UP</oper-status>
      </state>
      <subinterfaces>
        <subinterface>
          <index>0</index>
          <config><index>0</index></config>
          <state><index>0</index><admin-status>UP</admin-status><oper-status>UP</oper-status></state>
          <ipv4 xmlns="http://openconfig.net/yang/interfaces/ip">
            <addresses>
              <address>
                <ip>192.0.2.1</ip>
                <config><ip>192.0.2.1</ip><prefix-length>24</prefix-length></config>
              </address>
            </addresses>
          </ipv4>
        </subinterface>
      </subinterfaces>
    </interface>
  </interfaces>
  <system xmlns="http://openconfig.net/yang/system">
    <config><hostname>r1</hostname></config>
    <state><hostname>r1</hostname><current-datetime>2026-11-23T05:42:17Z</current-datetime></state>
    <clock><config><timezone-name>Europe/Paris</timezone-name></config></clock>
  </system>
</data>"""

IOSXE = f"""
<data xmlns="{NC}">
  <native xmlns="http://cisco.com/ns/yang/Cisco-IOS-XE-native">
    <hostname>r1</hostname>
    <interface>
      <GigabitEthernet>
        <name>1</name>
        <description>uplink</description>
        <shutdown/>
        <ip>
          <address>
            <primary><address>192.0.2.1</address><mask>255.255.255.0</mask></primary>
          </address>
        </ip>
      </GigabitEthernet>
    </interface>
  </native>
</data>"""

JUNOS = f"""
<rpc-reply xmlns="{NC}" message-id="1">
  <data>
    <configuration xmlns="http://yang.juniper.net/junos/conf/root">
      <system xmlns="http://yang.juniper.net/junos/conf/system">
        <host-name>r1</host-name>
      </system>
      <interfaces xmlns="http://yang.juniper.net/junos/conf/interfaces">
        <interface>
          <name>ge-0/0/0</name>
          <description>uplink</description>
          <disable/>
          <unit>
            <name>0</name>
            <family><inet><address><name>192.0.2.1/24</name></address></inet></family>
          </unit>
        </interface>
      </interfaces>
    </configuration>
  </data>
</rpc-reply>"""


def _ietf_json() -> dict[str, Any]:
    return {"ietf-interfaces:interfaces": {"interface": [{
        "name": "GigabitEthernet1", "description": "uplink to core",
        "type": "iana-if-type:ethernetCsmacd", "enabled": True,
        "ietf-ip:ipv4": {"address": [{"ip": "192.0.2.1", "prefix-length": 24}]},
    }]}}


def _all_modules() -> list[str]:
    return [m.name for m in validate.vendored_modules() if not m.submodule]


@pytest.fixture(scope="module")
def validator() -> Any:
    """Every vendored module that is not a submodule, in one context."""
    return validate.validator(_all_modules())


def test_vendored_modules_are_described() -> None:
    infos = {m.name: m for m in validate.vendored_modules()}
    ietf = infos["ietf-interfaces"]
    assert (ietf.revision, ietf.namespace, ietf.prefix) == (
        "2018-02-20", "urn:ietf:params:xml:ns:yang:ietf-interfaces", "if")
    assert ietf.path.name == "ietf-interfaces@2018-02-20.yang"
    assert ietf.path.is_file()
    assert set(ietf.features) == {"arbitrary-names", "pre-provisioning", "if-mib"}
    assert ietf.capability == ("urn:ietf:params:xml:ns:yang:ietf-interfaces?module=ietf-interfaces"
                               "&revision=2018-02-20&features=arbitrary-names,pre-provisioning,"
                               "if-mib")
    assert infos["Cisco-IOS-XE-interfaces"].submodule
    assert infos["Cisco-IOS-XE-interfaces"].namespace == "http://cisco.com/ns/yang/Cisco-IOS-XE-native"
    for name in ("ietf-ip", "iana-if-type", "ietf-netconf", "ietf-netconf-monitoring",
                 "ietf-yang-library", "ietf-netconf-with-defaults", "ietf-datastores",
                 "openconfig-interfaces", "openconfig-if-ip", "openconfig-system",
                 "Cisco-IOS-XE-native", "junos-conf-root", "junos-conf-system",
                 "junos-conf-interfaces", "junos-common-types"):
        assert name in infos
    # Every file is name@revision.yang for the module it holds.
    for info in infos.values():
        assert info.path.name == f"{info.name}@{info.revision}.yang"


def test_every_vendored_module_is_implemented(validator: Any) -> None:
    implemented = dict(validator.implemented())
    for info in validate.vendored_modules():
        if not info.submodule:
            assert implemented.get(info.name) == info.revision, info.name


@pytest.mark.parametrize("sample", [IETF_GET, OPENCONFIG])
def test_get_replies_with_state_are_valid(validator: Any, sample: str) -> None:
    validator.validate_xml(sample, config_only=False)


@pytest.mark.parametrize("sample", [IETF_CONFIG, IOSXE, JUNOS, IETF_CONFIG.encode()])
def test_configurations_are_valid(validator: Any, sample: str | bytes) -> None:
    validator.validate_xml(sample, config_only=True)


def test_a_configuration_without_the_mandatory_state_is_no_get_reply(validator: Any) -> None:
    error = _fails(validator.validate_xml, IETF_CONFIG, config_only=False)
    assert {"admin-status", "oper-status", "if-index"} <= {
        issue.message.split('"')[1] for issue in error.issues}


def test_an_lxml_data_element_and_several_roots_are_valid(validator: Any) -> None:
    from lxml import etree

    validator.validate_xml(etree.fromstring(IOSXE), config_only=True)
    validator.validate_xml(IETF_CONFIG + IOSXE.replace(f'<data xmlns="{NC}">', "")
                           .replace("</data>", ""), config_only=True)
    assert validate.data_problem(etree.fromstring(OPENCONFIG), modules=_all_modules()) is None


def test_rfc7951_json_is_valid(validator: Any) -> None:
    data = _ietf_json()
    validator.validate_json(data, config_only=True)
    validator.validate_json(json.dumps(data).encode(), config_only=True)
    validator.validate_json({
        "openconfig-system:system": {"config": {"hostname": "r1"},
                                     "clock": {"config": {"timezone-name": "UTC"}}},
        "Cisco-IOS-XE-native:native": {"hostname": "r1", "interface": {"GigabitEthernet": [
            {"name": "1", "description": "uplink", "shutdown": [None],
             "ip": {"address": {"primary": {"address": "192.0.2.1", "mask": "255.255.255.0"}}}},
        ]}},
        "junos-conf-root:configuration": {
            "junos-conf-system:system": {"host-name": "r1"},
            "junos-conf-interfaces:interfaces": {"interface": [{
                "name": "ge-0/0/0", "description": "uplink", "disable": [None],
                "unit": [{"name": "0", "family": {"inet": {"address": [{"name": "192.0.2.1/24"}]}}}],
            }]},
        },
    }, config_only=True)


def _fails(call: Any, *args: Any, **kwargs: Any) -> Any:
    with pytest.raises(validate.YangValidationError) as caught:
        call(*args, **kwargs)
    return caught.value


def test_an_unknown_leaf_fails(validator: Any) -> None:
    error = _fails(validator.validate_xml, IOSXE.replace("<hostname>", "<hostnme>")
                   .replace("</hostname>", "</hostnme>"), config_only=True)
    assert "hostnme" in error.message
    assert isinstance(error, ValueError)
    error = _fails(validator.validate_json,
                   {"ietf-interfaces:interfaces": {"interface": [{"name": "x", "colour": "red"}]}},
                   config_only=True)
    assert "colour" in str(error)


def test_a_wrong_type_fails(validator: Any) -> None:
    error = _fails(validator.validate_xml,
                   IETF_CONFIG.replace("<prefix-length>24<", "<prefix-length>99<"),
                   config_only=True)
    assert "99" in error.message
    assert error.path == ("/ietf-interfaces:interfaces/interface[name='GigabitEthernet1']"
                          "/ietf-ip:ipv4/address[ip='192.0.2.1']/prefix-length")
    error = _fails(validator.validate_xml,
                   IOSXE.replace("<address>192.0.2.1</address>", "<address>192.0.2.300</address>"),
                   config_only=True)
    assert "192.0.2.300" in str(error)
    data = _ietf_json()
    data["ietf-interfaces:interfaces"]["interface"][0]["enabled"] = "yes"
    assert "yes" in str(_fails(validator.validate_json, data, config_only=True))


def test_a_missing_key_fails(validator: Any) -> None:
    error = _fails(validator.validate_xml, JUNOS.replace("<name>ge-0/0/0</name>", ""),
                   config_only=True)
    assert "name" in error.message
    assert "key" in error.message.lower()
    data = _ietf_json()
    del data["ietf-interfaces:interfaces"]["interface"][0]["name"]
    assert "key" in str(_fails(validator.validate_json, data, config_only=True)).lower()


def test_state_in_a_configuration_fails(validator: Any) -> None:
    error = _fails(validator.validate_xml, IETF_GET, config_only=True)
    assert error.message == 'Unexpected data state node "admin-status" found.'
    assert any("oper-status" in issue.message for issue in error.issues)


def test_a_missing_mandatory_node_fails_unless_the_data_are_partial(validator: Any) -> None:
    partial = IETF_GET.replace("<admin-status>up</admin-status>", "")
    error = _fails(validator.validate_xml, partial, config_only=False)
    assert "admin-status" in error.message
    validator.validate_xml(partial, config_only=False, complete=False)
    problem = validate.data_problem(partial, modules=_all_modules())
    assert problem is not None
    assert "admin-status" in problem


def test_a_reply_without_data_and_text_that_is_not_xml_fail(validator: Any) -> None:
    assert "no <data>" in str(_fails(validator.validate_xml, f'<rpc-reply xmlns="{NC}"><ok/>'
                                                             "</rpc-reply>", config_only=True))
    assert "not XML" in str(_fails(validator.validate_xml, "<native>", config_only=True))
    validator.validate_xml(f'<data xmlns="{NC}"/>', config_only=True)  # empty data are valid


def test_a_module_that_is_not_vendored_is_a_schema_error() -> None:
    with pytest.raises(validate.YangSchemaError, match="no-such-module"):
        validate.YangValidator(["no-such-module"])
