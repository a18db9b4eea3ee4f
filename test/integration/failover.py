#!/usr/bin/python3
"""Test 25's checks of leader failover and AlterPartition, reading ZooKeeper directly.

    failover.py ZK create BOOTSTRAP TOPIC N RF      create the topic, wait for its states
    failover.py ZK leader TOPIC P                   print the leader of TOPIC-P
    failover.py ZK controller                       print the controller's broker id
    failover.py ZK save TOPIC FILE                  the partition states into FILE (JSON)
    failover.py ZK failed-over TOPIC FILE DEAD BOOTSTRAP SECONDS
        every partition led by a live broker of its old ISR, the leader epoch up where the
        leader or the ISR changed, DEAD in no ISR, and BOOTSTRAP's Metadata the same
    failover.py ZK alter TOPIC CONTROLLER OTHER     AlterPartition against the controller
        (host:port) and a broker that is not the controller
    failover.py ZK shutdown TOPIC CONTROLLER OTHER  ControlledShutdown of partition 0's leader
ZK is host:port (the chroot /streamflow is prefixed here). Exit 1 with a message on failure.
"""
import base64
import json
import os
import signal
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kwire  # noqa: E402
import zkq  # noqa: E402

ROOT = "/streamflow"
API_ALTER_PARTITION = 56
NONE, NOT_LEADER, NOT_CONTROLLER, STALE_BROKER_EPOCH = 0, 6, 41, 77
FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, UNKNOWN_TOPIC_ID = 74, 95, 100
INELIGIBLE_REPLICA, INVALID_REQUEST = 107, 42


def die(msg):
    print("  " + msg)
    sys.exit(1)


def zget(zk, path):
    s = zkq.Session(zk)
    try:
        return s.get(ROOT + path)
    finally:
        s.close()


def live_brokers(zk):
    s = zkq.Session(zk)
    try:
        return {int(c) for c in s.children(ROOT + "/brokers/ids")}
    finally:
        s.close()


def states(zk, topic):
    """{partition: {"leader", "leader_epoch", "isr", "version"}} (absent states left out)."""
    out = {}
    s = zkq.Session(zk)
    try:
        for c in s.children(ROOT + "/brokers/topics/%s/partitions" % topic):
            try:
                data, stat = s.get(ROOT + "/brokers/topics/%s/partitions/%s/state" % (topic, c))
            except zkq.NoNode:
                continue
            st = json.loads(data)
            out[int(c)] = {"leader": st["leader"], "leader_epoch": st["leader_epoch"],
                           "isr": st["isr"], "version": stat["version"]}
    except zkq.NoNode:
        pass
    finally:
        s.close()
    return out


def topic_id(zk, topic):
    data, _ = zget(zk, "/brokers/topics/" + topic)
    tid = json.loads(data)["topic_id"]
    return base64.urlsafe_b64decode(tid + "=" * (-len(tid) % 4))


def replicas(zk, topic):
    data, _ = zget(zk, "/brokers/topics/" + topic)
    return {int(p): r for p, r in json.loads(data)["partitions"].items()}


def wait_for(seconds, what, fn):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        ok, last = fn()
        if ok:
            return last
        time.sleep(0.2)
    die("%s not within %ds: %s" % (what, seconds, last))


def cmd_create(zk, bootstrap, topic, n, rf):
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fut = admin.create_topics([NewTopic(topic, int(n), int(rf))], request_timeout=30)[topic]
    fut.result(30)
    reps = replicas(zk, topic)

    def ready():
        st = states(zk, topic)
        ok = len(st) == int(n) and all(
            st[p]["isr"] == reps[p] and st[p]["leader"] == reps[p][0] and
            st[p]["leader_epoch"] == 0 for p in st)
        return ok, st
    wait_for(15, "states with ISR = every replica in assignment order", ready)


