"""Process helpers shared by the integration tests, the soak test and the benchmarks."""
import socket
from pathlib import Path


def free_port():
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid):
    """(pid, state) of every process whose parent is `pid` (state "Z": a zombie)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append((int(stat.parent.name), fields[0]))
    return out


def child_pids(pid):
    """Pids whose parent is `pid` (the runners of a serve process)."""
    return [child for child, _ in children(pid)]
