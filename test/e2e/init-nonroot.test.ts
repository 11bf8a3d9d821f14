// `meshctl init` as a normal user, from an installed package (bin links as `npm install -g .` makes them):
// init with no directory flags, then the agent command exactly as init printed it, both run as `nobody`
// (privileges dropped with setpriv when the test runs as root, as in CI). The node becomes Applied — the
// control plane runs as the agent's service, the overlay hub's place is made under the agent's root — and
// nothing is written outside the ./.meshctl it named: not /var/lib/meshctl, not HOME, not a shared temp dir.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { freePort, killServices, servicePid, spawnAgentProgram, waitFor } from '../../agent/testing.ts';
import { buildCli, type BuiltCli, type CliResult } from './cli-harness.ts';
import { REPO_ROOT } from '../harness.ts';

const AS_ROOT = process.getuid?.() === 0;
/** The command prefix that runs a program as `nobody` (nothing when the test does not run as root). */
const AS_USER = AS_ROOT ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'] : [];
const USER_UID = AS_ROOT ? Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })) : process.getuid!();
/** Where a user with no directory of its own can create files on this Debian machine (`find / -perm -0002 -type d`). */
const SHARED_WRITABLE = ['/tmp', '/var/tmp', '/run/lock', '/dev/shm'].filter((d) => existsSync(d));

