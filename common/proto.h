/* Kafka wire-protocol codec: API version table, request/response headers and the message
 * bodies StreamFlow speaks (field layouts from ../shared/kafka-protocol/<Name>.json).
 *
 * Conventions for every message below:
 * - Structs and fields keep Kafka's names (the JSON "name"), so code reads against the spec.
 *   An array field `X` is a pair `int32_t XCount; T *X;`. A count of -1 with X == NULL is a
 *   null array (only where the JSON makes it nullable in that version).
 * - Strings and bytes are sf_slice_t; len -1 is null. After a decode they borrow the bytes of
 *   the sf_rbuf_t's buffer (valid while that buffer lives); arrays are allocated from the
 *   arena passed to the decoder (freed with it).
 * - A field absent from a version is set to its JSON default by the decoder and ignored by the
 *   encoder.
 * - Decoders accept versions 0..MaxVersion of the API table (a few versions below the
 *   broker's advertised minimum decode too, for clients and tests). They return SF_OK,
 *   SF_ERR_UNSUPPORTED (version out of range), SF_ERR_MALFORMED (truncated, bad length, lying
 *   count) or SF_ERR_NOMEM (arena exhausted; the reader is also marked failed). Bytes left
 *   after the last field are ignored, as Apache Kafka's generated readers do (they never check
 *   that the buffer is exhausted); rb->pos tells how far the message went.
 * - Encoders append to @wb and return SF_OK, SF_ERR_UNSUPPORTED, SF_ERR_INVALID (a null value
 *   where the version does not allow one, or an array count > 0 with a NULL pointer) or
 *   SF_ERR_NOMEM. On error the bytes appended so far are unspecified (reset the writer).
 * - Booleans decode as (byte != 0) and encode as 0/1.
 */
#ifndef SF_PROTO_H
#define SF_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "err.h"

/* ------------------------------------------------------------------------------------------
 * API keys and the version table
 * ------------------------------------------------------------------------------------------ */

/* Kafka API keys (org.apache.kafka.common.protocol.ApiKeys). */
typedef enum sf_proto_api_key {
    SF_PROTO_API_Produce = 0,
    SF_PROTO_API_Fetch = 1,
    SF_PROTO_API_ListOffsets = 2,
    SF_PROTO_API_Metadata = 3,
    SF_PROTO_API_LeaderAndIsr = 4,
    SF_PROTO_API_StopReplica = 5,
    SF_PROTO_API_UpdateMetadata = 6,
    SF_PROTO_API_ControlledShutdown = 7,
    SF_PROTO_API_OffsetCommit = 8,
    SF_PROTO_API_OffsetFetch = 9,
    SF_PROTO_API_FindCoordinator = 10,
    SF_PROTO_API_JoinGroup = 11,
    SF_PROTO_API_Heartbeat = 12,
    SF_PROTO_API_LeaveGroup = 13,
    SF_PROTO_API_SyncGroup = 14,
    SF_PROTO_API_DescribeGroups = 15,
    SF_PROTO_API_ListGroups = 16,
    SF_PROTO_API_SaslHandshake = 17,
    SF_PROTO_API_ApiVersions = 18,
    SF_PROTO_API_CreateTopics = 19,
    SF_PROTO_API_DeleteTopics = 20,
    SF_PROTO_API_DeleteRecords = 21,
    SF_PROTO_API_InitProducerId = 22,
    SF_PROTO_API_OffsetForLeaderEpoch = 23,
    SF_PROTO_API_AddPartitionsToTxn = 24,
    SF_PROTO_API_AddOffsetsToTxn = 25,
    SF_PROTO_API_EndTxn = 26,
    SF_PROTO_API_WriteTxnMarkers = 27,
    SF_PROTO_API_TxnOffsetCommit = 28,
    SF_PROTO_API_DescribeAcls = 29,
    SF_PROTO_API_CreateAcls = 30,
    SF_PROTO_API_DeleteAcls = 31,
    SF_PROTO_API_DescribeConfigs = 32,
    SF_PROTO_API_AlterConfigs = 33,
    SF_PROTO_API_AlterReplicaLogDirs = 34,
    SF_PROTO_API_DescribeLogDirs = 35,
    SF_PROTO_API_SaslAuthenticate = 36,
    SF_PROTO_API_CreatePartitions = 37,
    SF_PROTO_API_CreateDelegationToken = 38,
    SF_PROTO_API_RenewDelegationToken = 39,
    SF_PROTO_API_ExpireDelegationToken = 40,
    SF_PROTO_API_DescribeDelegationToken = 41,
    SF_PROTO_API_DeleteGroups = 42,
    SF_PROTO_API_ElectLeaders = 43,
    SF_PROTO_API_IncrementalAlterConfigs = 44,
    SF_PROTO_API_AlterPartitionReassignments = 45,
    SF_PROTO_API_ListPartitionReassignments = 46,
    SF_PROTO_API_OffsetDelete = 47,
    SF_PROTO_API_DescribeClientQuotas = 48,
    SF_PROTO_API_AlterClientQuotas = 49,
    SF_PROTO_API_DescribeUserScramCredentials = 50,
    SF_PROTO_API_AlterUserScramCredentials = 51,
    SF_PROTO_API_AlterPartition = 56,
    SF_PROTO_API_UpdateFeatures = 57,
    SF_PROTO_API_DescribeCluster = 60,
    SF_PROTO_API_DescribeProducers = 61,
    SF_PROTO_API_DescribeTransactions = 65,
    SF_PROTO_API_ListTransactions = 66,
    SF_PROTO_API_AllocateProducerIds = 67
} sf_proto_api_key_t;

