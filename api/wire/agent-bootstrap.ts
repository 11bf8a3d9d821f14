/**
 * The agent's bootstrap file, `<agent-state-dir>/bootstrap-declaration.json` (0600): what `meshctl init`
 * hands the agent of the control-plane node, whose control plane cannot hand it anything yet — that agent
 * is what will start it (ADR 0002: the control plane is a module like any other).
 *
 * It holds the node's identity (name, site, the control plane's URL and CA, the node's credential) and its
 * first Declaration, exactly as init stored it in the control plane's store. `mesh-agent run` imports it on
 * a start whose own store holds no declaration yet, then renames it `…imported`. meshctl writes the file and
 * the agent reads it: neither writes the other's store (ADR 0045).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Declaration } from '../v1alpha1/generated/declaration.ts';
import type { ClientConfig } from '../client/types.ts';

/** The file name under the agent's state directory. */
export const AGENT_BOOTSTRAP_FILE = 'bootstrap-declaration.json';

/** The `kind` of the file (it is not an API object). */
const KIND = 'AgentBootstrap';
const API_VERSION = 'meshctl.dev/internal';

/** What the bootstrap file says. */
export interface AgentBootstrap {
  nodeName: string;
  site?: string;
  /** How the agent reaches the control plane once the control plane runs (URL, CA, the node's credential). */
  connection: ClientConfig;
  /** The node's first Declaration, as stored in the control plane's store. */
  declaration: Declaration;
}

/** The path of the bootstrap file in a state directory. */
export function agentBootstrapPath(stateDir: string): string {
  return join(stateDir, AGENT_BOOTSTRAP_FILE);
}

/** The file's text (JSON). */
export function renderAgentBootstrap(b: AgentBootstrap): string {
  return JSON.stringify({ apiVersion: API_VERSION, kind: KIND, ...b }, null, 2) + '\n';
}

/** Reads the bootstrap file of a state directory: undefined when there is none; throws a readable Error when it is damaged. */
export function readAgentBootstrap(stateDir: string): AgentBootstrap | undefined {
  const path = agentBootstrapPath(stateDir);
  if (!existsSync(path)) return undefined;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${path}: not valid JSON (${(e as Error).message}); it is written by meshctl init`);
  }
  const conn = raw.connection as Partial<ClientConfig> | undefined;
  const decl = raw.declaration as Partial<Declaration> | undefined;
  const problem =
    raw.kind !== KIND
      ? `kind is not ${KIND}`
      : typeof raw.nodeName !== 'string'
        ? 'nodeName is missing'
        : typeof conn?.server !== 'string'
          ? 'connection.server is missing'
          : decl?.kind !== 'Declaration' || decl.metadata?.name !== raw.nodeName || !Array.isArray(decl.spec?.resources)
            ? 'declaration is not the Declaration of nodeName'
            : undefined;
  if (problem) throw new Error(`${path}: ${problem}; it is written by meshctl init`);
  return {
    nodeName: raw.nodeName as string,
    ...(typeof raw.site === 'string' ? { site: raw.site } : {}),
    connection: {
      server: conn!.server!,
      ...(conn!.caData ? { caData: conn!.caData } : {}),
      ...(conn!.token ? { token: conn!.token } : {}),
    },
    declaration: decl as Declaration,
  };
}
