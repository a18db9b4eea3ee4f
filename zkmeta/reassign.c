/* The controller's reassignment writes (cluster.h sf_cluster_reassign, cluster_int.h):
 * starting a reassignment rewrites the topic znode's replicas with "adding_replicas" and
 * "removing_replicas" (read, changed and set versioned, topic by topic); finishing one writes
 * the partition states and the topic znode in one multi-op; /admin/reassign_partitions, the
 * ZooKeeper-era request, is started from and pruned as its partitions finish. Every write is
 * fenced by /controller_epoch. */
#include "cluster_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "logging.h"
#include "reassign_rules.h"
#include "znode.h"

#define REASSIGN_PATH "/admin/reassign_partitions"
#define RS_QUEUED 2 /* an item in the topic write in flight */

/* ---- starting (or cancelling) reassignments ---- */

struct cl_rstart {
    sf_cluster_t *cl;
    sf_cluster_reassignment_t *r;
    int n;
    const char *topic; /* of the write in flight (an item's) */
    int retries;
    char *path, *data;
    sf_zk_op_t ops[2];
    cl_states_done_cb done;
    void *arg;
};

static void rs_next(struct cl_rstart *rs);

/* Items of the topic in flight (or every item left, with @topic NULL) get @err. */
static void rs_settle(struct cl_rstart *rs, const char *topic, int from, int err) {
    int i;
    for (i = 0; i < rs->n; i++)
        if (rs->r[i].err == from && (!topic || !strcmp(rs->r[i].topic, topic)))
            rs->r[i].err = err;
}

static void rs_finish(struct cl_rstart *rs, int err) {
    if (err != SF_OK) {
        rs_settle(rs, NULL, SF_AGAIN, err);
        rs_settle(rs, NULL, RS_QUEUED, err);
    }
    if (rs->done)
        rs->done(rs->arg, err);
    free(rs->path);
    free(rs->data);
    free(rs);
}

static void rs_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_rstart *rs = arg;
    sf_cluster_t *cl = rs->cl;
    if (cl->closing) {
        rs_finish(rs, SF_ERR_IO);
        return;
    }
    if (err == SF_OK) {
        rs_settle(rs, rs->topic, RS_QUEUED, SF_OK);
    } else if (n >= 1 && res[0].err == SF_ERR_STATE) {
        sf_log(SF_LOG_WARNING, "ZK", "/controller_epoch moved on: broker %d is no longer the "
               "controller; reassignment not written", (int)cl->broker_id);
        cl_ctrl_set(cl, 0);
        cl_read_controller(cl);
        rs_finish(rs, SF_ERR_STATE);
        return;
    } else if (n >= 2 && res[1].err == SF_ERR_STATE && rs->retries++ < CL_ADMIN_RETRIES) {
        rs_settle(rs, rs->topic, RS_QUEUED, SF_AGAIN); /* the topic changed: read it again */
    } else {
        sf_log(SF_LOG_WARNING, "ZK", "reassigning partitions of %s failed: %s", rs->topic,
               sf_zk_strerror(zrc));
        rs_settle(rs, rs->topic, RS_QUEUED, SF_ERR_IO);
    }
    rs_next(rs);
}

/* Apply the items of the topic in flight to its decoded znode; returns how many changed. */
static int rs_apply(struct cl_rstart *rs, sf_cluster_topic_t *dec) {
    int i, queued = 0;
    for (i = 0; i < rs->n; i++) {
        sf_cluster_reassignment_t *r = &rs->r[i];
        sf_cluster_partition_t *p, np;
        if (r->err != SF_AGAIN || strcmp(r->topic, rs->topic))
            continue;
        if (r->partition < 0 || r->partition >= dec->npartitions) {
            r->err = SF_ERR_NOTFOUND;
            continue;
        }
        p = &dec->partitions[r->partition];
        if (!r->replicas && !sf_cluster_partition_reassigning(p)) {
            r->err = SF_OK; /* nothing to cancel */
            continue;
        }
        if ((r->err = sf_reassign_start(p, r->replicas, r->nreplicas, &np)) != SF_OK)
            continue;
        free(p->replicas);
        free(p->adding);
        free(p->removing);
        p->replicas = np.replicas;
        p->nreplicas = np.nreplicas;
        p->adding = np.adding;
        p->nadding = np.nadding;
        p->removing = np.removing;
        p->nremoving = np.nremoving;
        r->err = RS_QUEUED;
        queued++;
    }
    return queued;
}

