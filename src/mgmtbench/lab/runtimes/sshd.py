"""The ``sshd`` runtime: a real OpenSSH ``sshd`` per device in the lab's namespace, so the same
benchmarks that time the emulator time the real server behind the same impaired link.

Each device is one ``sshd`` listening on the device's address (on the lab namespace's loopback,
like the ``netns`` runtime), port 22. Its ``ForceCommand`` is a generated shell script
(:func:`device_script`) that answers every transcript command of the platform (at its full
words, any spacing) with exactly the text the emulator prints (the oracle,
:func:`~mgmtbench.emulator.oracle.expected_output`); several commands on separate lines (a batch)
run in order, exit status 0 if every one was known, 1 otherwise, as on the emulator. Anything else
gets the platform's invalid-input error with the caret under the first word: the emulator's
grammar is not in the script, so abbreviations (``sh ver``), ``terminal ...`` and configuration
answer that way here. Beside the CLI it runs what the emulator runs for bulk transfer with
OpenSSH's own programs: the exec sink and source (:mod:`mgmtbench.emulator.ssh.bulk`), legacy SCP and
the SFTP subsystem, in the device's file folder (where the platform's file system name,
``flash:``, links to the folder itself).

What does not run here, in one sentence each (:meth:`SshdRuntime.unsupported`): HTTPS (OpenSSH
has none) and the SSH shell modes (a PTY on ``sshd`` is a Unix login, not the device's CLI: its
prompt, echo and paging are the emulator's, and a script that faked them would time a shell's
start-up, not the device).

Login: the lab's user (``Credentials.username``) does not exist on this machine, and no account
is added to it. The lab's ``sshd`` processes run in a mount namespace of their own (``unshare``),
where ``/etc/passwd`` and ``/etc/shadow`` are bind-mounted copies that add that user, with the
lab's password (SHA-512 crypt) and an unused uid: ``sshd`` (run as root, ``UsePAM no``) then
checks passwords and the lab's ``authorized_keys`` as it would for any account, so every client
logs in exactly as it does on the emulator. Sessions run as that uid, never as root. The one
thing the emulator offers that this cannot is keyboard-interactive login (it needs PAM).

Processes: one ``unshare --pid --mount --kill-child`` per lab, entered in the lab's namespace and
recorded in the lab's state before anything starts; inside it a shell, the PID namespace's init,
starts every device's ``sshd``. Killing that init kills every ``sshd``, connection and command
in the namespace (the kernel does it); killing ``unshare`` (what the stale-lab clean-up does
after a SIGKILL of the lab's owner) kills the init. Nothing of the lab's ``sshd`` outlives it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device, DeviceFacts
from mgmtbench.emulator.device.transcripts import load_platform
from mgmtbench.emulator.options import AUTH_METHODS, Algorithms, Credentials, SshServerOptions
from mgmtbench.emulator.oracle import expected_output
from mgmtbench.emulator.ssh.bulk import MAX_SOURCE_BYTES, SINK_COMMAND
from mgmtbench.errors import UsageError
from mgmtbench.lab.facts import RuntimeFacts
from mgmtbench.lab.processes import spawn
from mgmtbench.lab.procfs import PROC
from mgmtbench.lab.runtimes.base import DeviceRuntime, DeviceSpec, RuntimeContext, RuntimeOptions
from mgmtbench.lab.runtimes.netns import stop_processes
from mgmtbench.targets.base import Service

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
#: Where distributions put OpenSSH's SFTP server program (Debian first).
SFTP_SERVERS = ("/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server",
                "/usr/libexec/sftp-server", "/usr/lib/ssh/sftp-server")
#: ssh-keygen arguments per host key type (the emulator's names).
HOST_KEYS = {"ed25519": ["-t", "ed25519"], "ecdsa": ["-t", "ecdsa", "-b", "256"],
             "rsa": ["-t", "rsa", "-b", "3072"]}
#: The lab user's uid is the first one from here that no account of this machine has.
FIRST_UID = 64000
_USERNAME = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$")
_BLANKS = " \t\r"  # what separates words on the emulator (str.split) within one line
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp


#: The ``case "$SSH_ORIGINAL_COMMAND" in`` branch (sh) that runs legacy SCP with OpenSSH's
#: ``scp``: its own quoting needs a shell (libssh2's scp_send/scp_recv single-quote the path:
#: plain word splitting would keep the quotes in the name); nothing else of the shell's syntax
#: gets through.
SCP_CASE = [
    "  'scp -'*)",
    "    nl='\n'",
    "    case \"$SSH_ORIGINAL_COMMAND\" in *\"$nl\"*|*[\\;\\&\\|\\`\\$\\<\\>\\(\\)]*)",
    "      echo '% Invalid input'; exit 1 ;; esac",
    "    exec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\" ;;",
]


class SshdRuntime(DeviceRuntime):
    """A real OpenSSH ``sshd`` per device, in the lab's namespace."""
    name = "sshd"
    devices_in_lab_namespace = True

    def __init__(self, ready_timeout: float = 30) -> None:
        self.ready_timeout = ready_timeout
        self._launcher: subprocess.Popen[bytes] | None = None
        self._folder: Path | None = None
        self._version: str | None = None

    @classmethod
    def from_options(cls, options: RuntimeOptions) -> SshdRuntime:
        """The runtime; refuses emulator processes (the netns runtime's)."""
        if options.processes != 1:
            raise UsageError("emulator processes apply to the netns runtime: the sshd runtime "
                             "runs one sshd per device")
        return cls()  # the image (docker's) does not apply: always set, as for netns

    @classmethod
    def unavailable(cls) -> str | None:
        """Why sshd devices cannot run here (no sshd, no unshare, not root), None if they can."""
        if not os.access(SSHD, os.X_OK):
            return f"{SSHD} not found: install openssh-server"
        if shutil.which("unshare") is None or shutil.which("mount") is None:
            return "unshare and mount are needed: install util-linux and mount"
        if os.geteuid() != 0:
            return "sshd must run as root to log the lab's user in: run as root"
        return None

    @classmethod
    def check_ssh(cls, options: SshServerOptions) -> None:
        """Nothing here: OpenSSH's names are not the emulator's, and ``sshd -t`` checks them
        (with the rest of the configuration) before any device starts."""

    @classmethod
    def unsupported(cls, service: Service) -> str | None:
        """HTTPS, HTTP/3, NETCONF, gNMI and the SSH shell are not served (see the module docstring)."""
        if service is Service.HTTPS:
            return ("device runtime sshd serves SSH only (OpenSSH has no HTTPS API): HTTPS modes "
                    "run on the netns or docker runtime")
        if service is Service.HTTP3:
            return ("device runtime sshd serves SSH only (OpenSSH has no HTTP/3 API): HTTP/3 "
                    "modes run on the netns or docker runtime")
        if service is Service.NETCONF:
            return ("device runtime sshd serves SSH only (OpenSSH has no NETCONF server): "
                    "NETCONF modes run on the netns or docker runtime")
        if service is Service.GNMI:
            return ("device runtime sshd serves SSH only (OpenSSH has no gNMI server): "
                    "gNMI modes run on the netns or docker runtime")
        if service is Service.SSH_SHELL:
            return ("device runtime sshd: a PTY shell on sshd is a Unix login, not the device's "
                    "CLI (prompt, echo, paging): PTY modes run on the netns or docker runtime")
        return None

    # --- DeviceRuntime ----------------------------------------------------------------------

    def start(self, context: RuntimeContext) -> None:
        """Write every device's files, start their ``sshd`` and return when all listen."""
        self._folder = folder = context.folder / "sshd"
        methods = _login_methods(context)
        _make_dir(folder)
        uid = _free_uid()
        home = _make_dir(folder / "home", owner=uid)
        _write_accounts(folder, context.credentials, uid, home)
        keys = folder / "authorized_keys"
        if context.credentials.authorized_keys is not None:
            shutil.copyfile(context.credentials.authorized_keys, keys)
            keys.chmod(0o644)
        style = load_platform(context.platform).style
        host_key = _host_key(folder, context.ssh.host_key_type or style.identity.ssh.host_key)
        sftp_server = next((p for p in SFTP_SERVERS if os.access(p, os.X_OK)), None)
        device_folders = []
        for index, device in enumerate(context.devices):
            device_folder = _make_dir(folder / f"device-{index:03d}")
            files = _make_dir(device_folder / "files", owner=uid)
            (files / style.file_system).symlink_to(".")  # flash:/name is the folder's name
            script = device_folder / "device.sh"
            script.write_text(device_script(context.platform, device, device_folder / "outputs",
                                            files, sftp_server))
            script.chmod(0o755)
            (device_folder / "sshd_config").write_text(sshd_config(
                device.address, context.ssh_port, host_key, keys, context.credentials.username,
                script, methods, context.ssh.algorithms, sftp_server))
            device_folders.append(device_folder)
        _check_config(device_folders[0] / "sshd_config")
        _check_reachable(folder)
        self._launcher = _launch(context, folder, device_folders)
        self._wait_listening(context, device_folders)
        public = " ".join(host_key.with_suffix(".pub").read_text().split()[:2])
        self.known_hosts.write_text("".join(f"{d.address} {public}\n" for d in context.devices))
        self.ca_file.write_text("")  # no device serves HTTPS
        self._version = server_version(context.devices[0].address, context.ssh_port)

    def stop(self) -> None:
        """Kill the PID namespace's init (the kernel kills every ``sshd`` and session in it),
        then reap ``unshare``."""
        launcher, self._launcher = self._launcher, None
        if launcher is None:
            return
        for init in _children(launcher.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(init, signal.SIGKILL)
        try:
            launcher.wait(timeout=10)
        except subprocess.TimeoutExpired:
            stop_processes([launcher])

    def device_pids(self) -> list[int]:
        """Every device's ``sshd`` listener (its connections are its children)."""
        if self._launcher is None or self._launcher.poll() is not None:
            return []
        return [pid for init in _children(self._launcher.pid) for pid in _children(init)]

    def failure(self) -> str | None:
        """A device whose ``sshd`` is gone (the launcher itself is in the lab's records)."""
        if self._launcher is None or self._launcher.poll() is not None or self._folder is None:
            return None
        listening, devices = len(self.device_pids()), len(list(self._folder.glob("device-*")))
        if listening >= devices:
            return None
        return (f"sshd of {devices - listening} of {devices} device(s) is gone (see "
                f"{self._folder}/device-*/sshd.log)")

    @property
    def ca_file(self) -> Path:
        """An empty file: no device serves HTTPS."""
        assert self._folder is not None, "the runtime is not started"
        return self._folder / "no-https.pem"

    @property
    def known_hosts(self) -> Path:
        """Every device's address with the lab's host key (one key for every device)."""
        assert self._folder is not None, "the runtime is not started"
        return self._folder / "known_hosts"

    def facts(self) -> RuntimeFacts:
        """The runtime, and as its image the version the devices announce
        (``OpenSSH_9.2p1 Debian-2+deb12u10``)."""
        return RuntimeFacts(self.name, image=self._version)

    # --- internals --------------------------------------------------------------------------

    def _wait_listening(self, context: RuntimeContext, folders: list[Path]) -> None:
        assert self._launcher is not None
        waiting = {_tcp_key(d.address, context.ssh_port): (d, f)
                   for d, f in zip(context.devices, folders, strict=True)}
        timeout = self.ready_timeout + 0.5 * len(waiting)  # each sshd reads its keys and config
        deadline = time.monotonic() + timeout
        while waiting:
            for key in _listening(self._launcher.pid) & waiting.keys():
                del waiting[key]
            failed = next(((d, f) for d, f in waiting.values() if _last_line(f / "sshd.log")),
                          None)
            launcher_gone = self._launcher.poll() is not None
            if failed is not None or launcher_gone:
                device, device_folder = failed or next(iter(waiting.values()))
                why = (_last_line(device_folder / "sshd.log")
                       or _last_line(context.folder / "sshd" / "launcher.log")
                       or f"exit {self._launcher.returncode}")
                raise UsageError(f"the lab's sshd for {device.hostname} did not start: {why}")
            if time.monotonic() > deadline:
                device = next(iter(waiting.values()))[0]
                raise UsageError(f"the lab's sshd for {device.hostname} did not listen on "
                                 f"{device.address}:{context.ssh_port} within {timeout:.0f} s")
            if waiting:
                time.sleep(0.02)


# --- what each device's sshd is given ---------------------------------------------------------


def device_script(platform: str, device: DeviceSpec, outputs: Path, files: Path,
                  sftp_server: str | None) -> str:
    """The ``ForceCommand`` script of ``device``: bulk-transfer requests first, then each line of
    the request as the CLI answers it (see the module docstring). Writes the outputs it ``cat``s
    into ``outputs``."""
    q = shlex.quote
    outputs.mkdir(exist_ok=True)
    outputs.chmod(0o755)
    cases = []
    for index, words in enumerate(load_platform(platform).transcripts):
        command = " ".join(words)
        text = expected_output(platform, device.hostname, device.address, [command])
        (outputs / str(index)).write_bytes(text.encode("ascii", "replace"))
        (outputs / str(index)).chmod(0o644)  # read by the lab's user, whatever the umask
        cases.append(f"    {q(command)}) files=$files$nl{q(str(outputs / str(index)))} ;;")
    limit = MAX_SOURCE_BYTES
    bulk = [
        f"  {q(SINK_COMMAND)}) exec cat > /dev/null ;;",
        "  'head -c '*' /dev/zero')",
        "    n=${SSH_ORIGINAL_COMMAND#head -c }; n=${n% /dev/zero}",
        '    case "$n" in',
        "      ''|*[!0-9]*) ;;  # not a byte count: the CLI answers it below",
        f'      *) if [ ${{#n}} -le 10 ] && [ "$n" -le {limit} ]; then exec head -c "$n" /dev/zero',
        "         fi",
        f'         echo "head: $n bytes: the source\'s limit is {limit} bytes" >&2; exit 1 ;;',
        "    esac ;;",
        *SCP_CASE,
    ]
    if sftp_server:
        bulk.append(f"  {q(sftp_server)}) exec {q(sftp_server)} ;;")
    invalid_format, invalid_args = _invalid_printf(platform, device)
    return "\n".join([
        "#!/bin/sh",
        f"# {device.hostname} ({platform}) on {device.address}: mgmtbench's sshd device runtime.",
        # A shell request (no command at all): not served, see unsupported().
        'if [ -z "${SSH_ORIGINAL_COMMAND+set}" ]; then',
        "  echo 'this device serves exec requests only (sshd device runtime)' >&2; exit 1",
        "fi",
        f"cd {q(str(files))} || exit 1",
        'case "$SSH_ORIGINAL_COMMAND" in',
        *bulk,
        "esac",
        "set -f",
        "nl='\n'",
        f"blanks={q(_BLANKS)}",
        "files= status=0",
        # Outputs of known commands are collected and printed by one cat, in order.
        'flush() { if [ -n "$files" ]; then IFS=$nl; cat $files; files=; fi; }',
        "IFS=$nl",
        "for line in $SSH_ORIGINAL_COMMAND; do",
        "  IFS=$blanks; set -- $line; key=$*; IFS=$nl",
        '  case "$key" in',
        "    '') ;;",
        *cases,
        "    *) flush",
        "       lead=${line%%[!$blanks]*}",
        f"       printf {q(invalid_format)} {invalid_args}",
        "       status=1 ;;",
        "  esac",
        "done",
        "flush",
        "exit $status",
        "",
    ])


def _invalid_printf(platform: str, device: DeviceSpec) -> tuple[str, str]:
    """A printf format and its arguments that print the platform's invalid-input error for a
    line whose first word is unknown (the caret under it: after the prompt and ``$lead``)."""
    style = load_platform(platform).style
    facts = DeviceFacts.for_hostname(device.hostname, mgmt_ip=device.address,
                                     form=style.identity.facts)
    width = len(CliSession(Device(load_platform(platform), facts, enable_secret="-"),
                           mode=Mode.PRIV).prompt)
    pieces, args = [], []
    for part in re.split(r"(\{caret\}|\{command\})", style.invalid):
        if part == "{caret}":
            pieces.append("%*s^")
            args += [f'$(({width} + ${{#lead}}))', "''"]
        elif part == "{command}":
            pieces.append("%s")
            args.append('"$line"')
        else:
            pieces.append(part.replace("\\", "\\\\").replace("%", "%%"))
    return "".join(pieces), " ".join(args)


def sshd_config(address: str, port: int, host_key: Path, authorized_keys: Path, user: str,
                script: Path, methods: Sequence[str], algorithms: Algorithms,
                sftp_server: str | None) -> str:
    """One device's ``sshd_config``: its address, the lab's user only, ``methods`` of login,
    ``script`` for every request, nothing forwarded, the algorithm lists given."""
    lines = [
        f"ListenAddress {address}", f"Port {port}", f"HostKey {host_key}",
        f"AllowUsers {user}", "PermitRootLogin no", "UsePAM no", "StrictModes no",
        f"PasswordAuthentication {_yes('password' in methods)}",
        f"PubkeyAuthentication {_yes('publickey' in methods)}",
        f"AuthorizedKeysFile {authorized_keys if 'publickey' in methods else 'none'}",
        "KbdInteractiveAuthentication no", "PermitEmptyPasswords no",
        f"ForceCommand {script}",
        "AllowTcpForwarding no", "AllowAgentForwarding no", "AllowStreamLocalForwarding no",
        "X11Forwarding no", "PermitTunnel no", "PermitUserRC no", "PrintMotd no",
        "Compression no", "PidFile none", "LogLevel ERROR", "LoginGraceTime 120",
        # As many connections and channels as the emulator takes: pipelined commands are
        # concurrent channels, and concurrency experiments open many connections at once.
        "MaxStartups 1000", "MaxSessions 1000",
    ]
    if sftp_server:
        # The subsystem's command reaches the ForceCommand script as SSH_ORIGINAL_COMMAND.
        lines.append(f"Subsystem sftp {sftp_server}")
    for keyword, names in (("KexAlgorithms", algorithms.kex), ("Ciphers", algorithms.ciphers),
                           ("MACs", algorithms.macs),
                           ("HostKeyAlgorithms", algorithms.host_key_algs)):
        if names:
            lines.append(f"{keyword} {','.join(names)}")
    return "\n".join(lines) + "\n"


def server_version(address: str, port: int, attempts: int = 3) -> str:
    """What the server at ``address`` announces (``OpenSSH_9.2p1 Debian-2+deb12u10``), read
    through the lab's link."""
    failure: OSError | None = None
    for _ in range(attempts):  # a lossy profile may drop the first tries
        try:
            with socket.create_connection((address, port), timeout=5) as sock:
                banner = sock.makefile("rb").readline(256).decode("ascii", "replace")
            return banner.strip().removeprefix("SSH-2.0-")
        except OSError as exc:
            failure = exc
    raise UsageError(f"the lab's sshd on {address}:{port} does not answer through the link: "
                     f"{failure}")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _login_methods(context: RuntimeContext) -> list[str]:
    """The login methods the devices offer: the lab's, as far as the credentials allow."""
    wanted = context.ssh.auth_methods
    if "keyboard-interactive" in wanted and wanted != AUTH_METHODS:
        raise UsageError("device runtime sshd cannot offer keyboard-interactive login (sshd "
                         "runs without PAM here): choose password and/or publickey")
    creds = context.credentials
    methods: list[str] = [m for m in ("password", "publickey") if m in wanted]
    if not creds.password:
        methods = [m for m in methods if m != "password"]
    if creds.authorized_keys is None:
        methods = [m for m in methods if m != "publickey"]
    if not methods:
        raise UsageError("device runtime sshd: no login method left (a password or authorized "
                         "keys, and password or publickey among the login methods)")
    return methods


# --- the lab's user, in the sshd processes' own view of /etc ----------------------------------


def _write_accounts(folder: Path, creds: Credentials, uid: int, home: Path) -> None:
    """``passwd`` (this machine's accounts and the lab's user) and ``shadow`` (the lab's user
    only) for the ``sshd`` mount namespace."""
    user = creds.username
    if not _USERNAME.match(user):
        raise UsageError(f"device runtime sshd: {user!r} cannot be an account name (lowercase "
                         "letters, digits, '_', '-', '.')")
    with contextlib.suppress(KeyError):
        pwd.getpwnam(user)
        raise UsageError(f"device runtime sshd: {user!r} is an account of this machine; the "
                         "lab's user must be a name of its own (the lab adds it for its sshd only)")
    passwd = Path("/etc/passwd").read_text()
    if passwd and not passwd.endswith("\n"):
        passwd += "\n"
    (folder / "passwd").write_text(
        f"{passwd}{user}:x:{uid}:{uid}:mgmtbench lab device user:{home}:/bin/sh\n")
    (folder / "passwd").chmod(0o644)
    shadow = folder / "shadow"
    shadow.touch(mode=0o600)
    hashed = _crypt(creds.password) if creds.password else "!"
    shadow.write_text(f"{user}:{hashed}:::::::\n")


def _crypt(password: str) -> str:
    """``password`` as SHA-512 crypt, by the C library ``sshd`` checks it with."""
    name = ctypes.util.find_library("crypt") or "libcrypt.so.1"
    try:
        libcrypt = ctypes.CDLL(name)
    except OSError:
        raise UsageError("device runtime sshd: libcrypt not found (it comes with sshd: install "
                         "openssh-server)") from None
    libcrypt.crypt.restype = ctypes.c_char_p
    libcrypt.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    alphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    salt = "$6$" + "".join(secrets.choice(alphabet) for _ in range(16)) + "$"
    hashed = libcrypt.crypt(password.encode(), salt.encode())
    if not hashed or not hashed.startswith(b"$6$"):
        raise UsageError("device runtime sshd: the C library could not hash the lab's password")
    return str(hashed.decode("ascii"))


def _free_uid() -> int:
    uid = FIRST_UID
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid += 1


# --- files and processes ----------------------------------------------------------------------


def _make_dir(path: Path, owner: int | None = None) -> Path:
    """A folder the lab's user may enter (and own, with ``owner``)."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o755)
    if owner is not None:
        os.chown(path, owner, owner)
    return path


def _check_reachable(folder: Path) -> None:
    """The lab's user must be able to reach the scripts: every folder above must let others in."""
    for parent in [folder, *folder.parents]:
        if not parent.stat().st_mode & 0o001:
            raise UsageError(f"device runtime sshd: the lab's user cannot enter {parent} (a umask "
                             f"such as 077 made it): `chmod o+x {parent}`, or use umask 022")


def _host_key(folder: Path, key_type: str) -> Path:
    if key_type not in HOST_KEYS:
        raise UsageError(f"host key type {key_type!r}: choose one of {', '.join(HOST_KEYS)}")
    path = folder / f"ssh_host_{key_type}_key"
    subprocess.run(["ssh-keygen", "-q", *HOST_KEYS[key_type], "-N", "", "-C", "mgmtbench-lab",
                    "-f", str(path)], check=True, capture_output=True)
    return path


def _check_config(config: Path) -> None:
    """``sshd -t``: a bad algorithm name is one sentence, before anything starts."""
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation folder
    check = subprocess.run([SSHD, "-t", "-f", str(config)], capture_output=True, text=True)
    if check.returncode:
        lines = check.stderr.strip().splitlines()
        raise UsageError(f"sshd refuses the lab's configuration: "
                         f"{lines[-1] if lines else 'exit ' + str(check.returncode)}")


#: The PID namespace's init: mount the lab's passwd and shadow, start every device's sshd (each
#: with its folder's config and log), wait for them.
_INIT = """
mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/shadow || exit 1
sshd=$3; shift 3
for folder in "$@"; do
  "$sshd" -D -e -f "$folder/sshd_config" 2>>"$folder/sshd.log" &
done
wait
"""


def _launch(context: RuntimeContext, folder: Path,
            devices: list[Path]) -> subprocess.Popen[bytes]:
    """Start the lab's sshd processes in its namespace (pid recorded in the lab's state first)."""
    argv = [sys.executable, "-m", "mgmtbench.lab.nsexec", context.netns,
            "unshare", "--mount", "--propagation", "private", "--pid", "--kill-child", "--",
            "/bin/sh", "-c", _INIT, "mgmtbench-sshd-init",
            str(folder / "passwd"), str(folder / "shadow"), SSHD, *map(str, devices)]
    with (folder / "launcher.log").open("wb") as log:
        process: subprocess.Popen[bytes] = spawn(
            context.state.lab_id, "sshd launcher", argv, log=folder / "launcher.log",
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    return process


def _children(pid: int) -> list[int]:
    """The direct children of ``pid`` (none if it is gone)."""
    try:
        return [int(c) for c in (PROC / str(pid) / "task" / str(pid) / "children")
                .read_text().split()]
    except (OSError, ValueError):
        return []


def _tcp_key(address: str, port: int) -> str:
    """How ``/proc/net/tcp`` writes an IPv4 address and port (``0100A8C6:0016``)."""
    packed = socket.inet_aton(address)
    return f"{int.from_bytes(packed, 'little'):08X}:{port:04X}"


def _listening(pid: int) -> set[str]:
    """The listening TCP sockets of ``pid``'s network namespace (``/proc/PID/net/tcp`` keys)."""
    try:
        lines = (PROC / str(pid) / "net" / "tcp").read_text().splitlines()[1:]
    except OSError:
        return set()
    return {fields[1] for fields in (line.split() for line in lines)
            if len(fields) > 3 and fields[3] == _LISTEN}


def _last_line(path: Path) -> str:
    with contextlib.suppress(OSError):
        lines = path.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""
    return ""

