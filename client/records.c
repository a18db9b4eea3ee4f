/* Message chunks and the decoding of fetched records into them (records.h). */
#include "records.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compress.h"
#include "crc32c.h"
#include "err.h"
#include "proto.h"
#include "recbatch.h"

/* ------------------------------------------------------------------------------------------
 * Message chunks
 * ------------------------------------------------------------------------------------------ */

/* A message as the chunk stores it: the public struct first, so a message pointer is a cmsg
 * pointer. */
typedef struct cmsg {
    sf_message_t msg;
    sf_consumer_chunk_t *chunk;
} cmsg_t;


/* ---- the slab pool ----
 * A fetch response's chunk is one allocation of about max.partition.fetch.bytes plus its
 * message array: large enough for malloc to map and unmap it each time, or to trim the heap
 * under it, and the page faults of fresh memory then cost more than decoding the records.
 * The pool keeps a few freed slabs for the next chunks. Chunks hold a reference to it, so a
 * message may outlive its consumer. */

#define POOL_MIN_SLAB (64 * 1024) /* smaller allocations go straight to malloc */
#define POOL_SLOTS 8

struct sf_consumer_pool {
    pthread_mutex_t lock;
    int refs;  /* the owner + chunks holding a slab */
    int open;  /* the owner still uses it: keep freed slabs */
    int n;
    void *slab[POOL_SLOTS];
    size_t size[POOL_SLOTS];
};

sf_consumer_pool_t *sf_consumer_pool_new(void) {
    sf_consumer_pool_t *pool = calloc(1, sizeof(*pool));
    if (!pool)
        return NULL;
    pthread_mutex_init(&pool->lock, NULL);
    pool->refs = 1;
    pool->open = 1;
    return pool;
}

