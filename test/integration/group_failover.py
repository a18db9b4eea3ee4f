#!/usr/bin/python3
"""Static members (KIP-345) and coordinator failover with confluent-kafka.

    group_failover.py BOOTSTRAP STATUS_FILE
        Two static members (group.instance.id) of group gs share topic gt. The first is closed
        and started again under the same instance id: it must get its partitions back and the
        other member must see no rebalance. Then "READY" goes to STATUS_FILE and the members
        keep polling while the test kills the group's coordinator; once STATUS_FILE says
        "KILLED", records produced afterwards must all arrive, each once, and neither member
        may have been rebalanced.
"""
import sys
import time

from confluent_kafka import Consumer, Producer

from sftest import check, fail, info

TOPIC, GROUP = "gt", "gs"


class Member:
    def __init__(self, boot, name, instance):
        self.events = []
        self.seen = []
        self.c = Consumer({
            "bootstrap.servers": boot, "group.id": GROUP, "client.id": name,
            "group.instance.id": instance, "auto.offset.reset": "latest",
            "enable.auto.commit": False, "session.timeout.ms": 10000,
            "heartbeat.interval.ms": 500, "broker.address.family": "v4"})
        self.c.subscribe([TOPIC], on_assign=self._assigned, on_revoke=self._revoked)

    def _assigned(self, c, parts):
        self.events.append(("assign", sorted(p.partition for p in parts)))

    def _revoked(self, c, parts):
        self.events.append(("revoke", sorted(p.partition for p in parts)))

    def poll(self):
        m = self.c.poll(0.05)
        if m is not None and not m.error():
            self.seen.append(int(m.value()))

    def partitions(self):
        return sorted(p.partition for p in self.c.assignment())


def spin_until(members, cond, what, timeout=60):
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            fail("%s: not within %ds (events %s)" % (what, timeout, [m.events for m in members]))
        for m in members:
            m.poll()


def status(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def main(boot, status_path):
    a = Member(boot, "a", "inst-a")
    b = Member(boot, "b", "inst-b")
    spin_until([a, b], lambda: a.partitions() and b.partitions() and
               len(a.partitions()) + len(b.partitions()) == 6, "the group of two")
    parts_a, parts_b = a.partitions(), b.partitions()
    check(not set(parts_a) & set(parts_b), "disjoint assignments %s %s" % (parts_a, parts_b))
    info("static members: a %s, b %s" % (parts_a, parts_b))

    a.c.close()
    a2 = Member(boot, "a2", "inst-a")
    spin_until([a2, b], lambda: a2.partitions(), "the restarted static member's assignment")
    check(a2.partitions() == parts_a, "the restarted member got %s, not its %s"
          % (a2.partitions(), parts_a))
    # A rebalance would have revoked b's partitions; give one its chance to show up.
    end = time.time() + 3
    while time.time() < end:
        a2.poll()
        b.poll()
    check(b.events == [("assign", parts_b)], "b was rebalanced: %s" % b.events)
    info("restarted under the same group.instance.id: the same partitions, no rebalance")

    with open(status_path, "w") as f:
        f.write("READY\n")
    spin_until([a2, b], lambda: "KILLED" in status(status_path), "the coordinator's kill", 120)

    p = Producer({"bootstrap.servers": boot, "acks": "all", "broker.address.family": "v4"})
    for n in range(600):
        p.produce(TOPIC, str(n).encode(), partition=n % 6)
    check(p.flush(60) == 0, "600 records produced after the failover")
    spin_until([a2, b], lambda: len(a2.seen) + len(b.seen) >= 600,
               "the records produced after the failover", 90)
    got = sorted(a2.seen + b.seen)
    check(got == list(range(600)), "records after the failover: %d, not 0..599 once each"
          % len(got))
    check(a2.events == [("assign", parts_a)] and b.events == [("assign", parts_b)],
          "a member was rebalanced by the coordinator failover: %s %s" % (a2.events, b.events))
    info("coordinator killed: both members kept their partitions, 600 new records consumed")
    a2.c.close()
    b.c.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail(__doc__)
    main(sys.argv[1], sys.argv[2])
