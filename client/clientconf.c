/* Client configuration: a table of keys (Kafka client property names, type, range, default),
 * sf_conf_t holding the values as set, and the typed sf_clientconf_t parsed from it. A value is
 * checked when it is set, so sf_conf_set reports errors at the call that made them. */
#include "clientconf.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "assignor.h"
#include "err.h"
#include "props.h"

typedef enum key_type {
    KT_INT,     /* int, range min..max */
    KT_INT64,   /* int64_t, range min..max */
    KT_BOOL,    /* int: true / false */
    KT_STRING,  /* char *: any text; empty = unset (NULL) */
    KT_ENUM,    /* int: one of a list of names */
    KT_CODEC,   /* sf_compress_codec_t */
    KT_KBYTES,  /* int64_t bytes from a number of KiB */
    KT_ASSIGNORS, /* sf_clientconf_assignors_t from a list of assignor names */
    KT_IGNORED, /* a Kafka key the library accepts and does not use */
} key_type_t;

typedef struct enum_val {
    const char *name;
    int value;
} enum_val_t;

typedef struct key_def {
    const char *name;
    key_type_t type;
    size_t off; /* of the field in sf_clientconf_t */
    int64_t min, max;
    const char *def;          /* default as text; NULL = unset */
    const enum_val_t *enums;  /* KT_ENUM */
    const char *alias;        /* another name for the same key (librdkafka's) */
} key_def_t;

struct sf_conf {
    char **values; /* one per key, NULL = default */
    sf_log_cb *log_cb;
    void *log_opaque;
    sf_rebalance_cb *rebalance_cb;
    void *rebalance_opaque;
};

static const enum_val_t protocol_vals[] = {{"PLAINTEXT", 0}, {"SSL", 1}, {NULL, 0}};
static const enum_val_t endpoint_vals[] = {{"https", 1}, {"none", 0}, {"", 0}, {NULL, 0}};
static const enum_val_t acks_vals[] = {{"all", -1}, {"-1", -1}, {"0", 0}, {"1", 1}, {NULL, 0}};
static const enum_val_t partitioner_vals[] = {
    {"murmur2", 1}, {"murmur2_random", 1}, {"random", 0}, {NULL, 0}};
static const enum_val_t isolation_vals[] = {
    {"read_uncommitted", 0}, {"read_committed", 1}, {NULL, 0}};
static const enum_val_t reset_vals[] = {{"earliest", SF_OFFSET_BEGINNING},
                                        {"latest", SF_OFFSET_END},
                                        {"none", 0},
                                        {NULL, 0}};
static const enum_val_t level_vals[] = {{"err", SF_LOG_LEVEL_ERR},   {"error", SF_LOG_LEVEL_ERR},
                                        {"warning", SF_LOG_LEVEL_WARNING},
                                        {"info", SF_LOG_LEVEL_INFO}, {"debug", SF_LOG_LEVEL_DEBUG},
                                        {"3", 3}, {"4", 4}, {"5", 5}, {"6", 6}, {"7", 7},
                                        {NULL, 0}};

#define F(field) offsetof(sf_clientconf_t, field)
#define IMAX INT_MAX
#define IGNORED(n) {n, KT_IGNORED, 0, 0, 0, NULL, NULL, NULL}

