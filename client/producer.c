/* The producer: sf_producer_send appends records to per-partition batches (the accumulator,
 * accumulator.c; sequence numbers of an idempotent producer, idempotence.c);
 * the I/O thread sends ready batches, one ProduceRequest per leader broker carrying at most one
 * batch per partition, and at most one request per partition in flight; results become
 * delivery reports served by sf_producer_poll/flush/destroy in the caller's thread.
 *
 * Memory. buffer.memory bounds the encoded bytes (plus a report entry) of the records queued or
 * in flight: a record is charged from sf_producer_send until its outcome is known. Then the
 * bytes of a batch without delivery callbacks are freed at once (producing without callbacks
 * needs no polling); those of a batch with callbacks move to the report queue, which has a
 * bound of its own (buffer.memory again) until sf_producer_poll/flush serve it. A send blocks
 * (up to max.block.ms) while either is full, so the producer holds at most twice buffer.memory
 * of records, and an application that never serves its callbacks gets SF_ERROR_QUEUE_FULL
 * instead of unbounded growth; one that polls never waits for its own unserved reports.
 *
 * Wake-ups. The application thread wakes the I/O thread only when a batch becomes ready by
 * size (or a new batch is queued behind one), or when a new batch needs the linger timer
 * earlier than it is set; never per record. The I/O thread keeps one timer, set to the
 * earliest linger, retry-backoff or delivery-timeout deadline. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "client.h"
#include "clientconf.h"
#include "clock.h"
#include "coord.h"
#include "err.h"
#include "idempotence.h"
#include "producer.h"
#include "proto.h"
#include "txnproducer.h"

/* ------------------------------------------------------------------------------------------
 * The producer handle
 * ------------------------------------------------------------------------------------------ */

/* Produce version: the highest this client writes (RecordBatch v2 needs v3 or later). */
#define PROD_PRODUCE_VERSION 8
#define PROD_PRODUCE_MIN_VERSION 3
/* Requests queued or in flight per broker before the producer waits for one to finish. */
#define PROD_MAX_INFLIGHT 5

struct sf_producer {
    sf_client_t *cl;            /* NULL once destroyed */
    const sf_clientconf_t *cc;  /* owned by cl */
    sf_producer_acc_t acc;
    int ready;                  /* fully initialised: hooks may run */
    int stopping;               /* on_stop ran: nothing is sent any more */
    struct event *timer;        /* linger / backoff / expiry timer (I/O thread) */
    int64_t timer_at;           /* when it fires (monotonic ms), INT64_MAX when not set */
    int in_run, rerun;
    int64_t mem_used;           /* bytes of records queued or in flight (buffer.memory) */
    int64_t mem_dr;             /* bytes of records whose reports wait to be served */
    size_t outstanding;         /* records sent whose outcome was not served */
    sf_producer_batch_t *dr_head, *dr_tail; /* finished batches with callbacks to serve */
    int dr_count;               /* batches on that list (read without the lock by poll) */
    int serving;                /* a thread is calling delivery callbacks */
    sf_producer_part_t **ready_parts; /* scratch of prod_run */
    size_t capready;
    int32_t *leaders;           /* scratch of prod_topic_sync */
    int32_t capleaders;
    sf_idem_t idem;             /* enable.idempotence: producer id and sequences */
    /* transactional.id (the calls of the application thread that runs the transactions) */
    sf_txn_t txn;
    int txn_state;              /* TXN_NONE, TXN_READY, TXN_OPEN */
    uint32_t txn_gen;           /* the open transaction's number (parts' txn_gen) */
    int txn_err;                /* the first record of the open transaction that failed */
    int txn_fatal;              /* fenced: every transactional call fails with it */
};

enum { TXN_NONE, TXN_READY, TXN_OPEN }; /* before init_transactions; between; in one */

/* One ProduceRequest: a batch of each of several partitions led by one broker. */
typedef struct prod_req {
    sf_producer_t *p;
    int32_t broker;
    int n;
    sf_producer_batch_t **batches;   /* n, grouped by topic */
    sf_proto_ProduceRequest_t msg;
    sf_proto_ProduceRequest_TopicProduceData_t *topics;
    sf_proto_ProduceRequest_PartitionProduceData_t *parts;
    /* per batch result from the response */
    int16_t *codes;
    int64_t *offsets, *times;
    char *found;
} prod_req_t;

static void prod_run(sf_producer_t *p);

static int64_t imin64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

/* Apply the cached metadata of @t's topic (lock held). */
static void prod_topic_sync(sf_producer_t *p, sf_producer_topic_t *t) {
    const sf_client_topic_t *ct = sf_client_topic(p->cl, t->name);
    int32_t i, n;
    if (!ct)
        return;
    if (ct->err) {
        sf_producer_topic_update(&p->acc, t, sf_client_kerr(ct->err), 0, NULL);
        return;
    }
    n = ct->partition_count > 0 ? ct->partition_count : 0;
    if (n > p->capleaders) {
        int32_t *nl = realloc(p->leaders, (size_t)n * sizeof(*nl));
        if (!nl)
            return;
        p->leaders = nl;
        p->capleaders = n;
    }
    for (i = 0; i < n; i++)
        p->leaders[i] = ct->partitions[i].leader;
    if (sf_producer_topic_update(&p->acc, t, 0, n, p->leaders) != SF_OK)
        sf_client_log(p->cl, SF_LOG_LEVEL_ERR, "producer: out of memory for topic %s",
                      t->name);
}

/* The accumulator topic for @name with usable metadata, waiting for it up to max.block.ms
 * (lock held; @deadline is set on the first wait). Returns SF_OK, SF_ERROR_TIMED_OUT,
 * SF_ERROR_NOMEM or the topic's Kafka error. */
