#!/usr/bin/env bash
# Consumer groups through the streamflow command on a 3-broker cluster. Two `consume --group`
# members share a 4-partition topic while records keep coming: together they print every
# record (at least once: a rebalance may deliver some twice), and once both have left on
# SIGINT, `group describe` shows each partition committed at its log end (LAG 0).
# `group list` shows the group; `group reset-offsets --to-earliest` changes nothing without
# --execute and moves every committed offset to 0 with it, which a new member then honours;
# a pattern subscription (^...) reads the topic in a group of its own; `group delete` removes
# a group (skipped, with a log line, while the brokers do not advertise DeleteGroups). Then
# the live case of test/unit/check_client_group drives two libstreamflow members. Last, the
# coordinator of a group is killed (SIGKILL) under its member, which goes on reading every
# record and commits them to the coordinator that takes the group over.
. "$(dirname "$0")/lib.sh"
SFCLI=$SF_BUILD_DIR/admin/streamflow
[[ -x $SFCLI ]] || fail "$SFCLI not built"
start_cluster
export STREAMFLOW_BOOTSTRAP=$ALL
sf() { "$SFCLI" "$@"; }
T=$SF_TMP
N=4000
# Members notice a rebalance at their next heartbeat: one a second keeps the test short.
GOPTS=(-X heartbeat.interval.ms=1000 -X session.timeout.ms=10000)

# produce FROM TO: keyed records "kN:N" (so that they spread over the partitions), value N.
produce() {
    awk -v a="$1" -v b="$2" 'BEGIN { for (i = a; i <= b; i++) printf "k%d:%d\n", i, i }' |
        sf produce gt --key-separator : || fail "producing records $1..$2"
}

# seen FILE...: how many distinct values of 1..N the files hold.
seen() { cat "$@" | sort -un | awk -v n="$N" '$1 >= 1 && $1 <= n' | wc -l; }

# members GROUP: the number of members `group describe --members` lists.
members() { sf group describe "$1" --members | awk 'NR > 1' | wc -l; }

# column GROUP NAME: the NAME column of every row of `group describe GROUP`.
column() {
    sf group describe "$1" 2>/dev/null | awk -v c="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
        { print $k }'
}

log "topic gt: 4 partitions of 3 replicas, records 1..$((N / 2))"
sf topic create gt --partitions 4 --replication-factor 3 >/dev/null || fail "creating gt"
produce 1 $((N / 2))

log "two members of group G"
sf_bg "$SFCLI" consume gt --group G --from-beginning "${GOPTS[@]}" >"$T/c1.out" 2>"$T/c1.err"
c1=$!
# It reads all there is before the second one joins, so that the rebalance moves partitions
# with positions to hand over (committed when revoked).
wait_until 60 "the first member to print records 1..$((N / 2))" bash -c "(( \$(sort -un '$T/c1.out' | wc -l) >= $((N / 2)) ))"
assert_eq "1" "$(members G)" "members of G"
sf_bg "$SFCLI" consume gt --group G --from-beginning "${GOPTS[@]}" >"$T/c2.out" 2>"$T/c2.err"
c2=$!
wait_until 60 "both members in G" bash -c "[[ \$('$SFCLI' group describe G --state | awk 'NR == 2 { print \$(NF - 1), \$NF }') == 'Stable 2' ]]"
sf group describe G --members --verbose | sed 's/^/  /'
sf group describe G --members --output json >"$T/members.json"
"$PY" - "$T/members.json" <<'PY' || fail "the members' assignments do not split the 4 partitions"
import json, sys
ms = json.load(open(sys.argv[1]))["members"]
parts = sorted((a["topic"], a["partition"]) for m in ms for a in m["assignment"])
assert len(ms) == 2 and all(m["assignment"] for m in ms), ms
assert parts == [("gt", p) for p in range(4)], parts
PY

log "records $((N / 2 + 1))..$N while both consume"
produce $((N / 2 + 1)) $N
wait_until 60 "every record printed by the two members" bash -c "(( \$(cat '$T/c1.out' '$T/c2.out' | sort -un | wc -l) >= $N ))"
total=$(cat "$T/c1.out" "$T/c2.out" | wc -l)
log "member 1 printed $(wc -l <"$T/c1.out"), member 2 $(wc -l <"$T/c2.out"), $((total - N)) twice"
assert_eq "$N" "$(seen "$T/c1.out" "$T/c2.out")" "distinct records printed by the group"
(($(wc -l <"$T/c1.out") > 0 && $(wc -l <"$T/c2.out") > 0)) || fail "a member printed nothing"

log "both members leave on SIGINT"
kill -INT "$c1" "$c2"
wait "$c1" || fail "member 1 exited with status $?: $(tail -n 3 "$T/c1.err")"
wait "$c2" || fail "member 2 exited with status $?: $(tail -n 3 "$T/c2.err")"
grep -q "Processed a total of" "$T/c1.err" || fail "member 1 did not report its total"
sf group describe G | sed 's/^/  /'
assert_eq "0 0 0 0" "$(column G LAG | xargs)" "the lag of G's partitions"
[[ "$(column G CURRENT-OFFSET | xargs)" == "$(column G LOG-END-OFFSET | xargs)" ]] ||
    fail "G's committed offsets are not the log end offsets"
