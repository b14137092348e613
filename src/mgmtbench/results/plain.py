"""Plain English for the report's sentences."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, noun: str) -> str:
    """``"1 command"``, ``"5 commands"``, ``"1,200 benchmarks"``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")
