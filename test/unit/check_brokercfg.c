/* Unit tests for broker/brokercfg (typed broker configuration). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brokercfg.h"
#include "err.h"
#include "logging.h"
#include "props.h"
#include "tls.h"

#define BASE "broker.id=0\nzookeeper.connect=127.0.0.1:2181\nlog.dirs=/tmp/sf-data\n"

static char errbuf[1024];

static int load_text(const char *text, sf_brokercfg_t **cfg) {
    sf_props_t *props = NULL;
    int rc;
    errbuf[0] = '\0';
    rc = sf_props_parse(text, strlen(text), "streamflowd.conf", &props, errbuf, sizeof(errbuf));
    if (rc != SF_OK)
        return rc;
    rc = sf_brokercfg_from_props(props, cfg, errbuf, sizeof(errbuf));
    sf_props_free(props);
    return rc;
}

static sf_brokercfg_t *load_ok(const char *text) {
    sf_brokercfg_t *cfg = NULL;
    int rc = load_text(text, &cfg);
    ck_assert_msg(rc == SF_OK, "load failed: %s", errbuf);
    ck_assert_ptr_nonnull(cfg);
    return cfg;
}

/* Expect a failure whose message is exactly @want (when @want is not NULL), or contains
 * @part. */
static void load_err(const char *text, const char *want, const char *part) {
    sf_brokercfg_t *cfg = (sf_brokercfg_t *)1;
    int rc = load_text(text, &cfg);
    ck_assert_msg(rc != SF_OK, "expected an error for:\n%s", text);
    ck_assert_ptr_null(cfg);
    if (want)
        ck_assert_str_eq(errbuf, want);
    if (part)
        ck_assert_msg(strstr(errbuf, part), "\"%s\" not in \"%s\"", part, errbuf);
}

START_TEST(test_defaults) {
    sf_brokercfg_t *cfg = load_ok(BASE);
    ck_assert_int_eq(cfg->broker_id, 0);
    ck_assert_ptr_null(cfg->rack);
    ck_assert_uint_eq(cfg->nlisteners, 1);
    ck_assert_str_eq(cfg->listeners[0].name, "PLAINTEXT");
    ck_assert_int_eq(cfg->listeners[0].security, SF_BROKERCFG_PLAINTEXT);
    ck_assert_str_eq(cfg->listeners[0].host, "127.0.0.1");
    ck_assert_int_eq(cfg->listeners[0].port, 9092);
    ck_assert_uint_eq(cfg->nadvertised_listeners, 1);
    ck_assert_str_eq(cfg->advertised_listeners[0].host, "127.0.0.1");
    ck_assert_int_eq(cfg->advertised_listeners[0].port, 9092);
    ck_assert_uint_eq(cfg->nlog_dirs, 1);
    ck_assert_str_eq(cfg->log_dirs[0], "/tmp/sf-data");
    ck_assert_str_eq(cfg->zk_connect, "127.0.0.1:2181");
    ck_assert_str_eq(cfg->zk_chroot, "/streamflow");
    ck_assert_int_eq(cfg->zk_session_timeout_ms, 18000);
    ck_assert_int_eq(cfg->zk_connection_timeout_ms, 18000);
    ck_assert_int_eq(cfg->num_partitions, 1);
    ck_assert_int_eq(cfg->default_replication_factor, 1);
    ck_assert_int_eq(cfg->min_insync_replicas, 1);
    ck_assert_int_eq(cfg->auto_create_topics_enable, 1);
    ck_assert_int_eq(cfg->delete_topic_enable, 1);
    ck_assert_int_eq(cfg->log_segment_bytes, 1073741824);
    ck_assert(cfg->log_roll_ms == 168LL * 3600 * 1000);
    ck_assert(cfg->log_retention_ms == 168LL * 3600 * 1000);
    ck_assert(cfg->log_retention_bytes == -1);
    ck_assert(cfg->log_retention_check_interval_ms == 300000);
    ck_assert_int_eq(cfg->log_index_interval_bytes, 4096);
    ck_assert_int_eq(cfg->log_index_size_max_bytes, 10485760);
    ck_assert(cfg->log_flush_interval_messages == INT64_MAX);
    ck_assert(cfg->log_flush_interval_ms == INT64_MAX);
    ck_assert(cfg->log_flush_scheduler_interval_ms == INT64_MAX);
    ck_assert(cfg->log_flush_check_interval_ms == 1000);
    ck_assert_int_eq(cfg->message_max_bytes, 1048588);
    ck_assert_int_eq(cfg->socket_request_max_bytes, 104857600);
    ck_assert_int_ge(cfg->num_network_threads, 1);
    ck_assert_int_eq(cfg->num_io_threads, 8);
    ck_assert(cfg->queued_max_request_bytes == 536870912);
    ck_assert(cfg->queued_max_response_bytes == 536870912);
    ck_assert_int_eq(cfg->max_connections, INT32_MAX);
    ck_assert_int_eq(cfg->max_connections_per_ip, INT32_MAX);
    ck_assert_uint_eq(cfg->nip_overrides, 0);
    ck_assert_ptr_null(cfg->ssl_keystore_location);
    ck_assert_ptr_null(cfg->ssl_key_password);
    ck_assert_ptr_null(cfg->ssl_truststore_location);
    ck_assert_int_eq(cfg->ssl_client_auth, SF_TLS_CLIENT_AUTH_NONE);
    ck_assert_int_eq(cfg->log_level, SF_LOG_INFO);
    ck_assert_int_eq(cfg->syslog, 0);
    ck_assert_uint_eq(cfg->nignored_keys, 0);
    ck_assert_str_eq(cfg->path, "streamflowd.conf");
    sf_brokercfg_free(cfg);
}
END_TEST

