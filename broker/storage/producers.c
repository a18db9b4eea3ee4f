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
    out->transactional = (hdr->Attributes & SF_RECBATCH_ATTR_TRANSACTIONAL) != 0;
    out->control = (hdr->Attributes & SF_RECBATCH_ATTR_CONTROL) != 0;
    out->commit = 0;
    out->coordinator_epoch = -1;
    return 1;
}

int sf_producer_marker_parse(const uint8_t *batch, size_t len, sf_producer_append_t *b) {
    sf_recbatch_iter_t it;
    sf_recbatch_record_t rec;
    int16_t type;
    /* One record; versions are never negative (Kafka reads later versions as version 0). */
    if (sf_recbatch_iter_init(&it, batch, len) != SF_OK || sf_recbatch_iter_next(&it, &rec) ||
        rec.key.len < 4 || rec.value.len < 6 || (sf_load_be16(rec.key.p) & 0x8000) ||
        (sf_load_be16(rec.value.p) & 0x8000))
        return SF_ERR_MALFORMED;
    type = (int16_t)sf_load_be16(rec.key.p + 2); /* after the key's version */
    if (type != SF_RECBATCH_CONTROL_ABORT && type != SF_RECBATCH_CONTROL_COMMIT)
        return SF_ERR_MALFORMED;
    b->commit = type == SF_RECBATCH_CONTROL_COMMIT;
    b->coordinator_epoch = (int32_t)sf_load_be32(rec.value.p + 2); /* after its version */
    return SF_OK;
}

void sf_producers_init(sf_producers_t *ps) {
    memset(ps, 0, sizeof(*ps));
}

void sf_producers_free(sf_producers_t *ps) {
    free(ps->slots);
    free(ps->txns);
    sf_producers_init(ps);
}

void sf_producers_clear(sf_producers_t *ps) {
    size_t i;
    for (i = 0; i < ps->cap; i++)
        ps->slots[i].id = -1;
    ps->n = 0;
    ps->ntxns = 0;
}

/* ---- the ongoing transactions, sorted by first offset ---- */

