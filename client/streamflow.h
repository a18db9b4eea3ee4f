/* libstreamflow: the StreamFlow C client (producer, consumer, admin, request/reply).
 *
 * It speaks the Apache Kafka wire protocol, so it works against StreamFlow brokers and any
 * broker that speaks the same protocol versions.
 *
 * Threads. Every handle (sf_producer_t, sf_consumer_t, sf_admin_t, sf_requester_t,
 * sf_responder_t) owns one background I/O thread that does all network work. Every function
 * may be called from any thread, concurrently, except the *_destroy functions, which must be
 * the last call on their handle. Callbacks run in the thread that calls the function serving
 * them (sf_producer_poll, sf_producer_flush, sf_producer_destroy, sf_responder_run;
 * sf_consumer_poll, sf_consumer_unsubscribe, sf_consumer_destroy for a consumer's rebalance
 * and commit callbacks), never in the I/O thread, and must not destroy the handle that runs
 * them.
 *
 * Errors. Functions return 0 (SF_OK) on success or an error code: negative codes are the
 * library's own (SF_ERROR_*), positive codes are Kafka error codes reported by a broker (for
 * example 3, UNKNOWN_TOPIC_OR_PARTITION; 36, TOPIC_ALREADY_EXISTS). sf_error_str() names both.
 *
 * Memory. Pointers passed in are borrowed for the duration of the call (the library copies
 * what it keeps). Objects returned by the library are owned by the caller and freed with the
 * matching *_destroy function. */
#ifndef STREAMFLOW_H
#define STREAMFLOW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SF_API __attribute__((visibility("default")))
#else
#define SF_API
#endif

/* ------------------------------------------------------------------------------------------
 * Version and errors
 * ------------------------------------------------------------------------------------------ */

/* The library version as "MAJOR.MINOR.PATCH" (a static string). */
SF_API const char *sf_version(void);

#ifndef SF_OK
#define SF_OK 0
#endif

/* The library's own error codes (negative). Kafka error codes are positive; Kafka's
 * UNKNOWN_SERVER_ERROR (-1 on the wire) is reported as SF_ERROR_UNKNOWN_SERVER. */
enum {
    SF_ERROR_NOMEM = -1,        /* out of memory */
    SF_ERROR_MALFORMED = -2,    /* a response or record that does not decode */
    SF_ERROR_TOOLARGE = -3,     /* a record or request larger than a configured limit */
    SF_ERROR_IO = -4,           /* a system call failed (errno is kept in the message) */
    SF_ERROR_CORRUPT = -5,      /* a record batch failed its CRC check */
    SF_ERROR_INVALID = -6,      /* an invalid argument or configuration value */
    SF_ERROR_NOTFOUND = -7,     /* unknown configuration key, topic or partition */
    SF_ERROR_EXISTS = -8,       /* already exists (e.g. a partition assigned twice) */
    SF_ERROR_UNSUPPORTED = -9,  /* no protocol version in common with the broker */
    SF_ERROR_RANGE = -10,       /* an offset outside the partition */
    SF_ERROR_STATE = -11,       /* not valid in the handle's state */
    SF_ERROR_TIMED_OUT = -20,   /* a timeout expired (request, delivery, flush, poll) */
    SF_ERROR_QUEUE_FULL = -21,  /* buffer.memory stayed full for max.block.ms */
    SF_ERROR_TRANSPORT = -22,   /* a broker connection failed or was closed */
    SF_ERROR_DESTROYED = -23,   /* the handle was destroyed before the operation finished */
    SF_ERROR_TLS = -24,         /* TLS setup or handshake failed */
    SF_ERROR_RESOLVE = -25,     /* a bootstrap or broker host name did not resolve */
    SF_ERROR_UNKNOWN_SERVER = -26 /* the broker reported UNKNOWN_SERVER_ERROR */
};

/* A short English description of any error code (library or Kafka); never NULL. */
SF_API const char *sf_error_str(int err);

/* Kafka's name of an error code ("UNKNOWN_TOPIC_OR_PARTITION", "REQUEST_TIMED_OUT", ...), or the
 * library's ("TIMED_OUT", "TRANSPORT", ...); never NULL. */
SF_API const char *sf_error_name(int err);

/* 1 if retrying the same operation may succeed (e.g. NOT_LEADER_OR_FOLLOWER, TRANSPORT). */
SF_API int sf_error_retriable(int err);

/* ------------------------------------------------------------------------------------------
 * Configuration: Kafka client property names (bootstrap.servers, acks, linger.ms, ...).
 * The keys and defaults are listed in libstreamflow(3).
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_conf sf_conf_t;

/* A new configuration holding every default. Returns NULL only when out of memory. */
SF_API sf_conf_t *sf_conf_new(void);

/* A deep copy of @conf (NULL when out of memory). */
SF_API sf_conf_t *sf_conf_dup(const sf_conf_t *conf);

SF_API void sf_conf_destroy(sf_conf_t *conf);

/* Set @key to @value (both copied). Returns SF_OK, SF_ERROR_NOTFOUND for an unknown key or
 * SF_ERROR_INVALID for a bad value; @errstr (may be NULL) then receives one line naming the key
 * and the problem. */
