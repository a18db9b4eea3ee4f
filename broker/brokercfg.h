/* Typed broker configuration, read from a Kafka-style properties file.
 *
 * Keys carry Apache Kafka's names, meanings and defaults (ZooKeeper mode). Differences:
 *   - broker.id is required and must be >= 0 (automatic id generation is not supported);
 *   - zookeeper.connect without a chroot path uses the chroot "/streamflow";
 *   - an unknown key is an error (Kafka only warns), except for a few Kafka keys StreamFlow does
 *     not use, which are accepted and listed in ignored_keys, and the broker settings that give
 *     topic configs their defaults (log.cleaner.delete.retention.ms, compression.type, ...),
 *     which are checked as the topic config and kept in topic_keys;
 *   - listener names are PLAINTEXT or SSL (no listener.security.protocol.map);
 *   - TLS material is PEM only: ssl.keystore.location holds the certificate chain and the
 *     private key, ssl.truststore.location a CA bundle; ssl.keystore.type and
 *     ssl.truststore.type are accepted with the value PEM only;
 *   - log.level (error|warning|notice|info|debug, default info) and syslog (true|false,
 *     default false) are StreamFlow's own keys.
 * Every error is one sentence naming the file, the line, the key, the value and what is expected,
 * e.g. `streamflowd.conf:7: log.segment.bytes: "12x" is not a number of bytes (expected an
 * integer >= 14)`. */
#ifndef SF_BROKERCFG_H
#define SF_BROKERCFG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "props.h"

/* The chroot used when zookeeper.connect names none. */
#define SF_BROKERCFG_DEFAULT_ZK_CHROOT "/streamflow"

/* Security protocol of a listener. */
typedef enum sf_brokercfg_security {
    SF_BROKERCFG_PLAINTEXT = 0,
    SF_BROKERCFG_SSL = 1,
} sf_brokercfg_security_t;

/* One entry of listeners / advertised.listeners ("NAME://host:port"). */
typedef struct sf_brokercfg_listener {
    char name[16];                     /* "PLAINTEXT" or "SSL" (upper case) */
    sf_brokercfg_security_t security;  /* from the name */
    char *host;   /* owned; without brackets for IPv6; "" = all interfaces (listeners only) */
    int port;     /* 0..65535; 0 = any free port (listeners only, see sf_acceptor_port) */
} sf_brokercfg_listener_t;

/* The configuration. All strings and arrays are owned by the struct. */
/* One entry of max.connections.per.ip.overrides: "host:max". */
typedef struct sf_brokercfg_ip_max {
    char *host; /* an address or a host name (resolved when the broker starts) */
    int32_t max;
} sf_brokercfg_ip_max_t;

