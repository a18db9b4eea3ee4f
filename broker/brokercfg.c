/* Typed broker configuration: a table of keys (name, type, range, default), one parser per type,
 * then the rules that involve several keys (precedence, listeners vs. TLS settings). */
#include "brokercfg.h"

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "err.h"
#include "logging.h"
#include "tls.h"
#include "topiccfg.h"

/* Value types of the key table. */
typedef enum key_type {
    KT_INT32,     /* int32_t, range min..max */
    KT_INT64,     /* int64_t, range min..max */
    KT_BOOL,      /* int: true / false */
    KT_STRING,    /* char *: any text; empty = unset */
    KT_ENUM,      /* int: index into a list of names mapped to values */
    KT_LISTENERS, /* listener list (listeners / advertised.listeners) */
    KT_DIRS,      /* comma-separated directory list (log.dirs / log.dir) */
    KT_ZK,        /* host:port[,host:port...][/chroot] */
    KT_IGNORED,   /* a Kafka key StreamFlow does not use: accepted, listed in ignored_keys */
} key_type_t;

/* Everything parsed from the file before the cross-key rules; cfg is the result. */
typedef struct raw {
    sf_brokercfg_t cfg;
    int32_t log_roll_hours, log_retention_minutes, log_retention_hours; /* KT_INT32 */
    sf_brokercfg_listener_t *adv;
    size_t nadv;
    char **log_dir;
    size_t nlog_dir;
    char *ip_overrides_str; /* KT_STRING */
} raw_t;

typedef struct enum_val {
    const char *name;
    int value;
} enum_val_t;

typedef struct key_def {
    const char *name;
    key_type_t type;
    size_t off;          /* of the field in raw_t */
    size_t size;         /* of the field, checked against the type */
    int64_t min, max;    /* integer range */
    const char *def;     /* default, parsed like a value from the file; NULL = none/derived */
    const char *noun;    /* integers: what the value is ("a number of bytes") */
    const char *note;    /* appended to the expectation of an integer ("-1 means unlimited") */
    const enum_val_t *enums; /* KT_ENUM: the names, NULL-terminated */
    const char *help;    /* for --help */
} key_def_t;

#define OFF(field) offsetof(raw_t, field)
#define FIELD(field) OFF(field), sizeof(((raw_t *)0)->field)
#define NOFIELD ((size_t)-1) /* a key whose value is only validated */
#define IGNORED(name) {name, KT_IGNORED, NOFIELD, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}

static const enum_val_t client_auth_vals[] = {{"none", SF_TLS_CLIENT_AUTH_NONE},
                                              {"requested", SF_TLS_CLIENT_AUTH_REQUESTED},
                                              {"required", SF_TLS_CLIENT_AUTH_REQUIRED},
                                              {NULL, 0}};
static const enum_val_t log_level_vals[] = {{"error", SF_LOG_ERR},   {"warning", SF_LOG_WARNING},
                                            {"notice", SF_LOG_NOTICE}, {"info", SF_LOG_INFO},
                                            {"debug", SF_LOG_DEBUG},   {NULL, 0}};
static const enum_val_t pem_vals[] = {{"PEM", 0}, {NULL, 0}};

#define I32MAX ((int64_t)INT32_MAX)
#define NEVER "9223372036854775807"