SF_API int sf_conf_set(sf_conf_t *conf, const char *key, const char *value, char *errstr,
                       size_t errstr_size);

/* The current value of @key (the default when unset), or NULL for an unknown key. The string
 * is owned by @conf and valid until the key is set again or @conf is destroyed. */
SF_API const char *sf_conf_get(const sf_conf_t *conf, const char *key);

/* Apply every "key=value" line of the Java properties file @path ('#' and '!' comments,
 * '\' continuation). Stops at the first bad line: @errstr names the file, line and key. */
SF_API int sf_conf_load_file(sf_conf_t *conf, const char *path, char *errstr,
                             size_t errstr_size);

/* Log levels (syslog's numbers). */
enum { SF_LOG_LEVEL_ERR = 3, SF_LOG_LEVEL_WARNING = 4, SF_LOG_LEVEL_INFO = 6,
       SF_LOG_LEVEL_DEBUG = 7 };

/* Receive the library's log lines (at most the level of the "log_level" key, default warning)
 * instead of stderr. @cb runs in any thread, including the I/O thread: it must not call into
 * the library. */
typedef void(sf_log_cb)(int level, const char *message, void *opaque);
SF_API void sf_conf_set_log_cb(sf_conf_t *conf, sf_log_cb *cb, void *opaque);

/* ------------------------------------------------------------------------------------------
 * Records and messages
 * ------------------------------------------------------------------------------------------ */

/* Partition and offset specials. */
#define SF_PARTITION_ANY (-1)
#define SF_OFFSET_BEGINNING (-2)
#define SF_OFFSET_END (-1)

/* A record header. @value NULL is a null value (then @value_len is ignored). */
typedef struct sf_header {
    const char *key;
    const void *value;
    size_t value_len;
} sf_header_t;

/* A record to produce. @key NULL is a null key, @value NULL a null value (a tombstone). */
typedef struct sf_record {
    const char *topic;
    int32_t partition; /* SF_PARTITION_ANY: the partitioner chooses */
    const void *key;
    size_t key_len;
    const void *value;
    size_t value_len;
    const sf_header_t *headers;
    size_t header_count;
    int64_t timestamp; /* milliseconds since the epoch; 0 = now */
} sf_record_t;

/* A consumed record, or (err != 0) a per-partition error event carrying topic and partition
 * only (a consumer group's own error: topic "" and partition -1). Everything is owned by the
 * message: free it with sf_message_destroy. */
typedef struct sf_message {
    const char *topic;
    int32_t partition;
    int64_t offset;
    int64_t timestamp;
    int timestamp_type; /* 0 CreateTime, 1 LogAppendTime */
    const void *key;    /* NULL for a null key */
    size_t key_len;
    const void *value;  /* NULL for a null value */
    size_t value_len;
    const sf_header_t *headers;
    size_t header_count;
    int err;
} sf_message_t;

SF_API void sf_message_destroy(sf_message_t *msg);

/* The first header named @key (the last one when @last), or NULL. */
SF_API const sf_header_t *sf_message_header(const sf_message_t *msg, const char *key, int last);

/* ------------------------------------------------------------------------------------------
 * Producer
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_producer sf_producer_t;

/* The outcome of one record: @record points at the library's copy (valid during the
 * callback only), @err is 0 or why it failed after retries; on success @partition, @offset
 * and @timestamp say where it landed (@offset is -1 for acks=0). */
typedef struct sf_delivery {
    const sf_record_t *record;
    int32_t partition;
    int64_t offset;
    int64_t timestamp;
    int err;
} sf_delivery_t;

typedef void(sf_delivery_cb)(const sf_delivery_t *delivery, void *opaque);

/* A producer configured by @conf (copied). Returns NULL with a message in @errstr when the
 * configuration is unusable (e.g. no bootstrap.servers). Brokers are contacted lazily. */
SF_API sf_producer_t *sf_producer_new(const sf_conf_t *conf, char *errstr, size_t errstr_size);

/* Queue @rec (copied) for sending. @cb (may be NULL) is called once with the outcome, from
 * sf_producer_poll/flush/destroy. Blocks up to max.block.ms while the topic's metadata is
 * unknown or buffer.memory is full. Returns SF_OK, SF_ERROR_QUEUE_FULL, SF_ERROR_TIMED_OUT
 * (metadata), SF_ERROR_TOOLARGE (over max.request.size), SF_ERROR_INVALID, or a Kafka error
 * such as UNKNOWN_TOPIC_OR_PARTITION; on an error @cb is not called. */
SF_API int sf_producer_send(sf_producer_t *p, const sf_record_t *rec, sf_delivery_cb *cb,
                            void *opaque);

/* Serve the delivery callbacks that are due, waiting up to @timeout_ms (0: do not wait,
 * -1: forever) for the first. Returns the number of callbacks served. */
SF_API int sf_producer_poll(sf_producer_t *p, int timeout_ms);

/* Send everything queued now (ignoring linger.ms) and wait until every record queued before
 * the call has its outcome, serving callbacks. Returns SF_OK or SF_ERROR_TIMED_OUT. */
SF_API int sf_producer_flush(sf_producer_t *p, int timeout_ms);

