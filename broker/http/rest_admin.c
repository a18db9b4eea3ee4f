/* The REST API's admin resources (see rest.h), served through the gateway's admin client so
 * that the controller, the right broker or the group's coordinator answers:
 *
 *   POST   /topics                                create {"topic_name", "partitions_count",
 *                                                 "replication_factor", "configs": [{name, value}],
 *                                                 "replicas_assignments": [{"partition_id",
 *                                                 "broker_ids"}], "validate_only"}
 *   DELETE /topics/<t>                            delete
 *   PATCH  /topics/<t>                            {"partitions_count": N} grows the topic
 *   GET    /topics/<t>/configs[/<name>]           read; PUT /configs/<name> {"value"} sets,
 *   DELETE /topics/<t>/configs/<name>             resets, POST /configs:alter {"data": [{name,
 *                                                 value} or {name, "operation": "DELETE"}]}
 *   the same under /brokers/<id>/configs and /broker-configs (the cluster-wide defaults)
 *   GET    /consumer-groups[/<g>[/consumers[/<m>[/assignments[/<t>/partitions/<p>]]]
 *                                 | /lag-summary | /lags[/<t>/partitions/<p>]]]
 *
 * The paths are relative to /v3/clusters/<id>. Each job runs on the admin thread with copies
 * of what it needs, never the view. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/http.h>
#include <jansson.h>

#include "gateway.h"
#include "httpd.h"
#include "rest.h"

#define TIMEOUT_MS 15000
#define MAX_CONFIGS 1000
#define MAX_ASSIGNED_PARTITIONS 10000
#define MAX_ASSIGNED_REPLICAS 64

typedef enum { CONFIGS_TOPIC, CONFIGS_BROKER, CONFIGS_CLUSTER } configs_of_t;

/* Which view of a consumer group a GET asks for. */
typedef enum {
    G_GROUP,
    G_CONSUMERS,
    G_CONSUMER,
    G_ASSIGNMENTS,
    G_ASSIGNMENT,
    G_LAGS,
    G_LAG,
    G_LAG_SUMMARY
} group_view_t;

/* One admin operation's parameters, copied from the request on the loop. */
typedef struct op {
    sf_rest_links_t links;
    char name[256];      /* topic, group, or broker id ("" for the cluster's defaults) */
    char item[256];      /* config name, consumer id, or "" */
    configs_of_t of;
    int32_t partitions;  /* -1: the default */
    int16_t replication; /* -1: the default */
    sf_config_kv_t *kvs; /* names and values owned */
    size_t nkvs;
    int32_t *replicas;   /* create: partitions x replication broker ids, or NULL */
    int validate_only;   /* create */
    group_view_t view;   /* groups: what to answer; @item is the consumer id */
    char topic[256];     /* groups: the assignment's or lag's partition */
    int32_t partition;
} op_t;

static void op_free(void *arg) {
    op_t *o = arg;
    size_t i;
    if (!o)
        return;
    for (i = 0; i < o->nkvs; i++) {
        free((char *)o->kvs[i].name);
        free((char *)o->kvs[i].value);
    }
    free(o->kvs);
    free(o->replicas);
    free(o);
}

/* A job of @run for @r with a fresh op; NULL after answering 503. */
static sf_gw_job_t *op_job(sf_rest_t *r, void (*run)(sf_gw_job_t *, sf_admin_t *), op_t **op) {
    sf_gw_job_t *job = sf_gw_job_new(r->req);
    if (job && (*op = calloc(1, sizeof(**op)))) {
        (*op)->links = r->links;
        (*op)->partitions = -1;
        (*op)->replication = -1;
        job->arg = *op;
        job->free_arg = op_free;
        job->run = run;
        return job;
    }
    free(job);
    sf_httpd_error(r->req, 503, NULL, "out of memory");
    return NULL;
}

/* Add @name = @value (NULL: delete) to @o's kvs. */
static int op_add_kv(op_t *o, const char *name, const char *value) {
    sf_config_kv_t *kvs = realloc(o->kvs, (o->nkvs + 1) * sizeof(*kvs));
    if (!kvs)
        return -1;
    o->kvs = kvs;
    kvs[o->nkvs].name = strdup(name);
    kvs[o->nkvs].value = value ? strdup(value) : NULL;
    o->nkvs++;
    return kvs[o->nkvs - 1].name && (!value || kvs[o->nkvs - 1].value) ? 0 : -1;
}