/* One supported API: the version range the broker advertises in ApiVersions, and the first
 * flexible (KIP-482) version of the message as its JSON "flexibleVersions" says (-1 if the
 * message has none). A version is flexible for StreamFlow when it is both supported
 * (<= MaxVersion) and >= FlexibleMin; today ApiVersions v3 and IncrementalAlterConfigs v1
 * are. */
typedef struct sf_proto_api {
    int16_t ApiKey;
    const char *Name; /* static */
    int16_t MinVersion, MaxVersion;
    int16_t FlexibleMin;
} sf_proto_api_t;

/* The table entry for @api_key, or NULL if StreamFlow does not support that API. */
const sf_proto_api_t *sf_proto_api_get(int16_t api_key);

/* All supported APIs in ascending key order (static table); @n receives the count. */
const sf_proto_api_t *sf_proto_api_all(size_t *n);

/* 1 if @api_key is supported and MinVersion <= @version <= MaxVersion, else 0. */
int sf_proto_version_supported(int16_t api_key, int16_t version);

/* 1 if @api_key/@version is supported and a flexible version (compact strings/arrays, tagged
 * fields, request header v2 and, except for ApiVersions, response header v1), else 0. */
int sf_proto_version_flexible(int16_t api_key, int16_t version);

/* The API name for logs ("Produce"), or "Unknown" (static string, never NULL). */
const char *sf_proto_api_name(int16_t api_key);

/* ------------------------------------------------------------------------------------------
 * Headers
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_RequestHeader {
    int16_t RequestApiKey;
    int16_t RequestApiVersion;
    int32_t CorrelationId;
    sf_slice_t ClientId; /* nullable; borrows the reader's buffer */
} sf_proto_RequestHeader_t;

/* Decode a request header: v1 (key, version, correlation id, nullable client id), plus the
 * tagged-field section of v2 when key/version is a supported flexible version. An unknown API
 * or unsupported version still decodes as v1 and returns SF_OK: the caller answers it with an
 * error (UNSUPPORTED_VERSION), and rb->pos is left at the start of the body.
 * @return SF_OK or SF_ERR_MALFORMED. */
int sf_proto_RequestHeader_decode(sf_rbuf_t *rb, sf_proto_RequestHeader_t *hdr);

/* Encode a request header (v2 when the key/version is a supported flexible version, else v1).
 * @return SF_OK or SF_ERR_NOMEM. */
int sf_proto_RequestHeader_encode(sf_wbuf_t *wb, const sf_proto_RequestHeader_t *hdr);

/* Write the response header for a request: v0 (correlation id), or v1 (+ empty tagged fields)
 * for supported flexible versions, except ApiVersions whose response always uses v0.
 * Errors are left in wb->err. */
void sf_proto_ResponseHeader_encode(sf_wbuf_t *wb, int16_t api_key, int16_t api_version,
                                    int32_t correlation_id);

/* Read a response header for a request sent as @api_key/@api_version (same header-version
 * rule as the encoder). @corr receives the correlation id.
 * @return SF_OK or SF_ERR_MALFORMED. */
int sf_proto_ResponseHeader_decode(sf_rbuf_t *rb, int16_t api_key, int16_t api_version,
                                   int32_t *corr);

/* ------------------------------------------------------------------------------------------
 * Produce (0), versions 0-8
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_ProduceRequest_Partition {
    int32_t Index;
    /* Nullable. Points into the request buffer. The request buffer handed to the decoder is
     * the connection's own mutable frame, so the broker may cast Records.p to (uint8_t *) to
     * rewrite base offsets / leader epochs in place. */
    sf_slice_t Records;
} sf_proto_ProduceRequest_Partition_t;

