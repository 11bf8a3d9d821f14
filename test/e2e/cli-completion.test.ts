// Shell completion with the built meshctl and a real server: `meshctl __complete` (commands, kinds, names,
// flags; nothing on stderr when the control plane is down) and the bash script run by a real bash.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import { writeMeshconfig } from '../../api/client/meshconfig.ts';
import { startServer, type TestServer } from '../harness.ts';
import { buildCli, type BuiltCli } from './cli-harness.ts';

let server: TestServer;
let cli: BuiltCli;
const dir = mkdtempSync(join(tmpdir(), 'meshctl-cli-completion-'));

before(async () => {
  [server, cli] = await Promise.all([startServer(), buildCli()]);
  const client = createClient(server.config);
  for (const name of ['alpha', 'beta']) {
    await client.create('nodes', {
      apiVersion: 'meshctl.dev/v1alpha1',
      kind: 'Node',
      metadata: { name },
      spec: { site: 'home', endpoint: '192.0.2.1:51820' },
    });
  }
  client.close();
});
after(async () => {
  await server?.stop();
  cli?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** The candidates `meshctl __complete -- WORDS` prints, asserting exit 0 and a silent stderr. */
async function candidates(words: string[], config = server.meshconfigPath): Promise<string[]> {
  const r = await cli.run(['__complete', '--', ...words], { config });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  return r.stdout.split('\n').filter(Boolean);
}

/** A meshconfig for a control plane that is down (a port nobody listens on). */
async function downConfig(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const path = join(dir, 'down.meshconfig');
  writeMeshconfig(path, { ...server.config, server: `https://127.0.0.1:${port}` });
  return path;
}

test('__complete: commands, kinds for `get `, names for `get nodes `, flags for `get -`', async () => {
  const commands = await candidates(['']);
  for (const c of ['get', 'describe', 'apply', 'logs', 'token', 'completion', 'help'])
    assert.ok(commands.includes(c), c);
  assert.ok(!commands.includes('__complete'), 'the hidden command is not offered');
  const kinds = await candidates(['get', '']);
  for (const k of ['nodes', 'node', 'no', 'modules', 'mod', 'assignments', 'asg', 'all'])
    assert.ok(kinds.includes(k), k);
  assert.deepEqual(await candidates(['get', 'no']), ['nodes', 'node', 'no']);
  assert.deepEqual(await candidates(['get', 'nodes', '']), ['alpha', 'beta']);
  assert.deepEqual(await candidates(['describe', 'no', 'b']), ['beta']);
  assert.deepEqual(await candidates(['get', 'node/a']), ['node/alpha']);
  assert.deepEqual(await candidates(['logs', '']), ['alpha', 'beta']);
  const flags = await candidates(['get', '-']);
  for (const f of ['--output', '-o', '--selector', '--watch', '-w', '--config', '--help'])
    assert.ok(flags.includes(f), f);
  assert.deepEqual(await candidates(['get', 'nodes', '-o', '']), ['yaml', 'json', 'wide', 'name']);
  assert.deepEqual(await candidates(['apply', '-f', '']), [':files']);
});

test('__complete: an unreachable control plane or no meshconfig completes no names and prints no error', async () => {
  assert.deepEqual(await candidates(['get', 'nodes', ''], await downConfig()), []);
  assert.deepEqual(await candidates(['get', 'no']), ['nodes', 'node', 'no'], 'kinds need no control plane');
  const empty = mkdtempSync(join(dir, 'empty-'));
  const r = await cli.run(['__complete', '--', 'get', 'nodes', ''], { cwd: empty, env: { HOME: empty } });
  assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', '']);
});

/** Runs `_meshctl` in a real bash on COMP_WORDS = [meshctl, ...words] and returns COMPREPLY. */
function bashComplete(words: string[], cwd = dir): Promise<string[]> {
  const script = [
    'source <("$MESHCTL" completion bash) || exit 9',
    'COMP_WORDS=("$MESHCTL" "$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))',
    '_meshctl',
    'for c in "${COMPREPLY[@]}"; do printf "%s\\n" "$c"; done',
  ].join('\n');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MESHCTL: cli.bin,
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`,
  };
  delete env.MESHCONFIG;
  const child = spawn('bash', ['--norc', '--noprofile', '-c', script, 'bash', ...words], { cwd, env });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  return new Promise((resolve, reject) =>
    child.once('close', (code) =>
      code === 0 && err === '' ? resolve(out.split('\n').filter(Boolean)) : reject(new Error(`bash ${code}: ${err}`)),
    ),
  );
}

test('the bash script: COMPREPLY holds commands, kinds, names, flags and file names', async () => {
  const config = ['--config', server.meshconfigPath];
  assert.deepEqual(await bashComplete(['ap']), ['apply', 'api-resources']);
  assert.deepEqual(await bashComplete([...config, 'get', 'no']), ['nodes', 'node', 'no']);
  assert.deepEqual(await bashComplete([...config, 'get', 'nodes', '']), ['alpha', 'beta']);
  assert.deepEqual(await bashComplete([...config, 'get', '--wat']), ['--watch', '--watch-only']);
  assert.deepEqual(await bashComplete(['--config', await downConfig(), 'get', 'nodes', '']), []);
  const files = mkdtempSync(join(dir, 'files-'));
  mkdirSync(join(files, 'manifests'));
  writeFileSync(join(files, 'mesh.yaml'), '');
  assert.deepEqual((await bashComplete(['apply', '-f', 'm'], files)).sort(), ['manifests', 'mesh.yaml']);
  const registered = execFileSync(
    'bash',
    ['--norc', '-c', 'source <("$0" completion bash); complete -p meshctl', cli.bin],
    {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` },
    },
  );
  assert.equal(registered, 'complete -F _meshctl meshctl\n');
});

const zsh = (() => {
  try {
    return execFileSync('bash', ['-c', 'command -v zsh'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();

test('the zsh script parses (zsh -n)', { skip: zsh ? false : 'zsh is not installed here' }, async () => {
  const script = (await cli.run(['completion', 'zsh'])).stdout;
  execFileSync(zsh, ['-n'], { input: script });
});

test('completion: usage errors exit 2; --help lists completion but not __complete', async () => {
  const fish = await cli.run(['completion', 'fish']);
  assert.equal(fish.code, 2);
  assert.match(fish.stderr, /^error: unsupported shell type "fish": bash or zsh\n/);
  assert.equal((await cli.run(['completion'])).code, 2);
  const help = (await cli.run(['--help'])).stdout;
  assert.match(help, /^ {2}completion +Print a bash or zsh completion script/m);
  assert.doesNotMatch(help, /__complete/);
});
