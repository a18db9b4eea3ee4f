/* Topic configuration: Kafka 3.9's LogConfig table, validation, resolution, log settings. */
#include "topiccfg.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "brokercfg.h"
#include "compress.h"
#include "err.h"

#define LMAX INT64_MAX
#define IMAX ((int64_t)INT32_MAX)
#define NEVER "9223372036854775807"
#define S1(n) {{n, 1}}

/* Sorted by name. min/max bound INT and LONG values (Kafka's atLeast/between validators). */
static const sf_topiccfg_def_t defs[] = {
    {"cleanup.policy", SF_TOPICCFG_LIST, "delete", 0, 0, "compact,delete",
     S1("log.cleanup.policy"), "delete old segments, compact by key, or both"},
    {"compression.gzip.level", SF_TOPICCFG_INT, "-1", -1, 9, NULL, S1("compression.gzip.level"),
     "gzip level when compression.type is gzip (-1: the codec's default)"},
    {"compression.lz4.level", SF_TOPICCFG_INT, "9", 1, 17, NULL, S1("compression.lz4.level"),
     "lz4 level when compression.type is lz4"},
    {"compression.type", SF_TOPICCFG_STRING, "producer", 0, 0,
     "uncompressed,zstd,lz4,snappy,gzip,producer", S1("compression.type"),
     "compression of stored batches (producer: as the producer sent them)"},
    {"compression.zstd.level", SF_TOPICCFG_INT, "3", -131072, 22, NULL,
     S1("compression.zstd.level"), "zstd level when compression.type is zstd"},
    {"delete.retention.ms", SF_TOPICCFG_LONG, "86400000", 0, LMAX, NULL,
     S1("log.cleaner.delete.retention.ms"), "how long delete markers stay in compacted logs"},
    {"file.delete.delay.ms", SF_TOPICCFG_LONG, "60000", 0, LMAX, NULL,
     S1("log.segment.delete.delay.ms"), "wait before deleting a file from the filesystem"},
    {"flush.messages", SF_TOPICCFG_LONG, NEVER, 1, LMAX, NULL,
     S1("log.flush.interval.messages"), "fsync after this many records"},
    {"flush.ms", SF_TOPICCFG_LONG, NEVER, 0, LMAX, NULL,
     {{"log.flush.interval.ms", 1}, {"log.flush.scheduler.interval.ms", 1}},
     "fsync data older than this"},
    {"follower.replication.throttled.replicas", SF_TOPICCFG_LIST, "", 0, 0, NULL, {{NULL, 0}},
     "partition:broker pairs (or *) whose follower replication is throttled"},
    {"index.interval.bytes", SF_TOPICCFG_INT, "4096", 0, IMAX, NULL,
     S1("log.index.interval.bytes"), "bytes between offset index entries"},
    {"leader.replication.throttled.replicas", SF_TOPICCFG_LIST, "", 0, 0, NULL, {{NULL, 0}},
     "partition:broker pairs (or *) whose leader replication is throttled"},
    {"local.retention.bytes", SF_TOPICCFG_LONG, "-2", -2, LMAX, NULL,
     S1("log.local.retention.bytes"), "local bytes kept with tiered storage (-2: retention.bytes)"},
    {"local.retention.ms", SF_TOPICCFG_LONG, "-2", -2, LMAX, NULL, S1("log.local.retention.ms"),
     "local time kept with tiered storage (-2: retention.ms)"},
    {"max.compaction.lag.ms", SF_TOPICCFG_LONG, NEVER, 1, LMAX, NULL,
     S1("log.cleaner.max.compaction.lag.ms"), "longest a record stays uncompacted"},
    {"max.message.bytes", SF_TOPICCFG_INT, "1048588", 0, IMAX, NULL, S1("message.max.bytes"),
     "largest record batch accepted"},
    {"message.downconversion.enable", SF_TOPICCFG_BOOLEAN, "true", 0, 0, NULL,
     S1("log.message.downconversion.enable"), "convert batches for old fetch versions"},
    {"message.format.version", SF_TOPICCFG_STRING, "3.0-IV1", 0, 0, NULL,
     S1("log.message.format.version"), "deprecated; ignored from 3.0"},
    {"message.timestamp.after.max.ms", SF_TOPICCFG_LONG, NEVER, 0, LMAX, NULL,
     S1("log.message.timestamp.after.max.ms"), "how far in the future a timestamp may be"},
    {"message.timestamp.before.max.ms", SF_TOPICCFG_LONG, NEVER, 0, LMAX, NULL,
     S1("log.message.timestamp.before.max.ms"), "how far in the past a timestamp may be"},
    {"message.timestamp.difference.max.ms", SF_TOPICCFG_LONG, NEVER, 0, LMAX, NULL,
     S1("log.message.timestamp.difference.max.ms"), "deprecated: before/after max"},
    {"message.timestamp.type", SF_TOPICCFG_STRING, "CreateTime", 0, 0, "CreateTime,LogAppendTime",
     S1("log.message.timestamp.type"), "the producer's timestamps or the broker's append time"},
    {"min.cleanable.dirty.ratio", SF_TOPICCFG_DOUBLE, "0.5", 0, 0, NULL,
     S1("log.cleaner.min.cleanable.ratio"), "dirty share of a log that triggers compaction"},
    {"min.compaction.lag.ms", SF_TOPICCFG_LONG, "0", 0, LMAX, NULL,
     S1("log.cleaner.min.compaction.lag.ms"), "shortest a record stays uncompacted"},
    {"min.insync.replicas", SF_TOPICCFG_INT, "1", 1, IMAX, NULL, S1("min.insync.replicas"),
     "in-sync replicas acks=all needs"},
    {"preallocate", SF_TOPICCFG_BOOLEAN, "false", 0, 0, NULL, S1("log.preallocate"),
     "preallocate segment files"},
    {"remote.log.copy.disable", SF_TOPICCFG_BOOLEAN, "false", 0, 0, NULL, {{NULL, 0}},
     "stop copying segments to tiered storage"},
    {"remote.log.delete.on.disable", SF_TOPICCFG_BOOLEAN, "false", 0, 0, NULL, {{NULL, 0}},
     "delete tiered data when tiered storage is turned off"},
    {"remote.storage.enable", SF_TOPICCFG_BOOLEAN, "false", 0, 0, NULL, {{NULL, 0}},
     "tiered storage (not available: the broker has no remote log storage)"},
    {"retention.bytes", SF_TOPICCFG_LONG, "-1", INT64_MIN, LMAX, NULL, S1("log.retention.bytes"),
     "delete old segments past this partition size (-1: no limit)"},
    {"retention.ms", SF_TOPICCFG_LONG, "604800000", -1, LMAX, NULL,
     {{"log.retention.ms", 1}, {"log.retention.minutes", 60000}, {"log.retention.hours", 3600000}},
     "delete segments older than this (-1: keep)"},
    {"segment.bytes", SF_TOPICCFG_INT, "1073741824", 14, IMAX, NULL, S1("log.segment.bytes"),
     "roll a segment at this size"},
    {"segment.index.bytes", SF_TOPICCFG_INT, "10485760", 4, IMAX, NULL,
     S1("log.index.size.max.bytes"), "largest offset index of a segment"},
    {"segment.jitter.ms", SF_TOPICCFG_LONG, "0", 0, LMAX, NULL,
     {{"log.roll.jitter.ms", 1}, {"log.roll.jitter.hours", 3600000}},
     "random jitter subtracted from segment.ms"},
    {"segment.ms", SF_TOPICCFG_LONG, "604800000", 1, LMAX, NULL,
     {{"log.roll.ms", 1}, {"log.roll.hours", 3600000}}, "roll a segment at this age"},
    {"unclean.leader.election.enable", SF_TOPICCFG_BOOLEAN, "false", 0, 0, NULL,
     S1("unclean.leader.election.enable"), "elect an out-of-sync replica as last resort"},
};

