#!/usr/bin/python3
"""Read cmon's live stream: the calls a running trace records, as they happen.

    cmon trace -p PID --func 'parse_*' -o unix:/tmp/cmon.sock &
    python3 examples/stream_reader.py /tmp/cmon.sock

Each line cmon sends is one call as JSON (the keys of `-F json`, see
README.md): this prints one line per call, "pid/tid func(args) = ret
[latency]", and at the end (when the trace stops) the calls per function.
A reader that cannot keep up is disconnected by cmon (never slowed down):
read promptly, and do slow work elsewhere.  Standard library only.
"""
import collections
import json
import socket
import sys


def calls(path):
    """Yield each call cmon sends on the unix socket PATH, as a dict."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        print("# connected to %s" % path, file=sys.stderr, flush=True)
        buf = b""
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                yield json.loads(line)


def show(c):
    args = c.get("args")
    if args is None:  # no DWARF: the raw registers
        args = {"arg%d" % i: c["arg%d" % i] for i in range(6)}
    ret = c.get("retval", c["ret"])
    lat = "%.3f us" % (c["latency_ns"] / 1e3) if c["latency_ns"] is not None else c["status"]
    body = ", ".join("%s=%s" % (k, json.dumps(v)) for k, v in args.items())
    return "%d/%d %s(%s) = %s [%s]" % (c["pid"], c["tid"], c["func"], body, json.dumps(ret), lat)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: stream_reader.py SOCKET")
    per_func = collections.Counter()
    try:
        for c in calls(sys.argv[1]):
            per_func[c["func"]] += 1
            print(show(c), flush=False)
    except KeyboardInterrupt:
        pass
    sys.stdout.flush()
    for func, n in sorted(per_func.items()):
        print("# %s: %d calls" % (func, n), file=sys.stderr)


if __name__ == "__main__":
    main()
