"""Drives `tinytool mcp` with the official MCP Python SDK client.

Usage: client.py TINYTOOL WORKDIR POLICY CALLS_JSON
CALLS_JSON is a JSON list of [tool, arguments]. Prints one JSON object: the negotiated
protocol version, the listed tool names, and each call's {isError, text}.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main() -> None:
    tinytool, workdir, policy, calls = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    env = {key: os.environ[key] for key in ("HOME", "XDG_CONFIG_HOME", "PATH") if key in os.environ}
    params = StdioServerParameters(
        command=tinytool,
        args=["--dir", workdir, "--policy", policy, "mcp"],
        env=env,
        cwd=workdir,
    )
    report = {"calls": []}
    async with stdio_client(params) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report["protocol"] = init.protocol_version
            report["server"] = init.server_info.name
            listed = await session.list_tools()
            report["tools"] = [tool.name for tool in listed.tools]
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                texts = [part.text for part in result.content if getattr(part, "type", "") == "text"]
                report["calls"].append({"tool": name, "isError": bool(result.is_error), "text": "\n".join(texts)})
    print(json.dumps(report))


asyncio.run(main())
