/* The controller's rewrites of existing partition states (elections, ISR changes): versioned
 * setData ops, many partitions per multi-op behind the /controller_epoch fence, split so that a
 * multi-op stays well under ZooKeeper's request limit. A partition whose state znode moved on
 * (BADVERSION) or vanished is left out and the rest written again: the next snapshot shows
 * what the other writer did. */
#include "cluster_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "logging.h"
#include "znode.h"

/* One multi-op carries at most this many state writes and about this many bytes (ZooKeeper
 * refuses requests past jute.maxbuffer, 1 MB). */
#define SW_MAX_OPS 1000
#define SW_MAX_BYTES (SF_ZK_MAX_REQUEST / 2)

struct cl_swrite {
    sf_cluster_t *cl;
    sf_cluster_state_write_t *w;
    int n;
    int next;       /* first item not yet in a multi-op */
    int *idx;       /* items of the multi-op in flight */
    int nidx;
    sf_zk_op_t *ops; /* ops[0] is the fence */
    char **paths, **datas;
    cl_states_done_cb done;
    void *arg;
};

static void sw_clear_ops(struct cl_swrite *sw) {
    int i;
    for (i = 0; i < sw->nidx; i++) {
        free(sw->paths[i]);
        free(sw->datas[i]);
        sw->paths[i] = sw->datas[i] = NULL;
    }
    sw->nidx = 0;
}

static void sw_finish(struct cl_swrite *sw, int err) {
    int i;
    sw_clear_ops(sw);
    /* Items never written share the outcome of the whole. */
    for (i = 0; i < sw->n; i++)
        if (sw->w[i].err == SF_AGAIN)
            sw->w[i].err = err == SF_OK ? SF_ERR_IO : err;
    if (sw->done)
        sw->done(sw->arg, err);
    free(sw->idx);
    free(sw->ops);
    free(sw->paths);
    free(sw->datas);
    free(sw);
}

static int sw_issue(struct cl_swrite *sw);

static void sw_fail_all(struct cl_swrite *sw, int err) {
    int k;
    for (k = 0; k < sw->nidx; k++)
        sw->w[sw->idx[k]].err = err;
    sw_finish(sw, err);
}

/* Drop item @k of the multi-op in flight (it failed with @err) and send the others again. */
static void sw_drop(struct cl_swrite *sw, int k, int err) {
    int i;
    sw->w[sw->idx[k]].err = err;
    sw_clear_ops(sw);
    /* Those after it go back to the queue: rewind to the first other item. */
    for (i = 0; i < sw->n; i++)
        if (sw->w[i].err == SF_AGAIN)
            break;
    sw->next = i;
    if (sw_issue(sw) != SF_OK)
        sw_finish(sw, SF_ERR_IO);
}

static void sw_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_swrite *sw = arg;
    sf_cluster_t *cl = sw->cl;
    int k, f = -1;
    if (cl->closing) {
        sw_fail_all(sw, SF_ERR_IO);
        return;
    }
    if (err == SF_OK) {
        for (k = 0; k < sw->nidx; k++) {
            sf_cluster_state_write_t *w = &sw->w[sw->idx[k]];
            w->err = SF_OK;
            w->new_version = res && k + 1 < n && res[k + 1].stat ? res[k + 1].stat->version
                                                                 : w->version + 1;
        }
        cl_model_wrote_states(cl, sw->w, sw->idx, sw->nidx);
        sw_clear_ops(sw);
        if (sw_issue(sw) != SF_OK)
            sw_finish(sw, SF_ERR_IO);
        return;
    }
    if (n >= 1 && res[0].err == SF_ERR_STATE) {
        sf_log(SF_LOG_WARNING, "ZK", "/controller_epoch moved on: broker %d is no longer the "
               "controller; partition states not written", (int)cl->broker_id);
        cl_ctrl_set(cl, 0);
        cl_read_controller(cl);
        sw_fail_all(sw, SF_ERR_STATE);
        return;
    }
    for (k = 1; res && k < n && f < 0; k++)
        if (res[k].err != SF_OK)
            f = k;
    if (f > 0 && f - 1 < sw->nidx &&
        (res[f].err == SF_ERR_STATE || res[f].err == SF_ERR_NOTFOUND)) {
        sw_drop(sw, f - 1, res[f].err);
        return;
    }
    sf_log(SF_LOG_WARNING, "ZK", "writing %d partition state(s) failed: %s", sw->nidx,
           sf_zk_strerror(zrc));
    sw_fail_all(sw, SF_ERR_IO);
}

