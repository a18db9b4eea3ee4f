/* Topic configuration: every topic config Apache Kafka 3.9 knows (names, types, defaults,
 * validation, the broker settings that give their defaults), how an effective value is found
 * (topic override, dynamic broker config, static broker config, Kafka's default: Kafka's
 * ConfigSource order) and the log settings that follow from them.
 *
 * Names Kafka does not know are refused; names it knows are accepted and stored even where
 * StreamFlow does not act on them yet (they are shown by DescribeConfigs like the others). */
#ifndef SF_TOPICCFG_H
#define SF_TOPICCFG_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "log.h"

struct sf_brokercfg;

/* Value types, numbered as DescribeConfigs v3+ ConfigType. */
typedef enum sf_topiccfg_type {
    SF_TOPICCFG_BOOLEAN = 1,
    SF_TOPICCFG_STRING = 2,
    SF_TOPICCFG_INT = 3,
    SF_TOPICCFG_LONG = 5,
    SF_TOPICCFG_DOUBLE = 6,
    SF_TOPICCFG_LIST = 7,
} sf_topiccfg_type_t;

/* Where a value comes from, numbered as DescribeConfigs ConfigSource. */
typedef enum sf_cfgsrc {
    SF_CFGSRC_TOPIC = 1,
    SF_CFGSRC_DYNAMIC_BROKER = 2,
    SF_CFGSRC_DYNAMIC_DEFAULT_BROKER = 3,
    SF_CFGSRC_STATIC_BROKER = 4,
    SF_CFGSRC_DEFAULT = 5,
} sf_cfgsrc_t;

/* A broker setting that gives a topic config its default, and the factor from its unit to the
 * topic config's (log.retention.hours: 3600000). */
typedef struct sf_topiccfg_synonym_def {
    const char *name;
    int64_t scale;
} sf_topiccfg_synonym_def_t;

#define SF_TOPICCFG_MAX_SYNONYMS 3

typedef struct sf_topiccfg_def {
    const char *name; /* "retention.ms" */
    sf_topiccfg_type_t type;
    const char *dflt;              /* Kafka's default, as text */
    int64_t min, max;              /* INT and LONG bounds */
    const char *choices;           /* enumerations and lists: comma-separated; else NULL */
    sf_topiccfg_synonym_def_t synonyms[SF_TOPICCFG_MAX_SYNONYMS]; /* in precedence order */
    const char *doc;
} sf_topiccfg_def_t;

/* Every topic config, sorted by name (static); @n receives the count. */
const sf_topiccfg_def_t *sf_topiccfg_all(size_t *n);
/* The definition of @name, or NULL when Kafka has no such topic config. */
const sf_topiccfg_def_t *sf_topiccfg_find(const char *name);
/* The dynamic broker configs that are no topic config's synonym (the replication quotas),
 * sorted by name (static); @n receives the count. Each is its own synonym (synonyms[0]). */
const sf_topiccfg_def_t *sf_topiccfg_broker_only(size_t *n);
/* The topic config (or broker-only config) whose broker synonym is @broker_key
 * ("log.retention.hours"), with the index of that synonym in *@idx; NULL if none. */
const sf_topiccfg_def_t *sf_topiccfg_find_synonym(const char *broker_key, int *idx);

/* 1 if @value is acceptable for @def; else 0 with one sentence in @why ("must be at least
 * 14"). */
int sf_topiccfg_validate(const sf_topiccfg_def_t *def, const char *value, char *why, size_t size);

/* 1 if @value is acceptable for the broker setting def->synonyms[@idx] (log.retention.hours):
 * an integer when that synonym has another unit, converted to the topic config's unit as the
 * broker does (negative: -1; saturated), then validated as @def's value; else 0 with one
 * sentence in @why. */
int sf_topiccfg_validate_synonym(const sf_topiccfg_def_t *def, int idx, const char *value,
                                 char *why, size_t size);

/* The canonical stored form of a valid @value (lists without spaces around commas) in the
 * caller's @buf; returns @buf, or @value itself when it needs no change. */
const char *sf_topiccfg_normalize(const sf_topiccfg_def_t *def, const char *value, char *buf,
                                  size_t size);

/* APPEND (@subtract 0) or SUBTRACT the items of the list @arg to/from the list @old, as
 * IncrementalAlterConfigs does: malloc'd (NULL on no memory). Costs |old| x |arg|. */
char *sf_topiccfg_list_edit(const char *old, const char *arg, int subtract);

/* 1 for names Kafka reserves for its internal topics (__consumer_offsets and
 * __transaction_state): never created as ordinary topics. */
int sf_topiccfg_name_reserved(const char *topic);

/* What the defaults of a broker are made of: the static configuration, and the dynamic broker
 * configs of this broker and of the cluster default (ZooKeeper /config/brokers/<id> and
 * /config/brokers/<default>; NULL/0 when none). All borrowed. */
typedef struct sf_topiccfg_ctx {
    const struct sf_brokercfg *cfg;
    const sf_cluster_config_entry_t *broker_dyn;
    int nbroker_dyn;
    const sf_cluster_config_entry_t *default_dyn;
    int ndefault_dyn;
} sf_topiccfg_ctx_t;

/* One candidate value of a config, as DescribeConfigs lists synonyms. */
typedef struct sf_topiccfg_value {
    const char *name;  /* the topic config or a broker synonym (static) */
    const char *value; /* borrowed from the topic, the configuration or @num */
    sf_cfgsrc_t source;
    char num[24];      /* a broker synonym converted to the topic's unit */
} sf_topiccfg_value_t;

/* The candidates for config @def of topic @t (NULL: the broker default) from most to least
 * important: the topic override, then each set broker synonym (dynamic, then static), then
 * Kafka's default. The first is the effective value. Fills at most @max entries of @out and
 * returns how many (>= 1 when max >= 1). */
int sf_topiccfg_resolve(const sf_topiccfg_ctx_t *ctx, const sf_cluster_topic_t *t,
                        const sf_topiccfg_def_t *def, sf_topiccfg_value_t *out, int max);

/* The effective value of @name for @t (NULL: broker default) into @buf. Returns @buf, or NULL
 * for an unknown name. */
const char *sf_topiccfg_get(const sf_topiccfg_ctx_t *ctx, const sf_cluster_topic_t *t,
                            const char *name, char *buf, size_t size);

/* The log settings of topic @t (NULL: the broker defaults). */
void sf_topiccfg_log_config(const sf_topiccfg_ctx_t *ctx, const sf_cluster_topic_t *t,
                            sf_log_config_t *out);

#endif
