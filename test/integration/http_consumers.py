"""Consuming over HTTP against a three-broker cluster: the plain API (topics, nodes, events
written and read at an offset, from an offset and from a timestamp, Server-Sent Event streams of
a topic and of a group's share, groups registered with start offsets, members) and REST Proxy
v2's consumer instances (subscribe, poll records in json and binary form, commit, committed
offsets, seek, manual assignment, delete), with bad input answered by JSON errors.

usage: http_consumers.py BOOTSTRAP HTTP_BASE1 HTTP_BASE2
"""
import base64
import http.client
import json
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from confluent_kafka import Consumer, TopicPartition

import httpclient
from httpclient import call, expect, fail

bootstrap, base, base2 = sys.argv[1], sys.argv[2], sys.argv[3]
httpclient.BASE = base


def expect_error(method, path, status, body=None, raw=None):
    return httpclient.expect_error(method, path, status, None, body, raw)


class Stream:
    """A Server-Sent Events stream read on a thread: the records it got, as (id, data)."""

    def __init__(self, path, at=None):
        u = urllib.parse.urlsplit(at or base)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        self.conn.request("GET", path)
        self.resp = self.conn.getresponse()
        if self.resp.status != 200 or self.resp.getheader("Content-Type") != "text/event-stream":
            fail(f"GET {path}: HTTP {self.resp.status} {self.resp.getheader('Content-Type')}: "
                 f"{self.resp.read()[:300]}")
        self.records, self.open, self.started = [], True, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        if not self.started.wait(20):
            fail(f"GET {path}: the stream did not start")

    def run(self):
        ev = {}
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                if line.startswith(":"):
                    self.started.set()
                elif line.startswith("id: "):
                    ev["id"] = line[4:]
                elif line.startswith("data: "):
                    ev["data"] = json.loads(line[6:])
                elif line == "" and ev:
                    self.records.append((ev.get("id"), ev.get("data")))
                    ev = {}
        except (OSError, ValueError, AttributeError):
            pass
        self.open = False

    def wait_for(self, n, what):
        deadline = time.time() + 30
        while len(self.records) < n and time.time() < deadline:
            time.sleep(0.1)
        if len(self.records) < n:
            fail(f"{what}: {len(self.records)} records streamed, expected {n}")

    def close(self):
        self.conn.sock.close()
        self.conn.close()


def event(topic, partition, value, key=None, ts=None, headers=None):
    body = {"value": value, "partition": partition}
    if key is not None:
        body["key"] = key
    if ts is not None:
        body["timestamp"] = ts
    if headers:
        body["headers"] = headers
    out = expect("POST", f"/api/topics/{topic}/events", 200, body)
    if out["partition_id"] != partition:
        fail(f"event went to {out['partition_id']}, not {partition}")
    return out["offset"]


# ---- topics and nodes ----
t = expect("POST", "/api/topics", 201, {"name": "feed", "partitions": 3, "replication_factor": 3,
                                         "configs": {"retention.ms": "3600000"}})
if t["topic_name"] != "feed" or t["partitions_count"] != 3:
    fail(f"created: {t}")
expect_error("POST", "/api/topics", 409, {"name": "feed", "partitions": 1})
expect_error("POST", "/api/topics", 400, {"partitions": 1})
expect_error("POST", "/api/topics", 400, {"name": "y", "configs": ["retention.ms"]})
if expect("PUT", "/api/topics/feed/partitions", 200, {"count": 4})["partitions_count"] != 4:
    fail("PUT partitions did not grow feed")
expect_error("PUT", "/api/topics/feed/partitions", 400, {"count": 2})
expect_error("PUT", "/api/topics/nosuch/partitions", 404, {"count": 2})
deadline = time.time() + 20
while time.time() < deadline:
    listed = {x["name"]: x for x in expect("GET", "/api/topics", 200)["topics"]}
    if listed.get("feed", {}).get("partitions") == 4:
        break
    time.sleep(0.2)
else:
    fail(f"feed does not show 4 partitions: {listed}")
nodes = expect("GET", "/api/nodes", 200)
up = [n for n in nodes["nodes"] if n["status"] in ("UP", "DEGRADED")]
if len(up) != 3 or sum(n["controller"] for n in nodes["nodes"]) != 1 or \
        nodes["controller"] not in [n["id"] for n in up] or not all(n["host"] for n in up):
    fail(f"nodes: {nodes}")

# ---- events at an offset, from an offset, from a timestamp ----
if event("feed", 1, {"a": 1}, key="k", headers={"h": "v"}) != 0:
    fail("the first event of feed/1 is not at offset 0")
e = expect("GET", "/api/topics/feed/partitions/1/events/0", 200)
if e["value"] != {"a": 1} or e["key"] != "k" or e["headers"] != {"h": "v"} or e["offset"] != 0:
    fail(f"event at 0: {e}")
expect_error("GET", "/api/topics/feed/partitions/1/events/5", 404)
for i in range(10):
    event("feed", 2, f"v{i}")
