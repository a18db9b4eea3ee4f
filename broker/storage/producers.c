/* The producer state of one partition (see producers.h). */
#include "producers.h"

#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "err.h"

#define MIN_CAP 8

/* The sequence after @seq (sequences wrap from INT32_MAX to 0, as Kafka's). */
static int32_t seq_next(int32_t seq) {
    return seq == INT32_MAX ? 0 : seq + 1;
}

int sf_producer_append_from(const sf_recbatch_hdr_t *hdr, sf_producer_append_t *out) {
    if (hdr->ProducerId < 0)
        return 0;
    out->producer_id = hdr->ProducerId;
    out->epoch = hdr->ProducerEpoch;
    out->first_seq = hdr->BaseSequence;
    out->last_seq = hdr->BaseSequence < 0 ? -1
                    : hdr->BaseSequence > INT32_MAX - hdr->LastOffsetDelta
                        ? hdr->BaseSequence - (INT32_MAX - hdr->LastOffsetDelta) - 1
                        : hdr->BaseSequence + hdr->LastOffsetDelta;
    out->first_offset = hdr->BaseOffset;
    /* A client's BaseOffset is anything until the log gives offsets: wrap, never overflow. */
    out->last_offset = (int64_t)((uint64_t)hdr->BaseOffset + (uint64_t)(int64_t)hdr->LastOffsetDelta);
    out->max_timestamp = hdr->MaxTimestamp;
    return 1;
}

void sf_producers_init(sf_producers_t *ps) {
    memset(ps, 0, sizeof(*ps));
}

void sf_producers_free(sf_producers_t *ps) {
    free(ps->slots);
    sf_producers_init(ps);
}

void sf_producers_clear(sf_producers_t *ps) {
    size_t i;
    for (i = 0; i < ps->cap; i++)
        ps->slots[i].id = -1;
    ps->n = 0;
}

static size_t slot_of(int64_t id, size_t cap) {
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL; /* Fibonacci hashing */
    return (size_t)(h >> 32) & (cap - 1);
}

/* The slot holding @id, or the free slot where it would go. */
static sf_producer_t *slot_find(const sf_producers_t *ps, int64_t id) {
    size_t i = slot_of(id, ps->cap);
    while (ps->slots[i].id != -1 && ps->slots[i].id != id)
        i = (i + 1) & (ps->cap - 1);
    return &ps->slots[i];
}

const sf_producer_t *sf_producers_find(const sf_producers_t *ps, int64_t id) {
    const sf_producer_t *p;
    if (!ps->n || id < 0)
        return NULL;
    p = slot_find(ps, id);
    return p->id == id ? p : NULL;
}

static int grow(sf_producers_t *ps) {
    size_t cap = ps->cap ? ps->cap * 2 : MIN_CAP, i;
    sf_producer_t *old = ps->slots, *slots = malloc(cap * sizeof(*slots));
    size_t oldcap = ps->cap;
    if (!slots)
        return SF_ERR_NOMEM;
    for (i = 0; i < cap; i++)
        slots[i].id = -1;
    ps->slots = slots;
    ps->cap = cap;
    for (i = 0; i < oldcap; i++)
        if (old[i].id != -1)
            *slot_find(ps, old[i].id) = old[i];
    free(old);
    return SF_OK;
}

/* Remove the entry in slot @i, shifting later entries of its probe run back. */
static void slot_remove(sf_producers_t *ps, size_t i) {
    size_t j = i, mask = ps->cap - 1;
    ps->slots[i].id = -1;
    ps->n--;
    for (;;) {
        size_t home;
        j = (j + 1) & mask;
        if (ps->slots[j].id == -1)
            return;
        home = slot_of(ps->slots[j].id, ps->cap);
        /* Move the entry back when its home is not cyclically in (i, j]. */
        if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
            ps->slots[i] = ps->slots[j];
            ps->slots[j].id = -1;
            i = j;
        }
    }
}

