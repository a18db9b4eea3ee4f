/* The plain HTTP API under /api, for services that want a topic, an event and a stream rather
 * than REST Proxy's resources:
 *
 *   GET    /api/nodes                                 the brokers with their health
 *   GET    /api/topics                                the topics with their partition counts
 *   POST   /api/topics                                {"name", "partitions", "replication_factor",
 *                                                     "configs": {"retention.ms": "..."}}
 *   PUT    /api/topics/<t>/partitions                 {"count": N}: grow the topic
 *   POST   /api/topics/<t>/events                     {"key", "value", "partition", "headers"}
 *   GET    /api/topics/<t>/partitions/<p>/events/<offset>              one event
 *   GET    /api/topics/<t>/partitions/<p>/events?offset=|timestamp=&limit=  events from there
 *   GET    /api/topics/<t>/subscribe[?group=<g>][&from=earliest]       Server-Sent Events of
 *                                                     new events (of the group's share with
 *                                                     group)
 *   POST   /api/groups                                {"name", "topics", "from": "latest" or
 *                                                     "earliest"}: a group with offsets to
 *                                                     start from, before any member joins
 *   POST   /api/groups/<g>/members                    {"name", "topics", "from"}: a member
 *   GET    /api/groups/<g>/members/<m>/events         Server-Sent Events of its share
 *   DELETE /api/groups/<g>/members/<m>
 *
 * A key or value given as a JSON string is sent as its text, anything else as its JSON;
 * events read back carry the value as JSON when it parses, else as text (with
 * ?encoding=base64: keys, values and headers as base64, for binary data). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <jansson.h>

#include "base64.h"
#include "clock.h"
#include "gateway.h"
#include "httpd.h"
#include "rest.h"

#define READ_TIMEOUT_MS 5000
#define MAX_READ 1000

/* ---- nodes ---- */

/* Partition counts about broker @id: led, offline (no leader but a replica here), and
 * under-replicated (a replica here, the ISR short). */
static void node_counts(const sf_cluster_snapshot_t *snap, int32_t id, int *led, int *offline,
                        int *under) {
    int t, i, k;
    *led = *offline = *under = 0;
    for (t = 0; t < snap->ntopics; t++) {
        for (i = 0; i < snap->topics[t]->npartitions; i++) {
            const sf_cluster_partition_t *p = &snap->topics[t]->partitions[i];
            for (k = 0; k < p->nreplicas && p->replicas[k] != id; k++)
                ;
            if (k == p->nreplicas)
                continue;
            *led += p->leader == id;
            *offline += p->leader < 0;
            *under += p->nisr < p->nreplicas;
        }
    }
}

static json_t *node(const sf_cluster_snapshot_t *snap, int32_t id, const sf_cluster_broker_t *b) {
    int led, offline, under;
    node_counts(snap, id, &led, &offline, &under);
    return json_pack("{s:i, s:s?, s:i, s:s?, s:b, s:s, s:i, s:i, s:i}", "id", (int)id, "host",
                     b ? b->host : NULL, "port", b ? (int)b->port : -1, "rack",
                     b ? b->rack : NULL, "controller", snap->controller_id == id, "status",
                     !b ? "DOWN" : offline || under ? "DEGRADED" : "UP", "leader_partitions", led,
                     "offline_partitions", offline, "under_replicated_partitions", under);
}

/* Registered brokers, and the replicas of assignments that are not registered (down). */
static void nodes(sf_rest_t *r) {
    const sf_cluster_snapshot_t *snap = r->snap;
    json_t *a = json_array(), *seen = json_object();
    char key[16];
    int i, t, p, k;
    for (i = 0; i < snap->nbrokers; i++) {
        snprintf(key, sizeof(key), "%d", (int)snap->brokers[i].id);
        json_object_set_new(seen, key, json_true());
        json_array_append_new(a, node(snap, snap->brokers[i].id, &snap->brokers[i]));
    }
    for (t = 0; t < snap->ntopics; t++)
        for (p = 0; p < snap->topics[t]->npartitions; p++)
            for (k = 0; k < snap->topics[t]->partitions[p].nreplicas; k++) {
                int32_t id = snap->topics[t]->partitions[p].replicas[k];
                snprintf(key, sizeof(key), "%d", (int)id);
                if (json_object_get(seen, key))
                    continue;
                json_object_set_new(seen, key, json_true());
                json_array_append_new(a, node(snap, id, NULL));
            }
    json_decref(seen);
    sf_rest_reply(r, json_pack("{s:s, s:i, s:o}", "cluster_id", snap->cluster_id, "controller",
                               (int)snap->controller_id, "nodes", a));
}