static const key_def_t keys[] = {
    {"broker.id", KT_INT32, FIELD(cfg.broker_id), 0, I32MAX, NULL, "a broker id",
     "automatic broker id generation (-1) is not supported", NULL,
     "id of this broker (required)"},
    {"broker.rack", KT_STRING, FIELD(cfg.rack), 0, 0, NULL, NULL, NULL, NULL,
     "rack of this broker: new partitions spread their replicas over racks (default: none)"},
    {"listeners", KT_LISTENERS, FIELD(cfg.listeners), 0, 0, "PLAINTEXT://127.0.0.1:9092", NULL,
     NULL, NULL, "NAME://host:port,... to listen on (NAME is PLAINTEXT or SSL; empty host = all)"},
    {"advertised.listeners", KT_LISTENERS, FIELD(adv), 0, 0, NULL, NULL, NULL, NULL,
     "addresses given to clients (default: listeners)"},
    {"log.dirs", KT_DIRS, FIELD(cfg.log_dirs), 0, 0, NULL, NULL, NULL, NULL,
     "comma-separated data directories (required unless log.dir is set)"},
    {"log.dir", KT_DIRS, FIELD(log_dir), 0, 0, NULL, NULL, NULL, NULL,
     "data directory, used when log.dirs is not set"},
    {"zookeeper.connect", KT_ZK, FIELD(cfg.zk_connect), 0, 0, NULL, NULL, NULL, NULL,
     "host:port[,host:port...][/chroot] (required; chroot defaults to " SF_BROKERCFG_DEFAULT_ZK_CHROOT
     ")"},
    {"zookeeper.session.timeout.ms", KT_INT32, FIELD(cfg.zk_session_timeout_ms), 1, I32MAX, "18000",
     "a number of milliseconds", NULL, NULL, "ZooKeeper session timeout"},
    {"zookeeper.connection.timeout.ms", KT_INT32, FIELD(cfg.zk_connection_timeout_ms), 1, I32MAX,
     NULL, "a number of milliseconds", NULL, NULL,
     "how long to wait for a ZooKeeper connection (default: the session timeout)"},
    {"num.partitions", KT_INT32, FIELD(cfg.num_partitions), 1, I32MAX, "1", "a number of partitions",
     NULL, NULL, "partitions of an automatically created topic"},
    {"default.replication.factor", KT_INT32, FIELD(cfg.default_replication_factor), 1, 32767, "1",
     "a replication factor", NULL, NULL, "replicas of an automatically created topic"},
    {"min.insync.replicas", KT_INT32, FIELD(cfg.min_insync_replicas), 1, I32MAX, "1",
     "a number of replicas", NULL, NULL, "in-sync replicas required by acks=all"},
    {"auto.create.topics.enable", KT_BOOL, FIELD(cfg.auto_create_topics_enable), 0, 0, "true", NULL,
     NULL, NULL, "create unknown topics on metadata requests"},
    {"inter.broker.listener.name", KT_STRING, FIELD(cfg.inter_broker_listener_name), 0, 0, NULL,
     NULL, NULL, NULL, "the listener brokers reach each other on (default: the first one)"},
    {"security.inter.broker.protocol", KT_STRING, FIELD(cfg.security_inter_broker_protocol), 0, 0,
     NULL, NULL, NULL, NULL, "PLAINTEXT or SSL: the listener of that name, when "
     "inter.broker.listener.name is not set"},
    {"replica.lag.time.max.ms", KT_INT64, FIELD(cfg.replica_lag_time_max_ms), 1, INT64_MAX,
     "30000", "a number of milliseconds", NULL, NULL,
     "a follower not caught up for this long leaves the ISR"},
    {"replica.fetch.max.bytes", KT_INT32, FIELD(cfg.replica_fetch_max_bytes), 1, I32MAX,
     "1048576", "a number of bytes", NULL, NULL, "bytes a follower fetches per partition"},
    {"replica.fetch.response.max.bytes", KT_INT32, FIELD(cfg.replica_fetch_response_max_bytes), 1,
     I32MAX, "10485760", "a number of bytes", NULL, NULL, "bytes a follower fetches per request"},
    {"replica.fetch.wait.max.ms", KT_INT32, FIELD(cfg.replica_fetch_wait_max_ms), 0, I32MAX, "500",
     "a number of milliseconds", NULL, NULL, "how long a follower's fetch waits for data"},
    {"replica.fetch.min.bytes", KT_INT32, FIELD(cfg.replica_fetch_min_bytes), 1, I32MAX, "1",
     "a number of bytes", NULL, NULL, "bytes a follower's fetch waits for"},
    {"replica.fetch.backoff.ms", KT_INT32, FIELD(cfg.replica_fetch_backoff_ms), 0, I32MAX, "1000",
     "a number of milliseconds", NULL, NULL, "pause after a failed follower fetch"},
    {"replica.socket.timeout.ms", KT_INT32, FIELD(cfg.replica_socket_timeout_ms), 1, I32MAX,
     "30000", "a number of milliseconds", NULL, NULL, "timeout of a follower's requests"},
    {"controlled.shutdown.enable", KT_BOOL, FIELD(cfg.controlled_shutdown_enable), 0, 0, "true",
     NULL, NULL, NULL, "move leadership off the broker before it stops (SIGTERM)"},
    {"controlled.shutdown.max.retries", KT_INT32, FIELD(cfg.controlled_shutdown_max_retries), 0,
     I32MAX, "3", "a number of retries", NULL, NULL, "retries of a controlled shutdown"},
    {"controlled.shutdown.retry.backoff.ms", KT_INT32,
     FIELD(cfg.controlled_shutdown_retry_backoff_ms), 0, I32MAX, "5000",
     "a number of milliseconds", NULL, NULL, "pause between controlled shutdown retries"},
    {"auto.leader.rebalance.enable", KT_BOOL, FIELD(cfg.auto_leader_rebalance_enable), 0, 0,
     "true", NULL, NULL, NULL, "the controller moves leadership back to preferred replicas"},
    {"leader.imbalance.check.interval.seconds", KT_INT32,
     FIELD(cfg.leader_imbalance_check_interval_s), 1, I32MAX, "300", "a number of seconds", NULL,
     NULL, "how often the controller checks the leader balance"},
    {"leader.imbalance.per.broker.percentage", KT_INT32,
     FIELD(cfg.leader_imbalance_per_broker_percentage), 0, 100, "10", "a percentage", NULL, NULL,
     "share of a broker's preferred partitions led elsewhere that starts a rebalance"},
    {"offsets.topic.num.partitions", KT_INT32, FIELD(cfg.offsets_topic_num_partitions), 1, 1000,
     "50", "a number of buckets", NULL, NULL,
     "group coordinator buckets (fixed when the cluster first creates them)"},
    {"offset.metadata.max.bytes", KT_INT32, FIELD(cfg.offset_metadata_max_bytes), 0, 1048576,
     "4096", "a number of bytes", NULL, NULL, "largest metadata string of a committed offset"},
    {"offsets.retention.minutes", KT_INT32, FIELD(cfg.offsets_retention_minutes), 1, I32MAX,
     "10080", "a number of minutes", NULL, NULL,
     "how long an empty group's committed offsets are kept"},
    {"offsets.retention.check.interval.ms", KT_INT32, FIELD(cfg.offsets_retention_check_ms), 1,
     I32MAX, "600000", "a number of milliseconds", NULL, NULL,
     "how often expired committed offsets are looked for"},
    {"group.min.session.timeout.ms", KT_INT32, FIELD(cfg.group_min_session_timeout_ms), 0, I32MAX,
     "6000", "a number of milliseconds", NULL, NULL, "shortest session timeout a member may ask"},
    {"group.max.session.timeout.ms", KT_INT32, FIELD(cfg.group_max_session_timeout_ms), 0, I32MAX,
     "1800000", "a number of milliseconds", NULL, NULL, "longest session timeout a member may ask"},
    {"group.initial.rebalance.delay.ms", KT_INT32, FIELD(cfg.group_initial_rebalance_delay_ms), 0,
     I32MAX, "3000", "a number of milliseconds", NULL, NULL,
     "how long the first rebalance of an empty group waits for more members"},
    {"group.max.size", KT_INT32, FIELD(cfg.group_max_size), 1, I32MAX, "2147483647",
     "a number of members", NULL, NULL, "most members of one consumer group"},
    {"producer.id.expiration.ms", KT_INT32, FIELD(cfg.producer_id_expiration_ms), 1, I32MAX,
     "86400000", "a number of milliseconds", NULL, NULL,
     "how long a partition remembers an idle producer's sequence numbers"},
    {"transaction.max.timeout.ms", KT_INT32, FIELD(cfg.transaction_max_timeout_ms), 1, I32MAX,
     "900000", "a number of milliseconds", NULL, NULL,
     "longest transaction timeout a producer may ask"},
    {"transactional.id.expiration.ms", KT_INT32, FIELD(cfg.transactional_id_expiration_ms), 1,
     I32MAX, "604800000", "a number of milliseconds", NULL, NULL,
     "how long the state of an idle transactional id is kept"},
    {"transaction.abort.timed.out.transaction.cleanup.interval.ms", KT_INT32,
     FIELD(cfg.transaction_abort_check_ms), 1, I32MAX, "10000", "a number of milliseconds", NULL,
     NULL, "how often transactions past their timeout are looked for and aborted"},
    {"transaction.partition.verification.enable", KT_BOOL, FIELD(cfg.txn_verification_enable),
     0, 0, "true", NULL, NULL, NULL,
     "check with the coordinator that a transaction holds a partition before its first batch"},
    {"delete.topic.enable", KT_BOOL, FIELD(cfg.delete_topic_enable), 0, 0, "true", NULL, NULL, NULL,
     "allow deleting topics"},
    {"log.segment.bytes", KT_INT32, FIELD(cfg.log_segment_bytes), 14, I32MAX, "1073741824",
     "a number of bytes", NULL, NULL, "size at which a segment is rolled"},
    {"log.roll.ms", KT_INT64, FIELD(cfg.log_roll_ms), 1, INT64_MAX, NULL, "a number of milliseconds",
     NULL, NULL, "age at which a segment is rolled (overrides log.roll.hours)"},
    {"log.roll.hours", KT_INT32, FIELD(log_roll_hours), 1, I32MAX, "168", "a number of hours", NULL,
     NULL, "age at which a segment is rolled"},
    {"log.retention.ms", KT_INT64, FIELD(cfg.log_retention_ms), -1, INT64_MAX, NULL,
     "a number of milliseconds", "-1 means unlimited", NULL,
     "time to keep data (overrides .minutes and .hours)"},
    {"log.retention.minutes", KT_INT32, FIELD(log_retention_minutes), -1, I32MAX, NULL,
     "a number of minutes", "-1 means unlimited", NULL,
     "time to keep data (overrides log.retention.hours)"},
    {"log.retention.hours", KT_INT32, FIELD(log_retention_hours), -1, I32MAX, "168",
     "a number of hours", "-1 means unlimited", NULL, "time to keep data"},
    {"log.retention.bytes", KT_INT64, FIELD(cfg.log_retention_bytes), -1, INT64_MAX, "-1",
     "a number of bytes", "-1 means unlimited", NULL, "partition size past which old segments go"},
    {"log.retention.check.interval.ms", KT_INT64, FIELD(cfg.log_retention_check_interval_ms), 1,
     INT64_MAX, "300000", "a number of milliseconds", NULL, NULL, "how often retention runs"},
    {"log.index.interval.bytes", KT_INT32, FIELD(cfg.log_index_interval_bytes), 0, I32MAX, "4096",
     "a number of bytes", NULL, NULL, "bytes between offset index entries"},
    {"log.index.size.max.bytes", KT_INT32, FIELD(cfg.log_index_size_max_bytes), 4, I32MAX,
     "10485760", "a number of bytes", NULL, NULL, "maximum size of an offset index"},
    {"log.segment.fd.cache.size", KT_INT32, FIELD(cfg.log_segment_fd_cache_size), 0, I32MAX, "0",
     "a number of descriptors", "0 means half of the open-files limit", NULL,
     "StreamFlow: most segment files kept open (active segments are always open)"},
    {"log.flush.interval.messages", KT_INT64, FIELD(cfg.log_flush_interval_messages), 1, INT64_MAX,
     NEVER, "a number of messages", NULL, NULL, "messages between forced fsyncs"},
    {"log.flush.interval.ms", KT_INT64, FIELD(cfg.log_flush_interval_ms), 0, INT64_MAX, NULL,
     "a number of milliseconds", NULL, NULL,
     "time between forced fsyncs (default: log.flush.scheduler.interval.ms)"},
    {"log.flush.scheduler.interval.ms", KT_INT64, FIELD(cfg.log_flush_scheduler_interval_ms), 1,
     INT64_MAX, NEVER, "a number of milliseconds", NULL, NULL,
     "how often the flusher checks (never: checks every 1000 ms)"},
    {"message.max.bytes", KT_INT32, FIELD(cfg.message_max_bytes), 0, I32MAX, "1048588",
     "a number of bytes", NULL, NULL, "largest record batch accepted"},
    {"socket.request.max.bytes", KT_INT32, FIELD(cfg.socket_request_max_bytes), 1, I32MAX,
     "104857600", "a number of bytes", NULL, NULL, "largest request accepted"},
    {"connections.max.idle.ms", KT_INT64, FIELD(cfg.connections_max_idle_ms), -1, INT64_MAX,
     "600000", "a number of milliseconds", "-1 means never", NULL,
     "close connections idle this long (also unfinished TLS handshakes)"},
    {"queued.max.request.bytes", KT_INT64, FIELD(cfg.queued_max_request_bytes), -1, INT64_MAX,
     "536870912", "a number of bytes", "-1 means unlimited", NULL,
     "bytes of requests read and not yet answered, across connections, before reading stops"},
    {"queued.max.response.bytes", KT_INT64, FIELD(cfg.queued_max_response_bytes), -1, INT64_MAX,
     "536870912", "a number of bytes", "-1 means unlimited", NULL,
     "StreamFlow: bytes of responses not yet sent, across connections, before connections "
     "with one queued stop reading"},
    {"max.connections", KT_INT32, FIELD(cfg.max_connections), 0, I32MAX, "2147483647",
     "a number of connections", NULL, NULL, "client connections; more are closed at accept"},
    {"max.connections.per.ip", KT_INT32, FIELD(cfg.max_connections_per_ip), 0, I32MAX,
     "2147483647", "a number of connections", NULL, NULL,
     "client connections from one address; more are closed at accept"},
    {"max.connections.per.ip.overrides", KT_STRING, FIELD(ip_overrides_str), 0, 0, NULL, NULL,
     NULL, NULL, "host:max,... limits for some addresses instead of max.connections.per.ip"},
    {"num.network.threads", KT_INT32, FIELD(cfg.num_network_threads), 1, I32MAX, NULL,
     "a number of threads", NULL, NULL, "network threads (default: number of cores)"},
    {"num.io.threads", KT_INT32, FIELD(cfg.num_io_threads), 0, 256, "8", "a number of threads",
     NULL, NULL, "threads that append to and read from the logs"},
    {"http.listeners", KT_STRING, FIELD(cfg.http_listeners), 0, 0, NULL, NULL, NULL, NULL,
     "http://host:port or https://host:port (the ssl.* keystore),... for /metrics, /health "
     "and the REST API (default: none)"},
    {"http.auth.file", KT_STRING, FIELD(cfg.http_auth_file), 0, 0, NULL, NULL, NULL, NULL,
     "user:{SHA}hash lines (htpasswd -s): HTTP basic authentication for all but /health"},
    {"http.max.body.bytes", KT_INT32, FIELD(cfg.http_max_body_bytes), 0, I32MAX, "1048576",
     "a number of bytes", NULL, NULL, "largest HTTP request body accepted"},
    {"health.min.free.bytes", KT_INT64, FIELD(cfg.health_min_free_bytes), 0, INT64_MAX,
     "104857600", "a number of bytes", NULL, NULL,
     "free space each log directory needs for /health/ready"},
    {"health.max.consumer.lag", KT_INT64, FIELD(cfg.health_max_consumer_lag), 0, INT64_MAX,
     "10000", "a number of records", NULL, NULL,
     "consumer group lag on a partition past which /health/ready warns"},
    {"ssl.keystore.location", KT_STRING, FIELD(cfg.ssl_keystore_location), 0, 0, NULL, NULL, NULL,
     NULL, "PEM file: server certificate chain, then its private key"},
    {"ssl.keystore.type", KT_ENUM, NOFIELD, 0, 0, 0, "PEM", NULL, NULL, pem_vals,
     "keystore format (PEM only)"},
    {"ssl.key.password", KT_STRING, FIELD(cfg.ssl_key_password), 0, 0, NULL, NULL, NULL, NULL,
     "passphrase of an encrypted private key"},
    {"ssl.truststore.location", KT_STRING, FIELD(cfg.ssl_truststore_location), 0, 0, NULL, NULL,
     NULL, NULL, "PEM CA bundle that verifies client certificates"},
    {"ssl.truststore.type", KT_ENUM, NOFIELD, 0, 0, 0, "PEM", NULL, NULL, pem_vals,
     "truststore format (PEM only)"},
    {"ssl.client.auth", KT_ENUM, FIELD(cfg.ssl_client_auth), 0, 0, "none", NULL, NULL,
     client_auth_vals, "client certificates: none, requested or required"},
    {"log.level", KT_ENUM, FIELD(cfg.log_level), 0, 0, "info", NULL, NULL, log_level_vals,
     "StreamFlow: error, warning, notice, info or debug"},
    {"syslog", KT_BOOL, FIELD(cfg.syslog), 0, 0, "false", NULL, NULL, NULL,
     "StreamFlow: log to syslog instead of stderr"},
    /* Keys of Kafka's sample server.properties that have no meaning here. */
    IGNORED("num.recovery.threads.per.data.dir"),
    IGNORED("socket.send.buffer.bytes"),
    IGNORED("socket.receive.buffer.bytes"),
    IGNORED("offsets.topic.replication.factor"),
    IGNORED("transaction.state.log.replication.factor"),
    IGNORED("transaction.state.log.min.isr"),
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* Parsing context. */
typedef struct ctx {
    raw_t *raw;
    const char *file;
    char *errstr;
    size_t errstr_size;
    const sf_prop_t *seen[NKEYS]; /* the file's entry for each key, NULL if absent */
} ctx_t;

static int fail(ctx_t *c, const sf_prop_t *pr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Write "FILE:LINE: message" (or "FILE: message" without @pr); returns SF_ERR_INVALID. */
static int fail(ctx_t *c, const sf_prop_t *pr, const char *fmt, ...) {
    va_list ap;
    int n;
    if (!c->errstr || !c->errstr_size)
        return SF_ERR_INVALID;
    if (pr)
        n = snprintf(c->errstr, c->errstr_size, "%s:%d: ", c->file, pr->line);
    else
        n = snprintf(c->errstr, c->errstr_size, "%s: ", c->file);
    if (n < 0 || (size_t)n >= c->errstr_size)
        return SF_ERR_INVALID;
    va_start(ap, fmt);
    vsnprintf(c->errstr + n, c->errstr_size - (size_t)n, fmt, ap);
    va_end(ap);
    return SF_ERR_INVALID;
}

static int nomem(ctx_t *c) {
    fail(c, NULL, "out of memory");
    return SF_ERR_NOMEM;
}

static void *field(raw_t *raw, const key_def_t *k) {
    return (char *)raw + k->off;
}

/* "an integer >= 14" / "an integer between 1 and 32767" [+ "; note"] */
static void int_expectation(const key_def_t *k, char *buf, size_t size) {
    int64_t tmax = k->type == KT_INT32 ? I32MAX : INT64_MAX;
    int n;
    if (k->max == tmax)
        n = snprintf(buf, size, "an integer >= %lld", (long long)k->min);
    else
        n = snprintf(buf, size, "an integer between %lld and %lld", (long long)k->min,
                     (long long)k->max);
    if (k->note && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "; %s", k->note);
}

/* ------------------------------------------------------------------------------------------
 * Value parsers: each takes the key, the entry (NULL for a default) and the text.
 * ------------------------------------------------------------------------------------------ */

static int parse_int(ctx_t *c, const key_def_t *k, const sf_prop_t *pr, const char *s) {
    char exp[160], *end;
    long long v;
    int64_t tmax = k->type == KT_INT32 ? I32MAX : INT64_MAX, tmin = k->type == KT_INT32 ? INT32_MIN : INT64_MIN;

    int_expectation(k, exp, sizeof(exp));
    if (!(isdigit((unsigned char)s[0]) ||
          ((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1]))))
        return fail(c, pr, "%s: \"%s\" is not %s (expected %s)", k->name, s, k->noun, exp);
    errno = 0;
    v = strtoll(s, &end, 10);
    if (*end)
        return fail(c, pr, "%s: \"%s\" is not %s (expected %s)", k->name, s, k->noun, exp);
    if (errno == ERANGE || v < tmin || v > tmax || v < k->min || v > k->max)
        return fail(c, pr, "%s: \"%s\" is out of range (expected %s)", k->name, s, exp);
    assert(k->size == (k->type == KT_INT32 ? sizeof(int32_t) : sizeof(int64_t)));
    if (k->type == KT_INT32)
        *(int32_t *)field(c->raw, k) = (int32_t)v;
    else
        *(int64_t *)field(c->raw, k) = (int64_t)v;
    return SF_OK;
}

static int parse_bool(ctx_t *c, const key_def_t *k, const sf_prop_t *pr, const char *s) {
    int *out = field(c->raw, k);
    assert(k->size == sizeof(int));
    if (!strcasecmp(s, "true"))
        *out = 1;
    else if (!strcasecmp(s, "false"))
        *out = 0;
    else
        return fail(c, pr, "%s: \"%s\" is not a boolean (expected true or false)", k->name, s);
    return SF_OK;
}

static int parse_string(ctx_t *c, const key_def_t *k, const sf_prop_t *pr, const char *s) {
    char **out = field(c->raw, k);
    (void)pr;
    assert(k->size == sizeof(char *));
    free(*out);
    *out = NULL;
    if (!*s)
        return SF_OK; /* an empty value means unset */
    if (!(*out = strdup(s)))
        return nomem(c);
    return SF_OK;
}

static int parse_enum(ctx_t *c, const key_def_t *k, const sf_prop_t *pr, const char *s) {
    const enum_val_t *e;
    char exp[160];
    size_t n = 0, count = 0, i;

    for (e = k->enums; e->name; e++) {
        if (!strcasecmp(s, e->name)) {
            assert(k->off == NOFIELD || k->size == sizeof(int));
            if (k->off != NOFIELD)
                *(int *)field(c->raw, k) = e->value;
            return SF_OK;
        }
        count++;
    }
    exp[0] = '\0';
    for (i = 0, e = k->enums; e->name && n < sizeof(exp); i++, e++) {
        int w = snprintf(exp + n, sizeof(exp) - n, "%s%s", i == 0 ? "" : i + 1 == count ? " or " : ", ",
                         e->name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    return fail(c, pr, "%s: \"%s\" is not a valid value (expected %s)", k->name, s, exp);
}

/* Split the comma list @s into trimmed items: *@copy gets a copy of @s and *@items pointers
 * into it (both malloc'd, the caller frees them; nothing is left allocated on error). Empty
 * items are kept (as ""), so callers can reject them. */
static int split_commas(const char *s, char **copy, char ***items, size_t *n) {
    size_t cap = 1, i = 0;
    char *p, **v;
    if (!(*copy = strdup(s)))
        return SF_ERR_NOMEM;
    for (p = *copy; *p; p++)
        if (*p == ',')
            cap++;
    v = calloc(cap, sizeof(*v));
    if (!v) {
        free(*copy);
        *copy = NULL;
        return SF_ERR_NOMEM;
    }
    p = *copy;
    for (;;) {
        char *comma = strchr(p, ','), *e;
        if (comma)
            *comma = '\0';
        while (isspace((unsigned char)*p))
            p++;
        e = p + strlen(p);
        while (e > p && isspace((unsigned char)e[-1]))
            *--e = '\0';
        v[i++] = p;
        if (!comma)
            break;
        p = comma + 1;
    }
    *items = v;
    *n = i;
    return SF_OK;
}

static void free_strv(char **v, size_t n) {
    size_t i;
    if (!v)
        return;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void free_listeners(sf_brokercfg_listener_t *l, size_t n) {
    size_t i;
    if (!l)
        return;
    for (i = 0; i < n; i++)
        free(l[i].host);
    free(l);
}

static int parse_dirs(ctx_t *c, const key_def_t *k, const sf_prop_t *pr, const char *s) {
    char **out = NULL, *copy, **items;
    size_t n, i, j;
    int rc = SF_OK;
    const int is_dirs = k->off == OFF(cfg.log_dirs);
    char ***fp = is_dirs ? &c->raw->cfg.log_dirs : &c->raw->log_dir;
    size_t *np = is_dirs ? &c->raw->cfg.nlog_dirs : &c->raw->nlog_dir;

    if (split_commas(s, &copy, &items, &n) != SF_OK)
        return nomem(c);
    if (!(out = calloc(n, sizeof(*out)))) {
        rc = nomem(c);
        goto done;
    }
    for (i = 0; i < n; i++) {
        if (!*items[i]) {
            rc = fail(c, pr, "%s: \"%s\" has an empty entry (expected a comma-separated list of "
                      "directories)", k->name, s);
            goto done;
        }
        for (j = 0; j < i; j++)
            if (!strcmp(items[i], out[j])) {
                rc = fail(c, pr, "%s: \"%s\" names %s twice (each log directory must be unique)",
                          k->name, s, items[i]);
                goto done;
            }
        if (!(out[i] = strdup(items[i]))) {
            rc = nomem(c);
            goto done;
        }
    }
done:
    if (rc == SF_OK) {
        free_strv(*fp, *np);
        *fp = out;
        *np = n;
    } else {
        free_strv(out, n);
    }
    free(items);
    free(copy);
    return rc;
}

static int valid_hostname(const char *h) {
    for (; *h; h++)
        if (!isalnum((unsigned char)*h) && *h != '-' && *h != '.' && *h != '_')
            return 0;
    return 1;
}

/* Parse "host:port" or "[v6]:port" from @s into @host (malloc'd) and @port. Returns 0, or -1
 * (syntax), -2 (port out of range), -3 (no memory). */
static int parse_hostport(const char *s, char **host, int *port) {
    const char *colon, *hs, *he;
    char *end;
    long p;

    if (s[0] == '[') {
        const char *rb = strchr(s, ']');
        struct in6_addr a6;
        char tmp[INET6_ADDRSTRLEN + 16];
        if (!rb || rb[1] != ':')
            return -1;
        hs = s + 1;
        he = rb;
        colon = rb + 1;
        if ((size_t)(he - hs) >= sizeof(tmp))
            return -1;
        memcpy(tmp, hs, (size_t)(he - hs));
        tmp[he - hs] = '\0';
        /* A zone index ("%eth0") is allowed after the address. */
        if (strchr(tmp, '%'))
            *strchr(tmp, '%') = '\0';
        if (inet_pton(AF_INET6, tmp, &a6) != 1)
            return -1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return -1;
        hs = s;
        he = colon;
        if (memchr(hs, ':', (size_t)(he - hs)))
            return -1; /* an IPv6 address must be in brackets */
    }
    if (!isdigit((unsigned char)colon[1]))
        return -1;
    errno = 0;
    p = strtol(colon + 1, &end, 10);
    if (*end)
        return -1;
    if (errno == ERANGE || p < 0 || p > 65535)
        return -2;
    if (!(*host = strndup(hs, (size_t)(he - hs))))
        return -3;
    if (s[0] != '[' && !valid_hostname(*host)) {
        free(*host);
        *host = NULL;
        return -1;
    }
    *port = (int)p;
    return 0;
}

/* The first non-loopback, up IPv4 address of this machine, or 127.0.0.1. */
static void primary_ipv4(char *buf, size_t size) {
    struct ifaddrs *ifa = NULL, *i;
    snprintf(buf, size, "127.0.0.1");
    if (getifaddrs(&ifa) != 0)
        return;
    for (i = ifa; i; i = i->ifa_next) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)i->ifa_addr;
        if (!sin || sin->sin_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK) || (ntohl(sin->sin_addr.s_addr) >> 24) == 127)
            continue;
        inet_ntop(AF_INET, &sin->sin_addr, buf, (socklen_t)size);
        break;
    }
    freeifaddrs(ifa);
}

static int parse_listeners(ctx_t *c, const key_def_t *k, const sf_prop_t *pr, const char *s) {
    const int advertised = k->off == OFF(adv);
    sf_brokercfg_listener_t *out = NULL;
    char *copy, **items = NULL;
    size_t n = 0, i, j;
    int rc = SF_OK;
    const char *example = "expected NAME://host:port with NAME PLAINTEXT or SSL, e.g. "
                          "PLAINTEXT://127.0.0.1:9092";

    if (split_commas(s, &copy, &items, &n) != SF_OK)
        return nomem(c);
    if (!(out = calloc(n, sizeof(*out)))) {
        rc = nomem(c);
        goto done;
    }
    for (i = 0; i < n; i++) {
        const char *item = items[i], *sep = strstr(item, "://");
        size_t nl;
        int hp;
        if (!*item) {
            rc = fail(c, pr, "%s: \"%s\" has an empty entry (%s)", k->name, s, example);
            goto done;
        }
        if (!sep) {
            rc = fail(c, pr, "%s: \"%s\" is not a valid listener (%s)", k->name, item, example);
            goto done;
        }
        nl = (size_t)(sep - item);
        if (nl == 9 && !strncasecmp(item, "PLAINTEXT", 9)) {
            out[i].security = SF_BROKERCFG_PLAINTEXT;
            strcpy(out[i].name, "PLAINTEXT");
        } else if (nl == 3 && !strncasecmp(item, "SSL", 3)) {
            out[i].security = SF_BROKERCFG_SSL;
            strcpy(out[i].name, "SSL");
        } else {
            rc = fail(c, pr, "%s: \"%s\" has an unknown listener name \"%.*s\" (expected PLAINTEXT or "
                      "SSL)", k->name, item, (int)nl, item);
            goto done;
        }
        hp = parse_hostport(sep + 3, &out[i].host, &out[i].port);
        if (hp == -3) {
            rc = nomem(c);
            goto done;
        }
        if (hp == -2 || (hp == 0 && advertised && out[i].port == 0)) {
            rc = fail(c, pr, "%s: \"%s\" has a port out of range (expected %s)", k->name, item,
                      advertised ? "a port between 1 and 65535" : "a port between 0 and 65535");
            goto done;
        }
        if (hp < 0) {
            rc = fail(c, pr, "%s: \"%s\" is not a valid listener (%s)", k->name, item, example);
            goto done;
        }
        if (advertised && !strcmp(out[i].host, "0.0.0.0")) {
            rc = fail(c, pr, "%s: \"%s\" uses the non-routable address 0.0.0.0 (expected an address "
                      "or host name clients can connect to)", k->name, item);
            goto done;
        }
        for (j = 0; j < i; j++) {
            if (!strcmp(out[j].name, out[i].name)) {
                rc = fail(c, pr, "%s: \"%s\" names listener %s twice (each listener needs its own "
                          "name)", k->name, s, out[i].name);
                goto done;
            }
            if (!advertised && out[i].port && out[j].port == out[i].port) {
                rc = fail(c, pr, "%s: \"%s\" uses port %d twice (each listener needs its own port)",
                          k->name, s, out[i].port);
                goto done;
            }
        }
    }
done:
    if (rc == SF_OK) {
        if (advertised) {
            free_listeners(c->raw->adv, c->raw->nadv);
            c->raw->adv = out;
            c->raw->nadv = n;
        } else {
            free_listeners(c->raw->cfg.listeners, c->raw->cfg.nlisteners);
            c->raw->cfg.listeners = out;
            c->raw->cfg.nlisteners = n;
        }
    } else {
        free_listeners(out, n);
    }
    free(items);
    free(copy);
    return rc;
}

static int parse_zk(ctx_t *c, const key_def_t *k, const sf_prop_t *pr, const char *s) {
    const char *slash = strchr(s, '/');
    char *hosts, *copy = NULL, **items = NULL, *chroot = NULL;
    size_t n = 0, i;
    int rc = SF_OK;
    const char *exp = "expected host:port[,host:port...][/chroot]";

    hosts = slash ? strndup(s, (size_t)(slash - s)) : strdup(s);
    if (!hosts || split_commas(hosts, &copy, &items, &n) != SF_OK)
        goto oom;
    for (i = 0; i < n; i++) {
        char *h = NULL;
        int port, hp = parse_hostport(items[i], &h, &port);
        if (hp == -3)
            goto oom;
        if (hp == 0 && (!*h || port == 0)) {
            free(h);
            hp = -1;
        }
        if (hp < 0) {
            rc = fail(c, pr, "%s: \"%s\" has an invalid server \"%s\" (%s)", k->name, s, items[i],
                      exp);
            goto done;
        }
        free(h);
    }
    if (slash) {
        const char *p;
        size_t len = strlen(slash);
        if (len == 1) {
            chroot = strdup(""); /* "/" is the ZooKeeper root itself */
        } else {
            int bad = slash[len - 1] == '/' || strstr(slash, "//") || strstr(slash, "/./") ||
                      strstr(slash, "/../");
            const char *last = strrchr(slash, '/');
            if (!strcmp(last, "/.") || !strcmp(last, "/.."))
                bad = 1;
            for (p = slash; *p && !bad; p++)
                if (isspace((unsigned char)*p) || *p == ',')
                    bad = 1;
            if (bad) {
                rc = fail(c, pr, "%s: \"%s\" has an invalid chroot path \"%s\" (expected an absolute "
                          "ZooKeeper path such as /streamflow, without a trailing /)", k->name, s,
                          slash);
                goto done;
            }
            chroot = strdup(slash);
        }
    } else {
        chroot = strdup(SF_BROKERCFG_DEFAULT_ZK_CHROOT);
    }
    if (!chroot)
        goto oom;
    /* Store the server list without blanks around commas. */
    {
        size_t off = 0;
        for (i = 0; i < n; i++)
            off += (size_t)sprintf(hosts + off, "%s%s", i ? "," : "", items[i]);
    }
    free(c->raw->cfg.zk_connect);
    free(c->raw->cfg.zk_chroot);
    c->raw->cfg.zk_connect = hosts;
    c->raw->cfg.zk_chroot = chroot;
    hosts = chroot = NULL;
    goto done;
oom:
    rc = nomem(c);
done:
    free(hosts);
    free(chroot);
    free(items);
    free(copy);
    return rc;
}

static int parse_value(ctx_t *c, const key_def_t *k, const sf_prop_t *pr, const char *s) {
    switch (k->type) {
    case KT_INT32:
    case KT_INT64:
        return parse_int(c, k, pr, s);
    case KT_BOOL:
        return parse_bool(c, k, pr, s);
    case KT_STRING:
        return parse_string(c, k, pr, s);
    case KT_ENUM:
        return parse_enum(c, k, pr, s);
    case KT_LISTENERS:
        return parse_listeners(c, k, pr, s);
    case KT_DIRS:
        return parse_dirs(c, k, pr, s);
    case KT_ZK:
        return parse_zk(c, k, pr, s);
    case KT_IGNORED:
        return SF_OK;
    }
    return SF_ERR_INVALID;
}

/* Edit distance, for "did you mean" on unknown keys (keys are short). */
static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), i, j, prev[64], cur[64];
    if (la >= 64 || lb >= 64)
        return SIZE_MAX;
    for (j = 0; j <= lb; j++)
        prev[j] = j;
    for (i = 1; i <= la; i++) {
        cur[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t d = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            cur[j] = d;
        }
        memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
    }
    return prev[lb];
}

