import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, exitCodeOf } from '../../../pipeline/errors.js';
import { resolveTaskArgument } from '../../../tasks/score/task-source.js';
import { tempDir } from '../../helpers/harness.js';

describe('score --task DIR', () => {
  const dir = tempDir('score-task-argument');
  const folder = (name: string, metadata: string | null) => {
    const path = join(dir, name);
    mkdirSync(path, { recursive: true });
    if (metadata !== null) writeFileSync(join(path, 'metadata.json'), metadata);
    return path;
  };

  it("reads the instance id from the folder's metadata.json; an id is taken as it is", () => {
    expect(resolveTaskArgument(folder('ok', '{"instance_id": "o__n-1"}'))).toBe('o__n-1');
    expect(resolveTaskArgument('o__n-2')).toBe('o__n-2');
  });

  it('a truncated, a non-object or an id-less metadata.json, or none: a user error naming the file (exit 2), no stack trace', () => {
    for (const [name, text, message] of [
      ['truncated', '{"instance_id": "o__n', /metadata\.json is not JSON/],
      ['array', '[1, 2]', /metadata\.json has no instance_id/],
      ['null', 'null', /metadata\.json has no instance_id/],
      ['no-id', '{"repo": "o/n"}', /metadata\.json has no instance_id/],
      ['none', null, /no metadata\.json in the folder/],
    ] as const) {
      const path = folder(name, text);
      let error: unknown = null;
      try {
        resolveTaskArgument(path);
      } catch (e) {
        error = e;
      }
      expect(error, name).toBeInstanceOf(ConfigError);
      expect((error as Error).message, name).toMatch(message);
      expect(exitCodeOf(error), name).toBe(2);
    }
  });
});
