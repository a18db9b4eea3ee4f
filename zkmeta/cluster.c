/* Cluster metadata in ZooKeeper (see cluster.h).
 *
 * The file has three parts: pure functions (JSON codecs for every znode, uuids, Kafka's replica
 * placement), the immutable snapshot, and the running module (registration, controller
 * election, the watched metadata model, admin writes). */
#include "cluster.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <event2/event.h>
#include <jansson.h>

#include "clock.h"
#include "err.h"
#include "logging.h"
#include "zk.h"

/* ===================================================================================== */
/* Pure functions                                                                        */
/* ===================================================================================== */

int sf_cluster_topic_name_valid(const char *name) {
    size_t i, n;
    if (!name)
        return 0;
    n = strlen(name);
    if (n < 1 || n > SF_CLUSTER_MAX_TOPIC_NAME || !strcmp(name, ".") || !strcmp(name, ".."))
        return 0;
    for (i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void sf_cluster_uuid_to_str(const uint8_t uuid[16], char out[23]) {
    int i, o = 0;
    uint32_t v;
    for (i = 0; i + 3 <= 15; i += 3) {
        v = (uint32_t)uuid[i] << 16 | (uint32_t)uuid[i + 1] << 8 | uuid[i + 2];
        out[o++] = b64url[(v >> 18) & 63];
        out[o++] = b64url[(v >> 12) & 63];
        out[o++] = b64url[(v >> 6) & 63];
        out[o++] = b64url[v & 63];
    }
    /* 15 bytes done: one byte left -> two characters, no padding */
    v = (uint32_t)uuid[15] << 16;
    out[o++] = b64url[(v >> 18) & 63];
    out[o++] = b64url[(v >> 12) & 63];
    out[o] = '\0';
}

static int b64url_val(char c) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

int sf_cluster_uuid_from_str(const char *s, uint8_t uuid[16]) {
    int i, o = 0, vals[22];
    if (!s || strlen(s) != 22)
        return SF_ERR_MALFORMED;
    for (i = 0; i < 22; i++) {
        vals[i] = b64url_val(s[i]);
        if (vals[i] < 0)
            return SF_ERR_MALFORMED;
    }
    for (i = 0; i < 20; i += 4) {
        uint32_t v = (uint32_t)vals[i] << 18 | (uint32_t)vals[i + 1] << 12 |
                     (uint32_t)vals[i + 2] << 6 | (uint32_t)vals[i + 3];
        uuid[o++] = (uint8_t)(v >> 16);
        uuid[o++] = (uint8_t)(v >> 8);
        uuid[o++] = (uint8_t)v;
    }
    uuid[15] = (uint8_t)(vals[20] << 2 | vals[21] >> 4);
    return SF_OK;
}

static int random_bytes(void *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom((uint8_t *)p + got, n - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return SF_ERR_IO;
        }
        got += (size_t)r;
    }
    return SF_OK;
}

int sf_cluster_uuid_random(uint8_t uuid[16]) {
    static const uint8_t zero[16];
    char s[23];
    for (;;) {
        if (random_bytes(uuid, 16) != SF_OK)
            return SF_ERR_IO;
        uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40); /* version 4 */
        uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80); /* IETF variant */
        sf_cluster_uuid_to_str(uuid, s);
        /* Kafka rejects the zero uuid and ids whose text starts with '-' (they look like
         * command-line options). */
        if (memcmp(uuid, zero, 16) && s[0] != '-')
            return SF_OK;
    }
}

static uint32_t random_u32(void) {
    uint32_t v = 0;
    if (random_bytes(&v, sizeof(v)) != SF_OK)
        v = (uint32_t)sf_clock_wall_ms();
    return v;
}

int sf_cluster_assign_replicas(const int32_t *brokers, int nbrokers, int32_t npartitions,
                               int rf, int32_t start_partition, int start_index, int32_t *out) {
    int start, shift;
    int32_t i, part;
    if (!brokers || !out || nbrokers < 1 || npartitions < 1 || rf < 1 || rf > nbrokers ||
        start_partition < 0 || start_index >= nbrokers)
        return SF_ERR_INVALID;
    /* Kafka: startIndex and nextReplicaShift are both random unless fixed. */
    start = start_index >= 0 ? start_index : (int)(random_u32() % (uint32_t)nbrokers);
    shift = start_index >= 0 ? start_index : (int)(random_u32() % (uint32_t)nbrokers);
    part = start_partition;
    for (i = 0; i < npartitions; i++, part++) {
        int first, j;
        if (part > 0 && part % nbrokers == 0)
            shift++;
        first = (int)((part + start) % nbrokers);
        out[(size_t)i * (size_t)rf] = brokers[first];
        for (j = 0; j < rf - 1; j++) {
            int s = 1 + (shift + j) % (nbrokers - 1);
            out[(size_t)i * (size_t)rf + (size_t)j + 1] = brokers[(first + s) % nbrokers];
        }
    }
    return SF_OK;
}

/* ---- JSON utilities ---- */

