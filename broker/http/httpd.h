/* The broker's HTTP server (http.listeners): Prometheus metrics at /metrics, health checks at
 * /health/live and /health/ready, and the REST API under /v3 (rest.h).
 *
 * Threads: it runs on the metadata thread's event loop (libevent's evhttp), where the view,
 * the ZooKeeper session and the admin writes live; every request is answered at once from
 * the current view, so none waits on the loop. Request bodies are bounded by
 * http.max.body.bytes and headers by a fixed limit; idle connections are closed. Errors are
 * JSON: {"error_code": <HTTP status>, "message": "...", "kafka_error": "<Kafka error name>"}. */
#ifndef SF_HTTPD_H
#define SF_HTTPD_H

#include <stddef.h>

struct event_base;
struct evhttp_request;
struct sf_broker;
struct sf_brokercfg;

typedef struct sf_httpd sf_httpd_t;

/* Bind cfg->http_listeners on @base (the metadata thread's). *@out is NULL when none are
 * configured. Returns SF_OK, or an error with a sentence in @errstr. */
int sf_httpd_new(struct event_base *base, struct sf_broker *b, const struct sf_brokercfg *cfg,
                 sf_httpd_t **out, char *errstr, size_t errstr_size);

/* Close the listeners and connections. NULL is fine. */
void sf_httpd_free(sf_httpd_t *h);

/* Answer @req with @status and the JSON text @body (taken: freed here; NULL for an empty
 * object). */
void sf_httpd_json(struct evhttp_request *req, int status, char *body);

/* Answer @req with an error: @status, the Kafka error name @kafka_error (may be NULL) and a
 * message. */
void sf_httpd_error(struct evhttp_request *req, int status, const char *kafka_error,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- The routes (prom.c, rest.c), on the metadata thread ---- */

/* GET /metrics. */
void sf_httpd_metrics(struct evhttp_request *req, struct sf_broker *b);

/* Anything under /v3/ (@path without the query string). */
void sf_httpd_rest(struct evhttp_request *req, struct sf_broker *b, const char *path);

#endif
