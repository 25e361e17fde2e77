// A client built on the official TypeScript SDK (npm @modelcontextprotocol/sdk), for
// scripts/record_peers.py. Run with NODE_PATH=scripts/npm-peers/node_modules:
//
//   node scripts/peers_ts_client.cjs SCENARIO stdio COMMAND [ARGS...]
//   node scripts/peers_ts_client.cjs SCENARIO http URL
//
// SCENARIO is "demo" (scripts/demo_server.py, the Python SDK server), "everything"
// (@modelcontextprotocol/server-everything) or "fastmcp" (the FastMCP server of
// scripts/record_fastmcp.py). Sampling and elicitation answers are canned.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const types = require("@modelcontextprotocol/sdk/types.js");

const [scenario, kind, ...rest] = process.argv.slice(2);

async function attempt(promise) {
  try {
    return await promise;
  } catch (err) {
    return err;
  }
}

function cancelAfterFirstProgress(client, name, args) {
  const ctl = new AbortController();
  const call = client.callTool({ name, arguments: args }, undefined, {
    signal: ctl.signal,
    onprogress: () => ctl.abort("recorded cancel"),
  });
  return attempt(call);
}

async function demo(client) {
  await client.listTools();
  await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  await client.callTool({ name: "divide", arguments: { a: 1, b: 0 } }); // isError
  await attempt(client.callTool({ name: "no_such_tool", arguments: {} }));
  await client.callTool({ name: "slow", arguments: { steps: 3, delay: 0.05 } }, undefined,
    { onprogress: () => {} });
  await cancelAfterFirstProgress(client, "slow", { steps: 20, delay: 0.05 });
  await Promise.all([ // several requests in flight at once
    client.callTool({ name: "slow", arguments: { steps: 2, delay: 0.1 } }),
    client.callTool({ name: "add", arguments: { a: 1, b: 1 } }),
    client.ping(),
  ]);
  await client.callTool({ name: "ask_llm", arguments: { question: "six times seven?" } });
  await client.callTool({ name: "ask_user", arguments: { action: "deploy" } });
  await client.listResources();
  await client.readResource({ uri: "demo://readme" });
  await attempt(client.readResource({ uri: "demo://notes/missing" }));
  await client.getPrompt({ name: "review", arguments: { code: "print('hi')" } });
  await client.ping();
}

async function everything(client) {
  await client.listTools();
  await client.callTool({ name: "echo", arguments: { message: "hello from the TS SDK" } });
  await client.callTool({ name: "get-sum", arguments: { a: 19, b: 23 } });
  await attempt(client.callTool({ name: "get-sum", arguments: { a: "x" } }));
  await client.callTool({ name: "trigger-long-running-operation",
    arguments: { duration: 0.6, steps: 3 } }, undefined, { onprogress: () => {} });
  await cancelAfterFirstProgress(client, "trigger-long-running-operation",
    { duration: 2, steps: 4 });
  await Promise.all([
    client.callTool({ name: "trigger-long-running-operation",
      arguments: { duration: 0.4, steps: 2 } }),
    client.callTool({ name: "echo", arguments: { message: "while another runs" } }),
    client.listPrompts(),
  ]);
  await client.callTool({ name: "trigger-sampling-request",
    arguments: { prompt: "six times seven?", maxTokens: 20 } });
  await attempt(client.readResource({ uri: "demo://resource/no/such/thing" }));
  await client.complete({ ref: { type: "ref/prompt", name: "completable-prompt" },
    argument: { name: "department", value: "En" } }).catch(() => null);
  await client.ping();
}

async function fastmcp(client) {
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
}

const SCENARIOS = { demo, everything, fastmcp };

async function main() {
  const client = new Client({ name: "peers-ts-client", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
  client.setRequestHandler(types.CreateMessageRequestSchema, async () => ({
    role: "assistant", model: "canned-model", stopReason: "endTurn",
    content: { type: "text", text: "42" },
  }));
  client.setRequestHandler(types.ElicitRequestSchema, async () => ({
    action: "accept", content: { confirm: true, note: "recorded" },
  }));
  client.setRequestHandler(types.ListRootsRequestSchema, async () => ({
    roots: [{ uri: "file:///sandbox", name: "sandbox" }],
  }));
  const transport = kind === "stdio"
    ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(rest[0]));
  await client.connect(transport);
  await SCENARIOS[scenario](client);
  if (kind === "http") await transport.terminateSession().catch(() => null);
  await client.close();
}

const timer = setTimeout(() => { console.error("peers_ts_client: timed out"); process.exit(3); },
  60000);
main().then(() => { clearTimeout(timer); }, (err) => {
  console.error(err);
  process.exit(1);
});
