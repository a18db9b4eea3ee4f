#!/usr/bin/env bash
# Every protocol generation against one broker: kafka-python pinned to 0.8.2 .. 2.0 (message
# formats v0, v1 and record batches, plain and gzip) produces and reads back, librdkafka reads
# what they wrote, and raw requests cover Metadata v0/v12, Fetch v13+ by topic id, ListOffsets
# v0 and MAX_TIMESTAMP, ApiVersions v4, Produce v11, CreateTopics v0/v7 and DeleteTopics v0/v6.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka kafka
start_zk
start_broker b1 num.partitions=1
cd "$SF_TEST_DIR"
"$PY" protocol_versions.py "$BOOTSTRAP" || fail "protocol versions"
broker_alive b1
pass