static void rs_read_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                       void *arg) {
    struct cl_rstart *rs = arg;
    sf_cluster_t *cl = rs->cl;
    sf_cluster_topic_t dec;
    int n, rc;
    (void)zrc;
    if (cl->closing || !cl->is_controller) {
        rs_finish(rs, cl->closing ? SF_ERR_IO : SF_ERR_STATE);
        return;
    }
    if (err != SF_OK || !stat) {
        rs_settle(rs, rs->topic, SF_AGAIN, err == SF_ERR_NOTFOUND ? SF_ERR_NOTFOUND : SF_ERR_IO);
        rs_next(rs);
        return;
    }
    if (sf_znode_topic_decode(data, (size_t)len, &dec) != SF_OK) {
        sf_log(SF_LOG_WARNING, "ZK", "cannot reassign partitions of %s: malformed topic znode",
               rs->topic);
        rs_settle(rs, rs->topic, SF_AGAIN, SF_ERR_IO);
        rs_next(rs);
        return;
    }
    n = rs_apply(rs, &dec);
    free(rs->data);
    rs->data = n ? sf_znode_topic_encode(dec.topic_id, dec.partitions, dec.npartitions) : NULL;
    sf_cluster_topic_clear(&dec);
    if (!n) {
        rs_next(rs);
        return;
    }
    if (!rs->data) {
        rs_finish(rs, SF_ERR_NOMEM);
        return;
    }
    sf_log(SF_LOG_INFO, "CONTROLLER", "reassigning %d partition(s) of %s", n, rs->topic);
    rs->ops[0] = sf_zk_op_check("/controller_epoch", cl->ctrl_epoch_version);
    rs->ops[1] = sf_zk_op_set(rs->path, rs->data, (int)strlen(rs->data), stat->version);
    rc = sf_zk_multi(cl->zk, rs->ops, 2, rs_multi_cb, rs);
    if (rc != SF_OK)
        rs_finish(rs, SF_ERR_IO);
}

/* Read the next topic with items left; finish when there is none. */
static void rs_next(struct cl_rstart *rs) {
    int i;
    for (i = 0; i < rs->n && rs->r[i].err != SF_AGAIN; i++)
        ;
    if (i == rs->n) {
        rs_finish(rs, SF_OK);
        return;
    }
    rs->topic = rs->r[i].topic;
    free(rs->path);
    if (asprintf(&rs->path, "/brokers/topics/%s", rs->topic) < 0) {
        rs->path = NULL;
        rs_finish(rs, SF_ERR_NOMEM);
        return;
    }
    if (sf_zk_get(rs->cl->zk, rs->path, NULL, NULL, rs_read_cb, rs) != SF_OK)
        rs_finish(rs, SF_ERR_IO);
}

static int reassign_start(sf_cluster_t *cl, sf_cluster_reassignment_t *r, int n,
                          cl_states_done_cb done, void *arg) {
    struct cl_rstart *rs;
    int i;
    if (!cl || !cl_alive(cl) || !cl->is_controller || cl->ctrl_epoch_version < 0)
        return SF_ERR_STATE;
    if (n < 1)
        return SF_ERR_INVALID;
    if (!(rs = calloc(1, sizeof(*rs))))
        return SF_ERR_NOMEM;
    for (i = 0; i < n; i++)
        r[i].err = SF_AGAIN;
    rs->cl = cl;
    rs->r = r;
    rs->n = n;
    rs->done = done;
    rs->arg = arg;
    rs_next(rs);
    return SF_OK;
}

