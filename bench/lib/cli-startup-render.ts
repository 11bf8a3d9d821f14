/**
 * The markdown of benchmark 3 (bench/cli-startup.ts): the table of every command timed, issue 2's ratio (`meshctl get
 * nodes` / `kubectl version --client`), issue 14's (`meshctl get nodes <one>` / `node -e 0`, over the control plane's
 * local socket and over HTTPS), where the time goes, and what else was tried.
 */
import { spawnSync } from 'node:child_process';
import { ms, verdict, type LatencySummary } from './stats.ts';

/** The rows the text refers to, by what they measure. */
export type RowId =
  | 'list'
  | 'kubectlVersion'
  | 'node'
  | 'help'
  | 'oneSocket'
  | 'oneSocketInstalled'
  | 'oneHttpsInstalled'
  | 'oneSocketNoCache'
  | 'oneHttps'
  | 'kubectlOne'
  | 'nodeTls'
  | 'floorTls'
  | 'floorSocket'
  | 'nodeNoExtraCa'
  | 'oneSocketNoExtraCa';

/** One timed row: its label and summaries. */
export interface Row {
  id: RowId;
  label: string;
  wall: LatencySummary;
  cpu: LatencySummary;
}

/** What the text says besides the rows. */
export interface RenderInput {
  rows: Row[];
  /** Issue 14's median per-round ratio (socket row / `node -e 0` of the same round). */
  paired: number;
  runs: number;
  warmup: number;
  nodes: number;
  built: string;
  url: string;
  socket: string;
  /** NODE_EXTRA_CA_CERTS as the runs saw it, and how many certificates that file holds. */
  extraCa?: { path: string; certs: number };
}

/** What else was tried for issue 14 (figures measured once while doing it; this benchmark does not re-measure them). */
const TRIED = [
  'Tried for issue 14 (CPU ms p50 from paired runs of 40 rounds on 2026-12-01; `node -e 0` took 54–57 ms CPU in each):',
  '',
  "- *shipped*: plain requests over the client's own HTTP/1.1 client on `node:tls` (api/client/http1.ts) instead of " +
    '`node:https`, which is now loaded only for streams: `get nodes <one>` 85.7 → 79.6 ms, `--help` 68.5 → 64.4 ms.',
  "- *shipped* (2026-12-02): on the control plane's machine, the API on a local Unix socket named by the admin " +
    'meshconfig (api/server/listen-unix.ts): no `node:tls`, no handshake (the socket rows above).',
  '- a V8 code cache of the bundle (`vm.Script` `cachedData`, made after a `get`): −1.6 ms on 2026-12-01; *shipped* ' +
    "on 2026-12-02 (cli/launcher.ts: the build's own `get` run writes it, hack/code-cache.mjs), the row without it above.",
  '- a startup snapshot (`node --snapshot-blob`, Node 20.20): `node:tls` and `node:https` cannot be in it (the builder ' +
    'aborts: "global handle not serialized"); an empty user snapshot starts 2 ms slower than Node\'s own; the bundle in ' +
    'a snapshot saves 2.9 ms on `get` but needs the blob (4.7 MB, per Node binary) passed by absolute path, i.e. a ' +
    'launcher script in front of `node`; not shipped.',
  '- a minified bundle (whitespace only, or all): no measurable change; a bundle holding only `get` (78 instead of ' +
    '176 KB, the bound for splitting commands out or lazier imports): −1.3 ms on `--help`, −0.8 ms on `get`.',
  '- TLS session resumption across runs (the ticket kept in a file): −0.7 ms; not shipped (a secret on disk for it). ' +
    'Giving the CA costs 0.3 ms over a context without one. `get nodes <one>` makes one connection and one request ' +
    '(no discovery).',
  "- *shipped* (2026-12-02, second session): meshctl's shebang (`#!/usr/bin/env -S -u NODE_EXTRA_CA_CERTS " +
    'MESHCTL_EXTRA_CA_CERTS=${NODE_EXTRA_CA_CERTS} node`, GNU env) starts Node without NODE_EXTRA_CA_CERTS, which ' +
    'Node 20 reads at every start (~50 ms here); meshctl adds that file to the bundled roots itself when a meshconfig ' +
    'names no CA (cli/extra-ca.ts, test/e2e/cli-extra-ca.test.ts). The rows run as `node dist/meshctl.js` show the ' +
    'run without it.',
  '- *shipped* (2026-12-02, measured in instructions with callgrind, repeatable to ±0.01 M; `node -e 0` 94.1 M, the ' +
    'least socket client 124.2 M): an ASCII bundle (one non-ASCII regex character made V8 keep the whole bundle as a ' +
    'two-byte string), a launcher that loads neither `node:module` nor `node:url`, `node:os` only for the ' +
    '`~/.meshctl/config` lookup, output through `fs.writeSync` instead of the `process.stdout` stream (no stream ' +
    'modules for a short answer): `get nodes <one>` 143.6 → 137.5 M, `--help` 120.3 → 106.1 M. What remains over the ' +
    'least client (~13 M, 3–4 ms of CPU): reading the code cache back (~3.5 M), reading the bundle and cache files ' +
    "(~2.2 M), the bundle's top level (~3 M), `get`, the meshconfig and the client (~2.2 M). Splitting the other " +
    'commands out of the bundle (−2.3 M) was not shipped: each bundle would have its own `ApiError` class, and ' +
    '`instanceof ApiError` across them would silently fail.',
];

