"""mgmtbench: how fast SSH and HTTPS management transports get commands into network devices.

The package's folders are the product's parts: ``emulator`` (the device under test),
and, as they land, ``lab`` (the impaired network), ``clients`` (one adapter per library)
and ``results`` (loading and comparing saved runs).
"""

__version__ = "0.1.0"