static void topics(sf_rest_t *r) {
    json_t *a = json_array();
    int i;
    for (i = 0; a && i < r->snap->ntopics; i++) {
        const sf_cluster_topic_t *t = r->snap->topics[i];
        json_array_append_new(a, json_pack("{s:s, s:i, s:i}", "name", t->name, "partitions",
                                           t->npartitions, "replication_factor",
                                           t->npartitions ? t->partitions[0].nreplicas : 0));
    }
    sf_rest_reply(r, json_pack("{s:o}", "topics", a));
}

/* ---- writes ---- */

/* POST /api/topics: configs as an object, handed on as [{name, value}]. */
static void create_topic(sf_rest_t *r) {
    json_t *body = sf_rest_body(r), *cfg, *configs = NULL, *v;
    const char *k;
    if (!body)
        return;
    cfg = json_object_get(body, "configs");
    if (cfg && !json_is_object(cfg)) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST", "configs must be an object of strings");
        json_decref(body);
        return;
    }
    if (cfg) {
        configs = json_array();
        json_object_foreach(cfg, k, v)
            json_array_append_new(configs, json_pack("{s:s, s:O}", "name", k, "value", v));
    }
    sf_rest_create_topic(r, json_string_value(json_object_get(body, "name")),
                         sf_rest_count(body, "partitions"), sf_rest_count(body, "replication_factor"),
                         configs);
    json_decref(configs);
    json_decref(body);
}

/* {"type": STRING|JSON, "data": @v}: a string is its text, anything else its JSON. */
static json_t *payload(json_t *v) {
    if (!v || json_is_null(v))
        return json_null();
    return json_pack("{s:s, s:O}", "type", json_is_string(v) ? "STRING" : "JSON", "data", v);
}

/* POST /api/topics/<t>/events: the event as a v3 record. */
static void write_event(sf_rest_t *r, const sf_cluster_topic_t *t) {
    json_t *body = sf_rest_body(r), *rec, *hs, *h, *v;
    const char *k;
    if (!body)
        return;
    if (!json_is_object(body)) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST", "an event is a JSON object");
        json_decref(body);
        return;
    }
    rec = json_pack("{s:o, s:o}", "key", payload(json_object_get(body, "key")), "value",
                    payload(json_object_get(body, "value")));
    if ((v = json_object_get(body, "partition")))
        json_object_set(rec, "partition_id", v);
    if ((v = json_object_get(body, "timestamp")))
        json_object_set(rec, "timestamp", v);
    if (json_is_object(h = json_object_get(body, "headers"))) {
        hs = json_array();
        json_object_foreach(h, k, v) {
            const char *s = json_string_value(v);
            char *b64 = s ? sf_base64_encode(s, strlen(s)) : NULL;
            json_array_append_new(hs, json_pack("{s:s, s:s?}", "name", k, "value", b64));
            free(b64);
        }
        json_object_set_new(rec, "headers", hs);
    } else if (h) {
        json_object_set_new(rec, "headers", json_string("bad")); /* refused with the record */
    }
    sf_rest_produce(r, t, rec);
    json_decref(rec);
    json_decref(body);
}

/* ---- reads ---- */

typedef struct read_args {
    char topic[256];
    int32_t partition;
    int64_t offset;    /* -1: from timestamp */
    int64_t timestamp;
    int limit;
    int exact;         /* one event at exactly offset */
    sf_rest_format_t format;
} read_args_t;

