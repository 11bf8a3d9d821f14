// Issue 4, "Collection of health, logs and reports": with the real `mesh-control-plane` (restarted on the
// same port) and a real `mesh-agent` running a process Service declared by a Module and an Assignment,
// `meshctl logs` shows its lines and follows them; lines written while the control plane is SIGKILLed
// arrive after it comes back, in order, with no gaps and no repeats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { freePort, waitFor } from '../../agent/testing.ts';
import { logsPath } from '../../api/wire/log-wire.ts';
import { httpRequest, REPO_ROOT } from '../harness.ts';
import { counterModule, counterService, numbers, storedLines, upTo } from './logs-helpers.ts';
import { applyObject, assignmentObject, createMesh, meshctl, waitApplied } from './mesh-helpers.ts';

test('meshctl logs shows and follows a service; lines written during a control-plane outage arrive after it, in order, without gaps', async (t) => {
  const mesh = createMesh(t);
  const listen = `127.0.0.1:${await freePort()}`;
  let cp = await mesh.controlPlane({ listen });
  const admin = mesh.admin(cp);
  await applyObject(admin, 'modules', counterModule());
  await applyObject(admin, 'assignments', assignmentObject('counter-on-a', 'counter', 'a'));
  await mesh.agent('a', cp);
  await waitApplied(admin, 'counter-on-a', '1.0.0');
  await waitFor(
    async () => numbers(await storedLines(cp.config, 'a')).length >= 10,
    15_000,
    'the first ten lines at the control plane',
  );

  // `meshctl logs NODE` with one service: that service's lines, without time stamps.
  const shown = await meshctl(cp.meshconfigPath, ['logs', 'a']);
  assert.equal(shown.code, 0, shown.stderr);
  const printed = shown.stdout
    .split('\n')
    .filter((l) => /^line \d+$/.test(l))
    .map((l) => Number(l.slice(5)));
  assert.ok(printed.length >= 10);
  assert.deepEqual(printed, upTo(printed.length), 'every line from the first, in order');
  assert.match(shown.stdout, /^--- \S+ starting /, "the supervisor's header line comes first");

  // `-f` prints new lines as they arrive, until SIGINT (exit 0).
  const follower = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'cli/main.ts',
      '--config',
      cp.meshconfigPath,
      'logs',
      'a',
      counterService('a'),
      '-f',
      '--tail',
      '1',
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  mesh.track(follower.pid!);
  let followed = '';
  follower.stdout.setEncoding('utf8').on('data', (d: string) => {
    followed += d;
  });
  const exited = new Promise<number | null>((resolve) => follower.once('exit', (code) => resolve(code)));
  const firstSeen = await waitFor(
    () => /^line (\d+)$/m.exec(followed)?.[1],
    15_000,
    'the follower to print its first line',
  );
  await waitFor(
    () => followed.split('\n').filter((l) => /^line \d+$/.test(l)).length >= 8,
    10_000,
    'the follower to print new lines',
  );
  follower.kill('SIGINT');
  assert.equal(await exited, 0, 'Ctrl-C ends meshctl logs -f cleanly');
  const followedNumbers = followed
    .split('\n')
    .filter((l) => /^line \d+$/.test(l))
    .map((l) => Number(l.slice(5)));
  assert.deepEqual(
    followedNumbers,
    Array.from({ length: followedNumbers.length }, (_, i) => Number(firstSeen) + i),
    'the last line, then each new one, once',
  );

  // SIGKILL the control plane, wait 2 s, start it again on the same port.
  const before = Math.max(...numbers(await storedLines(cp.config, 'a')));
  await cp.kill();
  const killedAt = Date.now();
  await new Promise((r) => setTimeout(r, 2000));
  cp = await mesh.controlPlane({ listen });
  const restartedAt = Date.now();
  await waitFor(
    async () => Math.max(...numbers(await storedLines(cp.config, 'a'))) >= before + 40,
    20_000,
    'the lines written during the outage and after',
  );

  const lines = await storedLines(cp.config, 'a');
  const all = numbers(lines);
  assert.deepEqual(all, upTo(all.length), 'no gaps, no repeats, in order');
  const duringOutage = lines.filter(
    (l) => l.n !== undefined && Date.parse(l.time) > killedAt && Date.parse(l.time) < restartedAt,
  );
  assert.ok(
    duringOutage.length >= 15,
    `lines read while the control plane was down were delivered after it (${duringOutage.length})`,
  );
  assert.ok(duringOutage.every((l) => l.n! > before));

  // With several services, meshctl asks for one, like kubectl for a pod's containers; unknown nodes are a NotFound.
  const other = await httpRequest(cp.config, 'POST', logsPath('a'), {
    entries: [{ service: 'other-on-a/x', time: new Date().toISOString(), line: 'hello' }],
  });
  assert.equal(other.status, 200, other.text);
  const several = await meshctl(cp.meshconfigPath, ['logs', 'a']);
  assert.equal(several.code, 1);
  assert.equal(
    several.stderr.trim(),
    'error: a service name must be specified for node a, choose one of: [counter-on-a/counter other-on-a/x]',
  );
  const unknown = await meshctl(cp.meshconfigPath, ['logs', 'nosuch']);
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr.trim(), 'Error from server (NotFound): nodes "nosuch" not found');
});
