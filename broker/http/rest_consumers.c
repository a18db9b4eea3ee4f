/* HTTP consumers: REST Proxy v2's consumer instances, and the event streams of the plain API
 * (rest_plain.c). Each instance is a libstreamflow group consumer on a gateway lane of its own
 * (gateway.h), so a poll that waits holds up nobody else:
 *
 *   POST   /consumers/<group>                      {"name", "format": "binary"|"json",
 *          "auto.offset.reset", "auto.commit.enable", "fetch.min.bytes",
 *          "consumer.request.timeout.ms"} -> {"instance_id", "base_uri"}
 *   DELETE /consumers/<group>/instances/<name>
 *   POST|GET|DELETE .../subscription               {"topics": [...]} or {"topic_pattern"}
 *   GET    .../records?timeout=&max_bytes=          the next records
 *   POST   .../offsets                              commit {"offsets": [{topic, partition,
 *          offset}]} (the last offset processed, as REST Proxy) or, without a body, every
 *          position; GET .../offsets {"partitions": [...]}: the committed offsets
 *   POST   .../positions {"offsets": [...]}, .../positions/beginning|end {"partitions": [...]}
 *   GET|POST .../assignments                        {"partitions": [...]}
 *
 * The registry of instances lives on the loop; an instance unused for INSTANCE_TIMEOUT_MS
 * (REST Proxy's consumer.instance.timeout.ms) is closed. Every request on an instance is a job
 * on its lane, run in order. */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <jansson.h>

#include "base64.h"
#include "clock.h"
#include "gateway.h"
#include "httpd.h"
#include "rest.h"

#define INSTANCE_TIMEOUT_MS 300000
#define EXPIRY_CHECK_MS 5000
#define POLL_TIMEOUT_MS 1000
#define MAX_POLL_BYTES (8 * 1024 * 1024)
#define MAX_POLL_RECORDS 10000
#define OP_TIMEOUT_MS 15000
/* An event stream sends a comment this often when idle, and waits while this much is still
 * unsent to its client. */
#define STREAM_KEEPALIVE_MS 5000
#define STREAM_MAX_BACKLOG (1024 * 1024)

typedef struct instance {
    char group[256];
    char name[128];
    sf_rest_format_t format;
    int64_t reset; /* SF_OFFSET_BEGINNING or SF_OFFSET_END for manual assignments */
    int poll_timeout_ms;
    sf_gw_lane_t *lane;
    int64_t last_used;
    int streams;   /* event streams running on it: it does not expire meanwhile */
    int closed;    /* out of the registry; freed when its last stream ends */
    json_t *subscription; /* {"topics": [...]} or {"topic_pattern": ...}; NULL: none */
    struct instance *next;
} instance_t;

struct sf_rest_consumers {
    sf_gw_t *gw;
    instance_t *instances;
    struct event *expiry_ev;
};

typedef enum {
    OP_SUBSCRIBE,
    OP_UNSUBSCRIBE,
    OP_RECORDS,
    OP_COMMIT,
    OP_COMMITTED,
    OP_SEEK,
    OP_SEEK_BEGINNING,
    OP_SEEK_END,
    OP_ASSIGNMENT,
    OP_ASSIGN
} op_kind_t;

/* One request on an instance, handed to its lane with what it needs. */
typedef struct op {
    op_kind_t kind;
    json_t *body; /* the request's JSON, or NULL */
    char *created; /* OP_SUBSCRIBE from the plain API: answer 201 with this instead of 204 */
    sf_rest_format_t format;
    int64_t reset;
    int timeout_ms;
    long max_bytes;
} op_t;

static void op_free(void *arg) {
    op_t *o = arg;
    if (o) {
        json_decref(o->body);
        free(o->created);
    }
    free(o);
}

/* ---- records as JSON ---- */

static json_t *base64_json(const void *p, size_t n) {
    char *s = sf_base64_encode(p, n);
    json_t *j = s ? json_string(s) : NULL;
    free(s);
    return j;
}

/* @p as its JSON value when it is JSON, else as a string (base64 when not UTF-8). */
static json_t *payload_json(const void *p, size_t n, sf_rest_format_t format) {
    json_t *j;
    if (!p)
        return json_null();
    if (format == SF_REST_BINARY || format == SF_REST_PLAIN_BASE64)
        return base64_json(p, n);
    if ((j = json_loadb(p, n, JSON_DECODE_ANY, NULL)))
        return j;
    if ((j = json_stringn(p, n)))
        return j;
    return base64_json(p, n);
}

