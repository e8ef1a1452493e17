import { describe, expect, it } from 'vitest';
import { formatImageRef, parseImageRef, parseRegistry, repositoryComponent } from '../../../pipeline/services/registry/image-ref.js';
import { registryBaseUrl } from '../../../pipeline/services/registry/registry-api.js';
import { dockerfileBases, rebaseDockerfile } from '../../../pipeline/services/registry/dockerfile-bases.js';
import { environmentKey } from '../../../tasks/publish/images/publish-images.js';
import { withBases, withImages } from '../../../tasks/publish/images/with-images.js';
import type { MonthTask } from '../../../stages/emit/month-files.js';

const D = `sha256:${'ab'.repeat(32)}`;

describe('image references', () => {
  it('reads a registry, a path, a tag and a digest as Docker does', () => {
    expect(parseImageRef('perfmine/base:bookworm')).toEqual({ registry: null, repository: 'perfmine/base', tag: 'bookworm', digest: null });
    expect(parseImageRef(`127.0.0.1:5000/team/perfmine/base@${D}`)).toEqual({
      registry: '127.0.0.1:5000',
      repository: 'team/perfmine/base',
      tag: null,
      digest: D,
    });
    expect(parseImageRef(`localhost/x:1@${D}`)).toMatchObject({ registry: 'localhost', repository: 'x', tag: '1', digest: D });
    for (const bad of ['Perfmine/Base', 'x@sha256:12', 'a//b', 'x:']) expect(parseImageRef(bad), bad).toBeNull();
    const ref = `registry.example.org:443/p/q:t@${D}`;
    expect(formatImageRef(parseImageRef(ref)!)).toBe(ref);
  });

  it('a registry setting: host:port with an optional path; loopback over HTTP, others over HTTPS', () => {
    expect(parseRegistry('127.0.0.1:5000')).toEqual({ host: '127.0.0.1:5000', prefix: '' });
    expect(parseRegistry('registry.example.org/team/x/')).toEqual({ host: 'registry.example.org', prefix: 'team/x' });
    expect(parseRegistry('perfmine')).toBeNull();
    expect(parseRegistry('127.0.0.1:5000/Team')).toBeNull();
    expect(registryBaseUrl('127.0.0.1:5000')).toBe('http://127.0.0.1:5000/v2');
    expect(registryBaseUrl('localhost:5000')).toBe('http://localhost:5000/v2');
    expect(registryBaseUrl('registry.example.org')).toBe('https://registry.example.org/v2');
    expect(repositoryComponent('Owner__Name-12')).toBe('owner__name-12');
  });
});

const DOCKERFILE = [
  '# a comment naming FROM perfmine/base:bookworm',
  'FROM perfmine/base:bookworm AS source',
  'RUN true',
  'FROM --platform=linux/amd64 perfmine/base:bookworm',
  'COPY --from=source /repo /repo',
  'FROM source AS again',
  '',
].join('\n');

describe("a task's Dockerfile and its base images", () => {
  it('names the images its FROMs start from, not earlier stages', () => {
    expect(dockerfileBases(DOCKERFILE)).toEqual(['perfmine/base:bookworm']);
  });

  it('starts from the base by digest in each FROM, comments and stages untouched; a base it does not start from is an error', () => {
    const to = `127.0.0.1:5000/perfmine/base@${D}`;
    const rebased = rebaseDockerfile(DOCKERFILE, new Map([['perfmine/base:bookworm', to]]));
    expect(rebased.split('\n')).toEqual([
      '# a comment naming FROM perfmine/base:bookworm',
      `FROM ${to} AS source`,
      'RUN true',
      `FROM --platform=linux/amd64 ${to}`,
      'COPY --from=source /repo /repo',
      'FROM source AS again',
      '',
    ]);
    expect(dockerfileBases(rebased)).toEqual([to]);
    expect(() => rebaseDockerfile(DOCKERFILE, new Map([['other/base:1', to]]))).toThrow(/does not start from other\/base:1/);
  });
});

describe('a published task naming its images', () => {
  const task = {
    row: { instance_id: 'o__n-1' },
    files: { Dockerfile: DOCKERFILE, 'metadata.json': '{\n  "instance_id": "o__n-1"\n}\n' },
    blobs: {},
  } as unknown as MonthTask;
  const base = `127.0.0.1:5000/perfmine/base@${D}`;
  const env = `127.0.0.1:5000/perfmine/o__n-1@sha256:${'cd'.repeat(32)}`;

  it('the Dockerfile from the base by digest, metadata.json images, the row docker_image and base_image', () => {
    const rebased = withBases(task, new Map([['perfmine/base:bookworm', base]]));
    const named = withImages(rebased, { environment: env, bases: { 'perfmine/base:bookworm': base } });
    expect(dockerfileBases(named.files['Dockerfile']!)).toEqual([base]);
    expect(JSON.parse(named.files['metadata.json']!)).toEqual({
      instance_id: 'o__n-1',
      images: { environment: env, bases: { 'perfmine/base:bookworm': base } },
    });
    expect(named.row).toMatchObject({ docker_image: env, base_image: base });
    // the original task is left as it was
    expect(task.files['Dockerfile']).toBe(DOCKERFILE);
  });

  it("the environment's key follows its files' paths, modes and contents, not their order", () => {
    const a = new Map([
      ['Dockerfile', { content: 'FROM x', mode: 0o644 }],
      ['run.sh', { content: 'true', mode: 0o755 }],
    ]);
    const b = new Map([...a].reverse());
    expect(environmentKey(a)).toBe(environmentKey(b));
    expect(environmentKey(new Map([...a, ['run.sh', { content: 'true', mode: 0o644 }]]))).not.toBe(environmentKey(a));
    expect(environmentKey(new Map([...a, ['Dockerfile', { content: 'FROM y', mode: 0o644 }]]))).not.toBe(environmentKey(a));
    expect(environmentKey(a)).toMatch(/^[0-9a-f]{24}$/);
  });
});
