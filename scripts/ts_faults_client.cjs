// A client on the official TypeScript SDK (npm @modelcontextprotocol/sdk) that makes the
// faults the conversation checker catches, for scripts/make_data_conversation.py. Run with
// NODE_PATH pointing at a node_modules that holds the SDK (scripts/npm-peers/node_modules):
//
//   node scripts/ts_faults_client.cjs COMMAND [ARGS...]
//
// COMMAND runs the server over stdio (the tap around scripts/demo_server.py). The faults go
// through the SDK's own calls, which do not check them (the Client's
// enforceStrictCapabilities is off by default, and it validates no tool arguments):
// tools/call with arguments that break the listed inputSchema, sent with the low-level
// client.request; resources/subscribe and completion/complete to a server that did not
// declare them.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const types = require("@modelcontextprotocol/sdk/types.js");

async function attempt(promise) {
  try {
    return await promise;
  } catch (err) {
    return err;
  }
}

function rawCall(client, name, args) {
  return attempt(client.request({ method: "tools/call", params: { name, arguments: args } },
    types.CallToolResultSchema));
}

async function main() {
  const [command, ...args] = process.argv.slice(2);
  const client = new Client({ name: "ts-faults-client", version: "1.0.0" },
    { capabilities: {} });
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  await client.listTools();
  await rawCall(client, "add", { a: 2, b: 40 });
  await rawCall(client, "add", { a: "two", b: 40 });     // a is an integer
  await rawCall(client, "divide", { a: 1 });              // b is required
  await client.listResources();
  await attempt(client.subscribeResource({ uri: "demo://readme" }));  // subscribe: false
  await attempt(client.complete({ ref: { type: "ref/prompt", name: "review" },
    argument: { name: "code", value: "pri" } }));         // no completions capability
  await client.ping();
  await client.close();
}

const timer = setTimeout(() => { console.error("ts_faults_client: timed out"); process.exit(3); },
  60000);
main().then(() => { clearTimeout(timer); }, (err) => {
  console.error(err);
  process.exit(1);
});
