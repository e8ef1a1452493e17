#!/usr/bin/env python3
"""perfmine's package-index forwarder (standard library only, Python 3.8 or later).

A build container runs without a network: the only package index it can reach is perfmine's
index time machine, whose unix socket perfmine mounts into the container. pip and uv speak HTTP
over TCP, so this program listens on 127.0.0.1:PORT inside the container and passes every
connection, byte for byte in both directions, to that socket.

    python3 /mnt/index_forward.py --socket /mnt/index.sock --port 3141 --background

With --background it detaches once the port listens (it binds before it forks), so the shell line
that starts it returns when the index is ready. It exits 2 with a message on stderr when the
socket cannot be reached or the port cannot be bound.
"""

import argparse
import os
import socket
import sys
import threading

#: The oldest Python perfmine's in-image code runs on (python/README.md says why).
if sys.version_info < (3, 8):
    sys.exit("perfmine: {} needs Python 3.8 or newer; {} is {}.{}".format(
        os.path.basename(__file__), sys.executable, *sys.version_info[:2]))


def pump(source, sink):
    """Copies source to sink until source ends, then ends sink's writing side."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def serve_connection(client, path):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description="Forward 127.0.0.1:PORT to perfmine's package index socket.")
    parser.add_argument("--socket", required=True, help="the time machine's unix socket")
    parser.add_argument("--port", type=int, required=True, help="the TCP port to listen on")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--background", action="store_true", help="detach once listening")
    args = parser.parse_args(argv)

    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(args.socket)
    except OSError as error:
        print("index_forward: cannot reach the package index at %s: %s" % (args.socket, error), file=sys.stderr)
        return 2
    finally:
        probe.close()

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((args.host, args.port))
        listener.listen(128)
    except OSError as error:
        print("index_forward: cannot listen on %s:%d: %s" % (args.host, args.port, error), file=sys.stderr)
        return 2

    if args.background:
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() > 0:
            os._exit(0)  # the port listens already: the caller may go on
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)

    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            continue
        threading.Thread(target=serve_connection, args=(client, args.socket), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
