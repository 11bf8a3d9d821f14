/**
 * The explicit kind registry of meshctl.dev/v1alpha1: names, short names and print columns of every kind
 * (the schemas are in schemas.ts, so that the CLI does not load them).
 * A kind's name finds its slice: schemas/<kind>.schema.json, generated/<kind>.ts, this entry, its sample.
 */
import type { KindInfo, PrintColumn } from './kind-info.ts';
import { GROUP, VERSION } from '../meta/types.ts';

/** The jsonPath of a condition's status, e.g. `condition('Ready')`. */
function condition(type: string, field = 'status'): string {
  return `.status.conditions[?(@.type=="${type}")].${field}`;
}

/** A column shown only with `-o wide`. */
function wide(col: PrintColumn): PrintColumn {
  return { ...col, priority: 1 };
}

const MESH: KindInfo = {
  kind: 'Mesh',
  plural: 'meshes',
  singular: 'mesh',
  shortNames: [],
  hasStatus: true,
  singletonName: 'mesh',
  columns: [
    {
      name: 'Control Plane',
      jsonPath: '.status.controlPlaneNode',
      type: 'string',
      description: 'Node running the control plane',
    },
    { name: 'Hub', jsonPath: '.status.hubNode', type: 'string', description: 'Node running the overlay hub' },
    {
      name: 'Recovery Deadline',
      jsonPath: '.status.recoveryDeadline',
      type: 'string',
      description: 'Earliest notAfter needing renewal',
    },
    {
      name: 'Budget (s)',
      jsonPath: '.status.outageBudgetSeconds',
      type: 'integer',
      description: 'Seconds until the recovery deadline',
    },
    wide({ name: 'Last Verified Backup', jsonPath: '.status.lastVerifiedBackup.time', type: 'date' }),
    wide({ name: 'Issuer', jsonPath: '.spec.certificates.issuer', type: 'string' }),
    wide({ name: 'Overlay', jsonPath: '.spec.overlay.cidr', type: 'string' }),
  ],
};

const NODE: KindInfo = {
  kind: 'Node',
  plural: 'nodes',
  singular: 'node',
  shortNames: ['no'],
  hasStatus: true,
  columns: [
    { name: 'Site', jsonPath: '.spec.site', type: 'string' },
    { name: 'Reachable', jsonPath: condition('Reachable'), type: 'string' },
    { name: 'Last Seen', jsonPath: '.status.lastSeen', type: 'date' },
    {
      name: 'Desired',
      jsonPath: '.status.declaration.desiredGeneration',
      type: 'integer',
      description: 'Declaration generation rendered',
    },
    {
      name: 'Applied',
      jsonPath: '.status.declaration.appliedGeneration',
      type: 'integer',
      description: 'Declaration generation applied',
    },
    {
      name: 'Declaration',
      jsonPath: condition('DeclarationApplied', 'reason'),
      type: 'string',
      description:
        'Whether the node applied its newest declaration generation: Applied, Pending, Waiting or NotApplied',
    },
    wide({ name: 'Endpoint', jsonPath: '.spec.endpoint', type: 'string' }),
    wide({ name: 'Overlay IP', jsonPath: '.status.overlay.address', type: 'string' }),
    wide({ name: 'Public Key', jsonPath: '.status.overlay.publicKey', type: 'string' }),
    wide({ name: 'Agent', jsonPath: '.status.agentVersion', type: 'string' }),
  ],
};

const MODULE: KindInfo = {
  kind: 'Module',
  plural: 'modules',
  singular: 'module',
  shortNames: ['mod'],
  hasStatus: true,
  columns: [
    { name: 'Version', jsonPath: '.spec.version', type: 'string' },
    { name: 'Port', jsonPath: '.spec.port', type: 'integer' },
    wide({ name: 'Description', jsonPath: '.spec.description', type: 'string' }),
  ],
};

const ASSIGNMENT: KindInfo = {
  kind: 'Assignment',
  plural: 'assignments',
  singular: 'assignment',
  shortNames: ['asg'],
  hasStatus: true,
  columns: [
    { name: 'Module', jsonPath: '.spec.module', type: 'string' },
    { name: 'Node', jsonPath: '.spec.node', type: 'string' },
    { name: 'Version', jsonPath: '.status.version', type: 'string', description: 'Version in the declaration' },
    { name: 'Applied', jsonPath: condition('Applied'), type: 'string' },
    wide({
      name: 'Pinned',
      jsonPath: '.spec.version',
      type: 'string',
      description: 'Version the assignment asks for (empty: follow the module)',
    }),
    wide({ name: 'Reason', jsonPath: condition('Applied', 'reason'), type: 'string' }),
  ],
};

const DECLARATION: KindInfo = {
  kind: 'Declaration',
  plural: 'declarations',
  singular: 'declaration',
  shortNames: ['decl'],
  hasStatus: true,
  columns: [
    { name: 'Generation', jsonPath: '.spec.generation', type: 'integer' },
    { name: 'Applied Generation', jsonPath: '.status.appliedGeneration', type: 'integer' },
    { name: 'Applied', jsonPath: condition('Applied'), type: 'string' },
    wide({ name: 'Reason', jsonPath: condition('Applied', 'reason'), type: 'string' }),
  ],
};

