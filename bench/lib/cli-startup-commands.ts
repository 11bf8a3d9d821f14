/**
 * The commands benchmark 3 (bench/cli-startup.ts) times, in the order of its table: meshctl (over the control plane's
 * local socket and over HTTPS), kubectl, bare Node, and the least Node clients that get the same answer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeMeshconfig } from '../../api/client/meshconfig.ts';
import type { ControlPlaneProcess } from '../../test/harness.ts';
import type { RowId } from './cli-startup-render.ts';

/**
 * The least a Node program can do to print one Node: read the meshconfig, `node:tls` with its CA, one HTTP/1.1 GET
 * with the token, print the answer. Run as `node -e FLOOR <meshconfig> <name>`.
 */
const FLOOR = `const c = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
const u = new URL(c.clusters[0].cluster.server);
const s = require('tls').connect({ host: u.hostname, port: +u.port,
  ca: Buffer.from(c.clusters[0].cluster['certificate-authority-data'], 'base64').toString() }, () =>
  s.write('GET /apis/meshctl.dev/v1alpha1/nodes/' + process.argv[2] + ' HTTP/1.1\\r\\nhost: ' + u.host +
    '\\r\\nauthorization: Bearer ' + c.users[0].user.token + '\\r\\nconnection: close\\r\\n\\r\\n'));
s.pipe(process.stdout);`;

/**
 * The same over the control plane's local socket with `node:net` (no TLS): the socket from the meshconfig's
 * `meshctl.dev/local-socket` extension. Run as `node -e FLOOR_SOCKET <meshconfig> <name>`.
 */
const FLOOR_SOCKET = `const c = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
const s = require('net').connect(c.clusters[0].cluster.extensions[0].extension.path, () =>
  s.write('GET /apis/meshctl.dev/v1alpha1/nodes/' + process.argv[2] + ' HTTP/1.1\\r\\nhost: localhost' +
    '\\r\\nauthorization: Bearer ' + c.users[0].user.token + '\\r\\nconnection: close\\r\\n\\r\\n'));
s.pipe(process.stdout);`;

/** A command line to time, and a check that its run did what it should. */
export interface Contender {
  id: RowId;
  label: string;
  argv: string[];
  /** Environment variables set for this command only. */
  env?: Record<string, string>;
  check: (stdout: string) => boolean;
}

/** A copy of the admin meshconfig without the local socket extension: meshctl as run from another machine. */
function httpsOnlyMeshconfig(cp: ControlPlaneProcess): string {
  const path = join(cp.dataDir, 'https-only.meshconfig');
  writeMeshconfig(path, { ...cp.config, socketPath: undefined });
  return path;
}

/** NODE_EXTRA_CA_CERTS as this process sees it, and how many certificates the file holds. */
export function extraCa(): { path: string; certs: number } | undefined {
  const path = process.env.NODE_EXTRA_CA_CERTS;
  if (!path) return undefined;
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  return { path, certs: text.split('-----BEGIN CERTIFICATE-----').length - 1 };
}

/** Every command timed, in the order of the table. */
export function contenders(cp: ControlPlaneProcess, names: string[], meshctl: string): Contender[] {
  const https = httpsOnlyMeshconfig(cp);
  const one = (config: string): string[] => [process.execPath, meshctl, '--config', config, 'get', 'nodes', names[0]];
  // The installed `meshctl` command runs the file itself, started by its shebang (hack/build.mjs).
  const installed = (config: string): string[] => one(config).slice(1);
  const hasOne = (o: string): boolean => o.includes(names[0]);
  const list: Contender[] = [
    {
      id: 'list',
      label: '`meshctl get nodes` (over HTTPS), run as the installed command (the file, by its shebang)',
      argv: [meshctl, '--config', https, 'get', 'nodes'],
      check: (o) => names.every((n) => o.includes(n)),
    },
    {
      id: 'kubectlVersion',
      label: '`kubectl version --client`',
      argv: ['kubectl', 'version', '--client'],
      check: (o) => o.includes('Client Version'),
    },
    {
      id: 'node',
      label: '`node -e 0` (for reference: bare Node start-up)',
      argv: [process.execPath, '-e', '0'],
      check: () => true,
    },
    {
      id: 'help',
      label: '`node dist/meshctl.js --help` (for reference: start-up and bundle load, no network)',
      argv: [process.execPath, meshctl, '--help'],
      check: (o) => o.includes('Usage'),
    },
    {
      id: 'oneSocket',
      label: "`node dist/meshctl.js get nodes <one>` over the local socket (on the control plane's machine)",
      argv: one(cp.meshconfigPath),
      check: hasOne,
    },
    {
      id: 'oneSocketNoCache',
      label: '`meshctl get nodes <one>` over the local socket, the bundle run without the launcher and its code cache',
      argv: [
        process.execPath,
        join(dirname(meshctl), 'meshctl-cli.js'),
        '--config',
        cp.meshconfigPath,
        'get',
        'nodes',
        names[0],
      ],
      check: hasOne,
    },
    {
      id: 'oneSocketInstalled',
      label: '`meshctl get nodes <one>` over the local socket, run as the installed command (the file, by its shebang)',
      argv: installed(cp.meshconfigPath),
      check: hasOne,
    },
    {
      id: 'oneHttpsInstalled',
      label: '`meshctl get nodes <one>` over HTTPS, run as the installed command (the file, by its shebang)',
      argv: installed(https),
      check: hasOne,
    },
    {
      id: 'oneHttps',
      label: '`node dist/meshctl.js get nodes <one>` over HTTPS (no socket extension: from another machine)',
      argv: one(https),
      check: hasOne,
    },
    {
      id: 'kubectlOne',
      label: '`kubectl get nodes <one>` (same server, HTTPS)',
      argv: ['kubectl', '--kubeconfig', cp.meshconfigPath, 'get', 'nodes', names[0]],
      check: hasOne,
    },
    {
      id: 'nodeTls',
      label: '`node -e "require(\'node:tls\')"` (for reference: Node with its TLS module loaded)',
      argv: [process.execPath, '-e', "require('node:tls')"],
      check: () => true,
    },
    {
      id: 'floorTls',
      label: '`node -e <one GET over node:tls>` (for reference: the least a Node client does over HTTPS)',
      argv: [process.execPath, '-e', FLOOR, cp.meshconfigPath, names[0]],
      check: (o) => o.startsWith('HTTP/1.1 200') && hasOne(o),
    },
    {
      id: 'floorSocket',
      label: '`node -e <one GET over the socket with node:net>` (for reference: the least over the socket)',
      argv: [process.execPath, '-e', FLOOR_SOCKET, cp.meshconfigPath, names[0]],
      check: (o) => o.startsWith('HTTP/1.1 200') && hasOne(o),
    },
  ];
  if (!extraCa()) return list;
  const bare = { NODE_EXTRA_CA_CERTS: '' };
  return [
    ...list,
    {
      id: 'nodeNoExtraCa',
      label: '`node -e 0` with NODE_EXTRA_CA_CERTS empty',
      argv: [process.execPath, '-e', '0'],
      env: bare,
      check: () => true,
    },
    {
      id: 'oneSocketNoExtraCa',
      label: '`meshctl get nodes <one>` over the local socket, NODE_EXTRA_CA_CERTS empty',
      argv: one(cp.meshconfigPath),
      env: bare,
      check: hasOne,
    },
  ];
}
