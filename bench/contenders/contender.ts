/**
 * What the store benchmark needs from each storage engine it compares.
 */
import type { KubeObject } from '../../api/meta/types.ts';

/** One storage engine under test, opened on a directory of its own. */
export interface Contender {
  /** Loads the initial objects (not measured). */
  seed(objects: KubeObject[]): Promise<void>;
  /** One read-modify-write of the named object; resolves when the engine acknowledges it. */
  update(name: string): Promise<void>;
  /** Engine-specific counters worth reporting (called after the run, before close). */
  stats?(): string;
  /** Flushes and closes. */
  close(): Promise<void>;
}

/** Opens a contender on an empty directory. */
export type ContenderFactory = (dir: string) => Promise<Contender>;