typedef struct sf_proto_ProduceRequest_Topic {
    sf_slice_t Name;
    int32_t PartitionDataCount;
    sf_proto_ProduceRequest_Partition_t *PartitionData;
} sf_proto_ProduceRequest_Topic_t;

typedef struct sf_proto_ProduceRequest {
    sf_slice_t TransactionalId; /* v3+, nullable, default null */
    int16_t Acks;
    int32_t TimeoutMs;
    int32_t TopicDataCount;
    sf_proto_ProduceRequest_Topic_t *TopicData;
} sf_proto_ProduceRequest_t;

typedef struct sf_proto_ProduceResponse_RecordError {
    int32_t BatchIndex;
    sf_slice_t BatchIndexErrorMessage; /* nullable */
} sf_proto_ProduceResponse_RecordError_t;

typedef struct sf_proto_ProduceResponse_Partition {
    int32_t Index;
    int16_t ErrorCode;
    int64_t BaseOffset;
    int64_t LogAppendTimeMs; /* v2+, default -1 */
    int64_t LogStartOffset;  /* v5+, default -1 */
    int32_t RecordErrorsCount; /* v8+ */
    sf_proto_ProduceResponse_RecordError_t *RecordErrors;
    sf_slice_t ErrorMessage; /* v8+, nullable, default null */
} sf_proto_ProduceResponse_Partition_t;

typedef struct sf_proto_ProduceResponse_Topic {
    sf_slice_t Name;
    int32_t PartitionResponsesCount;
    sf_proto_ProduceResponse_Partition_t *PartitionResponses;
} sf_proto_ProduceResponse_Topic_t;

typedef struct sf_proto_ProduceResponse {
    int32_t ResponsesCount;
    sf_proto_ProduceResponse_Topic_t *Responses;
    int32_t ThrottleTimeMs; /* v1+ */
} sf_proto_ProduceResponse_t;

/* ------------------------------------------------------------------------------------------
 * Fetch (1), versions 0-11
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_FetchRequest_Partition {
    int32_t Partition;
    int32_t CurrentLeaderEpoch; /* v9+, default -1 */
    int64_t FetchOffset;
    int64_t LogStartOffset; /* v5+, default -1 */
    int32_t PartitionMaxBytes;
} sf_proto_FetchRequest_Partition_t;

typedef struct sf_proto_FetchRequest_Topic {
    sf_slice_t Topic;
    int32_t PartitionsCount;
    sf_proto_FetchRequest_Partition_t *Partitions;
} sf_proto_FetchRequest_Topic_t;

typedef struct sf_proto_FetchRequest_ForgottenTopic {
    sf_slice_t Topic;
    int32_t PartitionsCount;
    int32_t *Partitions;
} sf_proto_FetchRequest_ForgottenTopic_t;

typedef struct sf_proto_FetchRequest {
    int32_t ReplicaId; /* default -1 */
    int32_t MaxWaitMs;
    int32_t MinBytes;
    int32_t MaxBytes;      /* v3+, default 0x7fffffff */
    int8_t IsolationLevel; /* v4+, default 0 */
    int32_t SessionId;     /* v7+, default 0 */
    int32_t SessionEpoch;  /* v7+, default -1 */
    int32_t TopicsCount;
    sf_proto_FetchRequest_Topic_t *Topics;
    int32_t ForgottenTopicsDataCount; /* v7+ */
    sf_proto_FetchRequest_ForgottenTopic_t *ForgottenTopicsData;
    sf_slice_t RackId; /* v11+, default "" */
} sf_proto_FetchRequest_t;

typedef struct sf_proto_FetchResponse_AbortedTransaction {
    int64_t ProducerId;
    int64_t FirstOffset;
} sf_proto_FetchResponse_AbortedTransaction_t;

typedef struct sf_proto_FetchResponse_Partition {
    int32_t PartitionIndex;
    int16_t ErrorCode;
    int64_t HighWatermark;
    int64_t LastStableOffset; /* v4+, default -1 */
    int64_t LogStartOffset;   /* v5+, default -1 */
    int32_t AbortedTransactionsCount; /* v4+, nullable (-1) */
    sf_proto_FetchResponse_AbortedTransaction_t *AbortedTransactions;
    int32_t PreferredReadReplica; /* v11+, default -1 */
    /* Nullable. Encoding: when RecordsRef is NULL the bytes at Records.p are copied (or null
     * is written for len -1); when RecordsRef != NULL the encoder writes the length Records.len
     * and calls sf_wbuf_splice(wb, RecordsRef, Records.len) instead of copying (Records.p is
     * not read; the writer's caller owns the ref). Decoding sets Records to a slice of the
     * response buffer and RecordsRef to NULL. */
    sf_slice_t Records;
    void *RecordsRef;
} sf_proto_FetchResponse_Partition_t;

