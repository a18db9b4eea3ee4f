#!/usr/bin/env bash
# The web console served by the broker at /, in headless Chromium (console_check.py): brokers,
# a topic's partitions and configs (one edited), a group's lag, the record browser, and a
# record produced in the console read back with kcat. The console's files come from the binary
# (no network, no files beside it). Screenshots go to the test log directory.
. "$(dirname "$0")/lib.sh"
need_cmd kcat curl chromium chromedriver
need_py selenium
need_py confluent_kafka
CLUSTER_HTTP=1 start_cluster num.partitions=3
h1=http://127.0.0.1:${HP[1]}

# The files are the ones in the source tree, served with their types.
curl -sf "$h1/" | cmp - "$SF_SRC_DIR/broker/http/console/index.html" || fail "/ is not index.html"
curl -sf "$h1/console/app.js" | cmp - "$SF_SRC_DIR/broker/http/console/app.js" || fail "app.js differs"
curl -sfI "$h1/console/style.css" | grep -qi '^Content-Type: text/css' || fail "style.css type"
assert_eq 404 "$(curl -s -o /dev/null -w '%{http_code}' "$h1/console/nothing.js")" "an unknown asset"

create_topic web 3 3
for i in 0 1 2; do
    printf 'k%d\tv%d\n' "$i" "$i" | kc -P -t web -p 0 -K '\t' -H "h=v$i" || fail "producing"
done
"$PY" - "$ALL" <<'PY' || fail "committing the group's offset"
import sys
from confluent_kafka import Consumer, TopicPartition
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "web-group", "broker.address.family": "v4"})
c.commit(offsets=[TopicPartition("web", 0, 1)], asynchronous=False)
c.close()
PY

shots=$SF_BUILD_DIR/test-integration/console-screenshots
out=$(cd "$SF_TEST_DIR" && "$PY" console_check.py "$h1" "$shots" web web-group) ||
    fail "web console: $out"
log "screenshots in $shots"
read -r _ part offset <<<"$(grep '^produced' <<<"$out")"
assert_eq 1 "$part" "the partition the console wrote to"
got=$(kc -C -t web -p 1 -o "$offset" -c 1 -e -q -f '%k=%s')
assert_eq "console-key=from the console" "$got" "the record produced in the console"
pass
