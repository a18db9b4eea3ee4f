"""The REST API's writes and cluster-wide reads against a three-broker cluster: topics created,
grown and deleted; topic, broker and cluster configs read and altered; records produced one at
a time, as a stream and as a batch (JSON, string and binary payloads, keys, headers, partition
and key routing), every acknowledged one read back with a Kafka consumer; bad input answered
with JSON errors and nothing created; concurrent HTTP producers on every broker; consumer groups
with members and lag.

usage: http_writes.py BOOTSTRAP HTTP_BASE1 HTTP_BASE2 HTTP_BASE3
"""
import base64
import json
import sys
import threading
import time
import urllib.request

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

import httpclient
from httpclient import call, expect, expect_error, fail

bootstrap, bases = sys.argv[1], sys.argv[2:5]
httpclient.BASE = bases[0]


admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})


def topics():
    return admin.list_topics(timeout=10).topics


def wait_for(what, pred, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.2)
    fail("timed out waiting for " + what)


cluster = expect("GET", "/v3/clusters", 200)["data"][0]["cluster_id"]
c = f"/v3/clusters/{cluster}"

# ---- topics ----
t = expect("POST", c + "/topics", 201, {"topic_name": "orders", "partitions_count": 3,
                                        "replication_factor": 3,
                                        "configs": [{"name": "retention.ms", "value": "600000"}]})
if t["kind"] != "KafkaTopic" or t["topic_name"] != "orders" or t["partitions_count"] != 3 \
        or t["replication_factor"] != 3 or not t["configs"]["related"].endswith("/topics/orders/configs"):
    fail(f"created topic resource: {t}")
if "orders" not in topics() or len(topics()["orders"].partitions) != 3:
    fail("orders not created with 3 partitions")
expect_error("POST", c + "/topics", 409, "TOPIC_ALREADY_EXISTS",
             {"topic_name": "orders", "partitions_count": 1})
expect_error("POST", c + "/topics", 400, "INVALID_REQUEST", {"partitions_count": 1})
expect_error("POST", c + "/topics", 400, "INVALID_REQUEST",
             {"topic_name": "x1", "partitions_count": -4})
expect_error("POST", c + "/topics", 400, "INVALID_REQUEST", raw=b"{not json")
expect_error("POST", c + "/topics", 400, None,
             {"topic_name": "bad/name?", "partitions_count": 1})
expect_error("POST", c + "/topics", 400, "INVALID_REPLICATION_FACTOR",
             {"topic_name": "x2", "partitions_count": 1, "replication_factor": 7})
# validate_only: answered as the create would be, and nothing made.
t = expect("POST", c + "/topics", 201, {"topic_name": "dry", "partitions_count": 4,
                                        "validate_only": True})
if t["partitions_count"] != 4 or t["replication_factor"] != 3:  # the cluster default
    fail(f"validate_only answer: {t}")
expect_error("POST", c + "/topics", 400, "INVALID_REPLICATION_FACTOR",
             {"topic_name": "dry2", "partitions_count": 1, "replication_factor": 7,
              "validate_only": True})
# replicas_assignments: every replica where it was asked, the first one leading.
placed = [[2, 3], [3, 1]]
t = expect("POST", c + "/topics", 201, {"topic_name": "placed", "replicas_assignments": [
    {"partition_id": 1, "broker_ids": placed[1]}, {"partition_id": 0, "broker_ids": placed[0]}]})
if t["partitions_count"] != 2 or t["replication_factor"] != 2:
    fail(f"placed topic resource: {t}")
wait_for("placed to have leaders", lambda: "placed" in topics() and all(
    p.leader >= 0 for p in topics()["placed"].partitions.values()))
got = {i: p.replicas for i, p in topics()["placed"].partitions.items()}
if got != {0: placed[0], 1: placed[1]}:
    fail(f"placed replicas: {got}")
