"""The settings an asyncssh user can change (:mod:`mgmtbench.clients.tuning`); imports nothing of
asyncssh.

What asyncssh already does as shipped, so is no knob here: it sets ``TCP_NODELAY`` on its TCP
connection itself (``SSHConnection.connection_made``), its default compression list starts with
``none``, and GSS key exchange is skipped when the ``gssapi`` module is missing. The adapter logs
in with the password only (``client_keys=None, agent_path=None``), as a user does who has one;
as shipped, asyncssh would also offer ``~/.ssh/id_*`` keys and the ``SSH_AUTH_SOCK`` agent's
before the password, a round trip per key refused. ``window`` (2 MiB) and ``max_pktsize``
(32 KiB) bound a channel's bulk transfer; a show command's output of a few kB never fills either.

No knob was measured to matter: asyncssh as shipped is its own tuned client, so there is no
``asyncssh+tuned``.
"""

from mgmtbench.clients.tuning import Knob

AES128_GCM = Knob(
    name="aes128-gcm",
    change='asyncssh.connect(host, ..., encryption_algs="^aes128-gcm@openssh.com")  # first',
    why=("asyncssh's default cipher is chacha20-poly1305 (asyncssh.encryption._enc_alg_list), "
         "which computes a Poly1305 key per packet; AES-GCM runs in OpenSSL with AES-NI (the "
         "IOS-like emulated device offers no chacha20, so as shipped aes256-gcm is "
         "negotiated). Measured: no change beyond noise, 5 commands, as shipped vs knob: local "
         "reuse-conn 14.9 vs 25.8 ms, fresh-conn 32.1 vs 53.4, pty-fresh 35.2 vs 36.4; "
         "regional reuse-conn 358.8 vs 361.8, fresh-conn 613.2 vs 571.1; on loopback, 100 "
         "execs on one connection, 1.97 vs 1.84 ms and 0.97 vs 1.06 ms of CPU each"),
    matters=False,
)

KEX_ORDER = Knob(
    name="kex-order",
    change=('asyncssh.connect(host, ...,\n'
            '                 kex_algs="^curve25519-sha256,ecdh-sha2-nistp256")  # first'),
    why=("asyncssh's default key exchange order (asyncssh.kex get_default_kex_algs) puts "
         "ecdh-sha2-nistp521 before nistp384 and nistp256, so a device without curve25519 "
         "(the IOS-like emulated one offers nistp256/384/521) negotiates P-521, whose key "
         "generation and shared secret cost each side several times P-256's. Measured: no "
         "change beyond noise, as shipped vs knob: local fresh-conn 32.1 vs 31.9 ms, "
         "pty-fresh 35.2 vs 41.0; regional fresh-conn 613.2 vs 621.5; on loopback, 50 "
         "connects, 11.7/11.7/8.8 vs 11.4/8.5/8.0 ms in three rounds, client CPU "
         "6.1/6.2/5.8 vs 6.1/4.5/4.9 ms: at most a millisecond or two per connection, within "
         "this machine's noise"),
    matters=False,
)

KNOBS = (AES128_GCM, KEX_ORDER)
