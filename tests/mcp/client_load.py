"""Sends many calls at once over one Streamable HTTP session with the official MCP Python SDK.

Usage: client_load.py URL COUNT
Each call runs `sleep 0.2; echo call-N` through bash. Prints one JSON object: the number of
calls, how many were answered with their own output, and the first few failures.
"""

import asyncio
import json
import sys

from mcp import Client


async def main() -> None:
    url, count = sys.argv[1], int(sys.argv[2])
    async with Client(url, mode="legacy") as client:

        async def one(n):
            try:
                result = await client.call_tool("bash", {"command": f"sleep 0.2; echo call-{n}"})
            except Exception as error:  # every failure is reported, none ends the run
                return repr(error)
            texts = [part.text for part in result.content if getattr(part, "type", "") == "text"]
            return "\n".join(texts) == f"call-{n}\n" or f"call {n}: {texts}"

        results = await asyncio.gather(*(one(n) for n in range(count)))
    failures = [r for r in results if r is not True]
    print(json.dumps({"calls": count, "answered": count - len(failures), "failures": failures[:5]}))


asyncio.run(main())
