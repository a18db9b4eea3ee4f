#include "buf.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

void sf_rbuf_init(sf_rbuf_t *rb, const void *p, size_t len) {
    rb->p = p;
    rb->len = len;
    rb->pos = 0;
    rb->err = SF_OK;
}

size_t sf_rbuf_remaining(const sf_rbuf_t *rb) {
    return rb->err ? 0 : rb->len - rb->pos;
}

int sf_rbuf_fail(sf_rbuf_t *rb) {
    rb->err = SF_ERR_MALFORMED;
    rb->pos = rb->len;
    return SF_ERR_MALFORMED;
}

/* Return a pointer to @n readable bytes and consume them, or NULL (and fail). */
static const uint8_t *take(sf_rbuf_t *rb, size_t n) {
    const uint8_t *p;
    if (rb->err || n > rb->len - rb->pos) {
        sf_rbuf_fail(rb);
        return NULL;
    }
    p = rb->p + rb->pos;
    rb->pos += n;
    return p;
}

int8_t sf_rbuf_i8(sf_rbuf_t *rb) {
    const uint8_t *p = take(rb, 1);
    return p ? (int8_t)p[0] : 0;
}

int16_t sf_rbuf_i16(sf_rbuf_t *rb) {
    const uint8_t *p = take(rb, 2);
    return p ? (int16_t)sf_load_be16(p) : 0;
}

int32_t sf_rbuf_i32(sf_rbuf_t *rb) {
    const uint8_t *p = take(rb, 4);
    return p ? (int32_t)sf_load_be32(p) : 0;
}

uint32_t sf_rbuf_u32(sf_rbuf_t *rb) {
    const uint8_t *p = take(rb, 4);
    return p ? sf_load_be32(p) : 0;
}

int64_t sf_rbuf_i64(sf_rbuf_t *rb) {
    const uint8_t *p = take(rb, 8);
    return p ? (int64_t)sf_load_be64(p) : 0;
}

/* Record fields are mostly one-byte varints: read the bytes in place, one bounds check each,
 * without a call per byte. */
static uint64_t uvarint(sf_rbuf_t *rb, int maxbytes) {
    size_t avail = rb->err ? 0 : rb->len - rb->pos;
    const uint8_t *p = avail ? rb->p + rb->pos : NULL; /* an empty buffer may have no bytes */
    uint64_t v = 0;
    int i;
    for (i = 0; i < maxbytes && (size_t)i < avail; i++) {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            rb->pos += (size_t)i + 1;
            return v;
        }
    }
    sf_rbuf_fail(rb);
    return 0;
}

uint32_t sf_rbuf_uvarint(sf_rbuf_t *rb) {
    uint64_t v = uvarint(rb, 5);
    if (v > UINT32_MAX) {
        sf_rbuf_fail(rb);
        return 0;
    }
    return (uint32_t)v;
}

int32_t sf_rbuf_varint(sf_rbuf_t *rb) {
    uint32_t v = sf_rbuf_uvarint(rb);
    return (int32_t)((v >> 1) ^ -(v & 1));
}

int64_t sf_rbuf_varlong(sf_rbuf_t *rb) {
    uint64_t v = uvarint(rb, 10);
    return (int64_t)((v >> 1) ^ -(v & 1));
}

sf_slice_t sf_rbuf_raw(sf_rbuf_t *rb, size_t n) {
    sf_slice_t s = {NULL, 0};
    const uint8_t *p;
    if (n > INT32_MAX) {
        sf_rbuf_fail(rb);
        return s;
    }
    p = take(rb, n);
    if (p) {
        s.p = p;
        s.len = (int32_t)n;
    }
    return s;
}

void sf_rbuf_skip(sf_rbuf_t *rb, size_t n) {
    (void)take(rb, n);
}

/* A length already read from the wire: -1 is null when allowed, anything else below zero
 * fails. */
static sf_slice_t sized(sf_rbuf_t *rb, int64_t len, int nullable) {
    sf_slice_t s = {NULL, 0};
    if (rb->err)
        return s;
    if (len == -1 && nullable) {
        s.len = -1;
        return s;
    }
    if (len < 0) {
        sf_rbuf_fail(rb);
        return s;
    }
    return sf_rbuf_raw(rb, (size_t)len);
}

sf_slice_t sf_rbuf_string(sf_rbuf_t *rb, int nullable) {
    return sized(rb, sf_rbuf_i16(rb), nullable);
}

sf_slice_t sf_rbuf_compact_string(sf_rbuf_t *rb, int nullable) {
    return sized(rb, (int64_t)sf_rbuf_uvarint(rb) - 1, nullable);
}

sf_slice_t sf_rbuf_bytes(sf_rbuf_t *rb, int nullable) {
    return sized(rb, sf_rbuf_i32(rb), nullable);
}

sf_slice_t sf_rbuf_compact_bytes(sf_rbuf_t *rb, int nullable) {
    return sized(rb, (int64_t)sf_rbuf_uvarint(rb) - 1, nullable);
}