got = expect("GET", "/api/topics/feed/partitions/2/events?offset=3&limit=4", 200)
if [x["offset"] for x in got["events"]] != [3, 4, 5, 6] or got["events"][0]["value"] != "v3" \
        or got["high_offset"] != 10:
    fail(f"events from 3: {got}")
for i, ts in enumerate((1000, 2000, 3000)):
    event("feed", 3, f"t{i}", ts=ts)
got = expect("GET", "/api/topics/feed/partitions/3/events?timestamp=1500", 200)
if [x["value"] for x in got["events"]] != ["t1", "t2"] or got["events"][0]["timestamp"] != 2000:
    fail(f"events from timestamp 1500: {got}")
expect_error("GET", "/api/topics/feed/partitions/9/events/0", 404)
expect_error("GET", "/api/topics/nosuch/partitions/0/events/0", 404)
expect_error("POST", "/api/topics/feed/events", 400, raw=b"not json")
expect_error("POST", "/api/topics/nosuch/events", 404, {"value": 1})
expect_error("POST", "/api/topics/feed/events", 404, {"value": 1, "partition": 7})

# ---- a stream of the topic ----
s = Stream("/api/topics/feed/subscribe")
time.sleep(1)  # the stream starts at the end: let it find the end before producing
for i in range(5):
    event("feed", i % 4, {"live": i})
s.wait_for(5, "topic stream")
if sorted(d["value"]["live"] for _, d in s.records) != list(range(5)):
    fail(f"topic stream: {s.records}")
if not all(i == f"{d['partition']}:{d['offset']}" for i, d in s.records):
    fail(f"stream ids: {s.records}")
s.close()
# a stream that starts from the beginning, on another broker
s = Stream("/api/topics/feed/subscribe?from=earliest", at=base2)
s.wait_for(1 + 10 + 3 + 5, "stream from earliest")
s.close()

# ---- groups and members ----
g = expect("POST", "/api/groups", 201, {"name": "g1", "topics": ["feed"], "from": "latest"})
ends = {o["partition"]: o["offset"] for o in g["offsets"]}
if ends != {0: 2, 1: 2, 2: 11, 3: 4}:  # the ends of the partitions: where "latest" starts
    fail(f"registered group: {g}")
expect_error("POST", "/api/groups", 409, {"name": "g1", "topics": ["feed"]})
expect_error("POST", "/api/groups", 404, {"name": "g2", "topics": ["nosuch"]})
expect_error("POST", "/api/groups", 400, {"topics": ["feed"]})
cluster = expect("GET", "/v3/clusters", 200)["data"][0]["cluster_id"]
lags = expect("GET", f"/v3/clusters/{cluster}/consumer-groups/g1/lags", 200)["data"]
if sorted((x["partition_id"], x["current_offset"]) for x in lags) != sorted(ends.items()):
    fail(f"registered offsets not committed: {lags} {ends}")
for m in ("m1", "m2"):
    out = expect("POST", "/api/groups/g1/members", 201, {"name": m, "topics": ["feed"]})
    if out["events"] != f"/api/groups/g1/members/{m}/events":
        fail(f"member: {out}")
expect_error("POST", "/api/groups/g1/members", 409, {"name": "m1", "topics": ["feed"]})
streams = [Stream(f"/api/groups/g1/members/{m}/events") for m in ("m1", "m2")]


def owned(member):
    code, out = call("GET", f"/v3/clusters/{cluster}/consumer-groups/g1/consumers/"
                     + member["consumer_id"] + "/assignments")
    return [(x["topic_name"], x["partition_id"]) for x in out.get("data", [])] if code == 200 else []


deadline = time.time() + 30
while time.time() < deadline:
    code, out = call("GET", f"/v3/clusters/{cluster}/consumer-groups/g1/consumers")
    members = out.get("data", []) if code == 200 else []
    shares = [owned(x) for x in members]
    if len(members) == 2 and sum(len(s) for s in shares) == 4 and all(shares):
        break
    time.sleep(0.3)
else:
    fail(f"the two members did not share feed's partitions: {members}")
for i in range(40):
    event("feed", i % 4, {"share": i})
deadline = time.time() + 30
while sum(len(x.records) for x in streams) < 40 and time.time() < deadline:
    time.sleep(0.1)
shares = [[d["value"]["share"] for _, d in x.records] for x in streams]
if sorted(shares[0] + shares[1]) != list(range(40)) or not shares[0] or not shares[1]:
    fail(f"the group's shares: {shares}")
# Deleting a member while its stream is open ends the stream.
expect("DELETE", "/api/groups/g1/members/m1", 204)
deadline = time.time() + 15
while streams[0].open and time.time() < deadline:
    time.sleep(0.1)
if streams[0].open:
    fail("the stream of a deleted member is still open")
for x in streams:
    x.close()
expect("DELETE", "/api/groups/g1/members/m2", 204)
expect_error("GET", "/api/groups/g1/members/m1/events", 404)

