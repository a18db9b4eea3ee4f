/* An admin request on its way through ZooKeeper: one item per topic or resource, each with the
 * ZooKeeper write it started and its outcome; answered once every write completed and the
 * metadata snapshot shows the changes (so a client that reads right after sees them), or when
 * the request's timeout passes. Shared by CreateTopics, DeleteTopics, CreatePartitions,
 * AlterConfigs and IncrementalAlterConfigs.
 *
 * Lifetime: on the heap, because a ZooKeeper write may complete after the request was answered
 * (on a timeout or at shutdown); freed when both happened. Loop thread only. */
#ifndef SF_ADMIN_OP_H
#define SF_ADMIN_OP_H

#include <stdint.h>

#include "kreq.h"

typedef enum sf_admin_kind {
    SF_ADMIN_CREATE,     /* the topic exists with `partitions` partitions */
    SF_ADMIN_DELETE,     /* the topic is gone */
    SF_ADMIN_PARTITIONS, /* the topic has at least `partitions` partitions */
    SF_ADMIN_CONFIGS,    /* the item's config set (see sf_admin_target_t) is exactly `configs` */
} sf_admin_kind_t;

/* SF_ADMIN_CONFIGS: the config set an item replaces. */
typedef enum sf_admin_target {
    SF_ADMIN_TARGET_TOPIC = 0, /* the overrides of topic `topic` */
    SF_ADMIN_TARGET_BROKER,    /* this broker's dynamic config (/config/brokers/<id>) */
    SF_ADMIN_TARGET_DEFAULT,   /* the cluster-wide dynamic default (/config/brokers/<default>) */
} sf_admin_target_t;

typedef struct sf_admin_op sf_admin_op_t;

typedef struct sf_admin_item {
    sf_admin_op_t *op;
    char *topic;         /* owned; NULL when the request's name was null; for a broker config
                          * the ZooKeeper entity ("1", "<default>") */
    int16_t error;
    const char *message; /* static or in the request arena (read only while unanswered) */
    int32_t partitions;
    int16_t replication_factor; /* SF_ADMIN_CREATE */
    int zk_pending;      /* its ZooKeeper write has not completed */
    /* SF_ADMIN_CONFIGS: the resource as the request names it (borrowed from the request), what
     * it changes and the new config set (owned). */
    int8_t resource_type;
    sf_slice_t resource_name;
    sf_admin_target_t target;
    sf_cluster_config_entry_t *configs;
    int nconfigs;
} sf_admin_item_t;

/* Build and send the API's response from the items (op->kr is still set). */
typedef void (*sf_admin_respond_fn)(sf_admin_op_t *op);

struct sf_admin_op {
    sf_kreq_t *kr; /* NULL once answered */
    sf_admin_kind_t kind;
    sf_admin_item_t *items; /* nitems of them, zeroed, item->op set */
    int nitems;
    int zk_pending;
    int validate_only;
    int wait_visible; /* 0 when the client asked not to wait (timeout <= 0) */
    sf_admin_respond_fn respond;
    sf_pwait_t *wait;
};

/* A new operation for @kr with @nitems items. NULL on no memory (the caller closes). */
sf_admin_op_t *sf_admin_op_new(sf_kreq_t *kr, sf_admin_kind_t kind, int nitems,
                               sf_admin_respond_fn respond);

/* Free an operation that was never run (sf_admin_run frees the others). */
void sf_admin_op_free(sf_admin_op_t *op);

/* A heap copy of the name @s for an item (the caller frees it); a NUL inside becomes
 * SF_KREQ_NUL_MARK, so the name is refused rather than cut short. NULL for a null slice or no
 * memory. */
char *sf_admin_name_dup(sf_slice_t s);

/* Set @it's error and message unless it has one already. Returns 0. */
int sf_admin_fail(sf_admin_item_t *it, int16_t err, const char *msg);

/* The result of starting @it's ZooKeeper write: SF_OK (now pending; the write completes with
 * sf_admin_done(@it, err)) or the synchronous error. */
void sf_admin_started(sf_admin_item_t *it, int rc);

/* The ZooKeeper completion of an item's write (an sf_cluster_done_cb; @arg is the item). */
void sf_admin_done(void *arg, int err);

/* Every item is decided or started: answer when done, else wait at most @timeout_ms (<= 0:
 * only for the writes, not for the metadata to show them; capped at 30 s). */
void sf_admin_run(sf_admin_op_t *op, int32_t timeout_ms);

/* Find the names given more than once among @n (tag, name) keys in n log n; sets dup[i] for
 * each such item (@dup may be NULL) and returns the lowest index whose name appears at a lower
 * one, or -1. Borrows everything; allocates on the heap (the arena may be used up). */
typedef struct sf_admin_key {
    int tag;
    sf_slice_t name;
    int idx;
} sf_admin_key_t;
int sf_admin_find_dups(sf_admin_key_t *keys, int n, char *dup);

#endif
