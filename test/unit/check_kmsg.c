/* Unit tests for the generated codec (common/kmsg): every message of the spec in every version.
 *
 * core: a sample with every field set (test/unit/kmsg_samples.c) encodes, decodes to the end
 *       of its bytes, and encodes again to the same bytes; fields absent from a version come
 *       back as their defaults; tagged fields round-trip and unknown tags are skipped.
 * limits: every strict prefix of every encoding fails to decode, random byte changes never
 *       crash or read out of bounds (run under AddressSanitizer in CI), versions outside the
 *       spec are refused, lying counts allocate nothing, and an arena limit is honoured. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buf.h"
#include "err.h"
#include "kmsg.h"
#include "kmsg_samples.h"

/* Encode sample @s at @v into @wb (fresh); returns the encoder's result. */
static int encode_sample(const kmsg_sample_t *s, int16_t v, sf_wbuf_t *wb) {
    sf_arena_t a;
    void *m = calloc(1, s->size);
    int rc;
    ck_assert_ptr_nonnull(m);
    sf_arena_init(&a, 0);
    s->fill(&a, m);
    sf_wbuf_init(wb);
    rc = s->encode(wb, v, m);
    sf_arena_reset(&a);
    free(m);
    return rc;
}

START_TEST(test_round_trip_every_version) {
    size_t i, n = 0;
    for (i = 0; i < kmsg_nsamples; i++) {
        const kmsg_sample_t *s = &kmsg_samples[i];
        int16_t v;
        for (v = s->min_version; v <= s->max_version; v++) {
            sf_wbuf_t wb, wb2;
            sf_arena_t a;
            sf_rbuf_t rb;
            void *m = calloc(1, s->size);
            int rc = encode_sample(s, v, &wb);
            ck_assert_msg(rc == SF_OK, "%s v%d: encode: %s", s->name, v, sf_err_str(rc));
            ck_assert_msg(wb.nsplices == 0, "%s v%d: sample spliced", s->name, v);
            sf_arena_init(&a, 0);
            sf_rbuf_init(&rb, wb.p, wb.len);
            rc = s->decode(&rb, v, &a, m);
            ck_assert_msg(rc == SF_OK, "%s v%d: decode: %s", s->name, v, sf_err_str(rc));
            ck_assert_msg(rb.pos == rb.len, "%s v%d: decode stopped at %zu of %zu", s->name, v,
                          rb.pos, rb.len);
            sf_wbuf_init(&wb2);
            ck_assert_int_eq(s->encode(&wb2, v, m), SF_OK);
            ck_assert_msg(wb2.len == wb.len && (!wb.len || memcmp(wb.p, wb2.p, wb.len) == 0),
                          "%s v%d: re-encoding differs", s->name, v);
            sf_wbuf_free(&wb2);
            sf_wbuf_free(&wb);
            sf_arena_reset(&a);
            free(m);
            n++;
        }
    }
    ck_assert_uint_gt(n, 500);
}
END_TEST

/* Fields absent from a version decode as their JSON defaults. */
START_TEST(test_defaults_of_absent_fields) {
    sf_proto_FetchRequest_t req;
    sf_proto_FetchRequest_FetchTopic_t topic;
    sf_proto_FetchRequest_FetchPartition_t part;
    sf_proto_FetchRequest_t got;
    sf_wbuf_t wb;
    sf_rbuf_t rb;
    sf_arena_t a;

    sf_proto_FetchRequest_init(&req);
    sf_proto_FetchRequest_FetchTopic_init(&topic);
    sf_proto_FetchRequest_FetchPartition_init(&part);
    ck_assert_int_eq(req.ReplicaId, -1);
    ck_assert_int_eq(req.MaxBytes, 0x7fffffff);
    ck_assert_int_eq(req.SessionEpoch, -1);
    ck_assert_int_eq(part.CurrentLeaderEpoch, -1);
    ck_assert_int_eq(part.LogStartOffset, -1);
    ck_assert_int_eq(part.LastFetchedEpoch, -1);
    topic.Topic = sf_slice_cstr("t");
    topic.PartitionsCount = 1;
    topic.Partitions = &part;
    part.Partition = 3;
    part.FetchOffset = 42;
    req.TopicsCount = 1;
    req.Topics = &topic;
    req.MaxBytes = 1000;   /* v3+ */
    req.SessionEpoch = 7;  /* v7+ */
    part.LogStartOffset = 9; /* v5+ */
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_FetchRequest_encode(&wb, 2, &req), SF_OK);
    sf_arena_init(&a, 0);
    sf_rbuf_init(&rb, wb.p, wb.len);
    ck_assert_int_eq(sf_proto_FetchRequest_decode(&rb, 2, &a, &got), SF_OK);
    ck_assert_int_eq(got.MaxBytes, 0x7fffffff);
    ck_assert_int_eq(got.SessionEpoch, -1);
    ck_assert_int_eq(got.IsolationLevel, 0);
    ck_assert_int_eq(got.Topics[0].Partitions[0].FetchOffset, 42);
    ck_assert_int_eq(got.Topics[0].Partitions[0].LogStartOffset, -1);
    ck_assert_int_eq(got.RackId.len, 0);
    sf_arena_reset(&a);
    sf_wbuf_free(&wb);
}
END_TEST