json_t *sf_rest_message_json(const sf_message_t *m, sf_rest_format_t format) {
    json_t *o = json_pack("{s:s, s:o, s:o, s:i, s:I}", "topic", m->topic, "key",
                          payload_json(m->key, m->key_len, format), "value",
                          payload_json(m->value, m->value_len, format), "partition",
                          (int)m->partition, "offset", (json_int_t)m->offset);
    json_t *h;
    size_t i;
    if (!o || (format != SF_REST_PLAIN && format != SF_REST_PLAIN_BASE64))
        return o;
    /* the plain API also gives the time and the headers */
    json_object_set_new(o, "timestamp", json_integer(m->timestamp));
    h = json_object();
    for (i = 0; h && i < m->header_count; i++)
        json_object_set_new(h, m->headers[i].key,
                            m->headers[i].value
                                ? payload_json(m->headers[i].value, m->headers[i].value_len,
                                               format == SF_REST_PLAIN ? SF_REST_JSON : format)
                                : json_null());
    json_object_set_new(o, "headers", h);
    return o;
}

/* ---- on the instance's lane ---- */

/* [{"topic": ..., "partition": ..., ["offset": ...]}] of @body[@key] into a new array (topics
 * borrowed from @body); -1 when malformed. */
static int parse_partitions(json_t *body, const char *key, int want_offset,
                            sf_topic_partition_t **out, size_t *n) {
    json_t *a = json_object_get(body, key), *e;
    size_t i;
    *out = NULL;
    *n = 0;
    if (!json_is_array(a) || json_array_size(a) > 100000)
        return -1;
    if (json_array_size(a) && !(*out = calloc(json_array_size(a), sizeof(**out))))
        return -1;
    json_array_foreach(a, i, e) {
        json_t *t = json_object_get(e, "topic"), *p = json_object_get(e, "partition");
        json_t *off = json_object_get(e, "offset");
        if (!json_is_string(t) || !json_is_integer(p) || json_integer_value(p) < 0 ||
            json_integer_value(p) > INT32_MAX || (want_offset && !json_is_integer(off))) {
            free(*out);
            *out = NULL;
            return -1;
        }
        (*out)[i].topic = json_string_value(t);
        (*out)[i].partition = (int32_t)json_integer_value(p);
        (*out)[i].offset = want_offset ? json_integer_value(off) : -1;
    }
    *n = json_array_size(a);
    return 0;
}

static json_t *partitions_json(const sf_topic_partition_t *p, size_t n, int with_offsets) {
    json_t *a = json_array();
    size_t i;
    for (i = 0; a && i < n; i++) {
        json_t *e = json_pack("{s:s, s:i}", "topic", p[i].topic, "partition", (int)p[i].partition);
        if (e && with_offsets) {
            json_object_set_new(e, "offset", json_integer(p[i].offset));
            json_object_set_new(e, "metadata", json_string(""));
        }
        json_array_append_new(a, e);
    }
    return a;
}

static void answer(sf_gw_job_t *job, int err, json_t *body) {
    if (err == SF_ERROR_STATE)
        sf_gw_fail(job, 409, NULL, "not in this consumer's state (a subscription and assigned "
                   "partitions do not mix)");
    else if (err != SF_OK)
        sf_gw_fail_err(job, err, NULL);
    if (err != SF_OK) {
        json_decref(body);
        return;
    }
    job->status = body ? 200 : 204;
    job->body = body ? sf_rest_dump(body) : NULL;
}

/* GET .../records: what arrives within the timeout, up to max_bytes. */
static void poll_records(sf_gw_job_t *job, sf_consumer_t *c, const op_t *o) {
    json_t *out = json_array();
    int64_t deadline = sf_clock_mono_ms() + o->timeout_ms, now;
    long bytes = 0;
    sf_message_t *m;
    while (out && json_array_size(out) < MAX_POLL_RECORDS && bytes < o->max_bytes &&
           (now = sf_clock_mono_ms()) <= deadline) {
        /* once something came, take only what is already here */
        if (!(m = sf_consumer_poll(c, json_array_size(out) ? 0 : (int)(deadline - now))))
            break;
        if (!m->err) {
            bytes += (long)(m->key_len + m->value_len);
            json_array_append_new(out, sf_rest_message_json(m, o->format));
        }
        sf_message_destroy(m);
    }
    answer(job, out ? SF_OK : SF_ERROR_NOMEM, out);
}

