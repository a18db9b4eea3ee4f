#!/usr/bin/env bash
# Leader epochs on one broker: OffsetForLeaderEpoch v0-v4 over the wire (end offsets, fenced
# and unknown epochs, unknown partitions), a leader epoch bumped in ZooKeeper recorded at the
# log end before the next write, the leader-epoch-checkpoint file in Kafka's format, kept
# across a restart and rebuilt from the batch headers when removed; records read back each time.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_zk
start_broker b1 num.partitions=1
cd "$SF_TEST_DIR"
zkaddr=127.0.0.1:$ZK_PORT
"$PY" leader_epochs.py "$BOOTSTRAP" "$zkaddr" produce || fail "OffsetForLeaderEpoch at epoch 0"
ckpt=$(broker_datadir b1)/le-0/leader-epoch-checkpoint
assert_eq "0 1 0 0" "$(tr '\n' ' ' <"$ckpt" | sed 's/ $//')" "checkpoint after the first writes"
"$PY" leader_epochs.py "$BOOTSTRAP" "$zkaddr" bump || fail "OffsetForLeaderEpoch after a bump"
assert_eq "0 2 0 0 3 10" "$(tr '\n' ' ' <"$ckpt" | sed 's/ $//')" "checkpoint after the bump"

stop_broker b1
start_broker b1
"$PY" leader_epochs.py "$BOOTSTRAP" "$zkaddr" restarted || fail "epochs after a restart"

# Without its checkpoint the cache is rebuilt from the batches and written again.
stop_broker b1
rm -f "$ckpt"
start_broker b1
"$PY" leader_epochs.py "$BOOTSTRAP" "$zkaddr" restarted || fail "epochs rebuilt from the batches"
[[ -f $ckpt ]] || fail "no checkpoint written after the rebuild"
head -n 4 "$ckpt" | tr '\n' ' ' | grep -q '^0 [23] 0 0 3 10 ' ||
    fail "rebuilt checkpoint: $(tr '\n' ' ' <"$ckpt")"
grep -q "leader-epoch-checkpoint" "$(broker_log b1)" &&
    fail "a missing checkpoint was logged as damage"
broker_alive b1
pass
