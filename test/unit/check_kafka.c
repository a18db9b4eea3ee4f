/* Unit tests for the Kafka request handlers of records (broker/kafka/) over the fake broker of
 * kafka_fixture.c: ApiVersions and the dispatcher, Produce, Fetch, ListOffsets.
 *
 * core: every version the dispatcher serves, legacy message formats both ways, topic configs
 *       that change what is stored (LogAppendTime, compression.type), long polls,
 *       read_committed, transaction verification of produces.
 * limits: unknown APIs and versions, bodies that do not decode, every refusal of a produce
 *       (nothing stored), unknown topics, ids, partitions and offsets, wait expiry, size
 *       limits of a fetch. */
#include "kafka_fixture.h"

/* ---- ApiVersions and dispatch ---- */

START_TEST(test_api_versions) {
    size_t n, i;
    const sf_kapi_t *apis = sf_kapi_all(&n);
    int16_t v;
    ck_assert_uint_gt(n, 10);
    for (v = 0; v <= 4; v++) {
        sf_proto_ApiVersionsRequest_t req;
        sf_proto_ApiVersionsResponse_t *resp;
        sf_proto_ApiVersionsRequest_init(&req);
        req.ClientSoftwareName = sf_slice_cstr("check-kafka");
        req.ClientSoftwareVersion = sf_slice_cstr("1.0");
        resp = body_of(send_msg(SF_PROTO_API_ApiVersions, v, &req));
        ck_assert_int_eq(resp->ErrorCode, 0);
        ck_assert_int_eq(resp->ApiKeysCount, (int32_t)n);
        for (i = 0; i < n; i++) {
            ck_assert_int_eq(resp->ApiKeys[i].ApiKey, apis[i].key);
            ck_assert_int_eq(resp->ApiKeys[i].MinVersion, apis[i].min);
            ck_assert_int_eq(resp->ApiKeys[i].MaxVersion, apis[i].max);
        }
        /* The ranges Kafka 3.9 accepts for the APIs tested below (DESIGN.md section 2). */
        ck_assert_int_eq(resp->ApiKeys[0].ApiKey, SF_PROTO_API_Produce);
        ck_assert_int_eq(resp->ApiKeys[0].MaxVersion, 11);
        ck_assert_int_eq(resp->ApiKeys[1].ApiKey, SF_PROTO_API_Fetch);
        ck_assert_int_eq(resp->ApiKeys[1].MaxVersion, 17);
    }
}
END_TEST

START_TEST(test_api_versions_unknown_version) {
    /* KIP-511: a version above the max gets the v0 error body with ApiVersions' own range. */
    reply_t *r = send_raw(SF_PROTO_API_ApiVersions, 99, "", 0);
    sf_proto_ApiVersionsResponse_t *resp = body_of(r);
    ck_assert_int_eq(resp->ErrorCode, SF_KERR_UNSUPPORTED_VERSION);
    ck_assert_int_eq(resp->ApiKeysCount, 1);
    ck_assert_int_eq(resp->ApiKeys[0].ApiKey, SF_PROTO_API_ApiVersions);
    ck_assert_int_eq(resp->ApiKeys[0].MinVersion, 0);
    ck_assert_int_eq(resp->ApiKeys[0].MaxVersion, 4);
}
END_TEST

START_TEST(test_api_versions_bad_client_software) {
    /* v3 with a ClientSoftwareName claiming 100 bytes that are not there: INVALID_REQUEST. */
    static const uint8_t body[] = {101, 'x'};
    sf_proto_ApiVersionsResponse_t *resp =
        body_of(send_raw(SF_PROTO_API_ApiVersions, 3, body, sizeof(body)));
    ck_assert_int_eq(resp->ErrorCode, SF_KERR_INVALID_REQUEST);
}
END_TEST

START_TEST(test_dispatch_closes) {
    sf_proto_MetadataRequest_t mreq;
    sf_proto_MetadataRequest_MetadataRequestTopic_t mt;
    sf_wbuf_t wb, batch;
    sf_proto_ProduceRequest_t preq;
    sf_proto_ProduceRequest_TopicProduceData_t td;
    sf_proto_ProduceRequest_PartitionProduceData_t pd;
    size_t cut;

    /* An API key nobody knows, one the codec knows but the broker does not serve, a version
     * above the max and a negative one. */
    ck_assert_int_eq(send_raw(1000, 0, "", 0)->state, R_CLOSED);
    ck_assert_int_eq(send_raw(SF_PROTO_API_OffsetCommit, 2, "", 0)->state, R_CLOSED);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Produce, 12, "", 0)->state, R_CLOSED);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Metadata, 13, "", 0)->state, R_CLOSED);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Fetch, -1, "", 0)->state, R_CLOSED);

    /* Bodies that do not decode: empty, and every strict prefix of a good Metadata v1. */
    ck_assert_int_eq(send_raw(SF_PROTO_API_Produce, 3, "", 0)->state, R_CLOSED);
    sf_proto_MetadataRequest_init(&mreq);
    sf_proto_MetadataRequest_MetadataRequestTopic_init(&mt);
    mt.Name = sf_slice_cstr("plain");
    mreq.TopicsCount = 1;
    mreq.Topics = &mt;
    encode_msg(SF_PROTO_API_Metadata, 1, &mreq, &wb);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Metadata, 1, wb.p, wb.len)->state, R_BODY);
    for (cut = 0; cut < wb.len; cut++)
        ck_assert_msg(send_raw(SF_PROTO_API_Metadata, 1, wb.p, cut)->state == R_CLOSED,
                      "Metadata v1 cut to %zu bytes answered", cut);
    sf_wbuf_free(&wb);

    /* A produce cut short stores nothing. */
    sf_wbuf_init(&batch);
    put_simple(&batch, 0, 2, "cut");
    sf_proto_ProduceRequest_init(&preq);
    sf_proto_ProduceRequest_TopicProduceData_init(&td);
    sf_proto_ProduceRequest_PartitionProduceData_init(&pd);
    preq.Acks = 1;
    preq.TopicDataCount = 1;
    preq.TopicData = &td;
    td.Name = sf_slice_cstr("plain");
    td.PartitionDataCount = 1;
    td.PartitionData = &pd;
    pd.Records.p = batch.p;
    pd.Records.len = (int32_t)batch.len;
    encode_msg(SF_PROTO_API_Produce, 9, &preq, &wb);
    ck_assert_int_eq(send_raw(SF_PROTO_API_Produce, 9, wb.p, wb.len - 2)->state, R_CLOSED);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 0)), 0);
    sf_wbuf_free(&wb);
    sf_wbuf_free(&batch);
}
END_TEST