/* sf_cluster_reassign's completion goes to the owner through the notify queue. */
struct cl_rdone {
    sf_cluster_t *cl;
    sf_cluster_done_cb done;
    void *arg;
};

static void public_done(void *arg, int err) {
    struct cl_rdone *d = arg;
    cl_notify_done(d->cl, d->done, d->arg, err);
    free(d);
}

int sf_cluster_reassign(sf_cluster_t *cl, sf_cluster_reassignment_t *r, int n,
                        sf_cluster_done_cb done, void *arg) {
    struct cl_rdone *d = malloc(sizeof(*d));
    int rc;
    if (!d)
        return SF_ERR_NOMEM;
    d->cl = cl;
    d->done = done;
    d->arg = arg;
    if ((rc = reassign_start(cl, r, n, public_done, d)) != SF_OK)
        free(d);
    return rc;
}

/* ---- finishing: the new states and the topic znode in one multi-op ---- */

struct cl_rfinish {
    sf_cluster_t *cl;
    char *topic;
    sf_cluster_partition_t *st;
    int n;
    sf_zk_op_t *ops;
    char **strs; /* paths and data of the ops */
    int nstrs;
    cl_states_done_cb done;
    void *arg;
};

static void rf_free(struct cl_rfinish *rf) {
    int i;
    for (i = 0; i < rf->n; i++)
        sf_cluster_partition_clear(&rf->st[i]);
    for (i = 0; i < rf->nstrs; i++)
        free(rf->strs[i]);
    free(rf->st);
    free(rf->strs);
    free(rf->ops);
    free(rf->topic);
    free(rf);
}

static void rf_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_rfinish *rf = arg;
    sf_cluster_t *cl = rf->cl;
    int rc = err == SF_OK ? SF_OK : SF_ERR_IO;
    if (cl->closing) {
        rc = SF_ERR_IO;
    } else if (err == SF_OK) {
        sf_log(SF_LOG_INFO, "CONTROLLER", "reassignment of %d partition(s) of %s finished",
               rf->n, rf->topic);
    } else if (n >= 1 && res[0].err == SF_ERR_STATE) {
        cl_ctrl_set(cl, 0);
        cl_read_controller(cl);
        rc = SF_ERR_STATE;
    } else if (res && n > 1) {
        rc = SF_ERR_STATE; /* a state or the topic changed meanwhile: the next snapshot tells */
    } else {
        sf_log(SF_LOG_WARNING, "ZK", "finishing the reassignment of %s failed: %s", rf->topic,
               sf_zk_strerror(zrc));
    }
    if (rf->done)
        rf->done(rf->arg, rc);
    rf_free(rf);
}

/* Keep @s (malloc'd; NULL on no memory) for the multi-op. */
static char *rf_str(struct cl_rfinish *rf, char *s) {
    if (s)
        rf->strs[rf->nstrs++] = s;
    return s;
}

/* The ops: the fence, each partition's state (versioned), the topic znode (versioned). */
static int rf_build(struct cl_rfinish *rf, const sf_cluster_topic_t *t) {
    sf_cluster_t *cl = rf->cl;
    sf_cluster_partition_t *parts;
    char *path, *data;
    int i;
    rf->ops[0] = sf_zk_op_check("/controller_epoch", cl->ctrl_epoch_version);
    for (i = 0; i < rf->n; i++) {
        sf_cluster_partition_t *st = &rf->st[i];
        st->controller_epoch = cl->controller_epoch;
        if (asprintf(&path, "/brokers/topics/%s/partitions/%d/state", t->name,
                     (int)st->partition) < 0 ||
            !rf_str(rf, path) || !(data = rf_str(rf, sf_znode_pstate_encode(st))))
            return SF_ERR_NOMEM;
        rf->ops[1 + i] = sf_zk_op_set(path, data, (int)strlen(data),
                                      t->partitions[st->partition].state_version);
    }
    /* The topic's partitions with the finished ones replaced (borrowed, not freed here). */
    if (!(parts = malloc((size_t)t->npartitions * sizeof(*parts))))
        return SF_ERR_NOMEM;
    memcpy(parts, t->partitions, (size_t)t->npartitions * sizeof(*parts));
    for (i = 0; i < rf->n; i++) {
        sf_cluster_partition_t *p = &parts[rf->st[i].partition];
        p->replicas = rf->st[i].replicas;
        p->nreplicas = rf->st[i].nreplicas;
        p->nadding = p->nremoving = 0;
    }
    data = rf_str(rf, sf_znode_topic_encode(t->topic_id, parts, t->npartitions));
    free(parts);
    if (!data || asprintf(&path, "/brokers/topics/%s", t->name) < 0 || !rf_str(rf, path))
        return SF_ERR_NOMEM;
    rf->ops[1 + rf->n] = sf_zk_op_set(path, data, (int)strlen(data), t->znode_version);
    return SF_OK;
}

