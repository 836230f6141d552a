// Drives `tinytool mcp` with the official MCP TypeScript SDK client.
//
// Usage: node client.mjs stdio TINYTOOL WORKDIR CALLS_JSON
//        node client.mjs http URL CALLS_JSON
// CALLS_JSON is a JSON list of [tool, arguments]. Prints one JSON object: the server's
// name, the listed tool names, and for each call either {isError, text, images: [{mimeType,
// bytes}]} or {failed: message} when the SDK itself failed (a closed connection, a
// message it would not take).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, ...rest] = process.argv.slice(2);
let transport;
let calls;
if (mode === "stdio") {
  const [tinytool, workdir, callsJson] = rest;
  const env = {};
  for (const key of ["HOME", "XDG_CONFIG_HOME", "PATH"]) {
    if (process.env[key] !== undefined) env[key] = process.env[key];
  }
  transport = new StdioClientTransport({
    command: tinytool,
    args: ["--dir", workdir, "mcp"],
    env,
    cwd: workdir,
    stderr: "ignore",
  });
  calls = JSON.parse(callsJson);
} else if (mode === "http") {
  const [url, callsJson] = rest;
  transport = new StreamableHTTPClientTransport(new URL(url));
  calls = JSON.parse(callsJson);
} else {
  console.error("usage: client.mjs stdio TINYTOOL WORKDIR CALLS | http URL CALLS");
  process.exit(2);
}

const client = new Client({ name: "tinytool-test", version: "1.0.0" });
const report = { calls: [] };
await client.connect(transport);
report.server = client.getServerVersion()?.name;
const listed = await client.listTools();
report.tools = listed.tools.map((tool) => tool.name);
for (const [name, args] of calls) {
  try {
    const result = await client.callTool({ name, arguments: args });
    const texts = result.content.filter((part) => part.type === "text").map((part) => part.text);
    const images = result.content
      .filter((part) => part.type === "image")
      .map((part) => ({ mimeType: part.mimeType, bytes: Buffer.from(part.data, "base64").length }));
    report.calls.push({ tool: name, isError: Boolean(result.isError), text: texts.join("\n"), images });
  } catch (error) {
    report.calls.push({ tool: name, failed: String(error && error.message ? error.message : error) });
  }
}
await client.close();
console.log(JSON.stringify(report));