int sf_producers_check(const sf_producers_t *ps, const sf_producer_append_t *b,
                       const sf_producer_append_t *prev, sf_producer_batch_t *dup) {
    const sf_producer_t *p = prev ? NULL : sf_producers_find(ps, b->producer_id);
    int16_t epoch;
    int32_t last_seq;
    int i;
    if (b->first_seq < 0)
        return SF_ERR_SEQUENCE;
    if (prev) {
        epoch = prev->epoch;
        last_seq = prev->last_seq;
    } else if (p) {
        for (i = 0; i < p->nbatches && b->epoch == p->epoch; i++)
            if (p->batches[i].first_seq == b->first_seq && p->batches[i].last_seq == b->last_seq) {
                *dup = p->batches[i];
                return SF_ERR_DUPLICATE;
            }
        epoch = p->epoch;
        last_seq = p->nbatches ? p->batches[p->nbatches - 1].last_seq : -1;
    } else {
        return SF_OK; /* unknown: any sequence starts it */
    }
    if (b->epoch < epoch)
        return SF_ERR_PRODUCER_EPOCH;
    if (b->epoch > epoch)
        return b->first_seq == 0 ? SF_OK : SF_ERR_SEQUENCE;
    if (last_seq < 0)
        return SF_OK; /* the epoch is known but none of its batches (a marker) */
    return b->first_seq == seq_next(last_seq) ? SF_OK : SF_ERR_SEQUENCE;
}

int sf_producers_record(sf_producers_t *ps, const sf_producer_append_t *b) {
    sf_producer_t *p;
    if ((ps->n + 1) * 2 > ps->cap && grow(ps) != SF_OK)
        return SF_ERR_NOMEM;
    p = slot_find(ps, b->producer_id);
    if (p->id == -1) {
        memset(p, 0, sizeof(*p));
        p->id = b->producer_id;
        p->epoch = b->epoch;
        ps->n++;
    } else if (b->epoch < p->epoch) {
        return SF_OK;
    } else if (b->epoch > p->epoch) {
        p->epoch = b->epoch;
        p->nbatches = 0;
    }
    p->last_timestamp = b->max_timestamp;
    if (b->first_seq < 0)
        return SF_OK;
    if (p->nbatches == SF_PRODUCER_BATCHES) {
        memmove(p->batches, p->batches + 1, (SF_PRODUCER_BATCHES - 1) * sizeof(p->batches[0]));
        p->nbatches--;
    }
    p->batches[p->nbatches].first_seq = b->first_seq;
    p->batches[p->nbatches].last_seq = b->last_seq;
    p->batches[p->nbatches].first_offset = b->first_offset;
    p->batches[p->nbatches].last_offset = b->last_offset;
    p->batches[p->nbatches].timestamp = b->max_timestamp;
    p->nbatches++;
    return SF_OK;
}

size_t sf_producers_expire(sf_producers_t *ps, int64_t now_ms, int64_t expiration_ms) {
    size_t i = 0, gone = 0;
    while (i < ps->cap) {
        if (ps->slots[i].id != -1 && now_ms - ps->slots[i].last_timestamp >= expiration_ms) {
            slot_remove(ps, i); /* may move a later entry into slot i: look at it again */
            gone++;
            continue;
        }
        i++;
    }
    return gone;
}

int sf_producers_reach(const sf_producers_t *ps, int64_t offset) {
    size_t i;
    for (i = 0; i < ps->cap; i++) {
        const sf_producer_t *p = &ps->slots[i];
        if (p->id != -1 && p->nbatches && p->batches[p->nbatches - 1].last_offset >= offset)
            return 1;
    }
    return 0;
}

/* ---- snapshots ---- */

#define SNAPSHOT_VERSION 1
#define SNAPSHOT_HEAD 10 /* version, CRC, count */
#define SNAPSHOT_ENTRY 19
#define SNAPSHOT_BATCH 32

