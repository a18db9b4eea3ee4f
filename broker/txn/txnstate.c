/* A transactional id's state as /transactions/<id> holds it:
 *
 *   {"version":1,"producer_id":4000,"producer_epoch":3,"last_producer_id":-1,
 *    "last_producer_epoch":-1,"timeout_ms":60000,"state":"Ongoing",
 *    "partitions":[{"topic":"orders","partitions":[0,2]}],
 *    "start_timestamp":1764700000000,"update_timestamp":1764700000123}
 *
 * and the partition set kept sorted in memory. */
#include "txn_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static const char *const names[TS_COUNT] = {
    "Empty",          "Ongoing",       "PrepareCommit", "PrepareAbort",
    "CompleteCommit", "CompleteAbort", "Dead",          "PrepareEpochFence"};

const char *txn_state_name(int state) {
    return state >= 0 && state < TS_COUNT ? names[state] : "Unknown";
}

int txn_state_of(const char *name) {
    int i;
    for (i = 0; i < TS_COUNT; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

void txn_meta_init(txn_meta_t *m) {
    memset(m, 0, sizeof(*m));
    m->producer_id = m->last_producer_id = -1;
    m->epoch = m->last_epoch = -1;
    m->state = TS_EMPTY;
    m->start_ms = -1;
}

void txn_meta_clear_parts(txn_meta_t *m) {
    int i;
    for (i = 0; i < m->nparts; i++)
        free(m->parts[i].topic);
    free(m->parts);
    m->parts = NULL;
    m->nparts = 0;
}

void txn_meta_free(txn_meta_t *m) {
    txn_meta_clear_parts(m);
}

int txn_meta_copy(txn_meta_t *dst, const txn_meta_t *src) {
    int i;
    *dst = *src;
    dst->parts = NULL;
    dst->nparts = 0;
    if (src->nparts && !(dst->parts = calloc((size_t)src->nparts, sizeof(txn_part_t))))
        return SF_ERR_NOMEM;
    for (i = 0; i < src->nparts; i++, dst->nparts++) {
        dst->parts[i].partition = src->parts[i].partition;
        if (!(dst->parts[i].topic = strdup(src->parts[i].topic))) {
            txn_meta_free(dst);
            return SF_ERR_NOMEM;
        }
    }
    return SF_OK;
}

int txn_meta_find(const txn_meta_t *m, const char *topic, int32_t partition) {
    int lo = 0, hi = m->nparts - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, r = strcmp(m->parts[mid].topic, topic);
        if (!r)
            r = (m->parts[mid].partition > partition) - (m->parts[mid].partition < partition);
        if (!r)
            return mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

int txn_meta_add(txn_meta_t *m, const char *topic, int32_t partition) {
    int i = txn_meta_find(m, topic, partition);
    txn_part_t *v;
    char *t;
    if (i >= 0)
        return SF_OK;
    i = -i - 1;
    if (!(t = strdup(topic)))
        return SF_ERR_NOMEM;
    if (!(v = realloc(m->parts, (size_t)(m->nparts + 1) * sizeof(*v)))) {
        free(t);
        return SF_ERR_NOMEM;
    }
    m->parts = v;
    memmove(&v[i + 1], &v[i], (size_t)(m->nparts - i) * sizeof(*v));
    v[i].topic = t;
    v[i].partition = partition;
    m->nparts++;
    return SF_OK;
}

static json_t *parts_json(const txn_meta_t *m) {
    json_t *arr = json_array(), *cur = NULL;
    int i;
    for (i = 0; arr && i < m->nparts; i++) {
        if (!cur || strcmp(m->parts[i].topic, m->parts[i - 1].topic)) {
            json_t *o = json_object();
            cur = json_array();
            if (!o || !cur || json_object_set_new(o, "topic", json_string(m->parts[i].topic)) ||
                json_object_set_new(o, "partitions", cur) || json_array_append_new(arr, o)) {
                json_decref(o);
                json_decref(arr);
                return NULL;
            }
        }
        if (json_array_append_new(cur, json_integer(m->parts[i].partition))) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

char *txn_meta_encode(const txn_meta_t *m) {
    json_t *o = json_pack("{s:i,s:I,s:i,s:I,s:i,s:i,s:s,s:o,s:I,s:I}", "version", 1,
                          "producer_id", (json_int_t)m->producer_id, "producer_epoch",
                          (int)m->epoch, "last_producer_id", (json_int_t)m->last_producer_id,
                          "last_producer_epoch", (int)m->last_epoch, "timeout_ms",
                          (int)m->timeout_ms, "state", txn_state_name(m->state), "partitions",
                          parts_json(m), "start_timestamp", (json_int_t)m->start_ms,
                          "update_timestamp", (json_int_t)m->update_ms);
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static int parts_decode(txn_meta_t *m, json_t *arr) {
    size_t i, k;
    json_t *o, *p;
    if (!json_is_array(arr))
        return SF_ERR_MALFORMED;
    json_array_foreach(arr, i, o) {
        const char *topic = json_string_value(json_object_get(o, "topic"));
        json_t *ps = json_object_get(o, "partitions");
        if (!topic || !json_is_array(ps))
            return SF_ERR_MALFORMED;
        json_array_foreach(ps, k, p) {
            if (!json_is_integer(p) || json_integer_value(p) < 0 ||
                json_integer_value(p) > INT32_MAX)
                return SF_ERR_MALFORMED;
            if (txn_meta_add(m, topic, (int32_t)json_integer_value(p)) != SF_OK)
                return SF_ERR_NOMEM;
        }
    }
    return SF_OK;
}

int txn_meta_decode(txn_meta_t *m, const char *data) {
    json_t *o = json_loads(data, 0, NULL), *parts = NULL;
    json_int_t pid, lpid, start, update;
    int version, epoch, lepoch, timeout, rc = SF_ERR_MALFORMED;
    const char *state;
    txn_meta_init(m);
    if (o && !json_unpack(o, "{s:i,s:I,s:i,s:I,s:i,s:i,s:s,s:o,s:I,s:I}", "version", &version,
                          "producer_id", &pid, "producer_epoch", &epoch, "last_producer_id",
                          &lpid, "last_producer_epoch", &lepoch, "timeout_ms", &timeout, "state",
                          &state, "partitions", &parts, "start_timestamp", &start,
                          "update_timestamp", &update) &&
        version == 1 && epoch >= -1 && epoch <= INT16_MAX && lepoch >= -1 &&
        lepoch <= INT16_MAX && txn_state_of(state) >= 0) {
        m->producer_id = pid;
        m->last_producer_id = lpid;
        m->epoch = (int16_t)epoch;
        m->last_epoch = (int16_t)lepoch;
        m->timeout_ms = timeout;
        m->state = txn_state_of(state);
        m->start_ms = start;
        m->update_ms = update;
        rc = parts_decode(m, parts);
    }
    json_decref(o);
    if (rc != SF_OK)
        txn_meta_free(m);
    return rc;
}
