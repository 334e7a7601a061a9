// McpIT's client: the official MCP TypeScript SDK's Client over stdio, driving `kosa8 mcp` against real microVMs.
// Usage: node mcp-it.mjs '<the kosa8 command as a JSON array>'. Prints one line per step ("ok STEP ..."), the
// ids it made ("made ID"), and exits non-zero at the first step that fails, saying why.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFileSync } from "node:child_process";
import assert from "node:assert/strict";

const kosa = JSON.parse(process.argv[2]);
const LONG = { timeout: 15 * 60 * 1000 };
const SHORT = { timeout: 3 * 60 * 1000 };

const transport = new StdioClientTransport({
  command: kosa[0], args: [...kosa.slice(1), "mcp"], env: process.env, stderr: "inherit", cwd: process.cwd(),
});
const client = new Client({ name: "kosa8-mcp-it", version: "1.0.0" });
const clientErrors = [];
client.onerror = (e) => clientErrors.push(String(e?.message ?? e));

function ok(step, detail = "") {
  console.log(`ok ${step}${detail ? " " + detail : ""}`);
}

async function call(name, args, opts = SHORT) {
  return client.callTool({ name, arguments: args }, undefined, opts);
}

/** A tool's answer that must have succeeded: its structured content. */
async function must(name, args, opts) {
  const r = await call(name, args, opts);
  assert.ok(!r.isError, `${name} failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

/** A tool's answer that must be an error result: its text. */
async function mustFail(name, args, opts) {
  const r = await call(name, args, opts);
  assert.equal(r.isError, true, `${name} should have failed: ${JSON.stringify(r)}`);
  return r.content.map((c) => c.text).join("\n");
}

async function stillServing(after) {
  const t = await client.listTools();
  assert.ok(t.tools.length > 10, `after ${after} the server lists no tools`);
}

/** Reads a background process's output until `until(text, answer)` holds. */
async function readUntil(sandbox, proc, until) {
  let from = 0;
  let text = "";
  for (let i = 0; i < 60; i++) {
    const o = await must("read_process_output", { sandbox, process: proc, from, wait_seconds: 5 });
    text += o.output;
    from = o.next;
    if (until(text, o)) return { text, last: o };
  }
  throw new Error(`process ${proc} never got there; output so far: ${text}`);
}

await client.connect(transport);
// what the client's own reader passes on: the answers to raw lines written below
const raw = [];
const onmessage = transport.onmessage;
transport.onmessage = (m, extra) => {
  if (m && m.error && (m.id === null || m.id === undefined || String(m.id).startsWith("raw-"))) {
    raw.push(m);
    return;
  }
  onmessage(m, extra);
};

// the tools, each with a schema and a description; no policy changes without --allow-policy-changes
const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
for (const n of ["create_sandbox", "list_sandboxes", "remove_sandbox", "run_command", "start_process",
  "read_process_output", "send_process_stdin", "kill_process", "list_processes", "write_file", "read_file",
  "checkpoint", "list_checkpoints", "rewind", "fork", "diff", "network_policy", "list_files", "stat_file",
  "make_directory", "remove_path", "rename_path"]) {
  assert.ok(names.includes(n), `no tool ${n} in ${names}`);
}
for (const n of ["allow_host", "deny_host", "grant_secret"]) {
  assert.ok(!names.includes(n), `${n} is listed without --allow-policy-changes`);
}
for (const t of tools) {
  assert.equal(t.inputSchema.type, "object", `${t.name} has no object schema`);
  assert.ok(t.description.length > 40, `${t.name}'s description is too short to act on`);
}
ok("list-tools", String(tools.length));

// a policy change is refused without the flag
const refused = await mustFail("create_sandbox", { workspace: "none", allow: ["pypi.org"] });
assert.match(refused, /allow-policy-changes/);
ok("policy-refused");

const created = await must("create_sandbox", { workspace: "none" }, LONG);
const id = created.id;
assert.match(id, /^[0-9a-f]{12}$/);
console.log(`made ${id}`);
ok("create", id);

const listed = (await must("list_sandboxes", {})).sandboxes.find((s) => s.id === id);
assert.equal(listed?.createdBy, "mcp:kosa8-mcp-it");
const ls = execFileSync(kosa[0], [...kosa.slice(1), "ls"], { env: process.env, encoding: "utf8" });
assert.match(ls, new RegExp(`${id}.*mcp:kosa8-mcp-it`), ls);
ok("listed-as-mcp");

const py = await must("run_command", { sandbox: id, command: "python3 -c 'print(6*7)'" });
assert.equal(py.exit_code, 0);
assert.equal(py.stdout, "42\n");
ok("run", py.stdout.trim());

const cat = await must("run_command", { sandbox: id, argv: ["cat"], stdin: "from stdin" });
assert.equal(cat.stdout, "from stdin");
const code = await must("run_command", { sandbox: id, command: "echo oops >&2; exit 3" });
assert.equal(code.exit_code, 3);
assert.equal(code.stderr, "oops\n");
const slow = await must("run_command", { sandbox: id, command: "sleep 60", timeout_seconds: 2 });
assert.equal(slow.timed_out, true);
assert.notEqual(slow.exit_code, 0);
ok("run-stdin-exit-timeout");

// a call that runs past the server's heartbeat sends progress to a client that asked for it
const beats = [];
const heard = await client.callTool({ name: "run_command", arguments: { sandbox: id, command: "sleep 7" } },
  undefined, { timeout: 60000, onprogress: (p) => beats.push(p), resetTimeoutOnProgress: true });
assert.ok(!heard.isError, JSON.stringify(heard));
assert.ok(beats.length >= 1, "no progress notification during a 7 s command");
ok("progress", String(beats.length));

const bg = await must("start_process", { sandbox: id, command: "for i in 1 2 3; do echo line$i; sleep 0.2; done; sleep 600", tag: "it" });
const proc = bg.id;
await readUntil(id, proc, (text) => text.includes("line3"));
await must("kill_process", { sandbox: id, process: proc, signal: "KILL" });
const killed = await readUntil(id, proc, (_, o) => o.complete);
assert.equal(killed.last.exit_code, 137, JSON.stringify(killed.last));
ok("background-read-killed", proc);

const echo = await must("start_process", { sandbox: id, argv: ["cat"], stdin: true });
await must("send_process_stdin", { sandbox: id, process: echo.id, data: "ping\n", close: true });
const echoed = await readUntil(id, echo.id, (_, o) => o.complete);
assert.equal(echoed.text, "ping\n");
ok("background-stdin");

await must("write_file", { sandbox: id, path: "/root/before.txt", content: "kept" });
assert.equal((await must("read_file", { sandbox: id, path: "/root/before.txt" })).content, "kept");
const bin = Buffer.from([0, 1, 2, 255, 254]).toString("base64");
await must("write_file", { sandbox: id, path: "/root/bin.dat", content: bin, encoding: "base64", mode: "600" });
const binBack = await must("read_file", { sandbox: id, path: "/root/bin.dat", encoding: "base64" });
assert.equal(binBack.content, bin);
assert.equal(binBack.mode, "600");
ok("write-read");

// the daemon's file operations
await must("make_directory", { sandbox: id, path: "/root/d/e" });
assert.match(await mustFail("make_directory", { sandbox: id, path: "/root/d/e" }), /EXISTS/);
await must("write_file", { sandbox: id, path: "/root/d/e/f.txt", content: "12345" });
const st = await must("stat_file", { sandbox: id, path: "/root/d/e/f.txt" });
assert.equal(st.type, "file");
assert.equal(st.size, 5);
const listing = await must("list_files", { sandbox: id, path: "/root/d", depth: 2 });
assert.deepEqual(listing.entries.map((e) => e.path), ["/root/d/e", "/root/d/e/f.txt"]);
await must("rename_path", { sandbox: id, from: "/root/d/e/f.txt", to: "/root/d/g.txt" });
await must("remove_path", { sandbox: id, path: "/root/d", recursive: true });
assert.match(await mustFail("stat_file", { sandbox: id, path: "/root/d" }), /NOT_FOUND/);
ok("file-operations");

const cp = await must("checkpoint", { sandbox: id, message: "before after.txt" }, LONG);
assert.ok(cp.id, JSON.stringify(cp));
ok("checkpoint", cp.id);
const cps = (await must("list_checkpoints", { sandbox: id })).checkpoints;
assert.ok(cps.some((c) => c.id === cp.id));
ok("list-checkpoints");

await must("write_file", { sandbox: id, path: "/root/after.txt", content: "gone soon" });
assert.equal((await must("read_file", { sandbox: id, path: "/root/after.txt" })).content, "gone soon");

const fork = await must("fork", { sandbox: id, checkpoint: cp.id }, LONG);
console.log(`made ${fork.id}`);
const inFork = await must("run_command", { sandbox: fork.id, command: "cat /root/before.txt; test -e /root/after.txt || echo absent" });
assert.equal(inFork.stdout, "keptabsent\n");
ok("fork", fork.id);

await must("rewind", { sandbox: id, checkpoint: cp.id }, LONG);
await mustFail("read_file", { sandbox: id, path: "/root/after.txt" });
assert.equal((await must("read_file", { sandbox: id, path: "/root/before.txt" })).content, "kept");
ok("rewind");

// errors: each an MCP error, and the server still serving after it
transport._process.stdin.write("{this is not json\n");
transport._process.stdin.write('{"jsonrpc":"2.0","id":"raw-2","params":{}}\n');
for (let i = 0; i < 50 && raw.length + clientErrors.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
assert.ok(raw.length + clientErrors.length >= 2, `no answer to malformed lines: ${JSON.stringify(raw)} ${clientErrors}`);
if (raw.length > 0) {
  assert.ok(raw.every((m) => m.error.code === -32700 || m.error.code === -32600), JSON.stringify(raw));
}
await stillServing("malformed requests");
ok("malformed", JSON.stringify(raw.map((m) => m.error.code)) + " " + clientErrors.length);

let unknown;
try {
  const r = await call("no_such_tool", {});
  unknown = r.isError ? "isError" : null;
} catch (e) {
  unknown = String(e.code ?? e.message);
}
assert.ok(unknown, "an unknown tool did not fail");
await stillServing("an unknown tool");
ok("unknown-tool", unknown);

const big = await mustFail("write_file", { sandbox: id, path: "/root/big.txt", content: "x".repeat(4 * 1024 * 1024 + 1) });
assert.match(big, /more than the 4194304/);
await stillServing("an oversized argument");
ok("oversized");

const escape = await mustFail("read_file", { sandbox: id, path: "/root/../../etc/shadow" });
assert.match(escape, /\.\./);
const relative = await mustFail("write_file", { sandbox: id, path: "x/../../y", content: "z" });
assert.match(relative, /absolute/);
await stillServing("a path escape");
ok("path-escape");

const notMine = await mustFail("remove_sandbox", { sandbox: "000000000000" });
assert.match(notMine, /not made by this MCP session/);
await must("remove_sandbox", { sandbox: id }, LONG);
const after = (await must("list_sandboxes", {})).sandboxes.map((s) => s.id);
assert.ok(!after.includes(id), `${id} is still listed after remove_sandbox`);
ok("remove");

await client.close();
ok("closed");