static const key_def_t *find_key(const char *name, size_t *idx) {
    size_t i;
    for (i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].name, name)) {
            *idx = i;
            return &keys[i];
        }
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Cross-key rules
 * ------------------------------------------------------------------------------------------ */

/* max.connections.per.ip.overrides ("host:max,...") and the rules Kafka sets on the network
 * limits. */
static int resolve_net_limits(ctx_t *c, const sf_prop_t *ovr_entry, const sf_prop_t *q_entry) {
    raw_t *raw = c->raw;
    sf_brokercfg_t *cfg = &raw->cfg;
    char *copy = NULL, **items = NULL;
    size_t n = 0, i;
    int rc = SF_OK;

    if (cfg->queued_max_request_bytes > 0 &&
        cfg->queued_max_request_bytes < cfg->socket_request_max_bytes)
        return fail(c, q_entry, "queued.max.request.bytes: %lld is below socket.request.max.bytes "
                    "(%d): no request of the largest size could be read (expected at least %d, "
                    "or -1 for unlimited)", (long long)cfg->queued_max_request_bytes,
                    (int)cfg->socket_request_max_bytes, (int)cfg->socket_request_max_bytes);
    /* Kafka's rule: 0 refuses every address, which only makes sense with overrides. */
    if (cfg->max_connections_per_ip == 0 && !raw->ip_overrides_str)
        return fail(c, NULL, "max.connections.per.ip: 0 refuses every client; it may only be 0 "
                    "with max.connections.per.ip.overrides naming the addresses allowed");
    if (!raw->ip_overrides_str)
        return SF_OK;
    if (split_commas(raw->ip_overrides_str, &copy, &items, &n) != SF_OK)
        return nomem(c);
    if (!(cfg->ip_overrides = calloc(n, sizeof(*cfg->ip_overrides)))) {
        rc = nomem(c);
        goto done;
    }
    for (i = 0; i < n; i++) {
        char *colon = strrchr(items[i], ':'), *end;
        long long max;
        if (!colon || colon == items[i]) {
            rc = fail(c, ovr_entry, "max.connections.per.ip.overrides: \"%s\" is not host:max "
                      "(expected e.g. 127.0.0.1:200,broker-admin:10)", items[i]);
            goto done;
        }
        *colon = '\0';
        errno = 0;
        max = strtoll(colon + 1, &end, 10);
        if (!colon[1] || *end || errno || max < 0 || max > INT32_MAX) {
            rc = fail(c, ovr_entry, "max.connections.per.ip.overrides: \"%s\" is not a number "
                      "of connections for %s (expected an integer from 0 to 2147483647)",
                      colon + 1, items[i]);
            goto done;
        }
        /* "[::1]:5" as well as "::1:5" */
        if (items[i][0] == '[' && colon[-1] == ']') {
            colon[-1] = '\0';
            memmove(items[i], items[i] + 1, strlen(items[i]));
        }
        if (!(cfg->ip_overrides[i].host = strdup(items[i]))) {
            rc = nomem(c);
            goto done;
        }
        cfg->ip_overrides[i].max = (int32_t)max;
        cfg->nip_overrides = i + 1;
    }
done:
    free(items);
    free(copy);
    return rc;
}

