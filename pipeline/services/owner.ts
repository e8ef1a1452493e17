import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who created a container or image: `host/pidns:pid:starttime`. A crashed run's leftovers are
 * recognised by an owner on this host and PID namespace whose process is gone (or whose PID now
 * belongs to a process started at another time). An owner from another host or namespace is
 * never judged: its process cannot be seen from here, so its objects are left alone.
 */
export interface Owner {
  readonly host: string;
  readonly pidNamespace: string;
  readonly pid: number;
  readonly startTime: string;
}

export function formatOwner(owner: Owner): string {
  return `${owner.host}/${owner.pidNamespace}:${owner.pid}:${owner.startTime}`;
}

export function parseOwner(text: string): Owner | null {
  const m = /^(.+)\/([^/:]+):(\d+):(\d+)$/.exec(text);
  if (!m) return null;
  return { host: m[1]!, pidNamespace: m[2]!, pid: Number(m[3]), startTime: m[4]! };
}

function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid').replace(/[^0-9a-z]/gi, '');
  } catch {
    return 'unknown';
  }
}

/** A running process's start time (field 22 of /proc/PID/stat), or null when it is gone. */
export function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime); the command name (field 2) may hold spaces, so count after its ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] ?? null;
  } catch {
    return null;
  }
}

export function currentOwner(): Owner {
  return { host: hostname(), pidNamespace: pidNamespace(), pid: process.pid, startTime: startTimeOf(process.pid) ?? '0' };
}

/**
 * True only when the owner is provably gone: same host and PID namespace as this process, and
 * its PID is free or taken by a process started at another time.
 */
export function ownerIsGone(text: string, here: Owner = currentOwner()): boolean {
  const owner = parseOwner(text);
  if (!owner) return false;
  if (owner.host !== here.host || owner.pidNamespace !== here.pidNamespace || here.pidNamespace === 'unknown') return false;
  if (owner.pid === here.pid) return owner.startTime !== here.startTime;
  const start = startTimeOf(owner.pid);
  return start === null || start !== owner.startTime;
}
