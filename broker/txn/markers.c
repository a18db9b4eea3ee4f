/* Delivering transaction markers (markers.h). */
#include "markers.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "broker.h"
#include "client.h"
#include "err.h"
#include "kmsg.h"
#include "logging.h"
#include "mailbox.h"
#include "view.h"

#define MARKERS_VERSION 1        /* WriteTxnMarkers v1: flexible */
#define MARKERS_TIMEOUT_MS 30000 /* more than a leader waits for its ISR (20 s) */
#define MARKERS_RETRY_MS 200
#define OFFSETS_TOPIC "__consumer_offsets"

typedef struct delivery delivery_t;

struct sf_txn_sender {
    struct event_base *base; /* the metadata thread's */
    sf_broker_t *b;
    sf_client_t *cl;
    delivery_t *all;
    int closing;
};

/* One transaction's markers until every partition has one. */
struct delivery {
    delivery_t *next;
    sf_txn_sender_t *s;
    sf_txn_markers_t m; /* parts borrowed from the caller until done */
    char *done_parts;   /* per partition: its marker is written */
    int inflight;       /* requests out */
    struct event *retry;
    sf_txn_markers_done_cb done;
    void *done_arg;
};

/* One WriteTxnMarkers to one leader. */
typedef struct markers_req {
    delivery_t *d;
    int32_t leader;
    int *idx; /* the delivery's partitions it carries */
    int16_t *errs;
    int n;
    sf_arena_t arena;
    sf_proto_WriteTxnMarkersRequest_t req;
    sf_mail_t home;
} markers_req_t;

static void delivery_round(delivery_t *d);

static void delivery_finish(delivery_t *d, int err) {
    sf_txn_sender_t *s = d->s;
    delivery_t **pp;
    for (pp = &s->all; *pp != d; pp = &(*pp)->next)
        ;
    *pp = d->next;
    if (d->retry)
        event_free(d->retry);
    d->done(d->done_arg, err);
    free(d->done_parts);
    free(d);
}

static void retry_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    delivery_round(arg);
}

/* After a round's answers: finished, or another round soon. */
static void delivery_settle(delivery_t *d) {
    int i;
    if (d->inflight)
        return;
    if (d->s->closing) {
        delivery_finish(d, SF_ERR_IO);
        return;
    }
    if (d->m.cancelled && *d->m.cancelled) {
        delivery_finish(d, SF_ERR_STATE);
        return;
    }
    for (i = 0; i < d->m.nparts && d->done_parts[i]; i++)
        ;
    if (i == d->m.nparts) {
        delivery_finish(d, SF_OK);
    } else {
        struct timeval tv = {0, MARKERS_RETRY_MS * 1000};
        evtimer_add(d->retry, &tv);
    }
}

/* On the metadata thread: the leader's answer. */
static void req_home(void *arg) {
    markers_req_t *r = arg;
    delivery_t *d = r->d;
    sf_txn_sender_t *s = d->s;
    int i;
    for (i = 0; i < r->n; i++) {
        if (r->errs[i] == SF_KERR_NONE) {
            d->done_parts[r->idx[i]] = 1;
        } else if (r->errs[i] == SF_KERR_INVALID_PRODUCER_EPOCH ||
                   r->errs[i] == SF_KERR_TRANSACTION_COORDINATOR_FENCED) {
            /* A newer producer epoch or coordinator wrote there: this marker is moot (as
             * Kafka's coordinator, stop sending it). */
            d->done_parts[r->idx[i]] = 1;
            sf_log(SF_LOG_INFO, "TXN", "marker of producer %lld for %s-%d: error %d, dropped",
                   (long long)d->m.producer_id, d->m.parts[r->idx[i]].topic,
                   d->m.parts[r->idx[i]].partition, (int)r->errs[i]);
        } else
            sf_log(SF_LOG_DEBUG, "TXN", "marker of producer %lld for %s-%d: error %d, again soon",
                   (long long)d->m.producer_id, d->m.parts[r->idx[i]].topic,
                   d->m.parts[r->idx[i]].partition, (int)r->errs[i]);
    }
    d->inflight--;
    sf_arena_reset(&r->arena);
    free(r->idx);
    free(r->errs);
    free(r);
    delivery_settle(d);
    if (s->closing && !s->all)
        free(s);
}

