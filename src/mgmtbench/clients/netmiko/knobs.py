"""The settings a Netmiko user can change (:mod:`mgmtbench.clients.tuning`); imports nothing of
Netmiko.

Netmiko 4's defaults are already its fast ones: ``fast_cli=True`` (``BaseConnection.__init__``
turns the default ``global_delay_factor`` of 1 into 0.1, and ``select_delay_factor`` takes the
lesser of a method's delay factor and that) and no session log. ``send_command_timing`` is not a
knob: it waits ``last_read=2.0`` s of silence after every output (``read_channel_timing``), where
``send_command`` stops at the prompt.
"""

from mgmtbench.clients.tuning import Knob

EXPECT_STRING = Knob(
    name="expect-string",
    change=("prompt = re.escape(conn.find_prompt())  # once, after enable()\n"
            "conn.send_command(command, expect_string=prompt)"),
    why=("send_command without expect_string runs find_prompt() before every command "
         "(_prompt_handler): a return sent, two clear_buffer() sleeps and a 0.25 x 0.1 s sleep, "
         "one round trip and about 45 ms each time; given the prompt, it only reads to it. "
         "pty-kept 182 vs 422 ms at local, 337 vs 691 ms at regional; pty-fresh 535 vs 727, "
         "1,150 vs 1,456 ms"),
)

TCP_NODELAY = Knob(
    name="tcp-nodelay",
    change=("sock = socket.create_connection((host, 22))\n"
            "sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
            "conn = ConnectHandler(..., sock=sock)"),
    why=("Netmiko hands sock= to paramiko, which leaves Nagle's algorithm on: a write that "
         "follows an unacknowledged one waits for the device's delayed ACK. pty-fresh 628 vs "
         "727 ms at local (the login's writes), 1,397 vs 1,456 ms at regional; alone it makes "
         "regional pty-kept slower (798 vs 691 ms: the reply to find_prompt's return then lands "
         "in clear_buffer's backing-off sleeps), which expect-string removes (tuned 334 ms)"),
)

GLOBAL_DELAY_FACTOR = Knob(
    name="global-delay-factor",
    change="conn = ConnectHandler(..., global_delay_factor=0.02)",
    why=("with fast_cli the fixed sleeps of session preparation (_test_channel_read, "
         "set_base_prompt's find_prompt, clear_buffer, enable) are multiples of "
         "global_delay_factor (0.1 unless given): 0.02 cuts them five-fold. pty-fresh 500 vs "
         "727 ms at local, 1,341 vs 1,456 ms at regional; pty-kept 241 vs 422, 626 vs 691 ms"),
)

CMD_VERIFY_OFF = Knob(
    name="cmd-verify-off",
    change="conn = ConnectHandler(..., global_cmd_verify=False)",
    why=("send_command stops reading for the command's echo first (command_echo_read), but then "
         "a prompt that is only the echo's line can end the read: wrong outputs at regional "
         "(every mode, in two runs; checked against the transcripts), so not a knob to use"),
    matters=False,
    correct=False,
)

SHORT_TIMEOUTS = Knob(
    name="short-timeouts",
    change=("conn = ConnectHandler(..., conn_timeout=5, auth_timeout=5, banner_timeout=5,\n"
            "                      read_timeout_override=5)"),
    why=("time-outs are upper bounds on waits that end when the answer comes "
         "(read_until_pattern, paramiko's connect): no change, pty-fresh 734 vs 727 ms at local, "
         "1,447 vs 1,456 ms at regional, pty-kept 416 vs 422 ms at local"),
    matters=False,
)

KNOBS = (EXPECT_STRING, TCP_NODELAY, GLOBAL_DELAY_FACTOR, CMD_VERIFY_OFF, SHORT_TIMEOUTS)
