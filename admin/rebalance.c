/* Even placement of replicas and preferred leaders (see rebalance.h). Brokers are worked on by
 * their index in the caller's list; a partition's proposal is built in place in @out. */
#include "rebalance.h"

#include <stdlib.h>
#include <string.h>

/* The brokers and the counts kept while planning. */
typedef struct plan {
    const sf_rebalance_broker_t *brokers;
    size_t nb;
    int *rack;    /* per broker: its rack's number (all 0 unless every broker has a rack) */
    int nracks;
    int *gcount;  /* replicas per broker over the topics planned so far */
    int *glead;   /* preferred leaders likewise */
    int *tcount;  /* replicas per broker in the topic being planned */
    int *tlead;
} plan_t;

/* One partition of the topic being planned: its proposal so far. */
typedef struct slot {
    int32_t *ids; /* into @out; room for rf */
    size_t n, rf;
    int32_t first; /* the current preferred leader */
    size_t t0, t1; /* its topic's slots */
} slot_t;

static int broker_index(const plan_t *pl, int32_t id) {
    size_t i;
    for (i = 0; i < pl->nb; i++)
        if (pl->brokers[i].id == id)
            return (int)i;
    return -1;
}

static int slot_has(const slot_t *s, int32_t id) {
    size_t i;
    for (i = 0; i < s->n; i++)
        if (s->ids[i] == id)
            return 1;
    return 0;
}

/* The replicas of @s on rack @rack. */
static size_t slot_on_rack(const plan_t *pl, const slot_t *s, int rack) {
    size_t i, n = 0;
    for (i = 0; i < s->n; i++)
        n += pl->rack[broker_index(pl, s->ids[i])] == rack;
    return n;
}

/* The most replicas of @s one rack may hold. */
static size_t rack_cap(const plan_t *pl, const slot_t *s) {
    return (s->rf + (size_t)pl->nracks - 1) / (size_t)pl->nracks;
}

static void slot_drop(plan_t *pl, slot_t *s, size_t at) {
    pl->tcount[broker_index(pl, s->ids[at])]--;
    memmove(&s->ids[at], &s->ids[at + 1], (s->n - at - 1) * sizeof(*s->ids));
    s->n--;
}

/* Number the racks; with a broker that has none, racks are not considered. */
static int plan_racks(plan_t *pl) {
    size_t i, j;
    pl->nracks = 1;
    for (i = 0; i < pl->nb; i++)
        if (!pl->brokers[i].rack)
            return 0;
    pl->nracks = 0;
    for (i = 0; i < pl->nb; i++) {
        for (j = 0; j < i && strcmp(pl->brokers[i].rack, pl->brokers[j].rack); j++)
            ;
        pl->rack[i] = j < i ? pl->rack[j] : pl->nracks++;
    }
    return 0;
}

/* Keep the current replicas on the planned brokers, at most a rack's share per rack. */
static void keep_current(plan_t *pl, slot_t *s, const sf_rebalance_partition_t *p) {
    size_t i;
    s->n = 0;
    for (i = 0; i < p->replica_count; i++) {
        int b = broker_index(pl, p->replicas[i]);
        if (b < 0 || slot_has(s, p->replicas[i]) ||
            slot_on_rack(pl, s, pl->rack[b]) >= rack_cap(pl, s))
            continue;
        s->ids[s->n++] = p->replicas[i];
        pl->tcount[b]++;
    }
}

/* Drop replicas of brokers above @cap in the topic, the preferred leaders last. */
static void trim_to_cap(plan_t *pl, slot_t *slots, size_t k, int cap) {
    size_t b, i, pass;
    for (b = 0; b < pl->nb; b++)
        for (pass = 0; pass < 2 && pl->tcount[b] > cap; pass++)
            for (i = k; i-- > 0 && pl->tcount[b] > cap;) {
                size_t at;
                for (at = pass ? 0 : 1; at < slots[i].n; at++)
                    if (slots[i].ids[at] == pl->brokers[b].id) {
                        slot_drop(pl, &slots[i], at);
                        break;
                    }
            }
}

