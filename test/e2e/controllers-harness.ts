/**
 * The Declaration and Assignment controllers against the real API server and store (in-process, port 0), through
 * the real HTTP client, run by the controller manager: the shared setup of declaration-controller.test.ts (what a
 * node's Declaration holds) and assignment-reports.test.ts (what the Assignment's status says of the agent's
 * reports). Each test uses its own nodes, modules and assignments.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import type { Client } from '../../api/client/types.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import type { Assignment, Declaration, ModuleResource, ResourceResult } from '../../api/v1alpha1/generated/index.ts';
import { addDeclarationAndAssignmentControllers } from '../../controllers/assignment-controller.ts';
import { createManager, type Manager } from '../../controllers/runtime/manager.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import { startServer, type TestServer } from '../harness.ts';
import { eventually } from '../eventually.ts';

/** The in-process server, the admin's client and the controller manager of the running suite (set by its \`before\`). */
export let server: TestServer;
export let client: HttpClient;
export let manager: Manager;
/** Every write the controller sent, as `<verb> <plural>/<name>` (the store also turns identical writes into no-ops, so count requests). */
export const controllerWrites: string[] = [];

/** The controller's writes since `mark`, without the Events it records about what changed (not state). */
export const stateWrites = (mark: number): string[] =>
  controllerWrites.slice(mark).filter((w) => !w.startsWith('create events/'));

/** The real client, recording the writes the controller sends through it. */
/** Declaration writes the controllers have in flight now, and the most at once since `max` was reset. */
export const declarationWrites = { inFlight: 0, max: 0 };

function recording(c: Client): Client {
  const note = (verb: string, plural: string, obj: KubeObject): void => {
    controllerWrites.push(`${verb} ${plural}/${obj.metadata.name}`);
  };
  return {
    ...c,
    create: (plural, obj, opts) => {
      note('create', plural, obj);
      return c.create(plural, obj, opts);
    },
    update: async (plural, obj, opts) => {
      note('update', plural, obj);
      if (plural !== 'declarations') return c.update(plural, obj, opts);
      declarationWrites.inFlight++;
      declarationWrites.max = Math.max(declarationWrites.max, declarationWrites.inFlight);
      try {
        return await c.update(plural, obj, opts);
      } finally {
        declarationWrites.inFlight--;
      }
    },
    updateStatus: (plural, obj, opts) => {
      note('updateStatus', plural, obj);
      return c.updateStatus(plural, obj, opts);
    },
  };
}

export const API = 'meshctl.dev/v1alpha1';
export const dir = (id: string, path: string): ModuleResource => ({ id, kind: 'Directory', spec: { path } });
export const file = (id: string, path: string, content: string, dependsOn?: string[]): ModuleResource => ({
  id,
  kind: 'File',
  spec: { path, content },
  ...(dependsOn ? { dependsOn } : {}),
});

export const put = (plural: string, obj: object): Promise<KubeObject> => client.create(plural, obj as KubeObject);
export const node = (name: string) => put('nodes', { apiVersion: API, kind: 'Node', metadata: { name } });
export const mod = (name: string, version: string, resources: ModuleResource[]) =>
  put('modules', { apiVersion: API, kind: 'Module', metadata: { name }, spec: { version, resources } });
export const assign = (name: string, spec: Assignment['spec']) =>
  put('assignments', { apiVersion: API, kind: 'Assignment', metadata: { name }, spec });

export const getDecl = async (name: string) => await client.get('declarations', name);
export const getAsg = async (name: string) => await client.get('assignments', name);

/** Waits until the assignment's Applied condition has `reason`; returns the assignment. */
export async function waitReason(name: string, reason: string): Promise<Assignment> {
  return eventually(async () => {
    const a = await getAsg(name);
    assert.equal(a.status?.conditions?.find((c) => c.type === 'Applied')?.reason, reason);
    return a;
  });
}

/**
 * Writes Declaration.status as the node's agent would: the stored generation and one result per resource.
 * With `read`, the write is conditional on that resourceVersion (409 if anyone wrote since).
 */
export async function agentReports(
  nodeName: string,
  state: (id: string) => Pick<ResourceResult, 'state' | 'message'>,
  read?: Declaration,
): Promise<Declaration> {
  const d = read ?? (await getDecl(nodeName));
  const results = d.spec.resources.map((r) => ({ id: r.id, ...state(r.id) }));
  const status = { observedGeneration: d.metadata.generation, results };
  return client.updateStatus('declarations', { ...d, status });
}

/**
 * Waits until the controller's informer cache holds `name` at resourceVersion `rv` or later. The assertion has
 * a message: without one, a failing `assert.ok` makes Node parse the (transpiled) source to describe the
 * expression, which blocks the event loop for seconds, and with it the informer this waits for.
 */
export async function waitCached(plural: string, name: string, rv: string): Promise<void> {
  await eventually(async () => {
    const cached = manager.informerFor(plural).get(name)?.metadata.resourceVersion;
    assert.ok(Number(cached) >= Number(rv), `${plural}/${name} cached at ${cached}, waiting for ${rv}`);
  });
}

/** Metadata-only writes to a node, a module and an assignment, seen by the controller's caches when it returns. */
export async function churn(nodeName: string, module: string, assignment: string, value: string): Promise<void> {
  const n = await client.patch('nodes', nodeName, { metadata: { labels: { touched: value } } });
  const m = await client.patch('modules', module, { metadata: { annotations: { touched: value } } });
  const a = await client.patch('assignments', assignment, { metadata: { labels: { touched: value } } });
  await waitCached('nodes', nodeName, n.metadata.resourceVersion!);
  await waitCached('modules', module, m.metadata.resourceVersion!);
  await waitCached('assignments', assignment, a.metadata.resourceVersion!);
}

/**
 * Registers the suite's hooks: a server with a real store, and the Declaration and Assignment controllers on it, as
 * the control plane runs them.
 */
export function controllersSuite(): void {
  before(async () => {
    server = await startServer({ insecure: true });
    client = createClient(server.config);
    manager = createManager({ client: recording(client), logger: silentLogger, backoff: { baseMs: 20, maxMs: 200 } });
    addDeclarationAndAssignmentControllers(manager);
    assert.equal(await manager.start(), true);
  });

  after(async () => {
    await manager?.stop();
    client?.close();
    await server?.stop();
  });
}
