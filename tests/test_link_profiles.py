"""The built-in link profiles: the RTT ladder (``BUILTIN``, what ``--profiles all`` runs) and the
regional link with loss or jitter (``IMPAIRED``), resolved by name like any other."""

from __future__ import annotations

import pytest

from mgmtbench.errors import UsageError
from mgmtbench.lab.profiles import BUILTIN, IMPAIRED, resolve


@pytest.mark.parametrize(("name", "loss", "jitter"), [
    ("regional-loss0.5", 0.5, 0.0), ("regional-loss2", 2.0, 0.0), ("regional-jitter", 0.0, 3.0)])
def test_the_impaired_regional_profiles(name: str, loss: float, jitter: float) -> None:
    profile = resolve(name)
    assert (profile.name, profile.rtt_ms, profile.loss_pct, profile.jitter_ms) == (
        name, BUILTIN["regional"].rtt_ms, loss, jitter)
    assert profile.validate() is profile
    assert profile.source == "built-in"


def test_the_rtt_ladder_has_no_loss_and_is_apart() -> None:
    assert not set(BUILTIN) & set(IMPAIRED)
    assert all(not p.loss_pct and not p.jitter_ms for p in BUILTIN.values())


def test_an_impaired_profile_takes_overrides() -> None:
    profile = resolve("regional-loss2+cc=bbr")
    assert (profile.loss_pct, profile.device_cc, profile.name) == (2.0, "bbr", "regional-loss2+cc=bbr")


def test_an_unknown_name_lists_them() -> None:
    with pytest.raises(UsageError, match=r"regional-loss0\.5"):
        resolve("regional-loss9")
