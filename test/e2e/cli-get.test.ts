// meshctl get against the real server: tables, output formats, selectors, errors and -w.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMeshconfig } from '../../api/client/meshconfig.ts';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import type { Node } from '../../api/v1alpha1/generated/node.ts';
import { kindByPlural } from '../../api/v1alpha1/kinds.ts';
import { renderTable } from '../../cli/printers/table.ts';
import { startServer, type TestServer } from '../harness.ts';
import { buildCli, eventually, type BuiltCli } from './cli-harness.ts';

let server: TestServer;
let cli: BuiltCli;
let client: HttpClient;
const dir = mkdtempSync(join(tmpdir(), 'meshctl-cli-get-'));

const node = (name: string, site: string, labels: Record<string, string>): Node => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name, labels },
  spec: { site, endpoint: `192.0.2.${name.length}:51820` },
});

before(async () => {
  [server, cli] = await Promise.all([startServer(), buildCli()]);
  client = createClient(server.config);
  await client.create('nodes', node('alpha', 'home', { role: 'web' }));
  await client.create('nodes', node('beta', 'office', { role: 'db' }));
});
after(async () => {
  client?.close();
  await server?.stop();
  cli?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const meshctl = (...args: string[]) => cli.run(args, { config: server.meshconfigPath });

test('get prints a table: NAME, the kind columns, AGE', async () => {
  const r = await meshctl('get', 'nodes');
  assert.equal(r.code, 0, r.stderr);
  const [header, ...rows] = r.stdout.trimEnd().split('\n');
  assert.match(header, /^NAME +SITE +REACHABLE +LAST SEEN +DESIRED +APPLIED +DECLARATION +AGE$/);
  assert.deepEqual(
    rows.map((l) => l.split(/ +/).slice(0, 2)),
    [
      ['alpha', 'home'],
      ['beta', 'office'],
    ],
  );
  assert.match(rows[0], / \d+s$/);
  const withoutAge = (text: string) =>
    text
      .split('\n')
      .map((l) => l.replace(/ +(\S+)$/, ''))
      .join('\n');
  for (const alias of ['node', 'no', 'Nodes', 'NODE', 'nodes.meshctl.dev']) {
    assert.equal(withoutAge((await meshctl('get', alias)).stdout), withoutAge(r.stdout), alias);
  }
});

test('-o wide adds the priority columns; -l filters; --field-selector filters', async () => {
  const wide = await meshctl('get', 'nodes', '-o', 'wide');
  assert.match(wide.stdout.split('\n')[0], /ENDPOINT +OVERLAY IP +PUBLIC KEY +AGENT +AGE$/);
  assert.match(wide.stdout, /alpha +home .*192\.0\.2\.5:51820/);
  const web = await meshctl('get', 'nodes', '-l', 'role=web', '-o', 'name');
  assert.equal(web.stdout, 'node/alpha\n');
  const office = await meshctl('get', 'nodes', '--field-selector', 'spec.site=office', '-o', 'name');
  assert.equal(office.stdout, 'node/beta\n');
  const none = await meshctl('get', 'nodes', '-l', 'role=nothing');
  assert.equal(none.code, 0);
  assert.equal(none.stdout, '');
  assert.equal(none.stderr, 'No resources found\n');
});

test("a list's table is printed by the server (a Table, no objects sent) and reads as the objects printed here", async () => {
  // alpha with a status, so that conditions, dates, integers and wide columns have cells.
  const alpha = await client.get('nodes', 'alpha');
  const now = new Date().toISOString();
  const reachable = { type: 'Reachable', status: 'True', reason: 'Heartbeat', message: '', lastTransitionTime: now };
  await client.updateStatus('nodes', {
    ...alpha,
    status: {
      lastSeen: now,
      conditions: [reachable],
      declaration: { desiredGeneration: 3, appliedGeneration: 2 },
      overlay: { address: '100.64.0.7' },
      agentVersion: '1.2.3',
    },
  });
  // The AGE and LAST SEEN cells may tick over between the two renderings: compared as "<n>s".
  const seconds = (text: string) => text.replace(/\b\d+s\b/g, 'Ns');
  for (const args of [[], ['-o', 'wide'], ['--show-labels'], ['-l', 'role=web'], ['--no-headers']]) {
    const before = server.app.stats().listSerializations;
    const r = await meshctl('get', 'nodes', ...args);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.app.stats().listSerializations, before, `get nodes ${args.join(' ')}: no JSON list was sent`);
    const objects = (await client.list('nodes', { labelSelector: args[0] === '-l' ? args[1] : undefined })).items;
    let local = renderTable(kindByPlural('nodes')!, objects, {
      wide: args[1] === 'wide',
      showLabels: args[0] === '--show-labels',
    });
    if (args[0] === '--no-headers') local = local.slice(local.indexOf('\n') + 1);
    assert.equal(seconds(r.stdout), seconds(local), `get nodes ${args.join(' ')}`);
  }
  const all = await meshctl('get', 'nodes,modules');
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout, /^node\/alpha +home +True +\d+s +3 +2 /m, 'kind-prefixed names and the cells of alpha');
});