/* The next multi-op from the queue; calls sw_finish when nothing is left. */
static int sw_issue(struct cl_swrite *sw) {
    sf_cluster_t *cl = sw->cl;
    size_t bytes = 64;
    while (sw->next < sw->n && sw->nidx < SW_MAX_OPS && bytes < SW_MAX_BYTES) {
        sf_cluster_state_write_t *w = &sw->w[sw->next++];
        char *path = NULL, *data;
        int k = sw->nidx;
        if (w->err != SF_AGAIN)
            continue;
        w->st.controller_epoch = cl->controller_epoch;
        if (asprintf(&path, "/brokers/topics/%s/partitions/%d/state", w->topic,
                     (int)w->st.partition) < 0)
            path = NULL;
        data = sf_znode_pstate_encode(&w->st);
        if (!path || !data) {
            free(path);
            free(data);
            return SF_ERR_NOMEM;
        }
        sw->paths[k] = path;
        sw->datas[k] = data;
        sw->idx[k] = (int)(w - sw->w);
        sw->ops[k + 1] = sf_zk_op_set(path, data, (int)strlen(data), w->version);
        sw->nidx++;
        bytes += strlen(path) + strlen(data) + 32;
    }
    if (!sw->nidx) {
        sw_finish(sw, SF_OK);
        return SF_OK;
    }
    sw->ops[0] = sf_zk_op_check("/controller_epoch", cl->ctrl_epoch_version);
    return sf_zk_multi(cl->zk, sw->ops, sw->nidx + 1, sw_multi_cb, sw);
}

int cl_ctrl_write_states(sf_cluster_t *cl, sf_cluster_state_write_t *w, int n,
                         cl_states_done_cb done, void *arg) {
    struct cl_swrite *sw;
    int i, cap = n < SW_MAX_OPS ? n : SW_MAX_OPS, rc;
    if (!cl || !cl_alive(cl) || !cl->is_controller || cl->ctrl_epoch_version < 0)
        return SF_ERR_STATE;
    if (n < 1)
        return SF_ERR_INVALID;
    if (!(sw = calloc(1, sizeof(*sw))))
        return SF_ERR_NOMEM;
    sw->idx = calloc((size_t)cap, sizeof(int));
    sw->ops = calloc((size_t)cap + 1, sizeof(sf_zk_op_t));
    sw->paths = calloc((size_t)cap, sizeof(char *));
    sw->datas = calloc((size_t)cap, sizeof(char *));
    sw->cl = cl;
    sw->w = w;
    sw->n = n;
    if (!sw->idx || !sw->ops || !sw->paths || !sw->datas) {
        sw->done = NULL;
        sw_finish(sw, SF_ERR_NOMEM);
        return SF_ERR_NOMEM;
    }
    for (i = 0; i < n; i++)
        w[i].err = SF_AGAIN; /* not written yet */
    sw->done = done;
    sw->arg = arg;
    rc = sw_issue(sw);
    if (rc != SF_OK) {
        /* Nothing was sent: no completion follows. */
        sw->done = NULL;
        sw_finish(sw, rc);
    }
    return rc;
}

/* sf_cluster_alter_isr's completion goes to the owner through the notify queue. */
struct cl_alter {
    sf_cluster_t *cl;
    sf_cluster_done_cb done;
    void *arg;
};

static void alter_done(void *arg, int err) {
    struct cl_alter *al = arg;
    cl_notify_done(al->cl, al->done, al->arg, err);
    free(al);
}

int sf_cluster_alter_isr(sf_cluster_t *cl, sf_cluster_state_write_t *w, int n,
                         sf_cluster_done_cb done, void *arg) {
    struct cl_alter *al;
    int rc;
    if (!(al = malloc(sizeof(*al))))
        return SF_ERR_NOMEM;
    al->cl = cl;
    al->done = done;
    al->arg = arg;
    rc = cl_ctrl_write_states(cl, w, n, alter_done, al);
    if (rc != SF_OK)
        free(al);
    return rc;
}
