/* Internal result codes and Kafka wire error codes. */
#ifndef SF_ERR_H
#define SF_ERR_H

#include <stddef.h>
#include <stdint.h>

/* Internal results: SF_OK or a negative SF_ERR_*; incremental parsers may return SF_AGAIN. */
#define SF_OK 0
#define SF_AGAIN 1
#define SF_ERR_NOMEM (-1)     /* allocation failed */
#define SF_ERR_MALFORMED (-2) /* input does not decode */
#define SF_ERR_TOOLARGE (-3)  /* input exceeds a configured limit */
#define SF_ERR_IO (-4)        /* a system call failed; errno tells */
#define SF_ERR_CORRUPT (-5)   /* checksum or structural check failed */
#define SF_ERR_INVALID (-6)   /* a bad argument or configuration value */
#define SF_ERR_NOTFOUND (-7)  /* no such object */
#define SF_ERR_EXISTS (-8)    /* object already exists */
#define SF_ERR_UNSUPPORTED (-9) /* version or feature not supported */
#define SF_ERR_RANGE (-10)    /* offset or index out of range */
#define SF_ERR_STATE (-11)    /* operation not valid in the current state */
#define SF_ERR_RECORD (-12)   /* a record breaks a rule of the log (Kafka's INVALID_RECORD) */
#define SF_ERR_CODEC (-13)    /* a compression codec that may not be used there */
#define SF_ERR_TIMESTAMP (-14) /* a timestamp outside the allowed range */
#define SF_ERR_SEQUENCE (-15)  /* a producer's batch out of sequence */
#define SF_ERR_DUPLICATE (-16) /* a producer's batch already appended (a retry) */
#define SF_ERR_PRODUCER_EPOCH (-17) /* a producer epoch older than the partition's */
#define SF_ERR_COORDINATOR_FENCED (-18) /* a transaction coordinator epoch older than known */
#define SF_ERR_TXN_STATE (-19) /* a batch outside the producer's transaction (INVALID_TXN_STATE) */

