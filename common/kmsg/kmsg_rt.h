/* The runtime of the generated Kafka protocol codec (kmsg_*.c): the classic and flexible
 * (KIP-482) encodings of strings, bytes and arrays, nullable markers and tagged fields, on top
 * of the bounds-checked readers and growable writers of buf.h.
 *
 * Readers follow buf.h: the first bad read marks the reader failed and later reads return zero
 * or empty slices; the generated decoder checks rb->err after each structure. Every array
 * count is checked against the bytes that remain (count * the least encoded size of one
 * element), so no count from the wire allocates more than the request could hold.
 * Writers return SF_OK, or SF_ERR_INVALID for a value the version cannot carry (a null where it
 * is not nullable, a string longer than 32767 bytes in a classic version); allocation failures
 * stay in wb->err as in buf.h. */
#ifndef SF_KMSG_RT_H
#define SF_KMSG_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "err.h"

/* A Kafka Uuid (16 bytes, most significant first). */
typedef struct sf_uuid {
    uint8_t b[16];
} sf_uuid_t;

/* 1 if @u is the zero uuid (Uuid.ZERO_UUID). */
int sf_kmsg_uuid_zero(sf_uuid_t u);

double sf_kmsg_r_f64(sf_rbuf_t *rb);
sf_uuid_t sf_kmsg_r_uuid(sf_rbuf_t *rb);
/* STRING or COMPACT_STRING (@flex); null (len -1) accepted only if @nullable. */
sf_slice_t sf_kmsg_r_string(sf_rbuf_t *rb, int flex, int nullable);
/* BYTES / RECORDS or their compact forms. */
sf_slice_t sf_kmsg_r_bytes(sf_rbuf_t *rb, int flex, int nullable);
/* An array count (-1 for null when @nullable), checked against @min_elem_size. */
int32_t sf_kmsg_r_arraylen(sf_rbuf_t *rb, int flex, size_t min_elem_size, int nullable);
/* A struct field's presence: when @nullable, reads the int8 marker (-1 null, 1 present) and
 * returns 0 for null; otherwise reads nothing and returns 1. */
int sf_kmsg_r_present(sf_rbuf_t *rb, int nullable);
/* The count of a tagged-field section. */
uint32_t sf_kmsg_r_ntags(sf_rbuf_t *rb);
/* Read one tagged field's tag into @tag and return a reader over its value (its size is
 * checked against what remains; the bytes are consumed from @rb). */
sf_rbuf_t sf_kmsg_r_tag(sf_rbuf_t *rb, uint32_t *tag);
/* Arena exhausted: mark @rb failed with SF_ERR_NOMEM and return SF_ERR_NOMEM. */
int sf_kmsg_r_nomem(sf_rbuf_t *rb);
/* The result of a decode: @rc, or rb->err when @rc is SF_OK; a failure is left in rb->err. */
int sf_kmsg_r_result(sf_rbuf_t *rb, int rc);

void sf_kmsg_w_f64(sf_wbuf_t *wb, double v);
void sf_kmsg_w_uuid(sf_wbuf_t *wb, sf_uuid_t u);
int sf_kmsg_w_string(sf_wbuf_t *wb, int flex, int nullable, sf_slice_t s);
/* BYTES / RECORDS: when @ref is not NULL the length is written and the @s.len bytes are
 * spliced by reference (sf_wbuf_splice; s.p is not read). */
int sf_kmsg_w_bytes(sf_wbuf_t *wb, int flex, int nullable, sf_slice_t s, void *ref);
/* An array count; SF_ERR_INVALID for a null (-1) that is not @nullable, another negative
 * count, or a positive count with a NULL @elems. */
int sf_kmsg_w_arraylen(sf_wbuf_t *wb, int flex, int nullable, int32_t count, const void *elems);
/* A struct field's presence marker (only written when @nullable). */
int sf_kmsg_w_present(sf_wbuf_t *wb, int nullable, int present);
/* Append one tagged field: @tag, the size of @val's bytes, and the bytes; frees @val. */
void sf_kmsg_w_tag(sf_wbuf_t *wb, uint32_t tag, sf_wbuf_t *val);
/* Free @val and return @rc (a tagged value that failed to encode). */
int sf_kmsg_w_tag_fail(sf_wbuf_t *val, int rc);

#endif
