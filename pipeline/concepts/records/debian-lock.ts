import { z } from 'zod';

/**
 * A package tier's Debian lock, as stored and handed on (pipeline/services/environments/debian-lock.ts
 * makes it): every package the tier installed or changed relative to its base image, as apt-get
 * names it: `name=version`, or `name:arch=version` for a package of another architecture than
 * the image's own (and not `all`). The characters are Debian's (policy 5.6.1, 5.6.12), so an
 * entry is safe in a shell word.
 */
export const DEBIAN_LOCK_ENTRY = /^([a-z0-9][a-z0-9+.-]+)(?::([a-z0-9][a-z0-9-]*))?=([A-Za-z0-9][A-Za-z0-9.+~:-]*)$/;

export const debianLockSchema = z.array(z.string().regex(DEBIAN_LOCK_ENTRY, 'expected name=version or name:arch=version'));
