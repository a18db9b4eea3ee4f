#!/usr/bin/python3
"""Test 35's consumer-group scenarios, each group member a process of its own.

    group_scenarios.py kill9 BOOTSTRAP ZK DIR
        group gk on topic t6 (6 partitions): three members commit synchronously after each
        batch while a producer (acks=all) runs; one member is killed (SIGKILL) once each holds
        2 partitions; the two others must own all 6 within the session timeout + 10 s. After
        the producer stops and they drain: every acknowledged record was processed at least
        once and the offsets in ZooKeeper are the high watermarks.
    group_scenarios.py cooperative BOOTSTRAP ZK DIR
        group gc on t6 with cooperative-sticky: three members, then one closes; the two
        others lose nothing and gain only the leaver's partitions.
    group_scenarios.py fanout BOOTSTRAP ZK DIR
        topic t3 (3 partitions), group gf1 (1 member) and gf2 (3 members), 3000 records: gf1
        receives all of them, gf2's members all of them between them, each from its own
        partitions only.
The driver starts the members (and the producer) as child processes:
    group_scenarios.py member BOOTSTRAP GROUP TOPIC NAME DIR STRATEGY RESET
        appends "partition offset value" of every record it processes to DIR/NAME.out
        (flushed before each synchronous commit), keeps its state in DIR/NAME.json (JSON:
        assignment, rebalance events, committed offsets, errors) and closes once DIR/NAME.stop
        exists
    group_scenarios.py producer BOOTSTRAP TOPIC PARTITIONS DIR RATE
        numbered records (record n to partition n % PARTITIONS, RATE a second, acks=all)
        until DIR/producer.stop exists; "partition offset n" of each acknowledged one in
        DIR/acked.txt, a summary in DIR/producer.json
ZK is host:port (paths here include the /streamflow chroot). Exit 1 with a FAIL: line.
"""
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zkq  # noqa: E402
from sftest import base_conf, check, fail, info, produce  # noqa: E402

from confluent_kafka import (Consumer, KafkaError, KafkaException, Producer,  # noqa: E402
                             TopicPartition)

ROOT = "/streamflow"
SESSION_MS = 6000
HEARTBEAT_MS = 500
MEMBER_LIFETIME = 170    # seconds: a member left behind exits on its own
HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------------------
# the member process

def lifetime():
    t = threading.Timer(MEMBER_LIFETIME, lambda: os._exit(3))
    t.daemon = True
    t.start()


def write_json(path, obj):
    with open(path + ".new", "w") as f:
        json.dump(obj, f)
    os.replace(path + ".new", path)