/* [{"name": ..., "value": ...}, or "operation": "DELETE"] into @o; a sentence on bad input. */
static const char *op_add_kvs(op_t *o, json_t *a) {
    json_t *e;
    size_t i;
    if (!a || json_is_null(a))
        return NULL;
    if (!json_is_array(a) || json_array_size(a) > MAX_CONFIGS)
        return "configs must be an array of {\"name\", \"value\"}";
    json_array_foreach(a, i, e) {
        json_t *name = json_object_get(e, "name"), *value = json_object_get(e, "value");
        json_t *op = json_object_get(e, "operation");
        int del = json_is_string(op) && !strcasecmp(json_string_value(op), "DELETE");
        if (!json_is_string(name) || (!del && !json_is_string(value)) ||
            (op && !del && !(json_is_string(op) && !strcasecmp(json_string_value(op), "SET"))))
            return "each config needs a \"name\" and a string \"value\" (or \"operation\": "
                   "\"DELETE\")";
        if (op_add_kv(o, json_string_value(name), del ? NULL : json_string_value(value)) != 0)
            return "out of memory";
    }
    return NULL;
}

/* ---- topics ---- */

/* Answer @job with @topic as the cluster now describes it. */
static void answer_topic(sf_gw_job_t *job, sf_admin_t *a, const op_t *o, int status) {
    const char *names[1] = {o->name};
    sf_cluster_info_t *info = NULL;
    int rc = sf_admin_describe_cluster(a, names, 1, TIMEOUT_MS, &info);
    const sf_topic_info_t *t = rc == SF_OK && info->topic_count ? &info->topics[0] : NULL;
    if (t && !t->err) {
        job->status = status;
        job->body = sf_rest_dump(sf_rest_topic(
            &o->links, o->name, (int)t->partition_count,
            t->partition_count ? (int)t->partitions[0].replica_count : 0));
    } else {
        sf_gw_fail_err(job, rc != SF_OK ? rc : t ? t->err : 3, o->name);
    }
    sf_cluster_info_destroy(info);
}

static void run_create_topic(sf_gw_job_t *job, sf_admin_t *a) {
    op_t *o = job->arg;
    char errstr[256] = "";
    int rc = sf_admin_create_topic_ex(a, o->name, &o->partitions, &o->replication, o->replicas,
                                      o->kvs, o->nkvs, o->validate_only, TIMEOUT_MS, errstr,
                                      sizeof(errstr));
    if (rc != SF_OK) {
        sf_gw_fail_err(job, rc, *errstr ? errstr : o->name);
    } else if (o->validate_only) { /* nothing to describe: what the controller would make */
        job->status = 201;
        job->body = sf_rest_dump(sf_rest_topic(&o->links, o->name, (int)o->partitions,
                                               (int)o->replication));
    } else {
        answer_topic(job, a, o, 201);
    }
}

/* [{"partition_id": i, "broker_ids": [...]}, ...] covering partitions 0..n-1 with as many
 * replicas each, into @o; a sentence on bad input. */
static const char *op_set_replicas(op_t *o, json_t *a) {
    json_t *e, *ids;
    size_t i, j, n = json_array_size(a), rf = 0;
    const char *bad;
    unsigned char *seen;
    if (!json_is_array(a) || n == 0 || n > MAX_ASSIGNED_PARTITIONS)
        return "replicas_assignments must be a non-empty array of {\"partition_id\", "
               "\"broker_ids\"}";
    if (o->partitions != -1 || o->replication != -1)
        return "give replicas_assignments or partitions_count and replication_factor, not both";
    if (!(seen = calloc(n, 1)))
        return "out of memory";
    bad = NULL;
    json_array_foreach(a, i, e) {
        json_t *pid = json_object_get(e, "partition_id");
        ids = json_object_get(e, "broker_ids");
        if (!json_is_integer(pid) || json_integer_value(pid) < 0 ||
            json_integer_value(pid) >= (json_int_t)n || !json_is_array(ids) ||
            json_array_size(ids) == 0 || json_array_size(ids) > MAX_ASSIGNED_REPLICAS ||
            (rf && json_array_size(ids) != rf)) {
            bad = "each assignment needs a partition_id from 0 to the count - 1 and as many "
                  "broker_ids as the others";
            break;
        }
        if (seen[json_integer_value(pid)]++) {
            bad = "each partition_id must be assigned once";
            break;
        }
        rf = json_array_size(ids);
        if (!o->replicas && !(o->replicas = malloc(n * rf * sizeof(int32_t)))) {
            bad = "out of memory";
            break;
        }
        for (j = 0; j < rf && !bad; j++) {
            json_t *id = json_array_get(ids, j);
            if (!json_is_integer(id) || json_integer_value(id) < 0 ||
                json_integer_value(id) > INT32_MAX)
                bad = "broker_ids must be broker ids";
            else
                o->replicas[(size_t)json_integer_value(pid) * rf + j] =
                    (int32_t)json_integer_value(id);
        }
        if (bad)
            break;
    }
    free(seen);
    if (!bad) { /* n distinct ids below n: every partition is assigned */
        o->partitions = (int32_t)n;
        o->replication = (int16_t)rf;
    }
    return bad;
}

