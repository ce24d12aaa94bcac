#!/usr/bin/env bash
# mariadb.sh - start/stop a private MariaDB (Debian package) on 127.0.0.1 for
# tpbed-load tests and comparisons. Never binds anything but 127.0.0.1.
#
#   mariadb.sh start [BASE] [PORT] [THREAD_HANDLING] [CPUS]   # BASE default /tmp/tpbed-load-mdb, PORT 3307
#   mariadb.sh stop  [BASE]
#
# start: fresh datadir under BASE, user/db sbtest (password sbtest), prints the PID.
# CPUS (optional) is a taskset CPU list the server is pinned to; env NICE (default 0) its nice value,
# env BUFFER_POOL (default 1G) innodb_buffer_pool_size, env MAX_CONNECTIONS (default 12000).
set -eu
cmd=${1:-}; BASE=${2:-/tmp/tpbed-load-mdb}; PORT=${3:-3307}; MODE=${4:-one-thread-per-connection}; CPUS=${5:-}
case "$cmd" in
start)
  # A tmpdir of its own: a starting mariadbd removes the `#sql*` files it finds in its tmpdir, so
  # servers started side by side in a shared /tmp remove each other's temporary tables.
  rm -rf "$BASE"; mkdir -p "$BASE/tmp"; chown mysql:mysql "$BASE" "$BASE/tmp"
  cat > "$BASE/my.cnf" <<CNF
[mariadbd]
user=mysql
datadir=$BASE/data
socket=$BASE/mysqld.sock
pid-file=$BASE/mysqld.pid
log-error=$BASE/error.log
tmpdir=$BASE/tmp
port=$PORT
bind-address=127.0.0.1
innodb_buffer_pool_size=${BUFFER_POOL:-1G}
max_connections=${MAX_CONNECTIONS:-12000}
max_prepared_stmt_count=1048576
open_files_limit=100000
thread_handling=$MODE
skip-log-bin
CNF
  mariadb-install-db --no-defaults --user=mysql --datadir="$BASE/data" \
      --auth-root-authentication-method=socket --skip-test-db --tmpdir="$BASE/tmp" \
      > "$BASE/install.log" 2>&1
  ulimit -n "$(ulimit -Hn)"
  if [ -n "$CPUS" ]; then
    nice -n "${NICE:-0}" taskset -c "$CPUS" mariadbd --defaults-file="$BASE/my.cnf" >> "$BASE/stdout.log" 2>&1 &
  else
    nice -n "${NICE:-0}" mariadbd --defaults-file="$BASE/my.cnf" >> "$BASE/stdout.log" 2>&1 &
  fi
  pid=$!; echo "$pid" > "$BASE/started.pid"
  for _ in $(seq 1 120); do
    if mariadb-admin --no-defaults -uroot --socket="$BASE/mysqld.sock" ping >/dev/null 2>&1; then break; fi
    kill -0 "$pid" 2>/dev/null || { tail -20 "$BASE/error.log" >&2; exit 1; }
    sleep 0.5
  done
  mariadb --no-defaults -uroot --socket="$BASE/mysqld.sock" <<'SQL'
CREATE DATABASE sbtest;
CREATE USER 'sbtest'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('sbtest');
CREATE USER 'sbtest'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('sbtest');
GRANT ALL PRIVILEGES ON sbtest.* TO 'sbtest'@'localhost';
GRANT ALL PRIVILEGES ON sbtest.* TO 'sbtest'@'%';
GRANT PROCESS, RELOAD ON *.* TO 'sbtest'@'localhost';
GRANT PROCESS, RELOAD ON *.* TO 'sbtest'@'%';
SQL
  echo "$pid"
  ;;
stop)
  [ -f "$BASE/started.pid" ] || exit 0
  pid=$(cat "$BASE/started.pid")
  if kill -0 "$pid" 2>/dev/null; then
    mariadb-admin --no-defaults -uroot --socket="$BASE/mysqld.sock" shutdown >/dev/null 2>&1 || kill -TERM "$pid"
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$BASE/started.pid"
  ;;
*) sed -n '2,9p' "$0"; exit 2 ;;
esac
