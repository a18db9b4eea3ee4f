#!/usr/bin/env bash
# Hostile record batches from a client (a zstd batch claiming 2^31-1 records, control and
# transactional bits, gzip over garbage, counts that lie, codecs 5 and 7): each is refused with
# Kafka's error code and stores nothing, the broker keeps serving, and a librdkafka consumer
# then reads exactly the good records that followed.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_zk
start_broker b1
cd "$SF_TEST_DIR"
"$PY" hostile_batches.py "$BOOTSTRAP" || fail "hostile batches"
broker_alive b1
grep -q "records refused" "$(broker_log b1)" || fail "the refusals were not logged"
pass
