#!/usr/bin/env bash
# Topic administration with confluent-kafka's AdminClient: CreateTopics, Metadata,
# CreatePartitions, DescribeConfigs, DeleteTopics; auto-creation on and off.
. "$(dirname "$0")/lib.sh"
need_py confluent_kafka
start_zk
start_broker b1

cd "$SF_TEST_DIR"
"$PY" admin_ops.py "$BOOTSTRAP" "127.0.0.1:$ZK_PORT" || fail "admin operations"
broker_alive b1

# A consumer's Metadata request (allow_auto_topic_creation=false) must not create a topic,
# even with auto.create.topics.enable=true.
"$PY" - "$BOOTSTRAP" <<'EOF' || fail "a consumer's metadata request created a topic"
import sys, time
from confluent_kafka import Consumer
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "sftest-peek", "broker.address.family": "v4",
              "allow.auto.create.topics": False})
c.list_topics("peek-only", timeout=10)
time.sleep(1)
t = c.list_topics(timeout=10).topics
sys.exit(1 if "peek-only" in t else 0)
EOF
zk exists /streamflow/brokers/topics/peek-only 2>/dev/null && fail "peek-only was created in ZooKeeper"

# --- auto.create.topics.enable=false -----------------------------------------------------
stop_broker b1
start_broker b1 auto.create.topics.enable=false
"$PY" - "$BOOTSTRAP" <<'EOF' || fail "producing to an unknown topic with auto-creation off"
import sys
from confluent_kafka import Producer, KafkaError
p = Producer({"bootstrap.servers": sys.argv[1], "broker.address.family": "v4", "message.timeout.ms": 5000})
errs = []
p.produce("never-created", b"x", on_delivery=lambda err, msg: errs.append(err))
p.flush(30)
if not errs or errs[0] is None:
    print("  delivery to an unknown topic succeeded with auto.create.topics.enable=false"); sys.exit(1)
print("  delivery failed as expected: %s" % errs[0])
t = p.list_topics(timeout=10).topics
if "never-created" in t and t["never-created"].error is None:
    print("  never-created exists in metadata"); sys.exit(1)
EOF
zk exists /streamflow/brokers/topics/never-created 2>/dev/null && fail "never-created was created in ZooKeeper"
# Topics created earlier are still served after the restart.
"$PY" - "$BOOTSTRAP" <<'EOF' || fail "t3cfg after restart"
import sys
sys.path.insert(0, ".")
from sftest import partitions_of
assert partitions_of(sys.argv[1], "t3cfg") == [0]
EOF
broker_alive b1
pass