static void run_delete_topic(sf_gw_job_t *job, sf_admin_t *a) {
    op_t *o = job->arg;
    char errstr[256] = "";
    int rc = sf_admin_delete_topic(a, o->name, TIMEOUT_MS, errstr, sizeof(errstr));
    if (rc != SF_OK)
        sf_gw_fail_err(job, rc, *errstr ? errstr : o->name);
    else
        job->status = 204;
}

static void run_grow_topic(sf_gw_job_t *job, sf_admin_t *a) {
    op_t *o = job->arg;
    char errstr[256] = "";
    int rc = sf_admin_create_partitions(a, o->name, o->partitions, TIMEOUT_MS, errstr,
                                        sizeof(errstr));
    if (rc != SF_OK)
        sf_gw_fail_err(job, rc, *errstr ? errstr : o->name);
    else
        answer_topic(job, a, o, 200);
}

static void create_topic_job(sf_rest_t *r, const char *name, long partitions, long replication,
                             json_t *configs, json_t *assignments, int validate_only) {
    const char *bad = NULL;
    sf_gw_job_t *job;
    op_t *o;
    if (!name || !*name || strlen(name) >= sizeof(o->name))
        bad = "the topic needs a name";
    else if (partitions == -2 || replication == -2 || replication > INT16_MAX)
        bad = "the partition count and replication factor must be positive integers";
    if (bad) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST", "%s", bad);
    } else if ((job = op_job(r, run_create_topic, &o))) {
        snprintf(o->name, sizeof(o->name), "%s", name);
        o->partitions = (int32_t)partitions;
        o->replication = (int16_t)replication;
        o->validate_only = validate_only;
        if ((bad = op_add_kvs(o, configs)) ||
            (assignments && (bad = op_set_replicas(o, assignments)))) {
            sf_httpd_error(r->req, 400, "INVALID_REQUEST", "%s", bad);
            sf_gw_job_free(job);
        } else {
            sf_gw_submit(sf_gw_admin(r->gw), job);
        }
    }
}

void sf_rest_create_topic(sf_rest_t *r, const char *name, long partitions, long replication,
                          json_t *configs) {
    create_topic_job(r, name, partitions, replication, configs, NULL, 0);
}

/* POST /topics. */
static void create_topic(sf_rest_t *r) {
    json_t *body = sf_rest_body(r), *assignments;
    if (!body)
        return;
    assignments = json_object_get(body, "replicas_assignments");
    create_topic_job(r, json_string_value(json_object_get(body, "topic_name")),
                     sf_rest_count(body, "partitions_count"),
                     sf_rest_count(body, "replication_factor"), json_object_get(body, "configs"),
                     json_is_null(assignments) ? NULL : assignments,
                     json_is_true(json_object_get(body, "validate_only")));
    json_decref(body);
}

void sf_rest_grow_topic(sf_rest_t *r, const char *name, long partitions) {
    sf_gw_job_t *job;
    op_t *o;
    if (partitions < 0) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST",
                       "the partition count must be an integer above the current count");
    } else if ((job = op_job(r, run_grow_topic, &o))) {
        snprintf(o->name, sizeof(o->name), "%s", name);
        o->partitions = (int32_t)partitions;
        sf_gw_submit(sf_gw_admin(r->gw), job);
    }
}

/* DELETE or PATCH /topics/<t>. */
static void change_topic(sf_rest_t *r, const char *name) {
    json_t *body;
    sf_gw_job_t *job;
    op_t *o;
    if (r->cmd == EVHTTP_REQ_PATCH) {
        if ((body = sf_rest_body(r)))
            sf_rest_grow_topic(r, name, sf_rest_count(body, "partitions_count"));
        json_decref(body);
    } else if ((job = op_job(r, run_delete_topic, &o))) {
        snprintf(o->name, sizeof(o->name), "%s", name);
        sf_gw_submit(sf_gw_admin(r->gw), job);
    }
}

/* ---- configs ---- */

static const char *source_name(int source) {
    static const char *const names[] = {"UNKNOWN",
                                        "DYNAMIC_TOPIC_CONFIG",
                                        "DYNAMIC_BROKER_CONFIG",
                                        "DYNAMIC_DEFAULT_BROKER_CONFIG",
                                        "STATIC_BROKER_CONFIG",
                                        "DEFAULT_CONFIG",
                                        "DYNAMIC_BROKER_LOGGER_CONFIG"};
    return source >= 0 && source < 7 ? names[source] : "UNKNOWN";
}