typedef struct sf_proto_FetchResponse_Topic {
    sf_slice_t Topic;
    int32_t PartitionsCount;
    sf_proto_FetchResponse_Partition_t *Partitions;
} sf_proto_FetchResponse_Topic_t;

typedef struct sf_proto_FetchResponse {
    int32_t ThrottleTimeMs; /* v1+ */
    int16_t ErrorCode;      /* v7+ */
    int32_t SessionId;      /* v7+, default 0 */
    int32_t ResponsesCount;
    sf_proto_FetchResponse_Topic_t *Responses;
} sf_proto_FetchResponse_t;

/* ------------------------------------------------------------------------------------------
 * ListOffsets (2), versions 0-5
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_ListOffsetsRequest_Partition {
    int32_t PartitionIndex;
    int32_t CurrentLeaderEpoch; /* v4+, default -1 */
    int64_t Timestamp;
    int32_t MaxNumOffsets; /* v0 only, default 1 */
} sf_proto_ListOffsetsRequest_Partition_t;

typedef struct sf_proto_ListOffsetsRequest_Topic {
    sf_slice_t Name;
    int32_t PartitionsCount;
    sf_proto_ListOffsetsRequest_Partition_t *Partitions;
} sf_proto_ListOffsetsRequest_Topic_t;

typedef struct sf_proto_ListOffsetsRequest {
    int32_t ReplicaId;
    int8_t IsolationLevel; /* v2+, default 0 */
    int32_t TopicsCount;
    sf_proto_ListOffsetsRequest_Topic_t *Topics;
} sf_proto_ListOffsetsRequest_t;

typedef struct sf_proto_ListOffsetsResponse_Partition {
    int32_t PartitionIndex;
    int16_t ErrorCode;
    int32_t OldStyleOffsetsCount; /* v0 only */
    int64_t *OldStyleOffsets;
    int64_t Timestamp;   /* v1+, default -1 */
    int64_t Offset;      /* v1+, default -1 */
    int32_t LeaderEpoch; /* v4+, default -1 */
} sf_proto_ListOffsetsResponse_Partition_t;

typedef struct sf_proto_ListOffsetsResponse_Topic {
    sf_slice_t Name;
    int32_t PartitionsCount;
    sf_proto_ListOffsetsResponse_Partition_t *Partitions;
} sf_proto_ListOffsetsResponse_Topic_t;

typedef struct sf_proto_ListOffsetsResponse {
    int32_t ThrottleTimeMs; /* v2+ */
    int32_t TopicsCount;
    sf_proto_ListOffsetsResponse_Topic_t *Topics;
} sf_proto_ListOffsetsResponse_t;

/* ------------------------------------------------------------------------------------------
 * Metadata (3), versions 0-8
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_MetadataRequest_Topic {
    sf_slice_t Name;
} sf_proto_MetadataRequest_Topic_t;

typedef struct sf_proto_MetadataRequest {
    /* TopicsCount == -1 (Topics NULL) means "all topics" in every version: the decoder maps
     * v0's empty array (which means all topics in v0) to -1, and the encoder writes -1 as an
     * empty array in v0 and as a null array in v1+. In v1+ an empty array means no topics. */
    int32_t TopicsCount;
    sf_proto_MetadataRequest_Topic_t *Topics;
    bool AllowAutoTopicCreation;             /* v4+, default true */
    bool IncludeClusterAuthorizedOperations; /* v8-10, default false */
    bool IncludeTopicAuthorizedOperations;   /* v8+, default false */
} sf_proto_MetadataRequest_t;

typedef struct sf_proto_MetadataResponse_Broker {
    int32_t NodeId;
    sf_slice_t Host;
    int32_t Port;
    sf_slice_t Rack; /* v1+, nullable, default null */
} sf_proto_MetadataResponse_Broker_t;

typedef struct sf_proto_MetadataResponse_Partition {
    int16_t ErrorCode;
    int32_t PartitionIndex;
    int32_t LeaderId;
    int32_t LeaderEpoch; /* v7+, default -1 */
    int32_t ReplicaNodesCount;
    int32_t *ReplicaNodes;
    int32_t IsrNodesCount;
    int32_t *IsrNodes;
    int32_t OfflineReplicasCount; /* v5+ */
    int32_t *OfflineReplicas;
} sf_proto_MetadataResponse_Partition_t;

