/* Requests the controller answers after writing partition states (AlterPartition,
 * ElectLeaders): the new states are collected with a place for each result, written in one
 * batch by the cluster module, and the request waits in the purgatory until ZooKeeper
 * answers (or it times out), then each result is filled in and the request answered. */
#ifndef SF_KAFKA_STATE_WRITE_H
#define SF_KAFKA_STATE_WRITE_H

#include "kreq.h"
#include "snapshot.h"

/* Longest a request waits for its ZooKeeper write before it is answered with a timeout. */
#define SF_KSTATE_MAX_WAIT_MS 30000

typedef struct sf_kstate_op sf_kstate_op_t;

/* Fill the result of the write of @st into @slot: @kerr is NONE (written: @st holds the
 * state, @version the state znode's new version) or the error. */
typedef void (*sf_kstate_fill_fn)(void *slot, const sf_cluster_partition_t *st, int32_t version,
                                  int16_t kerr);

/* An operation for @kr answered with @resp (which lives as long as the request's arena) with
 * room for @cap writes; NULL on no memory. */
sf_kstate_op_t *sf_kstate_op_new(sf_kreq_t *kr, const void *resp, int cap, sf_kstate_fill_fn fill);

/* Queue the write of @part's (of @topic) new state: @leader, @leader_epoch and the ISR @isr
 * (@nisr members, copied), replacing the state znode version the snapshot shows; its result
 * goes to @slot. SF_OK, or SF_ERR_NOMEM (nothing queued). */
int sf_kstate_op_add(sf_kstate_op_t *op, const char *topic, const sf_cluster_partition_t *part,
                     int32_t leader, int32_t leader_epoch, const int32_t *isr, int nisr,
                     void *slot);

/* Write what was queued and answer when done (at once when nothing was queued); the
 * operation frees itself. */
void sf_kstate_op_run(sf_kstate_op_t *op);

/* Answer now without writing anything (on no memory: close the connection instead when
 * @close_why is set) and free the operation. */
void sf_kstate_op_abandon(sf_kstate_op_t *op, const char *close_why);

#endif
