"""A plain MCP client in Python's standard library, as the teaching material writes one:
a subprocess, one JSON line out, one JSON line back. mcp-compare runs it beside mcp-sansio
and rmcp against the same servers.

    plain_client.py CALLS CONNECTS TOOL ARGUMENTS_JSON -- SERVER [ARG...]
    plain_client.py CALLS CONNECTS TOOL ARGUMENTS_JSON --url URL

With --url it speaks Streamable HTTP (2025-11-25, a session, one keep-alive connection
through http.client, JSON or server-sent-event replies) to a server already running.

Prints one JSON line: the connect times and the per-call times in nanoseconds, the process's
CPU time over the measured calls, and the text of the first call's first content block (so
the caller checks the answer was right).
"""

import http.client
import json
import subprocess
import sys
import time
import urllib.parse


class Server:
    def __init__(self, argv):
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the server closed its output during {method}")
            reply = json.loads(line)
            if reply.get("id") == self.next_id and "method" not in reply:
                if "error" in reply:
                    raise RuntimeError(f"{method} failed: {reply['error']}")
                return reply["result"]

    def connect(self):
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "plain-python", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class HttpServer(Server):
    """The same requests as POSTs on one keep-alive connection."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port)
        self.path = parts.path
        self.session = None
        self.next_id = 0

    def post(self, message):
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
            headers["MCP-Protocol-Version"] = "2025-11-25"
        self.conn.request("POST", self.path, json.dumps(message).encode(), headers)
        response = self.conn.getresponse()
        body = response.read()
        self.session = self.session or response.getheader("Mcp-Session-Id")
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            events = [l[5:].strip() for l in body.decode().splitlines() if l.startswith("data:")]
            return [json.loads(e) for e in events if e]
        return [json.loads(body)] if body else []

    def send(self, message):
        self.post(message)

    def request(self, method, params):
        self.next_id += 1
        replies = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        for reply in replies:
            if reply.get("id") == self.next_id and "method" not in reply:
                if "error" in reply:
                    raise RuntimeError(f"{method} failed: {reply['error']}")
                return reply["result"]
        raise RuntimeError(f"no answer to {method}")

    def close(self):
        if self.session:
            self.conn.request("DELETE", self.path, headers={"Mcp-Session-Id": self.session})
            self.conn.getresponse().read()
        self.conn.close()


def main():
    calls, connects, tool, arguments = sys.argv[1:5]
    if "--url" in sys.argv:
        url = sys.argv[sys.argv.index("--url") + 1]
        start_server = lambda: HttpServer(url)
    else:
        argv = sys.argv[sys.argv.index("--") + 1 :]
        start_server = lambda: Server(argv)
    arguments = json.loads(arguments)

    connect_ns = []
    for _ in range(int(connects)):
        start = time.perf_counter_ns()
        server = start_server()
        server.connect()
        connect_ns.append(time.perf_counter_ns() - start)
        server.close()

    server = start_server()
    server.connect()
    server.request("tools/list", {})
    params = {"name": tool, "arguments": arguments}
    first = server.request("tools/call", params)
    for _ in range(100):  # warm-up, as the other clients get
        server.request("tools/call", params)
    call_ns = []
    cpu_start = time.process_time_ns()
    for _ in range(int(calls)):
        start = time.perf_counter_ns()
        server.request("tools/call", params)
        call_ns.append(time.perf_counter_ns() - start)
    cpu_ns = time.process_time_ns() - cpu_start
    server.close()
    text = first["content"][0]["text"]
    print(json.dumps({"connect_ns": connect_ns, "call_ns": call_ns, "cpu_ns": cpu_ns, "text": text}))


if __name__ == "__main__":
    main()
