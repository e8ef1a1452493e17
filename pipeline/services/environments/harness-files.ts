import { readFileSync } from 'node:fs';
import { packagePath } from '../../package-root.js';
import type { TarEntry } from '../tar.js';

/**
 * perfmine's measurement harness (perfmine_harness.py, Python 3.8+ standard library only) and
 * where it goes in a container. The protocol it speaks is documented in its module docstring.
 */

/** The harness on this host. */
export const HARNESS_SCRIPT = packagePath('pipeline', 'services', 'environments', 'perfmine_harness.py');

/** Every file of the harness on this host (one today). */
export const HARNESS_FILES: readonly string[] = [HARNESS_SCRIPT];

/** Where the harness lives in a container: run it as `python3 ${HARNESS_CONTAINER_PATH} …`. */
export const HARNESS_CONTAINER_DIR = '/perfmine/harness';
export const HARNESS_CONTAINER_PATH = `${HARNESS_CONTAINER_DIR}/perfmine_harness.py`;

/** The harness as tar entries under `perfmine/harness/`, to extract at the container's root. */
export function harnessTarEntries(): TarEntry[] {
  return HARNESS_FILES.map((file) => ({
    name: `${HARNESS_CONTAINER_DIR.slice(1)}/${file.slice(file.lastIndexOf('/') + 1)}`,
    content: readFileSync(file),
    mode: 0o755,
  }));
}