int sf_producers_encode(const sf_producers_t *ps, sf_wbuf_t *wb) {
    size_t start = wb->len, i;
    int j;
    sf_wbuf_i16(wb, SNAPSHOT_VERSION);
    sf_wbuf_u32(wb, 0); /* the CRC, below */
    sf_wbuf_i32(wb, (int32_t)ps->n);
    for (i = 0; i < ps->cap; i++) {
        const sf_producer_t *p = &ps->slots[i];
        if (p->id == -1)
            continue;
        sf_wbuf_i64(wb, p->id);
        sf_wbuf_i16(wb, p->epoch);
        sf_wbuf_i64(wb, p->last_timestamp);
        sf_wbuf_i8(wb, (int8_t)p->nbatches);
        for (j = 0; j < p->nbatches; j++) {
            sf_wbuf_i32(wb, p->batches[j].first_seq);
            sf_wbuf_i32(wb, p->batches[j].last_seq);
            sf_wbuf_i64(wb, p->batches[j].first_offset);
            sf_wbuf_i64(wb, p->batches[j].last_offset);
            sf_wbuf_i64(wb, p->batches[j].timestamp);
        }
    }
    if (wb->err)
        return SF_ERR_NOMEM;
    sf_store_be32(wb->p + start + 2,
                  sf_crc32c(0, wb->p + start + 6, wb->len - start - 6));
    return SF_OK;
}

int sf_producers_decode(sf_producers_t *ps, const uint8_t *p, size_t len) {
    sf_rbuf_t rb;
    int32_t n, i;
    int rc = SF_OK;
    sf_producers_clear(ps);
    if (len < SNAPSHOT_HEAD)
        return SF_ERR_CORRUPT;
    if (sf_load_be16(p) != SNAPSHOT_VERSION)
        return SF_ERR_UNSUPPORTED;
    if (sf_load_be32(p + 2) != sf_crc32c(0, p + 6, len - 6))
        return SF_ERR_CORRUPT;
    sf_rbuf_init(&rb, p + 6, len - 6);
    n = sf_rbuf_i32(&rb);
    for (i = 0; i < n && rc == SF_OK; i++) {
        sf_producer_append_t b;
        int64_t ts;
        int8_t nb;
        int j;
        if (sf_rbuf_remaining(&rb) < SNAPSHOT_ENTRY) {
            rc = SF_ERR_CORRUPT;
            break;
        }
        b.producer_id = sf_rbuf_i64(&rb);
        b.epoch = sf_rbuf_i16(&rb);
        b.max_timestamp = ts = sf_rbuf_i64(&rb);
        nb = sf_rbuf_i8(&rb);
        if (b.producer_id < 0 || nb < 0 || nb > SF_PRODUCER_BATCHES ||
            sf_rbuf_remaining(&rb) < (size_t)nb * SNAPSHOT_BATCH) {
            rc = SF_ERR_CORRUPT;
            break;
        }
        /* An entry without batches is recorded as a batch without a sequence. */
        b.first_seq = b.last_seq = -1;
        b.first_offset = b.last_offset = -1;
        if (nb == 0)
            rc = sf_producers_record(ps, &b);
        for (j = 0; j < nb && rc == SF_OK; j++) {
            b.first_seq = sf_rbuf_i32(&rb);
            b.last_seq = sf_rbuf_i32(&rb);
            b.first_offset = sf_rbuf_i64(&rb);
            b.last_offset = sf_rbuf_i64(&rb);
            b.max_timestamp = sf_rbuf_i64(&rb);
            rc = sf_producers_record(ps, &b);
        }
        if (rc == SF_OK)
            slot_find(ps, b.producer_id)->last_timestamp = ts;
    }
    if (rc == SF_OK && (rb.err || sf_rbuf_remaining(&rb) != 0 || n < 0))
        rc = SF_ERR_CORRUPT;
    if (rc != SF_OK)
        sf_producers_clear(ps);
    return rc;
}
