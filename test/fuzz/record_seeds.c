/* The generated seeds of the record and client corpora (see make_seeds.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/kmsg_samples.h"
#include "compress.h"
#include "msgset.h"
#include "proto.h"
#include "recbatch.h"
#include "seeds.h"

#define TS 1700000000000LL

/* Three records: keyed, null key with a header, keyed with a null value. */
static void three_records(sf_recbatch_record_t recs[3], sf_recbatch_rechdr_t *h) {
    memset(recs, 0, 3 * sizeof(*recs));
    h->key = sf_slice_cstr("trace");
    h->value = sf_slice_cstr("abc");
    recs[0].timestamp = TS;
    recs[0].key = sf_slice_cstr("k0");
    recs[0].value = sf_slice_cstr("the first value");
    recs[1].timestamp = TS + 7;
    recs[1].key.len = -1;
    recs[1].value = sf_slice_cstr("v1");
    recs[1].header_count = 1;
    recs[1].headers = h;
    recs[2].timestamp = TS - 3;
    recs[2].key = sf_slice_cstr("k2");
    recs[2].value.len = -1;
}

/* One batch of the three records with @codec, @attrs extra attribute bits and @count claimed
 * records (0: the real count), at @base_offset. */
static void batch(sf_wbuf_t *wb, int codec, int16_t attrs, int32_t count, int64_t base_offset) {
    sf_recbatch_record_t recs[3];
    sf_recbatch_rechdr_t h;
    sf_recbatch_hdr_t tmpl;
    sf_wbuf_t sec, packed;
    three_records(recs, &h);
    sf_wbuf_init(&sec);
    sf_wbuf_init(&packed);
    sf_recbatch_encode_records(&sec, TS, recs, 3);
    memset(&tmpl, 0, sizeof(tmpl));
    tmpl.BaseOffset = base_offset;
    tmpl.PartitionLeaderEpoch = -1;
    tmpl.Magic = 2;
    tmpl.Attributes = (int16_t)(codec | attrs);
    tmpl.LastOffsetDelta = (count ? count : 3) - 1;
    tmpl.BaseTimestamp = TS;
    tmpl.MaxTimestamp = TS + 7;
    tmpl.ProducerId = tmpl.ProducerEpoch = tmpl.BaseSequence = -1;
    tmpl.RecordCount = count ? count : 3;
    if (codec >= SF_COMPRESS_GZIP && codec <= SF_COMPRESS_ZSTD &&
        sf_compress((sf_compress_codec_t)codec, -1, sec.p, sec.len, &packed) == SF_OK)
        sf_recbatch_build_raw(wb, &tmpl, packed.p, packed.len);
    else
        sf_recbatch_build_raw(wb, &tmpl, sec.p, sec.len);
    sf_wbuf_free(&sec);
    sf_wbuf_free(&packed);
}

/* Write flags byte @flags and @len bytes at @p as seed @name. */
static int record_seed(const char *dir, const char *name, uint8_t flags, const uint8_t *p,
                       size_t len) {
    sf_wbuf_t wb;
    int rc;
    sf_wbuf_init(&wb);
    sf_wbuf_raw(&wb, &flags, 1);
    sf_wbuf_raw(&wb, p, len);
    rc = wb.err ? -1 : write_seed(dir, name, wb.p, wb.len);
    sf_wbuf_free(&wb);
    return rc;
}

/* The three records in every codec under every validation setting, legacy message sets, and
 * the hostile batches the validator must refuse. Returns the seeds written or -1. */
int record_seeds(const char *dir) {
    static const uint8_t flags[] = {0x00, 0x04, 0x08, 0x10, 0x30, 0x60, 0x80, 0x83};
    static const char *const codecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    static const char garbage[] = "this is not a gzip stream at all";
    char name[128];
    sf_wbuf_t wb, legacy;
    int codec, n = 0, rc = 0;
    size_t f;
    int8_t magic;

    sf_wbuf_init(&wb);
    sf_wbuf_init(&legacy);
    for (codec = 0; codec <= SF_COMPRESS_ZSTD && rc == 0; codec++) {
        sf_wbuf_reset(&wb);
        batch(&wb, codec, 0, 0, 0);
        for (f = 0; f < sizeof(flags) && rc == 0; f++, n++) {
            snprintf(name, sizeof(name), "batch-%s-%02x-sample", codecs[codec], flags[f]);
            rc = record_seed(dir, name, flags[f], wb.p, wb.len);
        }
        for (magic = 0; magic <= 1 && rc == 0 && codec < SF_COMPRESS_ZSTD; magic++, n++) {
            sf_wbuf_reset(&legacy);
            sf_msgset_from_batches(wb.p, wb.len, magic, 1 << 20, 1 << 20, &legacy, NULL);
            snprintf(name, sizeof(name), "msgset-v%d-%s-sample", magic, codecs[codec]);
            rc = record_seed(dir, name, 0x01, legacy.p, legacy.len);
        }
    }
    /* Two batches, then the refused ones. */
    sf_wbuf_reset(&wb);
    batch(&wb, SF_COMPRESS_NONE, 0, 0, 0);
    batch(&wb, SF_COMPRESS_LZ4, 0, 0, 3);
    rc = rc ? rc : record_seed(dir, "batches-two-sample", 0, wb.p, wb.len);
    sf_wbuf_reset(&wb);
    batch(&wb, SF_COMPRESS_NONE, SF_RECBATCH_ATTR_CONTROL, 0, 0);
    rc = rc ? rc : record_seed(dir, "bad-control-sample", 0, wb.p, wb.len);
    sf_wbuf_reset(&wb);
    batch(&wb, SF_COMPRESS_NONE, SF_RECBATCH_ATTR_TRANSACTIONAL, 0, 0);
    rc = rc ? rc : record_seed(dir, "bad-transactional-sample", 0, wb.p, wb.len);
    sf_wbuf_reset(&wb);
    batch(&wb, 7, 0, 0, 0);
    rc = rc ? rc : record_seed(dir, "bad-codec7-sample", 0, wb.p, wb.len);
    sf_wbuf_reset(&wb);
    batch(&wb, SF_COMPRESS_NONE, 0, 1000000, 0);
    rc = rc ? rc : record_seed(dir, "bad-count-sample", 0, wb.p, wb.len);
    sf_wbuf_reset(&wb);
    batch(&wb, SF_COMPRESS_ZSTD, 0, INT32_MAX, 0);
    rc = rc ? rc : record_seed(dir, "bad-zstd-count-sample", 0, wb.p, wb.len);
    sf_wbuf_reset(&wb);
    batch(&wb, SF_COMPRESS_NONE, 0, 0, 0);
    memcpy(wb.p + SF_RECBATCH_HEADER_SIZE, garbage, sizeof(garbage) - 1);
    wb.p[SF_RECBATCH_OFF_ATTRIBUTES + 1] |= SF_COMPRESS_GZIP;
    rc = rc ? rc : record_seed(dir, "bad-gzip-garbage-sample", 0, wb.p, wb.len);
    sf_wbuf_free(&wb);
    sf_wbuf_free(&legacy);
    return rc ? -1 : n + 7;
}

