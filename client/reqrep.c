/* Request/reply over topics (streamflow.h): a requester produces requests carrying reply-to,
 * reply-partition and correlation-id headers and reads the replies from its own reply
 * partition; a responder reads requests and produces each reply where the request says.
 *
 * The requester's reply partition is assigned at its end and the position resolved before
 * sf_requester_new returns, so no reply to a later request can be missed. One reader thread
 * polls the reply partition and hands each reply to the thread waiting for its correlation id;
 * replies nobody waits for (any more) are dropped. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "client.h"
#include "clientconf.h"
#include "clock.h"
#include "consumer.h"
#include "err.h"
#include "proto.h"
#include "streamflow.h"

#define HDR_REPLY_TO "reply-to"
#define HDR_REPLY_PARTITION "reply-partition"
#define HDR_CORRELATION_ID "correlation-id"

/* Correlation ids: 16 hex digits. */
#define CORR_ID_LEN 16

/* How often a responder looks at its stop flag and the requester's reader at its own. */
#define POLL_SLICE_MS 100

/* A random 64-bit value (getrandom, else a mix of clocks and the pid). */
static uint64_t random64(void) {
    uint64_t v = 0;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^
            ((uint64_t)getpid() << 32) ^ (uint64_t)sf_clock_mono_ms();
        v ^= v >> 33;
        v *= 0xff51afd7ed558ccdULL;
        v ^= v >> 33;
    }
    return v;
}

/* A copy of @conf for request/reply: replies and requests are sent at once (linger.ms 0). */
static sf_conf_t *conf_for_reqrep(const sf_conf_t *conf, char *errstr, size_t errstr_size) {
    sf_conf_t *dup = sf_conf_dup(conf);
    if (!dup) {
        sf_errf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    if (sf_conf_set(dup, "linger.ms", "0", errstr, errstr_size) != SF_OK) {
        sf_conf_destroy(dup);
        return NULL;
    }
    return dup;
}

/* ------------------------------------------------------------------------------------------
 * The topic: make sure it exists and learn its partition count
 * ------------------------------------------------------------------------------------------ */

typedef struct create_req {
    const char *topic;
    int16_t kerr;
    char message[200];
} create_req_t;

static int create_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    create_req_t *cr = arg;
    sf_proto_CreateTopicsRequest_CreatableTopic_t t;
    sf_proto_CreateTopicsRequest_t req;
    /* The broker's default partition count and replication factor need v4. */
    if (version < 4)
        return SF_ERROR_UNSUPPORTED;
    memset(&t, 0, sizeof(t));
    t.Name = sf_slice_cstr(cr->topic);
    t.NumPartitions = -1;
    t.ReplicationFactor = -1;
    memset(&req, 0, sizeof(req));
    req.TopicsCount = 1;
    req.Topics = &t;
    req.TimeoutMs = 30000;
    return sf_proto_CreateTopicsRequest_encode(wb, version, &req);
}

static int create_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    create_req_t *cr = arg;
    sf_proto_CreateTopicsResponse_t resp;
    sf_arena_t arena;
    int rc, i;
    sf_arena_init(&arena, 0);
    rc = sf_proto_CreateTopicsResponse_decode(body, version, &arena, &resp);
    if (rc == SF_OK) {
        rc = SF_ERROR_MALFORMED;
        for (i = 0; i < resp.TopicsCount; i++) {
            if (!sf_slice_eq(resp.Topics[i].Name, cr->topic))
                continue;
            cr->kerr = resp.Topics[i].ErrorCode;
            if (resp.Topics[i].ErrorMessage.len > 0)
                snprintf(cr->message, sizeof(cr->message), "%.*s",
                         (int)resp.Topics[i].ErrorMessage.len, resp.Topics[i].ErrorMessage.p);
            rc = SF_OK;
        }
    } else {
        rc = rc == SF_ERR_NOMEM ? SF_ERROR_NOMEM : SF_ERROR_MALFORMED;
    }
    sf_arena_reset(&arena);
    return rc;
}

/* Wait until @topic is known with a leader for every partition, creating it with the broker's
 * defaults when it does not exist (metadata auto-creation first, else CreateTopics).
 * *@count receives the partition count. */
