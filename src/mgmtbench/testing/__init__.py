"""mgmtbench's test harness, for the suite itself and for users' own benchmarks.

The pytest plugin (:mod:`.plugin`, entry point ``mgmtbench``) brings the options, the fixtures
(:mod:`.fixtures`: emulators, labs, targets, client keys, a real ``sshd`` device, a real
``ssh-agent``) and the end-of-run tables. The names here are what a benchmark imports::

    from mgmtbench.testing import Driver, record

- :class:`Driver` runs any client adapter (blocking or asyncio) the same way;
- :func:`record` puts the experiment, the lab's facts and the library versions into a result;
- :data:`USERNAME`, :data:`PASSWORD`, :data:`SECRET`: the credentials test devices are served with.
"""

from mgmtbench.testing.credentials import PASSWORD, SECRET, USERNAME, credentials
from mgmtbench.testing.driver import Driver, timing_info
from mgmtbench.testing.expectations import expected_digests
from mgmtbench.testing.keys import ClientKeys, make_key
from mgmtbench.testing.recording import record

__all__ = ["PASSWORD", "SECRET", "USERNAME", "ClientKeys", "Driver", "credentials",
           "expected_digests", "make_key", "record", "timing_info"]