static void run_read(sf_gw_job_t *job, sf_consumer_t *c) {
    read_args_t *a = job->arg;
    int64_t low = -1, high = -1, deadline = 0;
    json_t *events = json_array();
    sf_message_t *m;
    int rc = sf_consumer_watermarks(c, a->topic, a->partition, &low, &high, READ_TIMEOUT_MS);
    if (rc == SF_OK && a->exact && (a->offset < low || a->offset >= high)) {
        sf_gw_fail(job, 404, "OFFSET_OUT_OF_RANGE", "no event at offset %lld: the partition "
                   "holds offsets %lld to %lld", (long long)a->offset, (long long)low,
                   (long long)high - 1);
        json_decref(events);
        return;
    }
    if (rc == SF_OK)
        rc = sf_consumer_assign(c, a->topic, a->partition,
                                a->offset >= 0 ? (a->offset < low ? low : a->offset)
                                               : SF_OFFSET_BEGINNING);
    if (rc == SF_OK && a->offset < 0)
        rc = sf_consumer_seek_timestamp(c, a->topic, a->partition, a->timestamp,
                                        READ_TIMEOUT_MS);
    deadline = sf_clock_mono_ms() + READ_TIMEOUT_MS;
    while (rc == SF_OK && events && (int)json_array_size(events) < a->limit &&
           sf_clock_mono_ms() < deadline) {
        int64_t pos = -1;
        if (sf_consumer_position(c, a->topic, a->partition, &pos, READ_TIMEOUT_MS) == SF_OK &&
            pos >= high)
            break;
        if (!(m = sf_consumer_poll(c, 200)))
            continue;
        if (m->err)
            rc = m->err;
        else if (!a->exact || m->offset == a->offset)
            json_array_append_new(events, sf_rest_message_json(m, a->format));
        else
            high = 0; /* compacted away: there is no event at that offset */
        sf_message_destroy(m);
    }
    if (rc != SF_OK) {
        sf_gw_fail_err(job, rc, a->topic);
    } else if (a->exact && !json_array_size(events)) {
        sf_gw_fail(job, 404, "OFFSET_OUT_OF_RANGE", "no event at offset %lld",
                   (long long)a->offset);
    } else {
        job->status = 200;
        job->body = sf_rest_dump(a->exact ? json_incref(json_array_get(events, 0))
                                          : json_pack("{s:I, s:I, s:O}", "low_offset",
                                                      (json_int_t)low, "high_offset",
                                                      (json_int_t)high, "events", events));
    }
    json_decref(events);
}

/* GET /api/topics/<t>/partitions/<p>/events[/<offset>]. */
static void read_events(sf_rest_t *r, const sf_cluster_topic_t *t, const char *part,
                        const char *offset) {
    long p = sf_rest_index(part);
    long long off = 0;
    char ts[32], *end = NULL;
    read_args_t *a;
    if (offset) {
        off = strtoll(offset, &end, 10);
        if (!*offset || *end)
            off = -1;
    }
    if (p < 0 || p >= t->npartitions) {
        sf_httpd_error(r->req, 404, "UNKNOWN_TOPIC_OR_PARTITION", "%s has no partition %s",
                       t->name, part);
        return;
    }
    if (off < 0) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST", "an offset is a non-negative integer");
        return;
    }
    if (!(a = calloc(1, sizeof(*a)))) {
        sf_httpd_error(r->req, 503, NULL, "out of memory");
        return;
    }
    snprintf(a->topic, sizeof(a->topic), "%s", t->name);
    a->partition = (int32_t)p;
    a->exact = offset != NULL;
    a->format = sf_rest_query(r, "encoding", ts, sizeof(ts)) && !strcmp(ts, "base64")
                    ? SF_REST_PLAIN_BASE64
                    : SF_REST_PLAIN;
    a->limit = a->exact ? 1 : (int)sf_rest_query_long(r, "limit", 100, 1, MAX_READ);
    a->offset = offset ? off : sf_rest_query_long(r, "offset", 0, 0, INT64_MAX);
    if (!offset && sf_rest_query(r, "timestamp", ts, sizeof(ts))) {
        a->offset = -1;
        a->timestamp = sf_rest_query_long(r, "timestamp", 0, 0, INT64_MAX);
    }
    sf_rest_consume_once(r, run_read, a, free);
}

