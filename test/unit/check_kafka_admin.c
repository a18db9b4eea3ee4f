/* Unit tests for the Kafka request handlers of metadata and administration (broker/kafka/)
 * over the fake broker of kafka_fixture.c: Metadata, DescribeConfigs, dynamic broker configs
 * (DescribeConfigs, validate-only IncrementalAlterConfigs), the controller APIs away from the
 * controller, DeleteRecords, OffsetForLeaderEpoch, readiness and names.
 *
 * core: every version the dispatcher serves.
 * limits: unknown topics, ids and partitions, refusals, requests before the first metadata,
 *       names with NUL bytes. */
#include "kafka_fixture.h"

/* ---- Metadata ---- */

static const sf_proto_MetadataResponse_MetadataResponseTopic_t *
md_topic(const sf_proto_MetadataResponse_t *resp, const char *name) {
    int i;
    for (i = 0; i < resp->TopicsCount; i++)
        if (sf_slice_eq(resp->Topics[i].Name, name))
            return &resp->Topics[i];
    ck_abort_msg("topic %s not in the metadata", name);
    return NULL;
}

START_TEST(test_metadata) {
    sf_proto_MetadataResponse_t *resp;
    const sf_proto_MetadataResponse_MetadataResponseTopic_t *mt;
    static const char *const one[] = {"plain"};
    int16_t v;
    int i;

    /* v0: an empty list means every topic. */
    resp = metadata(0, NULL, 0, true);
    ck_assert_int_eq(resp->TopicsCount, NTOPICS);
    ck_assert_int_eq(resp->BrokersCount, 1);
    ck_assert_int_eq(resp->Brokers[0].NodeId, 1);
    ck_assert(sf_slice_eq(resp->Brokers[0].Host, "127.0.0.1"));
    ck_assert_int_eq(resp->Brokers[0].Port, 9092);
    mt = md_topic(resp, "plain");
    ck_assert_int_eq(mt->ErrorCode, 0);
    ck_assert_int_eq(mt->PartitionsCount, 2);
    ck_assert_int_eq(mt->Partitions[1].LeaderId, 1);
    ck_assert_int_eq(mt->Partitions[1].PartitionIndex, 1);
    /* v1+: null means every topic, empty none. */
    for (v = 1; v <= 12; v++) {
        resp = metadata(v, NULL, -1, true);
        ck_assert_int_eq(resp->TopicsCount, NTOPICS);
        ck_assert_int_eq(resp->ControllerId, 1);
        resp = metadata(v, NULL, 0, true);
        ck_assert_int_eq(resp->TopicsCount, 0);
        ck_assert_int_eq(resp->BrokersCount, 1);
        resp = metadata(v, one, 1, true);
        ck_assert_int_eq(resp->TopicsCount, 1);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, 0);
        ck_assert_int_eq(resp->Topics[0].PartitionsCount, 2);
        if (v >= 2)
            ck_assert(sf_slice_eq(resp->ClusterId, "check-kafka-cluster"));
        /* v10+: topic ids. */
        if (v >= 10) {
            sf_uuid_t id = uuid_of("plain");
            ck_assert(!memcmp(resp->Topics[0].TopicId.b, id.b, 16));
        }
    }
    resp = metadata(10, NULL, -1, true);
    for (i = 0; i < NTOPICS; i++) {
        sf_uuid_t id = uuid_of(topic_defs[i].name);
        ck_assert(!memcmp(md_topic(resp, topic_defs[i].name)->TopicId.b, id.b, 16));
    }
}
END_TEST

START_TEST(test_metadata_by_topic_id) {
    sf_proto_MetadataRequest_t req;
    sf_proto_MetadataRequest_MetadataRequestTopic_t topics[2];
    sf_proto_MetadataResponse_t *resp;
    sf_uuid_t id = uuid_of("gz");
    sf_proto_MetadataRequest_init(&req);
    sf_proto_MetadataRequest_MetadataRequestTopic_init(&topics[0]);
    sf_proto_MetadataRequest_MetadataRequestTopic_init(&topics[1]);
    topics[0].Name = sf_slice_cstr(NULL);
    topics[0].TopicId = id;
    topics[1].Name = sf_slice_cstr(NULL);
    topics[1].TopicId.b[3] = 0x42; /* no such topic */
    req.TopicsCount = 2;
    req.Topics = topics;
    resp = body_of(send_msg(SF_PROTO_API_Metadata, 12, &req));
    ck_assert_int_eq(resp->TopicsCount, 2);
    ck_assert_int_eq(resp->Topics[0].ErrorCode, 0);
    ck_assert(sf_slice_eq(resp->Topics[0].Name, "gz"));
    ck_assert(!memcmp(resp->Topics[0].TopicId.b, id.b, 16));
    ck_assert_int_eq(resp->Topics[0].PartitionsCount, 1);
    ck_assert_int_eq(resp->Topics[1].ErrorCode, SF_KERR_UNKNOWN_TOPIC_ID);
}
END_TEST

