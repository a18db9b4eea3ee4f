/* The controller's placement of the group coordinator buckets (/coordinators/groups, see
 * cluster.h): created once with offsets.topic.num.partitions buckets spread over the live
 * brokers, then rewritten whenever a bucket's broker is gone or the counts per broker differ
 * by more than one (placement.h). A move sets /coordinators/groups/<b>, whose version is the
 * bucket's epoch, in the same multi-op as the summary (versioned) and behind the
 * /controller_epoch fence; the model reads the summary back through its watch. */
#include "cluster_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "logging.h"
#include "placement.h"
#include "znode.h"

struct cl_bwrite {
    sf_cluster_t *cl;
    sf_zk_op_t *ops;
    char **bufs; /* paths and data of the ops, owned */
    int nops, nbufs, moved;
};

static void bwrite_free(struct cl_bwrite *w) {
    int i;
    for (i = 0; i < w->nbufs; i++)
        free(w->bufs[i]);
    free(w->bufs);
    free(w->ops);
    free(w);
}

static char *keep(struct cl_bwrite *w, char *s) {
    if (s)
        w->bufs[w->nbufs++] = s;
    return s;
}

static char *bucket_data(struct cl_bwrite *w, int32_t broker) {
    char buf[64];
    snprintf(buf, sizeof(buf), "{\"version\":1,\"broker\":%d}", (int)broker);
    return keep(w, strdup(buf));
}

static char *bucket_path(struct cl_bwrite *w, int b) {
    char buf[64];
    snprintf(buf, sizeof(buf), "/coordinators/groups/%d", b);
    return keep(w, strdup(buf));
}

#define BUCKETS_RETRY_MS 1000

void cl_buckets_retry_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    (void)fd;
    (void)what;
    cl->gbuckets_busy = 0;
    if (cl_alive(cl) && cl->is_controller && cl->current)
        cl_coordinators_run(cl, cl->current);
}

static void bwrite_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_bwrite *w = arg;
    sf_cluster_t *cl = w->cl;
    if (!cl->closing) {
        cl->gbuckets_busy = 0;
        if (err == SF_OK) {
            sf_log(SF_LOG_INFO, "CONTROLLER", "%d group coordinator bucket(s) placed", w->moved);
        } else if (n >= 1 && res[0].err == SF_ERR_STATE) {
            cl_ctrl_set(cl, 0);
            cl_read_controller(cl);
        } else {
            /* Someone else changed them (the watch brings the new ones) or ZooKeeper failed:
             * try again in a while, with what the model has read by then. */
            struct timeval tv = {BUCKETS_RETRY_MS / 1000, (BUCKETS_RETRY_MS % 1000) * 1000};
            sf_log(SF_LOG_WARNING, "CONTROLLER", "placing group coordinators failed: %s",
                   sf_zk_strerror(zrc));
            cl->gbuckets_busy = 1;
            evtimer_add(cl->gbuckets_timer, &tv);
        }
    }
    bwrite_free(w);
}

/* Whether broker @b asked for a controlled shutdown under its current registration; entries
 * of registrations that are gone are dropped on the way. */
static int evacuating(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap,
                      const sf_cluster_broker_t *b) {
    int i, found = 0;
    for (i = 0; i < cl->nevac;) {
        const sf_cluster_broker_t *r = sf_cluster_snapshot_broker(snap, cl->evac[i].id);
        if (!r || r->epoch != cl->evac[i].epoch) {
            cl->evac[i] = cl->evac[--cl->nevac];
            continue;
        }
        found |= r == b;
        i++;
    }
    return found;
}

/* The ids of the live brokers of @snap that may coordinate (sorted, as snap->brokers) into a
 * malloc'd array; @n gets their count (all of them when every one is shutting down). */
static int32_t *live_ids(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap, int *n) {
    int32_t *v = malloc((size_t)(snap->nbrokers + 1) * sizeof(int32_t));
    int i;
    *n = 0;
    for (i = 0; v && i < snap->nbrokers; i++)
        if (!evacuating(cl, snap, &snap->brokers[i]))
            v[(*n)++] = snap->brokers[i].id;
    for (i = 0; v && !*n && i < snap->nbrokers; i++)
        v[(*n)++] = snap->brokers[i].id;
    return v;
}

int sf_cluster_broker_shutting_down(sf_cluster_t *cl, int32_t broker) {
    const sf_cluster_snapshot_t *snap = cl->current;
    const sf_cluster_broker_t *b = snap ? sf_cluster_snapshot_broker(snap, broker) : NULL;
    return cl->is_controller && b && evacuating(cl, snap, b);
}