static json_t *config_json(const op_t *o, const sf_config_entry_t *e) {
    static const char *const kinds[] = {"KafkaTopicConfig", "KafkaBrokerConfig",
                                        "KafkaClusterConfig"};
    char suffix[600], crn[600];
    json_t *j;
    if (o->of == CONFIGS_TOPIC) {
        snprintf(suffix, sizeof(suffix), "/topics/%s/configs/%s", o->name, e->name);
        snprintf(crn, sizeof(crn), "/topic=%s/config=%s", o->name, e->name);
    } else if (o->of == CONFIGS_BROKER) {
        snprintf(suffix, sizeof(suffix), "/brokers/%s/configs/%s", o->name, e->name);
        snprintf(crn, sizeof(crn), "/broker=%s/config=%s", o->name, e->name);
    } else {
        snprintf(suffix, sizeof(suffix), "/broker-configs/%s", e->name);
        snprintf(crn, sizeof(crn), "/broker-config=%s", e->name);
    }
    j = json_pack("{s:s, s:o, s:s, s:s, s:s?, s:b, s:b, s:b, s:s, s:[]}", "kind",
                  kinds[o->of], "metadata", sf_rest_metadata(&o->links, suffix, crn),
                  "cluster_id", o->links.cluster_id, "name", e->name, "value", e->value,
                  "is_default", e->is_default, "is_read_only", e->read_only, "is_sensitive",
                  e->sensitive, "source", source_name(e->source), "synonyms");
    if (j && o->of == CONFIGS_TOPIC)
        json_object_set_new(j, "topic_name", json_string(o->name));
    else if (j && o->of == CONFIGS_BROKER)
        json_object_set_new(j, "broker_id", json_integer(atoi(o->name)));
    else if (j)
        json_object_set_new(j, "config_type", json_string("BROKER"));
    return j;
}

static void run_read_configs(sf_gw_job_t *job, sf_admin_t *a) {
    op_t *o = job->arg;
    sf_config_entry_t *entries = NULL;
    size_t n = 0, i;
    char suffix[300];
    json_t *data = json_array();
    int rc = sf_admin_describe_configs(a, o->name, o->of != CONFIGS_TOPIC, TIMEOUT_MS, &entries,
                                       &n);
    for (i = 0; rc == SF_OK && i < n; i++) {
        if (!*o->item)
            json_array_append_new(data, config_json(o, &entries[i]));
        else if (!strcmp(entries[i].name, o->item))
            break;
    }
    if (rc != SF_OK) {
        sf_gw_fail_err(job, rc, o->name);
    } else if (*o->item && i == n) {
        sf_gw_fail(job, 404, "INVALID_CONFIG", "no config %s", o->item);
    } else if (*o->item) {
        job->status = 200;
        job->body = sf_rest_dump(config_json(o, &entries[i]));
    } else {
        if (o->of == CONFIGS_TOPIC)
            snprintf(suffix, sizeof(suffix), "/topics/%s/configs", o->name);
        else if (o->of == CONFIGS_BROKER)
            snprintf(suffix, sizeof(suffix), "/brokers/%s/configs", o->name);
        else
            snprintf(suffix, sizeof(suffix), "/broker-configs");
        job->status = 200;
        job->body = sf_rest_dump(sf_rest_list(&o->links, o->of == CONFIGS_TOPIC ? "KafkaTopicConfig"
                                              : o->of == CONFIGS_BROKER ? "KafkaBrokerConfig"
                                                                         : "KafkaClusterConfig",
                                              suffix, json_incref(data)));
    }
    json_decref(data);
    sf_config_entries_destroy(entries, n);
}

static void run_alter_configs(sf_gw_job_t *job, sf_admin_t *a) {
    op_t *o = job->arg;
    char errstr[256] = "";
    int rc = o->of == CONFIGS_TOPIC
                 ? sf_admin_alter_configs(a, o->name, o->kvs, o->nkvs, TIMEOUT_MS, errstr,
                                          sizeof(errstr))
                 : sf_admin_alter_broker_configs(a, o->name, o->kvs, o->nkvs, TIMEOUT_MS,
                                                 errstr, sizeof(errstr));
    if (rc != SF_OK)
        sf_gw_fail_err(job, rc, *errstr ? errstr : o->name);
    else
        job->status = 204;
}

