"""The broker's HTTP server against a real broker: health, metrics, the v3 REST resources.

usage: http_api.py BOOTSTRAP HTTP_BASE
"""
import json
import re
import sys
import time
import urllib.error
import urllib.request

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

bootstrap, base = sys.argv[1], sys.argv[2]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def get(path, method="GET"):
    """(status, body text) of a request to the broker."""
    req = urllib.request.Request(base + path, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def get_json(path, status=200):
    code, body = get(path)
    if code != status:
        fail(f"GET {path}: HTTP {code} (expected {status}): {body}")
    return json.loads(body)


SAMPLE = re.compile(r'^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+]+$|^[a-z_]+\{[^}]*le="\+Inf"[^}]*\} [0-9]+$')


def metrics():
    """The scrape as {sample name with labels: value}, after checking every line's form."""
    code, text = get("/metrics")
    if code != 200:
        fail(f"/metrics: HTTP {code}")
    out, typed = {}, set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            typed.add(line.split()[2])
            continue
        if line.startswith("#") or not line:
            continue
        if not SAMPLE.match(line):
            fail(f"/metrics: not a Prometheus sample: {line!r}")
        name, value = line.rsplit(" ", 1)
        family = re.sub(r"_(bucket|sum|count)$", "", name.split("{")[0])
        if name.split("{")[0] not in typed and family not in typed:
            fail(f"/metrics: {name} has no TYPE line")
        out[name] = float(value)
    return out


# --- health
h = get_json("/health/live")
if h.get("status") != "UP":
    fail(f"/health/live: {h}")
ready = get_json("/health/ready")
names = {c["name"] for c in ready["checks"]}
if ready["status"] != "UP" or not {"zookeeper", "metadata", "log_dir", "partitions"} <= names:
    fail(f"/health/ready: {ready}")

# --- metrics move as records flow
before = metrics()
p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
acked = []
for i in range(60):
    p.produce("web", key=b"k%d" % (i % 3), value=b"v" * 100,
              on_delivery=lambda err, msg: acked.append(err is None))
if p.flush(30) != 0 or len(acked) != 60 or not all(acked):
    fail("not every record was acknowledged")
after = metrics()
grown = after["streamflow_messages_total"] - before["streamflow_messages_total"]
if grown != 60:
    fail(f"streamflow_messages_total grew by {grown}, expected 60")
if after['streamflow_bytes_total{direction="in"}'] <= before['streamflow_bytes_total{direction="in"}'] + 6000:
    fail("streamflow_bytes_total{direction=\"in\"} did not grow by the records' bytes")
produce = [k for k in after if k.startswith('streamflow_requests_total{api="Produce"')]
if not produce:
    fail("no streamflow_requests_total for Produce")
if not any(v >= 1 for k, v in after.items()
           if k.startswith('streamflow_request_duration_seconds_count{api="Produce",version="')):
    fail("no Produce latency histogram")
ends = sum(v for k, v in after.items()
           if k.startswith('streamflow_partition_log_end_offset{topic="web"'))
if ends != 60:
    fail(f"the log end offsets of web sum to {ends}, expected 60")
if after["streamflow_topics_total"] < 1 or after["streamflow_partitions_total"] < 3:
    fail("topic and partition gauges missing")
if after["streamflow_connections"] < 1 or 'streamflow_network_queued_bytes{kind="output"}' not in after:
    fail("connection and network memory gauges missing")
if after["streamflow_zookeeper_registered"] != 1 or after["streamflow_controller_active"] != 1:
    fail("registration or controller gauge wrong")
if after["streamflow_zookeeper_connected"] != 1:
    fail("the ZooKeeper session is not reported connected")
for op in ("get", "get_children", "create"):
    if after.get(f'streamflow_zookeeper_request_duration_seconds_count{{op="{op}"}}', 0) < 1:
        fail(f"no ZooKeeper request latency for {op}")

# --- the traffic share: every record of "hot" to partition 1 makes it the whole topic's
p.produce("hot", value=b"x", partition=0)  # creates the topic (num.partitions=3)
p.flush(30)
deadline = time.time() + 40
share = {}
while time.time() < deadline:
    for i in range(200):
        p.produce("hot", value=b"v", partition=1)
    p.flush(30)
    m = metrics()
    share = {i: m.get(f'streamflow_partition_traffic_share{{topic="hot",partition="{i}"}}')
             for i in range(3)}
    if share[1] is not None and share[1] > 0.95:
        break
    time.sleep(1)
if share[1] is None or share[1] <= 0.95 or share[2] != 0:
    fail(f"traffic share of hot after writing only to partition 1: {share}")

c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
c.assign([TopicPartition("web", i, 0) for i in range(3)])
got = 0
while got < 60:
    m = c.poll(10)
    if m is None:
        fail(f"consumed {got} of 60")
    if not m.error():
        got += 1
c.close()
out = metrics()['streamflow_bytes_total{direction="out"}']
if out <= before['streamflow_bytes_total{direction="out"}'] + 6000:
    fail(f"streamflow_bytes_total{{direction=\"out\"}} did not grow with the fetch: {out}")

# --- the v3 resources
clusters = get_json("/v3/clusters")
if clusters["kind"] != "KafkaClusterList" or len(clusters["data"]) != 1:
    fail(f"/v3/clusters: {clusters}")
cid = clusters["data"][0]["cluster_id"]
cl = get_json(f"/v3/clusters/{cid}")
if cl["kind"] != "KafkaCluster" or not cl["controller"]["related"].endswith("/brokers/1"):
    fail(f"/v3/clusters/{cid}: {cl}")
if not cl["metadata"]["self"].startswith(base + "/v3/clusters/"):
    fail(f"self link {cl['metadata']['self']}")
brokers = get_json(f"/v3/clusters/{cid}/brokers")["data"]
if [b["broker_id"] for b in brokers] != [1] or brokers[0]["port"] != int(bootstrap.rsplit(":", 1)[1]):
    fail(f"brokers: {brokers}")
get_json(f"/v3/clusters/{cid}/brokers/1")
topics = {t["topic_name"]: t for t in get_json(f"/v3/clusters/{cid}/topics")["data"]}
if topics.get("web", {}).get("partitions_count") != 3 or topics["web"]["replication_factor"] != 1:
    fail(f"topics: {topics}")
parts = get_json(f"/v3/clusters/{cid}/topics/web/partitions")["data"]
if [p["partition_id"] for p in parts] != [0, 1, 2] or any(p["isr"] != [1] for p in parts):
    fail(f"partitions: {parts}")
get_json(f"/v3/clusters/{cid}/topics/web/partitions/2")

# --- errors: JSON with the Kafka error name, nothing created by mistake
for path, kafka_error in [(f"/v3/clusters/{cid}/topics/web/partitions/3", "UNKNOWN_TOPIC_OR_PARTITION"),
                          (f"/v3/clusters/{cid}/topics/nosuch", "UNKNOWN_TOPIC_OR_PARTITION"),
                          (f"/v3/clusters/{cid}/brokers/7", "BROKER_NOT_AVAILABLE"),
                          ("/v3/clusters/wrong-id", None), ("/nothing/here", None)]:
    e = get_json(path, 404)
    if e.get("error_code") != 404 or e.get("kafka_error") != kafka_error or not e.get("message"):
        fail(f"{path}: {e}")
code, body = get("/metrics", "POST")
if code != 405 or json.loads(body)["error_code"] != 405:
    fail(f"POST /metrics: HTTP {code} {body}")
listed = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics
if "nosuch" in listed:
    fail("a GET of an unknown topic created it")
print("http api ok")