/* Kafka protocol error codes (org.apache.kafka.common.protocol.Errors). */
typedef int16_t sf_kerr_t;
#define SF_KERR_UNKNOWN_SERVER_ERROR ((sf_kerr_t)-1)
#define SF_KERR_NONE ((sf_kerr_t)0)
#define SF_KERR_OFFSET_OUT_OF_RANGE ((sf_kerr_t)1)
#define SF_KERR_CORRUPT_MESSAGE ((sf_kerr_t)2)
#define SF_KERR_UNKNOWN_TOPIC_OR_PARTITION ((sf_kerr_t)3)
#define SF_KERR_INVALID_FETCH_SIZE ((sf_kerr_t)4)
#define SF_KERR_LEADER_NOT_AVAILABLE ((sf_kerr_t)5)
#define SF_KERR_NOT_LEADER_OR_FOLLOWER ((sf_kerr_t)6)
#define SF_KERR_REQUEST_TIMED_OUT ((sf_kerr_t)7)
#define SF_KERR_BROKER_NOT_AVAILABLE ((sf_kerr_t)8)
#define SF_KERR_REPLICA_NOT_AVAILABLE ((sf_kerr_t)9)
#define SF_KERR_MESSAGE_TOO_LARGE ((sf_kerr_t)10)
#define SF_KERR_STALE_CONTROLLER_EPOCH ((sf_kerr_t)11)
#define SF_KERR_OFFSET_METADATA_TOO_LARGE ((sf_kerr_t)12)
#define SF_KERR_NETWORK_EXCEPTION ((sf_kerr_t)13)
#define SF_KERR_COORDINATOR_LOAD_IN_PROGRESS ((sf_kerr_t)14)
#define SF_KERR_COORDINATOR_NOT_AVAILABLE ((sf_kerr_t)15)
#define SF_KERR_NOT_COORDINATOR ((sf_kerr_t)16)
#define SF_KERR_INVALID_TOPIC_EXCEPTION ((sf_kerr_t)17)
#define SF_KERR_RECORD_LIST_TOO_LARGE ((sf_kerr_t)18)
#define SF_KERR_NOT_ENOUGH_REPLICAS ((sf_kerr_t)19)
#define SF_KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND ((sf_kerr_t)20)
#define SF_KERR_INVALID_REQUIRED_ACKS ((sf_kerr_t)21)
#define SF_KERR_ILLEGAL_GENERATION ((sf_kerr_t)22)
#define SF_KERR_INCONSISTENT_GROUP_PROTOCOL ((sf_kerr_t)23)
#define SF_KERR_INVALID_GROUP_ID ((sf_kerr_t)24)
#define SF_KERR_UNKNOWN_MEMBER_ID ((sf_kerr_t)25)
#define SF_KERR_INVALID_SESSION_TIMEOUT ((sf_kerr_t)26)
#define SF_KERR_REBALANCE_IN_PROGRESS ((sf_kerr_t)27)
#define SF_KERR_NON_EMPTY_GROUP ((sf_kerr_t)68)
#define SF_KERR_GROUP_ID_NOT_FOUND ((sf_kerr_t)69)
#define SF_KERR_MEMBER_ID_REQUIRED ((sf_kerr_t)79)
#define SF_KERR_GROUP_MAX_SIZE_REACHED ((sf_kerr_t)81)
#define SF_KERR_FENCED_INSTANCE_ID ((sf_kerr_t)82)
#define SF_KERR_GROUP_SUBSCRIBED_TO_TOPIC ((sf_kerr_t)86)
#define SF_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER ((sf_kerr_t)45)
#define SF_KERR_DUPLICATE_SEQUENCE_NUMBER ((sf_kerr_t)46)
#define SF_KERR_INVALID_PRODUCER_EPOCH ((sf_kerr_t)47)
#define SF_KERR_INVALID_TXN_STATE ((sf_kerr_t)48)
#define SF_KERR_INVALID_PRODUCER_ID_MAPPING ((sf_kerr_t)49)
#define SF_KERR_INVALID_TRANSACTION_TIMEOUT ((sf_kerr_t)50)
#define SF_KERR_CONCURRENT_TRANSACTIONS ((sf_kerr_t)51)
#define SF_KERR_TRANSACTION_COORDINATOR_FENCED ((sf_kerr_t)52)
#define SF_KERR_UNKNOWN_PRODUCER_ID ((sf_kerr_t)59)
#define SF_KERR_PRODUCER_FENCED ((sf_kerr_t)90)
#define SF_KERR_OPERATION_NOT_ATTEMPTED ((sf_kerr_t)55)
#define SF_KERR_TRANSACTIONAL_ID_NOT_FOUND ((sf_kerr_t)105)
#define SF_KERR_INVALID_TIMESTAMP ((sf_kerr_t)32)
#define SF_KERR_UNSUPPORTED_SASL_MECHANISM ((sf_kerr_t)33)
#define SF_KERR_ILLEGAL_SASL_STATE ((sf_kerr_t)34)
#define SF_KERR_UNSUPPORTED_VERSION ((sf_kerr_t)35)
#define SF_KERR_TOPIC_ALREADY_EXISTS ((sf_kerr_t)36)
#define SF_KERR_INVALID_PARTITIONS ((sf_kerr_t)37)
#define SF_KERR_INVALID_REPLICATION_FACTOR ((sf_kerr_t)38)
#define SF_KERR_INVALID_REPLICA_ASSIGNMENT ((sf_kerr_t)39)
#define SF_KERR_REASSIGNMENT_IN_PROGRESS ((sf_kerr_t)60)
#define SF_KERR_INVALID_CONFIG ((sf_kerr_t)40)
#define SF_KERR_NOT_CONTROLLER ((sf_kerr_t)41)
#define SF_KERR_INVALID_REQUEST ((sf_kerr_t)42)
#define SF_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT ((sf_kerr_t)43)
#define SF_KERR_POLICY_VIOLATION ((sf_kerr_t)44)
#define SF_KERR_KAFKA_STORAGE_ERROR ((sf_kerr_t)56)
#define SF_KERR_UNKNOWN_TOPIC_ID ((sf_kerr_t)100)
#define SF_KERR_UNSUPPORTED_COMPRESSION_TYPE ((sf_kerr_t)76)
#define SF_KERR_FETCH_SESSION_ID_NOT_FOUND ((sf_kerr_t)70)
#define SF_KERR_TOPIC_DELETION_DISABLED ((sf_kerr_t)73)
#define SF_KERR_FENCED_LEADER_EPOCH ((sf_kerr_t)74)
#define SF_KERR_UNKNOWN_LEADER_EPOCH ((sf_kerr_t)75)
#define SF_KERR_STALE_BROKER_EPOCH ((sf_kerr_t)77)
#define SF_KERR_INVALID_UPDATE_VERSION ((sf_kerr_t)95)
#define SF_KERR_INELIGIBLE_REPLICA ((sf_kerr_t)107)
#define SF_KERR_OFFSET_NOT_AVAILABLE ((sf_kerr_t)78)
#define SF_KERR_PREFERRED_LEADER_NOT_AVAILABLE ((sf_kerr_t)80)
#define SF_KERR_ELIGIBLE_LEADERS_NOT_AVAILABLE ((sf_kerr_t)83)
#define SF_KERR_ELECTION_NOT_NEEDED ((sf_kerr_t)84)
#define SF_KERR_NO_REASSIGNMENT_IN_PROGRESS ((sf_kerr_t)85)
#define SF_KERR_INVALID_RECORD ((sf_kerr_t)87)
#define SF_KERR_UNSTABLE_OFFSET_COMMIT ((sf_kerr_t)88)
#define SF_KERR_THROTTLING_QUOTA_EXCEEDED ((sf_kerr_t)89)
#define SF_KERR_INCONSISTENT_TOPIC_ID ((sf_kerr_t)103)
#define SF_KERR_UNSUPPORTED_ENDPOINT_TYPE ((sf_kerr_t)115)

/* What was being done when an internal result came up: the same result means different
 * things to a client depending on it (SF_ERR_INVALID is INVALID_PARTITIONS for
 * CreatePartitions, INVALID_CONFIG for a config change). */
typedef enum sf_err_op {
    SF_ERR_OP_REQUEST,    /* a request as a whole */
    SF_ERR_OP_APPEND,     /* appending records to a partition */
    SF_ERR_OP_READ,       /* reading a partition */
    SF_ERR_OP_TOPIC,      /* creating or deleting a topic */
    SF_ERR_OP_PARTITIONS, /* adding partitions */
    SF_ERR_OP_CONFIG,     /* changing a config */
} sf_err_op_t;

/* The one mapping from internal results to Kafka wire error codes. */
sf_kerr_t sf_err_to_kerr(int err, sf_err_op_t op);

/* A short English description of an internal result (never NULL). */
const char *sf_err_str(int err);

/* Format an error message into @errstr (@size bytes); does nothing when @errstr is NULL or
 * @size is 0. */
void sf_errf(char *errstr, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