/* ---- Produce ---- */

START_TEST(test_produce_every_version) {
    sf_log_t *log = log_of("plain", 0);
    int64_t next = 0;
    int16_t v;
    got_t g;
    for (v = 3; v <= 11; v++) {
        sf_proto_ProduceResponse_PartitionProduceResponse_t *rp;
        sf_wbuf_t wb;
        char tag[8];
        snprintf(tag, sizeof(tag), "p%d", v);
        sf_wbuf_init(&wb);
        put_simple(&wb, 0, 3, tag);
        rp = produced(produce(v, "plain", 0, wb.p, wb.len, v % 2 ? -1 : 1));
        ck_assert_msg(rp->ErrorCode == 0, "Produce v%d: error %d", v, rp->ErrorCode);
        ck_assert_int_eq(rp->Index, 0);
        ck_assert_int_eq(rp->BaseOffset, next);
        ck_assert_int_eq(rp->LogAppendTimeMs, -1);
        ck_assert_int_eq(rp->LogStartOffset, v >= 5 ? 0 : -1);
        if (v >= 8) {
            ck_assert_int_eq(rp->RecordErrorsCount, 0);
            ck_assert_int_lt(rp->ErrorMessage.len, 0);
        }
        next += 3;
        ck_assert_int_eq(sf_log_end_offset(log), next);
        sf_wbuf_free(&wb);
    }
    /* What was stored reads back in order, each produce one batch. */
    fetch_got(11, "plain", 0, 0, &g);
    ck_assert_int_eq(g.nbatches, 9);
    ck_assert_int_eq(g.nrecs, 27);
    ck_assert_str_eq(g.recs[0].key, "p3-k0");
    ck_assert_str_eq(g.recs[26].value, "p11-v2");
    ck_assert_int_eq(g.recs[26].offset, 26);
    ck_assert_int_eq(g.recs[4].timestamp, 2000);
}
END_TEST

START_TEST(test_produce_acks_zero) {
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 2, "a0");
    ck_assert_int_eq(produce(7, "plain", 0, wb.p, wb.len, 0)->state, R_NONE);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 0)), 2);
    /* A refusal has no answer to go in: Kafka closes the connection instead. */
    ck_assert_int_eq(produce(7, "nosuch", 0, wb.p, wb.len, 0)->state, R_CLOSED);
    wb.p[wb.len - 1] ^= 1;
    ck_assert_int_eq(produce(7, "plain", 0, wb.p, wb.len, 0)->state, R_CLOSED);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 0)), 2);
    sf_wbuf_free(&wb);
}
END_TEST

/* Produce v0 with magic 0 and v2 with magic 1: stored, read back by Fetch v0 and v2 in those
 * formats and by Fetch v4+ as record batches. */
START_TEST(test_produce_legacy_formats) {
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp;
    sf_wbuf_t m0, m1;
    int16_t v;
    got_t g;
    int i;

    sf_wbuf_init(&m0);
    put_message(&m0, 0, 0, -1, "k0", "v0");
    put_message(&m0, 0, 1, -1, "k1", "v1");
    sf_wbuf_init(&m1);
    put_message(&m1, 1, 0, 1000, "k2", "v2");
    put_message(&m1, 1, 1, 2000, "k3", "v3");
    rp = produced(produce(0, "plain", 1, m0.p, m0.len, 1));
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_eq(rp->BaseOffset, 0);
    rp = produced(produce(2, "plain", 1, m1.p, m1.len, -1));
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_eq(rp->BaseOffset, 2);
    ck_assert_int_eq(rp->LogAppendTimeMs, -1);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 1)), 4);

    /* Fetch v0/v1: magic 0, no timestamps; v2/v3: magic 1 with them. */
    for (v = 0; v <= 3; v++) {
        fetch_got(v, "plain", 1, 0, &g);
        ck_assert_int_eq(g.nrecs, 4);
        for (i = 0; i < 4; i++) {
            char key[8];
            snprintf(key, sizeof(key), "k%d", i);
            ck_assert_int_eq(g.recs[i].offset, i);
            ck_assert_str_eq(g.recs[i].key, key);
        }
        ck_assert_str_eq(g.recs[3].value, "v3");
        ck_assert_int_eq(g.recs[0].timestamp, -1);
        ck_assert_int_eq(g.recs[2].timestamp, v >= 2 ? 1000 : -1);
        ck_assert_int_eq(g.recs[3].timestamp, v >= 2 ? 2000 : -1);
    }
    /* From a later offset: only the messages from there. */
    fetch_got(2, "plain", 1, 2, &g);
    ck_assert_int_eq(g.nrecs, 2);
    ck_assert_int_eq(g.recs[0].offset, 2);
    /* Fetch v4+: the stored v2 batches, one per produce. */
    for (v = 4; v <= 12; v += 4) {
        fetch_got(v, "plain", 1, 0, &g);
        ck_assert_int_eq(g.nbatches, 2);
        ck_assert_int_eq(g.nrecs, 4);
        ck_assert_int_eq(g.hdrs[0].Magic, 2);
        ck_assert_int_eq(g.hdrs[1].BaseOffset, 2);
        ck_assert_int_eq(g.hdrs[1].MaxTimestamp, 2000);
        ck_assert_str_eq(g.recs[1].value, "v1");
        ck_assert_int_eq(g.recs[0].timestamp, -1);
        ck_assert_int_eq(g.recs[2].timestamp, 1000);
        ck_assert_int_eq(g.recs[3].timestamp, 2000);
    }
    sf_wbuf_free(&m0);
    sf_wbuf_free(&m1);
}
END_TEST