ends=$(column G LOG-END-OFFSET | xargs)
assert_eq "$N" "$(column G LOG-END-OFFSET | awk '{ s += $1 } END { print s }')" "records in gt"
assert_eq "0" "$(members G)" "members of G after both left"

log "group list shows G"
sf group list | awk '$1 == "G" { print $2 }' | grep -qx consumer || fail "group list: $(sf group list)"

log "reset-offsets --to-earliest: a dry run, then --execute"
sf group reset-offsets G --topic gt --to-earliest >"$T/plan" 2>"$T/plan.err" || fail "dry run: $(cat "$T/plan.err")"
assert_eq "0 0 0 0" "$(awk 'NR > 1 { print $4 }' "$T/plan" | xargs)" "the planned new offsets"
grep -q "Dry run" "$T/plan.err" || fail "the dry run did not say so"
assert_eq "$ends" "$(column G CURRENT-OFFSET | xargs)" "G's offsets after the dry run"
sf group reset-offsets G --topic gt --to-earliest --execute >/dev/null || fail "reset-offsets --execute"
assert_eq "0 0 0 0" "$(column G CURRENT-OFFSET | xargs)" "G's offsets after --execute"
sf group reset-offsets G --topic gt:1,3 --shift-by 7 --execute >/dev/null || fail "reset-offsets --shift-by"
assert_eq "0 7 0 7" "$(column G CURRENT-OFFSET | xargs)" "G's offsets after --shift-by 7 on 1 and 3"
sf group reset-offsets G --all-topics --to-earliest --execute >/dev/null || fail "reset-offsets --all-topics"

log "a new member of G starts from the reset offsets"
sf consume gt --group G --max-messages $N "${GOPTS[@]}" >"$T/c3.out" 2>"$T/c3.err" ||
    fail "member 3 exited with status $?: $(tail -n 3 "$T/c3.err")"
assert_eq "$N" "$(seen "$T/c3.out")" "distinct records read again after the reset"

log "a pattern subscription: ^g. in group G2"
sf consume '^g.' --group G2 --from-beginning --max-messages $N "${GOPTS[@]}" >"$T/c4.out" 2>"$T/c4.err" ||
    fail "the pattern member exited with status $?: $(tail -n 3 "$T/c4.err")"
assert_eq "$N" "$(seen "$T/c4.out")" "distinct records read through ^g."

log "group delete"
if sf broker api-versions | awk '$1 == "DeleteGroups"' | grep -q .; then
    sf group delete G G2 || fail "group delete G G2"
    sf group list | awk '$1 == "G" || $1 == "G2"' | grep -q . && fail "group list still shows G or G2"
    sf group describe G >/dev/null 2>&1 && fail "describe of a deleted group succeeded"
else
    log "SKIP: the brokers do not advertise DeleteGroups; group delete not checked"
fi

# The library's side (rebalance callbacks, commits, committed offsets, a pattern member,
# unsubscribe, the admin view): the live case of the group unit test, against this cluster.
CHECK=$SF_BUILD_DIR/test/unit/check_client_group
if [[ -x $CHECK ]]; then
    log "libstreamflow: two members, callbacks and commits (check_client_group, live)"
    SF_GROUP_TEST_BOOTSTRAP=$ALL "$CHECK" >"$T/check.out" 2>&1 ||
        fail "check_client_group (live): $(tail -n 5 "$T/check.out")"
    grep -q "100%" "$T/check.out" || fail "check_client_group (live): $(tail -n 5 "$T/check.out")"
else
    log "SKIP: $CHECK is not built (make check builds it); the library scenario not run"
fi

log "the coordinator of group G3 dies (SIGKILL) under its member"
sf_bg "$SFCLI" consume gt --group G3 --from-beginning "${GOPTS[@]}" >"$T/c5.out" 2>"$T/c5.err"
c5=$!
wait_until 60 "the G3 member to print every record" bash -c "(( \$(sort -un '$T/c5.out' | wc -l) >= $N ))"
coord=$(sf group describe G3 --state | awk 'NR == 2 { gsub(/[()]/, "", $3); print $3 }')
victim=
for n in b1 b2 b3; do
    if [[ ${SF_BROKER_ID[$n]} == "$coord" ]]; then victim=$n; fi
done
[[ -n $victim ]] || fail "group describe G3 --state names no broker of the cluster: '$coord'"
kill9_broker "$victim"
produce $((N + 1)) $((N + 500))
N=$((N + 500))
wait_until 90 "the G3 member to print the records written after the coordinator died" \
    bash -c "(( \$(sort -un '$T/c5.out' | wc -l) >= $N ))"
kill -INT "$c5"
wait "$c5" || fail "the G3 member exited with status $?: $(tail -n 3 "$T/c5.err")"
assert_eq "0 0 0 0" "$(column G3 LAG | xargs)" "the lag of G3 after its coordinator moved"

for n in b1 b2 b3; do
    if [[ $n != "$victim" ]]; then broker_alive "$n"; fi
done
pass