sf_slice_t sf_rbuf_varbytes(sf_rbuf_t *rb) {
    return sized(rb, sf_rbuf_varint(rb), 1);
}

static int32_t array_len(sf_rbuf_t *rb, int64_t n, size_t min_elem_size, int nullable) {
    if (rb->err)
        return -1;
    if (n == -1 && nullable)
        return -1;
    if (n < 0 || n > INT32_MAX ||
        (min_elem_size && (uint64_t)n > (rb->len - rb->pos) / min_elem_size)) {
        sf_rbuf_fail(rb);
        return -1;
    }
    return (int32_t)n;
}

int32_t sf_rbuf_array_len(sf_rbuf_t *rb, size_t min_elem_size, int nullable) {
    return array_len(rb, sf_rbuf_i32(rb), min_elem_size, nullable);
}

int32_t sf_rbuf_compact_array_len(sf_rbuf_t *rb, size_t min_elem_size, int nullable) {
    return array_len(rb, (int64_t)sf_rbuf_uvarint(rb) - 1, min_elem_size, nullable);
}

void sf_rbuf_skip_tags(sf_rbuf_t *rb) {
    uint32_t n = sf_rbuf_uvarint(rb), i;
    for (i = 0; i < n && !rb->err; i++) {
        (void)sf_rbuf_uvarint(rb); /* tag */
        sf_rbuf_skip(rb, sf_rbuf_uvarint(rb));
    }
}

/* ---- writer ---- */

void sf_wbuf_init(sf_wbuf_t *wb) {
    memset(wb, 0, sizeof(*wb));
}

void sf_wbuf_free(sf_wbuf_t *wb) {
    free(wb->p);
    free(wb->splices);
    sf_wbuf_init(wb);
}

void sf_wbuf_reset(sf_wbuf_t *wb) {
    wb->len = 0;
    wb->nsplices = 0;
    wb->err = SF_OK;
}

uint8_t *sf_wbuf_reserve(sf_wbuf_t *wb, size_t n) {
    uint8_t *p;
    if (wb->err)
        return NULL;
    if (n > wb->cap - wb->len || !wb->p) { /* even an empty reserve returns a real pointer */
        size_t cap = wb->cap ? wb->cap : 256;
        while (cap - wb->len < n) {
            if (cap > SIZE_MAX / 2) {
                wb->err = SF_ERR_NOMEM;
                return NULL;
            }
            cap *= 2;
        }
        p = realloc(wb->p, cap);
        if (!p) {
            wb->err = SF_ERR_NOMEM;
            return NULL;
        }
        wb->p = p;
        wb->cap = cap;
    }
    p = wb->p + wb->len;
    wb->len += n;
    return p;
}

void sf_wbuf_raw(sf_wbuf_t *wb, const void *src, size_t n) {
    uint8_t *p = sf_wbuf_reserve(wb, n);
    if (p && n)
        memcpy(p, src, n);
}

void sf_wbuf_i8(sf_wbuf_t *wb, int8_t v) {
    uint8_t *p = sf_wbuf_reserve(wb, 1);
    if (p)
        p[0] = (uint8_t)v;
}

void sf_wbuf_i16(sf_wbuf_t *wb, int16_t v) {
    uint8_t *p = sf_wbuf_reserve(wb, 2);
    if (p)
        sf_store_be16(p, (uint16_t)v);
}

void sf_wbuf_i32(sf_wbuf_t *wb, int32_t v) {
    sf_wbuf_u32(wb, (uint32_t)v);
}

void sf_wbuf_u32(sf_wbuf_t *wb, uint32_t v) {
    uint8_t *p = sf_wbuf_reserve(wb, 4);
    if (p)
        sf_store_be32(p, v);
}

void sf_wbuf_i64(sf_wbuf_t *wb, int64_t v) {
    uint8_t *p = sf_wbuf_reserve(wb, 8);
    if (p)
        sf_store_be64(p, (uint64_t)v);
}

static void uvarint_put(sf_wbuf_t *wb, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    sf_wbuf_raw(wb, tmp, n);
}

void sf_wbuf_uvarint(sf_wbuf_t *wb, uint32_t v) {
    uvarint_put(wb, v);
}