/* Tagged fields: written only when not at their default, read back, unknown ones skipped. */
START_TEST(test_tagged_fields) {
    sf_proto_FetchResponse_t resp, got;
    sf_proto_FetchResponse_FetchableTopicResponse_t topic;
    sf_proto_FetchResponse_PartitionData_t part;
    sf_wbuf_t wb, wb2;
    sf_rbuf_t rb;
    sf_arena_t a;
    size_t plain;

    sf_proto_FetchResponse_init(&resp);
    sf_proto_FetchResponse_FetchableTopicResponse_init(&topic);
    sf_proto_FetchResponse_PartitionData_init(&part);
    resp.ResponsesCount = 1;
    resp.Responses = &topic;
    topic.PartitionsCount = 1;
    topic.Partitions = &part;
    part.Records = sf_slice_cstr("");
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_FetchResponse_encode(&wb, 12, &resp), SF_OK);
    plain = wb.len;
    sf_wbuf_reset(&wb);
    part.CurrentLeader.LeaderId = 2;
    part.CurrentLeader.LeaderEpoch = 5;
    ck_assert_int_eq(sf_proto_FetchResponse_encode(&wb, 12, &resp), SF_OK);
    /* tag 1, size 9: two int32 and the struct's own empty tagged section */
    ck_assert_uint_eq(wb.len, plain + 11);
    sf_arena_init(&a, 0);
    sf_rbuf_init(&rb, wb.p, wb.len);
    ck_assert_int_eq(sf_proto_FetchResponse_decode(&rb, 12, &a, &got), SF_OK);
    ck_assert_int_eq(got.Responses[0].Partitions[0].CurrentLeader.LeaderId, 2);
    ck_assert_int_eq(got.Responses[0].Partitions[0].CurrentLeader.LeaderEpoch, 5);
    ck_assert_int_eq(got.Responses[0].Partitions[0].DivergingEpoch.Epoch, -1);
    /* Below v12 the tagged field does not exist. */
    sf_wbuf_init(&wb2);
    ck_assert_int_eq(sf_proto_FetchResponse_encode(&wb2, 11, &resp), SF_OK);
    sf_rbuf_init(&rb, wb2.p, wb2.len);
    ck_assert_int_eq(sf_proto_FetchResponse_decode(&rb, 11, &a, &got), SF_OK);
    ck_assert_int_eq(got.Responses[0].Partitions[0].CurrentLeader.LeaderId, -1);
    sf_wbuf_free(&wb2);
    sf_arena_reset(&a);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_unknown_tags_skipped) {
    /* ApiVersionsRequest v3: ClientSoftwareName "a", ClientSoftwareVersion "b", then a tagged
     * section with one unknown tag (9) of three bytes. */
    static const uint8_t msg[] = {0x02, 'a', 0x02, 'b', 0x01, 0x09, 0x03, 1, 2, 3};
    sf_proto_ApiVersionsRequest_t got;
    sf_rbuf_t rb;
    sf_arena_t a;
    sf_arena_init(&a, 0);
    sf_rbuf_init(&rb, msg, sizeof(msg));
    ck_assert_int_eq(sf_proto_ApiVersionsRequest_decode(&rb, 3, &a, &got), SF_OK);
    ck_assert_uint_eq(rb.pos, sizeof(msg));
    ck_assert(sf_slice_eq(got.ClientSoftwareName, "a"));
    ck_assert(sf_slice_eq(got.ClientSoftwareVersion, "b"));
    /* A tag whose size runs past the end fails. */
    sf_rbuf_init(&rb, msg, sizeof(msg) - 1);
    ck_assert_int_eq(sf_proto_ApiVersionsRequest_decode(&rb, 3, &a, &got), SF_ERR_MALFORMED);
    sf_arena_reset(&a);
}
END_TEST

