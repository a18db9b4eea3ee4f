/* Transaction state in ZooKeeper (cluster.h): /transactions/<id> holds what the transaction
 * coordinator of a transactional id keeps about it, and /coordinators/groups/<b>/<name> the
 * offsets a transaction committed for a group of bucket b until its marker settles them (both
 * opaque JSON here). Each write is a multi-op that checks the coordinator bucket's epoch and
 * the znode's own version, so a deposed coordinator, or one that missed a write, changes
 * nothing. */
#include "cluster_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

#define TXN_ID_MAX SF_CLUSTER_TXN_ID_MAX
#define PENDING_NAME_MAX 1000 /* bytes of a pending offsets name: producer id and group */

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

/* A read or write of the znode at @path (taken over). */
static struct txnop *txnop_new(sf_cluster_t *cl, char *path, sf_cluster_txn_cb cb, void *arg) {
    struct txnop *t = path ? calloc(1, sizeof(*t)) : NULL;
    if (!t) {
        free(path);
        return NULL;
    }
    t->cl = cl;
    t->cb = cb;
    t->arg = arg;
    t->path = path;
    return t;
}

/* "<dir>/<name as a znode name>", malloc'd. */
static char *path_of(const char *dir, const char *name) {
    char *p = malloc(strlen(dir) + 3 * strlen(name) + 2);
    if (p) {
        sprintf(p, "%s/", dir);
        sf_cluster_group_znode(name, p + strlen(p));
    }
    return p;
}

static int ready(const sf_cluster_t *cl) {
    return cl && cl_alive(cl) && cl->registered;
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

static int txnop_read(sf_cluster_t *cl, char *path, sf_cluster_txn_cb cb, void *arg) {
    struct txnop *t;
    int rc;
    if (!ready(cl)) {
        free(path);
        return SF_ERR_STATE;
    }
    if (!(t = txnop_new(cl, path, cb, arg)))
        return SF_ERR_NOMEM;
    if ((rc = sf_zk_get(cl->zk, t->path, NULL, NULL, read_cb, t)) != SF_OK) {
        free(t->path);
        free(t);
    }
    return rc;
}

int sf_cluster_txn_read(sf_cluster_t *cl, const char *id, sf_cluster_txn_cb cb, void *arg) {
    if (!*id || strlen(id) > TXN_ID_MAX)
        return SF_ERR_INVALID;
    return txnop_read(cl, path_of("/transactions", id), cb, arg);
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
    /* A znode to delete that is gone already: done. */
    if (!t->data && n >= 2 && res[0].err == SF_OK && res[1].err == SF_ERR_NOTFOUND) {
        txnop_finish(t, SF_OK, NULL, -1);
        return;
    }
    /* Refused by the server (the bucket's epoch, the znode's version or existence): someone
     * else owns it now; anything else may not have reached it. */
    txnop_finish(t, err == SF_ERR_IO || n < 2 ? SF_ERR_IO : SF_ERR_STATE, NULL, -1);
}

/* Create, replace or delete @path (taken over) checked against the bucket's epoch. */
static int txnop_write(sf_cluster_t *cl, char *path, int bucket, int32_t epoch, int32_t version,
                       const char *data, sf_cluster_txn_cb cb, void *arg) {
    struct txnop *t;
    sf_zk_op_t ops[2];
    char buf[64];
    int rc, len;
    if (bucket < 0 || (!data && version < 0) ||
        (data && strlen(data) > SF_ZK_MAX_REQUEST / 2)) {
        free(path);
        return bucket < 0 || !data ? SF_ERR_INVALID : SF_ERR_TOOLARGE;
    }
    if (!ready(cl)) {
        free(path);
        return SF_ERR_STATE;
    }
    if (!(t = txnop_new(cl, path, cb, arg)))
        return SF_ERR_NOMEM;
    snprintf(buf, sizeof(buf), "/coordinators/groups/%d", bucket);
    t->check = strdup(buf);
    t->data = data ? strdup(data) : NULL;
    t->version = version;
    t->epoch = epoch;
    if (!t->check || (data && !t->data)) {
        rc = SF_ERR_NOMEM;
        goto fail;
    }
    len = data ? (int)strlen(data) : 0;
    ops[0] = sf_zk_op_check(t->check, epoch);
    ops[1] = !data         ? sf_zk_op_delete(t->path, version)
             : version < 0 ? sf_zk_op_create(t->path, t->data, len, 0)
                           : sf_zk_op_set(t->path, t->data, len, version);
    if ((rc = sf_zk_multi(cl->zk, ops, 2, write_cb, t)) == SF_OK)
        return SF_OK;
fail:
    free(t->check);
    free(t->data);
    free(t->path);
    free(t);
    return rc;
}

int sf_cluster_txn_write(sf_cluster_t *cl, const char *id, int bucket, int32_t epoch,
                         int32_t version, const char *data, sf_cluster_txn_cb cb, void *arg) {
    if (!*id || strlen(id) > TXN_ID_MAX)
        return SF_ERR_INVALID;
    return txnop_write(cl, path_of("/transactions", id), bucket, epoch, version, data, cb, arg);
}

/* ---- pending transactional offsets: /coordinators/groups/<b>/<name> ---- */

static char *bucket_dir(int bucket, char *buf, size_t size) {
    snprintf(buf, size, "/coordinators/groups/%d", bucket);
    return buf;
}

int sf_cluster_pending_list(sf_cluster_t *cl, int bucket, sf_cluster_groups_cb cb, void *arg) {
    char dir[64];
    return cl_list_names(cl, bucket_dir(bucket, dir, sizeof(dir)), cb, arg);
}

int sf_cluster_pending_read(sf_cluster_t *cl, int bucket, const char *name, sf_cluster_txn_cb cb,
                            void *arg) {
    char dir[64];
    if (!*name || strlen(name) > PENDING_NAME_MAX)
        return SF_ERR_INVALID;
    return txnop_read(cl, path_of(bucket_dir(bucket, dir, sizeof(dir)), name), cb, arg);
}

int sf_cluster_pending_write(sf_cluster_t *cl, int bucket, int32_t epoch, const char *name,
                             int32_t version, const char *data, sf_cluster_txn_cb cb,
                             void *arg) {
    char dir[64];
    if (!*name || strlen(name) > PENDING_NAME_MAX)
        return SF_ERR_INVALID;
    return txnop_write(cl, path_of(bucket_dir(bucket, dir, sizeof(dir)), name), bucket, epoch,
                       version, data, cb, arg);
}

int sf_cluster_txn_list(sf_cluster_t *cl, sf_cluster_groups_cb cb, void *arg) {
    return cl_list_names(cl, "/transactions", cb, arg);
}
