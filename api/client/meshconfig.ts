/**
 * Reads and writes a meshconfig: a kubeconfig-format file (so kubectl can use it too)
 * holding the server URL, the CA and a bearer token. It is written as JSON (valid YAML, so kubectl
 * reads it) so that meshctl can read it without loading a YAML parser at start-up. The admin meshconfig of the
 * control-plane machine also names the control plane's local Unix socket, as a cluster extension
 * (`meshctl.dev/local-socket`, `{path}`), which kubectl keeps and ignores.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { writeFileAtomicSync } from '../meta/atomic-file.ts';
import { errnoCode } from '../meta/errno.ts';
import type { ClientConfig } from './types.ts';

interface KubeconfigFile {
  apiVersion?: string;
  kind?: string;
  clusters?: { name: string; cluster: ClusterEntry }[];
  users?: { name: string; user: { token?: string } }[];
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  'current-context'?: string;
}

/** A kubeconfig cluster: its URL, CA, and named extensions (kubectl ignores the ones it does not know). */
interface ClusterEntry {
  server: string;
  'certificate-authority-data'?: string;
  extensions?: { name: string; extension?: { path?: unknown } }[];
}

/** The name of the cluster extension that holds the control plane's local Unix socket (`{path}`). */
export const LOCAL_SOCKET_EXTENSION = 'meshctl.dev/local-socket';

/** Renders a meshconfig for the given connection. */
export function renderMeshconfig(cfg: ClientConfig, user = 'admin'): string {
  const file: KubeconfigFile = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'meshctl',
        cluster: {
          server: cfg.server,
          ...(cfg.caData ? { 'certificate-authority-data': Buffer.from(cfg.caData).toString('base64') } : {}),
          ...(cfg.socketPath
            ? { extensions: [{ name: LOCAL_SOCKET_EXTENSION, extension: { path: cfg.socketPath } }] }
            : {}),
        },
      },
    ],
    users: [{ name: user, user: { token: cfg.token } }],
    contexts: [{ name: 'meshctl', context: { cluster: 'meshctl', user } }],
    'current-context': 'meshctl',
  };
  return JSON.stringify(file, null, 2) + '\n';
}

/** Writes a meshconfig atomically with mode 0600. */
export function writeMeshconfig(path: string, cfg: ClientConfig, user = 'admin'): void {
  writeFileAtomicSync(path, renderMeshconfig(cfg, user), { mode: 0o600 });
}

/** Parses a meshconfig (or any kubeconfig with a token user); throws Error with a readable message. */
export function parseMeshconfig(text: string, source = 'meshconfig'): ClientConfig {
  let file: KubeconfigFile;
  try {
    file = (text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text)) as KubeconfigFile;
  } catch (e) {
    throw new Error(`${source}: not valid YAML: ${(e as Error).message}`);
  }
  if (!file || typeof file !== 'object') throw new Error(`${source}: empty or not a mapping`);
  const ctxName = file['current-context'] ?? file.contexts?.[0]?.name;
  const ctx = file.contexts?.find((c) => c.name === ctxName)?.context;
  const cluster = file.clusters?.find((c) => c.name === (ctx?.cluster ?? file.clusters?.[0]?.name))?.cluster;
  const user = file.users?.find((u) => u.name === (ctx?.user ?? file.users?.[0]?.name))?.user;
  if (!cluster?.server) throw new Error(`${source}: no cluster server URL`);
  const ca = cluster['certificate-authority-data'];
  const socketPath = cluster.extensions?.find((e) => e?.name === LOCAL_SOCKET_EXTENSION)?.extension?.path;
  return {
    server: cluster.server,
    ...(ca ? { caData: Buffer.from(ca, 'base64').toString('utf8') } : {}),
    ...(typeof socketPath === 'string' && socketPath ? { socketPath } : {}),
    ...(user?.token ? { token: user.token } : {}),
  };
}

/** Loads a meshconfig from a file. */
export function loadMeshconfig(path: string): ClientConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = errnoCode(e);
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (e as Error).message;
    throw new Error(`cannot read meshconfig ${path}: ${why}`);
  }
  return parseMeshconfig(text, path);
}

/** Loads the YAML parser only for hand-written YAML configs (it costs start-up time). */
function parseYaml(text: string): unknown {
  const require = createRequire(import.meta.url);
  return (require('yaml') as typeof import('yaml')).parse(text);
}
