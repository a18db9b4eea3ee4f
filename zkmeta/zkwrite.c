/* The module's ZooKeeper writes, each one multi-op: the admin writes behind CreateTopics,
 * DeleteTopics, CreatePartitions and AlterConfigs (any broker: topic assignments, topic and
 * dynamic broker configs and deletion requests only), and the controller's (partition states,
 * topic purges), each fenced by the version of /controller_epoch the controller won (DESIGN.md
 * section 4). */
#include "cluster_int.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "err.h"
#include "logging.h"
#include "znode.h"
#include "placement.h"

/* ---- admin writes ---- */

enum { A_CREATE = 1, A_DELETE, A_ADD, A_CONFIG, A_STATES, A_PURGE, A_BCONFIG };

/* What a write names in its log line, by kind. */
static const char *const admin_what[] = {"", "creating topic", "deleting topic",
                                         "adding partitions to", "setting the config of",
                                         "creating partition states of", "purging topic",
                                         "setting the dynamic config of broker"};

/* Existence probes issued before building a delete / add multi-op. */
enum { P_TOPIC, P_CFG, P_ADMIN, P_MAX };

struct cl_admin;
struct cl_probe {
    struct cl_admin *a;
    int exists;
};

struct cl_admin {
    sf_cluster_t *cl;
    int kind;
    char *topic;
    sf_cluster_done_cb done;
    void *arg;
    int retries;
    /* the prepared multi-op (strings owned here) */
    sf_zk_op_t *ops;
    int nops, capops;
    char **strs;
    int nstrs, capstrs;
    /* index of the op whose failure has a meaning of its own, -1 if none: create and config:
     * the /config/topics op; broker config: the /config/brokers op */
    int key_index;
    char *cfg_json;
    /* delete / add: pipelined reads */
    int outstanding, read_err;
    struct cl_probe probes[P_MAX];
    char **children;
    int nchildren, children_absent;
    /* controller: the states to create (A_STATES), owned */
    sf_cluster_partition_t *states;
    int nstates;
    /* add */
    int32_t new_total;
    int32_t *assignment; /* copy, or NULL */
    int nassignment;
    char *topic_data;
    int topic_len, topic_version, topic_missing;
};

static void admin_ops_free(struct cl_admin *a) {
    int i;
    for (i = 0; i < a->nstrs; i++)
        free(a->strs[i]);
    free(a->strs);
    free(a->ops);
    a->strs = NULL;
    a->ops = NULL;
    a->nstrs = a->capstrs = a->nops = a->capops = 0;
}

/* Drop a previous multi-op and make room for @nops ops and @nstrs strings. */
static int admin_ops_reset(struct cl_admin *a, int nops, int nstrs) {
    admin_ops_free(a);
    a->ops = calloc((size_t)nops, sizeof(*a->ops));
    a->strs = calloc((size_t)nstrs, sizeof(char *));
    if (!a->ops || !a->strs)
        return SF_ERR_NOMEM;
    a->capops = nops;
    a->capstrs = nstrs;
    return SF_OK;
}

static void admin_free(struct cl_admin *a) {
    int i;
    admin_ops_free(a);
    for (i = 0; i < a->nstates; i++)
        sf_cluster_partition_clear(&a->states[i]);
    free(a->states);
    free(a->cfg_json);
    for (i = 0; i < a->nchildren; i++)
        free(a->children[i]);
    free(a->children);
    free(a->assignment);
    free(a->topic_data);
    free(a->topic);
    free(a);
}

static void admin_finish(struct cl_admin *a, int err) {
    sf_cluster_t *cl = a->cl;
    cl_notify_done(cl, a->done, a->arg, err);
    admin_free(a);
}

static struct cl_admin *admin_new(sf_cluster_t *cl, int kind, const char *topic,
                                  sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a = calloc(1, sizeof(*a));
    int i;
    if (!a || !(a->topic = strdup(topic))) {
        free(a);
        return NULL;
    }
    a->cl = cl;
    a->kind = kind;
    a->done = done;
    a->arg = arg;
    a->key_index = -1;
    for (i = 0; i < P_MAX; i++)
        a->probes[i].a = a;
    return a;
}

/* Keep @s (malloc'd, may be NULL = no memory) alive with the admin op; returns it. */
static char *admin_str(struct cl_admin *a, char *s) {
    if (s && a->nstrs == a->capstrs) {
        free(s);
        s = NULL;
    }
    if (!s)
        return NULL;
    a->strs[a->nstrs++] = s;
    return s;
}

/* Append an op of @type on the path printf(@fmt, ...) to the multi-op. Creates are
 * persistent; @data (NULL for none) is borrowed and must live as long as the op; @version is
 * for deletes, sets and checks. SF_OK or SF_ERR_NOMEM. */
