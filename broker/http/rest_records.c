/* Producing records over HTTP, as Confluent's REST Proxy v3 does:
 *
 *   POST /v3/clusters/<id>/topics/<topic>/records        one record object, or several
 *        concatenated (a stream): each answered with its own result, one per line
 *   POST /v3/clusters/<id>/topics/<topic>/records:batch  {"entries": [{"id": ..., ...}]}:
 *        207 with {"successes": [...], "failures": [...]}
 *
 * A record object: {"partition_id": N, "key": {"type": "BINARY"|"STRING"|"JSON", "data": ...},
 * "value": {...}, "headers": [{"name": "h", "value": "<base64>"}], "timestamp": "ISO 8601" or
 * milliseconds}; every field is optional (no partition: the key's hash or the sticky
 * partitioner; type JSON when none is given). The whole body is read before anything is
 * sent, and a record that does not parse is answered with 400 without being sent. Records go
 * through the gateway's producer (acks=all) to each partition's leader, wherever it is. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>

#include "base64.h"
#include "gateway.h"
#include "httpd.h"
#include "rest.h"

/* The most records one request may carry. */
#define MAX_RECORDS 10000

typedef enum { PRODUCE_ONE, PRODUCE_STREAM, PRODUCE_BATCH } produce_mode_t;

/* One record of the request: its payload (owned) and, when it did not parse, why. */
typedef struct entry {
    json_t *id;       /* records:batch: the entry's id */
    char *key, *value; /* NULL: a null key or value */
    size_t key_len, value_len;
    const char *key_type, *value_type;
    sf_header_t *headers;
    size_t nheaders;
    int status;    /* 0: valid, else the HTTP status of its error */
    char *error;   /* with status */
    long rec;      /* its index in the job's records, -1 when not sent */
} entry_t;

typedef struct produce {
    sf_rest_links_t links;
    char topic[256];
    produce_mode_t mode;
    entry_t *entries;
    size_t n;
} produce_t;

static void produce_free(void *arg) {
    produce_t *p = arg;
    size_t i, h;
    if (!p)
        return;
    for (i = 0; i < p->n; i++) {
        entry_t *e = &p->entries[i];
        json_decref(e->id);
        free(e->key);
        free(e->value);
        for (h = 0; h < e->nheaders; h++) {
            free((char *)e->headers[h].key);
            free((void *)e->headers[h].value);
        }
        free(e->headers);
        free(e->error);
    }
    free(p->entries);
    free(p);
}

/* ---- parsing ---- */

static int entry_fail(entry_t *e, int status, const char *fmt, const char *arg) {
    char msg[300];
    snprintf(msg, sizeof(msg), fmt, arg);
    if (!e->status) {
        e->status = status;
        e->error = strdup(msg);
    }
    return -1;
}

/* {"type": ..., "data": ...} into *@out (NULL for null data or an absent @o). */
static int parse_data(entry_t *e, json_t *o, const char *what, char **out, size_t *len,
                      const char **type) {
    json_t *data, *t;
    const char *s;
    *type = NULL;
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o))
        return entry_fail(e, 400, "%s must be an object with type and data", what);
    t = json_object_get(o, "type");
    s = json_is_string(t) ? json_string_value(t) : "JSON";
    /* the answer names the type after the request's JSON is gone: one of these */
    *type = !strcmp(s, "JSON") ? "JSON" : !strcmp(s, "BINARY") ? "BINARY"
            : !strcmp(s, "STRING")                             ? "STRING"
                                                               : NULL;
    if ((t && !json_is_string(t)) || !*type)
        return entry_fail(e, 400, "%s.type must be BINARY, STRING or JSON (schemas are not "
                          "served here)", what);
    data = json_object_get(o, "data");
    if (!data || json_is_null(data))
        return 0;
    if (!strcmp(*type, "JSON")) {
        if (!(*out = json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY)))
            return entry_fail(e, 500, "out of memory for %s", what);
        *len = strlen(*out);
        return 0;
    }
    if (!json_is_string(data))
        return entry_fail(e, 400, "%s.data must be a string for this type", what);
    s = json_string_value(data);
    if (!strcmp(*type, "STRING")) {
        *len = json_string_length(data);
        if (!(*out = malloc(*len + 1)))
            return entry_fail(e, 500, "out of memory for %s", what);
        memcpy(*out, s, *len + 1);
    } else if (!(*out = sf_base64_decode(s, json_string_length(data), len))) {
        return entry_fail(e, 400, "%s.data is not base64", what);
    }
    return 0;
}