void sf_cluster_coordinators_evacuate(sf_cluster_t *cl, int32_t broker) {
    const sf_cluster_snapshot_t *snap = cl->current;
    const sf_cluster_broker_t *b = snap ? sf_cluster_snapshot_broker(snap, broker) : NULL;
    struct cl_evac *v;
    int i;
    if (!cl->is_controller || !b)
        return;
    for (i = 0; i < cl->nevac; i++)
        if (cl->evac[i].id == broker && cl->evac[i].epoch == b->epoch)
            return; /* asked again: under way */
    if (!(v = realloc(cl->evac, (size_t)(cl->nevac + 1) * sizeof(*v))))
        return;
    cl->evac = v;
    cl->evac[cl->nevac].id = broker;
    cl->evac[cl->nevac++].epoch = b->epoch;
    sf_log(SF_LOG_INFO, "CONTROLLER", "broker %d is shutting down: moving its group coordinators",
           (int)broker);
    cl_coordinators_run(cl, snap);
}

/* The ops: fence, summary (created or set versioned), and each moved bucket's znode. */
static int bwrite_build(struct cl_bwrite *w, const sf_cluster_bucket_t *cur,
                        const sf_cluster_bucket_t *out, int n, int create) {
    sf_cluster_t *cl = w->cl;
    char *sum = keep(w, sf_znode_buckets_encode(out, n));
    int b;
    if (!sum)
        return SF_ERR_NOMEM;
    w->ops[w->nops++] = sf_zk_op_check("/controller_epoch", cl->ctrl_epoch_version);
    w->ops[w->nops++] = create ? sf_zk_op_create("/coordinators/groups", sum, (int)strlen(sum), 0)
                               : sf_zk_op_set("/coordinators/groups", sum, (int)strlen(sum),
                                              cl->gbuckets_version);
    for (b = 0; b < n; b++) {
        char *path, *data;
        if (!create && out[b].broker == cur[b].broker)
            continue;
        if (!(path = bucket_path(w, b)) || !(data = bucket_data(w, out[b].broker)))
            return SF_ERR_NOMEM;
        w->ops[w->nops++] = create ? sf_zk_op_create(path, data, (int)strlen(data), 0)
                                   : sf_zk_op_set(path, data, (int)strlen(data), cur[b].epoch);
    }
    return SF_OK;
}

void cl_coordinators_run(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap) {
    int create = cl->gbuckets_version < 0, n = create ? cl->offsets_buckets : cl->ngbuckets, b;
    sf_cluster_bucket_t *cur = NULL, *out = NULL;
    struct cl_bwrite *w = NULL;
    int32_t *live = NULL;
    int rc = SF_ERR_NOMEM, nlive = 0;
    if (cl->gbuckets_busy || snap->nbrokers < 1 || n < 1 || !cl->synced)
        return;
    if (!(cur = malloc((size_t)n * sizeof(*cur))) || !(out = malloc((size_t)n * sizeof(*out))) ||
        !(live = live_ids(cl, snap, &nlive)) || !(w = calloc(1, sizeof(*w))) ||
        !(w->ops = calloc((size_t)n + 2, sizeof(*w->ops))) ||
        !(w->bufs = calloc((size_t)(2 * n + 1), sizeof(char *))))
        goto out;
    for (b = 0; b < n; b++) {
        cur[b].broker = create ? -1 : cl->gbuckets[b].broker;
        cur[b].epoch = create ? -1 : cl->gbuckets[b].epoch;
    }
    w->cl = cl;
    if ((w->moved = sf_placement_buckets(cur, n, live, nlive, out)) <= 0) {
        rc = w->moved < 0 ? SF_ERR_NOMEM : SF_OK;
        goto out;
    }
    if ((rc = bwrite_build(w, cur, out, n, create)) == SF_OK &&
        (rc = sf_zk_multi(cl->zk, w->ops, w->nops, bwrite_cb, w)) == SF_OK) {
        cl->gbuckets_busy = 1;
        w = NULL;
    }
out:
    if (rc != SF_OK)
        sf_log(SF_LOG_WARNING, "CONTROLLER", "cannot place group coordinators now: %s",
               sf_err_str(rc));
    if (w)
        bwrite_free(w);
    free(cur);
    free(out);
    free(live);
}