START_TEST(test_all_keys_set) {
    sf_brokercfg_t *cfg = load_ok(
        "broker.id = 7\n"
        "broker.rack = eu-west-1a\n"
        "listeners=PLAINTEXT://127.0.0.1:19092, ssl://[::1]:19093\n"
        "advertised.listeners=SSL://broker7.example.com:9093\n"
        "log.dirs=/d1, /d2 ,/d3\n"
        "zookeeper.connect=zk1:2181, zk2:2182/kafka/prod\n"
        "zookeeper.session.timeout.ms=6000\n"
        "num.partitions=12\n"
        "default.replication.factor=3\n"
        "min.insync.replicas=2\n"
        "auto.create.topics.enable=FALSE\n"
        "delete.topic.enable=false\n"
        "log.segment.bytes=14\n"
        "log.retention.bytes=1000000\n"
        "log.retention.check.interval.ms=1\n"
        "log.index.interval.bytes=0\n"
        "log.index.size.max.bytes=4\n"
        "log.flush.interval.messages=10000\n"
        "log.flush.scheduler.interval.ms=2000\n"
        "message.max.bytes=0\n"
        "socket.request.max.bytes=1024\n"
        "num.network.threads=4\n"
        "ssl.keystore.location=/etc/sf/server.pem\n"
        "ssl.keystore.type=PEM\n"
        "ssl.key.password=secret\n"
        "ssl.truststore.location=/etc/sf/ca.pem\n"
        "ssl.client.auth=Required\n"
        "log.level=debug\n"
        "syslog=true\n"
        "num.io.threads=3\n"
        "num.recovery.threads.per.data.dir=1\n"
        "socket.send.buffer.bytes=102400\n");
    char buf[128];
    ck_assert_int_eq(cfg->broker_id, 7);
    ck_assert_str_eq(cfg->rack, "eu-west-1a");
    ck_assert_uint_eq(cfg->nlisteners, 2);
    ck_assert_str_eq(cfg->listeners[1].name, "SSL");
    ck_assert_int_eq(cfg->listeners[1].security, SF_BROKERCFG_SSL);
    ck_assert_str_eq(cfg->listeners[1].host, "::1");
    ck_assert_int_eq(cfg->listeners[1].port, 19093);
    ck_assert_str_eq(sf_brokercfg_listener_str(&cfg->listeners[1], buf, sizeof(buf)),
                     "SSL://[::1]:19093");
    ck_assert_uint_eq(cfg->nadvertised_listeners, 1);
    ck_assert_str_eq(sf_brokercfg_listener_str(&cfg->advertised_listeners[0], buf, sizeof(buf)),
                     "SSL://broker7.example.com:9093");
    ck_assert_uint_eq(cfg->nlog_dirs, 3);
    ck_assert_str_eq(cfg->log_dirs[1], "/d2");
    ck_assert_str_eq(cfg->zk_connect, "zk1:2181,zk2:2182");
    ck_assert_str_eq(cfg->zk_chroot, "/kafka/prod");
    ck_assert_int_eq(cfg->zk_session_timeout_ms, 6000);
    ck_assert_int_eq(cfg->zk_connection_timeout_ms, 6000);
    ck_assert_int_eq(cfg->num_partitions, 12);
    ck_assert_int_eq(cfg->default_replication_factor, 3);
    ck_assert_int_eq(cfg->min_insync_replicas, 2);
    ck_assert_int_eq(cfg->auto_create_topics_enable, 0);
    ck_assert_int_eq(cfg->delete_topic_enable, 0);
    ck_assert_int_eq(cfg->log_segment_bytes, 14);
    ck_assert(cfg->log_retention_bytes == 1000000);
    ck_assert(cfg->log_retention_check_interval_ms == 1);
    ck_assert_int_eq(cfg->log_index_interval_bytes, 0);
    ck_assert_int_eq(cfg->log_index_size_max_bytes, 4);
    ck_assert(cfg->log_flush_interval_messages == 10000);
    ck_assert(cfg->log_flush_scheduler_interval_ms == 2000);
    ck_assert(cfg->log_flush_interval_ms == 2000); /* defaults to the scheduler interval */
    ck_assert(cfg->log_flush_check_interval_ms == 2000);
    ck_assert_int_eq(cfg->message_max_bytes, 0);
    ck_assert_int_eq(cfg->socket_request_max_bytes, 1024);
    ck_assert_int_eq(cfg->num_network_threads, 4);
    ck_assert_int_eq(cfg->num_io_threads, 3);
    ck_assert_str_eq(cfg->ssl_keystore_location, "/etc/sf/server.pem");
    ck_assert_str_eq(cfg->ssl_key_password, "secret");
    ck_assert_str_eq(cfg->ssl_truststore_location, "/etc/sf/ca.pem");
    ck_assert_int_eq(cfg->ssl_client_auth, SF_TLS_CLIENT_AUTH_REQUIRED);
    ck_assert_int_eq(cfg->log_level, SF_LOG_DEBUG);
    ck_assert_int_eq(cfg->syslog, 1);
    ck_assert_uint_eq(cfg->nignored_keys, 2);
    ck_assert_str_eq(cfg->ignored_keys[0], "num.recovery.threads.per.data.dir");
    ck_assert_str_eq(cfg->ignored_keys[1], "socket.send.buffer.bytes");
    sf_brokercfg_free(cfg);
}
END_TEST

