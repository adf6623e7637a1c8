"""A plain MCP client in Python's standard library, as the teaching material writes one:
a subprocess, one JSON line out, one JSON line back. mcp-compare runs it beside mcp-sansio
and rmcp against the same servers.

    plain_client.py CALLS CONNECTS TOOL ARGUMENTS_JSON -- SERVER [ARG...]

Prints one JSON line: the connect times and the per-call times in nanoseconds, the process's
CPU time over the measured calls, and the text of the first call's first content block (so
the caller checks the answer was right).
"""

import json
import subprocess
import sys
import time


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


def main():
    calls, connects, tool, arguments = sys.argv[1:5]
    argv = sys.argv[sys.argv.index("--") + 1 :]
    arguments = json.loads(arguments)

    connect_ns = []
    for _ in range(int(connects)):
        start = time.perf_counter_ns()
        server = Server(argv)
        server.connect()
        connect_ns.append(time.perf_counter_ns() - start)
        server.close()

    server = Server(argv)
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