static int admin_op(struct cl_admin *a, int type, const char *data, int version, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));
static int admin_op(struct cl_admin *a, int type, const char *data, int version, const char *fmt,
                    ...) {
    char *path = NULL;
    int len = data ? (int)strlen(data) : 0;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&path, fmt, ap) < 0)
        path = NULL;
    va_end(ap);
    if (path && a->nops == a->capops) {
        free(path);
        path = NULL;
    }
    if (!admin_str(a, path))
        return SF_ERR_NOMEM;
    switch (type) {
    case SF_ZK_OP_CREATE:
        a->ops[a->nops++] = sf_zk_op_create(path, data, len, SF_ZK_PERSISTENT);
        break;
    case SF_ZK_OP_DELETE: a->ops[a->nops++] = sf_zk_op_delete(path, version); break;
    case SF_ZK_OP_SET: a->ops[a->nops++] = sf_zk_op_set(path, data, len, version); break;
    default: a->ops[a->nops++] = sf_zk_op_check(path, version); break;
    }
    return SF_OK;
}

/* Start of every multi-op completion: finish on success or while closing. Returns 1 if @a was
 * finished. */
static int admin_multi_settled(struct cl_admin *a, int err) {
    if (!a->cl->closing && err != SF_OK)
        return 0;
    admin_finish(a, a->cl->closing ? SF_ERR_IO : SF_OK);
    return 1;
}

/* The multi-op failed for good. */
static void admin_multi_failed(struct cl_admin *a, int zrc) {
    sf_log(SF_LOG_WARNING, "ZK", "%s %s failed: %s", admin_what[a->kind], a->topic,
           sf_zk_strerror(zrc));
    admin_finish(a, SF_ERR_IO);
}

static int first_failed(const sf_zk_op_result_t *res, int n) {
    int i;
    for (i = 0; res && i < n; i++)
        if (res[i].err != SF_OK)
            return i;
    return -1;
}

static int ready_for_admin(const sf_cluster_t *cl) {
    return cl && cl_alive(cl) && cl->ready && cl->current;
}

/* Validate an explicit assignment: ids >= 0, no duplicates within a partition. */
static int assignment_valid(const int32_t *v, int32_t np, int rf) {
    int32_t p;
    int i, j;
    for (p = 0; p < np; p++) {
        const int32_t *r = v + (size_t)p * (size_t)rf;
        for (i = 0; i < rf; i++) {
            if (r[i] < 0)
                return 0;
            for (j = 0; j < i; j++)
                if (r[i] == r[j])
                    return 0;
        }
    }
    return 1;
}

/* Kafka's placement of @nparts new partitions of @topic, numbered from @start_partition with
 * @rf replicas each, over the live brokers of @snap (may be NULL) into @out: rack-aware when
 * every one of them has a rack (placement.h). @first_replica: partition 0's first replica when
 * adding partitions, -1 for a new topic (a random start). Returns SF_OK, SF_ERR_INVALID (fewer
 * live brokers than @rf) or SF_ERR_NOMEM. */
static int place_new(const sf_cluster_snapshot_t *snap, const char *topic, int32_t nparts,
                     int rf, int32_t start_partition, int32_t first_replica, int32_t *out) {
    int n = snap ? snap->nbrokers : 0, start = -1, nracks = 0, i, rc = SF_ERR_NOMEM;
    int32_t *ids;
    const char **racks;
    if (rf > n)
        return SF_ERR_INVALID;
    ids = malloc((size_t)n * sizeof(*ids));
    racks = malloc((size_t)n * sizeof(*racks));
    if (!ids || !racks)
        goto out;
    for (i = 0; i < n; i++) {
        ids[i] = snap->brokers[i].id; /* sorted by id */
        racks[i] = snap->brokers[i].rack;
        nracks += racks[i] != NULL;
    }
    /* Kafka: continue from the first broker at or after partition 0's first replica, by its
     * index among the brokers sorted by id (also when the placement is rack-aware). */
    if (first_replica >= 0) {
        for (start = 0; start < n && ids[start] < first_replica; start++)
            ;
        if (start >= n)
            start = 0;
    }
    if (nracks > 0 && nracks < n)
        sf_log(SF_LOG_WARNING, "ZK", "placing %s without racks: not every live broker has "
               "broker.rack (%d of %d)", topic, nracks, n);
    rc = sf_placement_assign(ids, racks, n, nparts, rf, start_partition, start, out);
out:
    free(ids);
    free(racks);
    return rc;
}

/* -- reads before a delete / add -- */

static void purge_build(struct cl_admin *a);
static void states_build(struct cl_admin *a);
static void add_build(struct cl_admin *a);

/* Count a read issued (@rc SF_OK) or note that it could not be. */
static void admin_read_issued(struct cl_admin *a, int rc) {
    if (rc == SF_OK)
        a->outstanding++;
    else
        a->read_err = 1;
}

