import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `bash -n`: parses the script without running it. Runs on the host (parsing executes nothing);
 * resolves with bash's complaint, or null when the syntax is fine.
 */
export async function bashSyntaxError(script: string, timeoutMs = 10_000): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), 'perfmine-bash-n-'));
  const file = join(dir, 'docker_build.sh');
  try {
    await writeFile(file, script);
    return await new Promise((resolve, reject) => {
      const child = spawn('bash', ['-n', file], { stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      child.on('error', reject);
      child.on('close', (code) =>
        resolve(code === 0 ? null : stderr.trim().split(file).join('docker_build.sh') || `bash -n exited ${code}`),
      );
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
