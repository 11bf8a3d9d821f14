/**
 * The agent's calls to `ip`, `wg` and `wireguard-go` (no shell), and the parsing of what they print. The
 * WireGuard driver (agent/drivers/wireguard.ts) and the overlay status report (overlay-status.ts) share them.
 *
 * Measured on the project's machines (../shared/recipes/wireguard-netns.md): without the kernel module,
 * `ip link add … type wireguard` fails with "Unknown device type"; `wireguard-go IF` in its default daemon
 * mode returns once the TUN device and its UAPI socket exist (about 10 ms) and the daemon lives on (so an
 * interface survives an agent restart); `ip link del IF` makes the daemon exit. LOG_LEVEL is never passed:
 * with it, the daemon keeps the caller's stdio and the call would not return.
 */
import { spawn } from 'node:child_process';

/** How long one tool call may take. */
const TOOL_TIMEOUT_MS = 15_000;

/** Runs `cmd args` with `input` on stdin; resolves its stdout, rejects with its stderr when it fails. */
export function runTool(cmd: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' };
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env, timeout: TOOL_TIMEOUT_MS });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('error', (e) => reject(new Error(`${cmd} ${args.join(' ')}: ${e.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')}: ${err.trim() || `exit ${code ?? signal}`}`));
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

/** One peer as `wg show IF dump` prints it. */
export interface WgPeerDump {
  publicKey: string;
  endpoint?: string;
  allowedIPs: string[];
  /** Seconds since the epoch; 0: never. */
  latestHandshake: number;
  rxBytes: number;
  txBytes: number;
  /** 0: off. */
  persistentKeepalive: number;
}

/** The interface as `wg show IF dump` prints it. */
export interface WgDump {
  publicKey: string;
  listenPort: number;
  peers: WgPeerDump[];
}

/** Parses `wg show IF dump` (tab-separated: the interface line, then one line per peer). */
export function parseWgDump(text: string): WgDump {
  const [head, ...rest] = text.split('\n').filter((l) => l.length > 0);
  const h = (head ?? '').split('\t');
  const peers = rest.map((line): WgPeerDump => {
    const f = line.split('\t');
    return {
      publicKey: f[0] ?? '',
      ...(f[2] && f[2] !== '(none)' ? { endpoint: f[2] } : {}),
      allowedIPs: f[3] && f[3] !== '(none)' ? f[3].split(',').sort() : [],
      latestHandshake: Number(f[4]) || 0,
      rxBytes: Number(f[5]) || 0,
      txBytes: Number(f[6]) || 0,
      persistentKeepalive: f[7] === 'off' ? 0 : Number(f[7]) || 0,
    };
  });
  return { publicKey: h[1] ?? '', listenPort: Number(h[2]) || 0, peers };
}

/** `wg show IF dump`, parsed; undefined when there is no such WireGuard interface. */
export async function wgDump(ifname: string): Promise<WgDump | undefined> {
  try {
    return parseWgDump(await runTool('wg', ['show', ifname, 'dump']));
  } catch {
    return undefined;
  }
}

/** A link as `ip -j addr show dev IF` describes it. */
export interface IpLink {
  up: boolean;
  /** IPv4 addresses with prefix length, sorted. */
  addresses: string[];
}

/** The link named `ifname`, or undefined when there is none. */
export async function ipLink(ifname: string): Promise<IpLink | undefined> {
  let text: string;
  try {
    text = await runTool('ip', ['-j', 'addr', 'show', 'dev', ifname]);
  } catch (e) {
    if (/does not exist|Cannot find device/.test((e as Error).message)) return undefined;
    throw e;
  }
  const [link] = JSON.parse(text) as Array<{ flags?: string[]; addr_info?: Array<Record<string, unknown>> }>;
  if (!link) return undefined;
  const addresses = (link.addr_info ?? [])
    .filter((a) => a.family === 'inet')
    .map((a) => `${String(a.local)}/${String(a.prefixlen)}`)
    .sort();
  return { up: (link.flags ?? []).includes('UP'), addresses };
}

/**
 * Creates WireGuard interface `ifname`: the kernel's where it has WireGuard, else `wireguard-go` (daemon
 * mode: it returns once the device exists). Resolves which one it used.
 */
export async function createWireGuardLink(ifname: string): Promise<'kernel' | 'wireguard-go'> {
  try {
    await runTool('ip', ['link', 'add', 'dev', ifname, 'type', 'wireguard']);
    return 'kernel';
  } catch (kernel) {
    try {
      await runTool('wireguard-go', [ifname]);
      return 'wireguard-go';
    } catch (user) {
      throw new Error(
        `cannot create WireGuard interface ${ifname}: the kernel said "${(kernel as Error).message}", ` +
          `wireguard-go said "${(user as Error).message}"`,
      );
    }
  }
}
