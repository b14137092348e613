"""The fixtures, options and tables come from mgmtbench's own pytest plugin
(``mgmtbench.testing``, entry point ``pytest11: mgmtbench``), as they would in a user's repository.
``pytester`` runs the README's example benchmark in a fresh directory (tests/test_plugin.py)."""

pytest_plugins = ["pytester"]