def cmd_failed_over(zk, topic, before_file, dead, bootstrap, seconds):
    before = {int(k): v for k, v in json.load(open(before_file)).items()}
    dead = int(dead)

    def done():
        live = live_brokers(zk)
        if dead in live:
            return False, "broker %d still registered" % dead
        st = states(zk, topic)
        for p, old in before.items():
            cur = st.get(p)
            if cur is None:
                return False, "partition %d has no state" % p
            if cur["leader"] not in live or cur["leader"] not in old["isr"]:
                return False, "partition %d: leader %s (old ISR %s, live %s)" % (
                    p, cur["leader"], old["isr"], sorted(live))
            if dead in cur["isr"]:
                return False, "partition %d: ISR %s still holds %d" % (p, cur["isr"], dead)
            if dead in old["isr"] and cur["leader_epoch"] <= old["leader_epoch"]:
                return False, "partition %d: leader epoch %d not above %d" % (
                    p, cur["leader_epoch"], old["leader_epoch"])
            if old["leader"] == dead and cur["leader"] == dead:
                return False, "partition %d still led by %d" % (p, dead)
        return True, st
    st = wait_for(int(seconds), "failover off broker %d" % dead, done)
    moved = sum(1 for p in before if before[p]["leader"] == dead)
    print("  %d partition(s) moved off broker %d: %s" % (
        moved, dead, {p: (v["leader"], v["isr"], v["leader_epoch"]) for p, v in st.items()}))
    if not moved:
        die("broker %d led no partition: nothing was tested" % dead)

    def metadata_agrees():
        try:
            c = kwire.Conn(bootstrap)
            try:
                _, _, topics = kwire.metadata_v1(c, [topic])
            finally:
                c.close()
        except Exception as e:  # noqa: BLE001 - retried until the deadline
            return False, str(e)
        parts = topics.get(topic, (None, {}))[1]
        for p, v in st.items():
            got = parts.get(p)
            if not got or got[1] != v["leader"] or sorted(got[3]) != sorted(v["isr"]):
                return False, "partition %d: metadata %s, ZooKeeper %s" % (p, got, v)
        return True, None
    wait_for(10, "Metadata from %s agreeing with ZooKeeper" % bootstrap, metadata_agrees)


# ---- AlterPartition ----

def alter_body(version, broker, broker_epoch, topic, parts):
    """parts: [(partition, leader_epoch, isr, partition_epoch, isr_epochs or None)]."""
    b = kwire.i32(broker) + kwire.i64(broker_epoch) + kwire.uvarint(2)
    b += topic if version >= 2 else kwire.compact_string(topic)
    b += kwire.uvarint(len(parts) + 1)
    for p, le, isr, pe, eps in parts:
        b += kwire.i32(p) + kwire.i32(le)
        if version >= 3:
            b += kwire.uvarint(len(isr) + 1)
            for i, e in zip(isr, eps or [-1] * len(isr)):
                b += kwire.i32(i) + kwire.i64(e) + b"\0"
        else:
            b += kwire.uvarint(len(isr) + 1) + b"".join(kwire.i32(i) for i in isr)
        if version >= 1:
            b += kwire.i8(0)
        b += kwire.i32(pe) + b"\0"
    return b + b"\0" + b"\0"


def alter(hostport, version, body):
    c = kwire.Conn(hostport)
    try:
        corr = c.send(API_ALTER_PARTITION, version, body, flexible_header=True)
        rcorr, resp = c.recv()
    finally:
        c.close()
    if rcorr != corr:
        die("AlterPartition: correlation id %d, expected %d" % (rcorr, corr))
    r = kwire.Reader(resp)
    r.tagged()
    r.i32()
    top = r.i16()
    parts = {}
    for _ in range(r.uvarint() - 1):
        if version >= 2:
            r.take(16)
        else:
            r.compact_string()
        for _ in range(r.uvarint() - 1):
            p, err, leader, le = r.i32(), r.i16(), r.i32(), r.i32()
            isr = [r.i32() for _ in range(r.uvarint() - 1)]
            if version >= 1:
                r.i8()
            pe = r.i32()
            r.tagged()
            parts[p] = (err, leader, le, isr, pe)
        r.tagged()
    return top, parts


def expect(what, got, want):
    if got != want:
        die("%s: got %s, expected %s" % (what, got, want))
    print("  %s: %s" % (what, got))


def alter_target(zk, topic, controller_id):
    """A partition with a live leader other than the controller and another live replica."""
    st, reps = states(zk, topic), replicas(zk, topic)
    live = live_brokers(zk)
    return next(p for p in sorted(st) if st[p]["leader"] in live and
                st[p]["leader"] != controller_id and
                any(r in live and r != st[p]["leader"] for r in reps[p]))


