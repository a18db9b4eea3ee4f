/* Error codes of the public API: the library's own (negative) and Kafka's (positive), their
 * names, descriptions and which of them are worth retrying. */
#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "config.h"

typedef struct err_def {
    int code;
    int retriable;
    const char *name;
    const char *desc;
} err_def_t;

/* The library's codes. */
static const err_def_t local_errs[] = {
    {SF_OK, 0, "NO_ERROR", "success"},
    {SF_ERROR_NOMEM, 0, "NOMEM", "out of memory"},
    {SF_ERROR_MALFORMED, 0, "MALFORMED", "a response or record does not decode"},
    {SF_ERROR_TOOLARGE, 0, "TOOLARGE", "larger than a configured limit"},
    {SF_ERROR_IO, 0, "IO", "a system call failed"},
    {SF_ERROR_CORRUPT, 0, "CORRUPT", "a record batch failed its CRC check"},
    {SF_ERROR_INVALID, 0, "INVALID", "invalid argument or configuration value"},
    {SF_ERROR_NOTFOUND, 0, "NOTFOUND", "not found"},
    {SF_ERROR_EXISTS, 0, "EXISTS", "already exists"},
    {SF_ERROR_UNSUPPORTED, 0, "UNSUPPORTED", "no protocol version in common with the broker"},
    {SF_ERROR_RANGE, 0, "RANGE", "offset out of range"},
    {SF_ERROR_STATE, 0, "STATE", "not valid in the current state"},
    {SF_ERROR_TIMED_OUT, 1, "TIMED_OUT", "timed out"},
    {SF_ERROR_QUEUE_FULL, 1, "QUEUE_FULL", "producer buffer full (buffer.memory)"},
    {SF_ERROR_TRANSPORT, 1, "TRANSPORT", "broker connection failed or closed"},
    {SF_ERROR_DESTROYED, 0, "DESTROYED", "the handle was destroyed"},
    {SF_ERROR_TLS, 0, "TLS", "TLS setup or handshake failed"},
    {SF_ERROR_RESOLVE, 1, "RESOLVE", "host name did not resolve"},
    {SF_ERROR_UNKNOWN_SERVER, 0, "UNKNOWN_SERVER_ERROR",
     "the broker reported an unexpected server error"},
};

