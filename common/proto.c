/* Kafka wire-protocol codec. One decode and one encode function per message, written field by
 * field in wire order with the version condition of each field inline, so each function reads
 * against ../shared/kafka-protocol/<Message>.json.
 *
 * Decoders read straight-line from the sticky sf_rbuf_t and check its error once at the end.
 * Loops over arrays also stop at the first error, so a malformed request costs at most one
 * pass over its bytes. Every array count is checked against the bytes that remain with a
 * minimum element size (the smallest encoding of one element in any supported version), so a
 * count from the wire can never make us allocate more than a small multiple of the request. */
#include "proto.h"

#include <string.h>

/* ------------------------------------------------------------------------------------------
 * Version table
 * ------------------------------------------------------------------------------------------ */

/* Broker-supported ranges (DESIGN.md §2) and the JSON's first flexible version. Sorted by key. */
static const sf_proto_api_t apis[] = {
    {SF_PROTO_API_Produce, "Produce", 0, 8, 9},
    {SF_PROTO_API_Fetch, "Fetch", 4, 11, 12},
    {SF_PROTO_API_ListOffsets, "ListOffsets", 1, 5, 6},
    {SF_PROTO_API_Metadata, "Metadata", 0, 8, 9},
    {SF_PROTO_API_ApiVersions, "ApiVersions", 0, 3, 3},
    {SF_PROTO_API_CreateTopics, "CreateTopics", 2, 4, 5},
    {SF_PROTO_API_DeleteTopics, "DeleteTopics", 1, 3, 4},
    {SF_PROTO_API_DescribeConfigs, "DescribeConfigs", 0, 3, 4},
    {SF_PROTO_API_AlterConfigs, "AlterConfigs", 0, 1, 2},
    {SF_PROTO_API_CreatePartitions, "CreatePartitions", 0, 1, 2},
    {SF_PROTO_API_IncrementalAlterConfigs, "IncrementalAlterConfigs", 0, 1, 1},
};

