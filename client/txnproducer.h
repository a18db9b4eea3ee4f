/* The transactional producer's requests (transactional.id), from the application thread:
 * InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn to the id's transaction
 * coordinator, TxnOffsetCommit to the group's coordinator. Each is sent again while the
 * answer says to (the coordinator moved or is loading, CONCURRENT_TRANSACTIONS) until the
 * deadline; a producer fenced by a newer one with the same id gets PRODUCER_FENCED (or
 * INVALID_PRODUCER_EPOCH from older brokers), which ends it. Lock NOT held. */
#ifndef SF_CLIENT_TXNPRODUCER_H
#define SF_CLIENT_TXNPRODUCER_H

#include <stdint.h>

#include "client.h"
#include "streamflow.h"

typedef struct sf_txn {
    const char *id;     /* transactional.id (the configuration's) */
    int32_t timeout_ms; /* transaction.timeout.ms */
    int64_t pid;
    int16_t epoch;
} sf_txn_t;

/* InitProducerId for the id (fencing earlier producers with it and ending their open
 * transaction): t->pid and t->epoch. */
int sf_txnreq_init_pid(sf_client_t *cl, sf_txn_t *t, int64_t deadline);
/* AddPartitionsToTxn of one partition. */
int sf_txnreq_add_partition(sf_client_t *cl, const sf_txn_t *t, const char *topic,
                         int32_t partition, int64_t deadline);
/* A consumer group member as TxnOffsetCommit names it (KIP-447); outside group management the
 * generation is -1 and the member id "". */
struct sf_group_metadata {
    char *group_id, *member_id, *instance_id; /* instance_id: NULL for a dynamic member */
    int32_t generation;
};

/* AddOffsetsToTxn for @md's group, then TxnOffsetCommit of the @n offsets @v (topic,
 * partition, offset: the next record to consume) as its member. The first partition error
 * is returned. */
int sf_txnreq_commit_offsets(sf_client_t *cl, const sf_txn_t *t,
                             const struct sf_group_metadata *md, const sf_topic_partition_t *v,
                             size_t n, int64_t deadline);
/* EndTxn: commit (@commit) or abort. */
int sf_txnreq_end(sf_client_t *cl, const sf_txn_t *t, int commit, int64_t deadline);

/* 1 when @err ends the producer (fenced, or the coordinator lost track of it). */
int sf_txnreq_fatal(int err);

#endif
