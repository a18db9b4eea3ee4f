/* Client configuration: the sf_conf_t key table (Kafka client property names and defaults)
 * and its parsed, typed form used inside the library. */
#ifndef SF_CLIENTCONF_H
#define SF_CLIENTCONF_H

#include <stdint.h>

#include "compress.h"
#include "streamflow.h"

typedef struct sf_clientconf sf_clientconf_t;

/* partition.assignment.strategy: the assignors (sf_assignor_kind_t) in preference order. */
#define SF_CLIENTCONF_MAX_ASSIGNORS 3
typedef struct sf_clientconf_assignors {
    int kinds[SF_CLIENTCONF_MAX_ASSIGNORS];
    int n;
} sf_clientconf_assignors_t;

/* Parsed configuration. Times in milliseconds, sizes in bytes. */
struct sf_clientconf {
    /* common */
    char *bootstrap_servers;      /* bootstrap.servers: "host:port,host:port" (required) */
    char *client_id;              /* client.id, default "streamflow" */
    int security_ssl;             /* security.protocol: PLAINTEXT (0) | SSL (1) */
    char *ssl_ca_location;        /* ssl.truststore.location / ssl.ca.location: PEM CA bundle */
    char *ssl_cert_location;      /* ssl.keystore.location / ssl.certificate.location: PEM
                                   * certificate (+ key when ssl.key.location is unset) */
    char *ssl_key_location;       /* ssl.key.location: PEM private key */
    char *ssl_key_password;       /* ssl.key.password */
    int ssl_verify_hostname;      /* ssl.endpoint.identification.algorithm: https (1) | none (0) */
    int request_timeout_ms;       /* request.timeout.ms, 30000 */
    int connect_timeout_ms;       /* socket.connection.setup.timeout.ms, 10000 */
    int reconnect_backoff_ms;     /* reconnect.backoff.ms, 50 */
    int reconnect_backoff_max_ms; /* reconnect.backoff.max.ms, 1000 */
    int retry_backoff_ms;         /* retry.backoff.ms, 100 */
    int metadata_max_age_ms;      /* metadata.max.age.ms, 300000 */
    int log_level;                /* log_level: err|warning|info|debug (or 3..7), warning */
    sf_log_cb *log_cb;            /* sf_conf_set_log_cb */
    void *log_opaque;

    /* producer */
    int acks;                     /* acks: 0 | 1 | all (-1), default all */
    int linger_ms;                /* linger.ms, 5 */
    int batch_size;               /* batch.size, 16384 */
    sf_compress_codec_t compression; /* compression.type: none|gzip|snappy|lz4|zstd */
    int compression_level;        /* compression.level, -1 = codec default */
    int delivery_timeout_ms;      /* delivery.timeout.ms, 120000 */
    int retries;                  /* retries, 2147483647 */
    int enable_idempotence;       /* enable.idempotence, true unless acks or retries conflict
                                   * (then an error if it was set explicitly) */
    char *transactional_id;       /* transactional.id (NULL: not transactional) */
    int transaction_timeout_ms;   /* transaction.timeout.ms, 60000 */
    int max_block_ms;             /* max.block.ms, 60000 */
    int64_t buffer_memory;        /* buffer.memory, 33554432 */
    int max_request_size;         /* max.request.size, 1048576 */
    int partitioner_murmur2;      /* partitioner: murmur2 (1, Java's default) | random (0) for
                                   * keyed records; null keys always use sticky batches */

    /* consumer */
    int fetch_min_bytes;          /* fetch.min.bytes, 1 */
    int fetch_max_wait_ms;        /* fetch.max.wait.ms, 500 */
    int fetch_max_bytes;          /* fetch.max.bytes, 52428800 */
    int max_partition_fetch_bytes;/* max.partition.fetch.bytes, 1048576 */
    int64_t queued_max_bytes;     /* queued.max.messages.kbytes * 1024, 65536 KiB */
    int check_crcs;               /* check.crcs, true */
    int auto_offset_reset;        /* auto.offset.reset: earliest (SF_OFFSET_BEGINNING) | latest
                                   * (SF_OFFSET_END) | none (0: report OFFSET_OUT_OF_RANGE) */
    int isolation_level;          /* isolation.level: read_uncommitted (0) | read_committed (1:
                                   * only committed transactions' records) */

    /* consumer groups */
    char *group_id;               /* group.id (NULL: no group) */
    char *group_instance_id;      /* group.instance.id (NULL: a dynamic member) */
    int session_timeout_ms;       /* session.timeout.ms, 45000 */
    int heartbeat_interval_ms;    /* heartbeat.interval.ms, 3000 */
    int max_poll_interval_ms;     /* max.poll.interval.ms, 300000 */
    sf_clientconf_assignors_t assignors; /* partition.assignment.strategy,
                                          * "range,cooperative-sticky" */
    int enable_auto_commit;       /* enable.auto.commit, true */
    int auto_commit_interval_ms;  /* auto.commit.interval.ms, 5000 */
    sf_rebalance_cb *rebalance_cb; /* sf_conf_set_rebalance_cb */
    void *rebalance_opaque;
};

/* The parsed form of @conf. Returns NULL with a message in @errstr when a value that can only
 * be checked as a whole is wrong (e.g. bootstrap.servers empty). Free with
 * sf_clientconf_free. */
sf_clientconf_t *sf_clientconf_parse(const sf_conf_t *conf, char *errstr, size_t errstr_size);
void sf_clientconf_free(sf_clientconf_t *cc);

#endif
