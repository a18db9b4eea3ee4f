/* The controller's duties in ZooKeeper (cluster_int.h): it alone writes partition state.
 * After each snapshot it creates the states of partitions that have none (new topics, added
 * partitions: leader = the first live replica, leader epoch 0, ISR = the leader alone, since
 * nothing replicates to the others yet) and purges the topics whose deletion was requested.
 * At most one write per topic is in flight; the next snapshot shows its outcome. */
#include "cluster_int.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "logging.h"

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

/* The first replica of @p that is registered, or -1. */
static int32_t first_live(const sf_cluster_snapshot_t *snap, const sf_cluster_partition_t *p) {
    int i;
    for (i = 0; i < p->nreplicas; i++)
        if (sf_cluster_snapshot_broker(snap, p->replicas[i]))
            return p->replicas[i];
    return -1;
}

/* The new states for @t's partitions without one (malloc'd, *@n of them; NULL when none). */
static sf_cluster_partition_t *new_states(const sf_cluster_t *cl, const sf_cluster_snapshot_t *snap,
                                          const sf_cluster_topic_t *t, int *n) {
    sf_cluster_partition_t *st = NULL;
    int p, m = 0;
    *n = 0;
    for (p = 0; p < t->npartitions; p++) {
        const sf_cluster_partition_t *part = &t->partitions[p];
        int32_t leader;
        if (sf_cluster_partition_has_state(part) || (leader = first_live(snap, part)) < 0)
            continue; /* a partition with no live replica stays offline for now */
        if (!st && !(st = calloc((size_t)(t->npartitions - p), sizeof(*st))))
            return NULL;
        st[m].partition = p;
        st[m].leader = leader;
        st[m].leader_epoch = 0;
        st[m].controller_epoch = cl->controller_epoch;
        if (!(st[m].isr = malloc(sizeof(int32_t)))) {
            int i;
            for (i = 0; i < m; i++)
                sf_cluster_partition_clear(&st[i]);
            free(st);
            return NULL;
        }
        st[m].isr[0] = leader;
        st[m].nisr = 1;
        m++;
    }
    *n = m;
    return st;
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
}

void cl_controller_stop(sf_cluster_t *cl) {
    struct cl_ctrl_busy *b, *next;
    for (b = cl->ctrl_busy; b; b = next) {
        next = b->next;
        b->cl = NULL; /* its completion frees it */
    }
    cl->ctrl_busy = NULL;
}