#define NDEFS (sizeof(defs) / sizeof(defs[0]))

/* Dynamic broker configs that give no topic config its default (Kafka's replication quotas):
 * each is the synonym of itself, so that the broker config paths find, validate and resolve
 * them as the others. */
static const sf_topiccfg_def_t broker_defs[] = {
    {"follower.replication.throttled.rate", SF_TOPICCFG_LONG, NEVER, 0, LMAX, NULL,
     S1("follower.replication.throttled.rate"),
     "bytes per second this broker fetches at most for its throttled replicas"},
    {"leader.replication.throttled.rate", SF_TOPICCFG_LONG, NEVER, 0, LMAX, NULL,
     S1("leader.replication.throttled.rate"),
     "bytes per second this broker sends at most to throttled followers"},
};

#define NBROKER_DEFS (sizeof(broker_defs) / sizeof(broker_defs[0]))

const sf_topiccfg_def_t *sf_topiccfg_broker_only(size_t *n) {
    *n = NBROKER_DEFS;
    return broker_defs;
}

const sf_topiccfg_def_t *sf_topiccfg_all(size_t *n) {
    *n = NDEFS;
    return defs;
}

static int def_cmp(const void *key, const void *elem) {
    return strcmp(key, ((const sf_topiccfg_def_t *)elem)->name);
}

