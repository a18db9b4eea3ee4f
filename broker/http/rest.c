/* The REST API under /v3, in the resource format of Confluent's REST Proxy v3 (kind,
 * metadata.self, related links), read from the current view: the cluster, its brokers, topics
 * and partitions. */
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "broker.h"
#include "httpd.h"
#include "view.h"

#define MAX_SEGMENTS 8

/* One request: the view it reads and the base of the links it writes. */
typedef struct rest {
    struct evhttp_request *req;
    const sf_cluster_snapshot_t *snap;
    char base[512]; /* "http://host/v3/clusters/<id>" */
} rest_t;

static json_t *link_to(const rest_t *r, const char *suffix) {
    return json_pack("{s:s+}", "related", r->base, suffix);
}

static json_t *metadata(const rest_t *r, const char *suffix, const char *crn) {
    return json_pack("{s:s+, s:s++}", "self", r->base, suffix, "resource_name",
                     "crn:///kafka=", r->snap->cluster_id, crn);
}

static void reply(rest_t *r, json_t *o) {
    sf_httpd_json(r->req, o ? 200 : 503, o ? json_dumps(o, JSON_COMPACT) : NULL);
    json_decref(o);
}

/* {"kind": "<kind>List", "metadata": {"self": ..., "next": null}, "data": @data}. */
static json_t *list(const rest_t *r, const char *kind, const char *suffix, json_t *data) {
    return json_pack("{s:s+, s:{s:s+, s:n}, s:o}", "kind", kind, "List", "metadata", "self",
                     r->base, suffix, "next", "data", data);
}

static json_t *cluster(const rest_t *r) {
    json_t *o = json_pack("{s:s, s:o, s:s, s:o, s:o, s:o, s:o}", "kind", "KafkaCluster",
                          "metadata", metadata(r, "", ""), "cluster_id", r->snap->cluster_id,
                          "brokers", link_to(r, "/brokers"), "topics", link_to(r, "/topics"),
                          "broker_configs", link_to(r, "/broker-configs"), "consumer_groups",
                          link_to(r, "/consumer-groups"));
    char suffix[64];
    if (o && r->snap->controller_id >= 0) {
        snprintf(suffix, sizeof(suffix), "/brokers/%d", (int)r->snap->controller_id);
        json_object_set_new(o, "controller", link_to(r, suffix));
    } else if (o) {
        json_object_set_new(o, "controller", json_null());
    }
    return o;
}

static json_t *broker(const rest_t *r, const sf_cluster_broker_t *br) {
    char suffix[64], crn[64];
    snprintf(suffix, sizeof(suffix), "/brokers/%d", (int)br->id);
    snprintf(crn, sizeof(crn), "/broker=%d", (int)br->id);
    return json_pack("{s:s, s:o, s:s, s:i, s:s?, s:i, s:s?}", "kind", "KafkaBroker", "metadata",
                     metadata(r, suffix, crn), "cluster_id", r->snap->cluster_id, "broker_id",
                     (int)br->id, "host", br->host, "port", (int)br->port, "rack", br->rack);
}

static json_t *topic(const rest_t *r, const sf_cluster_topic_t *t) {
    char suffix[300], crn[300], parts[320];
    snprintf(suffix, sizeof(suffix), "/topics/%s", t->name);
    snprintf(crn, sizeof(crn), "/topic=%s", t->name);
    snprintf(parts, sizeof(parts), "%s/partitions", suffix);
    return json_pack("{s:s, s:o, s:s, s:s, s:b, s:i, s:i, s:o}", "kind", "KafkaTopic",
                     "metadata", metadata(r, suffix, crn), "cluster_id", r->snap->cluster_id,
                     "topic_name", t->name, "is_internal", t->name[0] == '_' && t->name[1] == '_',
                     "replication_factor", t->npartitions ? t->partitions[0].nreplicas : 0,
                     "partitions_count", t->npartitions, "partitions", link_to(r, parts));
}

