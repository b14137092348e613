"""The families of YANG models a device writes its data in, one module each
(:class:`~.base.Family`)."""