static int parse_headers(entry_t *e, json_t *a) {
    json_t *h;
    size_t i, n;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || (n = json_array_size(a)) > 1000)
        return entry_fail(e, 400, "%s must be an array of {name, value}", "headers");
    if (n && !(e->headers = calloc(n, sizeof(*e->headers))))
        return entry_fail(e, 500, "out of memory for %s", "headers");
    json_array_foreach(a, i, h) {
        sf_header_t *hd = &e->headers[e->nheaders];
        json_t *name = json_object_get(h, "name"), *v = json_object_get(h, "value");
        if (!json_is_string(name) || (v && !json_is_null(v) && !json_is_string(v)))
            return entry_fail(e, 400, "%s must be an array of {name, value}", "headers");
        if (!(hd->key = strdup(json_string_value(name))))
            return entry_fail(e, 500, "out of memory for %s", "headers");
        e->nheaders++;
        if (json_is_string(v) && !(hd->value = sf_base64_decode(json_string_value(v),
                                                                json_string_length(v),
                                                                &hd->value_len)))
            return entry_fail(e, 400, "header %s has a value that is not base64",
                              json_string_value(name));
    }
    return 0;
}

/* "2026-01-02T03:04:05[.mmm][Z|+hh:mm]" or milliseconds into *@ms; -1 when neither. */
static int parse_timestamp(json_t *t, int64_t *ms) {
    struct tm tm;
    const char *s, *rest;
    int64_t frac = 0, scale = 100, off = 0;
    int hh, mm;
    if (json_is_integer(t)) {
        *ms = json_integer_value(t);
        return *ms >= 0 ? 0 : -1;
    }
    if (!json_is_string(t))
        return -1;
    memset(&tm, 0, sizeof(tm));
    s = json_string_value(t);
    if (!(rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
        return -1;
    if (*rest == '.')
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, scale /= 10)
            frac += (*rest - '0') * scale;
    if (*rest == 'Z' && !rest[1]) {
        off = 0;
    } else if ((*rest == '+' || *rest == '-') && sscanf(rest + 1, "%2d:%2d", &hh, &mm) == 2 &&
               strlen(rest) == 6) {
        off = (*rest == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
    } else if (*rest) {
        return -1;
    }
    *ms = ((int64_t)timegm(&tm) - off) * 1000 + frac;
    return *ms >= 0 ? 0 : -1;
}

/* Parse one record object @o into @e and @rec (whose pointers go into @e). */
static void parse_record(const sf_cluster_topic_t *t, json_t *o, entry_t *e, sf_record_t *rec) {
    json_t *pid = json_object_get(o, "partition_id"), *ts = json_object_get(o, "timestamp");
    char num[32];
    memset(rec, 0, sizeof(*rec));
    rec->partition = SF_PARTITION_ANY;
    if (!json_is_object(o)) {
        entry_fail(e, 400, "%s", "a record must be a JSON object");
        return;
    }
    if (pid && !json_is_null(pid)) {
        snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(pid));
        if (!json_is_integer(pid) || json_integer_value(pid) < 0)
            entry_fail(e, 400, "%s", "partition_id must be a partition number");
        else if (json_integer_value(pid) >= t->npartitions)
            entry_fail(e, 404, "This server does not host this topic-partition (partition %s).",
                       num);
        else
            rec->partition = (int32_t)json_integer_value(pid);
    }
    if (ts && !json_is_null(ts) && parse_timestamp(ts, &rec->timestamp) != 0)
        entry_fail(e, 400, "%s", "timestamp must be ISO 8601 or milliseconds since the epoch");
    parse_data(e, json_object_get(o, "key"), "key", &e->key, &e->key_len, &e->key_type);
    parse_data(e, json_object_get(o, "value"), "value", &e->value, &e->value_len,
               &e->value_type);
    parse_headers(e, json_object_get(o, "headers"));
    rec->key = e->key;
    rec->key_len = e->key_len;
    rec->value = e->value;
    rec->value_len = e->value_len;
    rec->headers = e->headers;
    rec->header_count = e->nheaders;
}

/* The record objects of the body: one, a stream of concatenated ones, or records:batch's
 * entries. A new array, or NULL after answering 400. */
static json_t *body_records(sf_rest_t *r, produce_mode_t *mode) {
    struct evbuffer *in = evhttp_request_get_input_buffer(r->req);
    size_t len = evbuffer_get_length(in), pos = 0;
    const char *buf = (const char *)evbuffer_pullup(in, -1);
    json_t *all = json_array(), *o, *entries;
    json_error_t err;
    if (!all) {
        sf_httpd_error(r->req, 503, NULL, "out of memory");
        return NULL;
    }
    while (pos < len) {
        while (pos < len && strchr(" \t\r\n", buf[pos]))
            pos++;
        if (pos == len)
            break;
        if (!(o = json_loadb(buf + pos, len - pos, JSON_DISABLE_EOF_CHECK, &err))) {
            sf_httpd_error(r->req, 400, "INVALID_REQUEST", "the body is not JSON: %s (at %zu)",
                           err.text, pos + (size_t)err.position);
            json_decref(all);
            return NULL;
        }
        pos += (size_t)err.position;
        if (json_array_size(all) == MAX_RECORDS) {
            json_decref(o);
            json_decref(all);
            sf_httpd_error(r->req, 400, "INVALID_REQUEST", "more than %d records", MAX_RECORDS);
            return NULL;
        }
        json_array_append_new(all, o);
    }
    if (*mode != PRODUCE_BATCH) {
        if (json_array_size(all) > 1)
            *mode = PRODUCE_STREAM;
        if (json_array_size(all) == 0)
            json_array_append_new(all, json_object()); /* an empty body: a null record */
        return all;
    }
    entries = json_array_size(all) == 1 ? json_object_get(json_array_get(all, 0), "entries")
                                        : NULL;
    if (!json_is_array(entries) || json_array_size(entries) > MAX_RECORDS) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST",
                       "records:batch takes {\"entries\": [...]} of at most %d records",
                       MAX_RECORDS);
        json_decref(all);
        return NULL;
    }
    json_incref(entries);
    json_decref(all);
    return entries;
}

