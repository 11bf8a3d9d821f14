// meshctl run as users run it (the file itself, through its shebang) starts Node without NODE_EXTRA_CA_CERTS, which
// Node 20 would read at every start, and still honours it where it applies: a server whose meshconfig names no CA
// (cli/extra-ca.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeMeshconfig } from '../../api/client/meshconfig.ts';
import { captureOutput, REPO_ROOT } from '../harness.ts';
import { cliSuite, type CliResult } from './cli-harness.ts';

const suite = cliSuite('meshctl-extra-ca-');

/** Runs `file` as an executable (its shebang picks the interpreter), with `env` over this process's. */
function runFile(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const full: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of ['MESHCONFIG', 'MESHCTL_DEBUG', 'NODE_OPTIONS', 'MESHCTL_EXTRA_CA_CERTS']) delete full[name];
  if (env.NODE_EXTRA_CA_CERTS === undefined) delete full.NODE_EXTRA_CA_CERTS;
  const child = spawn(file, args, { cwd: REPO_ROOT, env: full, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = captureOutput(child);
  return new Promise((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout: out.stdout(), stderr: out.stderr() })),
  );
}

const NODE_WARNING = /Ignoring extra certs from/;

describe('meshctl and NODE_EXTRA_CA_CERTS', () => {
  it('starts Node without reading the file (Node itself warns about a missing one; meshctl does not)', async () => {
    const missing = join(suite.dir, 'no-such-ca.pem');
    const args = ['--config', suite.server.meshconfigPath, 'get', 'nodes'];
    const viaNode = await suite.cli.run(args, { env: { NODE_EXTRA_CA_CERTS: missing } });
    assert.equal(viaNode.code, 0, viaNode.stderr);
    assert.match(viaNode.stderr, NODE_WARNING, 'node dist/meshctl.js: Node read the variable at start-up');
    const direct = await runFile(suite.cli.bin, args, { NODE_EXTRA_CA_CERTS: missing });
    assert.equal(direct.code, 0, direct.stderr);
    assert.doesNotMatch(direct.stderr, NODE_WARNING);
  });

  it('trusts the extra certificates for a server whose meshconfig names no CA', async () => {
    const caFile = join(suite.dir, 'extra-ca.pem');
    writeFileSync(caFile, suite.server.config.caData as string);
    const noCa = join(suite.dir, 'no-ca.meshconfig');
    writeMeshconfig(noCa, { server: suite.server.url, token: suite.server.adminToken });
    const args = ['--config', noCa, 'get', 'meshes'];

    const trusted = await runFile(suite.cli.bin, args, { NODE_EXTRA_CA_CERTS: caFile });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.doesNotMatch(trusted.stderr, /Warning|certificate/i);

    const untrusted = await runFile(suite.cli.bin, args, {});
    assert.notEqual(untrusted.code, 0, 'without the extra CA the server is not trusted');
    assert.match(untrusted.stderr, /certificate/i);

    const unreadable = await runFile(suite.cli.bin, args, { NODE_EXTRA_CA_CERTS: join(suite.dir, 'gone.pem') });
    assert.notEqual(unreadable.code, 0);
    assert.match(unreadable.stderr, /^Warning: Ignoring extra certs from `.*gone\.pem`, load failed: /m);
  });
});