static int req_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    markers_req_t *r = arg;
    return sf_proto_WriteTxnMarkersRequest_encode(wb, version, &r->req);
}

/* On the client's thread: note each partition's error, then back home. */
static void req_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                     sf_rbuf_t *body, void *arg) {
    markers_req_t *r = arg;
    sf_proto_WriteTxnMarkersResponse_t resp;
    const sf_proto_WriteTxnMarkersRequest_WritableTxnMarker_t *mk = &r->req.Markers[0];
    int i, t, p, k = 0;
    (void)cl;
    (void)broker_id;
    for (i = 0; i < r->n; i++)
        r->errs[i] = SF_KERR_UNKNOWN_SERVER_ERROR;
    if (!err && sf_proto_WriteTxnMarkersResponse_decode(body, version, &r->arena, &resp) ==
                    SF_OK && resp.MarkersCount == 1) {
        /* Answered in the order asked: match names and indexes all the same. */
        for (t = 0; t < mk->TopicsCount; t++)
            for (p = 0; p < mk->Topics[t].PartitionIndexesCount; p++, k++) {
                const sf_proto_WriteTxnMarkersResponse_WritableTxnMarkerResult_t *res =
                    &resp.Markers[0];
                int rt, rp;
                for (rt = 0; rt < res->TopicsCount; rt++)
                    if (res->Topics[rt].Name.len == mk->Topics[t].Name.len &&
                        !memcmp(res->Topics[rt].Name.p, mk->Topics[t].Name.p,
                                (size_t)mk->Topics[t].Name.len))
                        for (rp = 0; rp < res->Topics[rt].PartitionsCount; rp++)
                            if (res->Topics[rt].Partitions[rp].PartitionIndex ==
                                mk->Topics[t].PartitionIndexes[p])
                                r->errs[k] = res->Topics[rt].Partitions[rp].ErrorCode;
            }
    }
    r->home.fn = req_home;
    r->home.arg = r;
    r->home.heap = 0;
    sf_broker_to_metadata(r->d->s->b, &r->home);
}

/* The broker to send partition @i to now: -1 to wait (no leader), -2 when it is done
 * (the topic is gone). */
static int32_t leader_of(const delivery_t *d, int i, const sf_cluster_snapshot_t *snap) {
    const sf_txn_tp_t *tp = &d->m.parts[i];
    const sf_cluster_topic_t *topic;
    if (!strcmp(tp->topic, OFFSETS_TOPIC))
        return tp->partition < snap->ngroup_buckets ? snap->group_buckets[tp->partition].broker
                                                    : -2;
    topic = sf_cluster_snapshot_topic(snap, tp->topic);
    if (!topic || tp->partition >= topic->npartitions)
        return -2;
    return topic->partitions[tp->partition].leader;
}

/* Build the request for the pending partitions led by @leader (partitions sorted by topic). */
static markers_req_t *req_build(delivery_t *d, int32_t leader, const int32_t *leaders) {
    markers_req_t *r = calloc(1, sizeof(*r));
    sf_proto_WriteTxnMarkersRequest_WritableTxnMarker_t *mk;
    sf_proto_WriteTxnMarkersRequest_WritableTxnMarkerTopic_t *tp = NULL;
    int i, n = 0;
    for (i = 0; i < d->m.nparts; i++)
        n += leaders[i] == leader;
    if (!r || !(r->idx = calloc((size_t)n, sizeof(int))) ||
        !(r->errs = calloc((size_t)n, sizeof(int16_t))))
        goto fail;
    sf_arena_init(&r->arena, 0);
    r->d = d;
    r->leader = leader;
    sf_proto_WriteTxnMarkersRequest_init(&r->req);
    if (!(mk = r->req.Markers = sf_arena_calloc(&r->arena, 1, sizeof(*mk))))
        goto fail;
    r->req.MarkersCount = 1;
    sf_proto_WriteTxnMarkersRequest_WritableTxnMarker_init(mk);
    if (!(mk->Topics = sf_arena_calloc(&r->arena, (size_t)n, sizeof(*mk->Topics))))
        goto fail;
    mk->ProducerId = d->m.producer_id;
    mk->ProducerEpoch = d->m.producer_epoch;
    mk->TransactionResult = d->m.commit != 0;
    mk->CoordinatorEpoch = d->m.coordinator_epoch;
    for (i = 0; i < d->m.nparts; i++) {
        if (leaders[i] != leader)
            continue;
        if (!tp || !sf_slice_eq(tp->Name, d->m.parts[i].topic)) {
            tp = &mk->Topics[mk->TopicsCount++];
            sf_proto_WriteTxnMarkersRequest_WritableTxnMarkerTopic_init(tp);
            tp->Name = sf_slice_cstr(d->m.parts[i].topic);
            if (!(tp->PartitionIndexes = sf_arena_calloc(&r->arena, (size_t)n, sizeof(int32_t))))
                goto fail;
        }
        tp->PartitionIndexes[tp->PartitionIndexesCount++] = d->m.parts[i].partition;
        r->idx[r->n++] = i;
    }
    return r;
fail:
    if (r) {
        sf_arena_reset(&r->arena);
        free(r->idx);
        free(r->errs);
        free(r);
    }
    return NULL;
}

