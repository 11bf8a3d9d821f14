/** The repository root (where `controllers/main.ts` lives), for tests that run its programs. */
import { fileURLToPath } from 'node:url';

/** The repository root (where `controllers/main.ts` lives). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
