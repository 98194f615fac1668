"""errata for coding agents: ``errata mcp``, the Model Context Protocol over stdio."""
