#!/usr/bin/python3
"""Test 32's consumer-group checks (Kafka's classic group protocol, offsets in ZooKeeper).

    groups.py produce BOOTSTRAP STATE FROM COUNT
        acks=all records FROM..FROM+COUNT-1 (value "n", partition n % 6) to topic gt; the
        delivery reports (partition, offset of every n) are kept in the STATE file (JSON)
    groups.py g1 BOOTSTRAP ZK STATE
        three confluent-kafka consumers of group g1: disjoint assignments covering every
        partition, every record, synchronous commits (in ZooKeeper on acknowledgement); one
        leaves, the two others take its partitions over from its committed offsets
    groups.py kafka-python BOOTSTRAP ZK STATE
        group g2 with kafka-python: consume, commit, a second member resumes at the end;
        kafka-python and confluent-kafka read the same committed offsets of g1
    groups.py coordinator ZK GROUP HOST:PORT...
        FindCoordinator v1 to every broker; once they all name the broker that ZooKeeper's
        /coordinators/groups gives the group's bucket, print "NODE HOST:PORT BUCKET EPOCH"
    groups.py wait-coordinator ZK GROUP DEAD EPOCH SECONDS HOST:PORT...
        the same, waiting until it is a broker other than DEAD, the bucket's epoch above EPOCH
    groups.py failover BOOTSTRAP ZK STATE
        after the coordinator of g1 died: its offsets served by the new coordinator, new
        commits stored and honoured
    groups.py wire ZK COORDINATOR OTHER
        hand-encoded requests and Kafka's error codes (COORDINATOR: the coordinator of g1,
        OTHER: a live broker that is not)
    groups.py admin ZK HOST:PORT...
        the group admin APIs over the live brokers: with one confluent-kafka member of g3,
        ListGroups / DescribeGroups through both clients' admin calls (g3 Stable with its
        member and assignment, g1 and g2 Empty), DeleteGroups refused (NON_EMPTY_GROUP),
        OffsetFetch of g1 = ZooKeeper, ListGroups v4 with a states filter, OffsetDelete of a
        subscribed topic (GROUP_SUBSCRIBED_TO_TOPIC; topic gu, which nobody subscribes to,
        must exist); once it left: an offset set from outside
        the group (in ZooKeeper), g3 deleted (its znodes gone, no longer listed), a group that
        never existed Dead and GROUP_ID_NOT_FOUND, OffsetDelete of one partition of g1
ZK is host:port (paths here include the /streamflow chroot). Exit 1 with a FAIL: line.
"""
import json
import os
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kwire  # noqa: E402
import zkq  # noqa: E402
from kwire import i8, i16, i32, i64, kbytes, string  # noqa: E402
from sftest import base_conf, check, fail, info, produce  # noqa: E402

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition  # noqa: E402

TOPIC = "gt"
NPART = 6
OTHER_TOPIC = "gu"       # a topic no group subscribes to (step 7)
ROOT = "/streamflow"
STEP_LIMIT = 60          # seconds for any one wait

API_OFFSET_COMMIT, API_OFFSET_FETCH, API_FIND_COORDINATOR = 8, 9, 10
API_JOIN_GROUP, API_HEARTBEAT = 11, 12
API_LIST_GROUPS, API_OFFSET_DELETE = 16, 47
NONE, UNKNOWN_TOPIC_OR_PARTITION = 0, 3
NOT_COORDINATOR, INVALID_GROUP_ID, UNKNOWN_MEMBER_ID = 16, 24, 25
NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, GROUP_SUBSCRIBED_TO_TOPIC = 68, 69, 86



class WireError(Exception):
    """A request that got no (well-formed) response; the message says which."""


WIRE_ERRORS = (OSError, kwire.Closed, kwire.Timeout, ValueError, struct.error, WireError)


# ---------------------------------------------------------------------------------------
# state file, ZooKeeper

def load(path):
    with open(path) as f:
        return json.load(f)


def save(path, state):
    with open(path + ".new", "w") as f:
        json.dump(state, f)
    os.replace(path + ".new", path)


def high_watermarks(state):
    """{partition: offset after the last produced record} from the delivery reports."""
    hw = {p: 0 for p in range(NPART)}
    for p, off in state["reports"]:
        hw[p] = max(hw[p], off + 1)
    return hw


def zk_offsets(zk, group):
    """{partition: int} of /streamflow/consumers/GROUP/offsets/gt/* (the raw data checked to
    be a plain decimal number)."""
    s = zkq.Session(zk)
    try:
        base = "%s/consumers/%s/offsets/%s" % (ROOT, group, TOPIC)
        try:
            kids = s.children(base)
        except zkq.NoNode:
            fail("%s does not exist" % base)
        out = {}
        for k in kids:
            data, _ = s.get(base + "/" + k)
            text = data.decode(errors="replace")
            check(text.isdigit() and str(int(text)) == text,
                  "%s/%s holds %r, not a decimal offset" % (base, k, data))
            out[int(k)] = int(text)
        return out
    finally:
        s.close()


def check_zk(zk, group, want, what):
    got = zk_offsets(zk, group)
    check(got == want, "%s: ZooKeeper %s/consumers/%s/offsets/%s holds %s, expected %s"
          % (what, ROOT, group, TOPIC, got, want))
    info("%s: ZooKeeper holds %s" % (what, fmt(got)))


def fmt(offsets):
    return " ".join("%d:%d" % (p, offsets[p]) for p in sorted(offsets))


STAGE = ["starting"]     # what the subcommand is doing, for the watchdog's message


def stage(what):
    STAGE[0] = what


def watchdog(seconds, what, boot=None, group=None):
    """A last resort against client calls that block without a timeout of their own (a
    thread, so that it fires even while the main thread is inside the client library; e.g.
    kafka-python's poll() waits for a coordinator without end)."""
    def expired():
        print("FAIL: %s: not finished within %ds, stuck at: %s%s"
              % (what, seconds, STAGE[0], probe(boot, group) if boot else ""), flush=True)
        os._exit(1)
    t = threading.Timer(seconds, expired)
    t.daemon = True
    t.start()


# ---------------------------------------------------------------------------------------
# produce

def cmd_produce(boot, state_path, first, count):
    first, count = int(first), int(count)
    state = load(state_path) if os.path.exists(state_path) else {"reports": []}
    check(len(state["reports"]) == first, "the state holds %d records, not %d"
          % (len(state["reports"]), first))
    state["reports"] += produce_numbered(boot, first, count)
    save(state_path, state)
    info("produced records %d..%d (acks=all)" % (first, first + count - 1))


