/* The broker's HTTP server (http.listeners): Prometheus metrics at /metrics, health checks at
 * /health/live and /health/ready, and the REST API under /v3 (rest.h).
 *
 * Threads: it runs on the metadata thread's event loop (libevent's evhttp), where the view
 * lives; reads of what the view holds are answered at once from it, and everything that
 * needs another broker (writes, records, groups, configs) goes through the gateway's threads
 * (gateway.h), so none waits on the loop. Request bodies are bounded by
 * http.max.body.bytes and headers by a fixed limit; idle connections are closed. Errors are
 * JSON: {"error_code": <HTTP status>, "message": "...", "kafka_error": "<Kafka error name>"}. */
#ifndef SF_HTTPD_H
#define SF_HTTPD_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evhttp_request;
struct sf_broker;
struct sf_brokercfg;

typedef struct sf_httpd sf_httpd_t;

/* Bind cfg->http_listeners on @base (the metadata thread's). *@out is NULL when none are
 * configured. Returns SF_OK, or an error with a sentence in @errstr. */
int sf_httpd_new(struct event_base *base, struct sf_broker *b, const struct sf_brokercfg *cfg,
                 sf_httpd_t **out, char *errstr, size_t errstr_size);

/* Close the HTTP API's clients (sf_gw_drain) and then call @done(@arg), on the loop, within
 * a few seconds; /metrics and /health keep answering meanwhile. */
void sf_httpd_drain(sf_httpd_t *h, void (*done)(void *), void *arg);

/* Close the listeners and connections. NULL is fine. */
void sf_httpd_free(sf_httpd_t *h);

/* Answer @req with @status and the text @body of type @ctype (taken: freed here; NULL for an
 * empty JSON object). 204 sends no body. */
void sf_httpd_reply(struct evhttp_request *req, int status, char *body, const char *ctype);

/* sf_httpd_reply with JSON. */
void sf_httpd_json(struct evhttp_request *req, int status, char *body);

/* The JSON text of an error answer (malloc'd; NULL on no memory). */
char *sf_httpd_error_body(int status, const char *kafka_error, const char *message);

/* Answer @req with an error: @status, the Kafka error name @kafka_error (may be NULL) and a
 * message. */
void sf_httpd_error(struct evhttp_request *req, int status, const char *kafka_error,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- The routes (prom.c, rest.c), on the metadata thread ---- */

/* The web console's files (/ and /console/...): 1 when @path is one of them and @req was
 * answered, else 0. */
int sf_httpd_console(struct evhttp_request *req, const char *path);

/* GET /metrics. */
struct sf_hwcache;
void sf_httpd_metrics(struct evhttp_request *req, struct sf_broker *b,
                      const struct sf_hwcache *elsewhere);

/* Call @fn for each committed offset of the groups this broker coordinates, with the records
 * between it and the partition's high watermark: held in @v, or as last read in @elsewhere
 * (partitions not read yet are left out). */
struct sf_view;
typedef void (*sf_httpd_lag_fn)(void *arg, const char *group, const char *topic,
                                int32_t partition, int64_t lag);
void sf_httpd_each_lag(struct sf_broker *b, const struct sf_view *v,
                       const struct sf_hwcache *elsewhere, sf_httpd_lag_fn fn, void *arg);

/* Sample the append rate of every partition held here, @elapsed_s after the previous sample:
 * the base of streamflow_partition_traffic_share. */
void sf_httpd_sample_traffic(struct sf_broker *b, double elapsed_s);

/* Anything under /v3/, /consumers/ or /api/ (@path without the query string), received on a
 * listener of @scheme ("http" or "https", for the links in answers). */
struct sf_gw;
struct sf_rest_consumers;
void sf_httpd_rest(struct evhttp_request *req, struct sf_broker *b, struct sf_gw *gw,
                   struct sf_rest_consumers *consumers, const char *scheme, const char *path);

#endif
