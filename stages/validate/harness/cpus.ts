import type { Side } from './interleave.js';

/**
 * Which CPUs each harness worker is pinned to. `alternate` puts every worker on the same core,
 * the last one (the driver and the engine's own threads tend to run on the first), so that the
 * sides take turns on one core and meet the same caches and frequency; `duet` puts the base on
 * one core and the other two on another, so that base and expert run side by side. An explicit
 * cpuset list is used as given (`duet`: its first entry for the base, its last for the others).
 * With one core, or `none`, nothing is pinned. Pure.
 */
export function workerCpusets(mode: 'alternate' | 'duet', setting: string, hostCpus: number): Record<Side, string | null> {
  const all = (cpuset: string | null): Record<Side, string | null> => ({ base: cpuset, expert: cpuset, calibration: cpuset });
  if (setting === 'none') return all(null);
  if (setting !== 'auto') {
    const entries = setting.split(',');
    if (mode === 'alternate' || entries.length < 2) return all(setting);
    return { base: entries[0]!, expert: entries.at(-1)!, calibration: entries.at(-1)! };
  }
  if (hostCpus < 2) return all(null);
  if (mode === 'alternate') return all(String(hostCpus - 1));
  return { base: String(hostCpus - 2), expert: String(hostCpus - 1), calibration: String(hostCpus - 1) };
}