def produce_numbered(boot, first, count):
    recs = [(None, b"%d" % n, None, n % NPART, None) for n in range(first, first + count)]
    reports = produce(boot, TOPIC, recs)
    for (p, _off, i) in reports:
        check(p == (first + i) % NPART, "record %d delivered to partition %d" % (first + i, p))
    return [[p, off] for p, off, _ in reports]


# ---------------------------------------------------------------------------------------
# confluent-kafka group members

class Member:
    """A subscribed confluent-kafka consumer; rebalance events and client errors recorded."""

    def __init__(self, boot, group, name, errors, subscribe=True):
        self.name, self.errors, self.events = name, errors, []
        self.boot, self.group = boot, group
        self.c = Consumer(base_conf(boot, {
            "group.id": group, "client.id": name, "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500, "error_cb": self._error}))
        if subscribe:
            self.c.subscribe([TOPIC], on_assign=self._assigned, on_revoke=self._revoked)

    def _error(self, err):
        self.errors.append("%s: %s" % (self.name, err))

    def _assigned(self, _c, tps):
        self.events.append(("assigned", sorted(tp.partition for tp in tps)))

    def _revoked(self, _c, tps):
        self.events.append(("revoked", sorted(tp.partition for tp in tps)))

    def assignment(self):
        tps = self.c.assignment()
        check(all(tp.topic == TOPIC for tp in tps), "%s assigned %s" % (self.name, tps))
        return sorted(tp.partition for tp in tps)

    def poll(self, sink):
        for m in self.c.consume(num_messages=500, timeout=0.05):
            err = m.error()
            if err is not None:
                if err.code() != KafkaError._PARTITION_EOF:
                    self.errors.append("%s: consume: %s" % (self.name, err))
                continue
            sink(self, m)

    def committed(self, want_partitions=range(NPART)):
        """{partition: committed offset} read from the coordinator (retried, within the step
        limit, while the client reports a retriable error)."""
        deadline = time.time() + STEP_LIMIT
        while True:
            try:
                res = self.c.committed([TopicPartition(TOPIC, p) for p in want_partitions],
                                       timeout=10)
                bad = [tp for tp in res if tp.error is not None]
                check(not bad, "%s: committed(): %s" % (self.name, bad))
                return {tp.partition: tp.offset for tp in res}
            except KafkaException as e:
                if time.time() > deadline:
                    fail("%s: committed() failing for %ds: %s" % (self.name, STEP_LIMIT, e))
                self.errors.append("%s: committed(): %s" % (self.name, e))

    def commit(self, offsets=None):
        """Synchronous commit (of the consumed positions, or of OFFSETS {p: offset});
        returns {partition: offset} as acknowledged."""
        try:
            if offsets is None:
                res = self.c.commit(asynchronous=False)
            else:
                res = self.c.commit(offsets=[TopicPartition(TOPIC, p, o) for p, o in offsets.items()],
                                    asynchronous=False)
        except KafkaException as e:
            fail("%s: commit(asynchronous=False): %s%s" % (self.name, e, last_errors(self.errors)))
        bad = [tp for tp in res if tp.error is not None]
        check(not bad, "%s: commit: per-partition errors %s" % (self.name, bad))
        return {tp.partition: tp.offset for tp in res if tp.topic == TOPIC}

    def positions(self):
        return {tp.partition: tp.offset for tp in self.c.position(self.c.assignment())}

    def close(self):
        stage("%s: close()" % self.name)
        self.c.close()


def last_errors(errors):
    return ("; client errors: " + " | ".join(errors[-6:])) if errors else ""


def wait_group(members, sink, what):
    """Poll MEMBERS round-robin until every one has a non-empty assignment and together they
    hold every partition exactly once; return {name: [partitions]}."""
    stage(what + ": waiting for a stable group")
    deadline = time.time() + STEP_LIMIT
    t0 = time.time()
    while True:
        for m in members:
            m.poll(sink)
        a = {m.name: m.assignment() for m in members}
        flat = [p for ps in a.values() for p in ps]
        if all(a.values()) and sorted(flat) == list(range(NPART)):
            info("%s: stable after %.1fs, assignments %s" % (what, time.time() - t0, a))
            return a
        if time.time() > deadline:
            fail("%s: no stable group within %ds (assignments %s, events %s)%s%s"
                 % (what, STEP_LIMIT, a, {m.name: m.events[-4:] for m in members},
                    last_errors(members[0].errors), probe(members[0].boot, members[0].group)))


def probe(boot, group):
    """For a failure message: what the first bootstrap broker answers to FindCoordinator."""
    hp = boot.split(",")[0]
    try:
        c = kwire.Conn(hp, timeout=5)
        try:
            _, apis = kwire.apiversions(c, 0)
        finally:
            c.close()
        if API_FIND_COORDINATOR not in apis:
            return "; %s does not advertise FindCoordinator in ApiVersions" % hp
        return "; FindCoordinator v1 for %s to %s: %s" % (group, hp, find_coordinator(hp, group))
    except WIRE_ERRORS as e:
        return "; FindCoordinator v1 for %s to %s: %s" % (group, hp, e)


def consume_until(members, done, sink, what, progress=lambda: ""):
    stage(what)
    deadline = time.time() + STEP_LIMIT
    while not done():
        if time.time() > deadline:
            fail("%s: not within %ds%s%s" % (what, STEP_LIMIT, progress(),
                                             last_errors(members[0].errors)))
        for m in members:
            m.poll(sink)


def record_of(state, m):
    """The number n of a consumed message, checked against the delivery report of n."""
    try:
        n = int(m.value())
    except (TypeError, ValueError):
        fail("unexpected record %r at %d/%d" % (m.value(), m.partition(), m.offset()))
    check(0 <= n < len(state["reports"]) and state["reports"][n] == [m.partition(), m.offset()],
          "record %d read at partition %d offset %d, not where it was acknowledged (%s)"
          % (n, m.partition(), m.offset(),
             state["reports"][n] if 0 <= n < len(state["reports"]) else "never produced"))
    return n


def at_end_of(members, hw):
    """Every member's position on each partition it holds is the high watermark."""
    return all(m.positions() == {p: hw[p] for p in m.assignment()} for m in members)


def positions_of(members):
    return {m.name: m.positions() for m in members}


def commit_all(members, zk, group, hw, what):
    """Each member commits its positions (all at the high watermarks); the acknowledged
    offsets are in ZooKeeper at once and committed() of every member returns them."""
    stage(what + ": commit(asynchronous=False), committed()")
    for m in members:
        pos = m.positions()
        check(pos == {p: hw[p] for p in pos},
              "%s: positions %s before the commit, high watermarks %s" % (m.name, pos, hw))
        acked = m.commit()
        check(acked == pos, "%s: commit acknowledged %s, positions %s" % (m.name, acked, pos))
    check_zk(zk, group, hw, what)
    for m in members:
        got = m.committed()
        check(got == hw, "%s: committed() %s, expected the high watermarks %s" % (m.name, got, hw))
    info("%s: committed() of %s = high watermarks" % (what, ", ".join(m.name for m in members)))


def cmd_g1(boot, zk, state_path):
    state = load(state_path)
    hw = high_watermarks(state)
    total = len(state["reports"])
    watchdog(170, "group g1", boot, "g1")
    errors = []
    members = [Member(boot, "g1", "g1-c%d" % i, errors) for i in (1, 2, 3)]
    seen, dups = set(), [0]

    def first_sink(_m, msg):
        n = record_of(state, msg)
        if n in seen:
            dups[0] += 1
        seen.add(n)

    # -- three members: disjoint assignments covering the topic, every record ---------------
    stable = wait_group(members, first_sink, "g1 with 3 members")
    # (A member that joined first may have read everything before the others came: done
    # when each partition's current owner has read up to the end too.)
    consume_until(members, lambda: len(seen) == total and at_end_of(members, hw), first_sink,
                  "g1: all %d records, each member at the end of its partitions" % total,
                  lambda: " (have %d, positions %s)" % (len(seen), positions_of(members)))
    check(seen == set(range(total)), "g1 consumed records outside 0..%d" % (total - 1))
    now = {m.name: m.assignment() for m in members}
    check(now == stable, "g1 rebalanced while consuming: %s, then %s" % (stable, now))
    info("g1: records 0..%d consumed by 3 members (%d delivered twice while joining)"
         % (total - 1, dups[0]))
    commit_all(members, zk, "g1", hw, "g1 (3 members)")

    # -- one leaves: the two others take over from the committed offsets -------------------
    gone = members.pop(0)
    gone.close()
    info("%s closed (left g1)" % gone.name)

    def no_records(m, msg):
        fail("%s: record %r (partition %d offset %d) delivered again after %s left"
             % (m.name, msg.value(), msg.partition(), msg.offset(), gone.name))

    stable = wait_group(members, no_records, "g1 with 2 members")
    first = total
    state["reports"] += produce_numbered(boot, first, 600)
    save(state_path, state)
    total = len(state["reports"])
    hw = high_watermarks(state)
    info("produced records %d..%d" % (first, total - 1))
    fresh = set()

    def second_sink(m, msg):
        n = record_of(state, msg)
        check(n >= first, "%s: record %d (partition %d offset %d) delivered again: the "
              "committed offsets were not honoured" % (m.name, n, msg.partition(), msg.offset()))
        check(n not in fresh, "%s: record %d delivered twice" % (m.name, n))
        fresh.add(n)

    consume_until(members, lambda: len(fresh) == total - first and at_end_of(members, hw),
                  second_sink, "g1: records %d..%d" % (first, total - 1),
                  lambda: " (have %d, positions %s)" % (len(fresh), positions_of(members)))
    now = {m.name: m.assignment() for m in members}
    check(now == stable, "g1 rebalanced while consuming: %s, then %s" % (stable, now))
    info("g1: the 2 members consumed records %d..%d, nothing older" % (first, total - 1))
    commit_all(members, zk, "g1", hw, "g1 (2 members)")
    for m in members:
        m.close()
    state["g1"] = {str(p): o for p, o in hw.items()}
    save(state_path, state)


# ---------------------------------------------------------------------------------------
# kafka-python

def cmd_kafka_python(boot, zk, state_path):
    import kafka
    from kafka.structs import TopicPartition as KTP
    state = load(state_path)
    hw = high_watermarks(state)
    total = len(state["reports"])
    tps = [KTP(TOPIC, p) for p in range(NPART)]
    servers = boot.split(",")
    watchdog(90, "kafka-python, group g2", boot, "g2")

    def kconsumer(group, name, *topics):
        return kafka.KafkaConsumer(*topics, bootstrap_servers=servers, group_id=group,
                                   client_id=name, enable_auto_commit=False,
                                   auto_offset_reset="earliest", session_timeout_ms=6000,
                                   heartbeat_interval_ms=500)

    stage("g2-k1 joining g2 and reading every record")
    c1 = kconsumer("g2", "g2-k1", TOPIC)
    seen = set()
    deadline = time.time() + STEP_LIMIT
    while len(seen) < total:
        check(time.time() < deadline, "kafka-python g2: %d of %d records within %ds (assignment %s)"
              % (len(seen), total, STEP_LIMIT, sorted(c1.assignment())))
        for tp, recs in c1.poll(timeout_ms=200, max_records=5000).items():
            for r in recs:
                n = int(r.value)
                check(state["reports"][n] == [tp.partition, r.offset],
                      "kafka-python: record %d at %d/%d" % (n, tp.partition, r.offset))
                check(n not in seen, "kafka-python: record %d delivered twice" % n)
                seen.add(n)
    check(c1.assignment() == set(tps), "kafka-python g2-k1 assigned %s" % sorted(c1.assignment()))
    end = {tp.partition: o for tp, o in c1.end_offsets(tps).items()}
    check(end == hw, "kafka-python end_offsets %s, high watermarks %s" % (end, hw))
    info("kafka-python g2: all %d records consumed" % total)
    stage("g2-k1 committing")
    c1.commit()
    check_zk(zk, "g2", hw, "kafka-python g2 commit")
    stage("committed() of g2 (a consumer of g2 that did not subscribe)")
    kprobe = kconsumer("g2", "g2-probe")
    got = {tp.partition: kprobe.committed(tp) for tp in tps}
    check(got == hw, "kafka-python committed() of g2 %s, expected %s" % (got, hw))
    kprobe.close()
    c1.close()
    info("kafka-python g2: committed() = end offsets; g2-k1 closed")

    stage("g2-k2 joining g2")
    c2 = kconsumer("g2", "g2-k2", TOPIC)
    deadline = time.time() + STEP_LIMIT
    while c2.assignment() != set(tps):
        check(time.time() < deadline, "kafka-python g2-k2: assignment %s after %ds"
              % (sorted(c2.assignment()), STEP_LIMIT))
        recs = c2.poll(timeout_ms=200)
        check(not recs, "kafka-python g2-k2 got old records: %s"
              % {tp.partition: [r.offset for r in rs][:5] for tp, rs in recs.items()})
    for tp in tps:
        pos, com = c2.position(tp), c2.committed(tp)
        check(pos == com == hw[tp.partition], "kafka-python g2-k2 partition %d: position %s, "
              "committed %s, end %d" % (tp.partition, pos, com, hw[tp.partition]))
    recs = c2.poll(timeout_ms=1000)
    check(not recs, "kafka-python g2-k2 got old records: %s"
          % {tp.partition: [r.offset for r in rs][:5] for tp, rs in recs.items()})
    c2.close()
    info("kafka-python g2: a second member resumes at the end offsets, nothing old")

    want = {int(p): o for p, o in state["g1"].items()}
    stage("committed() of g1 with kafka-python and confluent-kafka")
    k = kconsumer("g1", "g1-kafka-python")
    kview = {tp.partition: k.committed(tp) for tp in tps}
    k.close()
    errors = []
    cview = Member(boot, "g1", "g1-view", errors, subscribe=False)
    cv = cview.committed()
    cview.close()
    check(kview == want and cv == want, "committed offsets of g1: kafka-python %s, "
          "confluent-kafka %s, as committed %s" % (kview, cv, want))
    info("g1: kafka-python and confluent-kafka read the same committed offsets %s" % fmt(want))


# ---------------------------------------------------------------------------------------
# raw requests

def call(conn, api, version, body, what):
    try:
        corr = conn.send(api, version, body)
        rcorr, resp = conn.recv()
    except WIRE_ERRORS as e:
        raise WireError("%s: %s: %s" % (what, type(e).__name__, e))
    check(rcorr == corr, "%s: correlation id %d, expected %d" % (what, rcorr, corr))
    return kwire.Reader(resp)


def at_end(r, what):
    check(r.remaining() == 0, "%s: %d bytes left over in the response" % (what, r.remaining()))


def find_coordinator(hostport, key, key_type=0, conn=None):
    """FindCoordinator v1: key string, key_type int8. Response: throttle_time_ms int32,
    error_code int16, error_message nullable string, node_id int32, host string, port int32.
    Returns (error, message, node, "host:port")."""
    c = conn or kwire.Conn(hostport, timeout=5)
    try:
        r = call(c, API_FIND_COORDINATOR, 1, string(key) + i8(key_type), "FindCoordinator v1")
        _throttle, err, msg, node, host, port = r.i32(), r.i16(), r.string(), r.i32(), r.string(), r.i32()
        at_end(r, "FindCoordinator v1")
        return err, msg, node, "%s:%d" % (host, port)
    finally:
        if conn is None:
            c.close()


def java_hash(s):
    """Java's String.hashCode (over UTF-16 code units, 32-bit wrap-around)."""
    b = s.encode("utf-16-be")
    h = 0
    for u in struct.unpack(">%dH" % (len(b) // 2), b):
        h = (31 * h + u) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def zk_bucket(zk, group):
    """(bucket, broker, epoch) of GROUP in the controller's placement: bucket abs(hashCode)
    mod the number of buckets in /coordinators/groups, whose entry and /coordinators/groups/<b>
    must name the same broker; the epoch is the version of /coordinators/groups/<b>."""
    s = zkq.Session(zk)
    try:
        data, _ = s.get(ROOT + "/coordinators/groups")
        buckets = json.loads(data)["buckets"]
        h = java_hash(group)
        b = (0 if h == -(1 << 31) else abs(h)) % len(buckets)
        data, stat = s.get("%s/coordinators/groups/%d" % (ROOT, b))
        broker = json.loads(data)["broker"]
        check(buckets[b]["broker"] == broker, "/coordinators/groups lists broker %s for bucket %d, "
              "/coordinators/groups/%d broker %s" % (buckets[b]["broker"], b, b, broker))
        return b, broker, stat["version"]
    finally:
        s.close()


def agreed_coordinator(zk, group, brokers, dead=None, old_epoch=None):
    """(node, host:port, bucket, epoch) if every broker answers FindCoordinator without error
    and the same coordinator, one of BROKERS (and not DEAD), the broker ZooKeeper's placement
    gives the group's bucket (at an epoch above OLD_EPOCH); else None and what they said."""
    answers = {}
    for hp in brokers:
        try:
            answers[hp] = find_coordinator(hp, group)
        except WIRE_ERRORS as e:
            answers[hp] = ("no answer: %s" % e,)
    vals = set(answers.values())
    if len(vals) == 1:
        a = vals.pop()
        if len(a) == 4 and a[0] == NONE and a[3] in brokers and a[2] != dead:
            try:
                b, owner, epoch = zk_bucket(zk, group)
            except (OSError, zkq.ZkError, zkq.NoNode, ValueError, KeyError) as e:
                answers["zookeeper"] = "placement unreadable: %s" % e
                return None, answers
            answers["zookeeper"] = "bucket %d: broker %d, epoch %d" % (b, owner, epoch)
            if owner == a[2] and (old_epoch is None or epoch > old_epoch):
                return (a[2], a[3], b, epoch), answers
    return None, answers


def cmd_coordinator(zk, group, *brokers):
    deadline = time.time() + 30
    while True:
        got, answers = agreed_coordinator(zk, group, brokers)
        if got:
            break
        if time.time() > deadline:
            fail("FindCoordinator v1 for %s: the brokers did not agree on a live coordinator, "
                 "the one of the ZooKeeper placement, within 30s: %s" % (group, answers))
        time.sleep(0.2)
    print("%d %s %d %d" % got)


def cmd_wait_coordinator(zk, group, dead, old_epoch, seconds, *brokers):
    dead, old_epoch, seconds = int(dead), int(old_epoch), float(seconds)
    t0 = time.time()
    while True:
        got, answers = agreed_coordinator(zk, group, brokers, dead, old_epoch)
        if got:
            break
        if time.time() > t0 + seconds:
            fail("FindCoordinator v1 for %s: no coordinator other than the dead broker %d "
                 "(and its bucket moved in ZooKeeper) within %.0fs: %s"
                 % (group, dead, seconds, answers))
        time.sleep(0.2)
    sys.stderr.write("  FindCoordinator: broker %d coordinates %s after %.1fs\n"
                     % (got[0], group, time.time() - t0))
    print("%d %s %d %d" % got)


def offset_commit_v2(conn, group, partition, offset, generation=-1, member=""):
    """OffsetCommit v2: group_id string, generation_id int32, member_id string,
    retention_time_ms int64, [topic string, [partition int32, offset int64, metadata
    nullable string]]. Response v2: [topic string, [partition int32, error_code int16]].
    Returns the partition's error code."""
    body = (string(group) + i32(generation) + string(member) + i64(-1) +
            i32(1) + string(TOPIC) + i32(1) + i32(partition) + i64(offset) + string(""))
    r = call(conn, API_OFFSET_COMMIT, 2, body, "OffsetCommit v2")
    check(r.i32() == 1 and r.string() == TOPIC, "OffsetCommit v2: not the topic asked for")
    check(r.i32() == 1 and r.i32() == partition, "OffsetCommit v2: not the partition asked for")
    err = r.i16()
    at_end(r, "OffsetCommit v2")
    return err


def offset_fetch_v1(conn, group, partitions):
    """OffsetFetch v1: group_id string, [topic string, [partition int32]]. Response v1:
    [topic string, [partition int32, offset int64, metadata nullable string, error int16]].
    Returns {partition: (offset, error)}."""
    body = (string(group) + i32(1) + string(TOPIC) + i32(len(partitions)) +
            b"".join(i32(p) for p in partitions))
    r = call(conn, API_OFFSET_FETCH, 1, body, "OffsetFetch v1")
    out = {}
    for _ in range(r.i32()):
        check(r.string() == TOPIC, "OffsetFetch v1: another topic in the response")
        for _ in range(r.i32()):
            p, off, _meta, err = r.i32(), r.i64(), r.string(), r.i16()
            out[p] = (off, err)
    at_end(r, "OffsetFetch v1")
    return out


def join_group_v1_body(group, member=""):
    """JoinGroup v1: group_id string, session_timeout_ms int32, rebalance_timeout_ms int32,
    member_id string, protocol_type string, [name string, metadata bytes]; the metadata a
    consumer subscription v0 (version int16, [topic string], user_data bytes)."""
    meta = i16(0) + i32(1) + string(TOPIC) + kbytes(b"")
    return (string(group) + i32(6000) + i32(6000) + string(member) + string("consumer") +
            i32(1) + string("range") + kbytes(meta))


def cmd_wire(zk, coord, other):
    # JoinGroup v1 with an empty group id: INVALID_GROUP_ID from any broker.
    for hp in (coord, other):
        c = kwire.Conn(hp)
        r = call(c, API_JOIN_GROUP, 1, join_group_v1_body(""), "JoinGroup v1")
        # error_code int16, generation_id int32, protocol_name string, leader string,
        # member_id string, [member_id string, metadata bytes]
        err = r.i16()
        check(err == INVALID_GROUP_ID, "JoinGroup v1 with group id \"\" to %s: error %d, expected "
              "%d INVALID_GROUP_ID" % (hp, err, INVALID_GROUP_ID))
        _gen, _proto, _leader, _member = r.i32(), r.string(), r.string(), r.string()
        nmembers = r.i32()
        check(nmembers == 0, "JoinGroup v1 error response lists %d members" % nmembers)
        at_end(r, "JoinGroup v1")
        c.close()
    info("JoinGroup v1, empty group id: 24 INVALID_GROUP_ID from both brokers")

    # Heartbeat v0 (group_id string, generation_id int32, member_id string -> error_code
    # int16) from a member the coordinator does not know.
    c = kwire.Conn(coord)
    r = call(c, API_HEARTBEAT, 0, string("g1") + i32(1) + string("nobody"), "Heartbeat v0")
    err = r.i16()
    at_end(r, "Heartbeat v0")
    check(err == UNKNOWN_MEMBER_ID, "Heartbeat v0 of member \"nobody\" to the coordinator: error %d, "
          "expected %d UNKNOWN_MEMBER_ID" % (err, UNKNOWN_MEMBER_ID))
    c.close()
    info("Heartbeat v0, unknown member: 25 UNKNOWN_MEMBER_ID")

    # OffsetCommit v2 / OffsetFetch v1 to a broker that does not coordinate g1.
    before = zk_offsets(zk, "g1")
    c = kwire.Conn(other)
    err = offset_commit_v2(c, "g1", 0, 4242)
    check(err == NOT_COORDINATOR, "OffsetCommit v2 to a broker that is not the coordinator: "
          "error %d, expected %d NOT_COORDINATOR" % (err, NOT_COORDINATOR))
    got = offset_fetch_v1(c, "g1", [0])
    check(got.get(0, (None, None))[1] == NOT_COORDINATOR, "OffsetFetch v1 to a broker that is not "
          "the coordinator: %s, expected error %d NOT_COORDINATOR" % (got, NOT_COORDINATOR))
    c.close()
    check(zk_offsets(zk, "g1") == before, "the refused commit changed ZooKeeper: %s, before %s"
          % (zk_offsets(zk, "g1"), before))
    info("OffsetCommit v2 / OffsetFetch v1 to a non-coordinator: 16 NOT_COORDINATOR, "
         "ZooKeeper unchanged")

    # A simple (generation -1) commit through the wire: in ZooKeeper when acknowledged.
    err, msg, node, hp = find_coordinator(coord, "gwire")
    check(err == NONE and hp in (coord, other), "FindCoordinator v1 for gwire: error %d (%s), "
          "broker %d at %s" % (err, msg, node, hp))
    c = kwire.Conn(hp)
    err = offset_commit_v2(c, "gwire", 0, 17)
    check(err == NONE, "OffsetCommit v2 (generation -1) of gwire to its coordinator: error %d" % err)
    check_zk(zk, "gwire", {0: 17}, "OffsetCommit v2 of gwire")
    got = offset_fetch_v1(c, "gwire", [0, 1])
    check(got == {0: (17, NONE), 1: (-1, NONE)},
          "OffsetFetch v1 of gwire: %s, expected {0: (17, 0), 1: (-1, 0)}" % got)
    c.close()
    info("OffsetCommit v2 / OffsetFetch v1 of gwire on broker %d: offset 17" % node)

    # FindCoordinator for a transaction key: any answer, and the connection goes on.
    c = kwire.Conn(coord)
    err, msg, node, _ = find_coordinator(coord, "some-transaction", key_type=1, conn=c)
    e2, apis = kwire.apiversions(c, 0)
    check(e2 == NONE and API_FIND_COORDINATOR in apis,
          "ApiVersions after FindCoordinator(key_type 1): error %d, apis %s" % (e2, sorted(apis)))
    c.close()
    info("FindCoordinator v1, key type 1: error %d (%s), node %d; the connection still answers"
         % (err, msg, node))

    # A JoinGroup whose body stops after session_timeout_ms (in a well-formed frame).
    c = kwire.Conn(coord)
    c.send(API_JOIN_GROUP, 1, string("g1") + i32(6000))
    try:
        rcorr, body = c.recv()
        fail("truncated JoinGroup v1 answered (correlation id %d, %d bytes) instead of closing"
             % (rcorr, len(body)))
    except kwire.Closed:
        pass
    except kwire.Timeout:
        fail("truncated JoinGroup v1: the connection was neither answered nor closed within 10s")
    c.close()
    c = kwire.Conn(coord)
    e2, _ = kwire.apiversions(c, 0)
    err, msg, node, _ = find_coordinator(coord, "g1", conn=c)
    c.close()
    check(e2 == NONE and err == NONE, "a new connection after the truncated JoinGroup: "
          "ApiVersions %d, FindCoordinator %d" % (e2, err))
    info("truncated JoinGroup v1: connection closed; the broker answers a new one")


# ---------------------------------------------------------------------------------------
# group administration

def consumer_assignment(data):
    """ConsumerProtocolAssignment (int16 version, [topic string, [partition int32]], user_data
    bytes) -> {topic: sorted partitions}."""
    r = kwire.Reader(data)
    r.i16()
    out = {}
    for _ in range(r.i32()):
        t = r.string()
        out[t] = sorted(r.i32() for _ in range(r.i32()))
    r.kbytes()
    return out


def list_groups_v4(hostport, states):
    """ListGroups v4 (flexible: request header v2, compact arrays and strings, tagged fields):
    states_filter [compact string]. Response (header v1): throttle_time_ms int32, error_code
    int16, [group_id, protocol_type, group_state compact strings, tags], tags.
    Returns (error, {group: state})."""
    body = kwire.uvarint(len(states) + 1) + b"".join(kwire.compact_string(x) for x in states)
    body += b"\0"  # tagged fields
    c = kwire.Conn(hostport)
    try:
        try:
            corr = c.send(API_LIST_GROUPS, 4, body, flexible_header=True)
            rcorr, resp = c.recv()
        except WIRE_ERRORS as e:
            raise WireError("ListGroups v4 to %s: %s: %s" % (hostport, type(e).__name__, e))
    finally:
        c.close()
    check(rcorr == corr, "ListGroups v4: correlation id %d, expected %d" % (rcorr, corr))
    r = kwire.Reader(resp)
    r.tagged()  # response header v1
    r.i32()
    err = r.i16()
    out = {}
    for _ in range(r.uvarint() - 1):
        g, _ptype, st = r.compact_string(), r.compact_string(), r.compact_string()
        r.tagged()
        check(g not in out, "ListGroups v4 from %s lists %s twice" % (hostport, g))
        out[g] = st
    r.tagged()
    at_end(r, "ListGroups v4")
    return err, out


def list_groups_v4_all(brokers, states):
    """{group: state} of every live broker's ListGroups v4 answer (each lists the groups it
    coordinates, so none is listed twice)."""
    out = {}
    for hp in brokers:
        err, got = list_groups_v4(hp, states)
        check(err == NONE, "ListGroups v4 (states %s) to %s: error %d" % (states, hp, err))
        twice = set(got) & set(out)
        check(not twice, "groups %s listed by two brokers" % sorted(twice))
        out.update(got)
    return out


def offset_delete(brokers, group, topics):
    """OffsetDelete v0 to GROUP's coordinator: group_id string, [name string, [partition_index
    int32]]. Response: error_code int16, throttle_time_ms int32, [name string,
    [partition_index int32, error_code int16]]. TOPICS {topic: [partition]}; returns (error,
    {(topic, partition): error})."""
    err, msg, node, hp = find_coordinator(brokers[0], group)
    check(err == NONE and hp in brokers, "FindCoordinator v1 for %s: error %d (%s), broker %d at %s"
          % (group, err, msg, node, hp))
    body = string(group) + i32(len(topics))
    for t, parts in topics.items():
        body += string(t) + i32(len(parts)) + b"".join(i32(p) for p in parts)
    c = kwire.Conn(hp)
    try:
        r = call(c, API_OFFSET_DELETE, 0, body, "OffsetDelete v0 of %s" % group)
    finally:
        c.close()
    err = r.i16()
    r.i32()
    out = {}
    for _ in range(r.i32()):
        t = r.string()
        for _ in range(r.i32()):
            p, e = r.i32(), r.i16()
            out[(t, p)] = e
    at_end(r, "OffsetDelete v0")
    return err, out


def zk_exists(zk, path):
    s = zkq.Session(zk)
    try:
        return s.exists(ROOT + path) is not None
    finally:
        s.close()


def cmd_admin(zk, *brokers):
    import kafka
    from confluent_kafka.admin import AdminClient
    boot = ",".join(brokers)
    watchdog(150, "group administration", boot, "g3")
    errors = []
    cadmin = AdminClient(base_conf(boot))
    kadmin = kafka.KafkaAdminClient(bootstrap_servers=list(brokers), client_id="g3-kadmin")
    all_parts = {TOPIC: list(range(NPART))}

    def confluent_groups():
        """{group id: GroupMetadata} of confluent-kafka's list_groups (ListGroups to every
        broker, then DescribeGroups)."""
        stage("confluent-kafka AdminClient.list_groups()")
        try:
            got = cadmin.list_groups(timeout=10)
        except KafkaException as e:
            return {"(error)": e}
        return {g.id: g for g in got}

    def kp(what, fn, *args):
        """A KafkaAdminClient call; its exceptions fail the test with what it was doing."""
        stage("kafka-python " + what)
        try:
            return fn(*args)
        except kafka.errors.KafkaError as e:
            fail("kafka-python %s: %s: %s" % (what, type(e).__name__, e))

    def kp_describe(group):
        (d,) = kp("describe_consumer_groups([%s])" % group, kadmin.describe_consumer_groups,
                  [group])
        check(d.group == group and d.error_code == NONE,
              "kafka-python describe_consumer_groups(%s): group %s, error %d"
              % (group, d.group, d.error_code))
        return d

    def kp_delete(group):
        res = kp("delete_consumer_groups([%s])" % group, kadmin.delete_consumer_groups, [group])
        check(len(res) == 1 and res[0][0] == group,
              "kafka-python delete_consumer_groups(%s): %s" % (group, res))
        return res[0][1].errno

    def kp_offsets(group):
        got = kp("list_consumer_group_offsets(%s)" % group, kadmin.list_consumer_group_offsets,
                 group)
        check(all(tp.topic == TOPIC for tp in got), "offsets of %s: %s" % (group, got))
        return {tp.partition: om.offset for tp, om in got.items()}

    # -- one active member of g3 --------------------------------------------------------
    m = Member(boot, "g3", "g3-admin-c1", errors)
    wait_group([m], lambda _m, _msg: None, "g3 with 1 member")

    def g3_listed():
        got = confluent_groups()
        g = got.get("g3")
        ok = (g is not None and g.error is None and g.state == "Stable" and
              len(g.members) == 1 and "g1" in got and "g2" in got and
              got["g1"].state == "Empty" and got["g2"].state == "Empty")
        return ok, got

    deadline = time.time() + STEP_LIMIT
    while True:
        ok, got = g3_listed()
        if ok:
            break
        if time.time() > deadline:
            seen = {k: (getattr(g, "state", g), len(getattr(g, "members", [])))
                    for k, g in got.items()}
            fail("confluent-kafka list_groups(): no Stable g3 with 1 member and Empty g1, g2 "
                 "within %ds: {group: (state, members)} %s" % (STEP_LIMIT, seen))
        m.poll(lambda _m, _msg: None)
    g3 = got["g3"]
    member = g3.members[0]
    check(g3.protocol_type == "consumer" and g3.protocol in ("range", "roundrobin"),
          "confluent-kafka list_groups(): g3 protocol type %r, protocol %r"
          % (g3.protocol_type, g3.protocol))
    check(member.client_id == "g3-admin-c1", "confluent-kafka list_groups(): g3's member has "
          "client id %r, expected g3-admin-c1" % member.client_id)
    check(consumer_assignment(member.assignment) == all_parts,
          "confluent-kafka list_groups(): g3's member is assigned %s, expected %s"
          % (consumer_assignment(member.assignment), all_parts))
    info("confluent-kafka list_groups(): g3 Stable (%s), member %s with all %d partitions; "
         "g1, g2 Empty" % (g3.protocol, member.client_id, NPART))

    listed = dict(kp("list_consumer_groups()", kadmin.list_consumer_groups))
    check(listed.get("g3") == "consumer" and "g1" in listed and "g2" in listed,
          "kafka-python list_consumer_groups(): %s" % listed)
    d = kp_describe("g3")
    check(d.state == "Stable" and d.protocol_type == "consumer" and len(d.members) == 1,
          "kafka-python describe_consumer_groups(g3): state %s, protocol type %r, %d members"
          % (d.state, d.protocol_type, len(d.members)))
    km = d.members[0]
    check(km.client_id == "g3-admin-c1" and km.member_id == member.id,
          "kafka-python describe_consumer_groups(g3): member %s (client id %r), confluent-kafka "
          "saw %s" % (km.member_id, km.client_id, member.id))
    kassigned = {t: sorted(ps) for t, ps in km.member_assignment.assignment}
    check(kassigned == all_parts, "kafka-python describe_consumer_groups(g3): assignment %s"
          % kassigned)
    check(TOPIC in km.member_metadata.subscription, "kafka-python describe_consumer_groups(g3): "
          "subscription %s" % (km.member_metadata.subscription,))
    info("kafka-python list_consumer_groups() / describe_consumer_groups(g3): the same member, "
         "subscribed to %s, all %d partitions" % (TOPIC, NPART))

    err = kp_delete("g3")
    check(err == NON_EMPTY_GROUP, "kafka-python delete_consumer_groups(g3) with a member: error "
          "%d, expected %d NON_EMPTY_GROUP" % (err, NON_EMPTY_GROUP))
    check(kp_describe("g3").state == "Stable", "g3 not Stable after the refused deletion")
    info("delete_consumer_groups(g3) with an active member: 68 NON_EMPTY_GROUP")

    want = zk_offsets(zk, "g1")
    got = kp_offsets("g1")
    check(got == want, "kafka-python list_consumer_group_offsets(g1): %s, ZooKeeper holds %s"
          % (got, want))
    info("kafka-python list_consumer_group_offsets(g1) = ZooKeeper: %s" % fmt(got))

    # -- hand-encoded: ListGroups v4 with a states filter, OffsetDelete of a subscribed topic --
    stage("ListGroups v4")
    empty = list_groups_v4_all(brokers, ["Empty"])
    check({"g1", "g2"} <= set(empty) and "g3" not in empty and
          all(st == "Empty" for st in empty.values()),
          "ListGroups v4, states filter [Empty]: %s" % empty)
    stable = list_groups_v4_all(brokers, ["Stable"])
    check(stable == {"g3": "Stable"}, "ListGroups v4, states filter [Stable]: %s" % stable)
    every = list_groups_v4_all(brokers, [])
    others = {k: v for k, v in every.items() if k != "g3"}
    check(every.get("g3") == "Stable" and others == empty,
          "ListGroups v4 without a filter: %s; [Empty] gave %s" % (every, empty))
    info("ListGroups v4: [Empty] lists %s, [Stable] lists g3, no filter both"
         % " ".join(sorted(empty)))

    stage("OffsetDelete v0 of g3")
    err, parts = offset_delete(brokers, "g3", {TOPIC: [0, 1], OTHER_TOPIC: [0], "gt-none": [0]})
    want_parts = {(TOPIC, 0): GROUP_SUBSCRIBED_TO_TOPIC, (TOPIC, 1): GROUP_SUBSCRIBED_TO_TOPIC,
                  (OTHER_TOPIC, 0): NONE, ("gt-none", 0): UNKNOWN_TOPIC_OR_PARTITION}
    check(err == NONE and parts == want_parts, "OffsetDelete v0 of g3 (a member subscribed to %s): "
          "error %d, partitions %s, expected 0 and %s" % (TOPIC, err, parts, want_parts))
    info("OffsetDelete v0 of g3: 86 GROUP_SUBSCRIBED_TO_TOPIC for %s, 0 for %s (not subscribed), "
         "3 UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist" % (TOPIC, OTHER_TOPIC))

    # -- the member leaves: an offset from outside the group, then g3 deleted ---------------
    m.close()
    stage("g3 without members after its member left")
    deadline = time.time() + STEP_LIMIT
    while True:
        d = kp_describe("g3")
        # Without members or offsets the coordinator forgets the group at once: Dead (Kafka
        # keeps it Empty until offsets.retention.check.interval.ms has passed).
        if d.state in ("Empty", "Dead") and not d.members:
            break
        check(time.time() < deadline, "g3 still %s with %d members %ds after its member closed"
              % (d.state, len(d.members), STEP_LIMIT))
        time.sleep(0.1)
    # Neither client's admin API sets a group's offsets (no alter_consumer_group_offsets in
    # confluent-kafka 1.7 or kafka-python 2.0); it is an OffsetCommit outside group management
    # (generation -1, member ""), as Kafka's Admin.alterConsumerGroupOffsets sends it.
    stage("setting g3's offset of partition 0 to 5")
    outsider = Member(boot, "g3", "g3-alter", errors, subscribe=False)
    acked = outsider.commit({0: 5})
    outsider.close()
    check(acked == {0: 5}, "commit of g3 partition 0 -> 5 acknowledged %s" % acked)
    check_zk(zk, "g3", {0: 5}, "g3's offset set from outside the group")
    check(kp_offsets("g3") == {0: 5}, "kafka-python list_consumer_group_offsets(g3): %s"
          % kp_offsets("g3"))
    d = kp_describe("g3")
    check(d.state == "Empty" and not d.members, "g3 with an offset and no member: %s, %d members"
          % (d.state, len(d.members)))
    info("g3's offset of partition 0 set to 5 from outside the group (generation -1): in "
         "ZooKeeper, listed by OffsetFetch, g3 Empty")

    err = kp_delete("g3")
    check(err == NONE, "kafka-python delete_consumer_groups(g3), Empty: error %d" % err)
    check(not zk_exists(zk, "/consumers/g3"), "%s/consumers/g3 still exists after g3 was deleted"
          % ROOT)
    got = confluent_groups()
    check("g3" not in got and "g1" in got, "confluent-kafka list_groups() after deleting g3: %s"
          % sorted(got))
    listed = dict(kp("list_consumer_groups()", kadmin.list_consumer_groups))
    check("g3" not in listed and "g1" in listed, "kafka-python list_consumer_groups() after "
          "deleting g3: %s" % listed)
    check(kp_describe("g3").state == "Dead", "g3 after its deletion: %s" % kp_describe("g3").state)
    check(kp_offsets("g3") == {}, "offsets of g3 after its deletion: %s" % kp_offsets("g3"))
    info("g3 deleted: %s/consumers/g3 gone, listed by neither client, Dead" % ROOT)

    # -- a group that never existed ----------------------------------------------------------
    never = "g-never-%d" % os.getpid()
    d = kp_describe(never)
    check(d.state == "Dead" and not d.members and d.protocol_type == "",
          "describe_consumer_groups(%s), never used: state %s, protocol type %r, %d members"
          % (never, d.state, d.protocol_type, len(d.members)))
    err = kp_delete(never)
    check(err == GROUP_ID_NOT_FOUND, "delete_consumer_groups(%s), never used: error %d, expected "
          "%d GROUP_ID_NOT_FOUND" % (never, err, GROUP_ID_NOT_FOUND))
    listed = dict(kp("list_consumer_groups()", kadmin.list_consumer_groups))
    check(never not in listed, "%s listed after describing it: %s" % (never, listed))
    info("a group that never existed: Dead, deletion 69 GROUP_ID_NOT_FOUND, not listed")

    # -- OffsetDelete of g1 (Empty) and of a group that does not exist -----------------------
    before = zk_offsets(zk, "g1")
    err, parts = offset_delete(brokers, "g1", {TOPIC: [0]})
    check(err == NONE and parts == {(TOPIC, 0): NONE}, "OffsetDelete v0 of g1 partition 0: error "
          "%d, partitions %s" % (err, parts))
    check(not zk_exists(zk, "/consumers/g1/offsets/%s/0" % TOPIC),
          "%s/consumers/g1/offsets/%s/0 still exists after OffsetDelete" % (ROOT, TOPIC))
    after = zk_offsets(zk, "g1")
    check(after == {p: o for p, o in before.items() if p != 0}, "ZooKeeper offsets of g1 after "
          "OffsetDelete of partition 0: %s, before %s" % (after, before))
    got = kp_offsets("g1")
    check(got == after, "kafka-python list_consumer_group_offsets(g1) after OffsetDelete: %s, "
          "ZooKeeper %s" % (got, after))
    err, parts = offset_delete(brokers, never, {TOPIC: [0]})
    check(err == GROUP_ID_NOT_FOUND and parts == {}, "OffsetDelete v0 of %s (never used): error "
          "%d, partitions %s, expected %d GROUP_ID_NOT_FOUND and none (as Kafka answers a group "
          "error)" % (never, err, parts, GROUP_ID_NOT_FOUND))
    info("OffsetDelete v0: g1 partition 0 deleted (ZooKeeper, OffsetFetch), a group that never "
         "existed 69 GROUP_ID_NOT_FOUND")
    kadmin.close()
    if errors:
        info("client errors on the way: %s" % " | ".join(errors[-6:]))


# ---------------------------------------------------------------------------------------
# coordinator failover

def cmd_failover(boot, zk, state_path):
    state = load(state_path)
    hw = high_watermarks(state)
    watchdog(150, "g1 after the coordinator failover", boot, "g1")
    errors = []
    before = {int(p): o for p, o in state["g1"].items()}
    view = Member(boot, "g1", "g1-after", errors, subscribe=False)
    got = view.committed()
    view.close()
    check(got == before, "after the failover, committed() of g1 is %s, expected %s%s"
          % (got, before, last_errors(errors)))
    info("the new coordinator serves g1's offsets from ZooKeeper: %s" % fmt(got))

    m = Member(boot, "g1", "g1-c4", errors)

    def nothing_new(mem, msg):
        fail("%s: record at %d/%d delivered again after the failover"
             % (mem.name, msg.partition(), msg.offset()))

    wait_group([m], nothing_new, "g1 with 1 member after the failover")
    new = {p: hw[p] - 50 - 7 * p for p in range(NPART)}
    acked = m.commit(new)
    check(acked == new, "g1-c4: commit acknowledged %s, asked %s" % (acked, new))
    check_zk(zk, "g1", new, "g1 commit after the failover")
    m.close()

    m = Member(boot, "g1", "g1-c5", errors)
    got = m.committed()
    check(got == new, "g1-c5: committed() %s, expected %s" % (got, new))
    firsts = {}

    def first_offsets(mem, msg):
        record_of(state, msg)
        firsts.setdefault(msg.partition(), msg.offset())

    consume_until([m], lambda: len(firsts) == NPART, first_offsets,
                  "g1-c5: a record of every partition", lambda: " (have %s)" % sorted(firsts))
    check(firsts == new, "g1-c5 resumed at %s, the committed offsets are %s" % (firsts, new))
    m.close()
    info("g1: new offsets %s committed through the new coordinator and honoured" % fmt(new))
    state["g1"] = {str(p): o for p, o in new.items()}
    save(state_path, state)


def main(argv):
    cmds = {
        "produce": (cmd_produce, 4),
        "g1": (cmd_g1, 3),
        "kafka-python": (cmd_kafka_python, 3),
        "coordinator": (cmd_coordinator, None),
        "wait-coordinator": (cmd_wait_coordinator, None),
        "failover": (cmd_failover, 3),
        "wire": (cmd_wire, 3),
        "admin": (cmd_admin, None),
    }
    if len(argv) < 2 or argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    fn, nargs = cmds[argv[1]]
    args = argv[2:]
    if (nargs is not None and len(args) != nargs) or (nargs is None and len(args) < 3):
        sys.stderr.write(__doc__)
        return 2
    try:
        fn(*args)
    except WireError as e:
        fail("%s: %s" % (argv[1], e))
    except WIRE_ERRORS as e:
        fail("%s: %s: %s" % (argv[1], type(e).__name__, e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
