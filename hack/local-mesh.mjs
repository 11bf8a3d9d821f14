// `npm start`: a whole mesh on this machine — the control plane and three agents, each with its own store
// and root folder under .meshctl/local/ — applies manifests/examples/ (the greeter, and a route node-a serves
// over HTTPS with a certificate from the mesh CA), waits until the nodes converge and the route is Ready, and
// says what runs where and the recovery clock (`meshctl status`). Agents join with one-time tokens. Ctrl-C (or SIGTERM) stops everything. Runs the built binaries in dist/ (no tsx).
import { spawn, execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { claimHome, releaseHome, stopRecordedServices } from './local-mesh-procs.mjs';

/** The V8 flags of the agent bundle's shebang (hack/build.mjs): the local mesh starts agents as shipped. */
const AGENT_NODE_FLAGS = ['--max-semi-space-size=1', '--optimize-for-size'];
/** The V8 flags of the control-plane bundle's shebang (hack/build.mjs). */
const CONTROL_PLANE_NODE_FLAGS = ['--max-old-space-size=1024', '--max-semi-space-size=64', '--no-memory-reducer'];

const home = resolve(process.env.MESHCTL_HOME ?? '.meshctl/local');
const listen = process.env.MESHCTL_LISTEN ?? '127.0.0.1:6443';
const nodes = ['node-a', 'node-b', 'node-c'];
const dist = resolve('dist');
const children = [];

function fail(message) {
  console.error(`npm start: ${message}`);
  shutdown(1);
}

/** Starts a built binary, its JSON log lines to logs/<name>.log; resolves with the first line matching `ready`. */
function start(name, bin, args, ready) {
  mkdirSync(join(home, 'logs'), { recursive: true });
  const log = createWriteStream(join(home, 'logs', `${name}.log`), { flags: 'a' });
  // Each runs with the V8 flags its shebang carries (see hack/build.mjs): `node file` does not read shebangs.
  const flags =
    bin === 'mesh-agent.js' ? AGENT_NODE_FLAGS : bin === 'mesh-control-plane.js' ? CONTROL_PLANE_NODE_FLAGS : [];
  // detached: a Ctrl-C in the terminal reaches this script only, which then stops each process once, in order.
  const child = spawn(process.execPath, [...flags, join(dist, bin), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const entry = { name, bin, args, ready, child };
  const i = children.findIndex((c) => c.name === name);
  if (i >= 0) children[i] = entry;
  else children.push(entry);
  child.stdout.pipe(log);
  return new Promise((resolveReady, rejectReady) => {
    createInterface({ input: child.stderr }).on('line', (line) => {
      log.write(line + '\n');
      let event;
      try {
        event = JSON.parse(line);
      } catch {
        return;
      }
      if (event.level === 'error') console.error(`${name}: ${event.msg}${event.error ? `: ${event.error}` : ''}`);
      if (event.msg === 'Reconnected to control plane')
        console.log(`${name}: Reconnected to control plane (unreachable for ${event.unreachableSeconds} s)`);
      if (ready(event)) resolveReady(event);
    });
    child.on('exit', (code, signal) => {
      rejectReady(
        new Error(`${name} exited (${signal ?? code}) before it was ready; see ${join(home, 'logs', `${name}.log`)}`),
      );
      if (stopping || !ready.done) return;
      console.error(
        `\n${name} stopped (${signal ?? `exit ${code}`}).` +
          (name === 'control-plane' ? ' Every node goes on running what it was last told; only change stops.' : ''),
      );
      console.error(
        name === 'control-plane'
          ? 'Press Enter to start it again; Ctrl-C stops everything.'
          : `Press Enter to start ${name} again (the control plane stays as it is); Ctrl-C stops everything.`,
      );
    });
  }).then((event) => {
    ready.done = true;
    return event;
  });
}

/**
 * Enter starts again what was killed to try an outage: stopped agents first, on their own (so an agent can
 * cold-start from its store while the control plane is still down); when no agent is stopped, the control plane.
 */
function restartStopped() {
  const isStopped = (c) => c.child.exitCode !== null || c.child.signalCode !== null;
  const agents = children.filter((c) => c.name !== 'control-plane' && isStopped(c));
  const stopped = agents.length > 0 ? agents : children.filter((c) => c.name === 'control-plane' && isStopped(c));
  if (stopped.length === 0) console.log('Nothing is stopped.');
  (async () => {
    for (const c of stopped) {
      const { child } = await start(c.name, c.bin, c.args, c.ready).then(() => children.find((x) => x.name === c.name));
      console.log(`${c.name} started again (pid ${child.pid}).`);
    }
    const cpDown = children.some((c) => c.name === 'control-plane' && isStopped(c));
    if (cpDown) console.log('The control plane is still down; press Enter again to start it.');
  })().catch((e) => console.error(e.message));
}

/**
 * Starts a node's agent. The first time, it joins with a one-time token (so it runs with its own node
 * credential, which is what fetches its routes' certificates); afterwards it runs from its state dir.
 */
async function startAgent(node, meshconfig, url) {
  const stateDir = join(home, 'nodes', node, 'state');
  const runFlags = ['--stop-services-on-exit', '--reconcile-interval', '2s', '--heartbeat-interval', '5s'];
  const run = ['run', '--state-dir', stateDir, ...runFlags];
  const ready = (e) => e.msg === 'Started agent';
  if (existsSync(join(stateDir, 'store'))) return start(node, 'mesh-agent.js', run, ready);
  const m = /--token (\S+) --ca-hash (\S+)/.exec(meshctl(meshconfig, 'token', 'create', '--description', node));
  if (!m) throw new Error('meshctl token create printed no join command');
  const join_ = ['join', '--server', url, '--token', m[1], '--ca-hash', m[2], '--name', node, '--site', 'local'];
  const root = ['--root', join(home, 'nodes', node, 'root')];
  await start(node, 'mesh-agent.js', [...join_, '--state-dir', stateDir, ...root, ...runFlags], ready);
  children.find((c) => c.name === node).args = run; // a restart (Enter) runs from the state dir
}

function meshctl(meshconfig, ...args) {
  return execFileSync(process.execPath, [join(dist, 'meshctl.js'), '--config', meshconfig, ...args], {
    encoding: 'utf8',
  });
}

async function converged(meshconfig, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const list = JSON.parse(meshctl(meshconfig, 'get', 'assignments', '-o', 'json'));
    const routes = JSON.parse(meshctl(meshconfig, 'get', 'routes', '-o', 'json'));
    const is = (type) => (o) => o.status?.conditions?.some((c) => c.type === type && c.status === 'True');
    if (list.items.length > 0 && list.items.every(is('Applied')) && routes.items.every(is('Ready'))) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits until every node has its overlay address (the control plane's) and public key (its agent's). */
async function overlayPublished(meshconfig, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const list = JSON.parse(meshctl(meshconfig, 'get', 'nodes', '-o', 'json'));
    if (
      list.items.length === nodes.length &&
      list.items.every((n) => n.status?.overlay?.address && n.status.overlay.publicKey)
    )
      return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Why the local mesh has overlay addresses and keys but no WireGuard interfaces. */
const NO_INTERFACES =
  'Overlay: every node has its address (OVERLAY IP) and WireGuard key (PUBLIC KEY), but no interface is created here:\n' +
  "the three agents share this machine's network namespace (one UDP port, one interface name), so the local mesh\n" +
  'gives its nodes no spec.endpoint, and a node without an underlay endpoint is not put on the overlay\n' +
  '(`meshctl describe node node-a`, Overlay: Message). test/e2e/overlay.test.ts runs real interfaces in namespaces.\n';

let stopping = false;
function shutdown(code) {
  if (stopping) return;
  stopping = true;
  const agents = children.filter((c) => c.name !== 'control-plane');
  const cp = children.find((c) => c.name === 'control-plane');
  const exited = (c) =>
    new Promise((r) => (c.child.exitCode !== null || c.child.signalCode !== null ? r() : c.child.on('exit', r)));
  for (const a of agents) a.child.kill('SIGTERM');
  Promise.all(agents.map(exited))
    // An agent stops its services on the way out; one that was killed (kill -9) left them running.
    .then(() => stopRecordedServices(Object.fromEntries(nodes.map((n) => [n, join(home, 'nodes', n, 'state')]))))
    .then((left) => {
      for (const s of left) console.log(`Stopped ${s.id} on ${s.node} (pid ${s.pid}), left running by its agent.`);
      cp?.child.kill('SIGTERM');
      return cp ? exited(cp) : undefined;
    })
    .then(() => {
      releaseHome(home);
      process.exit(code);
    });
}
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));

async function main() {
  for (const bin of ['mesh-control-plane.js', 'mesh-agent.js', 'meshctl.js']) {
    if (!existsSync(join(dist, bin)))
      fail(`dist/${bin} is missing: run \`npm install\` (it builds the binaries) or \`npm run build\``);
  }
  mkdirSync(home, { recursive: true });
  const running = claimHome(home);
  if (running !== undefined) {
    console.error(`npm start: a local mesh is already running in ${home} (pid ${running}).`);
    console.error('Stop it with Ctrl-C in its terminal (or kill ' + running + '), or set MESHCTL_HOME to run another.');
    process.exit(1);
  }
  const serving = await start(
    'control-plane',
    'mesh-control-plane.js',
    ['--data-dir', join(home, 'control-plane'), '--listen', listen],
    (e) => e.msg === 'Serving',
  );
  const meshconfig = serving.meshconfig;
  // A restart (Enter) must come back on the same port: the agents keep the URL they were given.
  children.find((c) => c.name === 'control-plane').args = [
    '--data-dir',
    join(home, 'control-plane'),
    '--listen',
    listen.replace(/:\d+$/, `:${serving.port}`),
  ];
  for (const node of nodes) mkdirSync(join(home, 'nodes', node, 'root'), { recursive: true });
  await Promise.all(nodes.map((node) => startAgent(node, meshconfig, serving.url)));
  process.stdout.write(meshctl(meshconfig, 'apply', '-f', 'manifests/examples/'));
  if (!(await converged(meshconfig, 60_000)))
    console.error(
      'npm start: the nodes did not converge within 60 s; see `meshctl get assignments` and `meshctl get routes`',
    );
  console.log(`\nA local mesh is running: the control plane at ${serving.url} and agents ${nodes.join(', ')}.\n`);
  if (!(await overlayPublished(meshconfig, 20_000)))
    console.error('npm start: not every node has its overlay address and key yet; see `meshctl get nodes -o wide`');
  console.log(meshctl(meshconfig, 'get', 'nodes', '-o', 'wide'));
  console.log(NO_INTERFACES);
  console.log(meshctl(meshconfig, 'get', 'assignments'));
  console.log(meshctl(meshconfig, 'get', 'routes'));
  console.log(meshctl(meshconfig, 'status'));
  // The status page on the control plane's listener, and a one-time sign-in link to it (meshctl dashboard).
  console.log(meshctl(meshconfig, 'dashboard', '--no-open'));
  console.log(
    'The link works once, for two minutes (the browser asks to accept the mesh CA); `meshctl dashboard` makes a new one.\n',
  );
  // Each node's own page, served by its agent from its own store (it works with the control plane down).
  console.log("Each node's own page (read-only, from the agent's own store; it answers with the control plane down):");
  for (const node of nodes) console.log(`  ${node}: ${nodePageUrl(node)}`);
  console.log('');
  console.log('The example route, served by node-a with a certificate from the mesh CA (the internal issuer):');
  console.log(
    `  curl --cacert ${join(home, 'control-plane', 'pki', 'ca.crt')} --resolve hello.mesh.test:8443:127.0.0.1 https://hello.mesh.test:8443/\n`,
  );
  console.log(`Each node's files are under ${join(home, 'nodes', '<node>', 'root')}; logs in ${join(home, 'logs')}.`);
  console.log('Point meshctl (and kubectl) at it from another terminal:\n');
  console.log(`export MESHCONFIG=${meshconfig}`);
  console.log(`export KUBECONFIG=${meshconfig}`);
  console.log(`export PATH=${join(dist, 'bin')}:$PATH\n`);
  console.log(
    `Then try: meshctl get nodes (or kubectl get nodes); meshctl logs node-a greeter-on-node-a/service -f (the greeter's output, which its agent also keeps in ${join(home, 'nodes', 'node-a', 'state', 'logs')});`,
  );
  console.log(
    `kill the control plane (kill -9 ${children[0].child.pid}) and watch the greeter keep writing, then press Enter`,
  );
  console.log('here to start it again. Ctrl-C stops everything.');
  createInterface({ input: process.stdin }).on('line', restartStopped);
}

/** The node page's URL: the agent's metrics address from its agent.json (written once it serves). */
function nodePageUrl(node) {
  try {
    const info = JSON.parse(readFileSync(join(home, 'nodes', node, 'state', 'agent.json'), 'utf8'));
    return `${info.metrics}/`;
  } catch (e) {
    return `(not known yet: ${e.message})`;
  }
}

main().catch((e) => fail(e.message));