typedef struct sf_proto_MetadataResponse_Topic {
    int16_t ErrorCode;
    sf_slice_t Name;
    bool IsInternal; /* v1+, default false */
    int32_t PartitionsCount;
    sf_proto_MetadataResponse_Partition_t *Partitions;
    int32_t TopicAuthorizedOperations; /* v8+, default INT32_MIN */
} sf_proto_MetadataResponse_Topic_t;

typedef struct sf_proto_MetadataResponse {
    int32_t ThrottleTimeMs; /* v3+ */
    int32_t BrokersCount;
    sf_proto_MetadataResponse_Broker_t *Brokers;
    sf_slice_t ClusterId; /* v2+, nullable, default null */
    int32_t ControllerId; /* v1+, default -1 */
    int32_t TopicsCount;
    sf_proto_MetadataResponse_Topic_t *Topics;
    int32_t ClusterAuthorizedOperations; /* v8-10, default INT32_MIN */
} sf_proto_MetadataResponse_t;

/* ------------------------------------------------------------------------------------------
 * ApiVersions (18), versions 0-3 (v3 is flexible; its response still uses header v0)
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_ApiVersionsRequest {
    sf_slice_t ClientSoftwareName;    /* v3+ */
    sf_slice_t ClientSoftwareVersion; /* v3+ */
} sf_proto_ApiVersionsRequest_t;

typedef struct sf_proto_ApiVersionsResponse_ApiKey {
    int16_t ApiKey;
    int16_t MinVersion;
    int16_t MaxVersion;
} sf_proto_ApiVersionsResponse_ApiKey_t;

/* v3's tagged fields (SupportedFeatures, FinalizedFeaturesEpoch, FinalizedFeatures,
 * ZkMigrationReady) are skipped by the decoder and not written by the encoder. */
typedef struct sf_proto_ApiVersionsResponse {
    int16_t ErrorCode;
    int32_t ApiKeysCount;
    sf_proto_ApiVersionsResponse_ApiKey_t *ApiKeys;
    int32_t ThrottleTimeMs; /* v1+ */
} sf_proto_ApiVersionsResponse_t;

/* Write the body Kafka sends when ApiVersions fails, in v0 format whatever version was asked
 * (the client cannot know which format a newer broker would use): ErrorCode @err, then an
 * ApiKeys array that, for UNSUPPORTED_VERSION, holds ApiVersions' own supported range so the
 * client can retry with a version it shares; for any other error the array is empty.
 * @return SF_OK or SF_ERR_NOMEM. */
int sf_proto_ApiVersionsResponse_encode_error(sf_wbuf_t *wb, sf_kerr_t err);

/* ------------------------------------------------------------------------------------------
 * CreateTopics (19), versions 0-4
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_CreateTopicsRequest_Assignment {
    int32_t PartitionIndex;
    int32_t BrokerIdsCount;
    int32_t *BrokerIds;
} sf_proto_CreateTopicsRequest_Assignment_t;

typedef struct sf_proto_CreateTopicsRequest_Config {
    sf_slice_t Name;
    sf_slice_t Value; /* nullable */
} sf_proto_CreateTopicsRequest_Config_t;

typedef struct sf_proto_CreateTopicsRequest_Topic {
    sf_slice_t Name;
    int32_t NumPartitions;     /* -1: default / manual assignment */
    int16_t ReplicationFactor; /* -1: default / manual assignment */
    int32_t AssignmentsCount;
    sf_proto_CreateTopicsRequest_Assignment_t *Assignments;
    int32_t ConfigsCount;
    sf_proto_CreateTopicsRequest_Config_t *Configs;
} sf_proto_CreateTopicsRequest_Topic_t;

typedef struct sf_proto_CreateTopicsRequest {
    int32_t TopicsCount;
    sf_proto_CreateTopicsRequest_Topic_t *Topics;
    int32_t TimeoutMs;  /* "timeoutMs" in the JSON, default 60000 */
    bool ValidateOnly;  /* "validateOnly", v1+, default false */
} sf_proto_CreateTopicsRequest_t;

typedef struct sf_proto_CreateTopicsResponse_Topic {
    sf_slice_t Name;
    int16_t ErrorCode;
    sf_slice_t ErrorMessage; /* v1+, nullable, default null */
} sf_proto_CreateTopicsResponse_Topic_t;

typedef struct sf_proto_CreateTopicsResponse {
    int32_t ThrottleTimeMs; /* v2+ */
    int32_t TopicsCount;
    sf_proto_CreateTopicsResponse_Topic_t *Topics;
} sf_proto_CreateTopicsResponse_t;