START_TEST(test_precedence) {
    sf_brokercfg_t *cfg;
    /* retention: ms > minutes > hours */
    cfg = load_ok(BASE "log.retention.hours=1\n");
    ck_assert(cfg->log_retention_ms == 3600000);
    sf_brokercfg_free(cfg);
    cfg = load_ok(BASE "log.retention.hours=1\nlog.retention.minutes=2\n");
    ck_assert(cfg->log_retention_ms == 120000);
    sf_brokercfg_free(cfg);
    cfg = load_ok(BASE "log.retention.ms=5\nlog.retention.hours=1\nlog.retention.minutes=2\n");
    ck_assert(cfg->log_retention_ms == 5);
    sf_brokercfg_free(cfg);
    cfg = load_ok(BASE "log.retention.hours=-1\n");
    ck_assert(cfg->log_retention_ms == -1);
    sf_brokercfg_free(cfg);
    cfg = load_ok(BASE "log.retention.minutes=-1\nlog.retention.hours=5\n");
    ck_assert(cfg->log_retention_ms == -1);
    sf_brokercfg_free(cfg);
    cfg = load_ok(BASE "log.retention.ms=-1\nlog.retention.minutes=3\n");
    ck_assert(cfg->log_retention_ms == -1);
    sf_brokercfg_free(cfg);
    /* roll: ms > hours */
    cfg = load_ok(BASE "log.roll.hours=2\n");
    ck_assert(cfg->log_roll_ms == 7200000);
    sf_brokercfg_free(cfg);
    cfg = load_ok(BASE "log.roll.ms=1234\nlog.roll.hours=2\n");
    ck_assert(cfg->log_roll_ms == 1234);
    sf_brokercfg_free(cfg);
    /* log.dirs > log.dir; log.dir alone is enough */
    cfg = load_ok("broker.id=1\nzookeeper.connect=h:1\nlog.dir=/one\n");
    ck_assert_uint_eq(cfg->nlog_dirs, 1);
    ck_assert_str_eq(cfg->log_dirs[0], "/one");
    sf_brokercfg_free(cfg);
    cfg = load_ok("broker.id=1\nzookeeper.connect=h:1\nlog.dir=/one\nlog.dirs=/two,/three\n");
    ck_assert_uint_eq(cfg->nlog_dirs, 2);
    ck_assert_str_eq(cfg->log_dirs[0], "/two");
    sf_brokercfg_free(cfg);
    /* explicit connection timeout; explicit flush interval */
    cfg = load_ok(BASE "zookeeper.connection.timeout.ms=999\nlog.flush.interval.ms=50\n");
    ck_assert_int_eq(cfg->zk_connection_timeout_ms, 999);
    ck_assert_int_eq(cfg->zk_session_timeout_ms, 18000);
    ck_assert(cfg->log_flush_interval_ms == 50);
    ck_assert(cfg->log_flush_check_interval_ms == 1000);
    sf_brokercfg_free(cfg);
    /* the last definition of a key wins */
    cfg = load_ok(BASE "num.partitions=3\nnum.partitions=4\n");
    ck_assert_int_eq(cfg->num_partitions, 4);
    sf_brokercfg_free(cfg);
    /* an empty broker.rack is no rack */
    cfg = load_ok(BASE "broker.rack=r1\nbroker.rack=\n");
    ck_assert_ptr_null(cfg->rack);
    sf_brokercfg_free(cfg);
}
END_TEST