/* The broker to add to @s: not in it, within its rack's share when @racks, then the one
 * below @cap with the fewest replicas in the topic and then overall. -1 when none. */
static int pick_broker(const plan_t *pl, const slot_t *s, int cap, int racks) {
    int best = -1;
    size_t b;
    for (b = 0; b < pl->nb; b++) {
        if (slot_has(s, pl->brokers[b].id) ||
            (racks && slot_on_rack(pl, s, pl->rack[b]) >= rack_cap(pl, s)))
            continue;
        if (best < 0 || (pl->tcount[b] >= cap) < (pl->tcount[best] >= cap) ||
            ((pl->tcount[b] >= cap) == (pl->tcount[best] >= cap) &&
             (pl->tcount[b] < pl->tcount[best] ||
              (pl->tcount[b] == pl->tcount[best] && pl->gcount[b] < pl->gcount[best]))))
            best = (int)b;
    }
    return best;
}

static void fill(plan_t *pl, slot_t *slots, size_t k, int cap) {
    size_t i;
    for (i = 0; i < k; i++)
        while (slots[i].n < slots[i].rf) {
            int b = pick_broker(pl, &slots[i], cap, 1);
            if (b < 0)
                b = pick_broker(pl, &slots[i], cap, 0);
            if (b < 0) /* cannot be: rf <= the distinct brokers */
                return;
            slots[i].ids[slots[i].n++] = pl->brokers[b].id;
            pl->tcount[b]++;
        }
}

/* The index of the broker with the most (@most) or fewest of @count, ties to the fewest
 * (most) of @global. */
static int extreme(const plan_t *pl, const int *count, const int *global, int most) {
    int best = 0;
    size_t b;
    for (b = 1; b < pl->nb; b++) {
        int d = most ? count[b] - count[best] : count[best] - count[b];
        if (d > 0 || (d == 0 && (most ? global[b] > global[best] : global[b] < global[best])))
            best = (int)b;
    }
    return best;
}

/* Move replicas from the fullest broker to the emptiest, followers first, while they differ
 * by more than one and a move keeps the racks spread. */
static void smooth(plan_t *pl, slot_t *slots, size_t k) {
    size_t guard = k * pl->nb + 1, i, at, rf = 0;
    for (i = 0; i < k; i++)
        rf = slots[i].rf > rf ? slots[i].rf : rf;
    while (guard-- > 0) {
        int hi = extreme(pl, pl->tcount, pl->gcount, 1);
        int lo = extreme(pl, pl->tcount, pl->gcount, 0);
        int32_t from = pl->brokers[hi].id, to = pl->brokers[lo].id;
        int moved = 0;
        if (pl->tcount[hi] - pl->tcount[lo] <= 1)
            return;
        for (at = rf; at-- > 0 && !moved;)
            for (i = k; i-- > 0 && !moved;) {
                slot_t *s = &slots[i];
                if (at >= s->n || s->ids[at] != from || slot_has(s, to) ||
                    (pl->rack[lo] != pl->rack[hi] &&
                     slot_on_rack(pl, s, pl->rack[lo]) >= rack_cap(pl, s)))
                    continue;
                s->ids[at] = to;
                pl->tcount[hi]--;
                pl->tcount[lo]++;
                moved = 1;
            }
        if (!moved)
            return;
    }
}

/* Put replica @at of @s first, the others keeping their order. */
static void make_leader(plan_t *pl, slot_t *s, size_t at) {
    int32_t id = s->ids[at];
    memmove(&s->ids[1], &s->ids[0], at * sizeof(*s->ids));
    s->ids[0] = id;
    pl->tlead[broker_index(pl, id)]++;
}

/* Move one partition's leadership to a replica with at least @gap fewer leaders than its
 * leader has. Returns 1 if one moved. */
static int lead_move(plan_t *pl, slot_t *slots, size_t k, int gap) {
    size_t i, at;
    for (i = 0; i < k; i++) {
        int l = broker_index(pl, slots[i].ids[0]);
        for (at = 1; at < slots[i].n; at++) {
            int x = broker_index(pl, slots[i].ids[at]);
            if (pl->tlead[l] - pl->tlead[x] >= gap) {
                pl->tlead[l]--;
                make_leader(pl, &slots[i], at);
                return 1;
            }
        }
    }
    return 0;
}

