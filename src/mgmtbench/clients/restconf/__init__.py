"""What a RESTCONF benchmark sends, whatever the client library: :mod:`.requests`."""