/* ------------------------------------------------------------------------------------------
 * DeleteTopics (20), versions 0-3
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_DeleteTopicsRequest {
    int32_t TopicNamesCount;
    sf_slice_t *TopicNames;
    int32_t TimeoutMs;
} sf_proto_DeleteTopicsRequest_t;

typedef struct sf_proto_DeleteTopicsResponse_Topic {
    sf_slice_t Name;
    int16_t ErrorCode;
} sf_proto_DeleteTopicsResponse_Topic_t;

typedef struct sf_proto_DeleteTopicsResponse {
    int32_t ThrottleTimeMs; /* v1+ */
    int32_t ResponsesCount;
    sf_proto_DeleteTopicsResponse_Topic_t *Responses;
} sf_proto_DeleteTopicsResponse_t;

/* ------------------------------------------------------------------------------------------
 * DescribeConfigs (32), versions 0-3 (all the non-flexible ones)
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_DescribeConfigsRequest_Resource {
    int8_t ResourceType; /* 2 topic, 4 broker, 8 broker logger */
    sf_slice_t ResourceName;
    int32_t ConfigurationKeysCount; /* nullable (-1 = all keys) */
    sf_slice_t *ConfigurationKeys;
} sf_proto_DescribeConfigsRequest_Resource_t;

typedef struct sf_proto_DescribeConfigsRequest {
    int32_t ResourcesCount;
    sf_proto_DescribeConfigsRequest_Resource_t *Resources;
    bool IncludeSynonyms;      /* v1+, default false */
    bool IncludeDocumentation; /* v3+, default false */
} sf_proto_DescribeConfigsRequest_t;

typedef struct sf_proto_DescribeConfigsResponse_Synonym {
    sf_slice_t Name;
    sf_slice_t Value; /* nullable */
    int8_t Source;
} sf_proto_DescribeConfigsResponse_Synonym_t;

typedef struct sf_proto_DescribeConfigsResponse_Config {
    sf_slice_t Name;
    sf_slice_t Value; /* nullable */
    bool ReadOnly;
    bool IsDefault;      /* v0 only, default false */
    int8_t ConfigSource; /* v1+, default -1 */
    bool IsSensitive;
    int32_t SynonymsCount; /* v1+ */
    sf_proto_DescribeConfigsResponse_Synonym_t *Synonyms;
    int8_t ConfigType;        /* v3+, default 0 */
    sf_slice_t Documentation; /* v3+, nullable, default null */
} sf_proto_DescribeConfigsResponse_Config_t;

typedef struct sf_proto_DescribeConfigsResponse_Result {
    int16_t ErrorCode;
    sf_slice_t ErrorMessage; /* nullable */
    int8_t ResourceType;
    sf_slice_t ResourceName;
    int32_t ConfigsCount;
    sf_proto_DescribeConfigsResponse_Config_t *Configs;
} sf_proto_DescribeConfigsResponse_Result_t;

typedef struct sf_proto_DescribeConfigsResponse {
    int32_t ThrottleTimeMs;
    int32_t ResultsCount;
    sf_proto_DescribeConfigsResponse_Result_t *Results;
} sf_proto_DescribeConfigsResponse_t;

/* ------------------------------------------------------------------------------------------
 * AlterConfigs (33), versions 0-1 (the non-flexible ones), and IncrementalAlterConfigs (44),
 * versions 0-1 (v1 is flexible). Both responses have the same layout and share one type.
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_AlterConfigsRequest_Config {
    sf_slice_t Name;
    sf_slice_t Value; /* nullable */
} sf_proto_AlterConfigsRequest_Config_t;

typedef struct sf_proto_AlterConfigsRequest_Resource {
    int8_t ResourceType; /* 2 topic, 4 broker, 8 broker logger */
    sf_slice_t ResourceName;
    int32_t ConfigsCount;
    sf_proto_AlterConfigsRequest_Config_t *Configs;
} sf_proto_AlterConfigsRequest_Resource_t;

typedef struct sf_proto_AlterConfigsRequest {
    int32_t ResourcesCount;
    sf_proto_AlterConfigsRequest_Resource_t *Resources;
    bool ValidateOnly;
} sf_proto_AlterConfigsRequest_t;

/* IncrementalAlterConfigs ConfigOperation values (AlterConfigOp.OpType). */
#define SF_PROTO_CONFIG_OP_SET 0
#define SF_PROTO_CONFIG_OP_DELETE 1
#define SF_PROTO_CONFIG_OP_APPEND 2
#define SF_PROTO_CONFIG_OP_SUBTRACT 3

