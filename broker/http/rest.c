/* The REST API under /v3 (see rest.h): routing, and the resources the view answers for. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "broker.h"
#include "httpd.h"
#include "rest.h"
#include "view.h"

#define MAX_SEGMENTS 12

json_t *sf_rest_link(const sf_rest_links_t *l, const char *fmt, ...) {
    char suffix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(suffix, sizeof(suffix), fmt, ap);
    va_end(ap);
    return json_pack("{s:s+}", "related", l->base, suffix);
}

json_t *sf_rest_metadata(const sf_rest_links_t *l, const char *suffix, const char *crn) {
    return json_pack("{s:s+, s:s++}", "self", l->base, suffix, "resource_name",
                     "crn:///kafka=", l->cluster_id, crn);
}

json_t *sf_rest_list(const sf_rest_links_t *l, const char *kind, const char *suffix,
                     json_t *data) {
    return json_pack("{s:s+, s:{s:s+, s:n}, s:o}", "kind", kind, "List", "metadata", "self",
                     l->base, suffix, "next", "data", data);
}

char *sf_rest_dump(json_t *o) {
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

void sf_rest_reply(sf_rest_t *r, json_t *o) {
    sf_httpd_json(r->req, o ? 200 : 503, sf_rest_dump(o));
}

json_t *sf_rest_body(sf_rest_t *r) {
    struct evbuffer *in = evhttp_request_get_input_buffer(r->req);
    size_t n = evbuffer_get_length(in);
    json_error_t err;
    json_t *o = json_loadb((const char *)evbuffer_pullup(in, -1), n, 0, &err);
    if (!o)
        sf_httpd_error(r->req, 400, "INVALID_REQUEST", "the body is not JSON: %s (at %d)",
                       err.text, err.position);
    return o;
}

long sf_rest_count(json_t *o, const char *name) {
    json_t *v = json_object_get(o, name);
    if (!v || json_is_null(v))
        return -1;
    return json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= INT32_MAX
               ? (long)json_integer_value(v)
               : -2;
}

long sf_rest_index(const char *seg) {
    char *end;
    long v = strtol(seg, &end, 10);
    return *seg && !*end && v >= 0 && v <= INT32_MAX ? v : -1;
}

static json_t *cluster(const sf_rest_t *r) {
    json_t *o = json_pack("{s:s, s:o, s:s, s:o, s:o, s:o, s:o}", "kind", "KafkaCluster",
                          "metadata", sf_rest_metadata(&r->links, "", ""), "cluster_id", r->links.cluster_id,
                          "brokers", sf_rest_link(&r->links, "%s", "/brokers"), "topics", sf_rest_link(&r->links, "%s", "/topics"),
                          "broker_configs", sf_rest_link(&r->links, "%s", "/broker-configs"), "consumer_groups",
                          sf_rest_link(&r->links, "%s", "/consumer-groups"));
    char suffix[64];
    if (o && r->snap->controller_id >= 0) {
        snprintf(suffix, sizeof(suffix), "/brokers/%d", (int)r->snap->controller_id);
        json_object_set_new(o, "controller", sf_rest_link(&r->links, "%s", suffix));
    } else if (o) {
        json_object_set_new(o, "controller", json_null());
    }
    return o;
}

static json_t *broker(const sf_rest_t *r, const sf_cluster_broker_t *br) {
    char suffix[64], crn[64];
    snprintf(suffix, sizeof(suffix), "/brokers/%d", (int)br->id);
    snprintf(crn, sizeof(crn), "/broker=%d", (int)br->id);
    return json_pack("{s:s, s:o, s:s, s:i, s:s?, s:i, s:s?}", "kind", "KafkaBroker", "metadata",
                     sf_rest_metadata(&r->links, suffix, crn), "cluster_id", r->links.cluster_id, "broker_id",
                     (int)br->id, "host", br->host, "port", (int)br->port, "rack", br->rack);
}

json_t *sf_rest_topic(const sf_rest_links_t *l, const char *name, int partitions,
                      int replication_factor) {
    char suffix[300], crn[300];
    snprintf(suffix, sizeof(suffix), "/topics/%s", name);
    snprintf(crn, sizeof(crn), "/topic=%s", name);
    return json_pack("{s:s, s:o, s:s, s:s, s:b, s:i, s:i, s:o, s:o}", "kind", "KafkaTopic",
                     "metadata", sf_rest_metadata(l, suffix, crn), "cluster_id", l->cluster_id,
                     "topic_name", name, "is_internal", name[0] == '_' && name[1] == '_',
                     "replication_factor", replication_factor, "partitions_count", partitions,
                     "partitions", sf_rest_link(l, "%s/partitions", suffix), "configs",
                     sf_rest_link(l, "%s/configs", suffix));
}

static json_t *topic(const sf_rest_t *r, const sf_cluster_topic_t *t) {
    return sf_rest_topic(&r->links, t->name, t->npartitions,
                         t->npartitions ? t->partitions[0].nreplicas : 0);
}

static json_t *int_array(const int32_t *v, int n) {
    json_t *a = json_array();
    int i;
    for (i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *partition(const sf_rest_t *r, const sf_cluster_topic_t *t,
                         const sf_cluster_partition_t *p) {
    char suffix[320], crn[320], leader[360];
    snprintf(suffix, sizeof(suffix), "/topics/%s/partitions/%d", t->name, (int)p->partition);
    snprintf(crn, sizeof(crn), "/topic=%s/partition=%d", t->name, (int)p->partition);
    snprintf(leader, sizeof(leader), "/brokers/%d", (int)p->leader);
    return json_pack("{s:s, s:o, s:s, s:s, s:i, s:o, s:i, s:o, s:o}", "kind", "KafkaPartition",
                     "metadata", sf_rest_metadata(&r->links, suffix, crn), "cluster_id", r->links.cluster_id,
                     "topic_name", t->name, "partition_id", (int)p->partition, "leader",
                     p->leader >= 0 ? sf_rest_link(&r->links, "%s", leader) : json_null(), "leader_epoch",
                     (int)p->leader_epoch, "replicas", int_array(p->replicas, p->nreplicas), "isr",
                     int_array(p->isr, p->nisr));
}

static void not_found(sf_rest_t *r, const char *kafka_error) {
    if (kafka_error)
        sf_httpd_error(r->req, 404, kafka_error, "This server does not host this topic-partition.");
    else
        sf_httpd_error(r->req, 404, NULL, "no such resource");
}

/* /topics/<name>[/partitions[/<p>]] (@seg[0] is the name). */
static void topics(sf_rest_t *r, char **seg, int nseg) {
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(r->snap, seg[0]);
    char suffix[320];
    json_t *data;
    long p;
    int i;
    if (!t) {
        not_found(r, "UNKNOWN_TOPIC_OR_PARTITION");
    } else if (nseg == 1) {
        sf_rest_reply(r, topic(r, t));
    } else if (strcmp(seg[1], "partitions") != 0 || nseg > 3) {
        not_found(r, NULL);
    } else if (nseg == 3) {
        p = sf_rest_index(seg[2]);
        if (p < 0 || p >= t->npartitions)
            not_found(r, "UNKNOWN_TOPIC_OR_PARTITION");
        else
            sf_rest_reply(r, partition(r, t, &t->partitions[p]));
    } else {
        data = json_array();
        for (i = 0; data && i < t->npartitions; i++)
            json_array_append_new(data, partition(r, t, &t->partitions[i]));
        snprintf(suffix, sizeof(suffix), "/topics/%s/partitions", t->name);
        sf_rest_reply(r, sf_rest_list(&r->links, "KafkaPartition", suffix, data));
    }
}

