// McpHttpIT's client: the official MCP TypeScript SDK's Client over Streamable HTTP, driving `kosa8 mcp --http`
// against real microVMs. Usage: node mcp-http-it.mjs '<the kosa8 command as a JSON array>'. Starts the server,
// prints one line per step ("ok STEP ..."), the ids it made ("made ID"), and exits non-zero at the first step that
// fails, saying why.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import assert from "node:assert/strict";

const kosa = JSON.parse(process.argv[2]);
const LONG = { timeout: 15 * 60 * 1000 };
const SHORT = { timeout: 3 * 60 * 1000 };
const MAX_BODY = 32 * 1024 * 1024;

function ok(step, detail = "") {
  console.log(`ok ${step}${detail ? " " + detail : ""}`);
}

function listed() {
  return execFileSync(kosa[0], [...kosa.slice(1), "ls", "-q"], { env: process.env, encoding: "utf8" });
}

async function until(what, cond, seconds = 90) {
  for (let i = 0; i < seconds; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${what}: not so after ${seconds} s`);
}

// the server, on a port the system picks; its URL and token come on stderr
const server = spawn(kosa[0], [...kosa.slice(1), "mcp", "--http", "--port", "0"],
  { env: process.env, stdio: ["ignore", "inherit", "pipe"] });
let serverErr = "";
let exited = null;
server.on("exit", (code, signal) => { exited = { code, signal }; });
// a step that fails leaves no server behind: stopped as a user would, so it removes what its sessions made
process.on("exit", () => { if (exited === null) server.kill("SIGTERM"); });
const endpoint = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`no URL and token in 180 s: ${serverErr}`)), 180000);
  server.stderr.on("data", (d) => {
    process.stderr.write(d);
    serverErr += d.toString();
    const url = serverErr.match(/at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    const token = serverErr.match(/: token (\S+)/);
    if (url && token) {
      clearTimeout(timer);
      resolve({ url: url[1], token: token[1] });
    }
  });
  server.on("exit", (c) => reject(new Error(`kosa8 mcp --http exited (${c}): ${serverErr}`)));
});
assert.match(endpoint.token, /^[A-Za-z0-9_-]{43}$/, "a 256-bit token in base64url");
const file = path.join(process.env.KOSA8_HOME, "run", "mcp-http.json");
const stat = fs.statSync(file);
assert.equal(stat.mode & 0o777, 0o600, `${file} has mode ${(stat.mode & 0o777).toString(8)}`);
const written = JSON.parse(fs.readFileSync(file, "utf8"));
assert.equal(written.url, endpoint.url);
assert.equal(written.token, endpoint.token);
ok("started", endpoint.url);

const auth = { Authorization: `Bearer ${endpoint.token}` };
function connect(name) {
  const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: auth } });
  const client = new Client({ name, version: "1.0.0" });
  return { transport, client };
}

const a = connect("kosa8-mcp-http-it");
await a.client.connect(a.transport);
assert.ok(a.transport.sessionId, "the server gave the session an id");

async function call(client, name, args, opts = SHORT) {
  return client.callTool({ name, arguments: args }, undefined, opts);
}
async function must(client, name, args, opts) {
  const r = await call(client, name, args, opts);
  assert.ok(!r.isError, `${name} failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}
async function stillServing(after) {
  const t = await a.client.listTools();
  assert.ok(t.tools.length > 10, `after ${after} the server lists no tools`);
}

const { tools } = await a.client.listTools();
const names = tools.map((t) => t.name);
for (const n of ["create_sandbox", "run_command", "remove_sandbox", "write_file", "read_file", "checkpoint", "fork"]) {
  assert.ok(names.includes(n), `no tool ${n} in ${names}`);
}
ok("list-tools", String(names.length));

// requests the guard refuses, each answered with a JSON error, and the server serving after each
const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
async function post(headers, body = init) {
  let r;
  try {
    r = await fetch(endpoint.url, { method: "POST", body,
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers } });
  } catch (e) {
    throw new Error(`POST failed: ${e.message} (${e.cause?.code ?? e.cause})`);
  }
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* checked below */ }
  return { status: r.status, text, json, headers: r.headers };
}
const none = await post({});
assert.equal(none.status, 401, none.text);
assert.match(none.json?.error?.message ?? "", /no bearer token/);
assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer/);
await stillServing("a request without a token");
const wrong = await post({ Authorization: `Bearer ${"x".repeat(43)}` });
assert.equal(wrong.status, 401, wrong.text);
assert.match(wrong.json?.error?.message ?? "", /wrong bearer token/);
const wrongScheme = await post({ Authorization: `Basic ${endpoint.token}` });
assert.equal(wrongScheme.status, 401, wrongScheme.text);
await stillServing("a wrong token");
ok("unauthorized", "401");