typedef struct sf_proto_IncrementalAlterConfigsRequest_Config {
    sf_slice_t Name;
    int8_t ConfigOperation; /* SF_PROTO_CONFIG_OP_* (not checked by the codec) */
    sf_slice_t Value;       /* nullable */
} sf_proto_IncrementalAlterConfigsRequest_Config_t;

typedef struct sf_proto_IncrementalAlterConfigsRequest_Resource {
    int8_t ResourceType;
    sf_slice_t ResourceName;
    int32_t ConfigsCount;
    sf_proto_IncrementalAlterConfigsRequest_Config_t *Configs;
} sf_proto_IncrementalAlterConfigsRequest_Resource_t;

typedef struct sf_proto_IncrementalAlterConfigsRequest {
    int32_t ResourcesCount;
    sf_proto_IncrementalAlterConfigsRequest_Resource_t *Resources;
    bool ValidateOnly;
} sf_proto_IncrementalAlterConfigsRequest_t;

typedef struct sf_proto_AlterConfigsResponse_Resource {
    int16_t ErrorCode;
    sf_slice_t ErrorMessage; /* nullable */
    int8_t ResourceType;
    sf_slice_t ResourceName;
} sf_proto_AlterConfigsResponse_Resource_t;

typedef struct sf_proto_AlterConfigsResponse {
    int32_t ThrottleTimeMs;
    int32_t ResponsesCount;
    sf_proto_AlterConfigsResponse_Resource_t *Responses;
} sf_proto_AlterConfigsResponse_t;

typedef sf_proto_AlterConfigsResponse_Resource_t sf_proto_IncrementalAlterConfigsResponse_Resource_t;
typedef sf_proto_AlterConfigsResponse_t sf_proto_IncrementalAlterConfigsResponse_t;

/* ------------------------------------------------------------------------------------------
 * CreatePartitions (37), versions 0-1 (the non-flexible ones)
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_proto_CreatePartitionsRequest_Assignment {
    int32_t BrokerIdsCount;
    int32_t *BrokerIds;
} sf_proto_CreatePartitionsRequest_Assignment_t;

typedef struct sf_proto_CreatePartitionsRequest_Topic {
    sf_slice_t Name;
    int32_t Count;
    int32_t AssignmentsCount; /* nullable (-1) */
    sf_proto_CreatePartitionsRequest_Assignment_t *Assignments;
} sf_proto_CreatePartitionsRequest_Topic_t;

typedef struct sf_proto_CreatePartitionsRequest {
    int32_t TopicsCount;
    sf_proto_CreatePartitionsRequest_Topic_t *Topics;
    int32_t TimeoutMs;
    bool ValidateOnly;
} sf_proto_CreatePartitionsRequest_t;

typedef struct sf_proto_CreatePartitionsResponse_Result {
    sf_slice_t Name;
    int16_t ErrorCode;
    sf_slice_t ErrorMessage; /* nullable */
} sf_proto_CreatePartitionsResponse_Result_t;

typedef struct sf_proto_CreatePartitionsResponse {
    int32_t ThrottleTimeMs;
    int32_t ResultsCount;
    sf_proto_CreatePartitionsResponse_Result_t *Results;
} sf_proto_CreatePartitionsResponse_t;

/* ------------------------------------------------------------------------------------------
 * Body codecs. For each message M above:
 *
 *   int sf_proto_M_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
 *                         sf_proto_M_t *msg);
 *     Decode M at @version from @rb into @msg (overwritten). Slices borrow rb's buffer, arrays
 *     live in @arena (borrowed; must outlive @msg).
 *   int sf_proto_M_encode(sf_wbuf_t *wb, int16_t version, const sf_proto_M_t *msg);
 *     Append M at @version to @wb. @msg is only read; FetchResponse RecordsRef pointers are
 *     recorded as splices in @wb (still owned by the caller).
 *
 * Return values: see the top of this file.
 * ------------------------------------------------------------------------------------------ */

int sf_proto_ProduceRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                   sf_proto_ProduceRequest_t *req);
int sf_proto_ProduceRequest_encode(sf_wbuf_t *wb, int16_t version,
                                   const sf_proto_ProduceRequest_t *req);
int sf_proto_ProduceResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                    sf_proto_ProduceResponse_t *resp);
int sf_proto_ProduceResponse_encode(sf_wbuf_t *wb, int16_t version,
                                    const sf_proto_ProduceResponse_t *resp);