static int prod_topic_get(sf_producer_t *p, const char *name, sf_producer_topic_t **out,
                          int64_t *deadline) {
    sf_producer_topic_t *t = sf_producer_acc_topic(&p->acc, name, 1);
    int rc;
    *out = t;
    if (!t)
        return SF_ERROR_NOMEM;
    if (t->known && !t->err && t->nparts > 0)
        return SF_OK;
    if (*deadline < 0)
        *deadline = sf_clock_mono_ms() + p->cc->max_block_ms;
    for (;;) {
        int64_t now;
        rc = sf_client_metadata_wait(p->cl, name, 1, *deadline);
        if (rc != SF_OK)
            return rc;
        prod_topic_sync(p, t);
        if (t->known && !t->err && t->nparts > 0)
            return SF_OK;
        /* A topic being created shows LEADER_NOT_AVAILABLE (or no partitions) for a moment:
         * ask again. Other errors (UNKNOWN_TOPIC_OR_PARTITION when the broker does not create
         * topics, INVALID_TOPIC_EXCEPTION, authorization) are final. */
        if (t->err && t->err != SF_KERR_LEADER_NOT_AVAILABLE) {
            /* Have it checked again soon, in case the topic is created meanwhile. */
            sf_client_metadata_stale(p->cl);
            return t->err;
        }
        now = sf_clock_mono_ms();
        if (now >= *deadline)
            return SF_ERROR_TIMED_OUT;
        sf_client_metadata_stale(p->cl);
        sf_client_wait(p->cl, imin64(*deadline, now + p->cc->retry_backoff_ms));
        if (p->stopping)
            return SF_ERROR_DESTROYED;
    }
}

/* A batch's outcome is settled (lock held, or single-threaded once the client is gone):
 * queue its report, or drop it at once when nobody asked for one. */
static void prod_finish(sf_producer_t *p, sf_producer_batch_t *b, int err) {
    b->err = err;
    if (err && b->transactional && !p->txn_err)
        p->txn_err = err; /* the transaction cannot commit */
    if (err && err != SF_ERROR_DESTROYED)
        sf_idem_failed(&p->idem, b->part, b, err);
    if (err) {
        b->base_offset = -1;
        b->append_time = -1;
        if (p->cl && err != SF_ERROR_DESTROYED)
            sf_client_log(p->cl, SF_LOG_LEVEL_WARNING,
                          "producer: %d record(s) to %s [%" PRId32 "] failed: %s", b->count,
                          b->part->topic->name, b->part->id, sf_error_name(err));
    }
    if (b->ncb == 0) {
        p->outstanding -= (size_t)b->count;
        p->mem_used -= (int64_t)b->mem;
        sf_producer_acc_release(&p->acc, b);
    } else {
        p->mem_used -= (int64_t)b->mem;
        p->mem_dr += (int64_t)b->mem;
        b->next = NULL;
        if (p->dr_tail)
            p->dr_tail->next = b;
        else
            p->dr_head = b;
        p->dr_tail = b;
        __atomic_store_n(&p->dr_count, p->dr_count + 1, __ATOMIC_RELEASE);
    }
    if (p->cl)
        sf_client_signal(p->cl);
}

/* Split the batch @b the broker found too large (lock held). */
static int prod_split(sf_producer_t *p, sf_producer_batch_t *b) {
    int64_t delta;
    int32_t n = b->count;
    const char *topic = b->part->topic->name;
    int32_t id = b->part->id;
    int rc;
    /* The leader refused it whole: the halves take its sequence numbers (when idempotent). */
    sf_idem_failed(&p->idem, b->part, b, SF_KERR_MESSAGE_TOO_LARGE);
    rc = sf_producer_acc_split(&p->acc, b, &delta);
    if (rc == SF_OK) {
        p->mem_used += delta;
        sf_client_log(p->cl, SF_LOG_LEVEL_INFO,
                      "producer: %s [%" PRId32 "] batch of %d records too large for the "
                      "broker, split",
                      topic, id, n);
    }
    return rc;
}

/* The in-flight batch @b got @err (0: delivered at @base_offset / @append_time). */
static void prod_result(sf_producer_t *p, sf_producer_batch_t *b, int err, int64_t base_offset,
                        int64_t append_time, int64_t now) {
    int renew;
    sf_producer_acc_done(&p->acc, b);
    err = sf_idem_answered(&p->idem, b, err, &renew);
    if (renew && !p->stopping && b->attempts < p->acc.conf.retries &&
        now < b->created + p->acc.conf.delivery_timeout_ms) {
        /* The leader lost track of this producer: sent again under a new producer id. */
        sf_client_log(p->cl, SF_LOG_LEVEL_INFO,
                      "producer: %s [%" PRId32 "] %s: taking a new producer id", b->part->topic->name,
                      b->part->id, sf_error_name(err));
        sf_producer_acc_requeue(&p->acc, b, now);
    } else if (err == 0) {
        /* The broker's number: record i reports base_offset + i, which must not overflow. */
        b->base_offset = base_offset <= INT64_MAX - b->count ? base_offset : -1;
        b->append_time = append_time;
        prod_finish(p, b, 0);
    } else if (!p->stopping && err == SF_KERR_MESSAGE_TOO_LARGE && b->count > 1 &&
               now < b->created + p->acc.conf.delivery_timeout_ms && prod_split(p, b) == SF_OK) {
        /* Split in two and sent again (as the Java client does); single records that are
         * too large fail. */
    } else if (!p->stopping && err != SF_ERROR_DESTROYED &&
               sf_producer_retry_ok(&p->acc.conf, b, err, now)) {
        sf_client_log(p->cl, SF_LOG_LEVEL_DEBUG,
                      "producer: %s [%" PRId32 "] batch of %d failed (%s), retry %d",
                      b->part->topic->name, b->part->id, b->count, sf_error_name(err),
                      b->attempts + 1);
        /* The leader may have moved: have the metadata refreshed before the retry. */
        sf_client_metadata_stale(p->cl);
        sf_producer_acc_requeue(&p->acc, b, now);
    } else {
        prod_finish(p, b, err);
    }
}

