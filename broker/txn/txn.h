/* The transaction coordinator (Kafka's TransactionCoordinator): the transactional ids whose
 * hash falls in a group coordinator bucket this broker owns (/coordinators/groups: the two
 * coordinators share the buckets, as Kafka's __transaction_state and __consumer_offsets
 * partitions are placed alike), their state machine, and the state in ZooKeeper
 * (/transactions/<id>, written once per transition and checked against the bucket's epoch
 * and the znode's version, cluster.h).
 *
 *   Empty/Complete* --AddPartitions--> Ongoing --EndTxn--> PrepareCommit|PrepareAbort
 *   Prepare* --markers written to every partition--> CompleteCommit|CompleteAbort
 *
 * A request answers once its transition is in ZooKeeper; EndTxn answers after the Prepare
 * state is, and the markers follow (a new coordinator of the bucket resumes them: every id of
 * a bucket gained is loaded). While a transition or the markers are under way, requests get
 * CONCURRENT_TRANSACTIONS. InitProducerId on an ongoing transaction fences it (epoch + 1) and
 * aborts it; one past its timeout is aborted the same way by a periodic check.
 *
 * Metadata thread only. Callbacks run once, maybe before the call returns; strings handed in
 * are copied, strings handed to callbacks borrowed for the call. */
#ifndef SF_TXN_H
#define SF_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.h"

struct event_base;

typedef struct sf_txn_coord sf_txn_coord_t;

/* One partition of a transaction. */
typedef struct sf_txn_tp {
    const char *topic;
    int32_t partition;
} sf_txn_tp_t;

/* The markers of one transaction: written (commit or abort) to each of @parts at
 * @coordinator_epoch. A group's offsets are the partition ("__consumer_offsets", the group's
 * bucket), as in Kafka: its marker goes to the group's coordinator. */
typedef struct sf_txn_markers {
    int64_t producer_id;
    int16_t producer_epoch;
    int commit;
    int32_t coordinator_epoch;
    const sf_txn_tp_t *parts;
    int nparts;
    const int *cancelled; /* not 0 once another coordinator owns the transaction */
} sf_txn_markers_t;

/* Deliver @m (borrowed until @done) to the partitions' leaders, retrying until every one has
 * it (a partition that no longer exists counts as done); @done(@done_arg, err) once: SF_OK,
 * SF_ERR_STATE when *m->cancelled became set (the new owner delivers them), or SF_ERR_IO
 * when given up (closing). */
typedef void (*sf_txn_markers_done_cb)(void *arg, int err);
typedef void (*sf_txn_send_markers_fn)(void *arg, const sf_txn_markers_t *m,
                                       sf_txn_markers_done_cb done, void *done_arg);

typedef struct sf_txn_config {
    int32_t broker_id;
    int32_t max_timeout_ms;       /* transaction.max.timeout.ms */
    int64_t id_expiration_ms;     /* transactional.id.expiration.ms */
    int32_t abort_check_ms;       /* transaction.abort.timed.out.transaction.cleanup.interval.ms */
    sf_txn_send_markers_fn send_markers; /* NULL: markers count as written at once */
    void *send_arg;
} sf_txn_config_t;

/* @cl NULL (unit tests): state is kept in memory only and producer ids come from a counter. */
sf_txn_coord_t *sf_txn_coord_new(struct event_base *base, sf_cluster_t *cl,
                                 const sf_txn_config_t *cfg);
/* Answer everything pending (COORDINATOR_NOT_AVAILABLE) and free; markers under way are
 * abandoned (the bucket's next owner resumes them). NULL is ignored. */
void sf_txn_coord_free(sf_txn_coord_t *c);
/* A new metadata snapshot: ids of buckets no longer ours are dropped, those of buckets gained
 * are loaded. */
void sf_txn_coord_update(sf_txn_coord_t *c, const sf_cluster_snapshot_t *snap);

/* InitProducerId for @id (non-empty): @timeout_ms, and from v3 the producer id and epoch the
 * client had (-1, -1: none); a stranger gets @fenced_error (INVALID_PRODUCER_EPOCH before v4,
 * PRODUCER_FENCED since). @cb(@arg, error, producer id, epoch). */
typedef void (*sf_txn_init_cb)(void *arg, int16_t error, int64_t producer_id, int16_t epoch);
void sf_txn_init_producer(sf_txn_coord_t *c, const char *id, int32_t timeout_ms,
                          int64_t producer_id, int16_t epoch, int16_t fenced_error,
                          sf_txn_init_cb cb, void *arg);

/* AddPartitionsToTxn (@verify_only: only check they are in the transaction, v4+ from a
 * partition leader) and AddOffsetsToTxn (@group: the group's offsets become part of it;
 * @parts NULL). @fenced_error is what an older epoch gets (INVALID_PRODUCER_EPOCH before v2,
 * PRODUCER_FENCED since). @cb(@arg, error, errs): error for the whole request (errs NULL), or
 * NONE with @errs, one per partition. */
typedef void (*sf_txn_add_cb)(void *arg, int16_t error, const int16_t *errs);
void sf_txn_add_partitions(sf_txn_coord_t *c, const char *id, int64_t producer_id,
                           int16_t epoch, const sf_txn_tp_t *parts, int n, int verify_only,
                           int16_t fenced_error, sf_txn_add_cb cb, void *arg);
void sf_txn_add_offsets(sf_txn_coord_t *c, const char *id, int64_t producer_id, int16_t epoch,
                        const char *group, int16_t fenced_error, sf_txn_add_cb cb, void *arg);

/* EndTxn. @cb(@arg, error, producer id, epoch). */
void sf_txn_end(sf_txn_coord_t *c, const char *id, int64_t producer_id, int16_t epoch,
                int commit, int16_t fenced_error, sf_txn_init_cb cb, void *arg);

/* ---- describing (DescribeTransactions, ListTransactions) ---- */

/* Kafka's state names: "Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
 * "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence". */
typedef struct sf_txn_description {
    const char *id, *state;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t timeout_ms;
    int64_t start_ms; /* -1 when no transaction is under way */
    const sf_txn_tp_t *parts;
    int nparts;
} sf_txn_description_t;

/* @fn(@arg, error, d): NONE with @d, TRANSACTIONAL_ID_NOT_FOUND, NOT_COORDINATOR or
 * COORDINATOR_NOT_AVAILABLE (d NULL). */
typedef void (*sf_txn_describe_cb)(void *arg, int16_t error, const sf_txn_description_t *d);
void sf_txn_describe(sf_txn_coord_t *c, const char *id, sf_txn_describe_cb cb, void *arg);

/* Every transactional id coordinated here (loaded), filtered as ListTransactions: by state
 * names (@nstates 0: any), producer ids (@npids 0: any) and a minimum duration of the ongoing
 * transaction (@min_duration_ms < 0: any), at @now_ms. @fn(@arg, d) per id. */
void sf_txn_list(sf_txn_coord_t *c, const char *const *states, int nstates,
                 const int64_t *pids, int npids, int64_t min_duration_ms, int64_t now_ms,
                 void (*fn)(void *arg, const sf_txn_description_t *d), void *arg);

/* The bucket of @id (group coordinator buckets), as sf_coord_bucket_of. */
int sf_txn_bucket_of(const char *id, int nbuckets);

#endif