const sf_topiccfg_def_t *sf_topiccfg_find(const char *name) {
    return bsearch(name, defs, NDEFS, sizeof(defs[0]), def_cmp);
}

const sf_topiccfg_def_t *sf_topiccfg_find_synonym(const char *broker_key, int *idx) {
    size_t i;
    int s;
    for (i = 0; i < NDEFS + NBROKER_DEFS; i++) {
        const sf_topiccfg_def_t *d = i < NDEFS ? &defs[i] : &broker_defs[i - NDEFS];
        for (s = 0; s < SF_TOPICCFG_MAX_SYNONYMS && d->synonyms[s].name; s++)
            if (!strcmp(d->synonyms[s].name, broker_key)) {
                if (idx)
                    *idx = s;
                return d;
            }
    }
    return NULL;
}

int sf_topiccfg_name_reserved(const char *topic) {
    return !strcmp(topic, "__consumer_offsets") || !strcmp(topic, "__transaction_state");
}

/* ---- lists ---- */

/* The next item of a comma-separated list at *@pos (spaces around commas ignored): its start
 * and length. Returns 0 after the last item (a list of "" has one empty item). */
static int list_next(const char **pos, const char **tok, size_t *len) {
    const char *p = *pos, *end;
    if (!p)
        return 0;
    while (*p == ' ')
        p++;
    end = strchr(p, ',');
    *pos = end ? end + 1 : NULL;
    if (!end)
        end = p + strlen(p);
    *tok = p;
    while (end > p && end[-1] == ' ')
        end--;
    *len = (size_t)(end - p);
    return 1;
}

static int list_has(const char *list, const char *tok, size_t len) {
    const char *pos = list, *t;
    size_t n;
    while (list_next(&pos, &t, &n))
        if (n == len && !memcmp(t, tok, len))
            return 1;
    return 0;
}

/* "*" or partition:broker pairs (Kafka's ThrottledReplicaListValidator). */
static int throttled_ok(const char *value) {
    const char *pos = value, *t;
    size_t n;
    if (!strcmp(value, "*") || !*value)
        return 1;
    while (list_next(&pos, &t, &n)) {
        size_t i, colon = 0;
        if (!n)
            return 0;
        for (i = 0; i < n; i++) {
            if (t[i] == ':' && !colon && i > 0)
                colon = i;
            else if (t[i] < '0' || t[i] > '9')
                return 0;
        }
        if (!colon || colon == n - 1)
            return 0;
    }
    return 1;
}

/* ---- validation ---- */

static int parse_i64(const char *value, int64_t *out) {
    const char *p = value[0] == '-' ? value + 1 : value;
    char *end;
    long long x;
    errno = 0;
    x = strtoll(value, &end, 10);
    /* Digits only (strtoll alone would take spaces and a '+'). */
    if (*p < '0' || *p > '9' || *end || errno == ERANGE)
        return -1;
    *out = x;
    return 0;
}

static int fail(char *why, size_t size, const char *fmt, const char *arg) {
    snprintf(why, size, fmt, arg);
    return 0;
}