/* Records queued or in flight whose outcome has not been served yet. */
SF_API size_t sf_producer_outstanding(sf_producer_t *p);

/* Stop the producer. Records still queued fail with SF_ERROR_DESTROYED; every pending
 * callback is served before this returns. Call sf_producer_flush first to deliver them. */
SF_API void sf_producer_destroy(sf_producer_t *p);

/* Transactions (transactional.id set; transaction.timeout.ms): the records sent between
 * begin and commit become visible to read_committed consumers together, with the consumer
 * offsets sent to the transaction, or not at all (abort). One application thread runs the
 * transactions; records may be sent from others while one is open. A call that fails with
 * SF_ERROR_TIMED_OUT or a retriable error may be called again; PRODUCER_FENCED (another
 * producer initialised the same transactional.id) ends the producer's transactions: every
 * later call fails with it. */

/* Take the transactional id's producer id (once, first): fences earlier producers with the
 * id and ends their open transaction. */
SF_API int sf_producer_init_transactions(sf_producer_t *p, int timeout_ms);
/* Open a transaction (SF_ERROR_STATE when one is open, or before init). Sends are refused
 * with SF_ERROR_STATE outside a transaction; a record's partition joins the transaction the
 * first time it is written to (AddPartitionsToTxn; the send waits for it). */
SF_API int sf_producer_begin_transaction(sf_producer_t *p);
/* Commit the @count offsets (topic, partition and offset: the next record to consume) of
 * group @group_id as part of the transaction (AddOffsetsToTxn, TxnOffsetCommit outside group
 * management). */
struct sf_topic_partition;
SF_API int sf_producer_send_offsets_to_transaction(sf_producer_t *p,
                                                   const struct sf_topic_partition *offsets,
                                                   size_t count, const char *group_id,
                                                   int timeout_ms);
/* Flush, then commit. A record of the transaction that failed fails the commit with its
 * error: the transaction can then only be aborted. */
SF_API int sf_producer_commit_transaction(sf_producer_t *p, int timeout_ms);
/* Abort: records not sent yet fail with SF_ERROR_STATE, those sent are never seen by
 * read_committed consumers. */
SF_API int sf_producer_abort_transaction(sf_producer_t *p, int timeout_ms);

/* ------------------------------------------------------------------------------------------
 * Consumer: explicitly assigned partitions (sf_consumer_assign), or a consumer group
 * (group.id and sf_consumer_subscribe) whose coordinator hands out the partitions
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_consumer sf_consumer_t;

/* A partition with an offset, for commits, committed offsets and rebalance events. @topic is
 * borrowed: from the caller in lists the caller passes, from the library (valid during the
 * call or callback, or until the list is destroyed) in lists it hands out. */
typedef struct sf_topic_partition {
    const char *topic;
    int32_t partition;
    int64_t offset; /* -1 when there is none (e.g. no committed offset) */
    int err;        /* 0, or why this partition failed */
} sf_topic_partition_t;

/* Rebalance events of a group member. */
enum {
    SF_REBALANCE_ASSIGNED = 1, /* these partitions are now assigned and fetched: from their
                                * committed offsets, else auto.offset.reset; the callback may
                                * seek them */
    SF_REBALANCE_REVOKED = 2,  /* these partitions are about to be taken away: they are still
                                * assigned during the callback, so their offsets can be
                                * committed (auto-commit commits them right after) */
    SF_REBALANCE_LOST = 3      /* these partitions were taken away without a revocation (the
                                * member was fenced or left the group for want of polls):
                                * they are gone already and committing them is refused */
};

/* Called with @event and the @count partitions it concerns (borrowed for the call), from
 * sf_consumer_poll, sf_consumer_unsubscribe or sf_consumer_destroy in the thread calling them.
 * The callback may call the consumer's functions (commit, seek, position, ...) except
 * poll, subscribe, unsubscribe and destroy. With eager assignors (range, roundrobin) a
 * rebalance revokes everything and then assigns everything; with cooperative-sticky only the
 * partitions that move are revoked, and nothing is revoked when nothing moves. */
typedef void(sf_rebalance_cb)(sf_consumer_t *c, int event, const sf_topic_partition_t *parts,
                              size_t count, void *opaque);

/* Have consumers created from @conf call @cb on rebalances (NULL: no callback; assignments
 * then change without the application's involvement, and a group makes progress even while
 * the application does not poll). */
SF_API void sf_conf_set_rebalance_cb(sf_conf_t *conf, sf_rebalance_cb *cb, void *opaque);

SF_API sf_consumer_t *sf_consumer_new(const sf_conf_t *conf, char *errstr, size_t errstr_size);

/* Start consuming @topic/@partition at @offset: an offset, SF_OFFSET_BEGINNING or
 * SF_OFFSET_END. SF_ERROR_EXISTS if it is already assigned, SF_ERROR_STATE while subscribed. */
SF_API int sf_consumer_assign(sf_consumer_t *c, const char *topic, int32_t partition,
                              int64_t offset);

/* Stop consuming a partition; buffered messages of it are dropped. SF_ERROR_STATE while
 * subscribed. */
SF_API int sf_consumer_unassign(sf_consumer_t *c, const char *topic, int32_t partition);

