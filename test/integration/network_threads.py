#!/usr/bin/python3
"""19-network-threads: the parts of the test that need Kafka clients.

    network_threads.py create BOOTSTRAP TOPIC PARTITIONS
        create TOPIC and wait until every partition has a leader and answers ListOffsets
    network_threads.py load BOOTSTRAP RESULT_FILE BROKER_PID NETWORK_THREADS
        8 confluent-kafka producers, one connection each, at least 5,000 numbered records each
        (acks=all, several requests in flight, no client retries) to one 3-partition topic;
        meanwhile, on an admin connection, 20 topics are created and the topic's
        segment.bytes is altered. Checks the admin results, Metadata and DescribeConfigs,
        that the connections are spread over NETWORK_THREADS event loops of the broker
        (from /proc), then every record in the topic; RESULT_FILE gets the acknowledgements.
    network_threads.py verify-load BOOTSTRAP RESULT_FILE
        the topic of `load` again (after a restart)
    network_threads.py background BOOTSTRAP TOPIC ACKED_FILE STOP_FILE
        about 1,000 records a second (acks=all, no client retries) until STOP_FILE appears;
        "partition offset n" in ACKED_FILE for each acknowledged record (see verify_acked.py)
    network_threads.py longpoll BOOTSTRAP
        fetches parked on several connections (MaxWaitTime 20 s), and a confluent-kafka and
        a kafka-python consumer, are answered within 10 s of a record produced elsewhere
    network_threads.py recreate BOOTSTRAP CYCLES
        a topic with 100 records (and a fetch parked on it) is deleted and created again
        under the same name: it must be empty, then hold exactly the 10 records produced to it
"""
import json
import os
import select
import sys
import threading
import time

import kafka
from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
from kafka.structs import TopicPartition as KTopicPartition

import kwire
from kwire import i8, i32, i64, string
from sftest import base_conf, check, consume_all, error_code, fail, info, produce

LOAD_TOPIC = "nt-multi"
NPRODUCERS = 8
MIN_BEFORE = 2000
AFTER_ADMIN = 3000
NTOPICS = 20
SEGMENT_BYTES = 16384


def admin_client(bootstrap):
    return AdminClient(base_conf(bootstrap, {"client.id": "nt-admin"}))


def wait_futures(futures, what, timeout=60):
    """Wait for every future; return {key: None or the KafkaException}."""
    out = {}
    for k, f in futures.items():
        try:
            f.result(timeout=timeout)
            out[k] = None
        except KafkaException as e:
            out[k] = e
        except Exception as e:
            fail("%s %s: %r" % (what, k, e))
    return out


def all_topics(admin):
    """Every topic in Metadata (no topic named: nothing is auto-created)."""
    return admin.list_topics(timeout=15).topics


def wait_ready(bootstrap, admin, topic, npart, timeout=30):
    """Wait until Metadata shows topic with npart partitions, each with a leader, and
    ListOffsets answers for every one of them. Returns the watermarks [(low, high)]."""
    deadline = time.time() + timeout
    c = Consumer(base_conf(bootstrap, {"group.id": "nt-wm"}))
    why = None
    try:
        while True:
            t = all_topics(admin).get(topic)
            if t is None:
                why = "not in Metadata"
            elif t.error is not None:
                why = "error %s" % t.error
            elif sorted(t.partitions) != list(range(npart)):
                why = "partitions %s" % sorted(t.partitions)
            elif any(p.leader < 0 or p.error is not None for p in t.partitions.values()):
                why = "no leader yet"
            else:
                try:
                    return [c.get_watermark_offsets(TopicPartition(topic, p), timeout=5, cached=False)
                            for p in range(npart)]
                except KafkaException as e:
                    why = "ListOffsets: %s" % e
            if time.time() > deadline:
                fail("%s not ready after %ds: %s" % (topic, timeout, why))
            time.sleep(0.2)
    finally:
        c.close()


def create_topic(bootstrap, admin, topic, npart, config=None):
    res = wait_futures(admin.create_topics([NewTopic(topic, num_partitions=npart, replication_factor=1,
                                                     config=config or {})]), "create")
    check(res[topic] is None, "creating %s: %s" % (topic, res[topic]))
    return wait_ready(bootstrap, admin, topic, npart)