START_TEST(test_metadata_unknown_topics) {
    static const char *const offsets[] = {"__consumer_offsets"};
    static const char *const fresh[] = {"fresh"};
    static const char *const bad[] = {"bad/name"};
    sf_proto_MetadataResponse_t *resp;
    char longname[251];
    const char *const lng[] = {longname};
    int16_t v;

    ck_assert(fb.cfg->auto_create_topics_enable);
    for (v = 0; v <= 12; v++) {
        /* Kafka's internal topics are never auto-created as ordinary ones. */
        resp = metadata(v, offsets, 1, true);
        ck_assert_int_eq(resp->TopicsCount, 1);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
        /* Another unknown topic is auto-created: the client sees LEADER_NOT_AVAILABLE until
         * it shows up (here it never does: there is no ZooKeeper). */
        resp = metadata(v, fresh, 1, true);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, SF_KERR_LEADER_NOT_AVAILABLE);
        /* ... unless the client asks not to (v4+). */
        resp = metadata(v, fresh, 1, false);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, v >= 4 ? SF_KERR_UNKNOWN_TOPIC_OR_PARTITION
                                                           : SF_KERR_LEADER_NOT_AVAILABLE);
        resp = metadata(v, bad, 1, true);
        ck_assert_int_eq(resp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
    }
    memset(longname, 'x', 250);
    longname[250] = '\0';
    resp = metadata(9, lng, 1, true);
    ck_assert_int_eq(resp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
}
END_TEST

/* ---- DescribeConfigs ---- */

START_TEST(test_describe_configs) {
    size_t n, i;
    const sf_topiccfg_def_t *defs = sf_topiccfg_all(&n);
    int16_t v;
    ck_assert_uint_gt(n, 30);
    for (v = 0; v <= 4; v++) {
        const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr =
            describe_topic(v, "gz", v >= 1);
        const sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *c;
        int j, found = 0;
        ck_assert_int_eq(rr->ErrorCode, 0);
        ck_assert_int_eq(rr->ResourceType, 2);
        ck_assert(sf_slice_eq(rr->ResourceName, "gz"));
        /* Every Kafka topic config. */
        ck_assert_int_eq(rr->ConfigsCount, (int32_t)n);
        for (i = 0; i < n; i++)
            ck_assert(sf_slice_eq(rr->Configs[i].Name, defs[i].name));
        /* The override. */
        c = config_entry(rr, "compression.type");
        ck_assert(sf_slice_eq(c->Value, "gzip"));
        ck_assert(!c->ReadOnly);
        if (v == 0) {
            ck_assert(!c->IsDefault);
            ck_assert(config_entry(rr, "segment.bytes")->IsDefault);
            continue;
        }
        ck_assert_int_eq(c->ConfigSource, 1);
        ck_assert_int_ge(c->SynonymsCount, 1);
        ck_assert(sf_slice_eq(c->Synonyms[0].Name, "compression.type"));
        ck_assert(sf_slice_eq(c->Synonyms[0].Value, "gzip"));
        ck_assert_int_eq(c->Synonyms[0].Source, 1);
        /* A Kafka default. */
        c = config_entry(rr, "segment.bytes");
        ck_assert(sf_slice_eq(c->Value, "1073741824"));
        ck_assert_int_eq(c->ConfigSource, 5);
        /* log.retention.hours=100 in the broker's file, in the topic config's unit. */
        c = config_entry(rr, "retention.ms");
        ck_assert(sf_slice_eq(c->Value, "360000000"));
        ck_assert_int_eq(c->ConfigSource, 4);
        for (j = 0; j < c->SynonymsCount; j++)
            if (sf_slice_eq(c->Synonyms[j].Name, "log.retention.hours")) {
                ck_assert(sf_slice_eq(c->Synonyms[j].Value, "360000000"));
                ck_assert_int_eq(c->Synonyms[j].Source, 4);
                found = 1;
            }
        ck_assert(found);
        if (v >= 3)
            ck_assert_int_eq(c->ConfigType, 5); /* LONG */
    }
    /* Without IncludeSynonyms, none. */
    ck_assert_int_eq(config_entry(describe_topic(1, "gz", false), "retention.ms")->SynonymsCount,
                     0);
}
END_TEST

