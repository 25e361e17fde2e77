// The official TypeScript SDK client (npm @modelcontextprotocol/sdk, handshake era) against
// the FastMCP server of scripts/record_fastmcp.py. Run with NODE_PATH=scripts/npm-peers/node_modules:
//
//   node scripts/fastmcp_ts_client.cjs stdio COMMAND [ARGS...]
//   node scripts/fastmcp_ts_client.cjs http URL
//
// The elicitation answer is canned.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const types = require("@modelcontextprotocol/sdk/types.js");

async function attempt(promise) {
  try {
    return await promise;
  } catch (err) {
    return err;
  }
}

async function main() {
  const [kind, ...rest] = process.argv.slice(2);
  const client = new Client({ name: "fastmcp-ts-client", version: "1.0.0" },
    { capabilities: { elicitation: {} } });
  client.setRequestHandler(types.ElicitRequestSchema, async () => ({
    action: "accept", content: { value: "Ada" },
  }));
  const transport = kind === "http" ? new StreamableHTTPClientTransport(new URL(rest[0]))
    : new StdioClientTransport({ command: rest[0], args: rest.slice(1) });
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  await client.callTool({ name: "slow", arguments: { steps: 3 } }, undefined,
    { onprogress: () => {} });
  await attempt(client.callTool({ name: "ask", arguments: {} })); // elicitation on this wire
  await attempt(client.callTool({ name: "fail", arguments: {} }));
  await attempt(client.callTool({ name: "add", arguments: { a: "x", b: 1 } }));
  await client.readResource({ uri: "demo://readme" });
  await attempt(client.readResource({ uri: "demo://missing" }));
  await client.getPrompt({ name: "greet", arguments: { name: "Bo" } });
  await client.ping();
  await client.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