const ROUTE: KindInfo = {
  kind: 'Route',
  plural: 'routes',
  singular: 'route',
  shortNames: ['rt'],
  hasStatus: true,
  columns: [
    { name: 'Host', jsonPath: '.spec.host', type: 'string' },
    { name: 'Node', jsonPath: '.spec.node', type: 'string' },
    { name: 'Port', jsonPath: '.spec.port', type: 'integer' },
    { name: 'Ready', jsonPath: condition('Ready'), type: 'string' },
    wide({ name: 'Certificate', jsonPath: '.status.certificateRef', type: 'string' }),
  ],
};

const CERTIFICATE: KindInfo = {
  kind: 'Certificate',
  plural: 'certificates',
  singular: 'certificate',
  shortNames: ['cert'],
  hasStatus: true,
  columns: [
    { name: 'DNS Names', jsonPath: '.spec.dnsNames', type: 'string' },
    { name: 'Not After', jsonPath: '.status.notAfter', type: 'string' },
    { name: 'Ready', jsonPath: condition('Ready'), type: 'string' },
    wide({ name: 'Node', jsonPath: '.spec.node', type: 'string' }),
    wide({ name: 'Issuer', jsonPath: '.spec.issuer', type: 'string' }),
    wide({ name: 'Renewal', jsonPath: '.status.renewalTime', type: 'string' }),
    wide({
      name: 'Failed',
      jsonPath: '.status.failedAttempts',
      type: 'integer',
      description: 'Consecutive failed attempts',
    }),
  ],
};

const JOIN_TOKEN: KindInfo = {
  kind: 'JoinToken',
  plural: 'jointokens',
  singular: 'jointoken',
  shortNames: ['jt'],
  hasStatus: true,
  columns: [
    { name: 'Expires', jsonPath: '.status.expiresAt', type: 'string' },
    { name: 'Used', jsonPath: '.status.used', type: 'boolean' },
    wide({ name: 'Used By', jsonPath: '.status.usedBy', type: 'string' }),
    wide({ name: 'Description', jsonPath: '.spec.description', type: 'string' }),
  ],
};

const BACKUP: KindInfo = {
  kind: 'Backup',
  plural: 'backups',
  singular: 'backup',
  shortNames: ['bk'],
  hasStatus: true,
  columns: [
    { name: 'Bytes', jsonPath: '.status.bytes', type: 'integer' },
    { name: 'Verified', jsonPath: '.status.verified', type: 'boolean' },
    wide({ name: 'Verified At', jsonPath: '.status.verifiedAt', type: 'date' }),
    wide({ name: 'SHA256', jsonPath: '.status.sha256', type: 'string' }),
    wide({ name: 'File', jsonPath: '.status.file', type: 'string' }),
  ],
};

const APPLY_SET: KindInfo = {
  kind: 'ApplySet',
  plural: 'applysets',
  singular: 'applyset',
  shortNames: ['aps'],
  hasStatus: false,
  columns: [
    { name: 'Kinds', jsonPath: '.spec.kinds', type: 'string', description: 'Kinds its members may have' },
    wide({ name: 'Source', jsonPath: '.spec.source', type: 'string' }),
    wide({ name: 'ID', jsonPath: '.metadata.labels.applyset\\.meshctl\\.dev/id', type: 'string' }),
  ],
};

const EVENT: KindInfo = {
  kind: 'Event',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  hasStatus: false,
  ageFrom: ['.lastTimestamp', '.firstTimestamp'],
  columns: [
    { name: 'Type', jsonPath: '.type', type: 'string' },
    { name: 'Reason', jsonPath: '.reason', type: 'string' },
    { name: 'Object', jsonPath: '.involvedObject.name', type: 'string' },
    { name: 'Message', jsonPath: '.message', type: 'string' },
    wide({ name: 'Kind', jsonPath: '.involvedObject.kind', type: 'string' }),
    wide({ name: 'Count', jsonPath: '.count', type: 'integer' }),
    wide({ name: 'Last Seen', jsonPath: '.lastTimestamp', type: 'date' }),
    wide({ name: 'Source', jsonPath: '.source.component', type: 'string' }),
  ],
};

/** Every kind of meshctl.dev/v1alpha1, in the order `get all` and discovery list them. */
export const KINDS: readonly KindInfo[] = Object.freeze([
  MESH,
  NODE,
  MODULE,
  ASSIGNMENT,
  DECLARATION,
  ROUTE,
  CERTIFICATE,
  JOIN_TOKEN,
  BACKUP,
  APPLY_SET,
  EVENT,
]);

/** The kind served under a plural resource name (exact, lowercase), e.g. `nodes`. */
export function kindByPlural(plural: string): KindInfo | undefined {
  return KINDS.find((k) => k.plural === plural);
}

/** The kind with this exact `kind` name, e.g. `Node`. */
export function kindByKind(kind: string): KindInfo | undefined {
  return KINDS.find((k) => k.kind === kind);
}

/**
 * Resolves what a person typed (`node`, `Nodes`, `no`, `nodes.meshctl.dev`) to a kind, like kubectl does:
 * case-insensitive on kind, plural, singular and short names, optionally suffixed with
 * the group (`.meshctl.dev`) or version and group (`.v1alpha1.meshctl.dev`).
 */
export function resolveResource(arg: string): KindInfo | undefined {
  let name = arg.trim().toLowerCase();
  for (const suffix of [`.${VERSION}.${GROUP}`, `.${GROUP}`]) {
    if (name.endsWith(suffix)) {
      name = name.slice(0, -suffix.length);
      break;
    }
  }
  if (name === '') return undefined;
  return KINDS.find(
    (k) => k.plural === name || k.singular === name || k.kind.toLowerCase() === name || k.shortNames.includes(name),
  );
}
