// bench/e2b.sh's SDK side: commands.run('true') round trips and a MB MiB upload and download through
// files.write/read, in one sandbox, with E2B's SDK pointed at kosa8 (E2B_* variables). Prints one JSON line.
import { Sandbox } from 'e2b'
import crypto from 'node:crypto'

const rounds = Number(process.argv[2] ?? 3)
const mb = Number(process.argv[3] ?? 100)
const runs = Number(process.argv[4] ?? 20)
const sbx = await Sandbox.create({ metadata: { bench: 'e2b' } })
try {
  await sbx.commands.run('true') // warm
  const run = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    await sbx.commands.run('true')
    run.push(Math.round(performance.now() - t0))
  }
  const data = crypto.randomBytes(mb << 20)
  const up = []
  const down = []
  for (let r = 0; r < rounds; r++) {
    let t0 = performance.now()
    await sbx.files.write('/tmp/big', data)
    up.push(Math.round(performance.now() - t0))
    t0 = performance.now()
    const back = await sbx.files.read('/tmp/big', { format: 'bytes' })
    down.push(Math.round(performance.now() - t0))
    if (back.length !== data.length || !Buffer.from(back).equals(data)) throw new Error('the download differs')
  }
  console.log(JSON.stringify({ run, up, down }))
} finally {
  await sbx.kill()
}