def cmd_member(boot, group, topic, name, d, strategy, reset):
    lifetime()
    out = open(os.path.join(d, name + ".out"), "a")
    status_path = os.path.join(d, name + ".json")
    stop_path = os.path.join(d, name + ".stop")
    st = {"name": name, "pid": os.getpid(), "assignment": [], "events": [], "processed": 0,
          "committed": {}, "commit_failures": 0, "errors": [], "closed": False, "time": 0}
    pending = {}         # partition -> offset processed (flushed) but not yet committed

    def error(what):
        st["errors"] = (st["errors"] + [what])[-10:]

    c = Consumer(base_conf(boot, {
        "group.id": group, "client.id": name, "auto.offset.reset": reset,
        "enable.auto.commit": False, "session.timeout.ms": SESSION_MS,
        "heartbeat.interval.ms": HEARTBEAT_MS, "partition.assignment.strategy": strategy,
        "error_cb": lambda e: error("client: %s" % e)}))

    def save():
        try:
            st["assignment"] = sorted(tp.partition for tp in c.assignment())
        except (KafkaException, RuntimeError):
            pass
        st["time"] = time.time()
        write_json(status_path, st)

    def event(kind):
        # Without an assign/unassign call here confluent-kafka applies the change itself
        # (incremental_assign / incremental_unassign with a COOPERATIVE protocol).
        def cb(_c, tps):
            parts = sorted(tp.partition for tp in tps)
            st["events"].append([time.time(), kind, parts])
            if kind != "assign":
                for p in parts:
                    pending.pop(p, None)
            save()
        return cb

    def commit_pending():
        owned = {tp.partition for tp in c.assignment()}
        for p in [p for p in pending if p not in owned]:
            del pending[p]
        if not pending:
            return
        want = dict(pending)
        try:
            res = c.commit(offsets=[TopicPartition(topic, p, o) for p, o in want.items()],
                           asynchronous=False)
        except KafkaException as e:
            st["commit_failures"] += 1
            error("commit %s: %s" % (want, e))
            return
        for tp in res:
            if tp.error is not None:
                st["commit_failures"] += 1
                error("commit %d:%d: %s" % (tp.partition, tp.offset, tp.error))
                continue
            st["committed"][str(tp.partition)] = tp.offset
            if pending.get(tp.partition) == tp.offset:
                del pending[tp.partition]

    c.subscribe([topic], on_assign=event("assign"), on_revoke=event("revoke"),
                on_lost=event("lost"))
    last_save = 0
    while not os.path.exists(stop_path):
        batch = {}
        for m in c.consume(num_messages=500, timeout=0.2):
            err = m.error()
            if err is not None:
                if err.code() != KafkaError._PARTITION_EOF:
                    error("consume: %s" % err)
                continue
            out.write("%d %d %s\n" % (m.partition(), m.offset(), m.value().decode()))
            batch[m.partition()] = m.offset() + 1
            st["processed"] += 1
        if batch:
            out.flush()
            pending.update(batch)
        commit_pending()
        if batch or time.time() - last_save > 0.2:
            save()
            last_save = time.time()
    commit_pending()
    save()
    c.close()
    st["closed"] = True
    st["time"] = time.time()
    write_json(status_path, st)
    out.close()
    os._exit(0)


# ---------------------------------------------------------------------------------------
# the producer process

def cmd_producer(boot, topic, nparts, d, rate):
    lifetime()
    nparts, rate = int(nparts), float(rate)
    acked = open(os.path.join(d, "acked.txt"), "w")
    stop_path = os.path.join(d, "producer.stop")
    stats = {"sent": 0, "acked": 0, "failed": 0, "errors": []}
    p = Producer(base_conf(boot, {"acks": "all", "linger.ms": 5, "enable.idempotence": False,
                                  "message.timeout.ms": 60000}))

    def on_delivery(err, msg):
        if err is not None:
            stats["failed"] += 1
            stats["errors"] = (stats["errors"] + [str(err)])[-5:]
            return
        stats["acked"] += 1
        acked.write("%d %d %s\n" % (msg.partition(), msg.offset(), msg.value().decode()))

    t0 = time.time()
    n = 0
    while not os.path.exists(stop_path):
        due = int((time.time() - t0) * rate)
        while n < due:
            try:
                p.produce(topic, value=b"%d" % n, partition=n % nparts, on_delivery=on_delivery)
            except BufferError:
                break
            n += 1
        p.poll(0.02)
        acked.flush()
    stats["sent"] = n
    stats["unresolved"] = p.flush(60)
    acked.close()
    write_json(os.path.join(d, "producer.json"), stats)
    os._exit(0)


# ---------------------------------------------------------------------------------------
# the driver