static void admin_read_done(struct cl_admin *a) {
    if (--a->outstanding > 0)
        return;
    if (a->cl->closing)
        admin_finish(a, SF_ERR_IO);
    else if (a->kind == A_PURGE)
        purge_build(a);
    else if (a->kind == A_STATES)
        states_build(a);
    else
        add_build(a);
}

static void admin_exists_cb(int err, int zrc, const sf_zk_stat_t *stat, void *arg) {
    struct cl_probe *pr = arg;
    (void)zrc;
    (void)stat;
    pr->exists = err == SF_OK;
    if (err != SF_OK && err != SF_ERR_NOTFOUND)
        pr->a->read_err = 1;
    admin_read_done(pr->a);
}

/* Issue an existence probe of the path printf(@fmt, ...) into a->probes[@which]. */
static void admin_probe(struct cl_admin *a, int which, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void admin_probe(struct cl_admin *a, int which, const char *fmt, ...) {
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    admin_read_issued(a, sf_zk_exists(a->cl->zk, path, NULL, NULL, admin_exists_cb,
                                      &a->probes[which]));
}

/* -- create -- */

static void create_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    int f;
    if (admin_multi_settled(a, err))
        return;
    f = first_failed(res, n);
    if (f == 0 && res[0].err == SF_ERR_EXISTS) {
        admin_finish(a, SF_ERR_EXISTS);
        return;
    }
    if (f >= 0 && f == a->key_index && res[f].err == SF_ERR_EXISTS &&
        a->retries++ < CL_ADMIN_RETRIES) {
        /* A config left over from an earlier incarnation of the topic: overwrite it. */
        a->ops[f] = sf_zk_op_set(a->ops[f].path, a->cfg_json, (int)strlen(a->cfg_json), -1);
        if (sf_zk_multi(a->cl->zk, a->ops, a->nops, create_multi_cb, a) == SF_OK)
            return;
    }
    admin_multi_failed(a, zrc);
}

/* The assignment znode's share of the create multi-op: the rest (paths, the config znode)
 * gets the remainder. */
#define ASSIGNMENT_MAX_BYTES (SF_ZK_MAX_REQUEST - 16 * 1024)

static int decimal_len(int64_t v) {
    int n = 1;
    for (; v >= 10; v /= 10)
        n++;
    return n;
}

/* Bytes of the assignment znode of partitions @from..@to-1 (sf_znode_topic_encode, compact),
 * each with @rf replica ids of at most @id_len digits: "p":[id,id] and a comma. */
static int64_t assignment_bytes(int32_t from, int32_t to, int rf, int id_len) {
    int64_t n = 64; /* {"version":1,"topic_id":"<22 characters>","partitions":{}} */
    int64_t p;
    for (p = from; p < to; p++)
        n += decimal_len(p) + 6 + (int64_t)rf * (id_len + 1) - 1;
    return n;
}

int sf_cluster_partitions_check(const sf_cluster_t *cl, int32_t npartitions, int rf,
                                char *errstr, size_t errstr_size) {
    int id_len = 1, i;
    int64_t bytes;
    if (npartitions < 1 || npartitions > SF_CLUSTER_MAX_PARTITIONS) {
        snprintf(errstr, errstr_size, "a topic has 1 to %d partitions, not %ld",
                 SF_CLUSTER_MAX_PARTITIONS, (long)npartitions);
        return SF_ERR_INVALID;
    }
    if (rf < 1 || rf > SF_CLUSTER_MAX_REPLICAS) {
        snprintf(errstr, errstr_size, "the replication factor is 1 to %d, not %d",
                 SF_CLUSTER_MAX_REPLICAS, rf);
        return SF_ERR_INVALID;
    }
    /* Placement may put the longest broker id anywhere: count it everywhere. */
    for (i = 0; cl && cl->current && i < cl->current->nbrokers; i++)
        if (decimal_len(cl->current->brokers[i].id) > id_len)
            id_len = decimal_len(cl->current->brokers[i].id);
    bytes = assignment_bytes(0, npartitions, rf, id_len);
    if (bytes > ASSIGNMENT_MAX_BYTES) {
        snprintf(errstr, errstr_size,
                 "%ld partitions with replication factor %d need a %lld-byte assignment in "
                 "ZooKeeper, more than its %d-byte limit (jute.maxbuffer)",
                 (long)npartitions, rf, (long long)bytes, ASSIGNMENT_MAX_BYTES);
        return SF_ERR_TOOLARGE;
    }
    return SF_OK;
}