typedef struct sf_brokercfg {
    char *path; /* the file it was loaded from */

    int32_t broker_id; /* broker.id, >= 0 */
    char *rack;        /* broker.rack (unset: NULL): registered, used by replica placement */

    sf_brokercfg_listener_t *listeners; /* listeners (default PLAINTEXT://127.0.0.1:9092) */
    size_t nlisteners;
    /* advertised.listeners as configured (each name must be one of listeners), or the listeners
     * when unset. An empty, 0.0.0.0 or :: host (from listeners) is advertised as this machine's
     * first non-loopback IPv4 address (127.0.0.1 if none), "localhost" as 127.0.0.1 (the address
     * the server binds for it). A port 0 comes from a listener with port 0: advertise
     * sf_acceptor_port() instead. */
    sf_brokercfg_listener_t *advertised_listeners;
    size_t nadvertised_listeners;

    char **log_dirs; /* log.dirs, else log.dir (required) */
    size_t nlog_dirs;

    char *zk_connect;               /* zookeeper.connect without the chroot: "h1:2181,h2:2181" */
    char *zk_chroot; /* its chroot: "/streamflow" when none given, "" for an explicit "/" */
    int32_t zk_session_timeout_ms;  /* zookeeper.session.timeout.ms (18000) */
    int32_t zk_connection_timeout_ms; /* zookeeper.connection.timeout.ms (= session timeout) */

    int32_t num_partitions;             /* num.partitions (1) */
    int32_t default_replication_factor; /* default.replication.factor (1), <= 32767 */
    int32_t min_insync_replicas;        /* min.insync.replicas (1) */
    int auto_create_topics_enable;      /* auto.create.topics.enable (true) */
    int delete_topic_enable;            /* delete.topic.enable (true) */

    /* Replication (replica/replication.h). */
    char *inter_broker_listener_name;       /* inter.broker.listener.name (the first listener) */
    char *security_inter_broker_protocol;   /* security.inter.broker.protocol (unset) */
    int64_t replica_lag_time_max_ms;        /* replica.lag.time.max.ms (30000) */
    int32_t replica_fetch_max_bytes;        /* replica.fetch.max.bytes (1048576) */
    int32_t replica_fetch_response_max_bytes; /* replica.fetch.response.max.bytes (10485760) */
    int32_t replica_fetch_wait_max_ms;      /* replica.fetch.wait.max.ms (500) */
    int32_t replica_fetch_min_bytes;        /* replica.fetch.min.bytes (1) */
    int32_t replica_fetch_backoff_ms;       /* replica.fetch.backoff.ms (1000) */
    int32_t replica_socket_timeout_ms;      /* replica.socket.timeout.ms (30000) */
    int controlled_shutdown_enable;         /* controlled.shutdown.enable (true) */
    int32_t controlled_shutdown_max_retries; /* controlled.shutdown.max.retries (3) */
    int32_t controlled_shutdown_retry_backoff_ms; /* controlled.shutdown.retry.backoff.ms (5000) */
    int auto_leader_rebalance_enable;         /* auto.leader.rebalance.enable (true) */
    int32_t leader_imbalance_check_interval_s; /* leader.imbalance.check.interval.seconds (300) */
    int32_t leader_imbalance_per_broker_percentage; /* leader.imbalance.per.broker.percentage (10) */
    int32_t offsets_topic_num_partitions;    /* offsets.topic.num.partitions (50): buckets */
    int32_t offset_metadata_max_bytes;       /* offset.metadata.max.bytes (4096) */
    int32_t offsets_retention_minutes;       /* offsets.retention.minutes (10080) */
    int32_t offsets_retention_check_ms;      /* offsets.retention.check.interval.ms (600000) */
    int32_t group_min_session_timeout_ms;    /* group.min.session.timeout.ms (6000) */
    int32_t group_max_session_timeout_ms;    /* group.max.session.timeout.ms (1800000) */
    int32_t group_initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms (3000) */
    int32_t group_max_size;                  /* group.max.size (2147483647) */
    int32_t producer_id_expiration_ms;       /* producer.id.expiration.ms (86400000) */
    int32_t transaction_max_timeout_ms;      /* transaction.max.timeout.ms (900000) */
    int32_t transactional_id_expiration_ms;  /* transactional.id.expiration.ms (604800000) */
    int32_t transaction_abort_check_ms;      /* transaction.abort.timed.out.transaction.cleanup.interval.ms (10000) */
    int txn_verification_enable;             /* transaction.partition.verification.enable (true) */

    int32_t log_segment_bytes;               /* log.segment.bytes (1073741824), >= 14 */
    int64_t log_roll_ms;                     /* log.roll.ms, else log.roll.hours (168 h) */
    int64_t log_retention_ms;                /* ms > minutes > hours (168 h); -1 = unlimited */
    int64_t log_retention_bytes;             /* log.retention.bytes (-1 = unlimited) */
    int64_t log_retention_check_interval_ms; /* log.retention.check.interval.ms (300000) */
    int32_t log_index_interval_bytes;        /* log.index.interval.bytes (4096) */
    int32_t log_index_size_max_bytes;        /* log.index.size.max.bytes (10485760) */
    int32_t log_segment_fd_cache_size;       /* log.segment.fd.cache.size (0: RLIMIT_NOFILE / 2) */
    int64_t log_flush_interval_messages;     /* log.flush.interval.messages (INT64_MAX) */
    int64_t log_flush_interval_ms;   /* log.flush.interval.ms (= scheduler interval: INT64_MAX) */
    int64_t log_flush_scheduler_interval_ms; /* log.flush.scheduler.interval.ms (INT64_MAX) */
    /* How often the flusher checks the time-based flush policy: the scheduler interval, or
     * 1000 when that is left at its default (never). */
    int64_t log_flush_check_interval_ms;

    int32_t message_max_bytes;        /* message.max.bytes (1048588) */
    int32_t socket_request_max_bytes; /* socket.request.max.bytes (104857600) */
    int32_t num_network_threads;      /* num.network.threads (number of cores) */
    int32_t num_io_threads;           /* num.io.threads (8) */
    int64_t connections_max_idle_ms;  /* connections.max.idle.ms (600000; -1 never) */
    /* Bytes of requests read and not answered, across connections (536870912; <= 0: no cap) */
    int64_t queued_max_request_bytes;  /* queued.max.request.bytes */
    int64_t queued_max_response_bytes; /* queued.max.response.bytes (536870912; <= 0: no cap) */
    int32_t max_connections;           /* max.connections (INT32_MAX) */
    int32_t max_connections_per_ip;    /* max.connections.per.ip (INT32_MAX) */
    sf_brokercfg_ip_max_t *ip_overrides; /* max.connections.per.ip.overrides, in file order */
    size_t nip_overrides;

    char *ssl_keystore_location;   /* PEM: certificate chain + private key; NULL if unset */
    char *ssl_key_password;        /* NULL if unset */
    char *ssl_truststore_location; /* PEM CA bundle; NULL if unset */
    int ssl_client_auth;           /* SF_TLS_CLIENT_AUTH_* (0 none, 1 requested, 2 required) */

    char *http_listeners;          /* http.listeners: "http[s]://host:port,..."; NULL: none */
    char *http_auth_file;          /* http.auth.file: basic-auth credentials; NULL: none */
    int32_t http_max_body_bytes;   /* http.max.body.bytes (1048576) */
    int64_t health_min_free_bytes; /* health.min.free.bytes (104857600) */
    int64_t health_max_consumer_lag; /* health.max.consumer.lag (10000) */

    int log_level; /* SF_LOG_* (log.level, default info) */
    int syslog;    /* syslog (false) */

    char **ignored_keys; /* Kafka keys present in the file that StreamFlow does not use */
    size_t nignored_keys;

    /* The broker settings behind topic configs (topiccfg.h) as written in the file, for the
     * topic defaults and DescribeConfigs: keys[i] = values[i], each checked like the topic
     * config it stands for. */
    char **topic_keys, **topic_values;
    size_t ntopic_keys;
} sf_brokercfg_t;

/* Load and validate the file @path. On success *out is a new configuration (free with
 * sf_brokercfg_free) and SF_OK is returned; otherwise a negative SF_ERR_* with one sentence in
 * @errstr. */
int sf_brokercfg_load(const char *path, sf_brokercfg_t **out, char *errstr, size_t errstr_size);

/* The same from already parsed properties (@props is borrowed; its name is used in messages). */
int sf_brokercfg_from_props(const sf_props_t *props, sf_brokercfg_t **out, char *errstr,
                            size_t errstr_size);

/* The value the file gives a broker setting behind a topic config ("log.retention.hours"),
 * or NULL when the file does not set it. Borrowed from @cfg. */
const char *sf_brokercfg_file_value(const sf_brokercfg_t *cfg, const char *key);

/* Free a configuration (NULL is allowed). */
void sf_brokercfg_free(sf_brokercfg_t *cfg);

/* Format @l as "NAME://host:port" (IPv6 hosts in brackets) into @buf; returns @buf. */
char *sf_brokercfg_listener_str(const sf_brokercfg_listener_t *l, char *buf, size_t size);

/* Print a summary of every key (name, type, default), one per line, to @fp (for --help). */
void sf_brokercfg_print_keys(FILE *fp);

#endif
