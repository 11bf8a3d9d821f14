/**
 * The overlay e2e test's mesh: a real control plane (root namespace, 127.0.0.1) and one real agent per
 * host namespace (netns.ts), each agent reaching the control plane through a forwarder (cp-forwarder.ts)
 * and naming its WireGuard interface after the run (`--wireguard-interface`). Torn down by `close()`:
 * agents and forwarders, then every namespace with its processes (wireguard-go first), then the temp dir.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type HttpClient } from '../../../api/client/http-client.ts';
import { spawnAgentProgram, waitFor, type AgentProcess } from '../../../agent/testing.ts';
import { spawnControlPlane, type ControlPlaneProcess } from '../../harness.ts';
import { INTERVALS } from '../mesh-helpers.ts';
import { forwardControlPlane, type Forwarder } from './cp-forwarder.ts';
import { buildUnderlay, cleanup, ping, PREFIX, TEMP_DIR_PREFIX, type Host } from './netns.ts';

/** The hosts: the hub in its own segment, a and b sharing site1's segment, c alone at site2. */
export const HOSTS = [
  { name: 'hub', site: 'dc', byte: 2 },
  { name: 'a', site: 'site1', byte: 11 },
  { name: 'b', site: 'site1', byte: 12 },
  { name: 'c', site: 'site2', byte: 13 },
];

/** The running test mesh. */
export interface OverlayMesh {
  cp: ControlPlaneProcess;
  admin: HttpClient;
  hosts: Record<string, Host>;
  agents: Record<string, AgentProcess>;
  /** Starts host `name`'s agent in its namespace (the first start with name, root and meshconfig). */
  startAgent(name: string): Promise<AgentProcess>;
  /** The node's overlay address, once allocated (remembered: it never changes while the node exists). */
  address(name: string): Promise<string>;
  /** Waits until a ping from `from` to `to` gets a reply; returns it. */
  reach(from: string, to: string, timeoutMs?: number): Promise<{ ttl: number; route: string[] }>;
  close(): Promise<void>;
}

/** Builds the underlay, starts the control plane and creates the Nodes with their site and endpoint. */
export async function startOverlayMesh(): Promise<OverlayMesh> {
  const dir = mkdtempSync(join(tmpdir(), `${TEMP_DIR_PREFIX}${PREFIX}-`));
  const forwarders: Forwarder[] = [];
  const agents: Record<string, AgentProcess> = {};
  const started = new Set<string>();
  const addresses = new Map<string, string>();
  let cp: ControlPlaneProcess | undefined;
  let admin: HttpClient | undefined;
  const close = async (): Promise<void> => {
    admin?.close();
    await Promise.all(Object.values(agents).map((a) => a.kill('SIGKILL')));
    await Promise.all(forwarders.map((f) => f.stop()));
    await cleanup({ leftovers: false });
    await cp?.kill();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  };
  try {
    const hosts = Object.fromEntries((await buildUnderlay(HOSTS)).map((h) => [h.name, h]));
    cp = await spawnControlPlane({ dataDir: join(dir, 'cp') });
    admin = createClient(cp.config);
    const port = Number(new URL(cp.url).port);
    for (const h of Object.values(hosts)) {
      forwarders.push(await forwardControlPlane(h.ns, port));
      const spec = { site: h.site, endpoint: `${h.underlay}:51820` };
      await admin.create('nodes', {
        apiVersion: 'meshctl.dev/v1alpha1',
        kind: 'Node',
        metadata: { name: h.name },
        spec,
      });
    }
    const mesh: OverlayMesh = {
      cp,
      admin,
      hosts,
      agents,
      async startAgent(name) {
        const h = hosts[name];
        const stateDir = join(dir, name, 'state');
        const args = ['--state-dir', stateDir, '--wireguard-interface', h.ifname, ...INTERVALS];
        if (!started.has(name)) {
          const root = join(dir, name, 'root');
          mkdirSync(root, { recursive: true });
          args.push('--name', name, '--root', root, '--config', cp!.meshconfigPath);
          started.add(name);
        }
        const node = [process.execPath, '--import', 'tsx', 'agent/main.ts', 'run', ...args];
        agents[name] = await spawnAgentProgram(['ip', 'netns', 'exec', h.ns, ...node], { timeoutMs: 30_000 });
        return agents[name];
      },
      async address(name) {
        // An address never changes while its node exists: remembered, so it is known with the control plane down.
        const known = addresses.get(name);
        if (known) return known;
        const got = await waitFor(
          async () => (await admin!.get('nodes', name)).status?.overlay?.address,
          30_000,
          `an overlay address for ${name}`,
        );
        addresses.set(name, got);
        return got;
      },
      async reach(from, to, timeoutMs = 30_000) {
        const addr = await mesh.address(to);
        return waitFor(
          () => ping(hosts[from].ns, addr, true),
          timeoutMs,
          `a ping reply from ${to} (${addr}) to ${from}`,
        );
      },
      close,
    };
    return mesh;
  } catch (e) {
    await close();
    throw e;
  }
}