int sf_cluster_topic_create(sf_cluster_t *cl, const char *topic, int32_t npartitions,
                            int16_t replication_factor, const int32_t *assignment,
                            const sf_cluster_config_entry_t *configs, int nconfigs,
                            sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a;
    int32_t *assign = NULL, p;
    sf_cluster_partition_t *parts = NULL;
    uint8_t uuid[16];
    int rf = replication_factor, i, rc = SF_ERR_NOMEM;
    char *s, why[200];

    if (!sf_znode_topic_name_valid(topic) || nconfigs < 0 || (nconfigs && !configs))
        return SF_ERR_INVALID;
    if ((rc = sf_cluster_partitions_check(cl, npartitions, rf, why, sizeof(why))) != SF_OK)
        return rc;
    rc = SF_ERR_NOMEM;
    if (!ready_for_admin(cl))
        return SF_ERR_STATE;
    for (i = 0; i < nconfigs; i++)
        if (!configs[i].name || !*configs[i].name)
            return SF_ERR_INVALID;
    assign = malloc((size_t)npartitions * (size_t)rf * sizeof(int32_t));
    if (!assign)
        return SF_ERR_NOMEM;
    if (assignment) {
        if (!assignment_valid(assignment, npartitions, rf)) {
            free(assign);
            return SF_ERR_INVALID;
        }
        memcpy(assign, assignment, (size_t)npartitions * (size_t)rf * sizeof(int32_t));
    } else {
        rc = place_new(cl->current, topic, npartitions, rf, 0, -1, assign);
        if (rc != SF_OK) {
            free(assign);
            return rc;
        }
        rc = SF_ERR_NOMEM;
    }
    if (sf_znode_uuid_random(uuid) != SF_OK) {
        free(assign);
        return SF_ERR_IO;
    }
    a = admin_new(cl, A_CREATE, topic, done, arg);
    parts = calloc((size_t)npartitions, sizeof(*parts));
    if (!a || !parts)
        goto out;
    for (p = 0; p < npartitions; p++) {
        parts[p].partition = p;
        parts[p].replicas = assign + (size_t)p * (size_t)rf;
        parts[p].nreplicas = rf;
    }
    /* The assignment and the config; the controller creates the partition states. */
    if (admin_ops_reset(a, 2, 3))
        goto out;
    s = admin_str(a, sf_znode_topic_encode(uuid, parts, npartitions));
    if (!s || admin_op(a, SF_ZK_OP_CREATE, s, -1, "/brokers/topics/%s", topic))
        goto out;
    a->cfg_json = sf_znode_config_encode(configs, nconfigs);
    a->key_index = a->nops;
    if (!a->cfg_json || admin_op(a, SF_ZK_OP_CREATE, a->cfg_json, -1, "/config/topics/%s", topic))
        goto out;
    rc = sf_zk_multi(cl->zk, a->ops, a->nops, create_multi_cb, a);
out:
    free(parts);
    free(assign);
    if (rc != SF_OK && a)
        admin_free(a);
    return rc;
}

/* -- delete: a deletion request the controller carries out -- */

static void delete_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    int f;
    if (admin_multi_settled(a, err))
        return;
    f = first_failed(res, n);
    if (f == 0 && res[0].err == SF_ERR_NOTFOUND) {
        admin_finish(a, SF_ERR_NOTFOUND);
        return;
    }
    if (f == 1 && res[1].err == SF_ERR_EXISTS) {
        admin_finish(a, SF_OK); /* already requested */
        return;
    }
    admin_multi_failed(a, zrc);
}

int sf_cluster_topic_delete(sf_cluster_t *cl, const char *topic, sf_cluster_done_cb done,
                            void *arg) {
    struct cl_admin *a;
    int rc;
    if (!sf_znode_topic_name_valid(topic))
        return SF_ERR_INVALID;
    if (!ready_for_admin(cl))
        return SF_ERR_STATE;
    a = admin_new(cl, A_DELETE, topic, done, arg);
    if (!a)
        return SF_ERR_NOMEM;
    /* Kafka's /admin/delete_topics/<t>, checked against the topic in the same multi-op. */
    if (admin_ops_reset(a, 2, 2) ||
        admin_op(a, SF_ZK_OP_CHECK, NULL, -1, "/brokers/topics/%s", topic) ||
        admin_op(a, SF_ZK_OP_CREATE, NULL, -1, "/admin/delete_topics/%s", topic)) {
        admin_free(a);
        return SF_ERR_NOMEM;
    }
    rc = sf_zk_multi(cl->zk, a->ops, a->nops, delete_multi_cb, a);
    if (rc != SF_OK)
        admin_free(a);
    return rc;
}

/* -- the controller's writes: fenced by the version of /controller_epoch -- */

/* The first op of every controller multi-op. */
static int fence_op(struct cl_admin *a) {
    return admin_op(a, SF_ZK_OP_CHECK, NULL, a->cl->ctrl_epoch_version, "/controller_epoch");
}