def cmd_alter(zk, topic, controller, other, p):
    # The caller holds the partition's leader stopped: its own ISR changes would race ours.
    st, reps = states(zk, topic), replicas(zk, topic)
    live = live_brokers(zk)
    p = int(p)
    s = st[p]
    leader, le, pe = s["leader"], s["leader_epoch"], s["version"]
    peer = next(r for r in reps[p] if r in live and r != leader)
    epoch = {b: zget(zk, "/brokers/ids/%d" % b)[1]["czxid"] for b in (leader, peer)}
    tid = topic_id(zk, topic)
    print("  partition %d: leader %d, epoch %d, version %d, ISR %s; peer %d" % (
        p, leader, le, pe, s["isr"], peer))
    full, alone = [leader, peer], [leader]

    top, _ = alter(other, 0, alter_body(0, leader, epoch[leader], topic,
                                        [(p, le, alone, pe, None)]))
    expect("a broker that is not the controller", top, NOT_CONTROLLER)
    top, _ = alter(controller, 0, alter_body(0, leader, epoch[leader] + 1, topic,
                                             [(p, le, alone, pe, None)]))
    expect("a stale broker epoch", top, STALE_BROKER_EPOCH)
    _, r = alter(controller, 0, alter_body(0, leader, epoch[leader], topic,
                                           [(p, le, alone if s["isr"] != alone else full,
                                             pe - 1, None)]))
    expect("a stale partition epoch", r[p][0], INVALID_UPDATE_VERSION)
    _, r = alter(controller, 0, alter_body(0, leader, epoch[leader], topic,
                                           [(p, le + 1, alone, pe, None)]))
    expect("a wrong leader epoch", r[p][0], FENCED_LEADER_EPOCH)
    _, r = alter(controller, 0, alter_body(0, peer, epoch[peer], topic,
                                           [(p, le, [peer], pe, None)]))
    expect("a requester that does not lead", r[p][0], NOT_LEADER)
    _, r = alter(controller, 0, alter_body(0, leader, epoch[leader], topic,
                                           [(p, le, [peer], pe, None)]))
    expect("an ISR without the leader", r[p][0], INVALID_REQUEST)
    _, r = alter(controller, 2, alter_body(2, leader, epoch[leader], b"\1" * 16,
                                           [(p, le, alone, pe, None)]))
    expect("an unknown topic id (v2)", r[p][0], UNKNOWN_TOPIC_ID)
    _, r = alter(controller, 3, alter_body(3, leader, epoch[leader], tid,
                                           [(p, le, full, pe, [epoch[leader], epoch[peer] + 7])]))
    expect("a member with a wrong broker epoch (v3)", r[p][0], INELIGIBLE_REPLICA)

    # Valid: grow to [leader, peer] (v3, with epochs), then shrink to [leader] (v0).
    for version, isr, eps in ((3, full, [epoch[b] for b in full]), (0, alone, None)):
        cur = states(zk, topic)[p]
        if sorted(cur["isr"]) == sorted(isr):
            continue
        _, r = alter(controller, version, alter_body(
            version, leader, epoch[leader], tid if version >= 2 else topic,
            [(p, le, isr, cur["version"], eps)]))
        err, rl, rle, risr, rpe = r[p]
        expect("ISR %s (v%d): error" % (isr, version), err, NONE)
        now = states(zk, topic)[p]
        expect("ISR %s (v%d): the state znode" % (isr, version),
               (now["leader"], now["leader_epoch"], now["isr"], now["version"]),
               (leader, le, isr, cur["version"] + 1))
        expect("ISR %s (v%d): the answer" % (isr, version), (rl, rle, risr, rpe),
               (leader, le, isr, now["version"]))
    # The same ISR again (a retry): the current state, nothing written.
    cur = states(zk, topic)[p]
    _, r = alter(controller, 0, alter_body(0, leader, epoch[leader], topic,
                                           [(p, le, cur["isr"], cur["version"], None)]))
    expect("the current ISR again", (r[p][0], r[p][4], states(zk, topic)[p]["version"]),
           (NONE, cur["version"], cur["version"]))


# ---- ControlledShutdown ----

API_CONTROLLED_SHUTDOWN = 7


def shutdown(hostport, version, broker, broker_epoch):
    """ControlledShutdown -> (error, [(topic, partition)]); v0 has request header v0."""
    body = kwire.i32(broker) + (kwire.i64(broker_epoch) if version >= 2 else b"")
    c = kwire.Conn(hostport)
    try:
        if version == 0:
            c.corr += 1
            corr = c.corr
            payload = kwire.i16(API_CONTROLLED_SHUTDOWN) + kwire.i16(0) + kwire.i32(corr) + body
            c.send_raw(kwire.i32(len(payload)) + payload)
        else:
            corr = c.send(API_CONTROLLED_SHUTDOWN, version, body + (b"\0" if version >= 3 else b""),
                          flexible_header=version >= 3)
        rcorr, resp = c.recv()
    finally:
        c.close()
    if rcorr != corr:
        die("ControlledShutdown: correlation id %d, expected %d" % (rcorr, corr))
    r = kwire.Reader(resp)
    if version >= 3:
        r.tagged()
    err = r.i16()
    n = r.uvarint() - 1 if version >= 3 else r.i32()
    left = []
    for _ in range(n):
        name = r.compact_string() if version >= 3 else r.string()
        left.append((name, r.i32()))
        if version >= 3:
            r.tagged()
    return err, left


