/* Partition-state writes on behalf of a request (state_write.h). The operation lives on the
 * heap: the ZooKeeper completion may come after the request was answered (a timeout,
 * shutdown); it is freed when both happened. */
#include "state_write.h"

#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "dispatch.h"

struct sf_kstate_op {
    sf_kreq_t *kr;               /* NULL once answered */
    const void *resp;            /* in the request arena */
    sf_cluster_state_write_t *w; /* the writes (topics and ISRs on the heap) */
    void **slot;                 /* the result place of each write */
    int n, cap;
    sf_kstate_fill_fn fill;
    int zk_pending;
    sf_pwait_t *wait;
};

sf_kstate_op_t *sf_kstate_op_new(sf_kreq_t *kr, const void *resp, int cap, sf_kstate_fill_fn fill) {
    sf_kstate_op_t *op = calloc(1, sizeof(*op));
    if (!op)
        return NULL;
    op->w = calloc((size_t)cap + 1, sizeof(*op->w));
    op->slot = calloc((size_t)cap + 1, sizeof(*op->slot));
    if (!op->w || !op->slot) {
        free(op->w);
        free(op->slot);
        free(op);
        return NULL;
    }
    op->kr = kr;
    op->resp = resp;
    op->cap = cap;
    op->fill = fill;
    return op;
}

static void op_free(sf_kstate_op_t *op) {
    int i;
    for (i = 0; i < op->n; i++) {
        free((char *)op->w[i].topic);
        free(op->w[i].st.isr);
    }
    free(op->w);
    free(op->slot);
    free(op);
}

static void answer(sf_kstate_op_t *op) {
    sf_kreq_respond(op->kr, op->resp);
    op->kr = NULL; /* the arena (and the response) are gone */
}

int sf_kstate_op_add(sf_kstate_op_t *op, const char *topic, const sf_cluster_partition_t *part,
                     int32_t leader, int32_t leader_epoch, const int32_t *isr, int nisr,
                     void *slot) {
    sf_cluster_state_write_t *w;
    if (op->n >= op->cap)
        return SF_ERR_NOMEM;
    w = &op->w[op->n];
    memset(w, 0, sizeof(*w));
    w->topic = strdup(topic);
    w->st.isr = malloc((size_t)(nisr > 0 ? nisr : 1) * sizeof(int32_t));
    if (!w->topic || !w->st.isr) {
        free((char *)w->topic);
        free(w->st.isr);
        return SF_ERR_NOMEM;
    }
    if (nisr > 0)
        memcpy(w->st.isr, isr, (size_t)nisr * sizeof(int32_t));
    w->st.nisr = nisr;
    w->st.partition = part->partition;
    w->st.leader = leader;
    w->st.leader_epoch = leader_epoch;
    w->version = part->state_version;
    op->slot[op->n++] = slot;
    return SF_OK;
}

static void write_done(void *arg, int err) {
    sf_kstate_op_t *op = arg;
    int i;
    op->zk_pending = 0;
    if (!op->kr) {
        op_free(op);
        return;
    }
    for (i = 0; i < op->n; i++) {
        const sf_cluster_state_write_t *w = &op->w[i];
        int e = err == SF_OK ? w->err : err;
        op->fill(op->slot[i], &w->st, w->new_version,
                 e == SF_OK                                ? SF_KERR_NONE
                 : e == SF_ERR_STATE && err == SF_OK       ? SF_KERR_INVALID_UPDATE_VERSION
                 : e == SF_ERR_STATE                       ? SF_KERR_NOT_CONTROLLER
                 : e == SF_ERR_NOTFOUND                    ? SF_KERR_UNKNOWN_TOPIC_OR_PARTITION
                                                           : sf_err_to_kerr(e, SF_ERR_OP_REQUEST));
    }
    if (op->wait)
        sf_purgatory_cancel(sf_broker_purgatory(op->kr->b), op->wait);
    op->wait = NULL;
    answer(op);
    op_free(op);
}

static int attempt(void *arg, int final) {
    sf_kstate_op_t *op = arg;
    int i;
    if (!final)
        return 0;
    op->wait = NULL;
    for (i = 0; i < op->n; i++)
        op->fill(op->slot[i], &op->w[i].st, -1, SF_KERR_REQUEST_TIMED_OUT);
    answer(op);
    if (!op->zk_pending)
        op_free(op);
    return 1;
}

void sf_kstate_op_run(sf_kstate_op_t *op) {
    sf_cluster_t *cl = sf_broker_cluster(op->kr->b);
    sf_pkey_t key = sf_pkey_metadata();
    int rc;
    if (!op->n) {
        answer(op);
        op_free(op);
        return;
    }
    op->zk_pending = 1;
    rc = sf_cluster_alter_isr(cl, op->w, op->n, write_done, op);
    if (rc != SF_OK) {
        write_done(op, rc); /* answered as a completion would be */
        return;
    }
    op->wait = sf_kreq_park(op->kr, &key, 1, SF_KSTATE_MAX_WAIT_MS, attempt, op);
}

void sf_kstate_op_abandon(sf_kstate_op_t *op, const char *close_why) {
    if (close_why)
        sf_kreq_close(op->kr, close_why);
    else
        answer(op);
    op_free(op);
}