static int topic_ensure(sf_consumer_t *c, const char *topic, int64_t deadline, int32_t *count,
                        char *errstr, size_t errstr_size) {
    sf_client_t *cl = sf_consumer_client(c);
    int created = 0, rc = SF_OK;
    sf_client_lock(cl);
    for (;;) {
        const sf_client_topic_t *t;
        int ready = 0;
        int32_t i;
        if (sf_client_metadata_wait(cl, topic, 1, deadline) != SF_OK) {
            rc = SF_ERROR_TIMED_OUT;
            sf_errf(errstr, errstr_size, "%s: no metadata from the cluster in time", topic);
            break;
        }
        t = sf_client_topic(cl, topic);
        if (t && !t->err && t->partition_count > 0) {
            ready = 1;
            for (i = 0; i < t->partition_count; i++)
                if (t->partitions[i].leader < 0)
                    ready = 0;
            if (ready) {
                *count = t->partition_count;
                break;
            }
        }
        if (t && t->err == SF_KERR_UNKNOWN_TOPIC_OR_PARTITION && !created) {
            /* Not auto-created by the metadata request: create it explicitly. */
            create_req_t cr;
            memset(&cr, 0, sizeof(cr));
            cr.topic = topic;
            created = 1;
            sf_client_unlock(cl);
            rc = sf_client_call(cl, SF_CLIENT_CONTROLLER, SF_PROTO_API_CreateTopics, 4,
                                create_encode, create_decode, &cr, sf_consumer_ms_left(deadline));
            sf_client_lock(cl);
            if (rc == SF_OK && cr.kerr && cr.kerr != SF_KERR_TOPIC_ALREADY_EXISTS)
                rc = sf_client_kerr(cr.kerr);
            if (rc != SF_OK) {
                sf_errf(errstr, errstr_size, "cannot create topic %s: %s%s%s", topic,
                        sf_error_str(rc), cr.message[0] ? ": " : "", cr.message);
                break;
            }
        } else if (t && t->err && t->err != SF_KERR_UNKNOWN_TOPIC_OR_PARTITION &&
                   !sf_error_retriable(sf_client_kerr(t->err))) {
            rc = sf_client_kerr(t->err);
            sf_errf(errstr, errstr_size, "topic %s: %s", topic, sf_error_str(rc));
            break;
        }
        /* Freshly created, or leaders not elected yet: look again soon. */
        if ((rc = sf_consumer_metadata_backoff(cl, sf_client_conf(cl)->retry_backoff_ms,
                                               deadline)) != SF_OK) {
            sf_errf(errstr, errstr_size, "topic %s has no leader yet", topic);
            break;
        }
    }
    sf_client_unlock(cl);
    return rc;
}

/* Assign partitions @first..@last of @topic at their end and wait until every end offset is
 * resolved (all assigned first, so the ListOffsets requests go out together). */