static int resolve(ctx_t *c) {
    raw_t *raw = c->raw;
    sf_brokercfg_t *cfg = &raw->cfg;
    size_t i, j, ki;
    int has_ssl = 0, rc;

#define SEEN(name) (find_key(name, &ki) && c->seen[ki])
#define ENTRY(name) (find_key(name, &ki) ? c->seen[ki] : NULL)

    if (!SEEN("broker.id"))
        return fail(c, NULL, "broker.id is required (expected an integer >= 0; automatic broker id "
                    "generation is not supported)");
    if (!cfg->zk_connect)
        return fail(c, NULL, "zookeeper.connect is required (expected "
                    "host:port[,host:port...][/chroot])");
    if (!cfg->log_dirs) {
        if (!raw->log_dir)
            return fail(c, NULL, "log.dirs is required (expected a comma-separated list of data "
                        "directories; log.dir is accepted for a single one)");
        cfg->log_dirs = raw->log_dir;
        cfg->nlog_dirs = raw->nlog_dir;
        raw->log_dir = NULL;
        raw->nlog_dir = 0;
    }

    /* Kafka's precedence: .ms over .minutes over .hours; any negative value means unlimited. */
    if (!SEEN("log.roll.ms"))
        cfg->log_roll_ms = (int64_t)raw->log_roll_hours * 3600000;
    if (!SEEN("log.retention.ms")) {
        if (SEEN("log.retention.minutes"))
            cfg->log_retention_ms = (int64_t)raw->log_retention_minutes * 60000;
        else
            cfg->log_retention_ms = (int64_t)raw->log_retention_hours * 3600000;
    }
    if (cfg->log_retention_ms < 0)
        cfg->log_retention_ms = -1;
    if (!SEEN("zookeeper.connection.timeout.ms"))
        cfg->zk_connection_timeout_ms = cfg->zk_session_timeout_ms;
    if (!SEEN("log.flush.interval.ms"))
        cfg->log_flush_interval_ms = cfg->log_flush_scheduler_interval_ms;
    cfg->log_flush_check_interval_ms = cfg->log_flush_scheduler_interval_ms == INT64_MAX
                                           ? 1000
                                           : cfg->log_flush_scheduler_interval_ms;
    if ((rc = resolve_net_limits(c, ENTRY("max.connections.per.ip.overrides"),
                                 ENTRY("queued.max.request.bytes"))) != SF_OK)
        return rc;
    if (!SEEN("num.network.threads")) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        cfg->num_network_threads = ncpu > 0 && ncpu < 4096 ? (int32_t)ncpu : 1;
    }

    /* TLS settings needed by SSL listeners. */
    for (i = 0; i < cfg->nlisteners; i++) {
        char buf[300];
        if (cfg->listeners[i].security != SF_BROKERCFG_SSL)
            continue;
        has_ssl = 1;
        if (!cfg->ssl_keystore_location)
            return fail(c, ENTRY("listeners"), "listeners: \"%s\" needs ssl.keystore.location (a PEM "
                        "file with the server certificate chain and its private key)",
                        sf_brokercfg_listener_str(&cfg->listeners[i], buf, sizeof(buf)));
    }
    if (has_ssl && cfg->ssl_client_auth != SF_TLS_CLIENT_AUTH_NONE && !cfg->ssl_truststore_location)
        return fail(c, ENTRY("ssl.client.auth"), "ssl.client.auth: \"%s\" needs "
                    "ssl.truststore.location (a PEM bundle of the CAs that sign client "
                    "certificates)", cfg->ssl_client_auth == SF_TLS_CLIENT_AUTH_REQUIRED
                                         ? "required" : "requested");

    /* Advertised listeners: explicit ones must name listeners; otherwise derive from those. */
    if (raw->adv) {
        for (i = 0; i < raw->nadv; i++) {
            for (j = 0; j < cfg->nlisteners; j++)
                if (!strcmp(raw->adv[i].name, cfg->listeners[j].name))
                    break;
            if (j == cfg->nlisteners) {
                char buf[300];
                return fail(c, ENTRY("advertised.listeners"), "advertised.listeners: \"%s\" names "
                            "a listener that is not in listeners (expected one of the names used "
                            "in listeners)", sf_brokercfg_listener_str(&raw->adv[i], buf, sizeof(buf)));
            }
        }
        cfg->advertised_listeners = raw->adv;
        cfg->nadvertised_listeners = raw->nadv;
        raw->adv = NULL;
        raw->nadv = 0;
    } else {
        cfg->advertised_listeners = calloc(cfg->nlisteners, sizeof(*cfg->advertised_listeners));
        if (!cfg->advertised_listeners)
            return nomem(c);
        cfg->nadvertised_listeners = cfg->nlisteners;
        for (i = 0; i < cfg->nlisteners; i++) {
            cfg->advertised_listeners[i] = cfg->listeners[i];
            cfg->advertised_listeners[i].host = NULL;
        }
        for (i = 0; i < cfg->nlisteners; i++) {
            const char *h = cfg->listeners[i].host;
            char ip[INET_ADDRSTRLEN];
            if (!*h || !strcmp(h, "0.0.0.0") || !strcmp(h, "::")) {
                primary_ipv4(ip, sizeof(ip));
                h = ip;
            } else if (!strcasecmp(h, "localhost")) {
                h = "127.0.0.1";
            }
            if (!(cfg->advertised_listeners[i].host = strdup(h)))
                return nomem(c);
        }
    }
    /* Explicit advertised listeners with an empty host. */
    for (i = 0; i < cfg->nadvertised_listeners; i++) {
        char ip[INET_ADDRSTRLEN];
        if (*cfg->advertised_listeners[i].host)
            continue;
        primary_ipv4(ip, sizeof(ip));
        free(cfg->advertised_listeners[i].host);
        if (!(cfg->advertised_listeners[i].host = strdup(ip)))
            return nomem(c);
    }