/* Join the consumer group of the group.id key and consume the partitions its coordinator
 * assigns to this member, out of the @count @topics. A topic starting with '^' is a POSIX
 * extended regular expression matched against the cluster's topics (internal ones excepted)
 * at every metadata refresh (metadata.max.age.ms): a new matching topic rejoins the group.
 * Replaces an earlier subscription. The group is joined in the background; sf_consumer_poll
 * delivers the records and serves the rebalance callback. Returns SF_OK, SF_ERROR_STATE (no
 * group.id, or partitions assigned with sf_consumer_assign) or SF_ERROR_INVALID (no topics,
 * an empty name, a regular expression that does not compile). */
SF_API int sf_consumer_subscribe(sf_consumer_t *c, const char *const *topics, size_t count);

/* Leave the group: the assigned partitions are revoked (the callback runs, auto-commit
 * commits them), a LeaveGroup is sent, and nothing is consumed until the next subscribe.
 * Returns SF_OK or SF_ERROR_STATE when not subscribed. */
SF_API int sf_consumer_unsubscribe(sf_consumer_t *c);

/* Commit offsets to the group's coordinator and wait up to @timeout_ms (-1:
 * request.timeout.ms) for the answer. @offsets NULL: the positions of every assigned
 * partition (the offset after the last message poll returned; partitions not resolved yet
 * are left out). Otherwise the @count partitions given, each with the offset to commit (the
 * next one to read), and each gets its err. Needs group.id; a member commits in its current
 * generation, a consumer that is not a member as an outsider (which a coordinator accepts
 * only while the group has no members). A member's commit is sent in the generation it was
 * made in or not at all: made or retried while the member rejoins, it fails with
 * REBALANCE_IN_PROGRESS, after the member left that generation with ILLEGAL_GENERATION.
 * Returns SF_OK or the first error, e.g. REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION or
 * UNKNOWN_MEMBER_ID when the group moved on (the member then rejoins), SF_ERROR_TIMED_OUT,
 * SF_ERROR_STATE (no group.id). */
SF_API int sf_consumer_commit(sf_consumer_t *c, sf_topic_partition_t *offsets, size_t count,
                              int timeout_ms);

/* The outcome of an asynchronous commit: @err 0 or the first error, and the @count partitions
 * with their offsets and errors (borrowed for the call). Called from sf_consumer_poll or
 * sf_consumer_destroy. */
typedef void(sf_commit_cb)(sf_consumer_t *c, int err, const sf_topic_partition_t *offsets,
                           size_t count, void *opaque);

/* Like sf_consumer_commit without waiting: @cb (may be NULL) gets the outcome. Returns SF_OK
 * once the commit is queued, SF_ERROR_STATE (no group.id), SF_ERROR_NOMEM. */
SF_API int sf_consumer_commit_async(sf_consumer_t *c, const sf_topic_partition_t *offsets,
                                    size_t count, sf_commit_cb *cb, void *opaque);

/* The committed offsets of the @count partitions @parts: each gets its offset (-1: none) and
 * err. Waits up to @timeout_ms (-1: request.timeout.ms). Returns SF_OK, the first error, or
 * SF_ERROR_STATE (no group.id). */
SF_API int sf_consumer_committed(sf_consumer_t *c, sf_topic_partition_t *parts, size_t count,
                                 int timeout_ms);

/* The consumer's group membership as it is now (KIP-447): its group id, generation, member id
 * and group.instance.id, for sf_producer_send_offsets_to_transaction_group. NULL without a
 * group.id, or when out of memory; free it with sf_group_metadata_destroy. */
typedef struct sf_group_metadata sf_group_metadata_t;
SF_API sf_group_metadata_t *sf_consumer_group_metadata(sf_consumer_t *c);
SF_API void sf_group_metadata_destroy(sf_group_metadata_t *md);

/* sf_producer_send_offsets_to_transaction for the member @md describes: the group's
 * coordinator accepts the offsets only while that member is in that generation, so a consumer
 * whose partitions went to another member cannot commit for them (ILLEGAL_GENERATION,
 * UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID: the transaction must be aborted). */
SF_API int sf_producer_send_offsets_to_transaction_group(sf_producer_t *p,
                                                         const sf_topic_partition_t *offsets,
                                                         size_t count,
                                                         const sf_group_metadata_t *md,
                                                         int timeout_ms);

/* The partitions assigned now (explicitly or by the group), each with its position (-1 while
 * it is being resolved), in *@parts (@count of them; NULL when none), one allocation the caller
 * frees with sf_topic_partitions_destroy. */
SF_API int sf_consumer_assignment(sf_consumer_t *c, sf_topic_partition_t **parts, size_t *count);

/* Free a partition list the library handed out (NULL is ignored). */
SF_API void sf_topic_partitions_destroy(sf_topic_partition_t *parts);

/* Move an assigned partition to @offset (or SF_OFFSET_BEGINNING / SF_OFFSET_END); buffered
 * messages of it are dropped. */
SF_API int sf_consumer_seek(sf_consumer_t *c, const char *topic, int32_t partition,
                            int64_t offset);

/* Move an assigned partition to the first offset whose timestamp is >= @timestamp_ms (the
 * end when there is none), found with ListOffsets; waits up to @timeout_ms for the answer. */