/* ---- streams and groups ---- */

typedef struct topic_stream {
    char topic[256];
    int partitions;
    int64_t from;
    char group[256]; /* "" without a group */
} topic_stream_t;

static int topic_stream_setup(sf_consumer_t *c, void *arg) {
    topic_stream_t *s = arg;
    const char *topics[1] = {s->topic};
    int i, rc = SF_OK;
    if (*s->group)
        return sf_consumer_subscribe(c, topics, 1);
    for (i = 0; i < s->partitions && rc == SF_OK; i++)
        rc = sf_consumer_assign(c, s->topic, i, s->from);
    return rc;
}

/* GET /api/topics/<t>/subscribe[?group=][&from=]. */
static void subscribe(sf_rest_t *r, const sf_cluster_topic_t *t) {
    topic_stream_t *s = calloc(1, sizeof(*s));
    char from[16] = "";
    sf_config_kv_t kvs[2];
    if (!s) {
        sf_httpd_error(r->req, 503, NULL, "out of memory");
        return;
    }
    snprintf(s->topic, sizeof(s->topic), "%s", t->name);
    s->partitions = t->npartitions;
    sf_rest_query(r, "from", from, sizeof(from));
    s->from = !strcmp(from, "earliest") ? SF_OFFSET_BEGINNING : SF_OFFSET_END;
    sf_rest_query(r, "group", s->group, sizeof(s->group));
    kvs[0] = (sf_config_kv_t){"auto.offset.reset", s->from == SF_OFFSET_END ? "latest"
                                                                              : "earliest"};
    kvs[1] = (sf_config_kv_t){"group.id", s->group};
    sf_rest_stream(r, kvs, *s->group ? 2 : 1, topic_stream_setup, s, free);
}

typedef struct group_reg {
    char group[256];
    sf_topic_partition_t *parts; /* every partition of the topics, topics owned by @names */
    size_t nparts;
    json_t *names;
    int64_t from;
} group_reg_t;

static void group_reg_free(void *arg) {
    group_reg_t *g = arg;
    if (!g)
        return;
    free(g->parts);
    json_decref(g->names);
    free(g);
}

/* On the admin thread: refuse a group that exists, then commit the start offsets. */
static void run_register_group(sf_gw_job_t *job, sf_admin_t *a) {
    group_reg_t *g = job->arg;
    const char *ids[1] = {g->group};
    sf_group_info_t *info = NULL;
    sf_topic_partition_t *have = NULL;
    size_t nhave = 0;
    json_t *offsets;
    int rc = sf_admin_describe_groups(a, ids, 1, 15000, &info);
    if (rc == SF_OK && !info->err && strcmp(info->state, "Dead") && strcmp(info->state, "Empty"))
        rc = SF_ERROR_EXISTS;
    if (rc == SF_OK && (rc = sf_admin_list_group_offsets(a, g->group, 15000, &have, &nhave)) ==
                           SF_OK && nhave)
        rc = SF_ERROR_EXISTS;
    sf_group_info_destroy(info, info ? 1 : 0);
    sf_topic_partitions_destroy(have);
    if (rc == SF_OK)
        rc = sf_admin_list_offsets(a, g->parts, g->nparts, g->from, 15000);
    if (rc == SF_OK)
        rc = sf_admin_alter_group_offsets(a, g->group, g->parts, g->nparts, 15000);
    if (rc == SF_ERROR_EXISTS) {
        sf_gw_fail(job, 409, NULL, "group %s exists already", g->group);
        return;
    }
    if (rc != SF_OK) {
        sf_gw_fail_err(job, rc, g->group);
        return;
    }
    offsets = json_array();
    for (size_t i = 0; i < g->nparts; i++)
        json_array_append_new(offsets, json_pack("{s:s, s:i, s:I}", "topic", g->parts[i].topic,
                                                 "partition", (int)g->parts[i].partition,
                                                 "offset", (json_int_t)g->parts[i].offset));
    job->status = 201;
    job->body = sf_rest_dump(json_pack("{s:s, s:o}", "group", g->group, "offsets", offsets));
}

