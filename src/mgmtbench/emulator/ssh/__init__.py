"""The device's SSH side (asyncssh): the server and its logins, session channels answering CLI
exec requests, the interactive shell, SCP and SFTP, and the bulk sink and source.
"""