static const key_def_t keys[] = {
    {"bootstrap.servers", KT_STRING, F(bootstrap_servers), 0, 0, NULL, NULL, NULL},
    {"client.id", KT_STRING, F(client_id), 0, 0, "streamflow", NULL, NULL},
    {"security.protocol", KT_ENUM, F(security_ssl), 0, 0, "PLAINTEXT", protocol_vals, NULL},
    {"ssl.truststore.location", KT_STRING, F(ssl_ca_location), 0, 0, NULL, NULL, "ssl.ca.location"},
    {"ssl.keystore.location", KT_STRING, F(ssl_cert_location), 0, 0, NULL, NULL,
     "ssl.certificate.location"},
    {"ssl.key.location", KT_STRING, F(ssl_key_location), 0, 0, NULL, NULL, NULL},
    {"ssl.key.password", KT_STRING, F(ssl_key_password), 0, 0, NULL, NULL, NULL},
    {"ssl.endpoint.identification.algorithm", KT_ENUM, F(ssl_verify_hostname), 0, 0, "https",
     endpoint_vals, NULL},
    {"request.timeout.ms", KT_INT, F(request_timeout_ms), 1, IMAX, "30000", NULL, NULL},
    {"socket.connection.setup.timeout.ms", KT_INT, F(connect_timeout_ms), 1, IMAX, "10000", NULL,
     NULL},
    {"reconnect.backoff.ms", KT_INT, F(reconnect_backoff_ms), 0, IMAX, "50", NULL, NULL},
    {"reconnect.backoff.max.ms", KT_INT, F(reconnect_backoff_max_ms), 0, IMAX, "1000", NULL, NULL},
    {"retry.backoff.ms", KT_INT, F(retry_backoff_ms), 0, IMAX, "100", NULL, NULL},
    {"metadata.max.age.ms", KT_INT, F(metadata_max_age_ms), 1, IMAX, "300000", NULL, NULL},
    {"log_level", KT_ENUM, F(log_level), 0, 0, "warning", level_vals, NULL},

    {"acks", KT_ENUM, F(acks), 0, 0, "all", acks_vals, NULL},
    {"linger.ms", KT_INT, F(linger_ms), 0, 900000, "5", NULL, NULL},
    {"batch.size", KT_INT, F(batch_size), 1, 64 << 20, "16384", NULL, NULL},
    {"compression.type", KT_CODEC, F(compression), 0, 0, "none", NULL, NULL},
    {"compression.level", KT_INT, F(compression_level), -131072, 22, "-1", NULL, NULL},
    {"delivery.timeout.ms", KT_INT, F(delivery_timeout_ms), 1, IMAX, "120000", NULL, NULL},
    {"retries", KT_INT, F(retries), 0, IMAX, "2147483647", NULL, NULL},
    {"enable.idempotence", KT_BOOL, F(enable_idempotence), 0, 0, "true", NULL, NULL},
    {"transactional.id", KT_STRING, F(transactional_id), 0, 0, NULL, NULL, NULL},
    {"transaction.timeout.ms", KT_INT, F(transaction_timeout_ms), 1, IMAX, "60000", NULL, NULL},
    {"max.block.ms", KT_INT, F(max_block_ms), 0, IMAX, "60000", NULL, NULL},
    {"buffer.memory", KT_INT64, F(buffer_memory), 1024, INT64_MAX, "33554432", NULL, NULL},
    {"max.request.size", KT_INT, F(max_request_size), 1024, 1 << 30, "1048576", NULL, NULL},
    {"partitioner", KT_ENUM, F(partitioner_murmur2), 0, 0, "murmur2", partitioner_vals, NULL},

    {"fetch.min.bytes", KT_INT, F(fetch_min_bytes), 0, IMAX, "1", NULL, NULL},
    {"fetch.max.wait.ms", KT_INT, F(fetch_max_wait_ms), 0, IMAX, "500", NULL, NULL},
    {"fetch.max.bytes", KT_INT, F(fetch_max_bytes), 1024, IMAX, "52428800", NULL, NULL},
    {"max.partition.fetch.bytes", KT_INT, F(max_partition_fetch_bytes), 1, IMAX, "1048576", NULL,
     NULL},
    {"queued.max.messages.kbytes", KT_KBYTES, F(queued_max_bytes), 1, 2097151, "65536", NULL, NULL},
    {"check.crcs", KT_BOOL, F(check_crcs), 0, 0, "true", NULL, NULL},
    {"auto.offset.reset", KT_ENUM, F(auto_offset_reset), 0, 0, "latest", reset_vals, NULL},
    {"isolation.level", KT_ENUM, F(isolation_level), 0, 0, "read_uncommitted", isolation_vals,
     NULL},

    {"group.id", KT_STRING, F(group_id), 0, 0, NULL, NULL, NULL},
    {"group.instance.id", KT_STRING, F(group_instance_id), 0, 0, NULL, NULL, NULL},
    {"session.timeout.ms", KT_INT, F(session_timeout_ms), 1, IMAX, "45000", NULL, NULL},
    {"heartbeat.interval.ms", KT_INT, F(heartbeat_interval_ms), 1, IMAX, "3000", NULL, NULL},
    {"max.poll.interval.ms", KT_INT, F(max_poll_interval_ms), 1, IMAX, "300000", NULL, NULL},
    {"partition.assignment.strategy", KT_ASSIGNORS, F(assignors), 0, 0,
     "range,cooperative-sticky", NULL, NULL},
    {"enable.auto.commit", KT_BOOL, F(enable_auto_commit), 0, 0, "true", NULL, NULL},
    {"auto.commit.interval.ms", KT_INT, F(auto_commit_interval_ms), 1, IMAX, "5000", NULL, NULL},

    /* Kafka client keys with no effect here (serializers, socket tuning). */
    IGNORED("max.poll.records"),
    IGNORED("allow.auto.create.topics"),
    IGNORED("max.in.flight.requests.per.connection"), IGNORED("key.serializer"),
    IGNORED("value.serializer"), IGNORED("key.deserializer"), IGNORED("value.deserializer"),
    IGNORED("receive.buffer.bytes"), IGNORED("send.buffer.bytes"),
    IGNORED("connections.max.idle.ms"), IGNORED("broker.address.family"),
    IGNORED("ssl.keystore.type"), IGNORED("ssl.truststore.type"), IGNORED("api.version.request"),
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const key_def_t *key_find(const char *name) {
    size_t i;
    for (i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].name, name) == 0 || (keys[i].alias && strcmp(keys[i].alias, name) == 0))
            return &keys[i];
    return NULL;
}

