/* The znode layout's JSON codecs, topic names and Kafka's uuids (see znode.h). */
#include "znode.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <jansson.h>

#include "err.h"

int sf_znode_topic_name_valid(const char *name) {
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

void sf_znode_uuid_to_str(const uint8_t uuid[16], char out[23]) {
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

int sf_znode_uuid_from_str(const char *s, uint8_t uuid[16]) {
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

int sf_znode_uuid_random(uint8_t uuid[16]) {
    static const uint8_t zero[16];
    char s[23];
    for (;;) {
        if (random_bytes(uuid, 16) != SF_OK)
            return SF_ERR_IO;
        uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40); /* version 4 */
        uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80); /* IETF variant */
        sf_znode_uuid_to_str(uuid, s);
        /* Kafka rejects the zero uuid and ids whose text starts with '-' (they look like
         * command-line options). */
        if (memcmp(uuid, zero, 16) && s[0] != '-')
            return SF_OK;
    }
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

/* ---- /brokers/ids/<id> ---- */

char *sf_znode_broker_encode(const sf_cluster_broker_t *b, int64_t timestamp_ms) {
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

int sf_znode_broker_decode(const char *json, size_t len, sf_cluster_broker_t *out) {
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

/* Kafka's "adding_replicas" / "removing_replicas" maps: partitions with a non-empty list. */
static json_t *reassign_map(const sf_cluster_partition_t *parts, int nparts, int removing) {
    json_t *map = json_object();
    char key[16];
    int i;
    for (i = 0; map && i < nparts; i++) {
        const int32_t *v = removing ? parts[i].removing : parts[i].adding;
        int n = removing ? parts[i].nremoving : parts[i].nadding;
        snprintf(key, sizeof(key), "%d", (int)parts[i].partition);
        if (n && json_object_set_new(map, key, int_array(v, n))) {
            json_decref(map);
            return NULL;
        }
    }
    return map;
}

char *sf_znode_topic_encode(const uint8_t topic_id[16], const sf_cluster_partition_t *parts,
                              int nparts) {
    json_t *o = json_object(), *map = json_object();
    char id[23], key[16];
    int i, bad = !o || !map, moving = 0;
    for (i = 0; !bad && i < nparts; i++) {
        snprintf(key, sizeof(key), "%d", (int)parts[i].partition);
        bad |= json_object_set_new(map, key, int_array(parts[i].replicas, parts[i].nreplicas));
        moving |= sf_cluster_partition_reassigning(&parts[i]);
    }
    if (!bad) {
        sf_znode_uuid_to_str(topic_id, id);
        bad |= json_object_set_new(o, "version", json_integer(moving ? 2 : 1));
        bad |= json_object_set_new(o, "topic_id", json_string(id));
        bad |= json_object_set(o, "partitions", map);
    }
    if (!bad && moving) {
        bad |= json_object_set_new(o, "adding_replicas", reassign_map(parts, nparts, 0));
        bad |= json_object_set_new(o, "removing_replicas", reassign_map(parts, nparts, 1));
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
int sf_znode_parse_id(const char *k, int32_t *out) {
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

/* An "adding_replicas" / "removing_replicas" map (absent or null: none) into @out's
 * partitions; every id must be a replica of its partition. */
static int reassign_decode(json_t *map, sf_cluster_topic_t *out, int removing) {
    const char *key;
    json_t *val;
    if (!map || json_is_null(map))
        return SF_OK;
    if (!json_is_object(map))
        return SF_ERR_MALFORMED;
    json_object_foreach(map, key, val) {
        sf_cluster_partition_t *part;
        int32_t p, **v;
        int *n, i, j, rc;
        if (sf_znode_parse_id(key, &p) || p >= out->npartitions)
            return SF_ERR_MALFORMED;
        part = &out->partitions[p];
        v = removing ? &part->removing : &part->adding;
        n = removing ? &part->nremoving : &part->nadding;
        free(*v);
        if ((rc = get_int_array(val, SF_CLUSTER_MAX_REPLICAS, 0, v, n)) != SF_OK)
            return rc;
        for (i = 0; i < *n; i++) {
            for (j = 0; j < part->nreplicas && part->replicas[j] != (*v)[i]; j++)
                ;
            if (j == part->nreplicas)
                return SF_ERR_MALFORMED;
        }
    }
    return SF_OK;
}

int sf_znode_topic_decode(const char *json, size_t len, sf_cluster_topic_t *out) {
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
        if (!json_is_string(id) || sf_znode_uuid_from_str(json_string_value(id), out->topic_id))
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
        if (sf_znode_parse_id(key, &p) || (size_t)p >= n)
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
    if ((rc = reassign_decode(json_object_get(o, "adding_replicas"), out, 0)) != SF_OK ||
        (rc = reassign_decode(json_object_get(o, "removing_replicas"), out, 1)) != SF_OK)
        goto err;
    json_decref(o);
    return SF_OK;
err:
    json_decref(o);
    sf_cluster_topic_clear(out);
    return rc;
}

/* ---- /brokers/topics/<t>/partitions/<p>/state ---- */

char *sf_znode_pstate_encode(const sf_cluster_partition_t *p) {
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

int sf_znode_pstate_decode(const char *json, size_t len, sf_cluster_partition_t *p) {
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

char *sf_znode_config_encode(const sf_cluster_config_entry_t *configs, int n) {
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

int sf_znode_config_decode(const char *json, size_t len, sf_cluster_config_entry_t **out,
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

/* ---- /config/changes/config_change_<seq> ---- */

char *sf_znode_config_change_encode(const char *entity_path) {
    json_t *o = json_object();
    int bad = !o || !entity_path;
    if (!bad) {
        bad |= json_object_set_new(o, "version", json_integer(2));
        bad |= json_object_set_new(o, "entity_path", json_string(entity_path));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

/* ---- /controller, /controller_epoch, /cluster/id ---- */

char *sf_znode_controller_encode(int32_t broker_id, int64_t timestamp_ms) {
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

int sf_znode_controller_decode(const char *json, size_t len, int32_t *broker_id) {
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

char *sf_znode_buckets_encode(const sf_cluster_bucket_t *v, int n) {
    json_t *o = json_object(), *a = json_array();
    int bad = !o || !a, i;
    for (i = 0; !bad && i < n; i++) {
        json_t *e = json_object();
        bad |= !e || json_object_set_new(e, "broker", json_integer(v[i].broker)) ||
               json_object_set_new(e, "epoch", json_integer(v[i].epoch));
        bad |= json_array_append_new(a, e);
    }
    if (!bad) {
        bad |= json_object_set_new(o, "version", json_integer(1));
        bad |= json_object_set_new(o, "buckets", a);
        a = NULL;
    }
    json_decref(a);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

int sf_znode_buckets_decode(const char *json, size_t len, sf_cluster_bucket_t **out, int *n) {
    json_t *o = load(json, len), *a;
    sf_cluster_bucket_t *v = NULL;
    size_t i, cnt = 0;
    int rc = SF_ERR_MALFORMED;
    *out = NULL;
    *n = 0;
    if (!o)
        return rc;
    a = json_object_get(o, "buckets");
    if (check_version(o) || !json_is_array(a) || (cnt = json_array_size(a)) < 1 ||
        cnt > SF_CLUSTER_MAX_BUCKETS)
        goto out;
    if (!(v = calloc(cnt, sizeof(*v)))) {
        rc = SF_ERR_NOMEM;
        goto out;
    }
    for (i = 0; i < cnt; i++) {
        json_int_t b, e;
        json_t *x = json_array_get(a, i);
        if (!json_is_object(x) || get_int(x, "broker", -1, INT32_MAX, &b) ||
            get_int(x, "epoch", 0, INT32_MAX, &e))
            goto out;
        v[i].broker = (int32_t)b;
        v[i].epoch = (int32_t)e;
    }
    *out = v;
    *n = (int)cnt;
    v = NULL;
    rc = SF_OK;
out:
    free(v);
    json_decref(o);
    return rc;
}

void sf_znode_tps_free(sf_znode_tp_t *v, int n) {
    int i;
    for (i = 0; v && i < n; i++) {
        free(v[i].topic);
        free(v[i].replicas);
    }
    free(v);
}

/* {"version":1,"partitions":[{"topic":..,"partition":..[,"replicas":[..]]}]}: with
 * @with_replicas every entry has its replica list. */
static int tps_decode(const char *json, size_t len, int with_replicas, sf_znode_tp_t **out,
                      int *n) {
    json_t *o = load(json, len), *a, *e;
    size_t i, cnt;
    sf_znode_tp_t *v = NULL;
    int rc = SF_ERR_MALFORMED;
    *out = NULL;
    *n = 0;
    if (!o || check_version(o) || !(a = json_object_get(o, "partitions")) || !json_is_array(a))
        goto bad;
    cnt = json_array_size(a);
    if (cnt && !(v = calloc(cnt, sizeof(*v)))) {
        rc = SF_ERR_NOMEM;
        goto bad;
    }
    json_array_foreach(a, i, e) {
        json_t *t = json_is_object(e) ? json_object_get(e, "topic") : NULL;
        json_int_t p;
        if (!t || !json_is_string(t) || !sf_znode_topic_name_valid(json_string_value(t)) ||
            get_int(e, "partition", 0, INT32_MAX, &p))
            goto bad;
        *n = (int)i + 1;
        v[i].partition = (int32_t)p;
        if (!(v[i].topic = strdup(json_string_value(t)))) {
            rc = SF_ERR_NOMEM;
            goto bad;
        }
        if (with_replicas &&
            (rc = get_int_array(json_object_get(e, "replicas"), SF_CLUSTER_MAX_REPLICAS, 0,
                                &v[i].replicas, &v[i].nreplicas)) != SF_OK)
            goto bad;
        rc = SF_ERR_MALFORMED;
    }
    json_decref(o);
    *out = v;
    return SF_OK;
bad:
    sf_znode_tps_free(v, *n);
    *n = 0;
    if (o)
        json_decref(o);
    return rc;
}

int sf_znode_preferred_decode(const char *json, size_t len, sf_znode_tp_t **out, int *n) {
    return tps_decode(json, len, 0, out, n);
}

int sf_znode_reassign_decode(const char *json, size_t len, sf_znode_tp_t **out, int *n) {
    return tps_decode(json, len, 1, out, n);
}

char *sf_znode_reassign_encode(const sf_znode_tp_t *v, int n) {
    json_t *o = json_object(), *a = json_array();
    int i, bad = !o || !a;
    for (i = 0; !bad && i < n; i++) {
        json_t *e = json_object();
        bad |= !e || json_object_set_new(e, "topic", json_string(v[i].topic)) ||
               json_object_set_new(e, "partition", json_integer(v[i].partition)) ||
               json_object_set_new(e, "replicas", int_array(v[i].replicas, v[i].nreplicas)) ||
               json_array_append(a, e);
        json_decref(e);
    }
    bad |= bad || json_object_set_new(o, "version", json_integer(1)) ||
           json_object_set(o, "partitions", a);
    json_decref(a);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

int sf_znode_epoch_decode(const char *data, size_t len, int32_t *epoch) {
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

char *sf_znode_cluster_id_encode(const char *id) {
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

int sf_znode_cluster_id_decode(const char *json, size_t len, char **id) {
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