static int assign_at_end(sf_consumer_t *c, const char *topic, int32_t first, int32_t last,
                         int64_t deadline, char *errstr, size_t errstr_size) {
    int64_t pos;
    int32_t p;
    int rc = SF_OK;
    for (p = first; p <= last && rc == SF_OK; p++)
        rc = sf_consumer_assign(c, topic, p, SF_OFFSET_END);
    if (rc == SF_OK)
        for (p = first; p <= last && rc == SF_OK; p++)
            rc = sf_consumer_position(c, topic, p, &pos, sf_consumer_ms_left(deadline));
    /* p is one past the partition that failed. */
    if (rc != SF_OK)
        sf_errf(errstr, errstr_size, "%s [%d]: cannot find the end offset: %s", topic,
                (int)(p - 1), sf_error_str(rc));
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * Requester
 * ------------------------------------------------------------------------------------------ */

typedef struct waiter waiter_t;
struct waiter {
    waiter_t *prev, *next;
    uint64_t seq;
    char id[CORR_ID_LEN + 1];
    pthread_cond_t cond;
    sf_message_t *reply;
    int err;
    int done;
};

struct sf_requester {
    sf_producer_t *prod;
    sf_consumer_t *cons;
    char *topic;
    int32_t partition;
    char partition_str[16];
    pthread_mutex_t lock; /* waiters, seq, stop */
    waiter_t *waiters;
    uint64_t id_base, seq;
    pthread_t reader;
    int reader_started;
    int stop;
};

/* The waiter for @seq, or NULL (lock held). */
static waiter_t *waiter_by_seq(sf_requester_t *r, uint64_t seq) {
    waiter_t *w;
    for (w = r->waiters; w; w = w->next)
        if (w->seq == seq)
            return w;
    return NULL;
}

static waiter_t *waiter_by_id(sf_requester_t *r, const void *id, size_t len) {
    waiter_t *w;
    if (len != CORR_ID_LEN)
        return NULL;
    for (w = r->waiters; w; w = w->next)
        if (memcmp(w->id, id, CORR_ID_LEN) == 0)
            return w;
    return NULL;
}

static void waiter_unlink(sf_requester_t *r, waiter_t *w) {
    if (w->prev)
        w->prev->next = w->next;
    else
        r->waiters = w->next;
    if (w->next)
        w->next->prev = w->prev;
}

/* What a request's delivery callback needs to find its waiter. */
typedef struct delivery_ctx {
    sf_requester_t *r;
    uint64_t seq;
} delivery_ctx_t;

/* A request's delivery: only a failure matters (the waiter then returns it). */
static void request_delivered(const sf_delivery_t *d, void *opaque) {
    delivery_ctx_t *dc = opaque;
    sf_requester_t *r = dc->r;
    if (d->err) {
        waiter_t *w;
        pthread_mutex_lock(&r->lock);
        w = waiter_by_seq(r, dc->seq);
        if (w && !w->done) {
            w->err = d->err;
            w->done = 1;
            pthread_cond_signal(&w->cond);
        }
        pthread_mutex_unlock(&r->lock);
    }
    free(dc);
}

static void *reader_main(void *arg) {
    sf_requester_t *r = arg;
    for (;;) {
        sf_message_t *m;
        const sf_header_t *h;
        waiter_t *w;
        pthread_mutex_lock(&r->lock);
        if (r->stop) {
            pthread_mutex_unlock(&r->lock);
            break;
        }
        pthread_mutex_unlock(&r->lock);
        m = sf_consumer_poll(r->cons, POLL_SLICE_MS);
        /* Serve delivery callbacks of failed requests. */
        sf_producer_poll(r->prod, 0);
        if (!m)
            continue;
        if (m->err) {
            sf_message_destroy(m);
            continue;
        }
        h = sf_message_header(m, HDR_CORRELATION_ID, 1);
        pthread_mutex_lock(&r->lock);
        w = h && h->value ? waiter_by_id(r, h->value, h->value_len) : NULL;
        if (w && !w->done) {
            w->reply = m;
            w->done = 1;
            m = NULL;
            pthread_cond_signal(&w->cond);
        }
        pthread_mutex_unlock(&r->lock);
        sf_message_destroy(m); /* nobody waits for it */
    }
    return NULL;
}

sf_requester_t *sf_requester_new(const sf_conf_t *conf, const char *reply_topic,
                                 int32_t reply_partition, char *errstr, size_t errstr_size) {
    sf_requester_t *r = NULL;
    sf_conf_t *rconf = NULL;
    int64_t deadline;
    int32_t count = 0;

    if (!conf || !reply_topic || !*reply_topic || reply_partition < SF_PARTITION_ANY) {
        sf_errf(errstr, errstr_size, "a configuration and a reply topic are required");
        return NULL;
    }
    if (!(rconf = conf_for_reqrep(conf, errstr, errstr_size)))
        return NULL;
    r = calloc(1, sizeof(*r));
    if (!r || !(r->topic = strdup(reply_topic))) {
        sf_errf(errstr, errstr_size, "out of memory");
        goto err;
    }
    pthread_mutex_init(&r->lock, NULL);
    if (!(r->prod = sf_producer_new(rconf, errstr, errstr_size)) ||
        !(r->cons = sf_consumer_new(rconf, errstr, errstr_size)))
        goto err;
    deadline = sf_clock_mono_ms() + sf_client_conf(sf_consumer_client(r->cons))->request_timeout_ms;
    if (topic_ensure(r->cons, reply_topic, deadline, &count, errstr, errstr_size) != SF_OK)
        goto err;
    if (reply_partition == SF_PARTITION_ANY) {
        reply_partition = (int32_t)(random64() % (uint64_t)count);
    } else if (reply_partition >= count) {
        sf_errf(errstr, errstr_size, "%s has %d partitions: no partition %d", reply_topic,
                (int)count, (int)reply_partition);
        goto err;
    }
    r->partition = reply_partition;
    snprintf(r->partition_str, sizeof(r->partition_str), "%d", (int)reply_partition);
    /* Every reply to a request sent from now on lands after this position. */
    if (assign_at_end(r->cons, reply_topic, reply_partition, reply_partition, deadline, errstr,
                      errstr_size) != SF_OK)
        goto err;
    r->id_base = random64();
    if (pthread_create(&r->reader, NULL, reader_main, r) != 0) {
        sf_errf(errstr, errstr_size, "cannot start a thread: %s", strerror(errno));
        goto err;
    }
    r->reader_started = 1;
    sf_conf_destroy(rconf);
    return r;

err:
    sf_conf_destroy(rconf);
    sf_requester_destroy(r);
    return NULL;
}

int sf_request(sf_requester_t *r, const sf_record_t *req, int timeout_ms, sf_message_t **reply) {
    sf_header_t *hdrs;
    sf_record_t rec;
    waiter_t w;
    delivery_ctx_t *dc;
    pthread_condattr_t ca;
    struct timespec until;
    int rc;

    if (!r || !req || !reply || !req->topic || (req->header_count && !req->headers))
        return SF_ERROR_INVALID;
    *reply = NULL;
    hdrs = malloc((req->header_count + 3) * sizeof(*hdrs));
    dc = malloc(sizeof(*dc));
    if (!hdrs || !dc) {
        free(hdrs);
        free(dc);
        return SF_ERROR_NOMEM;
    }
    memset(&w, 0, sizeof(w));
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w.cond, &ca);
    pthread_condattr_destroy(&ca);

    /* Registered before the send, so even an instant reply finds its waiter. */
    pthread_mutex_lock(&r->lock);
    w.seq = ++r->seq;
    snprintf(w.id, sizeof(w.id), "%016" PRIx64, r->id_base + w.seq);
    w.next = r->waiters;
    if (r->waiters)
        r->waiters->prev = &w;
    r->waiters = &w;
    pthread_mutex_unlock(&r->lock);

    if (req->header_count)
        memcpy(hdrs, req->headers, req->header_count * sizeof(*hdrs));
    hdrs[req->header_count].key = HDR_REPLY_TO;
    hdrs[req->header_count].value = r->topic;
    hdrs[req->header_count].value_len = strlen(r->topic);
    hdrs[req->header_count + 1].key = HDR_REPLY_PARTITION;
    hdrs[req->header_count + 1].value = r->partition_str;
    hdrs[req->header_count + 1].value_len = strlen(r->partition_str);
    hdrs[req->header_count + 2].key = HDR_CORRELATION_ID;
    hdrs[req->header_count + 2].value = w.id;
    hdrs[req->header_count + 2].value_len = CORR_ID_LEN;
    rec = *req;
    rec.headers = hdrs;
    rec.header_count = req->header_count + 3;
    dc->r = r;
    dc->seq = w.seq;
    rc = sf_producer_send(r->prod, &rec, request_delivered, dc);
    free(hdrs);
    if (rc != SF_OK)
        free(dc);

    if (timeout_ms >= 0) {
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&r->lock);
    while (rc == SF_OK && !w.done) {
        if (timeout_ms < 0)
            pthread_cond_wait(&w.cond, &r->lock);
        else if (pthread_cond_timedwait(&w.cond, &r->lock, &until) == ETIMEDOUT)
            break;
    }
    waiter_unlink(r, &w);
    pthread_mutex_unlock(&r->lock);
    pthread_cond_destroy(&w.cond);

    if (rc != SF_OK)
        return rc;
    if (w.reply) {
        *reply = w.reply;
        return SF_OK;
    }
    return w.err ? w.err : SF_ERROR_TIMED_OUT;
}