static int parse_integer(const char *s, int64_t *out) {
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* Parse the comma-separated assignor names of @value into @out (when not NULL). */
static int parse_assignors(const key_def_t *k, const char *value, sf_clientconf_assignors_t *out,
                           char *errstr, size_t size) {
    sf_clientconf_assignors_t a;
    const char *p = value;
    memset(&a, 0, sizeof(a));
    while (*p) {
        char name[128];
        size_t len;
        sf_assignor_kind_t kind;
        int i;
        p += strspn(p, ", \t");
        len = strcspn(p, ", \t");
        if (len == 0)
            break;
        if (len >= sizeof(name) ||
            (memcpy(name, p, len), name[len] = '\0', sf_assignor_parse(name, &kind) != SF_OK)) {
            sf_errf(errstr, size,
                    "%s: unknown assignor '%.*s' (expected range, roundrobin or "
                    "cooperative-sticky)", k->name, (int)(len > 64 ? 64 : len), p);
            return SF_ERROR_INVALID;
        }
        for (i = 0; i < a.n; i++)
            if (a.kinds[i] == (int)kind) {
                sf_errf(errstr, size, "%s: '%s' is listed twice", k->name, name);
                return SF_ERROR_INVALID;
            }
        a.kinds[a.n++] = (int)kind;
        p += len;
    }
    if (a.n == 0) {
        sf_errf(errstr, size, "%s: no assignor given (expected range, roundrobin or "
                              "cooperative-sticky)", k->name);
        return SF_ERROR_INVALID;
    }
    if (out)
        *out = a;
    return SF_OK;
}

/* Parse @value for key @k; store into @cc when not NULL. */
static int key_parse(const key_def_t *k, const char *value, sf_clientconf_t *cc, char *errstr,
                     size_t size) {
    char *field = cc ? (char *)cc + k->off : NULL;
    int64_t v;
    size_t i;

    switch (k->type) {
    case KT_IGNORED:
        return SF_OK;
    case KT_STRING:
        if (field) {
            char **sp = (char **)field;
            free(*sp);
            *sp = NULL;
            if (value[0] && !(*sp = strdup(value)))
                return SF_ERROR_NOMEM;
        }
        return SF_OK;
    case KT_INT:
    case KT_INT64:
    case KT_KBYTES:
        if (parse_integer(value, &v) < 0 || v < k->min || v > k->max) {
            sf_errf(errstr, size, "%s: invalid value '%s' (expected an integer from %lld to %lld)",
                 k->name, value, (long long)k->min, (long long)k->max);
            return SF_ERROR_INVALID;
        }
        if (field) {
            if (k->type == KT_INT)
                *(int *)field = (int)v;
            else
                *(int64_t *)field = k->type == KT_KBYTES ? v * 1024 : v;
        }
        return SF_OK;
    case KT_BOOL:
        if (strcasecmp(value, "true") == 0)
            v = 1;
        else if (strcasecmp(value, "false") == 0)
            v = 0;
        else {
            sf_errf(errstr, size, "%s: invalid value '%s' (expected true or false)", k->name, value);
            return SF_ERROR_INVALID;
        }
        if (field)
            *(int *)field = (int)v;
        return SF_OK;
    case KT_ENUM:
        for (i = 0; k->enums[i].name; i++)
            if (strcasecmp(k->enums[i].name, value) == 0) {
                if (field)
                    *(int *)field = k->enums[i].value;
                return SF_OK;
            }
        {
            char names[256] = "";
            for (i = 0; k->enums[i].name; i++) {
                if (!k->enums[i].name[0])
                    continue;
                if (names[0])
                    strncat(names, ", ", sizeof(names) - strlen(names) - 1);
                strncat(names, k->enums[i].name, sizeof(names) - strlen(names) - 1);
            }
            sf_errf(errstr, size, "%s: invalid value '%s' (expected one of: %s)", k->name, value,
                 names);
        }
        return SF_ERROR_INVALID;
    case KT_ASSIGNORS:
        return parse_assignors(k, value, field ? (sf_clientconf_assignors_t *)field : NULL,
                               errstr, size);
    case KT_CODEC: {
        sf_compress_codec_t c;
        if (sf_compress_codec_parse(value, &c) != SF_OK) {
            sf_errf(errstr, size,
                 "%s: invalid value '%s' (expected none, gzip, snappy, lz4 or zstd)", k->name,
                 value);
            return SF_ERROR_INVALID;
        }
        if (field)
            *(sf_compress_codec_t *)field = c;
        return SF_OK;
    }
    }
    return SF_ERROR_INVALID;
}

sf_conf_t *sf_conf_new(void) {
    sf_conf_t *conf = calloc(1, sizeof(*conf));
    if (!conf)
        return NULL;
    conf->values = calloc(NKEYS, sizeof(char *));
    if (!conf->values) {
        free(conf);
        return NULL;
    }
    return conf;
}

void sf_conf_destroy(sf_conf_t *conf) {
    size_t i;
    if (!conf)
        return;
    for (i = 0; i < NKEYS; i++)
        free(conf->values[i]);
    free(conf->values);
    free(conf);
}

sf_conf_t *sf_conf_dup(const sf_conf_t *conf) {
    sf_conf_t *d = sf_conf_new();
    size_t i;
    if (!d)
        return NULL;
    for (i = 0; i < NKEYS; i++)
        if (conf->values[i] && !(d->values[i] = strdup(conf->values[i]))) {
            sf_conf_destroy(d);
            return NULL;
        }
    d->log_cb = conf->log_cb;
    d->log_opaque = conf->log_opaque;
    d->rebalance_cb = conf->rebalance_cb;
    d->rebalance_opaque = conf->rebalance_opaque;
    return d;
}

int sf_conf_set(sf_conf_t *conf, const char *key, const char *value, char *errstr,
                size_t errstr_size) {
    const key_def_t *k;
    char *copy;
    int rc;
    if (!conf || !key || !value) {
        sf_errf(errstr, errstr_size, "missing configuration key or value");
        return SF_ERROR_INVALID;
    }
    k = key_find(key);
    if (!k) {
        sf_errf(errstr, errstr_size, "%s: unknown configuration key", key);
        return SF_ERROR_NOTFOUND;
    }
    rc = key_parse(k, value, NULL, errstr, errstr_size);
    if (rc != SF_OK)
        return rc;
    if (!(copy = strdup(value)))
        return SF_ERROR_NOMEM;
    free(conf->values[k - keys]);
    conf->values[k - keys] = copy;
    return SF_OK;
}

const char *sf_conf_get(const sf_conf_t *conf, const char *key) {
    const key_def_t *k = key ? key_find(key) : NULL;
    if (!conf || !k)
        return NULL;
    if (conf->values[k - keys])
        return conf->values[k - keys];
    return k->def ? k->def : "";
}

int sf_conf_load_file(sf_conf_t *conf, const char *path, char *errstr, size_t errstr_size) {
    sf_props_t *props = NULL;
    char msg[256];
    size_t i;
    int rc = sf_props_load(path, &props, errstr, errstr_size);
    if (rc != SF_OK)
        return rc == SF_ERR_IO ? SF_ERROR_IO : SF_ERROR_INVALID;
    for (i = 0; i < sf_props_count(props); i++) {
        const sf_prop_t *p = sf_props_at(props, i);
        rc = sf_conf_set(conf, p->key, p->value, msg, sizeof(msg));
        if (rc != SF_OK) {
            sf_errf(errstr, errstr_size, "%s:%d: %s", path, p->line, msg);
            break;
        }
    }
    sf_props_free(props);
    return rc;
}

void sf_conf_set_log_cb(sf_conf_t *conf, sf_log_cb *cb, void *opaque) {
    conf->log_cb = cb;
    conf->log_opaque = opaque;
}

void sf_conf_set_rebalance_cb(sf_conf_t *conf, sf_rebalance_cb *cb, void *opaque) {
    conf->rebalance_cb = cb;
    conf->rebalance_opaque = opaque;
}

void sf_clientconf_free(sf_clientconf_t *cc) {
    size_t i;
    if (!cc)
        return;
    for (i = 0; i < NKEYS; i++)
        if (keys[i].type == KT_STRING)
            free(*(char **)((char *)cc + keys[i].off));
    free(cc);
}

sf_clientconf_t *sf_clientconf_parse(const sf_conf_t *conf, char *errstr, size_t errstr_size) {
    sf_clientconf_t *cc = calloc(1, sizeof(*cc));
    size_t i;
    if (!cc) {
        sf_errf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    for (i = 0; i < NKEYS; i++) {
        const char *v = conf->values[i] ? conf->values[i] : keys[i].def;
        if (v && key_parse(&keys[i], v, cc, errstr, errstr_size) != SF_OK) {
            sf_clientconf_free(cc);
            return NULL;
        }
    }
    cc->log_cb = conf->log_cb;
    cc->log_opaque = conf->log_opaque;
    cc->rebalance_cb = conf->rebalance_cb;
    cc->rebalance_opaque = conf->rebalance_opaque;
    if (!cc->bootstrap_servers) {
        sf_errf(errstr, errstr_size, "bootstrap.servers: not set (expected host:port[,host:port...])");
        sf_clientconf_free(cc);
        return NULL;
    }
    if (cc->group_id && cc->heartbeat_interval_ms >= cc->session_timeout_ms) {
        sf_errf(errstr, errstr_size,
                "heartbeat.interval.ms: %d is not below session.timeout.ms (%d)",
                cc->heartbeat_interval_ms, cc->session_timeout_ms);
        sf_clientconf_free(cc);
        return NULL;
    }
    if ((cc->enable_idempotence || cc->transactional_id) && (cc->acks != -1 || cc->retries == 0)) {
        /* As the Java client: a conflict turns the default off, and fails an explicit true
         * (a transactional producer is idempotent). */
        if (conf->values[key_find("enable.idempotence") - keys] || cc->transactional_id) {
            sf_errf(errstr, errstr_size, "%s: needs acks=all and retries above 0",
                    cc->transactional_id ? "transactional.id" : "enable.idempotence");
            sf_clientconf_free(cc);
            return NULL;
        }
        cc->enable_idempotence = 0;
    }
    if (cc->transactional_id && !cc->enable_idempotence) {
        sf_errf(errstr, errstr_size, "transactional.id: needs enable.idempotence");
        sf_clientconf_free(cc);
        return NULL;
    }
    if (cc->reconnect_backoff_max_ms < cc->reconnect_backoff_ms)
        cc->reconnect_backoff_max_ms = cc->reconnect_backoff_ms;
    if (cc->ssl_key_location && !cc->ssl_cert_location) {
        sf_errf(errstr, errstr_size,
             "ssl.key.location: set without ssl.keystore.location (the client certificate)");
        sf_clientconf_free(cc);
        return NULL;
    }
    return cc;
}
