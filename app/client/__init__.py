"""``errata.explain``: an exception or a traceback's text answered, in this process or by a
server (``ERRATA_URL``). The surfaces above (``errata run``, the notebook extension, the MCP
server) explain through it."""