/* Produce @len bytes at @v to plain-0 (or @topic) and expect @kerr with nothing stored. */
static void refused(int16_t v, const char *topic, int32_t partition, const void *p, size_t len,
                    int16_t acks, sf_kerr_t kerr, const char *what) {
    sf_log_t *log = log_of("plain", 0);
    int64_t leo = sf_log_end_offset(log), size = sf_log_size_bytes(log);
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp =
        produced(produce(v, topic, partition, p, len, acks));
    ck_assert_msg(rp->ErrorCode == kerr, "%s: error %d, expected %d", what, rp->ErrorCode, kerr);
    ck_assert_int_eq(rp->BaseOffset, -1);
    ck_assert_int_eq(sf_log_end_offset(log), leo);
    ck_assert_int_eq(sf_log_size_bytes(log), size);
}

START_TEST(test_produce_refusals) {
    sf_wbuf_t wb;
    int64_t ts[2] = {1000, 2000};
    static const char garbage[] = "this is not a gzip stream at all";
    sf_recbatch_hdr_t h;

    /* One good batch first, so "nothing stored" is checked against a non-empty log. */
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 1, "good");
    ck_assert_int_eq(produce_ok(8, "plain", 0, &wb), 0);

    sf_wbuf_reset(&wb);
    put_batch(&wb, SF_RECBATCH_ATTR_CONTROL, ts, 2, "ctl");
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_RECORD, "control batch");

    sf_wbuf_reset(&wb);
    put_batch(&wb, SF_RECBATCH_ATTR_TRANSACTIONAL, ts, 2, "txn");
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_RECORD, "transactional, no pid");

    sf_wbuf_reset(&wb);
    put_batch(&wb, 5, ts, 2, "c5");
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_UNSUPPORTED_COMPRESSION_TYPE, "codec 5");
    sf_wbuf_reset(&wb);
    put_batch(&wb, 7, ts, 2, "c7");
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_UNSUPPORTED_COMPRESSION_TYPE, "codec 7");

    /* zstd needs Produce v7 (KIP-110). */
    sf_wbuf_reset(&wb);
    put_batch(&wb, SF_COMPRESS_ZSTD, ts, 2, "zs");
    refused(6, "plain", 0, wb.p, wb.len, 1, SF_KERR_UNSUPPORTED_COMPRESSION_TYPE, "zstd at v6");

    /* RecordCount larger than the records: see test_produce_invalid_record. */

    /* A byte of a value changed under the CRC. */
    sf_wbuf_reset(&wb);
    put_batch(&wb, 0, ts, 2, "crc");
    wb.p[wb.len - 2] ^= 0x20;
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_CORRUPT_MESSAGE, "bad CRC");

    /* The gzip flag over bytes that are not gzip (CRC right). */
    sf_wbuf_reset(&wb);
    memset(&h, 0, sizeof(h));
    h.PartitionLeaderEpoch = -1;
    h.Attributes = SF_COMPRESS_GZIP;
    h.LastOffsetDelta = 1;
    h.BaseTimestamp = 1000;
    h.MaxTimestamp = 2000;
    h.ProducerId = -1;
    h.ProducerEpoch = -1;
    h.BaseSequence = -1;
    h.RecordCount = 2;
    ck_assert_int_eq(sf_recbatch_build_raw(&wb, &h, (const uint8_t *)garbage, sizeof(garbage)),
                     SF_OK);
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_CORRUPT_MESSAGE, "gzip over garbage");

    /* acks 2; a topic and a partition that do not exist. */
    sf_wbuf_reset(&wb);
    put_simple(&wb, 0, 2, "ok");
    refused(8, "plain", 0, wb.p, wb.len, 2, SF_KERR_INVALID_REQUIRED_ACKS, "acks 2");
    refused(8, "plain", 0, wb.p, wb.len, -2, SF_KERR_INVALID_REQUIRED_ACKS, "acks -2");
    refused(8, "nosuch", 0, wb.p, wb.len, 1, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "unknown topic");
    refused(8, "plain", 2, wb.p, wb.len, 1, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "partition 2");
    refused(8, "plain", -1, wb.p, wb.len, 1, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION, "partition -1");

    /* The same good batch is still accepted after all that. */
    ck_assert_int_eq(produce_ok(8, "plain", 0, &wb), 1);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_produce_refusals_limits) {
    sf_wbuf_t wb, two;
    int64_t ts[2] = {1000, 2000};

    /* A BatchLength smaller than any message: Kafka's CorruptRecordException ("Record size
     * 10 is less than the minimum record overhead (14)"). */
    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 2, "len");
    sf_store_be32(wb.p + SF_RECBATCH_OFF_BATCH_LENGTH, 10);
    refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_CORRUPT_MESSAGE, "BatchLength 10");
    /* A good batch followed by a bad one: neither is stored. */
    sf_wbuf_init(&two);
    put_batch(&two, 0, ts, 2, "one");
    put_batch(&two, SF_RECBATCH_ATTR_CONTROL, ts, 2, "two");
    refused(8, "plain", 0, two.p, two.len, 1, SF_KERR_INVALID_RECORD, "good then bad");
    sf_wbuf_free(&two);
    sf_wbuf_free(&wb);
}
END_TEST

