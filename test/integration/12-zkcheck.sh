#!/usr/bin/env bash
# The ZooKeeper layer (zkmeta) against a live ZooKeeper: test/integration/zkcheck (built by
# make check's noinst programs) with and without a ZooKeeper restart (SIGKILL + start)
# in the middle of a session.
. "$(dirname "$0")/lib.sh"
zkcheck=$SF_BUILD_DIR/test/integration/zkcheck
[[ -x $zkcheck ]] || make -C "$SF_BUILD_DIR" -s test/integration/zkcheck >/dev/null ||
    fail "cannot build $zkcheck"
start_zk
"$zkcheck" "$ZK_CONNECT" >"$SF_TMP/zkcheck.txt" 2>&1 || {
    grep -v '^ok ' "$SF_TMP/zkcheck.txt" | tail -n 30
    fail "zkcheck reported failures"
}
log "zkcheck: $(tail -n 1 "$SF_TMP/zkcheck.txt")"
"$zkcheck" "$ZK_CONNECT" --restart-cmd "$SF_TMP/zk/restart.sh" >"$SF_TMP/zkcheck-restart.txt" 2>&1 || {
    grep -v '^ok ' "$SF_TMP/zkcheck-restart.txt" | tail -n 30
    fail "zkcheck --restart-cmd reported failures"
}
log "zkcheck --restart-cmd: $(tail -n 1 "$SF_TMP/zkcheck-restart.txt")"
pass
