#!/usr/bin/env bash
# kill -9 under load: a confluent-kafka producer (acks=1) records every acknowledged record;
# the broker is killed mid-stream and restarted; every acknowledged record must be in the
# recovered log at its acknowledged offset, in order per partition, with no offset holes.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_zk
start_broker b1 num.partitions=3
cd "$SF_TEST_DIR"
acked=$SF_TMP/acked.txt
: >"$acked"
sf_bg "$PY" acked_producer.py "$BOOTSTRAP" kill9 "$acked" "$SF_TMP/stop"
prod=$!
count() { wc -l <"$acked"; }
wait_until 120 "20,000 acknowledged records" bash -c "(( \$(wc -l <'$acked') >= 20000 ))"
kill9_broker b1
at_kill=$(count)
log "killed the broker after $at_kill acknowledgements"
sleep 2
start_broker b1
wait_until 120 "20,000 more acknowledgements after the restart" bash -c "(( \$(wc -l <'$acked') >= $at_kill + 20000 ))"
touch "$SF_TMP/stop"
wait "$prod" || fail "the producer exited with status $?"
log "$(count) records acknowledged in total"
"$PY" verify_acked.py "$BOOTSTRAP" kill9 "$acked" || fail "acknowledged records after kill -9"
broker_alive b1

# A second kill while idle, then the log is read again in full.
kill9_broker b1
start_broker b1
"$PY" verify_acked.py "$BOOTSTRAP" kill9 "$acked" || fail "acknowledged records after a second kill -9"
broker_alive b1
pass