/* A controller multi-op failed on its fence: another broker is the controller now. */
static int fenced_out(struct cl_admin *a, const sf_zk_op_result_t *res, int n) {
    if (n < 1 || res[0].err != SF_ERR_STATE)
        return 0;
    sf_log(SF_LOG_WARNING, "ZK", "/controller_epoch moved on: broker %d is no longer the "
           "controller; %s %s not done", (int)a->cl->broker_id, admin_what[a->kind], a->topic);
    cl_ctrl_set(a->cl, 0);
    cl_read_controller(a->cl);
    admin_finish(a, SF_ERR_STATE);
    return 1;
}

static void purge_issue(struct cl_admin *a);

static void purge_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    if (admin_multi_settled(a, err) || fenced_out(a, res, n))
        return;
    if ((err == SF_ERR_NOTFOUND || err == SF_ERR_STATE) && a->retries++ < CL_ADMIN_RETRIES) {
        /* Raced with another change (a partition added or removed): read again. */
        purge_issue(a);
        return;
    }
    admin_multi_failed(a, zrc);
}

static void purge_build(struct cl_admin *a) {
    sf_cluster_t *cl = a->cl;
    int i, rc;
    if (a->read_err) {
        admin_finish(a, SF_ERR_IO);
        return;
    }
    rc = admin_ops_reset(a, 2 * a->nchildren + 6, 2 * a->nchildren + 6);
    if (rc == SF_OK)
        rc = fence_op(a);
    for (i = 0; rc == SF_OK && i < a->nchildren; i++) {
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/brokers/topics/%s/partitions/%s/state",
                      a->topic, a->children[i]);
        if (rc == SF_OK)
            rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/brokers/topics/%s/partitions/%s",
                          a->topic, a->children[i]);
    }
    if (rc == SF_OK && !a->children_absent)
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/brokers/topics/%s/partitions", a->topic);
    if (rc == SF_OK && a->probes[P_TOPIC].exists)
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/brokers/topics/%s", a->topic);
    if (rc == SF_OK && a->probes[P_CFG].exists)
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/config/topics/%s", a->topic);
    if (rc == SF_OK && a->probes[P_ADMIN].exists)
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/admin/delete_topics/%s", a->topic);
    if (rc != SF_OK) {
        admin_finish(a, SF_ERR_NOMEM);
        return;
    }
    rc = sf_zk_multi(cl->zk, a->ops, a->nops, purge_multi_cb, a);
    if (rc != SF_OK)
        admin_finish(a, rc == SF_ERR_TOOLARGE ? SF_ERR_TOOLARGE : SF_ERR_IO);
}

static void children_cb(int err, int zrc, char *const *children, int n, const sf_zk_stat_t *stat,
                        void *arg) {
    struct cl_admin *a = arg;
    int i;
    (void)zrc;
    (void)stat;
    for (i = 0; i < a->nchildren; i++)
        free(a->children[i]);
    free(a->children);
    a->children = NULL;
    a->nchildren = 0;
    a->children_absent = err == SF_ERR_NOTFOUND;
    if (err == SF_OK && n > 0) {
        a->children = calloc((size_t)n, sizeof(char *));
        if (!a->children) {
            a->read_err = 1;
        } else {
            for (i = 0; i < n; i++) {
                if (!(a->children[i] = strdup(children[i]))) {
                    a->read_err = 1;
                    break;
                }
                a->nchildren = i + 1;
            }
        }
    } else if (err != SF_OK && err != SF_ERR_NOTFOUND) {
        a->read_err = 1;
    }
    admin_read_done(a);
}

/* Read the partitions of a->topic (and, for a purge, what else exists), then build. */
static void read_partitions(struct cl_admin *a) {
    char path[512];
    a->read_err = 0;
    a->outstanding = 1; /* guard while issuing */
    snprintf(path, sizeof(path), "/brokers/topics/%s/partitions", a->topic);
    admin_read_issued(a, sf_zk_get_children(a->cl->zk, path, NULL, NULL, children_cb, a));
    if (a->kind == A_PURGE) {
        admin_probe(a, P_TOPIC, "/brokers/topics/%s", a->topic);
        admin_probe(a, P_CFG, "/config/topics/%s", a->topic);
        admin_probe(a, P_ADMIN, "/admin/delete_topics/%s", a->topic);
    }
    admin_read_done(a);
}

static void purge_issue(struct cl_admin *a) {
    read_partitions(a);
}

static int ready_for_controller(const sf_cluster_t *cl) {
    return cl && cl_alive(cl) && cl->is_controller && cl->ctrl_epoch_version >= 0;
}