/* Set plain-0's message.timestamp.before.max.ms. */
static void set_before_max_ms(int64_t ms) {
    sf_log_config_t lc;
    sf_log_get_config(log_of("plain", 0), &lc);
    lc.timestamp_before_max_ms = ms;
    sf_log_set_config(log_of("plain", 0), &lc);
}

/* The rules on each record, for plain and compressed batches: keys on a compacted topic,
 * header keys, timestamps within message.timestamp.before.max.ms. */
START_TEST(test_produce_record_rules) {
    sf_recbatch_record_t recs[2];
    sf_recbatch_rechdr_t h;
    int64_t now = sf_clock_wall_ms();
    sf_wbuf_t wb;
    int16_t codec;

    sf_wbuf_init(&wb);
    for (codec = SF_COMPRESS_NONE; codec <= SF_COMPRESS_LZ4; codec += SF_COMPRESS_LZ4) {
        memset(recs, 0, sizeof(recs));
        recs[0].timestamp = now;
        recs[0].key = sf_slice_cstr("k");
        recs[0].value = sf_slice_cstr("v0");
        recs[1].timestamp = now + 5;
        recs[1].key.len = -1;
        recs[1].value = sf_slice_cstr("v1");
        recs[1].header_count = 1;
        recs[1].headers = &h;
        h.key = sf_slice_cstr("h");
        h.value = sf_slice_cstr("v");
        sf_wbuf_reset(&wb);
        put_records(&wb, codec, recs, 2);
        refused(8, "compact", 0, wb.p, wb.len, 1, SF_KERR_INVALID_RECORD, "compacted, null key");
        ck_assert_int_eq(sf_log_end_offset(log_of("compact", 0)), codec ? 2 : 0);
        produce_ok(8, "plain", 0, &wb);

        recs[1].key = sf_slice_cstr("k");
        h.key.p = NULL;
        h.key.len = -1;
        sf_wbuf_reset(&wb);
        put_records(&wb, codec, recs, 2);
        refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_RECORD, "null header key");

        set_before_max_ms(3600000);
        h.key = sf_slice_cstr("h");
        recs[1].timestamp = now - 7200000;
        sf_wbuf_reset(&wb);
        put_records(&wb, codec, recs, 2);
        refused(8, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_TIMESTAMP, "two hours old");
        recs[1].timestamp = now - 60000;
        sf_wbuf_reset(&wb);
        put_records(&wb, codec, recs, 2);
        produce_ok(8, "plain", 0, &wb);
        produce_ok(8, "compact", 0, &wb);
        set_before_max_ms(INT64_MAX);
    }
    sf_wbuf_free(&wb);
}
END_TEST

/* What Kafka 3.9 answers with INVALID_RECORD (an InvalidRecordException), and nothing stored:
 *   - RecordCount larger than the records there (DefaultRecordBatch's iterator);
 *   - RecordCount != LastOffsetDelta + 1 (LogValidator.validateBatch);
 *   - no whole batch (empty records, a batch cut short) from Produce v3
 *     (ProduceRequest.validateRecords);
 *   - a magic 0/1 message set from Produce v3 (validateRecords). */
START_TEST(test_produce_invalid_record) {
    sf_log_t *log = log_of("plain", 0);
    int64_t ts[2] = {1000, 2000};
    char wrong[512] = "";
    sf_wbuf_t cnt, delta, cut, legacy;
    struct {
        const char *what;
        const sf_wbuf_t *wb;
        size_t len;
    } cases[5];
    int i;

    sf_wbuf_init(&cnt);
    put_batch(&cnt, 0, ts, 2, "cnt");
    sf_store_be32(cnt.p + SF_RECBATCH_OFF_RECORD_COUNT, 3);
    sf_store_be32(cnt.p + SF_RECBATCH_OFF_LAST_OFFSET_DELTA, 2);
    reseal(cnt.p, cnt.len);
    sf_wbuf_init(&delta);
    put_batch(&delta, 0, ts, 2, "delta");
    sf_store_be32(delta.p + SF_RECBATCH_OFF_RECORD_COUNT, 3);
    reseal(delta.p, delta.len);
    sf_wbuf_init(&cut);
    put_batch(&cut, 0, ts, 2, "cut");
    sf_wbuf_init(&legacy);
    put_message(&legacy, 1, 0, 1000, "k", "v");
    cases[0].what = "RecordCount larger than the records";
    cases[0].wb = &cnt;
    cases[0].len = cnt.len;
    cases[1].what = "RecordCount != LastOffsetDelta + 1";
    cases[1].wb = &delta;
    cases[1].len = delta.len;
    cases[2].what = "no records";
    cases[2].wb = &cut;
    cases[2].len = 0;
    cases[3].what = "a batch cut short";
    cases[3].wb = &cut;
    cases[3].len = cut.len - 1;
    cases[4].what = "magic 1 at Produce v3";
    cases[4].wb = &legacy;
    cases[4].len = legacy.len;
    for (i = 0; i < 5; i++) {
        sf_proto_ProduceResponse_PartitionProduceResponse_t *rp =
            produced(produce(i == 4 ? 3 : 8, "plain", 0, cases[i].wb->p, cases[i].len, 1));
        ck_assert_int_ne(rp->ErrorCode, 0);
        ck_assert_int_eq(sf_log_end_offset(log), 0);
        if (rp->ErrorCode != SF_KERR_INVALID_RECORD)
            snprintf(wrong + strlen(wrong), sizeof(wrong) - strlen(wrong), "; %s: %d",
                     cases[i].what, rp->ErrorCode);
    }
    sf_wbuf_free(&cnt);
    sf_wbuf_free(&delta);
    sf_wbuf_free(&cut);
    sf_wbuf_free(&legacy);
    ck_assert_msg(!wrong[0], "Kafka answers INVALID_RECORD (87)%s", wrong);
}
END_TEST