#undef SEEN
#undef ENTRY
    return SF_OK;
}

static void cfg_clear(sf_brokercfg_t *cfg) {
    size_t i;
    free(cfg->path);
    free_listeners(cfg->listeners, cfg->nlisteners);
    free_listeners(cfg->advertised_listeners, cfg->nadvertised_listeners);
    free_strv(cfg->log_dirs, cfg->nlog_dirs);
    free(cfg->zk_connect);
    free(cfg->zk_chroot);
    free(cfg->rack);
    free(cfg->ssl_keystore_location);
    free(cfg->http_listeners);
    free(cfg->http_auth_file);
    free(cfg->inter_broker_listener_name);
    free(cfg->security_inter_broker_protocol);
    free(cfg->ssl_key_password);
    free(cfg->ssl_truststore_location);
    for (i = 0; i < cfg->nip_overrides; i++)
        free(cfg->ip_overrides[i].host);
    free(cfg->ip_overrides);
    free_strv(cfg->ignored_keys, cfg->nignored_keys);
    free_strv(cfg->topic_keys, cfg->ntopic_keys);
    free_strv(cfg->topic_values, cfg->ntopic_keys);
}

const char *sf_brokercfg_file_value(const sf_brokercfg_t *cfg, const char *key) {
    size_t i;
    for (i = 0; i < cfg->ntopic_keys; i++)
        if (!strcmp(cfg->topic_keys[i], key))
            return cfg->topic_values[i];
    return NULL;
}

