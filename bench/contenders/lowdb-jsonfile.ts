/**
 * Contender: lowdb 7 with its stock JSONFile adapter, constructed directly (not the presets).
 * Every update mutates the in-memory document and awaits `db.write()`, which pretty-prints the whole
 * document and writes it to a temp file renamed over the old one, with no fsync: not durable.
 */
import { join } from 'node:path';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import type { KubeObject } from '../../api/meta/types.ts';
import { mutate } from '../lib/node-object.ts';
import type { Contender } from './contender.ts';

interface Doc {
  resourceVersion: number;
  nodes: Record<string, KubeObject>;
}

/** Opens lowdb's JSONFile on `dir/db.json`. */
export async function openLowdbJsonFile(dir: string): Promise<Contender> {
  const db = new Low<Doc>(new JSONFile<Doc>(join(dir, 'db.json')), { resourceVersion: 0, nodes: {} });
  await db.read();
  return {
    async seed(objects) {
      for (const o of objects) {
        db.data.resourceVersion++;
        db.data.nodes[o.metadata.name!] = withRv(o, db.data.resourceVersion);
      }
      await db.write();
    },
    async update(name) {
      const current = db.data.nodes[name];
      db.data.resourceVersion++;
      db.data.nodes[name] = withRv(mutate(current), db.data.resourceVersion);
      await db.write();
    },
    async close() {},
  };
}

function withRv(o: KubeObject, rv: number): KubeObject {
  return { ...o, metadata: { ...o.metadata, resourceVersion: String(rv) } };
}
