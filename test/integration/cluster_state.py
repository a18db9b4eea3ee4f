#!/usr/bin/python3
"""Partition states of a topic as the controller wrote them in ZooKeeper, for the cluster tests.

    cluster_state.py ZK TOPIC show                      print "p leader epoch isr,..." lines
    cluster_state.py ZK TOPIC leader P                  print partition P's leader
    cluster_state.py ZK TOPIC wait-isr N SECONDS [ID]   wait until every partition's ISR has N
                                                        members (and holds / lacks broker ID:
                                                        a negative ID means "lacks -ID")
    cluster_state.py ZK TOPIC wait-leader-not ID SECONDS  wait until no partition is led by ID
                                                        and every one has a leader
    cluster_state.py ZK TOPIC not-preferred             print the partitions not led by their
                                                        preferred replica (the first assigned)
    cluster_state.py ZK TOPIC wait-preferred SECONDS    wait until every one is
Exit 1 with a message when a wait times out.
"""
import json
import sys
import time

from zkq import Session

CHROOT = "/streamflow"


def states(zk, topic):
    s = Session(zk)
    try:
        base = "%s/brokers/topics/%s/partitions" % (CHROOT, topic)
        out = {}
        for p in s.children(base):
            data, _ = s.get("%s/%s/state" % (base, p))
            out[int(p)] = json.loads(data)
        return out
    finally:
        s.close()


def preferred(zk, topic):
    """{partition: first assigned replica} from the topic znode."""
    s = Session(zk)
    try:
        data, _ = s.get("%s/brokers/topics/%s" % (CHROOT, topic))
    finally:
        s.close()
    return {int(p): r[0] for p, r in json.loads(data)["partitions"].items()}


def not_preferred(zk, topic):
    pref, st = preferred(zk, topic), states(zk, topic)
    return sorted(p for p, s in st.items() if s["leader"] != pref[p])


def wait(what, seconds, cond):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            last = cond()
            if last is True:
                return
        except Exception as e:  # the znodes may be in flux
            last = e
        time.sleep(0.2)
    sys.exit("timed out after %ss waiting for %s (last: %s)" % (seconds, what, last))


def main():
    zk, topic, cmd = sys.argv[1:4]
    args = sys.argv[4:]
    if cmd == "show":
        for p, st in sorted(states(zk, topic).items()):
            print(p, st["leader"], st["leader_epoch"], ",".join(map(str, st["isr"])))
    elif cmd == "leader":
        print(states(zk, topic)[int(args[0])]["leader"])
    elif cmd == "wait-isr":
        n, seconds = int(args[0]), float(args[1])
        bid = int(args[2]) if len(args) > 2 else 0

        def ok():
            st = states(zk, topic)
            good = st and all(len(s["isr"]) == n and
                              (bid == 0 or (bid > 0) == (abs(bid) in s["isr"]))
                              for s in st.values())
            return True if good else {p: s["isr"] for p, s in st.items()}
        wait("ISRs of %d (broker %s)" % (n, bid), seconds, ok)
    elif cmd == "wait-leader-not":
        bid, seconds = int(args[0]), float(args[1])

        def ok():
            st = states(zk, topic)
            good = st and all(s["leader"] not in (-1, bid) for s in st.values())
            return True if good else {p: s["leader"] for p, s in st.items()}
        wait("leaders other than %d" % bid, seconds, ok)
    elif cmd == "not-preferred":
        print(" ".join(map(str, not_preferred(zk, topic))))
    elif cmd == "wait-preferred":
        wait("preferred leaders", float(args[0]),
             lambda: True if not not_preferred(zk, topic) else not_preferred(zk, topic))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