const sf_proto_api_t *sf_proto_api_get(int16_t api_key) {
    size_t i;
    for (i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
        if (apis[i].ApiKey == api_key)
            return &apis[i];
    return NULL;
}

const sf_proto_api_t *sf_proto_api_all(size_t *n) {
    *n = sizeof(apis) / sizeof(apis[0]);
    return apis;
}

int sf_proto_version_supported(int16_t api_key, int16_t version) {
    const sf_proto_api_t *api = sf_proto_api_get(api_key);
    return api && version >= api->MinVersion && version <= api->MaxVersion;
}

int sf_proto_version_flexible(int16_t api_key, int16_t version) {
    const sf_proto_api_t *api = sf_proto_api_get(api_key);
    return sf_proto_version_supported(api_key, version) && api->FlexibleMin >= 0 &&
           version >= api->FlexibleMin;
}

const char *sf_proto_api_name(int16_t api_key) {
    static const char *const names[] = {
        "Produce", "Fetch", "ListOffsets", "Metadata", "LeaderAndIsr", "StopReplica",
        "UpdateMetadata", "ControlledShutdown", "OffsetCommit", "OffsetFetch",
        "FindCoordinator", "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup",
        "DescribeGroups", "ListGroups", "SaslHandshake", "ApiVersions", "CreateTopics",
        "DeleteTopics", "DeleteRecords", "InitProducerId", "OffsetForLeaderEpoch",
        "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "WriteTxnMarkers",
        "TxnOffsetCommit", "DescribeAcls", "CreateAcls", "DeleteAcls", "DescribeConfigs",
        "AlterConfigs", "AlterReplicaLogDirs", "DescribeLogDirs", "SaslAuthenticate",
        "CreatePartitions", "CreateDelegationToken", "RenewDelegationToken",
        "ExpireDelegationToken", "DescribeDelegationToken", "DeleteGroups", "ElectLeaders",
        "IncrementalAlterConfigs", "AlterPartitionReassignments",
        "ListPartitionReassignments", "OffsetDelete", "DescribeClientQuotas",
        "AlterClientQuotas", "DescribeUserScramCredentials", "AlterUserScramCredentials",
    };
    if (api_key >= 0 && (size_t)api_key < sizeof(names) / sizeof(names[0]))
        return names[api_key];
    switch (api_key) {
    case SF_PROTO_API_AlterPartition: return "AlterPartition";
    case SF_PROTO_API_UpdateFeatures: return "UpdateFeatures";
    case SF_PROTO_API_DescribeCluster: return "DescribeCluster";
    case SF_PROTO_API_DescribeProducers: return "DescribeProducers";
    case SF_PROTO_API_DescribeTransactions: return "DescribeTransactions";
    case SF_PROTO_API_ListTransactions: return "ListTransactions";
    case SF_PROTO_API_AllocateProducerIds: return "AllocateProducerIds";
    default: return "Unknown";
    }
}

/* ------------------------------------------------------------------------------------------
 * Decoding helpers
 * ------------------------------------------------------------------------------------------ */

typedef struct dec {
    sf_rbuf_t *rb;
    sf_arena_t *arena;
    int flex;  /* compact strings/arrays and tagged fields */
    int nomem; /* the arena refused an allocation */
} dec_t;

/* Codec versions are 0..MaxVersion: a client may need to speak a version below the broker's
 * advertised minimum (e.g. Produce v0-2 are advertised but rejected). */
static int dec_begin(dec_t *d, sf_rbuf_t *rb, sf_arena_t *arena, int16_t api_key,
                     int16_t version) {
    const sf_proto_api_t *api = sf_proto_api_get(api_key);
    if (!api || version < 0 || version > api->MaxVersion)
        return SF_ERR_UNSUPPORTED;
    d->rb = rb;
    d->arena = arena;
    d->flex = api->FlexibleMin >= 0 && version >= api->FlexibleMin;
    d->nomem = 0;
    return SF_OK;
}

static int dec_end(const dec_t *d) {
    if (d->nomem)
        return SF_ERR_NOMEM;
    return d->rb->err ? SF_ERR_MALFORMED : SF_OK;
}

static bool r_bool(dec_t *d) {
    return sf_rbuf_i8(d->rb) != 0;
}

/* Compact strings are capped at INT16_MAX bytes like the legacy ones (Kafka's readers reject
 * longer), so whatever decodes can be encoded again in any version. */
static sf_slice_t r_str(dec_t *d, int nullable) {
    sf_slice_t s;
    if (!d->flex)
        return sf_rbuf_string(d->rb, nullable);
    s = sf_rbuf_compact_string(d->rb, nullable);
    if (s.len > INT16_MAX)
        sf_rbuf_fail(d->rb);
    return s;
}

static sf_slice_t r_bytes(dec_t *d, int nullable) {
    return d->flex ? sf_rbuf_compact_bytes(d->rb, nullable) : sf_rbuf_bytes(d->rb, nullable);
}

/* An array count (-1 for null or on error); @min is the smallest encoding of one element. */
static int32_t r_arr(dec_t *d, size_t min, int nullable) {
    return d->flex ? sf_rbuf_compact_array_len(d->rb, min, nullable)
                   : sf_rbuf_array_len(d->rb, min, nullable);
}

/* Zeroed storage for @n elements of an array just counted; NULL when there are none. On
 * arena failure the reader is failed too, so the loops that follow stop at once. */
static void *r_alloc(dec_t *d, int32_t n, size_t size) {
    void *p;
    if (n <= 0 || d->rb->err)
        return NULL;
    p = sf_arena_calloc(d->arena, (size_t)n, size);
    if (!p) {
        d->nomem = 1;
        sf_rbuf_fail(d->rb);
    }
    return p;
}

/* Read an array count and allocate its elements: (count, ptr) = ... */
#define R_ARRAY(d, count, ptr, min, nullable)                                                 \
    ((count) = r_arr((d), (min), (nullable)), (ptr) = r_alloc((d), (count), sizeof(*(ptr))))

static int32_t r_i32s(dec_t *d, int32_t **out, int nullable) {
    int32_t n, i;
    R_ARRAY(d, n, *out, 4, nullable);
    for (i = 0; i < n && !d->rb->err; i++)
        (*out)[i] = sf_rbuf_i32(d->rb);
    return n;
}

static int32_t r_i64s(dec_t *d, int64_t **out, int nullable) {
    int32_t n, i;
    R_ARRAY(d, n, *out, 8, nullable);
    for (i = 0; i < n && !d->rb->err; i++)
        (*out)[i] = sf_rbuf_i64(d->rb);
    return n;
}

static int32_t r_strs(dec_t *d, sf_slice_t **out, int nullable) {
    int32_t n, i;
    R_ARRAY(d, n, *out, d->flex ? 1 : 2, nullable);
    for (i = 0; i < n && !d->rb->err; i++)
        (*out)[i] = r_str(d, 0);
    return n;
}

static void r_tags(dec_t *d) {
    if (d->flex)
        sf_rbuf_skip_tags(d->rb);
}

static const sf_slice_t null_slice = {NULL, -1};
static const sf_slice_t empty_slice = {(const uint8_t *)"", 0};

/* ------------------------------------------------------------------------------------------
 * Encoding helpers
 * ------------------------------------------------------------------------------------------ */

typedef struct enc {
    sf_wbuf_t *wb;
    int flex;
    int invalid; /* the struct holds something the version cannot carry */
} enc_t;

static int enc_begin(enc_t *e, sf_wbuf_t *wb, int16_t api_key, int16_t version) {
    const sf_proto_api_t *api = sf_proto_api_get(api_key);
    if (!api || version < 0 || version > api->MaxVersion)
        return SF_ERR_UNSUPPORTED;
    e->wb = wb;
    e->flex = api->FlexibleMin >= 0 && version >= api->FlexibleMin;
    e->invalid = 0;
    return SF_OK;
}

static int enc_end(const enc_t *e) {
    if (e->wb->err)
        return e->wb->err;
    return e->invalid ? SF_ERR_INVALID : SF_OK;
}

static void w_bool(enc_t *e, bool v) {
    sf_wbuf_i8(e->wb, v ? 1 : 0);
}

static void w_str(enc_t *e, sf_slice_t s, int nullable) {
    if ((s.len < 0 && !nullable) || s.len > INT16_MAX || (s.len > 0 && !s.p)) {
        e->invalid = 1;
        s = empty_slice;
    }
    if (e->flex)
        sf_wbuf_compact_string(e->wb, s);
    else
        sf_wbuf_string(e->wb, s);
}

static void w_bytes(enc_t *e, sf_slice_t s, int nullable) {
    if ((s.len < 0 && !nullable) || (s.len > 0 && !s.p)) {
        e->invalid = 1;
        s = empty_slice;
    }
    if (e->flex)
        sf_wbuf_compact_bytes(e->wb, s);
    else
        sf_wbuf_bytes(e->wb, s);
}

/* Write an array count; returns how many elements the caller must write next. */
static int32_t w_arr(enc_t *e, int32_t n, const void *p, int nullable) {
    if ((n < 0 && !nullable) || (n > 0 && !p)) {
        e->invalid = 1;
        n = 0;
    }
    if (n < 0)
        n = -1;
    if (e->flex)
        sf_wbuf_uvarint(e->wb, (uint32_t)(n + 1));
    else
        sf_wbuf_i32(e->wb, n);
    return n < 0 ? 0 : n;
}

static void w_i32s(enc_t *e, int32_t n, const int32_t *v, int nullable) {
    int32_t i, cnt = w_arr(e, n, v, nullable);
    for (i = 0; i < cnt; i++)
        sf_wbuf_i32(e->wb, v[i]);
}

static void w_i64s(enc_t *e, int32_t n, const int64_t *v, int nullable) {
    int32_t i, cnt = w_arr(e, n, v, nullable);
    for (i = 0; i < cnt; i++)
        sf_wbuf_i64(e->wb, v[i]);
}

static void w_strs(enc_t *e, int32_t n, const sf_slice_t *v, int nullable) {
    int32_t i, cnt = w_arr(e, n, v, nullable);
    for (i = 0; i < cnt; i++)
        w_str(e, v[i], 0);
}

static void w_tags(enc_t *e) {
    if (e->flex)
        sf_wbuf_tags_empty(e->wb);
}

/* ------------------------------------------------------------------------------------------
 * Headers
 * ------------------------------------------------------------------------------------------ */

/* Response header v1 follows the flexible versions of every API except ApiVersions, whose
 * response header stays v0 so a client can always read the reply to its first request
 * (KIP-511). */
static int response_header_flexible(int16_t api_key, int16_t api_version) {
    return api_key != SF_PROTO_API_ApiVersions && sf_proto_version_flexible(api_key, api_version);
}

int sf_proto_RequestHeader_decode(sf_rbuf_t *rb, sf_proto_RequestHeader_t *hdr) {
    hdr->RequestApiKey = sf_rbuf_i16(rb);
    hdr->RequestApiVersion = sf_rbuf_i16(rb);
    hdr->CorrelationId = sf_rbuf_i32(rb);
    hdr->ClientId = sf_rbuf_string(rb, 1); /* a legacy STRING in header v2 too */
    /* Header v2 only for versions we speak: for an unsupported one we cannot know the layout,
     * and the body is not read anyway (the caller answers UNSUPPORTED_VERSION). */
    if (sf_proto_version_flexible(hdr->RequestApiKey, hdr->RequestApiVersion))
        sf_rbuf_skip_tags(rb);
    return rb->err ? SF_ERR_MALFORMED : SF_OK;
}

int sf_proto_RequestHeader_encode(sf_wbuf_t *wb, const sf_proto_RequestHeader_t *hdr) {
    sf_wbuf_i16(wb, hdr->RequestApiKey);
    sf_wbuf_i16(wb, hdr->RequestApiVersion);
    sf_wbuf_i32(wb, hdr->CorrelationId);
    sf_wbuf_string(wb, hdr->ClientId);
    if (sf_proto_version_flexible(hdr->RequestApiKey, hdr->RequestApiVersion))
        sf_wbuf_tags_empty(wb);
    return wb->err;
}

void sf_proto_ResponseHeader_encode(sf_wbuf_t *wb, int16_t api_key, int16_t api_version,
                                    int32_t correlation_id) {
    sf_wbuf_i32(wb, correlation_id);
    if (response_header_flexible(api_key, api_version))
        sf_wbuf_tags_empty(wb);
}

int sf_proto_ResponseHeader_decode(sf_rbuf_t *rb, int16_t api_key, int16_t api_version,
                                   int32_t *corr) {
    *corr = sf_rbuf_i32(rb);
    if (response_header_flexible(api_key, api_version))
        sf_rbuf_skip_tags(rb);
    return rb->err ? SF_ERR_MALFORMED : SF_OK;
}

/* ------------------------------------------------------------------------------------------
 * Produce
 * ------------------------------------------------------------------------------------------ */

int sf_proto_ProduceRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                   sf_proto_ProduceRequest_t *req) {
    dec_t d;
    int32_t i, j;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_Produce, version)))
        return rc;
    req->TransactionalId = version >= 3 ? r_str(&d, 1) : null_slice;
    req->Acks = sf_rbuf_i16(rb);
    req->TimeoutMs = sf_rbuf_i32(rb);
    R_ARRAY(&d, req->TopicDataCount, req->TopicData, 6, 0);
    for (i = 0; i < req->TopicDataCount && !rb->err; i++) {
        sf_proto_ProduceRequest_Topic_t *topic = &req->TopicData[i];
        topic->Name = r_str(&d, 0);
        R_ARRAY(&d, topic->PartitionDataCount, topic->PartitionData, 8, 0);
        for (j = 0; j < topic->PartitionDataCount && !rb->err; j++) {
            sf_proto_ProduceRequest_Partition_t *part = &topic->PartitionData[j];
            part->Index = sf_rbuf_i32(rb);
            part->Records = r_bytes(&d, 1);
        }
    }
    return dec_end(&d);
}

int sf_proto_ProduceRequest_encode(sf_wbuf_t *wb, int16_t version,
                                   const sf_proto_ProduceRequest_t *req) {
    enc_t e;
    int32_t i, j, ntopics, nparts;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_Produce, version)))
        return rc;
    if (version >= 3)
        w_str(&e, req->TransactionalId, 1);
    sf_wbuf_i16(wb, req->Acks);
    sf_wbuf_i32(wb, req->TimeoutMs);
    ntopics = w_arr(&e, req->TopicDataCount, req->TopicData, 0);
    for (i = 0; i < ntopics; i++) {
        const sf_proto_ProduceRequest_Topic_t *topic = &req->TopicData[i];
        w_str(&e, topic->Name, 0);
        nparts = w_arr(&e, topic->PartitionDataCount, topic->PartitionData, 0);
        for (j = 0; j < nparts; j++) {
            const sf_proto_ProduceRequest_Partition_t *part = &topic->PartitionData[j];
            sf_wbuf_i32(wb, part->Index);
            w_bytes(&e, part->Records, 1);
        }
    }
    return enc_end(&e);
}

