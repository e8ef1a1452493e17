import type { Config } from '../../pipeline/config/schema.js';
import type { EmitConfig } from './config.js';

/**
 * The settings that change an emitted task: the clone URL its Dockerfile uses, the image name
 * its row gives, and whether its folder carries its locked files. They are the `config` of every
 * emit item's input (its hash decides whether a done item is written again). `out` is not in it:
 * it is where `finish` writes each month, read every run, and no task's row or files depend on
 * it; nor is `publish` (the publish gate), which changes no task. Pure (test/run/input-hashes.test.ts).
 */
export function emitResultSettings(config: Config): Omit<EmitConfig, 'publish'> {
  return { repoUrl: config.emit.repoUrl, imageName: config.emit.imageName, vendorWheels: config.emit.vendorWheels };
}