test('-o yaml/json: one name prints the object, a list prints a List; node/name form', async () => {
  const yaml = await meshctl('get', 'node', 'alpha', '-o', 'yaml');
  assert.match(yaml.stdout, /^apiVersion: meshctl\.dev\/v1alpha1\nkind: Node\nmetadata:\n {2}name: alpha\n/);
  const one = JSON.parse((await meshctl('get', 'node/alpha', '-o', 'json')).stdout);
  assert.equal(one.metadata.name, 'alpha');
  const list = JSON.parse((await meshctl('get', 'nodes', '-o', 'json')).stdout);
  assert.equal(list.kind, 'List');
  assert.deepEqual(
    list.items.map((o: KubeObject) => o.metadata.name),
    ['alpha', 'beta'],
  );
  const listYaml = await meshctl('get', 'nodes', '-o', 'yaml');
  assert.match(listYaml.stdout, /^apiVersion: v1\nkind: List\nitems:\n/);
});

test('NotFound reads like kubectl and exits 1; found names are still printed', async () => {
  const r = await meshctl('get', 'node', 'alpha', 'ghost');
  assert.equal(r.code, 1);
  assert.match(r.stdout, /^NAME .*\nalpha /);
  assert.equal(r.stderr, 'Error from server (NotFound): nodes "ghost" not found\n');
});

test('an unknown resource type and bad flags: clear messages, no stack traces, exit codes 1 and 2', async () => {
  const unknown = await meshctl('get', 'gadgets');
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr, 'error: the server doesn\'t have a resource type "gadgets"\n');
  const typo = await meshctl('get', 'nodez');
  assert.equal(typo.code, 1);
  assert.equal(typo.stderr, 'error: the server doesn\'t have a resource type "nodez"; did you mean "nodes"?\n');
  const flag = await meshctl('get', 'nodes', '--colour');
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /^error: unknown flag: --colour\nSee 'meshctl get --help' for usage\.\n$/);
  const output = await meshctl('get', 'nodes', '-o', 'xml');
  assert.equal(output.code, 2);
  const command = await meshctl('frobnicate');
  assert.equal(command.code, 2);
  assert.match(command.stderr, /unknown command "frobnicate" for "meshctl"/);
  const help = await meshctl('get', '--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage:\n {2}meshctl get/);
});

test('an unreachable control plane and a missing meshconfig are explained', async () => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const cfg = join(dir, 'down.meshconfig');
  writeMeshconfig(cfg, { ...server.config, server: `https://127.0.0.1:${port}` });
  const down = await cli.run(['get', 'nodes'], { config: cfg });
  assert.equal(down.code, 1);
  assert.equal(
    down.stderr,
    `error: the control plane at https://127.0.0.1:${port} is unreachable (connect ECONNREFUSED 127.0.0.1:${port})\n`,
  );
  const empty = mkdtempSync(join(dir, 'empty-'));
  const none = await cli.run(['get', 'nodes'], { cwd: empty, env: { HOME: empty } });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /^error: no meshconfig found: pass --config FILE or set MESHCONFIG/);
  const viaEnv = await cli.run(['get', 'nodes', '-o', 'name'], {
    cwd: empty,
    env: { HOME: empty, MESHCONFIG: server.meshconfigPath },
  });
  assert.equal(viaEnv.stdout, 'node/alpha\nnode/beta\n');
});

test('get -w prints the table, then a row per change, and ends cleanly on SIGINT', async () => {
  const watch = cli.start(['get', 'nodes', '-w'], { config: server.meshconfigPath });
  await eventually(() => watch.stdout().includes('beta'), 'the initial table');
  await client.patch('nodes', 'alpha', { spec: { site: 'lab' } });
  await eventually(() => /\nalpha +lab /.test(watch.stdout()), 'a row for the change');
  await client.delete('nodes', 'beta');
  await eventually(
    () =>
      watch
        .stdout()
        .trimEnd()
        .split('\n')
        .filter((l) => l.startsWith('beta')).length === 2,
    'a row for the delete',
  );
  watch.kill('SIGINT');
  const done = await watch.exited;
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.stderr, '');
  assert.match(done.stdout, /^NAME +SITE/);
});
