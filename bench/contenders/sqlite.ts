/**
 * Contenders: better-sqlite3 12 (optional: `npm install --no-save better-sqlite3@12` first) in WAL mode with `synchronous=FULL` (every commit fsyncs the WAL),
 * one table `(name TEXT PRIMARY KEY, rv INTEGER, json TEXT)`.
 * better-sqlite3 is synchronous: each update runs on the event loop. `per-update` commits each update in
 * its own implicit transaction after yielding once (setImmediate) so that the 64 writers interleave;
 * `batched` is group commit by hand: every update pending in one tick runs in one transaction.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { KubeObject } from '../../api/meta/types.ts';
import { mutate } from '../lib/node-object.ts';
import type { Contender } from './contender.ts';

interface Statement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
}
interface Database {
  pragma(source: string): unknown;
  exec(source: string): void;
  prepare(source: string): Statement;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  close(): void;
}
type DatabaseConstructor = new (file: string) => Database;

const require = createRequire(import.meta.url);

/** How to get better-sqlite3: it is no dependency of the project, so `npm install` does not compile it. */
const SQLITE_INSTALL_HINT =
  'better-sqlite3 is not installed (no dependency of the project: `npm install` would compile it for every user); ' +
  '`npm install --no-save better-sqlite3@12` adds it for the benchmark';

/** Loads better-sqlite3, or throws saying how to install it. */
function loadSqlite(): DatabaseConstructor {
  try {
    return require('better-sqlite3') as DatabaseConstructor;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') throw new Error(SQLITE_INSTALL_HINT);
    throw e;
  }
}

/** The prepared statements one read-modify-write needs. */
function openDb(dir: string): { db: Database; rmw: (name: string) => void; insert: Statement } {
  const Db = loadSqlite();
  const db = new Db(join(dir, 'store.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE objects (name TEXT PRIMARY KEY, rv INTEGER NOT NULL, json TEXT NOT NULL)');
  const select = db.prepare('SELECT json FROM objects WHERE name = ?');
  const update = db.prepare('UPDATE objects SET rv = ?, json = ? WHERE name = ?');
  const maxRv = db.prepare('SELECT COALESCE(MAX(rv), 0) AS rv FROM objects');
  const insert = db.prepare('INSERT INTO objects (name, rv, json) VALUES (?, ?, ?)');
  let rv = 0;
  const rmw = (name: string): void => {
    if (rv === 0) rv = (maxRv.get() as { rv: number }).rv;
    const row = select.get(name) as { json: string };
    const next = mutate(JSON.parse(row.json) as KubeObject);
    rv++;
    next.metadata.resourceVersion = String(rv);
    update.run(rv, JSON.stringify(next), name);
  };
  return { db, rmw, insert };
}

function seeder(db: Database, insert: Statement): (objects: KubeObject[]) => Promise<void> {
  return async (objects) => {
    db.transaction(() => {
      objects.forEach((o, i) => insert.run(o.metadata.name, i + 1, JSON.stringify(o)));
    })();
  };
}

/** Opens SQLite FULL with one transaction per update. */
export async function openSqlitePerUpdate(dir: string): Promise<Contender> {
  const { db, rmw, insert } = openDb(dir);
  return {
    seed: seeder(db, insert),
    async update(name) {
      await new Promise((resolve) => setImmediate(resolve));
      rmw(name);
    },
    async close() {
      db.close();
    },
  };
}

/** Opens SQLite FULL with hand-made group commit: all updates pending in one tick share a transaction. */
export async function openSqliteBatched(dir: string): Promise<Contender> {
  const { db, rmw, insert } = openDb(dir);
  let pending: { name: string; done: () => void }[] = [];
  const flush = db.transaction((batch: { name: string }[]) => {
    for (const p of batch) rmw(p.name);
  });
  const commit = (): void => {
    const batch = pending;
    pending = [];
    flush(batch);
    for (const p of batch) p.done();
  };
  return {
    seed: seeder(db, insert),
    update(name) {
      return new Promise<void>((done) => {
        if (pending.length === 0) setImmediate(commit);
        pending.push({ name, done });
      });
    },
    async close() {
      db.close();
    },
  };
}