int sf_proto_ProduceResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                    sf_proto_ProduceResponse_t *resp) {
    dec_t d;
    int32_t i, j, k;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_Produce, version)))
        return rc;
    R_ARRAY(&d, resp->ResponsesCount, resp->Responses, 6, 0);
    for (i = 0; i < resp->ResponsesCount && !rb->err; i++) {
        sf_proto_ProduceResponse_Topic_t *topic = &resp->Responses[i];
        topic->Name = r_str(&d, 0);
        R_ARRAY(&d, topic->PartitionResponsesCount, topic->PartitionResponses, 14, 0);
        for (j = 0; j < topic->PartitionResponsesCount && !rb->err; j++) {
            sf_proto_ProduceResponse_Partition_t *part = &topic->PartitionResponses[j];
            part->Index = sf_rbuf_i32(rb);
            part->ErrorCode = sf_rbuf_i16(rb);
            part->BaseOffset = sf_rbuf_i64(rb);
            part->LogAppendTimeMs = version >= 2 ? sf_rbuf_i64(rb) : -1;
            part->LogStartOffset = version >= 5 ? sf_rbuf_i64(rb) : -1;
            if (version >= 8)
                R_ARRAY(&d, part->RecordErrorsCount, part->RecordErrors, 6, 0);
            for (k = 0; k < part->RecordErrorsCount && !rb->err; k++) {
                part->RecordErrors[k].BatchIndex = sf_rbuf_i32(rb);
                part->RecordErrors[k].BatchIndexErrorMessage = r_str(&d, 1);
            }
            part->ErrorMessage = version >= 8 ? r_str(&d, 1) : null_slice;
        }
    }
    resp->ThrottleTimeMs = version >= 1 ? sf_rbuf_i32(rb) : 0;
    return dec_end(&d);
}

int sf_proto_ProduceResponse_encode(sf_wbuf_t *wb, int16_t version,
                                    const sf_proto_ProduceResponse_t *resp) {
    enc_t e;
    int32_t i, j, k, ntopics, nparts, nerrs;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_Produce, version)))
        return rc;
    ntopics = w_arr(&e, resp->ResponsesCount, resp->Responses, 0);
    for (i = 0; i < ntopics; i++) {
        const sf_proto_ProduceResponse_Topic_t *topic = &resp->Responses[i];
        w_str(&e, topic->Name, 0);
        nparts = w_arr(&e, topic->PartitionResponsesCount, topic->PartitionResponses, 0);
        for (j = 0; j < nparts; j++) {
            const sf_proto_ProduceResponse_Partition_t *part = &topic->PartitionResponses[j];
            sf_wbuf_i32(wb, part->Index);
            sf_wbuf_i16(wb, part->ErrorCode);
            sf_wbuf_i64(wb, part->BaseOffset);
            if (version >= 2)
                sf_wbuf_i64(wb, part->LogAppendTimeMs);
            if (version >= 5)
                sf_wbuf_i64(wb, part->LogStartOffset);
            nerrs = version >= 8 ? w_arr(&e, part->RecordErrorsCount, part->RecordErrors, 0) : 0;
            for (k = 0; k < nerrs; k++) {
                sf_wbuf_i32(wb, part->RecordErrors[k].BatchIndex);
                w_str(&e, part->RecordErrors[k].BatchIndexErrorMessage, 1);
            }
            if (version >= 8)
                w_str(&e, part->ErrorMessage, 1);
        }
    }
    if (version >= 1)
        sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    return enc_end(&e);
}

/* ------------------------------------------------------------------------------------------
 * Fetch
 * ------------------------------------------------------------------------------------------ */

int sf_proto_FetchRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                 sf_proto_FetchRequest_t *req) {
    dec_t d;
    int32_t i, j;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_Fetch, version)))
        return rc;
    req->ReplicaId = sf_rbuf_i32(rb);
    req->MaxWaitMs = sf_rbuf_i32(rb);
    req->MinBytes = sf_rbuf_i32(rb);
    req->MaxBytes = version >= 3 ? sf_rbuf_i32(rb) : INT32_MAX;
    req->IsolationLevel = version >= 4 ? sf_rbuf_i8(rb) : 0;
    req->SessionId = version >= 7 ? sf_rbuf_i32(rb) : 0;
    req->SessionEpoch = version >= 7 ? sf_rbuf_i32(rb) : -1;
    R_ARRAY(&d, req->TopicsCount, req->Topics, 6, 0);
    for (i = 0; i < req->TopicsCount && !rb->err; i++) {
        sf_proto_FetchRequest_Topic_t *topic = &req->Topics[i];
        topic->Topic = r_str(&d, 0);
        R_ARRAY(&d, topic->PartitionsCount, topic->Partitions, 16, 0);
        for (j = 0; j < topic->PartitionsCount && !rb->err; j++) {
            sf_proto_FetchRequest_Partition_t *part = &topic->Partitions[j];
            part->Partition = sf_rbuf_i32(rb);
            part->CurrentLeaderEpoch = version >= 9 ? sf_rbuf_i32(rb) : -1;
            part->FetchOffset = sf_rbuf_i64(rb);
            part->LogStartOffset = version >= 5 ? sf_rbuf_i64(rb) : -1;
            part->PartitionMaxBytes = sf_rbuf_i32(rb);
        }
    }
    if (version >= 7)
        R_ARRAY(&d, req->ForgottenTopicsDataCount, req->ForgottenTopicsData, 6, 0);
    for (i = 0; i < req->ForgottenTopicsDataCount && !rb->err; i++) {
        sf_proto_FetchRequest_ForgottenTopic_t *forgotten = &req->ForgottenTopicsData[i];
        forgotten->Topic = r_str(&d, 0);
        forgotten->PartitionsCount = r_i32s(&d, &forgotten->Partitions, 0);
    }
    req->RackId = version >= 11 ? r_str(&d, 0) : empty_slice;
    return dec_end(&d);
}

int sf_proto_FetchRequest_encode(sf_wbuf_t *wb, int16_t version,
                                 const sf_proto_FetchRequest_t *req) {
    enc_t e;
    int32_t i, j, ntopics, nparts, nforgotten;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_Fetch, version)))
        return rc;
    sf_wbuf_i32(wb, req->ReplicaId);
    sf_wbuf_i32(wb, req->MaxWaitMs);
    sf_wbuf_i32(wb, req->MinBytes);
    if (version >= 3)
        sf_wbuf_i32(wb, req->MaxBytes);
    if (version >= 4)
        sf_wbuf_i8(wb, req->IsolationLevel);
    if (version >= 7)
        sf_wbuf_i32(wb, req->SessionId);
    if (version >= 7)
        sf_wbuf_i32(wb, req->SessionEpoch);
    ntopics = w_arr(&e, req->TopicsCount, req->Topics, 0);
    for (i = 0; i < ntopics; i++) {
        const sf_proto_FetchRequest_Topic_t *topic = &req->Topics[i];
        w_str(&e, topic->Topic, 0);
        nparts = w_arr(&e, topic->PartitionsCount, topic->Partitions, 0);
        for (j = 0; j < nparts; j++) {
            const sf_proto_FetchRequest_Partition_t *part = &topic->Partitions[j];
            sf_wbuf_i32(wb, part->Partition);
            if (version >= 9)
                sf_wbuf_i32(wb, part->CurrentLeaderEpoch);
            sf_wbuf_i64(wb, part->FetchOffset);
            if (version >= 5)
                sf_wbuf_i64(wb, part->LogStartOffset);
            sf_wbuf_i32(wb, part->PartitionMaxBytes);
        }
    }
    nforgotten = version >= 7 ? w_arr(&e, req->ForgottenTopicsDataCount,
                                      req->ForgottenTopicsData, 0) : 0;
    for (i = 0; i < nforgotten; i++) {
        const sf_proto_FetchRequest_ForgottenTopic_t *forgotten = &req->ForgottenTopicsData[i];
        w_str(&e, forgotten->Topic, 0);
        w_i32s(&e, forgotten->PartitionsCount, forgotten->Partitions, 0);
    }
    if (version >= 11)
        w_str(&e, req->RackId, 0);
    return enc_end(&e);
}