const foreign = await post({ ...auth, Origin: "http://evil.example" });
assert.equal(foreign.status, 403, foreign.text);
assert.match(foreign.json?.error?.message ?? "", /DNS rebinding/);
const local = await post({ ...auth, Origin: "http://localhost:3000" });
assert.equal(local.status, 200, `a loopback origin is let in: ${local.text}`);
await fetch(endpoint.url, { method: "DELETE", headers: { ...auth, "Mcp-Session-Id": local.headers.get("mcp-session-id") } });
await stillServing("a foreign origin");
ok("foreign-origin", "403");

const oversized = await post(auth, "x".repeat(MAX_BODY + 1));
assert.equal(oversized.status, 413, oversized.text);
assert.match(oversized.json?.error?.message ?? "", /more than 33554432/);
await stillServing("an oversized body");
ok("oversized-body", "413");

// the tools against a real microVM
const created = await must(a.client, "create_sandbox", { workspace: "none" }, LONG);
const id = created.id;
assert.match(id, /^[0-9a-f]{12}$/);
console.log(`made ${id}`);
ok("create", id);

const py = await must(a.client, "run_command", { sandbox: id, command: "python3 -c 'print(6*7)'" });
assert.equal(py.exit_code, 0);
assert.equal(py.stdout, "42\n");
ok("run", py.stdout.trim());

// a second session: its own sandboxes; another session's are not its to remove
const b = connect("kosa8-mcp-http-it-b");
await b.client.connect(b.transport);
assert.notEqual(b.transport.sessionId, a.transport.sessionId);
const notMine = await call(b.client, "remove_sandbox", { sandbox: id });
assert.equal(notMine.isError, true, JSON.stringify(notMine));
assert.match(notMine.content[0].text, /not made by this MCP session/);
const second = (await must(b.client, "create_sandbox", { workspace: "none" }, LONG)).id;
console.log(`made ${second}`);
ok("second-session", second);

await must(a.client, "remove_sandbox", { sandbox: id }, LONG);
assert.ok(!listed().includes(id), `${id} still listed after remove_sandbox`);
ok("remove");

// deleting a session (HTTP DELETE) removes the sandboxes it made and did not keep
await b.transport.terminateSession();
await b.client.close();
await until(`${second} removed after its session was deleted`, () => !listed().includes(second));
ok("deleted-session-removed");

// stopping the server removes those of the sessions still open
const third = (await must(a.client, "create_sandbox", { workspace: "none" }, LONG)).id;
console.log(`made ${third}`);
const kept = (await must(a.client, "create_sandbox", { workspace: "none", keep: true }, LONG)).id;
console.log(`kept ${kept}`);
server.kill("SIGTERM");
await until("the server exited after SIGTERM", () => exited !== null, 300);
const left = listed();
assert.ok(!left.includes(third), `${third} still listed after the server stopped`);
assert.ok(left.includes(kept), `${kept} (keep: true) was removed`);
assert.ok(!fs.existsSync(file), `${file} left behind`);
ok("stopped-removed", JSON.stringify(exited));
await a.client.close().catch(() => {});
process.exit(0);