/* Moves along a path of partitions that evens out brokers no one partition links (Kafka's
 * brokers A -> B -> C: a partition A leads goes to its replica B, one B leads to its replica
 * C...): from the busiest broker to the nearest with two fewer leaders, breadth first.
 * Returns 1 if a path moved. */
static int lead_path(plan_t *pl, slot_t *slots, size_t k) {
    int hi = extreme(pl, pl->tlead, pl->glead, 1), *from, *via, *pos, *queue, head = 0, tail = 0;
    int end = -1, b;
    size_t i, at;
    from = malloc(pl->nb * sizeof(int));
    via = malloc(pl->nb * sizeof(int));
    pos = malloc(pl->nb * sizeof(int));
    queue = malloc(pl->nb * sizeof(int));
    if (from && via && pos && queue) {
        for (i = 0; i < pl->nb; i++)
            from[i] = -1;
        from[hi] = hi;
        queue[tail++] = hi;
        while (head < tail && end < 0) {
            int u = queue[head++];
            for (i = 0; i < k && end < 0; i++) {
                if (broker_index(pl, slots[i].ids[0]) != u)
                    continue;
                for (at = 1; at < slots[i].n && end < 0; at++) {
                    int v = broker_index(pl, slots[i].ids[at]);
                    if (from[v] >= 0)
                        continue;
                    from[v] = u;
                    via[v] = (int)i;
                    pos[v] = (int)at;
                    queue[tail++] = v;
                    if (pl->tlead[hi] - pl->tlead[v] >= 2)
                        end = v;
                }
            }
        }
        /* Back from the end: each partition on the path to the replica it leads to. */
        for (b = end; b >= 0 && b != hi; b = from[b]) {
            pl->tlead[from[b]]--;
            make_leader(pl, &slots[via[b]], (size_t)pos[b]);
        }
    }
    free(from);
    free(via);
    free(pos);
    free(queue);
    return end >= 0;
}

/* Preferred leaders: the current one while its broker is below its share, else the replica
 * with the fewest; then leadership moves, directly or along a path of partitions, while that
 * evens the brokers out. */
static void choose_leaders(plan_t *pl, slot_t *slots, size_t k) {
    int lcap = (int)((k + pl->nb - 1) / pl->nb);
    unsigned char *done = calloc(k ? k : 1, 1);
    size_t i, at, guard = k * pl->nb + 1;
    for (i = 0; i < k; i++)
        if (slots[i].ids[0] == slots[i].first && done &&
            pl->tlead[broker_index(pl, slots[i].first)] < lcap) {
            pl->tlead[broker_index(pl, slots[i].first)]++;
            done[i] = 1;
        }
    for (i = 0; i < k; i++) {
        size_t best = 0;
        if (done && done[i])
            continue;
        for (at = 1; at < slots[i].n; at++) {
            int b = broker_index(pl, slots[i].ids[at]), c = broker_index(pl, slots[i].ids[best]);
            if (pl->tlead[b] < pl->tlead[c] ||
                (pl->tlead[b] == pl->tlead[c] && pl->glead[b] < pl->glead[c]))
                best = at;
        }
        make_leader(pl, &slots[i], best);
    }
    free(done);
    while (guard-- > 0 && (lead_move(pl, slots, k, 2) || lead_path(pl, slots, k)))
        ;
}

/* The replicas of @s's topic on broker @id. */
static int topic_count(const slot_t *slots, const slot_t *s, int32_t id) {
    size_t i;
    int n = 0;
    for (i = s->t0; i < s->t1; i++)
        n += slot_has(&slots[i], id);
    return n;
}

/* Across topics: move replicas (followers first) from the fullest broker to the emptiest
 * while they differ by more than one, in partitions whose topic has more replicas on the first
 * than on the second (so that every topic stays spread). */