static char *dump(json_t *o) {
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static json_t *load(const char *json, size_t len) {
    json_error_t jerr;
    json_t *o;
    if (!json)
        return NULL;
    o = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (o && !json_is_object(o)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A required integer field within [lo, hi]. */
static int get_int(json_t *o, const char *key, json_int_t lo, json_int_t hi, json_int_t *out) {
    json_t *v = json_object_get(o, key);
    json_int_t x;
    if (!v || !json_is_integer(v))
        return SF_ERR_MALFORMED;
    x = json_integer_value(v);
    if (x < lo || x > hi)
        return SF_ERR_MALFORMED;
    *out = x;
    return SF_OK;
}

static int check_version(json_t *o) {
    json_int_t v;
    return get_int(o, "version", 1, INT32_MAX, &v);
}

/* An array of int32 in [lo, INT32_MAX] with at most @max elements. */
static int get_int_array(json_t *a, int max, int32_t lo, int32_t **out, int *n) {
    size_t i, cnt;
    int32_t *v;
    *out = NULL;
    *n = 0;
    if (!a || !json_is_array(a))
        return SF_ERR_MALFORMED;
    cnt = json_array_size(a);
    if (cnt > (size_t)max)
        return SF_ERR_MALFORMED;
    if (!cnt)
        return SF_OK;
    v = malloc(cnt * sizeof(*v));
    if (!v)
        return SF_ERR_NOMEM;
    for (i = 0; i < cnt; i++) {
        json_t *e = json_array_get(a, i);
        json_int_t x;
        if (!json_is_integer(e) || (x = json_integer_value(e)) < lo || x > INT32_MAX) {
            free(v);
            return SF_ERR_MALFORMED;
        }
        v[i] = (int32_t)x;
    }
    *out = v;
    *n = (int)cnt;
    return SF_OK;
}

static json_t *int_array(const int32_t *v, int n) {
    json_t *a = json_array();
    int i;
    for (i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_integer(v[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *ts_string(int64_t ms) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)ms);
    return json_string(buf);
}

/* ---- element cleanup ---- */

void sf_cluster_broker_clear(sf_cluster_broker_t *b) {
    int i;
    if (!b)
        return;
    free(b->host);
    for (i = 0; i < b->nendpoints; i++)
        free(b->endpoints[i]);
    free(b->endpoints);
    free(b->rack);
    memset(b, 0, sizeof(*b));
    b->port = -1;
}

void sf_cluster_partition_clear(sf_cluster_partition_t *p) {
    if (!p)
        return;
    free(p->replicas);
    free(p->isr);
    p->replicas = p->isr = NULL;
    p->nreplicas = p->nisr = 0;
}

void sf_cluster_configs_free(sf_cluster_config_entry_t *configs, int n) {
    int i;
    if (!configs)
        return;
    for (i = 0; i < n; i++) {
        free(configs[i].name);
        free(configs[i].value);
    }
    free(configs);
}

void sf_cluster_topic_clear(sf_cluster_topic_t *t) {
    int i;
    if (!t)
        return;
    free(t->name);
    for (i = 0; t->partitions && i < t->npartitions; i++)
        sf_cluster_partition_clear(&t->partitions[i]);
    free(t->partitions);
    sf_cluster_configs_free(t->configs, t->nconfigs);
    memset(t, 0, sizeof(*t));
}

/* ---- /brokers/ids/<id> ---- */

char *sf_cluster_broker_encode(const sf_cluster_broker_t *b, int64_t timestamp_ms) {
    json_t *o = json_object(), *eps = json_array();
    int i, bad = !o || !eps;
    for (i = 0; !bad && i < b->nendpoints; i++)
        bad |= json_array_append_new(eps, json_string(b->endpoints[i])) != 0;
    if (!bad) {
        bad |= json_object_set_new(o, "version", json_integer(1));
        bad |= json_object_set_new(o, "host", b->host ? json_string(b->host) : json_null());
        bad |= json_object_set_new(o, "port", json_integer(b->host ? b->port : -1));
        bad |= json_object_set(o, "endpoints", eps);
        bad |= json_object_set_new(o, "rack", b->rack ? json_string(b->rack) : json_null());
        bad |= json_object_set_new(o, "timestamp", ts_string(timestamp_ms));
    }
    json_decref(eps);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

int sf_cluster_broker_decode(const char *json, size_t len, sf_cluster_broker_t *out) {
    json_t *o = load(json, len), *host, *eps, *rack;
    json_int_t port;
    size_t i, n;
    int rc = SF_ERR_MALFORMED;

    memset(out, 0, sizeof(*out));
    out->id = -1;
    out->port = -1;
    out->epoch = -1;
    if (!o)
        return SF_ERR_MALFORMED;
    if (check_version(o) || get_int(o, "port", -1, 65535, &port))
        goto err;
    host = json_object_get(o, "host");
    if (!host || !(json_is_string(host) || json_is_null(host)))
        goto err;
    rack = json_object_get(o, "rack");
    if (rack && !(json_is_string(rack) || json_is_null(rack)))
        goto err;
    eps = json_object_get(o, "endpoints");
    if (!eps || !json_is_array(eps) || (n = json_array_size(eps)) > SF_CLUSTER_MAX_ENDPOINTS)
        goto err;
    for (i = 0; i < n; i++)
        if (!json_is_string(json_array_get(eps, i)))
            goto err;
    rc = SF_ERR_NOMEM;
    if (json_is_string(host) && !(out->host = strdup(json_string_value(host))))
        goto err;
    out->port = out->host ? (int32_t)port : -1;
    if (rack && json_is_string(rack) && !(out->rack = strdup(json_string_value(rack))))
        goto err;
    if (n) {
        out->endpoints = calloc(n, sizeof(char *));
        if (!out->endpoints)
            goto err;
        for (i = 0; i < n; i++) {
            out->endpoints[i] = strdup(json_string_value(json_array_get(eps, i)));
            if (!out->endpoints[i])
                goto err;
            out->nendpoints = (int)i + 1;
        }
    }
    json_decref(o);
    return SF_OK;
err:
    json_decref(o);
    sf_cluster_broker_clear(out);
    out->id = -1;
    out->epoch = -1;
    return rc;
}

/* ---- /brokers/topics/<t> ---- */

char *sf_cluster_topic_encode(const uint8_t topic_id[16], const sf_cluster_partition_t *parts,
                              int nparts) {
    json_t *o = json_object(), *map = json_object();
    char id[23], key[16];
    int i, bad = !o || !map;
    for (i = 0; !bad && i < nparts; i++) {
        snprintf(key, sizeof(key), "%d", (int)parts[i].partition);
        bad |= json_object_set_new(map, key, int_array(parts[i].replicas, parts[i].nreplicas));
    }
    if (!bad) {
        sf_cluster_uuid_to_str(topic_id, id);
        bad |= json_object_set_new(o, "version", json_integer(1));
        bad |= json_object_set_new(o, "topic_id", json_string(id));
        bad |= json_object_set(o, "partitions", map);
    }
    json_decref(map);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

/* A partition key or a broker id znode name: decimal in [0, INT32_MAX], no sign, no leading
 * zeros. */
static int parse_id(const char *k, int32_t *out) {
    char *end;
    long v;
    if (!k[0] || k[0] < '0' || k[0] > '9' || (k[0] == '0' && k[1]) || strlen(k) > 10)
        return SF_ERR_MALFORMED;
    errno = 0;
    v = strtol(k, &end, 10);
    if (errno || *end || v > INT32_MAX)
        return SF_ERR_MALFORMED;
    *out = (int32_t)v;
    return SF_OK;
}

int sf_cluster_topic_decode(const char *json, size_t len, sf_cluster_topic_t *out) {
    json_t *o = load(json, len), *map, *id, *val;
    const char *key;
    size_t n;
    int rc = SF_ERR_MALFORMED;

    memset(out, 0, sizeof(*out));
    if (!o)
        return SF_ERR_MALFORMED;
    if (check_version(o))
        goto err;
    id = json_object_get(o, "topic_id");
    if (id && !json_is_null(id)) {
        if (!json_is_string(id) || sf_cluster_uuid_from_str(json_string_value(id), out->topic_id))
            goto err;
    }
    map = json_object_get(o, "partitions");
    if (!map || !json_is_object(map) || (n = json_object_size(map)) > SF_CLUSTER_MAX_PARTITIONS)
        goto err;
    if (n) {
        out->partitions = calloc(n, sizeof(*out->partitions));
        if (!out->partitions) {
            rc = SF_ERR_NOMEM;
            goto err;
        }
        out->npartitions = (int)n;
        for (size_t i = 0; i < n; i++) {
            out->partitions[i].partition = -1;
            out->partitions[i].leader = -1;
            out->partitions[i].leader_epoch = -1;
            out->partitions[i].controller_epoch = -1;
        }
    }
    json_object_foreach(map, key, val) {
        int32_t p;
        sf_cluster_partition_t *part;
        int r;
        if (parse_id(key, &p) || (size_t)p >= n)
            goto err;
        part = &out->partitions[p];
        if (part->partition != -1) /* cannot happen with distinct keys; be safe */
            goto err;
        part->partition = p;
        r = get_int_array(val, SF_CLUSTER_MAX_REPLICAS, 0, &part->replicas, &part->nreplicas);
        if (r) {
            rc = r;
            goto err;
        }
        if (part->nreplicas < 1)
            goto err;
    }
    json_decref(o);
    return SF_OK;
err:
    json_decref(o);
    sf_cluster_topic_clear(out);
    return rc;
}

/* ---- /brokers/topics/<t>/partitions/<p>/state ---- */

char *sf_cluster_pstate_encode(const sf_cluster_partition_t *p) {
    json_t *o = json_object();
    int bad = !o;
    if (!bad) {
        bad |= json_object_set_new(o, "version", json_integer(1));
        bad |= json_object_set_new(o, "leader", json_integer(p->leader));
        bad |= json_object_set_new(o, "leader_epoch", json_integer(p->leader_epoch));
        bad |= json_object_set_new(o, "isr", int_array(p->isr, p->nisr));
        bad |= json_object_set_new(o, "controller_epoch", json_integer(p->controller_epoch));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

int sf_cluster_pstate_decode(const char *json, size_t len, sf_cluster_partition_t *p) {
    json_t *o = load(json, len);
    json_int_t leader, le, ce;
    int32_t *isr;
    int nisr, rc;
    if (!o)
        return SF_ERR_MALFORMED;
    if (check_version(o) || get_int(o, "leader", -1, INT32_MAX, &leader) ||
        get_int(o, "leader_epoch", 0, INT32_MAX, &le) ||
        get_int(o, "controller_epoch", 0, INT32_MAX, &ce)) {
        json_decref(o);
        return SF_ERR_MALFORMED;
    }
    rc = get_int_array(json_object_get(o, "isr"), SF_CLUSTER_MAX_REPLICAS, 0, &isr, &nisr);
    json_decref(o);
    if (rc)
        return rc;
    free(p->isr);
    p->isr = isr;
    p->nisr = nisr;
    p->leader = (int32_t)leader;
    p->leader_epoch = (int32_t)le;
    p->controller_epoch = (int32_t)ce;
    return SF_OK;
}

/* ---- /config/topics/<t> ---- */

char *sf_cluster_config_encode(const sf_cluster_config_entry_t *configs, int n) {
    json_t *o = json_object(), *c = json_object();
    int i, bad = !o || !c;
    for (i = 0; !bad && i < n; i++) {
        if (!configs[i].name || !configs[i].value)
            continue; /* a null value means "the default": not stored */
        bad |= json_object_set_new(c, configs[i].name, json_string(configs[i].value));
    }
    if (!bad) {
        bad |= json_object_set_new(o, "version", json_integer(1));
        bad |= json_object_set(o, "config", c);
    }
    json_decref(c);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

static int config_cmp(const void *a, const void *b) {
    return strcmp(((const sf_cluster_config_entry_t *)a)->name,
                  ((const sf_cluster_config_entry_t *)b)->name);
}

int sf_cluster_config_decode(const char *json, size_t len, sf_cluster_config_entry_t **out,
                             int *n) {
    json_t *o = load(json, len), *c, *val;
    const char *key;
    sf_cluster_config_entry_t *v = NULL;
    size_t cnt, i = 0;
    *out = NULL;
    *n = 0;
    if (!o)
        return SF_ERR_MALFORMED;
    c = json_object_get(o, "config");
    if (check_version(o) || !c || !json_is_object(c) ||
        (cnt = json_object_size(c)) > SF_CLUSTER_MAX_CONFIGS) {
        json_decref(o);
        return SF_ERR_MALFORMED;
    }
    json_object_foreach(c, key, val) {
        if (!json_is_string(val)) {
            json_decref(o);
            return SF_ERR_MALFORMED;
        }
    }
    if (cnt) {
        v = calloc(cnt, sizeof(*v));
        if (!v) {
            json_decref(o);
            return SF_ERR_NOMEM;
        }
        json_object_foreach(c, key, val) {
            v[i].name = strdup(key);
            v[i].value = strdup(json_string_value(val));
            i++;
            if (!v[i - 1].name || !v[i - 1].value) {
                sf_cluster_configs_free(v, (int)i);
                json_decref(o);
                return SF_ERR_NOMEM;
            }
        }
        qsort(v, cnt, sizeof(*v), config_cmp);
    }
    json_decref(o);
    *out = v;
    *n = (int)cnt;
    return SF_OK;
}

/* ---- /controller, /controller_epoch, /cluster/id ---- */

char *sf_cluster_controller_encode(int32_t broker_id, int64_t timestamp_ms) {
    json_t *o = json_object();
    int bad = !o;
    if (!bad) {
        bad |= json_object_set_new(o, "version", json_integer(1));
        bad |= json_object_set_new(o, "brokerid", json_integer(broker_id));
        bad |= json_object_set_new(o, "timestamp", ts_string(timestamp_ms));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

int sf_cluster_controller_decode(const char *json, size_t len, int32_t *broker_id) {
    json_t *o = load(json, len);
    json_int_t id;
    int rc;
    if (!o)
        return SF_ERR_MALFORMED;
    rc = check_version(o) || get_int(o, "brokerid", 0, INT32_MAX, &id) ? SF_ERR_MALFORMED : SF_OK;
    json_decref(o);
    if (rc == SF_OK)
        *broker_id = (int32_t)id;
    return rc;
}

int sf_cluster_epoch_decode(const char *data, size_t len, int32_t *epoch) {
    int64_t v = 0;
    size_t i;
    if (!data || len < 1 || len > 10)
        return SF_ERR_MALFORMED;
    for (i = 0; i < len; i++) {
        if (data[i] < '0' || data[i] > '9')
            return SF_ERR_MALFORMED;
        v = v * 10 + (data[i] - '0');
    }
    if (v > INT32_MAX)
        return SF_ERR_MALFORMED;
    *epoch = (int32_t)v;
    return SF_OK;
}

char *sf_cluster_id_encode(const char *id) {
    json_t *o = json_object();
    int bad = !o || !id;
    if (!bad) {
        bad |= json_object_set_new(o, "version", json_integer(1));
        bad |= json_object_set_new(o, "id", json_string(id));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

int sf_cluster_id_decode(const char *json, size_t len, char **id) {
    json_t *o = load(json, len), *v;
    *id = NULL;
    if (!o)
        return SF_ERR_MALFORMED;
    v = json_object_get(o, "id");
    if (check_version(o) || !v || !json_is_string(v) || !json_string_length(v) ||
        json_string_length(v) > 64) {
        json_decref(o);
        return SF_ERR_MALFORMED;
    }
    *id = strdup(json_string_value(v));
    json_decref(o);
    return *id ? SF_OK : SF_ERR_NOMEM;
}

/* ===================================================================================== */
/* Snapshot                                                                              */
/* ===================================================================================== */

sf_cluster_snapshot_t *sf_cluster_snapshot_ref(sf_cluster_snapshot_t *snap) {
    if (snap)
        atomic_fetch_add_explicit(&snap->refcnt, 1, memory_order_relaxed);
    return snap;
}

static void snapshot_destroy(sf_cluster_snapshot_t *snap) {
    int i;
    free(snap->cluster_id);
    for (i = 0; snap->brokers && i < snap->nbrokers; i++)
        sf_cluster_broker_clear(&snap->brokers[i]);
    free(snap->brokers);
    for (i = 0; snap->topics && i < snap->ntopics; i++)
        sf_cluster_topic_clear(&snap->topics[i]);
    free(snap->topics);
    free(snap);
}

void sf_cluster_snapshot_unref(sf_cluster_snapshot_t *snap) {
    if (snap && atomic_fetch_sub_explicit(&snap->refcnt, 1, memory_order_acq_rel) == 1)
        snapshot_destroy(snap);
}

static int broker_cmp(const void *a, const void *b) {
    int32_t x = ((const sf_cluster_broker_t *)a)->id, y = ((const sf_cluster_broker_t *)b)->id;
    return x < y ? -1 : x > y;
}

static int topic_cmp(const void *a, const void *b) {
    return strcmp(((const sf_cluster_topic_t *)a)->name, ((const sf_cluster_topic_t *)b)->name);
}

sf_cluster_snapshot_t *sf_cluster_snapshot_build(char *cluster_id, int32_t controller_id,
                                                 int32_t controller_epoch,
                                                 sf_cluster_broker_t *brokers, int nbrokers,
                                                 sf_cluster_topic_t *topics, int ntopics) {
    sf_cluster_snapshot_t *snap = calloc(1, sizeof(*snap));
    int i;
    if (!snap) {
        free(cluster_id);
        for (i = 0; brokers && i < nbrokers; i++)
            sf_cluster_broker_clear(&brokers[i]);
        free(brokers);
        for (i = 0; topics && i < ntopics; i++)
            sf_cluster_topic_clear(&topics[i]);
        free(topics);
        return NULL;
    }
    atomic_init(&snap->refcnt, 1);
    snap->cluster_id = cluster_id;
    snap->controller_id = controller_id;
    snap->controller_epoch = controller_epoch;
    snap->brokers = brokers;
    snap->nbrokers = nbrokers;
    snap->topics = topics;
    snap->ntopics = ntopics;
    if (nbrokers > 1)
        qsort(brokers, (size_t)nbrokers, sizeof(*brokers), broker_cmp);
    if (ntopics > 1)
        qsort(topics, (size_t)ntopics, sizeof(*topics), topic_cmp);
    return snap;
}

const sf_cluster_topic_t *sf_cluster_snapshot_topic(const sf_cluster_snapshot_t *snap,
                                                    const char *name) {
    int lo = 0, hi;
    if (!snap || !name)
        return NULL;
    hi = snap->ntopics - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(snap->topics[mid].name, name);
        if (!c)
            return &snap->topics[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

const sf_cluster_broker_t *sf_cluster_snapshot_broker(const sf_cluster_snapshot_t *snap,
                                                      int32_t id) {
    int lo = 0, hi;
    if (!snap)
        return NULL;
    hi = snap->nbrokers - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int32_t x = snap->brokers[mid].id;
        if (x == id)
            return &snap->brokers[mid];
        if (x < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

const char *sf_cluster_topic_config(const sf_cluster_topic_t *topic, const char *name) {
    int lo = 0, hi;
    if (!topic || !name)
        return NULL;
    hi = topic->nconfigs - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(topic->configs[mid].name, name);
        if (!c)
            return topic->configs[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* ===================================================================================== */
/* The running module                                                                    */
/* ===================================================================================== */

#define CL_RETRY_MS 1000          /* setup retry while connected */
#define CL_REBUILD_DELAY_MS 10    /* coalescing window for snapshot rebuilds */
#define CL_REBUILD_MAX_WAIT_MS 500 /* rebuild even with reads in flight after this long */
#define CL_REG_GRACE_MS 2000      /* added to the session timeout when waiting for an old node */
#define CL_ADMIN_RETRIES 5

/* What a watch or a read is about. */
enum { K_IDS = 1, K_TOPICS, K_BROKER, K_TOPIC, K_PSTATE, K_CONFIG, K_CONTROLLER, K_CEPOCH, K_REG };

/* The argument of a model watch or read: the entity is looked up again by (kind, id, topic)
 * and must still carry @inc (its incarnation for reads, its current watch id for watches). */
struct cl_key {
    sf_cluster_t *cl;
    int kind;
    uint64_t inc;
    int32_t id;
    char topic[];
};

/* A watched znode of the model. */
struct cl_node {
    uint64_t inc;      /* identity of the entity */
    uint64_t watch_id; /* identity of its current watch */
    int armed;
};

struct cl_broker {
    struct cl_node node;
    int have;
    sf_cluster_broker_t b;
};

struct cl_part {
    struct cl_node node;
    int have;
    sf_cluster_partition_t p;
};

struct cl_topic {
    struct cl_topic *hnext;
    char *name;
    struct cl_node node, cfg;
    int have, seen;
    uint8_t topic_id[16];
    struct cl_part *parts;
    int nparts;
    sf_cluster_config_entry_t *configs;
    int nconfigs;
};

enum { N_DONE = 1, N_READY, N_CONTROLLER };
struct cl_notify {
    struct cl_notify *next;
    int kind;
    sf_cluster_done_cb done;
    void *arg;
    int err;
    int32_t epoch;
    char msg[256];
};

struct sf_cluster {
    struct event_base *base;
    sf_zk_t *zk;
    sf_cluster_callbacks_t cb;
    void *arg;
    int session_timeout_ms, connection_timeout_ms;
    int32_t broker_id;
    char *host;
    int32_t port;
    char **endpoints;
    int nendpoints;
    char *rack;

    int started, ready, failed, closing, free_pending, user_depth;
    uint64_t next_inc;

    /* per-session setup and registration */
    int setup_busy, setup_outstanding, setup_error;
    int registered, reg_busy, reg_waiting;
    int64_t broker_epoch;
    struct cl_node reg_node;
    struct event *retry_timer, *reg_timer;

    /* controller */
    int is_controller, elect_busy, ctrl_adopt;
    int32_t controller_epoch, controller_id, elect_epoch;
    struct cl_node ctrl_node;

    char *cluster_id;

    /* the model */
    struct cl_node ids_node, topics_node;
    struct cl_broker **brokers;
    int nbrokers, capbrokers;
    struct cl_topic **buckets;
    size_t nbuckets, ntopics;
    int pending_reads, load_error, synced;
    int dirty;
    int64_t dirty_since;
    struct event *rebuild_timer;
    sf_cluster_snapshot_t *current;

    struct cl_notify *nhead, *ntail;
    struct event *notify_ev;
};

static void read_children(sf_cluster_t *cl, int kind);
static void read_broker(sf_cluster_t *cl, struct cl_broker *b);
static void read_topic(sf_cluster_t *cl, struct cl_topic *t, int arm);
static void read_pstate(sf_cluster_t *cl, struct cl_topic *t, int32_t p);
static void read_config(sf_cluster_t *cl, struct cl_topic *t);
static void read_controller(sf_cluster_t *cl);
static void elect(sf_cluster_t *cl);
static void register_step(sf_cluster_t *cl);
static void setup_start(sf_cluster_t *cl);
static void cluster_destroy(sf_cluster_t *cl);

/* ---- user callbacks: always from this module's own events ---- */

static void user_enter(sf_cluster_t *cl) { cl->user_depth++; }

/* Returns 1 if the cluster was freed from inside the callback (stop touching it). */
static int user_leave(sf_cluster_t *cl) {
    if (--cl->user_depth == 0 && cl->free_pending && !cl->closing) {
        cluster_destroy(cl);
        return 1;
    }
    return 0;
}

static void notify_push(sf_cluster_t *cl, struct cl_notify *n) {
    n->next = NULL;
    if (cl->ntail)
        cl->ntail->next = n;
    else
        cl->nhead = n;
    cl->ntail = n;
    event_active(cl->notify_ev, EV_READ, 0);
}

static struct cl_notify *notify_pop(sf_cluster_t *cl) {
    struct cl_notify *n = cl->nhead;
    if (n) {
        cl->nhead = n->next;
        if (!cl->nhead)
            cl->ntail = NULL;
    }
    return n;
}

static void notify_done(sf_cluster_t *cl, sf_cluster_done_cb done, void *arg, int err) {
    struct cl_notify *n = calloc(1, sizeof(*n));
    if (!n) {
        /* Cannot defer: call it now rather than lose it. */
        sf_log(SF_LOG_ERR, "ZK", "out of memory queueing an admin completion");
        if (done)
            done(arg, err);
        return;
    }
    n->kind = N_DONE;
    n->done = done;
    n->arg = arg;
    n->err = err;
    notify_push(cl, n);
}

static void notify_controller(sf_cluster_t *cl) {
    struct cl_notify *n;
    if (!cl->cb.on_controller || !cl->ready)
        return;
    n = calloc(1, sizeof(*n));
    if (!n)
        return;
    n->kind = N_CONTROLLER;
    n->err = cl->is_controller;
    n->epoch = cl->controller_epoch;
    notify_push(cl, n);
}

static void notify_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    struct cl_notify *n;
    (void)fd;
    (void)what;
    while (!cl->closing && (n = notify_pop(cl))) {
        user_enter(cl);
        if (n->kind == N_DONE && n->done)
            n->done(n->arg, n->err);
        else if (n->kind == N_READY && cl->cb.on_ready)
            cl->cb.on_ready(cl->arg, n->err, n->err ? n->msg : NULL);
        else if (n->kind == N_CONTROLLER && cl->cb.on_controller)
            cl->cb.on_controller(cl->arg, n->err, n->epoch);
        free(n);
        if (user_leave(cl))
            return;
    }
}

/* Startup failed: report once, then stay quiet. */
static void fail(sf_cluster_t *cl, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(sf_cluster_t *cl, int err, const char *fmt, ...) {
    struct cl_notify *n;
    va_list ap;
    if (cl->ready || cl->failed)
        return;
    cl->failed = 1;
    evtimer_del(cl->retry_timer);
    evtimer_del(cl->reg_timer);
    evtimer_del(cl->rebuild_timer);
    n = calloc(1, sizeof(*n));
    if (!n)
        return;
    n->kind = N_READY;
    n->err = err;
    va_start(ap, fmt);
    vsnprintf(n->msg, sizeof(n->msg), fmt, ap);
    va_end(ap);
    /* The owner reports it (on_ready): one line for the operator. */
    sf_log(SF_LOG_DEBUG, "ZK", "%s", n->msg);
    notify_push(cl, n);
}

static int alive(const sf_cluster_t *cl) { return !cl->closing && !cl->failed; }

/* ---- keys ---- */

static struct cl_key *key_new(sf_cluster_t *cl, int kind, uint64_t inc, int32_t id,
                              const char *topic) {
    size_t n = topic ? strlen(topic) : 0;
    struct cl_key *k = malloc(sizeof(*k) + n + 1);
    if (!k)
        return NULL;
    k->cl = cl;
    k->kind = kind;
    k->inc = inc;
    k->id = id;
    memcpy(k->topic, topic ? topic : "", n + 1);
    return k;
}

/* ---- the model: brokers and topics ---- */

static struct cl_broker *find_broker(sf_cluster_t *cl, int32_t id) {
    int i;
    for (i = 0; i < cl->nbrokers; i++)
        if (cl->brokers[i]->b.id == id)
            return cl->brokers[i];
    return NULL;
}

static struct cl_broker *add_broker(sf_cluster_t *cl, int32_t id) {
    struct cl_broker *b;
    if (cl->nbrokers == cl->capbrokers) {
        int cap = cl->capbrokers ? cl->capbrokers * 2 : 8;
        struct cl_broker **v = realloc(cl->brokers, (size_t)cap * sizeof(*v));
        if (!v)
            return NULL;
        cl->brokers = v;
        cl->capbrokers = cap;
    }
    b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->node.inc = ++cl->next_inc;
    b->b.id = id;
    b->b.port = -1;
    b->b.epoch = -1;
    cl->brokers[cl->nbrokers++] = b;
    return b;
}

static void broker_free(struct cl_broker *b) {
    sf_cluster_broker_clear(&b->b);
    free(b);
}

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
    return h;
}

static struct cl_topic *find_topic(sf_cluster_t *cl, const char *name) {
    struct cl_topic *t;
    if (!cl->nbuckets)
        return NULL;
    for (t = cl->buckets[hash_str(name) & (cl->nbuckets - 1)]; t; t = t->hnext)
        if (!strcmp(t->name, name))
            return t;
    return NULL;
}

static struct cl_topic *add_topic(sf_cluster_t *cl, const char *name) {
    struct cl_topic *t;
    size_t h;
    if (cl->ntopics >= cl->nbuckets) {
        size_t i, nb = cl->nbuckets ? cl->nbuckets * 2 : 64;
        struct cl_topic **v = calloc(nb, sizeof(*v));
        if (!v)
            return NULL;
        for (i = 0; i < cl->nbuckets; i++) {
            struct cl_topic *x, *next;
            for (x = cl->buckets[i]; x; x = next) {
                next = x->hnext;
                h = hash_str(x->name) & (nb - 1);
                x->hnext = v[h];
                v[h] = x;
            }
        }
        free(cl->buckets);
        cl->buckets = v;
        cl->nbuckets = nb;
    }
    t = calloc(1, sizeof(*t));
    if (!t || !(t->name = strdup(name))) {
        free(t);
        return NULL;
    }
    t->node.inc = ++cl->next_inc;
    t->cfg.inc = ++cl->next_inc;
    h = hash_str(name) & (cl->nbuckets - 1);
    t->hnext = cl->buckets[h];
    cl->buckets[h] = t;
    cl->ntopics++;
    return t;
}

static void topic_free(struct cl_topic *t) {
    int i;
    for (i = 0; i < t->nparts; i++)
        sf_cluster_partition_clear(&t->parts[i].p);
    free(t->parts);
    sf_cluster_configs_free(t->configs, t->nconfigs);
    free(t->name);
    free(t);
}

static void remove_topic(sf_cluster_t *cl, struct cl_topic *t) {
    struct cl_topic **pp = &cl->buckets[hash_str(t->name) & (cl->nbuckets - 1)];
    while (*pp && *pp != t)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = t->hnext;
    cl->ntopics--;
    topic_free(t);
}

/* ---- snapshots ---- */

static int copy_ints(const int32_t *src, int n, int32_t **dst) {
    *dst = NULL;
    if (n <= 0)
        return SF_OK;
    *dst = malloc((size_t)n * sizeof(int32_t));
    if (!*dst)
        return SF_ERR_NOMEM;
    memcpy(*dst, src, (size_t)n * sizeof(int32_t));
    return SF_OK;
}

static int copy_broker(sf_cluster_broker_t *dst, const sf_cluster_broker_t *src) {
    int i;
    memset(dst, 0, sizeof(*dst));
    dst->id = src->id;
    dst->port = src->port;
    dst->epoch = src->epoch;
    if (src->host && !(dst->host = strdup(src->host)))
        return SF_ERR_NOMEM;
    if (src->rack && !(dst->rack = strdup(src->rack)))
        return SF_ERR_NOMEM;
    if (src->nendpoints) {
        dst->endpoints = calloc((size_t)src->nendpoints, sizeof(char *));
        if (!dst->endpoints)
            return SF_ERR_NOMEM;
        for (i = 0; i < src->nendpoints; i++) {
            if (!(dst->endpoints[i] = strdup(src->endpoints[i])))
                return SF_ERR_NOMEM;
            dst->nendpoints = i + 1;
        }
    }
    return SF_OK;
}

static int copy_topic(sf_cluster_topic_t *dst, const struct cl_topic *t) {
    int i;
    memset(dst, 0, sizeof(*dst));
    if (!(dst->name = strdup(t->name)))
        return SF_ERR_NOMEM;
    memcpy(dst->topic_id, t->topic_id, 16);
    if (t->nparts) {
        dst->partitions = calloc((size_t)t->nparts, sizeof(*dst->partitions));
        if (!dst->partitions)
            return SF_ERR_NOMEM;
        dst->npartitions = t->nparts;
        for (i = 0; i < t->nparts; i++) {
            const struct cl_part *src = &t->parts[i];
            sf_cluster_partition_t *p = &dst->partitions[i];
            p->partition = i;
            p->leader = src->have ? src->p.leader : -1;
            p->leader_epoch = src->have ? src->p.leader_epoch : -1;
            p->controller_epoch = src->have ? src->p.controller_epoch : -1;
            if (copy_ints(src->p.replicas, src->p.nreplicas, &p->replicas))
                return SF_ERR_NOMEM;
            p->nreplicas = src->p.nreplicas;
            if (src->have) {
                if (copy_ints(src->p.isr, src->p.nisr, &p->isr))
                    return SF_ERR_NOMEM;
                p->nisr = src->p.nisr;
            }
        }
    }
    if (t->nconfigs) {
        dst->configs = calloc((size_t)t->nconfigs, sizeof(*dst->configs));
        if (!dst->configs)
            return SF_ERR_NOMEM;
        for (i = 0; i < t->nconfigs; i++) {
            dst->configs[i].name = strdup(t->configs[i].name);
            dst->configs[i].value = strdup(t->configs[i].value);
            dst->nconfigs = i + 1;
            if (!dst->configs[i].name || !dst->configs[i].value)
                return SF_ERR_NOMEM;
        }
    }
    return SF_OK;
}

static sf_cluster_snapshot_t *build_snapshot(sf_cluster_t *cl) {
    sf_cluster_broker_t *brokers = NULL;
    sf_cluster_topic_t *topics = NULL;
    char *cid = NULL;
    int nb = 0, nt = 0, i;
    size_t h;

    if (cl->nbrokers && !(brokers = calloc((size_t)cl->nbrokers, sizeof(*brokers))))
        goto nomem;
    for (i = 0; i < cl->nbrokers; i++) {
        if (!cl->brokers[i]->have)
            continue;
        if (copy_broker(&brokers[nb++], &cl->brokers[i]->b))
            goto nomem;
    }
    if (cl->ntopics && !(topics = calloc(cl->ntopics, sizeof(*topics))))
        goto nomem;
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t;
        for (t = cl->buckets[h]; t; t = t->hnext) {
            if (!t->have)
                continue;
            if (copy_topic(&topics[nt++], t))
                goto nomem;
        }
    }
    if (cl->cluster_id && !(cid = strdup(cl->cluster_id)))
        goto nomem;
    return sf_cluster_snapshot_build(cid, cl->controller_id, cl->controller_epoch, brokers, nb,
                                     topics, nt);
nomem:
    for (i = 0; i < nb; i++)
        sf_cluster_broker_clear(&brokers[i]);
    free(brokers);
    for (i = 0; i < nt; i++)
        sf_cluster_topic_clear(&topics[i]);
    free(topics);
    free(cid);
    sf_log(SF_LOG_ERR, "ZK", "out of memory building a metadata snapshot");
    return NULL;
}

static void schedule_rebuild(sf_cluster_t *cl) {
    struct timeval tv = {0, CL_REBUILD_DELAY_MS * 1000};
    if (!alive(cl))
        return;
    if (!cl->dirty) {
        cl->dirty = 1;
        cl->dirty_since = sf_clock_mono_ms();
    }
    if (!evtimer_pending(cl->rebuild_timer, NULL))
        evtimer_add(cl->rebuild_timer, &tv);
}

static void rebuild_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    sf_cluster_snapshot_t *snap, *old;
    (void)fd;
    (void)what;
    if (!alive(cl))
        return;
    if (!cl->ready) {
        /* The first snapshot waits for a complete load; the last read's completion
         * schedules this again. */
        if (!cl->registered || !cl->synced || cl->pending_reads > 0 || cl->load_error)
            return;
    } else {
        if (!cl->dirty)
            return;
        if (cl->pending_reads > 0 &&
            sf_clock_mono_ms() - cl->dirty_since < CL_REBUILD_MAX_WAIT_MS) {
            struct timeval tv = {0, CL_REBUILD_DELAY_MS * 1000};
            evtimer_add(cl->rebuild_timer, &tv);
            return;
        }
    }
    snap = build_snapshot(cl);
    if (!snap) {
        struct timeval tv = {0, 100 * 1000};
        evtimer_add(cl->rebuild_timer, &tv);
        return;
    }
    cl->dirty = 0;
    old = cl->current;
    cl->current = snap;
    sf_cluster_snapshot_unref(old);
    user_enter(cl);
    if (cl->cb.on_snapshot)
        cl->cb.on_snapshot(cl->arg, snap);
    if (user_leave(cl))
        return;
    if (!cl->ready) {
        cl->ready = 1;
        sf_log(SF_LOG_NOTICE, "ZK",
               "broker %d registered in ZooKeeper (epoch %lld, cluster %s): %d brokers, %zu topics",
               (int)cl->broker_id, (long long)cl->broker_epoch,
               cl->cluster_id ? cl->cluster_id : "?", snap->nbrokers, (size_t)snap->ntopics);
        user_enter(cl);
        if (cl->cb.on_ready)
            cl->cb.on_ready(cl->arg, SF_OK, NULL);
        if (user_leave(cl))
            return;
        if (cl->is_controller)
            notify_controller(cl);
    }
}

/* ---- model reads ---- */

static void model_watch_cb(sf_zk_t *zk, int event, const char *path, void *arg);
static void model_data_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                          void *arg);

/* Set an exists-watch on @path for @node unless one is set. */
static void arm(sf_cluster_t *cl, struct cl_node *node, int kind, int32_t id, const char *topic,
                const char *path) {
    struct cl_key *k;
    uint64_t wid;
    if (node->armed)
        return;
    wid = ++cl->next_inc;
    k = key_new(cl, kind, wid, id, topic);
    if (!k) {
        cl->load_error = 1;
        return;
    }
    if (sf_zk_exists(cl->zk, path, model_watch_cb, k, NULL, NULL) != SF_OK) {
        free(k);
        cl->load_error = 1;
        return;
    }
    node->watch_id = wid;
    node->armed = 1;
}

static void fetch(sf_cluster_t *cl, int kind, uint64_t inc, int32_t id, const char *topic,
                  const char *path) {
    struct cl_key *k = key_new(cl, kind, inc, id, topic);
    if (!k) {
        cl->load_error = 1;
        return;
    }
    if (sf_zk_get(cl->zk, path, NULL, NULL, model_data_cb, k) != SF_OK) {
        free(k);
        cl->load_error = 1;
        return;
    }
    cl->pending_reads++;
}

static void read_done(sf_cluster_t *cl) {
    if (--cl->pending_reads == 0)
        schedule_rebuild(cl);
}

static void path_broker(char *buf, size_t n, int32_t id) {
    snprintf(buf, n, "/brokers/ids/%d", (int)id);
}
static void path_topic(char *buf, size_t n, const char *t) {
    snprintf(buf, n, "/brokers/topics/%s", t);
}
static void path_pstate(char *buf, size_t n, const char *t, int32_t p) {
    snprintf(buf, n, "/brokers/topics/%s/partitions/%d/state", t, (int)p);
}
static void path_config(char *buf, size_t n, const char *t) {
    snprintf(buf, n, "/config/topics/%s", t);
}

static void read_broker(sf_cluster_t *cl, struct cl_broker *b) {
    char path[64];
    path_broker(path, sizeof(path), b->b.id);
    arm(cl, &b->node, K_BROKER, b->b.id, NULL, path);
    fetch(cl, K_BROKER, b->node.inc, b->b.id, NULL, path);
}

static void read_topic(sf_cluster_t *cl, struct cl_topic *t, int do_arm) {
    char path[512];
    path_topic(path, sizeof(path), t->name);
    if (do_arm)
        arm(cl, &t->node, K_TOPIC, -1, t->name, path);
    fetch(cl, K_TOPIC, t->node.inc, -1, t->name, path);
}

static void read_pstate(sf_cluster_t *cl, struct cl_topic *t, int32_t p) {
    char path[512];
    path_pstate(path, sizeof(path), t->name, p);
    arm(cl, &t->parts[p].node, K_PSTATE, p, t->name, path);
    fetch(cl, K_PSTATE, t->parts[p].node.inc, p, t->name, path);
}

static void read_config(sf_cluster_t *cl, struct cl_topic *t) {
    char path[512];
    path_config(path, sizeof(path), t->name);
    arm(cl, &t->cfg, K_CONFIG, -1, t->name, path);
    fetch(cl, K_CONFIG, t->cfg.inc, -1, t->name, path);
}

static void read_controller(sf_cluster_t *cl) {
    arm(cl, &cl->ctrl_node, K_CONTROLLER, -1, NULL, "/controller");
    fetch(cl, K_CONTROLLER, 0, -1, NULL, "/controller");
    fetch(cl, K_CEPOCH, 0, -1, NULL, "/controller_epoch");
}

static void model_children_cb(int err, int zrc, char *const *children, int n,
                              const sf_zk_stat_t *stat, void *arg);

static void read_children(sf_cluster_t *cl, int kind) {
    struct cl_node *node = kind == K_IDS ? &cl->ids_node : &cl->topics_node;
    const char *path = kind == K_IDS ? "/brokers/ids" : "/brokers/topics";
    struct cl_key *rk, *wk = NULL;
    uint64_t wid = 0;
    int rc;
    rk = key_new(cl, kind, 0, -1, NULL);
    if (!rk) {
        cl->load_error = 1;
        return;
    }
    if (!node->armed) {
        wid = ++cl->next_inc;
        wk = key_new(cl, kind, wid, -1, NULL);
        if (!wk) {
            free(rk);
            cl->load_error = 1;
            return;
        }
    }
    rc = sf_zk_get_children(cl->zk, path, wk ? model_watch_cb : NULL, wk, model_children_cb, rk);
    if (rc != SF_OK) {
        free(rk);
        free(wk);
        cl->load_error = 1;
        return;
    }
    if (wk) {
        node->watch_id = wid;
        node->armed = 1;
    }
    cl->pending_reads++;
}

/* Everything, again: after (re)connecting. Watches still set are kept. */
static void sync_all(sf_cluster_t *cl) {
    size_t h;
    int i;
    cl->load_error = 0;
    cl->synced = 1;
    read_children(cl, K_IDS);
    read_children(cl, K_TOPICS);
    for (i = 0; i < cl->nbrokers; i++)
        read_broker(cl, cl->brokers[i]);
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t;
        for (t = cl->buckets[h]; t; t = t->hnext) {
            int32_t p;
            read_topic(cl, t, 1);
            read_config(cl, t);
            for (p = 0; p < t->nparts; p++)
                read_pstate(cl, t, p);
        }
    }
    read_controller(cl);
}

static void apply_ids(sf_cluster_t *cl, char *const *children, int n) {
    int i, j;
    /* drop brokers no longer listed */
    for (i = 0; i < cl->nbrokers;) {
        int found = 0;
        for (j = 0; j < n && !found; j++) {
            int32_t id;
            found = !parse_id(children[j], &id) && id == cl->brokers[i]->b.id;
        }
        if (found) {
            i++;
            continue;
        }
        broker_free(cl->brokers[i]);
        cl->brokers[i] = cl->brokers[--cl->nbrokers];
    }
    for (j = 0; j < n; j++) {
        int32_t id;
        struct cl_broker *b;
        if (parse_id(children[j], &id))
            continue;
        b = find_broker(cl, id);
        if (!b) {
            if (!(b = add_broker(cl, id))) {
                cl->load_error = 1;
                continue;
            }
            read_broker(cl, b);
        } else if (!b->node.armed) {
            read_broker(cl, b);
        }
    }
}

static void apply_topics(sf_cluster_t *cl, char *const *children, int n) {
    size_t h;
    int j;
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t;
        for (t = cl->buckets[h]; t; t = t->hnext)
            t->seen = 0;
    }
    for (j = 0; j < n; j++) {
        struct cl_topic *t;
        if (!sf_cluster_topic_name_valid(children[j])) {
            sf_log(SF_LOG_WARNING, "ZK", "ignoring /brokers/topics/%s: not a legal topic name",
                   children[j]);
            continue;
        }
        t = find_topic(cl, children[j]);
        if (!t) {
            if (!(t = add_topic(cl, children[j]))) {
                cl->load_error = 1;
                continue;
            }
            t->seen = 1;
            read_topic(cl, t, 1);
            read_config(cl, t);
            continue;
        }
        t->seen = 1;
        if (!t->node.armed)
            read_topic(cl, t, 1);
        if (!t->cfg.armed)
            read_config(cl, t);
    }
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t, *next;
        for (t = cl->buckets[h]; t; t = next) {
            next = t->hnext;
            if (!t->seen)
                remove_topic(cl, t);
        }
    }
}

static void model_children_cb(int err, int zrc, char *const *children, int n,
                              const sf_zk_stat_t *stat, void *arg) {
    struct cl_key *k = arg;
    sf_cluster_t *cl = k->cl;
    (void)zrc;
    (void)stat;
    if (!alive(cl)) {
        free(k);
        return;
    }
    if (err == SF_OK) {
        if (k->kind == K_IDS)
            apply_ids(cl, children, n);
        else
            apply_topics(cl, children, n);
        schedule_rebuild(cl);
    } else if (err != SF_ERR_NOTFOUND) {
        cl->load_error = 1;
    }
    free(k);
    read_done(cl);
}

/* Replace a topic's partition list from its decoded znode; keep the state of partitions that
 * stay, start new ones empty. */
static int apply_topic(sf_cluster_t *cl, struct cl_topic *t, sf_cluster_topic_t *dec) {
    int32_t i;
    if (dec->npartitions != t->nparts) {
        struct cl_part *parts = NULL;
        if (dec->npartitions) {
            parts = calloc((size_t)dec->npartitions, sizeof(*parts));
            if (!parts)
                return SF_ERR_NOMEM;
        }
        for (i = 0; i < t->nparts; i++) {
            if (i < dec->npartitions)
                parts[i] = t->parts[i];
            else
                sf_cluster_partition_clear(&t->parts[i].p);
        }
        for (i = t->nparts; i < dec->npartitions; i++) {
            parts[i].node.inc = ++cl->next_inc;
            parts[i].p.partition = i;
            parts[i].p.leader = -1;
            parts[i].p.leader_epoch = -1;
            parts[i].p.controller_epoch = -1;
        }
        free(t->parts);
        t->parts = parts;
        t->nparts = dec->npartitions;
    }
    for (i = 0; i < t->nparts; i++) {
        free(t->parts[i].p.replicas);
        t->parts[i].p.replicas = dec->partitions[i].replicas;
        t->parts[i].p.nreplicas = dec->partitions[i].nreplicas;
        dec->partitions[i].replicas = NULL;
        dec->partitions[i].nreplicas = 0;
    }
    memcpy(t->topic_id, dec->topic_id, 16);
    return SF_OK;
}

static void ctrl_set(sf_cluster_t *cl, int is_ctrl) {
    if (cl->is_controller == is_ctrl)
        return;
    cl->is_controller = is_ctrl;
    if (is_ctrl)
        sf_log(SF_LOG_NOTICE, "ZK", "broker %d is the controller (epoch %d)", (int)cl->broker_id,
               (int)cl->controller_epoch);
    else
        sf_log(SF_LOG_NOTICE, "ZK", "broker %d is no longer the controller", (int)cl->broker_id);
    notify_controller(cl);
}

static void model_data_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                          void *arg) {
    struct cl_key *k = arg;
    sf_cluster_t *cl = k->cl;
    (void)zrc;
    if (!alive(cl)) {
        free(k);
        return;
    }
    if (err != SF_OK && err != SF_ERR_NOTFOUND)
        cl->load_error = 1;
    switch (k->kind) {
    case K_BROKER: {
        struct cl_broker *b = find_broker(cl, k->id);
        sf_cluster_broker_t dec;
        if (!b || b->node.inc != k->inc || (err != SF_OK && err != SF_ERR_NOTFOUND))
            break;
        if (err == SF_ERR_NOTFOUND) {
            b->have = 0;
        } else if (sf_cluster_broker_decode(data, (size_t)len, &dec) == SF_OK) {
            sf_cluster_broker_clear(&b->b);
            b->b = dec;
            b->b.id = k->id;
            b->b.epoch = stat ? stat->czxid : -1;
            b->have = 1;
        } else {
            sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed /brokers/ids/%d", (int)k->id);
            b->have = 0;
        }
        schedule_rebuild(cl);
        break;
    }
    case K_TOPIC: {
        struct cl_topic *t = find_topic(cl, k->topic);
        sf_cluster_topic_t dec;
        int32_t p;
        if (!t || t->node.inc != k->inc || (err != SF_OK && err != SF_ERR_NOTFOUND))
            break;
        if (err == SF_ERR_NOTFOUND) {
            t->have = 0;
        } else if (sf_cluster_topic_decode(data, (size_t)len, &dec) == SF_OK) {
            if (apply_topic(cl, t, &dec) == SF_OK) {
                t->have = 1;
                /* Heal: (re)read the partition states and the config nobody watches. */
                for (p = 0; p < t->nparts; p++)
                    if (!t->parts[p].node.armed)
                        read_pstate(cl, t, p);
                if (!t->cfg.armed)
                    read_config(cl, t);
            } else {
                cl->load_error = 1;
            }
            sf_cluster_topic_clear(&dec);
        } else {
            sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed /brokers/topics/%s", t->name);
            t->have = 0;
        }
        schedule_rebuild(cl);
        break;
    }
    case K_PSTATE: {
        struct cl_topic *t = find_topic(cl, k->topic);
        struct cl_part *part;
        if (!t || k->id < 0 || k->id >= t->nparts)
            break;
        part = &t->parts[k->id];
        if (part->node.inc != k->inc || (err != SF_OK && err != SF_ERR_NOTFOUND))
            break;
        if (err == SF_OK && sf_cluster_pstate_decode(data, (size_t)len, &part->p) == SF_OK) {
            part->have = 1;
        } else {
            if (err == SF_OK)
                sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed state of %s-%d", t->name,
                       (int)k->id);
            part->have = 0;
        }
        schedule_rebuild(cl);
        break;
    }
    case K_CONFIG: {
        struct cl_topic *t = find_topic(cl, k->topic);
        sf_cluster_config_entry_t *cfg = NULL;
        int n = 0;
        if (!t || t->cfg.inc != k->inc || (err != SF_OK && err != SF_ERR_NOTFOUND))
            break;
        if (err == SF_OK && sf_cluster_config_decode(data, (size_t)len, &cfg, &n) != SF_OK) {
            sf_log(SF_LOG_WARNING, "ZK", "ignoring malformed /config/topics/%s", t->name);
            cfg = NULL;
            n = 0;
        }
        sf_cluster_configs_free(t->configs, t->nconfigs);
        t->configs = cfg;
        t->nconfigs = n;
        schedule_rebuild(cl);
        break;
    }
    case K_CONTROLLER: {
        int32_t id = -1;
        if (err != SF_OK && err != SF_ERR_NOTFOUND)
            break;
        if (err == SF_OK && sf_cluster_controller_decode(data, (size_t)len, &id) != SF_OK) {
            sf_log(SF_LOG_WARNING, "ZK", "malformed /controller");
            id = -1;
        }
        if (id != cl->controller_id) {
            cl->controller_id = id;
            schedule_rebuild(cl);
        }
        if (err == SF_ERR_NOTFOUND) {
            ctrl_set(cl, 0);
            elect(cl);
        } else if (id == cl->broker_id && stat &&
                   stat->ephemeral_owner == sf_zk_session_id(cl->zk)) {
            /* Ours: the election's answer was lost with a connection; adopt it once the
             * epoch (read right after this) is known. */
            if (!cl->is_controller)
                cl->ctrl_adopt = 1;
        } else {
            ctrl_set(cl, 0);
        }
        break;
    }
    case K_CEPOCH: {
        int32_t e;
        if (err == SF_OK && sf_cluster_epoch_decode(data, (size_t)len, &e) == SF_OK) {
            if (e != cl->controller_epoch && !cl->is_controller) {
                cl->controller_epoch = e;
                schedule_rebuild(cl);
            }
        }
        if (cl->ctrl_adopt) {
            cl->ctrl_adopt = 0;
            ctrl_set(cl, 1);
        }
        break;
    }
    default:
        break;
    }
    free(k);
    read_done(cl);
}

static void model_watch_cb(sf_zk_t *zk, int event, const char *path, void *arg) {
    struct cl_key *k = arg;
    sf_cluster_t *cl = k->cl;
    struct cl_node *node = NULL;
    struct cl_broker *b = NULL;
    struct cl_topic *t = NULL;
    (void)zk;
    (void)path;
    if (!alive(cl)) {
        free(k);
        return;
    }
    switch (k->kind) {
    case K_IDS: node = &cl->ids_node; break;
    case K_TOPICS: node = &cl->topics_node; break;
    case K_CONTROLLER: node = &cl->ctrl_node; break;
    case K_BROKER:
        if ((b = find_broker(cl, k->id)))
            node = &b->node;
        break;
    case K_TOPIC:
        if ((t = find_topic(cl, k->topic)))
            node = &t->node;
        break;
    case K_CONFIG:
        if ((t = find_topic(cl, k->topic)))
            node = &t->cfg;
        break;
    case K_PSTATE:
        if ((t = find_topic(cl, k->topic)) && k->id >= 0 && k->id < t->nparts)
            node = &t->parts[k->id].node;
        break;
    default: break;
    }
    if (!node || !node->armed || node->watch_id != k->inc) {
        free(k);
        return;
    }
    node->armed = 0;
    if (event == SF_ZK_EV_DROPPED) {
        /* Lost with the session or never set: the next sync sets it again. */
        free(k);
        return;
    }
    switch (k->kind) {
    case K_IDS:
    case K_TOPICS: read_children(cl, k->kind); break;
    case K_CONTROLLER: read_controller(cl); break;
    case K_BROKER:
        if (event == SF_ZK_EV_DELETED) {
            b->have = 0; /* the children watch drops it */
            schedule_rebuild(cl);
        } else {
            read_broker(cl, b);
        }
        break;
    case K_TOPIC:
        if (event == SF_ZK_EV_DELETED) {
            t->have = 0;
            schedule_rebuild(cl);
        } else {
            read_topic(cl, t, 1);
        }
        break;
    case K_PSTATE:
    case K_CONFIG:
        if (event == SF_ZK_EV_DELETED) {
            if (k->kind == K_PSTATE) {
                t->parts[k->id].have = 0;
            } else {
                sf_cluster_configs_free(t->configs, t->nconfigs);
                t->configs = NULL;
                t->nconfigs = 0;
            }
            schedule_rebuild(cl);
            /* Re-read the topic: if it still exists, that re-arms what is missing; if it is
             * being deleted, nothing is left watching the deleted nodes. */
            read_topic(cl, t, 0);
        } else if (k->kind == K_PSTATE) {
            read_pstate(cl, t, k->id);
        } else {
            read_config(cl, t);
        }
        break;
    default: break;
    }
    free(k);
}

/* ---- controller election ---- */

static void elect_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    sf_cluster_t *cl = arg;
    (void)zrc;
    if (!alive(cl))
        return;
    cl->elect_busy = 0;
    if (err == SF_OK) {
        cl->controller_epoch = cl->elect_epoch;
        cl->controller_id = cl->broker_id;
        ctrl_set(cl, 1);
        schedule_rebuild(cl);
        return;
    }
    if (n >= 2 && res[0].err == SF_ERR_EXISTS) {
        /* Someone else is the controller: make sure its node is watched. */
        read_controller(cl);
    } else if (n >= 2 && res[1].err == SF_ERR_STATE) {
        /* /controller_epoch moved under us: try again from a fresh read. */
        elect(cl);
    } else {
        sf_log(SF_LOG_INFO, "ZK", "controller election failed: %s (retried on reconnect)",
               sf_zk_strerror(zrc));
    }
}

static void elect_epoch_created_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                                   void *arg) {
    sf_cluster_t *cl = arg;
    (void)zrc;
    (void)path;
    (void)stat;
    if (!alive(cl))
        return;
    cl->elect_busy = 0;
    if (err == SF_OK || err == SF_ERR_EXISTS)
        elect(cl);
}

static void elect_epoch_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                           void *arg) {
    sf_cluster_t *cl = arg;
    int32_t epoch;
    char *json = NULL, epoch_s[16];
    sf_zk_op_t ops[2];
    (void)zrc;
    if (!alive(cl))
        return;
    if (err == SF_ERR_NOTFOUND) {
        if (sf_zk_create(cl->zk, "/controller_epoch", "0", 1, SF_ZK_PERSISTENT,
                         elect_epoch_created_cb, cl) != SF_OK)
            cl->elect_busy = 0;
        return;
    }
    if (err != SF_OK || !stat) {
        cl->elect_busy = 0;
        return;
    }
    if (sf_cluster_epoch_decode(data, (size_t)len, &epoch) != SF_OK || epoch == INT32_MAX) {
        sf_log(SF_LOG_ERR, "ZK", "malformed /controller_epoch; cannot elect a controller");
        cl->elect_busy = 0;
        return;
    }
    cl->elect_epoch = epoch + 1;
    snprintf(epoch_s, sizeof(epoch_s), "%d", (int)cl->elect_epoch);
    json = sf_cluster_controller_encode(cl->broker_id, sf_clock_wall_ms());
    if (!json) {
        cl->elect_busy = 0;
        return;
    }
    ops[0] = sf_zk_op_create("/controller", json, (int)strlen(json), SF_ZK_EPHEMERAL);
    ops[1] = sf_zk_op_set("/controller_epoch", epoch_s, (int)strlen(epoch_s), stat->version);
    if (sf_zk_multi(cl->zk, ops, 2, elect_multi_cb, cl) != SF_OK)
        cl->elect_busy = 0;
    free(json);
}

/* Kafka: create the ephemeral /controller and bump /controller_epoch (versioned) in one
 * multi-op; whoever wins the create is the controller. */
static void elect(sf_cluster_t *cl) {
    if (!alive(cl) || !cl->registered || cl->elect_busy || cl->is_controller)
        return;
    cl->elect_busy = 1;
    if (sf_zk_get(cl->zk, "/controller_epoch", NULL, NULL, elect_epoch_cb, cl) != SF_OK)
        cl->elect_busy = 0;
}

/* ---- session setup: base paths, cluster id, registration ---- */

static void setup_retry(sf_cluster_t *cl) {
    struct timeval tv = {CL_RETRY_MS / 1000, (CL_RETRY_MS % 1000) * 1000};
    cl->setup_busy = 0;
    cl->reg_busy = 0;
    if (alive(cl) && sf_zk_state(cl->zk) == SF_ZK_CONNECTED)
        evtimer_add(cl->retry_timer, &tv);
    /* else: the next SF_ZK_CONNECTED starts over */
}

static void retry_timer_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    (void)fd;
    (void)what;
    if (alive(cl) && !cl->registered && !cl->setup_busy &&
        sf_zk_state(cl->zk) == SF_ZK_CONNECTED)
        setup_start(cl);
}

static void reg_watch_cb(sf_zk_t *zk, int event, const char *path, void *arg);

static void arm_reg_watch(sf_cluster_t *cl, sf_zk_stat_cb cb) {
    char path[64];
    struct cl_key *k;
    uint64_t wid;
    path_broker(path, sizeof(path), cl->broker_id);
    if (cl->reg_node.armed) {
        if (cb && sf_zk_exists(cl->zk, path, NULL, NULL, cb, cl) != SF_OK)
            setup_retry(cl);
        return;
    }
    wid = ++cl->next_inc;
    k = key_new(cl, K_REG, wid, cl->broker_id, NULL);
    if (!k || sf_zk_exists(cl->zk, path, reg_watch_cb, k, cb, cl) != SF_OK) {
        free(k);
        if (cb)
            setup_retry(cl);
        return;
    }
    cl->reg_node.watch_id = wid;
    cl->reg_node.armed = 1;
}

static void registered_ok(sf_cluster_t *cl, int64_t czxid) {
    cl->registered = 1;
    cl->reg_busy = 0;
    cl->reg_waiting = 0;
    cl->setup_busy = 0;
    cl->broker_epoch = czxid;
    evtimer_del(cl->reg_timer);
    sf_log(SF_LOG_INFO, "ZK", "registered broker %d at /brokers/ids/%d (epoch %lld)",
           (int)cl->broker_id, (int)cl->broker_id, (long long)czxid);
    /* Watch our own registration: if someone deletes it, register again. */
    arm_reg_watch(cl, NULL);
    sync_all(cl);
}

static void reg_exists_cb(int err, int zrc, const sf_zk_stat_t *stat, void *arg) {
    sf_cluster_t *cl = arg;
    (void)zrc;
    if (!alive(cl) || cl->registered)
        return;
    if (err == SF_ERR_NOTFOUND) {
        register_step(cl); /* vanished meanwhile */
        return;
    }
    if (err != SF_OK || !stat) {
        setup_retry(cl);
        return;
    }
    if (stat->ephemeral_owner && stat->ephemeral_owner == sf_zk_session_id(cl->zk)) {
        registered_ok(cl, stat->czxid);
        return;
    }
    /* KAFKA-7165: the node belongs to another session (a previous incarnation of this broker
     * whose session has not expired yet, or another live broker). Wait for it to vanish (the
     * watch), at most about one session timeout. */
    if (!cl->reg_waiting) {
        int ms = sf_zk_session_timeout(cl->zk) + CL_REG_GRACE_MS;
        struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
        cl->reg_waiting = 1;
        evtimer_add(cl->reg_timer, &tv);
        sf_log(SF_LOG_WARNING, "ZK",
               "/brokers/ids/%d is held by session 0x%llx; waiting up to %d ms for it to expire",
               (int)cl->broker_id, (unsigned long long)stat->ephemeral_owner, ms);
    }
}

static void reg_create_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                          void *arg) {
    sf_cluster_t *cl = arg;
    (void)path;
    if (!alive(cl) || cl->registered)
        return;
    if (err == SF_OK && stat) {
        registered_ok(cl, stat->czxid);
    } else if (err == SF_ERR_EXISTS) {
        arm_reg_watch(cl, reg_exists_cb);
    } else {
        sf_log(SF_LOG_WARNING, "ZK", "cannot register broker %d: %s", (int)cl->broker_id,
               sf_zk_strerror(zrc));
        setup_retry(cl);
    }
}

static void register_step(sf_cluster_t *cl) {
    sf_cluster_broker_t b;
    char path[64], *json;
    memset(&b, 0, sizeof(b));
    b.host = cl->host;
    b.port = cl->port;
    b.endpoints = cl->endpoints;
    b.nendpoints = cl->nendpoints;
    b.rack = cl->rack;
    json = sf_cluster_broker_encode(&b, sf_clock_wall_ms());
    if (!json) {
        setup_retry(cl);
        return;
    }
    cl->reg_busy = 1;
    path_broker(path, sizeof(path), cl->broker_id);
    if (sf_zk_create(cl->zk, path, json, (int)strlen(json), SF_ZK_EPHEMERAL, reg_create_cb, cl) !=
        SF_OK)
        setup_retry(cl);
    free(json);
}

static void reg_watch_cb(sf_zk_t *zk, int event, const char *path, void *arg) {
    struct cl_key *k = arg;
    sf_cluster_t *cl = k->cl;
    int mine;
    (void)zk;
    (void)path;
    mine = alive(cl) && cl->reg_node.armed && cl->reg_node.watch_id == k->inc;
    free(k);
    if (!mine)
        return;
    cl->reg_node.armed = 0;
    if (event == SF_ZK_EV_DROPPED)
        return;
    if (cl->registered) {
        if (event == SF_ZK_EV_DELETED) {
            sf_log(SF_LOG_WARNING, "ZK", "our registration /brokers/ids/%d was deleted; "
                   "registering again", (int)cl->broker_id);
            cl->registered = 0;
            cl->broker_epoch = -1;
            register_step(cl);
        } else {
            arm_reg_watch(cl, NULL);
        }
    } else if (cl->reg_waiting) {
        if (event == SF_ZK_EV_DELETED)
            register_step(cl);
        else
            arm_reg_watch(cl, reg_exists_cb);
    }
}

static void reg_timer_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    (void)fd;
    (void)what;
    if (!alive(cl) || cl->registered)
        return;
    cl->reg_waiting = 0;
    if (!cl->ready) {
        fail(cl, SF_ERR_EXISTS, "broker.id %d is already registered in ZooKeeper by another broker",
             (int)cl->broker_id);
        return;
    }
    sf_log(SF_LOG_ERR, "ZK", "broker.id %d is still registered in ZooKeeper by another session; "
           "retrying", (int)cl->broker_id);
    register_step(cl);
}

static void cluster_id_step(sf_cluster_t *cl);

static void cluster_id_created_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                                  void *arg) {
    sf_cluster_t *cl = arg;
    (void)zrc;
    (void)path;
    (void)stat;
    if (!alive(cl))
        return;
    if (err == SF_OK) {
        sf_log(SF_LOG_NOTICE, "ZK", "created cluster id %s", cl->cluster_id);
        register_step(cl);
    } else if (err == SF_ERR_EXISTS) {
        cluster_id_step(cl); /* another broker won: read its id */
    } else {
        setup_retry(cl);
    }
}

static void cluster_id_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                          void *arg) {
    sf_cluster_t *cl = arg;
    char *id = NULL, *json;
    uint8_t uuid[16];
    char s[23];
    (void)zrc;
    (void)stat;
    if (!alive(cl))
        return;
    if (err == SF_OK) {
        if (sf_cluster_id_decode(data, (size_t)len, &id) != SF_OK) {
            fail(cl, SF_ERR_CORRUPT, "malformed /cluster/id in ZooKeeper");
            return;
        }
        free(cl->cluster_id);
        cl->cluster_id = id;
        register_step(cl);
        return;
    }
    if (err != SF_ERR_NOTFOUND) {
        setup_retry(cl);
        return;
    }
    if (sf_cluster_uuid_random(uuid) != SF_OK) {
        setup_retry(cl);
        return;
    }
    sf_cluster_uuid_to_str(uuid, s);
    json = sf_cluster_id_encode(s);
    id = strdup(s);
    if (!json || !id) {
        free(json);
        free(id);
        setup_retry(cl);
        return;
    }
    free(cl->cluster_id);
    cl->cluster_id = id;
    if (sf_zk_create(cl->zk, "/cluster/id", json, (int)strlen(json), SF_ZK_CREATE_PARENTS,
                     cluster_id_created_cb, cl) != SF_OK)
        setup_retry(cl);
    free(json);
}

static void cluster_id_step(sf_cluster_t *cl) {
    if (sf_zk_get(cl->zk, "/cluster/id", NULL, NULL, cluster_id_cb, cl) != SF_OK)
        setup_retry(cl);
}

static void setup_create_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                            void *arg) {
    sf_cluster_t *cl = arg;
    (void)path;
    (void)stat;
    if (!alive(cl))
        return;
    if (err != SF_OK && err != SF_ERR_EXISTS) {
        if (!cl->setup_error)
            sf_log(SF_LOG_WARNING, "ZK", "cannot create the base znodes: %s",
                   sf_zk_strerror(zrc));
        cl->setup_error = 1;
    }
    if (--cl->setup_outstanding > 0)
        return;
    if (cl->setup_error)
        setup_retry(cl);
    else
        cluster_id_step(cl);
}

static void setup_start(sf_cluster_t *cl) {
    static const char *const paths[] = {"/brokers/ids", "/brokers/topics", "/config/topics",
                                        "/admin/delete_topics"};
    size_t i;
    if (cl->setup_busy || cl->registered)
        return;
    cl->setup_busy = 1;
    cl->setup_error = 0;
    cl->setup_outstanding = 0;
    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if (sf_zk_create(cl->zk, paths[i], NULL, 0, SF_ZK_CREATE_PARENTS, setup_create_cb, cl) ==
            SF_OK)
            cl->setup_outstanding++;
        else
            cl->setup_error = 1;
    }
    if (sf_zk_create(cl->zk, "/controller_epoch", "0", 1, SF_ZK_PERSISTENT, setup_create_cb, cl) ==
        SF_OK)
        cl->setup_outstanding++;
    else
        cl->setup_error = 1;
    if (!cl->setup_outstanding)
        setup_retry(cl);
}

