// Issue 4's join, end to end with real processes over HTTPS: the real `mesh-control-plane` (Declaration
// controller running), `meshctl token create|list|delete`, and two real `mesh-agent join` processes — one
// that joins and runs, one that joins with --no-run and is then started as `mesh-agent run --state-dir`.
// Both run with ONLY their node credential, and an assignment converges on each. Used, expired, deleted and
// wrong tokens are refused; a wrong --ca-hash aborts before the token is sent (the token stays unused); with
// the control plane down a join fails clearly while a joined node keeps running its service.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runAgentUntilExit, servicePid, spawnAgent, waitFor, type AgentProcess } from '../../agent/testing.ts';
import { caPin } from '../../api/meta/ca-pin.ts';
import {
  applyObject,
  assignmentObject,
  createMesh,
  INTERVALS,
  isRunning,
  meshctl,
  moduleObject,
  taggedCommand,
  waitApplied,
} from './mesh-helpers.ts';
import { spawnAgentCommand } from './join-helpers.ts';

const MODULE = (tag: string) => [
  { id: 'dir', kind: 'Directory', spec: { path: '/srv/hello' } },
  { id: 'conf', kind: 'File', spec: { path: '/srv/hello/hello.conf', content: 'hello\n' } },
  {
    id: 'svc',
    kind: 'Service',
    spec: { driver: 'process', command: taggedCommand(tag), workingDirectory: '/srv/hello' },
  },
];

/** The token and the join command `meshctl token create` printed. */
async function tokenCreate(
  config: string,
  ...flags: string[]
): Promise<{ token: string; server: string; caHash: string; stdout: string }> {
  const r = await meshctl(config, ['token', 'create', ...flags]);
  assert.equal(r.code, 0, r.stderr);
  const m = /mesh-agent join --server (\S+) --token ([a-z0-9]{6}\.[a-z0-9]{16}) --ca-hash (sha256:[0-9a-f]{64})/.exec(
    r.stdout,
  );
  assert.ok(m, r.stdout);
  return { server: m[1], token: m[2], caHash: m[3], stdout: r.stdout };
}