function kubectlVersion(): string {
  const r = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  return (r.stdout.split('\n')[0] ?? '').trim();
}

function kubectlPath(): string {
  return spawnSync('sh', ['-c', 'readlink -f "$(command -v kubectl)"'], { encoding: 'utf8' }).stdout.trim();
}

/** Renders section 3. */
export function renderCliStartup(f: RenderInput): string {
  const row = rowsById(f.rows);
  const ratio = row.list.wall.mean / row.kubectlVersion.wall.mean;
  const ratioP50 = row.list.wall.p50 / row.kubectlVersion.wall.p50;
  return [
    '## 3. CLI start-up: `meshctl get nodes` vs `kubectl version --client`',
    '',
    `\`dist/meshctl.js --config <meshconfig> get nodes\` (the esbuild bundle, ${f.built}; run as the installed \`meshctl\``,
    `command is: the file itself, started by its shebang, unless a row says \`node dist/meshctl.js\`) against the real`,
    `\`mesh-control-plane\` (spawnControlPlane, **HTTPS** with its own CA at \`${f.url}\`, and its local socket`,
    `\`${f.socket}\`) holding ${f.nodes} Nodes: a full start, connection, request and table print. Versus \`kubectl version --client\``,
    `(no network at all) — \`${kubectlVersion()}\`, \`${kubectlPath()}\`. Each command ran ${f.runs} times, alternating,`,
    `after ${f.warmup} warm-up rounds (output to /dev/null; each output was checked once before), wall time read from one bash loop's`,
    "`$EPOCHREALTIME` around each command; CPU time (user + system) of each run from bash's `times` (its children's",
    'totals) after it. "Over HTTPS" rows use a copy of the admin meshconfig without its `meshctl.dev/local-socket`',
    "extension (meshctl run on another machine); the local socket rows use the control plane's own admin meshconfig.",
    '',
    '| command | mean ms | p50 ms | p99 ms | min … max ms | CPU p50 ms |',
    '|---|---|---|---|---|---|',
    ...f.rows.map(
      ({ label, wall: s, cpu }) =>
        `| ${label} | **${ms(s.mean)}** | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.min)} … ${ms(s.max)} | ${ms(cpu.p50)} |`,
    ),
    '',
    `Ratio meshctl / kubectl: **${ratio.toFixed(2)}×** (mean), ${ratioP50.toFixed(2)}× (p50). Target (issue 2): ≤ 2× — ${verdict(ratio <= 2)}.`,
    '',
    ...oneNode(row, f),
    '',
    ...extraCaNote(row, f),
    ...TRIED,
  ].join('\n');
}

function rowsById(rows: Row[]): Record<RowId, Row> {
  return Object.fromEntries(rows.map((r) => [r.id, r])) as Record<RowId, Row>;
}

const plus = (a: number, b: number): string => (a >= b ? `+${ms(a - b)}` : `−${ms(b - a)}`);
const times = (a: Row, b: Row): string => `${(a.wall.p50 / b.wall.p50).toFixed(2)}×`;