static void on_zk_state(sf_zk_t *zk, int state, void *arg) {
    sf_cluster_t *cl = arg;
    (void)zk;
    if (!alive(cl))
        return;
    switch (state) {
    case SF_ZK_CONNECTED:
        if (!cl->registered) {
            if (!cl->reg_busy)
                setup_start(cl);
        } else {
            sync_all(cl);
        }
        break;
    case SF_ZK_EXPIRED:
        /* Ephemerals and watches of the old session are gone (every watch got DROPPED).
         * Re-register, re-elect and reload when the new session connects. */
        cl->registered = 0;
        cl->broker_epoch = -1;
        cl->setup_busy = 0;
        cl->reg_busy = 0;
        cl->reg_waiting = 0;
        cl->elect_busy = 0;
        cl->ctrl_adopt = 0;
        cl->synced = 0;
        evtimer_del(cl->reg_timer);
        evtimer_del(cl->retry_timer);
        ctrl_set(cl, 0);
        break;
    case SF_ZK_FAILED:
        fail(cl, SF_ERR_IO, "cannot connect to ZooKeeper at %s within %d ms",
             sf_zk_hosts(cl->zk), cl->connection_timeout_ms);
        break;
    default:
        break;
    }
}

/* ---- lifecycle ---- */

static void free_options(sf_cluster_t *cl) {
    int i;
    free(cl->host);
    for (i = 0; cl->endpoints && i < cl->nendpoints; i++)
        free(cl->endpoints[i]);
    free(cl->endpoints);
    free(cl->rack);
}