int sf_proto_FetchRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                 sf_proto_FetchRequest_t *req);
int sf_proto_FetchRequest_encode(sf_wbuf_t *wb, int16_t version,
                                 const sf_proto_FetchRequest_t *req);
int sf_proto_FetchResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                  sf_proto_FetchResponse_t *resp);
int sf_proto_FetchResponse_encode(sf_wbuf_t *wb, int16_t version,
                                  const sf_proto_FetchResponse_t *resp);

int sf_proto_ListOffsetsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                       sf_proto_ListOffsetsRequest_t *req);
int sf_proto_ListOffsetsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                       const sf_proto_ListOffsetsRequest_t *req);
int sf_proto_ListOffsetsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_ListOffsetsResponse_t *resp);
int sf_proto_ListOffsetsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_ListOffsetsResponse_t *resp);

int sf_proto_MetadataRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                    sf_proto_MetadataRequest_t *req);
int sf_proto_MetadataRequest_encode(sf_wbuf_t *wb, int16_t version,
                                    const sf_proto_MetadataRequest_t *req);
int sf_proto_MetadataResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                     sf_proto_MetadataResponse_t *resp);
int sf_proto_MetadataResponse_encode(sf_wbuf_t *wb, int16_t version,
                                     const sf_proto_MetadataResponse_t *resp);

int sf_proto_ApiVersionsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                       sf_proto_ApiVersionsRequest_t *req);
int sf_proto_ApiVersionsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                       const sf_proto_ApiVersionsRequest_t *req);
int sf_proto_ApiVersionsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_ApiVersionsResponse_t *resp);
int sf_proto_ApiVersionsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_ApiVersionsResponse_t *resp);

int sf_proto_CreateTopicsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_CreateTopicsRequest_t *req);
int sf_proto_CreateTopicsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_CreateTopicsRequest_t *req);
int sf_proto_CreateTopicsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                         sf_proto_CreateTopicsResponse_t *resp);
int sf_proto_CreateTopicsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                         const sf_proto_CreateTopicsResponse_t *resp);

int sf_proto_DeleteTopicsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_DeleteTopicsRequest_t *req);
int sf_proto_DeleteTopicsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_DeleteTopicsRequest_t *req);
int sf_proto_DeleteTopicsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                         sf_proto_DeleteTopicsResponse_t *resp);
int sf_proto_DeleteTopicsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                         const sf_proto_DeleteTopicsResponse_t *resp);

int sf_proto_DescribeConfigsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                           sf_proto_DescribeConfigsRequest_t *req);
int sf_proto_DescribeConfigsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                           const sf_proto_DescribeConfigsRequest_t *req);
int sf_proto_DescribeConfigsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                            sf_proto_DescribeConfigsResponse_t *resp);
int sf_proto_DescribeConfigsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                            const sf_proto_DescribeConfigsResponse_t *resp);

int sf_proto_CreatePartitionsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                            sf_proto_CreatePartitionsRequest_t *req);
int sf_proto_CreatePartitionsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                            const sf_proto_CreatePartitionsRequest_t *req);
int sf_proto_CreatePartitionsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                             sf_proto_CreatePartitionsResponse_t *resp);
int sf_proto_CreatePartitionsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                             const sf_proto_CreatePartitionsResponse_t *resp);

int sf_proto_AlterConfigsRequest_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                        sf_proto_AlterConfigsRequest_t *req);
int sf_proto_AlterConfigsRequest_encode(sf_wbuf_t *wb, int16_t version,
                                        const sf_proto_AlterConfigsRequest_t *req);
int sf_proto_AlterConfigsResponse_decode(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
                                         sf_proto_AlterConfigsResponse_t *resp);
int sf_proto_AlterConfigsResponse_encode(sf_wbuf_t *wb, int16_t version,
                                         const sf_proto_AlterConfigsResponse_t *resp);

int sf_proto_IncrementalAlterConfigsRequest_decode(sf_rbuf_t *rb, int16_t version,
                                                   sf_arena_t *arena,
                                                   sf_proto_IncrementalAlterConfigsRequest_t *req);
int sf_proto_IncrementalAlterConfigsRequest_encode(
    sf_wbuf_t *wb, int16_t version, const sf_proto_IncrementalAlterConfigsRequest_t *req);
int sf_proto_IncrementalAlterConfigsResponse_decode(
    sf_rbuf_t *rb, int16_t version, sf_arena_t *arena,
    sf_proto_IncrementalAlterConfigsResponse_t *resp);
int sf_proto_IncrementalAlterConfigsResponse_encode(
    sf_wbuf_t *wb, int16_t version, const sf_proto_IncrementalAlterConfigsResponse_t *resp);

#endif