static int validate_number(const sf_topiccfg_def_t *def, const char *value, char *why,
                           size_t size) {
    int64_t x;
    if (parse_i64(value, &x) < 0)
        return fail(why, size, "not %s", def->type == SF_TOPICCFG_INT ? "a 32-bit integer"
                                                                        : "a 64-bit integer");
    if (def->type == SF_TOPICCFG_INT && (x < INT32_MIN || x > INT32_MAX))
        return fail(why, size, "out of the range of a %s", "32-bit integer");
    if (x < def->min || x > def->max) {
        /* gzip's level is 1..9 or -1 */
        if (!strcmp(def->name, "compression.gzip.level") && x >= 1 && x <= 9)
            return 1;
        if (def->max == LMAX || def->max == IMAX)
            snprintf(why, size, "must be at least %" PRId64, def->min);
        else
            snprintf(why, size, "must be between %" PRId64 " and %" PRId64, def->min, def->max);
        return 0;
    }
    if (!strcmp(def->name, "compression.gzip.level") && x == 0)
        return fail(why, size, "must be -1 or between 1 and %s", "9");
    return 1;
}

int sf_topiccfg_validate(const sf_topiccfg_def_t *def, const char *value, char *why,
                         size_t size) {
    const char *pos, *t;
    size_t n;
    switch (def->type) {
    case SF_TOPICCFG_INT:
    case SF_TOPICCFG_LONG:
        return validate_number(def, value, why, size);
    case SF_TOPICCFG_BOOLEAN:
        if (strcasecmp(value, "true") && strcasecmp(value, "false"))
            return fail(why, size, "must be true or false%s", "");
        if (!strcmp(def->name, "remote.storage.enable") && !strcasecmp(value, "true"))
            return fail(why, size, "tiered storage is not available on this broker%s", "");
        return 1;
    case SF_TOPICCFG_DOUBLE: {
        char *end;
        double d;
        errno = 0;
        d = strtod(value, &end);
        if (!*value || *end || errno == ERANGE || !(d >= 0.0 && d <= 1.0))
            return fail(why, size, "must be a number between 0 and %s", "1");
        return 1;
    }
    case SF_TOPICCFG_STRING:
        if (def->choices && (strchr(value, ',') || !list_has(def->choices, value, strlen(value))))
            return fail(why, size, "must be one of %s", def->choices);
        if (!strcmp(def->name, "message.format.version")) {
            /* 0.8.0 .. 3.9-IV0: digits and dots, then an optional -IV<n> */
            const char *p = value;
            int dots = 0;
            if (*p < '0' || *p > '9')
                return fail(why, size, "not a Kafka version (like %s)", "2.8 or 3.0-IV1");
            for (; *p && *p != '-'; p++)
                if (*p == '.')
                    dots++;
                else if (*p < '0' || *p > '9')
                    return fail(why, size, "not a Kafka version (like %s)", "2.8 or 3.0-IV1");
            if (!dots || p[-1] == '.' || (*p && (strncmp(p, "-IV", 3) || !p[3])))
                return fail(why, size, "not a Kafka version (like %s)", "2.8 or 3.0-IV1");
        }
        return 1;
    case SF_TOPICCFG_LIST:
        if (!def->choices) {
            if (!throttled_ok(value))
                return fail(why, size, "must be * or a list of %s", "partition:broker pairs");
            return 1;
        }
        /* Items must be choices and distinct, so the loop ends within a few items. */
        for (pos = value; list_next(&pos, &t, &n);) {
            if (n == 0 || !list_has(def->choices, t, n))
                return fail(why, size, "must be a list of %s", def->choices);
            if (pos && list_has(pos, t, n)) {
                snprintf(why, size, "%.*s is listed twice", (int)n, t);
                return 0;
            }
        }
        return 1;
    }
    return 1;
}

/* A value of a broker synonym in @scale units, in the topic config's: Kafka keeps -1
 * (unlimited) as it is, and saturates what does not fit. */
static int64_t scale_value(int64_t x, int64_t scale) {
    return x < 0 ? -1 : x > INT64_MAX / scale ? INT64_MAX : x * scale;
}

