// A plain E2B SDK script, as a user would write it against E2B's cloud: no kosa8 in it. Pointed at kosa8 by
// E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY and E2B_DOMAIN (`eval "$(kosa8 e2b env)"`). Two sandboxes in all.
// Prints one line per check and then "N passed, N failed"; E2bIT runs it and checks the counts.
import { Sandbox, CommandExitError, NotFoundError, SandboxNotFoundError } from 'e2b'
import assert from 'node:assert/strict'

let passed = 0
let failed = 0
async function check(name, fn) {
  const t0 = Date.now()
  try {
    await fn()
    passed++
    console.log(`ok   ${name} (${Date.now() - t0} ms)`)
  } catch (e) {
    failed++
    console.log(`FAIL ${name}: ${e?.stack ?? e}`)
  }
}

const filesystem = process.env.E2B_TEST_FILESYSTEM !== '0'
const suite = `kosa8-e2b-${process.pid}`
// a laptop's microVMs under emulation (no KVM) boot slower than E2B's cloud answers: wait longer than the 60 s default
const slow = { requestTimeoutMs: 300_000 }
let a, b

await check('two sandboxes created at once', async () => {
  ;[a, b] = await Promise.all([
    Sandbox.create({ metadata: { suite, name: 'a' }, envs: { FROM_CREATE: 'yes' }, timeoutMs: 20 * 60_000, ...slow }),
    Sandbox.create({ metadata: { suite, name: 'b' }, timeoutMs: 20 * 60_000, ...slow }),
  ])
  assert.notEqual(a.sandboxId, b.sandboxId)
})
if (!a || !b) {
  console.log(`${passed} passed, ${failed + 1} failed`)
  process.exit(1)
}

await check('a command runs as user in its home, with the sandbox and command variables', async () => {
  const r = await a.commands.run('whoami; pwd; echo "$FROM_CREATE $FOO"', { envs: { FOO: 'bar' } })
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout, 'user\n/home/user\nyes bar\n')
  assert.equal(r.stderr, '')
})

await check('root and another cwd when asked', async () => {
  const r = await a.commands.run('whoami; pwd', { user: 'root', cwd: '/tmp' })
  assert.equal(r.stdout, 'root\n/tmp\n')
})

await check('a failing command: CommandExitError with its own stdout, stderr and exit code', async () => {
  try {
    await a.commands.run('echo out; echo err >&2; exit 3')
    assert.fail('no error')
  } catch (e) {
    assert.ok(e instanceof CommandExitError, `not a CommandExitError: ${e}`)
    assert.equal(e.exitCode, 3)
    assert.equal(e.stdout, 'out\n')
    assert.equal(e.stderr, 'err\n')
  }
})

await check('onStdout and onStderr see the output as it comes', async () => {
  const out = []
  const err = []
  await a.commands.run('for i in 1 2 3; do echo $i; echo e$i >&2; done', {
    onStdout: (d) => out.push(d),
    onStderr: (d) => err.push(d),
  })
  assert.equal(out.join(''), '1\n2\n3\n')
  assert.equal(err.join(''), 'e1\ne2\ne3\n')
})

await check('a background cat fed by stdin, then stdin closed', async () => {
  const h = await a.commands.run('cat', { background: true, stdin: true })
  await a.commands.sendStdin(h.pid, 'hello ')
  await a.commands.sendStdin(h.pid, 'world\n')
  await a.commands.closeStdin(h.pid)
  const r = await h.wait()
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout, 'hello world\n')
})

await check('a background sleep is listed, then killed: kill true, then false', async () => {
  const h = await a.commands.run('sleep 600', { background: true, timeoutMs: 0 })
  const listed = await a.commands.list()
  const mine = listed.find((p) => p.pid === h.pid)
  assert.ok(mine, `pid ${h.pid} not in ${JSON.stringify(listed)}`)
  assert.equal(mine.cmd, '/bin/bash')
  assert.deepEqual(mine.args, ['-l', '-c', 'sleep 600'])
  assert.equal(await a.commands.kill(h.pid), true)
  await h.wait().catch(() => {})
  assert.equal(await a.commands.kill(h.pid), false)
  assert.ok(!(await a.commands.list()).some((p) => p.pid === h.pid))
})

await check('a command past its timeoutMs is ended', async () => {
  const t0 = Date.now()
  await assert.rejects(a.commands.run('sleep 60', { timeoutMs: 2000 }))
  assert.ok(Date.now() - t0 < 30000)
})

await check('a terminal: pty.create, resize, input typed, its output', async () => {
  let out = ''
  const dec = new TextDecoder()
  const t = await a.pty.create({ cols: 80, rows: 24, onData: (d) => { out += dec.decode(d, { stream: true }) } })
  await a.pty.resize(t.pid, { cols: 100, rows: 30 })
  await a.pty.sendInput(t.pid, new TextEncoder().encode('stty size; echo pty-$((6*7)); exit\n'))
  const r = await t.wait()
  assert.equal(r.exitCode, 0)
  assert.match(out, /30 100/)
  assert.match(out, /pty-42/)
})

await check('the same path, different content in each sandbox, read back', async () => {
  await Promise.all([a.files.write('/tmp/same.txt', 'from a'), b.files.write('/tmp/same.txt', 'from b')])
  assert.equal(await a.files.read('/tmp/same.txt'), 'from a')
  assert.equal(await b.files.read('/tmp/same.txt'), 'from b')
})

