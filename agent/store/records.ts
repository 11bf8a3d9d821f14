/**
 * What the agent keeps in its own store, as plain typed values, and how each is wrapped into the
 * KubeObject shape the durable store holds (`{apiVersion, kind, metadata: {name}, spec}`). Only
 * agent/store/ sees the wrapping; the rest of the agent uses the typed values.
 */
import type { KubeObject } from '../../api/meta/types.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';

/** The apiVersion of the agent's private records (never served by any API). */
export const AGENT_API_VERSION = 'agent.meshctl.dev/v1';

/**
 * The agent-private plurals of its store. Typed as plain strings: they hold the agent's own records (e.g.
 * ReceivedDeclaration under `declarations`), not the API kinds the store's typed plurals name.
 */
export const PLURAL: Readonly<Record<'declarations' | 'inventory' | 'settings' | 'outbox' | 'materials', string>> = {
  declarations: 'declarations',
  materials: 'materials',
  inventory: 'inventory',
  settings: 'settings',
  outbox: 'outbox',
};

/** Who the agent is and how it reaches the control plane (saved at first start). */
export interface AgentIdentity {
  nodeName: string;
  /** The directory every declared path resolves under. */
  root: string;
  server: string;
  caData?: string;
  token?: string;
  /** spec.site for the Node object the agent creates when it does not exist. */
  site?: string;
}

/** What the agent remembers about its link to the control plane and its progress (written on change only). */
export interface ConnectionState {
  /** Since when the control plane has been unreachable (absent: reachable, or not yet tried). */
  unreachableSince?: string;
  /** When the agent last reached the control plane. */
  lastContact?: string;
  /** spec.generation last applied with every resource Applied. */
  appliedGeneration?: number;
}

/** The last Declaration received from the control plane, verbatim, and when it was stored. */
export interface ReceivedDeclaration {
  object: Declaration;
  receivedAt: string;
}

/**
 * A Certificate's material as the agent last fetched it from the control plane (issue 10 contract §5): kept
 * so the node goes on serving its routes across its own restarts with the control plane down.
 */
export interface HeldMaterial {
  /** The Certificate's name. */
  name: string;
  cert: string;
  key: string;
  ca: string;
  notBefore: string;
  notAfter: string;
  /** When the agent fetched it. */
  fetchedAt: string;
}

/** Something that happened on the node, kept until it has been reported as an Event. */
export interface OutboxItem {
  /** Store name; items sort by it in the order they were added. */
  name: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  involvedObject: { kind: 'Node' | 'Declaration'; name: string };
  time: string;
}

/** Wraps a value into the store's object shape. */
export function wrap(kind: string, name: string, spec: unknown): KubeObject {
  return { apiVersion: AGENT_API_VERSION, kind, metadata: { name }, spec };
}

/** The value inside a stored record (its spec). */
export function unwrap<T>(obj: KubeObject | undefined): T | undefined {
  return obj === undefined ? undefined : (obj.spec as T);
}

/** Checks that a stored declaration is shaped like one, so a damaged record is never taken for "nothing declared". */
export function checkDeclaration(rec: ReceivedDeclaration | undefined, where: string): void {
  if (rec === undefined) return;
  const d = rec.object as Partial<Declaration> | undefined;
  const ok =
    d?.kind === 'Declaration' &&
    typeof d.metadata?.name === 'string' &&
    Array.isArray(d.spec?.resources) &&
    typeof d.spec?.generation === 'number';
  if (!ok)
    throw new Error(
      `${where}: the stored declaration is damaged (no kind/metadata.name/spec.generation/spec.resources); refusing to start`,
    );
}
