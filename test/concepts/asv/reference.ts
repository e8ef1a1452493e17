import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** ../shared/reference beside the repository (CI checks it out next to a clean clone). */
export const REFERENCE_DIR = fileURLToPath(new URL('../../../../shared/reference/', import.meta.url));
export const NETWORKX_DIR = `${REFERENCE_DIR}asv-real/networkx-7971/`;
export const RICH_DIR = `${REFERENCE_DIR}asv-real/rich-3399/`;
export const NETWORKX_BASE = `${NETWORKX_DIR}aab03808-existing-py_usr_bin_python3.json`;
export const NETWORKX_HEAD = `${NETWORKX_DIR}3d0bb212-existing-py_usr_bin_python3.json`;

export function readReference(path: string): string {
  return readFileSync(path, 'utf8');
}