/** Issue 14: `meshctl get nodes <one>` against bare `node -e 0`, over the socket (judged) and over HTTPS. */
function oneNode(row: Record<RowId, Row>, f: RenderInput): string[] {
  const { node, help, oneSocket: sock, oneHttps: https, kubectlOne: kube, nodeTls, floorTls, floorSocket } = row;
  const cpu = (r: Row): string => `CPU ${(r.cpu.p50 / node.cpu.p50).toFixed(2)}×`;
  const c = (r: Row): number => r.cpu.p50;
  const w = (r: Row): number => r.wall.p50;
  const { oneSocketInstalled: iSock, oneHttpsInstalled: iHttps } = row;
  return [
    `\`meshctl get nodes <one>\` / \`node -e 0\` (p50), run as the installed command: over the local socket ` +
      `**${times(iSock, node)}** (${(iSock.wall.mean / node.wall.mean).toFixed(2)}× mean; ${f.paired.toFixed(2)}× the ` +
      `median of the ${f.runs} rounds' own ratios; ${cpu(iSock)}), over HTTPS **${times(iHttps, node)}** (${cpu(iHttps)}). ` +
      `Started as \`node dist/meshctl.js\` (Node then reads NODE_EXTRA_CA_CERTS first, when it is set): over the socket ` +
      `${times(sock, node)} (${(sock.wall.mean / node.wall.mean).toFixed(2)}× mean; ${cpu(sock)}), over HTTPS ` +
      `${times(https, node)} (${cpu(https)}); \`kubectl get nodes <one>\`: ${times(kube, node)}; meshctl over HTTPS / ` +
      `kubectl: ${times(iHttps, kube)} installed, ${times(https, kube)} started by hand. The least a Node client can do ` +
      `for the same answer: one GET over the socket with \`node:net\` ${times(floorSocket, node)} (${cpu(floorSocket)}), ` +
      `over \`node:tls\` ${times(floorTls, node)} (${cpu(floorTls)}).`,
    `Where meshctl's time goes, started as \`node dist/meshctl.js\` like the reference rows (p50 wall; CPU p50 in ` +
      `brackets): Node's own start-up ${ms(w(node))} ms (${ms(c(node))}), ` +
      `loading the bundle and parsing flags ${plus(w(help), w(node))} ms (${plus(c(help), c(node))}), the request and ` +
      `printing over the socket ${plus(w(sock), w(help))} ms (${plus(c(sock), c(help))}), over HTTPS ` +
      `${plus(w(https), w(help))} ms (${plus(c(https), c(help))}); without the code cache, over the socket ` +
      `${plus(w(row.oneSocketNoCache), w(sock))} ms (${plus(c(row.oneSocketNoCache), c(sock))}); of the least TLS client's ${plus(w(floorTls), w(node))} ms ` +
      `(${plus(c(floorTls), c(node))}) over \`node -e 0\`, loading \`node:tls\` alone is ${plus(w(nodeTls), w(node))} ms ` +
      `(${plus(c(nodeTls), c(node))}); the least socket client's is ${plus(w(floorSocket), w(node))} ms (${plus(c(floorSocket), c(node))}).`,
    "Target (issue 14), judged on `meshctl get nodes <one>` run on the control plane's machine as installed: " +
      `≤ 1.10× \`node -e 0\` — ${verdict(w(iSock) / w(node) <= 1.1)} (started as \`node dist/meshctl.js\`: ` +
      `${verdict(w(sock) / w(node) <= 1.1)}).`,
    `Remote meshctl (over HTTPS, no socket to use), as installed: ${times(iHttps, node)} — ` +
      `${verdict(w(iHttps) / w(node) <= 1.1)}.`,
  ];
}

/** What NODE_EXTRA_CA_CERTS in the environment does to every row: Node parses that file at each start. */
function extraCaNote(row: Record<RowId, Row>, f: RenderInput): string[] {
  if (!f.extraCa || !row.nodeNoExtraCa || !row.oneSocketNoExtraCa) return [];
  const { node, nodeNoExtraCa: bare, oneSocketNoExtraCa: sockBare } = row;
  return [
    `NODE_EXTRA_CA_CERTS is set in this environment (\`${f.extraCa.path}\`, ${f.extraCa.certs} certificates): Node 20 ` +
      'then reads that file and builds its whole root store at every start, before any script runs, and every row ' +
      "started as `node ...` pays it. meshctl's shebang starts Node without it (cli/extra-ca.ts): meshctl reads the " +
      'file only to reach a server whose meshconfig names no CA, and puts the variable back for what it starts. With ' +
      `it empty for both, \`node -e 0\` takes ${ms(bare.wall.p50)} ms (${ms(bare.cpu.p50)} CPU) instead of ` +
      `${ms(node.wall.p50)} (${ms(node.cpu.p50)}), and \`meshctl get nodes <one>\` over the socket is ` +
      `**${times(sockBare, bare)}** of it (${ms(sockBare.wall.p50)} ms): that is meshctl's own cost over bare Node, ` +
      "which the ratio above, in the environment the issue's 88 ms figure came from, does not show.",
    '',
  ];
}