for bad_body in ({"topic_name": "x3", "partitions_count": 2,
                  "replicas_assignments": [{"partition_id": 0, "broker_ids": [1]}]},
                 {"topic_name": "x4", "replicas_assignments": [
                     {"partition_id": 0, "broker_ids": [1]}, {"partition_id": 0, "broker_ids": [2]}]},
                 {"topic_name": "x5", "replicas_assignments": [
                     {"partition_id": 0, "broker_ids": [1, 2]}, {"partition_id": 1, "broker_ids": [2]}]},
                 {"topic_name": "x6", "replicas_assignments": [{"partition_id": 0, "broker_ids": ["a"]}]},
                 {"topic_name": "x7", "replicas_assignments": "0:1"}):
    expect_error("POST", c + "/topics", 400, "INVALID_REQUEST", bad_body)
expect_error("POST", c + "/topics", 400, None, {"topic_name": "x8", "replicas_assignments": [
    {"partition_id": 0, "broker_ids": [1, 1]}]})
expect_error("POST", c + "/topics", 400, None, {"topic_name": "x9", "replicas_assignments": [
    {"partition_id": 0, "broker_ids": [42]}]})
for bad in ("x1", "x2", "bad/name?", "dry", "dry2", "x3", "x4", "x5", "x6", "x7", "x8", "x9"):
    if bad in topics():
        fail(f"a refused create made topic {bad}")

t = expect("PATCH", c + "/topics/orders", 200, {"partitions_count": 5})
if t["partitions_count"] != 5:
    fail(f"PATCH did not grow the topic: {t}")
wait_for("orders to have 5 partitions", lambda: len(topics()["orders"].partitions) == 5)
expect_error("PATCH", c + "/topics/orders", 400, "INVALID_PARTITIONS", {"partitions_count": 2})
expect_error("PATCH", c + "/topics/orders", 400, "INVALID_REQUEST", {"partitions_count": "x"})
expect_error("PATCH", c + "/topics/nosuch", 404, "UNKNOWN_TOPIC_OR_PARTITION",
             {"partitions_count": 9})
# Any broker answers for the cluster.
for b in bases:
    expect("GET", c + "/topics/orders", 200, at=b)

# ---- configs ----
cfgs = expect("GET", c + "/topics/orders/configs", 200)
byname = {e["name"]: e for e in cfgs["data"]}
if cfgs["kind"] != "KafkaTopicConfigList" or byname["retention.ms"]["value"] != "600000" \
        or byname["retention.ms"]["source"] != "DYNAMIC_TOPIC_CONFIG" \
        or byname["retention.ms"]["is_default"]:
    fail(f"topic configs: {byname.get('retention.ms')}")
expect("PUT", c + "/topics/orders/configs/cleanup.policy", 204, {"value": "compact"})
e = expect("GET", c + "/topics/orders/configs/cleanup.policy", 200)
if e["value"] != "compact" or e["topic_name"] != "orders" or e["kind"] != "KafkaTopicConfig":
    fail(f"after PUT: {e}")
expect("POST", c + "/topics/orders/configs:alter", 204,
       {"data": [{"name": "cleanup.policy", "operation": "DELETE"},
                 {"name": "max.message.bytes", "value": "200000"}]})
byname = {e["name"]: e for e in expect("GET", c + "/topics/orders/configs", 200)["data"]}
if byname["cleanup.policy"]["value"] != "delete" or byname["max.message.bytes"]["value"] != "200000":
    fail(f"after configs:alter: {byname['cleanup.policy']} {byname['max.message.bytes']}")
expect("DELETE", c + "/topics/orders/configs/max.message.bytes", 204)
e = expect("GET", c + "/topics/orders/configs/max.message.bytes", 200)
if not e["is_default"] and e["source"] == "DYNAMIC_TOPIC_CONFIG":
    fail(f"DELETE did not reset: {e}")