int sf_proto_FetchResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                  sf_proto_FetchResponse_t *resp) {
    dec_t d;
    int32_t i, j, k;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_Fetch, version)))
        return rc;
    resp->ThrottleTimeMs = version >= 1 ? sf_rbuf_i32(rb) : 0;
    resp->ErrorCode = version >= 7 ? sf_rbuf_i16(rb) : 0;
    resp->SessionId = version >= 7 ? sf_rbuf_i32(rb) : 0;
    R_ARRAY(&d, resp->ResponsesCount, resp->Responses, 6, 0);
    for (i = 0; i < resp->ResponsesCount && !rb->err; i++) {
        sf_proto_FetchResponse_Topic_t *topic = &resp->Responses[i];
        topic->Topic = r_str(&d, 0);
        R_ARRAY(&d, topic->PartitionsCount, topic->Partitions, 18, 0);
        for (j = 0; j < topic->PartitionsCount && !rb->err; j++) {
            sf_proto_FetchResponse_Partition_t *part = &topic->Partitions[j];
            part->PartitionIndex = sf_rbuf_i32(rb);
            part->ErrorCode = sf_rbuf_i16(rb);
            part->HighWatermark = sf_rbuf_i64(rb);
            part->LastStableOffset = version >= 4 ? sf_rbuf_i64(rb) : -1;
            part->LogStartOffset = version >= 5 ? sf_rbuf_i64(rb) : -1;
            if (version >= 4)
                R_ARRAY(&d, part->AbortedTransactionsCount, part->AbortedTransactions, 16, 1);
            for (k = 0; k < part->AbortedTransactionsCount && !rb->err; k++) {
                part->AbortedTransactions[k].ProducerId = sf_rbuf_i64(rb);
                part->AbortedTransactions[k].FirstOffset = sf_rbuf_i64(rb);
            }
            part->PreferredReadReplica = version >= 11 ? sf_rbuf_i32(rb) : -1;
            part->Records = r_bytes(&d, 1);
            part->RecordsRef = NULL;
        }
    }
    return dec_end(&d);
}

/* Records either copied from memory or, with a ref, spliced in from elsewhere (a log file
 * range): only the length prefix is written here. */
static void w_records(enc_t *e, sf_slice_t records, void *ref) {
    if (!ref) {
        w_bytes(e, records, 1);
        return;
    }
    if (records.len < 0) {
        e->invalid = 1;
        records.len = 0;
    }
    if (e->flex)
        sf_wbuf_uvarint(e->wb, (uint32_t)records.len + 1);
    else
        sf_wbuf_i32(e->wb, records.len);
    sf_wbuf_splice(e->wb, ref, (size_t)records.len);
}

int sf_proto_FetchResponse_encode(sf_wbuf_t *wb, int16_t version,
                                  const sf_proto_FetchResponse_t *resp) {
    enc_t e;
    int32_t i, j, k, ntopics, nparts, naborted;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_Fetch, version)))
        return rc;
    if (version >= 1)
        sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    if (version >= 7)
        sf_wbuf_i16(wb, resp->ErrorCode);
    if (version >= 7)
        sf_wbuf_i32(wb, resp->SessionId);
    ntopics = w_arr(&e, resp->ResponsesCount, resp->Responses, 0);
    for (i = 0; i < ntopics; i++) {
        const sf_proto_FetchResponse_Topic_t *topic = &resp->Responses[i];
        w_str(&e, topic->Topic, 0);
        nparts = w_arr(&e, topic->PartitionsCount, topic->Partitions, 0);
        for (j = 0; j < nparts; j++) {
            const sf_proto_FetchResponse_Partition_t *part = &topic->Partitions[j];
            sf_wbuf_i32(wb, part->PartitionIndex);
            sf_wbuf_i16(wb, part->ErrorCode);
            sf_wbuf_i64(wb, part->HighWatermark);
            if (version >= 4)
                sf_wbuf_i64(wb, part->LastStableOffset);
            if (version >= 5)
                sf_wbuf_i64(wb, part->LogStartOffset);
            naborted = version >= 4 ? w_arr(&e, part->AbortedTransactionsCount,
                                            part->AbortedTransactions, 1) : 0;
            for (k = 0; k < naborted; k++) {
                sf_wbuf_i64(wb, part->AbortedTransactions[k].ProducerId);
                sf_wbuf_i64(wb, part->AbortedTransactions[k].FirstOffset);
            }
            if (version >= 11)
                sf_wbuf_i32(wb, part->PreferredReadReplica);
            w_records(&e, part->Records, part->RecordsRef);
        }
    }
    return enc_end(&e);
}

/* ------------------------------------------------------------------------------------------
 * ListOffsets
 * ------------------------------------------------------------------------------------------ */

int sf_proto_ListOffsetsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                       sf_proto_ListOffsetsRequest_t *req) {
    dec_t d;
    int32_t i, j;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_ListOffsets, version)))
        return rc;
    req->ReplicaId = sf_rbuf_i32(rb);
    req->IsolationLevel = version >= 2 ? sf_rbuf_i8(rb) : 0;
    R_ARRAY(&d, req->TopicsCount, req->Topics, 6, 0);
    for (i = 0; i < req->TopicsCount && !rb->err; i++) {
        sf_proto_ListOffsetsRequest_Topic_t *topic = &req->Topics[i];
        topic->Name = r_str(&d, 0);
        R_ARRAY(&d, topic->PartitionsCount, topic->Partitions, 12, 0);
        for (j = 0; j < topic->PartitionsCount && !rb->err; j++) {
            sf_proto_ListOffsetsRequest_Partition_t *part = &topic->Partitions[j];
            part->PartitionIndex = sf_rbuf_i32(rb);
            part->CurrentLeaderEpoch = version >= 4 ? sf_rbuf_i32(rb) : -1;
            part->Timestamp = sf_rbuf_i64(rb);
            part->MaxNumOffsets = version == 0 ? sf_rbuf_i32(rb) : 1;
        }
    }
    return dec_end(&d);
}

int sf_proto_ListOffsetsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                       const sf_proto_ListOffsetsRequest_t *req) {
    enc_t e;
    int32_t i, j, ntopics, nparts;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_ListOffsets, version)))
        return rc;
    sf_wbuf_i32(wb, req->ReplicaId);
    if (version >= 2)
        sf_wbuf_i8(wb, req->IsolationLevel);
    ntopics = w_arr(&e, req->TopicsCount, req->Topics, 0);
    for (i = 0; i < ntopics; i++) {
        const sf_proto_ListOffsetsRequest_Topic_t *topic = &req->Topics[i];
        w_str(&e, topic->Name, 0);
        nparts = w_arr(&e, topic->PartitionsCount, topic->Partitions, 0);
        for (j = 0; j < nparts; j++) {
            const sf_proto_ListOffsetsRequest_Partition_t *part = &topic->Partitions[j];
            sf_wbuf_i32(wb, part->PartitionIndex);
            if (version >= 4)
                sf_wbuf_i32(wb, part->CurrentLeaderEpoch);
            sf_wbuf_i64(wb, part->Timestamp);
            if (version == 0)
                sf_wbuf_i32(wb, part->MaxNumOffsets);
        }
    }
    return enc_end(&e);
}

int sf_proto_ListOffsetsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_ListOffsetsResponse_t *resp) {
    dec_t d;
    int32_t i, j;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_ListOffsets, version)))
        return rc;
    resp->ThrottleTimeMs = version >= 2 ? sf_rbuf_i32(rb) : 0;
    R_ARRAY(&d, resp->TopicsCount, resp->Topics, 6, 0);
    for (i = 0; i < resp->TopicsCount && !rb->err; i++) {
        sf_proto_ListOffsetsResponse_Topic_t *topic = &resp->Topics[i];
        topic->Name = r_str(&d, 0);
        R_ARRAY(&d, topic->PartitionsCount, topic->Partitions, 10, 0);
        for (j = 0; j < topic->PartitionsCount && !rb->err; j++) {
            sf_proto_ListOffsetsResponse_Partition_t *part = &topic->Partitions[j];
            part->PartitionIndex = sf_rbuf_i32(rb);
            part->ErrorCode = sf_rbuf_i16(rb);
            if (version == 0)
                part->OldStyleOffsetsCount = r_i64s(&d, &part->OldStyleOffsets, 0);
            part->Timestamp = version >= 1 ? sf_rbuf_i64(rb) : -1;
            part->Offset = version >= 1 ? sf_rbuf_i64(rb) : -1;
            part->LeaderEpoch = version >= 4 ? sf_rbuf_i32(rb) : -1;
        }
    }
    return dec_end(&d);
}

int sf_proto_ListOffsetsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_ListOffsetsResponse_t *resp) {
    enc_t e;
    int32_t i, j, ntopics, nparts;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_ListOffsets, version)))
        return rc;
    if (version >= 2)
        sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    ntopics = w_arr(&e, resp->TopicsCount, resp->Topics, 0);
    for (i = 0; i < ntopics; i++) {
        const sf_proto_ListOffsetsResponse_Topic_t *topic = &resp->Topics[i];
        w_str(&e, topic->Name, 0);
        nparts = w_arr(&e, topic->PartitionsCount, topic->Partitions, 0);
        for (j = 0; j < nparts; j++) {
            const sf_proto_ListOffsetsResponse_Partition_t *part = &topic->Partitions[j];
            sf_wbuf_i32(wb, part->PartitionIndex);
            sf_wbuf_i16(wb, part->ErrorCode);
            if (version == 0)
                w_i64s(&e, part->OldStyleOffsetsCount, part->OldStyleOffsets, 0);
            if (version >= 1)
                sf_wbuf_i64(wb, part->Timestamp);
            if (version >= 1)
                sf_wbuf_i64(wb, part->Offset);
            if (version >= 4)
                sf_wbuf_i32(wb, part->LeaderEpoch);
        }
    }
    return enc_end(&e);
}