# ---- REST Proxy v2 consumer instances ----
total = sum(expect("GET", f"/api/topics/feed/partitions/{p}/events?offset=0&limit=1", 200)["high_offset"]
            for p in range(4))
inst = expect("POST", "/consumers/v2g", 200, {"name": "c1", "format": "json",
                                              "auto.offset.reset": "earliest",
                                              "auto.commit.enable": "false"})
if inst["instance_id"] != "c1" or not inst["base_uri"].endswith("/consumers/v2g/instances/c1"):
    fail(f"instance: {inst}")
expect_error("POST", "/consumers/v2g", 409, {"name": "c1"})
expect_error("POST", "/consumers/v2g", 422, {"name": "c9", "format": "avro"})
c1 = "/consumers/v2g/instances/c1"
expect("POST", c1 + "/subscription", 204, {"topics": ["feed"]})
if expect("GET", c1 + "/subscription", 200)["topics"] != ["feed"]:
    fail("subscription not shown")
expect_error("POST", c1 + "/subscription", 422, {})
records = {}
deadline = time.time() + 40
while len(records) < total and time.time() < deadline:
    for r in expect("GET", c1 + "/records?timeout=1000", 200):
        if r["topic"] != "feed" or "value" not in r or "key" not in r:
            fail(f"record: {r}")
        records[(r["partition"], r["offset"])] = r
if len(records) != total:
    fail(f"v2 records: {len(records)} of {total}")
if records[(1, 0)]["value"] != {"a": 1} or records[(1, 0)]["key"] != "k" or records[(2, 0)]["value"] != "v0":
    fail(f"v2 record values: {records[(1, 0)]} {records[(2, 0)]}")
expect("POST", c1 + "/offsets", 204, {"offsets": [{"topic": "feed", "partition": 1, "offset": 0}]})
out = expect("GET", c1 + "/offsets", 200, {"partitions": [{"topic": "feed", "partition": 1}]})
if out["offsets"][0]["offset"] != 1:
    fail(f"committed after committing offset 0: {out}")
expect("POST", c1 + "/offsets", 204)
kc = Consumer({"bootstrap.servers": bootstrap, "group.id": "v2g", "broker.address.family": "v4"})
committed = {tp.partition: tp.offset for tp in
             kc.committed([TopicPartition("feed", p) for p in range(4)], timeout=10)}
kc.close()
highs = {}
for (p, o) in records:
    highs[p] = max(highs.get(p, 0), o + 1)
if committed != highs:
    fail(f"committed {committed}, consumed up to {highs}")
expect("POST", c1 + "/positions/beginning", 204, {"partitions": [{"topic": "feed", "partition": 2}]})
again = []
deadline = time.time() + 20
while len(again) < 10 and time.time() < deadline:
    again += [r for r in expect("GET", c1 + "/records?timeout=500", 200) if r["partition"] == 2]
if [r["offset"] for r in again[:10]] != list(range(10)):
    fail(f"after seeking to the beginning: {[r['offset'] for r in again]}")
expect_error("GET", c1 + "/nothing", 404)
expect("DELETE", c1, 204)
expect_error("GET", c1 + "/records", 404)

inst = expect("POST", "/consumers/v2g2", 200, {"name": "c2", "format": "binary",
                                               "auto.offset.reset": "earliest"})
c2 = "/consumers/v2g2/instances/c2"
expect("POST", c2 + "/assignments", 204, {"partitions": [{"topic": "feed", "partition": 1}]})
if expect("GET", c2 + "/assignments", 200)["partitions"] != [{"topic": "feed", "partition": 1}]:
    fail("assignment not shown")
expect_error("POST", c2 + "/subscription", 409, {"topics": ["feed"]})
first = None
deadline = time.time() + 20
while first is None and time.time() < deadline:
    got = expect("GET", c2 + "/records", 200)
    first = got[0] if got else None
if not first or base64.b64decode(first["key"]) != b"k" or json.loads(base64.b64decode(first["value"])) != {"a": 1}:
    fail(f"binary record: {first}")


def records_with(accept):
    """(status, Content-Type) of GET records with this Accept header."""
    req = urllib.request.Request(httpclient.BASE + c2 + "/records?timeout=200",
                                 headers={"Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type")


binary = "application/vnd.kafka.binary.v2+json"
for accept, want in ((binary, (200, binary)), ("application/vnd.kafka.v2+json, " + binary, (200, binary)),
                     ("application/vnd.kafka.json.v2+json", (406, "application/json")),
                     ("*/*", (200, binary))):
    if records_with(accept) != want:
        fail(f"records with Accept {accept}: {records_with(accept)}, expected {want}")
expect("POST", c2 + "/positions", 204, {"offsets": [{"topic": "feed", "partition": 1, "offset": 0}]})
expect_error("POST", c2 + "/positions", 400, {"offsets": [{"topic": "feed"}]})
expect("DELETE", c2, 204)
expect_error("GET", "/consumers/v2g/instances/nosuch/records", 404)
print("http consumers ok")
