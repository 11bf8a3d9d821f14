// The control plane as shipped runs with its V8 old space capped at 1 GiB and without V8's memory reducer: the
// bundle's shebang carries the flags (hack/build.mjs), the process it starts has that heap limit and the flag, and the
// local mesh and the scale bench start the control plane with the same flags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildCli } from '../test/e2e/cli-harness.ts';
import { CONTROL_PLANE_NODE_FLAGS } from '../test/control-plane-process.ts';
import { REPO_ROOT } from '../test/repo-root.ts';

const MIB = 2 ** 20;

test('the control-plane bundle, started by its shebang, has a V8 heap limit of about 1 GiB and no memory reducer', async (t) => {
  const built = await buildCli();
  const probeDir = mkdtempSync(join(tmpdir(), 'meshctl-heap-probe-'));
  t.after(() => {
    built.cleanup();
    rmSync(probeDir, { recursive: true, force: true });
  });
  const bundle = join(dirname(built.bin), 'mesh-control-plane.js');
  const shebang = readFileSync(bundle, 'utf8').split('\n', 1)[0];
  assert.deepEqual(
    shebang.split(' ').slice(3),
    [...CONTROL_PLANE_NODE_FLAGS],
    `the bench's flags are the shebang's: ${shebang}`,
  );
  // Preloaded into the node the shebang starts: prints its heap limit and flags and exits before the control plane runs.
  const probe = join(probeDir, 'probe.cjs');
  writeFileSync(
    probe,
    'process.stdout.write(JSON.stringify({ limit: require("node:v8").getHeapStatistics().heap_size_limit, ' +
      'execArgv: process.execArgv })); process.exit(0);\n',
  );
  const started = JSON.parse(
    execFileSync(bundle, [], { env: { ...process.env, NODE_OPTIONS: `--require ${probe}` }, encoding: 'utf8' }),
  ) as { limit: number; execArgv: string[] };
  const limit = started.limit;
  assert.ok(
    started.execArgv.includes('--no-memory-reducer'),
    `V8's memory reducer is off in the process the shebang starts: ${started.execArgv.join(' ')}`,
  );
  assert.ok(
    limit >= 1024 * MIB + 3 * 64 * MIB && limit < 1300 * MIB,
    `heap limit ${limit / MIB} MiB: the old space's 1 GiB and the young generation of 64 MiB semi-spaces`,
  );
  const local = readFileSync(join(REPO_ROOT, 'hack', 'local-mesh.mjs'), 'utf8');
  assert.match(
    local,
    new RegExp(
      `CONTROL_PLANE_NODE_FLAGS = ${JSON.stringify(CONTROL_PLANE_NODE_FLAGS).replace(/[[\]]/g, '\\$&').replace(/"/g, "'").replace(/,/g, ',\\s*')};`,
    ),
    'npm start runs it with the same flags',
  );
});
