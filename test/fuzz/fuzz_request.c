/* Fuzz target for the request decoders.
 *
 * Input: one request frame without its 4-byte size prefix (request header, then body). The
 * header is decoded, then the body as the request of that API/version; the same body bytes are
 * also fed to the matching response decoder (the client side). Every API of the generated codec
 * is covered (sf_proto_spec_get). Whatever decodes is encoded
 * again, and the encoding must decode and re-encode to the same bytes (a codec that cannot
 * read its own output aborts here). The arena is capped like the broker's: 4x the input plus
 * 64 KiB.
 *
 * A libFuzzer target or a corpus replay (replay.h; CI replays test/fuzz/corpus). With
 * --every-api the replay also fails unless, for every request API of the codec, some input
 * decoded as that request: an API added to the codec needs a seed (make fuzz-seeds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buf.h"
#include "err.h"
#include "proto.h"
#include "replay.h"

typedef int (*decode_fn)(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena, void *m);
typedef int (*encode_fn)(sf_wbuf_t *wb, int16_t version, const void *m);

/* One side (request or response) of an API of the generated codec. */
typedef struct codec {
    int16_t api_key;
    size_t size;
    decode_fn decode;
    encode_fn encode;
} codec_t;

static void fail(const char *what, int16_t key, int16_t version, int rc) {
    fprintf(stderr, "fuzz_request: %s (api %d v%d): %s\n", what, key, version, sf_err_str(rc));
    abort();
}

/* Decode @body with @c; if it decodes, check encode -> decode -> encode is stable.
 * @return 1 if @body decoded, else 0. */
static int exercise(const codec_t *c, int16_t version, const uint8_t *body, size_t size,
                    sf_arena_t *arena) {
    void *msg = malloc(c->size), *again = malloc(c->size);
    sf_wbuf_t wb1, wb2;
    sf_rbuf_t rb;
    int rc;
    if (!msg || !again)
        fail("out of memory", c->api_key, version, SF_ERR_NOMEM);
    sf_rbuf_init(&rb, body, size);
    rc = c->decode(&rb, version, arena, msg);
    if (rc != SF_OK) {
        if (rc != SF_ERR_MALFORMED && rc != SF_ERR_NOMEM && rc != SF_ERR_UNSUPPORTED)
            fail("unexpected decode result", c->api_key, version, rc);
        free(msg);
        free(again);
        return 0;
    }
    if (rb.pos > size)
        fail("decoder read past the end", c->api_key, version, rc);
    sf_wbuf_init(&wb1);
    sf_wbuf_init(&wb2);
    if ((rc = c->encode(&wb1, version, msg)) != SF_OK)
        fail("decoded message does not encode", c->api_key, version, rc);
    sf_rbuf_init(&rb, wb1.p, wb1.len);
    rc = c->decode(&rb, version, arena, again);
    if (rc == SF_OK && rb.pos != wb1.len)
        rc = SF_ERR_MALFORMED;
    if (rc != SF_OK && rc != SF_ERR_NOMEM) /* the capped arena may run out on the second pass */
        fail("encoded message does not decode", c->api_key, version, rc);
    if (rc == SF_OK) {
        if ((rc = c->encode(&wb2, version, again)) != SF_OK)
            fail("re-decoded message does not encode", c->api_key, version, rc);
        if (wb1.len != wb2.len || (wb1.len && memcmp(wb1.p, wb2.p, wb1.len) != 0))
            fail("encoding is not stable", c->api_key, version, SF_OK);
    }
    sf_wbuf_free(&wb1);
    sf_wbuf_free(&wb2);
    free(msg);
    free(again);
    return 1;
}

/* Request API keys whose request some input decoded (the replay's --every-api check). */
static unsigned char request_decoded[INT16_MAX + 1];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sf_proto_RequestHeader_t hdr;
    const sf_proto_spec_t *spec;
    sf_arena_t arena;
    sf_rbuf_t rb;
    sf_arena_init(&arena, 4 * size + 64 * 1024);
    sf_rbuf_init(&rb, data, size);
    if (sf_proto_RequestHeader_decode(&rb, &hdr) == SF_OK &&
        (spec = sf_proto_spec_get(hdr.RequestApiKey))) {
        const uint8_t *body = data + rb.pos;
        size_t len = size - rb.pos;
        codec_t req = {spec->ApiKey, spec->RequestSize, spec->RequestDecode, spec->RequestEncode};
        codec_t resp = {spec->ApiKey, spec->ResponseSize, spec->ResponseDecode,
                        spec->ResponseEncode};
        if (exercise(&req, hdr.RequestApiVersion, body, len, &arena))
            request_decoded[spec->ApiKey] = 1;
        exercise(&resp, hdr.RequestApiVersion, body, len, &arena);
    }
    sf_arena_reset(&arena);
    return 0;
}

const char sf_fuzz_name[] = "fuzz_request";

static int every_api;

int sf_fuzz_option(const char *opt) {
    if (strcmp(opt, "--every-api") != 0)
        return -1;
    every_api = 1;
    return 0;
}

/* With --every-api: 0 if some input decoded as the request of every API of the codec, else 1
 * (each missing one named). */
int sf_fuzz_finish(void) {
    const sf_proto_spec_t *all;
    size_t n, i;
    int missing = 0;
    if (!every_api)
        return 0;
    all = sf_proto_spec_all(&n);
    for (i = 0; i < n; i++) {
        if (all[i].ApiKey >= 0 && request_decoded[all[i].ApiKey])
            continue;
        fprintf(stderr, "fuzz_request: no input decodes as a %sRequest (api %d); run make "
                        "fuzz-seeds\n", all[i].Name, all[i].ApiKey);
        missing = 1;
    }
    return missing;
}
