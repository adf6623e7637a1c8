"""A small MCP server on the official Python SDK, for mcp-sansio's interop tests.

The same script runs on `mcp` 1.x (FastMCP, legacy handshake only) and `mcp` 2.x
(MCPServer, which also speaks the stateless 2026-07-28 revision), over stdio, or over
Streamable HTTP at http://127.0.0.1:PORT/mcp with `--http PORT` (add `--json` for JSON
replies instead of server-sent events), or over the 2024-11-05 transport (HTTP with
server-sent events) at http://127.0.0.1:PORT/sse with `--sse PORT`. With `--roots` it also
has a tool `roots` that asks the client for its roots (`roots/list`) on every call and
answers with their URIs, and on `mcp` 2.x a tool `resolved_roots` that asks through the SDK's
resolver, which in 2026-07-28 answers `input_required` and reads the roots from the call sent
again (and in the handshake revisions asks mid-call, as `roots` does). With `--roots` it also
has three tools that ask the client mid-call: `ask_name` asks the user for a name (form
elicitation), `ask_url` sends the user to a URL (URL elicitation), and `sample` asks the
client's model for a completion (sampling); each answers with what it was told. On `mcp`
2.x, `resolved_name` and `resolved_both` ask the same through the resolver, which in
2026-07-28 answers `input_required` (both questions at once for `resolved_both`).
With `--chatty` it also has a tool `chatty` that logs as many lines as it is asked for
(`ctx.info`, each a `notifications/message`) before it answers, as a server reporting each
step of a long job does, waiting `pause` seconds before each line and reporting its progress
after it (`ctx.report_progress`, which the SDK sends only where the request asked for it),
and a resource `slow://{steps}` read in `steps` half-second steps, reporting each the same way.
With `--changes` on `mcp` 2.x it also has two tools that change what a `subscriptions/listen`
stream hears: `grow` adds a tool (`grown_1`, `grown_2`, ...) and says the tool list changed,
and `touch` says the resource at the URI it is given was updated.
Always, beside `word_count`, a prompt `review` (a required `text`, an optional `tone`) and a
text resource `words://guide`.
"""

import sys

try:  # mcp 2.x
    from mcp.server.mcpserver import Context, MCPServer as Server

    MODERN = True
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context, FastMCP as Server

    MODERN = False

JSON = "--json" in sys.argv
SSE = "--sse" in sys.argv
FLAG = "--sse" if SSE else "--http"
PORT = int(sys.argv[sys.argv.index(FLAG) + 1]) if FLAG in sys.argv else None

if PORT is None or MODERN:
    server = Server("word-count")
else:  # mcp 1.x takes its HTTP settings when it is made
    server = Server("word-count", host="127.0.0.1", port=PORT, json_response=JSON)


@server.tool()
def word_count(text: str) -> str:
    """Counts the words in a text.

    Words are runs of characters between whitespace."""
    return f"{len(text.split())} words"


@server.prompt()
def review(text: str, tone: str = "kind") -> str:
    """Asks for a review of a text."""
    return f"Review this text in a {tone} tone: {text}"


@server.resource("words://guide", mime_type="text/plain")
def guide() -> str:
    """How words are counted."""
    return "Words are runs of characters between whitespace."


if "--roots" in sys.argv:

    @server.tool()
    async def roots(ctx: Context) -> str:
        """Lists the roots the client gives, asking it anew."""
        result = await ctx.session.list_roots()
        return " ".join(str(root.uri) for root in result.roots) or "no roots"

    from pydantic import BaseModel
    from mcp.types import SamplingMessage, TextContent

    class Name(BaseModel):
        name: str

    @server.tool()
    async def ask_name(ctx: Context) -> str:
        """Asks the user for a name."""
        answer = await ctx.elicit(message="Who is asking?", schema=Name)
        return f"hello {answer.data.name}" if answer.action == "accept" else answer.action

    @server.tool()
    async def ask_url(ctx: Context) -> str:
        """Sends the user to a URL."""
        answer = await ctx.elicit_url(
            message="Sign in, please", url="https://example.com/in", elicitation_id="e-7"
        )
        return f"url {answer.action}"

    @server.tool()
    async def sample(ctx: Context) -> str:
        """Asks the client's model."""
        said = SamplingMessage(role="user", content=TextContent(type="text", text="hi"))
        result = await ctx.session.create_message(messages=[said], max_tokens=20)
        return f"{result.model} said {result.content.text}"

    if MODERN:
        from typing import Annotated

        from mcp.server.mcpserver import ListRoots, Resolve

        def ask_for_roots() -> ListRoots:
            return ListRoots()

        @server.tool()
        def resolved_roots(listed: Annotated[object, Resolve(ask_for_roots)]) -> str:
            """Lists the roots the client gives, through the SDK's resolver."""
            return " ".join(str(root.uri) for root in listed.roots) or "no roots"

        from mcp.server.mcpserver import Elicit, Sample

        def who() -> Elicit[Name]:
            return Elicit("Who is asking?", Name)

        def model() -> Sample:
            said = SamplingMessage(role="user", content=TextContent(type="text", text="hi"))
            return Sample([said], max_tokens=20)

        @server.tool()
        def resolved_name(name: Annotated[Name, Resolve(who)]) -> str:
            """Asks the user for a name, through the SDK's resolver."""
            return f"hello {name.name}"

        @server.tool()
        def resolved_both(
            name: Annotated[Name, Resolve(who)], said: Annotated[object, Resolve(model)]
        ) -> str:
            """Asks the user and the client's model at once, through the SDK's resolver."""
            return f"{name.name} and {said.model} said {said.content.text}"


if "--chatty" in sys.argv:

    import anyio

    @server.tool()
    async def chatty(lines: int, ctx: Context, pause: float = 0) -> str:
        """Logs `lines` lines, then says how many."""
        for line in range(lines):
            await anyio.sleep(pause)
            await ctx.info(f"step {line + 1} of {lines}")
            await ctx.report_progress(line + 1, lines)
        return f"logged {lines} lines"

    @server.resource("slow://{steps}")
    async def slow(steps: str, ctx: Context) -> str:
        """Read in `steps` half-second steps, each reported when asked."""
        for step in range(int(steps)):
            await anyio.sleep(0.5)
            await ctx.report_progress(step + 1, int(steps))
        return f"read in {steps} steps"


if "--changes" in sys.argv and MODERN:
    grown = []

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Adds a tool, and tells the subscribers that the tool list changed."""
        name = f"grown_{len(grown) + 1}"
        grown.append(name)
        server.add_tool(lambda: name, name=name, description="A tool grown at run time.")
        await ctx.notify_tools_changed()
        return f"added {name}"

    @server.tool()
    async def touch(uri: str, ctx: Context) -> str:
        """Tells the subscribers that the resource at `uri` was updated."""
        await ctx.notify_resource_updated(uri)
        return f"touched {uri}"


if __name__ == "__main__":
    if PORT is None:
        server.run()
    elif SSE and MODERN:
        server.run(transport="sse", host="127.0.0.1", port=PORT)
    elif SSE:
        server.run(transport="sse")
    elif MODERN:
        server.run(
            transport="streamable-http", host="127.0.0.1", port=PORT, json_response=JSON
        )
    else:
        server.run(transport="streamable-http")