void sf_wbuf_varint(sf_wbuf_t *wb, int32_t v) {
    uvarint_put(wb, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

void sf_wbuf_varlong(sf_wbuf_t *wb, int64_t v) {
    uvarint_put(wb, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void sf_wbuf_string(sf_wbuf_t *wb, sf_slice_t s) {
    sf_wbuf_i16(wb, (int16_t)(s.len < 0 ? -1 : s.len));
    if (s.len > 0)
        sf_wbuf_raw(wb, s.p, (size_t)s.len);
}

void sf_wbuf_cstring(sf_wbuf_t *wb, const char *s) {
    sf_wbuf_string(wb, sf_slice_cstr(s));
}

void sf_wbuf_compact_string(sf_wbuf_t *wb, sf_slice_t s) {
    sf_wbuf_uvarint(wb, (uint32_t)(s.len < 0 ? 0 : s.len + 1));
    if (s.len > 0)
        sf_wbuf_raw(wb, s.p, (size_t)s.len);
}

void sf_wbuf_compact_cstring(sf_wbuf_t *wb, const char *s) {
    sf_wbuf_compact_string(wb, sf_slice_cstr(s));
}

void sf_wbuf_bytes(sf_wbuf_t *wb, sf_slice_t s) {
    sf_wbuf_i32(wb, s.len < 0 ? -1 : s.len);
    if (s.len > 0)
        sf_wbuf_raw(wb, s.p, (size_t)s.len);
}

void sf_wbuf_compact_bytes(sf_wbuf_t *wb, sf_slice_t s) {
    sf_wbuf_compact_string(wb, s);
}

void sf_wbuf_varbytes(sf_wbuf_t *wb, sf_slice_t s) {
    sf_wbuf_varint(wb, s.len < 0 ? -1 : s.len);
    if (s.len > 0)
        sf_wbuf_raw(wb, s.p, (size_t)s.len);
}

void sf_wbuf_tags_empty(sf_wbuf_t *wb) {
    sf_wbuf_uvarint(wb, 0);
}

void sf_wbuf_splice(sf_wbuf_t *wb, void *ref, size_t len) {
    if (wb->err)
        return;
    if (wb->nsplices == wb->capsplices) {
        size_t cap = wb->capsplices ? wb->capsplices * 2 : 8;
        sf_splice_t *sp = realloc(wb->splices, cap * sizeof(*sp));
        if (!sp) {
            wb->err = SF_ERR_NOMEM;
            return;
        }
        wb->splices = sp;
        wb->capsplices = cap;
    }
    wb->splices[wb->nsplices].at = wb->len;
    wb->splices[wb->nsplices].ref = ref;
    wb->splices[wb->nsplices].len = len;
    wb->nsplices++;
}

static size_t spliced_since(const sf_wbuf_t *wb, size_t at) {
    size_t i, n = 0;
    for (i = 0; i < wb->nsplices; i++)
        if (wb->splices[i].at >= at)
            n += wb->splices[i].len;
    return n;
}

int sf_wbuf_inline_splices(sf_wbuf_t *wb, int (*read)(void *ref, uint8_t *dst, size_t len)) {
    size_t total = sf_wbuf_total(wb), pos = 0, out = 0, i;
    uint8_t *p;
    int rc;
    if (wb->nsplices == 0)
        return SF_OK;
    if (!(p = malloc(total ? total : 1)))
        return SF_ERR_NOMEM;
    for (i = 0; i < wb->nsplices; i++) {
        const sf_splice_t *sp = &wb->splices[i];
        if (sp->at > pos)
            memcpy(p + out, wb->p + pos, sp->at - pos);
        out += sp->at - pos;
        pos = sp->at;
        if ((rc = read(sp->ref, p + out, sp->len)) != SF_OK) {
            free(p);
            return rc;
        }
        out += sp->len;
    }
    if (wb->len > pos)
        memcpy(p + out, wb->p + pos, wb->len - pos);
    free(wb->p);
    wb->p = p;
    wb->len = wb->cap = total;
    wb->nsplices = 0;
    return SF_OK;
}

size_t sf_wbuf_total(const sf_wbuf_t *wb) {
    return wb->len + spliced_since(wb, 0);
}

size_t sf_wbuf_mark_i32(sf_wbuf_t *wb) {
    size_t at = wb->len;
    sf_wbuf_i32(wb, 0);
    return at;
}

void sf_wbuf_patch_i32(sf_wbuf_t *wb, size_t at, int32_t v) {
    if (!wb->err && at + 4 <= wb->len)
        sf_store_be32(wb->p + at, (uint32_t)v);
}

size_t sf_wbuf_since(const sf_wbuf_t *wb, size_t at) {
    /* A splice recorded exactly at @at (before the mark's own bytes) is not after it; marks
     * are always taken before the placeholder is written, so splices at == at belong before. */
    size_t i, n = wb->len - at;
    for (i = 0; i < wb->nsplices; i++)
        if (wb->splices[i].at > at)
            n += wb->splices[i].len;
    return n;
}

sf_slice_t sf_slice_cstr(const char *s) {
    sf_slice_t sl;
    sl.p = (const uint8_t *)s;
    sl.len = s ? (int32_t)strlen(s) : -1;
    return sl;
}

int sf_slice_eq(sf_slice_t s, const char *cstr) {
    size_t n = strlen(cstr);
    return s.len >= 0 && (size_t)s.len == n && (n == 0 || memcmp(s.p, cstr, n) == 0);
}

char *sf_slice_strdup(sf_slice_t s) {
    char *r;
    if (s.len < 0)
        return NULL;
    r = malloc((size_t)s.len + 1);
    if (!r)
        return NULL;
    if (s.len)
        memcpy(r, s.p, (size_t)s.len);
    r[s.len] = '\0';
    return r;
}
