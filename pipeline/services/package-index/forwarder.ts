import { readFileSync } from 'node:fs';
import { packagePath } from '../../package-root.js';
import type { TarEntry } from '../tar.js';

/**
 * The forwarder that lets a container without a network reach the time machine: a Python program
 * of perfmine's (standard library, Python 3.8+) listening on 127.0.0.1:<port> inside the
 * container and passing every connection on to the time machine's unix socket, which is
 * bind-mounted into the container. Started in the background by a shell line that returns once it
 * listens (it binds before it detaches), or fails naming what is wrong.
 */

/** The forwarder on this host. */
export const FORWARDER_SCRIPT = packagePath('python', 'index_forward.py');
/** Its name in the time machine's socket directory (the time machine copies it there). */
export const FORWARDER_FILE = 'index_forward.py';
/** The socket's name in that directory. */
export const SOCKET_FILE = 'index.sock';

/**
 * The forwarder as a file to put into a container at `path` (relative to `/`), for a container
 * that does not mount the socket's directory's copy. The mounted copy leaves nothing in the image.
 */
export function forwarderEntry(path = 'perfmine/index/index_forward.py'): TarEntry {
  return { name: path.replace(/^\/+/, ''), content: readFileSync(FORWARDER_SCRIPT), mode: 0o755 };
}

/** Quotes a word for a POSIX shell. */
function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/**
 * The shell line that starts the forwarder in the background: it exits 0 once 127.0.0.1:<port>
 * listens, non-zero (with a message on stderr) when the socket is not there or the port is taken.
 */
export function forwarderStartLine(options: {
  readonly script: string;
  readonly socket: string;
  readonly port: number;
  readonly python?: string;
}): string {
  return [options.python ?? 'python3', options.script, '--socket', options.socket, '--port', String(options.port), '--background']
    .map(shellQuote)
    .join(' ');
}
