import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256 } from '../../pipeline/hash.js';
import { DockerService } from '../../pipeline/services/docker.js';

/** The stand-in asv script (tests only; see its header). */
export const ASV_FAKE_PATH = join(dirname(fileURLToPath(import.meta.url)), 'asv', 'asv');
/** The test image: perfmine/base:bookworm plus the stand-in asv as /usr/local/bin/asv. */
export const ASV_FAKE_IMAGE = 'perfmine/base:bookworm-asvfake';
const HASH_LABEL = 'org.perfmine.asvfake.sha256';

/**
 * Builds the test image unless one with the same stand-in exists (its hash is a label). It is a
 * shared fixture: labelled `org.perfmine=fixture`, never removed by a test's label cleanup.
 */
export async function ensureAsvFakeImage(base = 'perfmine/base:bookworm'): Promise<string> {
  const docker = new DockerService({ runLabel: 'fixture' });
  const script = readFileSync(ASV_FAKE_PATH, 'utf8');
  // The hash covers the stand-in and how the image is made (its labels changed once).
  const hash = sha256(`image-format-2\n${script}`);
  const existing = await docker.inspectImage(ASV_FAKE_IMAGE);
  if (existing?.labels[HASH_LABEL] === hash) return ASV_FAKE_IMAGE;
  // Test files run in parallel: each builds under its own tag, and only the first to finish
  // takes the shared tag; a later one drops its copy.
  const own = `${ASV_FAKE_IMAGE}-build-${process.pid}`;
  const built = await docker.buildImage({
    tag: own,
    context: [
      { name: 'Dockerfile', content: `FROM ${base}\nCOPY asv /usr/local/bin/asv\nRUN chmod 755 /usr/local/bin/asv && asv --version\n` },
      { name: 'asv', content: script, mode: 0o755 },
    ],
    labels: { [HASH_LABEL]: hash, 'org.perfmine.fixture': 'asvfake' },
    timeoutMs: 120_000,
  });
  if (!built.ok) throw new Error(`building ${ASV_FAKE_IMAGE} failed: ${built.error}\n${built.log}`);
  const now = await docker.inspectImage(ASV_FAKE_IMAGE);
  if (now?.labels[HASH_LABEL] !== hash) {
    await docker.tagImage(own, ASV_FAKE_IMAGE);
    // The stand-in changed: the previous image is garbage unless something still uses it.
    if (now) await docker.removeImage(now.id);
  }
  await docker.removeImage(own);
  return ASV_FAKE_IMAGE;
}