int cl_reassign_finish_topic(sf_cluster_t *cl, const sf_cluster_topic_t *t,
                             sf_cluster_partition_t *st, int n, cl_states_done_cb done,
                             void *arg) {
    struct cl_rfinish *rf = calloc(1, sizeof(*rf));
    int rc = SF_ERR_NOMEM;
    if (rf) {
        rf->cl = cl;
        rf->st = st;
        rf->n = n;
        rf->topic = strdup(t->name);
        rf->ops = calloc((size_t)n + 2, sizeof(*rf->ops));
        rf->strs = calloc(2 * (size_t)n + 2, sizeof(char *));
    }
    if (!rf || !rf->topic || !rf->ops || !rf->strs || rf_build(rf, t) != SF_OK ||
        (rc = sf_zk_multi(cl->zk, rf->ops, n + 2, rf_multi_cb, rf)) != SF_OK) {
        if (rf) {
            rf_free(rf);
        } else {
            int i;
            for (i = 0; i < n; i++)
                sf_cluster_partition_clear(&st[i]);
            free(st);
        }
        return rc;
    }
    rf->done = done;
    rf->arg = arg;
    return SF_OK;
}

/* ---- /admin/reassign_partitions ---- */

/* What the controller makes of one entry of the znode. */
enum { L_DONE, L_WAIT, L_START };

static int same_ids(const int32_t *a, int na, const int32_t *b, int nb) {
    return na == nb && (!na || !memcmp(a, b, (size_t)na * sizeof(int32_t)));
}

static int listed_state(const sf_cluster_snapshot_t *snap, const sf_znode_tp_t *e) {
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(snap, e->topic);
    const sf_cluster_partition_t *p;
    int32_t target[SF_CLUSTER_MAX_REPLICAS];
    int i, n;
    if (!t || e->partition >= t->npartitions || e->nreplicas < 1) {
        sf_log(SF_LOG_WARNING, "CONTROLLER", "ignoring the reassignment of %s-%d in "
               REASSIGN_PATH ": no such partition, or no replicas", e->topic, (int)e->partition);
        return L_DONE;
    }
    for (i = 0; i < e->nreplicas; i++)
        if (!sf_cluster_snapshot_broker(snap, e->replicas[i])) {
            sf_log(SF_LOG_WARNING, "CONTROLLER", "ignoring the reassignment of %s-%d in "
                   REASSIGN_PATH ": broker %d is not registered", e->topic, (int)e->partition,
                   (int)e->replicas[i]);
            return L_DONE;
        }
    p = &t->partitions[e->partition];
    if (!sf_cluster_partition_reassigning(p))
        return same_ids(p->replicas, p->nreplicas, e->replicas, e->nreplicas) ? L_DONE : L_START;
    n = sf_reassign_target(p, target);
    return same_ids(target, n, e->replicas, e->nreplicas) ? L_WAIT : L_START;
}

/* The controller's work on the znode's entries: copies (the znode may be read again while
 * they are written). */
struct cl_rlisted {
    sf_cluster_t *cl;
    sf_znode_tp_t *v;
    int n;
    sf_cluster_reassignment_t *r;
    char *data;
};

