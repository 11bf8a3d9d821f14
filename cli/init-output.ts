/**
 * What `meshctl init` prints when it is done: where everything is — the agent's root and the overlay hub's
 * place under it, and the command the agent will run the control plane with — and the next steps (start the
 * agent — with systemd or by hand, with the commands resolved by init-plan.ts so that they work as printed —,
 * use meshctl as admin, join the other machines).
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { OVERLAY_HUB_DIR } from '../api/v1alpha1/builtin-modules.ts';
import { programCommand, type InitPlan } from './init-plan.ts';

/** The state directory the shipped systemd unit runs the agent with. */
const UNIT_STATE_DIR = '/var/lib/meshctl/agent';

/** What the summary shows. */
export interface InitSummary {
  plan: InitPlan;
  url: string;
  meshconfig: string;
  bootstrap: string;
  caHash: string;
  certNames: string[];
}

/** Where the shipped unit file is: beside the installed package when found, else its place in the source tree. */
export function unitFilePath(script: string | undefined = process.argv[1]): string {
  try {
    const shipped = join(dirname(realpathSync(script ?? '')), '..', 'manifests', 'systemd', 'mesh-agent.service');
    if (existsSync(shipped)) return shipped;
  } catch {
    /* not a file */
  }
  return 'manifests/systemd/mesh-agent.service';
}

/** The command that starts this node's agent, exactly as printed (and as the tests run it). */
export function agentCommand(p: InitPlan): string {
  return [...programCommand('mesh-agent'), 'run', '--state-dir', p.agentStateDir, '--root', p.agentRoot].join(' ');
}

/** Step 1: start the agent — with the shipped systemd unit (a system unit: as root), or by hand. */
function startAgent(p: InitPlan, asRoot: boolean): string[] {
  const byHand = `       ${agentCommand(p)}`;
  if (!asRoot) return [byHand];
  const unit = unitFilePath();
  const note =
    p.agentStateDir === UNIT_STATE_DIR && p.agentRoot === '/'
      ? []
      : [`     (the unit runs --state-dir ${UNIT_STATE_DIR} with root /: edit its ExecStart to the command below)`];
  return [
    `       install -m 0644 ${unit} /etc/systemd/system/ && systemctl daemon-reload && systemctl enable --now mesh-agent`,
    ...note,
    '     or by hand:',
    byHand,
  ];
}

/** The text init prints on success. */
export function nextSteps(s: InitSummary): string {
  const p = s.plan;
  const hub = join(p.agentRoot, OVERLAY_HUB_DIR);
  return [
    `Initialised a new mesh on node "${p.node}": it holds the control plane and the overlay hub, by assignment.`,
    '',
    `  control plane data  ${p.dataDir}   (store, CA, serving certificate: back it up — recovery is restore)`,
    `  admin meshconfig    ${s.meshconfig}   (0600)`,
    `  agent seed          ${s.bootstrap}   (0600; the agent imports it on its first start)`,
    `  agent root          ${p.agentRoot}   (--root: every declared path resolves under it${p.agentRoot === '/' ? '' : ', standing in for /'})`,
    `  overlay hub         ${hub}   (module overlay-hub declares ${OVERLAY_HUB_DIR}, under the root)`,
    `  control plane runs  ${p.command.join(' ')} …   (module control-plane; --control-plane-command to change)`,
    `  server              ${s.url}, listening on ${p.listen}`,
    `  certificate names   ${s.certNames.join(', ')}`,
    `  CA pin              ${s.caHash}`,
    '',
    "The control plane is a module: this node's agent runs it. Nothing runs yet. Next:",
    '',
    "  1. Start this node's agent (it starts the control plane as its supervised service):",
    ...startAgent(p, process.getuid?.() === 0),
    '',
    '  2. Use meshctl as admin:',
    `       mkdir -p ~/.meshctl && install -m 0600 ${s.meshconfig} ~/.meshctl/config`,
    '       meshctl get nodes',
    '',
    '  3. Join the other machines: `meshctl token create` prints the `mesh-agent join` command to run on each.',
    '',
    `This node is the mesh's single point of failure, on purpose: while it is down, nodes keep running what they`,
    'were last told, and only change stops. There is no failover; recovery is restoring a backup of',
    `${p.dataDir} (mesh-control-plane --restore on a new node).`,
    '',
  ].join('\n');
}