int cl_ctrl_purge_topic(sf_cluster_t *cl, const char *topic, sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a;
    if (!ready_for_controller(cl))
        return SF_ERR_STATE;
    if (!(a = admin_new(cl, A_PURGE, topic, done, arg)))
        return SF_ERR_NOMEM;
    sf_log(SF_LOG_INFO, "CONTROLLER", "deleting topic %s", topic);
    purge_issue(a);
    return SF_OK;
}

static void states_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    int f;
    if (admin_multi_settled(a, err) || fenced_out(a, res, n))
        return;
    f = first_failed(res, n);
    if (f > 0 && (res[f].err == SF_ERR_EXISTS || res[f].err == SF_ERR_NOTFOUND)) {
        /* Written meanwhile by someone else, or the topic went: the next snapshot tells. */
        admin_finish(a, SF_ERR_EXISTS);
        return;
    }
    admin_multi_failed(a, zrc);
}

static int has_child(const struct cl_admin *a, int32_t p) {
    int i;
    char name[16];
    snprintf(name, sizeof(name), "%d", (int)p);
    for (i = 0; i < a->nchildren; i++)
        if (!strcmp(a->children[i], name))
            return 1;
    return 0;
}

static void states_build(struct cl_admin *a) {
    int i, rc;
    if (a->read_err) {
        admin_finish(a, SF_ERR_IO);
        return;
    }
    rc = admin_ops_reset(a, 2 + 2 * a->nstates, 2 + 3 * a->nstates);
    if (rc == SF_OK)
        rc = fence_op(a);
    if (rc == SF_OK && a->children_absent)
        rc = admin_op(a, SF_ZK_OP_CREATE, NULL, -1, "/brokers/topics/%s/partitions", a->topic);
    for (i = 0; rc == SF_OK && i < a->nstates; i++) {
        const sf_cluster_partition_t *st = &a->states[i];
        char *json;
        if (!has_child(a, st->partition))
            rc = admin_op(a, SF_ZK_OP_CREATE, NULL, -1, "/brokers/topics/%s/partitions/%d",
                          a->topic, (int)st->partition);
        json = rc == SF_OK ? admin_str(a, sf_znode_pstate_encode(st)) : NULL;
        if (rc == SF_OK && (!json || admin_op(a, SF_ZK_OP_CREATE, json, -1,
                                              "/brokers/topics/%s/partitions/%d/state", a->topic,
                                              (int)st->partition)))
            rc = SF_ERR_NOMEM;
    }
    if (rc != SF_OK) {
        admin_finish(a, SF_ERR_NOMEM);
        return;
    }
    rc = sf_zk_multi(a->cl->zk, a->ops, a->nops, states_multi_cb, a);
    if (rc != SF_OK)
        admin_finish(a, rc == SF_ERR_TOOLARGE ? SF_ERR_TOOLARGE : SF_ERR_IO);
}

int cl_ctrl_create_states(sf_cluster_t *cl, const char *topic, sf_cluster_partition_t *states,
                          int n, sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a;
    int i;
    if (!ready_for_controller(cl)) {
        for (i = 0; i < n; i++)
            sf_cluster_partition_clear(&states[i]);
        free(states);
        return SF_ERR_STATE;
    }
    if (!(a = admin_new(cl, A_STATES, topic, done, arg))) {
        for (i = 0; i < n; i++)
            sf_cluster_partition_clear(&states[i]);
        free(states);
        return SF_ERR_NOMEM;
    }
    a->states = states;
    a->nstates = n;
    read_partitions(a);
    return SF_OK;
}

/* -- add partitions -- */

static void add_issue(struct cl_admin *a);

static void add_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    int f;
    if (admin_multi_settled(a, err))
        return;
    f = first_failed(res, n);
    if (f == 0 && res[0].err == SF_ERR_NOTFOUND) {
        admin_finish(a, SF_ERR_NOTFOUND);
        return;
    }
    if (f == 0 && res[0].err == SF_ERR_STATE && a->retries++ < CL_ADMIN_RETRIES) {
        add_issue(a); /* the topic changed since we read it */
        return;
    }
    admin_multi_failed(a, zrc);
}