/* The topic names of @body["topics"], each in the view, or NULL after answering. */
static json_t *known_topics(sf_rest_t *r, json_t *body, size_t *nparts) {
    json_t *topics = json_object_get(body, "topics"), *t;
    const sf_cluster_topic_t *ct;
    size_t i;
    *nparts = 0;
    if (!json_is_array(topics) || !json_array_size(topics) || json_array_size(topics) > 1000) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST", "topics must be a list of topic names");
        return NULL;
    }
    json_array_foreach(topics, i, t) {
        if (!(ct = json_is_string(t) ? sf_cluster_snapshot_topic(r->snap, json_string_value(t))
                                     : NULL)) {
            sf_httpd_error(r->req, 404, "UNKNOWN_TOPIC_OR_PARTITION", "no topic %s",
                           json_is_string(t) ? json_string_value(t) : "(not a string)");
            return NULL;
        }
        *nparts += (size_t)ct->npartitions;
    }
    return json_incref(topics);
}

static int64_t from_of(json_t *body) {
    const char *from = json_string_value(json_object_get(body, "from"));
    return from && !strcmp(from, "earliest") ? SF_OFFSET_BEGINNING : SF_OFFSET_END;
}

/* POST /api/groups. */
static void register_group(sf_rest_t *r) {
    json_t *body = sf_rest_body(r), *name = json_object_get(body, "name"), *t;
    group_reg_t *g;
    sf_gw_job_t *job;
    size_t i, n, k = 0;
    int p;
    if (!body)
        return;
    if (!json_is_string(name) || !*json_string_value(name) || json_string_length(name) > 249) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST", "a group needs a name");
    } else if (!(g = calloc(1, sizeof(*g))) || !(g->names = known_topics(r, body, &n)) ||
               !(g->parts = calloc(n ? n : 1, sizeof(*g->parts))) ||
               !(job = sf_gw_job_new(r->req))) {
        if (!g || g->names) /* known_topics answers its own errors */
            sf_httpd_error(r->req, 503, NULL, "out of memory");
        group_reg_free(g);
    } else {
        snprintf(g->group, sizeof(g->group), "%s", json_string_value(name));
        g->from = from_of(body);
        json_array_foreach(g->names, i, t) {
            const sf_cluster_topic_t *ct = sf_cluster_snapshot_topic(r->snap, json_string_value(t));
            for (p = 0; p < ct->npartitions; p++)
                g->parts[k++] = (sf_topic_partition_t){json_string_value(t), p, -1, 0};
        }
        g->nparts = k;
        job->arg = g;
        job->free_arg = group_reg_free;
        job->run = run_register_group;
        sf_gw_submit(sf_gw_admin(r->gw), job);
    }
    json_decref(body);
}

/* POST /api/groups/<g>/members: a consumer instance subscribed to the topics. */
static void add_member(sf_rest_t *r, const char *group) {
    json_t *body = sf_rest_body(r), *name, *topics, *settings;
    char gen[64], *created = NULL;
    const char *member;
    sf_rest_instance_t *inst;
    size_t n;
    if (!body)
        return;
    name = json_object_get(body, "name");
    snprintf(gen, sizeof(gen), "member-%lx", random());
    if (name && (!json_is_string(name) || !*json_string_value(name) ||
                 json_string_length(name) > 100 || strchr(json_string_value(name), '/'))) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST", "name must be a short string without '/'");
    } else if ((topics = known_topics(r, body, &n))) {
        settings = json_pack("{s:s, s:s}", "format", "json", "auto.offset.reset",
                             from_of(body) == SF_OFFSET_BEGINNING ? "earliest" : "latest");
        member = name ? json_string_value(name) : gen;
        inst = sf_rest_instance_new(r, group, member, settings);
        json_decref(settings);
        if (inst)
            created = sf_rest_dump(json_pack("{s:s, s:s, s:s++++}", "group", group, "member",
                                             member, "events", "/api/groups/", group,
                                             "/members/", member, "/events"));
        if (created) {
            sf_rest_instance_subscribe(r, inst, json_pack("{s:o}", "topics", topics), created);
        } else {
            json_decref(topics);
            if (inst) {
                sf_rest_instance_close(r, inst);
                sf_httpd_error(r->req, 503, NULL, "out of memory");
            }
        }
    }
    json_decref(body);
}