sf_cluster_t *sf_cluster_new(struct event_base *base, const sf_cluster_options_t *opt,
                             const sf_cluster_callbacks_t *cb, void *arg) {
    sf_cluster_t *cl;
    char *connect = NULL;
    int i;

    if (!base || !opt || !opt->zk_connect || !*opt->zk_connect || opt->broker_id < 0 ||
        opt->nendpoints < 0 || opt->nendpoints > SF_CLUSTER_MAX_ENDPOINTS ||
        (opt->nendpoints && !opt->endpoints)) {
        errno = EINVAL;
        return NULL;
    }
    cl = calloc(1, sizeof(*cl));
    if (!cl)
        return NULL;
    cl->base = base;
    if (cb)
        cl->cb = *cb;
    cl->arg = arg;
    cl->broker_id = opt->broker_id;
    cl->session_timeout_ms = opt->session_timeout_ms > 0 ? opt->session_timeout_ms : 18000;
    cl->connection_timeout_ms =
        opt->connection_timeout_ms > 0 ? opt->connection_timeout_ms : cl->session_timeout_ms;
    cl->port = opt->host ? opt->port : -1;
    cl->broker_epoch = -1;
    cl->controller_id = -1;
    cl->controller_epoch = -1;
    if (opt->host && !(cl->host = strdup(opt->host)))
        goto err;
    if (opt->rack && !(cl->rack = strdup(opt->rack)))
        goto err;
    if (opt->nendpoints) {
        cl->endpoints = calloc((size_t)opt->nendpoints, sizeof(char *));
        if (!cl->endpoints)
            goto err;
        for (i = 0; i < opt->nendpoints; i++) {
            if (!opt->endpoints[i] || !(cl->endpoints[i] = strdup(opt->endpoints[i])))
                goto err;
            cl->nendpoints = i + 1;
        }
    }
    if (opt->zk_chroot && *opt->zk_chroot && strcmp(opt->zk_chroot, "/")) {
        size_t hl = strcspn(opt->zk_connect, "/");
        if (opt->zk_chroot[0] != '/') {
            errno = EINVAL;
            goto err;
        }
        connect = malloc(hl + strlen(opt->zk_chroot) + 1);
        if (!connect)
            goto err;
        memcpy(connect, opt->zk_connect, hl);
        strcpy(connect + hl, opt->zk_chroot);
    } else if (!(connect = strdup(opt->zk_connect))) {
        goto err;
    }
    cl->zk = sf_zk_new(base, connect, cl->session_timeout_ms, on_zk_state, cl);
    free(connect);
    connect = NULL;
    if (!cl->zk)
        goto err;
    cl->retry_timer = evtimer_new(base, retry_timer_cb, cl);
    cl->reg_timer = evtimer_new(base, reg_timer_cb, cl);
    cl->rebuild_timer = evtimer_new(base, rebuild_cb, cl);
    cl->notify_ev = event_new(base, -1, 0, notify_cb, cl);
    if (!cl->retry_timer || !cl->reg_timer || !cl->rebuild_timer || !cl->notify_ev)
        goto err;
    return cl;
err:
    i = errno;
    free(connect);
    cluster_destroy(cl);
    errno = i;
    return NULL;
}