/* The configs of @name (@of) with @seg after "configs" (or "configs:alter" when @alter). */
static void configs(sf_rest_t *r, configs_of_t of, const char *name, char **seg, int nseg,
                    int alter) {
    int write = alter || r->cmd == EVHTTP_REQ_PUT || r->cmd == EVHTTP_REQ_DELETE;
    json_t *body = NULL;
    const char *bad = NULL;
    sf_gw_job_t *job;
    op_t *o;
    if (nseg > 1 || (alter && nseg)) {
        sf_httpd_error(r->req, 404, NULL, "no such resource");
        return;
    }
    if ((write && !alter && !nseg) || (alter && r->cmd != EVHTTP_REQ_POST) ||
        (!write && r->cmd != EVHTTP_REQ_GET)) {
        sf_httpd_error(r->req, 405, NULL, "configs are read with GET, set with PUT, reset "
                       "with DELETE and altered together with POST .../configs:alter");
        return;
    }
    if ((alter || r->cmd == EVHTTP_REQ_PUT) && !(body = sf_rest_body(r)))
        return;
    if (!(job = op_job(r, write ? run_alter_configs : run_read_configs, &o))) {
        json_decref(body);
        return;
    }
    o->of = of;
    snprintf(o->name, sizeof(o->name), "%s", name);
    snprintf(o->item, sizeof(o->item), "%s", nseg ? seg[0] : "");
    if (alter)
        bad = op_add_kvs(o, json_object_get(body, "data"));
    else if (r->cmd == EVHTTP_REQ_PUT && !json_is_string(json_object_get(body, "value")))
        bad = "PUT takes {\"value\": \"...\"}";
    else if (write && op_add_kv(o, seg[0], r->cmd == EVHTTP_REQ_PUT ? json_string_value(
                                                     json_object_get(body, "value"))
                                                                  : NULL) != 0)
        bad = "out of memory";
    if (bad) {
        sf_httpd_error(r->req, 400, "INVALID_REQUEST", "%s", bad);
        sf_gw_job_free(job);
    } else {
        sf_gw_submit(sf_gw_admin(r->gw), job);
    }
    json_decref(body);
}

/* ---- consumer groups ---- */

/* "PreparingRebalance" as REST Proxy's "PREPARING_REBALANCE". */
static json_t *state_name(const char *state) {
    char out[64];
    size_t n = 0;
    for (; state && *state && n < sizeof(out) - 2; state++) {
        if (isupper((unsigned char)*state) && n)
            out[n++] = '_';
        out[n++] = (char)toupper((unsigned char)*state);
    }
    out[n] = '\0';
    return json_string(n ? out : "UNKNOWN");
}

static json_t *group_json(const op_t *o, const char *id, const char *state, const char *ptype,
                          const char *assignor, int32_t coordinator) {
    char suffix[300], crn[300];
    snprintf(suffix, sizeof(suffix), "/consumer-groups/%s", id);
    snprintf(crn, sizeof(crn), "/consumer-group=%s", id);
    return json_pack("{s:s, s:o, s:s, s:s, s:b, s:s, s:o, s:s, s:o, s:o, s:o}", "kind",
                     "KafkaConsumerGroup", "metadata", sf_rest_metadata(&o->links, suffix, crn),
                     "cluster_id", o->links.cluster_id, "consumer_group_id", id, "is_simple",
                     !ptype || !*ptype, "partition_assignor", assignor ? assignor : "", "state",
                     state_name(state), "type", "CLASSIC", "coordinator",
                     sf_rest_link(&o->links, "/brokers/%d", (int)coordinator), "consumers",
                     sf_rest_link(&o->links, "%s/consumers", suffix), "lag_summary",
                     sf_rest_link(&o->links, "%s/lag-summary", suffix));
}

static json_t *consumer_json(const op_t *o, const sf_group_member_t *m) {
    char suffix[600], crn[600];
    snprintf(suffix, sizeof(suffix), "/consumer-groups/%s/consumers/%s", o->name, m->member_id);
    snprintf(crn, sizeof(crn), "/consumer-group=%s/consumer=%s", o->name, m->member_id);
    return json_pack("{s:s, s:o, s:s, s:s, s:s, s:s?, s:s, s:s, s:o}", "kind", "KafkaConsumer",
                     "metadata", sf_rest_metadata(&o->links, suffix, crn), "cluster_id",
                     o->links.cluster_id, "consumer_group_id", o->name, "consumer_id",
                     m->member_id, "instance_id", m->instance_id, "client_id", m->client_id,
                     "host", m->host, "assignments",
                     sf_rest_link(&o->links, "%s/assignments", suffix));
}

