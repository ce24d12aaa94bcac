-- sysbench-tpcc (Percona-Lab) with one change for runs whose `prepare` uses one thread:
-- no 30-second wait between creating the tables and loading them. Upstream waits so that,
-- with several prepare threads, every table exists before any thread loads rows; one thread
-- has created them all already. Run with LUA_PATH pointing at sysbench-tpcc/.
require("tpcc")

-- tpcc_common's cmd_prepare calls the global sleep(30) at that point.
function sleep(n)
end
