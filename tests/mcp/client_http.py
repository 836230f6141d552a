"""Drives `tinytool mcp --listen` over Streamable HTTP with the official MCP Python SDK.

Usage: client_http.py URL MODE CALLS_JSON
MODE is the SDK's connect mode: "legacy" (initialize handshake) or "auto" (server/discover,
then stateless 2026-07-28 requests). CALLS_JSON is a JSON list of [tool, arguments]; a
question is answered "blue" through elicitation. Prints one JSON object: the protocol
version, the server name, the listed tool names, and each call's
{isError, text, structured}.
"""

import asyncio
import json
import sys

import mcp_types as types
from mcp import Client


async def answer(context, params):
    return types.ElicitResult(action="accept", content={"answer": "blue"})


async def main() -> None:
    url, mode, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    report = {"calls": []}
    async with Client(url, mode=mode, elicitation_callback=answer) as client:
        report["protocol"] = client.protocol_version
        info = client.server_info
        report["server"] = info.name if info else None
        listed = await client.list_tools()
        report["tools"] = [tool.name for tool in listed.tools]
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            texts = [part.text for part in result.content if getattr(part, "type", "") == "text"]
            report["calls"].append({
                "tool": name,
                "isError": bool(result.is_error),
                "text": "\n".join(texts),
                "structured": result.structured_content,
            })
    print(json.dumps(report))


asyncio.run(main())
