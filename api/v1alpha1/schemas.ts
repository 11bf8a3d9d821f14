/**
 * The JSON Schema of every kind, by kind name: what validation compiles. Kept apart from the kind
 * registry (kinds.ts) so that the CLI, which needs only names and columns, does not load them.
 */
import applysetSchema from './schemas/applyset.schema.json' with { type: 'json' };
import assignmentSchema from './schemas/assignment.schema.json' with { type: 'json' };
import backupSchema from './schemas/backup.schema.json' with { type: 'json' };
import certificateSchema from './schemas/certificate.schema.json' with { type: 'json' };
import declarationSchema from './schemas/declaration.schema.json' with { type: 'json' };
import eventSchema from './schemas/event.schema.json' with { type: 'json' };
import jointokenSchema from './schemas/jointoken.schema.json' with { type: 'json' };
import meshSchema from './schemas/mesh.schema.json' with { type: 'json' };
import moduleSchema from './schemas/module.schema.json' with { type: 'json' };
import nodeSchema from './schemas/node.schema.json' with { type: 'json' };
import routeSchema from './schemas/route.schema.json' with { type: 'json' };

const SCHEMAS: Readonly<Record<string, object>> = {
  ApplySet: applysetSchema,
  Assignment: assignmentSchema,
  Backup: backupSchema,
  Certificate: certificateSchema,
  Declaration: declarationSchema,
  Event: eventSchema,
  JoinToken: jointokenSchema,
  Mesh: meshSchema,
  Module: moduleSchema,
  Node: nodeSchema,
  Route: routeSchema,
};

/** The schema of a kind (by `kind`, e.g. `Node`), or undefined for an unknown kind. */
export function schemaFor(kind: string): object | undefined {
  return Object.hasOwn(SCHEMAS, kind) ? SCHEMAS[kind] : undefined;
}
