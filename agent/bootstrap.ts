/**
 * The first start of the control-plane node's agent, seeded by `meshctl init` (api/wire/agent-bootstrap.ts):
 * the bootstrap file supplies what flags would (node name, site, connection) and the first Declaration,
 * which holds the control plane itself — so the agent brings the control plane up with none running yet.
 *
 * Order, so that a crash at any point is finished by the next start: the identity is saved first, then the
 * declaration (only into a store that holds none), then the file is renamed `…imported`.
 */
import { renameSync } from 'node:fs';
import { agentBootstrapPath, type AgentBootstrap } from '../api/wire/agent-bootstrap.ts';
import type { Logger } from './engine/types.ts';
import type { IdentityInput } from './identity.ts';
import type { AgentStore } from './store/agent-store.ts';

/** This start's identity input with the bootstrap's values where no flag was given; refuses a bootstrap for another node. */
export function withBootstrap(input: IdentityInput, boot: AgentBootstrap | undefined): IdentityInput {
  if (!boot) return input;
  if (input.nodeName !== undefined && input.nodeName !== boot.nodeName) {
    throw new Error(
      `the bootstrap declaration (written by meshctl init) is for node "${boot.nodeName}", not "${input.nodeName}" (--name)`,
    );
  }
  const site = input.site ?? boot.site;
  return {
    ...input,
    nodeName: boot.nodeName,
    connection: input.connection ?? boot.connection,
    ...(site ? { site } : {}),
  };
}

/** Stores the bootstrap's Declaration when the store holds none, then renames the file; call after the identity is saved. */
export async function importBootstrap(a: {
  store: AgentStore;
  stateDir: string;
  boot: AgentBootstrap;
  logger: Logger;
}): Promise<void> {
  const path = agentBootstrapPath(a.stateDir);
  if (!a.store.declaration()) {
    await a.store.saveDeclaration(a.boot.declaration);
    a.logger.info('Imported bootstrap Declaration', {
      node: a.boot.nodeName,
      generation: a.boot.declaration.spec.generation,
      resources: a.boot.declaration.spec.resources.length,
      path,
    });
  } else {
    a.logger.info('Ignored bootstrap Declaration: the store already holds one', { node: a.boot.nodeName, path });
  }
  renameSync(path, `${path}.imported`);
}
