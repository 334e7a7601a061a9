// bench/mcp.sh's MCP client: the official TypeScript SDK's (installed from host/src/test/mcp-client's lock), one
// warm session to `kosa8 mcp`, timing run_command round trips of argv ["true"] on an existing sandbox.
// Usage: node mcp-exec.mjs SANDBOX N '<kosa8 command as a JSON array>'. Prints the samples in ms, one line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [sandbox, n, kosaJson] = process.argv.slice(2);
const kosa = JSON.parse(kosaJson);
const transport = new StdioClientTransport({ command: kosa[0], args: [...kosa.slice(1), "mcp"], env: process.env,
  stderr: "ignore" });
const client = new Client({ name: "kosa8-bench", version: "1.0.0" });
await client.connect(transport);
const once = async () => {
  const r = await client.callTool({ name: "run_command", arguments: { sandbox, argv: ["true"] } });
  if (r.isError || r.structuredContent.exit_code !== 0) throw new Error(JSON.stringify(r));
};
for (let i = 0; i < 5; i++) await once(); // warm-up: the server's JIT and connections
const ms = [];
for (let i = 0; i < Number(n); i++) {
  const t0 = process.hrtime.bigint();
  await once();
  ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
console.log(ms.map((m) => m.toFixed(2)).join(" "));
await client.close();