SF_API int sf_consumer_seek_timestamp(sf_consumer_t *c, const char *topic, int32_t partition,
                                      int64_t timestamp_ms, int timeout_ms);

/* The offset of the next message poll will return for an assigned partition; blocks up to
 * @timeout_ms when the position is still being resolved (BEGINNING/END). */
SF_API int sf_consumer_position(sf_consumer_t *c, const char *topic, int32_t partition,
                                int64_t *offset, int timeout_ms);

/* Ask a partition's leader for its log start offset (@low) and high watermark (@high). */
SF_API int sf_consumer_watermarks(sf_consumer_t *c, const char *topic, int32_t partition,
                                  int64_t *low, int64_t *high, int timeout_ms);

/* The next message of any assigned partition, waiting up to @timeout_ms (-1: forever). NULL on
 * timeout. Fetches are pipelined in the background up to queued.max.messages.kbytes. The
 * caller owns the message. Messages of one partition come in offset order. A group member
 * serves its pending rebalance and commit callbacks here first, and counts the message poll
 * returned before as processed (enable.auto.commit commits past it). A group error comes as
 * a message with partition -1 and err set; FENCED_INSTANCE_ID (another consumer runs with
 * this group.instance.id) also means the member lost its partitions and stays out of the
 * group until the next sf_consumer_subscribe. */
SF_API sf_message_t *sf_consumer_poll(sf_consumer_t *c, int timeout_ms);

/* Make a poll blocked in another thread return NULL now (thread-safe). */
SF_API void sf_consumer_wakeup(sf_consumer_t *c);

/* Stop the consumer. A group member first serves its pending callbacks, revokes its
 * partitions (the rebalance callback runs in this thread), commits their positions when
 * enable.auto.commit is on, and leaves the group (LeaveGroup; a static member, with
 * group.instance.id, stays a member until its session times out). */
SF_API void sf_consumer_destroy(sf_consumer_t *c);

/* ------------------------------------------------------------------------------------------
 * Admin
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_admin sf_admin_t;

SF_API sf_admin_t *sf_admin_new(const sf_conf_t *conf, char *errstr, size_t errstr_size);
SF_API void sf_admin_destroy(sf_admin_t *a);

/* A configuration name and value (NULL value: delete the override). */
typedef struct sf_config_kv {
    const char *name;
    const char *value;
} sf_config_kv_t;

typedef struct sf_partition_info {
    int32_t id;
    int32_t leader; /* -1: none */
    int32_t leader_epoch;
    int32_t *replicas;
    size_t replica_count;
    int32_t *isr;
    size_t isr_count;
    int err;
} sf_partition_info_t;

typedef struct sf_topic_info {
    char *name;
    int err; /* e.g. UNKNOWN_TOPIC_OR_PARTITION for a topic asked for by name */
    int internal;
    sf_partition_info_t *partitions; /* sorted by id */
    size_t partition_count;
} sf_topic_info_t;

typedef struct sf_broker_info {
    int32_t id;
    char *host;
    int port;
    char *rack; /* NULL when unset */
} sf_broker_info_t;

typedef struct sf_cluster_info {
    char *cluster_id; /* NULL when the broker does not say */
    int32_t controller_id; /* -1: none */
    sf_broker_info_t *brokers; /* sorted by id */
    size_t broker_count;
    sf_topic_info_t *topics; /* sorted by name */
    size_t topic_count;
} sf_cluster_info_t;

/* Brokers, controller, and the topics named in @topics (@topic_count of them), or every
 * topic when @topic_count is 0. The caller frees *@out with sf_cluster_info_destroy. */
SF_API int sf_admin_describe_cluster(sf_admin_t *a, const char *const *topics,
                                     size_t topic_count, int timeout_ms,
                                     sf_cluster_info_t **out);
SF_API void sf_cluster_info_destroy(sf_cluster_info_t *info);

/* Create a topic. @partitions / @replication_factor -1: the broker's defaults. @configs
 * (@config_count entries) are topic config overrides. @errstr receives the broker's message
 * when there is one. */
SF_API int sf_admin_create_topic(sf_admin_t *a, const char *topic, int32_t partitions,
                                 int16_t replication_factor, const sf_config_kv_t *configs,
                                 size_t config_count, int timeout_ms, char *errstr,
                                 size_t errstr_size);

/* sf_admin_create_topic with CreateTopics' other fields. *@partitions and
 * *@replication_factor are what to create (-1: the default) and, on success, what the
 * controller made or would make (unchanged from a broker too old to say). @replicas, when not
 * NULL, places every replica: *@partitions rows of *@replication_factor broker ids (the first
 * of each row is the preferred leader), in place of the controller's placement.
 * @validate_only: the controller checks everything and answers as it would, but creates
 * nothing. */
SF_API int sf_admin_create_topic_ex(sf_admin_t *a, const char *topic, int32_t *partitions,
                                    int16_t *replication_factor, const int32_t *replicas,
                                    const sf_config_kv_t *configs, size_t config_count,
                                    int validate_only, int timeout_ms, char *errstr,
                                    size_t errstr_size);

SF_API int sf_admin_delete_topic(sf_admin_t *a, const char *topic, int timeout_ms,
                                 char *errstr, size_t errstr_size);

