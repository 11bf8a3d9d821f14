/**
 * NODE_EXTRA_CA_CERTS without its start-up cost. Node 20 reads the file that variable names, and builds its whole
 * default root store with it, at every start before any script runs: ~50 ms for Debian's 150-certificate bundle,
 * more than half of a `meshctl get` (bench/RESULTS.md §3). meshctl needs that store only to reach a server whose
 * meshconfig names no CA (over the local socket, or with the meshconfig's CA, it never looks at it). So the
 * shebang of `dist/meshctl.js` (hack/build.mjs) starts Node without the variable and hands its value over in
 * MESHCTL_EXTRA_CA_CERTS; `restoreExtraCaCerts` puts it back for the processes meshctl starts, and `withDefaultRoots`
 * gives a client that would use the default store the roots Node would have had: its bundled ones and that file's.
 * Run as `node dist/meshctl.js`, Node reads the variable itself and none of this applies.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ClientConfig } from '../api/client/types.ts';

/** The variable the launcher's shebang moves NODE_EXTRA_CA_CERTS to (hack/build.mjs). */
export const DEFERRED_VAR = 'MESHCTL_EXTRA_CA_CERTS';

let deferred: string | undefined;

/**
 * Takes MESHCTL_EXTRA_CA_CERTS out of the environment and, when it names a file, sets NODE_EXTRA_CA_CERTS to it again
 * (for child processes); remembers it for `withDefaultRoots`. Call once, first thing.
 */
export function restoreExtraCaCerts(env: NodeJS.ProcessEnv = process.env): void {
  const value = env[DEFERRED_VAR];
  if (value === undefined) return;
  delete env[DEFERRED_VAR];
  if (!value) return;
  env.NODE_EXTRA_CA_CERTS = value;
  deferred = value;
}

/**
 * The config with the default roots spelled out when Node started without the extra CA certificates it was
 * given (see the file comment) and the client would use the default store (https, no CA of its own); otherwise
 * the config as it is. A file that cannot be read is warned about and skipped, as Node does.
 */
export function withDefaultRoots(cfg: ClientConfig, warn: (text: string) => void): ClientConfig {
  if (deferred === undefined || cfg.caData || !cfg.server.startsWith('https:')) return cfg;
  let extra: string;
  try {
    extra = readFileSync(deferred, 'utf8');
  } catch (e) {
    warn(`Ignoring extra certs from \`${deferred}\`, load failed: ${(e as Error).message}`);
    return cfg;
  }
  const { rootCertificates } = createRequire(import.meta.url)('node:tls') as typeof import('node:tls');
  return { ...cfg, caData: `${rootCertificates.join('\n')}\n${extra}` };
}