static void add_build(struct cl_admin *a) {
    sf_cluster_t *cl = a->cl;
    sf_cluster_topic_t dec;
    sf_cluster_partition_t *parts = NULL;
    int32_t *assign = NULL, cur, nnew, p;
    int rf, rc, err = SF_ERR_NOMEM;
    char *s;

    if (a->read_err) {
        admin_finish(a, SF_ERR_IO);
        return;
    }
    if (a->topic_missing) {
        admin_finish(a, SF_ERR_NOTFOUND);
        return;
    }
    if (sf_znode_topic_decode(a->topic_data, (size_t)a->topic_len, &dec) != SF_OK ||
        dec.npartitions < 1) {
        sf_cluster_topic_clear(&dec);
        sf_log(SF_LOG_WARNING, "ZK", "cannot add partitions to %s: malformed topic znode",
               a->topic);
        admin_finish(a, SF_ERR_IO);
        return;
    }
    cur = dec.npartitions;
    rf = dec.partitions[0].nreplicas;
    nnew = a->new_total - cur;
    if (nnew < 1 || (a->assignment && a->nassignment != nnew * rf)) {
        sf_cluster_topic_clear(&dec);
        admin_finish(a, SF_ERR_INVALID);
        return;
    }
    assign = malloc((size_t)nnew * (size_t)rf * sizeof(int32_t));
    parts = calloc((size_t)a->new_total, sizeof(*parts));
    if (!assign || !parts)
        goto out;
    if (a->assignment) {
        memcpy(assign, a->assignment, (size_t)nnew * (size_t)rf * sizeof(int32_t));
    } else {
        err = place_new(cl->current, a->topic, nnew, rf, cur, dec.partitions[0].replicas[0],
                        assign);
        if (err != SF_OK)
            goto out;
        err = SF_ERR_NOMEM;
    }
    for (p = 0; p < a->new_total; p++) {
        parts[p].partition = p;
        if (p < cur) {
            parts[p] = dec.partitions[p]; /* borrowed, with any reassignment under way */
        } else {
            parts[p].replicas = assign + (size_t)(p - cur) * (size_t)rf;
            parts[p].nreplicas = rf;
        }
    }
    /* The new assignment, versioned; the controller creates the new partitions' states. */
    if (admin_ops_reset(a, 1, 2))
        goto out;
    s = admin_str(a, sf_znode_topic_encode(dec.topic_id, parts, a->new_total));
    if (!s || admin_op(a, SF_ZK_OP_SET, s, a->topic_version, "/brokers/topics/%s", a->topic))
        goto out;
    rc = sf_zk_multi(cl->zk, a->ops, a->nops, add_multi_cb, a);
    err = rc == SF_OK ? SF_OK : rc == SF_ERR_TOOLARGE ? SF_ERR_TOOLARGE : SF_ERR_IO;
out:
    free(assign);
    free(parts);
    sf_cluster_topic_clear(&dec);
    if (err != SF_OK)
        admin_finish(a, err);
}

static void add_topic_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                         void *arg) {
    struct cl_admin *a = arg;
    (void)zrc;
    free(a->topic_data);
    a->topic_data = NULL;
    a->topic_missing = err == SF_ERR_NOTFOUND;
    if (err == SF_OK && stat) {
        a->topic_data = malloc((size_t)len + 1);
        if (!a->topic_data) {
            a->read_err = 1;
        } else {
            memcpy(a->topic_data, data, (size_t)len + 1);
            a->topic_len = len;
            a->topic_version = stat->version;
        }
    } else if (err != SF_ERR_NOTFOUND) {
        a->read_err = 1;
    }
    admin_read_done(a);
}

static void add_issue(struct cl_admin *a) {
    char path[512];
    a->read_err = 0;
    a->outstanding = 1; /* guard while issuing */
    cl_path_topic(path, sizeof(path), a->topic);
    admin_read_issued(a, sf_zk_get(a->cl->zk, path, NULL, NULL, add_topic_cb, a));
    admin_read_done(a);
}

int sf_cluster_partitions_add(sf_cluster_t *cl, const char *topic, int32_t new_total,
                              const int32_t *assignment, sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a;
    char why[200];
    int rc;
    if (!sf_znode_topic_name_valid(topic) || new_total < 2)
        return SF_ERR_INVALID;
    /* The replication factor of the new partitions is the topic's; 1 bounds it from below. */
    if ((rc = sf_cluster_partitions_check(cl, new_total, 1, why, sizeof(why))) != SF_OK)
        return rc;
    if (!ready_for_admin(cl))
        return SF_ERR_STATE;
    a = admin_new(cl, A_ADD, topic, done, arg);
    if (!a)
        return SF_ERR_NOMEM;
    a->new_total = new_total;
    if (assignment) {
        /* Sized from the current snapshot (see cluster.h). */
        const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(cl->current, topic);
        int rf, nnew;
        if (!t || t->npartitions < 1) {
            admin_free(a);
            return SF_ERR_NOTFOUND;
        }
        rf = t->partitions[0].nreplicas;
        nnew = new_total - t->npartitions;
        if (nnew < 1 || rf < 1 || !assignment_valid(assignment, nnew, rf)) {
            admin_free(a);
            return SF_ERR_INVALID;
        }
        a->nassignment = nnew * rf;
        a->assignment = malloc((size_t)a->nassignment * sizeof(int32_t));
        if (!a->assignment) {
            admin_free(a);
            return SF_ERR_NOMEM;
        }
        memcpy(a->assignment, assignment, (size_t)a->nassignment * sizeof(int32_t));
    }
    add_issue(a);
    return SF_OK;
}