static json_t *int_array(const int32_t *v, int n) {
    json_t *a = json_array();
    int i;
    for (i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *partition(const rest_t *r, const sf_cluster_topic_t *t,
                         const sf_cluster_partition_t *p) {
    char suffix[320], crn[320], leader[360];
    snprintf(suffix, sizeof(suffix), "/topics/%s/partitions/%d", t->name, (int)p->partition);
    snprintf(crn, sizeof(crn), "/topic=%s/partition=%d", t->name, (int)p->partition);
    snprintf(leader, sizeof(leader), "/brokers/%d", (int)p->leader);
    return json_pack("{s:s, s:o, s:s, s:s, s:i, s:o, s:i, s:o, s:o}", "kind", "KafkaPartition",
                     "metadata", metadata(r, suffix, crn), "cluster_id", r->snap->cluster_id,
                     "topic_name", t->name, "partition_id", (int)p->partition, "leader",
                     p->leader >= 0 ? link_to(r, leader) : json_null(), "leader_epoch",
                     (int)p->leader_epoch, "replicas", int_array(p->replicas, p->nreplicas), "isr",
                     int_array(p->isr, p->nisr));
}

static void not_found(rest_t *r, const char *kafka_error) {
    if (kafka_error)
        sf_httpd_error(r->req, 404, kafka_error, "This server does not host this topic-partition.");
    else
        sf_httpd_error(r->req, 404, NULL, "no such resource");
}

/* A non-negative decimal segment, or -1. */
static long index_of(const char *seg) {
    char *end;
    long v = strtol(seg, &end, 10);
    return *seg && !*end && v >= 0 && v <= INT32_MAX ? v : -1;
}

/* /topics/<name>[/partitions[/<p>]] (@seg[0] is the name). */
static void topics(rest_t *r, char **seg, int nseg) {
    const sf_cluster_topic_t *t = sf_cluster_snapshot_topic(r->snap, seg[0]);
    char suffix[320];
    json_t *data;
    long p;
    int i;
    if (!t) {
        not_found(r, "UNKNOWN_TOPIC_OR_PARTITION");
    } else if (nseg == 1) {
        reply(r, topic(r, t));
    } else if (strcmp(seg[1], "partitions") != 0 || nseg > 3) {
        not_found(r, NULL);
    } else if (nseg == 3) {
        p = index_of(seg[2]);
        if (p < 0 || p >= t->npartitions)
            not_found(r, "UNKNOWN_TOPIC_OR_PARTITION");
        else
            reply(r, partition(r, t, &t->partitions[p]));
    } else {
        data = json_array();
        for (i = 0; data && i < t->npartitions; i++)
            json_array_append_new(data, partition(r, t, &t->partitions[i]));
        snprintf(suffix, sizeof(suffix), "/topics/%s/partitions", t->name);
        reply(r, list(r, "KafkaPartition", suffix, data));
    }
}

/* /brokers[/<id>] (@seg[0] is "brokers"). */
static void brokers(rest_t *r, char **seg, int nseg) {
    const sf_cluster_broker_t *br;
    json_t *data;
    long id;
    int i;
    if (nseg == 2) {
        id = index_of(seg[1]);
        br = id < 0 ? NULL : sf_cluster_snapshot_broker(r->snap, (int32_t)id);
        if (br)
            reply(r, broker(r, br));
        else
            sf_httpd_error(r->req, 404, "BROKER_NOT_AVAILABLE", "no broker %s", seg[1]);
        return;
    }
    data = json_array();
    for (i = 0; data && i < r->snap->nbrokers; i++)
        json_array_append_new(data, broker(r, &r->snap->brokers[i]));
    reply(r, list(r, "KafkaBroker", "/brokers", data));
}

/* /v3/clusters/<id>/... with @seg after the id. */
static void in_cluster(rest_t *r, char **seg, int nseg) {
    json_t *data;
    int i;
    if (nseg == 0) {
        reply(r, cluster(r));
    } else if (!strcmp(seg[0], "brokers") && nseg <= 2) {
        brokers(r, seg, nseg);
    } else if (!strcmp(seg[0], "topics") && nseg >= 2) {
        topics(r, seg + 1, nseg - 1);
    } else if (!strcmp(seg[0], "topics")) {
        data = json_array();
        for (i = 0; data && i < r->snap->ntopics; i++)
            json_array_append_new(data, topic(r, r->snap->topics[i]));
        reply(r, list(r, "KafkaTopic", "/topics", data));
    } else {
        not_found(r, NULL);
    }
}

/* Split @path at '/' into at most MAX_SEGMENTS segments of @copy; -1 when there are more. */
static int split(char *copy, char **seg) {
    char *s, *save = NULL;
    int n = 0;
    for (s = strtok_r(copy, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        if (n == MAX_SEGMENTS)
            return -1;
        seg[n++] = s;
    }
    return n;
}

void sf_httpd_rest(struct evhttp_request *req, sf_broker_t *b, const char *path) {
    const char *host = evhttp_find_header(evhttp_request_get_input_headers(req), "Host");
    sf_view_t *v = sf_broker_view(b);
    char *copy = NULL, *seg[MAX_SEGMENTS];
    rest_t r;
    int nseg;

    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        sf_httpd_error(req, 405, NULL, "this resource is read with GET");
        return;
    }
    if (!v || !v->snap->cluster_id || !(copy = strdup(path))) {
        sf_httpd_error(req, 503, "LEADER_NOT_AVAILABLE", "the cluster metadata is not loaded");
        return;
    }
    nseg = split(copy, seg);
    memset(&r, 0, sizeof(r));
    r.req = req;
    r.snap = v->snap;
    snprintf(r.base, sizeof(r.base), "http://%s/v3/clusters/%s", host ? host : "localhost",
             r.snap->cluster_id);
    if (nseg < 2 || strcmp(seg[1], "clusters") != 0)
        sf_httpd_error(req, 404, NULL, "no such resource: %s", path);
    else if (nseg == 2)
        reply(&r, list(&r, "KafkaCluster", "", json_pack("[o]", cluster(&r))));
    else if (strcmp(seg[2], r.snap->cluster_id) != 0)
        sf_httpd_error(req, 404, NULL, "no cluster %s (this one is %s)", seg[2],
                       r.snap->cluster_id);
    else
        in_cluster(&r, seg + 3, nseg - 3);
    free(copy);
}