class Child:
    def __init__(self, d, name, args):
        self.name, self.d = name, d
        self.logpath = os.path.join(d, name + ".log")
        log = open(self.logpath, "w")
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__)] + args,
                                  stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  preexec_fn=die_with_parent, cwd=HERE)
        log.close()
        self.killed = self.stopped = False

    def status(self):
        try:
            with open(os.path.join(self.d, self.name + ".json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def assignment(self):
        s = self.status()
        return s["assignment"] if s else []

    def get(self, key, default=0):
        s = self.status()
        return s[key] if s else default

    def stop(self):
        self.stopped = True
        open(os.path.join(self.d, self.name + ".stop"), "w").close()

    def tail(self):
        try:
            with open(self.logpath) as f:
                return " | ".join(f.read().splitlines()[-8:])
        except OSError:
            return ""


LIBC = ctypes.CDLL(None)
PR_SET_PDEATHSIG = 1


def die_with_parent():
    """In the child before exec: SIGKILL when the driver dies."""
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


CHILDREN = []


def spawn(d, name, args):
    ch = Child(d, name, args)
    CHILDREN.append(ch)
    return ch


def member(boot, d, group, topic, name, strategy="range", reset="earliest"):
    return spawn(d, name, ["member", boot, group, topic, name, d, strategy, reset])


def reap_all():
    for ch in CHILDREN:
        if ch.p.poll() is None:
            ch.p.kill()
            ch.p.wait()


def check_alive():
    for ch in CHILDREN:
        if not (ch.killed or ch.stopped) and ch.p.poll() is not None:
            fail("%s exited with status %s before it was told to (its log: %s)"
                 % (ch.name, ch.p.returncode, ch.tail()))


def wait_for(cond, seconds, what, detail=lambda: ""):
    """Poll COND every 0.1 s for up to SECONDS; returns the seconds it took."""
    t0 = time.time()
    while not cond():
        check_alive()
        if time.time() - t0 > seconds:
            fail("%s: not within %ds%s" % (what, seconds, detail()))
        time.sleep(0.1)
    return time.time() - t0


def settled(members, seconds, what, cond):
    """Wait until COND holds and the members' assignments stay unchanged for SECONDS."""
    deadline = time.time() + 60
    while True:
        wait_for(cond, max(1, deadline - time.time()), what, lambda: assignments(members))
        snap = [m.assignment() for m in members]
        end = time.time() + seconds
        while time.time() < end and cond() and [m.assignment() for m in members] == snap:
            time.sleep(0.1)
        if time.time() >= end:
            return snap
        check(time.time() < deadline, "%s: assignments not settled within 60s: %s"
              % (what, assignments(members)))


def brief(members):
    """What the members say of themselves, for a failure message."""
    keys = ("assignment", "processed", "committed", "commit_failures", "errors")
    return {m.name: {k: (m.status() or {}).get(k) for k in keys} for m in members}


def assignments(members):
    return " (assignments %s)" % {m.name: m.assignment() for m in members}


def partitioned(members, nparts, each=None):
    """The members' assignments are disjoint, cover 0..nparts-1 (each of EACH partitions)."""
    a = [m.assignment() for m in members]
    flat = sorted(p for ps in a for p in ps)
    return flat == list(range(nparts)) and (each is None or all(len(ps) == each for ps in a))


def wait_exit(ch, seconds):
    try:
        rc = ch.p.wait(seconds)
    except subprocess.TimeoutExpired:
        fail("%s did not exit within %ds of being told to (its log: %s)"
             % (ch.name, seconds, ch.tail()))
    check(rc == 0, "%s exited with status %d (its log: %s)" % (ch.name, rc, ch.tail()))


def zk_offsets(zk, group, topic):
    s = zkq.Session(zk)
    try:
        base = "%s/consumers/%s/offsets/%s" % (ROOT, group, topic)
        try:
            kids = s.children(base)
        except zkq.NoNode:
            return {}
        out = {}
        for k in kids:
            data, _ = s.get(base + "/" + k)
            text = data.decode(errors="replace")
            check(text.isdigit(), "%s/%s holds %r, not a decimal offset" % (base, k, data))
            out[int(k)] = int(text)
        return out
    finally:
        s.close()


def high_watermarks(boot, topic, nparts):
    c = Consumer(base_conf(boot, {"group.id": "gs-watermarks"}))
    try:
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1]
                for p in range(nparts)}
    finally:
        c.close()


def read_records(path, tolerate_torn_tail=False):
    """[(partition, offset, value)] of a file of "partition offset value" lines."""
    out = []
    with open(path) as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines and tolerate_torn_tail:
        lines.pop()      # a process killed in the middle of a write
    for i, line in enumerate(lines):
        parts = line.split()
        check(len(parts) == 3 and all(x.isdigit() for x in parts),
              "%s line %d: %r" % (path, i + 1, line))
        out.append(tuple(int(x) for x in parts))
    return out


def check_against(reports, recs, who):
    """Each processed (partition, offset, value) is where the producer's report put value."""
    for p, off, n in recs:
        check(reports.get((p, off)) == n, "%s processed record %d at %d/%d, acknowledged at %s"
              % (who, n, p, off, [k for k, v in reports.items() if v == n][:1] or "none"))