int sf_cluster_start(sf_cluster_t *cl) {
    if (!cl)
        return SF_ERR_INVALID;
    if (cl->started)
        return SF_ERR_STATE;
    cl->started = 1;
    return sf_zk_start(cl->zk, cl->connection_timeout_ms);
}

static void cluster_destroy(sf_cluster_t *cl) {
    struct cl_notify *n;
    size_t h;
    int i;
    cl->closing = 1;
    if (cl->retry_timer)
        event_free(cl->retry_timer);
    if (cl->reg_timer)
        event_free(cl->reg_timer);
    if (cl->rebuild_timer)
        event_free(cl->rebuild_timer);
    cl->retry_timer = cl->reg_timer = cl->rebuild_timer = NULL;
    /* Closes the session: our ephemerals vanish now. Pending completions run with errors;
     * admin writes queue their completions, delivered below. */
    sf_zk_free(cl->zk);
    cl->zk = NULL;
    while ((n = notify_pop(cl))) {
        if (n->kind == N_DONE && n->done)
            n->done(n->arg, n->err);
        free(n);
    }
    if (cl->notify_ev)
        event_free(cl->notify_ev);
    for (i = 0; i < cl->nbrokers; i++)
        broker_free(cl->brokers[i]);
    free(cl->brokers);
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t, *next;
        for (t = cl->buckets[h]; t; t = next) {
            next = t->hnext;
            topic_free(t);
        }
    }
    free(cl->buckets);
    sf_cluster_snapshot_unref(cl->current);
    free(cl->cluster_id);
    free_options(cl);
    free(cl);
}

