"""An MCP server on the official Python SDK 2.x whose tool mirrors arguments into headers.

`regional_count` marks `region` (a string), `shard` (an integer) and `dry_run` (a boolean)
with `x-mcp-header`, so over Streamable HTTP in 2026-07-28 the SDK checks every
`Mcp-Param-*` header a client sends against the call's arguments (plain or base64 form, each
present exactly when its argument is) and refuses a mismatch with -32020 before the tool runs.
Serves http://127.0.0.1:PORT/mcp with `--http PORT`.
"""

import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

PORT = int(sys.argv[sys.argv.index("--http") + 1])

server = MCPServer("routed-count")


def header(name: str) -> Field:
    """A parameter mirrored into the header `Mcp-Param-{name}`."""
    return Field(json_schema_extra={"x-mcp-header": name})


@server.tool()
def regional_count(
    text: str,
    region: Annotated[str, header("Region")],
    shard: Annotated[int, header("Shard")] = 0,
    dry_run: Annotated[bool, header("Dry-Run")] = False,
) -> str:
    """Counts the words of a text in a region's shard, saying what it was given."""
    return f"{len(text.split())} words; region={region!r} shard={shard} dry_run={dry_run}"


if __name__ == "__main__":
    server.run(transport="streamable-http", host="127.0.0.1", port=PORT)