static void pool_free(sf_consumer_pool_t *pool) {
    int i;
    for (i = 0; i < pool->n; i++)
        free(pool->slab[i]);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

/* Drop a reference (lock NOT held). */
static void pool_unref(sf_consumer_pool_t *pool) {
    int last;
    pthread_mutex_lock(&pool->lock);
    last = --pool->refs == 0;
    pthread_mutex_unlock(&pool->lock);
    if (last)
        pool_free(pool);
}

void sf_consumer_pool_release(sf_consumer_pool_t *pool) {
    void *slabs[POOL_SLOTS];
    int i, n;
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->open = 0;
    n = pool->n;
    memcpy(slabs, pool->slab, sizeof(slabs));
    pool->n = 0;
    pthread_mutex_unlock(&pool->lock);
    for (i = 0; i < n; i++)
        free(slabs[i]);
    pool_unref(pool);
}

/* At least @need bytes: a pooled slab (*@pooled set, a reference taken) or malloc. *@size
 * receives the usable size. */
static void *pool_get(sf_consumer_pool_t *pool, size_t need, size_t *size, int *pooled) {
    void *p = NULL;
    int i, best = -1;
    *pooled = 0;
    *size = need;
    if (!pool || need < POOL_MIN_SLAB)
        return malloc(need);
    pthread_mutex_lock(&pool->lock);
    /* The smallest free slab that fits without wasting more than three quarters of it. */
    for (i = 0; i < pool->n; i++)
        if (pool->size[i] >= need && pool->size[i] / 4 <= need &&
            (best < 0 || pool->size[i] < pool->size[best]))
            best = i;
    if (best >= 0) {
        p = pool->slab[best];
        *size = pool->size[best];
        pool->n--;
        pool->slab[best] = pool->slab[pool->n];
        pool->size[best] = pool->size[pool->n];
    }
    pool->refs++;
    pthread_mutex_unlock(&pool->lock);
    if (!p) {
        /* Rounded up so that slabs of similar chunks fit each other. */
        *size = (need + POOL_MIN_SLAB - 1) / POOL_MIN_SLAB * POOL_MIN_SLAB;
        p = malloc(*size);
        if (!p) {
            pool_unref(pool);
            return NULL;
        }
    }
    *pooled = 1;
    return p;
}

/* Give back a slab from pool_get (with its reference). */
static void pool_put(sf_consumer_pool_t *pool, void *p, size_t size) {
    int last;
    pthread_mutex_lock(&pool->lock);
    if (pool->open && pool->n < POOL_SLOTS) {
        pool->slab[pool->n] = p;
        pool->size[pool->n] = size;
        pool->n++;
        p = NULL;
    } else if (pool->open) {
        /* Full: keep the larger slabs, they fit more chunks. */
        int i, small = 0;
        for (i = 1; i < POOL_SLOTS; i++)
            if (pool->size[i] < pool->size[small])
                small = i;
        if (pool->size[small] < size) {
            void *old = pool->slab[small];
            pool->slab[small] = p;
            pool->size[small] = size;
            p = old;
        }
    }
    last = --pool->refs == 0;
    pthread_mutex_unlock(&pool->lock);
    free(p);
    if (last)
        pool_free(pool);
}

static void chunk_free(sf_consumer_chunk_t *chunk) {
    size_t i;
    for (i = 0; i < chunk->nbufs; i++)
        free(chunk->bufs[i]);
    free(chunk->bufs);
    free(chunk->hdrs);
    if (chunk->msgs_own)
        free(chunk->msgs);
    if (chunk->pool)
        pool_put(chunk->pool, chunk, chunk->alloc_size);
    else
        free(chunk);
}

static void chunk_unref(sf_consumer_chunk_t *chunk, int n) {
    if (__atomic_sub_fetch(&chunk->refs, n, __ATOMIC_ACQ_REL) == 0)
        chunk_free(chunk);
}

/* A chunk with room for @nmsgs messages, the topic name and @raw_len copied bytes, from
 * @pool (may be NULL). */
static sf_consumer_chunk_t *chunk_alloc(sf_consumer_pool_t *pool, const char *topic,
                                        size_t nmsgs, size_t raw_len) {
    size_t tlen = strlen(topic) + 1, head, size;
    sf_consumer_chunk_t *chunk;
    int pooled;
    if (nmsgs > (SIZE_MAX / 2) / sizeof(cmsg_t))
        return NULL;
    head = sizeof(sf_consumer_chunk_t) + nmsgs * sizeof(cmsg_t);
    if (raw_len > SIZE_MAX - head - tlen)
        return NULL;
    chunk = pool_get(pool, head + tlen + raw_len, &size, &pooled);
    if (!chunk)
        return NULL;
    memset(chunk, 0, sizeof(*chunk));
    chunk->pool = pooled ? pool : NULL;
    chunk->alloc_size = size;
    chunk->msgs = (cmsg_t *)(chunk + 1);
    chunk->topic = (char *)chunk + head;
    memcpy(chunk->topic, topic, tlen);
    chunk->raw = (uint8_t *)chunk->topic + tlen;
    chunk->bytes = size;
    return chunk;
}

sf_consumer_chunk_t *sf_consumer_chunk_new_error(const char *topic, int32_t partition,
                                                 int64_t offset, int err) {
    sf_consumer_chunk_t *chunk = chunk_alloc(NULL, topic, 1, 0);
    cmsg_t *m;
    if (!chunk)
        return NULL;
    m = &chunk->msgs[0];
    memset(m, 0, sizeof(*m));
    m->chunk = chunk;
    m->msg.topic = chunk->topic;
    m->msg.partition = partition;
    m->msg.offset = offset;
    m->msg.timestamp = -1;
    m->msg.err = err;
    chunk->nmsgs = 1;
    chunk->refs = 1;
    return chunk;
}

size_t sf_consumer_chunk_remaining(const sf_consumer_chunk_t *chunk) {
    return chunk->nmsgs - chunk->next;
}

const sf_message_t *sf_consumer_chunk_peek(const sf_consumer_chunk_t *chunk) {
    return chunk->next < chunk->nmsgs ? &chunk->msgs[chunk->next].msg : NULL;
}

sf_message_t *sf_consumer_chunk_take(sf_consumer_chunk_t *chunk) {
    return chunk->next < chunk->nmsgs ? &chunk->msgs[chunk->next++].msg : NULL;
}

void sf_consumer_chunk_drop(sf_consumer_chunk_t *chunk) {
    size_t n = chunk->nmsgs - chunk->next;
    chunk->next = chunk->nmsgs;
    if (n)
        chunk_unref(chunk, (int)n);
}

void sf_message_destroy(sf_message_t *msg) {
    if (msg)
        chunk_unref(((cmsg_t *)msg)->chunk, 1);
}

const sf_header_t *sf_message_header(const sf_message_t *msg, const char *key, int last) {
    const sf_header_t *found = NULL;
    size_t i;
    if (!msg || !key)
        return NULL;
    for (i = 0; i < msg->header_count; i++) {
        if (strcmp(msg->headers[i].key, key) == 0) {
            found = &msg->headers[i];
            if (!last)
                break;
        }
    }
    return found;
}

/* ------------------------------------------------------------------------------------------
 * Records decoding
 * ------------------------------------------------------------------------------------------ */

/* The smallest encoded record (see recbatch.c), to bound counts taken from the wire. */
#define MIN_RECORD_SIZE 7

/* Decoding state of one sf_consumer_parse_records call. */
typedef struct parser {
    sf_consumer_chunk_t *chunk;
    size_t msgcap, nhdrs, hdrcap;
    int32_t partition;
} parser_t;

static int parser_grow_msgs(parser_t *ps) {
    sf_consumer_chunk_t *chunk = ps->chunk;
    size_t cap = ps->msgcap ? ps->msgcap * 2 : 64;
    cmsg_t *m;
    if (chunk->msgs_own) {
        m = realloc(chunk->msgs, cap * sizeof(*m));
    } else {
        /* Outgrew the room in the chunk's own allocation (a compressed batch holding more
         * records than estimated). */
        m = malloc(cap * sizeof(*m));
        if (m && chunk->nmsgs)
            memcpy(m, chunk->msgs, chunk->nmsgs * sizeof(*m));
    }
    if (!m)
        return SF_ERROR_NOMEM;
    chunk->bytes += (cap - (chunk->msgs_own ? ps->msgcap : 0)) * sizeof(*m);
    chunk->msgs = m;
    chunk->msgs_own = 1;
    ps->msgcap = cap;
    return SF_OK;
}

static int parser_grow_hdrs(parser_t *ps, size_t need) {
    size_t cap = ps->hdrcap ? ps->hdrcap : 64;
    sf_header_t *h;
    while (cap < need)
        cap *= 2;
    h = realloc(ps->chunk->hdrs, cap * sizeof(*h));
    if (!h)
        return SF_ERROR_NOMEM;
    ps->chunk->hdrs = h;
    ps->hdrcap = cap;
    return SF_OK;
}

/* A zig-zag varint of at most @maxbytes bytes (5 for varint, 10 for varlong) from *@pp, not
 * past @end. Returns 0 when it is malformed. One- and two-byte values (nearly every field of a
 * record) take the inline path. */
static inline __attribute__((always_inline)) int rd_varint(const uint8_t **pp,
                                                           const uint8_t *end, int maxbytes,
                                                           int64_t *out) {
    const uint8_t *p = *pp;
    uint64_t v;
    int i;
    if (__builtin_expect(p < end && p[0] < 0x80, 1)) {
        v = p[0];
        *pp = p + 1;
    } else if (__builtin_expect(end - p >= 2 && p[1] < 0x80, 1)) {
        v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        *pp = p + 2;
    } else {
        v = 0;
        for (i = 0;; i++) {
            if (i == maxbytes || p >= end)
                return 0;
            v |= (uint64_t)(*p & 0x7f) << (7 * i);
            if (!(*p++ & 0x80))
                break;
        }
        if (maxbytes == 5 && v > UINT32_MAX)
            return 0;
        *pp = p;
    }
    *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    return 1;
}

/* Varint-length bytes (-1: null, only when @nullable) inside @end: *@data and *@len. */
static inline __attribute__((always_inline)) int rd_bytes(const uint8_t **pp, const uint8_t *end,
                                                          int nullable, const uint8_t **data,
                                                          int64_t *len) {
    if (!rd_varint(pp, end, 5, len) || *len < (nullable ? -1 : 0) || *len > end - *pp)
        return 0;
    *data = *len < 0 ? NULL : *pp;
    if (*len > 0)
        *pp += *len;
    return 1;
}

/* Decode the records section of one batch (@p, @len bytes the chunk owns) into messages for
 * the records at or after @from. The record rules are sf_recbatch_iter_next's, except that
 * OffsetDeltas only have to increase within 0..LastOffsetDelta: compaction leaves gaps.
 * @exact: the records must fill @len exactly (an uncompressed batch). On failure the batch's
 * messages are removed again, so the caller reports the batch as a whole. */
static int parser_records(parser_t *ps, const sf_recbatch_hdr_t *hdr, uint8_t *p, size_t len,
                          int64_t from, int exact) {
    sf_consumer_chunk_t *chunk = ps->chunk;
    size_t msgs0 = chunk->nmsgs, hdrs0 = ps->nhdrs;
    const uint8_t *cur = p, *end = p + len;
    int log_append = (hdr->Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME) != 0;
    int64_t prev_delta = -1;
    int32_t i;
    int rc = SF_ERROR_MALFORMED;

    if (hdr->RecordCount < 0 || (size_t)hdr->RecordCount > len / MIN_RECORD_SIZE)
        goto fail;
    for (i = 0; i < hdr->RecordCount; i++) {
        const uint8_t *rend, *key, *value;
        int64_t length, ts_delta, delta, key_len, value_len, count, offset, h;
        cmsg_t *m;

        if (!rd_varint(&cur, end, 5, &length) || length < MIN_RECORD_SIZE - 1 ||
            length > end - cur)
            goto fail;
        rend = cur + length;
        cur++; /* Attributes (unused) */
        if (!rd_varint(&cur, rend, 10, &ts_delta) || !rd_varint(&cur, rend, 5, &delta) ||
            delta <= prev_delta || delta > hdr->LastOffsetDelta)
            goto fail;
        prev_delta = delta;
        offset = hdr->BaseOffset + delta;
        if (offset < from) {
            cur = rend;
            continue;
        }
        if (!rd_bytes(&cur, rend, 1, &key, &key_len) ||
            !rd_bytes(&cur, rend, 1, &value, &value_len) || !rd_varint(&cur, rend, 5, &count) ||
            count < 0 || count > (rend - cur) / 2)
            goto fail;
        if (chunk->nmsgs == ps->msgcap && (rc = parser_grow_msgs(ps)) != SF_OK)
            goto fail;
        m = &chunk->msgs[chunk->nmsgs];
        m->chunk = chunk;
        m->msg.topic = chunk->topic;
        m->msg.partition = ps->partition;
        m->msg.offset = offset;
        /* Wrapping (not undefined) when the wire's values overflow. */
        m->msg.timestamp = log_append ? hdr->MaxTimestamp
                                      : (int64_t)((uint64_t)hdr->BaseTimestamp +
                                                  (uint64_t)ts_delta);
        m->msg.timestamp_type = log_append;
        m->msg.key = key;
        m->msg.key_len = key_len < 0 ? 0 : (size_t)key_len;
        m->msg.value = value;
        m->msg.value_len = value_len < 0 ? 0 : (size_t)value_len;
        m->msg.err = 0;
        m->msg.header_count = (size_t)count;
        /* Until the chunk is complete, headers holds the index of the first header (the
         * array may still move). */
        m->msg.headers = (const sf_header_t *)(uintptr_t)ps->nhdrs;
        if (count > 0 && ps->nhdrs + (size_t)count > ps->hdrcap &&
            (rc = parser_grow_hdrs(ps, ps->nhdrs + (size_t)count)) != SF_OK)
            goto fail;
        for (h = 0; h < count; h++) {
            sf_header_t *out = &chunk->hdrs[ps->nhdrs++];
            const uint8_t *hkey, *hval;
            int64_t hkey_len, hval_len;
            rc = SF_ERROR_MALFORMED;
            if (!rd_bytes(&cur, rend, 0, &hkey, &hkey_len) ||
                !rd_bytes(&cur, rend, 1, &hval, &hval_len))
                goto fail;
            /* The byte after a header key is the first byte of its value's length, read
             * just now: it becomes the key's terminating NUL, so keys need no copy. */
            ((uint8_t *)hkey)[hkey_len] = '\0';
            out->key = (const char *)hkey;
            out->value = hval;
            out->value_len = hval_len < 0 ? 0 : (size_t)hval_len;
        }
        if (cur != rend) {
            rc = SF_ERROR_MALFORMED;
            goto fail;
        }
        chunk->nmsgs++;
    }
    if (!exact || cur == end)
        return SF_OK;
    rc = SF_ERROR_MALFORMED;
fail:
    chunk->nmsgs = msgs0;
    ps->nhdrs = hdrs0;
    return rc;
}

/* The answer's aborted transactions are read in place. */
_Static_assert(sizeof(sf_consumer_aborted_t) == sizeof(sf_proto_FetchResponse_AbortedTransaction_t) &&
                   offsetof(sf_consumer_aborted_t, first_offset) ==
                       offsetof(sf_proto_FetchResponse_AbortedTransaction_t, FirstOffset),
               "aborted transaction layouts");

/* read_committed: the aborted transactions of the answer, by first offset, and the producers
 * whose aborted transaction the batches have reached (until its marker). */
typedef struct aborted {
    sf_consumer_aborted_t *v;
    size_t n, next;
    int64_t *open; /* producer ids */
    size_t nopen;
} aborted_t;

static int aborted_cmp(const void *x, const void *y) {
    const sf_consumer_aborted_t *a = x, *b = y;
    return (a->first_offset > b->first_offset) - (a->first_offset < b->first_offset);
}

static int aborted_init(aborted_t *ab, const sf_consumer_aborted_t *v, size_t n) {
    memset(ab, 0, sizeof(*ab));
    if (!n)
        return SF_OK;
    if (!(ab->v = malloc(n * sizeof(*v))) || !(ab->open = malloc(n * sizeof(*ab->open)))) {
        free(ab->v);
        return SF_ERROR_NOMEM;
    }
    memcpy(ab->v, v, n * sizeof(*v));
    qsort(ab->v, n, sizeof(*v), aborted_cmp);
    ab->n = n;
    return SF_OK;
}

/* 1 when the batch belongs to an aborted transaction (its records, or its marker, which
 * closes it). */
static int aborted_batch(aborted_t *ab, const sf_recbatch_hdr_t *hdr) {
    int64_t last = hdr->BaseOffset + hdr->LastOffsetDelta;
    size_t i;
    for (; ab->next < ab->n && ab->v[ab->next].first_offset <= last; ab->next++)
        ab->open[ab->nopen++] = ab->v[ab->next].producer_id;
    if (!(hdr->Attributes & SF_RECBATCH_ATTR_TRANSACTIONAL))
        return 0;
    for (i = 0; i < ab->nopen && ab->open[i] != hdr->ProducerId; i++)
        ;
    if (i == ab->nopen)
        return 0;
    if (hdr->Attributes & SF_RECBATCH_ATTR_CONTROL)
        ab->open[i] = ab->open[--ab->nopen];
    return 1;
}

int sf_consumer_parse_records(sf_consumer_pool_t *pool, const char *topic, int32_t partition,
                              const uint8_t *records, size_t len, int64_t fetch_offset,
                              const sf_consumer_aborted_t *aborted, size_t naborted,
                              int check_crcs, size_t max_decompressed,
                              sf_consumer_parse_t *out) {
    aborted_t ab;
    parser_t ps;
    sf_consumer_chunk_t *chunk;
    sf_recbatch_hdr_t hdr;
    size_t pos, end, size, copy_len = 0, raw_at = 0, nmsgs = 0, i;
    int64_t position = fetch_offset;
    int scan_err = 0, rc;

    memset(out, 0, sizeof(*out));
    out->next_offset = fetch_offset;

    /* Pass 1, headers only: where the complete batches end, and how many bytes of
     * uncompressed batches must be copied. */
    for (pos = 0; pos < len; pos += size) {
        rc = sf_recbatch_header_parse(records + pos, len - pos, &hdr, &size);
        if (len - pos > SF_RECBATCH_OFF_MAGIC && records[pos + SF_RECBATCH_OFF_MAGIC] != 2) {
            /* An old-format message set: its size field sits where BatchLength does. */
            scan_err = SF_ERROR_UNSUPPORTED;
            break;
        }
        if (rc == SF_AGAIN) {
            out->partial_size = len - pos < SF_RECBATCH_HEADER_SIZE ? len - pos : size;
            break;
        }
        /* A BaseOffset no log can hold is malformed; the check keeps
         * sf_recbatch_next_offset from overflowing. */
        if (rc != SF_OK || hdr.BaseOffset < 0 ||
            hdr.BaseOffset > INT64_MAX - 1 - (hdr.LastOffsetDelta > 0 ? hdr.LastOffsetDelta : 0)) {
            scan_err = SF_ERROR_MALFORMED;
            break;
        }
        if (sf_recbatch_next_offset(&hdr) <= fetch_offset ||
            (hdr.Attributes & SF_RECBATCH_ATTR_CONTROL))
            continue;
        /* Room for the messages: the records an uncompressed batch can hold, a compressed
         * one's count up to a 16:1 ratio and what @max_decompressed can hold (the array grows
         * past that). */
        if (!(hdr.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK)) {
            copy_len += size - SF_RECBATCH_HEADER_SIZE;
            nmsgs += (size_t)hdr.RecordCount <= (size - SF_RECBATCH_HEADER_SIZE) / MIN_RECORD_SIZE
                         ? (size_t)hdr.RecordCount
                         : (size - SF_RECBATCH_HEADER_SIZE) / MIN_RECORD_SIZE;
        } else {
            size_t most = (size - SF_RECBATCH_HEADER_SIZE) * 16 / MIN_RECORD_SIZE + 1;
            if (most > max_decompressed / MIN_RECORD_SIZE)
                most = max_decompressed / MIN_RECORD_SIZE;
            nmsgs += hdr.RecordCount < 0 ? 0
                     : (size_t)hdr.RecordCount < most ? (size_t)hdr.RecordCount : most;
        }
    }
    end = pos;

    if (aborted_init(&ab, aborted, naborted) != SF_OK)
        return SF_ERROR_NOMEM;
    chunk = chunk_alloc(pool, topic, nmsgs, copy_len);
    if (!chunk) {
        free(ab.v);
        free(ab.open);
        return SF_ERROR_NOMEM;
    }
    memset(&ps, 0, sizeof(ps));
    ps.chunk = chunk;
    ps.partition = partition;
    ps.msgcap = nmsgs;

    /* Pass 2: check and decode each batch that reaches the position. */
    for (pos = 0; pos < end; pos += size) {
        uint8_t *bp;
        int codec;
        (void)sf_recbatch_header_parse(records + pos, end - pos, &hdr, &size);
        if (aborted_batch(&ab, &hdr) || (hdr.Attributes & SF_RECBATCH_ATTR_CONTROL)) {
            /* an aborted transaction's records, or a transaction marker */
            if (sf_recbatch_next_offset(&hdr) > position)
                position = sf_recbatch_next_offset(&hdr);
            continue;
        }
        if (sf_recbatch_next_offset(&hdr) <= position)
            continue; /* wholly before the position: nothing to check or decode */
        if (check_crcs && sf_crc32c(0, records + pos + SF_RECBATCH_OFF_ATTRIBUTES,
                                    size - SF_RECBATCH_OFF_ATTRIBUTES) != hdr.Crc) {
            out->err = SF_ERROR_CORRUPT;
            break;
        }
        if (hdr.LastOffsetDelta < 0 || hdr.RecordCount > (int64_t)hdr.LastOffsetDelta + 1) {
            out->err = SF_ERROR_MALFORMED;
            break;
        }
        codec = hdr.Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK;
        if (!codec) {
            bp = chunk->raw + raw_at;
            memcpy(bp, records + pos + SF_RECBATCH_HEADER_SIZE, size - SF_RECBATCH_HEADER_SIZE);
            raw_at += size - SF_RECBATCH_HEADER_SIZE;
            rc = parser_records(&ps, &hdr, bp, size - SF_RECBATCH_HEADER_SIZE, position, 1);
        } else {
            sf_wbuf_t wb;
            uint8_t **bufs;
            if (codec > SF_COMPRESS_ZSTD) {
                out->err = SF_ERROR_UNSUPPORTED;
                break;
            }
            sf_wbuf_init(&wb);
            rc = sf_decompress((sf_compress_codec_t)codec, records + pos + SF_RECBATCH_HEADER_SIZE,
                               size - SF_RECBATCH_HEADER_SIZE, max_decompressed, &wb);
            bufs = rc == SF_OK ? realloc(chunk->bufs, (chunk->nbufs + 1) * sizeof(*bufs)) : NULL;
            if (!bufs) {
                sf_wbuf_free(&wb);
                out->err = rc == SF_ERR_TOOLARGE                ? SF_ERROR_TOOLARGE
                           : rc == SF_ERR_UNSUPPORTED          ? SF_ERROR_UNSUPPORTED
                           : rc == SF_OK || rc == SF_ERR_NOMEM ? SF_ERROR_NOMEM
                                                               : SF_ERROR_MALFORMED;
                break;
            }
            chunk->bufs = bufs;
            chunk->bufs[chunk->nbufs++] = wb.p;
            chunk->bytes += wb.cap;
            /* A payload that decompresses to nothing leaves wb.p NULL: there is no record
             * to decode, and a batch that claims some is malformed. */
            if (wb.len == 0)
                rc = hdr.RecordCount == 0 ? SF_OK : SF_ERROR_MALFORMED;
            else
                rc = parser_records(&ps, &hdr, wb.p, wb.len, position, 0);
        }
        if (rc != SF_OK) {
            out->err = rc;
            break;
        }
        position = sf_recbatch_next_offset(&hdr);
    }
    if (!out->err && pos == end)
        out->err = scan_err;
    out->next_offset = position;
    free(ab.v);
    free(ab.open);

    chunk->bytes += ps.hdrcap * sizeof(sf_header_t);
    if (chunk->nmsgs == 0) {
        chunk_free(chunk);
        return SF_OK;
    }
    for (i = 0; i < chunk->nmsgs; i++) {
        sf_message_t *m = &chunk->msgs[i].msg;
        m->headers = m->header_count ? chunk->hdrs + (uintptr_t)m->headers : NULL;
    }
    chunk->refs = (int)chunk->nmsgs;
    out->chunk = chunk;
    out->bytes = chunk->bytes;
    return SF_OK;
}

