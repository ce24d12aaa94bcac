#!/usr/bin/env python3
"""queue-memory.py - a job queue's memory before and after its jobs are done (PyMySQL).

    queue-memory.py PORT [JOBS (default 100000)] [HELD_JOBS (default JOBS)] [USER (default root)] [PASSWORD]

The procedure of tests/tests/queue_memory.rs at any size, against any MySQL-compatible server
on 127.0.0.1:PORT: it creates database `queue_memory` with the fixture's `q_v1`
(tests/fixtures/queue.sql), adds a backlog of 10,000 jobs, then runs two loops, each a
batch of 10 jobs per transaction (INSERT 10 jobs; BEGIN; SELECT id ... WHERE status = 0
ORDER BY run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED; DELETE them; COMMIT):

1. JOBS jobs with purge running: table bytes before, at the loop's end, and once the history list is
   empty;
2. HELD_JOBS jobs with an idle REPEATABLE READ transaction on a second connection that has read
   (BEGIN; SELECT COUNT(*)): table bytes before, held back at the loop's end, and once that
   transaction has committed and the history list is empty.

Table bytes are information_schema.TABLES' DATA_LENGTH + INDEX_LENGTH of q_v1; history
length is INNODB_METRICS' trx_rseg_history_len (MariaDB: SHOW ENGINE INNODB STATUS is not
read; the metric must be enabled there). Prints one line per measurement.
"""

import pathlib
import sys
import time

import pymysql

BACKLOG = 10_000
BATCH = 10
FIXTURE = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "queue.sql"


def connect(port, user, password, db=None):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password,
                           database=db, autocommit=True)


def one(cur, sql):
    cur.execute(sql)
    return cur.fetchone()[0]


def table_bytes(cur):
    return int(one(cur, "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES "
                        "WHERE TABLE_SCHEMA = 'queue_memory' AND TABLE_NAME = 'q_v1'"))


def history_len(cur):
    return int(one(cur, "SELECT COUNT FROM information_schema.INNODB_METRICS "
                        "WHERE NAME = 'trx_rseg_history_len'"))


def wait_purged(cur, limit):
    start = time.monotonic()
    while history_len(cur) > 0:
        if time.monotonic() - start > limit:
            raise SystemExit(f"history length still {history_len(cur)} after {limit} s")
        time.sleep(0.05)
    return time.monotonic() - start


class Queue:
    def __init__(self, cur):
        self.cur = cur
        self.run_at = 1_000

    def add(self, n):
        rows = []
        for _ in range(n):
            self.run_at += 1
            rows.append(f"(0, {self.run_at}, 'job {self.run_at}')")
        for i in range(0, len(rows), 500):
            self.cur.execute("INSERT INTO q_v1 (status, run_at, payload) VALUES "
                             + ",".join(rows[i:i + 500]))

    def loop(self, jobs):
        cur = self.cur
        for _ in range(jobs // BATCH):
            self.add(BATCH)
            cur.execute("BEGIN")
            cur.execute(f"SELECT id FROM q_v1 WHERE status = 0 ORDER BY run_at, id "
                        f"LIMIT {BATCH} FOR UPDATE SKIP LOCKED")
            ids = [r[0] for r in cur.fetchall()]
            assert len(ids) == BATCH, "the queue ran dry"
            cur.execute(f"DELETE FROM q_v1 WHERE id IN ({','.join(map(str, ids))})")
            cur.execute("COMMIT")


def main():
    port = int(sys.argv[1])
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    held_jobs = int(sys.argv[3]) if len(sys.argv) > 3 else jobs
    user = sys.argv[4] if len(sys.argv) > 4 else "root"
    password = sys.argv[5] if len(sys.argv) > 5 else ""
    admin = connect(port, user, password).cursor()
    admin.execute("DROP DATABASE IF EXISTS queue_memory")
    admin.execute("CREATE DATABASE queue_memory")
    admin.execute("USE queue_memory")
    sql = "\n".join(l for l in FIXTURE.read_text().splitlines() if not l.strip().startswith("--"))
    for stmt in sql.split(";"):
        if stmt.strip():
            admin.execute(stmt)
    q = Queue(admin)
    limit = max(30, jobs / 1000)

    q.add(BACKLOG)
    wait_purged(admin, limit)
    before = table_bytes(admin)
    start = time.monotonic()
    q.loop(jobs)
    looped = time.monotonic() - start
    during = table_bytes(admin)
    purged_in = wait_purged(admin, limit)
    after = table_bytes(admin)
    print(f"purge running: jobs {jobs} backlog {BACKLOG} loop_s {looped:.1f} "
          f"bytes_before {before} at_loop_end {during} after_purge {after} "
          f"(purge {purged_in:.1f} s) after/before {after / before:.3f}")

    before = table_bytes(admin)
    idle = connect(port, user, password, "queue_memory").cursor()
    idle.execute("SET SESSION transaction_isolation = 'REPEATABLE-READ'")
    idle.execute("BEGIN")
    one(idle, "SELECT COUNT(*) FROM q_v1")
    start = time.monotonic()
    q.loop(held_jobs)
    looped = time.monotonic() - start
    time.sleep(0.5)
    held, history = table_bytes(admin), history_len(admin)
    idle.execute("COMMIT")
    purged_in = wait_purged(admin, limit)
    after = table_bytes(admin)
    print(f"idle RR view: jobs {held_jobs} backlog {BACKLOG} loop_s {looped:.1f} "
          f"bytes_before {before} held_back {held} (history {history}) "
          f"after_commit_and_purge {after} (purge {purged_in:.1f} s) "
          f"held/before {held / before:.2f} after/before {after / before:.3f}")
    admin.execute("DROP DATABASE queue_memory")


if __name__ == "__main__":
    main()
