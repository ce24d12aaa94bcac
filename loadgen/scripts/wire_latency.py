#!/usr/bin/env python3
"""wire_latency.py - client-independent latency from the kernel's socket tracepoints.

    wire_latency.py PERF_DATA SERVER_PID WORKLOAD

PERF_DATA is a `perf record -a -e sock:sock_send_length,sock:sock_recv_length` of one client
run against a server whose process id is SERVER_PID. The client is the other process with the
most socket events. For each of its connections the script takes the statements (a send, then the receives up to the next send)
and groups them into events: one statement per event for oltp_point_select, BEGIN (a 14-byte
COM_STMT_EXECUTE) to the COMMIT's reply for oltp_read_only. The times are the kernel's, on the
same clock for every client, so the same figures come out whichever client sent the
statements:

- event p50 / p95: first send of the event to the end of the last receive (ms);
- rtt p50: a statement's send to the end of its reply's receive (us);
- think p50: the end of a reply's receive to the next send of the same connection, inside an
  event: the client's own work per statement, including the send system call (us).

Prints one line: "events N p50 P p95 Q rtt_p50 R think_p50 T".
"""
import collections
import re
import subprocess
import sys

LINE = re.compile(
    r"\s*(\d+)/\d+\s+([\d.]+):\s+sock:sock_(send|recv)_length: sk address = (0x[0-9a-f]+)"
    r".*length = (-?\d+)"
)


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else float("nan")


def statements(path, server_pid):
    """Per client socket: [send time, send length, [receive end times]] in order."""
    out = subprocess.run(
        ["perf", "script", "-i", path, "-F", "pid,tid,time,event,trace"],
        capture_output=True, text=True, check=True,
    ).stdout
    socks = collections.defaultdict(list)
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        pid, t, kind, sk, length = m.groups()
        if int(pid) == server_pid or int(length) <= 0:
            continue
        socks[(pid, sk)].append((float(t), kind, int(length)))
    per_pid = collections.Counter()
    for (pid, _), seq in socks.items():
        per_pid[pid] += len(seq)
    if not per_pid:
        return []
    client = per_pid.most_common(1)[0][0]
    result = []
    for (pid, _), seq in socks.items():
        if pid != client:
            continue
        stm = []
        for t, kind, length in seq:
            if kind == "send":
                stm.append([t, length, []])
            elif stm:
                stm[-1][2].append(t)
        result.append(stm)
    return result


def events(stm, workload):
    """(event seconds, [(rtt, think)] inside it) for one connection's statements."""
    out = []
    if workload == "oltp_point_select":
        for s in stm:
            # executes of the one-parameter statement: 4 + 20 or 22 bytes
            if s[1] in (24, 26) and s[2]:
                out.append((s[2][-1] - s[0], [(s[2][-1] - s[0], None)]))
        return out
    i = 0
    while i < len(stm):
        if stm[i][1] != 14 or i + 1 >= len(stm) or stm[i + 1][1] not in (24, 26):
            i += 1
            continue
        j = i + 1
        while j < len(stm) and stm[j][1] != 14:
            j += 1
        if j >= len(stm) or not stm[j][2] or any(not s[2] for s in stm[i:j + 1]):
            break
        ev = stm[i:j + 1]
        parts = [(a[2][-1] - a[0], b[0] - a[2][-1]) for a, b in zip(ev, ev[1:])]
        out.append((ev[-1][2][-1] - ev[0][0], parts))
        i = j + 1
    return out


def main():
    path, server_pid, workload = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    evs, rtts, thinks = [], [], []
    for stm in statements(path, server_pid):
        for secs, parts in events(stm, workload):
            evs.append(secs * 1e3)
            for rtt, think in parts:
                rtts.append(rtt * 1e6)
                if think is not None:
                    thinks.append(think * 1e6)
    print(
        f"events {len(evs)} p50 {pct(evs, 50):.3f} p95 {pct(evs, 95):.3f} "
        f"rtt_p50 {pct(rtts, 50):.1f} think_p50 {pct(thinks, 50):.1f}"
    )


if __name__ == "__main__":
    main()