/* ------------------------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------------------------ */

int sf_proto_MetadataRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                    sf_proto_MetadataRequest_t *req) {
    dec_t d;
    int32_t i;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_Metadata, version)))
        return rc;
    R_ARRAY(&d, req->TopicsCount, req->Topics, 2, version >= 1);
    for (i = 0; i < req->TopicsCount && !rb->err; i++)
        req->Topics[i].Name = r_str(&d, 0);
    /* v0 has no null array: an empty one asks for all topics. */
    if (version == 0 && req->TopicsCount == 0)
        req->TopicsCount = -1;
    req->AllowAutoTopicCreation = version >= 4 ? r_bool(&d) : true;
    req->IncludeClusterAuthorizedOperations = version >= 8 ? r_bool(&d) : false;
    req->IncludeTopicAuthorizedOperations = version >= 8 ? r_bool(&d) : false;
    return dec_end(&d);
}

int sf_proto_MetadataRequest_encode(sf_wbuf_t *wb, int16_t version,
                                    const sf_proto_MetadataRequest_t *req) {
    enc_t e;
    int32_t i, ntopics;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_Metadata, version)))
        return rc;
    if (version == 0 && req->TopicsCount < 0)
        ntopics = w_arr(&e, 0, NULL, 0); /* all topics: v0 says it with an empty array */
    else
        ntopics = w_arr(&e, req->TopicsCount, req->Topics, version >= 1);
    for (i = 0; i < ntopics; i++)
        w_str(&e, req->Topics[i].Name, 0);
    if (version >= 4)
        w_bool(&e, req->AllowAutoTopicCreation);
    if (version >= 8)
        w_bool(&e, req->IncludeClusterAuthorizedOperations);
    if (version >= 8)
        w_bool(&e, req->IncludeTopicAuthorizedOperations);
    return enc_end(&e);
}

int sf_proto_MetadataResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                     sf_proto_MetadataResponse_t *resp) {
    dec_t d;
    int32_t i, j;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_Metadata, version)))
        return rc;
    resp->ThrottleTimeMs = version >= 3 ? sf_rbuf_i32(rb) : 0;
    R_ARRAY(&d, resp->BrokersCount, resp->Brokers, 10, 0);
    for (i = 0; i < resp->BrokersCount && !rb->err; i++) {
        sf_proto_MetadataResponse_Broker_t *broker = &resp->Brokers[i];
        broker->NodeId = sf_rbuf_i32(rb);
        broker->Host = r_str(&d, 0);
        broker->Port = sf_rbuf_i32(rb);
        broker->Rack = version >= 1 ? r_str(&d, 1) : null_slice;
    }
    resp->ClusterId = version >= 2 ? r_str(&d, 1) : null_slice;
    resp->ControllerId = version >= 1 ? sf_rbuf_i32(rb) : -1;
    R_ARRAY(&d, resp->TopicsCount, resp->Topics, 8, 0);
    for (i = 0; i < resp->TopicsCount && !rb->err; i++) {
        sf_proto_MetadataResponse_Topic_t *topic = &resp->Topics[i];
        topic->ErrorCode = sf_rbuf_i16(rb);
        topic->Name = r_str(&d, 0);
        topic->IsInternal = version >= 1 ? r_bool(&d) : false;
        R_ARRAY(&d, topic->PartitionsCount, topic->Partitions, 18, 0);
        for (j = 0; j < topic->PartitionsCount && !rb->err; j++) {
            sf_proto_MetadataResponse_Partition_t *part = &topic->Partitions[j];
            part->ErrorCode = sf_rbuf_i16(rb);
            part->PartitionIndex = sf_rbuf_i32(rb);
            part->LeaderId = sf_rbuf_i32(rb);
            part->LeaderEpoch = version >= 7 ? sf_rbuf_i32(rb) : -1;
            part->ReplicaNodesCount = r_i32s(&d, &part->ReplicaNodes, 0);
            part->IsrNodesCount = r_i32s(&d, &part->IsrNodes, 0);
            if (version >= 5)
                part->OfflineReplicasCount = r_i32s(&d, &part->OfflineReplicas, 0);
        }
        topic->TopicAuthorizedOperations = version >= 8 ? sf_rbuf_i32(rb) : INT32_MIN;
    }
    resp->ClusterAuthorizedOperations = version >= 8 ? sf_rbuf_i32(rb) : INT32_MIN;
    return dec_end(&d);
}

int sf_proto_MetadataResponse_encode(sf_wbuf_t *wb, int16_t version,
                                     const sf_proto_MetadataResponse_t *resp) {
    enc_t e;
    int32_t i, j, nbrokers, ntopics, nparts;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_Metadata, version)))
        return rc;
    if (version >= 3)
        sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    nbrokers = w_arr(&e, resp->BrokersCount, resp->Brokers, 0);
    for (i = 0; i < nbrokers; i++) {
        const sf_proto_MetadataResponse_Broker_t *broker = &resp->Brokers[i];
        sf_wbuf_i32(wb, broker->NodeId);
        w_str(&e, broker->Host, 0);
        sf_wbuf_i32(wb, broker->Port);
        if (version >= 1)
            w_str(&e, broker->Rack, 1);
    }
    if (version >= 2)
        w_str(&e, resp->ClusterId, 1);
    if (version >= 1)
        sf_wbuf_i32(wb, resp->ControllerId);
    ntopics = w_arr(&e, resp->TopicsCount, resp->Topics, 0);
    for (i = 0; i < ntopics; i++) {
        const sf_proto_MetadataResponse_Topic_t *topic = &resp->Topics[i];
        sf_wbuf_i16(wb, topic->ErrorCode);
        w_str(&e, topic->Name, 0);
        if (version >= 1)
            w_bool(&e, topic->IsInternal);
        nparts = w_arr(&e, topic->PartitionsCount, topic->Partitions, 0);
        for (j = 0; j < nparts; j++) {
            const sf_proto_MetadataResponse_Partition_t *part = &topic->Partitions[j];
            sf_wbuf_i16(wb, part->ErrorCode);
            sf_wbuf_i32(wb, part->PartitionIndex);
            sf_wbuf_i32(wb, part->LeaderId);
            if (version >= 7)
                sf_wbuf_i32(wb, part->LeaderEpoch);
            w_i32s(&e, part->ReplicaNodesCount, part->ReplicaNodes, 0);
            w_i32s(&e, part->IsrNodesCount, part->IsrNodes, 0);
            if (version >= 5)
                w_i32s(&e, part->OfflineReplicasCount, part->OfflineReplicas, 0);
        }
        if (version >= 8)
            sf_wbuf_i32(wb, topic->TopicAuthorizedOperations);
    }
    if (version >= 8)
        sf_wbuf_i32(wb, resp->ClusterAuthorizedOperations);
    return enc_end(&e);
}

/* ------------------------------------------------------------------------------------------
 * ApiVersions
 * ------------------------------------------------------------------------------------------ */

int sf_proto_ApiVersionsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                       sf_proto_ApiVersionsRequest_t *req) {
    dec_t d;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_ApiVersions, version)))
        return rc;
    req->ClientSoftwareName = version >= 3 ? r_str(&d, 0) : empty_slice;
    req->ClientSoftwareVersion = version >= 3 ? r_str(&d, 0) : empty_slice;
    r_tags(&d);
    return dec_end(&d);
}

int sf_proto_ApiVersionsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                       const sf_proto_ApiVersionsRequest_t *req) {
    enc_t e;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_ApiVersions, version)))
        return rc;
    if (version >= 3)
        w_str(&e, req->ClientSoftwareName, 0);
    if (version >= 3)
        w_str(&e, req->ClientSoftwareVersion, 0);
    w_tags(&e);
    return enc_end(&e);
}

static int api_versions_response_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_ApiVersionsResponse_t *resp) {
    dec_t d;
    int32_t i;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_ApiVersions, version)))
        return rc;
    resp->ErrorCode = sf_rbuf_i16(rb);
    R_ARRAY(&d, resp->ApiKeysCount, resp->ApiKeys, d.flex ? 7 : 6, 0);
    for (i = 0; i < resp->ApiKeysCount && !rb->err; i++) {
        resp->ApiKeys[i].ApiKey = sf_rbuf_i16(rb);
        resp->ApiKeys[i].MinVersion = sf_rbuf_i16(rb);
        resp->ApiKeys[i].MaxVersion = sf_rbuf_i16(rb);
        r_tags(&d);
    }
    resp->ThrottleTimeMs = version >= 1 ? sf_rbuf_i32(rb) : 0;
    r_tags(&d); /* SupportedFeatures, FinalizedFeaturesEpoch, FinalizedFeatures, ... */
    return dec_end(&d);
}