START_TEST(test_listeners) {
    sf_brokercfg_t *cfg;
    char buf[128];
    /* empty host = all interfaces; advertised as a routable IPv4 address */
    cfg = load_ok(BASE "listeners=PLAINTEXT://:9092,SSL://0.0.0.0:9093\n"
                       "ssl.keystore.location=/k.pem\n");
    ck_assert_uint_eq(cfg->nlisteners, 2);
    ck_assert_str_eq(cfg->listeners[0].host, "");
    ck_assert_str_eq(cfg->listeners[1].host, "0.0.0.0");
    ck_assert_uint_eq(cfg->nadvertised_listeners, 2);
    ck_assert_str_ne(cfg->advertised_listeners[0].host, "");
    ck_assert_str_ne(cfg->advertised_listeners[1].host, "0.0.0.0");
    ck_assert_ptr_null(strchr(cfg->advertised_listeners[0].host, ':')); /* IPv4 */
    ck_assert_int_eq(cfg->advertised_listeners[1].port, 9093);
    ck_assert_str_eq(cfg->advertised_listeners[1].name, "SSL");
    ck_assert_str_eq(sf_brokercfg_listener_str(&cfg->listeners[0], buf, sizeof(buf)),
                     "PLAINTEXT://:9092");
    sf_brokercfg_free(cfg);
    /* localhost is advertised as the IPv4 loopback address; port 0 is allowed */
    cfg = load_ok(BASE "listeners=plaintext://localhost:0\n");
    ck_assert_str_eq(cfg->listeners[0].name, "PLAINTEXT");
    ck_assert_str_eq(cfg->listeners[0].host, "localhost");
    ck_assert_int_eq(cfg->listeners[0].port, 0);
    ck_assert_str_eq(cfg->advertised_listeners[0].host, "127.0.0.1");
    sf_brokercfg_free(cfg);
    /* explicit advertised listener with an empty host */
    cfg = load_ok(BASE "listeners=PLAINTEXT://127.0.0.1:9092\nadvertised.listeners=PLAINTEXT://:9092\n");
    ck_assert_str_ne(cfg->advertised_listeners[0].host, "");
    sf_brokercfg_free(cfg);
    /* chroot forms */
    cfg = load_ok("broker.id=1\nlog.dirs=/x\nzookeeper.connect=[::1]:2181/\n");
    ck_assert_str_eq(cfg->zk_chroot, "");
    ck_assert_str_eq(cfg->zk_connect, "[::1]:2181");
    sf_brokercfg_free(cfg);
}
END_TEST

