import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFERRED_VAR, restoreExtraCaCerts } from './extra-ca.ts';

describe('restoreExtraCaCerts', () => {
  it('puts NODE_EXTRA_CA_CERTS back for child processes and drops the hand-over variable', () => {
    const env: NodeJS.ProcessEnv = { [DEFERRED_VAR]: '/etc/corp-ca.pem', PATH: '/bin' };
    restoreExtraCaCerts(env);
    assert.deepEqual(env, { NODE_EXTRA_CA_CERTS: '/etc/corp-ca.pem', PATH: '/bin' });
  });

  it('sets nothing when the variable was not set (the shebang hands over an empty value)', () => {
    const env: NodeJS.ProcessEnv = { [DEFERRED_VAR]: '', PATH: '/bin' };
    restoreExtraCaCerts(env);
    assert.deepEqual(env, { PATH: '/bin' });
  });

  it('leaves a run without the launcher (node dist/meshctl.js) as it is', () => {
    const env: NodeJS.ProcessEnv = { NODE_EXTRA_CA_CERTS: '/etc/corp-ca.pem' };
    restoreExtraCaCerts(env);
    assert.deepEqual(env, { NODE_EXTRA_CA_CERTS: '/etc/corp-ca.pem' });
  });
});