/* Grow @topic to @total_count partitions. */
SF_API int sf_admin_create_partitions(sf_admin_t *a, const char *topic, int32_t total_count,
                                      int timeout_ms, char *errstr, size_t errstr_size);

typedef struct sf_config_entry {
    char *name;
    char *value;   /* NULL for sensitive or unset values */
    int source;    /* Kafka's ConfigSource: 1 topic, 4 static broker, 5 default, ... */
    int is_default;
    int read_only;
    int sensitive;
} sf_config_entry_t;

/* Every config of @topic (with its source), or of broker @topic as a decimal id when
 * @broker is 1 ("": the cluster-wide default, only the dynamic defaults that are set). The
 * caller frees *@entries with sf_config_entries_destroy. */
SF_API int sf_admin_describe_configs(sf_admin_t *a, const char *topic, int broker,
                                     int timeout_ms, sf_config_entry_t **entries,
                                     size_t *count);
SF_API void sf_config_entries_destroy(sf_config_entry_t *entries, size_t count);

/* Set (value) or remove (NULL value) topic config overrides, incrementally. */
SF_API int sf_admin_alter_configs(sf_admin_t *a, const char *topic, const sf_config_kv_t *kvs,
                                  size_t count, int timeout_ms, char *errstr,
                                  size_t errstr_size);

/* Set (value) or remove (NULL value) dynamic broker configs, incrementally, of broker @broker
 * (a decimal id; the request goes to that broker) or, when @broker is "", the cluster-wide
 * default of every broker. Keys that only the configuration file sets are refused
 * (INVALID_REQUEST, the broker's message in @errstr); SF_ERROR_NOTFOUND: no such broker. */
SF_API int sf_admin_alter_broker_configs(sf_admin_t *a, const char *broker,
                                         const sf_config_kv_t *kvs, size_t count, int timeout_ms,
                                         char *errstr, size_t errstr_size);

/* An API a broker serves and the range of versions it accepts. */
typedef struct sf_api_version {
    int16_t api_key;
    int16_t min_version;
    int16_t max_version;
    const char *name; /* Kafka's name of the API ("Produce", ...), "Unknown" when the library
                       * does not know it; static */
} sf_api_version_t;

/* The APIs broker @broker (-1: any broker) advertises in ApiVersions, sorted by key, in
 * *@apis (@count of them), freed with sf_api_versions_destroy. SF_ERROR_NOTFOUND: no such
 * broker. */
SF_API int sf_admin_api_versions(sf_admin_t *a, int32_t broker, int timeout_ms,
                                 sf_api_version_t **apis, size_t *count);
SF_API void sf_api_versions_destroy(sf_api_version_t *apis);

/* ---- Producers ---- */

/* A producer that a partition's leader keeps state for: an idempotent (or transactional)
 * producer that wrote to it and has not expired (producer.id.expiration.ms). */
typedef struct sf_producer_state {
    int64_t producer_id;
    int32_t producer_epoch;
    int32_t last_sequence;            /* of its last batch; -1 when none */
    int64_t last_timestamp;           /* ms since the epoch of its last batch */
    int32_t coordinator_epoch;        /* -1 outside transactions */
    int64_t current_txn_start_offset; /* -1: no transaction open */
} sf_producer_state_t;

/* DescribeProducers to the leader of partition @partition of @topic (found again when it
 * moves, until @timeout_ms): its producers in *@producers (@count; NULL when none), freed
 * with sf_producer_states_destroy. */
SF_API int sf_admin_describe_producers(sf_admin_t *a, const char *topic, int32_t partition,
                                       int timeout_ms, sf_producer_state_t **producers,
                                       size_t *count);
SF_API void sf_producer_states_destroy(sf_producer_state_t *producers);

/* ---- Transactions ---- */

typedef struct sf_txn_listing {
    char *transactional_id;
    int64_t producer_id;
    char *state;         /* Kafka's names: "Ongoing", "PrepareCommit", "CompleteAbort", ... */
    int32_t coordinator; /* the broker that listed it */
} sf_txn_listing_t;

/* Every transactional id of the cluster: ListTransactions to every broker, sorted by id, in
 * *@txns (@count), freed with sf_txn_listings_destroy. When a broker fails to answer, its
 * error is returned and *@txns still holds what the others listed. */
SF_API int sf_admin_list_transactions(sf_admin_t *a, int timeout_ms, sf_txn_listing_t **txns,
                                      size_t *count);
SF_API void sf_txn_listings_destroy(sf_txn_listing_t *txns, size_t count);

typedef struct sf_txn_info {
    char *transactional_id;
    char *state;
    int32_t timeout_ms;        /* transaction.timeout.ms */
    int64_t start_ms;          /* when the open transaction started; -1 when none is */
    int64_t producer_id;
    int32_t producer_epoch;
    int32_t coordinator;
    sf_topic_partition_t *partitions; /* in the open transaction (offset -1) */
    size_t partition_count;
} sf_txn_info_t;

/* DescribeTransactions of @transactional_id to its transaction coordinator (found with
 * FindCoordinator, and again when it moves): *@info, freed with sf_txn_info_destroy.
 * TRANSACTIONAL_ID_NOT_FOUND when the cluster does not know it. */