void sf_cluster_free(sf_cluster_t *cl) {
    if (!cl || cl->closing)
        return;
    if (cl->user_depth > 0) {
        cl->free_pending = 1;
        return;
    }
    cluster_destroy(cl);
}

sf_cluster_snapshot_t *sf_cluster_current(sf_cluster_t *cl) { return cl ? cl->current : NULL; }
int sf_cluster_is_controller(const sf_cluster_t *cl) { return cl && cl->is_controller; }
int32_t sf_cluster_controller_epoch(const sf_cluster_t *cl) {
    return cl ? cl->controller_epoch : -1;
}
int64_t sf_cluster_broker_epoch(const sf_cluster_t *cl) {
    return cl && cl->registered ? cl->broker_epoch : -1;
}
struct sf_zk *sf_cluster_zk(sf_cluster_t *cl) { return cl ? cl->zk : NULL; }

/* ---- admin writes ---- */

enum { A_CREATE = 1, A_DELETE, A_ADD, A_CONFIG };

/* What an admin write names in its log line, by kind. */
static const char *const admin_what[] = {"", "creating topic", "deleting topic",
                                         "adding partitions to", "setting the config of"};

/* Existence probes issued before building a delete / add multi-op. */
enum { P_CFG, P_ADMIN, P_PARTS_DIR, P_MAX };