/* A broker setting behind a topic config: keep it, after checking its value as the topic
 * config (in the topic config's unit) when @check. Returns SF_OK, or an error through @c. */
static int topic_synonym(ctx_t *c, const sf_prop_t *pr, const sf_topiccfg_def_t *def, int idx,
                         int check, sf_brokercfg_t *cfg) {
    char why[160], scaled[32];
    const char *value = pr->value;
    int64_t scale = def->synonyms[idx].scale;
    char **k, **v;
    if (check && scale != 1) {
        char *end;
        long long x = strtoll(value, &end, 10);
        if (!*value || *end)
            return fail(c, pr, "%s: \"%s\" is not an integer", pr->key, value);
        snprintf(scaled, sizeof(scaled), "%lld", x < 0 ? -1LL : x > INT64_MAX / scale ? INT64_MAX
                                                                                   : x * scale);
        value = scaled;
    }
    if (check && !sf_topiccfg_validate(def, value, why, sizeof(why)))
        return fail(c, pr, "%s: \"%s\" is not valid: %s", pr->key, pr->value, why);
    k = realloc(cfg->topic_keys, (cfg->ntopic_keys + 1) * sizeof(char *));
    if (k)
        cfg->topic_keys = k;
    v = k ? realloc(cfg->topic_values, (cfg->ntopic_keys + 1) * sizeof(char *)) : NULL;
    if (v)
        cfg->topic_values = v;
    if (!k || !v || !(k[cfg->ntopic_keys] = strdup(pr->key)))
        return nomem(c);
    if (!(v[cfg->ntopic_keys] = strdup(pr->value))) {
        free(k[cfg->ntopic_keys]);
        return nomem(c);
    }
    cfg->ntopic_keys++;
    return SF_OK;
}

