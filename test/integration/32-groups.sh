#!/usr/bin/env bash
# Consumer groups (Kafka's classic group protocol) on a 3-broker cluster, committed offsets
# kept in ZooKeeper at /consumers/<group>/offsets/<topic>/<partition> as decimal strings.
# Three confluent-kafka members of a group get disjoint assignments covering the 6 partitions
# and every record; synchronous commits are in ZooKeeper once acknowledged and committed()
# returns them; when a member leaves, the two others take its partitions over from the
# committed offsets (no record delivered again). kafka-python commits and resumes in a group
# of its own and reads the same offsets as confluent-kafka. Every broker names the same
# coordinator (FindCoordinator), the broker that the controller's placement in ZooKeeper
# (/coordinators/groups) gives the group's hash bucket; when it is killed (SIGKILL), the
# bucket moves and the others name a live broker within the session timeout and a margin,
# which serves the old offsets (from ZooKeeper) and new commits. Hand-encoded requests get
# Kafka's errors (INVALID_GROUP_ID, UNKNOWN_MEMBER_ID, NOT_COORDINATOR), a generation -1
# OffsetCommit is in ZooKeeper when acknowledged, a transaction-key FindCoordinator leaves
# the connection usable and a truncated JoinGroup closes the connection, nothing else.
# The admin APIs (both clients' admin calls, hand-encoded ListGroups v4 and OffsetDelete)
# list, describe and delete groups and their offsets as Kafka does, in ZooKeeper too.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka kafka
start_cluster
cd "$SF_TEST_DIR"
ZKHP=127.0.0.1:$ZK_PORT
STATE=$SF_TMP/groups.json
gr() { "$PY" groups.py "$@"; }
addr() { echo "127.0.0.1:${SF_BROKER_PORT[$1]}"; }
# name_of ID: the harness name of the broker with broker.id ID.
name_of() {
    local n
    for n in "${!SF_BROKER_ID[@]}"; do
        if [[ ${SF_BROKER_ID[$n]} == "$1" ]]; then
            echo "$n"
            return 0
        fi
    done
    return 1
}

# 1. The topic and 6,000 numbered records.
create_topic gt 6 3
gr produce "$ALL" "$STATE" 0 6000 || fail "producing 6000 records to gt"

# 2, 3. Group g1 with confluent-kafka: 3 members, then 2.
log "group g1: three confluent-kafka members"
gr g1 "$ALL" "$ZKHP" "$STATE" || fail "group g1 (confluent-kafka)"

# 4. Group g2 with kafka-python; both clients' view of g1.
log "group g2: kafka-python"
gr kafka-python "$ALL" "$ZKHP" "$STATE" || fail "group g2 (kafka-python)"

# 5. Coordinator failover: every broker names the one ZooKeeper's placement gives g1's bucket.
out=$(gr coordinator "$ZKHP" g1 "$(addr b1)" "$(addr b2)" "$(addr b3)") ||
    fail "the brokers do not agree on a coordinator for g1: $out"
read -r coord coord_addr bucket epoch <<<"$out"
victim=$(name_of "$coord") || fail "FindCoordinator named broker $coord, not one of the cluster"
assert_eq "$(addr "$victim")" "$coord_addr" "the address FindCoordinator gives for broker $coord"
log "broker $coord ($victim) coordinates g1 (bucket $bucket, epoch $epoch): killing it"
live=()
for n in b1 b2 b3; do
    if [[ $n != "$victim" ]]; then live+=("$n"); fi
done
kill9_broker "$victim"
# Its ZooKeeper session (6 s) expires and the controller moves the bucket: 20 s at most.
out=$(gr wait-coordinator "$ZKHP" g1 "$coord" "$epoch" 20 \
    "$(addr "${live[0]}")" "$(addr "${live[1]}")") ||
    fail "no new coordinator for g1: $out"
read -r coord2 coord2_addr bucket2 epoch2 <<<"$out"
new=$(name_of "$coord2") || fail "FindCoordinator named broker $coord2, not one of the cluster"
assert_eq "$(addr "$new")" "$coord2_addr" "the address FindCoordinator gives for broker $coord2"
assert_eq "$bucket" "$bucket2" "the bucket of g1"
log "broker $coord2 ($new) coordinates g1 now (epoch $epoch2)"
live_boot=$(addr "${live[0]}"),$(addr "${live[1]}")
gr failover "$live_boot" "$ZKHP" "$STATE" || fail "group g1 after the coordinator failover"

# 6. Raw requests.
other=${live[0]}
if [[ $other == "$new" ]]; then other=${live[1]}; fi
log "raw requests: coordinator $new, other broker $other"
gr wire "$ZKHP" "$(addr "$new")" "$(addr "$other")" || fail "group requests on the wire"

# 7. Administration of groups over the two live brokers (g3: a group of its own; gu: a topic
# no group subscribes to).
log "group administration: list, describe, delete, offsets"
create_topic gu 1 2
gr admin "$ZKHP" "$(addr "${live[0]}")" "$(addr "${live[1]}")" || fail "group administration"

for n in "${live[@]}"; do broker_alive "$n"; done
pass
