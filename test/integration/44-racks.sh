#!/usr/bin/env bash
# Rack-aware replica placement (broker.rack): four brokers in two racks, a (brokers 1 and 2)
# and b (3 and 4). Each registers its rack in ZooKeeper and Metadata gives it to clients
# (streamflow broker list). A topic of 8 partitions with 2 replicas created through the
# streamflow command, and the 4 partitions then added to it, have one replica of every
# partition in each rack. The rack-unaware placement over brokers 1..4 cannot pass: whatever
# its random start and shift, in partitions 0-3 or in 4-7 the second replica is 1 or 3
# brokers after the first, which pairs 1 with 2 and 3 with 4 in two of those partitions.
# Once a fifth broker without a rack joins, a new topic is placed without racks, with a
# warning.
. "$(dirname "$0")/lib.sh"
SF=$SF_BUILD_DIR/admin/streamflow
[[ -x $SF ]] || fail "$SF not built (make admin/streamflow)"
start_zk
for i in 1 2 3 4; do
    rack=a
    ((i <= 2)) || rack=b
    start_broker "b$i" broker.id=$i broker.rack=$rack
done
sf() { timeout -k 5 60 "$SF" --bootstrap-server "127.0.0.1:${SF_BROKER_PORT[b1]}" "$@"; }

# The registrations, and broker 1's metadata with all four (it places the partitions).
reg=$(zk get /streamflow/brokers/ids/3) || fail "no registration of broker 3"
[[ $reg == *'"rack":"b"'* ]] || fail "broker 3 registered without rack b: $reg"
racks_listed() {
    sf broker list --output json | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(sorted((b["id"], b["rack"]) for b in d["brokers"]) !=
         [(1, "a"), (2, "a"), (3, "b"), (4, "b")])'
}
wait_until 30 "broker 1 to list the four brokers with their racks" racks_listed

# check_racks TOPIC PARTITIONS: the topic znode assigns PARTITIONS partitions, each with one
# replica in rack a and one in rack b; prints the assignment.
check_racks() {
    zk get "/streamflow/brokers/topics/$1" | "$PY" -c '
import json, sys
parts = json.load(sys.stdin)["partitions"]
rack = {1: "a", 2: "a", 3: "b", 4: "b"}
bad = {p: r for p, r in parts.items() if sorted(rack[b] for b in r) != ["a", "b"]}
if len(parts) != int(sys.argv[1]) or bad:
    sys.exit("%d partitions, not spread over the racks: %s" % (len(parts), bad or parts))
for p in sorted(parts, key=int):
    print("%s:%s" % (p, ",".join(map(str, parts[p]))), end=" ")' "$2"
}

sf topic create racked --partitions 8 --replication-factor 2 >/dev/null ||
    fail "streamflow topic create racked"
out=$(check_racks racked 8) || fail "the replicas of racked are not spread over the racks"
log "created: $out"
sf topic alter racked --partitions 12 >/dev/null || fail "streamflow topic alter racked"
out=$(check_racks racked 12) || fail "the added partitions of racked are not spread over the racks"
log "grown: $out"

# A fifth broker without a rack: placement ignores the racks, and says so.
start_broker b5 broker.id=5
wait_until 30 "broker 1 to list five brokers" \
    bash -c "'$SF' --bootstrap-server 127.0.0.1:${SF_BROKER_PORT[b1]} broker list | grep -q '^5 '"
sf topic create mixed --partitions 5 --replication-factor 2 >/dev/null ||
    fail "streamflow topic create mixed (racks on some brokers only)"
grep -q 'placing mixed without racks: not every live broker has broker.rack (4 of 5)' \
    "$SF_TMP"/b*/streamflowd.log || fail "no broker logged that it placed mixed without racks"
for n in b1 b2 b3 b4 b5; do broker_alive "$n"; done
pass