/* Encode response sample @s at @version as fuzz_client reads it into @wb. For Fetch, the
 * first partition carries @records. */
static int response_frame(const kmsg_sample_t *s, int16_t version, const sf_wbuf_t *records,
                          sf_wbuf_t *wb) {
    sf_arena_t arena;
    void *m = calloc(1, s->size);
    uint8_t kv[4];
    int rc;
    if (!m)
        return SF_ERR_NOMEM;
    sf_arena_init(&arena, 0);
    s->fill(&arena, m);
    if (s->api_key == SF_PROTO_API_Fetch && records) {
        sf_proto_FetchResponse_t *fr = m;
        fr->Responses[0].Partitions[0].Records.p = records->p;
        fr->Responses[0].Partitions[0].Records.len = (int32_t)records->len;
        fr->Responses[0].Partitions[0].RecordsRef = NULL;
        fr->Responses[0].Partitions[0].LogStartOffset = 0;
    }
    sf_store_be16(kv, (uint16_t)s->api_key);
    sf_store_be16(kv + 2, (uint16_t)version);
    sf_wbuf_raw(wb, kv, 4);
    sf_proto_ResponseHeader_encode(wb, s->api_key, version, 7);
    rc = wb->err ? wb->err : s->encode(wb, version, m);
    sf_arena_reset(&arena);
    free(m);
    return rc;
}

/* Every response sample at its lowest, first flexible and highest version; Fetch responses
 * also with real batches (magic 0/1 at the versions that read them). Returns the seeds
 * written or -1. */
int client_seeds(const char *dir) {
    sf_wbuf_t batches, legacy;
    size_t i;
    int n = 0, rc = 0;
    sf_wbuf_init(&batches);
    sf_wbuf_init(&legacy);
    batch(&batches, SF_COMPRESS_NONE, 0, 0, 0);
    batch(&batches, SF_COMPRESS_LZ4, 0, 0, 3);
    batch(&batches, SF_COMPRESS_NONE, 0, 0, 6);
    batches.len -= 5; /* the last one cut short, as a fetch response may end */
    sf_msgset_from_batches(batches.p, batches.len, 1, 1 << 20, 1 << 20, &legacy, NULL);
    for (i = 0; i < kmsg_nsamples && rc == 0; i++) {
        const kmsg_sample_t *s = &kmsg_samples[i];
        const sf_proto_spec_t *spec = sf_proto_spec_get(s->api_key);
        int16_t versions[3], flex = spec ? spec->FlexibleMin : -1;
        char api[64], name[128];
        int nv = 0, v;
        if (s->is_request || !spec)
            continue;
        versions[nv++] = s->min_version;
        if (flex > s->min_version && flex < s->max_version)
            versions[nv++] = flex;
        if (s->max_version > s->min_version)
            versions[nv++] = s->max_version;
        seed_name_lower(spec->Name, api, sizeof(api));
        for (v = 0; v < nv && rc == 0; v++, n++) {
            const sf_wbuf_t *recs = versions[v] >= 4 ? &batches : &legacy;
            sf_wbuf_t wb;
            sf_wbuf_init(&wb);
            if ((rc = response_frame(s, versions[v], recs, &wb)) != SF_OK) {
                fprintf(stderr, "make_seeds: %s v%d does not encode: %s\n", s->name,
                        versions[v], sf_err_str(rc));
            } else {
                snprintf(name, sizeof(name), "%s-v%d-response-sample", api, versions[v]);
                rc = write_seed(dir, name, wb.p, wb.len);
            }
            sf_wbuf_free(&wb);
        }
    }
    sf_wbuf_free(&batches);
    sf_wbuf_free(&legacy);
    return rc ? -1 : n;
}