START_TEST(test_load_file) {
    char path[] = "/tmp/check_brokercfg_XXXXXX";
    int fd = mkstemp(path);
    sf_brokercfg_t *cfg = NULL;
    const char *text = BASE "log.segment.bytes=12x\n";
    char want[256];
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    ck_assert_int_eq(sf_brokercfg_load(path, &cfg, errbuf, sizeof(errbuf)), SF_ERR_INVALID);
    ck_assert_ptr_null(cfg);
    snprintf(want, sizeof(want),
             "%s:4: log.segment.bytes: \"12x\" is not a number of bytes (expected an integer >= 14)",
             path);
    ck_assert_str_eq(errbuf, want);
    unlink(path);
    ck_assert_int_eq(sf_brokercfg_load(path, &cfg, errbuf, sizeof(errbuf)), SF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(errbuf, path));
}
END_TEST

/* ---- limits: one test per kind of error message ---- */

START_TEST(test_net_limits) {
    sf_brokercfg_t *cfg = load_ok(BASE "queued.max.request.bytes=-1\n"
                                       "queued.max.response.bytes=1000\n"
                                       "max.connections=100\n"
                                       "max.connections.per.ip=0\n"
                                       "max.connections.per.ip.overrides=10.0.0.1:5, [::1]:7,"
                                       "broker-admin:0\n");
    ck_assert(cfg->queued_max_request_bytes == -1);
    ck_assert(cfg->queued_max_response_bytes == 1000);
    ck_assert_int_eq(cfg->max_connections, 100);
    ck_assert_int_eq(cfg->max_connections_per_ip, 0);
    ck_assert_uint_eq(cfg->nip_overrides, 3);
    ck_assert_str_eq(cfg->ip_overrides[0].host, "10.0.0.1");
    ck_assert_int_eq(cfg->ip_overrides[0].max, 5);
    ck_assert_str_eq(cfg->ip_overrides[1].host, "::1");
    ck_assert_int_eq(cfg->ip_overrides[1].max, 7);
    ck_assert_str_eq(cfg->ip_overrides[2].host, "broker-admin");
    ck_assert_int_eq(cfg->ip_overrides[2].max, 0);
    sf_brokercfg_free(cfg);

    load_err(BASE "queued.max.request.bytes=1000\n", NULL,
             "queued.max.request.bytes: 1000 is below socket.request.max.bytes (104857600)");
    load_err(BASE "max.connections.per.ip=0\n", NULL,
             "max.connections.per.ip: 0 refuses every client");
    load_err(BASE "max.connections.per.ip.overrides=10.0.0.1\n", NULL, "is not host:max");
    load_err(BASE "max.connections.per.ip.overrides=10.0.0.1:5,:3\n", NULL, "is not host:max");
    load_err(BASE "max.connections.per.ip.overrides=10.0.0.1:x\n", NULL,
             "\"x\" is not a number of connections for 10.0.0.1");
    load_err(BASE "max.connections.per.ip.overrides=10.0.0.1:-1\n", NULL, "is not a number");
    load_err(BASE "max.connections.per.ip.overrides=10.0.0.1:2147483648\n", NULL,
             "is not a number");
    load_err(BASE "max.connections=-1\n", NULL, "is out of range");
}
END_TEST