/* /brokers[/<id>] (@seg[0] is "brokers"). */
static void brokers(sf_rest_t *r, char **seg, int nseg) {
    const sf_cluster_broker_t *br;
    json_t *data;
    long id;
    int i;
    if (nseg == 2) {
        id = sf_rest_index(seg[1]);
        br = id < 0 ? NULL : sf_cluster_snapshot_broker(r->snap, (int32_t)id);
        if (br)
            sf_rest_reply(r, broker(r, br));
        else
            sf_httpd_error(r->req, 404, "BROKER_NOT_AVAILABLE", "no broker %s", seg[1]);
        return;
    }
    data = json_array();
    for (i = 0; data && i < r->snap->nbrokers; i++)
        json_array_append_new(data, broker(r, &r->snap->brokers[i]));
    sf_rest_reply(r, sf_rest_list(&r->links, "KafkaBroker", "/brokers", data));
}

/* /v3/clusters/<id>/... with @seg after the id. */
static void in_cluster(sf_rest_t *r, char **seg, int nseg) {
    json_t *data;
    int i;
    if (nseg == 0) {
        sf_rest_reply(r, cluster(r));
    } else if (!strcmp(seg[0], "brokers") && nseg <= 2) {
        brokers(r, seg, nseg);
    } else if (!strcmp(seg[0], "topics") && nseg >= 2) {
        topics(r, seg + 1, nseg - 1);
    } else if (!strcmp(seg[0], "topics")) {
        data = json_array();
        for (i = 0; data && i < r->snap->ntopics; i++)
            json_array_append_new(data, topic(r, r->snap->topics[i]));
        sf_rest_reply(r, sf_rest_list(&r->links, "KafkaTopic", "/topics", data));
    } else {
        not_found(r, NULL);
    }
}