def events_after(st, t):
    return [(kind, parts) for ts, kind, parts in st["events"] if ts > t]


# ---------------------------------------------------------------------------------------
# 1. kill -9 of a member

def cmd_kill9(boot, zk, d):
    topic, group, nparts = "t6", "gk", 6
    prod = spawn(d, "producer", ["producer", boot, topic, str(nparts), d, "500"])
    acked_path = os.path.join(d, "acked.txt")

    def acked():
        try:
            with open(acked_path) as f:
                return sum(1 for _ in f)
        except OSError:
            return 0

    wait_for(lambda: acked() > 0, 30, "the producer's first acknowledgement")
    members = [member(boot, d, group, topic, n) for n in ("gk-a", "gk-b", "gk-c")]

    def committed_own(m):
        s = m.status()
        return s is not None and all(str(p) in s["committed"] for p in s["assignment"])

    took = wait_for(lambda: partitioned(members, nparts, 2) and
                    all(committed_own(m) and m.get("processed") > 0 for m in members), 60,
                    "3 members of %s with 2 partitions each, consuming and committing" % group,
                    lambda: assignments(members))
    info("%s: 3 members with 2 partitions each after %.1fs: %s; each processing and committing"
         % (group, took, {m.name: m.assignment() for m in members}))

    victim = members[1]
    survivors = [members[0], members[2]]
    lost = victim.assignment()
    t_kill = time.time()
    victim.killed = True
    os.kill(victim.p.pid, signal.SIGKILL)
    victim.p.wait()
    info("%s (partitions %s) killed (SIGKILL) at %d records acknowledged"
         % (victim.name, lost, acked()))
    limit = SESSION_MS / 1000 + 10

    def taken_over():
        return all(m.get("time") > t_kill for m in survivors) and partitioned(survivors, nparts)

    wait_for(taken_over, limit, "the two survivors owning all %d partitions after the kill "
             "(session timeout %ds + 10s)" % (nparts, SESSION_MS // 1000),
             lambda: assignments(survivors))
    seen_at = time.time() - t_kill
    # The moment of the takeover: the survivors' last assignment callback after the kill.
    assigned = [ts for m in survivors for ts, kind, ps in m.get("events", [])
                if ts > t_kill and kind == "assign" and ps]
    check(assigned, "the survivors own all partitions without an assignment callback")
    takeover = max(assigned) - t_kill
    info("TAKEOVER: the survivors own all %d partitions %.2fs after the kill (seen %.2fs "
         "after; limit %.0fs): %s" % (nparts, takeover, seen_at, limit,
                                     {m.name: m.assignment() for m in survivors}))
    check(takeover < limit, "takeover took %.1fs, limit %.0fs" % (takeover, limit))

    # Records produced after the takeover land on the victim's partitions too.
    base = acked()
    wait_for(lambda: acked() >= base + 1000, 30, "1000 more acknowledgements after the takeover")
    prod.stop()
    wait_exit(prod, 90)
    with open(os.path.join(d, "producer.json")) as f:
        ps = json.load(f)
    check(ps["failed"] == 0 and ps["unresolved"] == 0 and ps["acked"] == ps["sent"],
          "producer: %s" % ps)
    reports = {}
    for p, off, n in read_records(acked_path):
        check((p, off) not in reports, "two records acknowledged at %d/%d" % (p, off))
        reports[(p, off)] = n
    check(sorted(reports.values()) == list(range(ps["sent"])),
          "the acknowledged records are not 0..%d" % (ps["sent"] - 1))
    hw = {p: 0 for p in range(nparts)}
    for (p, off) in reports:
        hw[p] = max(hw[p], off + 1)
    got = high_watermarks(boot, topic, nparts)
    check(got == hw, "high watermarks %s, the producer's reports end at %s" % (got, hw))
    info("producer stopped: %d records acknowledged (acks=all), high watermarks %s"
         % (len(reports), hw))

    took = wait_for(lambda: zk_offsets(zk, group, topic) == hw, 60,
                    "ZooKeeper's committed offsets of %s reaching the high watermarks" % group,
                    lambda: " (ZooKeeper %s, high watermarks %s, members %s)"
                    % (zk_offsets(zk, group, topic), hw, brief(survivors)))
    info("survivors drained in %.1fs: ZooKeeper /consumers/%s/offsets/%s = high watermarks"
         % (took, group, topic))
    for m in survivors:
        m.stop()
    for m in survivors:
        wait_exit(m, 30)
    final = zk_offsets(zk, group, topic)
    check(final == hw, "after the survivors closed, ZooKeeper holds %s, high watermarks %s"
          % (final, hw))

    seen = {}
    for m in members:
        recs = read_records(os.path.join(d, m.name + ".out"), tolerate_torn_tail=m is victim)
        check_against(reports, recs, m.name)
        seen[m.name] = recs
    processed = {(p, off) for recs in seen.values() for p, off, _ in recs}
    missing = sorted(set(reports) - processed)
    check(not missing, "%d acknowledged records never processed, first %s"
          % (len(missing), missing[:5]))
    lines = sum(len(r) for r in seen.values())
    again = {(p, off) for p, off, _ in seen[victim.name]} & \
        {(p, off) for m in survivors for p, off, _ in seen[m.name]}
    stats = {m.name: (m.status() or {}).get("commit_failures", "?") for m in members}
    info("all %d acknowledged records processed (%d lines, %d processed twice, %d of them the "
         "victim's and again a survivor's); commit failures %s"
         % (len(reports), lines, lines - len(processed), len(again), stats))


# ---------------------------------------------------------------------------------------
# 2. cooperative-sticky

def cmd_cooperative(boot, zk, d):
    topic, group, nparts = "t6", "gc", 6
    members = [member(boot, d, group, topic, n, "cooperative-sticky", "latest")
               for n in ("gc-x", "gc-y", "gc-z")]
    before = settled(members, 2, "3 cooperative-sticky members of %s with 2 partitions each"
                     % group, lambda: partitioned(members, nparts, 2))
    info("%s: stable, %s" % (group, {m.name: a for m, a in zip(members, before)}))
    leaver, survivors = members[2], members[:2]
    gone = before[2]
    t0 = time.time()
    leaver.stop()
    wait_exit(leaver, 30)

    def taken_over():
        return all(m.get("time") > t0 for m in survivors) and partitioned(survivors, nparts)

    wait_for(taken_over, 30, "the two survivors owning all %d partitions after %s closed"
             % (nparts, leaver.name), lambda: assignments(survivors))
    info("%s closed; the survivors own all %d partitions %.1fs later" %
         (leaver.name, nparts, time.time() - t0))
    settled(survivors, 2, "the survivors' assignments", lambda: partitioned(survivors, nparts))

    info("%s's events on closing: %s" % (leaver.name, events_after(leaver.status(), t0)))
    gained_all = []
    for m, had in zip(survivors, before[:2]):
        st = m.status()
        ev = events_after(st, t0)
        taken = [(k, ps) for k, ps in ev if k in ("revoke", "lost") and ps]
        check(not taken, "%s (cooperative-sticky) lost partitions when %s left: events %s"
              % (m.name, leaver.name, ev))
        gained = sorted(p for k, ps in ev if k == "assign" for p in ps)
        check(set(gained) <= set(gone) and len(set(gained)) == len(gained),
              "%s gained %s, not only %s's partitions %s (events %s)"
              % (m.name, gained, leaver.name, gone, ev))
        check(st["assignment"] == sorted(had + gained), "%s holds %s, had %s and gained %s"
              % (m.name, st["assignment"], had, gained))
        gained_all += gained
        info("%s: kept %s, gained %s (events after the leave: %s)" % (m.name, had, gained, ev))
    check(sorted(gained_all) == sorted(gone), "the survivors gained %s, the leaver had %s"
          % (sorted(gained_all), gone))
    for m in survivors:
        m.stop()
    for m in survivors:
        wait_exit(m, 30)


# ---------------------------------------------------------------------------------------
# 3. fan-out to two groups, work queue within one

def cmd_fanout(boot, zk, d):
    topic, nparts, total = "t3", 3, 3000
    solo = member(boot, d, "gf1", topic, "gf1-a")
    queue = [member(boot, d, "gf2", topic, n) for n in ("gf2-a", "gf2-b", "gf2-c")]
    everyone = [solo] + queue

    def stable():
        return solo.assignment() == list(range(nparts)) and partitioned(queue, nparts, 1)

    settled(everyone, 1.5, "gf1 with all 3 partitions, gf2 with 1 partition a member", stable)
    t_stable = time.time()
    owner = {m.assignment()[0]: m.name for m in queue}
    info("gf1: %s %s; gf2: %s" % (solo.name, solo.assignment(),
                                  {m.name: m.assignment() for m in queue}))
    recs = [(None, b"%d" % n, None, n % nparts, None) for n in range(total)]
    reports = {(p, off): i for p, off, i in produce(boot, topic, recs)}
    hw = high_watermarks(boot, topic, nparts)
    info("%d records produced (acks=all), high watermarks %s" % (total, hw))

    def done():
        ss = [m.status() for m in everyone]
        return (ss[0]["processed"] >= total and sum(s["processed"] for s in ss[1:]) >= total and
                zk_offsets(zk, "gf1", topic) == hw and zk_offsets(zk, "gf2", topic) == hw)

    took = wait_for(done, 60, "both groups processing all %d records and committing them" % total,
                    lambda: " (processed %s, ZooKeeper gf1 %s gf2 %s, high watermarks %s)"
                    % ({m.name: m.status()["processed"] for m in everyone},
                       zk_offsets(zk, "gf1", topic), zk_offsets(zk, "gf2", topic), hw))
    info("both groups done in %.1fs; ZooKeeper holds the high watermarks for gf1 and gf2" % took)
    t_stop = time.time()
    for m in everyone:
        ev = [(kind, ps) for ts, kind, ps in m.status()["events"] if t_stable < ts < t_stop]
        check(not any(ps for _, ps in ev), "%s was rebalanced while consuming: %s" % (m.name, ev))
    for m in everyone:
        m.stop()
    for m in everyone:
        wait_exit(m, 30)

    got = read_records(os.path.join(d, solo.name + ".out"))
    check_against(reports, got, solo.name)
    values = sorted(n for _, _, n in got)
    check(values == list(range(total)), "gf1 (one member) received %d records, %d distinct, "
          "not 0..%d once each" % (len(values), len(set(values)), total - 1))
    info("gf1: %s received all %d records, each once" % (solo.name, total))
    union = []
    for m in queue:
        got = read_records(os.path.join(d, m.name + ".out"))
        check_against(reports, got, m.name)
        foreign = sorted({p for p, _, _ in got if owner.get(p) != m.name})
        check(not foreign, "%s (gf2) received records of partitions %s, owned by %s"
              % (m.name, foreign, [owner.get(p) for p in foreign]))
        union += [n for _, _, n in got]
        info("gf2: %s received %d records, of partition %s only"
             % (m.name, len(got), [p for p, n in owner.items() if n == m.name]))
    check(sorted(union) == list(range(total)), "gf2's members received %d records together, "
          "%d distinct, not 0..%d once each" % (len(union), len(set(union)), total - 1))
    info("gf2: the 3 members received all %d records between them, each once" % total)


def main(argv):
    roles = {"member": (cmd_member, 7), "producer": (cmd_producer, 5)}
    scenarios = {"kill9": cmd_kill9, "cooperative": cmd_cooperative, "fanout": cmd_fanout}
    if len(argv) >= 2 and argv[1] in roles:
        fn, n = roles[argv[1]]
        if len(argv) != n + 2:
            sys.stderr.write(__doc__)
            return 2
        fn(*argv[2:])
        return 0
    if len(argv) != 5 or argv[1] not in scenarios:
        sys.stderr.write(__doc__)
        return 2
    d = argv[4]
    os.makedirs(d, exist_ok=True)

    def expired():
        print("FAIL: scenario %s not finished within 150s" % argv[1], flush=True)
        reap_all()
        os._exit(1)

    dog = threading.Timer(150, expired)
    dog.daemon = True
    dog.start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        scenarios[argv[1]](argv[2], argv[3], d)
    finally:
        reap_all()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