void sf_requester_destroy(sf_requester_t *r) {
    if (!r)
        return;
    if (r->reader_started) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_mutex_unlock(&r->lock);
        sf_consumer_wakeup(r->cons);
        pthread_join(r->reader, NULL);
    }
    /* Serves the last delivery callbacks (they only look for waiters, and there are none). */
    if (r->prod)
        sf_producer_destroy(r->prod);
    sf_consumer_destroy(r->cons);
    if (r->topic)
        pthread_mutex_destroy(&r->lock);
    free(r->topic);
    free(r);
}

/* ------------------------------------------------------------------------------------------
 * Responder
 * ------------------------------------------------------------------------------------------ */

struct sf_responder {
    sf_producer_t *prod;
    sf_consumer_t *cons;
    sf_respond_cb *cb;
    void *opaque;
    int flush_timeout_ms;
    /* Set by sf_responder_stop, possibly from a signal handler: a lock-free atomic store is
     * async-signal-safe, and the atomic accesses make it well defined across threads. */
    volatile sig_atomic_t stop;
};

sf_responder_t *sf_responder_new(const sf_conf_t *conf, const char *topic, int32_t partition,
                                 sf_respond_cb *cb, void *opaque, char *errstr,
                                 size_t errstr_size) {
    sf_responder_t *r = NULL;
    sf_conf_t *rconf = NULL;
    int64_t deadline;
    int32_t count = 0;

    if (!conf || !topic || !*topic || !cb || partition < SF_PARTITION_ANY) {
        sf_errf(errstr, errstr_size, "a configuration, a topic and a callback are required");
        return NULL;
    }
    if (!(rconf = conf_for_reqrep(conf, errstr, errstr_size)))
        return NULL;
    r = calloc(1, sizeof(*r));
    if (!r) {
        sf_errf(errstr, errstr_size, "out of memory");
        goto err;
    }
    r->cb = cb;
    r->opaque = opaque;
    if (!(r->prod = sf_producer_new(rconf, errstr, errstr_size)) ||
        !(r->cons = sf_consumer_new(rconf, errstr, errstr_size)))
        goto err;
    r->flush_timeout_ms = sf_client_conf(sf_consumer_client(r->cons))->request_timeout_ms;
    deadline = sf_clock_mono_ms() + r->flush_timeout_ms;
    if (topic_ensure(r->cons, topic, deadline, &count, errstr, errstr_size) != SF_OK)
        goto err;
    if (partition >= count) {
        sf_errf(errstr, errstr_size, "%s has %d partitions: no partition %d", topic, (int)count,
                (int)partition);
        goto err;
    }
    /* Requests sent once this returns are all seen: every position is resolved first. */
    if (assign_at_end(r->cons, topic, partition == SF_PARTITION_ANY ? 0 : partition,
                      partition == SF_PARTITION_ANY ? count - 1 : partition, deadline, errstr,
                      errstr_size) != SF_OK)
        goto err;
    sf_conf_destroy(rconf);
    return r;

err:
    sf_conf_destroy(rconf);
    sf_responder_destroy(r);
    return NULL;
}