int sf_topiccfg_validate_synonym(const sf_topiccfg_def_t *def, int idx, const char *value,
                                 char *why, size_t size) {
    int64_t scale, x;
    char scaled[24];
    assert(idx >= 0 && idx < SF_TOPICCFG_MAX_SYNONYMS && def->synonyms[idx].name);
    scale = def->synonyms[idx].scale;
    if (scale != 1) {
        if (parse_i64(value, &x) < 0)
            return fail(why, size, "not %s", "a 64-bit integer");
        snprintf(scaled, sizeof(scaled), "%" PRId64, scale_value(x, scale));
        value = scaled;
    }
    return sf_topiccfg_validate(def, value, why, size);
}

const char *sf_topiccfg_normalize(const sf_topiccfg_def_t *def, const char *value, char *buf,
                                  size_t size) {
    const char *pos, *t;
    size_t n, len = 0;
    if (def->type != SF_TOPICCFG_LIST || !strchr(value, ' ') || strlen(value) >= size)
        return value;
    buf[0] = '\0';
    for (pos = value; list_next(&pos, &t, &n);)
        len += (size_t)snprintf(buf + len, size - len, "%s%.*s", len ? "," : "", (int)n, t);
    return buf;
}

char *sf_topiccfg_list_edit(const char *old, const char *arg, int subtract) {
    size_t cap = strlen(old) + strlen(arg) + 2, len = 0, n;
    char *r = malloc(cap);
    const char *pos, *t;
    if (!r)
        return NULL;
    r[0] = '\0';
    for (pos = old; list_next(&pos, &t, &n);) {
        if (n == 0 || (subtract && list_has(arg, t, n)))
            continue;
        len += (size_t)snprintf(r + len, cap - len, "%s%.*s", len ? "," : "", (int)n, t);
    }
    for (pos = arg; !subtract && list_next(&pos, &t, &n);) {
        if (n == 0 || list_has(r, t, n))
            continue;
        len += (size_t)snprintf(r + len, cap - len, "%s%.*s", len ? "," : "", (int)n, t);
    }
    return r;
}

/* ---- resolution ---- */

static const char *dyn_find(const sf_cluster_config_entry_t *e, int n, const char *name) {
    int i;
    for (i = 0; i < n; i++)
        if (e[i].name && e[i].value && !strcmp(e[i].name, name))
            return e[i].value;
    return NULL;
}

/* Append a candidate; a synonym in another unit is converted into v->num. */
static void add_value(sf_topiccfg_value_t *v, const char *name, const char *value,
                      sf_cfgsrc_t source, int64_t scale) {
    int64_t x;
    v->name = name;
    v->value = value;
    v->source = source;
    if (scale != 1 && parse_i64(value, &x) == 0) {
        snprintf(v->num, sizeof(v->num), "%" PRId64, scale_value(x, scale));
        v->value = v->num;
    }
}

int sf_topiccfg_resolve(const sf_topiccfg_ctx_t *ctx, const sf_cluster_topic_t *t,
                        const sf_topiccfg_def_t *def, sf_topiccfg_value_t *out, int max) {
    int n = 0, s, pass;
    const char *v;
    if (max <= 0)
        return 0;
    if (t && (v = sf_cluster_topic_config(t, def->name)))
        add_value(&out[n++], def->name, v, SF_CFGSRC_TOPIC, 1);
    /* Dynamic broker configs, this broker's before the cluster default, then the file. */
    for (pass = 0; pass < 3; pass++) {
        for (s = 0; s < SF_TOPICCFG_MAX_SYNONYMS && def->synonyms[s].name && n < max; s++) {
            const sf_topiccfg_synonym_def_t *syn = &def->synonyms[s];
            sf_cfgsrc_t src = pass == 0 ? SF_CFGSRC_DYNAMIC_BROKER
                              : pass == 1 ? SF_CFGSRC_DYNAMIC_DEFAULT_BROKER
                                          : SF_CFGSRC_STATIC_BROKER;
            v = pass == 0   ? dyn_find(ctx->broker_dyn, ctx->nbroker_dyn, syn->name)
                : pass == 1 ? dyn_find(ctx->default_dyn, ctx->ndefault_dyn, syn->name)
                            : (ctx->cfg ? sf_brokercfg_file_value(ctx->cfg, syn->name) : NULL);
            if (v)
                add_value(&out[n++], syn->name, v, src, syn->scale);
        }
    }
    if (n < max)
        add_value(&out[n++], def->synonyms[0].name ? def->synonyms[0].name : def->name, def->dflt,
                  SF_CFGSRC_DEFAULT, 1);
    return n;
}

