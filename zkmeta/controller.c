/* The controller's duties in ZooKeeper (cluster_int.h): it alone writes partition state.
 * After each snapshot it creates the states of partitions that have none (new topics, added
 * partitions: leader = the first live replica, leader epoch 0, ISR = the live replicas, as
 * Kafka does at creation), moves leadership off brokers that left and drops them from ISRs
 * (election_rules.h; all such changes in one batch of versioned writes), and purges the topics
 * whose deletion was requested. With auto.leader.rebalance.enable it also gives partitions
 * back to their preferred replicas on a timer (cl_rebalance_cb), and it finishes partition
 * reassignments whose new replicas have caught up (reassign.c). At most one write per topic
 * is in flight, so no two writes come from one stale snapshot; the next snapshot shows their
 * outcome. */
#include "cluster_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "election_rules.h"
#include "err.h"
#include "logging.h"
#include "reassign_rules.h"

/* A topic with a controller write in flight. Orphaned (cl NULL) when the controllership ends
 * before the write completes; the completion then only frees it. */
struct cl_ctrl_busy {
    struct cl_ctrl_busy *next;
    sf_cluster_t *cl;
    char topic[];
};

static struct cl_ctrl_busy *busy_find(sf_cluster_t *cl, const char *topic) {
    struct cl_ctrl_busy *b;
    for (b = cl->ctrl_busy; b; b = b->next)
        if (!strcmp(b->topic, topic))
            return b;
    return NULL;
}

static void busy_done(void *arg, int err) {
    struct cl_ctrl_busy *b = arg, **pp;
    sf_cluster_t *cl = b->cl;
    if (cl) {
        for (pp = &cl->ctrl_busy; *pp && *pp != b; pp = &(*pp)->next)
            ;
        if (*pp)
            *pp = b->next;
        if (err != SF_OK && err != SF_ERR_EXISTS && err != SF_ERR_STATE && cl_alive(cl))
            sf_log(SF_LOG_WARNING, "CONTROLLER", "a write for topic %s failed (%s); retried with "
                   "the next metadata change", b->topic, sf_err_str(err));
    }
    free(b);
}

static struct cl_ctrl_busy *busy_add(sf_cluster_t *cl, const char *topic) {
    size_t n = strlen(topic);
    struct cl_ctrl_busy *b = malloc(sizeof(*b) + n + 1);
    if (!b)
        return NULL;
    b->cl = cl;
    memcpy(b->topic, topic, n + 1);
    b->next = cl->ctrl_busy;
    cl->ctrl_busy = b;
    return b;
}