START_TEST(test_error_numbers) {
    load_err("log.segment.bytes=12x\n" BASE,
             "streamflowd.conf:1: log.segment.bytes: \"12x\" is not a number of bytes (expected an "
             "integer >= 14)", NULL);
    load_err(BASE "log.segment.bytes=13\n",
             "streamflowd.conf:4: log.segment.bytes: \"13\" is out of range (expected an integer >= "
             "14)", NULL);
    load_err(BASE "num.partitions=2147483648\n", NULL, "is out of range (expected an integer >= 1)");
    load_err(BASE "log.retention.bytes=99999999999999999999\n", NULL, "is out of range");
    load_err(BASE "log.retention.ms=-2\n", NULL,
             "log.retention.ms: \"-2\" is out of range (expected an integer >= -1; -1 means "
             "unlimited)");
    load_err(BASE "default.replication.factor=40000\n", NULL,
             "(expected an integer between 1 and 32767)");
    load_err(BASE "num.partitions=\n", NULL, "num.partitions: \"\" is not a number of partitions");
    load_err(BASE "num.partitions=1.5\n", NULL, "\"1.5\" is not");
    load_err(BASE "num.partitions=0x10\n", NULL, "\"0x10\" is not");
    load_err("broker.id=-1\nzookeeper.connect=h:1\nlog.dirs=/x\n", NULL,
             "broker.id: \"-1\" is out of range (expected an integer >= 0; automatic broker id "
             "generation (-1) is not supported)");
}
END_TEST

START_TEST(test_error_other_types) {
    load_err(BASE "syslog=yes\n",
             "streamflowd.conf:4: syslog: \"yes\" is not a boolean (expected true or false)", NULL);
    load_err(BASE "ssl.client.auth=maybe\n",
             "streamflowd.conf:4: ssl.client.auth: \"maybe\" is not a valid value (expected none, "
             "requested or required)", NULL);
    load_err(BASE "log.level=trace\n", NULL,
             "(expected error, warning, notice, info or debug)");
    load_err(BASE "ssl.keystore.type=JKS\n", NULL, "(expected PEM)");
    load_err(BASE "log.segmnet.bytes=1\n",
             "streamflowd.conf:4: unknown key \"log.segmnet.bytes\" (did you mean log.segment.bytes?)",
             NULL);
    load_err(BASE "completely.unknown=1\n", NULL, "unknown key \"completely.unknown\"");
    load_err(BASE "log.dirs=/a,,/b\n", NULL, "has an empty entry");
    load_err(BASE "log.dirs=/a,/b,/a\n", NULL, "names /a twice");
}
END_TEST