static void rl_free(struct cl_rlisted *rl) {
    sf_znode_tps_free(rl->v, rl->n);
    free(rl->r);
    free(rl->data);
    free(rl);
}

static void rl_started(void *arg, int err) {
    struct cl_rlisted *rl = arg;
    (void)err;
    rl->cl->reassign_busy = 0;
    rl_free(rl);
}

static void rl_pruned(int err, int zrc, void *arg) {
    struct cl_rlisted *rl = arg;
    (void)err;
    (void)zrc;
    rl->cl->reassign_busy = 0;
    rl_free(rl);
}

static void rl_pruned_set(int err, int zrc, const sf_zk_stat_t *stat, void *arg) {
    (void)stat;
    rl_pruned(err, zrc, arg);
}

static int tp_copy(sf_znode_tp_t *dst, const sf_znode_tp_t *src) {
    dst->partition = src->partition;
    dst->nreplicas = src->nreplicas;
    dst->topic = strdup(src->topic);
    dst->replicas = malloc((size_t)src->nreplicas * sizeof(int32_t) + 1);
    if (!dst->topic || !dst->replicas)
        return SF_ERR_NOMEM;
    memcpy(dst->replicas, src->replicas, (size_t)src->nreplicas * sizeof(int32_t));
    return SF_OK;
}

/* Start the entries in @rl (all of them). */
static int rl_start(sf_cluster_t *cl, struct cl_rlisted *rl) {
    int i;
    if (!(rl->r = calloc((size_t)rl->n, sizeof(*rl->r))))
        return SF_ERR_NOMEM;
    for (i = 0; i < rl->n; i++) {
        rl->r[i].topic = rl->v[i].topic;
        rl->r[i].partition = rl->v[i].partition;
        rl->r[i].replicas = rl->v[i].replicas;
        rl->r[i].nreplicas = rl->v[i].nreplicas;
    }
    return reassign_start(cl, rl->r, rl->n, rl_started, rl);
}

/* Write the znode back with the entries in @rl (delete it when there are none). */
static int rl_prune(sf_cluster_t *cl, struct cl_rlisted *rl) {
    if (!rl->n)
        return sf_zk_delete(cl->zk, REASSIGN_PATH, -1, rl_pruned, rl);
    if (!(rl->data = sf_znode_reassign_encode(rl->v, rl->n)))
        return SF_ERR_NOMEM;
    return sf_zk_set(cl->zk, REASSIGN_PATH, rl->data, (int)strlen(rl->data), -1, rl_pruned_set,
                     rl);
}

void cl_reassign_listed(sf_cluster_t *cl, const sf_cluster_snapshot_t *snap) {
    struct cl_rlisted *rl;
    int i, nstart = 0, ndone = 0, rc = SF_OK, *state;
    if (!cl->nreassign || cl->reassign_busy)
        return;
    if (!(state = malloc((size_t)cl->nreassign * sizeof(int))))
        return;
    for (i = 0; i < cl->nreassign; i++) {
        state[i] = listed_state(snap, &cl->reassign[i]);
        nstart += state[i] == L_START;
        ndone += state[i] == L_DONE;
    }
    rl = nstart || ndone ? calloc(1, sizeof(*rl)) : NULL;
    if (rl && !(rl->v = calloc((size_t)cl->nreassign, sizeof(*rl->v)))) {
        free(rl);
        rl = NULL;
    }
    if (!rl) {
        free(state);
        return;
    }
    /* Start what is new first; prune once nothing is left to start. */
    rl->cl = cl;
    for (i = 0; rc == SF_OK && i < cl->nreassign; i++)
        if (nstart ? state[i] == L_START : state[i] != L_DONE)
            rc = tp_copy(&rl->v[rl->n++], &cl->reassign[i]);
    free(state);
    cl->reassign_busy = 1; /* cleared by the completion, which may come at once */
    if (rc == SF_OK)
        rc = nstart ? rl_start(cl, rl) : rl_prune(cl, rl);
    if (rc != SF_OK) {
        cl->reassign_busy = 0;
        rl_free(rl);
    }
}