static void busy_unlink(sf_cluster_t *cl, struct cl_ctrl_busy *b) {
    struct cl_ctrl_busy **pp;
    for (pp = &cl->ctrl_busy; *pp && *pp != b; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = b->next;
    free(b);
}

/* The new states for @t's partitions without one (malloc'd, *@n of them; NULL when none). */
static sf_cluster_partition_t *new_states(const sf_cluster_t *cl, const sf_cluster_snapshot_t *snap,
                                          const sf_cluster_topic_t *t, int *n) {
    sf_cluster_partition_t *st = NULL;
    int p, m = 0, rc;
    *n = 0;
    for (p = 0; p < t->npartitions; p++) {
        const sf_cluster_partition_t *part = &t->partitions[p];
        if (sf_cluster_partition_has_state(part))
            continue;
        if (!st && !(st = calloc((size_t)(t->npartitions - p), sizeof(*st))))
            return NULL;
        rc = sf_elect_initial(part, snap, &st[m]);
        if (rc == SF_ERR_NOTFOUND)
            continue; /* a partition with no live replica stays offline for now */
        if (rc != SF_OK) {
            int i;
            for (i = 0; i < m; i++)
                sf_cluster_partition_clear(&st[i]);
            free(st);
            return NULL;
        }
        st[m].partition = p;
        st[m].controller_epoch = cl->controller_epoch;
        m++;
    }
    if (!m) {
        free(st);
        st = NULL;
    }
    *n = m;
    return st;
}

/* ---- failover: new leaders and smaller ISRs after brokers left ---- */

/* One batch of state rewrites across topics: each topic in it is busy until it completes. */
struct cl_ctrl_batch {
    struct cl_ctrl_busy **busy; /* the topics, in order of their first item */
    int nbusy, capbusy;
    sf_cluster_state_write_t *w;
    int n, cap;
    int moved, offline, shrunk; /* counts for the log line */
    int32_t lost[8];            /* former leaders that left, for the log line */
    int nlost;
    int listed; /* for /admin/preferred_replica_election: delete it when written */
};

static void preferred_done(sf_cluster_t *cl);

static void batch_free(struct cl_ctrl_batch *bt) {
    int i;
    for (i = 0; i < bt->n; i++)
        free(bt->w[i].st.isr);
    free(bt->w);
    free(bt->busy);
    free(bt);
}

static void batch_done(void *arg, int err) {
    struct cl_ctrl_batch *bt = arg;
    int i, lost = 0;
    for (i = 0; i < bt->n; i++)
        lost += bt->w[i].err == SF_ERR_STATE || bt->w[i].err == SF_ERR_NOTFOUND;
    if (lost && err == SF_OK)
        sf_log(SF_LOG_INFO, "CONTROLLER", "%d of %d partition state(s) changed meanwhile; "
               "looked at again with the next metadata", lost, bt->n);
    if (err != SF_OK && err != SF_ERR_STATE && bt->nbusy && bt->busy[0]->cl &&
        cl_alive(bt->busy[0]->cl))
        sf_log(SF_LOG_WARNING, "CONTROLLER", "writing new leaders and ISRs of %d partition(s) "
               "failed (%s); retried with the next metadata change", bt->n, sf_err_str(err));
    if (bt->listed && bt->nbusy && bt->busy[0]->cl)
        preferred_done(bt->busy[0]->cl);
    /* One line for the batch above, not one per topic. */
    for (i = 0; i < bt->nbusy; i++) {
        if (bt->busy[i]->cl)
            busy_unlink(bt->busy[i]->cl, bt->busy[i]);
        else
            free(bt->busy[i]); /* orphaned: the controllership ended */
    }
    batch_free(bt);
}

/* unclean.leader.election.enable for @t: the topic's, else the dynamic broker configs', else
 * the configuration's. */
static int unclean_enabled(const sf_cluster_t *cl, const sf_cluster_snapshot_t *snap,
                           const sf_cluster_topic_t *t) {
    static const char key[] = "unclean.leader.election.enable";
    const char *v = sf_cluster_topic_config(t, key);
    if (!v)
        v = sf_cluster_snapshot_broker_config(snap, 0, key);
    if (!v)
        v = sf_cluster_snapshot_broker_config(snap, 1, key);
    return v ? !strcasecmp(v, "true") : cl->unclean_default;
}

static void note_lost(struct cl_ctrl_batch *bt, int32_t leader) {
    int i;
    if (leader < 0)
        return;
    for (i = 0; i < bt->nlost; i++)
        if (bt->lost[i] == leader)
            return;
    if (bt->nlost < (int)(sizeof(bt->lost) / sizeof(bt->lost[0])))
        bt->lost[bt->nlost++] = leader;
}

/* Room for one more item (and one more topic). */
static int batch_grow(struct cl_ctrl_batch *bt) {
    if (bt->n == bt->cap) {
        int cap = bt->cap ? 2 * bt->cap : 64;
        sf_cluster_state_write_t *w = realloc(bt->w, (size_t)cap * sizeof(*w));
        if (!w)
            return SF_ERR_NOMEM;
        bt->w = w;
        bt->cap = cap;
    }
    if (bt->nbusy == bt->capbusy) {
        int cap = bt->capbusy ? 2 * bt->capbusy : 16;
        struct cl_ctrl_busy **b = realloc(bt->busy, (size_t)cap * sizeof(*b));
        if (!b)
            return SF_ERR_NOMEM;
        bt->busy = b;
        bt->capbusy = cap;
    }
    return SF_OK;
}

/* A decision about one partition of @t (election_rules.h outcomes, @out filled unless NONE). */
typedef int (*decide_fn)(sf_cluster_t *cl, const sf_cluster_topic_t *t,
                         const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                         const void *ctx, sf_cluster_partition_t *out);

static int shutting_down(void *cl, int32_t id) {
    return sf_cluster_broker_shutting_down(cl, id);
}

/* After brokers left (@ctx points to the topic's unclean election setting): a new leader from
 * the live ISR, not one in controlled shutdown while another can lead (Kafka's ZooKeeper
 * controller elects among the live brokers, those shutting down excepted). */
static int decide_failover(sf_cluster_t *cl, const sf_cluster_topic_t *t,
                           const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                           const void *ctx, sf_cluster_partition_t *out) {
    int o = sf_elect_failover(part, snap, *(const int *)ctx, out);
    (void)t;
    if (o == SF_ELECT_LEADER)
        sf_elect_avoid_shutting_down(part, shutting_down, cl, out);
    return o;
}

/* A preferred election where it can be held: not to a broker in controlled shutdown. */
static int elect_preferred(sf_cluster_t *cl, const sf_cluster_partition_t *part,
                           const sf_cluster_snapshot_t *snap, sf_cluster_partition_t *out) {
    int o;
    if (part->nreplicas > 0 && sf_cluster_broker_shutting_down(cl, part->replicas[0]))
        return SF_ELECT_NONE;
    o = sf_elect_preferred(part, snap, out);
    return o == SF_ELECT_OFFLINE ? SF_ELECT_NONE : o;
}

/* The rebalance: @ctx is the list of imbalanced brokers (-1 ends it); partitions preferring
 * them go back to them when they can. */
static int decide_rebalance(sf_cluster_t *cl, const sf_cluster_topic_t *t,
                            const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                            const void *ctx, sf_cluster_partition_t *out) {
    const int32_t *ids = ctx;
    int i;
    (void)t;
    for (i = 0; part->nreplicas > 0 && ids[i] >= 0 && ids[i] != part->replicas[0]; i++)
        ;
    if (part->nreplicas < 1 || ids[i] < 0)
        return SF_ELECT_NONE;
    return elect_preferred(cl, part, snap, out);
}

/* /admin/preferred_replica_election: the cluster's list names the partitions. */
static int decide_listed(sf_cluster_t *cl, const sf_cluster_topic_t *t,
                         const sf_cluster_partition_t *part, const sf_cluster_snapshot_t *snap,
                         const void *ctx, sf_cluster_partition_t *out) {
    int i;
    (void)ctx;
    for (i = 0; i < cl->npref; i++)
        if (cl->pref[i].partition == part->partition && !strcmp(cl->pref[i].topic, t->name))
            return elect_preferred(cl, part, snap, out);
    return SF_ELECT_NONE;
}

/* Add the changes @decide wants for @t's partitions to @bt (marking @t busy if there are
 * any). */
static int batch_topic(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap,
                       const sf_cluster_topic_t *t, decide_fn decide, const void *ctx,
                       struct cl_ctrl_batch *bt) {
    struct cl_ctrl_busy *b = NULL;
    int p;
    for (p = 0; p < t->npartitions; p++) {
        const sf_cluster_partition_t *part = &t->partitions[p];
        sf_cluster_state_write_t *w;
        int out;
        if (batch_grow(bt) != SF_OK)
            return SF_ERR_NOMEM;
        w = &bt->w[bt->n];
        memset(w, 0, sizeof(*w));
        out = decide(cl, t, part, snap, ctx, &w->st);
        if (out < 0)
            return SF_ERR_NOMEM;
        if (out == SF_ELECT_NONE)
            continue;
        if (!b) {
            if (!(b = busy_add(cl, t->name))) {
                free(w->st.isr);
                return SF_ERR_NOMEM;
            }
            bt->busy[bt->nbusy++] = b;
        }
        w->topic = b->topic;
        w->st.partition = p;
        w->version = part->state_version;
        bt->n++;
        if (out == SF_ELECT_SHRINK) {
            bt->shrunk++;
        } else {
            note_lost(bt, part->leader);
            bt->moved += out != SF_ELECT_OFFLINE;
            bt->offline += out == SF_ELECT_OFFLINE;
        }
    }
    return SF_OK;
}

static void batch_log(const struct cl_ctrl_batch *bt) {
    char ids[96] = "";
    size_t len = 0;
    int i;
    for (i = 0; i < bt->nlost && len < sizeof(ids) - 16; i++)
        len += (size_t)snprintf(ids + len, sizeof(ids) - len, "%s%d", i ? "," : "",
                                (int)bt->lost[i]);
    if (bt->moved || bt->offline)
        sf_log(SF_LOG_INFO, "CONTROLLER", "moving leadership of %d partition(s) off broker(s) "
               "%s%s (%d left without a leader); shrinking the ISR of %d more", bt->moved,
               bt->nlost ? ids : "-", bt->nlost == 8 ? ",..." : "", bt->offline, bt->shrunk);
    else
        sf_log(SF_LOG_INFO, "CONTROLLER", "removing brokers that left from the ISR of %d "
               "partition(s)", bt->shrunk);
}

/* The changes @decide wants (NULL: failover) for every topic, in one batch of writes; the
 * preferred elections are logged as @why. Returns 1 if a batch is being written. */
static int controller_batch(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap,
                            decide_fn decide, const void *ctx, const char *why) {
    struct cl_ctrl_batch *bt = calloc(1, sizeof(*bt));
    int i, rc = bt ? SF_OK : SF_ERR_NOMEM;
    for (i = 0; rc == SF_OK && i < snap->ntopics; i++) {
        const sf_cluster_topic_t *t = snap->topics[i];
        int unclean;
        if (busy_find(cl, t->name) || sf_cluster_snapshot_deleting(snap, t->name))
            continue;
        unclean = unclean_enabled(cl, snap, t);
        rc = decide ? batch_topic(cl, snap, t, decide, ctx, bt)
                    : batch_topic(cl, snap, t, decide_failover, &unclean, bt);
    }
    if (rc == SF_OK && bt->n) {
        if (decide)
            sf_log(SF_LOG_INFO, "CONTROLLER", "%s: moving leadership of %d partition(s) back "
                   "to their preferred replicas", why, bt->n);
        else
            batch_log(bt);
        bt->listed = decide == decide_listed;
        rc = cl_ctrl_write_states(cl, bt->w, bt->n, batch_done, bt);
        if (rc == SF_OK)
            return 1;
    }
    if (rc != SF_OK)
        sf_log(SF_LOG_WARNING, "CONTROLLER", "cannot write new leaders now (%s); retried with "
               "the next metadata change", sf_err_str(rc));
    for (i = 0; bt && i < bt->nbusy; i++)
        busy_unlink(cl, bt->busy[i]);
    if (bt)
        batch_free(bt);
    return 0;
}

/* Finish @t's reassignments whose target replicas are all in the ISR (reassign_rules.h). */
static void finish_reassignments(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap,
                                 const sf_cluster_topic_t *t) {
    sf_cluster_partition_t *st = NULL;
    struct cl_ctrl_busy *b;
    int p, n = 0, rc = 0;
    if (busy_find(cl, t->name) || sf_cluster_snapshot_deleting(snap, t->name))
        return;
    for (p = 0; p < t->npartitions && rc >= 0; p++) {
        if (!sf_cluster_partition_reassigning(&t->partitions[p]))
            continue;
        if (!st && !(st = calloc((size_t)(t->npartitions - p), sizeof(*st))))
            return;
        if ((rc = sf_reassign_finish(&t->partitions[p], snap, &st[n])) == 1)
            n++;
    }
    if (rc >= 0 && n && (b = busy_add(cl, t->name))) {
        if (cl_reassign_finish_topic(cl, t, st, n, busy_done, b) != SF_OK)
            busy_unlink(cl, b);
        return; /* @st is the write's now */
    }
    for (p = 0; p < n; p++)
        sf_cluster_partition_clear(&st[p]);
    free(st);
}

void cl_controller_run(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap) {
    int i, n;
    if (!cl->is_controller || cl->ctrl_epoch_version < 0 || !cl_alive(cl))
        return;
    for (i = 0; i < snap->ndeleting; i++) {
        struct cl_ctrl_busy *b;
        if (busy_find(cl, snap->deleting[i]) || !(b = busy_add(cl, snap->deleting[i])))
            continue;
        if (cl_ctrl_purge_topic(cl, snap->deleting[i], busy_done, b) != SF_OK)
            busy_unlink(cl, b);
    }
    for (i = 0; i < snap->ntopics; i++) {
        const sf_cluster_topic_t *t = snap->topics[i];
        struct cl_ctrl_busy *b;
        sf_cluster_partition_t *st;
        if (busy_find(cl, t->name) || sf_cluster_snapshot_deleting(snap, t->name))
            continue;
        if (!(st = new_states(cl, snap, t, &n)) || !n)
            continue;
        if (!(b = busy_add(cl, t->name))) {
            int k;
            for (k = 0; k < n; k++)
                sf_cluster_partition_clear(&st[k]);
            free(st);
            continue;
        }
        sf_log(SF_LOG_INFO, "CONTROLLER", "electing leaders for %d new partition(s) of %s", n,
               t->name);
        if (cl_ctrl_create_states(cl, t->name, st, n, busy_done, b) != SF_OK)
            busy_unlink(cl, b);
    }
    controller_batch(cl, snap, NULL, NULL, NULL);
    for (i = 0; i < snap->ntopics; i++)
        finish_reassignments(cl, snap, snap->topics[i]);
    cl_reassign_listed(cl, snap);
    cl_coordinators_run(cl, snap);
    if (cl->npref && !cl->pref_busy) {
        cl->pref_busy = 1;
        if (!controller_batch(cl, snap, decide_listed, NULL, "preferred replica election"))
            preferred_done(cl); /* nothing to elect */
    }
}

static void preferred_deleted(int err, int zrc, void *arg) {
    sf_cluster_t *cl = arg;
    (void)err;
    (void)zrc;
    cl->pref_busy = 0;
}

/* The elections /admin/preferred_replica_election asked for are written: Kafka's controller
 * deletes the znode then (a new controller finds it again if this one fails before). */
static void preferred_done(sf_cluster_t *cl) {
    if (!cl_alive(cl) || !cl->is_controller ||
        sf_zk_delete(cl->zk, "/admin/preferred_replica_election", -1, preferred_deleted, cl) !=
            SF_OK)
        cl->pref_busy = 0;
}

/* Kafka's auto leader rebalance, every leader.imbalance.check.interval.seconds: the live
 * brokers whose share of preferred partitions led elsewhere is past the threshold get them
 * back, where they are in the ISR. */
void cl_rebalance_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    const sf_cluster_snapshot_t *snap = cl->current;
    int32_t *ids;
    int i, n = 0;
    (void)fd;
    (void)what;
    if (!snap || !cl->is_controller || cl->ctrl_epoch_version < 0 || !cl_alive(cl))
        return;
    if (!(ids = calloc((size_t)snap->nbrokers + 1, sizeof(*ids))))
        return;
    for (i = 0; i < snap->nbrokers; i++)
        if (sf_elect_imbalanced(snap, snap->brokers[i].id, cl->imbalance_percentage))
            ids[n++] = snap->brokers[i].id;
    ids[n] = -1;
    if (n)
        controller_batch(cl, snap, decide_rebalance, ids, "leader rebalance");
    free(ids);
}

void cl_controller_stop(sf_cluster_t *cl) {
    struct cl_ctrl_busy *b, *next;
    for (b = cl->ctrl_busy; b; b = next) {
        next = b->next;
        b->cl = NULL; /* its completion frees it */
    }
    cl->ctrl_busy = NULL;
    cl->pref_busy = 0;
}