def cmd_shutdown(zk, topic, controller, brokers):
    """@brokers: "id=host:port=pid,..." for every broker."""
    # Every replica back in the ISR first (the leaders grow their ISRs as followers catch up).
    reps = replicas(zk, topic)
    wait_for(30, "every ISR full", lambda: (all(
        sorted(s["isr"]) == sorted(reps[p]) for p, s in states(zk, topic).items()), None))
    before = states(zk, topic)
    ctrl_id = json.loads(zget(zk, "/controller")[0])["brokerid"]
    addr, pid = {}, {}
    for b in brokers.split(","):
        i, a, p = b.split("=")
        addr[int(i)], pid[int(i)] = a, int(p)
    victim = next(s["leader"] for _, s in sorted(before.items()) if s["leader"] != ctrl_id)
    other = addr[next(i for i in addr if i not in (ctrl_id, victim))]
    # Held stopped: a running victim would catch up and be taken back into the ISRs, which a
    # broker that shuts down does not live to see.
    os.kill(pid[victim], signal.SIGSTOP)
    try:
        shutdown_checks(zk, topic, controller, other, victim, before)
    finally:
        os.kill(pid[victim], signal.SIGCONT)


def shutdown_checks(zk, topic, controller, other, victim, before):
    epoch = zget(zk, "/brokers/ids/%d" % victim)[1]["czxid"]
    print("  every ISR full; controlled shutdown of broker %d" % victim)
    expect("ControlledShutdown to a broker that is not the controller",
           shutdown(other, 3, victim, epoch)[0], NOT_CONTROLLER)
    expect("ControlledShutdown with a stale broker epoch",
           shutdown(controller, 3, victim, epoch + 1)[0], STALE_BROKER_EPOCH)
    # As a broker does: ask again while partitions remain (the controller's metadata may not
    # show the ISR changes above yet: its versioned writes then lose and are left for later).
    for attempt in range(20):
        got = shutdown(controller, 3, victim, epoch)
        if got[0] != NONE or not got[1]:
            break
        print("  attempt %d: still leading %s" % (attempt + 1, got[1]))
        time.sleep(0.5)
    expect("ControlledShutdown v3", got, (NONE, []))
    after = states(zk, topic)
    for p, old in before.items():
        cur = after[p]
        if cur["leader"] == victim or victim in cur["isr"] or cur["leader"] not in old["isr"]:
            die("partition %d after the controlled shutdown: %s (before %s)" % (p, cur, old))
        if cur["leader_epoch"] != old["leader_epoch"] + 1:
            die("partition %d: leader epoch %d, expected %d" % (
                p, cur["leader_epoch"], old["leader_epoch"] + 1))
    print("  broker %d leads nothing and is in no ISR: %s" % (
        victim, {p: (v["leader"], v["isr"]) for p, v in after.items()}))
    # Once the controller's metadata shows the moves, nothing is left to do.
    for attempt in range(20):
        got = shutdown(controller, 0, victim, -1)
        if got[0] != NONE or not got[1]:
            break
        time.sleep(0.5)
    expect("ControlledShutdown v0 again (nothing left)", got, (NONE, []))
    expect("the states after it", states(zk, topic) == after, True)


def main(argv):
    zk, cmd, args = argv[1], argv[2], argv[3:]
    if cmd == "create":
        cmd_create(zk, *args)
    elif cmd == "leader":
        print(states(zk, args[0])[int(args[1])]["leader"])
    elif cmd == "controller":
        print(json.loads(zget(zk, "/controller")[0])["brokerid"])
    elif cmd == "save":
        json.dump(states(zk, args[0]), open(args[1], "w"))
    elif cmd == "failed-over":
        cmd_failed_over(zk, *args)
    elif cmd == "alter-target":
        p = alter_target(zk, args[0], int(args[1]))
        print(p, states(zk, args[0])[p]["leader"])
    elif cmd == "alter":
        cmd_alter(zk, *args)
    elif cmd == "shutdown":
        cmd_shutdown(zk, *args)
    else:
        die("unknown command " + cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
