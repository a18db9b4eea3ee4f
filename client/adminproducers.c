/* Admin calls about producers: the producer state a partition's leader keeps
 * (DescribeProducers). */
#include <stdlib.h>
#include <string.h>

#include "adminapi.h"
#include "arena.h"
#include "proto.h"

#define DESCRIBE_PRODUCERS_ROUNDS 10

typedef struct dp_call {
    const char *topic;
    int32_t partition;
    int err; /* the partition's error in the answer */
    sf_producer_state_t *v;
    size_t n;
} dp_call_t;

static int dp_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    dp_call_t *c = arg;
    sf_proto_DescribeProducersRequest_t req;
    sf_proto_DescribeProducersRequest_TopicRequest_t t;
    sf_proto_DescribeProducersRequest_init(&req);
    sf_proto_DescribeProducersRequest_TopicRequest_init(&t);
    t.Name = sf_slice_cstr(c->topic);
    t.PartitionIndexes = &c->partition;
    t.PartitionIndexesCount = 1;
    req.Topics = &t;
    req.TopicsCount = 1;
    return sf_proto_DescribeProducersRequest_encode(wb, version, &req);
}

static int dp_take(dp_call_t *c, const sf_proto_DescribeProducersResponse_PartitionResponse_t *rp) {
    int32_t i;
    c->err = sf_client_kerr(rp->ErrorCode);
    if (c->err || rp->ActiveProducersCount <= 0)
        return SF_OK;
    if (!(c->v = calloc((size_t)rp->ActiveProducersCount, sizeof(*c->v))))
        return SF_ERR_NOMEM;
    for (i = 0; i < rp->ActiveProducersCount; i++) {
        const sf_proto_DescribeProducersResponse_ProducerState_t *s = &rp->ActiveProducers[i];
        c->v[i].producer_id = s->ProducerId;
        c->v[i].producer_epoch = s->ProducerEpoch;
        c->v[i].last_sequence = s->LastSequence;
        c->v[i].last_timestamp = s->LastTimestamp;
        c->v[i].coordinator_epoch = s->CoordinatorEpoch;
        c->v[i].current_txn_start_offset = s->CurrentTxnStartOffset;
    }
    c->n = (size_t)rp->ActiveProducersCount;
    return SF_OK;
}

static int dp_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    dp_call_t *c = arg;
    sf_proto_DescribeProducersResponse_t resp;
    sf_arena_t arena;
    int32_t t, p;
    int rc;
    sf_arena_init(&arena, 0);
    rc = sf_admin_decoded(sf_proto_DescribeProducersResponse_decode(body, version, &arena, &resp));
    c->err = SF_ERROR_MALFORMED; /* unless the partition is in the answer */
    for (t = 0; rc == SF_OK && t < resp.TopicsCount; t++)
        for (p = 0; rc == SF_OK && p < resp.Topics[t].PartitionsCount; p++)
            if (resp.Topics[t].Partitions[p].PartitionIndex == c->partition && !c->v)
                rc = dp_take(c, &resp.Topics[t].Partitions[p]);
    sf_arena_reset(&arena);
    return rc;
}

/* The leader of the partition from fresh metadata, or -1 with *@err set. */
static int32_t dp_leader(sf_admin_t *a, const dp_call_t *c, int64_t deadline, int *err) {
    sf_cluster_info_t *info = NULL;
    int32_t leader = -1;
    size_t j;
    int left = sf_admin_ms_left(deadline);
    *err = sf_admin_describe_cluster(a, &c->topic, 1, left > 0 ? left : 1, &info);
    for (j = 0; *err == SF_OK && j < info->topic_count; j++) {
        const sf_topic_info_t *t = &info->topics[j];
        size_t k;
        if (strcmp(t->name, c->topic) != 0)
            continue;
        *err = t->err ? t->err : SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        for (k = 0; !t->err && k < t->partition_count; k++)
            if (t->partitions[k].id == c->partition) {
                leader = t->partitions[k].leader;
                *err = leader < 0 ? SF_KERR_LEADER_NOT_AVAILABLE : SF_OK;
            }
    }
    sf_cluster_info_destroy(info);
    return leader;
}

static int dp_retriable(int err) {
    return sf_error_retriable(err) || err == SF_KERR_NOT_LEADER_OR_FOLLOWER ||
           err == SF_KERR_LEADER_NOT_AVAILABLE;
}

int sf_admin_describe_producers(sf_admin_t *a, const char *topic, int32_t partition,
                                int timeout_ms, sf_producer_state_t **producers, size_t *count) {
    dp_call_t c;
    int64_t deadline;
    int round, rc = SF_ERROR_TIMED_OUT;
    if (producers)
        *producers = NULL;
    if (count)
        *count = 0;
    if (!a || !topic || !topic[0] || partition < 0 || !producers || !count)
        return SF_ERROR_INVALID;
    memset(&c, 0, sizeof(c));
    c.topic = topic;
    c.partition = partition;
    deadline = sf_admin_deadline(a, timeout_ms);
    for (round = 0; round < DESCRIBE_PRODUCERS_ROUNDS && sf_admin_ms_left(deadline) > 0;
         round++) {
        int32_t leader;
        if (round > 0)
            sf_admin_backoff(a, deadline);
        leader = dp_leader(a, &c, deadline, &rc);
        if (rc == SF_OK)
            rc = sf_client_call(sf_admin_client(a), leader, SF_PROTO_API_DescribeProducers, 0,
                                dp_encode, dp_decode, &c, sf_admin_ms_left(deadline) + 1);
        if (rc == SF_OK)
            rc = c.err;
        if (!dp_retriable(rc))
            break;
    }
    if (rc != SF_OK) {
        free(c.v);
        return rc;
    }
    *producers = c.v;
    *count = c.n;
    return SF_OK;
}

void sf_producer_states_destroy(sf_producer_state_t *producers) {
    free(producers);
}
