// meshctl run as users run it (the file itself, through its shebang) starts Node without NODE_EXTRA_CA_CERTS, which
// Node 20 would read at every start, and still honours it where it applies: a server whose meshconfig names no CA
// (cli/extra-ca.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeMeshconfig } from '../../api/client/meshconfig.ts';
import { cliSuite, type CliResult } from './cli-harness.ts';

const suite = cliSuite('meshctl-extra-ca-');

/** Runs the built meshctl as installed (the file, by its shebang) with NODE_EXTRA_CA_CERTS set to `extraCa`. */
const runInstalled = (args: string[], extraCa: string): Promise<CliResult> =>
  suite.cli.run(args, { asInstalled: true, env: { NODE_EXTRA_CA_CERTS: extraCa } });

const NODE_WARNING = /Ignoring extra certs from/;

describe('meshctl and NODE_EXTRA_CA_CERTS', () => {
  it('starts Node without reading the file (Node itself warns about a missing one; meshctl does not)', async () => {
    const missing = join(suite.dir, 'no-such-ca.pem');
    const args = ['--config', suite.server.meshconfigPath, 'get', 'nodes'];
    const viaNode = await suite.cli.run(args, { env: { NODE_EXTRA_CA_CERTS: missing } });
    assert.equal(viaNode.code, 0, viaNode.stderr);
    assert.match(viaNode.stderr, NODE_WARNING, 'node dist/meshctl.js: Node read the variable at start-up');
    const direct = await runInstalled(args, missing);
    assert.equal(direct.code, 0, direct.stderr);
    assert.doesNotMatch(direct.stderr, NODE_WARNING);
  });

  it('trusts the extra certificates for a server whose meshconfig names no CA', async () => {
    const caFile = join(suite.dir, 'extra-ca.pem');
    writeFileSync(caFile, suite.server.config.caData as string);
    const noCa = join(suite.dir, 'no-ca.meshconfig');
    writeMeshconfig(noCa, { server: suite.server.url, token: suite.server.adminToken });
    const args = ['--config', noCa, 'get', 'meshes'];

    const trusted = await runInstalled(args, caFile);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.doesNotMatch(trusted.stderr, /Warning|certificate/i);

    const untrusted = await runInstalled(args, '');
    assert.notEqual(untrusted.code, 0, 'without the extra CA the server is not trusted');
    assert.match(untrusted.stderr, /certificate/i);

    const unreadable = await runInstalled(args, join(suite.dir, 'gone.pem'));
    assert.notEqual(unreadable.code, 0);
    assert.match(unreadable.stderr, /^Warning: Ignoring extra certs from `.*gone\.pem`, load failed: /m);
  });
});
