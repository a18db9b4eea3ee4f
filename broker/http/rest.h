/* The REST API: under /v3 in the resource format of Confluent's REST Proxy v3 (kind,
 * metadata.self, related links), REST Proxy v2's consumer instances under /consumers, and the
 * plain API under /api. rest.c routes and answers what the view holds (the cluster, brokers,
 * topics, partitions), rest_admin.c what needs the admin client (creating, deleting and
 * growing topics, configs, consumer groups), rest_records.c producing records,
 * rest_consumers.c consumer instances and event streams, rest_plain.c the plain API. */
#ifndef SF_REST_H
#define SF_REST_H

#include <event2/http.h>
#include <jansson.h>

#include "gateway.h"
#include "snapshot.h"
#include "streamflow.h"

struct sf_gw;
typedef struct sf_rest_consumers sf_rest_consumers_t;

/* What resources link to: copied into the jobs that build answers off the loop. */
typedef struct sf_rest_links {
    char origin[300];     /* "http://host" */
    char base[512];       /* "http://host/v3/clusters/<id>" */
    char cluster_id[128];
} sf_rest_links_t;

/* One request, on the loop: the view it reads (valid during the call only). */
typedef struct sf_rest {
    struct evhttp_request *req;
    enum evhttp_cmd_type cmd;
    const sf_cluster_snapshot_t *snap;
    struct sf_gw *gw;
    sf_rest_consumers_t *consumers;
    sf_rest_links_t links;
} sf_rest_t;

/* {"related": "<base><suffix>"}, @suffix printf-formatted. */
json_t *sf_rest_link(const sf_rest_links_t *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* {"self": "<base><suffix>", "resource_name": "crn:///kafka=<id><crn>"}. */
json_t *sf_rest_metadata(const sf_rest_links_t *l, const char *suffix, const char *crn);

/* {"kind": "<kind>List", "metadata": {"self": ..., "next": null}, "data": @data (taken)}. */
json_t *sf_rest_list(const sf_rest_links_t *l, const char *kind, const char *suffix,
                     json_t *data);

/* A KafkaTopic resource. */
json_t *sf_rest_topic(const sf_rest_links_t *l, const char *name, int partitions,
                      int replication_factor);

/* The compact JSON text of @o (malloc'd), which is released; NULL when @o is. */
char *sf_rest_dump(json_t *o);

/* Answer with @o (taken): 200, or 503 when it is NULL (no memory). */
void sf_rest_reply(sf_rest_t *r, json_t *o);

/* The request body as JSON (a new reference), or NULL after answering 400. */
json_t *sf_rest_body(sf_rest_t *r);

/* The positive integer (at most INT32_MAX) field @name of @o: -1 when absent or null, -2 when
 * something else. */
long sf_rest_count(json_t *o, const char *name);

/* A non-negative decimal path segment, or -1. */
long sf_rest_index(const char *seg);

/* The query parameter @key as an integer in @min..@max, else @def. */
long sf_rest_query_long(const sf_rest_t *r, const char *key, long def, long min, long max);

/* The query parameter @key into @buf (NULL when absent). */
const char *sf_rest_query(const sf_rest_t *r, const char *key, char *buf, size_t size);

/* The routes of rest_admin.c and rest_records.c: each returns 1 when it answered @r. @seg are
 * the path segments after /v3/clusters/<id>. */
int sf_rest_admin_route(sf_rest_t *r, char **seg, int nseg);
int sf_rest_records_route(sf_rest_t *r, char **seg, int nseg);

/* Create topic @name (@partitions, @replication -1: the defaults; @configs a [{name, value}]
 * array or NULL) and answer 201 with the topic resource. */
void sf_rest_create_topic(sf_rest_t *r, const char *name, long partitions, long replication,
                          json_t *configs);

/* Grow topic @name to @partitions and answer with the topic resource. */
void sf_rest_grow_topic(sf_rest_t *r, const char *name, long partitions);

/* Produce @record (a v3 record object, borrowed) to @t and answer with its result. */
void sf_rest_produce(sf_rest_t *r, const sf_cluster_topic_t *t, json_t *record);

/* ---- consumers (rest_consumers.c) ---- */

typedef enum { SF_REST_BINARY, SF_REST_JSON, SF_REST_PLAIN, SF_REST_PLAIN_BASE64 } sf_rest_format_t;

/* A consumed record as JSON: REST Proxy v2's {topic, key, value, partition, offset} with the
 * payloads base64 (BINARY) or parsed (JSON; a string when they do not parse), and for PLAIN
 * also the timestamp and the headers (PLAIN_BASE64: with every payload base64). */
json_t *sf_rest_message_json(const sf_message_t *m, sf_rest_format_t format);

/* The registry of consumer instances, on @base's loop. */
sf_rest_consumers_t *sf_rest_consumers_new(struct event_base *base, struct sf_gw *gw);
void sf_rest_consumers_free(sf_rest_consumers_t *cs);

/* /consumers/..., @seg after "consumers". */
void sf_rest_consumers_route(sf_rest_t *r, char **seg, int nseg);

/* A consumer instance: a member of @group named @name, made with REST Proxy's settings in
 * @body (may be NULL); NULL after answering (409 when it exists). */
typedef struct instance sf_rest_instance_t;
sf_rest_instance_t *sf_rest_instance_new(sf_rest_t *r, const char *group, const char *name,
                                         json_t *body);
/* The instance, or NULL after answering 404. */
sf_rest_instance_t *sf_rest_instance_find(sf_rest_t *r, const char *group, const char *name);
/* Subscribe it to the topics of @body (taken) and answer 204, or 201 with the JSON text
 * @created (taken) when it is not NULL. */
void sf_rest_instance_subscribe(sf_rest_t *r, sf_rest_instance_t *inst, json_t *body,
                                char *created);
/* Close it (leaving the group), without answering. */
void sf_rest_instance_close(sf_rest_t *r, sf_rest_instance_t *inst);
/* Close it and answer 204. */
void sf_rest_instance_delete(sf_rest_t *r, sf_rest_instance_t *inst);
/* Answer with an event stream of its records. */
void sf_rest_instance_stream(sf_rest_t *r, sf_rest_instance_t *inst);

/* Answer with an event stream (text/event-stream: "event: record", "data: <JSON>" per record)
 * from a consumer of its own made with @kvs; @setup(consumer, @arg) runs first on its thread
 * (assign or subscribe). @arg is taken (@free_arg frees it). */
typedef struct sf_rest_stream sf_rest_stream_t;
typedef int(sf_rest_stream_setup_fn)(sf_consumer_t *c, void *arg);
void sf_rest_stream(sf_rest_t *r, const sf_config_kv_t *kvs, size_t n,
                    sf_rest_stream_setup_fn *setup, void *arg, void (*free_arg)(void *));

/* Answer with what @fn(@job, consumer) sets, run once on a consumer of its own (no group) that
 * is closed afterwards. @arg is the job's (taken; @free_arg frees it). */
void sf_rest_consume_once(sf_rest_t *r, void (*fn)(sf_gw_job_t *job, sf_consumer_t *c),
                          void *arg, void (*free_arg)(void *));

/* /api/..., @seg after "api" (rest_plain.c). */
void sf_rest_plain_route(sf_rest_t *r, char **seg, int nseg);

#endif
