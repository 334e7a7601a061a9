// bench/mcp.sh's MCP client: the official TypeScript SDK's (installed from host/src/test/mcp-client's lock), one
// warm session to `kosa8 mcp` (over stdio, or with "http" over Streamable HTTP to `kosa8 mcp --http --port 0`),
// timing run_command round trips of argv ["true"] on an existing sandbox.
// Usage: node mcp-exec.mjs SANDBOX N '<kosa8 command as a JSON array>' [stdio|http]. Prints the samples in ms, one
// line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn } from "node:child_process";

const [sandbox, n, kosaJson, door = "stdio"] = process.argv.slice(2);
const kosa = JSON.parse(kosaJson);
let transport;
let server;
if (door === "http") {
  server = spawn(kosa[0], [...kosa.slice(1), "mcp", "--http", "--port", "0"],
    { env: process.env, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  const { url, token } = await new Promise((resolve, reject) => {
    server.stderr.on("data", (d) => {
      err += d.toString();
      const u = err.match(/at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      const t = err.match(/: token (\S+)/);
      if (u && t) resolve({ url: u[1], token: t[1] });
    });
    server.on("exit", (c) => reject(new Error(`kosa8 mcp --http exited (${c}): ${err}`)));
  });
  transport = new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
} else {
  transport = new StdioClientTransport({ command: kosa[0], args: [...kosa.slice(1), "mcp"], env: process.env,
    stderr: "ignore" });
}
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
if (door === "http") {
  await transport.terminateSession();
  await client.close();
  server.kill("SIGTERM");
  await new Promise((r) => server.on("exit", r));
} else {
  await client.close();
}
