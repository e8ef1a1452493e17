import type { MonthTask } from '../../../stages/emit/month-files.js';
import { rebaseDockerfile } from '../../../pipeline/services/registry/dockerfile-bases.js';

/**
 * A published task naming its images (`perfmine publish --registry`): its Dockerfile starting
 * from the base by digest (so that a build of the folder, or of Harbor's environment/, works
 * wherever the registry is reachable), metadata.json's `images`, and the row's `docker_image`
 * and `base_image`. Pure.
 */

export interface TaskImages {
  /** The environment image by digest (Harbor's `docker_image`). */
  readonly environment: string;
  /** Each image the Dockerfile started from, by the reference it starts from now. */
  readonly bases: Readonly<Record<string, string>>;
}

/** The task with its Dockerfile starting from other references (the bases by digest). */
export function withBases(task: MonthTask, bases: ReadonlyMap<string, string>): MonthTask {
  const dockerfile = task.files['Dockerfile'];
  if (dockerfile === undefined || bases.size === 0) return task;
  return { ...task, files: { ...task.files, Dockerfile: rebaseDockerfile(dockerfile, bases) } };
}

function withMetadata(text: string | undefined, images: TaskImages): string | undefined {
  if (text === undefined) return undefined;
  const meta = JSON.parse(text) as Record<string, unknown>;
  return `${JSON.stringify({ ...meta, images: { environment: images.environment, bases: images.bases } }, null, 2)}\n`;
}

/** The task (its Dockerfile already rebased: withBases) naming its images in metadata.json and its row. */
export function withImages(task: MonthTask, images: TaskImages): MonthTask {
  const metadata = withMetadata(task.files['metadata.json'], images);
  const firstBase = Object.values(images.bases)[0] ?? null;
  return {
    ...task,
    files: { ...task.files, ...(metadata === undefined ? {} : { 'metadata.json': metadata }) },
    row: { ...task.row, docker_image: images.environment, base_image: firstBase },
  };
}