expect_error("PUT", c + "/topics/orders/configs/retention.ms", 400, None, {"value": "soon"})
expect_error("PUT", c + "/topics/orders/configs/retention.ms", 400, "INVALID_REQUEST", {"v": 1})
expect_error("GET", c + "/topics/orders/configs/no.such.config", 404)
expect_error("GET", c + "/topics/nosuch/configs", 404, "UNKNOWN_TOPIC_OR_PARTITION")

bc = expect("GET", c + "/brokers/2/configs", 200)
if bc["kind"] != "KafkaBrokerConfigList" or not bc["data"] or bc["data"][0]["broker_id"] != 2:
    fail(f"broker configs: {str(bc)[:300]}")
expect("PUT", c + "/brokers/2/configs/log.retention.ms", 204, {"value": "7200000"})
e = expect("GET", c + "/brokers/2/configs/log.retention.ms", 200)
if e["value"] != "7200000" or e["source"] != "DYNAMIC_BROKER_CONFIG":
    fail(f"broker config after PUT: {e}")
expect("DELETE", c + "/brokers/2/configs/log.retention.ms", 204)
expect("PUT", c + "/broker-configs/log.retention.ms", 204, {"value": "3600000"})
cc = expect("GET", c + "/broker-configs", 200)
if cc["kind"] != "KafkaClusterConfigList" or not any(
        e["name"] == "log.retention.ms" and e["value"] == "3600000" for e in cc["data"]):
    fail(f"cluster configs: {cc}")
expect("POST", c + "/broker-configs:alter", 204,
       {"data": [{"name": "log.retention.ms", "operation": "DELETE"}]})
expect_error("PUT", c + "/brokers/2/configs/broker.id", 400)
expect_error("GET", c + "/brokers/x/configs", 404)

# ---- records ----
b64 = lambda b: base64.b64encode(b).decode()
sent = []  # (partition, offset, key bytes or None, value bytes or None, headers)
r = expect("POST", c + "/topics/orders/records", 200,
           {"partition_id": 1, "key": {"type": "STRING", "data": "k1"},
            "value": {"type": "JSON", "data": {"n": 1, "s": "x"}},
            "headers": [{"name": "h", "value": b64(b"hv")}],
            "timestamp": "2026-01-02T03:04:05.250Z"})
if r["error_code"] != 200 or r["partition_id"] != 1 or r["offset"] != 0 or r["topic_name"] != "orders" \
        or r["key"] != {"type": "STRING", "size": 2} or r["timestamp"] != "2026-01-02T03:04:05.250Z":
    fail(f"produce answer: {r}")
sent.append((1, 0, b"k1", b'{"n":1,"s":"x"}', [("h", b"hv")], 1767323045250))
r = expect("POST", c + "/topics/orders/records", 200,
           {"key": {"type": "BINARY", "data": b64(b"\x00\xff")},
            "value": {"type": "BINARY", "data": b64(b"\x01\x02\x03")}})
sent.append((r["partition_id"], r["offset"], b"\x00\xff", b"\x01\x02\x03", [], None))
r = expect("POST", c + "/topics/orders/records", 200, {"value": {"data": [1, 2]}})
sent.append((r["partition_id"], r["offset"], None, b"[1,2]", [], None))
# The same key goes to the same partition.
parts = {expect("POST", c + "/topics/orders/records", 200,
                {"key": {"type": "STRING", "data": "same"}, "value": {"type": "STRING", "data": f"v{i}"}},
                at=bases[i % 3])["partition_id"] for i in range(6)}
if len(parts) != 1:
    fail(f"one key went to partitions {parts}")
# A stream: several objects in one body, one answer per line.
stream = "".join(json.dumps({"partition_id": i % 5, "value": {"type": "STRING", "data": f"s{i}"}})
                 + "\n" for i in range(20))
