/**
 * Whether a host (`name[:port]`, `[::1]:port`) or a URL is this machine's loopback: where perfmine
 * speaks plain HTTP to a registry, and builds on the host's network to reach an index it serves.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host
    .replace(/:\d+$/, '')
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  return name === 'localhost' || name === '::1' || /^127\./.test(name);
}

export function isLoopbackUrl(url: string): boolean {
  try {
    return isLoopbackHost(new URL(url).hostname);
  } catch {
    return false;
  }
}