/* Kafka's codes (org.apache.kafka.common.protocol.Errors), with its retriable flags. */
static const err_def_t kafka_errs[] = {
    {1, 0, "OFFSET_OUT_OF_RANGE", "offset out of range"},
    {2, 1, "CORRUPT_MESSAGE", "message failed its CRC check or is otherwise corrupt"},
    {3, 1, "UNKNOWN_TOPIC_OR_PARTITION", "unknown topic or partition"},
    {4, 0, "INVALID_FETCH_SIZE", "invalid fetch size"},
    {5, 1, "LEADER_NOT_AVAILABLE", "leader not available"},
    {6, 1, "NOT_LEADER_OR_FOLLOWER", "broker is not the leader for this partition"},
    {7, 1, "REQUEST_TIMED_OUT", "request timed out on the broker"},
    {8, 0, "BROKER_NOT_AVAILABLE", "broker not available"},
    {9, 1, "REPLICA_NOT_AVAILABLE", "replica not available"},
    {10, 0, "MESSAGE_TOO_LARGE", "message larger than the broker accepts"},
    {11, 0, "STALE_CONTROLLER_EPOCH", "stale controller epoch"},
    {12, 0, "OFFSET_METADATA_TOO_LARGE", "offset metadata too large"},
    {13, 1, "NETWORK_EXCEPTION", "network error on the broker"},
    {14, 1, "COORDINATOR_LOAD_IN_PROGRESS", "coordinator is loading"},
    {15, 1, "COORDINATOR_NOT_AVAILABLE", "coordinator not available"},
    {16, 1, "NOT_COORDINATOR", "not the coordinator"},
    {17, 0, "INVALID_TOPIC_EXCEPTION", "invalid topic name"},
    {18, 0, "RECORD_LIST_TOO_LARGE", "record batch larger than the segment size"},
    {19, 1, "NOT_ENOUGH_REPLICAS", "fewer in-sync replicas than min.insync.replicas"},
    {20, 1, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "written with fewer in-sync replicas than required"},
    {21, 0, "INVALID_REQUIRED_ACKS", "invalid acks value"},
    {22, 0, "ILLEGAL_GENERATION", "illegal generation"},
    {23, 0, "INCONSISTENT_GROUP_PROTOCOL", "inconsistent group protocol"},
    {24, 0, "INVALID_GROUP_ID", "invalid group id"},
    {25, 0, "UNKNOWN_MEMBER_ID", "unknown member id"},
    {26, 0, "INVALID_SESSION_TIMEOUT", "invalid session timeout"},
    {27, 0, "REBALANCE_IN_PROGRESS", "group rebalance in progress"},
    {28, 0, "INVALID_COMMIT_OFFSET_SIZE", "invalid commit offset size"},
    {29, 0, "TOPIC_AUTHORIZATION_FAILED", "not authorized for the topic"},
    {30, 0, "GROUP_AUTHORIZATION_FAILED", "not authorized for the group"},
    {31, 0, "CLUSTER_AUTHORIZATION_FAILED", "not authorized for the cluster"},
    {32, 0, "INVALID_TIMESTAMP", "invalid timestamp"},
    {33, 0, "UNSUPPORTED_SASL_MECHANISM", "unsupported SASL mechanism"},
    {34, 0, "ILLEGAL_SASL_STATE", "illegal SASL state"},
    {35, 0, "UNSUPPORTED_VERSION", "unsupported request version"},
    {36, 0, "TOPIC_ALREADY_EXISTS", "topic already exists"},
    {37, 0, "INVALID_PARTITIONS", "invalid number of partitions"},
    {38, 0, "INVALID_REPLICATION_FACTOR", "invalid replication factor"},
    {39, 0, "INVALID_REPLICA_ASSIGNMENT", "invalid replica assignment"},
    {40, 0, "INVALID_CONFIG", "invalid configuration"},
    {41, 1, "NOT_CONTROLLER", "broker is not the controller"},
    {42, 0, "INVALID_REQUEST", "invalid request"},
    {43, 0, "UNSUPPORTED_FOR_MESSAGE_FORMAT", "unsupported for the message format"},
    {44, 0, "POLICY_VIOLATION", "policy violation"},
    {45, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER", "out of order sequence number"},
    {46, 0, "DUPLICATE_SEQUENCE_NUMBER", "duplicate sequence number"},
    {47, 0, "INVALID_PRODUCER_EPOCH", "invalid producer epoch"},
    {48, 0, "INVALID_TXN_STATE", "invalid transaction state"},
    {49, 0, "INVALID_PRODUCER_ID_MAPPING", "invalid producer id mapping"},
    {50, 0, "INVALID_TRANSACTION_TIMEOUT", "invalid transaction timeout"},
    {51, 0, "CONCURRENT_TRANSACTIONS", "concurrent transactions"},
    {52, 0, "TRANSACTION_COORDINATOR_FENCED", "transaction coordinator fenced"},
    {53, 0, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "not authorized for the transactional id"},
    {54, 0, "SECURITY_DISABLED", "security features are disabled"},
    {55, 0, "OPERATION_NOT_ATTEMPTED", "operation not attempted"},
    {56, 1, "KAFKA_STORAGE_ERROR", "storage error on the broker"},
    {57, 0, "LOG_DIR_NOT_FOUND", "log directory not found"},
    {58, 0, "SASL_AUTHENTICATION_FAILED", "SASL authentication failed"},
    {59, 0, "UNKNOWN_PRODUCER_ID", "unknown producer id"},
    {60, 0, "REASSIGNMENT_IN_PROGRESS", "partition reassignment in progress"},
    {61, 0, "DELEGATION_TOKEN_AUTH_DISABLED", "delegation tokens disabled"},
    {62, 0, "DELEGATION_TOKEN_NOT_FOUND", "delegation token not found"},
    {63, 0, "DELEGATION_TOKEN_OWNER_MISMATCH", "delegation token owner mismatch"},
    {64, 0, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", "delegation token request not allowed"},
    {65, 0, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", "delegation token authorization failed"},
    {66, 0, "DELEGATION_TOKEN_EXPIRED", "delegation token expired"},
    {67, 0, "INVALID_PRINCIPAL_TYPE", "invalid principal type"},
    {68, 0, "NON_EMPTY_GROUP", "group is not empty"},
    {69, 0, "GROUP_ID_NOT_FOUND", "group id not found"},
    {70, 1, "FETCH_SESSION_ID_NOT_FOUND", "fetch session not found"},
    {71, 1, "INVALID_FETCH_SESSION_EPOCH", "invalid fetch session epoch"},
    {72, 1, "LISTENER_NOT_FOUND", "listener not found on the leader"},
    {73, 0, "TOPIC_DELETION_DISABLED", "topic deletion is disabled on the broker"},
    {74, 1, "FENCED_LEADER_EPOCH", "fenced leader epoch"},
    {75, 1, "UNKNOWN_LEADER_EPOCH", "unknown leader epoch"},
    {76, 0, "UNSUPPORTED_COMPRESSION_TYPE", "unsupported compression type"},
    {77, 0, "STALE_BROKER_EPOCH", "stale broker epoch"},
    {78, 1, "OFFSET_NOT_AVAILABLE", "offset not available"},
    {79, 0, "MEMBER_ID_REQUIRED", "member id required"},
    {80, 1, "PREFERRED_LEADER_NOT_AVAILABLE", "preferred leader not available"},
    {81, 0, "GROUP_MAX_SIZE_REACHED", "group maximum size reached"},
    {82, 0, "FENCED_INSTANCE_ID", "fenced instance id"},
    {83, 1, "ELIGIBLE_LEADERS_NOT_AVAILABLE", "eligible leaders not available"},
    {84, 0, "ELECTION_NOT_NEEDED", "leader election not needed"},
    {85, 0, "NO_REASSIGNMENT_IN_PROGRESS", "no reassignment in progress"},
    {86, 0, "GROUP_SUBSCRIBED_TO_TOPIC", "group subscribed to the topic"},
    {87, 0, "INVALID_RECORD", "record rejected by the broker"},
    {88, 1, "UNSTABLE_OFFSET_COMMIT", "unstable offset commit"},
    {89, 1, "THROTTLING_QUOTA_EXCEEDED", "throttling quota exceeded"},
    {90, 0, "PRODUCER_FENCED", "producer fenced"},
    {91, 0, "RESOURCE_NOT_FOUND", "resource not found"},
    {92, 0, "DUPLICATE_RESOURCE", "duplicate resource"},
    {93, 0, "UNACCEPTABLE_CREDENTIAL", "unacceptable credential"},
    {94, 0, "INCONSISTENT_VOTER_SET", "inconsistent voter set"},
    {95, 0, "INVALID_UPDATE_VERSION", "invalid update version"},
    {96, 0, "FEATURE_UPDATE_FAILED", "feature update failed"},
    {97, 0, "PRINCIPAL_DESERIALIZATION_FAILURE", "principal deserialization failure"},
    {98, 0, "SNAPSHOT_NOT_FOUND", "snapshot not found"},
    {99, 0, "POSITION_OUT_OF_RANGE", "position out of range"},
    {100, 1, "UNKNOWN_TOPIC_ID", "unknown topic id"},
    {105, 0, "TRANSACTIONAL_ID_NOT_FOUND", "transactional id not found"},
};

static const err_def_t *err_find(int err) {
    size_t i;
    if (err <= 0) {
        for (i = 0; i < sizeof(local_errs) / sizeof(local_errs[0]); i++)
            if (local_errs[i].code == err)
                return &local_errs[i];
        return NULL;
    }
    for (i = 0; i < sizeof(kafka_errs) / sizeof(kafka_errs[0]); i++)
        if (kafka_errs[i].code == err)
            return &kafka_errs[i];
    return NULL;
}

const char *sf_version(void) {
    return PACKAGE_VERSION;
}

const char *sf_error_str(int err) {
    const err_def_t *e = err_find(err);
    return e ? e->desc : (err > 0 ? "unknown Kafka error code" : "unknown error");
}

const char *sf_error_name(int err) {
    const err_def_t *e = err_find(err);
    return e ? e->name : "UNKNOWN";
}

int sf_error_retriable(int err) {
    const err_def_t *e = err_find(err);
    return e ? e->retriable : 0;
}

int sf_client_kerr(int16_t kerr) {
    /* Kafka's only negative code is -1; any other from the wire must not pass for one of ours. */
    return kerr < 0 ? SF_ERROR_UNKNOWN_SERVER : (int)kerr;
}