SF_API int sf_admin_describe_transaction(sf_admin_t *a, const char *transactional_id,
                                         int timeout_ms, sf_txn_info_t **info);
SF_API void sf_txn_info_destroy(sf_txn_info_t *info);

/* ---- Consumer groups ----
 * Group requests go to the group's coordinator, found with FindCoordinator and found again
 * when it moves (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) until @timeout_ms has passed. */

typedef struct sf_group_listing {
    char *group_id;
    char *protocol_type; /* "consumer" for consumer groups; "" for a group that only has
                          * committed offsets */
    char *state;         /* "Stable", "Empty", ...; NULL when the broker does not say */
    int32_t coordinator; /* the broker that listed it */
} sf_group_listing_t;

/* Every group of the cluster: ListGroups to every broker, the answers merged and sorted by
 * group id, in *@groups (@count of them), freed with sf_group_listings_destroy. When a broker
 * fails to answer, its error is returned and *@groups still holds what the others listed. */
SF_API int sf_admin_list_groups(sf_admin_t *a, int timeout_ms, sf_group_listing_t **groups,
                                size_t *count);
SF_API void sf_group_listings_destroy(sf_group_listing_t *groups, size_t count);

typedef struct sf_group_member {
    char *member_id;
    char *instance_id; /* NULL: a dynamic member */
    char *client_id;
    char *host;
    sf_topic_partition_t *assignment; /* the partitions assigned to it, decoded when the
                                       * protocol type is "consumer" (offsets -1); NULL when
                                       * none */
    size_t assignment_count;
} sf_group_member_t;

typedef struct sf_group_info {
    char *group_id;
    int err;             /* e.g. GROUP_AUTHORIZATION_FAILED; 0 when described */
    char *state;         /* "Stable", "PreparingRebalance", "CompletingRebalance", "Empty",
                          * "Dead" (no such group) */
    char *protocol_type; /* "consumer", ...; "" when the group has none */
    char *protocol;      /* the assignor chosen ("range", ...); "" outside Stable */
    int32_t coordinator; /* broker id */
    sf_group_member_t *members;
    size_t member_count;
} sf_group_info_t;

/* Describe the @count groups @groups (DescribeGroups to each one's coordinator): *@out gets
 * @count entries in the same order, each with its own err, freed with
 * sf_group_info_destroy. Returns SF_OK when every group got an answer (even one with an
 * error), else the error of the first that did not. */
SF_API int sf_admin_describe_groups(sf_admin_t *a, const char *const *groups, size_t count,
                                    int timeout_ms, sf_group_info_t **out);
SF_API void sf_group_info_destroy(sf_group_info_t *info, size_t count);

/* Delete the @count groups @groups with their committed offsets (DeleteGroups); @errs (may be
 * NULL) gets each group's outcome, e.g. GROUP_ID_NOT_FOUND or NON_EMPTY_GROUP (it has
 * members). Returns SF_OK or the first error; SF_ERROR_UNSUPPORTED when the coordinator does
 * not serve DeleteGroups. */
SF_API int sf_admin_delete_groups(sf_admin_t *a, const char *const *groups, size_t count,
                                  int *errs, int timeout_ms);

/* Every committed offset of @group (OffsetFetch for all partitions), sorted by topic and
 * partition, in *@offsets (@count; NULL when none), freed with sf_topic_partitions_destroy.
 * A group without offsets has none (not an error). */
SF_API int sf_admin_list_group_offsets(sf_admin_t *a, const char *group, int timeout_ms,
                                       sf_topic_partition_t **offsets, size_t *count);

/* Commit the @count offsets @offsets for @group as an outsider (OffsetCommit with generation
 * -1 and no member id), which a coordinator accepts only while the group has no members
 * (else UNKNOWN_MEMBER_ID or a similar error). Each entry gets its err. Returns SF_OK or the
 * first error. */
SF_API int sf_admin_alter_group_offsets(sf_admin_t *a, const char *group,
                                        sf_topic_partition_t *offsets, size_t count,
                                        int timeout_ms);

/* Look up an offset of each of the @count partitions @parts with ListOffsets to its leader:
 * @spec SF_OFFSET_END is the high watermark (the log end offset a consumer's lag is measured
 * against), SF_OFFSET_BEGINNING the log start offset, a timestamp (ms, >= 0) the first offset
 * whose timestamp is at or after it (-1 when there is none). Each entry gets its offset and
 * err. Returns SF_OK or the first error. */
SF_API int sf_admin_list_offsets(sf_admin_t *a, sf_topic_partition_t *parts, size_t count,
                                 int64_t spec, int timeout_ms);

/* A committed offset and how far it is behind its partition's log end. */
typedef struct sf_group_lag {
    const char *topic;
    int32_t partition;
    int64_t committed;
    int64_t log_end; /* -1 when it could not be read (see err) */
    int64_t lag;     /* log_end - committed, at least 0; -1 when log_end is unknown */
    int err;
} sf_group_lag_t;

/* The lag of every partition @group has committed an offset for (sf_admin_list_group_offsets
 * and sf_admin_list_offsets with SF_OFFSET_END), sorted by topic and partition, in *@lag
 * (@count; NULL when none) freed with sf_group_lag_destroy. */
