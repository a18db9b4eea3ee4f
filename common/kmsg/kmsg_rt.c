#include "kmsg_rt.h"

#include <string.h>

int sf_kmsg_uuid_zero(sf_uuid_t u) {
    static const uint8_t zero[16];
    return memcmp(u.b, zero, sizeof(zero)) == 0;
}

double sf_kmsg_r_f64(sf_rbuf_t *rb) {
    uint64_t bits = (uint64_t)sf_rbuf_i64(rb);
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

sf_uuid_t sf_kmsg_r_uuid(sf_rbuf_t *rb) {
    sf_uuid_t u;
    sf_slice_t s = sf_rbuf_raw(rb, sizeof(u.b));
    if (s.p)
        memcpy(u.b, s.p, sizeof(u.b));
    else
        memset(u.b, 0, sizeof(u.b));
    return u;
}

sf_slice_t sf_kmsg_r_string(sf_rbuf_t *rb, int flex, int nullable) {
    sf_slice_t s;
    if (!flex)
        return sf_rbuf_string(rb, nullable);
    /* Kafka's readers refuse compact strings longer than a classic one can be, so whatever
     * decodes can be encoded again in any version. */
    s = sf_rbuf_compact_string(rb, nullable);
    if (s.len > INT16_MAX)
        sf_rbuf_fail(rb);
    return s;
}

sf_slice_t sf_kmsg_r_bytes(sf_rbuf_t *rb, int flex, int nullable) {
    return flex ? sf_rbuf_compact_bytes(rb, nullable) : sf_rbuf_bytes(rb, nullable);
}

int32_t sf_kmsg_r_arraylen(sf_rbuf_t *rb, int flex, size_t min_elem_size, int nullable) {
    return flex ? sf_rbuf_compact_array_len(rb, min_elem_size, nullable)
                : sf_rbuf_array_len(rb, min_elem_size, nullable);
}

int sf_kmsg_r_present(sf_rbuf_t *rb, int nullable) {
    int8_t marker;
    if (!nullable)
        return 1;
    marker = sf_rbuf_i8(rb);
    if (marker != -1 && marker != 1) {
        sf_rbuf_fail(rb);
        return 0;
    }
    return marker == 1;
}

uint32_t sf_kmsg_r_ntags(sf_rbuf_t *rb) {
    return sf_rbuf_uvarint(rb);
}

sf_rbuf_t sf_kmsg_r_tag(sf_rbuf_t *rb, uint32_t *tag) {
    sf_rbuf_t sub;
    uint32_t size;
    sf_slice_t s;
    *tag = sf_rbuf_uvarint(rb);
    size = sf_rbuf_uvarint(rb);
    s = sf_rbuf_raw(rb, size);
    sf_rbuf_init(&sub, s.p, s.p ? (size_t)s.len : 0);
    if (rb->err)
        sub.err = rb->err;
    return sub;
}

int sf_kmsg_r_nomem(sf_rbuf_t *rb) {
    sf_rbuf_fail(rb);
    rb->err = SF_ERR_NOMEM;
    return SF_ERR_NOMEM;
}

int sf_kmsg_r_result(sf_rbuf_t *rb, int rc) {
    if (rc && !rb->err) {
        sf_rbuf_fail(rb);
        rb->err = rc;
    }
    return rc ? rc : rb->err;
}

void sf_kmsg_w_f64(sf_wbuf_t *wb, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    sf_wbuf_i64(wb, (int64_t)bits);
}

void sf_kmsg_w_uuid(sf_wbuf_t *wb, sf_uuid_t u) {
    sf_wbuf_raw(wb, u.b, sizeof(u.b));
}

int sf_kmsg_w_string(sf_wbuf_t *wb, int flex, int nullable, sf_slice_t s) {
    if (s.len < 0 && !nullable)
        return SF_ERR_INVALID;
    if (flex) {
        sf_wbuf_compact_string(wb, s);
    } else {
        if (s.len > INT16_MAX)
            return SF_ERR_INVALID;
        sf_wbuf_string(wb, s);
    }
    return SF_OK;
}

int sf_kmsg_w_bytes(sf_wbuf_t *wb, int flex, int nullable, sf_slice_t s, void *ref) {
    if (s.len < 0 && !nullable)
        return SF_ERR_INVALID;
    if (!ref) {
        if (flex)
            sf_wbuf_compact_bytes(wb, s);
        else
            sf_wbuf_bytes(wb, s);
        return SF_OK;
    }
    if (s.len < 0)
        return SF_ERR_INVALID;
    if (flex)
        sf_wbuf_uvarint(wb, (uint32_t)s.len + 1);
    else
        sf_wbuf_i32(wb, s.len);
    sf_wbuf_splice(wb, ref, (size_t)s.len);
    return SF_OK;
}

int sf_kmsg_w_arraylen(sf_wbuf_t *wb, int flex, int nullable, int32_t count, const void *elems) {
    if ((count < 0 && !(count == -1 && nullable)) || (count > 0 && !elems))
        return SF_ERR_INVALID;
    if (flex)
        sf_wbuf_uvarint(wb, (uint32_t)(count + 1));
    else
        sf_wbuf_i32(wb, count);
    return SF_OK;
}

int sf_kmsg_w_present(sf_wbuf_t *wb, int nullable, int present) {
    if (!nullable)
        return present ? SF_OK : SF_ERR_INVALID;
    sf_wbuf_i8(wb, present ? 1 : -1);
    return SF_OK;
}

void sf_kmsg_w_tag(sf_wbuf_t *wb, uint32_t tag, sf_wbuf_t *val) {
    if (val->err && !wb->err)
        wb->err = val->err;
    sf_wbuf_uvarint(wb, tag);
    sf_wbuf_uvarint(wb, (uint32_t)val->len);
    sf_wbuf_raw(wb, val->p, val->len);
    sf_wbuf_free(val);
}

int sf_kmsg_w_tag_fail(sf_wbuf_t *val, int rc) {
    sf_wbuf_free(val);
    return rc;
}