static json_t *assignment_json(const op_t *o, const sf_group_member_t *m,
                               const sf_topic_partition_t *tp) {
    char suffix[900], crn[900];
    snprintf(suffix, sizeof(suffix), "/consumer-groups/%s/consumers/%s/assignments/%s/partitions/%d",
             o->name, m->member_id, tp->topic, (int)tp->partition);
    snprintf(crn, sizeof(crn), "/consumer-group=%s/consumer=%s/assignment=%s/partition=%d",
             o->name, m->member_id, tp->topic, (int)tp->partition);
    return json_pack("{s:s, s:o, s:s, s:s, s:s, s:s, s:i, s:o, s:o}", "kind",
                     "KafkaConsumerAssignment", "metadata",
                     sf_rest_metadata(&o->links, suffix, crn), "cluster_id", o->links.cluster_id,
                     "consumer_group_id", o->name, "consumer_id", m->member_id, "topic_name",
                     tp->topic, "partition_id", (int)tp->partition, "partition",
                     sf_rest_link(&o->links, "/topics/%s/partitions/%d", tp->topic,
                                  (int)tp->partition),
                     "lag", sf_rest_link(&o->links, "/consumer-groups/%s/lags/%s/partitions/%d",
                                         o->name, tp->topic, (int)tp->partition));
}

/* The assignments of @m (G_ASSIGNMENTS), or the one of o->topic/o->partition (G_ASSIGNMENT;
 * NULL with *@rc 3 when it is not assigned to @m). */
static json_t *assignments(const op_t *o, const sf_group_member_t *m, int *rc) {
    json_t *data = json_array();
    char suffix[600];
    size_t i;
    for (i = 0; i < m->assignment_count; i++) {
        const sf_topic_partition_t *tp = &m->assignment[i];
        if (o->view == G_ASSIGNMENTS) {
            json_array_append_new(data, assignment_json(o, m, tp));
        } else if (tp->partition == o->partition && !strcmp(tp->topic, o->topic)) {
            json_decref(data);
            return assignment_json(o, m, tp);
        }
    }
    if (o->view == G_ASSIGNMENT) {
        json_decref(data);
        *rc = 3; /* UNKNOWN_TOPIC_OR_PARTITION */
        return NULL;
    }
    snprintf(suffix, sizeof(suffix), "/consumer-groups/%s/consumers/%s/assignments", o->name,
             m->member_id);
    return sf_rest_list(&o->links, "KafkaConsumerAssignment", suffix, data);
}

static void run_list_groups(sf_gw_job_t *job, sf_admin_t *a) {
    op_t *o = job->arg;
    sf_group_listing_t *groups = NULL;
    size_t n = 0, i;
    json_t *data = json_array();
    int rc = sf_admin_list_groups(a, TIMEOUT_MS, &groups, &n);
    for (i = 0; data && i < n; i++)
        json_array_append_new(data, group_json(o, groups[i].group_id, groups[i].state,
                                               groups[i].protocol_type, NULL,
                                               groups[i].coordinator));
    if (rc != SF_OK && !n) {
        json_decref(data);
        sf_gw_fail_err(job, rc, "listing the groups");
    } else {
        job->status = 200;
        job->body = sf_rest_dump(sf_rest_list(&o->links, "KafkaConsumerGroup",
                                              "/consumer-groups", data));
    }
    sf_group_listings_destroy(groups, n);
}

/* The member of @g assigned @topic/@partition, or NULL. */
static const sf_group_member_t *owner_of(const sf_group_info_t *g, const char *topic,
                                         int32_t partition) {
    size_t m, i;
    for (m = 0; m < g->member_count; m++)
        for (i = 0; i < g->members[m].assignment_count; i++)
            if (g->members[m].assignment[i].partition == partition &&
                !strcmp(g->members[m].assignment[i].topic, topic))
                return &g->members[m];
    return NULL;
}

static json_t *lag_json(const op_t *o, const sf_group_lag_t *l, const sf_group_member_t *m) {
    char suffix[600], crn[600];
    snprintf(suffix, sizeof(suffix), "/consumer-groups/%s/lags/%s/partitions/%d", o->name,
             l->topic, (int)l->partition);
    snprintf(crn, sizeof(crn), "/consumer-group=%s/lag=%s/partition=%d", o->name, l->topic,
             (int)l->partition);
    return json_pack("{s:s, s:o, s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:s, s:s?, s:s}", "kind",
                     "KafkaConsumerLag", "metadata", sf_rest_metadata(&o->links, suffix, crn),
                     "cluster_id", o->links.cluster_id, "consumer_group_id",
                     o->name, "topic_name", l->topic, "partition_id", (int)l->partition,
                     "current_offset", (json_int_t)l->committed, "log_end_offset",
                     (json_int_t)l->log_end, "lag", (json_int_t)l->lag, "consumer_id",
                     m ? m->member_id : "", "instance_id", m ? m->instance_id : NULL,
                     "client_id", m ? m->client_id : "");
}