test('token create → two agents join over TLS and converge with their node credentials; bad tokens and pins are refused; joins need the control plane', async (t) => {
  // Registered before the mesh's teardown (after hooks run in order), so these agents are gone before it
  // removes their state dirs: otherwise one still writing made the removal fail and the hooks after it not run.
  const agents: AgentProcess[] = [];
  t.after(async () => {
    await Promise.all(agents.map((p) => p.kill('SIGKILL')));
  });
  const mesh = createMesh(t);
  const cp = await mesh.controlPlane();
  const admin = mesh.admin(cp);
  const cfg = cp.meshconfigPath;
  const [ta, tb, expired, deleted, pinned, late, rejoin, otherKey] = await Promise.all([
    tokenCreate(cfg, '--description', 'node a'),
    tokenCreate(cfg),
    tokenCreate(cfg, '--ttl', '1s'),
    tokenCreate(cfg),
    tokenCreate(cfg),
    tokenCreate(cfg),
    tokenCreate(cfg),
    tokenCreate(cfg),
  ]);
  assert.equal(ta.caHash, caPin(cp.config.caData!), 'the printed pin is the CA public key hash');
  assert.equal(ta.server, cp.url);
  assert.match(ta.stdout, /can be used once/);
  const a = mesh.node('a');
  const b = mesh.node('b');
  for (const dirs of [a, b]) mkdirSync(dirs.root, { recursive: true });
  const joinArgs = (tok: { token: string; caHash: string }, name: string, dirs: { stateDir: string; root: string }) => [
    'join',
    '--server',
    cp.url,
    '--token',
    tok.token,
    '--ca-hash',
    tok.caHash,
    '--name',
    name,
    '--site',
    'lab',
    '--state-dir',
    dirs.stateDir,
    '--root',
    dirs.root,
  ];

  // 1. a joins and runs in one process; b joins with --no-run, then runs from its state directory alone.
  const [agentA, joinedB] = await Promise.all([
    spawnAgentCommand([...joinArgs(ta, 'a', a), ...INTERVALS]).then((p) => {
      agents.push(p);
      return p;
    }),
    runAgentUntilExit([...joinArgs(tb, 'b', b), '--no-run']),
  ]);
  assert.equal(joinedB.code, 0, joinedB.output);
  // a runs on as the agent, and its command line no longer carries the token (`ps` shows the run line).
  const cmdlineA = readFileSync(`/proc/${agentA.pid}/cmdline`, 'utf8');
  assert.ok(!cmdlineA.includes(ta.token), `the running agent's argv holds no token: ${cmdlineA}`);
  assert.match(cmdlineA, new RegExp(`^mesh-agent run --state-dir ${a.stateDir} `));
  assert.match(
    joinedB.output,
    /Joined the mesh at \S+ as node b\. Run the agent with:\n {2}mesh-agent run --state-dir /,
  );
  const agentB = await spawnAgent(['--state-dir', b.stateDir, ...INTERVALS]);
  agents.push(agentB);
  for (const dirs of [a, b]) {
    assert.equal(statSync(join(dirs.stateDir, 'node.key')).mode & 0o777, 0o600, 'the node key is 0600');
    const storeFiles = readdirSync(join(dirs.stateDir, 'store'))
      .map((f) => readFileSync(join(dirs.stateDir, 'store', f), 'utf8'))
      .join('');
    assert.ok(!storeFiles.includes(cp.config.token!), 'the agent holds no admin credential');
  }
  assert.deepEqual((await admin.get('nodes', 'a')).spec, { site: 'lab' });

  // 2. An assignment converges on each, through the Declaration controller in the control-plane process.
  await applyObject(admin, 'modules', moduleObject('hello', '1.0.0', MODULE('join-hello')));
  await applyObject(admin, 'assignments', assignmentObject('hello-on-a', 'hello', 'a'));
  await applyObject(admin, 'assignments', assignmentObject('hello-on-b', 'hello', 'b'));
  await Promise.all([waitApplied(admin, 'hello-on-a', '1.0.0'), waitApplied(admin, 'hello-on-b', '1.0.0')]).catch(
    (e: Error) => {
      throw new Error(
        `${e.message}\n--- agent a:\n${agentA.output().slice(-3000)}\n--- control plane:\n${cp.output().slice(-3000)}`,
      );
    },
  );
  for (const dirs of [a, b]) assert.equal(readFileSync(join(dirs.root, 'srv/hello/hello.conf'), 'utf8'), 'hello\n');
  const pidA = servicePid(a.stateDir, 'hello-on-a/svc')!;
  assert.ok(pidA && isRunning(pidA));
  const nodeA = (await admin.get('nodes', 'a')) as { status?: { agentVersion?: string } };
  assert.ok(nodeA.status?.agentVersion, 'the heartbeat (Node status) was written with the node credential');
  for (const agent of [agentA, agentB]) {
    const refusals = agent.lines().filter((l) => l.level === 'error' && /Forbidden|Unauthorized/.test(String(l.error)));
    assert.deepEqual(refusals, [], 'the agent is never refused');
  }
  const list = await meshctl(cfg, ['token', 'list']);
  assert.match(list.stdout, /^NAME +EXPIRES +USED +DESCRIPTION\n/);
  assert.match(list.stdout, new RegExp(`${ta.token.slice(0, 6)} +in \\S+ +yes \\(a\\) +node a\\n`));

  // 3. Used, expired, deleted and wrong tokens are refused; a wrong pin aborts before the token is sent;
  //    the name of a joined node is refused to another key (409), and b re-joins with its own key.
  const del = await meshctl(cfg, ['token', 'delete', deleted.token.slice(0, 6)]);
  assert.equal(del.stdout, `jointoken "${deleted.token.slice(0, 6)}" deleted\n`);
  const c = mesh.node('c');
  mkdirSync(c.root, { recursive: true }); // else every join below is refused for its --root first
  const wrongSecret = { ...pinned, token: `${pinned.token.slice(0, 7)}${'0'.repeat(16)}` };
  const wrongPin = { ...pinned, caHash: `sha256:${'ab'.repeat(32)}` };
  const results = await Promise.all(
    [ta, expired, deleted, wrongSecret, wrongPin].map((tok, i) =>
      runAgentUntilExit([...joinArgs(tok, 'c', { stateDir: `${c.stateDir}-${i}`, root: c.root }), '--no-run']),
    ),
  );
  results.push(
    await runAgentUntilExit([...joinArgs(otherKey, 'a', { stateDir: `${c.stateDir}-a`, root: c.root }), '--no-run']),
  );
  const expect = [
    /was already used by node a/,
    /has expired/,
    /does not exist: it was deleted/,
    /the secret of join token \w+ is wrong/,
    /presents a CA whose public key hash is sha256:[0-9a-f]{64}, but --ca-hash is sha256:(ab){32}: refusing to send the join token/,
    /refused the join \(Conflict\): .*node a already joined with another key/,
  ];
  results.forEach((r, i) => {
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, expect[i]);
    assert.match(r.output, /^mesh-agent join: /m);
  });
  const pinnedToken = (await admin.get('jointokens', pinned.token.slice(0, 6))) as { status?: { used?: boolean } };
  assert.equal(pinnedToken.status?.used, false, 'the server never saw a join with the token whose pin was wrong');
  await assert.rejects(admin.get('nodes', 'c'), /not found/);
  await agentB.kill('SIGTERM');
  const again = await runAgentUntilExit([...joinArgs(rejoin, 'b', b), '--no-run']);
  assert.equal(again.code, 0, again.output);
  assert.equal(
    ((await admin.get('jointokens', rejoin.token.slice(0, 6))) as { status?: { usedBy?: string } }).status?.usedBy,
    'b',
  );
  agents.push(await spawnAgent(['--state-dir', b.stateDir, ...INTERVALS]));

  // 4. With the control plane down a join fails clearly; the joined nodes keep running their services.
  await cp.stop();
  const down = await runAgentUntilExit([...joinArgs(late, 'c', c), '--no-run']);
  assert.equal(down.code, 1, down.output);
  assert.match(
    down.output,
    /cannot reach the control plane at https:\/\/127\.0\.0\.1:\d+ .*Joining needs the control plane: it issues and checks join tokens/,
  );
  await waitFor(
    () => agentA.lines().some((l) => l.msg === 'Lost contact with control plane'),
    10_000,
    'a to notice the outage',
  );
  assert.ok(isRunning(pidA), 'a keeps running its service');
  assert.ok(servicePid(b.stateDir, 'hello-on-b/svc') !== undefined, 'b keeps running its service');
});