int sf_proto_ApiVersionsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_ApiVersionsResponse_t *resp) {
    size_t start = rb->pos;
    int was_ok = rb->err == SF_OK;
    int rc = api_versions_response_decode(rb, version, arena, resp);
    /* A broker that does not support @version answers in v0 format with UNSUPPORTED_VERSION;
     * like Kafka's client, re-read such a reply as v0. Only then: any other failure stays. */
    if (rc == SF_ERR_MALFORMED && was_ok && version > 0 && rb->len - start >= 2 &&
        (int16_t)sf_load_be16(rb->p + start) == SF_KERR_UNSUPPORTED_VERSION) {
        rb->pos = start;
        rb->err = SF_OK;
        rc = api_versions_response_decode(rb, 0, arena, resp);
    }
    return rc;
}

int sf_proto_ApiVersionsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_ApiVersionsResponse_t *resp) {
    enc_t e;
    int32_t i, nkeys;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_ApiVersions, version)))
        return rc;
    sf_wbuf_i16(wb, resp->ErrorCode);
    nkeys = w_arr(&e, resp->ApiKeysCount, resp->ApiKeys, 0);
    for (i = 0; i < nkeys; i++) {
        sf_wbuf_i16(wb, resp->ApiKeys[i].ApiKey);
        sf_wbuf_i16(wb, resp->ApiKeys[i].MinVersion);
        sf_wbuf_i16(wb, resp->ApiKeys[i].MaxVersion);
        w_tags(&e);
    }
    if (version >= 1)
        sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    w_tags(&e);
    return enc_end(&e);
}

int sf_proto_ApiVersionsResponse_encode_error(sf_wbuf_t *wb, sf_kerr_t err) {
    const sf_proto_api_t *api = sf_proto_api_get(SF_PROTO_API_ApiVersions);
    sf_proto_ApiVersionsResponse_ApiKey_t key = {api->ApiKey, api->MinVersion, api->MaxVersion};
    sf_proto_ApiVersionsResponse_t resp = {err, 0, NULL, 0};
    if (err == SF_KERR_UNSUPPORTED_VERSION) {
        resp.ApiKeysCount = 1;
        resp.ApiKeys = &key;
    }
    return sf_proto_ApiVersionsResponse_encode(wb, 0, &resp);
}

/* ------------------------------------------------------------------------------------------
 * CreateTopics
 * ------------------------------------------------------------------------------------------ */

int sf_proto_CreateTopicsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_CreateTopicsRequest_t *req) {
    dec_t d;
    int32_t i, j;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_CreateTopics, version)))
        return rc;
    R_ARRAY(&d, req->TopicsCount, req->Topics, 16, 0);
    for (i = 0; i < req->TopicsCount && !rb->err; i++) {
        sf_proto_CreateTopicsRequest_Topic_t *topic = &req->Topics[i];
        topic->Name = r_str(&d, 0);
        topic->NumPartitions = sf_rbuf_i32(rb);
        topic->ReplicationFactor = sf_rbuf_i16(rb);
        R_ARRAY(&d, topic->AssignmentsCount, topic->Assignments, 8, 0);
        for (j = 0; j < topic->AssignmentsCount && !rb->err; j++) {
            sf_proto_CreateTopicsRequest_Assignment_t *assign = &topic->Assignments[j];
            assign->PartitionIndex = sf_rbuf_i32(rb);
            assign->BrokerIdsCount = r_i32s(&d, &assign->BrokerIds, 0);
        }
        R_ARRAY(&d, topic->ConfigsCount, topic->Configs, 4, 0);
        for (j = 0; j < topic->ConfigsCount && !rb->err; j++) {
            topic->Configs[j].Name = r_str(&d, 0);
            topic->Configs[j].Value = r_str(&d, 1);
        }
    }
    req->TimeoutMs = sf_rbuf_i32(rb);
    req->ValidateOnly = version >= 1 ? r_bool(&d) : false;
    return dec_end(&d);
}

int sf_proto_CreateTopicsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_CreateTopicsRequest_t *req) {
    enc_t e;
    int32_t i, j, ntopics, nassign, nconfigs;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_CreateTopics, version)))
        return rc;
    ntopics = w_arr(&e, req->TopicsCount, req->Topics, 0);
    for (i = 0; i < ntopics; i++) {
        const sf_proto_CreateTopicsRequest_Topic_t *topic = &req->Topics[i];
        w_str(&e, topic->Name, 0);
        sf_wbuf_i32(wb, topic->NumPartitions);
        sf_wbuf_i16(wb, topic->ReplicationFactor);
        nassign = w_arr(&e, topic->AssignmentsCount, topic->Assignments, 0);
        for (j = 0; j < nassign; j++) {
            const sf_proto_CreateTopicsRequest_Assignment_t *assign = &topic->Assignments[j];
            sf_wbuf_i32(wb, assign->PartitionIndex);
            w_i32s(&e, assign->BrokerIdsCount, assign->BrokerIds, 0);
        }
        nconfigs = w_arr(&e, topic->ConfigsCount, topic->Configs, 0);
        for (j = 0; j < nconfigs; j++) {
            w_str(&e, topic->Configs[j].Name, 0);
            w_str(&e, topic->Configs[j].Value, 1);
        }
    }
    sf_wbuf_i32(wb, req->TimeoutMs);
    if (version >= 1)
        w_bool(&e, req->ValidateOnly);
    return enc_end(&e);
}

int sf_proto_CreateTopicsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                         sf_proto_CreateTopicsResponse_t *resp) {
    dec_t d;
    int32_t i;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_CreateTopics, version)))
        return rc;
    resp->ThrottleTimeMs = version >= 2 ? sf_rbuf_i32(rb) : 0;
    R_ARRAY(&d, resp->TopicsCount, resp->Topics, 4, 0);
    for (i = 0; i < resp->TopicsCount && !rb->err; i++) {
        resp->Topics[i].Name = r_str(&d, 0);
        resp->Topics[i].ErrorCode = sf_rbuf_i16(rb);
        resp->Topics[i].ErrorMessage = version >= 1 ? r_str(&d, 1) : null_slice;
    }
    return dec_end(&d);
}

int sf_proto_CreateTopicsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                         const sf_proto_CreateTopicsResponse_t *resp) {
    enc_t e;
    int32_t i, ntopics;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_CreateTopics, version)))
        return rc;
    if (version >= 2)
        sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    ntopics = w_arr(&e, resp->TopicsCount, resp->Topics, 0);
    for (i = 0; i < ntopics; i++) {
        w_str(&e, resp->Topics[i].Name, 0);
        sf_wbuf_i16(wb, resp->Topics[i].ErrorCode);
        if (version >= 1)
            w_str(&e, resp->Topics[i].ErrorMessage, 1);
    }
    return enc_end(&e);
}

/* ------------------------------------------------------------------------------------------
 * DeleteTopics
 * ------------------------------------------------------------------------------------------ */

int sf_proto_DeleteTopicsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_DeleteTopicsRequest_t *req) {
    dec_t d;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_DeleteTopics, version)))
        return rc;
    req->TopicNamesCount = r_strs(&d, &req->TopicNames, 0);
    req->TimeoutMs = sf_rbuf_i32(rb);
    return dec_end(&d);
}

int sf_proto_DeleteTopicsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_DeleteTopicsRequest_t *req) {
    enc_t e;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_DeleteTopics, version)))
        return rc;
    w_strs(&e, req->TopicNamesCount, req->TopicNames, 0);
    sf_wbuf_i32(wb, req->TimeoutMs);
    return enc_end(&e);
}

int sf_proto_DeleteTopicsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                         sf_proto_DeleteTopicsResponse_t *resp) {
    dec_t d;
    int32_t i;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_DeleteTopics, version)))
        return rc;
    resp->ThrottleTimeMs = version >= 1 ? sf_rbuf_i32(rb) : 0;
    R_ARRAY(&d, resp->ResponsesCount, resp->Responses, 4, 0);
    for (i = 0; i < resp->ResponsesCount && !rb->err; i++) {
        resp->Responses[i].Name = r_str(&d, 0);
        resp->Responses[i].ErrorCode = sf_rbuf_i16(rb);
    }
    return dec_end(&d);
}

int sf_proto_DeleteTopicsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                         const sf_proto_DeleteTopicsResponse_t *resp) {
    enc_t e;
    int32_t i, n;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_DeleteTopics, version)))
        return rc;
    if (version >= 1)
        sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    n = w_arr(&e, resp->ResponsesCount, resp->Responses, 0);
    for (i = 0; i < n; i++) {
        w_str(&e, resp->Responses[i].Name, 0);
        sf_wbuf_i16(wb, resp->Responses[i].ErrorCode);
    }
    return enc_end(&e);
}

