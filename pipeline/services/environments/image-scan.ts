import type { ImageInventories } from '../../../cache/image-inventories.js';
import type { ImageTree } from '../../concepts/image-tree.js';
import { ConfigError } from '../../errors.js';
import type { DockerService } from '../docker.js';
import type { StepResult } from './failure.js';
import { scanFindings, type Finding } from './image-scan-rules.js';
import { readImageTree, type TreeReadStats } from './image-tree-reader.js';

/**
 * The check from outside: an environment image is exported (a container created from it, never
 * started) and read on the host, nothing run from it, and compared with the base image it was
 * built on (image-scan-rules.ts says what is refused). The base's inventory is read once per
 * image id: kept in this process and, given a store, in `image_inventories` for later runs and
 * other processes.
 */

export type ScanVerdict = 'accepted' | 'tampered';

export interface ImageScanResult {
  readonly verdict: ScanVerdict;
  /** Empty when accepted; each names a file (or `ENV NAME`). */
  readonly findings: readonly Finding[];
  /** Exporting and reading the scanned image and applying the rules (the base's inventory not included). */
  readonly durationMs: number;
  /** Archive members of the scanned image read. */
  readonly filesRead: number;
  /** Content bytes of the scanned image read and hashed. */
  readonly bytesRead: number;
  readonly imageId: string;
  readonly baseImageId: string;
  /** Where the base's inventory came from: read now from the base's export, this process's memory, or the store. */
  readonly inventoryFrom: 'export' | 'process' | 'store';
  /** Time this call spent reading the base's inventory: 0 when this process or the store had it. */
  readonly inventoryMs: number;
}

export interface ScanImageOptions {
  readonly docker: DockerService;
  /** The image every environment starts from (`docker.baseImage`): a tag or an id. */
  readonly baseImage: string;
  /** The environment image to scan. */
  readonly image: string;
  /** Where base inventories are kept across runs; absent or null: in this process only. */
  readonly inventories?: ImageInventories | null;
  readonly signal?: AbortSignal;
}

interface Inventory {
  readonly tree: ImageTree;
  readonly stats: TreeReadStats;
}

/** Base inventories read by this process, by image id (a promise: concurrent scans share one export). */
const memo = new Map<string, Promise<Inventory>>();

async function imageConfigOf(docker: DockerService, image: string, role: string): Promise<{ id: string; env: string[] }> {
  const config = await docker.imageConfig(image);
  if (!config)
    throw new ConfigError(`image scan: no ${role} image ${image} in the Docker engine`, {
      reason: role === 'base' ? 'no-base-image' : 'no-image',
      fix: role === 'base' ? 'build it with scripts/build-base-image.sh, or set docker.baseImage' : 'build the environment first',
    });
  return config;
}

/** The base image's inventory: this process's, the store's, or read now (then kept in both). */
async function baseInventory(
  docker: DockerService,
  base: { id: string; env: string[] },
  inventories: ImageInventories | null,
  signal: AbortSignal | undefined,
): Promise<{ inventory: Inventory; from: ImageScanResult['inventoryFrom']; readMs: number }> {
  const held = memo.get(base.id);
  if (held) return { inventory: await held, from: 'process', readMs: 0 };
  const stored = inventories?.get(base.id);
  if (stored) {
    const inventory = { tree: stored.tree, stats: { filesRead: stored.files, bytesRead: stored.bytes } };
    memo.set(base.id, Promise.resolve(inventory));
    return { inventory, from: 'store', readMs: 0 };
  }
  const started = Date.now();
  const reading = docker.exportImage(base.id, (archive) => readImageTree(archive, base.env, null), signal);
  memo.set(base.id, reading);
  try {
    const inventory = await reading;
    const readMs = Date.now() - started;
    inventories?.save(base.id, inventory.tree, { files: inventory.stats.filesRead, bytes: inventory.stats.bytesRead, durationMs: readMs });
    return { inventory, from: 'export', readMs };
  } catch (error) {
    memo.delete(base.id);
    throw error;
  }
}

/** Scans an environment image from outside against its base image. Throws only when Docker fails or an image is missing. */
export async function scanImage(options: ScanImageOptions): Promise<ImageScanResult> {
  const { docker, signal } = options;
  const baseConfig = await imageConfigOf(docker, options.baseImage, 'base');
  const { inventory, from, readMs } = await baseInventory(docker, baseConfig, options.inventories ?? null, signal);
  const started = Date.now();
  const config = await imageConfigOf(docker, options.image, 'scanned');
  const { tree, stats } = await docker.exportImage(
    config.id,
    (archive) => readImageTree(archive, config.env, inventory.tree.entries),
    signal,
  );
  const findings = scanFindings(inventory.tree, tree);
  return {
    verdict: findings.length === 0 ? 'accepted' : 'tampered',
    findings,
    durationMs: Date.now() - started,
    filesRead: stats.filesRead,
    bytesRead: stats.bytesRead,
    imageId: config.id,
    baseImageId: baseConfig.id,
    inventoryFrom: from,
    inventoryMs: readMs,
  };
}

/** One line of a finding: `path (rule): detail`. */
export function describeFinding(finding: Finding): string {
  return `${finding.path} (${finding.rule}): ${finding.detail}`;
}

/**
 * The scan as a verification step (`scan`): failed when the image was refused, its detail naming
 * the first file (classifyFailure makes it an `environment-tampered` failure), every finding on
 * stderr (what the agent and `perfmine cache show` see).
 */
export function scanStepResult(result: ImageScanResult): StepResult {
  const first = result.findings[0];
  return {
    step: 'scan',
    ok: result.verdict === 'accepted',
    exitCode: null,
    timedOut: false,
    stdout: `outside scan: ${result.verdict}; ${result.filesRead} files, ${(result.bytesRead / 1024 / 1024).toFixed(0)} MiB read in ${(result.durationMs / 1000).toFixed(1)} s\n`,
    stderr: result.findings.map((f) => `${describeFinding(f)}\n`).join(''),
    durationMs: result.durationMs,
    ...(first
      ? {
          detail: `environment tampered: ${describeFinding(first)}${result.findings.length > 1 ? ` (and ${result.findings.length - 1} more)` : ''}`,
        }
      : {}),
  };
}

/** Findings kept with an attempt (the first ones; the count says how many there were). */
const STORED_FINDINGS = 50;

/** What is stored with the attempt (`build_attempts.scan`). */
export function scanRecord(result: ImageScanResult): {
  verdict: ScanVerdict;
  findings: Finding[];
  findingCount: number;
  durationMs: number;
  filesRead: number;
  bytesRead: number;
} {
  return {
    verdict: result.verdict,
    findings: result.findings.slice(0, STORED_FINDINGS),
    findingCount: result.findings.length,
    durationMs: result.durationMs,
    filesRead: result.filesRead,
    bytesRead: result.bytesRead,
  };
}

/** Forgets this process's base inventories (tests that time the first read). */
export function forgetBaseInventories(): void {
  memo.clear();
}
