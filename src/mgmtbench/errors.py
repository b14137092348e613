"""mgmtbench's own errors.

Everything a caller of mgmtbench catches derives from :class:`MgmtbenchError`::

    MgmtbenchError
     +-- UsageError         the user asked for something that cannot be done (bad flag, port in use)
     +-- TranscriptError    a transcript folder or platform file is unusable

Messages are one sentence saying what is wrong and what to do; the CLI prints them without a
traceback.
"""


class MgmtbenchError(Exception):
    """Base class of every error mgmtbench raises on purpose."""


class UsageError(MgmtbenchError):
    """The user asked for something that cannot be done as asked."""


class TranscriptError(MgmtbenchError):
    """A transcript folder, file or platform description cannot be used."""