/* Decode the %XX escapes of @s in place; -1 when one is malformed or decodes to NUL or '/'. */
static int percent_decode(char *s) {
    char *out = s, hex[3] = {0};
    long c;
    for (; *s; s++) {
        if (*s != '%') {
            *out++ = *s;
            continue;
        }
        if (!s[1] || !s[2])
            return -1;
        hex[0] = s[1];
        hex[1] = s[2];
        c = strtol(hex, NULL, 16);
        if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]) || c == 0 ||
            c == '/')
            return -1;
        *out++ = (char)c;
        s += 2;
    }
    *out = '\0';
    return 0;
}

/* Split @copy at '/' into at most MAX_SEGMENTS decoded segments; -1 when there are more or
 * one does not decode. */
static int split(char *copy, char **seg) {
    char *s, *save = NULL;
    int n = 0;
    for (s = strtok_r(copy, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        if (n == MAX_SEGMENTS || percent_decode(s) != 0)
            return -1;
        seg[n++] = s;
    }
    return n;
}

/* /v3/clusters/<id>/... with @seg after the id: writes and what needs other brokers first,
 * then what the view answers. */
static void route(sf_rest_t *r, char **seg, int nseg) {
    if (sf_rest_records_route(r, seg, nseg) || sf_rest_admin_route(r, seg, nseg))
        return;
    if (r->cmd != EVHTTP_REQ_GET && r->cmd != EVHTTP_REQ_HEAD)
        sf_httpd_error(r->req, 405, NULL, "this resource is read with GET");
    else
        in_cluster(r, seg, nseg);
}

long sf_rest_query_long(const sf_rest_t *r, const char *key, long def, long min, long max) {
    char buf[32], *end;
    long v;
    if (!sf_rest_query(r, key, buf, sizeof(buf)))
        return def;
    v = strtol(buf, &end, 10);
    return *buf && !*end && v >= min && v <= max ? v : def;
}

const char *sf_rest_query(const sf_rest_t *r, const char *key, char *buf, size_t size) {
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(r->req);
    const char *q = uri ? evhttp_uri_get_query(uri) : NULL, *v;
    struct evkeyvalq params;
    if (!q || evhttp_parse_query_str(q, &params) != 0)
        return NULL;
    if ((v = evhttp_find_header(&params, key)))
        snprintf(buf, size, "%s", v);
    evhttp_clear_headers(&params);
    return v ? buf : NULL;
}

void sf_httpd_rest(struct evhttp_request *req, sf_broker_t *b, struct sf_gw *gw,
                   sf_rest_consumers_t *consumers, const char *scheme, const char *path) {
    const char *host = evhttp_find_header(evhttp_request_get_input_headers(req), "Host");
    sf_view_t *v = sf_broker_view(b);
    char *copy = NULL, *seg[MAX_SEGMENTS];
    sf_rest_t r;
    int nseg;

    if (!v || !v->snap->cluster_id || !(copy = strdup(path))) {
        sf_httpd_error(req, 503, "LEADER_NOT_AVAILABLE", "the cluster metadata is not loaded");
        return;
    }
    nseg = split(copy, seg);
    memset(&r, 0, sizeof(r));
    r.req = req;
    r.cmd = evhttp_request_get_command(req);
    r.snap = v->snap;
    r.gw = gw;
    r.consumers = consumers;
    snprintf(r.links.origin, sizeof(r.links.origin), "%s://%s", scheme, host ? host : "localhost");
    snprintf(r.links.base, sizeof(r.links.base), "%s/v3/clusters/%s", r.links.origin,
             r.snap->cluster_id);
    snprintf(r.links.cluster_id, sizeof(r.links.cluster_id), "%s", r.snap->cluster_id);
    if (nseg >= 1 && !strcmp(seg[0], "consumers"))
        sf_rest_consumers_route(&r, seg + 1, nseg - 1);
    else if (nseg >= 1 && !strcmp(seg[0], "api"))
        sf_rest_plain_route(&r, seg + 1, nseg - 1);
    else if (nseg < 2 || strcmp(seg[1], "clusters") != 0)
        sf_httpd_error(req, 404, NULL, "no such resource: %s", path);
    else if (nseg == 2 && r.cmd == EVHTTP_REQ_GET)
        sf_rest_reply(&r, sf_rest_list(&r.links, "KafkaCluster", "",
                                       json_pack("[o]", cluster(&r))));
    else if (nseg == 2)
        sf_httpd_error(req, 405, NULL, "this resource is read with GET");
    else if (strcmp(seg[2], r.snap->cluster_id) != 0)
        sf_httpd_error(req, 404, NULL, "no cluster %s (this one is %s)", seg[2],
                       r.snap->cluster_id);
    else
        route(&r, seg + 3, nseg - 3);
    free(copy);
}
