import { readFileSync } from 'node:fs';
import { packagePath } from '../../package-root.js';
import type { TarEntry } from '../tar.js';

/**
 * perfmine's Python helpers (Python 3.8+ standard library only) and where they go in a container:
 * the measurement harness (perfmine_harness.py; its protocol is documented in its module
 * docstring) and the snapshot helper (perfmine_snapshot.py: benchmark return values recorded on
 * the base and compared on the expert), which reads the asv config through the harness beside it.
 */

/** The harness on this host. */
export const HARNESS_SCRIPT = packagePath('pipeline', 'services', 'environments', 'perfmine_harness.py');

/** The snapshot helper on this host. */
export const SNAPSHOT_SCRIPT = packagePath('pipeline', 'services', 'environments', 'perfmine_snapshot.py');

/** Every file of the helpers on this host: each container gets both. */
export const HARNESS_FILES: readonly string[] = [HARNESS_SCRIPT, SNAPSHOT_SCRIPT];

/** Where the harness lives in a container: run it as `python3 ${HARNESS_CONTAINER_PATH} …`. */
export const HARNESS_CONTAINER_DIR = '/perfmine/harness';
export const HARNESS_CONTAINER_PATH = `${HARNESS_CONTAINER_DIR}/perfmine_harness.py`;
export const SNAPSHOT_CONTAINER_PATH = `${HARNESS_CONTAINER_DIR}/perfmine_snapshot.py`;

/** The helpers as tar entries under `perfmine/harness/`, to extract at the container's root. */
export function harnessTarEntries(): TarEntry[] {
  return HARNESS_FILES.map((file) => ({
    name: `${HARNESS_CONTAINER_DIR.slice(1)}/${file.slice(file.lastIndexOf('/') + 1)}`,
    content: readFileSync(file),
    mode: 0o755,
  }));
}