SF_API int sf_admin_group_lag(sf_admin_t *a, const char *group, int timeout_ms,
                              sf_group_lag_t **lag, size_t *count);
SF_API void sf_group_lag_destroy(sf_group_lag_t *lag);

/* A partition to move (KIP-455): @replicas (@replica_count broker ids, the first the preferred
 * leader) is the replica set it should have; NULL cancels the reassignment under way. */
typedef struct sf_reassignment_target {
    const char *topic;
    int32_t partition;
    const int32_t *replicas;
    size_t replica_count;
    int err; /* set by the call: 0 when the controller took it, else why not */
} sf_reassignment_target_t;

/* Start (or cancel) the @count moves of @targets on the controller
 * (AlterPartitionReassignments). Returns the request's error; each target's own answer is in
 * its err, and @errstr receives the message of the first that failed. The controller answers
 * when the moves are recorded; sf_admin_list_reassignments tells when they are done. */
SF_API int sf_admin_alter_reassignments(sf_admin_t *a, sf_reassignment_target_t *targets,
                                        size_t count, int timeout_ms, char *errstr,
                                        size_t errstr_size);

/* A reassignment under way: the partition's replicas now, those being added and those being
 * removed when it finishes. */
typedef struct sf_reassignment {
    char *topic;
    int32_t partition;
    int32_t *replicas;
    size_t replica_count;
    int32_t *adding;
    size_t adding_count;
    int32_t *removing;
    size_t removing_count;
} sf_reassignment_t;

/* The reassignments under way (ListPartitionReassignments) of the @count partitions of @parts
 * (their offset and err unused), or of every partition when @count is 0, sorted by topic and
 * partition, in *@out (@n; NULL when none) freed with sf_reassignments_destroy. */
SF_API int sf_admin_list_reassignments(sf_admin_t *a, const sf_topic_partition_t *parts,
                                       size_t count, int timeout_ms, sf_reassignment_t **out,
                                       size_t *n);
SF_API void sf_reassignments_destroy(sf_reassignment_t *r, size_t n);

/* Elect leaders on the controller (ElectLeaders): the preferred replica (@unclean 0, Kafka's
 * PREFERRED election) or, where no in-sync replica can lead, an out-of-sync one (@unclean 1,
 * UNCLEAN). @parts (@count; their offsets unused) name the partitions, each answered in its
 * err (ELECTION_NOT_NEEDED when the right replica leads already); @count 0 elects wherever
 * an election is needed, with no answer per partition. Returns the request's error. */
SF_API int sf_admin_elect_leaders(sf_admin_t *a, int unclean, sf_topic_partition_t *parts,
                                  size_t count, int timeout_ms);

/* ------------------------------------------------------------------------------------------
 * Request/reply
 *
 * A request is a record with headers "reply-to" (the reply topic), "reply-partition" (the
 * requester's reply partition, decimal) and "correlation-id" (unique per request). A responder
 * answers with a record on that topic and partition carrying the same "correlation-id".
 * ------------------------------------------------------------------------------------------ */

typedef struct sf_requester sf_requester_t;

/* A requester whose replies arrive on @reply_topic partition @reply_partition (created with
 * the broker's defaults when missing; SF_PARTITION_ANY picks one at random). */
SF_API sf_requester_t *sf_requester_new(const sf_conf_t *conf, const char *reply_topic,
                                        int32_t reply_partition, char *errstr,
                                        size_t errstr_size);

/* Send @req (its headers plus the three above) and wait up to @timeout_ms for the reply.
 * Returns SF_OK with *@reply set (caller frees with sf_message_destroy),
 * SF_ERROR_TIMED_OUT, or the error that failed the send. Many threads may wait at once. */
SF_API int sf_request(sf_requester_t *r, const sf_record_t *req, int timeout_ms,
                      sf_message_t **reply);

SF_API void sf_requester_destroy(sf_requester_t *r);

typedef struct sf_responder sf_responder_t;

/* Called for each request; fill @reply (value, key, headers; topic and partition are ignored)
 * and return 0 to send it, or non-zero to send nothing. The reply is copied right after the
 * callback returns: its data may point into @request, @opaque or static memory, not into the
 * callback's own stack. */
typedef int(sf_respond_cb)(const sf_message_t *request, sf_record_t *reply, void *opaque);

/* A responder reading requests from @topic (every partition when @partition is
 * SF_PARTITION_ANY), starting at the end. */
SF_API sf_responder_t *sf_responder_new(const sf_conf_t *conf, const char *topic,
                                        int32_t partition, sf_respond_cb *cb, void *opaque,
                                        char *errstr, size_t errstr_size);

/* Serve requests for up to @timeout_ms (-1: until sf_responder_stop). Returns the number of
 * requests answered, or a negative error. */
SF_API int sf_responder_run(sf_responder_t *r, int timeout_ms);

/* Make sf_responder_run return soon (thread-safe; async-signal-safe). */
SF_API void sf_responder_stop(sf_responder_t *r);

SF_API void sf_responder_destroy(sf_responder_t *r);

#ifdef __cplusplus
}
#endif

#endif