struct cl_admin;
struct cl_probe {
    struct cl_admin *a;
    int exists;
};

struct cl_admin {
    sf_cluster_t *cl;
    int kind;
    char *topic;
    sf_cluster_done_cb done;
    void *arg;
    int retries;
    /* the prepared multi-op (strings owned here) */
    sf_zk_op_t *ops;
    int nops, capops;
    char **strs;
    int nstrs, capstrs;
    /* index of the op whose failure has a meaning of its own, -1 if none: create: the
     * /config/topics op; delete: the topic node op */
    int key_index;
    char *cfg_json;
    /* delete / add: pipelined reads */
    int outstanding, read_err;
    struct cl_probe probes[P_MAX];
    char **children;
    int nchildren, children_absent;
    /* add */
    int32_t new_total;
    int32_t *assignment; /* copy, or NULL */
    int nassignment;
    char *topic_data;
    int topic_len, topic_version, topic_missing;
};

static void admin_ops_free(struct cl_admin *a) {
    int i;
    for (i = 0; i < a->nstrs; i++)
        free(a->strs[i]);
    free(a->strs);
    free(a->ops);
    a->strs = NULL;
    a->ops = NULL;
    a->nstrs = a->capstrs = a->nops = a->capops = 0;
}

/* Drop a previous multi-op and make room for @nops ops and @nstrs strings. */
static int admin_ops_reset(struct cl_admin *a, int nops, int nstrs) {
    admin_ops_free(a);
    a->ops = calloc((size_t)nops, sizeof(*a->ops));
    a->strs = calloc((size_t)nstrs, sizeof(char *));
    if (!a->ops || !a->strs)
        return SF_ERR_NOMEM;
    a->capops = nops;
    a->capstrs = nstrs;
    return SF_OK;
}

static void admin_free(struct cl_admin *a) {
    int i;
    admin_ops_free(a);
    free(a->cfg_json);
    for (i = 0; i < a->nchildren; i++)
        free(a->children[i]);
    free(a->children);
    free(a->assignment);
    free(a->topic_data);
    free(a->topic);
    free(a);
}

static void admin_finish(struct cl_admin *a, int err) {
    sf_cluster_t *cl = a->cl;
    notify_done(cl, a->done, a->arg, err);
    admin_free(a);
}

static struct cl_admin *admin_new(sf_cluster_t *cl, int kind, const char *topic,
                                  sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a = calloc(1, sizeof(*a));
    int i;
    if (!a || !(a->topic = strdup(topic))) {
        free(a);
        return NULL;
    }
    a->cl = cl;
    a->kind = kind;
    a->done = done;
    a->arg = arg;
    a->key_index = -1;
    for (i = 0; i < P_MAX; i++)
        a->probes[i].a = a;
    return a;
}

/* Keep @s (malloc'd, may be NULL = no memory) alive with the admin op; returns it. */
static char *admin_str(struct cl_admin *a, char *s) {
    if (s && a->nstrs == a->capstrs) {
        free(s);
        s = NULL;
    }
    if (!s)
        return NULL;
    a->strs[a->nstrs++] = s;
    return s;
}

/* Append an op of @type on the path printf(@fmt, ...) to the multi-op. Creates are
 * persistent; @data (NULL for none) is borrowed and must live as long as the op; @version is
 * for deletes, sets and checks. SF_OK or SF_ERR_NOMEM. */
static int admin_op(struct cl_admin *a, int type, const char *data, int version, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));
static int admin_op(struct cl_admin *a, int type, const char *data, int version, const char *fmt,
                    ...) {
    char *path = NULL;
    int len = data ? (int)strlen(data) : 0;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&path, fmt, ap) < 0)
        path = NULL;
    va_end(ap);
    if (path && a->nops == a->capops) {
        free(path);
        path = NULL;
    }
    if (!admin_str(a, path))
        return SF_ERR_NOMEM;
    switch (type) {
    case SF_ZK_OP_CREATE:
        a->ops[a->nops++] = sf_zk_op_create(path, data, len, SF_ZK_PERSISTENT);
        break;
    case SF_ZK_OP_DELETE: a->ops[a->nops++] = sf_zk_op_delete(path, version); break;
    case SF_ZK_OP_SET: a->ops[a->nops++] = sf_zk_op_set(path, data, len, version); break;
    default: a->ops[a->nops++] = sf_zk_op_check(path, version); break;
    }
    return SF_OK;
}

/* The two creates of a new partition: its node and its state (leader = first replica,
 * isr = replicas, leader_epoch 0, the current controller epoch). */
static int admin_partition_ops(struct cl_admin *a, int32_t p, int32_t *replicas, int n) {
    sf_cluster_partition_t st;
    char *s;
    memset(&st, 0, sizeof(st));
    st.partition = p;
    st.leader = replicas[0];
    st.leader_epoch = 0;
    st.isr = replicas;
    st.nisr = n;
    st.controller_epoch = a->cl->controller_epoch >= 0 ? a->cl->controller_epoch : 0;
    if (admin_op(a, SF_ZK_OP_CREATE, NULL, -1, "/brokers/topics/%s/partitions/%d", a->topic,
                 (int)p))
        return SF_ERR_NOMEM;
    s = admin_str(a, sf_cluster_pstate_encode(&st));
    if (!s || admin_op(a, SF_ZK_OP_CREATE, s, -1, "/brokers/topics/%s/partitions/%d/state",
                       a->topic, (int)p))
        return SF_ERR_NOMEM;
    return SF_OK;
}

/* Start of every multi-op completion: finish on success or while closing. Returns 1 if @a was
 * finished. */
static int admin_multi_settled(struct cl_admin *a, int err) {
    if (!a->cl->closing && err != SF_OK)
        return 0;
    admin_finish(a, a->cl->closing ? SF_ERR_IO : SF_OK);
    return 1;
}

/* The multi-op failed for good. */
static void admin_multi_failed(struct cl_admin *a, int zrc) {
    sf_log(SF_LOG_WARNING, "ZK", "%s %s failed: %s", admin_what[a->kind], a->topic,
           sf_zk_strerror(zrc));
    admin_finish(a, SF_ERR_IO);
}

static int first_failed(const sf_zk_op_result_t *res, int n) {
    int i;
    for (i = 0; res && i < n; i++)
        if (res[i].err != SF_OK)
            return i;
    return -1;
}

static int ready_for_admin(const sf_cluster_t *cl) {
    return cl && alive(cl) && cl->ready && cl->current;
}

/* Validate an explicit assignment: ids >= 0, no duplicates within a partition. */
static int assignment_valid(const int32_t *v, int32_t np, int rf) {
    int32_t p;
    int i, j;
    for (p = 0; p < np; p++) {
        const int32_t *r = v + (size_t)p * (size_t)rf;
        for (i = 0; i < rf; i++) {
            if (r[i] < 0)
                return 0;
            for (j = 0; j < i; j++)
                if (r[i] == r[j])
                    return 0;
        }
    }
    return 1;
}

static int live_broker_ids(const sf_cluster_snapshot_t *snap, int32_t **out) {
    int i;
    *out = NULL;
    if (!snap->nbrokers)
        return 0;
    *out = malloc((size_t)snap->nbrokers * sizeof(int32_t));
    if (!*out)
        return -1;
    for (i = 0; i < snap->nbrokers; i++)
        (*out)[i] = snap->brokers[i].id; /* sorted by id */
    return snap->nbrokers;
}

/* -- reads before a delete / add -- */

static void delete_build(struct cl_admin *a);
static void add_build(struct cl_admin *a);

/* Count a read issued (@rc SF_OK) or note that it could not be. */
static void admin_read_issued(struct cl_admin *a, int rc) {
    if (rc == SF_OK)
        a->outstanding++;
    else
        a->read_err = 1;
}

static void admin_read_done(struct cl_admin *a) {
    if (--a->outstanding > 0)
        return;
    if (a->cl->closing)
        admin_finish(a, SF_ERR_IO);
    else if (a->kind == A_DELETE)
        delete_build(a);
    else
        add_build(a);
}

static void admin_exists_cb(int err, int zrc, const sf_zk_stat_t *stat, void *arg) {
    struct cl_probe *pr = arg;
    (void)zrc;
    (void)stat;
    pr->exists = err == SF_OK;
    if (err != SF_OK && err != SF_ERR_NOTFOUND)
        pr->a->read_err = 1;
    admin_read_done(pr->a);
}

/* Issue an existence probe of the path printf(@fmt, ...) into a->probes[@which]. */
static void admin_probe(struct cl_admin *a, int which, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void admin_probe(struct cl_admin *a, int which, const char *fmt, ...) {
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    admin_read_issued(a, sf_zk_exists(a->cl->zk, path, NULL, NULL, admin_exists_cb,
                                      &a->probes[which]));
}

/* -- create -- */

static void create_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    int f;
    if (admin_multi_settled(a, err))
        return;
    f = first_failed(res, n);
    if (f == 0 && res[0].err == SF_ERR_EXISTS) {
        admin_finish(a, SF_ERR_EXISTS);
        return;
    }
    if (f >= 0 && f == a->key_index && res[f].err == SF_ERR_EXISTS &&
        a->retries++ < CL_ADMIN_RETRIES) {
        /* A config left over from an earlier incarnation of the topic: overwrite it. */
        a->ops[f] = sf_zk_op_set(a->ops[f].path, a->cfg_json, (int)strlen(a->cfg_json), -1);
        if (sf_zk_multi(a->cl->zk, a->ops, a->nops, create_multi_cb, a) == SF_OK)
            return;
    }
    admin_multi_failed(a, zrc);
}

int sf_cluster_topic_create(sf_cluster_t *cl, const char *topic, int32_t npartitions,
                            int16_t replication_factor, const int32_t *assignment,
                            const sf_cluster_config_entry_t *configs, int nconfigs,
                            sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a;
    int32_t *assign = NULL, *brokers = NULL, p;
    sf_cluster_partition_t *parts = NULL;
    uint8_t uuid[16];
    int rf = replication_factor, nb, i, nops, rc = SF_ERR_NOMEM;
    char *s;

    if (!sf_cluster_topic_name_valid(topic) || npartitions < 1 ||
        npartitions > SF_CLUSTER_MAX_PARTITIONS || rf < 1 || rf > SF_CLUSTER_MAX_REPLICAS ||
        nconfigs < 0 || (nconfigs && !configs))
        return SF_ERR_INVALID;
    if (!ready_for_admin(cl))
        return SF_ERR_STATE;
    for (i = 0; i < nconfigs; i++)
        if (!configs[i].name || !*configs[i].name)
            return SF_ERR_INVALID;
    assign = malloc((size_t)npartitions * (size_t)rf * sizeof(int32_t));
    if (!assign)
        return SF_ERR_NOMEM;
    if (assignment) {
        if (!assignment_valid(assignment, npartitions, rf)) {
            free(assign);
            return SF_ERR_INVALID;
        }
        memcpy(assign, assignment, (size_t)npartitions * (size_t)rf * sizeof(int32_t));
    } else {
        nb = live_broker_ids(cl->current, &brokers);
        if (nb < 0) {
            free(assign);
            return SF_ERR_NOMEM;
        }
        if (rf > nb ||
            sf_cluster_assign_replicas(brokers, nb, npartitions, rf, 0, -1, assign) != SF_OK) {
            free(brokers);
            free(assign);
            return SF_ERR_INVALID;
        }
        free(brokers);
    }
    if (sf_cluster_uuid_random(uuid) != SF_OK) {
        free(assign);
        return SF_ERR_IO;
    }
    a = admin_new(cl, A_CREATE, topic, done, arg);
    parts = calloc((size_t)npartitions, sizeof(*parts));
    if (!a || !parts)
        goto out;
    for (p = 0; p < npartitions; p++) {
        parts[p].partition = p;
        parts[p].replicas = assign + (size_t)p * (size_t)rf;
        parts[p].nreplicas = rf;
    }
    /* topic, partitions dir, 2 per partition, config; a path per op plus the topic json and
     * one state json per partition */
    nops = 3 + 2 * npartitions;
    if (admin_ops_reset(a, nops, nops + 1 + npartitions))
        goto out;
    s = admin_str(a, sf_cluster_topic_encode(uuid, parts, npartitions));
    if (!s || admin_op(a, SF_ZK_OP_CREATE, s, -1, "/brokers/topics/%s", topic) ||
        admin_op(a, SF_ZK_OP_CREATE, NULL, -1, "/brokers/topics/%s/partitions", topic))
        goto out;
    for (p = 0; p < npartitions; p++)
        if (admin_partition_ops(a, p, parts[p].replicas, rf))
            goto out;
    a->cfg_json = sf_cluster_config_encode(configs, nconfigs);
    a->key_index = a->nops;
    if (!a->cfg_json || admin_op(a, SF_ZK_OP_CREATE, a->cfg_json, -1, "/config/topics/%s", topic))
        goto out;
    rc = sf_zk_multi(cl->zk, a->ops, a->nops, create_multi_cb, a);
out:
    free(parts);
    free(assign);
    if (rc != SF_OK && a)
        admin_free(a);
    return rc;
}

/* -- delete -- */

