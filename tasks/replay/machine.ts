import type { ReplayMachine } from '../../pipeline/concepts/records/replay-record.js';
import type { ContainerLimits, DockerService, EngineFacts } from '../../pipeline/services/docker.js';

/**
 * The machine a replay measures on, read from a container of the replayed image with the workers'
 * cpuset and limits (so that it is the engine's machine, also behind a remote DOCKER_HOST): CPU
 * model, cpuset as the container sees it, frequency governor of those CPUs and SMT where sysfs
 * exposes them, kernel, the image's Python, the load average; and from the engine, its CPUs, OS,
 * version and cgroup version. What cannot be read is null.
 */

/** The probe: `key=value` lines, nothing else. */
export function probeScript(python: string): string {
  return [
    'set +e',
    'cpus="$(cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null || cat /sys/fs/cgroup/cpuset/cpuset.effective_cpus 2>/dev/null)"',
    "echo \"cpu_model=$(grep -m1 -E '^(model name|Processor|cpu model)' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')\"",
    'echo "cpuset_effective=${cpus}"',
    'govs=""',
    "for c in $(echo \"${cpus:-0}\" | tr ',' ' '); do",
    '  case "$c" in *-*) seq_=$(seq ${c%-*} ${c#*-});; *) seq_=$c;; esac',
    '  for n in $seq_; do g=$(cat /sys/devices/system/cpu/cpu$n/cpufreq/scaling_governor 2>/dev/null); [ -n "$g" ] && govs="$govs $g"; done',
    'done',
    "echo \"governor=$(echo $govs | tr ' ' '\\n' | sort -u | tr '\\n' ' ' | sed 's/ *$//')\"",
    'echo "smt=$(cat /sys/devices/system/cpu/smt/control 2>/dev/null) $(cat /sys/devices/system/cpu/smt/active 2>/dev/null)"',
    'echo "kernel=$(uname -r)"',
    `echo "python=$(${python} --version 2>&1 | head -1)"`,
    'echo "loadavg=$(cut -d" " -f1-3 /proc/loadavg)"',
  ].join('\n');
}

export interface ProbeReading {
  readonly cpuModel: string | null;
  readonly cpusetEffective: string | null;
  readonly governor: string | null;
  readonly smt: string | null;
  readonly kernel: string | null;
  readonly python: string | null;
  readonly loadAverage: number[] | null;
}

/** The probe's output read. Pure. */
export function parseProbe(stdout: string): ProbeReading {
  const values = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  const value = (k: string) => {
    const v = values.get(k);
    return v === undefined || v === '' ? null : v;
  };
  const load = value('loadavg')
    ?.split(/\s+/)
    .map(Number)
    .filter((n) => Number.isFinite(n));
  return {
    cpuModel: value('cpu_model'),
    cpusetEffective: value('cpuset_effective'),
    governor: value('governor'),
    smt: value('smt'),
    kernel: value('kernel'),
    python: value('python'),
    loadAverage: load && load.length === 3 ? load : null,
  };
}

/** The machine record from the probe and the engine's facts. Pure. */
export function machineOf(
  probe: ProbeReading | null,
  engine: EngineFacts | null,
  cpuset: string | null,
  limits: ContainerLimits,
  loadAfter: number[] | null,
): ReplayMachine {
  return {
    cpu_model: probe?.cpuModel ?? null,
    cpus: engine?.cpus ?? null,
    cpuset,
    cpuset_effective: probe?.cpusetEffective ?? null,
    governor: probe?.governor ?? null,
    smt: probe?.smt ?? null,
    kernel: probe?.kernel ?? engine?.kernel ?? null,
    os: engine?.os ?? null,
    docker: {
      server_version: engine?.serverVersion ?? null,
      cgroup_version: engine?.cgroupVersion ?? null,
      limits: { cpus: limits.cpus, memory_mb: limits.memoryMb, pids_limit: limits.pidsLimit },
    },
    image_python: probe?.python ?? null,
    load_average: { before: probe?.loadAverage ?? null, after: loadAfter },
  };
}

/** Runs the probe in a fresh container of `image` (no network, the given cpuset); null when it could not run. */
export async function probeMachine(
  docker: DockerService,
  image: string,
  options: { python: string; cpuset: string | null; limits: ContainerLimits; labels: Record<string, string> },
  signal?: AbortSignal,
): Promise<ProbeReading | null> {
  try {
    const result = await docker.run(
      {
        image,
        cmd: ['bash', '-c', probeScript(options.python)],
        network: 'none',
        timeoutMs: 60_000,
        limits: options.limits,
        ...(options.cpuset ? { cpuset: options.cpuset } : {}),
        labels: options.labels,
      },
      signal,
    );
    return result.exitCode === 0 ? parseProbe(result.stdout) : null;
  } catch {
    return null;
  }
}
