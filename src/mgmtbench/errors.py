"""mgmtbench's own errors: the whole tree, in one place.

Everything a caller of mgmtbench catches derives from :class:`MgmtbenchError`::

    MgmtbenchError
     +-- UsageError               the user asked for something that cannot be done (bad flag, port in use)
     |    +-- LabNeedsPrivileges  a lab network needs root (CAP_NET_ADMIN) and the process has none
     |    +-- DockerError         a docker command failed (no engine, no image, a refused run)
     |    +-- ResultsError        a results file cannot be used (not pytest-benchmark JSON, empty)
     +-- TranscriptError          a transcript folder or platform file is unusable
     +-- LabError                 the lab network could not be built or torn down (netlink, namespaces)
     +-- MissingLibrary           a client adapter's optional library is not installed
     +-- FleetWorkerError         a fleet worker process failed (the worker, not a session)
     +-- ClusterError             a Dask cluster could not be started or reached, or a shard failed
     +-- ClientError              a client library failed against a device
          +-- AuthenticationFailed    the device refused the credentials
          +-- ConnectionFailed        no connection, or the connection broke
          +-- ClientTimeout           the device did not answer in time
          +-- WrongOutput             the device answered something other than expected

Messages are one sentence saying what is wrong and what to do; the CLI prints them without a
traceback.
"""


class MgmtbenchError(Exception):
    """Base class of every error mgmtbench raises on purpose."""


class UsageError(MgmtbenchError):
    """The user asked for something that cannot be done as asked."""


class LabNeedsPrivileges(UsageError):
    """The profile needs a lab network (namespaces, an impaired link) and the process lacks
    CAP_NET_ADMIN: tests skip, saying so; the CLI says what to run instead."""


class DockerError(UsageError):
    """A docker command failed."""


class ResultsError(UsageError):
    """A results file cannot be used (not pytest-benchmark JSON, empty, unreadable)."""


class TranscriptError(MgmtbenchError):
    """A transcript folder, file or platform description cannot be used."""


class LabError(MgmtbenchError):
    """The lab network could not be built, used or removed (a netlink or namespace failure)."""


class MissingLibrary(MgmtbenchError):
    """An adapter's optional library is not installed."""


class FleetWorkerError(MgmtbenchError):
    """The worker process failed (not a session: the worker itself)."""


class ClusterError(MgmtbenchError):
    """A Dask cluster for a distributed fleet could not be started or reached, or one of its
    shards failed (its own message says which and why)."""


class ClientError(MgmtbenchError):
    """A client library failed to connect, authenticate or run a command."""


class AuthenticationFailed(ClientError):
    """The device refused the client's credentials (password, key or agent key)."""


class ConnectionFailed(ClientError):
    """The client could not connect to the device, or the connection broke."""


class ClientTimeout(ClientError):
    """The device did not answer within the client's time-out."""


class WrongOutput(ClientError):
    """The device's answer is not what the command must print (prompt, echo or output)."""
