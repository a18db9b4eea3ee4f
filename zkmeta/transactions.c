/* Transaction state in ZooKeeper (cluster.h): /transactions/<id> holds what the transaction
 * coordinator of a transactional id keeps about it (opaque JSON here), written once per state
 * transition in a multi-op that checks the coordinator bucket's epoch and the znode's own
 * version, so a deposed coordinator, or one that missed a write, changes nothing. */
#include "cluster_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

#define TXN_ID_MAX 255 /* bytes of a transactional id kept in ZooKeeper */

struct txnop {
    sf_cluster_t *cl;
    sf_cluster_txn_cb cb;
    void *arg;
    char *path, *check, *data;
    int32_t version, epoch;
};

static void txnop_finish(struct txnop *t, int err, const char *data, int32_t version) {
    t->cb(t->arg, t->cl->closing ? SF_ERR_IO : err, data, version);
    free(t->path);
    free(t->check);
    free(t->data);
    free(t);
}

static struct txnop *txnop_new(sf_cluster_t *cl, const char *id, sf_cluster_txn_cb cb,
                               void *arg) {
    struct txnop *t;
    char *z;
    if (!cl || !cl_alive(cl) || !cl->registered)
        return NULL;
    if (!(t = calloc(1, sizeof(*t))) || !(z = malloc(3 * strlen(id) + 1))) {
        free(t);
        return NULL;
    }
    sf_cluster_group_znode(id, z);
    t->cl = cl;
    t->cb = cb;
    t->arg = arg;
    if ((t->path = malloc(strlen(z) + sizeof("/transactions/"))) != NULL)
        sprintf(t->path, "/transactions/%s", z);
    free(z);
    if (!t->path) {
        free(t);
        return NULL;
    }
    return t;
}

static void read_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                    void *arg) {
    struct txnop *t = arg;
    (void)zrc;
    (void)len;
    if (err == SF_ERR_NOTFOUND)
        txnop_finish(t, SF_OK, NULL, -1);
    else if (err != SF_OK || !data || !stat)
        txnop_finish(t, SF_ERR_IO, NULL, -1);
    else
        txnop_finish(t, SF_OK, data, stat->version);
}

int sf_cluster_txn_read(sf_cluster_t *cl, const char *id, sf_cluster_txn_cb cb, void *arg) {
    struct txnop *t;
    int rc;
    if (!*id || strlen(id) > TXN_ID_MAX)
        return SF_ERR_INVALID;
    if (!(t = txnop_new(cl, id, cb, arg)))
        return cl && cl_alive(cl) && cl->registered ? SF_ERR_NOMEM : SF_ERR_STATE;
    if ((rc = sf_zk_get(cl->zk, t->path, NULL, NULL, read_cb, t)) != SF_OK) {
        free(t->path);
        free(t);
    }
    return rc;
}

static void write_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct txnop *t = arg;
    (void)zrc;
    if (err == SF_OK) {
        int32_t v = t->data ? (t->version < 0 ? 0 : t->version + 1) : -1;
        if (t->data && n >= 2 && res[1].stat)
            v = res[1].stat->version;
        txnop_finish(t, SF_OK, NULL, v);
        return;
    }
    /* Refused by the server (the bucket's epoch, the znode's version or existence): someone
     * else owns it now; anything else may not have reached it. */
    txnop_finish(t, err == SF_ERR_IO || n < 2 ? SF_ERR_IO : SF_ERR_STATE, NULL, -1);
}

int sf_cluster_txn_write(sf_cluster_t *cl, const char *id, int bucket, int32_t epoch,
                         int32_t version, const char *data, sf_cluster_txn_cb cb, void *arg) {
    struct txnop *t;
    sf_zk_op_t ops[2];
    char buf[64];
    int rc, len;
    if (!*id || strlen(id) > TXN_ID_MAX || bucket < 0 || (!data && version < 0))
        return SF_ERR_INVALID;
    if (data && strlen(data) > SF_ZK_MAX_REQUEST / 2)
        return SF_ERR_TOOLARGE;
    if (!(t = txnop_new(cl, id, cb, arg)))
        return cl && cl_alive(cl) && cl->registered ? SF_ERR_NOMEM : SF_ERR_STATE;
    snprintf(buf, sizeof(buf), "/coordinators/groups/%d", bucket);
    t->check = strdup(buf);
    t->data = data ? strdup(data) : NULL;
    t->version = version;
    t->epoch = epoch;
    if (!t->check || (data && !t->data)) {
        free(t->check);
        free(t->data);
        free(t->path);
        free(t);
        return SF_ERR_NOMEM;
    }
    len = data ? (int)strlen(data) : 0;
    ops[0] = sf_zk_op_check(t->check, epoch);
    ops[1] = !data         ? sf_zk_op_delete(t->path, version)
             : version < 0 ? sf_zk_op_create(t->path, t->data, len, 0)
                           : sf_zk_op_set(t->path, t->data, len, version);
    if ((rc = sf_zk_multi(cl->zk, ops, 2, write_cb, t)) != SF_OK) {
        free(t->check);
        free(t->data);
        free(t->path);
        free(t);
    }
    return rc;
}

int sf_cluster_txn_list(sf_cluster_t *cl, sf_cluster_groups_cb cb, void *arg) {
    return cl_list_names(cl, "/transactions", cb, arg);
}