static int subscribe(sf_consumer_t *c, json_t *body) {
    json_t *topics = json_object_get(body, "topics"), *pat = json_object_get(body, "topic_pattern");
    const char **names;
    char *regex;
    size_t i, n = json_array_size(topics);
    int rc;
    if (json_is_string(pat)) {
        if (!(regex = malloc(json_string_length(pat) + 2)))
            return SF_ERROR_NOMEM;
        sprintf(regex, "%s%s", json_string_value(pat)[0] == '^' ? "" : "^",
                json_string_value(pat));
        rc = sf_consumer_subscribe(c, (const char *const *)&regex, 1);
        free(regex);
        return rc;
    }
    if (!n || !(names = calloc(n, sizeof(*names))))
        return n ? SF_ERROR_NOMEM : SF_ERROR_INVALID;
    for (i = 0; i < n; i++)
        if (!(names[i] = json_string_value(json_array_get(topics, i))))
            break;
    rc = i < n ? SF_ERROR_INVALID : sf_consumer_subscribe(c, names, n);
    free(names);
    return rc;
}

/* The offsets given (the last processed, committed as the next to read), or every position. */
static int commit(sf_consumer_t *c, json_t *body) {
    sf_topic_partition_t *p;
    size_t n, i;
    int rc;
    if (!json_object_get(body, "offsets"))
        return sf_consumer_commit(c, NULL, 0, OP_TIMEOUT_MS);
    if (parse_partitions(body, "offsets", 1, &p, &n) != 0)
        return SF_ERROR_INVALID;
    for (i = 0; i < n; i++)
        p[i].offset++;
    rc = sf_consumer_commit(c, p, n, OP_TIMEOUT_MS);
    free(p);
    return rc;
}

/* Seek each partition of @body to its offset, or to @to (SF_OFFSET_BEGINNING / END). */
static int seek(sf_consumer_t *c, json_t *body, int64_t to) {
    sf_topic_partition_t *p;
    size_t n, i;
    int rc = SF_OK;
    if (parse_partitions(body, to == 0 ? "offsets" : "partitions", to == 0, &p, &n) != 0)
        return SF_ERROR_INVALID;
    for (i = 0; i < n && rc == SF_OK; i++)
        rc = sf_consumer_seek(c, p[i].topic, p[i].partition, to == 0 ? p[i].offset : to);
    free(p);
    return rc;
}

/* Assign the partitions of @body, each at its committed offset or else at @reset. */
static int assign(sf_consumer_t *c, json_t *body, int64_t reset) {
    sf_topic_partition_t *p;
    size_t n, i;
    int rc;
    if (parse_partitions(body, "partitions", 0, &p, &n) != 0 || !n) {
        free(p);
        return SF_ERROR_INVALID;
    }
    rc = sf_consumer_committed(c, p, n, OP_TIMEOUT_MS);
    for (i = 0; rc == SF_OK && i < n; i++)
        rc = sf_consumer_assign(c, p[i].topic, p[i].partition,
                                p[i].offset >= 0 ? p[i].offset : reset);
    free(p);
    return rc;
}

static void run_op(sf_gw_job_t *job, sf_consumer_t *c) {
    op_t *o = job->arg;
    sf_topic_partition_t *p = NULL;
    size_t n = 0;
    int rc;
    switch (o->kind) {
    case OP_RECORDS:
        poll_records(job, c, o);
        return;
    case OP_SUBSCRIBE:
        answer(job, subscribe(c, o->body), NULL);
        if (job->status == 204 && o->created) {
            job->status = 201;
            job->body = o->created;
            o->created = NULL;
        }
        return;
    case OP_UNSUBSCRIBE:
        rc = sf_consumer_unsubscribe(c);
        answer(job, rc == SF_ERROR_STATE ? SF_OK : rc, NULL);
        return;
    case OP_COMMIT:
        answer(job, commit(c, o->body), NULL);
        return;
    case OP_COMMITTED:
        rc = parse_partitions(o->body, "partitions", 0, &p, &n) ? SF_ERROR_INVALID
                                                                 : sf_consumer_committed(
                                                                       c, p, n, OP_TIMEOUT_MS);
        answer(job, rc, rc ? NULL : json_pack("{s:o}", "offsets", partitions_json(p, n, 1)));
        free(p);
        return;
    case OP_SEEK:
    case OP_SEEK_BEGINNING:
    case OP_SEEK_END:
        answer(job, seek(c, o->body, o->kind == OP_SEEK ? 0
                                     : o->kind == OP_SEEK_END ? SF_OFFSET_END
                                                              : SF_OFFSET_BEGINNING),
               NULL);
        return;
    case OP_ASSIGNMENT:
        rc = sf_consumer_assignment(c, &p, &n);
        answer(job, rc, rc ? NULL : json_pack("{s:o}", "partitions", partitions_json(p, n, 0)));
        sf_topic_partitions_destroy(p);
        return;
    case OP_ASSIGN:
        answer(job, assign(c, o->body, o->reset), NULL);
        return;
    }
}