/* Index of the first ongoing transaction whose first offset is >= @offset. */
static size_t txn_lower(const sf_producers_t *ps, int64_t offset) {
    size_t lo = 0, hi = ps->ntxns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ps->txns[mid].first_offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Start @p's transaction at @offset. Appends are in offset order, so the new one goes last
 * but for a snapshot being loaded. */
static int txn_start(sf_producers_t *ps, sf_producer_t *p, int64_t offset) {
    size_t at;
    if (ps->ntxns == ps->captxns) {
        size_t cap = ps->captxns ? ps->captxns * 2 : 8;
        sf_producer_txn_t *v = realloc(ps->txns, cap * sizeof(*v));
        if (!v)
            return SF_ERR_NOMEM;
        ps->txns = v;
        ps->captxns = cap;
    }
    at = ps->ntxns && ps->txns[ps->ntxns - 1].first_offset > offset ? txn_lower(ps, offset)
                                                                    : ps->ntxns;
    memmove(ps->txns + at + 1, ps->txns + at, (ps->ntxns - at) * sizeof(*ps->txns));
    ps->txns[at].first_offset = offset;
    ps->txns[at].producer_id = p->id;
    ps->ntxns++;
    p->txn_first_offset = offset;
    return SF_OK;
}

/* End @p's ongoing transaction, if any. */
static void txn_end(sf_producers_t *ps, sf_producer_t *p) {
    size_t i;
    if (p->txn_first_offset < 0)
        return;
    for (i = txn_lower(ps, p->txn_first_offset); i < ps->ntxns; i++)
        if (ps->txns[i].producer_id == p->id) {
            memmove(ps->txns + i, ps->txns + i + 1, (ps->ntxns - i - 1) * sizeof(*ps->txns));
            ps->ntxns--;
            break;
        }
    p->txn_first_offset = -1;
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

/* The sequence checks of sf_producers_check: @b after the producer's last batch. */
static int check_sequence(const sf_producer_t *p, const sf_producer_append_t *b,
                          const sf_producer_append_t *prev) {
    int16_t epoch;
    int32_t last_seq;
    if (prev) {
        epoch = prev->epoch;
        last_seq = prev->last_seq;
    } else if (p) {
        epoch = p->epoch;
        last_seq = p->nbatches ? p->batches[p->nbatches - 1].last_seq : -1;
    } else {
        return SF_OK; /* unknown: any sequence starts it */
    }
    if (b->epoch > epoch)
        return b->first_seq == 0 ? SF_OK : SF_ERR_SEQUENCE;
    if (last_seq < 0)
        return SF_OK; /* the epoch is known but none of its batches (a marker) */
    return b->first_seq == seq_next(last_seq) ? SF_OK : SF_ERR_SEQUENCE;
}

int sf_producers_check(const sf_producers_t *ps, const sf_producer_append_t *b,
                       const sf_producer_append_t *prev, uint64_t guard,
                       sf_producer_batch_t *dup) {
    const sf_producer_t *p = sf_producers_find(ps, b->producer_id);
    int ongoing = p && p->txn_first_offset >= 0;
    int i, rc;
    if (b->first_seq < 0)
        return SF_ERR_SEQUENCE;
    for (i = 0; !prev && p && i < p->nbatches && b->epoch == p->epoch; i++)
        if (p->batches[i].first_seq == b->first_seq && p->batches[i].last_seq == b->last_seq) {
            *dup = p->batches[i];
            return SF_ERR_DUPLICATE;
        }
    if (b->epoch < (prev ? prev->epoch : p ? p->epoch : INT16_MIN))
        return SF_ERR_PRODUCER_EPOCH;
    /* As Kafka: a transactional batch that would begin a transaction the coordinator did not
     * confirm (or that a marker ended since it confirmed it) stays out of the log, where it
     * would hold the last stable offset back until someone aborts it. */
    if (guard && b->transactional && !ongoing && !prev && (!p || p->verify_guard != guard))
        return SF_ERR_TXN_STATE;
    if ((rc = check_sequence(p, b, prev)) != SF_OK)
        return rc;
    return !b->transactional && ongoing ? SF_ERR_TXN_STATE : SF_OK;
}

int sf_producers_check_marker(const sf_producers_t *ps, int64_t id, int16_t epoch,
                              int32_t coordinator_epoch) {
    const sf_producer_t *p = sf_producers_find(ps, id);
    if (!p)
        return SF_OK;
    if (epoch < p->epoch)
        return SF_ERR_PRODUCER_EPOCH;
    if (coordinator_epoch < p->coordinator_epoch)
        return SF_ERR_COORDINATOR_FENCED;
    return SF_OK;
}

/* The entry of @id, created (epoch @epoch, no transaction) when missing; NULL: no memory. */
static sf_producer_t *entry_get(sf_producers_t *ps, int64_t id, int16_t epoch) {
    sf_producer_t *p;
    if ((ps->n + 1) * 2 > ps->cap && grow(ps) != SF_OK)
        return NULL;
    p = slot_find(ps, id);
    if (p->id == -1) {
        memset(p, 0, sizeof(*p));
        p->id = id;
        p->epoch = epoch;
        p->txn_first_offset = -1;
        p->coordinator_epoch = -1;
        ps->n++;
    }
    return p;
}

int sf_producers_verify_begin(sf_producers_t *ps, int64_t id, int16_t epoch, uint64_t fresh,
                              int64_t now_ms, uint64_t *guard) {
    sf_producer_t *p = (sf_producer_t *)sf_producers_find(ps, id);
    if (p && p->txn_first_offset >= 0)
        return 0;
    if (!p) {
        if (!(p = entry_get(ps, id, epoch)))
            return SF_ERR_NOMEM;
        p->last_timestamp = now_ms; /* expires as an idle producer if nothing follows */
    }
    if (!p->verify_guard)
        p->verify_guard = fresh;
    *guard = p->verify_guard;
    return 1;
}

int sf_producers_record_marker(sf_producers_t *ps, const sf_producer_append_t *b,
                               int64_t *txn_first) {
    sf_producer_t *p = entry_get(ps, b->producer_id, b->epoch);
    if (txn_first)
        *txn_first = -1;
    if (!p)
        return SF_ERR_NOMEM;
    /* Always ends the transaction, whatever the epoch: a replica must not keep one open that
     * its leader closed (the leader checked the marker). */
    if (txn_first)
        *txn_first = p->txn_first_offset;
    txn_end(ps, p);
    p->verify_guard = 0; /* a verification begun before the marker confirmed nothing */
    if (b->epoch > p->epoch) {
        p->epoch = b->epoch;
        p->nbatches = 0;
    }
    if (b->coordinator_epoch > p->coordinator_epoch)
        p->coordinator_epoch = b->coordinator_epoch;
    p->last_timestamp = b->max_timestamp;
    return SF_OK;
}

int sf_producers_record(sf_producers_t *ps, const sf_producer_append_t *b) {
    sf_producer_t *p;
    if (b->control)
        return sf_producers_record_marker(ps, b, NULL);
    if (!(p = entry_get(ps, b->producer_id, b->epoch)))
        return SF_ERR_NOMEM;
    if (b->epoch < p->epoch)
        return SF_OK;
    if (b->epoch > p->epoch) {
        p->epoch = b->epoch;
        p->nbatches = 0;
    }
    p->last_timestamp = b->max_timestamp;
    if (b->transactional && p->txn_first_offset < 0) {
        if (txn_start(ps, p, b->first_offset) != SF_OK)
            return SF_ERR_NOMEM;
        p->verify_guard = 0;
    }
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
        /* A producer in a transaction stays until its marker (Kafka: the transaction
         * timeout's abort), however long it is idle. */
        if (ps->slots[i].id != -1 && ps->slots[i].txn_first_offset < 0 &&
            now_ms - ps->slots[i].last_timestamp >= expiration_ms) {
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
        if (p->id != -1 && ((p->nbatches && p->batches[p->nbatches - 1].last_offset >= offset) ||
                            p->txn_first_offset >= 0 || p->coordinator_epoch >= 0))
            return 1;
    }
    return 0;
}

/* ---- snapshots ---- */

#define SNAPSHOT_VERSION 2
#define SNAPSHOT_HEAD 10 /* version, CRC, count */
#define SNAPSHOT_ENTRY_V1 19
#define SNAPSHOT_ENTRY 31 /* v2: the transaction's first offset and the coordinator epoch */
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
        sf_wbuf_i64(wb, p->txn_first_offset);
        sf_wbuf_i32(wb, p->coordinator_epoch);
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
    int rc = SF_OK, version;
    size_t entry;
    sf_producers_clear(ps);
    if (len < SNAPSHOT_HEAD)
        return SF_ERR_CORRUPT;
    version = sf_load_be16(p);
    if (version != 1 && version != SNAPSHOT_VERSION)
        return SF_ERR_UNSUPPORTED;
    entry = version == 1 ? SNAPSHOT_ENTRY_V1 : SNAPSHOT_ENTRY;
    if (sf_load_be32(p + 2) != sf_crc32c(0, p + 6, len - 6))
        return SF_ERR_CORRUPT;
    sf_rbuf_init(&rb, p + 6, len - 6);
    n = sf_rbuf_i32(&rb);
    for (i = 0; i < n && rc == SF_OK; i++) {
        sf_producer_append_t b;
        int64_t ts, txn_first = -1;
        int32_t coordinator_epoch = -1;
        int8_t nb;
        int j;
        if (sf_rbuf_remaining(&rb) < entry) {
            rc = SF_ERR_CORRUPT;
            break;
        }
        memset(&b, 0, sizeof(b));
        b.producer_id = sf_rbuf_i64(&rb);
        b.epoch = sf_rbuf_i16(&rb);
        b.max_timestamp = ts = sf_rbuf_i64(&rb);
        if (version >= 2) {
            txn_first = sf_rbuf_i64(&rb);
            coordinator_epoch = sf_rbuf_i32(&rb);
        }
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
        if (rc == SF_OK) {
            sf_producer_t *pp = slot_find(ps, b.producer_id);
            pp->last_timestamp = ts;
            pp->coordinator_epoch = coordinator_epoch < -1 ? -1 : coordinator_epoch;
            if (txn_first >= 0 && pp->txn_first_offset < 0)
                rc = txn_start(ps, pp, txn_first);
        }
    }
    if (rc == SF_OK && (rb.err || sf_rbuf_remaining(&rb) != 0 || n < 0))
        rc = SF_ERR_CORRUPT;
    if (rc != SF_OK)
        sf_producers_clear(ps);
    return rc;
}