START_TEST(test_produce_log_append_time) {
    sf_proto_ProduceResponse_PartitionProduceResponse_t *rp;
    int64_t ts[2] = {1000, 2000}, before, after;
    sf_wbuf_t wb;
    got_t g;

    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 2, "lat");
    before = sf_clock_wall_ms();
    rp = produced(produce(8, "lat", 0, wb.p, wb.len, 1));
    after = sf_clock_wall_ms();
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_ge(rp->LogAppendTimeMs, before);
    ck_assert_int_le(rp->LogAppendTimeMs, after);
    fetch_got(11, "lat", 0, 0, &g);
    ck_assert_int_eq(g.nbatches, 1);
    ck_assert(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME);
    ck_assert_int_eq(g.hdrs[0].MaxTimestamp, rp->LogAppendTimeMs);
    /* Every record reads with the append time. */
    ck_assert_int_eq(g.recs[0].timestamp, rp->LogAppendTimeMs);
    ck_assert_int_eq(g.recs[1].timestamp, rp->LogAppendTimeMs);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_produce_create_time_max_timestamp) {
    int64_t ts[3] = {1000, 3000, 2000};
    sf_wbuf_t wb;
    got_t g;

    /* A producer that left MaxTimestamp at -1: the broker computes it from the records. */
    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 3, "ct");
    sf_store_be64(wb.p + SF_RECBATCH_OFF_MAX_TIMESTAMP, (uint64_t)-1);
    reseal(wb.p, wb.len);
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    fetch_got(11, "plain", 0, 0, &g);
    ck_assert_int_eq(g.nbatches, 1);
    ck_assert_int_eq(g.hdrs[0].MaxTimestamp, 3000);
    ck_assert(!(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_LOG_APPEND_TIME));
    ck_assert_int_eq(g.recs[2].timestamp, 2000);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_produce_topic_compression) {
    sf_wbuf_t wb;
    got_t g;
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 3, "gz");
    ck_assert_int_eq(produce_ok(9, "gz", 0, &wb), 0);
    fetch_got(11, "gz", 0, 0, &g);
    ck_assert_int_eq(g.nbatches, 1);
    ck_assert_int_eq(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK, SF_COMPRESS_GZIP);
    ck_assert_int_eq(g.nrecs, 3);
    ck_assert_str_eq(g.recs[2].key, "gz-k2");
    ck_assert_int_eq(g.recs[2].timestamp, 3000);
    /* A batch the producer compressed otherwise is recompressed too. */
    sf_wbuf_reset(&wb);
    put_simple(&wb, SF_COMPRESS_LZ4, 2, "lz");
    ck_assert_int_eq(produce_ok(9, "gz", 0, &wb), 3);
    fetch_got(11, "gz", 0, 3, &g);
    ck_assert_int_eq(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK, SF_COMPRESS_GZIP);
    ck_assert_str_eq(g.recs[1].value, "lz-v1");
    sf_wbuf_free(&wb);
}
END_TEST

/* ---- Fetch ---- */

