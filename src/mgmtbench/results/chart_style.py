"""How the report's charts tell series apart: a colour per transport (the same in every chart),
and for lines a distinct colour, marker and dash per series, so no two lines of a chart look
alike however many there are."""

from __future__ import annotations

from typing import Any

__all__ = ["line_style", "transport_colour"]

#: Colour-blind-safe (Okabe-Ito, then Tol's muted) colours, in the order lines take them.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
           "#882255", "#999933", "#44AA99", "#AA4499", "#6699CC")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
DASHES = ("-", "--", "-.", ":")
_TRANSPORTS = {"ssh": "#0072B2", "https": "#E69F00", "netconf": "#009E73",
               "restconf": "#D55E00", "gnmi": "#CC79A7", "http3": "#56B4E9",
               "netconf (yang)": "#44AA99", "restconf (yang)": "#882255",
               "gnmi (yang)": "#AA4499"}


def transport_colour(label: str) -> str:
    """The colour of a transport (``"ssh"``, ``"netconf (yang)"`` ...) in every chart."""
    return _TRANSPORTS.get(label, _TRANSPORTS.get(label.split(" (", 1)[0], "#777777"))


def line_style(index: int) -> dict[str, Any]:
    """Matplotlib keywords for the ``index``-th line of a chart: colours first, then markers
    and dashes change, so the first dozen lines differ in colour and marker, and later ones in
    dash as well."""
    return {"color": PALETTE[index % len(PALETTE)], "marker": MARKERS[index % len(MARKERS)],
            "linestyle": DASHES[(index // len(PALETTE)) % len(DASHES)], "markersize": 5,
            "linewidth": 1.6}