static void instance_free(instance_t *inst);

/* ---- event streams ---- */

struct sf_rest_stream {
    struct evhttp_request *req;
    sf_gw_t *gw;
    sf_rest_consumers_t *cs;
    sf_rest_format_t format;
    sf_rest_stream_setup_fn *setup; /* on the lane, before the first poll (NULL: none) */
    void *setup_arg;
    void (*free_setup_arg)(void *);
    instance_t *inst;        /* the instance it reads for, or NULL */
    sf_gw_lane_t *own_lane;  /* a lane of its own, closed when the stream ends */
    int started;             /* the loop's: the reply's head is sent */
    atomic_int closed;       /* the client went away */
    atomic_long backlog;     /* bytes still unsent to the client when the loop last looked */
};

typedef struct chunk {
    sf_rest_stream_t *s;
    size_t len;
    char text[];
} chunk_t;

/* On the loop: one piece of the stream to its client. */
static void chunk_send(void *arg) {
    chunk_t *ch = arg;
    sf_rest_stream_t *s = ch->s;
    struct evhttp_connection *evcon = evhttp_request_get_connection(s->req);
    struct evbuffer *buf;
    if (!evcon) { /* detached: the client is gone */
        atomic_store(&s->closed, 1);
    } else if ((buf = evbuffer_new())) {
        if (!s->started) {
            struct evkeyvalq *h = evhttp_request_get_output_headers(s->req);
            evhttp_add_header(h, "Content-Type", "text/event-stream");
            evhttp_add_header(h, "Cache-Control", "no-cache");
            evhttp_send_reply_start(s->req, 200, "OK");
            s->started = 1;
        }
        evbuffer_add(buf, ch->text, ch->len);
        evhttp_send_reply_chunk(s->req, buf);
        evbuffer_free(buf);
        atomic_store(&s->backlog, (long)evbuffer_get_length(bufferevent_get_output(
                                      evhttp_connection_get_bufferevent(evcon))));
    }
    free(ch);
}

/* On the lane: queue @len bytes of @text for the client. */
static void stream_write(sf_rest_stream_t *s, const char *text, size_t len) {
    chunk_t *ch = malloc(sizeof(*ch) + len);
    if (!ch)
        return;
    ch->s = s;
    ch->len = len;
    memcpy(ch->text, text, len);
    if (sf_gw_post(s->gw, chunk_send, ch) != 0)
        free(ch);
}

/* One record as a Server-Sent Event: "id: <partition>:<offset>", "event: record", the JSON. */
static void stream_record(sf_rest_stream_t *s, const sf_message_t *m) {
    char *data = sf_rest_dump(sf_rest_message_json(m, s->format)), *text;
    int n;
    if (!data)
        return;
    n = asprintf(&text, "id: %d:%lld\nevent: record\ndata: %s\n\n", (int)m->partition,
                 (long long)m->offset, data);
    if (n > 0) {
        stream_write(s, text, (size_t)n);
        free(text);
    }
    free(data);
}

static void stream_run(sf_gw_job_t *job, sf_consumer_t *c) {
    sf_rest_stream_t *s = job->arg;
    int64_t quiet_since = sf_clock_mono_ms();
    sf_message_t *m;
    int rc;
    if (s->setup && (rc = s->setup(c, s->setup_arg)) != SF_OK) {
        sf_gw_fail_err(job, rc, "starting the stream");
        return;
    }
    stream_write(s, ": streaming\n\n", 13);
    while (!sf_gw_stopping(job) && !atomic_load(&s->closed)) {
        if (atomic_load(&s->backlog) > STREAM_MAX_BACKLOG) { /* a slow client: wait for it */
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
            stream_write(s, ":\n\n", 3);
            continue;
        }
        if ((m = sf_consumer_poll(c, 500))) {
            if (!m->err)
                stream_record(s, m);
            sf_message_destroy(m);
            quiet_since = sf_clock_mono_ms();
        } else if (sf_clock_mono_ms() - quiet_since >= STREAM_KEEPALIVE_MS) {
            stream_write(s, ": keepalive\n\n", 13);
            quiet_since = sf_clock_mono_ms();
        }
    }
    job->status = 200;
}

static void stream_free(void *arg) {
    sf_rest_stream_t *s = arg;
    if (s && s->free_setup_arg)
        s->free_setup_arg(s->setup_arg);
    free(s);
}

/* On the loop, the stream over: end the reply (which frees a detached request), release the
 * lane or the instance. */
