/* Bounds-checked big-endian readers and growable writers for the Kafka wire format.
 *
 * Readers are sticky: the first read past the end (or any malformed length) sets rb->err to
 * SF_ERR_MALFORMED, and every later read returns zero / an empty slice. A decoder reads
 * straight-line and checks rb->err once at the end. Slices point into the reader's buffer and
 * are valid while it lives. */
#ifndef SF_BUF_H
#define SF_BUF_H

#include <stddef.h>
#include <stdint.h>

/* A borrowed byte range. len == -1 means null (nullable strings, bytes, arrays). */
typedef struct sf_slice {
    const uint8_t *p;
    int32_t len;
} sf_slice_t;

typedef struct sf_rbuf {
    const uint8_t *p; /* borrowed */
    size_t len;
    size_t pos;
    int err; /* SF_OK, or SF_ERR_MALFORMED after the first bad read */
} sf_rbuf_t;

void sf_rbuf_init(sf_rbuf_t *rb, const void *p, size_t len);
/* Bytes not yet read (0 once err is set). */
size_t sf_rbuf_remaining(const sf_rbuf_t *rb);
/* Mark the reader failed; always returns SF_ERR_MALFORMED. */
int sf_rbuf_fail(sf_rbuf_t *rb);

int8_t sf_rbuf_i8(sf_rbuf_t *rb);
int16_t sf_rbuf_i16(sf_rbuf_t *rb);
int32_t sf_rbuf_i32(sf_rbuf_t *rb);
uint32_t sf_rbuf_u32(sf_rbuf_t *rb);
int64_t sf_rbuf_i64(sf_rbuf_t *rb);
/* Unsigned LEB128, at most 5 bytes. */
uint32_t sf_rbuf_uvarint(sf_rbuf_t *rb);
/* Zig-zag signed varint (at most 5 bytes) and varlong (at most 10 bytes). */
int32_t sf_rbuf_varint(sf_rbuf_t *rb);
int64_t sf_rbuf_varlong(sf_rbuf_t *rb);
/* Take @n raw bytes as a slice. */
sf_slice_t sf_rbuf_raw(sf_rbuf_t *rb, size_t n);
void sf_rbuf_skip(sf_rbuf_t *rb, size_t n);

/* STRING (i16 length, -1 is null only if @nullable) */
sf_slice_t sf_rbuf_string(sf_rbuf_t *rb, int nullable);
/* COMPACT_STRING (uvarint length+1, 0 is null only if @nullable) */
sf_slice_t sf_rbuf_compact_string(sf_rbuf_t *rb, int nullable);
/* BYTES / RECORDS (i32 length, -1 null only if @nullable) */
sf_slice_t sf_rbuf_bytes(sf_rbuf_t *rb, int nullable);
/* COMPACT_BYTES (uvarint length+1) */
sf_slice_t sf_rbuf_compact_bytes(sf_rbuf_t *rb, int nullable);
/* Varint-length bytes used inside records (zig-zag varint, -1 null). */
sf_slice_t sf_rbuf_varbytes(sf_rbuf_t *rb);
/* ARRAY count (i32, -1 null). Fails unless count * @min_elem_size fits in what remains, so a
 * count from the wire never drives an allocation larger than the request. Returns -1 for null
 * (only if @nullable) or on error. */
int32_t sf_rbuf_array_len(sf_rbuf_t *rb, size_t min_elem_size, int nullable);
/* COMPACT_ARRAY count (uvarint count+1); same checks. */
int32_t sf_rbuf_compact_array_len(sf_rbuf_t *rb, size_t min_elem_size, int nullable);
/* Skip a tagged-field section (flexible versions). */
void sf_rbuf_skip_tags(sf_rbuf_t *rb);

/* Growable writer. The first allocation failure sets err = SF_ERR_NOMEM; later writes are
 * no-ops. Splices mark places where bytes that live elsewhere (a log file range) follow
 * the bytes written so far, so a response can be sent without copying them. */
typedef struct sf_splice {
    size_t at;  /* position in the written bytes where the external range goes */
    void *ref;  /* opaque to the writer (e.g. a file range) */
    size_t len; /* its length, already counted by the surrounding length prefixes */
} sf_splice_t;

typedef struct sf_wbuf {
    uint8_t *p; /* owned */
    size_t len, cap;
    sf_splice_t *splices; /* owned array; refs are the caller's */
    size_t nsplices, capsplices;
    int err;
} sf_wbuf_t;

