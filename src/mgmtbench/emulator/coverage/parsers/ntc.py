"""ntc-templates: the TextFSM template for the platform and command, if there is one."""

from __future__ import annotations

NAME = "ntc-templates"


def parses(platform: str, command: str, text: str) -> bool | None:
    """Whether the template parses ``text`` into at least one row (None: no template)."""
    from ntc_templates.parse import parse_output

    try:
        rows = parse_output(platform=platform, command=command, data=text)
    except Exception as exc:  # no template, or the template rejects the text
        return None if "No template found" in str(exc) or "No valid template" in str(exc) \
            else False
    return bool(rows)