static void smooth_global(plan_t *pl, slot_t *slots, size_t n) {
    size_t guard = n * pl->nb + 1, i, at, rf = 0;
    for (i = 0; i < n; i++)
        rf = slots[i].rf > rf ? slots[i].rf : rf;
    while (guard-- > 0) {
        int hi = extreme(pl, pl->gcount, pl->glead, 1);
        int lo = extreme(pl, pl->gcount, pl->glead, 0);
        int32_t from = pl->brokers[hi].id, to = pl->brokers[lo].id;
        int moved = 0;
        if (pl->gcount[hi] - pl->gcount[lo] <= 1)
            return;
        for (at = rf; at-- > 0 && !moved;)
            for (i = n; i-- > 0 && !moved;) {
                slot_t *s = &slots[i];
                if (at >= s->n || s->ids[at] != from || slot_has(s, to) ||
                    topic_count(slots, s, to) >= topic_count(slots, s, from) ||
                    (pl->rack[lo] != pl->rack[hi] &&
                     slot_on_rack(pl, s, pl->rack[lo]) >= rack_cap(pl, s)))
                    continue;
                s->ids[at] = to;
                pl->gcount[hi]--;
                pl->gcount[lo]++;
                if (at == 0) {
                    pl->glead[hi]--;
                    pl->glead[lo]++;
                }
                moved = 1;
            }
        if (!moved)
            return;
    }
}

/* Plan the @k partitions of one topic. */
static void plan_topic(plan_t *pl, const sf_rebalance_partition_t *parts, slot_t *slots,
                       size_t k) {
    size_t i, total = 0;
    int cap;
    memset(pl->tcount, 0, pl->nb * sizeof(int));
    memset(pl->tlead, 0, pl->nb * sizeof(int));
    for (i = 0; i < k; i++) {
        keep_current(pl, &slots[i], &parts[i]);
        total += slots[i].rf;
    }
    cap = (int)((total + pl->nb - 1) / pl->nb);
    trim_to_cap(pl, slots, k, cap);
    fill(pl, slots, k, cap);
    smooth(pl, slots, k);
    choose_leaders(pl, slots, k);
    for (i = 0; i < pl->nb; i++) {
        pl->gcount[i] += pl->tcount[i];
        pl->glead[i] += pl->tlead[i];
    }
}

int sf_rebalance_plan(const sf_rebalance_broker_t *brokers, size_t nbrokers,
                      const sf_rebalance_partition_t *parts, size_t nparts, int32_t *out) {
    plan_t pl;
    slot_t *slots;
    size_t i, k, start, used = 0;
    int rc = -1;
    for (i = 0; i < nparts; i++)
        if (!parts[i].replica_count || parts[i].replica_count > nbrokers)
            return -1;
    for (i = 0; i < nbrokers; i++)
        for (k = 0; k < i; k++)
            if (brokers[i].id == brokers[k].id)
                return -1;
    if (!nparts)
        return 0;
    memset(&pl, 0, sizeof(pl));
    pl.brokers = brokers;
    pl.nb = nbrokers;
    pl.rack = calloc(nbrokers, sizeof(int));
    pl.gcount = calloc(nbrokers, sizeof(int));
    pl.glead = calloc(nbrokers, sizeof(int));
    pl.tcount = calloc(nbrokers, sizeof(int));
    pl.tlead = calloc(nbrokers, sizeof(int));
    slots = calloc(nparts, sizeof(*slots));
    if (pl.rack && pl.gcount && pl.glead && pl.tcount && pl.tlead && slots &&
        plan_racks(&pl) == 0) {
        for (i = 0; i < nparts; i++) {
            slots[i].ids = out + used;
            slots[i].rf = parts[i].replica_count;
            slots[i].first = parts[i].replicas[0];
            used += parts[i].replica_count;
        }
        for (start = 0; start < nparts; start = i) {
            for (i = start + 1; i < nparts && !strcmp(parts[i].topic, parts[start].topic); i++)
                ;
            for (k = start; k < i; k++) {
                slots[k].t0 = start;
                slots[k].t1 = i;
            }
            plan_topic(&pl, parts + start, slots + start, i - start);
        }
        smooth_global(&pl, slots, nparts);
        rc = 0;
    }
    free(pl.rack);
    free(pl.gcount);
    free(pl.glead);
    free(pl.tcount);
    free(pl.tlead);
    free(slots);
    return rc;
}