START_TEST(test_nullable_rules) {
    sf_proto_MetadataRequest_t req;
    sf_wbuf_t wb;
    sf_proto_MetadataRequest_init(&req);
    req.TopicsCount = -1; /* all topics: a null array, nullable from v1 */
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_MetadataRequest_encode(&wb, 0, &req), SF_ERR_INVALID);
    sf_wbuf_reset(&wb);
    ck_assert_int_eq(sf_proto_MetadataRequest_encode(&wb, 1, &req), SF_OK);
    ck_assert_uint_eq(wb.len, 4);
    ck_assert_int_eq((int32_t)sf_load_be32(wb.p), -1);
    sf_wbuf_reset(&wb);
    ck_assert_int_eq(sf_proto_MetadataRequest_encode(&wb, 9, &req), SF_OK);
    ck_assert_uint_eq(wb.p[0], 0); /* compact null */
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_spec_table) {
    size_t n, i;
    const sf_proto_spec_t *all = sf_proto_spec_all(&n);
    ck_assert_uint_gt(n, 60);
    for (i = 1; i < n; i++)
        ck_assert_int_lt(all[i - 1].ApiKey, all[i].ApiKey);
    ck_assert_str_eq(sf_proto_spec_get(SF_PROTO_API_Produce)->Name, "Produce");
    ck_assert_int_eq(sf_proto_spec_get(SF_PROTO_API_Fetch)->FlexibleMin, 12);
    ck_assert_int_eq(sf_proto_spec_get(SF_PROTO_API_LeaderAndIsr)->MaxVersion, 7);
    ck_assert_ptr_null(sf_proto_spec_get(999));
    ck_assert_ptr_null(sf_proto_spec_get(-1));
}
END_TEST

START_TEST(test_every_prefix_fails) {
    size_t i;
    for (i = 0; i < kmsg_nsamples; i++) {
        const kmsg_sample_t *s = &kmsg_samples[i];
        int16_t v;
        for (v = s->min_version; v <= s->max_version; v++) {
            sf_wbuf_t wb;
            size_t cut;
            void *m = calloc(1, s->size);
            ck_assert_int_eq(encode_sample(s, v, &wb), SF_OK);
            for (cut = 0; cut < wb.len; cut++) {
                sf_arena_t a;
                sf_rbuf_t rb;
                uint8_t *copy = malloc(cut + 1); /* exact size, so ASan sees overreads */
                memcpy(copy, wb.p, cut);
                sf_arena_init(&a, 0);
                sf_rbuf_init(&rb, copy, cut);
                ck_assert_msg(s->decode(&rb, v, &a, m) == SF_ERR_MALFORMED,
                              "%s v%d: %zu of %zu bytes decoded", s->name, v, cut, wb.len);
                sf_arena_reset(&a);
                free(copy);
            }
            sf_wbuf_free(&wb);
            free(m);
        }
    }
}
END_TEST

START_TEST(test_random_changes) {
    size_t i;
    unsigned seed = 12345;
    for (i = 0; i < kmsg_nsamples; i++) {
        const kmsg_sample_t *s = &kmsg_samples[i];
        int16_t v;
        for (v = s->min_version; v <= s->max_version; v++) {
            sf_wbuf_t wb;
            int round;
            void *m = calloc(1, s->size);
            ck_assert_int_eq(encode_sample(s, v, &wb), SF_OK);
            for (round = 0; round < 40 && wb.len; round++) {
                uint8_t *copy = malloc(wb.len);
                sf_arena_t a;
                sf_rbuf_t rb;
                int k, rc;
                memcpy(copy, wb.p, wb.len);
                for (k = 0; k < 1 + round % 4; k++) {
                    seed = seed * 1103515245u + 12345u;
                    copy[(seed >> 8) % wb.len] = (uint8_t)(seed >> 20);
                }
                sf_arena_init(&a, 1 << 20);
                sf_rbuf_init(&rb, copy, wb.len);
                rc = s->decode(&rb, v, &a, m);
                ck_assert(rc == SF_OK || rc == SF_ERR_MALFORMED || rc == SF_ERR_NOMEM);
                if (rc == SF_OK) {
                    /* Whatever decodes encodes again. */
                    sf_wbuf_t out;
                    sf_wbuf_init(&out);
                    ck_assert_int_eq(s->encode(&out, v, m), SF_OK);
                    sf_wbuf_free(&out);
                }
                sf_arena_reset(&a);
                free(copy);
            }
            sf_wbuf_free(&wb);
            free(m);
        }
    }
}
END_TEST

