#!/usr/bin/env bash
# Consumer groups as applications use them, every member a confluent-kafka process of its own
# (group_scenarios.py). 1. Group gk (topic t6, 6 partitions): three members commit
# synchronously after each batch while an acks=all producer runs; one is killed (SIGKILL) once
# each holds 2 partitions, and the coordinator expires its session: the two others own all 6
# partitions within the session timeout (6 s) + 10 s; after the producer stops and they drain,
# every acknowledged record was processed at least once and ZooKeeper's committed offsets are
# the high watermarks. 2. Group gc with cooperative-sticky: when one of three members closes,
# the two others keep their partitions (nothing revoked) and gain only the leaver's. 3. Topic
# t3 (3 partitions) read by group gf1 (one member) and gf2 (three): 3000 records reach gf1
# whole and are split among gf2's members by partition, each record once.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_cluster group.initial.rebalance.delay.ms=1000
cd "$SF_TEST_DIR"
ZKHP=127.0.0.1:$ZK_PORT
create_topic t6 6 3
create_topic t3 3 3

# scenario NAME: group_scenarios.py NAME, its files in $SF_TMP/NAME.
scenario() {
    sf_bg "$PY" group_scenarios.py "$1" "$ALL" "$ZKHP" "$SF_TMP/$1"
    wait "$!"
}
# group_log PATTERN: the brokers' log lines matching the extended regular expression.
group_log() {
    cat "$SF_TMP"/b[123]/streamflowd.log | grep -E "$1" || true
}

log "1. group gk: kill -9 of one of three members under a running producer"
scenario kill9 || fail "group gk: kill -9 of a member"
timeouts=$(group_log "group gk: member [^ ]+ session timed out")
[[ $(grep -c . <<<"$timeouts") == 1 && $timeouts == *"member gk-b-"* ]] ||
    fail "the coordinator did not time out exactly the killed member gk-b's session: '$timeouts'"
log "coordinator: ${timeouts#*GROUP*: }"

log "2. group gc: cooperative-sticky, one of three members closes"
scenario cooperative || fail "group gc: cooperative-sticky"
[[ -n $(group_log "group gc: member gc-z-[^ ]+ left") ]] || fail "no broker logged gc-z leaving gc"
[[ -n $(group_log "group gc: generation [0-9]+ with 2 member\(s\), protocol cooperative-sticky") ]] ||
    fail "no broker logged a generation of gc with 2 members and protocol cooperative-sticky"

log "3. fan-out to group gf1, work queue in group gf2"
scenario fanout || fail "fan-out (gf1) and work queue (gf2)"

for n in b1 b2 b3; do broker_alive "$n"; done
pass
