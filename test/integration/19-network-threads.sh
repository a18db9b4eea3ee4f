#!/usr/bin/env bash
# Several network and I/O threads (num.network.threads=3, num.io.threads=2) under load:
# - 8 producer connections at once, 5,000+ numbered records each (acks=all, pipelined) to one
#   3-partition topic: every acknowledged record exactly once at its offset, each producer's
#   records in order within each partition; the connections are spread over all three
#   network threads' event loops, each connection in exactly one (seen in /proc);
# - meanwhile 20 topics are created and segment.bytes altered (the metadata thread): all
#   succeed, Metadata lists them, the running partitions roll at the new size;
# - fetches parked on six connections, and a confluent-kafka and a kafka-python consumer, are
#   woken by a record produced on another connection (well before their 20 s MaxWaitTime);
# - a topic (with a fetch parked on it) is deleted and created again under its name, twice:
#   it comes back empty and then holds exactly the new records; its old logs are deleted;
# - a producer keeps producing to another topic all along, with no failure;
# - SIGTERM while a producer sends: exit 0, and after the restart (clean shutdown seen)
#   every acknowledged record is there.
# The broker log has no error lines.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka kafka
start_zk
start_broker b1 num.network.threads=3 num.io.threads=2 num.partitions=3 auto.create.topics.enable=false
cd "$SF_TEST_DIR"
pid=$(broker_pid b1)
blog=$(broker_log b1)

# --- the threads the configuration asks for ----------------------------------------------
thread_names() { cat /proc/"$pid"/task/*/comm; }
assert_eq 3 "$(thread_names | grep -c '^net/')" "network threads (named net/N)"
assert_eq 2 "$(thread_names | grep -c '^io/')" "I/O threads (named io/N)"
assert_eq 1 "$(thread_names | grep -c '^logmgr/')" "log-manager threads"

# --- a producer that runs through everything up to the shutdown -------------------------
"$PY" network_threads.py create "$BOOTSTRAP" nt-bg 3 || fail "creating nt-bg"
bg_acked=$SF_TMP/bg-acked.txt
: >"$bg_acked"
"$PY" network_threads.py background "$BOOTSTRAP" nt-bg "$bg_acked" "$SF_TMP/bg-stop" >"$SF_TMP/bg.out" 2>&1 &
bg=$!
SF_PIDS+=("$bg")
wait_until 60 "the background producer's first acknowledgements" bash -c "(( \$(wc -l <'$bg_acked') >= 1000 ))"

# --- 1 + 4: concurrent producers, admin requests meanwhile -------------------------------
"$PY" network_threads.py load "$BOOTSTRAP" "$SF_TMP/load.json" "$pid" 3 || fail "concurrent producers / admin under load"
broker_alive b1
# segment.bytes=16384 applied to the running partitions: they rolled.
for p in 0 1 2; do
    n=$(find "$(broker_datadir b1)/nt-multi-$p" -name '*.log' | wc -l)
    ((n >= 5)) || fail "nt-multi-$p has $n segment(s), though 8,000 records (~200 KB) came after segment.bytes=16384"
done

# --- 2: long polls woken across threads --------------------------------------------------
"$PY" network_threads.py longpoll "$BOOTSTRAP" || fail "long-poll wake-up"
broker_alive b1

# --- 3: delete and recreate while nt-bg keeps being produced to ---------------------------
"$PY" network_threads.py recreate "$BOOTSTRAP" 2 || fail "delete and recreate"
broker_alive b1
wait_until 30 "the logs of the deleted nt-recreate to be deleted" \
    bash -c "(( \$(grep -c 'deleted the log of nt-recreate-' '$blog') >= 6 ))"
if grep -E 'cannot (create|delete|remove)' "$blog"; then
    fail "the broker logged errors creating or deleting logs"
fi

touch "$SF_TMP/bg-stop"
wait "$bg" || fail "the background producer exited with status $?"
cat "$SF_TMP/bg.out"
grep -q 'failed 0, unresolved 0' "$SF_TMP/bg.out" || fail "the background producer had failures: $(cat "$SF_TMP/bg.out")"
"$PY" verify_acked.py "$BOOTSTRAP" nt-bg "$bg_acked" || fail "nt-bg: acknowledged records"

# --- 5: SIGTERM under load ----------------------------------------------------------------
"$PY" network_threads.py create "$BOOTSTRAP" nt-stop 3 || fail "creating nt-stop"
acked=$SF_TMP/acked.txt
: >"$acked"
"$PY" acked_producer.py "$BOOTSTRAP" nt-stop "$acked" "$SF_TMP/stop" >"$SF_TMP/stop.out" 2>&1 &
prod=$!
SF_PIDS+=("$prod")
wait_until 60 "10,000 acknowledged records" bash -c "(( \$(wc -l <'$acked') >= 10000 ))"
stop_broker b1
at_stop=$(wc -l <"$acked")
log "stopped the broker after $at_stop acknowledgements"
head -n "$at_stop" "$acked" >"$SF_TMP/acked-at-stop.txt"   # complete lines only
start_broker b1
grep 'loading logs in' "$blog" | tail -n 1 | grep -qF '(clean shutdown)' ||
    fail "after SIGTERM the restarted broker did not find a clean shutdown: $(grep 'loading logs in' "$blog" | tail -n 1)"
wait_until 60 "5,000 more acknowledgements after the restart" bash -c "(( \$(wc -l <'$acked') >= $at_stop + 5000 ))"
touch "$SF_TMP/stop"
wait "$prod" || fail "the producer exited with status $?"
cat "$SF_TMP/stop.out"
"$PY" verify_acked.py "$BOOTSTRAP" nt-stop "$SF_TMP/acked-at-stop.txt" || fail "records acknowledged before SIGTERM"
"$PY" verify_acked.py "$BOOTSTRAP" nt-stop "$acked" || fail "records acknowledged before and after the restart"
"$PY" verify_acked.py "$BOOTSTRAP" nt-bg "$bg_acked" || fail "nt-bg after the restart"
"$PY" network_threads.py verify-load "$BOOTSTRAP" "$SF_TMP/load.json" || fail "nt-multi after the restart"
broker_alive b1

errs=$(grep -E '^[0-9-]+ [0-9:.]+ (emerg|alert|crit|error) ' "$blog" || true)
[[ -z $errs ]] || fail "the broker logged errors: $(head -n 5 <<<"$errs")"
pass