START_TEST(test_error_listeners) {
    load_err(BASE "listeners=PLAINTEXT://127.0.0.1\n",
             "streamflowd.conf:4: listeners: \"PLAINTEXT://127.0.0.1\" is not a valid listener "
             "(expected NAME://host:port with NAME PLAINTEXT or SSL, e.g. PLAINTEXT://127.0.0.1:9092)",
             NULL);
    load_err(BASE "listeners=SASL_SSL://:9092\n", NULL,
             "listeners: \"SASL_SSL://:9092\" has an unknown listener name \"SASL_SSL\" (expected "
             "PLAINTEXT or SSL)");
    load_err(BASE "listeners=PLAINTEXT://:70000\n", NULL, "has a port out of range");
    load_err(BASE "listeners=PLAINTEXT://::1:9092\n", NULL, "is not a valid listener");
    load_err(BASE "listeners=PLAINTEXT://[::1:9092\n", NULL, "is not a valid listener");
    load_err(BASE "listeners=PLAINTEXT://[nothex]:9092\n", NULL, "is not a valid listener");
    load_err(BASE "listeners=PLAINTEXT://bad host:9092\n", NULL, "is not a valid listener");
    load_err(BASE "listeners=PLAINTEXT://:9092x\n", NULL, "is not a valid listener");
    load_err(BASE "listeners=:9092\n", NULL, "is not a valid listener");
    load_err(BASE "listeners=\n", NULL, "has an empty entry");
    load_err(BASE "listeners=PLAINTEXT://:9092,PLAINTEXT://:9093\n", NULL,
             "names listener PLAINTEXT twice");
    load_err(BASE "listeners=PLAINTEXT://:9092,SSL://:9092\nssl.keystore.location=/k\n", NULL,
             "uses port 9092 twice");
    load_err(BASE "listeners=SSL://:9093\n",
             "streamflowd.conf:4: listeners: \"SSL://:9093\" needs ssl.keystore.location (a PEM file "
             "with the server certificate chain and its private key)", NULL);
    load_err(BASE "listeners=SSL://:9093\nssl.keystore.location=/k\nssl.client.auth=requested\n",
             NULL, "ssl.client.auth: \"requested\" needs ssl.truststore.location");
    load_err(BASE "advertised.listeners=SSL://h:9093\n", NULL,
             "advertised.listeners: \"SSL://h:9093\" names a listener that is not in listeners");
    load_err(BASE "advertised.listeners=PLAINTEXT://0.0.0.0:9092\n", NULL,
             "uses the non-routable address 0.0.0.0");
    load_err(BASE "advertised.listeners=PLAINTEXT://h:0\n", NULL,
             "(expected a port between 1 and 65535)");
}
END_TEST

START_TEST(test_error_required_and_zk) {
    load_err("zookeeper.connect=h:1\nlog.dirs=/x\n",
             "streamflowd.conf: broker.id is required (expected an integer >= 0; automatic broker id "
             "generation is not supported)", NULL);
    load_err("broker.id=1\nlog.dirs=/x\n", NULL, "streamflowd.conf: zookeeper.connect is required");
    load_err("broker.id=1\nzookeeper.connect=h:1\n", NULL, "streamflowd.conf: log.dirs is required");
    load_err("", NULL, "is required");
    load_err(BASE "zookeeper.connect=h\n", NULL,
             "zookeeper.connect: \"h\" has an invalid server \"h\" (expected "
             "host:port[,host:port...][/chroot])");
    load_err(BASE "zookeeper.connect=:2181\n", NULL, "has an invalid server");
    load_err(BASE "zookeeper.connect=h:1,,h:2\n", NULL, "has an invalid server");
    load_err(BASE "zookeeper.connect=h:1/a/\n", NULL, "has an invalid chroot path \"/a/\"");
    load_err(BASE "zookeeper.connect=h:1/a//b\n", NULL, "has an invalid chroot path");
    load_err(BASE "zookeeper.connect=h:1/a/..\n", NULL, "has an invalid chroot path");
}
END_TEST

START_TEST(test_print_keys) {
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(fp);
    sf_brokercfg_print_keys(fp);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(text, "log.segment.bytes"));
    ck_assert_ptr_nonnull(strstr(text, "[1073741824]"));
    ck_assert_ptr_nonnull(strstr(text, "ssl.client.auth"));
    ck_assert_ptr_nonnull(strstr(text, "num.io.threads"));
    ck_assert_ptr_nonnull(strstr(text, "broker.rack"));
    free(text);
}
END_TEST

static Suite *brokercfg_suite(void) {
    Suite *s = suite_create("brokercfg");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_test(core, test_defaults);
    tcase_add_test(core, test_all_keys_set);
    tcase_add_test(core, test_precedence);
    tcase_add_test(core, test_listeners);
    tcase_add_test(core, test_load_file);
    tcase_add_test(core, test_print_keys);
    tcase_add_test(limits, test_net_limits);
    tcase_add_test(limits, test_error_numbers);
    tcase_add_test(limits, test_error_other_types);
    tcase_add_test(limits, test_error_listeners);
    tcase_add_test(limits, test_error_required_and_zk);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(brokercfg_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
