"""Credentials for inventory hosts: from the inventory, the environment, a prompt, a key file or
the ssh-agent. Never written anywhere: results, logs and ``inventory check`` output carry none
(:class:`~mgmtbench.targets.Target` leaves them out of its ``repr`` too).

Per host, first found wins:

- user name: the inventory's, else ``MGMTBENCH_USERNAME``;
- password: the inventory's (Nornir, Ansible; the native TOML names an environment variable),
  else ``MGMTBENCH_PASSWORD``, else a prompt when one is allowed (``--ask-password``; asked once
  per user name);
- enable secret: the inventory's, else ``MGMTBENCH_ENABLE_SECRET``, else the password;
- key file: the inventory's, else ``MGMTBENCH_KEY_FILE``;
- how SSH logs in (:class:`~mgmtbench.targets.Auth`): the inventory's ``auth``, else
  ``MGMTBENCH_AUTH``, else ``key`` with a key file, ``password`` with a password, ``agent`` with
  ``SSH_AUTH_SOCK`` set, in that order. ``agent`` uses the agent at ``SSH_AUTH_SOCK``.

Whatever is missing for the chosen way is one line (:class:`~mgmtbench.errors.UsageError`)
naming the host and what to set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mgmtbench.errors import UsageError
from mgmtbench.targets.base import Auth, Login

if TYPE_CHECKING:  # the inventory package imports this module
    from mgmtbench.targets.inventory.base import HostEntry

USERNAME, PASSWORD, ENABLE_SECRET = "MGMTBENCH_USERNAME", "MGMTBENCH_PASSWORD", \
    "MGMTBENCH_ENABLE_SECRET"
KEY_FILE, AUTH, AGENT = "MGMTBENCH_KEY_FILE", "MGMTBENCH_AUTH", "SSH_AUTH_SOCK"
#: The environment variables read, for help texts.
VARIABLES = (USERNAME, PASSWORD, ENABLE_SECRET, KEY_FILE, AUTH, AGENT)

Prompt = Callable[[str], str]


@dataclass
class CredentialSource:
    """Where credentials come from beyond the inventory: ``env`` (the environment) and, when
    allowed, ``prompt`` (``getpass.getpass`` in the CLI)."""

    env: Mapping[str, str]
    prompt: Prompt | None = None
    _asked: dict[str, str] = field(default_factory=dict, repr=False)

    def login(self, host: HostEntry) -> Login:
        """The :class:`~mgmtbench.targets.Login` for ``host``."""
        username = host.username or self.env.get(USERNAME)
        if not username:
            raise UsageError(f"host {host.name}: no user name: set username in the inventory or "
                             f"export {USERNAME}")
        key_file = host.key_file or (Path(self.env[KEY_FILE]).expanduser()
                                     if self.env.get(KEY_FILE) else None)
        password = host.password if host.password is not None else self.env.get(PASSWORD)
        auth = self._auth(host, key_file=key_file, password=password)
        if auth is Auth.PASSWORD and password is None:
            password = self._ask(host, username)
        if auth is Auth.KEY:
            if key_file is None:
                raise UsageError(f"host {host.name}: auth 'key' needs a key file: set key_file in "
                                 f"the inventory or export {KEY_FILE}")
            if not key_file.is_file():
                raise UsageError(f"host {host.name}: key file {key_file} does not exist")
        agent = None
        if auth is Auth.AGENT:
            if not self.env.get(AGENT):
                raise UsageError(f"host {host.name}: auth 'agent' needs a running ssh-agent: "
                                 f"{AGENT} is not set")
            agent = Path(self.env[AGENT])
        secret = host.enable_secret or self.env.get(ENABLE_SECRET) or password or ""
        return Login(username=username, password=password or "", enable_secret=secret,
                     key_file=key_file, auth=auth, agent_socket=agent)

    def _auth(self, host: HostEntry, *, key_file: Path | None, password: str | None) -> Auth:
        chosen = host.auth or self.env.get(AUTH)
        if chosen:
            try:
                return Auth(chosen.strip().lower())
            except ValueError:
                raise UsageError(f"host {host.name}: unknown auth {chosen!r}: choose "
                                 f"{', '.join(a.value for a in Auth)}") from None
        if key_file is not None:
            return Auth.KEY
        if password is not None or self.prompt is not None:
            return Auth.PASSWORD
        if self.env.get(AGENT):
            return Auth.AGENT
        raise UsageError(f"host {host.name}: no credentials: export {PASSWORD} (or use "
                         f"--ask-password), set key_file or {KEY_FILE}, or run an ssh-agent")

    def _ask(self, host: HostEntry, username: str) -> str:
        if username in self._asked:
            return self._asked[username]
        if self.prompt is None:
            raise UsageError(f"host {host.name}: no password: export {PASSWORD} or use "
                             "--ask-password")
        answer = self.prompt(f"Password for {username} (inventory hosts): ")
        self._asked[username] = answer
        return answer
