/* Write the generated seeds of the fuzz corpora (make fuzz-seeds).
 *
 * Usage: make_seeds FUZZDIR
 *
 * FUZZDIR/corpus (fuzz_request): for each request in test/unit/kmsg_samples.c, a frame as
 * fuzz_request reads it (request header, then the body of the sample with every field set) at
 * the API's lowest version, its first flexible version and its highest version:
 * <api>-v<N>-sample. And one malformed frame, the highest version cut in the middle of its
 * body: bad-<api>-v<N>-sample-truncated.
 * FUZZDIR/corpus-records (fuzz_records) and FUZZDIR/corpus-client (fuzz_client): see
 * record_seeds.c.
 * The "-sample" suffix keeps them apart from the hand-written seeds, which this never
 * overwrites. Exits non-zero if a sample does not encode or a cut body still decodes. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/kmsg_samples.h"
#include "proto.h"
#include "seeds.h"

static char request_dir[4096];

void seed_name_lower(const char *name, char *out, size_t size) {
    size_t i;
    for (i = 0; name[i] && i + 1 < size; i++)
        out[i] = (char)tolower((unsigned char)name[i]);
    out[i] = '\0';
}

int write_seed(const char *dir, const char *name, const uint8_t *p, size_t len) {
    char path[4096];
    FILE *f;
    int ok;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "wb"))) {
        perror(path);
        return -1;
    }
    ok = fwrite(p, 1, len, f) == len;
    if (fclose(f) != 0 || !ok) {
        perror(path);
        return -1;
    }
    return 0;
}

/* Encode header + sample body of @s at @version into @wb; *@body_at receives the body offset. */
static int frame(const kmsg_sample_t *s, int16_t version, sf_wbuf_t *wb, size_t *body_at) {
    sf_proto_RequestHeader_t hdr = {.RequestApiKey = s->api_key,
                                    .RequestApiVersion = version,
                                    .CorrelationId = 1000 + s->api_key,
                                    .ClientId = sf_slice_cstr("seed")};
    sf_arena_t arena;
    void *m = calloc(1, s->size);
    int rc;
    if (!m)
        return SF_ERR_NOMEM;
    sf_arena_init(&arena, 0);
    s->fill(&arena, m);
    if ((rc = sf_proto_RequestHeader_encode(wb, &hdr)) == SF_OK) {
        *body_at = wb->len;
        rc = s->encode(wb, version, m);
    }
    sf_arena_reset(&arena);
    free(m);
    return rc;
}

/* Write @frame (@len bytes, body at @body_at) of @s at @version cut in the middle of its body,
 * after checking that the request decoder refuses the cut body. */
static int write_truncated(const kmsg_sample_t *s, const char *api, int16_t version,
                           const uint8_t *frame, size_t len, size_t body_at) {
    size_t cut = body_at + (len - body_at) / 2;
    char name[128];
    sf_arena_t arena;
    sf_rbuf_t rb;
    void *m = calloc(1, s->size);
    int decoded;
    if (!m)
        return -1;
    sf_arena_init(&arena, 0);
    sf_rbuf_init(&rb, frame + body_at, cut - body_at);
    decoded = s->decode(&rb, version, &arena, m) == SF_OK;
    sf_arena_reset(&arena);
    free(m);
    if (decoded) {
        fprintf(stderr, "make_seeds: %s v%d still decodes cut to %zu of %zu bytes\n", s->name,
                version, cut - body_at, len - body_at);
        return -1;
    }
    snprintf(name, sizeof name, "bad-%s-v%d-sample-truncated", api, version);
    return write_seed(request_dir, name, frame, cut);
}

/* The seeds of request @s; returns the number of seeds written or -1. */
static int seeds(const kmsg_sample_t *s) {
    const sf_proto_spec_t *spec = sf_proto_spec_get(s->api_key);
    int16_t versions[3], flex = spec ? spec->FlexibleMin : -1;
    char api[64], name[128];
    int i, nv = 0, rc = 0;
    versions[nv++] = s->min_version;
    if (flex > s->min_version && flex < s->max_version)
        versions[nv++] = flex;
    if (s->max_version > s->min_version)
        versions[nv++] = s->max_version;
    seed_name_lower(spec ? spec->Name : s->name, api, sizeof api);
    for (i = 0; i < nv && rc == 0; i++) {
        sf_wbuf_t wb;
        size_t body_at = 0;
        sf_wbuf_init(&wb);
        if ((rc = frame(s, versions[i], &wb, &body_at)) != SF_OK) {
            fprintf(stderr, "make_seeds: %s v%d does not encode: %s\n", s->name, versions[i],
                    sf_err_str(rc));
        } else {
            snprintf(name, sizeof name, "%s-v%d-sample", api, versions[i]);
            rc = write_seed(request_dir, name, wb.p, wb.len);
            if (rc == 0 && i == nv - 1) /* the highest version */
                rc = write_truncated(s, api, versions[i], wb.p, wb.len, body_at);
        }
        sf_wbuf_free(&wb);
    }
    return rc == 0 ? nv + 1 : -1;
}

int main(int argc, char **argv) {
    char sub[4096];
    size_t i;
    int n, total = 0, failed = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds FUZZDIR\n");
        return 2;
    }
    snprintf(request_dir, sizeof(request_dir), "%s/corpus", argv[1]);
    for (i = 0; i < kmsg_nsamples; i++) {
        if (!kmsg_samples[i].is_request || kmsg_samples[i].api_key < 0)
            continue;
        if ((n = seeds(&kmsg_samples[i])) < 0)
            failed = 1;
        else
            total += n;
    }
    snprintf(sub, sizeof(sub), "%s/corpus-records", argv[1]);
    if ((n = record_seeds(sub)) < 0)
        failed = 1;
    else
        total += n;
    snprintf(sub, sizeof(sub), "%s/corpus-client", argv[1]);
    if ((n = client_seeds(sub)) < 0)
        failed = 1;
    else
        total += n;
    printf("%d seeds written to %s\n", total, argv[1]);
    return failed;
}