/* ---- answers ---- */

static json_t *data_info(const char *type, size_t len, int present) {
    return present || type ? json_pack("{s:s, s:I}", "type", type ? type : "JSON", "size",
                                       (json_int_t)len)
                           : json_null();
}

/* The result of @e: a ProduceResponse, or its error. */
static json_t *entry_result(const produce_t *p, const entry_t *e, const sf_gw_record_t *r,
                            int *status) {
    char ts[40], frac[8];
    struct tm tm;
    time_t sec;
    json_t *o;
    int err = r ? r->err : 0;
    if (e->status || err) {
        *status = e->status ? e->status : sf_gw_status_of(err);
        o = json_pack("{s:i, s:s}", "error_code", *status, "message",
                      e->status ? e->error : sf_error_str(err));
        if (o && !e->status)
            json_object_set_new(o, "kafka_error", json_string(sf_error_name(err)));
        return o;
    }
    *status = 200;
    sec = (time_t)(r->timestamp / 1000);
    gmtime_r(&sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(frac, sizeof(frac), ".%03dZ", (int)(r->timestamp % 1000));
    return json_pack("{s:i, s:s, s:s, s:i, s:I, s:s+, s:o, s:o}", "error_code", 200,
                     "cluster_id", p->links.cluster_id, "topic_name", p->topic, "partition_id",
                     (int)r->partition, "offset", (json_int_t)r->offset, "timestamp", ts, frac,
                     "key", data_info(e->key_type, e->key_len, e->key != NULL), "value",
                     data_info(e->value_type, e->value_len, e->value != NULL));
}

/* On the loop, every record handled: the answer in the request's form. */
static void produce_done(sf_gw_job_t *job) {
    produce_t *p = job->arg;
    json_t *batch = NULL, *ok, *failed, *o;
    struct evbuffer *lines;
    size_t i;
    int status = 500;
    if (job->body) { /* the gateway failed it */
        sf_gw_finish(job);
        return;
    }
    ok = json_array();
    failed = json_array();
    lines = evbuffer_new();
    job->status = 200;
    for (i = 0; i < p->n; i++) {
        const entry_t *e = &p->entries[i];
        o = entry_result(p, e, e->rec >= 0 ? &job->records[e->rec] : NULL, &status);
        if (p->mode == PRODUCE_BATCH) {
            json_object_set(o, "id", e->id);
            json_array_append_new(status == 200 ? ok : failed, o);
        } else if (p->mode == PRODUCE_ONE) {
            job->status = status;
            job->body = sf_rest_dump(o);
        } else {
            char *s = sf_rest_dump(o);
            if (lines && s)
                evbuffer_add_printf(lines, "%s%s", i ? "\n" : "", s);
            free(s);
        }
    }
    if (p->mode == PRODUCE_BATCH) {
        batch = json_pack("{s:O, s:O}", "successes", ok, "failures", failed);
        job->status = 207;
        job->body = sf_rest_dump(batch);
    } else if (p->mode == PRODUCE_STREAM && lines) {
        size_t n = evbuffer_get_length(lines);
        if ((job->body = malloc(n + 1))) {
            evbuffer_remove(lines, job->body, n);
            job->body[n] = '\0';
        }
    }
    if (!job->body)
        job->status = 503;
    json_decref(ok);
    json_decref(failed);
    if (lines)
        evbuffer_free(lines);
    sf_gw_finish(job);
}

/* ---- the route ---- */

/* Build the job of @t's records @objs (taken); NULL after answering. */
static sf_gw_job_t *produce_job(sf_rest_t *r, const sf_cluster_topic_t *t, produce_mode_t mode,
                                json_t *objs) {
    json_t *o;
    sf_gw_job_t *job = objs ? sf_gw_job_new(r->req) : NULL;
    produce_t *p = job ? calloc(1, sizeof(*p)) : NULL;
    size_t i, n = json_array_size(objs);
    if (!objs)
        return NULL;
    if (!p || (n && (!(p->entries = calloc(n, sizeof(*p->entries))) ||
                     !(job->records = calloc(n, sizeof(*job->records)))))) {
        free(p ? p->entries : NULL);
        free(p);
        sf_gw_job_free(job);
        json_decref(objs);
        sf_httpd_error(r->req, 503, NULL, "out of memory");
        return NULL;
    }
    job->arg = p;
    job->free_arg = produce_free;
    job->done = produce_done;
    p->links = r->links;
    snprintf(p->topic, sizeof(p->topic), "%s", t->name);
    p->mode = mode;
    p->n = n;
    json_array_foreach(objs, i, o) {
        entry_t *e = &p->entries[i];
        sf_record_t *rec = &job->records[job->nrecords].rec;
        e->rec = -1;
        e->id = json_incref(json_object_get(o, "id"));
        parse_record(t, o, e, rec);
        if (e->status)
            continue;
        rec->topic = p->topic;
        e->rec = (long)job->nrecords++;
        job->bytes += e->key_len + e->value_len + 64;
    }
    json_decref(objs);
    return job;
}

int sf_rest_records_route(sf_rest_t *r, char **seg, int nseg) {
    const sf_cluster_topic_t *t;
    produce_mode_t mode;
    sf_gw_job_t *job;
    if (nseg != 3 || strcmp(seg[0], "topics") != 0)
        return 0;
    if (!strcmp(seg[2], "records"))
        mode = PRODUCE_ONE;
    else if (!strcmp(seg[2], "records:batch"))
        mode = PRODUCE_BATCH;
    else
        return 0;
    if (r->cmd != EVHTTP_REQ_POST) {
        sf_httpd_error(r->req, 405, NULL, "records are produced with POST");
    } else if (!(t = sf_cluster_snapshot_topic(r->snap, seg[1]))) {
        sf_httpd_error(r->req, 404, "UNKNOWN_TOPIC_OR_PARTITION",
                       "This server does not host this topic-partition.");
    } else {
        json_t *objs = body_records(r, &mode); /* sets mode: a stream of several */
        if ((job = produce_job(r, t, mode, objs)))
            sf_gw_submit(sf_gw_producer(r->gw), job);
    }
    return 1;
}

void sf_rest_produce(sf_rest_t *r, const sf_cluster_topic_t *t, json_t *record) {
    json_t *objs = json_pack("[O]", record);
    sf_gw_job_t *job = objs ? produce_job(r, t, PRODUCE_ONE, objs) : NULL;
    if (!objs)
        sf_httpd_error(r->req, 503, NULL, "out of memory");
    else if (job)
        sf_gw_submit(sf_gw_producer(r->gw), job);
}
