"""The device's YANG data: the published modules it ships (``modules/``), its state as the
models write it, read from and written back to the same state its CLI shows."""
