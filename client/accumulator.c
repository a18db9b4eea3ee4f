/* The producer's accumulator (see producer.h): per-partition batches filled by
 * sf_producer_send, the partitioner, readiness, retry and expiry decisions, splitting, and the
 * RecordBatch v2 writer. No locking and no I/O: the producer handle (producer.c) calls it
 * under the client lock. */
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "compress.h"
#include "crc32c.h"
#include "err.h"
#include "murmur2.h"
#include "producer.h"
#include "recbatch.h"

/* ------------------------------------------------------------------------------------------
 * Accumulator (no locking, no I/O; see producer.h)
 * ------------------------------------------------------------------------------------------ */

/* Batches kept for reuse after release, and the largest buffer kept. */
#define ACC_CACHE_MAX 8
#define ACC_CACHE_BUF_MAX (4u << 20)

static inline uint32_t zz32(int32_t v) {
    return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}

static inline uint64_t zz64(int64_t v) {
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline size_t uvarint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *put_uvarint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Varint-length bytes (-1 for null). */
static inline uint8_t *put_varbytes(uint8_t *p, const void *s, size_t len) {
    if (!s)
        return put_uvarint(p, zz32(-1));
    p = put_uvarint(p, zz32((int32_t)len));
    if (len)
        memcpy(p, s, len);
    return p + len;
}

/* The bytes put_varbytes writes for @s (NULL: null) of @len bytes. */
static inline size_t varbytes_size(const void *s, size_t len) {
    return s ? uvarint_size(zz32((int32_t)len)) + len : 1;
}

/* These writers stay local rather than going through sf_wbuf_varint & co: records are
 * written straight into a buffer already sized for them, and the per-call bounds and growth
 * checks of sf_wbuf (and sf_rbuf for sf_producer_batch_record) made a record 3-4 times slower
 * to encode and decode. */

static uint64_t acc_rand(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

int sf_producer_acc_init(sf_producer_acc_t *acc, const sf_producer_accconf_t *conf,
                         uint64_t seed) {
    memset(acc, 0, sizeof(*acc));
    acc->conf = *conf;
    acc->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
    acc->nbuckets = 16;
    acc->buckets = calloc(acc->nbuckets, sizeof(*acc->buckets));
    if (!acc->buckets) {
        acc->nbuckets = 0;
        return SF_ERR_NOMEM;
    }
    return SF_OK;
}

static void batch_free(sf_producer_batch_t *b) {
    free(b->buf);
    free(b->meta);
    sf_wbuf_free(&b->zbuf);
    free(b);
}

void sf_producer_acc_release(sf_producer_acc_t *acc, sf_producer_batch_t *b) {
    if (acc->ncache < ACC_CACHE_MAX && b->cap <= ACC_CACHE_BUF_MAX) {
        /* Keep the buffers (records, reports, compressed copy) for the next batch. */
        if (b->zbuf.cap > ACC_CACHE_BUF_MAX) {
            sf_wbuf_free(&b->zbuf);
            sf_wbuf_init(&b->zbuf);
        }
        sf_wbuf_reset(&b->zbuf);
        b->next = acc->cache;
        acc->cache = b;
        acc->ncache++;
        return;
    }
    batch_free(b);
}

void sf_producer_acc_free(sf_producer_acc_t *acc) {
    size_t i;
    int32_t j;
    sf_producer_batch_t *b;
    for (i = 0; i < acc->nbuckets && acc->buckets; i++) {
        sf_producer_topic_t *t = acc->buckets[i], *tn;
        for (; t; t = tn) {
            tn = t->next;
            for (j = 0; j < t->cap; j++) {
                sf_producer_part_t *part = t->parts[j];
                if (!part)
                    continue;
                while ((b = part->head)) {
                    part->head = b->next;
                    batch_free(b);
                }
                if (part->inflight)
                    batch_free(part->inflight);
                free(part);
            }
            free(t->parts);
            free(t->avail);
            free(t->name);
            free(t);
        }
    }
    free(acc->buckets);
    while ((b = acc->cache)) {
        acc->cache = b->next;
        batch_free(b);
    }
    memset(acc, 0, sizeof(*acc));
}

static int acc_grow_buckets(sf_producer_acc_t *acc) {
    size_t n = acc->nbuckets * 2, i;
    sf_producer_topic_t **nb = calloc(n, sizeof(*nb));
    if (!nb)
        return SF_ERR_NOMEM;
    for (i = 0; i < acc->nbuckets; i++) {
        sf_producer_topic_t *t = acc->buckets[i], *tn;
        for (; t; t = tn) {
            size_t h = (size_t)(name_hash(t->name) & (n - 1));
            tn = t->next;
            t->next = nb[h];
            nb[h] = t;
        }
    }
    free(acc->buckets);
    acc->buckets = nb;
    acc->nbuckets = n;
    return SF_OK;
}

sf_producer_topic_t *sf_producer_acc_topic(sf_producer_acc_t *acc, const char *name,
                                           int create) {
    sf_producer_topic_t *t = acc->last;
    size_t h;
    if (t && strcmp(t->name, name) == 0)
        return t;
    h = (size_t)(name_hash(name) & (acc->nbuckets - 1));
    for (t = acc->buckets[h]; t; t = t->next)
        if (strcmp(t->name, name) == 0)
            return acc->last = t;
    if (!create)
        return NULL;
    if (acc->ntopics >= acc->nbuckets && acc_grow_buckets(acc) == SF_OK)
        h = (size_t)(name_hash(name) & (acc->nbuckets - 1));
    t = calloc(1, sizeof(*t));
    if (!t || !(t->name = strdup(name))) {
        free(t);
        return NULL;
    }
    t->sticky = -1;
    t->next = acc->buckets[h];
    acc->buckets[h] = t;
    acc->ntopics++;
    return acc->last = t;
}

int sf_producer_topic_update(sf_producer_acc_t *acc, sf_producer_topic_t *t, int err,
                             int32_t nparts, const int32_t *leaders) {
    int32_t i;
    (void)acc;
    t->known = 1;
    t->err = err;
    if (err)
        return SF_OK;
    if (nparts < 0)
        nparts = 0;
    if (nparts > t->cap) {
        sf_producer_part_t **np = realloc(t->parts, (size_t)nparts * sizeof(*np));
        int32_t *na;
        if (!np)
            return SF_ERR_NOMEM;
        t->parts = np;
        for (i = t->cap; i < nparts; i++)
            np[i] = NULL;
        na = realloc(t->avail, (size_t)nparts * sizeof(*na));
        if (!na)
            return SF_ERR_NOMEM;
        t->avail = na;
        for (i = t->cap; i < nparts; i++) {
            sf_producer_part_t *part = calloc(1, sizeof(*part));
            if (!part)
                return SF_ERR_NOMEM; /* t->cap stays: the rest are added next time */
            part->topic = t;
            part->id = i;
            part->leader = -1;
            part->seq_pid = -1;
            np[i] = part;
            t->cap = i + 1;
        }
    }
    t->navail = 0;
    for (i = 0; i < t->cap; i++) {
        int32_t leader = i < nparts && leaders ? leaders[i] : -1;
        t->parts[i]->leader = leader;
        if (leader >= 0 && i < nparts)
            t->avail[t->navail++] = i;
    }
    t->nparts = nparts;
    /* Null-key records must not keep going to a partition that lost its leader. */
    if (t->sticky >= nparts || (t->sticky >= 0 && t->parts[t->sticky]->leader < 0))
        t->sticky = -1;
    return SF_OK;
}

size_t sf_producer_record_fixed_size(const sf_record_t *rec) {
    /* Lengths are capped well below SIZE_MAX so the sum cannot wrap; anything over
     * INT32_MAX is reported as such (too large), invalid input as SIZE_MAX. */
    const size_t big = (size_t)INT32_MAX + 1;
    size_t n = 0, i;
    if (rec->key && rec->key_len > INT32_MAX)
        return big;
    if (rec->value && rec->value_len > INT32_MAX)
        return big;
    if (rec->header_count && !rec->headers)
        return SIZE_MAX;
    if (rec->header_count > INT32_MAX)
        return big;
    n += varbytes_size(rec->key, rec->key_len);
    n += varbytes_size(rec->value, rec->value_len);
    n += uvarint_size(zz32((int32_t)rec->header_count));
    for (i = 0; i < rec->header_count; i++) {
        const sf_header_t *h = &rec->headers[i];
        size_t kl;
        if (!h->key)
            return SIZE_MAX;
        kl = strlen(h->key);
        if (kl > INT32_MAX || (h->value && h->value_len > INT32_MAX))
            return big;
        n += varbytes_size(h->key, kl);
        n += varbytes_size(h->value, h->value_len);
        if (n >= big)
            return big;
    }
    return n >= big ? big : n;
}

int32_t sf_producer_sticky_pick(uint64_t *rng, int32_t prev, const int32_t *avail,
                                int32_t navail, int32_t nparts) {
    int32_t n = navail > 0 ? navail : nparts, k;
    if (nparts < 1)
        return -1;
    if (n == 1)
        return navail > 0 ? avail[0] : 0;
    k = (int32_t)(acc_rand(rng) % (uint64_t)n);
    if ((navail > 0 ? avail[k] : k) == prev)
        k = (k + 1 + (int32_t)(acc_rand(rng) % (uint64_t)(n - 1))) % n;
    return navail > 0 ? avail[k] : k;
}

int32_t sf_producer_acc_partition(sf_producer_acc_t *acc, sf_producer_topic_t *t,
                                  const sf_record_t *rec) {
    if (rec->partition >= 0)
        return rec->partition < t->nparts ? rec->partition : -1;
    if (t->nparts < 1)
        return -1;
    if (rec->key) {
        if (acc->conf.partitioner_murmur2)
            return sf_murmur2_partition(rec->key, rec->key_len, t->nparts);
        return (int32_t)(acc_rand(&acc->rng) % (uint64_t)t->nparts);
    }
    if (t->sticky < 0 || t->sticky >= t->nparts)
        t->sticky = sf_producer_sticky_pick(&acc->rng, -1, t->avail, t->navail, t->nparts);
    return t->sticky;
}

static void acc_activate(sf_producer_acc_t *acc, sf_producer_part_t *part) {
    if (part->active)
        return;
    part->active = 1;
    part->next_active = NULL;
    if (acc->active_tail)
        acc->active_tail->next_active = part;
    else
        acc->active = part;
    acc->active_tail = part;
}

/* A new empty batch for @part able to hold at least @need record bytes. */
static sf_producer_batch_t *batch_new(sf_producer_acc_t *acc, sf_producer_part_t *part,
                                      size_t need) {
    size_t cap = (size_t)acc->conf.batch_size;
    size_t max = (size_t)acc->conf.max_batch_bytes;
    sf_producer_batch_t *b = acc->cache;
    if (cap < SF_RECBATCH_HEADER_SIZE + need)
        cap = SF_RECBATCH_HEADER_SIZE + need;
    if (cap > max)
        cap = max;
    if (b) {
        acc->cache = b->next;
        acc->ncache--;
    } else {
        b = calloc(1, sizeof(*b));
        if (!b)
            return NULL;
        sf_wbuf_init(&b->zbuf);
    }
    if (b->cap < cap) {
        uint8_t *nb = realloc(b->buf, cap);
        if (!nb) {
            batch_free(b);
            return NULL;
        }
        b->buf = nb;
        b->cap = cap;
    }
    b->next = NULL;
    b->part = part;
    b->len = SF_RECBATCH_HEADER_SIZE;
    b->count = 0;
    b->ncb = 0;
    b->base_ts = b->max_ts = 0;
    b->created = 0;
    b->mem = 0;
    b->closed = 0;
    b->wire = NULL;
    b->wire_len = 0;
    b->attempts = 0;
    b->retry_at = 0;
    b->pid = -1;
    b->epoch = -1;
    b->seq = -1;
    b->transactional = 0;
    b->err = 0;
    b->base_offset = -1;
    b->append_time = -1;
    return b;
}

/* The size of a record with @fixed bytes of key, value and headers at timestamp delta @dts
 * and offset delta @delta: returns the whole record, *@body the part after its length. */
static inline size_t rec_size(int64_t dts, int32_t delta, size_t fixed, size_t *body) {
    *body = 1 + uvarint_size(zz64(dts)) + uvarint_size(zz32(delta)) + fixed;
    return uvarint_size(zz32((int32_t)*body)) + *body;
}

/* Make room in @b for one more record of @total bytes: the buffer grows by doubling, to at
 * most @max unless the record needs more, and a report entry. Returns SF_OK or
 * SF_ERR_NOMEM. */
static int batch_room(sf_producer_batch_t *b, size_t total, size_t max) {
    if (b->len + total > b->cap) {
        size_t ncap = b->cap * 2;
        uint8_t *nb;
        if (ncap > max)
            ncap = max;
        if (ncap < b->len + total)
            ncap = b->len + total;
        nb = realloc(b->buf, ncap);
        if (!nb)
            return SF_ERR_NOMEM;
        b->buf = nb;
        b->cap = ncap;
    }
    if ((size_t)b->count >= b->metacap) {
        size_t n = b->metacap ? b->metacap * 2 : 64;
        sf_producer_recmeta_t *nm = realloc(b->meta, n * sizeof(*nm));
        if (!nm)
            return SF_ERR_NOMEM;
        b->meta = nm;
        b->metacap = n;
    }
    return SF_OK;
}

/* Write the start of record b->count of @b (which has room for it): length (@body),
 * attributes, timestamp delta of @ts, offset delta, key, value and header count (@nhdrs).
 * Returns where its headers go. */
static inline uint8_t *rec_put(sf_producer_batch_t *b, size_t body, int64_t ts,
                               const void *key, size_t key_len, const void *value,
                               size_t value_len, size_t nhdrs) {
    uint8_t *w = b->buf + b->len;
    w = put_uvarint(w, zz32((int32_t)body));
    *w++ = 0;
    w = put_uvarint(w, zz64(ts - b->base_ts));
    w = put_uvarint(w, zz32(b->count));
    w = put_varbytes(w, key, key_len);
    w = put_varbytes(w, value, value_len);
    return put_uvarint(w, zz32((int32_t)nhdrs));
}

/* Count the record of @total bytes just written at the end of @b, with its report entry
 * (@cb, @opaque). Returns the bytes charged to buffer.memory for it. */
static inline size_t rec_commit(sf_producer_batch_t *b, size_t total, int64_t ts,
                                sf_delivery_cb *cb, void *opaque) {
    size_t charged = total + sizeof(sf_producer_recmeta_t);
    b->meta[b->count].pos = (uint32_t)b->len;
    b->meta[b->count].cb = cb;
    b->meta[b->count].opaque = opaque;
    b->len += total;
    if (ts > b->max_ts)
        b->max_ts = ts;
    b->count++;
    if (cb)
        b->ncb++;
    b->mem += charged;
    return charged;
}

int sf_producer_acc_append(sf_producer_acc_t *acc, sf_producer_part_t *part,
                           const sf_record_t *rec, size_t fixed, int64_t ts, int64_t now,
                           sf_delivery_cb *cb, void *opaque, size_t *charged, int *events) {
    const size_t max = (size_t)acc->conf.max_batch_bytes;
    sf_producer_batch_t *b = part->tail;
    size_t body, total, i;
    uint8_t *w;
    int ev = 0;

    *events = 0;
    *charged = 0;
    if (fixed > max)
        return SF_ERR_TOOLARGE;
    if (b && !b->closed && b->count < INT32_MAX) {
        total = rec_size(ts - b->base_ts, b->count, fixed, &body);
        if (b->len + total > max)
            b = NULL;
    } else {
        b = NULL;
    }
    if (!b) {
        total = rec_size(0, 0, fixed, &body);
        if (SF_RECBATCH_HEADER_SIZE + total > max)
            return SF_ERR_TOOLARGE;
        b = batch_new(acc, part, total);
        if (!b)
            return SF_ERR_NOMEM;
        b->base_ts = b->max_ts = ts;
        b->created = now >= 0 ? now : sf_clock_mono_ms();
        ev = SF_PRODUCER_EV_NEW_BATCH | (part->head ? SF_PRODUCER_EV_BEHIND : 0);
        if (part->tail)
            part->tail->next = b;
        else
            part->head = b;
        part->tail = b;
        acc_activate(acc, part);
    }
    if (batch_room(b, total, max) != SF_OK)
        goto nomem;
    if (b->len < (size_t)acc->conf.batch_size && b->len + total >= (size_t)acc->conf.batch_size)
        ev |= SF_PRODUCER_EV_FULL;
    w = rec_put(b, body, ts, rec->key, rec->key_len, rec->value, rec->value_len,
                rec->header_count);
    for (i = 0; i < rec->header_count; i++) {
        const sf_header_t *h = &rec->headers[i];
        w = put_varbytes(w, h->key, strlen(h->key));
        w = put_varbytes(w, h->value, h->value_len);
    }
    assert((size_t)(w - (b->buf + b->len)) == total);
    *charged = rec_commit(b, total, ts, cb, opaque);
    *events = ev;
    return SF_OK;

nomem:
    if (b->count == 0) {
        /* Unlink the batch just started (it is the tail). */
        sf_producer_batch_t **pp = &part->head, *prev = NULL;
        while (*pp != b) {
            prev = *pp;
            pp = &(*pp)->next;
        }
        *pp = NULL;
        part->tail = prev;
        sf_producer_acc_release(acc, b);
    }
    return SF_ERR_NOMEM;
}

int sf_producer_batch_ready(const sf_producer_accconf_t *conf, const sf_producer_batch_t *b,
                            int has_newer, int flushing, int64_t now, int64_t *next) {
    int64_t due;
    if (b->retry_at > now) {
        if (b->retry_at < *next)
            *next = b->retry_at;
        return 0;
    }
    if (b->closed || has_newer || flushing || b->len >= (size_t)conf->batch_size)
        return 1;
    due = b->created + conf->linger_ms;
    if (now >= due)
        return 1;
    if (due < *next)
        *next = due;
    return 0;
}

sf_producer_batch_t *sf_producer_acc_take(sf_producer_acc_t *acc, sf_producer_part_t *part) {
    sf_producer_batch_t *b = part->head;
    (void)acc;
    if (!b || part->inflight)
        return NULL;
    part->head = b->next;
    if (!part->head)
        part->tail = NULL;
    b->next = NULL;
    part->inflight = b;
    /* A new batch for the sticky partition's records: move them elsewhere. */
    if (part->topic->sticky == part->id)
        part->topic->sticky = sf_producer_sticky_pick(&acc->rng, part->id, part->topic->avail,
                                                      part->topic->navail,
                                                      part->topic->nparts);
    return b;
}

void sf_producer_acc_requeue(sf_producer_acc_t *acc, sf_producer_batch_t *b, int64_t now) {
    sf_producer_part_t *part = b->part;
    if (part->inflight == b)
        part->inflight = NULL;
    b->next = part->head;
    part->head = b;
    if (!part->tail)
        part->tail = b;
    b->attempts++;
    b->retry_at = now + acc->conf.retry_backoff_ms;
    acc_activate(acc, part);
}

void sf_producer_acc_done(sf_producer_acc_t *acc, sf_producer_batch_t *b) {
    (void)acc;
    if (b->part->inflight == b)
        b->part->inflight = NULL;
}

int sf_producer_retry_ok(const sf_producer_accconf_t *conf, const sf_producer_batch_t *b,
                         int err, int64_t now) {
    return err != 0 && sf_error_retriable(err) && b->attempts < conf->retries &&
           now < b->created + conf->delivery_timeout_ms;
}

sf_producer_batch_t *sf_producer_acc_expire(sf_producer_acc_t *acc, sf_producer_part_t *part,
                                            int64_t now) {
    sf_producer_batch_t *b = part->head;
    if (!b || now < b->created + acc->conf.delivery_timeout_ms)
        return NULL;
    part->head = b->next;
    if (!part->head)
        part->tail = NULL;
    b->next = NULL;
    return b;
}

/* Append the decoded record @r (its headers still encoded in headers_raw) with the report
 * entry of @meta to @b. Returns SF_OK or SF_ERR_NOMEM. */
static int batch_put_raw(sf_producer_batch_t *b, const sf_recbatch_record_t *r,
                         const sf_producer_recmeta_t *meta, size_t max) {
    const void *key = r->key.len >= 0 ? r->key.p : NULL;
    const void *value = r->value.len >= 0 ? r->value.p : NULL;
    size_t key_len = r->key.len >= 0 ? (size_t)r->key.len : 0;
    size_t value_len = r->value.len >= 0 ? (size_t)r->value.len : 0;
    size_t fixed = varbytes_size(key, key_len) + varbytes_size(value, value_len) +
                   uvarint_size(zz32(r->header_count)) + (size_t)r->headers_raw.len;
    size_t body, total = rec_size(r->timestamp - b->base_ts, b->count, fixed, &body);
    uint8_t *w;
    if (batch_room(b, total, max) != SF_OK)
        return SF_ERR_NOMEM;
    w = rec_put(b, body, r->timestamp, key, key_len, value, value_len,
                (size_t)r->header_count);
    if (r->headers_raw.len > 0)
        memcpy(w, r->headers_raw.p, (size_t)r->headers_raw.len);
    assert((size_t)(w + r->headers_raw.len - (b->buf + b->len)) == total);
    rec_commit(b, total, r->timestamp, meta->cb, meta->opaque);
    return SF_OK;
}

int sf_producer_acc_split(sf_producer_acc_t *acc, sf_producer_batch_t *b, int64_t *mem_delta) {
    sf_producer_part_t *part = b->part;
    sf_producer_batch_t *first = NULL, *last = NULL, *nb = NULL, *x;
    size_t target;
    int32_t i;
    *mem_delta = 0;
    if (b->count < 2)
        return SF_ERR_INVALID;
    /* Half the records' bytes per batch; a record re-encoded may take up to 15 more bytes of
     * deltas, counted when deciding where a batch ends. */
    target = SF_RECBATCH_HEADER_SIZE + (b->len - SF_RECBATCH_HEADER_SIZE) / 2;
    for (i = 0; i < b->count; i++) {
        sf_recbatch_record_t r;
        size_t rlen;
        if (sf_producer_batch_record(b, i, &r) != SF_OK)
            goto fail;
        rlen = (i + 1 < b->count ? b->meta[i + 1].pos : b->len) - b->meta[i].pos + 15;
        if (nb && nb->count > 0 && nb->len + rlen > target)
            nb = NULL;
        if (!nb) {
            nb = batch_new(acc, part, target - SF_RECBATCH_HEADER_SIZE + rlen);
            if (!nb)
                goto fail;
            nb->base_ts = nb->max_ts = r.timestamp;
            nb->created = b->created;
            nb->attempts = b->attempts;
            if (last)
                last->next = nb;
            else
                first = nb;
            last = nb;
        }
        if (batch_put_raw(nb, &r, &b->meta[i], (size_t)acc->conf.max_batch_bytes) != SF_OK)
            goto fail;
    }
    for (x = first; x; x = x->next)
        *mem_delta += (int64_t)x->mem;
    *mem_delta -= (int64_t)b->mem;
    if (part->inflight == b)
        part->inflight = NULL;
    last->next = part->head;
    part->head = first;
    if (!part->tail)
        part->tail = last;
    acc_activate(acc, part);
    sf_producer_acc_release(acc, b);
    return SF_OK;
fail:
    while ((x = first)) {
        first = x->next;
        sf_producer_acc_release(acc, x);
    }
    return SF_ERR_NOMEM;
}

/* Write the v2 header for @len bytes at @p (records section already there) and its CRC. */
static void batch_header_write(const sf_producer_batch_t *b, uint8_t *p, size_t len,
                               int16_t attributes) {
    sf_store_be64(p + SF_RECBATCH_OFF_BASE_OFFSET, 0);
    sf_store_be32(p + SF_RECBATCH_OFF_BATCH_LENGTH, (uint32_t)(len - SF_RECBATCH_LOG_OVERHEAD));
    sf_store_be32(p + SF_RECBATCH_OFF_LEADER_EPOCH, (uint32_t)-1);
    p[SF_RECBATCH_OFF_MAGIC] = 2;
    if (b->transactional)
        attributes |= SF_RECBATCH_ATTR_TRANSACTIONAL;
    sf_store_be16(p + SF_RECBATCH_OFF_ATTRIBUTES, (uint16_t)attributes);
    sf_store_be32(p + SF_RECBATCH_OFF_LAST_OFFSET_DELTA, (uint32_t)(b->count - 1));
    sf_store_be64(p + SF_RECBATCH_OFF_BASE_TIMESTAMP, (uint64_t)b->base_ts);
    sf_store_be64(p + SF_RECBATCH_OFF_MAX_TIMESTAMP, (uint64_t)b->max_ts);
    sf_store_be64(p + SF_RECBATCH_OFF_PRODUCER_ID, (uint64_t)b->pid); /* -1: none */
    sf_store_be16(p + SF_RECBATCH_OFF_PRODUCER_EPOCH, (uint16_t)b->epoch);
    sf_store_be32(p + SF_RECBATCH_OFF_BASE_SEQUENCE, (uint32_t)b->seq);
    sf_store_be32(p + SF_RECBATCH_OFF_RECORD_COUNT, (uint32_t)b->count);
    sf_store_be32(p + SF_RECBATCH_OFF_CRC,
                  sf_crc32c(0, p + SF_RECBATCH_OFF_ATTRIBUTES, len - SF_RECBATCH_OFF_ATTRIBUTES));
}

void sf_producer_batch_restamp(sf_producer_batch_t *b) {
    uint8_t *p = (uint8_t *)b->wire; /* buf or zbuf.p, both owned by @b */
    sf_store_be64(p + SF_RECBATCH_OFF_PRODUCER_ID, (uint64_t)b->pid);
    sf_store_be16(p + SF_RECBATCH_OFF_PRODUCER_EPOCH, (uint16_t)b->epoch);
    sf_store_be32(p + SF_RECBATCH_OFF_BASE_SEQUENCE, (uint32_t)b->seq);
    sf_store_be32(p + SF_RECBATCH_OFF_CRC, sf_crc32c(0, p + SF_RECBATCH_OFF_ATTRIBUTES,
                                                     b->wire_len - SF_RECBATCH_OFF_ATTRIBUTES));
}

int sf_producer_batch_close(sf_producer_batch_t *b, sf_compress_codec_t codec, int level) {
    int rc = SF_OK;
    if (b->closed)
        return SF_OK;
    b->closed = 1;
    if (codec != SF_COMPRESS_NONE) {
        sf_wbuf_reset(&b->zbuf);
        if (sf_wbuf_reserve(&b->zbuf, SF_RECBATCH_HEADER_SIZE))
            rc = sf_compress(codec, level, b->buf + SF_RECBATCH_HEADER_SIZE,
                             b->len - SF_RECBATCH_HEADER_SIZE, &b->zbuf);
        else
            rc = SF_ERR_NOMEM;
        if (rc == SF_OK && b->zbuf.len < b->len) {
            batch_header_write(b, b->zbuf.p, b->zbuf.len, (int16_t)codec);
            b->wire = b->zbuf.p;
            b->wire_len = b->zbuf.len;
            return SF_OK;
        }
        /* Not smaller (or failed): send it uncompressed. */
        if (b->zbuf.err) {
            sf_wbuf_free(&b->zbuf);
            sf_wbuf_init(&b->zbuf);
        }
        sf_wbuf_reset(&b->zbuf);
    }
    batch_header_write(b, b->buf, b->len, 0);
    b->wire = b->buf;
    b->wire_len = b->len;
    return rc;
}

/* Read an unsigned LEB128 of at most @max bytes from *@pp (< @end). Returns 0 or -1. */
static inline int get_uvarint(const uint8_t **pp, const uint8_t *end, int max, uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t v = 0;
    int i;
    for (i = 0; i < max && p < end; i++) {
        uint8_t c = *p++;
        v |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Zig-zag varint-length bytes (length -1: null) at *@pp into @s. Returns 0 or -1. */
static inline int get_varbytes(const uint8_t **pp, const uint8_t *end, sf_slice_t *s) {
    uint64_t u;
    int32_t len;
    if (get_uvarint(pp, end, 5, &u) || u > UINT32_MAX)
        return -1;
    len = (int32_t)((uint32_t)(u >> 1) ^ -(uint32_t)(u & 1));
    if (len < -1 || (len > 0 && (size_t)len > (size_t)(end - *pp)))
        return -1;
    s->p = len >= 0 ? *pp : NULL;
    s->len = len;
    if (len > 0)
        *pp += len;
    return 0;
}

int sf_producer_batch_record(const sf_producer_batch_t *b, int32_t i,
                             sf_recbatch_record_t *rec) {
    const uint8_t *p, *end = b->buf + b->len;
    uint64_t u;
    if (i < 0 || i >= b->count || b->meta[i].pos >= b->len)
        return SF_ERR_MALFORMED;
    /* The batch's own bytes, but decoded with every bound checked all the same. */
    p = b->buf + b->meta[i].pos;
    if (get_uvarint(&p, end, 5, &u) || (u >> 1) > (uint64_t)(end - p) || (u & 1))
        return SF_ERR_MALFORMED;
    end = p + (u >> 1);
    if (p >= end)
        return SF_ERR_MALFORMED;
    rec->attributes = (int8_t)*p++;
    if (get_uvarint(&p, end, 10, &u))
        return SF_ERR_MALFORMED;
    rec->timestamp = b->base_ts + (int64_t)((u >> 1) ^ -(u & 1));
    if (get_uvarint(&p, end, 5, &u))
        return SF_ERR_MALFORMED;
    rec->offset = (int32_t)((uint32_t)(u >> 1) ^ -(uint32_t)(u & 1));
    if (get_varbytes(&p, end, &rec->key) || get_varbytes(&p, end, &rec->value) ||
        get_uvarint(&p, end, 5, &u) || (u & 1) || u > (uint64_t)INT32_MAX * 2)
        return SF_ERR_MALFORMED;
    rec->header_count = (int32_t)(u >> 1);
    rec->headers_raw.p = p;
    rec->headers_raw.len = (int32_t)(end - p);
    rec->headers = NULL;
    return SF_OK;
}

