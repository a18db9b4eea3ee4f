/* The REST API under /v3, in the resource format of Confluent's REST Proxy v3 (kind,
 * metadata.self, related links): rest.c routes and answers what the view holds (the cluster,
 * brokers, topics, partitions), rest_admin.c what needs the admin client (creating, deleting
 * and growing topics, configs, consumer groups), rest_records.c producing records. */
#ifndef SF_REST_H
#define SF_REST_H

#include <event2/http.h>
#include <jansson.h>

#include "snapshot.h"

struct sf_gw;

/* What resources link to: copied into the jobs that build answers off the loop. */
typedef struct sf_rest_links {
    char base[512];       /* "http://host/v3/clusters/<id>" */
    char cluster_id[128];
} sf_rest_links_t;

/* One request, on the loop: the view it reads (valid during the call only). */
typedef struct sf_rest {
    struct evhttp_request *req;
    enum evhttp_cmd_type cmd;
    const sf_cluster_snapshot_t *snap;
    struct sf_gw *gw;
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

/* A non-negative decimal path segment, or -1. */
long sf_rest_index(const char *seg);

/* The routes of rest_admin.c and rest_records.c: each returns 1 when it answered @r. @seg are
 * the path segments after /v3/clusters/<id>. */
int sf_rest_admin_route(sf_rest_t *r, char **seg, int nseg);
int sf_rest_records_route(sf_rest_t *r, char **seg, int nseg);

#endif