await check('a relative path is in the home, the file is the user\'s, its directories made', async () => {
  const info = await a.files.write('deep/er/note.txt', 'note')
  assert.equal(info.path, '/home/user/deep/er/note.txt')
  const r = await a.commands.run('stat -c %U /home/user/deep/er/note.txt /home/user/deep; cat deep/er/note.txt')
  assert.equal(r.stdout, 'user\nuser\nnote')
})

await check('bytes round trip (all 256 values, 3 MiB)', async () => {
  const data = new Uint8Array(3 * 1024 * 1024)
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 11)) & 0xff
  await a.files.write('/tmp/blob.bin', data.buffer)
  const back = await a.files.read('/tmp/blob.bin', { format: 'bytes' })
  assert.equal(back.length, data.length)
  assert.ok(Buffer.from(back).equals(Buffer.from(data)))
  const r = await a.commands.run('wc -c < /tmp/blob.bin')
  assert.equal(r.stdout.trim(), String(data.length))
})

await check('several files in one write', async () => {
  const infos = await a.files.write([
    { path: '/tmp/m1.txt', data: 'one' },
    { path: '/tmp/m2.txt', data: 'two' },
  ])
  assert.deepEqual(infos.map((i) => i.path).sort(), ['/tmp/m1.txt', '/tmp/m2.txt'])
  assert.equal(await a.files.read('/tmp/m2.txt'), 'two')
})

await check('a missing file raises NotFoundError', async () => {
  await assert.rejects(a.files.read('/tmp/no-such-file'), (e) => e instanceof NotFoundError)
})

if (filesystem) {
  await check('list, exists, makeDir (true then false), rename, remove', async () => {
    assert.equal(await a.files.makeDir('/tmp/d'), true)
    assert.equal(await a.files.makeDir('/tmp/d'), false)
    await a.files.write('/tmp/d/x.txt', 'x')
    const names = (await a.files.list('/tmp/d')).map((e) => e.name)
    assert.deepEqual(names, ['x.txt'])
    assert.equal(await a.files.exists('/tmp/d/x.txt'), true)
    const moved = await a.files.rename('/tmp/d/x.txt', '/tmp/d/y.txt')
    assert.equal(moved.path, '/tmp/d/y.txt')
    assert.equal(await a.files.exists('/tmp/d/x.txt'), false)
    await a.files.remove('/tmp/d/y.txt')
    assert.equal(await a.files.exists('/tmp/d/y.txt'), false)
  })

  await check('watch sees a write', async () => {
    const events = []
    const w = await a.files.watchDir('/tmp/d', (e) => events.push(e))
    await a.files.write('/tmp/d/watched.txt', 'w')
    for (let i = 0; i < 100 && !events.some((e) => e.name === 'watched.txt'); i++) {
      await new Promise((r) => setTimeout(r, 100))
    }
    await w.stop()
    assert.ok(events.some((e) => e.name === 'watched.txt'), JSON.stringify(events))
  })
}

await check('getInfo', async () => {
  const info = await a.getInfo()
  assert.equal(info.sandboxId, a.sandboxId)
  assert.equal(info.state, 'running')
  assert.equal(info.metadata.name, 'a')
  assert.equal(info.sandboxDomain, 'localhost')
  assert.ok(info.endAt > info.startedAt)
})

await check('setTimeout moves the end', async () => {
  const before = (await a.getInfo()).endAt
  await a.setTimeout(30 * 60 * 1000)
  const after = (await a.getInfo()).endAt
  assert.ok(after > before, `${after} is not after ${before}`)
})

await check('list, by metadata', async () => {
  const found = await Sandbox.list({ query: { metadata: { suite } } }).nextItems()
  assert.deepEqual(found.map((s) => s.sandboxId).sort(), [a.sandboxId, b.sandboxId].sort())
  const onlyB = await Sandbox.list({ query: { metadata: { suite, name: 'b' } } }).nextItems()
  assert.deepEqual(onlyB.map((s) => s.sandboxId), [b.sandboxId])
})

await check('pause, then connect: the file survived and commands run', async () => {
  await b.files.write('/home/user/keep.txt', 'kept')
  assert.equal(await b.pause(slow), true)
  const paused = await Sandbox.list({ query: { metadata: { suite }, state: ['paused'] } }).nextItems()
  assert.deepEqual(paused.map((s) => s.sandboxId), [b.sandboxId])
  assert.equal(await b.isRunning(), false)
  const b2 = await Sandbox.connect(b.sandboxId, slow)
  assert.equal(await b2.files.read('/home/user/keep.txt'), 'kept')
  assert.equal((await b2.commands.run('echo resumed')).stdout, 'resumed\n')
  assert.equal((await b2.getInfo()).state, 'running')
})

await check('kill, then connect: not found', async () => {
  assert.equal(await a.kill(), true)
  await assert.rejects(Sandbox.connect(a.sandboxId), (e) => e instanceof SandboxNotFoundError)
  assert.equal(await Sandbox.kill(a.sandboxId), false)
})

await check('the other sandbox is untouched by the kill', async () => {
  assert.equal((await b.commands.run('cat /tmp/same.txt')).stdout, 'from b')
  assert.equal(await b.kill(), true)
})

console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