/* /lags, /lags/<t>/partitions/<p> or /lag-summary of the described group @g. */
static json_t *lags(const op_t *o, sf_admin_t *a, const sf_group_info_t *g, int *rc) {
    sf_group_lag_t *lag = NULL, *max = NULL;
    size_t n = 0, i;
    int64_t total = 0;
    json_t *data = json_array(), *out;
    char suffix[300];
    const sf_group_member_t *m;
    if ((*rc = sf_admin_group_lag(a, o->name, TIMEOUT_MS, &lag, &n)) != SF_OK) {
        json_decref(data);
        return NULL;
    }
    for (i = 0; o->view == G_LAG && i < n; i++)
        if (lag[i].partition == o->partition && !strcmp(lag[i].topic, o->topic))
            break;
    if (o->view == G_LAG) {
        out = i < n ? lag_json(o, &lag[i], owner_of(g, lag[i].topic, lag[i].partition)) : NULL;
        *rc = i < n ? SF_OK : 3; /* UNKNOWN_TOPIC_OR_PARTITION: no offset committed there */
        json_decref(data);
        sf_group_lag_destroy(lag);
        return out;
    }
    for (i = 0; i < n; i++) {
        total += lag[i].lag > 0 ? lag[i].lag : 0;
        if (!max || lag[i].lag > max->lag)
            max = &lag[i];
        json_array_append_new(data, lag_json(o, &lag[i], owner_of(g, lag[i].topic,
                                                                  lag[i].partition)));
    }
    snprintf(suffix, sizeof(suffix), "/consumer-groups/%s/lags", o->name);
    if (o->view == G_LAGS) {
        out = sf_rest_list(&o->links, "KafkaConsumerLag", suffix, data);
    } else {
        m = max ? owner_of(g, max->topic, max->partition) : NULL;
        out = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:I, s:I, s:s?, s:i}", "kind",
                        "KafkaConsumerGroupLagSummary", "cluster_id", o->links.cluster_id,
                        "consumer_group_id", o->name, "max_lag_consumer_id",
                        m ? m->member_id : "", "max_lag_client_id", m ? m->client_id : NULL,
                        "max_lag", (json_int_t)(max ? max->lag : 0), "total_lag",
                        (json_int_t)total, "max_lag_topic_name", max ? max->topic : NULL,
                        "max_lag_partition_id", max ? (int)max->partition : -1);
        json_decref(data);
    }
    sf_group_lag_destroy(lag);
    return out;
}

/* The part of the described group @g that o->view asks for; NULL with an error in *@rc. */
static json_t *group_part(const op_t *o, sf_admin_t *a, const sf_group_info_t *g, int *rc) {
    json_t *data;
    char suffix[300];
    size_t i;
    switch (o->view) {
    case G_GROUP:
        return group_json(o, g->group_id, g->state, g->protocol_type, g->protocol,
                          g->coordinator);
    case G_LAGS:
    case G_LAG:
    case G_LAG_SUMMARY:
        return lags(o, a, g, rc);
    case G_CONSUMERS:
        data = json_array();
        for (i = 0; data && i < g->member_count; i++)
            json_array_append_new(data, consumer_json(o, &g->members[i]));
        snprintf(suffix, sizeof(suffix), "/consumer-groups/%s/consumers", o->name);
        return sf_rest_list(&o->links, "KafkaConsumer", suffix, data);
    default:
        for (i = 0; i < g->member_count && strcmp(g->members[i].member_id, o->item); i++)
            ;
        if (i == g->member_count) {
            *rc = 25; /* UNKNOWN_MEMBER_ID */
            return NULL;
        }
        return o->view == G_CONSUMER ? consumer_json(o, &g->members[i])
                                     : assignments(o, &g->members[i], rc);
    }
}

/* /consumer-groups/<g>[...]: o->view says which part. */
static void run_describe_group(sf_gw_job_t *job, sf_admin_t *a) {
    op_t *o = job->arg;
    const char *names[1] = {o->name};
    sf_group_info_t *g = NULL;
    json_t *out = NULL;
    int rc = sf_admin_describe_groups(a, names, 1, TIMEOUT_MS, &g);
    if (rc == SF_OK && g->err)
        rc = g->err;
    if (rc == SF_OK && !strcmp(g->state, "Dead"))
        rc = 69; /* GROUP_ID_NOT_FOUND */
    if (rc == SF_OK)
        out = group_part(o, a, g, &rc);
    if (rc != SF_OK) {
        sf_gw_fail_err(job, rc == 25 ? SF_ERROR_NOTFOUND : rc, *o->item ? o->item : o->name);
    } else {
        job->status = out ? 200 : 503;
        job->body = sf_rest_dump(out);
    }
    sf_group_info_destroy(g, g ? 1 : 0);
}