START_TEST(test_fetch_every_version) {
    sf_wbuf_t wb;
    int16_t v;
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 2, "f");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    for (v = 0; v <= 17; v++) {
        reply_t *r = fetch(v, "plain", 0, 0);
        sf_proto_FetchResponse_t *resp = body_of(r);
        sf_proto_FetchResponse_PartitionData_t *rp = fetched(r);
        got_t g;
        ck_assert_msg(rp->ErrorCode == 0, "Fetch v%d: error %d", v, rp->ErrorCode);
        ck_assert_int_eq(rp->HighWatermark, 2);
        if (v >= 4)
            ck_assert_int_eq(rp->LastStableOffset, 2);
        if (v >= 5)
            ck_assert_int_eq(rp->LogStartOffset, 0);
        if (v >= 13) {
            sf_uuid_t id = uuid_of("plain");
            ck_assert(!memcmp(resp->Responses[0].TopicId.b, id.b, 16));
        } else {
            ck_assert(sf_slice_eq(resp->Responses[0].Topic, "plain"));
        }
        if (v < 4)
            got_messages(rp->Records, v < 2 ? 0 : 1, &g);
        else
            got_batches(rp->Records, &g);
        ck_assert_int_eq(g.nrecs, 2);
        ck_assert_str_eq(g.recs[1].key, "f-k1");
        ck_assert_str_eq(g.recs[1].value, "f-v1");
        ck_assert_int_eq(g.recs[1].offset, 1);
    }
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_fetch_unknown) {
    sf_uuid_t unknown;
    sf_proto_FetchResponse_PartitionData_t *rp;
    int16_t v;
    memset(&unknown, 0, sizeof(unknown));
    unknown.b[0] = 0x77;
    for (v = 13; v <= 17; v++) {
        rp = fetched(fetch_id(v, "plain", &unknown, 0, 0, 0, 1, 1 << 20));
        ck_assert_int_eq(rp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_ID);
        ck_assert_int_le(rp->Records.len, 0);
    }
    rp = fetched(fetch(12, "nosuch", 0, 0));
    ck_assert_int_eq(rp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    rp = fetched(fetch(4, "plain", 5, 0));
    ck_assert_int_eq(rp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    /* Past the log end offset, and before the start. */
    rp = fetched(fetch(11, "plain", 0, 1));
    ck_assert_int_eq(rp->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
    rp = fetched(fetch(11, "plain", 0, -1));
    ck_assert_int_eq(rp->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
}
END_TEST

START_TEST(test_fetch_zstd) {
    sf_wbuf_t wb;
    int16_t v;
    sf_wbuf_init(&wb);
    put_simple(&wb, SF_COMPRESS_ZSTD, 2, "zs");
    ck_assert_int_eq(produce_ok(7, "plain", 0, &wb), 0);
    /* Below Fetch v10 (KIP-110) zstd cannot be read, down-converted or not. */
    for (v = 0; v <= 9; v++) {
        sf_proto_FetchResponse_PartitionData_t *rp = fetched(fetch(v, "plain", 0, 0));
        ck_assert_msg(rp->ErrorCode == SF_KERR_UNSUPPORTED_COMPRESSION_TYPE,
                      "Fetch v%d of zstd: error %d", v, rp->ErrorCode);
        ck_assert_int_le(rp->Records.len, 0);
    }
    for (v = 10; v <= 17; v++) {
        got_t g;
        fetch_got(v, "plain", 0, 0, &g);
        ck_assert_int_eq(g.nbatches, 1);
        ck_assert_int_eq(g.hdrs[0].Attributes & SF_RECBATCH_ATTR_COMPRESSION_MASK,
                         SF_COMPRESS_ZSTD);
        ck_assert_str_eq(g.recs[1].value, "zs-v1");
    }
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_fetch_long_poll) {
    sf_proto_FetchResponse_PartitionData_t *rp;
    reply_t *r;
    sf_wbuf_t wb;
    got_t g;

    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 1, "old");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    /* At the log end, waiting for one byte: parked. */
    r = fetch_id(12, "plain", NULL, 0, 1, 5000, 1, 1 << 20);
    ck_assert_int_eq(r->state, R_PENDING);
    ck_assert_uint_eq(sf_purgatory_size(fb.purgatory), 1);
    /* An append to another partition does not complete it. */
    ck_assert_int_eq(produce_ok(9, "plain", 1, &wb), 0);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    ck_assert_int_eq(r->state, R_PENDING);
    /* An append to its partition does, once the loop runs. */
    sf_wbuf_reset(&wb);
    put_simple(&wb, 0, 2, "new");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 1);
    ck_assert_int_eq(r->state, R_PENDING);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    rp = fetched(r);
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_eq(rp->HighWatermark, 3);
    got_batches(rp->Records, &g);
    ck_assert_int_eq(g.nrecs, 2);
    ck_assert_int_eq(g.recs[0].offset, 1);
    ck_assert_str_eq(g.recs[0].key, "new-k0");
    ck_assert_uint_eq(sf_purgatory_size(fb.purgatory), 0);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_fetch_wait_expires) {
    sf_proto_FetchResponse_PartitionData_t *rp;
    reply_t *r;
    /* Nothing comes: after MaxWaitMs the fetch is answered empty. */
    r = fetch_id(11, "plain", NULL, 0, 0, 30, 1, 1 << 20);
    ck_assert_int_eq(r->state, R_PENDING);
    /* The purgatory tries it once more right after parking; then its deadline passes. */
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_ONCE), 0);
    ck_assert_int_eq(r->state, R_PENDING);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_ONCE), 0);
    rp = fetched(r);
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_eq(rp->HighWatermark, 0);
    ck_assert_int_le(rp->Records.len, 0);
    ck_assert_uint_eq(sf_purgatory_size(fb.purgatory), 0);
    /* MinBytes 0 never waits. */
    r = fetch_id(11, "plain", NULL, 0, 0, 5000, 0, 1 << 20);
    ck_assert_int_eq(r->state, R_BODY);
}
END_TEST

START_TEST(test_fetch_limits) {
    sf_proto_FetchResponse_PartitionData_t *rp;
    sf_proto_FetchRequest_t req;
    sf_proto_FetchResponse_t *resp;
    sf_wbuf_t wb;
    got_t g;

    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 3, "a");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    sf_wbuf_reset(&wb);
    put_simple(&wb, 0, 3, "b");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 3);
    /* KIP-74: a first batch larger than PartitionMaxBytes still comes whole, alone. */
    rp = fetched(fetch_id(11, "plain", NULL, 0, 0, 0, 1, 1));
    ck_assert_int_eq(rp->ErrorCode, 0);
    got_batches(rp->Records, &g);
    ck_assert_int_eq(g.nbatches, 1);
    ck_assert_int_eq(g.nrecs, 3);
    /* From the middle of a batch: the whole batch it is in (the client skips the rest). */
    rp = fetched(fetch(11, "plain", 0, 4));
    got_batches(rp->Records, &g);
    ck_assert_int_eq(g.hdrs[0].BaseOffset, 3);
    /* At the log end: nothing, no error. */
    rp = fetched(fetch(11, "plain", 0, 6));
    ck_assert_int_eq(rp->ErrorCode, 0);
    ck_assert_int_le(rp->Records.len, 0);
    /* Fetch sessions are not handed out: a session id is refused. */
    sf_proto_FetchRequest_init(&req);
    req.SessionId = 42;
    req.SessionEpoch = 1;
    resp = body_of(send_msg(SF_PROTO_API_Fetch, 7, &req));
    ck_assert_int_eq(resp->ErrorCode, SF_KERR_FETCH_SESSION_ID_NOT_FOUND);
    sf_wbuf_free(&wb);
}
END_TEST

/* ---- ListOffsets ---- */