static void stream_done(sf_gw_job_t *job) {
    sf_rest_stream_t *s = job->arg;
    if (s->own_lane)
        sf_gw_consumer_close(s->own_lane);
    if (s->inst && --s->inst->streams == 0 && s->inst->closed)
        instance_free(s->inst);
    else if (s->inst)
        s->inst->last_used = sf_clock_mono_ms();
    if (!s->started) {
        if (!job->body && !job->status)
            sf_gw_fail(job, 503, NULL, "the stream could not start");
        sf_gw_finish(job);
        return;
    }
    evhttp_send_reply_end(job->req);
    sf_gw_job_free(job);
}

/* Start a stream on @lane for @r; the arg of @setup is taken. */
static void stream_start(sf_rest_t *r, sf_gw_lane_t *lane, int own, instance_t *inst,
                         sf_rest_format_t format, sf_rest_stream_setup_fn *setup, void *arg,
                         void (*free_arg)(void *)) {
    sf_gw_job_t *job = sf_gw_job_new(r->req);
    sf_rest_stream_t *s = job ? calloc(1, sizeof(*s)) : NULL;
    if (!s) {
        free(job);
        if (free_arg)
            free_arg(arg);
        if (own)
            sf_gw_consumer_close(lane);
        sf_httpd_error(r->req, 503, NULL, "out of memory");
        return;
    }
    s->req = r->req;
    s->gw = r->gw;
    s->cs = r->consumers;
    s->format = format;
    s->setup = setup;
    s->setup_arg = arg;
    s->free_setup_arg = free_arg;
    s->inst = inst;
    s->own_lane = own ? lane : NULL;
    atomic_init(&s->closed, 0);
    atomic_init(&s->backlog, 0);
    if (inst)
        inst->streams++;
    job->arg = s;
    job->free_arg = stream_free;
    job->consume = stream_run;
    job->done = stream_done;
    sf_gw_submit(lane, job);
}

void sf_rest_stream(sf_rest_t *r, const sf_config_kv_t *kvs, size_t n,
                    sf_rest_stream_setup_fn *setup, void *arg, void (*free_arg)(void *)) {
    char errstr[256];
    int status;
    sf_gw_lane_t *lane = sf_gw_consumer_new(r->gw, kvs, n, &status, errstr, sizeof(errstr));
    if (!lane) {
        if (free_arg)
            free_arg(arg);
        sf_httpd_error(r->req, status, status == 429 ? "THROTTLING_QUOTA_EXCEEDED" : NULL, "%s",
                       errstr);
        return;
    }
    stream_start(r, lane, 1, NULL, SF_REST_PLAIN, setup, arg, free_arg);
}

/* ---- the instances ---- */

static instance_t *find(sf_rest_consumers_t *cs, const char *group, const char *name) {
    instance_t *i;
    for (i = cs->instances; i; i = i->next)
        if (!strcmp(i->group, group) && !strcmp(i->name, name))
            return i;
    return NULL;
}

static void instance_free(instance_t *inst) {
    json_decref(inst->subscription);
    free(inst);
}

/* Take @inst out of the registry and close its lane; it is freed now, or when the last of its
 * streams ends (they still point at it). */