/* @seg (after the group id) as a view of the group, with its consumer, topic and partition
 * into @o; 0 when it names none. */
static int group_view(op_t *o, char **seg, int nseg) {
    int tp = 0; /* where "<t>/partitions/<p>" starts */
    if (nseg == 0) {
        o->view = G_GROUP;
    } else if (!strcmp(seg[0], "lag-summary") && nseg == 1) {
        o->view = G_LAG_SUMMARY;
    } else if (!strcmp(seg[0], "lags") && (nseg == 1 || nseg == 4)) {
        o->view = nseg == 1 ? G_LAGS : G_LAG;
        tp = 1;
    } else if (!strcmp(seg[0], "consumers") && nseg <= 6 && nseg != 4 && nseg != 5) {
        o->view = nseg == 1 ? G_CONSUMERS : nseg == 2 ? G_CONSUMER : G_ASSIGNMENTS;
        if (nseg >= 2)
            snprintf(o->item, sizeof(o->item), "%s", seg[1]);
        if (nseg >= 3 && strcmp(seg[2], "assignments"))
            return 0;
        if (nseg == 6)
            o->view = G_ASSIGNMENT;
        tp = 3;
    } else {
        return 0;
    }
    if (o->view == G_LAG || o->view == G_ASSIGNMENT) {
        if (strlen(seg[tp]) >= sizeof(o->topic) || strcmp(seg[tp + 1], "partitions") ||
            (o->partition = (int32_t)sf_rest_index(seg[tp + 2])) < 0)
            return 0;
        snprintf(o->topic, sizeof(o->topic), "%s", seg[tp]);
    }
    return 1;
}

/* /consumer-groups[...], @seg after "consumer-groups". */
static void groups(sf_rest_t *r, char **seg, int nseg) {
    sf_gw_job_t *job;
    op_t *o;
    if (r->cmd != EVHTTP_REQ_GET) {
        sf_httpd_error(r->req, 405, NULL, "consumer groups are read with GET");
    } else if ((job = op_job(r, nseg ? run_describe_group : run_list_groups, &o))) {
        snprintf(o->name, sizeof(o->name), "%s", nseg ? seg[0] : "");
        if (nseg && !group_view(o, seg + 1, nseg - 1)) {
            sf_gw_job_free(job);
            sf_httpd_error(r->req, 404, NULL, "no such resource");
        } else {
            sf_gw_submit(sf_gw_admin(r->gw), job);
        }
    }
}

/* ---- routing ---- */

/* "configs" or "configs:alter" at @seg: 1 or 2 (alter), else 0. */
static int configs_at(const char *seg) {
    return !strcmp(seg, "configs") ? 1 : !strcmp(seg, "configs:alter") ? 2 : 0;
}

int sf_rest_admin_route(sf_rest_t *r, char **seg, int nseg) {
    int c;
    if (!nseg)
        return 0;
    if (!strcmp(seg[0], "topics")) {
        if (nseg == 1 && r->cmd == EVHTTP_REQ_POST)
            create_topic(r);
        else if (nseg == 2 && (r->cmd == EVHTTP_REQ_DELETE || r->cmd == EVHTTP_REQ_PATCH))
            change_topic(r, seg[1]);
        else if (nseg >= 3 && (c = configs_at(seg[2])))
            configs(r, CONFIGS_TOPIC, seg[1], seg + 3, nseg - 3, c == 2);
        else
            return 0;
    } else if (!strcmp(seg[0], "brokers") && nseg >= 3 && (c = configs_at(seg[2]))) {
        if (sf_rest_index(seg[1]) < 0)
            sf_httpd_error(r->req, 404, "BROKER_NOT_AVAILABLE", "no broker %s", seg[1]);
        else
            configs(r, CONFIGS_BROKER, seg[1], seg + 3, nseg - 3, c == 2);
    } else if (!strncmp(seg[0], "broker-", 7) && (c = configs_at(seg[0] + 7))) {
        configs(r, CONFIGS_CLUSTER, "", seg + 1, nseg - 1, c == 2);
    } else if (!strcmp(seg[0], "consumer-groups")) {
        groups(r, seg + 1, nseg - 1);
    } else {
        return 0;
    }
    return 1;
}
