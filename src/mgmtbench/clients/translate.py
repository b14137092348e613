"""One way for every adapter to turn a library's exceptions into mgmtbench's own.

Each library package declares a mapping from its library's exception types to
:class:`~mgmtbench.errors.ClientError` subclasses (like httpx's ``HTTPCORE_EXC_MAP``), and wraps
every call into the library in :func:`translate_errors`::

    ERRORS = {paramiko.AuthenticationException: AuthenticationFailed,
              paramiko.SSHException: ClientError, OSError: ConnectionFailed,
              TimeoutError: ClientTimeout}

    with translate_errors("paramiko", ERRORS):
        client.connect(...)

The most specific matching type wins (``TimeoutError`` over ``OSError``), whatever the order of
the mapping; a library whose exception types say too little (Netmiko reports a refused connection
as a time-out) passes ``classify``, asked first. The message is ``"<client>: <the library's own
text>"`` on one line; the library's exception is the ``__cause__``. A :class:`ClientError` raised
inside passes unchanged, and so does an exception the mapping does not name (a bug, not a device
failure). The same object works as ``with`` and ``async with``.

A library that may be missing (imported as None then) declares its mapping with
:func:`optional_errors`: the base entries always, its own exception types when it is there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import TracebackType

from mgmtbench.errors import ClientError

__all__ = ["ErrorMap", "Translator", "first_line", "optional_errors", "translate_errors"]

ErrorMap = Mapping[type[BaseException], type[ClientError]]
Describe = Callable[[BaseException], str]
Classify = Callable[[BaseException], "type[ClientError] | None"]


def first_line(exc: BaseException) -> str:
    """The exception's own text, its first non-blank line (or its type's name)."""
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__


def optional_errors(base: ErrorMap, library: object | None,
                    library_errors: Callable[[], ErrorMap]) -> ErrorMap:
    """``base``, and the optional ``library``'s own entries, ``library_errors()``, when it was
    imported (is not None): they are asked for only then, as they name the library's types."""
    if library is None:
        return base
    return {**base, **library_errors()}


def mapped(exc: BaseException, mapping: ErrorMap) -> type[ClientError] | None:
    """The mgmtbench error for ``exc``: the entry of the most specific matching type."""
    best: type[BaseException] | None = None
    for library_type in mapping:
        if isinstance(exc, library_type) and (best is None or issubclass(library_type, best)):
            best = library_type
    return mapping[best] if best is not None else None


class Translator:
    """The context manager :func:`translate_errors` returns (sync and async)."""

    def __init__(self, client: str, mapping: ErrorMap, describe: Describe = first_line,
                 classify: Classify | None = None) -> None:
        self.client, self.mapping, self.describe = client, mapping, describe
        self.classify = classify

    def __enter__(self) -> Translator:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None or isinstance(exc, ClientError):
            return
        error = self.classify(exc) if self.classify is not None else None
        if error is None:
            error = mapped(exc, self.mapping)
        if error is not None:
            raise error(f"{self.client}: {self.describe(exc)}") from exc

    async def __aenter__(self) -> Translator:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.__exit__(kind, exc, tb)


def translate_errors(client: str, mapping: ErrorMap, describe: Describe = first_line,
                     classify: Classify | None = None) -> Translator:
    """A ``with`` / ``async with`` block in which ``mapping``'s library errors become
    ``mapping``'s :class:`ClientError` subclasses, named after ``client``.

    ``describe`` makes the one-line message from the library's exception; ``classify`` may pick
    the error for an exception before the mapping does (None: let the mapping decide).
    """
    return Translator(client, mapping, describe, classify)
