/**
 * The writes of `meshctl init` into the control plane's store, which init opens directly — before any
 * control plane runs; the store's lock refuses it while one does. Each object is created only when missing,
 * so an init interrupted half-way finishes on the next run; the Mesh is created last (or, when a control plane
 * created it with the defaults, given its status last), so a Mesh naming the control-plane node means init
 * finished (and a second init refuses, changing nothing).
 *
 * Besides the plan's objects: the node's Declaration, rendered exactly as the declaration controller will
 * render it (so the control plane, once up, finds nothing to change), and the node's credential.
 */
import type { KubeObject } from '../api/meta/types.ts';
import { createNodeCredentials } from '../api/server/access/credentials.ts';
import { openStore, type FileStore } from '../api/store/index.ts';
import type { Declaration, Node } from '../api/v1alpha1/generated/index.ts';
import { declarationToWrite, renderDeclaration } from '../api/v1alpha1/render-declaration.ts';
import { CliError } from './errors.ts';
import type { InitPlan } from './init-plan.ts';

/** What the store holds for the node once seeded. */
export interface Seeded {
  declaration: Declaration;
  /** The node's credential in clear (only its hash is stored). */
  credential: string;
}

/** Opens the control plane's store, with a message that says why it may be locked. */
export async function openControlPlaneStore(dir: string): Promise<FileStore> {
  try {
    return await openStore({ dir });
  } catch (e) {
    const msg = (e as Error).message;
    const hint = /locked/.test(msg)
      ? ' — is the control plane running? meshctl init runs before it, on a machine that has none yet'
      : '';
    throw new CliError(`cannot open the control plane's store: ${msg}${hint}`);
  }
}

/**
 * The Mesh when init already ran on this store: one that names the control-plane node. A Mesh that names none
 * is the one a control plane created with the defaults when it was started on this store before init.
 */
export function initialisedMesh(store: FileStore): KubeObject | undefined {
  const mesh = store.get('meshes', 'mesh');
  return mesh?.status?.controlPlaneNode ? mesh : undefined;
}

/** Creates what is missing but the Mesh: the plan's objects, the node's Declaration and its credential. */
export async function seedStore(store: FileStore, plan: InitPlan): Promise<Seeded> {
  for (const o of plan.objects) if (o.plural !== 'meshes') await createIfMissing(store, o.plural, o.obj);
  const node = store.get('nodes', plan.node)!;
  const declaration = await ensureDeclaration(store, node);
  const credential = await createNodeCredentials({ store }).issue(node, '');
  return { declaration, credential };
}

/**
 * Creates the Mesh, which marks init as finished: call after everything else is written. A Mesh already there
 * (with the defaults, from a control plane started before init) keeps its settings and gets init's status.
 */
export async function finishInit(store: FileStore, plan: InitPlan): Promise<void> {
  const mesh = plan.objects.find((o) => o.plural === 'meshes')!;
  const current = store.get('meshes', 'mesh');
  if (!current) {
    await store.create(mesh.plural, structuredClone(mesh.obj));
    return;
  }
  const status = { ...current.status, ...(mesh.obj.status as object) };
  await store.update('meshes', { ...current, status }, { subresource: 'status' });
}

async function createIfMissing(store: FileStore, plural: string, obj: KubeObject): Promise<KubeObject> {
  return store.get(plural, obj.metadata.name!) ?? store.create(plural, structuredClone(obj));
}

/** Renders the node's Declaration from the stored assignments and modules, and stores it. */
async function ensureDeclaration(store: FileStore, node: Node): Promise<Declaration> {
  const name = node.metadata.name!;
  const current = store.get('declarations', name);
  const assignments = store.list('assignments').items;
  const modules = new Map(store.list('modules').items.map((m) => [m.metadata.name!, m]));
  const rendering = renderDeclaration({ node: name, assignments, modules, current });
  const next = declarationToWrite({ node, rendering, current });
  if (!next) return current!;
  return current ? store.update('declarations', next) : store.create('declarations', next);
}