code, out = call("POST", c + "/topics/orders/records", raw=stream.encode())
answers = [json.loads(line) for line in out.splitlines()] if code == 200 and isinstance(out, str) else []
if code != 200 or len(answers) != 20 or any(a["error_code"] != 200 for a in answers):
    fail(f"stream: HTTP {code} {str(out)[:300]}")
for i, a in enumerate(answers):
    if a["partition_id"] != i % 5:
        fail(f"stream record {i} went to partition {a['partition_id']}")
    sent.append((a["partition_id"], a["offset"], None, f"s{i}".encode(), [], None))
# A batch with one bad entry: the rest are produced.
out = expect("POST", c + "/topics/orders/records:batch", 207,
             {"entries": [{"id": "a", "value": {"type": "STRING", "data": "ba"}},
                          {"id": "b", "partition_id": 99, "value": {"type": "STRING", "data": "bb"}},
                          {"id": "c", "value": {"type": "STRING", "data": "bc"}, "partition_id": 4}]})
if sorted(s["id"] for s in out["successes"]) != ["a", "c"] or [f["id"] for f in out["failures"]] != ["b"] \
        or out["failures"][0]["error_code"] != 404:
    fail(f"batch: {out}")
for s in out["successes"]:
    sent.append((s["partition_id"], s["offset"], None, b"b" + s["id"].encode(), [], None))

# Bad records: clear errors, nothing produced.
expect_error("POST", c + "/topics/nosuch/records", 404, "UNKNOWN_TOPIC_OR_PARTITION", {"value": {"data": 1}})
expect_error("POST", c + "/topics/orders/records", 404, None, {"partition_id": 5, "value": {"data": 1}})
expect_error("POST", c + "/topics/orders/records", 400, None, {"value": {"type": "AVRO", "data": 1}})
expect_error("POST", c + "/topics/orders/records", 400, None, {"value": {"type": "BINARY", "data": "%%%"}})
expect_error("POST", c + "/topics/orders/records", 400, None, {"value": {"data": 1}, "timestamp": "yesterday"})
expect_error("POST", c + "/topics/orders/records", 400, None, {"headers": "h"})
expect_error("POST", c + "/topics/orders/records", 400, "INVALID_REQUEST", raw=b'{"value": ')
expect_error("POST", c + "/topics/orders/records", 400, None, raw=b"[1, 2]")
expect_error("GET", c + "/topics/orders/records", 405)
expect_error("POST", c + "/topics/orders/records:batch", 400, "INVALID_REQUEST", {"records": []})
if "nosuch" in topics():
    fail("producing to an unknown topic created it")
# A record over the topic's max.message.bytes is refused by the leader.
expect("PUT", c + "/topics/orders/configs/max.message.bytes", 204, {"value": "1000"})
time.sleep(1)
expect_error("POST", c + "/topics/orders/records", 400, "MESSAGE_TOO_LARGE",
             {"partition_id": 0, "value": {"type": "STRING", "data": "x" * 5000}})
expect("DELETE", c + "/topics/orders/configs/max.message.bytes", 204)

# ---- concurrent producers on every broker ----
errors = []


def producer(n, at):
    for i in range(40):
        code, out = call("POST", c + "/topics/orders/records",
                         {"value": {"type": "STRING", "data": f"p{n}-{i}"}}, at=at)
        if code != 200:
            errors.append((n, i, code, out))
            return
        with lock:
            sent.append((out["partition_id"], out["offset"], None, f"p{n}-{i}".encode(), [], None))


lock = threading.Lock()
threads = [threading.Thread(target=producer, args=(n, bases[n % 3])) for n in range(9)]
for th in threads:
    th.start()
for th in threads:
    th.join()
if errors:
    fail(f"concurrent HTTP producers: {errors[:3]}")

# Every acknowledged record is in the log, where the answer said, as sent.
cons = Consumer({"bootstrap.servers": bootstrap, "group.id": "http-check", "broker.address.family": "v4",
                 "enable.auto.commit": False, "auto.offset.reset": "earliest"})