void sf_wbuf_init(sf_wbuf_t *wb);
/* Free the memory; refs in splices are not touched. */
void sf_wbuf_free(sf_wbuf_t *wb);
void sf_wbuf_reset(sf_wbuf_t *wb);
/* Make room for @n more bytes; returns a pointer to them (caller fills) or NULL. */
uint8_t *sf_wbuf_reserve(sf_wbuf_t *wb, size_t n);

void sf_wbuf_raw(sf_wbuf_t *wb, const void *p, size_t n);
void sf_wbuf_i8(sf_wbuf_t *wb, int8_t v);
void sf_wbuf_i16(sf_wbuf_t *wb, int16_t v);
void sf_wbuf_i32(sf_wbuf_t *wb, int32_t v);
void sf_wbuf_u32(sf_wbuf_t *wb, uint32_t v);
void sf_wbuf_i64(sf_wbuf_t *wb, int64_t v);
void sf_wbuf_uvarint(sf_wbuf_t *wb, uint32_t v);
void sf_wbuf_varint(sf_wbuf_t *wb, int32_t v);
void sf_wbuf_varlong(sf_wbuf_t *wb, int64_t v);
/* STRING / nullable STRING from a slice (len -1 = null). */
void sf_wbuf_string(sf_wbuf_t *wb, sf_slice_t s);
/* STRING from a C string (NULL = null). */
void sf_wbuf_cstring(sf_wbuf_t *wb, const char *s);
void sf_wbuf_compact_string(sf_wbuf_t *wb, sf_slice_t s);
void sf_wbuf_compact_cstring(sf_wbuf_t *wb, const char *s);
void sf_wbuf_bytes(sf_wbuf_t *wb, sf_slice_t s);
void sf_wbuf_compact_bytes(sf_wbuf_t *wb, sf_slice_t s);
void sf_wbuf_varbytes(sf_wbuf_t *wb, sf_slice_t s);
/* An empty tagged-field section. */
void sf_wbuf_tags_empty(sf_wbuf_t *wb);
/* Record that @len external bytes identified by @ref follow at the current position. The
 * writer's own bytes continue after them. */
void sf_wbuf_splice(sf_wbuf_t *wb, void *ref, size_t len);
/* Replace every splice by its bytes, which @read(ref, dst, len) fills (returning SF_OK or an
 * error): afterwards the buffer holds everything itself and no splice. The refs are the
 * caller's, as before. Returns SF_OK, the first error of @read (the buffer is then
 * unchanged) or SF_ERR_NOMEM. */
int sf_wbuf_inline_splices(sf_wbuf_t *wb, int (*read)(void *ref, uint8_t *dst, size_t len));
/* Total encoded size including spliced ranges. */
size_t sf_wbuf_total(const sf_wbuf_t *wb);
/* Back-patching: sf_wbuf_mark() returns the position for a later sf_wbuf_patch_i32 (a length
 * or a CRC written over four placeholder bytes). */
size_t sf_wbuf_mark_i32(sf_wbuf_t *wb);
void sf_wbuf_patch_i32(sf_wbuf_t *wb, size_t at, int32_t v);
/* The number of bytes (own and spliced) written since position @at (as returned by mark). */
size_t sf_wbuf_since(const sf_wbuf_t *wb, size_t at);

/* Helpers for a slice from a C string / comparing a slice. */
sf_slice_t sf_slice_cstr(const char *s);
int sf_slice_eq(sf_slice_t s, const char *cstr);
/* Copy a slice to a new NUL-terminated string (malloc); NULL for a null slice or no memory. */
char *sf_slice_strdup(sf_slice_t s);

/* Big-endian loads/stores on raw memory. */
static inline uint16_t sf_load_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t sf_load_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t sf_load_be64(const uint8_t *p) {
    return (uint64_t)sf_load_be32(p) << 32 | sf_load_be32(p + 4);
}
static inline void sf_store_be16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static inline void sf_store_be32(uint8_t *p, uint32_t v) {
    p[0] = v >> 24; p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void sf_store_be64(uint8_t *p, uint64_t v) {
    sf_store_be32(p, (uint32_t)(v >> 32)); sf_store_be32(p + 4, (uint32_t)v);
}

#endif