/* ------------------------------------------------------------------------------------------
 * DescribeConfigs
 * ------------------------------------------------------------------------------------------ */

int sf_proto_DescribeConfigsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                           sf_proto_DescribeConfigsRequest_t *req) {
    dec_t d;
    int32_t i;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_DescribeConfigs, version)))
        return rc;
    R_ARRAY(&d, req->ResourcesCount, req->Resources, 7, 0);
    for (i = 0; i < req->ResourcesCount && !rb->err; i++) {
        sf_proto_DescribeConfigsRequest_Resource_t *res = &req->Resources[i];
        res->ResourceType = sf_rbuf_i8(rb);
        res->ResourceName = r_str(&d, 0);
        res->ConfigurationKeysCount = r_strs(&d, &res->ConfigurationKeys, 1);
    }
    req->IncludeSynonyms = version >= 1 ? r_bool(&d) : false;
    req->IncludeDocumentation = version >= 3 ? r_bool(&d) : false;
    return dec_end(&d);
}

int sf_proto_DescribeConfigsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                           const sf_proto_DescribeConfigsRequest_t *req) {
    enc_t e;
    int32_t i, n;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_DescribeConfigs, version)))
        return rc;
    n = w_arr(&e, req->ResourcesCount, req->Resources, 0);
    for (i = 0; i < n; i++) {
        const sf_proto_DescribeConfigsRequest_Resource_t *res = &req->Resources[i];
        sf_wbuf_i8(wb, res->ResourceType);
        w_str(&e, res->ResourceName, 0);
        w_strs(&e, res->ConfigurationKeysCount, res->ConfigurationKeys, 1);
    }
    if (version >= 1)
        w_bool(&e, req->IncludeSynonyms);
    if (version >= 3)
        w_bool(&e, req->IncludeDocumentation);
    return enc_end(&e);
}

int sf_proto_DescribeConfigsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                            sf_proto_DescribeConfigsResponse_t *resp) {
    dec_t d;
    int32_t i, j, k;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_DescribeConfigs, version)))
        return rc;
    resp->ThrottleTimeMs = sf_rbuf_i32(rb);
    R_ARRAY(&d, resp->ResultsCount, resp->Results, 11, 0);
    for (i = 0; i < resp->ResultsCount && !rb->err; i++) {
        sf_proto_DescribeConfigsResponse_Result_t *res = &resp->Results[i];
        res->ErrorCode = sf_rbuf_i16(rb);
        res->ErrorMessage = r_str(&d, 1);
        res->ResourceType = sf_rbuf_i8(rb);
        res->ResourceName = r_str(&d, 0);
        R_ARRAY(&d, res->ConfigsCount, res->Configs, 7, 0);
        for (j = 0; j < res->ConfigsCount && !rb->err; j++) {
            sf_proto_DescribeConfigsResponse_Config_t *cfg = &res->Configs[j];
            cfg->Name = r_str(&d, 0);
            cfg->Value = r_str(&d, 1);
            cfg->ReadOnly = r_bool(&d);
            cfg->IsDefault = version == 0 ? r_bool(&d) : false;
            cfg->ConfigSource = version >= 1 ? sf_rbuf_i8(rb) : -1;
            cfg->IsSensitive = r_bool(&d);
            if (version >= 1)
                R_ARRAY(&d, cfg->SynonymsCount, cfg->Synonyms, 5, 0);
            for (k = 0; k < cfg->SynonymsCount && !rb->err; k++) {
                cfg->Synonyms[k].Name = r_str(&d, 0);
                cfg->Synonyms[k].Value = r_str(&d, 1);
                cfg->Synonyms[k].Source = sf_rbuf_i8(rb);
            }
            cfg->ConfigType = version >= 3 ? sf_rbuf_i8(rb) : 0;
            cfg->Documentation = version >= 3 ? r_str(&d, 1) : null_slice;
        }
    }
    return dec_end(&d);
}

int sf_proto_DescribeConfigsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                            const sf_proto_DescribeConfigsResponse_t *resp) {
    enc_t e;
    int32_t i, j, k, nres, ncfg, nsyn;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_DescribeConfigs, version)))
        return rc;
    sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    nres = w_arr(&e, resp->ResultsCount, resp->Results, 0);
    for (i = 0; i < nres; i++) {
        const sf_proto_DescribeConfigsResponse_Result_t *res = &resp->Results[i];
        sf_wbuf_i16(wb, res->ErrorCode);
        w_str(&e, res->ErrorMessage, 1);
        sf_wbuf_i8(wb, res->ResourceType);
        w_str(&e, res->ResourceName, 0);
        ncfg = w_arr(&e, res->ConfigsCount, res->Configs, 0);
        for (j = 0; j < ncfg; j++) {
            const sf_proto_DescribeConfigsResponse_Config_t *cfg = &res->Configs[j];
            w_str(&e, cfg->Name, 0);
            w_str(&e, cfg->Value, 1);
            w_bool(&e, cfg->ReadOnly);
            if (version == 0)
                w_bool(&e, cfg->IsDefault);
            if (version >= 1)
                sf_wbuf_i8(wb, cfg->ConfigSource);
            w_bool(&e, cfg->IsSensitive);
            nsyn = version >= 1 ? w_arr(&e, cfg->SynonymsCount, cfg->Synonyms, 0) : 0;
            for (k = 0; k < nsyn; k++) {
                w_str(&e, cfg->Synonyms[k].Name, 0);
                w_str(&e, cfg->Synonyms[k].Value, 1);
                sf_wbuf_i8(wb, cfg->Synonyms[k].Source);
            }
            if (version >= 3)
                sf_wbuf_i8(wb, cfg->ConfigType);
            if (version >= 3)
                w_str(&e, cfg->Documentation, 1);
        }
    }
    return enc_end(&e);
}

/* ------------------------------------------------------------------------------------------
 * CreatePartitions
 * ------------------------------------------------------------------------------------------ */

int sf_proto_CreatePartitionsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                            sf_proto_CreatePartitionsRequest_t *req) {
    dec_t d;
    int32_t i, j;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_CreatePartitions, version)))
        return rc;
    R_ARRAY(&d, req->TopicsCount, req->Topics, 10, 0);
    for (i = 0; i < req->TopicsCount && !rb->err; i++) {
        sf_proto_CreatePartitionsRequest_Topic_t *topic = &req->Topics[i];
        topic->Name = r_str(&d, 0);
        topic->Count = sf_rbuf_i32(rb);
        R_ARRAY(&d, topic->AssignmentsCount, topic->Assignments, 4, 1);
        for (j = 0; j < topic->AssignmentsCount && !rb->err; j++)
            topic->Assignments[j].BrokerIdsCount = r_i32s(&d, &topic->Assignments[j].BrokerIds, 0);
    }
    req->TimeoutMs = sf_rbuf_i32(rb);
    req->ValidateOnly = r_bool(&d);
    return dec_end(&d);
}

int sf_proto_CreatePartitionsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                            const sf_proto_CreatePartitionsRequest_t *req) {
    enc_t e;
    int32_t i, j, ntopics, nassign;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_CreatePartitions, version)))
        return rc;
    ntopics = w_arr(&e, req->TopicsCount, req->Topics, 0);
    for (i = 0; i < ntopics; i++) {
        const sf_proto_CreatePartitionsRequest_Topic_t *topic = &req->Topics[i];
        w_str(&e, topic->Name, 0);
        sf_wbuf_i32(wb, topic->Count);
        nassign = w_arr(&e, topic->AssignmentsCount, topic->Assignments, 1);
        for (j = 0; j < nassign; j++)
            w_i32s(&e, topic->Assignments[j].BrokerIdsCount, topic->Assignments[j].BrokerIds, 0);
    }
    sf_wbuf_i32(wb, req->TimeoutMs);
    w_bool(&e, req->ValidateOnly);
    return enc_end(&e);
}

int sf_proto_CreatePartitionsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                             sf_proto_CreatePartitionsResponse_t *resp) {
    dec_t d;
    int32_t i;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_CreatePartitions, version)))
        return rc;
    resp->ThrottleTimeMs = sf_rbuf_i32(rb);
    R_ARRAY(&d, resp->ResultsCount, resp->Results, 6, 0);
    for (i = 0; i < resp->ResultsCount && !rb->err; i++) {
        resp->Results[i].Name = r_str(&d, 0);
        resp->Results[i].ErrorCode = sf_rbuf_i16(rb);
        resp->Results[i].ErrorMessage = r_str(&d, 1);
    }
    return dec_end(&d);
}

