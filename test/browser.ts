/**
 * Debian's chromium driven by playwright-core for the browser tests: no browser is downloaded, the binary
 * is the system's (`apt-get install chromium`, see .ci/run). Flags follow what this kind of machine needs:
 * no sandbox as root, and no background networking (a closed network refuses Chromium's own connections).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where Debian installs chromium; MESHCTL_CHROMIUM overrides it. */
export const CHROMIUM_PATH = process.env.MESHCTL_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why browser tests cannot run here, or undefined when they can (CI=true makes a caller fail instead of skip). */
export function browserUnavailable(): string | undefined {
  return existsSync(CHROMIUM_PATH) ? undefined : `no chromium at ${CHROMIUM_PATH} (apt-get install chromium)`;
}

/** A headless chromium with a fresh profile that trusts any certificate (the mesh CA is self-signed). */
export interface Browser {
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Starts headless chromium with a persistent context in a new temp profile; close() removes the profile. */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'meshctl-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    ignoreHTTPSErrors: true,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** One axe-core finding: a rule, how bad, and the elements it hit. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

const axeSource = (): string => readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core inside the page (from node_modules, nothing fetched) and returns its violations. It is evaluated
 * through the devtools protocol rather than added as a script tag, so a page's Content-Security-Policy (no inline
 * script) stays in force for the page itself.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource());
  return page.evaluate(async () => {
    const axe = Reflect.get(globalThis, 'axe') as { run(): Promise<{ violations: AxeViolation[] }> };
    const r = await axe.run();
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
}

/**
 * Where a test writes its screenshot `name` (e.g. `node-page.png`): `$MESHCTL_SCREENSHOTS` when set (the README's
 * images: `MESHCTL_SCREENSHOTS=docs/screenshots`), else a folder under the temp dir — so a test run leaves the
 * committed images alone. The folder is created.
 */
export function screenshotPath(name: string): string {
  const dir = process.env.MESHCTL_SCREENSHOTS ?? join(tmpdir(), 'meshctl-screenshots');
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}