/** Runs `argv` as the user, in `cwd`, with `env` only. */
function runAs(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawn(AS_USER[0] ?? argv[0], [...AS_USER.slice(1), ...(AS_USER.length ? argv : argv.slice(1))], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** The entries of the shared writable dirs that the user owns (it can create files nowhere else but its own dirs). */
function userOwnedShared(): string[] {
  return SHARED_WRITABLE.flatMap((d) =>
    readdirSync(d)
      .map((n) => join(d, n))
      .filter((p) => {
        try {
          return lstatSync(p).uid === USER_UID;
        } catch {
          return false;
        }
      }),
  );
}

/** Every path under `dir`, relative, sorted. */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      out.push(relative(dir, p));
      if (lstatSync(p).isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

/**
 * Makes the build stand alone, as `npm install -g .` would: its links to the checkout's node_modules and
 * package.json become copies of the production dependencies and of package.json. The user the test runs
 * as may not be able to reach the checkout at all (a CI clone under a 0700 temp dir).
 */
function installAsPackage(buildDir: string): void {
  const linked = join(buildDir, 'node_modules');
  const source = realpathSync(linked);
  const ls = spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: REPO_ROOT, encoding: 'utf8' });
  const packages = new Set(
    ls.stdout
      .split('\n')
      .map((p) => relative(source, p))
      .filter((rel) => rel !== '' && !rel.startsWith('..'))
      .map((rel) => rel.split('/node_modules/')[0]),
  );
  assert.ok(packages.has('yaml'), `npm ls found the production dependencies: ${ls.stderr}`);
  unlinkSync(linked);
  for (const rel of packages) cpSync(join(source, rel), join(linked, rel), { recursive: true });
  const pkg = join(buildDir, 'package.json');
  const text = readFileSync(pkg, 'utf8');
  unlinkSync(pkg);
  writeFileSync(pkg, text);
  chmodSync(buildDir, 0o755);
}

describe('meshctl init as a normal user', () => {
  let cli: BuiltCli;
  before(async () => {
    cli = await buildCli();
    installAsPackage(dirname(dirname(cli.bin)));
  });
  after(() => cli.cleanup());

  it('runs init and the printed agent command from an installed package: the node is Applied, and all it wrote is under ./.meshctl', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'meshctl-nonroot-'));
    chmodSync(dir, 0o755);
    // An installed package as `npm install -g .` lays it out: the package folder linked, its bins linked on PATH.
    const prefix = join(dir, 'prefix');
    mkdirSync(join(prefix, 'lib', 'node_modules'), { recursive: true });
    mkdirSync(join(prefix, 'bin'));
    symlinkSync(dirname(dirname(cli.bin)), join(prefix, 'lib', 'node_modules', 'meshctl'));
    for (const name of ['meshctl', 'mesh-agent', 'mesh-control-plane'])
      symlinkSync(`../lib/node_modules/meshctl/dist/${name}.js`, join(prefix, 'bin', name));
    const home = join(dir, 'home');
    mkdirSync(home, { mode: 0o700 });
    chownSync(home, USER_UID, AS_ROOT ? USER_UID : process.getgid!());
    const env = { PATH: `${prefix}/bin:${dirname(process.execPath)}:/usr/bin:/bin`, HOME: home };
    const stateDir = join(home, '.meshctl', 'agent');
    let agent: Awaited<ReturnType<typeof spawnAgentProgram>> | undefined;
    // One hook, in this order: the agent first (it writes its state dir while it runs), then its services, then the files.
    t.after(async () => {
      await agent?.kill('SIGKILL');
      killServices(stateDir);
      rmSync(dir, { recursive: true, force: true });
    });
    const hadVarLib = existsSync('/var/lib/meshctl');
    const sharedBefore = new Set(userOwnedShared());
    const prefixBefore = tree(prefix);

    const port = await freePort();
    const init = await runAs(['meshctl', 'init', '--listen', `127.0.0.1:${port}`, '--name', 'cp-1'], home, env);
    assert.equal(init.code, 0, init.stderr);
    const root = join(home, '.meshctl', 'root');
    assert.match(init.stdout, new RegExp(`agent root +${root} `));
    assert.match(init.stdout, new RegExp(`overlay hub +${root}/var/lib/meshctl/overlay-hub `));
    assert.match(init.stdout, new RegExp(`control plane runs +${prefix}/bin/mesh-control-plane … `));
    assert.doesNotMatch(init.stdout, /systemctl/, 'a system unit is offered to root only');
    const printed = /^ {7}(\S.* run --state-dir .*)$/m.exec(init.stdout)?.[1];
    assert.equal(printed, `${prefix}/bin/mesh-agent run --state-dir ${stateDir} --root ${root}`, init.stdout);

    agent = await spawnAgentProgram([...AS_USER, ...printed.split(' ')], { cwd: home, env });
    const running = agent;
    const nodes = await waitFor(
      async () => {
        const r = await runAs(['meshctl', 'get', 'nodes'], home, env);
        return /^cp-1\s.*\sApplied\s/m.test(r.stdout) && r.stdout;
      },
      60_000,
      'node cp-1 Applied',
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n${running.output().slice(-4000)}`);
    });
    assert.match(nodes, /^cp-1\s+True\s/m);
    const assignments = (await runAs(['meshctl', 'get', 'assignments'], home, env)).stdout;
    assert.match(assignments, /^control-plane\s.*\sTrue\s/m);
    assert.match(assignments, /^overlay-hub\s.*\sTrue\s/m);
    const cpPid = servicePid(stateDir, 'control-plane/server');
    assert.ok(cpPid && statSync(`/proc/${cpPid}`).uid === USER_UID, 'the control plane runs as the user');
    const role = join(root, 'var/lib/meshctl/overlay-hub/ROLE');
    assert.match(readFileSync(role, 'utf8'), /overlay hub/);
    assert.equal(statSync(role).uid, USER_UID);

    // Everything written is under the ./.meshctl init named: its data, the agent's state, the agent's root.
    assert.deepEqual(readdirSync(home), ['.meshctl']);
    assert.deepEqual(readdirSync(join(home, '.meshctl')).sort(), ['agent', 'control-plane', 'root']);
    assert.deepEqual(tree(root), [
      'var',
      'var/lib',
      'var/lib/meshctl',
      'var/lib/meshctl/overlay-hub',
      'var/lib/meshctl/overlay-hub/ROLE',
    ]);
    assert.deepEqual(tree(prefix), prefixBefore, 'the installed package is left alone');
    assert.equal(existsSync('/var/lib/meshctl'), hadVarLib, '/var/lib/meshctl is neither created nor removed');
    if (AS_ROOT) {
      const created = userOwnedShared().filter((p) => !sharedBefore.has(p) && p !== dir);
      assert.deepEqual(created, [], 'nothing of the user appeared in a shared writable directory');
    }
  });
});