void sf_brokercfg_free(sf_brokercfg_t *cfg) {
    if (!cfg)
        return;
    cfg_clear(cfg);
    free(cfg);
}

int sf_brokercfg_from_props(const sf_props_t *props, sf_brokercfg_t **out, char *errstr,
                            size_t errstr_size) {
    raw_t *raw;
    ctx_t c;
    size_t i, nignored = 0;
    int rc;

    *out = NULL;
    memset(&c, 0, sizeof(c));
    c.file = sf_props_name(props);
    c.errstr = errstr;
    c.errstr_size = errstr_size;
    if (!(raw = calloc(1, sizeof(*raw))))
        return nomem(&c);
    c.raw = raw;
    if (!(raw->cfg.path = strdup(c.file))) {
        rc = nomem(&c);
        goto err;
    }

    /* Defaults first, through the same parsers. */
    for (i = 0; i < NKEYS; i++)
        if (keys[i].def && (rc = parse_value(&c, &keys[i], NULL, keys[i].def)) != SF_OK)
            goto err; /* a bad default is a bug; it still reports cleanly */

    /* Then the file, in order. */
    for (i = 0; i < sf_props_count(props); i++) {
        const sf_prop_t *pr = sf_props_at(props, i);
        size_t ki;
        const key_def_t *k = find_key(pr->key, &ki);
        int syn;
        const sf_topiccfg_def_t *tdef = sf_topiccfg_find_synonym(pr->key, &syn);
        /* Keys of this table are checked by it (below); the others as their topic config. */
        if (tdef && (rc = topic_synonym(&c, pr, tdef, syn, !k, &raw->cfg)) != SF_OK)
            goto err;
        if (!k && tdef)
            continue;
        if (!k) {
            const char *best = NULL;
            size_t bestd = 3, j;
            for (j = 0; j < NKEYS; j++) {
                size_t d = edit_distance(pr->key, keys[j].name);
                if (d < bestd && keys[j].type != KT_IGNORED) {
                    bestd = d;
                    best = keys[j].name;
                }
            }
            if (best)
                rc = fail(&c, pr, "unknown key \"%s\" (did you mean %s?)", pr->key, best);
            else
                rc = fail(&c, pr, "unknown key \"%s\" (see streamflowd --help for the keys "
                          "StreamFlow knows)", pr->key);
            goto err;
        }
        c.seen[ki] = pr;
        if (k->type == KT_IGNORED)
            nignored++;
        if ((rc = parse_value(&c, k, pr, pr->value)) != SF_OK)
            goto err;
    }
    if ((rc = resolve(&c)) != SF_OK)
        goto err;

    if (nignored) {
        if (!(raw->cfg.ignored_keys = calloc(nignored, sizeof(char *)))) {
            rc = nomem(&c);
            goto err;
        }
        for (i = 0; i < NKEYS; i++) {
            if (keys[i].type != KT_IGNORED || !c.seen[i])
                continue;
            if (!(raw->cfg.ignored_keys[raw->cfg.nignored_keys++] = strdup(keys[i].name))) {
                rc = nomem(&c);
                goto err;
            }
        }
    }

    /* The raw-only fields are consumed; hand over the configuration itself. */
    {
        sf_brokercfg_t *cfg = malloc(sizeof(*cfg));
        if (!cfg) {
            rc = nomem(&c);
            goto err;
        }
        *cfg = raw->cfg;
        free_listeners(raw->adv, raw->nadv);
        free_strv(raw->log_dir, raw->nlog_dir);
        free(raw->ip_overrides_str);
        free(raw);
        *out = cfg;
    }
    return SF_OK;

err:
    free_listeners(raw->adv, raw->nadv);
    free_strv(raw->log_dir, raw->nlog_dir);
    free(raw->ip_overrides_str);
    cfg_clear(&raw->cfg);
    free(raw);
    return rc;
}