const char *sf_topiccfg_get(const sf_topiccfg_ctx_t *ctx, const sf_cluster_topic_t *t,
                            const char *name, char *buf, size_t size) {
    const sf_topiccfg_def_t *def = sf_topiccfg_find(name);
    sf_topiccfg_value_t v;
    if (!def)
        return NULL;
    sf_topiccfg_resolve(ctx, t, def, &v, 1);
    snprintf(buf, size, "%s", v.value);
    return buf;
}

static int64_t get_i64(const sf_topiccfg_ctx_t *ctx, const sf_cluster_topic_t *t,
                       const char *name) {
    char buf[64];
    int64_t x = 0;
    if (parse_i64(sf_topiccfg_get(ctx, t, name, buf, sizeof(buf)), &x) < 0)
        parse_i64(sf_topiccfg_find(name)->dflt, &x); /* stored by another tool, unvalidated */
    return x;
}

void sf_topiccfg_log_config(const sf_topiccfg_ctx_t *ctx, const sf_cluster_topic_t *t,
                            sf_log_config_t *out) {
    sf_compress_codec_t codec = SF_COMPRESS_NONE;
    int64_t diff;
    char buf[256];
    sf_log_config_default(out);
    out->segment_bytes = get_i64(ctx, t, "segment.bytes");
    out->roll_ms = get_i64(ctx, t, "segment.ms");
    out->retention_ms = get_i64(ctx, t, "retention.ms");
    out->retention_bytes = get_i64(ctx, t, "retention.bytes");
    out->index_interval_bytes = (int32_t)get_i64(ctx, t, "index.interval.bytes");
    out->flush_messages = get_i64(ctx, t, "flush.messages");
    out->flush_ms = get_i64(ctx, t, "flush.ms");
    out->max_message_bytes = (int32_t)get_i64(ctx, t, "max.message.bytes");
    out->index_max_bytes = get_i64(ctx, t, "segment.index.bytes");
    if (out->retention_ms < 0)
        out->retention_ms = -1;
    out->timestamp_before_max_ms = get_i64(ctx, t, "message.timestamp.before.max.ms");
    out->timestamp_after_max_ms = get_i64(ctx, t, "message.timestamp.after.max.ms");
    /* The deprecated difference bounds both sides when it is tighter (as Kafka 3.6+ does). */
    diff = get_i64(ctx, t, "message.timestamp.difference.max.ms");
    if (diff < out->timestamp_before_max_ms)
        out->timestamp_before_max_ms = diff;
    if (diff < out->timestamp_after_max_ms)
        out->timestamp_after_max_ms = diff;
    out->min_insync_replicas = (int32_t)get_i64(ctx, t, "min.insync.replicas");
    out->log_append_time =
        !strcmp(sf_topiccfg_get(ctx, t, "message.timestamp.type", buf, sizeof(buf)),
                "LogAppendTime");
    out->compacted = strstr(sf_topiccfg_get(ctx, t, "cleanup.policy", buf, sizeof(buf)),
                            "compact") != NULL;
    sf_topiccfg_get(ctx, t, "compression.type", buf, sizeof(buf));
    out->compression = !strcmp(buf, "producer")       ? -1
                       : !strcmp(buf, "uncompressed") ? SF_COMPRESS_NONE
                       : sf_compress_codec_parse(buf, &codec) == SF_OK ? (int)codec
                                                                        : -1;
    out->compression_level = -1;
    if (out->compression > SF_COMPRESS_SNAPPY || out->compression == SF_COMPRESS_GZIP) {
        /* A level only when one was set: the codec's own default is the fast one. */
        char name[40];
        sf_topiccfg_value_t v;
        int64_t level;
        snprintf(name, sizeof(name), "compression.%s.level", sf_compress_codec_name(codec));
        sf_topiccfg_resolve(ctx, t, sf_topiccfg_find(name), &v, 1);
        if (v.source != SF_CFGSRC_DEFAULT && parse_i64(v.value, &level) == 0)
            out->compression_level = codec == SF_COMPRESS_LZ4 && level > 12 ? 12 : (int32_t)level;
    }
}