/* -- config -- */

/* Topic config: check the topic, then set (or create) /config/topics/<t>. Broker config: set
 * (or create) /config/brokers/<entity>, then the change notification. */
static void config_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    int f, k = a->key_index;
    if (admin_multi_settled(a, err))
        return;
    f = first_failed(res, n);
    if (a->kind == A_CONFIG && f == 0 && res[0].err == SF_ERR_NOTFOUND) {
        admin_finish(a, SF_ERR_NOTFOUND);
        return;
    }
    if (f == k && a->retries++ < CL_ADMIN_RETRIES &&
        (res[k].err == SF_ERR_NOTFOUND || res[k].err == SF_ERR_EXISTS)) {
        int len = (int)strlen(a->cfg_json);
        if (res[k].err == SF_ERR_NOTFOUND) /* no config node yet: create it */
            a->ops[k] = sf_zk_op_create(a->ops[k].path, a->cfg_json, len, SF_ZK_PERSISTENT);
        else /* created meanwhile: set it */
            a->ops[k] = sf_zk_op_set(a->ops[k].path, a->cfg_json, len, -1);
        if (sf_zk_multi(a->cl->zk, a->ops, a->nops, config_multi_cb, a) == SF_OK)
            return;
    }
    admin_multi_failed(a, zrc);
}

int sf_cluster_topic_config_set(sf_cluster_t *cl, const char *topic,
                                const sf_cluster_config_entry_t *configs, int n,
                                sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a;
    int i, rc;
    if (!sf_znode_topic_name_valid(topic) || n < 0 || (n && !configs))
        return SF_ERR_INVALID;
    for (i = 0; i < n; i++)
        if (!configs[i].name || !*configs[i].name)
            return SF_ERR_INVALID;
    if (!ready_for_admin(cl))
        return SF_ERR_STATE;
    a = admin_new(cl, A_CONFIG, topic, done, arg);
    if (!a)
        return SF_ERR_NOMEM;
    a->cfg_json = sf_znode_config_encode(configs, n);
    a->key_index = 1;
    if (!a->cfg_json || admin_ops_reset(a, 2, 2) ||
        admin_op(a, SF_ZK_OP_CHECK, NULL, -1, "/brokers/topics/%s", topic) ||
        admin_op(a, SF_ZK_OP_SET, a->cfg_json, -1, "/config/topics/%s", topic)) {
        admin_free(a);
        return SF_ERR_NOMEM;
    }
    rc = sf_zk_multi(cl->zk, a->ops, a->nops, config_multi_cb, a);
    if (rc != SF_OK)
        admin_free(a);
    return rc;
}

/* "<default>" or a broker id. */
static int broker_entity_valid(const char *entity) {
    int32_t id;
    return entity && (!strcmp(entity, SF_CLUSTER_DEFAULT_ENTITY) ||
                      sf_znode_parse_id(entity, &id) == SF_OK);
}

int sf_cluster_broker_config_set(sf_cluster_t *cl, const char *entity,
                                 const sf_cluster_config_entry_t *configs, int n,
                                 sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a;
    char *note, path[64];
    int i, rc;
    if (!broker_entity_valid(entity) || n < 0 || n > SF_CLUSTER_MAX_CONFIGS || (n && !configs))
        return SF_ERR_INVALID;
    for (i = 0; i < n; i++)
        if (!configs[i].name || !*configs[i].name)
            return SF_ERR_INVALID;
    if (!ready_for_admin(cl))
        return SF_ERR_STATE;
    a = admin_new(cl, A_BCONFIG, entity, done, arg);
    if (!a)
        return SF_ERR_NOMEM;
    snprintf(path, sizeof(path), "brokers/%s", entity);
    a->cfg_json = sf_znode_config_encode(configs, n);
    a->key_index = 0;
    /* The config, and Kafka's notification that it changed (Kafka brokers re-read the entity
     * it names; they purge old notifications themselves). */
    if (admin_ops_reset(a, 2, 3) || !a->cfg_json ||
        admin_op(a, SF_ZK_OP_SET, a->cfg_json, -1, "/config/brokers/%s", entity) ||
        !(note = admin_str(a, sf_znode_config_change_encode(path))) ||
        admin_op(a, SF_ZK_OP_CREATE, note, -1, "/config/changes/config_change_")) {
        admin_free(a);
        return SF_ERR_NOMEM;
    }
    a->ops[1].flags = SF_ZK_SEQUENTIAL; /* admin_op creates plain persistent nodes */
    rc = sf_zk_multi(cl->zk, a->ops, a->nops, config_multi_cb, a);
    if (rc != SF_OK)
        admin_free(a);
    return rc;
}