static void delete_issue(struct cl_admin *a);

static void delete_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    int f;
    if (admin_multi_settled(a, err))
        return;
    f = first_failed(res, n);
    if (f >= 0 && f == a->key_index && res[f].err == SF_ERR_NOTFOUND) {
        admin_finish(a, SF_ERR_NOTFOUND); /* the topic node itself is missing */
        return;
    }
    if ((err == SF_ERR_NOTFOUND || err == SF_ERR_STATE) && a->retries++ < CL_ADMIN_RETRIES) {
        /* Raced with another change (a partition added or removed): read again. */
        delete_issue(a);
        return;
    }
    admin_multi_failed(a, zrc);
}

static void delete_build(struct cl_admin *a) {
    sf_cluster_t *cl = a->cl;
    int i, rc;
    if (a->read_err) {
        admin_finish(a, SF_ERR_IO);
        return;
    }
    rc = admin_ops_reset(a, 2 * a->nchildren + 4, 2 * a->nchildren + 4);
    for (i = 0; rc == SF_OK && i < a->nchildren; i++) {
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/brokers/topics/%s/partitions/%s/state",
                      a->topic, a->children[i]);
        if (rc == SF_OK)
            rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/brokers/topics/%s/partitions/%s",
                          a->topic, a->children[i]);
    }
    if (rc == SF_OK && !a->children_absent)
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/brokers/topics/%s/partitions", a->topic);
    a->key_index = a->nops;
    if (rc == SF_OK)
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/brokers/topics/%s", a->topic);
    if (rc == SF_OK && a->probes[P_CFG].exists)
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/config/topics/%s", a->topic);
    if (rc == SF_OK && a->probes[P_ADMIN].exists)
        rc = admin_op(a, SF_ZK_OP_DELETE, NULL, -1, "/admin/delete_topics/%s", a->topic);
    if (rc != SF_OK) {
        admin_finish(a, SF_ERR_NOMEM);
        return;
    }
    rc = sf_zk_multi(cl->zk, a->ops, a->nops, delete_multi_cb, a);
    if (rc != SF_OK)
        admin_finish(a, rc == SF_ERR_TOOLARGE ? SF_ERR_TOOLARGE : SF_ERR_IO);
}

static void delete_children_cb(int err, int zrc, char *const *children, int n,
                               const sf_zk_stat_t *stat, void *arg) {
    struct cl_admin *a = arg;
    int i;
    (void)zrc;
    (void)stat;
    for (i = 0; i < a->nchildren; i++)
        free(a->children[i]);
    free(a->children);
    a->children = NULL;
    a->nchildren = 0;
    a->children_absent = err == SF_ERR_NOTFOUND;
    if (err == SF_OK && n > 0) {
        a->children = calloc((size_t)n, sizeof(char *));
        if (!a->children) {
            a->read_err = 1;
        } else {
            for (i = 0; i < n; i++) {
                if (!(a->children[i] = strdup(children[i]))) {
                    a->read_err = 1;
                    break;
                }
                a->nchildren = i + 1;
            }
        }
    } else if (err != SF_OK && err != SF_ERR_NOTFOUND) {
        a->read_err = 1;
    }
    admin_read_done(a);
}

static void delete_issue(struct cl_admin *a) {
    char path[512];
    a->read_err = 0;
    a->outstanding = 1; /* guard while issuing */
    snprintf(path, sizeof(path), "/brokers/topics/%s/partitions", a->topic);
    admin_read_issued(a, sf_zk_get_children(a->cl->zk, path, NULL, NULL, delete_children_cb, a));
    admin_probe(a, P_CFG, "/config/topics/%s", a->topic);
    admin_probe(a, P_ADMIN, "/admin/delete_topics/%s", a->topic);
    admin_read_done(a);
}

int sf_cluster_topic_delete(sf_cluster_t *cl, const char *topic, sf_cluster_done_cb done,
                            void *arg) {
    struct cl_admin *a;
    if (!sf_cluster_topic_name_valid(topic))
        return SF_ERR_INVALID;
    if (!ready_for_admin(cl))
        return SF_ERR_STATE;
    a = admin_new(cl, A_DELETE, topic, done, arg);
    if (!a)
        return SF_ERR_NOMEM;
    delete_issue(a);
    return SF_OK;
}

/* -- add partitions -- */

static void add_issue(struct cl_admin *a);

static void add_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    int f;
    if (admin_multi_settled(a, err))
        return;
    f = first_failed(res, n);
    if (f == 0 && res[0].err == SF_ERR_NOTFOUND) {
        admin_finish(a, SF_ERR_NOTFOUND);
        return;
    }
    if (f == 0 && res[0].err == SF_ERR_STATE && a->retries++ < CL_ADMIN_RETRIES) {
        add_issue(a); /* the topic changed since we read it */
        return;
    }
    admin_multi_failed(a, zrc);
}

static void add_build(struct cl_admin *a) {
    sf_cluster_t *cl = a->cl;
    sf_cluster_topic_t dec;
    sf_cluster_partition_t *parts = NULL;
    int32_t *assign = NULL, *brokers = NULL, cur, nnew, p;
    int rf, rc, err = SF_ERR_NOMEM;
    char *s;

    if (a->read_err) {
        admin_finish(a, SF_ERR_IO);
        return;
    }
    if (a->topic_missing) {
        admin_finish(a, SF_ERR_NOTFOUND);
        return;
    }
    if (sf_cluster_topic_decode(a->topic_data, (size_t)a->topic_len, &dec) != SF_OK ||
        dec.npartitions < 1) {
        sf_cluster_topic_clear(&dec);
        sf_log(SF_LOG_WARNING, "ZK", "cannot add partitions to %s: malformed topic znode",
               a->topic);
        admin_finish(a, SF_ERR_IO);
        return;
    }
    cur = dec.npartitions;
    rf = dec.partitions[0].nreplicas;
    nnew = a->new_total - cur;
    if (nnew < 1 || (a->assignment && a->nassignment != nnew * rf)) {
        sf_cluster_topic_clear(&dec);
        admin_finish(a, SF_ERR_INVALID);
        return;
    }
    assign = malloc((size_t)nnew * (size_t)rf * sizeof(int32_t));
    parts = calloc((size_t)a->new_total, sizeof(*parts));
    if (!assign || !parts)
        goto out;
    if (a->assignment) {
        memcpy(assign, a->assignment, (size_t)nnew * (size_t)rf * sizeof(int32_t));
    } else {
        int nb = cl->current ? live_broker_ids(cl->current, &brokers) : 0, start = 0;
        if (nb < 0)
            goto out;
        /* Kafka: continue from the broker of partition 0's first replica. */
        while (start < nb && brokers[start] < dec.partitions[0].replicas[0])
            start++;
        if (start >= nb)
            start = 0;
        if (rf > nb ||
            sf_cluster_assign_replicas(brokers, nb, nnew, rf, cur, start, assign) != SF_OK) {
            err = SF_ERR_INVALID;
            goto out;
        }
    }
    for (p = 0; p < a->new_total; p++) {
        parts[p].partition = p;
        if (p < cur) {
            parts[p].replicas = dec.partitions[p].replicas;
            parts[p].nreplicas = dec.partitions[p].nreplicas;
        } else {
            parts[p].replicas = assign + (size_t)(p - cur) * (size_t)rf;
            parts[p].nreplicas = rf;
        }
    }
    /* topic set, partitions dir, 2 per new partition; a path per op plus the topic json and
     * one state json per new partition */
    if (admin_ops_reset(a, 2 + 2 * nnew, 3 + 3 * nnew))
        goto out;
    s = admin_str(a, sf_cluster_topic_encode(dec.topic_id, parts, a->new_total));
    if (!s || admin_op(a, SF_ZK_OP_SET, s, a->topic_version, "/brokers/topics/%s", a->topic))
        goto out;
    if (!a->probes[P_PARTS_DIR].exists &&
        admin_op(a, SF_ZK_OP_CREATE, NULL, -1, "/brokers/topics/%s/partitions", a->topic))
        goto out;
    for (p = cur; p < a->new_total; p++)
        if (admin_partition_ops(a, p, parts[p].replicas, parts[p].nreplicas))
            goto out;
    rc = sf_zk_multi(cl->zk, a->ops, a->nops, add_multi_cb, a);
    err = rc == SF_OK ? SF_OK : rc == SF_ERR_TOOLARGE ? SF_ERR_TOOLARGE : SF_ERR_IO;
out:
    free(brokers);
    free(assign);
    free(parts);
    sf_cluster_topic_clear(&dec);
    if (err != SF_OK)
        admin_finish(a, err);
}

static void add_topic_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                         void *arg) {
    struct cl_admin *a = arg;
    (void)zrc;
    free(a->topic_data);
    a->topic_data = NULL;
    a->topic_missing = err == SF_ERR_NOTFOUND;
    if (err == SF_OK && stat) {
        a->topic_data = malloc((size_t)len + 1);
        if (!a->topic_data) {
            a->read_err = 1;
        } else {
            memcpy(a->topic_data, data, (size_t)len + 1);
            a->topic_len = len;
            a->topic_version = stat->version;
        }
    } else if (err != SF_ERR_NOTFOUND) {
        a->read_err = 1;
    }
    admin_read_done(a);
}

static void add_issue(struct cl_admin *a) {
    char path[512];
    a->read_err = 0;
    a->outstanding = 1; /* guard while issuing */
    path_topic(path, sizeof(path), a->topic);
    admin_read_issued(a, sf_zk_get(a->cl->zk, path, NULL, NULL, add_topic_cb, a));
    admin_probe(a, P_PARTS_DIR, "/brokers/topics/%s/partitions", a->topic);
    admin_read_done(a);
}

int sf_cluster_partitions_add(sf_cluster_t *cl, const char *topic, int32_t new_total,
                              const int32_t *assignment, sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a;
    if (!sf_cluster_topic_name_valid(topic) || new_total < 2 ||
        new_total > SF_CLUSTER_MAX_PARTITIONS)
        return SF_ERR_INVALID;
    if (!ready_for_admin(cl))
        return SF_ERR_STATE;
    a = admin_new(cl, A_ADD, topic, done, arg);
    if (!a)
        return SF_ERR_NOMEM;
    a->new_total = new_total;
    if (assignment) {
        /* Sized from the current snapshot (see cluster.h). */
        const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(cl->current, topic);
        int rf, nnew;
        if (!t || t->npartitions < 1) {
            admin_free(a);
            return SF_ERR_NOTFOUND;
        }
        rf = t->partitions[0].nreplicas;
        nnew = new_total - t->npartitions;
        if (nnew < 1 || rf < 1 || !assignment_valid(assignment, nnew, rf)) {
            admin_free(a);
            return SF_ERR_INVALID;
        }
        a->nassignment = nnew * rf;
        a->assignment = malloc((size_t)a->nassignment * sizeof(int32_t));
        if (!a->assignment) {
            admin_free(a);
            return SF_ERR_NOMEM;
        }
        memcpy(a->assignment, assignment, (size_t)a->nassignment * sizeof(int32_t));
    }
    add_issue(a);
    return SF_OK;
}

/* -- config -- */

static void config_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    struct cl_admin *a = arg;
    int f;
    if (admin_multi_settled(a, err))
        return;
    f = first_failed(res, n);
    if (f == 0 && res[0].err == SF_ERR_NOTFOUND) {
        admin_finish(a, SF_ERR_NOTFOUND);
        return;
    }
    if (f == 1 && a->retries++ < CL_ADMIN_RETRIES &&
        (res[1].err == SF_ERR_NOTFOUND || res[1].err == SF_ERR_EXISTS)) {
        int len = (int)strlen(a->cfg_json);
        if (res[1].err == SF_ERR_NOTFOUND) /* no config node yet: create it */
            a->ops[1] = sf_zk_op_create(a->ops[1].path, a->cfg_json, len, SF_ZK_PERSISTENT);
        else /* created meanwhile: set it */
            a->ops[1] = sf_zk_op_set(a->ops[1].path, a->cfg_json, len, -1);
        if (sf_zk_multi(a->cl->zk, a->ops, 2, config_multi_cb, a) == SF_OK)
            return;
    }
    admin_multi_failed(a, zrc);
}

int sf_cluster_topic_config_set(sf_cluster_t *cl, const char *topic,
                                const sf_cluster_config_entry_t *configs, int n,
                                sf_cluster_done_cb done, void *arg) {
    struct cl_admin *a;
    int i, rc;
    if (!sf_cluster_topic_name_valid(topic) || n < 0 || (n && !configs))
        return SF_ERR_INVALID;
    for (i = 0; i < n; i++)
        if (!configs[i].name || !*configs[i].name)
            return SF_ERR_INVALID;
    if (!ready_for_admin(cl))
        return SF_ERR_STATE;
    a = admin_new(cl, A_CONFIG, topic, done, arg);
    if (!a)
        return SF_ERR_NOMEM;
    a->cfg_json = sf_cluster_config_encode(configs, n);
    if (!a->cfg_json || admin_ops_reset(a, 2, 2) ||
        admin_op(a, SF_ZK_OP_CHECK, NULL, -1, "/brokers/topics/%s", topic) ||
        admin_op(a, SF_ZK_OP_SET, a->cfg_json, -1, "/config/topics/%s", topic)) {
        admin_free(a);
        return SF_ERR_NOMEM;
    }
    rc = sf_zk_multi(cl->zk, a->ops, 2, config_multi_cb, a);
    if (rc != SF_OK)
        admin_free(a);
    return rc;
}