/* ---- routing ---- */

static void in_topic(sf_rest_t *r, char **seg, int nseg) {
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(r->snap, seg[0]);
    enum evhttp_cmd_type cmd = r->cmd;
    json_t *body;
    if (!t) {
        sf_httpd_error(r->req, 404, "UNKNOWN_TOPIC_OR_PARTITION", "no topic %s", seg[0]);
    } else if (nseg == 2 && !strcmp(seg[1], "partitions") &&
               (cmd == EVHTTP_REQ_PUT || cmd == EVHTTP_REQ_PATCH || cmd == EVHTTP_REQ_POST)) {
        if ((body = sf_rest_body(r)))
            sf_rest_grow_topic(r, t->name, sf_rest_count(body, "count"));
        json_decref(body);
    } else if (nseg == 2 && !strcmp(seg[1], "events") && cmd == EVHTTP_REQ_POST) {
        write_event(r, t);
    } else if (nseg == 2 && !strcmp(seg[1], "subscribe") && cmd == EVHTTP_REQ_GET) {
        subscribe(r, t);
    } else if ((nseg == 4 || nseg == 5) && !strcmp(seg[1], "partitions") &&
               !strcmp(seg[3], "events") && cmd == EVHTTP_REQ_GET) {
        read_events(r, t, seg[2], nseg == 5 ? seg[4] : NULL);
    } else {
        sf_httpd_error(r->req, 404, NULL, "no such resource or method");
    }
}

static void in_groups(sf_rest_t *r, char **seg, int nseg) {
    enum evhttp_cmd_type cmd = r->cmd;
    sf_rest_instance_t *inst;
    if (nseg == 0 && cmd == EVHTTP_REQ_POST) {
        register_group(r);
    } else if (nseg == 2 && !strcmp(seg[1], "members") && cmd == EVHTTP_REQ_POST) {
        add_member(r, seg[0]);
    } else if (nseg >= 3 && nseg <= 4 && !strcmp(seg[1], "members") &&
               (nseg == 3 ? cmd == EVHTTP_REQ_DELETE
                          : !strcmp(seg[3], "events") && cmd == EVHTTP_REQ_GET)) {
        if (!(inst = sf_rest_instance_find(r, seg[0], seg[2])))
            return;
        if (nseg == 3)
            sf_rest_instance_delete(r, inst);
        else
            sf_rest_instance_stream(r, inst);
    } else {
        sf_httpd_error(r->req, 404, NULL, "no such resource or method");
    }
}

void sf_rest_plain_route(sf_rest_t *r, char **seg, int nseg) {
    if (nseg == 1 && !strcmp(seg[0], "nodes") && r->cmd == EVHTTP_REQ_GET)
        nodes(r);
    else if (nseg == 1 && !strcmp(seg[0], "topics") && r->cmd == EVHTTP_REQ_GET)
        topics(r);
    else if (nseg == 1 && !strcmp(seg[0], "topics") && r->cmd == EVHTTP_REQ_POST)
        create_topic(r);
    else if (nseg >= 2 && !strcmp(seg[0], "topics"))
        in_topic(r, seg + 1, nseg - 1);
    else if (nseg >= 1 && !strcmp(seg[0], "groups"))
        in_groups(r, seg + 1, nseg - 1);
    else
        sf_httpd_error(r->req, 404, NULL, "no such resource or method");
}