cons.assign([TopicPartition("orders", p, 0) for p in range(5)])
got = {}
deadline = time.time() + 30
while len(got) < len(sent) + 6 and time.time() < deadline:
    m = cons.poll(1)
    if m is None or m.error():
        continue
    got[(m.partition(), m.offset())] = m
for p, o, k, v, h, ts in sent:
    m = got.get((p, o))
    if m is None:
        fail(f"acknowledged record {p}/{o} ({v}) is not in the log")
    if m.key() != k or m.value() != v or (m.headers() or []) != h or (ts and m.timestamp()[1] != ts):
        fail(f"record {p}/{o}: {m.key()} {m.value()} {m.headers()} {m.timestamp()}, sent {k} {v} {h} {ts}")
if len(got) != len(sent) + 6:
    fail(f"{len(got)} records in the log, {len(sent) + 6} acknowledged")

# ---- consumer groups ----
cons.commit(offsets=[TopicPartition("orders", 0, 1)], asynchronous=False)
g = expect("GET", c + "/consumer-groups/http-check", 200)
if g["kind"] != "KafkaConsumerGroup" or g["consumer_group_id"] != "http-check":
    fail(f"group: {g}")
listed = expect("GET", c + "/consumer-groups", 200, at=bases[2])
if "http-check" not in [x["consumer_group_id"] for x in listed["data"]]:
    fail(f"group list: {listed}")
lags = expect("GET", c + "/consumer-groups/http-check/lags", 200)["data"]
p0 = [x for x in lags if x["topic_name"] == "orders" and x["partition_id"] == 0]
if not p0 or p0[0]["current_offset"] != 1 or p0[0]["lag"] != p0[0]["log_end_offset"] - 1:
    fail(f"lags: {lags}")
# The group's coordinator exports the lag at /metrics.
series = f'streamflow_consumergroup_lag{{group="http-check",topic="orders",partition="0"}}'
deadline = time.time() + 10
exported = []
while time.time() < deadline:
    exported = [line.split()[-1] for b in bases
                for line in urllib.request.urlopen(b + "/metrics", timeout=10).read().decode().splitlines()
                if line.startswith(series + " ")]
    if exported == [str(p0[0]["lag"])]:
        break
    time.sleep(0.5)
else:
    fail(f"{series}: {exported}, expected one broker with {p0[0]['lag']}")
# The coordinator also exports the lag of partitions it does not hold: "spread" has one
# replica on each broker.
expect("POST", c + "/topics", 201, {"topic_name": "spread", "replicas_assignments": [
    {"partition_id": i, "broker_ids": [i + 1]} for i in range(3)]})
wait_for("spread to have leaders", lambda: "spread" in topics() and all(
    p.leader >= 0 for p in topics()["spread"].partitions.values()))
for i in range(3):
    for n in range(i + 2):
        expect("POST", c + "/topics/spread/records", 200,
               {"partition_id": i, "value": {"type": "STRING", "data": f"s{n}"}})
spread = Consumer({"bootstrap.servers": bootstrap, "group.id": "spread-g", "broker.address.family": "v4"})
spread.commit(offsets=[TopicPartition("spread", i, 1) for i in range(3)], asynchronous=False)
spread.close()
want = {f'streamflow_consumergroup_lag{{group="spread-g",topic="spread",partition="{i}"}}': str(i + 1)
        for i in range(3)}
deadline = time.time() + 20
while time.time() < deadline:
    seen = {}
    for b in bases:
        for line in urllib.request.urlopen(b + "/metrics", timeout=10).read().decode().splitlines():
            if line.split(" ")[0] in want:
                seen.setdefault(line.split(" ")[0], []).append(line.split(" ")[1])
    if seen == {k: [v] for k, v in want.items()}:
        break
    time.sleep(0.5)
else:
    fail(f"lag of spread-g: {seen}, expected {want} from its coordinator alone")