START_TEST(test_list_offsets) {
    sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *lp;
    int64_t ts[3] = {1000, 5000, 2000};
    sf_wbuf_t wb;
    int16_t v;

    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 3, "lo");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    /* v0: the old list of offsets. */
    lp = listed(0, "plain", 0, -1);
    ck_assert_int_eq(lp->ErrorCode, 0);
    ck_assert_int_eq(lp->OldStyleOffsetsCount, 1);
    ck_assert_int_eq(lp->OldStyleOffsets[0], 3);
    lp = listed(0, "plain", 0, -2);
    ck_assert_int_eq(lp->OldStyleOffsetsCount, 1);
    ck_assert_int_eq(lp->OldStyleOffsets[0], 0);
    for (v = 1; v <= 10; v++) {
        lp = listed(v, "plain", 0, -2);
        ck_assert_int_eq(lp->ErrorCode, 0);
        ck_assert_int_eq(lp->Offset, 0);
        lp = listed(v, "plain", 0, -1);
        ck_assert_int_eq(lp->ErrorCode, 0);
        ck_assert_int_eq(lp->Offset, 3);
        if (v >= 4)
            ck_assert_int_eq(lp->LeaderEpoch, 0);
        /* By timestamp: the first record at or after it. */
        lp = listed(v, "plain", 0, 1500);
        ck_assert_int_eq(lp->Offset, 1);
        ck_assert_int_eq(lp->Timestamp, 5000);
        lp = listed(v, "plain", 0, 5001);
        ck_assert_int_eq(lp->ErrorCode, 0);
        ck_assert_int_eq(lp->Offset, -1);
        ck_assert_int_eq(lp->Timestamp, -1);
    }
    /* MAX_TIMESTAMP (KIP-734): the record carrying the largest timestamp. */
    for (v = 7; v <= 10; v++) {
        lp = listed(v, "plain", 0, -3);
        ck_assert_int_eq(lp->ErrorCode, 0);
        ck_assert_int_eq(lp->Offset, 1);
        ck_assert_int_eq(lp->Timestamp, 5000);
    }
    sf_wbuf_free(&wb);
}
END_TEST

/* read_committed: Fetch and ListOffsets stop at the last stable offset, and Fetch lists the
 * aborted transactions it returns (null for read_uncommitted). */
START_TEST(test_read_committed) {
    sf_log_t *log = log_of("plain", 0);
    sf_proto_FetchResponse_PartitionData_t *rp;
    sf_recbatch_record_t rec;
    sf_recbatch_hdr_t h;
    int64_t off;
    sf_wbuf_t wb;
    int16_t v;
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 2, "rc");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    /* Producer 5's transaction at offset 2. */
    sf_wbuf_reset(&wb);
    memset(&h, 0, sizeof(h));
    memset(&rec, 0, sizeof(rec));
    h.Attributes = SF_RECBATCH_ATTR_TRANSACTIONAL;
    h.ProducerId = 5;
    rec.key = rec.value = sf_slice_cstr("t");
    ck_assert_int_eq(sf_recbatch_build_hdr(&wb, &h, &rec, 1), SF_OK);
    ck_assert_int_eq(sf_log_append(log, wb.p, wb.len, 0, NULL), SF_OK);
    for (v = 4; v <= 17; v += 13) {
        isolation = 0;
        rp = fetched(fetch(v, "plain", 0, 0));
        ck_assert_int_eq(rp->HighWatermark, 3);
        ck_assert_int_eq(rp->LastStableOffset, 2);
        ck_assert_int_eq(rp->AbortedTransactionsCount, -1);
        ck_assert_int_gt(rp->Records.len, 0);
        isolation = 1;
        rp = fetched(fetch(v, "plain", 0, 2));
        ck_assert_int_eq(rp->ErrorCode, 0);
        ck_assert_int_eq(rp->Records.len, 0); /* nothing below the LSO there */
        ck_assert_int_eq(rp->AbortedTransactionsCount, 0);
        ck_assert_int_eq(listed(v > 10 ? 7 : 2, "plain", 0, -1)->Offset, 2);
    }
    ck_assert_int_eq(sf_log_append_marker(log, 5, 0, 0, 0, 0, &off), SF_OK);
    ck_assert_int_eq(off, 3);
    for (v = 4; v <= 17; v += 13) {
        isolation = 1;
        rp = fetched(fetch(v, "plain", 0, 2));
        ck_assert_int_eq(rp->LastStableOffset, 4);
        ck_assert_int_gt(rp->Records.len, 0);
        ck_assert_int_eq(rp->AbortedTransactionsCount, 1);
        ck_assert_int_eq(rp->AbortedTransactions[0].ProducerId, 5);
        ck_assert_int_eq(rp->AbortedTransactions[0].FirstOffset, 2);
        rp = fetched(fetch(v, "plain", 0, 4));
        ck_assert_int_eq(rp->AbortedTransactionsCount, 0);
        ck_assert_int_eq(listed(v > 10 ? 7 : 2, "plain", 0, -1)->Offset, 4);
    }
    isolation = 0;
    sf_wbuf_free(&wb);
}
END_TEST

/* A batch of producer 11 at epoch 0 from sequence @seq, transactional or not. */
static void put_producer(sf_wbuf_t *wb, int transactional, int32_t seq) {
    sf_recbatch_record_t rec;
    sf_recbatch_hdr_t h;
    sf_wbuf_reset(wb);
    memset(&h, 0, sizeof(h));
    memset(&rec, 0, sizeof(rec));
    h.Attributes = transactional ? SF_RECBATCH_ATTR_TRANSACTIONAL : 0;
    h.ProducerId = 11;
    h.BaseSequence = seq;
    rec.key = rec.value = sf_slice_cstr("v");
    ck_assert_int_eq(sf_recbatch_build_hdr(wb, &h, &rec, 1), SF_OK);
}

/* KIP-890: a transaction's first batch on a partition is appended only once the coordinator
 * confirmed the partition is in it, and only if no marker ended it meanwhile. */