static int prod_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    prod_req_t *req = arg;
    size_t need = 64;
    int k;
    if (version < PROD_PRODUCE_MIN_VERSION)
        return SF_ERR_UNSUPPORTED;
    /* Grow the buffer once to its final size instead of doubling through the batches. */
    for (k = 0; k < req->n; k++)
        need += req->batches[k]->wire_len + 16 + strlen(req->batches[k]->part->topic->name);
    if (sf_wbuf_reserve(wb, need))
        wb->len -= need;
    return sf_proto_ProduceRequest_encode(wb, version, &req->msg);
}

/* Index of the batch in @req for @topic/@index, starting the search at @hint. */
static int req_find(prod_req_t *req, sf_slice_t topic, int32_t index, int hint) {
    int k, i;
    for (k = 0; k < req->n; k++) {
        sf_producer_batch_t *b;
        i = (hint + k) % req->n;
        b = req->batches[i];
        if (!req->found[i] && b->part->id == index && sf_slice_eq(topic, b->part->topic->name))
            return i;
    }
    return -1;
}

static void prod_response(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                          sf_rbuf_t *body, void *arg) {
    prod_req_t *req = arg;
    sf_producer_t *p = req->p;
    int64_t now = sf_clock_mono_ms();
    sf_arena_t arena;
    int k;
    (void)broker_id;

    sf_arena_init(&arena, 0);
    if (!err && body) {
        sf_proto_ProduceResponse_t resp;
        int32_t i, j;
        int hint = 0;
        if (sf_proto_ProduceResponse_decode(body, version, &arena, &resp) != SF_OK) {
            sf_client_log(cl, SF_LOG_LEVEL_WARNING,
                          "producer: malformed Produce v%d response from broker %" PRId32,
                          version, req->broker);
            err = SF_ERROR_MALFORMED;
        } else {
            for (i = 0; i < resp.ResponsesCount; i++) {
                sf_proto_ProduceResponse_TopicProduceResponse_t *rt = &resp.Responses[i];
                for (j = 0; j < rt->PartitionResponsesCount; j++) {
                    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp = &rt->PartitionResponses[j];
                    int at = req_find(req, rt->Name, rp->Index, hint);
                    if (at < 0)
                        continue;
                    req->found[at] = 1;
                    req->codes[at] = rp->ErrorCode;
                    req->offsets[at] = rp->BaseOffset;
                    req->times[at] = rp->LogAppendTimeMs;
                    hint = at + 1;
                }
            }
        }
    }
    for (k = 0; k < req->n; k++) {
        sf_producer_batch_t *b = req->batches[k];
        if (err)
            prod_result(p, b, err, -1, -1, now);
        else if (!body) /* acks=0: written is all we learn */
            prod_result(p, b, 0, -1, -1, now);
        else if (!req->found[k])
            prod_result(p, b, SF_ERROR_MALFORMED, -1, -1, now);
        else
            prod_result(p, b, sf_client_kerr(req->codes[k]), req->offsets[k], req->times[k],
                        now);
    }
    sf_arena_reset(&arena);
    free(req);
    if (err != SF_ERROR_DESTROYED)
        prod_run(p);
}

