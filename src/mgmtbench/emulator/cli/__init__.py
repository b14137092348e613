"""The device's CLI: the command engine (:mod:`.engine`: one session, its modes, what each typed
line prints; :mod:`.session`: a session with its platform's commands), the command and
configuration grammars, help, output filters, and the command sets a platform picks (file
commands, ``configure replace``, :mod:`.dialects`).

Transports carry it (:mod:`..ssh`, :mod:`..https`); it works on the device's state
(:mod:`..device`).
"""