START_TEST(test_produce_txn_verification) {
    sf_log_t *log = log_of("plain", 0);
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    put_producer(&wb, 1, 0);
    refused(9, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_TXN_STATE, "no transactional id");
    ck_assert_int_eq(fake_verify_calls, 0);
    produce_txn_id = "txn";
    fake_verify_err = SF_KERR_INVALID_TXN_STATE;
    refused(9, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_TXN_STATE, "not in the transaction");
    fake_verify_err = SF_KERR_CONCURRENT_TRANSACTIONS;
    refused(9, "plain", 0, wb.p, wb.len, -1, SF_KERR_NOT_ENOUGH_REPLICAS, "busy coordinator");
    fake_verify_err = SF_KERR_PRODUCER_FENCED;
    refused(9, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_PRODUCER_EPOCH, "fenced");
    /* Confirmed, but aborted before the append: still refused. */
    fake_verify_err = SF_KERR_NONE;
    fake_verify_abort = log;
    ck_assert_int_eq(produced(produce(9, "plain", 0, wb.p, wb.len, 1))->ErrorCode,
                     SF_KERR_INVALID_TXN_STATE);
    fake_verify_abort = NULL;
    ck_assert_int_eq(fake_verify_calls, 4);
    ck_assert_int_eq(sf_log_last_stable_offset(log), sf_log_end_offset(log));
    /* Confirmed: appended; the next batch of the transaction needs no verification. */
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), sf_log_end_offset(log) - 1);
    put_producer(&wb, 1, 1);
    produce_ok(9, "plain", 0, &wb);
    ck_assert_int_eq(fake_verify_calls, 5);
    ck_assert_int_lt(sf_log_last_stable_offset(log), sf_log_end_offset(log));
    /* A plain batch inside the transaction is refused. */
    put_producer(&wb, 0, 2);
    refused(9, "plain", 0, wb.p, wb.len, 1, SF_KERR_INVALID_TXN_STATE, "plain in a transaction");
    produce_txn_id = NULL;
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_list_offsets_compressed) {
    sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *lp;
    int64_t ts[4] = {1000, 2000, 3000, 4000}, late[3] = {1500, 9000, 1200};
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    put_batch(&wb, 0, ts, 4, "c");
    ck_assert_int_eq(produce_ok(9, "gz", 0, &wb), 0);
    /* Stored gzip-compressed (compression.type=gzip): the lookup looks inside the batch. */
    lp = listed(5, "gz", 0, 2000);
    ck_assert_int_eq(lp->Offset, 1);
    ck_assert_int_eq(lp->Timestamp, 2000);
    lp = listed(5, "gz", 0, 2500);
    ck_assert_int_eq(lp->Offset, 2);
    ck_assert_int_eq(lp->Timestamp, 3000);
    lp = listed(5, "gz", 0, 0);
    ck_assert_int_eq(lp->Offset, 0);
    lp = listed(8, "gz", 0, -3);
    ck_assert_int_eq(lp->Offset, 3);
    ck_assert_int_eq(lp->Timestamp, 4000);
    /* A second batch whose largest timestamp is on its middle record: that record's offset
     * (Kafka 3.9, KAFKA-16310), not the batch's last. */
    sf_wbuf_reset(&wb);
    put_batch(&wb, 0, late, 3, "m");
    ck_assert_int_eq(produce_ok(9, "gz", 0, &wb), 4);
    lp = listed(8, "gz", 0, -3);
    ck_assert_int_eq(lp->Offset, 5);
    ck_assert_int_eq(lp->Timestamp, 9000);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_list_offsets_limits) {
    sf_proto_ListOffsetsResponse_ListOffsetsPartitionResponse_t *lp;
    /* An empty log: earliest = latest = 0, no record for any timestamp or the max. */
    lp = listed(7, "plain", 0, -2);
    ck_assert_int_eq(lp->Offset, 0);
    lp = listed(7, "plain", 0, -1);
    ck_assert_int_eq(lp->Offset, 0);
    lp = listed(7, "plain", 0, 0);
    ck_assert_int_eq(lp->ErrorCode, 0);
    ck_assert_int_eq(lp->Offset, -1);
    lp = listed(7, "plain", 0, -3);
    ck_assert_int_eq(lp->ErrorCode, 0);
    ck_assert_int_eq(lp->Offset, -1);
    lp = listed(0, "plain", 0, 12345);
    ck_assert_int_eq(lp->OldStyleOffsetsCount, 0);
    lp = listed(3, "nosuch", 0, -1);
    ck_assert_int_eq(lp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    lp = listed(0, "plain", 9, -1);
    ck_assert_int_eq(lp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
}
END_TEST

static Suite *kafka_suite(void) {
    Suite *s = suite_create("kafka");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_add_test(core, test_api_versions);
    tcase_add_test(core, test_produce_every_version);
    tcase_add_test(core, test_produce_acks_zero);
    tcase_add_test(core, test_produce_legacy_formats);
    tcase_add_test(core, test_produce_log_append_time);
    tcase_add_test(core, test_produce_create_time_max_timestamp);
    tcase_add_test(core, test_produce_record_rules);
    tcase_add_test(core, test_produce_topic_compression);
    tcase_add_test(core, test_fetch_every_version);
    tcase_add_test(core, test_fetch_zstd);
    tcase_add_test(core, test_fetch_long_poll);
    tcase_add_test(core, test_list_offsets);
    tcase_add_test(core, test_read_committed);
    tcase_add_test(core, test_produce_txn_verification);
    tcase_add_test(core, test_list_offsets_compressed);
    tcase_add_test(limits, test_api_versions_unknown_version);
    tcase_add_test(limits, test_api_versions_bad_client_software);
    tcase_add_test(limits, test_dispatch_closes);
    tcase_add_test(limits, test_produce_refusals);
    tcase_add_test(limits, test_produce_refusals_limits);
    tcase_add_test(limits, test_produce_invalid_record);
    tcase_add_test(limits, test_fetch_unknown);
    tcase_add_test(limits, test_fetch_wait_expires);
    tcase_add_test(limits, test_fetch_limits);
    tcase_add_test(limits, test_list_offsets_limits);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    return kafka_fixture_main(kafka_suite(), "kafka");
}
