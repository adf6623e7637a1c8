"""A small MCP server on the official Python SDK, for mcp-sansio's interop tests.

The same script runs on `mcp` 1.x (FastMCP, legacy handshake only) and `mcp` 2.x
(MCPServer, which also speaks the stateless 2026-07-28 revision), over stdio.
"""

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

server = Server("word-count")


@server.tool()
def word_count(text: str) -> str:
    """Counts the words in a text.

    Words are runs of characters between whitespace."""
    return f"{len(text.split())} words"


if __name__ == "__main__":
    server.run()
