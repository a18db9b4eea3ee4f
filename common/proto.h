/* Kafka wire-protocol framing: request and response headers, API names and the flexible-version
 * rule, over the generated message codec (common/kmsg/kmsg.h).
 *
 * Conventions of every generated message (see common/kmsg/kmsggen.py):
 * - Structs and fields keep Kafka's names (the JSON "name"), so code reads against the spec in
 *   common/kmsg/spec/. Nested structures are sf_proto_<Message>_<Type>_t after the JSON type.
 *   An array field `X` is a pair `int32_t XCount; T *X;`; a count of -1 with X == NULL is a
 *   null array (only where the JSON makes it nullable in that version).
 * - Strings and bytes are sf_slice_t; len -1 is null. After a decode they borrow the bytes of
 *   the sf_rbuf_t's buffer (valid while that buffer lives); arrays are allocated from the
 *   arena passed to the decoder (freed with it).
 * - A "records" field `R` has a companion `void *RRef`: when set, the encoder writes R.len as
 *   the length and splices the bytes by reference (sf_wbuf_splice) instead of copying R.p.
 * - sf_proto_<M>_init sets every field to its JSON default; decoders start from it, so a field
 *   absent from a version holds its default. Encoders ignore fields absent from the version.
 * - Decoders accept the spec's validVersions and return SF_OK, SF_ERR_UNSUPPORTED,
 *   SF_ERR_MALFORMED (truncated, bad length, lying count) or SF_ERR_NOMEM (arena exhausted; the
 *   reader is also marked failed). Bytes after the last field are ignored, as Kafka's
 *   generated readers do; rb->pos tells how far the message went.
 * - Encoders append to @wb and return SF_OK, SF_ERR_UNSUPPORTED, SF_ERR_INVALID (a null where
 *   the version allows none, an array count > 0 with a NULL pointer) or SF_ERR_NOMEM. On error
 *   the bytes appended so far are unspecified (reset the writer). */
#ifndef SF_PROTO_H
#define SF_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "err.h"
#include "kmsg.h"

/* IncrementalAlterConfigs operations (ConfigOperation). */
#define SF_PROTO_CONFIG_OP_SET 0
#define SF_PROTO_CONFIG_OP_DELETE 1
#define SF_PROTO_CONFIG_OP_APPEND 2
#define SF_PROTO_CONFIG_OP_SUBTRACT 3

/* The API name for logs ("Produce"), or "Unknown" (static string, never NULL). */
const char *sf_proto_api_name(int16_t api_key);

/* 1 if version @version of @api_key is flexible (KIP-482: compact strings and arrays, tagged
 * fields, request header v2 and, except for ApiVersions, response header v1). As in Kafka, a
 * version above the newest the codec knows counts as flexible when the API's flexible range is
 * open-ended, so the header of a newer client's request still parses. 0 for unknown APIs. */
int sf_proto_version_flexible(int16_t api_key, int16_t version);

typedef struct sf_proto_RequestHeader {
    int16_t RequestApiKey;
    int16_t RequestApiVersion;
    int32_t CorrelationId;
    sf_slice_t ClientId; /* nullable; borrows the reader's buffer */
} sf_proto_RequestHeader_t;

/* Decode a request header: v1 (key, version, correlation id, nullable client id), v2 (plus
 * tagged fields) for flexible versions, v0 (no client id) for ControlledShutdown v0. An unknown
 * API still decodes as v1 and returns SF_OK (the caller answers it), with rb->pos at the start
 * of the body. @return SF_OK or SF_ERR_MALFORMED. */
int sf_proto_RequestHeader_decode(sf_rbuf_t *rb, sf_proto_RequestHeader_t *hdr);

/* Encode a request header (the version the decoder expects). @return SF_OK or SF_ERR_NOMEM. */
int sf_proto_RequestHeader_encode(sf_wbuf_t *wb, const sf_proto_RequestHeader_t *hdr);

/* Write the response header for a request: v0 (correlation id), or v1 (+ empty tagged fields)
 * for flexible versions, except ApiVersions whose response always uses v0.
 * Errors are left in wb->err. */
void sf_proto_ResponseHeader_encode(sf_wbuf_t *wb, int16_t api_key, int16_t api_version,
                                    int32_t correlation_id);

/* Read a response header for a request sent as @api_key/@api_version (same header-version
 * rule as the encoder). @corr receives the correlation id.
 * @return SF_OK or SF_ERR_MALFORMED. */
int sf_proto_ResponseHeader_decode(sf_rbuf_t *rb, int16_t api_key, int16_t api_version,
                                   int32_t *corr);

#endif