static void delivery_round(delivery_t *d) {
    const sf_view_t *view = sf_broker_view(d->s->b);
    const sf_cluster_snapshot_t *snap = view ? view->snap : NULL;
    int32_t *leaders = calloc((size_t)d->m.nparts, sizeof(int32_t));
    int i, k;
    if (!leaders || !snap) {
        free(leaders);
        delivery_settle(d);
        return;
    }
    for (i = 0; i < d->m.nparts; i++) {
        leaders[i] = d->done_parts[i] ? -1 : leader_of(d, i, snap);
        if (leaders[i] == -2) {
            d->done_parts[i] = 1;
            leaders[i] = -1;
        }
    }
    sf_client_lock(d->s->cl);
    for (i = 0; i < d->m.nparts; i++) {
        markers_req_t *r;
        if (leaders[i] < 0)
            continue;
        for (k = 0; k < i && leaders[k] != leaders[i]; k++)
            ;
        if (k < i || !(r = req_build(d, leaders[i], leaders)))
            continue; /* sent with an earlier partition, or no memory: the next round */
        /* Beside the connection the follower fetches wait on (verify.c says why). */
        if (sf_client_request(d->s->cl, SF_CLIENT_COORD_CONN(r->leader),
                              SF_PROTO_API_WriteTxnMarkers, MARKERS_VERSION,
                              req_encode, req_done, r, MARKERS_TIMEOUT_MS, 0) == SF_OK) {
            d->inflight++;
        } else {
            sf_arena_reset(&r->arena);
            free(r->idx);
            free(r->errs);
            free(r);
        }
    }
    sf_client_unlock(d->s->cl);
    free(leaders);
    delivery_settle(d);
}

void sf_txn_send_markers(void *arg, const sf_txn_markers_t *m, sf_txn_markers_done_cb done,
                         void *done_arg) {
    sf_txn_sender_t *s = arg;
    delivery_t *d = calloc(1, sizeof(*d));
    if (!d || !(d->done_parts = calloc((size_t)m->nparts + 1, 1)) ||
        !(d->retry = evtimer_new(s->base, retry_cb, d))) {
        if (d)
            free(d->done_parts);
        free(d);
        done(done_arg, SF_ERR_IO);
        return;
    }
    d->s = s;
    d->m = *m;
    d->done = done;
    d->done_arg = done_arg;
    d->next = s->all;
    s->all = d;
    delivery_round(d);
}

sf_txn_sender_t *sf_txn_sender_new(struct event_base *base, sf_broker_t *b, sf_client_t *cl) {
    sf_txn_sender_t *s = calloc(1, sizeof(*s));
    if (s) {
        s->base = base;
        s->b = b;
        s->cl = cl;
    }
    return s;
}

void sf_txn_sender_free(sf_txn_sender_t *s) {
    delivery_t *d, *next;
    if (!s)
        return;
    s->closing = 1;
    for (d = s->all; d; d = next) {
        next = d->next;
        if (!d->inflight)
            delivery_finish(d, SF_ERR_IO);
    }
    if (!s->all)
        free(s); /* else the last answer frees it */
}