int sf_proto_CreatePartitionsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                             const sf_proto_CreatePartitionsResponse_t *resp) {
    enc_t e;
    int32_t i, n;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_CreatePartitions, version)))
        return rc;
    sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    n = w_arr(&e, resp->ResultsCount, resp->Results, 0);
    for (i = 0; i < n; i++) {
        w_str(&e, resp->Results[i].Name, 0);
        sf_wbuf_i16(wb, resp->Results[i].ErrorCode);
        w_str(&e, resp->Results[i].ErrorMessage, 1);
    }
    return enc_end(&e);
}

/* ------------------------------------------------------------------------------------------
 * AlterConfigs and IncrementalAlterConfigs
 *
 * Written with the flexible-version calls (compact forms, tagged fields) in place although
 * only IncrementalAlterConfigs v1 is flexible today, so AlterConfigs v2 is a table change.
 * ------------------------------------------------------------------------------------------ */

int sf_proto_AlterConfigsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_AlterConfigsRequest_t *req) {
    dec_t d;
    int32_t i, j;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_AlterConfigs, version)))
        return rc;
    /* Smallest resource: type, empty name, empty configs (+ tags when flexible). */
    R_ARRAY(&d, req->ResourcesCount, req->Resources, d.flex ? 4 : 7, 0);
    for (i = 0; i < req->ResourcesCount && !rb->err; i++) {
        sf_proto_AlterConfigsRequest_Resource_t *res = &req->Resources[i];
        res->ResourceType = sf_rbuf_i8(rb);
        res->ResourceName = r_str(&d, 0);
        R_ARRAY(&d, res->ConfigsCount, res->Configs, d.flex ? 3 : 4, 0);
        for (j = 0; j < res->ConfigsCount && !rb->err; j++) {
            res->Configs[j].Name = r_str(&d, 0);
            res->Configs[j].Value = r_str(&d, 1);
            r_tags(&d);
        }
        r_tags(&d);
    }
    req->ValidateOnly = r_bool(&d);
    r_tags(&d);
    return dec_end(&d);
}

int sf_proto_AlterConfigsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_AlterConfigsRequest_t *req) {
    enc_t e;
    int32_t i, j, nres, ncfg;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_AlterConfigs, version)))
        return rc;
    nres = w_arr(&e, req->ResourcesCount, req->Resources, 0);
    for (i = 0; i < nres; i++) {
        const sf_proto_AlterConfigsRequest_Resource_t *res = &req->Resources[i];
        sf_wbuf_i8(wb, res->ResourceType);
        w_str(&e, res->ResourceName, 0);
        ncfg = w_arr(&e, res->ConfigsCount, res->Configs, 0);
        for (j = 0; j < ncfg; j++) {
            w_str(&e, res->Configs[j].Name, 0);
            w_str(&e, res->Configs[j].Value, 1);
            w_tags(&e);
        }
        w_tags(&e);
    }
    w_bool(&e, req->ValidateOnly);
    w_tags(&e);
    return enc_end(&e);
}

int sf_proto_IncrementalAlterConfigsRequest_decode(sf_rbuf_t *rb, int16_t version,
                                                   sf_arena_t *arena,
                                                   sf_proto_IncrementalAlterConfigsRequest_t *req) {
    dec_t d;
    int32_t i, j;
    int rc;
    memset(req, 0, sizeof(*req));
    if ((rc = dec_begin(&d, rb, arena, SF_PROTO_API_IncrementalAlterConfigs, version)))
        return rc;
    R_ARRAY(&d, req->ResourcesCount, req->Resources, d.flex ? 4 : 7, 0);
    for (i = 0; i < req->ResourcesCount && !rb->err; i++) {
        sf_proto_IncrementalAlterConfigsRequest_Resource_t *res = &req->Resources[i];
        res->ResourceType = sf_rbuf_i8(rb);
        res->ResourceName = r_str(&d, 0);
        /* Smallest config: empty name, operation, null value (+ tags when flexible). */
        R_ARRAY(&d, res->ConfigsCount, res->Configs, d.flex ? 4 : 5, 0);
        for (j = 0; j < res->ConfigsCount && !rb->err; j++) {
            sf_proto_IncrementalAlterConfigsRequest_Config_t *cfg = &res->Configs[j];
            cfg->Name = r_str(&d, 0);
            cfg->ConfigOperation = sf_rbuf_i8(rb);
            cfg->Value = r_str(&d, 1);
            r_tags(&d);
        }
        r_tags(&d);
    }
    req->ValidateOnly = r_bool(&d);
    r_tags(&d);
    return dec_end(&d);
}

int sf_proto_IncrementalAlterConfigsRequest_encode(
    sf_wbuf_t *wb, int16_t version, const sf_proto_IncrementalAlterConfigsRequest_t *req) {
    enc_t e;
    int32_t i, j, nres, ncfg;
    int rc;
    if ((rc = enc_begin(&e, wb, SF_PROTO_API_IncrementalAlterConfigs, version)))
        return rc;
    nres = w_arr(&e, req->ResourcesCount, req->Resources, 0);
    for (i = 0; i < nres; i++) {
        const sf_proto_IncrementalAlterConfigsRequest_Resource_t *res = &req->Resources[i];
        sf_wbuf_i8(wb, res->ResourceType);
        w_str(&e, res->ResourceName, 0);
        ncfg = w_arr(&e, res->ConfigsCount, res->Configs, 0);
        for (j = 0; j < ncfg; j++) {
            const sf_proto_IncrementalAlterConfigsRequest_Config_t *cfg = &res->Configs[j];
            w_str(&e, cfg->Name, 0);
            sf_wbuf_i8(wb, cfg->ConfigOperation);
            w_str(&e, cfg->Value, 1);
            w_tags(&e);
        }
        w_tags(&e);
    }
    w_bool(&e, req->ValidateOnly);
    w_tags(&e);
    return enc_end(&e);
}

/* The two responses share their layout; @api_key picks the version table. */
static int alter_configs_response_decode(sf_rbuf_t *rb, int16_t api_key, int16_t version,
                                         sf_arena_t *arena, sf_proto_AlterConfigsResponse_t *resp) {
    dec_t d;
    int32_t i;
    int rc;
    memset(resp, 0, sizeof(*resp));
    if ((rc = dec_begin(&d, rb, arena, api_key, version)))
        return rc;
    resp->ThrottleTimeMs = sf_rbuf_i32(rb);
    /* Smallest response: error code, null message, type, empty name (+ tags). */
    R_ARRAY(&d, resp->ResponsesCount, resp->Responses, d.flex ? 6 : 7, 0);
    for (i = 0; i < resp->ResponsesCount && !rb->err; i++) {
        sf_proto_AlterConfigsResponse_Resource_t *res = &resp->Responses[i];
        res->ErrorCode = sf_rbuf_i16(rb);
        res->ErrorMessage = r_str(&d, 1);
        res->ResourceType = sf_rbuf_i8(rb);
        res->ResourceName = r_str(&d, 0);
        r_tags(&d);
    }
    r_tags(&d);
    return dec_end(&d);
}

static int alter_configs_response_encode(sf_wbuf_t *wb, int16_t api_key, int16_t version,
                                         const sf_proto_AlterConfigsResponse_t *resp) {
    enc_t e;
    int32_t i, n;
    int rc;
    if ((rc = enc_begin(&e, wb, api_key, version)))
        return rc;
    sf_wbuf_i32(wb, resp->ThrottleTimeMs);
    n = w_arr(&e, resp->ResponsesCount, resp->Responses, 0);
    for (i = 0; i < n; i++) {
        const sf_proto_AlterConfigsResponse_Resource_t *res = &resp->Responses[i];
        sf_wbuf_i16(wb, res->ErrorCode);
        w_str(&e, res->ErrorMessage, 1);
        sf_wbuf_i8(wb, res->ResourceType);
        w_str(&e, res->ResourceName, 0);
        w_tags(&e);
    }
    w_tags(&e);
    return enc_end(&e);
}

int sf_proto_AlterConfigsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                         sf_proto_AlterConfigsResponse_t *resp) {
    return alter_configs_response_decode(rb, SF_PROTO_API_AlterConfigs, version, arena, resp);
}

int sf_proto_AlterConfigsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                         const sf_proto_AlterConfigsResponse_t *resp) {
    return alter_configs_response_encode(wb, SF_PROTO_API_AlterConfigs, version, resp);
}

int sf_proto_IncrementalAlterConfigsResponse_decode(
    sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
    sf_proto_IncrementalAlterConfigsResponse_t *resp) {
    return alter_configs_response_decode(rb, SF_PROTO_API_IncrementalAlterConfigs, version, arena,
                                         resp);
}

int sf_proto_IncrementalAlterConfigsResponse_encode(
    sf_wbuf_t *wb, int16_t version, const sf_proto_IncrementalAlterConfigsResponse_t *resp) {
    return alter_configs_response_encode(wb, SF_PROTO_API_IncrementalAlterConfigs, version, resp);
}