START_TEST(test_versions_outside_spec) {
    sf_proto_ProduceRequest_t req;
    sf_wbuf_t wb;
    sf_rbuf_t rb;
    sf_arena_t a;
    static const uint8_t b[16];
    sf_proto_ProduceRequest_init(&req);
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_ProduceRequest_encode(&wb, 12, &req), SF_ERR_UNSUPPORTED);
    ck_assert_int_eq(sf_proto_ProduceRequest_encode(&wb, -1, &req), SF_ERR_UNSUPPORTED);
    sf_arena_init(&a, 0);
    sf_rbuf_init(&rb, b, sizeof(b));
    ck_assert_int_eq(sf_proto_ProduceRequest_decode(&rb, 12, &a, &req), SF_ERR_UNSUPPORTED);
    sf_arena_reset(&a);
    sf_wbuf_free(&wb);
}
END_TEST

/* A count larger than the bytes left could hold is refused before any allocation. */
START_TEST(test_lying_counts) {
    /* Metadata v1: topics count 2^30, then nothing. */
    static const uint8_t classic[] = {0x40, 0, 0, 0, 0, 0};
    /* Metadata v9: compact count 2^28 - 1, then a few bytes. */
    static const uint8_t compact[] = {0x80, 0x80, 0x80, 0x80, 0x01, 1, 2, 3};
    sf_proto_MetadataRequest_t got;
    sf_rbuf_t rb;
    sf_arena_t a;
    sf_arena_init(&a, 0);
    sf_rbuf_init(&rb, classic, sizeof(classic));
    ck_assert_int_eq(sf_proto_MetadataRequest_decode(&rb, 1, &a, &got), SF_ERR_MALFORMED);
    sf_rbuf_init(&rb, compact, sizeof(compact));
    ck_assert_int_eq(sf_proto_MetadataRequest_decode(&rb, 9, &a, &got), SF_ERR_MALFORMED);
    ck_assert_uint_eq(a.total, 0);
    sf_arena_reset(&a);
}
END_TEST

START_TEST(test_arena_limit) {
    const kmsg_sample_t *s = NULL;
    sf_proto_MetadataResponse_t got;
    sf_wbuf_t wb;
    sf_rbuf_t rb;
    sf_arena_t a;
    size_t i;
    for (i = 0; i < kmsg_nsamples; i++)
        if (!strcmp(kmsg_samples[i].name, "MetadataResponse"))
            s = &kmsg_samples[i];
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(encode_sample(s, 12, &wb), SF_OK);
    sf_arena_init(&a, 64);
    sf_rbuf_init(&rb, wb.p, wb.len);
    ck_assert_int_eq(sf_proto_MetadataResponse_decode(&rb, 12, &a, &got), SF_ERR_NOMEM);
    ck_assert_int_ne(rb.err, SF_OK);
    sf_arena_reset(&a);
    sf_wbuf_free(&wb);
}
END_TEST

/* Classic strings cap at 32767 bytes; compact ones are refused above that as Kafka does. */
START_TEST(test_string_lengths) {
    sf_proto_ApiVersionsRequest_t req;
    sf_wbuf_t wb;
    char *big = malloc(40000);
    memset(big, 'x', 39999);
    big[39999] = '\0';
    sf_proto_ApiVersionsRequest_init(&req);
    req.ClientSoftwareName = sf_slice_cstr(big);
    req.ClientSoftwareVersion = sf_slice_cstr("1");
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_ApiVersionsRequest_encode(&wb, 3, &req), SF_OK);
    {
        sf_proto_ApiVersionsRequest_t got;
        sf_rbuf_t rb;
        sf_arena_t a;
        sf_arena_init(&a, 0);
        sf_rbuf_init(&rb, wb.p, wb.len);
        ck_assert_int_eq(sf_proto_ApiVersionsRequest_decode(&rb, 3, &a, &got),
                         SF_ERR_MALFORMED);
        sf_arena_reset(&a);
    }
    sf_wbuf_free(&wb);
    free(big);
}
END_TEST

static Suite *kmsg_suite(void) {
    Suite *s = suite_create("kmsg");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    tcase_add_test(core, test_round_trip_every_version);
    tcase_add_test(core, test_defaults_of_absent_fields);
    tcase_add_test(core, test_tagged_fields);
    tcase_add_test(core, test_unknown_tags_skipped);
    tcase_add_test(core, test_nullable_rules);
    tcase_add_test(core, test_spec_table);
    tcase_set_timeout(limits, 120);
    tcase_add_test(limits, test_every_prefix_fails);
    tcase_add_test(limits, test_random_changes);
    tcase_add_test(limits, test_versions_outside_spec);
    tcase_add_test(limits, test_lying_counts);
    tcase_add_test(limits, test_arena_limit);
    tcase_add_test(limits, test_string_lengths);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(kmsg_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
