// meshctl apply -f DIR --watch --prune against the real server: an edited, an added and a deleted file are
// applied (the deleted one pruned); an invalid file is reported, keeps the last good state and the watch goes on;
// a burst of writes is one apply (counted by the `apply #N` summary lines); SIGINT ends it with exit code 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import { isReason } from '../../api/meta/api-error.ts';
import { waitFor } from '../../agent/testing.ts';
import { startServer } from '../harness.ts';
import { buildCli } from './cli-harness.ts';

function node(name: string, site = 'home'): string {
  return `apiVersion: meshctl.dev/v1alpha1\nkind: Node\nmetadata:\n  name: ${name}\nspec:\n  site: ${site}\n`;
}

test('apply --watch applies edits, additions and deletions, survives an invalid file, and debounces a burst', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-apply-watch-'));
  const [server, cli] = await Promise.all([startServer(), buildCli()]);
  const client = createClient(server.config);
  t.after(async () => {
    client.close();
    await server.stop();
    cli.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(join(dir, 'a.yaml'), node('w-a'));
  // A quiet period of 2 s: the burst below spreads its writes over ~0.3 s, which would be several applies without it.
  const watch = cli.start(['apply', '-f', dir, '--watch', '--debounce', '2s', '--prune', '--applyset', 'watched'], {
    config: server.meshconfigPath,
  });
  t.after(() => watch.kill('SIGKILL'));
  const applies = (): string[] => watch.stdout().match(/^apply #\d+ .*$/gm) ?? [];
  const fail = (e: Error): never => {
    throw new Error(`${e.message}\nstdout:\n${watch.stdout()}\nstderr:\n${watch.stderr()}`);
  };
  const site = async (name: string): Promise<string | undefined> => {
    try {
      return ((await client.get('nodes', name)).spec as { site: string }).site;
    } catch (e) {
      if (isReason(e, 'NotFound')) return undefined;
      throw e;
    }
  };
  const until = (check: () => Promise<boolean>, what: string): Promise<unknown> =>
    waitFor(check, 30_000, what).catch(fail);
  await waitFor(() => applies().length === 1, 30_000, 'the first apply').catch(fail);
  assert.match(applies()[0], /^apply #1 \(start\): applied, 1 object\(s\)$/);
  assert.equal(await site('w-a'), 'home');

  // Edit one file, add another: applied.
  writeFileSync(join(dir, 'a.yaml'), node('w-a', 'office'));
  await until(async () => (await site('w-a')) === 'office', 'the edit applied');
  writeFileSync(join(dir, 'b.yaml'), node('w-b'));
  await until(async () => (await site('w-b')) === 'home', 'the added file applied');

  // A file apply does not read (an editor's swap file) makes no apply: the next apply is the invalid file's.
  await waitFor(() => applies().some((l) => / add .*b\.yaml\): applied/.test(l)), 10_000, 'the summary').catch(fail);
  const count = applies().length;
  writeFileSync(join(dir, '.b.yaml.swp'), 'not yaml: [');
  writeFileSync(join(dir, 'notes.txt'), 'hello');

  // An invalid file: reported, the last good state kept (w-b stays as it was, nothing pruned), the watch goes on.
  writeFileSync(join(dir, 'b.yaml'), 'kind: Node\nmetadata: [unclosed\n');
  await waitFor(
    () => /manifest problem\(s\): kept the last good state/.test(watch.stdout()),
    30_000,
    'the report',
  ).catch(fail);
  assert.match(watch.stderr(), /error parsing .*b\.yaml: line \d+, column \d+/);
  assert.equal(applies().length, count + 1, `the swap file and notes.txt made no apply:\n${applies().join('\n')}`);
  assert.doesNotMatch(applies().join('\n'), /swp|notes\.txt/);
  assert.equal(await site('w-b'), 'home');
  writeFileSync(join(dir, 'b.yaml'), node('w-b', 'lab'));
  await until(async () => (await site('w-b')) === 'lab', 'the fixed file applied');

  // A deleted file: its object is pruned.
  unlinkSync(join(dir, 'b.yaml'));
  await until(async () => (await site('w-b')) === undefined, 'the deleted file pruned');
  await waitFor(() => /node\/w-b pruned/.test(watch.stdout()), 10_000, 'the prune printed').catch(fail);
  await waitFor(() => applies().some((l) => / unlink .*b\.yaml\): applied/.test(l)), 10_000, 'its summary').catch(fail);

  // A burst of writes (as a git pull makes) is one apply: count the applies from the burst to a later marker change.
  const before = applies().length;
  for (let i = 0; i < 16; i++) {
    writeFileSync(join(dir, `burst-${i % 8}.yaml`), node(`w-burst-${i % 8}`, i < 8 ? 'home' : 'office'));
    await new Promise((r) => setTimeout(r, 20));
  }
  await until(async () => (await site('w-burst-7')) === 'office', 'the burst applied');
  await waitFor(() => applies().length > before, 10_000, 'the burst summary').catch(fail);
  writeFileSync(join(dir, 'marker.yaml'), node('w-marker'));
  await until(async () => (await site('w-marker')) === 'home', 'the marker applied');
  await waitFor(() => applies().some((l) => /marker\.yaml/.test(l)), 10_000, 'the marker summary').catch(fail);
  const after = applies().slice(before);
  assert.equal(after.length, 2, `one apply for the burst, one for the marker:\n${after.join('\n')}`);
  assert.match(after[0], /burst-/);

  watch.kill('SIGINT');
  const exit = await watch.exited;
  assert.equal(exit.code, 0, exit.stderr);
});