START_TEST(test_describe_configs_unknown) {
    int16_t v;
    for (v = 0; v <= 4; v++) {
        const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr =
            describe_topic(v, "nosuch", v >= 1);
        ck_assert_int_eq(rr->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
        ck_assert_int_eq(rr->ConfigsCount, 0);
    }
}
END_TEST

/* ---- dynamic broker configs: DescribeConfigs and (validate-only) IncrementalAlterConfigs ---- */

static sf_cluster_config_entry_t *entries(const char *const *kv, int n) {
    sf_cluster_config_entry_t *e = calloc((size_t)n, sizeof(*e));
    int i;
    ck_assert_ptr_nonnull(e);
    for (i = 0; i < n; i++) {
        e[i].name = strdup(kv[2 * i]);
        e[i].value = strdup(kv[2 * i + 1]);
    }
    return e;
}

static sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *describe_broker(const char *name) {
    sf_proto_DescribeConfigsRequest_t req;
    sf_proto_DescribeConfigsRequest_DescribeConfigsResource_t res;
    sf_proto_DescribeConfigsResponse_t *resp;
    sf_proto_DescribeConfigsRequest_init(&req);
    sf_proto_DescribeConfigsRequest_DescribeConfigsResource_init(&res);
    res.ResourceType = 4; /* BROKER */
    res.ResourceName = sf_slice_cstr(name);
    res.ConfigurationKeysCount = -1;
    req.ResourcesCount = 1;
    req.Resources = &res;
    req.IncludeSynonyms = true;
    resp = body_of(send_msg(SF_PROTO_API_DescribeConfigs, 1, &req));
    ck_assert_int_eq(resp->ResultsCount, 1);
    return &resp->Results[0];
}

/* One IncrementalAlterConfigs v1 change of a BROKER resource: the error code. */
static int16_t alter_broker(const char *name, const char *key, int8_t op, const char *value,
                            bool validate_only) {
    sf_proto_IncrementalAlterConfigsRequest_t req;
    sf_proto_IncrementalAlterConfigsRequest_AlterConfigsResource_t res;
    sf_proto_IncrementalAlterConfigsRequest_AlterableConfig_t ch;
    sf_proto_IncrementalAlterConfigsResponse_t *resp;
    sf_proto_IncrementalAlterConfigsRequest_init(&req);
    sf_proto_IncrementalAlterConfigsRequest_AlterConfigsResource_init(&res);
    sf_proto_IncrementalAlterConfigsRequest_AlterableConfig_init(&ch);
    ch.Name = sf_slice_cstr(key);
    ch.ConfigOperation = op;
    ch.Value = sf_slice_cstr(value);
    res.ResourceType = 4;
    res.ResourceName = sf_slice_cstr(name);
    res.ConfigsCount = 1;
    res.Configs = &ch;
    req.ResourcesCount = 1;
    req.Resources = &res;
    req.ValidateOnly = validate_only;
    resp = body_of(send_msg(SF_PROTO_API_IncrementalAlterConfigs, 1, &req));
    ck_assert_int_eq(resp->ResponsesCount, 1);
    ck_assert_int_eq(resp->Responses[0].ResourceType, 4);
    ck_assert(sf_slice_eq(resp->Responses[0].ResourceName, name));
    return resp->Responses[0].ErrorCode;
}

START_TEST(test_dynamic_broker_configs) {
    static const char *const mine[] = {"log.retention.ms", "7000"};
    static const char *const dflt[] = {"log.message.timestamp.type", "LogAppendTime",
                                       "log.retention.ms", "5000", "no.such.setting", "1"};
    const sf_proto_DescribeConfigsResponse_DescribeConfigsResult_t *rr;
    const sf_proto_DescribeConfigsResponse_DescribeConfigsResourceResult_t *c;
    int i;
    /* As the snapshot of ZooKeeper's /config/brokers/1 and /config/brokers/<default>. */
    fb.snap->broker_configs = entries(mine, 1);
    fb.snap->nbroker_configs = 1;
    fb.snap->default_configs = entries(dflt, 3);
    fb.snap->ndefault_configs = 3;
    refresh_view();

    rr = describe_broker("1");
    ck_assert_int_eq(rr->ErrorCode, 0);
    for (i = 0; i < rr->ConfigsCount; i++)
        ck_assert(!rr->Configs[i].ReadOnly); /* every broker setting behind a topic config */
    c = config_entry(rr, "log.retention.ms");
    ck_assert(sf_slice_eq(c->Value, "7000"));
    ck_assert_int_eq(c->ConfigSource, 2); /* DYNAMIC_BROKER_CONFIG */
    ck_assert_int_eq(c->SynonymsCount, 4);
    ck_assert(sf_slice_eq(c->Synonyms[1].Name, "log.retention.ms"));
    ck_assert(sf_slice_eq(c->Synonyms[1].Value, "5000"));
    ck_assert_int_eq(c->Synonyms[1].Source, 3);
    ck_assert(sf_slice_eq(c->Synonyms[2].Name, "log.retention.hours"));
    ck_assert_int_eq(c->Synonyms[2].Source, 4);
    ck_assert_int_eq(c->Synonyms[3].Source, 5);
    c = config_entry(rr, "log.message.timestamp.type");
    ck_assert(sf_slice_eq(c->Value, "LogAppendTime"));
    ck_assert_int_eq(c->ConfigSource, 3); /* DYNAMIC_DEFAULT_BROKER_CONFIG */
    ck_assert_int_eq(config_entry(rr, "log.segment.bytes")->ConfigSource, 5);
    /* A topic inherits them. */
    c = config_entry(describe_topic(1, "gz", true), "retention.ms");
    ck_assert(sf_slice_eq(c->Value, "7000"));
    ck_assert_int_eq(c->ConfigSource, 2);
    /* The default: only what is set, as stored (settings StreamFlow does not know left out). */
    rr = describe_broker("");
    ck_assert_int_eq(rr->ErrorCode, 0);
    ck_assert_int_eq(rr->ConfigsCount, 2);
    ck_assert(sf_slice_eq(rr->Configs[0].Name, "log.message.timestamp.type"));
    ck_assert(sf_slice_eq(rr->Configs[1].Value, "5000"));
    ck_assert_int_eq(rr->Configs[1].ConfigSource, 3);
    ck_assert_int_eq(rr->Configs[1].SynonymsCount, 1);
    ck_assert_int_eq(describe_broker("2")->ErrorCode, SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(describe_broker("x1")->ErrorCode, SF_KERR_INVALID_REQUEST);

    /* Validation, as the topic configs behind them (hours in ms); no write without
     * validate_only, as the broker is not in ZooKeeper. */
    ck_assert_int_eq(alter_broker("1", "log.retention.hours", 0, "5", true), 0);
    ck_assert_int_eq(alter_broker("", "log.cleanup.policy", 2, "compact", true), 0);
    ck_assert_int_eq(alter_broker("01", "log.retention.ms", 0, "5", true), 0);
    ck_assert_int_eq(alter_broker("1", "log.retention.hours", 0, "5h", true),
                     SF_KERR_INVALID_CONFIG);
    ck_assert_int_eq(alter_broker("1", "log.retention.minutes", 0, "-2", true), 0); /* -1 */
    ck_assert_int_eq(alter_broker("1", "log.segment.bytes", 0, "13", true), SF_KERR_INVALID_CONFIG);
    ck_assert_int_eq(alter_broker("1", "log.dirs", 0, "/x", true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("1", "segment.bytes", 0, "1024", true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("", "no.such.setting", 1, NULL, true), 0); /* stored: removable */
    ck_assert_int_eq(alter_broker("", "log.dirs", 1, NULL, true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("1", "log.retention.ms", 2, "5", true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("2", "log.retention.ms", 0, "5", true), SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("12345678901", "log.retention.ms", 0, "5", true),
                     SF_KERR_INVALID_REQUEST);
    ck_assert_int_eq(alter_broker("1", "log.retention.ms", 0, "5", false), SF_KERR_NOT_CONTROLLER);
}
END_TEST

/* ---- controller APIs ---- */

START_TEST(test_controller_apis_not_controller) {
    int16_t v;
    /* No cluster here: this broker is not the controller, at every version. */
    for (v = 0; v <= 3; v++) {
        sf_proto_AlterPartitionRequest_t areq;
        sf_proto_AlterPartitionRequest_TopicData_t td;
        sf_proto_AlterPartitionRequest_PartitionData_t pd;
        sf_proto_AlterPartitionResponse_t *aresp;
        sf_proto_ControlledShutdownRequest_t creq;
        sf_proto_ControlledShutdownResponse_t *cresp;
        sf_proto_AlterPartitionRequest_init(&areq);
        sf_proto_AlterPartitionRequest_TopicData_init(&td);
        sf_proto_AlterPartitionRequest_PartitionData_init(&pd);
        areq.BrokerId = 1;
        areq.TopicsCount = 1;
        areq.Topics = &td;
        td.TopicName = sf_slice_cstr("t");
        td.PartitionsCount = 1;
        td.Partitions = &pd;
        aresp = body_of(send_msg(SF_PROTO_API_AlterPartition, v, &areq));
        ck_assert_int_eq(aresp->ErrorCode, SF_KERR_NOT_CONTROLLER);
        ck_assert_int_eq(aresp->TopicsCount, 0);
        sf_proto_ControlledShutdownRequest_init(&creq);
        creq.BrokerId = 1;
        cresp = body_of(send_msg(SF_PROTO_API_ControlledShutdown, v, &creq));
        ck_assert_int_eq(cresp->ErrorCode, SF_KERR_NOT_CONTROLLER);
        ck_assert_int_eq(cresp->RemainingPartitionsCount, 0);
    }
}
END_TEST

/* ---- DeleteRecords ---- */

START_TEST(test_delete_records) {
    sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *dp;
    sf_log_t *log = log_of("plain", 0);
    sf_wbuf_t wb;
    int16_t v;

    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 2, "d");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0);
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 2);
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 4);
    for (v = 0; v <= 2; v++) {
        dp = delete_records(v, "plain", 0, 1 + v);
        ck_assert_int_eq(dp->ErrorCode, 0);
        ck_assert_int_eq(dp->LowWatermark, 1 + v);
        ck_assert_int_eq(sf_log_start_offset(log), 1 + v);
    }
    ck_assert_int_eq(listed(1, "plain", 0, -2)->Offset, 3);
    ck_assert_int_eq(fetched(fetch(11, "plain", 0, 2))->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
    ck_assert_int_eq(fetched(fetch(11, "plain", 0, 3))->LogStartOffset, 3);
    /* Above the high watermark: refused, nothing moves. */
    dp = delete_records(2, "plain", 0, 7);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
    ck_assert_int_eq(sf_log_start_offset(log), 3);
    /* Below the start: nothing moves back. */
    dp = delete_records(2, "plain", 0, 1);
    ck_assert_int_eq(dp->ErrorCode, 0);
    ck_assert_int_eq(dp->LowWatermark, 3);
    /* -1: up to the high watermark. */
    dp = delete_records(2, "plain", 0, -1);
    ck_assert_int_eq(dp->ErrorCode, 0);
    ck_assert_int_eq(dp->LowWatermark, 6);
    ck_assert_int_eq(sf_log_start_offset(log), 6);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_delete_records_refused) {
    sf_proto_DeleteRecordsResponse_DeleteRecordsPartitionResult_t *dp;
    /* A compacted topic keeps the latest record of every key. */
    dp = delete_records(1, "compact", 0, 0);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_POLICY_VIOLATION);
    ck_assert_int_eq(dp->LowWatermark, -1);
    dp = delete_records(1, "nosuch", 0, 0);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    dp = delete_records(1, "plain", 3, 0);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    dp = delete_records(1, "plain", 0, -2);
    ck_assert_int_eq(dp->ErrorCode, SF_KERR_OFFSET_OUT_OF_RANGE);
}
END_TEST

/* ---- OffsetForLeaderEpoch ---- */

typedef sf_proto_OffsetForLeaderEpochResponse_EpochEndOffset_t epoch_end_t;

/* Where @epoch ends in @topic-@partition, asked with @replica_id (v3+) and @current (v2+). */
static epoch_end_t *epoch_end(int16_t v, int32_t replica_id, const char *topic,
                              int32_t partition, int32_t current, int32_t epoch) {
    sf_proto_OffsetForLeaderEpochRequest_t req;
    sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderTopic_t lt;
    sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderPartition_t lp;
    sf_proto_OffsetForLeaderEpochResponse_t *resp;
    sf_proto_OffsetForLeaderEpochRequest_init(&req);
    sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderTopic_init(&lt);
    sf_proto_OffsetForLeaderEpochRequest_OffsetForLeaderPartition_init(&lp);
    req.ReplicaId = replica_id;
    req.TopicsCount = 1;
    req.Topics = &lt;
    lt.Topic = sf_slice_cstr(topic);
    lt.PartitionsCount = 1;
    lt.Partitions = &lp;
    lp.Partition = partition;
    lp.CurrentLeaderEpoch = current;
    lp.LeaderEpoch = epoch;
    resp = body_of(send_msg(SF_PROTO_API_OffsetForLeaderEpoch, v, &req));
    ck_assert_int_eq(resp->TopicsCount, 1);
    ck_assert_int_eq(resp->Topics[0].PartitionsCount, 1);
    ck_assert_int_eq(resp->Topics[0].Partitions[0].Partition, partition);
    return &resp->Topics[0].Partitions[0];
}

static void expect_epoch_end(int16_t v, int32_t epoch, int32_t want_epoch, int64_t want_end) {
    epoch_end_t *ep = epoch_end(v, -1, "plain", 0, -1, epoch);
    ck_assert_int_eq(ep->ErrorCode, 0);
    ck_assert_msg(ep->EndOffset == want_end, "v%d epoch %d: end %lld", v, epoch,
                  (long long)ep->EndOffset);
    /* v0 carries no epoch: the decoder's default. */
    ck_assert_int_eq(ep->LeaderEpoch, v >= 1 ? want_epoch : -1);
}

/* The snapshot's partition, changed in place for a test (the views share it). */
static sf_cluster_partition_t *snap_partition(const char *topic, int32_t partition) {
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(fb.snap, topic);
    ck_assert_ptr_nonnull(t);
    return (sf_cluster_partition_t *)&t->partitions[partition];
}

START_TEST(test_offset_for_leader_epoch) {
    sf_log_t *log = log_of("plain", 0);
    epoch_end_t *ep;
    sf_wbuf_t wb;
    int16_t v;

    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 3, "e0");
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 0); /* epoch 0: 0..2 */
    /* A leader change to epoch 2, recorded at the LEO as the replica manager does. */
    snap_partition("plain", 0)->leader_epoch = 2;
    refresh_view();
    sf_log_epoch_assign(log, 2, sf_log_end_offset(log));
    ck_assert_int_eq(produce_ok(9, "plain", 0, &wb), 3); /* epoch 2: 3..5 */
    for (v = 0; v <= 4; v++) {
        expect_epoch_end(v, 0, 0, 3);
        expect_epoch_end(v, 1, 0, 3); /* between: the epoch below, the next one's start */
        expect_epoch_end(v, 2, 2, 6); /* the current one: the LEO */
        expect_epoch_end(v, 3, -1, -1);
        expect_epoch_end(v, -1, -1, -1);
    }
    /* KIP-320: the asker's idea of the current epoch is checked from v2. */
    for (v = 2; v <= 4; v++) {
        ep = epoch_end(v, -1, "plain", 0, 1, 0);
        ck_assert_int_eq(ep->ErrorCode, SF_KERR_FENCED_LEADER_EPOCH);
        ck_assert_int_eq(ep->EndOffset, -1);
        ep = epoch_end(v, -1, "plain", 0, 3, 0);
        ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_LEADER_EPOCH);
        ep = epoch_end(v, 1, "plain", 0, 2, 0);
        ck_assert_int_eq(ep->ErrorCode, 0);
        ck_assert_int_eq(ep->EndOffset, 3);
    }
    /* A new epoch answers before its first write. */
    snap_partition("plain", 1)->leader_epoch = 4;
    refresh_view();
    sf_log_epoch_assign(log_of("plain", 1), 4, 0);
    ep = epoch_end(4, -1, "plain", 1, 4, 4);
    ck_assert_int_eq(ep->ErrorCode, 0);
    ck_assert_int_eq(ep->LeaderEpoch, 4);
    ck_assert_int_eq(ep->EndOffset, 0);
    sf_wbuf_free(&wb);
}
END_TEST

