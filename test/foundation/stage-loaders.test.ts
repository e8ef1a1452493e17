import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../pipeline/errors.js';
import { registry } from '../../pipeline/registry.js';
import { STAGE_NAMES } from '../../pipeline/stage.js';
import { loadStage, stageNameOf } from '../../pipeline/stage-loaders.js';

describe('stages loaded by name', () => {
  it('loads each stage of the design: the very object the registry holds', async () => {
    for (const name of STAGE_NAMES) {
      const stage = await loadStage(name);
      expect(stage.name).toBe(name);
      expect(stage).toBe(registry[name]);
    }
  });

  it("takes the stage from the stages given instead (a test's doubles), checking the name the same way", async () => {
    const doubled = { ...registry, emit: registry.collect };
    expect(await loadStage('emit', doubled)).toBe(registry.collect);
    await expect(loadStage('colect', doubled)).rejects.toMatchObject({ reason: 'unknown-stage' });
  });

  it('refuses a name that is no stage, listing the stages', async () => {
    expect(() => stageNameOf('colect')).toThrow(ConfigError);
    await expect(loadStage('colect')).rejects.toMatchObject({
      reason: 'unknown-stage',
      message: 'stage: unknown stage "colect"; the stages are discover, collect, filter, classify, synthesize, validate, emit',
    });
  });
});
