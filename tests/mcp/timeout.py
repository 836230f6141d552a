"""A call the official MCP Python SDK gives up on: `tinytool mcp` over stdio, one bash
command that outlives the client's read time-out.

Usage: timeout.py TINYTOOL WORKDIR POLICY COMMAND NAME
Calls bash with COMMAND and `read_timeout_seconds=2`, then, still connected, waits (at most
20 s) until no process named NAME is left. Prints one JSON object: whether the call timed out
(`timedOut`, with the SDK's error text) and whether the command was gone while the client was
still connected (`goneWhileConnected`).
"""

import asyncio
import json
import os
import sys
import time

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def running(name):
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/comm") as comm:
                if comm.read().strip() == name:
                    return True
        except OSError:
            continue
    return False


async def main() -> None:
    tinytool, workdir, policy, command, name = sys.argv[1:6]
    env = {key: os.environ[key] for key in ("HOME", "XDG_CONFIG_HOME", "PATH") if key in os.environ}
    params = StdioServerParameters(
        command=tinytool, args=["--dir", workdir, "--policy", policy, "mcp"], env=env, cwd=workdir
    )
    report = {"timedOut": False}
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            try:
                await session.call_tool("bash", {"command": command}, read_timeout_seconds=2)
            except Exception as err:  # noqa: BLE001 - the SDK's time-out error, whatever its class
                report["timedOut"] = True
                report["error"] = str(err)
            deadline = time.monotonic() + 20
            while running(name) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            report["goneWhileConnected"] = not running(name)
    print(json.dumps(report))


asyncio.run(main())