/* Answer @req. Returns SF_OK when a reply was queued, 1 when there is nothing to send, or the
 * send's error. */
static int respond_one(sf_responder_t *r, const sf_message_t *req) {
    const sf_header_t *to = sf_message_header(req, HDR_REPLY_TO, 1);
    const sf_header_t *part = sf_message_header(req, HDR_REPLY_PARTITION, 1);
    const sf_header_t *cid = sf_message_header(req, HDR_CORRELATION_ID, 1);
    char topic[256], num[16];
    sf_header_t *hdrs;
    sf_record_t reply;
    int32_t partition = SF_PARTITION_ANY;
    int rc;

    if (!to || !to->value || to->value_len == 0 || to->value_len >= sizeof(topic))
        return 1;
    memcpy(topic, to->value, to->value_len);
    topic[to->value_len] = '\0';
    if (part && part->value && part->value_len > 0 && part->value_len < sizeof(num)) {
        char *end;
        long v;
        memcpy(num, part->value, part->value_len);
        num[part->value_len] = '\0';
        v = strtol(num, &end, 10);
        if (*end == '\0' && v >= 0 && v <= INT32_MAX)
            partition = (int32_t)v;
    }
    memset(&reply, 0, sizeof(reply));
    if (r->cb(req, &reply, r->opaque) != 0)
        return 1;
    if (reply.header_count && !reply.headers)
        return SF_ERROR_INVALID;
    hdrs = malloc((reply.header_count + 1) * sizeof(*hdrs));
    if (!hdrs)
        return SF_ERROR_NOMEM;
    if (reply.header_count)
        memcpy(hdrs, reply.headers, reply.header_count * sizeof(*hdrs));
    if (cid) {
        hdrs[reply.header_count] = *cid;
        reply.header_count++;
    }
    reply.headers = hdrs;
    reply.topic = topic;
    reply.partition = partition;
    rc = sf_producer_send(r->prod, &reply, NULL, NULL);
    free(hdrs);
    return rc;
}

int sf_responder_run(sf_responder_t *r, int timeout_ms) {
    int64_t deadline;
    int served = 0;
    if (!r)
        return SF_ERROR_INVALID;
    deadline = timeout_ms < 0 ? -1 : sf_clock_mono_ms() + timeout_ms;
    while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
        int wait = POLL_SLICE_MS;
        sf_message_t *m;
        if (deadline >= 0) {
            int64_t left = deadline - sf_clock_mono_ms();
            if (left <= 0)
                break;
            if (left < wait)
                wait = (int)left;
        }
        m = sf_consumer_poll(r->cons, wait);
        if (!m)
            continue;
        if (m->err == 0 && respond_one(r, m) == SF_OK)
            served++;
        sf_message_destroy(m);
        sf_producer_poll(r->prod, 0);
    }
    __atomic_store_n(&r->stop, 0, __ATOMIC_RELAXED);
    sf_producer_flush(r->prod, r->flush_timeout_ms);
    return served;
}

void sf_responder_stop(sf_responder_t *r) {
    if (r)
        __atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
}

void sf_responder_destroy(sf_responder_t *r) {
    if (!r)
        return;
    if (r->prod) {
        sf_producer_flush(r->prod, r->flush_timeout_ms);
        sf_producer_destroy(r->prod);
    }
    sf_consumer_destroy(r->cons);
    free(r);
}