static void instance_close(sf_rest_consumers_t *cs, instance_t *inst) {
    instance_t **pp;
    for (pp = &cs->instances; *pp && *pp != inst; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = inst->next;
    sf_gw_consumer_close(inst->lane);
    inst->closed = 1;
    if (!inst->streams)
        instance_free(inst);
}

static void expiry_cb(evutil_socket_t fd, short what, void *arg) {
    sf_rest_consumers_t *cs = arg;
    instance_t *i, *next;
    int64_t now = sf_clock_mono_ms();
    (void)fd;
    (void)what;
    for (i = cs->instances; i; i = next) {
        next = i->next;
        if (!i->streams && now - i->last_used > INSTANCE_TIMEOUT_MS)
            instance_close(cs, i);
    }
}

sf_rest_consumers_t *sf_rest_consumers_new(struct event_base *base, sf_gw_t *gw) {
    sf_rest_consumers_t *cs = calloc(1, sizeof(*cs));
    struct timeval tv = {EXPIRY_CHECK_MS / 1000, 0};
    if (!cs || !(cs->expiry_ev = event_new(base, -1, EV_PERSIST, expiry_cb, cs))) {
        free(cs);
        return NULL;
    }
    cs->gw = gw;
    event_add(cs->expiry_ev, &tv);
    return cs;
}

void sf_rest_consumers_free(sf_rest_consumers_t *cs) {
    if (!cs)
        return;
    while (cs->instances)
        instance_close(cs, cs->instances);
    event_free(cs->expiry_ev);
    free(cs);
}

/* A string setting of @body (a JSON string, number or boolean) into @buf; NULL when absent. */
static const char *setting(json_t *body, const char *name, char *buf, size_t size) {
    json_t *v = json_object_get(body, name);
    if (json_is_string(v))
        snprintf(buf, size, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
    else
        return NULL;
    return buf;
}

sf_rest_instance_t *sf_rest_instance_new(sf_rest_t *r, const char *group, const char *name,
                                         json_t *body) {
    static const char *const passed[][2] = {{"auto.offset.reset", "auto.offset.reset"},
                                            {"auto.commit.enable", "enable.auto.commit"},
                                            {"fetch.min.bytes", "fetch.min.bytes"}};
    char values[4][128], client_id[200], errstr[256];
    sf_config_kv_t kvs[6];
    size_t n = 0, i;
    const char *v, *format = json_string_value(json_object_get(body, "format"));
    json_t *timeout = json_object_get(body, "consumer.request.timeout.ms");
    instance_t *inst;
    int status;
    if (find(r->consumers, group, name)) {
        sf_httpd_error(r->req, 409, NULL, "Consumer instance with the specified name already "
                       "exists.");
        return NULL;
    }
    if (format && strcmp(format, "binary") && strcmp(format, "json")) {
        sf_httpd_error(r->req, 422, NULL, "format must be binary or json (schemas are not "
                       "served here)");
        return NULL;
    }
    if (timeout && (!json_is_integer(timeout) || json_integer_value(timeout) < 0 ||
                    json_integer_value(timeout) > 60000)) {
        sf_httpd_error(r->req, 422, NULL, "consumer.request.timeout.ms must be 0..60000");
        return NULL;
    }
    snprintf(client_id, sizeof(client_id), "rest-%s", name);
    kvs[n++] = (sf_config_kv_t){"group.id", group};
    kvs[n++] = (sf_config_kv_t){"client.id", client_id};
    kvs[n++] = (sf_config_kv_t){"max.poll.interval.ms", "600000"};
    for (i = 0; i < 3; i++)
        if ((v = setting(body, passed[i][0], values[i], sizeof(values[i]))))
            kvs[n++] = (sf_config_kv_t){passed[i][1], v};
    if (!(inst = calloc(1, sizeof(*inst)))) {
        sf_httpd_error(r->req, 503, NULL, "out of memory");
        return NULL;
    }
    if (!(inst->lane = sf_gw_consumer_new(r->gw, kvs, n, &status, errstr, sizeof(errstr)))) {
        free(inst);
        sf_httpd_error(r->req, status == 400 ? 422 : status, NULL, "%s", errstr);
        return NULL;
    }
    snprintf(inst->group, sizeof(inst->group), "%s", group);
    snprintf(inst->name, sizeof(inst->name), "%s", name);
    inst->format = format && !strcmp(format, "json") ? SF_REST_JSON : SF_REST_BINARY;
    v = setting(body, "auto.offset.reset", values[3], sizeof(values[3]));
    inst->reset = v && !strcmp(v, "earliest") ? SF_OFFSET_BEGINNING : SF_OFFSET_END;
    inst->poll_timeout_ms = timeout ? (int)json_integer_value(timeout) : POLL_TIMEOUT_MS;
    inst->last_used = sf_clock_mono_ms();
    inst->next = r->consumers->instances;
    r->consumers->instances = inst;
    return inst;
}

sf_rest_instance_t *sf_rest_instance_find(sf_rest_t *r, const char *group, const char *name) {
    instance_t *inst = find(r->consumers, group, name);
    if (!inst)
        sf_httpd_error(r->req, 404, NULL, "Consumer instance not found.");
    else
        inst->last_used = sf_clock_mono_ms();
    return inst;
}

void sf_rest_instance_close(sf_rest_t *r, sf_rest_instance_t *inst) {
    instance_close(r->consumers, inst);
}

void sf_rest_instance_delete(sf_rest_t *r, sf_rest_instance_t *inst) {
    instance_close(r->consumers, inst);
    sf_httpd_reply(r->req, 204, NULL, "application/json");
}

void sf_rest_instance_stream(sf_rest_t *r, sf_rest_instance_t *inst) {
    stream_start(r, inst->lane, 0, inst, SF_REST_PLAIN, NULL, NULL, NULL);
}

/* The media type of records in @format (REST Proxy v2's embedded formats). */
static const char *records_type(sf_rest_format_t format) {
    return format == SF_REST_JSON ? "application/vnd.kafka.json.v2+json"
                                  : "application/vnd.kafka.binary.v2+json";
}

/* Whether the request's Accept header (none: anything) takes records in @format: one naming
 * only other embedded formats is refused, as the REST Proxy does. */
static int accepts_records(sf_rest_t *r, sf_rest_format_t format) {
    const char *accept = evhttp_find_header(evhttp_request_get_input_headers(r->req), "Accept");
    char copy[512], *item, *save = NULL;
    int other = 0;
    if (!accept)
        return 1;
    snprintf(copy, sizeof(copy), "%s", accept);
    for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        item += strspn(item, " \t");
        item[strcspn(item, "; \t")] = '\0';
        if (!strcasecmp(item, records_type(format)))
            return 1;
        if (!strncasecmp(item, "application/vnd.kafka.", 22) &&
            strcasecmp(item, "application/vnd.kafka.v2+json"))
            other = 1;
    }
    return !other;
}

/* Queue @kind with @body (taken) on @inst's lane; @created: see op_t (taken, may be NULL). */
static void instance_op_created(sf_rest_t *r, instance_t *inst, op_kind_t kind, json_t *body,
                                char *created) {
    sf_gw_job_t *job = sf_gw_job_new(r->req);
    op_t *o = job ? calloc(1, sizeof(*o)) : NULL;
    if (!o) {
        free(job);
        json_decref(body);
        free(created);
        sf_httpd_error(r->req, 503, NULL, "out of memory");
        return;
    }
    o->kind = kind;
    o->created = created;
    o->body = body;
    o->format = inst->format;
    o->reset = inst->reset;
    o->timeout_ms = (int)sf_rest_query_long(r, "timeout", inst->poll_timeout_ms, 0, 60000);
    o->max_bytes = sf_rest_query_long(r, "max_bytes", MAX_POLL_BYTES, 1, MAX_POLL_BYTES);
    job->arg = o;
    job->free_arg = op_free;
    job->consume = run_op;
    if (kind == OP_RECORDS)
        job->ctype = records_type(inst->format);
    sf_gw_submit(inst->lane, job);
}

static void instance_op(sf_rest_t *r, instance_t *inst, op_kind_t kind, json_t *body) {
    instance_op_created(r, inst, kind, body, NULL);
}

void sf_rest_instance_subscribe(sf_rest_t *r, sf_rest_instance_t *inst, json_t *body,
                                char *created) {
    json_t *topics = json_object_get(body, "topics"), *pat = json_object_get(body, "topic_pattern");
    if (!(json_is_array(topics) && json_array_size(topics)) && !json_is_string(pat)) {
        sf_httpd_error(r->req, 422, NULL, "a subscription takes {\"topics\": [...]} or "
                       "{\"topic_pattern\": \"...\"}");
        json_decref(body);
        free(created);
        return;
    }
    json_decref(inst->subscription);
    inst->subscription = json_incref(body);
    instance_op_created(r, inst, OP_SUBSCRIBE, body, created);
}

/* ---- the routes: /consumers/<group>[/instances/<name>[/<what>[/<where>]]] ---- */

static const char *V2_TYPE = "application/vnd.kafka.v2+json";

/* The JSON body when there is one (NULL and no answer when empty); -1 after answering 422. */
static int optional_body(sf_rest_t *r, json_t **out) {
    struct evbuffer *in = evhttp_request_get_input_buffer(r->req);
    *out = NULL;
    if (!evbuffer_get_length(in))
        return 0;
    if (!(*out = sf_rest_body(r)))
        return -1;
    return 0;
}

static void create_instance(sf_rest_t *r, const char *group) {
    json_t *body, *name, *answer;
    char gen[64];
    instance_t *inst;
    if (optional_body(r, &body) != 0)
        return;
    name = json_object_get(body, "name");
    if (name && (!json_is_string(name) || !*json_string_value(name) ||
                 json_string_length(name) >= sizeof(inst->name) ||
                 strchr(json_string_value(name), '/'))) {
        sf_httpd_error(r->req, 422, NULL, "name must be a short string without '/'");
    } else {
        snprintf(gen, sizeof(gen), "rest-consumer-%llx-%lx", (unsigned long long)sf_clock_wall_ms(),
                 random());
        inst = sf_rest_instance_new(r, group, name ? json_string_value(name) : gen, body);
        answer = inst ? json_pack("{s:s, s:s++++}", "instance_id", inst->name, "base_uri",
                                  r->links.origin, "/consumers/", group, "/instances/",
                                  inst->name)
                      : NULL;
        if (answer) {
            sf_httpd_reply(r->req, 200, sf_rest_dump(answer), V2_TYPE);
        } else if (inst) {
            instance_close(r->consumers, inst);
            sf_httpd_error(r->req, 503, NULL, "out of memory");
        }
    }
    json_decref(body);
}

void sf_rest_consumers_route(sf_rest_t *r, char **seg, int nseg) {
    const char *what = nseg >= 4 ? seg[3] : "";
    const char *where = nseg == 5 ? seg[4] : "";
    instance_t *inst;
    json_t *body = NULL;
    enum evhttp_cmd_type cmd = r->cmd;
    if (nseg == 1 && cmd == EVHTTP_REQ_POST) {
        create_instance(r, seg[0]);
        return;
    }
    if (nseg < 3 || nseg > 5 || strcmp(seg[1], "instances") != 0) {
        sf_httpd_error(r->req, 404, NULL, "no such resource");
        return;
    }
    if (!(inst = sf_rest_instance_find(r, seg[0], seg[2])))
        return;
    if (nseg == 3 && cmd == EVHTTP_REQ_DELETE) {
        sf_rest_instance_delete(r, inst);
        return;
    }
    if (cmd != EVHTTP_REQ_GET && optional_body(r, &body) != 0)
        return;
    if (!strcmp(what, "subscription") && !*where && cmd == EVHTTP_REQ_POST) {
        sf_rest_instance_subscribe(r, inst, body, NULL);
        return;
    }
    if (!strcmp(what, "subscription") && !*where && cmd == EVHTTP_REQ_GET) {
        json_t *t = json_object_get(inst->subscription, "topics");
        sf_httpd_reply(r->req, 200,
                       sf_rest_dump(json_pack("{s:o}", "topics", t ? json_incref(t) : json_array())),
                       V2_TYPE);
    } else if (!strcmp(what, "subscription") && !*where && cmd == EVHTTP_REQ_DELETE) {
        json_decref(inst->subscription);
        inst->subscription = NULL;
        instance_op(r, inst, OP_UNSUBSCRIBE, NULL);
    } else if (!strcmp(what, "records") && !*where && cmd == EVHTTP_REQ_GET) {
        if (accepts_records(r, inst->format))
            instance_op(r, inst, OP_RECORDS, NULL);
        else
            sf_httpd_error(r->req, 406, NULL, "this consumer's records are %s (set at its "
                           "creation), not what Accept asks for", records_type(inst->format));
    } else if (!strcmp(what, "offsets") && !*where && cmd == EVHTTP_REQ_POST) {
        instance_op(r, inst, OP_COMMIT, body);
        body = NULL;
    } else if (!strcmp(what, "offsets") && !*where && cmd == EVHTTP_REQ_GET) {
        if (optional_body(r, &body) == 0)
            instance_op(r, inst, OP_COMMITTED, body ? body : json_object());
        body = NULL;
    } else if (!strcmp(what, "positions") && cmd == EVHTTP_REQ_POST &&
               (!*where || !strcmp(where, "beginning") || !strcmp(where, "end"))) {
        instance_op(r, inst, !*where ? OP_SEEK : *where == 'b' ? OP_SEEK_BEGINNING : OP_SEEK_END,
                    body ? body : json_object());
        body = NULL;
    } else if (!strcmp(what, "assignments") && !*where && cmd == EVHTTP_REQ_GET) {
        instance_op(r, inst, OP_ASSIGNMENT, NULL);
    } else if (!strcmp(what, "assignments") && !*where && cmd == EVHTTP_REQ_POST) {
        instance_op(r, inst, OP_ASSIGN, body ? body : json_object());
        body = NULL;
    } else {
        sf_httpd_error(r->req, nseg == 3 ? 405 : 404, NULL, "no such resource or method");
    }
    json_decref(body);
}

/* On the loop: a one-shot job answered; its lane goes. */
static void once_done(sf_gw_job_t *job) {
    sf_gw_consumer_close(job->lane);
    sf_gw_finish(job);
}

void sf_rest_consume_once(sf_rest_t *r, void (*fn)(sf_gw_job_t *job, sf_consumer_t *c),
                          void *arg, void (*free_arg)(void *)) {
    char errstr[256];
    int status;
    sf_gw_lane_t *lane = sf_gw_consumer_new(r->gw, NULL, 0, &status, errstr, sizeof(errstr));
    sf_gw_job_t *job = lane ? sf_gw_job_new(r->req) : NULL;
    if (!job) {
        if (free_arg)
            free_arg(arg);
        if (lane)
            sf_gw_consumer_close(lane);
        sf_httpd_error(r->req, lane ? 503 : status, NULL, "%s", lane ? "out of memory" : errstr);
        return;
    }
    job->arg = arg;
    job->free_arg = free_arg;
    job->consume = fn;
    job->done = once_done;
    sf_gw_submit(lane, job);
}