static int part_cmp(const void *a, const void *b) {
    const sf_producer_part_t *x = *(sf_producer_part_t *const *)a;
    const sf_producer_part_t *y = *(sf_producer_part_t *const *)b;
    if (x->leader != y->leader)
        return x->leader < y->leader ? -1 : 1;
    if (x->topic != y->topic)
        return (uintptr_t)x->topic < (uintptr_t)y->topic ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Allocate a request for up to @n batches (one allocation). */
static prod_req_t *req_new(sf_producer_t *p, int32_t broker, int n) {
    size_t sz = sizeof(prod_req_t) + (size_t)n * (sizeof(sf_producer_batch_t *) +
                                                  sizeof(sf_proto_ProduceRequest_TopicProduceData_t) +
                                                  sizeof(sf_proto_ProduceRequest_PartitionProduceData_t) +
                                                  2 * sizeof(int64_t) + sizeof(int16_t) + 1);
    prod_req_t *req = calloc(1, sz);
    uint8_t *q;
    if (!req)
        return NULL;
    q = (uint8_t *)(req + 1);
    req->offsets = (int64_t *)q;
    q += (size_t)n * sizeof(int64_t);
    req->times = (int64_t *)q;
    q += (size_t)n * sizeof(int64_t);
    req->batches = (sf_producer_batch_t **)q;
    q += (size_t)n * sizeof(sf_producer_batch_t *);
    req->topics = (sf_proto_ProduceRequest_TopicProduceData_t *)q;
    q += (size_t)n * sizeof(sf_proto_ProduceRequest_TopicProduceData_t);
    req->parts = (sf_proto_ProduceRequest_PartitionProduceData_t *)q;
    q += (size_t)n * sizeof(sf_proto_ProduceRequest_PartitionProduceData_t);
    req->codes = (int16_t *)q;
    q += (size_t)n * sizeof(int16_t);
    req->found = (char *)q;
    req->p = p;
    req->broker = broker;
    return req;
}

/* Fill req->msg from req->batches (grouped by topic) and queue the request. */
static void req_send(sf_producer_t *p, prod_req_t *req, int64_t now) {
    int k, rc;
    int32_t nt = 0;
    for (k = 0; k < req->n; k++) {
        sf_producer_batch_t *b = req->batches[k];
        if (nt == 0 || req->topics[nt - 1].Name.p != (const uint8_t *)b->part->topic->name) {
            req->topics[nt].Name = sf_slice_cstr(b->part->topic->name);
            req->topics[nt].PartitionData = &req->parts[k];
            req->topics[nt].PartitionDataCount = 0;
            nt++;
        }
        req->parts[k].Index = b->part->id;
        req->parts[k].Records.p = b->wire;
        req->parts[k].Records.len = (int32_t)b->wire_len;
        req->topics[nt - 1].PartitionDataCount++;
    }
    /* A transactional producer names its id: leaders verify a transaction's first batch on
     * a partition with its coordinator (KIP-890). */
    req->msg.TransactionalId = sf_slice_cstr(p->txn.id);
    req->msg.Acks = (int16_t)p->cc->acks;
    req->msg.TimeoutMs = p->cc->request_timeout_ms;
    req->msg.TopicDataCount = nt;
    req->msg.TopicData = req->topics;
    rc = sf_client_request(p->cl, req->broker, SF_PROTO_API_Produce, PROD_PRODUCE_VERSION,
                           prod_encode, prod_response, req, -1,
                           p->cc->acks == 0 ? SF_CLIENT_NO_RESPONSE : 0);
    if (rc != SF_OK) {
        for (k = 0; k < req->n; k++)
            prod_result(p, req->batches[k], rc, -1, -1, now);
        free(req);
    }
}

static void prod_timer_cb(evutil_socket_t fd, short what, void *arg);

/* Set the timer to @next (INT64_MAX: none). I/O thread. */
static void prod_arm(sf_producer_t *p, int64_t next, int64_t now) {
    struct timeval tv;
    int64_t ms;
    if (next == p->timer_at)
        return;
    if (next == INT64_MAX) {
        if (p->timer)
            evtimer_del(p->timer);
        p->timer_at = INT64_MAX;
        return;
    }
    if (!p->timer && !(p->timer = evtimer_new(sf_client_base(p->cl), prod_timer_cb, p))) {
        sf_client_log(p->cl, SF_LOG_LEVEL_ERR, "producer: cannot create a timer");
        return;
    }
    ms = next > now ? next - now : 0;
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    if (evtimer_add(p->timer, &tv) == 0)
        p->timer_at = next;
}

/* Look at every partition with queued batches: expire, send what is ready, set the timer. */
static void prod_run_once(sf_producer_t *p) {
    sf_producer_acc_t *acc = &p->acc;
    sf_producer_part_t *part, *prev = NULL, *nextp;
    sf_producer_batch_t *b;
    int64_t now = sf_clock_mono_ms(), next = INT64_MAX;
    size_t nready = 0, i, j;
    int need_md = 0;

    for (part = acc->active; part; part = nextp) {
        nextp = part->next_active;
        while ((b = sf_producer_acc_expire(acc, part, now)))
            prod_finish(p, b, SF_ERROR_TIMED_OUT);
        if (!part->head) {
            /* Nothing queued: leave the active list. */
            if (prev)
                prev->next_active = nextp;
            else
                acc->active = nextp;
            if (acc->active_tail == part)
                acc->active_tail = prev;
            part->active = 0;
            part->next_active = NULL;
            continue;
        }
        prev = part;
        b = part->head;
        next = imin64(next, b->created + acc->conf.delivery_timeout_ms);
        if (part->inflight ||
            !sf_producer_batch_ready(&acc->conf, b, b->next != NULL, acc->flushing, now, &next))
            continue;
        if (part->leader < 0 || part->id >= part->topic->nparts) {
            /* No leader known: wait for new metadata (checked again after the backoff). */
            need_md = 1;
            next = imin64(next, now + p->cc->retry_backoff_ms);
            continue;
        }
        if (nready == p->capready) {
            size_t n = p->capready ? p->capready * 2 : 64;
            sf_producer_part_t **np = realloc(p->ready_parts, n * sizeof(*np));
            if (!np)
                break;
            p->ready_parts = np;
            p->capready = n;
        }
        p->ready_parts[nready++] = part;
    }

    /* An idempotent producer sends nothing before it has its producer id. */
    if (nready > 0 && !sf_idem_ready(&p->idem, p->cl, now, &next))
        nready = 0;
    /* One request per leader (more while a request would exceed max.request.size), at most
     * PROD_MAX_INFLIGHT per broker; what does not go now goes when a response comes. */
    if (nready > 1)
        qsort(p->ready_parts, nready, sizeof(*p->ready_parts), part_cmp);
    for (i = 0; i < nready; i = j) {
        int32_t leader = p->ready_parts[i]->leader;
        for (j = i; j < nready && p->ready_parts[j]->leader == leader; j++)
            ;
        while (i < j && sf_client_inflight(p->cl, leader) < PROD_MAX_INFLIGHT) {
            prod_req_t *req = req_new(p, leader, (int)(j - i));
            size_t bytes = 0;
            if (!req)
                break;
            for (; i < j; i++) {
                int rc;
                part = p->ready_parts[i];
                if (req->n > 0 && bytes + part->head->len > (size_t)p->cc->max_request_size)
                    break;
                b = sf_producer_acc_take(acc, part);
                sf_idem_stamp(&p->idem, part, b);
                b->transactional = p->cc->transactional_id != NULL;
                rc = sf_producer_batch_close(b, p->cc->compression, p->cc->compression_level);
                if (rc != SF_OK && rc != SF_ERR_NOMEM)
                    sf_client_log(p->cl, SF_LOG_LEVEL_WARNING,
                                  "producer: %s compression failed (%s), sending uncompressed",
                                  sf_compress_codec_name(p->cc->compression), sf_err_str(rc));
                bytes += b->wire_len;
                req->batches[req->n++] = b;
            }
            req_send(p, req, now);
        }
    }
    if (need_md)
        sf_client_metadata_stale(p->cl);
    prod_arm(p, next, now);
}

static void prod_idem_wake(void *arg) {
    prod_run(arg);
}

static void prod_run(sf_producer_t *p) {
    if (!p->ready || p->stopping)
        return;
    if (p->in_run) {
        /* Called back from inside a run (e.g. a request failing at once): go round again. */
        p->rerun = 1;
        return;
    }
    p->in_run = 1;
    do {
        p->rerun = 0;
        prod_run_once(p);
    } while (p->rerun);
    p->in_run = 0;
}

static void prod_timer_cb(evutil_socket_t fd, short what, void *arg) {
    sf_producer_t *p = arg;
    (void)fd;
    (void)what;
    sf_client_lock(p->cl);
    p->timer_at = INT64_MAX;
    prod_run(p);
    sf_client_unlock(p->cl);
}

/* --- role hooks (I/O thread, lock held) --- */

static void prod_on_wake(sf_client_t *cl, void *self) {
    (void)cl;
    prod_run(self);
}

static void prod_on_metadata(sf_client_t *cl, void *self) {
    sf_producer_t *p = self;
    size_t i;
    (void)cl;
    if (!p->ready)
        return;
    for (i = 0; i < p->acc.nbuckets; i++) {
        sf_producer_topic_t *t;
        for (t = p->acc.buckets[i]; t; t = t->next)
            prod_topic_sync(p, t);
    }
    prod_run(p);
}

static void prod_on_broker(sf_client_t *cl, void *self, int32_t broker_id, int up) {
    (void)cl;
    (void)broker_id;
    if (up)
        prod_run(self);
}

/* Fail every queued batch with @err. */
static void prod_fail_queued(sf_producer_t *p, int err) {
    size_t i;
    int32_t j;
    for (i = 0; i < p->acc.nbuckets; i++) {
        sf_producer_topic_t *t;
        for (t = p->acc.buckets[i]; t; t = t->next) {
            for (j = 0; j < t->cap; j++) {
                sf_producer_part_t *part = t->parts[j];
                sf_producer_batch_t *b;
                while ((b = part->head)) {
                    part->head = b->next;
                    if (!part->head)
                        part->tail = NULL;
                    prod_finish(p, b, err);
                }
                if (part->inflight && !p->cl) {
                    b = part->inflight;
                    part->inflight = NULL;
                    prod_finish(p, b, err);
                }
            }
        }
    }
}

static void prod_on_stop(sf_client_t *cl, void *self) {
    sf_producer_t *p = self;
    (void)cl;
    if (!p->ready)
        return;
    p->stopping = 1;
    prod_fail_queued(p, SF_ERROR_DESTROYED);
    if (p->timer) {
        event_free(p->timer);
        p->timer = NULL;
        p->timer_at = INT64_MAX;
    }
}

/* --- delivery reports --- */

/* Scratch space for the headers of a report's record (header keys as C strings). */
typedef struct prod_scratch {
    sf_header_t *hdrs;
    size_t caphdrs;
    char *keys;
    size_t capkeys;
} prod_scratch_t;

/* Point @rec's headers at the decoded headers of @r (keys copied into @sc). Leaves
 * header_count 0 when out of memory. */
static void prod_report_headers(prod_scratch_t *sc, const sf_recbatch_record_t *r,
                                sf_record_t *rec) {
    size_t nh = (size_t)r->header_count, nk = (size_t)r->headers_raw.len + nh, kl = 0;
    sf_rbuf_t hb;
    size_t h;
    if (nh > sc->caphdrs) {
        sf_header_t *n = realloc(sc->hdrs, nh * sizeof(*n));
        if (!n)
            return;
        sc->hdrs = n;
        sc->caphdrs = nh;
    }
    if (nk > sc->capkeys) {
        char *n = realloc(sc->keys, nk);
        if (!n)
            return;
        sc->keys = n;
        sc->capkeys = nk;
    }
    sf_rbuf_init(&hb, r->headers_raw.p, (size_t)r->headers_raw.len);
    for (h = 0; h < nh; h++) {
        sf_recbatch_rechdr_t rh;
        if (sf_recbatch_rechdr_read(&hb, &rh) != SF_OK)
            break;
        memcpy(sc->keys + kl, rh.key.p, (size_t)rh.key.len);
        sc->hdrs[h].key = sc->keys + kl;
        kl += (size_t)rh.key.len;
        sc->keys[kl++] = '\0';
        sc->hdrs[h].value = rh.value.len >= 0 ? rh.value.p : NULL;
        sc->hdrs[h].value_len = rh.value.len >= 0 ? (size_t)rh.value.len : 0;
    }
    rec->headers = sc->hdrs;
    rec->header_count = h;
}

/* Call the delivery callbacks of the finished batch @b (lock NOT held). Returns how many
 * were called. */
static int prod_report_batch(sf_producer_batch_t *b, prod_scratch_t *sc) {
    int32_t i;
    int served = 0;
    for (i = 0; i < b->count; i++) {
        const sf_producer_recmeta_t *m = &b->meta[i];
        sf_recbatch_record_t r;
        sf_record_t rec;
        sf_delivery_t d;
        if (!m->cb)
            continue;
        if (i + 8 < b->count)
            __builtin_prefetch(b->buf + b->meta[i + 8].pos);
        memset(&rec, 0, sizeof(rec));
        rec.topic = b->part->topic->name;
        rec.partition = b->part->id;
        /* The record is read back from the batch: the copy kept for the report costs nothing
         * beyond the bytes sent. */
        if (sf_producer_batch_record(b, i, &r) == SF_OK) {
            rec.key = r.key.len >= 0 ? r.key.p : NULL;
            rec.key_len = r.key.len >= 0 ? (size_t)r.key.len : 0;
            rec.value = r.value.len >= 0 ? r.value.p : NULL;
            rec.value_len = r.value.len >= 0 ? (size_t)r.value.len : 0;
            rec.timestamp = r.timestamp;
            if (r.header_count > 0)
                prod_report_headers(sc, &r, &rec);
        }
        d.record = &rec;
        d.partition = b->part->id;
        d.err = b->err;
        d.offset = !b->err && b->base_offset >= 0 ? b->base_offset + i : -1;
        d.timestamp = !b->err && b->append_time >= 0 ? b->append_time : rec.timestamp;
        m->cb(&d, m->opaque);
        served++;
    }
    return served;
}

/* Serve the queued reports (lock held on entry and exit, released during the callbacks).
 * One thread serves at a time, so callbacks run in the order outcomes arrived (per partition:
 * offset order). Each batch's records stop counting (outstanding, memory) once its callbacks
 * returned. Returns the number of callbacks called; 0 when another thread is serving. */
static int prod_serve(sf_producer_t *p) {
    sf_producer_batch_t *list = p->dr_head, *b;
    prod_scratch_t sc;
    int served = 0;
    if (!list || p->serving)
        return 0;
    p->serving = 1;
    p->dr_head = p->dr_tail = NULL;
    __atomic_store_n(&p->dr_count, 0, __ATOMIC_RELEASE);
    memset(&sc, 0, sizeof(sc));
    while ((b = list)) {
        list = b->next;
        sf_client_unlock(p->cl);
        served += prod_report_batch(b, &sc);
        sf_client_lock(p->cl);
        p->outstanding -= (size_t)b->count;
        p->mem_dr -= (int64_t)b->mem;
        sf_producer_acc_release(&p->acc, b);
        sf_client_signal(p->cl);
    }
    p->serving = 0;
    sf_client_signal(p->cl);
    free(sc.hdrs);
    free(sc.keys);
    return served;
}

/* ------------------------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------------------------ */

sf_producer_t *sf_producer_new(const sf_conf_t *conf, char *errstr, size_t errstr_size) {
    sf_producer_t *p;
    sf_client_role_t role;
    sf_producer_accconf_t ac;
    int rc;

    if (errstr && errstr_size)
        errstr[0] = '\0';
    if (!conf) {
        sf_errf(errstr, errstr_size, "no configuration given");
        return NULL;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        sf_errf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    p->timer_at = INT64_MAX;
    memset(&role, 0, sizeof(role));
    role.self = p;
    role.on_wake = prod_on_wake;
    role.on_metadata = prod_on_metadata;
    role.on_broker = prod_on_broker;
    role.on_stop = prod_on_stop;
    p->cl = sf_client_new(conf, &role, 1, errstr, errstr_size);
    if (!p->cl) {
        free(p);
        return NULL;
    }
    p->cc = sf_client_conf(p->cl);
    ac.linger_ms = p->cc->linger_ms;
    ac.batch_size = p->cc->batch_size;
    ac.max_batch_bytes = p->cc->max_request_size;
    ac.delivery_timeout_ms = p->cc->delivery_timeout_ms;
    ac.retries = p->cc->retries;
    ac.retry_backoff_ms = p->cc->retry_backoff_ms;
    ac.partitioner_murmur2 = p->cc->partitioner_murmur2;
    sf_client_lock(p->cl);
    sf_idem_init(&p->idem, p->cc->enable_idempotence, prod_idem_wake, p);
    if (p->cc->transactional_id) {
        sf_idem_external(&p->idem);
        p->txn.id = p->cc->transactional_id;
        p->txn.timeout_ms = p->cc->transaction_timeout_ms;
    }
    rc = sf_producer_acc_init(&p->acc, &ac,
                              (uint64_t)sf_clock_wall_ms() * 2654435761u ^ (uintptr_t)p);
    p->ready = rc == SF_OK;
    sf_client_unlock(p->cl);
    if (rc != SF_OK) {
        sf_errf(errstr, errstr_size, "out of memory");
        sf_client_destroy(p->cl);
        sf_producer_acc_free(&p->acc);
        free(p);
        return NULL;
    }
    return p;
}

/* A transactional producer's record goes to a partition of the open transaction: added to it
 * first (lock held, released meanwhile). */
static int txn_partition(sf_producer_t *p, sf_producer_part_t *part) {
    uint32_t gen = p->txn_gen;
    int rc;
    if (p->txn_fatal || p->txn_state != TXN_OPEN)
        return p->txn_fatal ? p->txn_fatal : SF_ERROR_STATE;
    if (part->txn_gen == gen)
        return SF_OK;
    sf_client_unlock(p->cl);
    rc = sf_txnreq_add_partition(p->cl, &p->txn, part->topic->name, part->id,
                              sf_clock_mono_ms() + p->cc->max_block_ms);
    sf_client_lock(p->cl);
    if (sf_txnreq_fatal(rc))
        p->txn_fatal = rc;
    if (rc == SF_OK)
        part->txn_gen = gen;
    return rc == SF_OK && p->stopping ? SF_ERROR_DESTROYED : rc;
}

int sf_producer_send(sf_producer_t *p, const sf_record_t *rec, sf_delivery_cb *cb,
                     void *opaque) {
    sf_producer_topic_t *t;
    sf_producer_part_t *part;
    int64_t deadline = -1, ts;
    size_t fixed, need, charged;
    int32_t pid;
    int rc, ev, wake;

    if (!p || !rec || !rec->topic || !rec->topic[0] || rec->partition < SF_PARTITION_ANY ||
        rec->timestamp < 0)
        return SF_ERROR_INVALID;
    fixed = sf_producer_record_fixed_size(rec);
    if (fixed == SIZE_MAX)
        return SF_ERROR_INVALID;
    need = fixed + SF_PRODUCER_RECORD_OVERHEAD + sizeof(sf_producer_recmeta_t);
    if (fixed + SF_PRODUCER_RECORD_OVERHEAD + SF_RECBATCH_HEADER_SIZE >
            (size_t)p->cc->max_request_size ||
        (int64_t)need > p->cc->buffer_memory)
        return SF_ERROR_TOOLARGE;
    ts = rec->timestamp ? rec->timestamp : sf_clock_wall_ms();

    sf_client_lock(p->cl);
    if (p->stopping) {
        rc = SF_ERROR_DESTROYED;
        goto out;
    }
    rc = prod_topic_get(p, rec->topic, &t, &deadline);
    if (rc != SF_OK)
        goto out;
    /* buffer.memory: wait for records to be delivered and reports to be served. */
    while (p->mem_used + (int64_t)need > p->cc->buffer_memory ||
           p->mem_dr > p->cc->buffer_memory) {
        if (deadline < 0)
            deadline = sf_clock_mono_ms() + p->cc->max_block_ms;
        if (sf_client_wait(p->cl, deadline) != SF_OK &&
            (p->mem_used + (int64_t)need > p->cc->buffer_memory ||
             p->mem_dr > p->cc->buffer_memory)) {
            rc = SF_ERROR_QUEUE_FULL;
            goto out;
        }
        if (p->stopping) {
            rc = SF_ERROR_DESTROYED;
            goto out;
        }
    }
    pid = sf_producer_acc_partition(&p->acc, t, rec);
    if (pid < 0 || pid >= t->cap) {
        rc = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        goto out;
    }
    part = t->parts[pid];
    if (p->txn.id && (rc = txn_partition(p, part)) != SF_OK)
        goto out;
    rc = sf_producer_acc_append(&p->acc, part, rec, fixed, ts, -1, cb, opaque, &charged, &ev);
    if (rc != SF_OK) {
        rc = rc == SF_ERR_TOOLARGE ? SF_ERROR_TOOLARGE : SF_ERROR_NOMEM;
        goto out;
    }
    p->mem_used += (int64_t)charged;
    p->outstanding++;
    /* Wake the I/O thread only when something becomes ready it does not know about: a batch
     * full (or one queued behind another) with nothing in flight for the partition, or a new
     * batch whose linger deadline is earlier than the timer. */
    wake = ((ev & (SF_PRODUCER_EV_FULL | SF_PRODUCER_EV_BEHIND)) && !part->inflight) ||
           ((ev & SF_PRODUCER_EV_NEW_BATCH) &&
            (p->acc.flushing || part->tail->created + p->acc.conf.linger_ms < p->timer_at));
    sf_client_unlock(p->cl);
    if (wake)
        sf_client_wake(p->cl);
    return SF_OK;
out:
    sf_client_unlock(p->cl);
    return rc;
}

int sf_producer_poll(sf_producer_t *p, int timeout_ms) {
    int64_t deadline;
    int served;
    if (!p)
        return 0;
    if (timeout_ms == 0 && __atomic_load_n(&p->dr_count, __ATOMIC_ACQUIRE) == 0)
        return 0;
    deadline = timeout_ms < 0 ? -1 : sf_clock_mono_ms() + timeout_ms;
    sf_client_lock(p->cl);
    while ((!p->dr_head || p->serving) && timeout_ms != 0) {
        if (sf_client_wait(p->cl, deadline) != SF_OK)
            break;
    }
    served = prod_serve(p);
    sf_client_unlock(p->cl);
    return served;
}

int sf_producer_flush(sf_producer_t *p, int timeout_ms) {
    int64_t deadline;
    int rc = SF_OK;
    if (!p)
        return SF_ERROR_INVALID;
    deadline = timeout_ms < 0 ? -1 : sf_clock_mono_ms() + timeout_ms;
    sf_client_lock(p->cl);
    p->acc.flushing++;
    sf_client_unlock(p->cl);
    sf_client_wake(p->cl);
    sf_client_lock(p->cl);
    for (;;) {
        if (p->dr_head && !p->serving) {
            prod_serve(p);
            continue;
        }
        if (p->outstanding == 0)
            break;
        if (sf_client_wait(p->cl, deadline) != SF_OK) {
            prod_serve(p);
            if (p->outstanding)
                rc = SF_ERROR_TIMED_OUT;
            break;
        }
    }
    p->acc.flushing--;
    sf_client_unlock(p->cl);
    return rc;
}

size_t sf_producer_outstanding(sf_producer_t *p) {
    size_t n;
    if (!p)
        return 0;
    sf_client_lock(p->cl);
    n = p->outstanding;
    sf_client_unlock(p->cl);
    return n;
}

/* ---- transactions (transactional.id) ---- */

static int64_t txn_deadline(int timeout_ms) {
    return sf_clock_mono_ms() + (timeout_ms < 0 ? INT32_MAX : timeout_ms);
}

/* SF_OK when @p is transactional, not fenced and in @state. */
static int txn_check(sf_producer_t *p, int state) {
    int rc;
    if (!p)
        return SF_ERROR_INVALID;
    sf_client_lock(p->cl);
    rc = !p->txn.id ? SF_ERROR_STATE : p->txn_fatal ? p->txn_fatal
                                     : p->txn_state == state ? SF_OK : SF_ERROR_STATE;
    sf_client_unlock(p->cl);
    return rc;
}

/* @rc of a transactional call: a fencing ends the producer's transactions. */
static int txn_result(sf_producer_t *p, int rc) {
    if (sf_txnreq_fatal(rc)) {
        sf_client_lock(p->cl);
        p->txn_fatal = rc;
        sf_client_unlock(p->cl);
        sf_client_log(p->cl, SF_LOG_LEVEL_ERR, "producer: transactional id %s: %s", p->txn.id,
                      sf_error_name(rc));
    }
    return rc;
}

/* A producer id and epoch for the transactional id (fencing older producers with it). */
static int txn_new_pid(sf_producer_t *p, int64_t deadline) {
    int rc = sf_txnreq_init_pid(p->cl, &p->txn, deadline);
    if (rc == SF_OK) {
        sf_client_lock(p->cl);
        sf_idem_set(&p->idem, p->txn.pid, p->txn.epoch);
        sf_client_unlock(p->cl);
        sf_client_wake(p->cl);
    }
    return txn_result(p, rc);
}

/* The open transaction ends: @state next. */
static void txn_set(sf_producer_t *p, int state) {
    sf_client_lock(p->cl);
    p->txn_state = state;
    if (state == TXN_OPEN) {
        p->txn_gen++;
        p->txn_err = 0;
    }
    sf_client_unlock(p->cl);
}

int sf_producer_init_transactions(sf_producer_t *p, int timeout_ms) {
    int rc = txn_check(p, TXN_NONE);
    if (rc == SF_OK && (rc = txn_new_pid(p, txn_deadline(timeout_ms))) == SF_OK)
        txn_set(p, TXN_READY);
    return rc;
}

int sf_producer_begin_transaction(sf_producer_t *p) {
    int rc = txn_check(p, TXN_READY);
    if (rc == SF_OK)
        txn_set(p, TXN_OPEN);
    return rc;
}

int sf_producer_send_offsets_to_transaction_group(sf_producer_t *p,
                                                  const sf_topic_partition_t *offsets,
                                                  size_t count, const sf_group_metadata_t *md,
                                                  int timeout_ms) {
    int rc = txn_check(p, TXN_OPEN);
    if (rc == SF_OK && (!md || !md->group_id[0] || (count && !offsets)))
        rc = SF_ERROR_INVALID;
    if (rc == SF_OK)
        rc = txn_result(p, sf_txnreq_commit_offsets(p->cl, &p->txn, md, offsets, count,
                                                    txn_deadline(timeout_ms)));
    return rc;
}

int sf_producer_send_offsets_to_transaction(sf_producer_t *p, const sf_topic_partition_t *offsets,
                                            size_t count, const char *group_id,
                                            int timeout_ms) {
    /* Outside group management: generation -1, no member (accepted while the group has
     * members, as Kafka does for producers that do not name one). */
    sf_group_metadata_t md = {(char *)group_id, (char *)"", NULL, -1};
    int rc;
    if (!group_id)
        return (rc = txn_check(p, TXN_OPEN)) == SF_OK ? SF_ERROR_INVALID : rc;
    return sf_producer_send_offsets_to_transaction_group(p, offsets, count, &md, timeout_ms);
}

int sf_producer_commit_transaction(sf_producer_t *p, int timeout_ms) {
    int64_t deadline = txn_deadline(timeout_ms);
    int rc = txn_check(p, TXN_OPEN);
    if (rc == SF_OK)
        rc = sf_producer_flush(p, sf_coord_ms_left(deadline));
    if (rc == SF_OK) {
        sf_client_lock(p->cl);
        rc = p->txn_err; /* a record failed: only an abort ends the transaction */
        sf_client_unlock(p->cl);
    }
    if (rc == SF_OK && (rc = txn_result(p, sf_txnreq_end(p->cl, &p->txn, 1, deadline))) == SF_OK)
        txn_set(p, TXN_READY);
    return rc;
}

int sf_producer_abort_transaction(sf_producer_t *p, int timeout_ms) {
    int64_t deadline = txn_deadline(timeout_ms);
    int rc = txn_check(p, TXN_OPEN), renew;
    if (rc != SF_OK)
        return rc;
    /* The records not sent yet fail (SF_ERROR_STATE); those in flight are waited for. */
    sf_client_lock(p->cl);
    prod_fail_queued(p, SF_ERROR_STATE);
    sf_client_unlock(p->cl);
    rc = sf_producer_flush(p, sf_coord_ms_left(deadline));
    if (rc == SF_OK)
        rc = txn_result(p, sf_txnreq_end(p->cl, &p->txn, 0, deadline));
    /* A producer id the leaders lost track of is replaced (bumping the epoch). */
    sf_client_lock(p->cl);
    renew = p->idem.state != SF_IDEM_READY;
    sf_client_unlock(p->cl);
    if (rc == SF_OK && renew)
        rc = txn_new_pid(p, deadline);
    if (rc == SF_OK)
        txn_set(p, TXN_READY);
    return rc;
}

void sf_producer_destroy(sf_producer_t *p) {
    sf_producer_batch_t *b;
    prod_scratch_t sc;
    if (!p)
        return;
    /* Requests in flight fail with SF_ERROR_DESTROYED, then on_stop fails the queued ones;
     * after this the I/O thread is gone and everything below runs in this thread alone. */
    sf_client_destroy(p->cl);
    p->cl = NULL;
    p->stopping = 1;
    prod_fail_queued(p, SF_ERROR_DESTROYED);
    memset(&sc, 0, sizeof(sc));
    while ((b = p->dr_head)) {
        p->dr_head = b->next;
        prod_report_batch(b, &sc);
        sf_producer_acc_release(&p->acc, b); /* freed with the accumulator below */
    }
    free(sc.hdrs);
    free(sc.keys);
    sf_producer_acc_free(&p->acc);
    free(p->ready_parts);
    free(p->leaders);
    free(p);
}