# ---- load: concurrent producers + admin requests --------------------------------------------

def tcp_sockets():
    """{socket inode: (local port, remote port)} of the IPv4 TCP sockets on this host."""
    out = {}
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            out[int(fields[9])] = (int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16))
    return out


def socket_fds(pid):
    """{fd: socket inode} of process pid."""
    out = {}
    for fd in os.listdir("/proc/%s/fd" % pid):
        try:
            link = os.readlink("/proc/%s/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            out[int(fd)] = int(link[8:-1])
    return out


def connections_per_loop(broker_pid, broker_port):
    """How this process's connections to the broker are spread over the broker's event loops:
    [number of our connections registered in each epoll instance that has any], and the
    number of our connections. Read from /proc: our sockets' local ports, the broker's
    epoll instances' registered fds (fdinfo "tfd:" lines) and their sockets' peers."""
    tcp = tcp_sockets()
    ours = {tcp[ino][0] for ino in socket_fds("self").values()
            if ino in tcp and tcp[ino][1] == broker_port}
    bfds = socket_fds(broker_pid)
    loops = []
    for fd in os.listdir("/proc/%s/fd" % broker_pid):
        try:
            if os.readlink("/proc/%s/fd/%s" % (broker_pid, fd)) != "anon_inode:[eventpoll]":
                continue
            with open("/proc/%s/fdinfo/%s" % (broker_pid, fd)) as f:
                tfds = [int(line.split()[1]) for line in f if line.startswith("tfd:")]
        except OSError:
            continue
        n = sum(1 for t in tfds if t in bfds and bfds[t] in tcp and tcp[bfds[t]][1] in ours)
        if n:
            loops.append(n)
    return sorted(loops), len(ours)


def run_load(bootstrap, result_path, broker_pid, nthreads):
    admin = admin_client(bootstrap)
    create_topic(bootstrap, admin, LOAD_TOPIC, 3)

    # One producer connection each. They are made one after the other, each with one record
    # acknowledged before the next starts, so that the acceptor's round robin spreads them
    # over the network threads whatever the interleaving of the clients' own connections.
    # No client retries: a retried batch could be duplicated or reordered by the client,
    # and this test wants any duplicate or reordering to be the broker's.
    acked = [dict() for _ in range(NPRODUCERS)]   # producer -> {seq: (partition, offset)}
    failed = [[] for _ in range(NPRODUCERS)]
    producers = []
    for i in range(NPRODUCERS):
        p = Producer(base_conf(bootstrap, {
            "client.id": "nt-producer-%d" % i, "acks": "all", "enable.idempotence": False,
            "linger.ms": 2, "batch.num.messages": 100, "compression.type": "none",
            "max.in.flight.requests.per.connection": 5, "message.send.max.retries": 0,
            "message.timeout.ms": 60000}))
        producers.append(p)

    def on_delivery_for(i):
        def cb(err, msg):
            seq = int(msg.value().split(b":")[1])
            if err is not None:
                failed[i].append((seq, str(err)))
            else:
                acked[i][seq] = (msg.partition(), msg.offset())
        return cb

    def send(i, seq):
        p = producers[i]
        while True:
            try:
                p.produce(LOAD_TOPIC, key=b"p%d" % i, value=b"%d:%d" % (i, seq), partition=seq % 3,
                          on_delivery=on_delivery_for(i))
                return
            except BufferError:
                p.poll(0.05)

    for i, p in enumerate(producers):
        send(i, 0)
        check(p.flush(30) == 0, "producer %d: its first record was not acknowledged in 30s" % i)
        check(not failed[i], "producer %d: first record failed: %s" % (i, failed[i]))

    start = threading.Barrier(NPRODUCERS + 1)
    done = [False] * NPRODUCERS
    sent = [0] * NPRODUCERS

    admin_done = threading.Event()

    def produce_rest(i):
        # Until the admin requests below are done (at least MIN_BEFORE records), then
        # AFTER_ADMIN more: the admin requests run while every producer is sending, and the
        # logs roll at the altered segment.bytes.
        start.wait()
        p = producers[i]
        seq = 1
        while seq < MIN_BEFORE or (not admin_done.is_set() and seq < 100000):
            send(i, seq)
            seq += 1
            if seq % 20 == 0:
                p.poll(0)
                time.sleep(0.005)   # at most 4,000 records a second per producer
        for seq in range(seq, seq + AFTER_ADMIN):
            send(i, seq)
            if seq % 20 == 0:
                p.poll(0)
                time.sleep(0.005)
        sent[i] = seq + 1
        p.flush(90)
        done[i] = True

    threads = [threading.Thread(target=produce_rest, args=(i,)) for i in range(NPRODUCERS)]
    for t in threads:
        t.start()
    t0 = time.time()
    start.wait()

    # --- admin requests on the metadata thread while the producers run --------------------
    names = ["nt-admin-%02d" % n for n in range(NTOPICS)]
    # half in one CreateTopics request, half one request each
    res = wait_futures(admin.create_topics([NewTopic(n, num_partitions=1 + n_i % 3, replication_factor=1)
                                            for n_i, n in enumerate(names[:NTOPICS // 2])]), "create")
    for n_i, n in enumerate(names[NTOPICS // 2:], NTOPICS // 2):
        res.update(wait_futures(admin.create_topics([NewTopic(n, num_partitions=1 + n_i % 3,
                                                              replication_factor=1)]), "create"))
    for n in names:
        check(res[n] is None, "CreateTopics %s under load: %s" % (n, res[n]))
    res = wait_futures(admin.alter_configs([ConfigResource(
        "topic", LOAD_TOPIC, set_config={"segment.bytes": str(SEGMENT_BYTES)})]), "alter")
    for k, e in res.items():
        check(e is None, "AlterConfigs %s under load: %s" % (k, e))
    admin_took = time.time() - t0
    admin_done.set()
    check(not any(done), "a producer finished before the admin requests did")
    info("admin: %d topics created and segment.bytes altered in %.1fs while the %d producers "
         "were sending" % (NTOPICS, admin_took, NPRODUCERS))
    for n_i, n in enumerate(names):
        wait_ready(bootstrap, admin, n, 1 + n_i % 3)
    topics = all_topics(admin)
    missing = [n for n in names if n not in topics]
    check(not missing, "Metadata does not list %s" % missing)
    cfg_futures = admin.describe_configs([ConfigResource("topic", LOAD_TOPIC)])
    cfg = wait_futures(cfg_futures, "describe")
    check(all(e is None for e in cfg.values()), "DescribeConfigs: %s" % cfg)
    desc = list(cfg_futures.values())[0].result(timeout=30)
    check(desc["segment.bytes"].value == str(SEGMENT_BYTES),
          "segment.bytes of %s is %s after AlterConfigs" % (LOAD_TOPIC, desc["segment.bytes"].value))
    info("Metadata lists the %d topics, each with its partitions led; DescribeConfigs shows "
         "segment.bytes=%d" % (NTOPICS, SEGMENT_BYTES))

    for t in threads:
        t.join(120)
        check(not t.is_alive(), "a producer thread is stuck")
    took = time.time() - t0
    nfailed = sum(len(f) for f in failed)
    nacked = sum(len(a) for a in acked)
    info("%d producers: %d records acknowledged (%d to %d each, %d of them after the admin requests), "
         "%d failed, in %.1fs" % (NPRODUCERS, nacked, min(sent), max(sent), AFTER_ADMIN, nfailed, took))
    for i in range(NPRODUCERS):
        if failed[i]:
            fail("producer %d: %d records failed, first: %s" % (i, len(failed[i]), failed[i][0]))
        check(len(acked[i]) == sent[i],
              "producer %d: %d of %d records acknowledged" % (i, len(acked[i]), sent[i]))
    for p in producers:
        p.flush(10)

    # Every connection lives on one network thread, and the acceptor spread them over all
    # of them (the producers are idle now, so each connection is waiting to read).
    loops, nconns = connections_per_loop(broker_pid, int(bootstrap.rsplit(":", 1)[1]))
    info("this process's %d connections are in the broker's event loops as %s" % (nconns, loops))
    check(nconns >= NPRODUCERS,
          "only %d connections to the broker from %d producers" % (nconns, NPRODUCERS))
    check(sum(loops) == nconns, "%d connections, but %d registrations in the broker's event loops (%s)"
          % (nconns, sum(loops), loops))
    check(len(loops) == nthreads, "the connections are in %d event loops %s, expected one per network "
          "thread (%d)" % (len(loops), loops, nthreads))
    with open(result_path, "w") as f:
        json.dump([{str(s): v for s, v in a.items()} for a in acked], f)
    verify_load(bootstrap, acked)


def verify_load(bootstrap, acked):
    """Every acknowledged record at its acknowledged offset, exactly once; offsets contiguous;
    each producer's sequence numbers strictly increasing within each partition."""
    got = consume_all(bootstrap, LOAD_TOPIC, timeout=90)
    seen = {}
    total = 0
    for part, msgs in sorted(got.items()):
        check([m.offset() for m in msgs] == list(range(len(msgs))),
              "%s [%d]: offsets are not contiguous from 0" % (LOAD_TOPIC, part))
        last = {}
        for m in msgs:
            i_s, seq_s = m.value().split(b":")
            i, seq = int(i_s), int(seq_s)
            check(m.key() == b"p%d" % i, "%s [%d] @%d: key %r for value %r"
                  % (LOAD_TOPIC, part, m.offset(), m.key(), m.value()))
            check(seq % 3 == part, "%s [%d] @%d: record %d:%d belongs to partition %d"
                  % (LOAD_TOPIC, part, m.offset(), i, seq, seq % 3))
            check((i, seq) not in seen, "record %d:%d is in the log twice (@%s and [%d] @%d)"
                  % (i, seq, seen.get((i, seq)), part, m.offset()))
            seen[(i, seq)] = (part, m.offset())
            check(seq > last.get(i, -1), "%s [%d] @%d: producer %d's record %d after its record %d "
                  "(order lost)" % (LOAD_TOPIC, part, m.offset(), i, seq, last.get(i, -1)))
            last[i] = seq
        total += len(msgs)
    for i, a in enumerate(acked):
        for seq, (part, off) in a.items():
            check((i, seq) in seen,
                  "acknowledged record %d:%d ([%d] @%d) is not in the log" % (i, seq, part, off))
            check(seen[(i, seq)] == (part, off), "record %d:%d acknowledged at [%d] @%d is at [%d] @%d"
                  % (i, seq, part, off, seen[(i, seq)][0], seen[(i, seq)][1]))
    want = sum(len(a) for a in acked)
    check(total == want, "%s holds %d records, %d were acknowledged" % (LOAD_TOPIC, total, want))
    info("%s: all %d acknowledged records present exactly once, at their offsets, in per-producer order"
         % (LOAD_TOPIC, total))


def run_verify_load(bootstrap, result_path):
    with open(result_path) as f:
        acked = [{int(s): tuple(v) for s, v in a.items()} for a in json.load(f)]
    verify_load(bootstrap, acked)


# ---- a steady background producer --------------------------------------------------------------

def run_background(bootstrap, topic, acked_path, stop_path):
    """About 1,000 records a second (acks=all, no client retries) until stop_path exists;
    "partition offset n" per acknowledged record in acked_path (verify_acked.py's input)."""
    p = Producer(base_conf(bootstrap, {"client.id": "nt-background", "acks": "all", "linger.ms": 5,
                                       "enable.idempotence": False, "message.send.max.retries": 0,
                                       "message.timeout.ms": 60000}))
    acked = open(acked_path, "w", buffering=1)
    stats = {"ok": 0, "failed": 0, "first": None}

    def on_delivery(err, msg):
        if err is not None:
            stats["failed"] += 1
            stats["first"] = stats["first"] or str(err)
            return
        stats["ok"] += 1
        acked.write("%d %d %s\n" % (msg.partition(), msg.offset(), msg.value().decode()))

    n = 0
    while not os.path.exists(stop_path) and n < 1000000:
        for _ in range(10):
            p.produce(topic, key=b"%d" % n, value=b"%d" % n, on_delivery=on_delivery)
            n += 1
        p.poll(0)
        time.sleep(0.01)
    left = p.flush(60)
    acked.close()
    first = ", first failure: %s" % stats["first"] if stats["first"] else ""
    print("background producer: sent %d, acknowledged %d, failed %d, unresolved %d%s"
          % (n, stats["ok"], stats["failed"], left, first))


# ---- raw Fetch v4 ------------------------------------------------------------------------------

def fetch_v4_body(topic, partitions, max_wait_ms, min_bytes=1):
    """partitions: [(partition, fetch_offset)]."""
    body = i32(-1)                       # ReplicaId
    body += i32(max_wait_ms)             # MaxWaitTime
    body += i32(min_bytes)               # MinBytes
    body += i32(1 << 20)                 # MaxBytes
    body += i8(0)                        # IsolationLevel: read uncommitted
    body += i32(1) + string(topic)       # one topic
    body += i32(len(partitions))
    for p, off in partitions:
        body += i32(p) + i64(off) + i32(1 << 20)   # Partition, FetchOffset, PartitionMaxBytes
    return body


def zigzag(r):
    u = r.uvarint()
    return (u >> 1) ^ -(u & 1)


def parse_records(data):
    """Uncompressed record batches -> [(offset, key, value)]."""
    out = []
    r = kwire.Reader(data)
    while r.remaining() >= 61:
        base = r.i64()
        blen = r.i32()
        if blen > r.remaining():
            break                        # a partial batch at the end of the response
        b = kwire.Reader(r.take(blen))
        b.i32(), b.i8(), b.u32()         # PartitionLeaderEpoch, Magic, CRC
        attrs = b.i16()
        check(attrs & 7 == 0, "a compressed batch from an uncompressed producer")
        b.i32(), b.i64(), b.i64(), b.i64(), b.i16(), b.i32()
        for _ in range(b.i32()):
            zigzag(b)                    # length
            b.i8()                       # attributes
            zigzag(b)                    # timestamp delta
            odelta = zigzag(b)
            kl = zigzag(b)
            key = b.take(kl) if kl >= 0 else None
            vl = zigzag(b)
            value = b.take(vl) if vl >= 0 else None
            for _ in range(zigzag(b)):
                b.take(zigzag(b))
                hl = zigzag(b)
                if hl > 0:
                    b.take(hl)
            out.append((base + odelta, key, value))
    return out


def parse_fetch_v4(body):
    """-> {partition: (error, high_watermark, [(offset, key, value)])}"""
    r = kwire.Reader(body)
    r.i32()                              # ThrottleTimeMs
    out = {}
    for _ in range(r.i32()):
        r.string()
        for _ in range(r.i32()):
            p, err, hw = r.i32(), r.i16(), r.i64()
            r.i64()                      # LastStableOffset
            n = r.i32()
            for _ in range(max(n, 0)):
                r.i64(), r.i64()
            recs = r.kbytes()
            out[p] = (err, hw, parse_records(recs or b""))
    return out


def park_fetches(bootstrap, topic, partitions, n, max_wait_ms):
    conns = []
    for _ in range(n):
        c = kwire.Conn(bootstrap, timeout=30)
        c.send(kwire.API_FETCH, 4, fetch_v4_body(topic, partitions, max_wait_ms),
               client_id="nt-longpoll")
        conns.append(c)
    return conns


def answered(conns, wait):
    r, _, _ = select.select([c.sock for c in conns], [], [], wait)
    return len(r)


def produce_one(bootstrap, topic, partition, value):
    return produce(bootstrap, topic, [(b"lp", value, None, partition, None)],
                   extra={"client.id": "nt-waker", "compression.type": "none"})[0]


def run_longpoll(bootstrap):
    admin = admin_client(bootstrap)
    topic = "nt-poll"
    create_topic(bootstrap, admin, topic, 2)

    # Round 1: six raw connections (spread over the network threads by the acceptor) each
    # park a Fetch for partitions 0 and 1 at the end; one record produced to partition 1
    # on another connection must answer all of them.
    NCONN = 6
    conns = park_fetches(bootstrap, topic, [(0, 0), (1, 0)], NCONN, 20000)
    time.sleep(1.0)   # time to read and park them; an answer now (no data yet) is wrong
    early = answered(conns, 0)
    check(early == 0, "%d of %d fetches (MaxWaitTime 20s, MinBytes 1, no data) were answered before "
          "any record was produced" % (early, NCONN))
    t0 = time.time()
    rep = produce_one(bootstrap, topic, 1, b"wake-1")
    check(rep[:2] == (1, 0),
          "the waking record was acknowledged at %s, expected partition 1 offset 0" % (rep[:2],))
    worst = 0.0
    for k, c in enumerate(conns):
        c.sock.settimeout(max(0.1, t0 + 10 - time.time()))
        try:
            _, body = c.recv()
        except kwire.Timeout:
            fail("parked fetch %d of %d: no answer within 10s of the record produced on another "
                 "connection (MaxWaitTime 20s: the append did not wake it)" % (k + 1, NCONN))
        took = time.time() - t0
        worst = max(worst, took)
        parts = parse_fetch_v4(body)
        check(set(parts) == {0, 1}, "fetch %d answered partitions %s" % (k + 1, sorted(parts)))
        err, hw, recs = parts[1]
        check(err == 0 and hw == 1,
              "fetch %d, partition 1: error %d, high watermark %d" % (k + 1, err, hw))
        check([(o, v) for o, _, v in recs] == [(0, b"wake-1")],
              "fetch %d, partition 1: records %r" % (k + 1, recs))
        check(parts[0][0] == 0 and parts[0][2] == [], "fetch %d, partition 0: %r" % (k + 1, parts[0]))
        c.close()
    info("%d parked fetches (6 connections) woken by a produce on another connection; slowest %.2fs"
         % (NCONN, worst))

    # Round 2: a confluent-kafka and a kafka-python consumer, each waiting at the end of
    # partition 0 with fetch.wait.max.ms 20 s.
    got = {}

    def confluent_wait():
        c = Consumer(base_conf(bootstrap, {"group.id": "nt-lp", "fetch.wait.max.ms": 20000,
                                           "enable.auto.commit": False}))
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.time() + 40
        try:
            while time.time() < deadline and "stop" not in got:
                m = c.poll(0.2)
                if m is not None and not m.error():
                    got["confluent"] = (time.time(), m.offset(), m.value())
                    return
        finally:
            c.close()

    def kafkapython_wait():
        c = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                fetch_max_wait_ms=20000, request_timeout_ms=40000,
                                client_id="nt-kafka-python")
        tp = KTopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 0)
        deadline = time.time() + 40
        try:
            while time.time() < deadline and "stop" not in got:
                for _, msgs in c.poll(timeout_ms=200).items():
                    for m in msgs:
                        got["kafka-python"] = (time.time(), m.offset, m.value)
                        return
        finally:
            c.close()

    threads = [threading.Thread(target=confluent_wait), threading.Thread(target=kafkapython_wait)]
    for t in threads:
        t.start()
    time.sleep(4)   # both connected and parked (their first fetch at offset 0 finds nothing)
    check(not got, "a consumer got a record before any was produced to partition 0: %r" % got)
    t0 = time.time()
    rep = produce_one(bootstrap, topic, 0, b"wake-2")
    check(rep[:2] == (0, 0), "the second waking record was acknowledged at %s" % (rep[:2],))
    for t in threads:
        t.join(max(0.1, t0 + 10 - time.time()))
    got["stop"] = True
    for t in threads:
        t.join(30)
    for who in ("confluent", "kafka-python"):
        check(who in got,
              "the %s consumer (fetch.wait.max.ms 20s) did not get the record within 10s" % who)
        when, off, value = got[who]
        check(off == 0 and value == b"wake-2",
              "the %s consumer got offset %d value %r" % (who, off, value))
        check(when - t0 < 10,
              "the %s consumer got the record %.1fs after it was produced" % (who, when - t0))
        info("%s consumer woken %.2fs after the produce" % (who, when - t0))


# ---- delete and recreate -----------------------------------------------------------------------

def recreate_topic(bootstrap, admin, topic):
    """Create topic again after its DeleteTopics. Kafka answers TOPIC_ALREADY_EXISTS while a
    deletion is still pending, so try until it is accepted. Returns the attempts made."""
    deadline = time.time() + 30
    tries = 0
    while True:
        tries += 1
        res = wait_futures(admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)]),
                           "create")
        e = res[topic]
        if e is None:
            return tries
        check(error_code(e) == KafkaError.TOPIC_ALREADY_EXISTS, "creating %s again: %s" % (topic, e))
        check(time.time() < deadline, "%s still exists 30s after DeleteTopics" % topic)
        time.sleep(0.2)


def recreate_cycle(bootstrap, admin, topic, cycle, before):
    """topic holds `before` records: 100 more, delete, create again, check it is empty,
    10 records, check it holds exactly those."""
    first = [(b"old-%d" % n, b"old-%d-%d" % (cycle, n), None, None, None) for n in range(100)]
    produce(bootstrap, topic, first, extra={"client.id": "nt-old", "compression.type": "none"})
    wm = wait_ready(bootstrap, admin, topic, 3)
    check(sum(h for _, h in wm) == before + 100, "%s holds %s before the delete, expected %d records"
          % (topic, wm, before + 100))

    # A fetch parked on the topic holds its partition 0 across the delete.
    parked = park_fetches(bootstrap, topic, [(0, wm[0][1])], 1, 5000)[0]
    time.sleep(0.3)
    res = wait_futures(admin.delete_topics([topic]), "delete")
    check(res[topic] is None, "DeleteTopics %s: %s" % (topic, res[topic]))
    parked.sock.settimeout(20)
    try:
        _, body = parked.recv()
    except kwire.Timeout:
        fail("the fetch parked on %s (MaxWaitTime 5s) was not answered within 20s of the delete" % topic)
    except kwire.Closed:
        body = None
    parked.close()
    if body is not None:
        ans = parse_fetch_v4(body)
        check(all(not recs for _, _, recs in ans.values()),
              "the parked fetch on the deleted topic got records: %r" % ans)
        parked_how = "answered with error %s" % {p: e for p, (e, _, _) in ans.items()}
    else:
        parked_how = "closed"

    tries = recreate_topic(bootstrap, admin, topic)
    wm = wait_ready(bootstrap, admin, topic, 3)
    check(wm == [(0, 0)] * 3,
          "%s created again holds %s (low, high per partition), expected empty" % (topic, wm))

    c = Consumer(base_conf(bootstrap, {"group.id": "nt-empty", "enable.auto.commit": False}))
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(3)])
    stale = []
    end = time.time() + 3
    while time.time() < end:
        m = c.poll(0.2)
        if m is not None and not m.error():
            stale.append((m.partition(), m.offset(), m.value()))
    c.close()
    check(not stale, "%s created again: consuming from the beginning got %d records, first %r"
          % (topic, len(stale), stale[:3]))

    new = [(b"new-%d" % n, b"new-%d-%d" % (cycle, n), None, None, None) for n in range(10)]
    reports = produce(bootstrap, topic, new, extra={"client.id": "nt-new", "compression.type": "none"})
    got = consume_all(bootstrap, topic)
    values = sorted(m.value() for msgs in got.values() for m in msgs)
    check(values == sorted(v for _, v, _, _, _ in new),
          "%s created again holds %d records %r, expected the 10 new ones"
          % (topic, len(values), values[:12]))
    for p, msgs in got.items():
        check([m.offset() for m in msgs] == list(range(len(msgs))),
              "%s [%d]: offsets %s" % (topic, p, [m.offset() for m in msgs]))
    consumed = sorted((m.partition(), m.offset()) for ms in got.values() for m in ms)
    check(sorted((p, o) for p, o, _ in reports) == consumed,
          "acknowledged offsets differ from the consumed ones")
    info("cycle %d: %s with %d records deleted (the fetch parked on it %s), created again "
         "(%d attempt(s)) empty; then holds exactly the 10 new records"
         % (cycle + 1, topic, before + 100, parked_how, tries))


def run_recreate(bootstrap, cycles):
    admin = admin_client(bootstrap)
    topic = "nt-recreate"
    create_topic(bootstrap, admin, topic, 3)
    for cycle in range(cycles):
        recreate_cycle(bootstrap, admin, topic, cycle, 0 if cycle == 0 else 10)


def main(argv):
    cmd, bootstrap = argv[1], argv[2]
    if cmd == "create":
        create_topic(bootstrap, admin_client(bootstrap), argv[3], int(argv[4]))
    elif cmd == "load":
        run_load(bootstrap, argv[3], int(argv[4]), int(argv[5]))
    elif cmd == "verify-load":
        run_verify_load(bootstrap, argv[3])
    elif cmd == "background":
        run_background(bootstrap, argv[3], argv[4], argv[5])
    elif cmd == "longpoll":
        run_longpoll(bootstrap)
    elif cmd == "recreate":
        run_recreate(bootstrap, int(argv[3]))
    else:
        fail("unknown command %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)