START_TEST(test_offset_for_leader_epoch_refused) {
    epoch_end_t *ep;
    ep = epoch_end(4, -1, "nosuch", 0, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ep = epoch_end(4, -1, "plain", 7, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ep = epoch_end(3, -2, "plain", 7, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    /* Led elsewhere now: only a debugging tool (ReplicaId -2, v3+) reads this replica. */
    sf_log_epoch_assign(log_of("plain", 1), 0, 0);
    snap_partition("plain", 1)->leader = 2;
    refresh_view();
    ep = epoch_end(4, -1, "plain", 1, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_NOT_LEADER_OR_FOLLOWER);
    ep = epoch_end(3, 1, "plain", 1, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_NOT_LEADER_OR_FOLLOWER);
    ep = epoch_end(2, -1, "plain", 1, -1, 0); /* no ReplicaId on the wire before v3 */
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_NOT_LEADER_OR_FOLLOWER);
    ep = epoch_end(3, -2, "plain", 1, -1, 0);
    ck_assert_int_eq(ep->ErrorCode, 0);
    ck_assert_int_eq(ep->LeaderEpoch, 0);
    ck_assert_int_eq(ep->EndOffset, 0);
    ep = epoch_end(4, -2, "plain", 1, 1, 0);
    ck_assert_int_eq(ep->ErrorCode, SF_KERR_UNKNOWN_LEADER_EPOCH);
}
END_TEST

/* ---- readiness and names ---- */

/* Before the first metadata snapshot, requests other than ApiVersions wait for it instead of
 * describing an empty cluster, and are answered once it arrives. */
START_TEST(test_dispatch_waits_for_metadata) {
    static const char *const plain[] = {"plain"};
    sf_proto_MetadataRequest_t req;
    sf_proto_MetadataRequest_MetadataRequestTopic_t t;
    sf_proto_MetadataResponse_t *resp;
    sf_view_t *view = fb.view;
    reply_t *r, *av, *first, *second;
    sf_wbuf_t wb;

    fb.view = NULL;
    sf_proto_MetadataRequest_init(&req);
    sf_proto_MetadataRequest_MetadataRequestTopic_init(&t);
    t.Name = sf_slice_cstr(plain[0]);
    req.TopicsCount = 1;
    req.Topics = &t;
    r = send_msg(SF_PROTO_API_Metadata, 4, &req);
    ck_assert_int_eq(r->state, R_PENDING);
    ck_assert_uint_eq(sf_purgatory_size(fb.purgatory), 1);
    av = send_raw(SF_PROTO_API_ApiVersions, 0, "", 0);
    ck_assert_int_eq(av->state, R_BODY);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    ck_assert_int_eq(r->state, R_PENDING);
    /* The snapshot arrives: the topic is there. */
    fb.view = view;
    sf_purgatory_notify(fb.purgatory, sf_pkey_metadata());
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    resp = body_of(r);
    ck_assert_int_eq(resp->TopicsCount, 1);
    ck_assert_int_eq(resp->Topics[0].ErrorCode, 0);
    ck_assert_int_eq(resp->Topics[0].PartitionsCount, 2);

    /* A request that arrives after the snapshot but while others still wait queues behind
     * them: two pipelined appends keep their order. */
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 1, "first");
    fb.view = NULL;
    first = produce(9, "plain", 0, wb.p, wb.len, 1);
    ck_assert_int_eq(first->state, R_PENDING);
    fb.view = view;
    sf_purgatory_notify(fb.purgatory, sf_pkey_metadata());
    second = produce(9, "plain", 0, wb.p, wb.len, 1);
    ck_assert_int_eq(second->state, R_PENDING);
    ck_assert_int_ge(event_base_loop(fb.base, EVLOOP_NONBLOCK), 0);
    ck_assert_int_eq(produced(first)->ErrorCode, 0);
    ck_assert_int_eq(produced(first)->BaseOffset, 0);
    ck_assert_int_eq(produced(second)->ErrorCode, 0);
    ck_assert_int_eq(produced(second)->BaseOffset, 1);
    sf_wbuf_free(&wb);
}
END_TEST

/* A NUL inside a topic name is refused as an invalid name wherever a name is taken, never cut
 * short to the topic before it ("plain\0x" is not "plain"). */
START_TEST(test_names_with_nul) {
    static const char nul_plain[] = "plain\0x", nul_new[] = "fresh\0x";
    sf_proto_MetadataRequest_t mreq;
    sf_proto_MetadataRequest_MetadataRequestTopic_t mt;
    sf_proto_MetadataResponse_t *mresp;
    sf_proto_CreateTopicsRequest_t creq;
    sf_proto_CreateTopicsRequest_CreatableTopic_t ct;
    sf_proto_CreateTopicsResponse_t *cresp;
    sf_proto_ProduceRequest_t preq;
    sf_proto_ProduceRequest_TopicProduceData_t td;
    sf_proto_ProduceRequest_PartitionProduceData_t pd;
    sf_wbuf_t wb;
    reply_t *r;
    int16_t v;

    for (v = 1; v <= 12; v += 3) {
        sf_proto_MetadataRequest_init(&mreq);
        sf_proto_MetadataRequest_MetadataRequestTopic_init(&mt);
        mreq.TopicsCount = 1;
        mreq.Topics = &mt;
        mreq.AllowAutoTopicCreation = true;
        mt.Name = (sf_slice_t){(const uint8_t *)nul_plain, sizeof(nul_plain) - 1};
        mresp = body_of(send_msg(SF_PROTO_API_Metadata, v, &mreq));
        ck_assert_int_eq(mresp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
        mt.Name = (sf_slice_t){(const uint8_t *)nul_new, sizeof(nul_new) - 1};
        mresp = body_of(send_msg(SF_PROTO_API_Metadata, v, &mreq));
        ck_assert_int_eq(mresp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
    }
    /* CreateTopics, validate-only and real. */
    for (v = 0; v <= 1; v++) {
        sf_proto_CreateTopicsRequest_init(&creq);
        sf_proto_CreateTopicsRequest_CreatableTopic_init(&ct);
        ct.Name = (sf_slice_t){(const uint8_t *)nul_new, sizeof(nul_new) - 1};
        ct.NumPartitions = 1;
        ct.ReplicationFactor = 1;
        creq.TopicsCount = 1;
        creq.Topics = &ct;
        creq.ValidateOnly = v;
        cresp = body_of(send_msg(SF_PROTO_API_CreateTopics, 4, &creq));
        ck_assert_int_eq(cresp->TopicsCount, 1);
        ck_assert_int_eq(cresp->Topics[0].ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
    }
    /* Produce: nothing reaches "plain". */
    sf_wbuf_init(&wb);
    put_simple(&wb, 0, 1, "nul");
    sf_proto_ProduceRequest_init(&preq);
    sf_proto_ProduceRequest_TopicProduceData_init(&td);
    sf_proto_ProduceRequest_PartitionProduceData_init(&pd);
    preq.TransactionalId = sf_slice_cstr(NULL);
    preq.Acks = 1;
    preq.TimeoutMs = 1000;
    preq.TopicDataCount = 1;
    preq.TopicData = &td;
    td.Name = (sf_slice_t){(const uint8_t *)nul_plain, sizeof(nul_plain) - 1};
    td.PartitionDataCount = 1;
    td.PartitionData = &pd;
    pd.Records.p = wb.p;
    pd.Records.len = (int32_t)wb.len;
    r = send_msg(SF_PROTO_API_Produce, 9, &preq);
    ck_assert_int_eq(produced(r)->ErrorCode, SF_KERR_INVALID_TOPIC_EXCEPTION);
    ck_assert_int_eq(sf_log_end_offset(log_of("plain", 0)), 0);
    sf_wbuf_free(&wb);
}
END_TEST

static Suite *kafka_admin_suite(void) {
    Suite *s = suite_create("kafka-admin");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_add_test(core, test_metadata);
    tcase_add_test(core, test_metadata_by_topic_id);
    tcase_add_test(core, test_describe_configs);
    tcase_add_test(core, test_dynamic_broker_configs);
    tcase_add_test(core, test_delete_records);
    tcase_add_test(core, test_offset_for_leader_epoch);
    tcase_add_test(limits, test_metadata_unknown_topics);
    tcase_add_test(limits, test_describe_configs_unknown);
    tcase_add_test(limits, test_delete_records_refused);
    tcase_add_test(limits, test_offset_for_leader_epoch_refused);
    tcase_add_test(limits, test_dispatch_waits_for_metadata);
    tcase_add_test(limits, test_names_with_nul);
    tcase_add_test(limits, test_controller_apis_not_controller);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    return kafka_fixture_main(kafka_admin_suite(), "kafka-admin");
}