# With health.max.consumer.lag=0 its coordinator warns about it, and stays ready.
coordinator = [b for b in bases
               if series + " " in urllib.request.urlopen(b + "/metrics", timeout=10).read().decode()]
ready = json.loads(urllib.request.urlopen(coordinator[0] + "/health/ready", timeout=10).read())
lag_check = [x for x in ready["checks"] if x["name"] == "consumer_lag"]
if ready["status"] != "UP" or not lag_check or lag_check[0]["status"] != "WARN" or \
        "lag more than 0 records" not in lag_check[0]["detail"]:
    fail(f"/health/ready of the coordinator of a lagging group: {ready}")
s = expect("GET", c + "/consumer-groups/http-check/lag-summary", 200)
if s["total_lag"] != p0[0]["lag"] or s["max_lag"] != p0[0]["lag"]:
    fail(f"lag summary: {s}")
# A live group member shows up with its assignment.
member = Consumer({"bootstrap.servers": bootstrap, "group.id": "http-live", "broker.address.family": "v4",
                   "client.id": "http-live-client", "auto.offset.reset": "earliest"})
member.subscribe(["orders"])
deadline = time.time() + 30
members, owned = [], []
while time.time() < deadline:
    member.poll(0.5)
    code, out = call("GET", c + "/consumer-groups/http-live/consumers")
    members = out.get("data", []) if code == 200 else []
    if members:
        code, out = call("GET", c + "/consumer-groups/http-live/consumers/"
                         + members[0]["consumer_id"] + "/assignments")
        owned = out.get("data", []) if code == 200 else []
        if len(owned) == 5:
            break
if not members or members[0]["client_id"] != "http-live-client" or len(owned) != 5 or \
        not members[0]["assignments"]["related"].endswith("/assignments"):
    fail(f"group members: {members} {owned}")
mid = members[0]["consumer_id"]
one = expect("GET", c + "/consumer-groups/http-live/consumers/" + mid, 200)
if one["consumer_id"] != mid:
    fail(f"one member: {one}")
a = owned[0]
if a["kind"] != "KafkaConsumerAssignment" or a["consumer_id"] != mid or \
        sorted((x["topic_name"], x["partition_id"]) for x in owned) != [("orders", i) for i in range(5)]:
    fail(f"assignments: {owned}")
one = expect("GET", c + f"/consumer-groups/http-live/consumers/{mid}/assignments/orders/partitions/3", 200)
if one["partition_id"] != 3 or not one["lag"]["related"].endswith("/lags/orders/partitions/3"):
    fail(f"one assignment: {one}")
expect_error("GET", c + f"/consumer-groups/http-live/consumers/{mid}/assignments/orders/partitions/9", 404)
expect_error("GET", c + f"/consumer-groups/http-live/consumers/{mid}/assignments/orders/x/3", 404)
lag0 = expect("GET", c + "/consumer-groups/http-check/lags/orders/partitions/0", 200)
if lag0["kind"] != "KafkaConsumerLag" or lag0["current_offset"] != 1:
    fail(f"one partition's lag: {lag0}")
expect_error("GET", c + "/consumer-groups/http-check/lags/orders/partitions/4", 404)
if expect("GET", c + "/consumer-groups/http-live", 200)["state"] != "STABLE":
    fail("a group with a live member is not STABLE")
expect_error("GET", c + "/consumer-groups/http-live/consumers/nobody", 404)
expect_error("GET", c + "/consumer-groups/nosuchgroup", 404)
member.close()
cons.close()

# ---- delete ----
expect("DELETE", c + "/topics/orders", 204)
wait_for("orders to be deleted", lambda: "orders" not in topics())
expect_error("DELETE", c + "/topics/orders", 404, "UNKNOWN_TOPIC_OR_PARTITION")
expect_error("GET", c + "/topics/orders", 404)
print("http writes ok")