int sf_brokercfg_load(const char *path, sf_brokercfg_t **out, char *errstr, size_t errstr_size) {
    sf_props_t *props;
    int rc;
    *out = NULL;
    rc = sf_props_load(path, &props, errstr, errstr_size);
    if (rc != SF_OK)
        return rc;
    rc = sf_brokercfg_from_props(props, out, errstr, errstr_size);
    sf_props_free(props);
    return rc;
}

char *sf_brokercfg_listener_str(const sf_brokercfg_listener_t *l, char *buf, size_t size) {
    if (strchr(l->host, ':'))
        snprintf(buf, size, "%s://[%s]:%d", l->name, l->host, l->port);
    else
        snprintf(buf, size, "%s://%s:%d", l->name, l->host, l->port);
    return buf;
}

void sf_brokercfg_print_keys(FILE *fp) {
    size_t i;
    for (i = 0; i < NKEYS; i++) {
        const key_def_t *k = &keys[i];
        const char *def = k->def;
        if (k->type == KT_IGNORED)
            continue;
        if (def && !strcmp(def, NEVER))
            def = "never";
        fprintf(fp, "  %-34s %s%s%s%s\n", k->name, k->help, def ? " [" : "", def ? def : "",
                def ? "]" : "");
    }
    fprintf(fp, "  Accepted and ignored (Kafka keys without effect here):");
    for (i = 0; i < NKEYS; i++)
        if (keys[i].type == KT_IGNORED)
            fprintf(fp, "\n    %s", keys[i].name);
    fprintf(fp, "\n");
}
