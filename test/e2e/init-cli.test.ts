// `meshctl init` with the built binaries: what it writes (store objects, 0600 files, the agent's seed), a
// second init that changes nothing, a store held by a running control plane, and the control-plane process
// refusing a store that declares another node unless it is started as a restore (ADR 0053).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import { loadMeshconfig } from '../../api/client/meshconfig.ts';
import { hashToken } from '../../api/server/access/auth.ts';
import { controlPlanePaths } from '../../api/server/pki/first-start.ts';
import { certInfo } from '../../api/server/pki/pki.ts';
import { openStore } from '../../api/store/index.ts';
import { freePort } from '../../agent/testing.ts';
import { buildCli, type BuiltCli } from './cli-harness.ts';
import { initWorld, mode, runControlPlane } from './init-helpers.ts';

/** Every file under `dir` with its size, mode, mtime and content (to show nothing changed). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else out[p] = `${st.size} ${st.mode} ${st.mtimeMs} ${readFileSync(p, 'base64')}`;
    }
  };
  walk(dir);
  return out;
}

describe('meshctl init', () => {
  let cli: BuiltCli;
  before(async () => {
    cli = await buildCli();
  });
  after(() => cli.cleanup());

  it('creates the PKI, the admin credential, the Mesh, this Node, the built-in modules, their assignments and the agent seed', async (t) => {
    const w = initWorld(t, cli);
    const port = await freePort();
    const r = await w.init([
      '--listen',
      `127.0.0.1:${port}`,
      '--site',
      'lab',
      '--san',
      'cp.example.test',
      '--san',
      '10.9.8.7',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Initialised a new mesh on node "cp-1"/);
    // From a checkout (`node dist/meshctl.js`), the printed commands run the bundles beside it with this node.
    const dist = dirname(cli.bin);
    assert.ok(
      r.stdout.includes(
        `\n       ${process.execPath} ${dist}/mesh-agent.js run --state-dir ${w.stateDir} --root ${w.root}\n`,
      ),
      r.stdout,
    );
    assert.match(r.stdout, /meshctl token create/);
    const p = controlPlanePaths(w.dataDir);
    const bootstrapPath = join(w.stateDir, 'bootstrap-declaration.json');
    for (const f of [p.meshconfig, p.caKey, p.key, p.tokenHash, bootstrapPath]) assert.equal(mode(f), 0o600, f);
    const names = certInfo(readFileSync(p.cert, 'utf8'));
    assert.ok(
      names.dnsNames.includes('cp.example.test') &&
        names.ipAddresses.includes('10.9.8.7') &&
        names.ipAddresses.includes('127.0.0.1'),
    );
    const admin = loadMeshconfig(p.meshconfig);
    assert.equal(admin.server, `https://127.0.0.1:${port}`);
    // The local socket the control plane will serve, as the meshconfig's extension (test/e2e/local-socket.test.ts).
    assert.equal(admin.socketPath, resolve(w.dataDir, 'run', 'api.sock'));

    const store = await openStore({ dir: p.store });
    try {
      assert.deepEqual(store.get('meshes', 'mesh')?.status, { controlPlaneNode: 'cp-1', hubNode: 'cp-1' });
      assert.deepEqual(store.get('nodes', 'cp-1')?.spec, { site: 'lab' });
      assert.deepEqual(
        store.list('assignments').items.map((a) => [a.metadata.name, a.spec]),
        [
          ['control-plane', { module: 'control-plane', node: 'cp-1' }],
          ['overlay-hub', { module: 'overlay-hub', node: 'cp-1' }],
        ],
      );
      const cpModule = store.get('modules', 'control-plane') as {
        spec: { port: number; resources: Array<{ spec: { command: string[] } }> };
      };
      assert.equal(cpModule.spec.port, port);
      assert.deepEqual(cpModule.spec.resources[0].spec.command, [
        process.execPath,
        join(dirname(cli.bin), 'mesh-control-plane.js'),
        '--data-dir',
        w.dataDir,
        '--listen',
        `127.0.0.1:${port}`,
        '--node',
        'cp-1',
        '--san',
        'cp.example.test',
        '--san',
        '10.9.8.7',
      ]);
      assert.ok(store.get('modules', 'overlay-hub'));
      const decl = store.get('declarations', 'cp-1') as { spec: { resources: Array<{ id: string }> } };
      assert.deepEqual(
        decl.spec.resources.map((x) => x.id),
        ['control-plane/server', 'overlay-hub/dir', 'overlay-hub/role'],
      );
      const boot = JSON.parse(readFileSync(bootstrapPath, 'utf8'));
      assert.deepEqual(boot.declaration, decl, 'the agent is seeded with the Declaration exactly as stored');
      assert.equal(boot.nodeName, 'cp-1');
      assert.equal(boot.connection.server, admin.server);
      assert.equal(boot.connection.caData, admin.caData);
      assert.notEqual(boot.connection.token, admin.token, 'the agent gets a node credential, not the admin one');
      const secret = store.get('secrets', 'node.cp-1') as unknown as { data: { sha256: string } };
      assert.equal(secret.data.sha256, hashToken(boot.connection.token), "only the credential's hash is stored");
    } finally {
      await store.close();
    }
  });

  it('refuses a second init on an initialised data directory and changes nothing', async (t) => {
    const w = initWorld(t, cli);
    assert.equal((await w.init(['--listen', '127.0.0.1:16443'])).code, 0);
    const before = snapshot(w.dir);
    const again = await w.init(['--listen', '127.0.0.1:16443', '--name', 'other']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is already initialised: its store holds Mesh "mesh" \(control-plane node "cp-1"/);
    assert.match(again.stderr, /Nothing was changed/);
    assert.doesNotMatch(again.stderr, /at .*\.js:\d+/, 'no stack trace');
    assert.deepEqual(snapshot(w.dir), before);
  });

  it('refuses while a control plane holds the store, and refuses bad flags with usage errors', async (t) => {
    const w = initWorld(t, cli);
    const held = await openStore({ dir: controlPlanePaths(w.dataDir).store });
    try {
      const r = await w.init(['--listen', '127.0.0.1:16443']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`locked by process ${process.pid}.*is the control plane running\\?`));
    } finally {
      await held.close();
    }
    const badPort = await w.init(['--listen', '127.0.0.1:0']);
    assert.equal(badPort.code, 2);
    assert.match(badPort.stderr, /--listen must be HOST:PORT with a port from 1 to 65535/);
    const badName = await cli.run([
      'init',
      '--data-dir',
      w.dataDir,
      '--agent-state-dir',
      w.stateDir,
      '--name',
      'Not_A_Name',
      '--listen',
      '127.0.0.1:1',
    ]);
    assert.equal(badName.code, 2);
    assert.match(badName.stderr, /Node "Not_A_Name" would be invalid/);
  });
});

describe('mesh-control-plane on a store made by init', () => {
  let cli: BuiltCli;
  before(async () => {
    cli = await buildCli();
  });
  after(() => cli.cleanup());

  it('refuses a store that declares another node, serves it on its own node, and takes it over only with --restore', async (t) => {
    const w = initWorld(t, cli);
    assert.equal((await w.init(['--listen', '127.0.0.1:16443'])).code, 0);
    const args = ['--data-dir', w.dataDir, '--listen', '127.0.0.1:0'];

    const refused = await runControlPlane(cli, [...args, '--node', 'other']);
    assert.equal(refused.serving, false);
    assert.equal(await refused.exited, 1);
    assert.match(
      refused.output(),
      /this store declares node \\"cp-1\\" as the control-plane node .* but this process runs on node \\"other\\"/,
    );
    assert.match(refused.output(), /declared, not elected: refusing to serve a second copy of the mesh.*--restore/);

    const own = await runControlPlane(cli, [...args, '--node', 'cp-1']);
    assert.equal(own.serving, true, own.output());
    assert.equal(await own.stop(), 0);

    const restored = await runControlPlane(cli, [...args, '--node', 'new-cp', '--restore']);
    t.after(() => restored.stop());
    assert.equal(restored.serving, true, restored.output());
    assert.match(
      restored.output(),
      /"msg":"Restored the control plane onto this node","node":"new-cp","previous":"cp-1"/,
    );
    const client = createClient(loadMeshconfig(w.meshconfig));
    t.after(() => client.close());
    assert.equal(
      ((await client.get('meshes', 'mesh')) as { status: { controlPlaneNode: string } }).status.controlPlaneNode,
      'new-cp',
    );
    assert.equal(
      ((await client.get('assignments', 'control-plane')) as { spec: { node: string } }).spec.node,
      'new-cp',
    );
    const command = (
      (await client.get('modules', 'control-plane')) as { spec: { resources: Array<{ spec: { command: string[] } }> } }
    ).spec.resources[0].spec.command;
    assert.equal(command[command.indexOf('--node') + 1], 'new-cp');
    assert.ok(await client.get('nodes', 'new-cp'));
    assert.equal(await restored.stop(), 0);

    const oldNode = await runControlPlane(cli, [...args, '--node', 'cp-1']);
    assert.equal(oldNode.serving, false, 'after the restore the old node is the other one');
    assert.match(oldNode.output(), /declares node \\"new-cp\\"/);
  });
});
