/* The broker's HTTP server (see httpd.h): listeners, routing, errors, health checks. */
#include "httpd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <openssl/ssl.h>

#include "broker.h"
#include "brokercfg.h"
#include "clock.h"
#include "err.h"
#include "gateway.h"
#include "httpauth.h"
#include "hwcache.h"
#include "rest.h"
#include "logging.h"
#include "tls.h"
#include "view.h"

#define MAX_HEADERS_BYTES 16384
#define IDLE_TIMEOUT_S 60
#define MAX_LISTENERS 8
#define SAMPLE_MS 5000

/* What the routes of one evhttp know: the server, and the scheme its listeners speak. */
typedef struct front {
    sf_httpd_t *h;
    const char *scheme;
} front_t;

struct sf_httpd {
    front_t plain, tls_front;
    sf_broker_t *b;
    const sf_brokercfg_t *cfg;
    struct evhttp *http;  /* the http:// listeners */
    struct evhttp *https; /* the https:// listeners; NULL when none */
    SSL_CTX *tls;
    sf_httpauth_t *auth;  /* NULL: no authentication */
    sf_gw_t *gw;
    sf_rest_consumers_t *consumers;
    sf_hwcache_t *elsewhere; /* high watermarks of partitions held elsewhere, for group lag */
    struct event *sample_ev; /* the traffic sample and the refresh of @elsewhere */
    int64_t sampled_ms;
};

void sf_httpd_reply(struct evhttp_request *req, int status, char *body, const char *ctype) {
    struct evbuffer *out = status == 204 ? NULL : evbuffer_new();
    if (out) {
        evbuffer_add_printf(out, "%s\n", body ? body : "{}");
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
    }
    evhttp_send_reply(req, status, NULL, out);
    if (out)
        evbuffer_free(out);
    free(body);
}

void sf_httpd_json(struct evhttp_request *req, int status, char *body) {
    sf_httpd_reply(req, status, body, "application/json");
}

char *sf_httpd_error_body(int status, const char *kafka_error, const char *message) {
    json_t *o = json_pack("{s:i, s:s}", "error_code", status, "message", message);
    char *s;
    if (o && kafka_error)
        json_object_set_new(o, "kafka_error", json_string(kafka_error));
    s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

void sf_httpd_error(struct evhttp_request *req, int status, const char *kafka_error,
                    const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sf_httpd_json(req, status, sf_httpd_error_body(status, kafka_error, msg));
}

/* ---- health ---- */

/* One readiness check into @checks; returns @ok. */
static int check(json_t *checks, const char *name, int ok, const char *detail) {
    json_array_append_new(checks, json_pack("{s:s, s:s, s:s}", "name", name, "status",
                                            ok ? "UP" : "DOWN", "detail", detail));
    return ok;
}

/* A warning into @checks: reported, but readiness does not depend on it. */
static void warn(json_t *checks, const char *name, int ok, const char *detail) {
    json_array_append_new(checks, json_pack("{s:s, s:s, s:s}", "name", name, "status",
                                            ok ? "UP" : "WARN", "detail", detail));
}

/* Partitions led here whose ISR is smaller than their replica set. */
static int under_replicated_here(const sf_view_t *v, int32_t me) {
    int t, i, n = 0;
    for (t = 0; t < v->snap->ntopics; t++)
        for (i = 0; i < v->snap->topics[t]->npartitions; i++) {
            const sf_cluster_partition_t *p = &v->snap->topics[t]->partitions[i];
            n += p->leader == me && p->nisr < p->nreplicas;
        }
    return n;
}

/* Partitions this broker leads in @v but does not hold. */
static int offline_led_here(const sf_view_t *v, int32_t me) {
    int t, i, n = 0;
    for (t = 0; t < v->snap->ntopics; t++)
        for (i = 0; i < v->snap->topics[t]->npartitions; i++)
            n += v->snap->topics[t]->partitions[i].leader == me && !v->parts[t][i];
    return n;
}

/* The groups coordinated here lagging past health.max.consumer.lag on a partition:
 * how many such partitions, and the worst. */
typedef struct lagging {
    int64_t max_lag, worst;
    int n;
    char where[300];
} lagging_t;

static void lag_seen(void *arg, const char *group, const char *topic, int32_t partition,
                     int64_t lag) {
    lagging_t *l = arg;
    if (lag <= l->max_lag)
        return;
    l->n++;
    if (lag > l->worst) {
        l->worst = lag;
        snprintf(l->where, sizeof(l->where), "group %s on %s-%d", group, topic, (int)partition);
    }
}

static void group_lag_warning(json_t *checks, sf_httpd_t *h, const sf_view_t *v) {
    lagging_t l = {h->cfg->health_max_consumer_lag, 0, 0, ""};
    char detail[512];
    sf_httpd_each_lag(h->b, v, h->elsewhere, lag_seen, &l);
    if (l.n)
        snprintf(detail, sizeof(detail), "%d group partitions lag more than %lld records; the "
                 "most: %lld, %s", l.n, (long long)l.max_lag, (long long)l.worst, l.where);
    else
        snprintf(detail, sizeof(detail), "no group coordinated here lags more than %lld records",
                 (long long)l.max_lag);
    warn(checks, "consumer_lag", l.n == 0, detail);
}

static void health_ready(struct evhttp_request *req, sf_httpd_t *h) {
    sf_view_t *v = sf_broker_view(h->b);
    json_t *checks = json_array(), *o;
    char detail[512];
    int ok = 1, offline;
    size_t i;

    ok &= check(checks, "zookeeper", sf_broker_cluster(h->b) != NULL,
                sf_broker_cluster(h->b) ? "registered" : "not registered in ZooKeeper");
    ok &= check(checks, "metadata", v != NULL, v ? "loaded" : "not loaded yet");
    for (i = 0; i < h->cfg->nlog_dirs; i++) {
        const char *dir = h->cfg->log_dirs[i];
        struct statvfs st;
        int writable = access(dir, W_OK) == 0, room = 0;
        unsigned long long avail = 0;
        if (statvfs(dir, &st) == 0) {
            avail = (unsigned long long)st.f_bavail * st.f_frsize;
            room = avail >= (unsigned long long)h->cfg->health_min_free_bytes;
        }
        snprintf(detail, sizeof(detail), "%s: %s, %llu bytes free", dir,
                 writable ? "writable" : "not writable", avail);
        ok &= check(checks, "log_dir", writable && room, detail);
    }
    if (v) {
        offline = offline_led_here(v, h->cfg->broker_id);
        snprintf(detail, sizeof(detail), "%d partitions led here are offline", offline);
        ok &= check(checks, "partitions", offline == 0, detail);
        offline = under_replicated_here(v, h->cfg->broker_id);
        snprintf(detail, sizeof(detail), "%d partitions led here have fewer in-sync replicas "
                 "than replicas", offline);
        warn(checks, "replication", offline == 0, detail);
        group_lag_warning(checks, h, v);
    }
    o = json_pack("{s:s, s:i, s:o}", "status", ok ? "UP" : "DOWN", "broker_id",
                  (int)h->cfg->broker_id, "checks", checks);
    sf_httpd_json(req, ok ? 200 : 503, o ? json_dumps(o, JSON_COMPACT) : NULL);
    json_decref(o);
}

/* ---- routing ---- */

static void route(struct evhttp_request *req, void *arg) {
    const front_t *f = arg;
    sf_httpd_t *h = f->h;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);

    if (!path || !*path)
        path = "/";
    if (h->auth && strncmp(path, "/health/", 8) != 0 &&
        !sf_httpauth_check(h->auth, evhttp_find_header(evhttp_request_get_input_headers(req),
                                                       "Authorization"))) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
                          "Basic realm=\"streamflow\", charset=\"UTF-8\"");
        sf_httpd_error(req, 401, "SASL_AUTHENTICATION_FAILED",
                       "this broker's HTTP API needs a user and password");
        return;
    }
    if (!strcmp(path, "/health/live")) {
        sf_httpd_json(req, 200, strdup("{\"status\":\"UP\"}"));
    } else if (!strcmp(path, "/health/ready")) {
        health_ready(req, h);
    } else if (!strcmp(path, "/metrics")) {
        if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD)
            sf_httpd_error(req, 405, NULL, "/metrics is read with GET");
        else
            sf_httpd_metrics(req, h->b, h->elsewhere);
    } else if (!strncmp(path, "/v3/", 4) || !strcmp(path, "/v3") ||
               !strncmp(path, "/consumers/", 11) || !strncmp(path, "/api/", 5)) {
        sf_httpd_rest(req, h->b, h->gw, h->consumers, f->scheme, path);
    } else if (!sf_httpd_console(req, path)) {
        sf_httpd_error(req, 404, NULL, "no such resource: %s", path);
    }
}

/* A TLS bufferevent for each connection to the https:// listeners. */
static struct bufferevent *tls_bev(struct event_base *base, void *arg) {
    sf_httpd_t *h = arg;
    SSL *ssl = SSL_new(h->tls);
    return ssl ? bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                                BEV_OPT_CLOSE_ON_FREE)
               : NULL;
}

/* An evhttp with the server's limits and the routes of @f. */
static struct evhttp *http_new(struct event_base *base, sf_httpd_t *h, front_t *f,
                               const char *scheme) {
    struct evhttp *http = evhttp_new(base);
    if (!http)
        return NULL;
    evhttp_set_max_body_size(http, h->cfg->http_max_body_bytes);
    evhttp_set_max_headers_size(http, MAX_HEADERS_BYTES);
    evhttp_set_timeout(http, IDLE_TIMEOUT_S);
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
                                         EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH);
    f->h = h;
    f->scheme = scheme;
    evhttp_set_gencb(http, route, f);
    return http;
}

/* The https:// evhttp, made on first use with the broker's keystore. */
static struct evhttp *https_of(struct event_base *base, sf_httpd_t *h, char *errstr,
                               size_t errstr_size) {
    if (h->https)
        return h->https;
    if (!h->cfg->ssl_keystore_location) {
        snprintf(errstr, errstr_size, "http.listeners: https:// needs ssl.keystore.location");
        return NULL;
    }
    if (!(h->tls = sf_tls_server_ctx_new(h->cfg->ssl_keystore_location, h->cfg->ssl_key_password,
                                         NULL, SF_TLS_CLIENT_AUTH_NONE, errstr, errstr_size)))
        return NULL;
    if (!(h->https = http_new(base, h, &h->tls_front, "https"))) {
        snprintf(errstr, errstr_size, "out of memory for the HTTPS server");
        return NULL;
    }
    evhttp_set_bevcb(h->https, tls_bev, h);
    return h->https;
}

/* Bind one "http[s]://host:port" of http.listeners. */
static int bind_one(struct event_base *base, sf_httpd_t *h, const char *item, char *errstr,
                    size_t errstr_size) {
    char host[256];
    int tls = !strncmp(item, "https://", 8);
    const char *hp = item + (tls ? 8 : 7), *colon;
    struct evhttp *http = h->http;
    long port;
    char *end;
    if ((!tls && strncmp(item, "http://", 7) != 0) || !(colon = strrchr(hp, ':')) ||
        (size_t)(colon - hp) >= sizeof(host)) {
        snprintf(errstr, errstr_size, "http.listeners: \"%s\" is not http[s]://host:port",
                 item);
        return SF_ERR_INVALID;
    }
    port = strtol(colon + 1, &end, 10);
    if (*end || port < 1 || port > 65535) {
        snprintf(errstr, errstr_size, "http.listeners: \"%s\" has no valid port", item);
        return SF_ERR_INVALID;
    }
    memcpy(host, hp, (size_t)(colon - hp));
    host[colon - hp] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [::1] */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    if (tls && !(http = https_of(base, h, errstr, errstr_size)))
        return SF_ERR_INVALID;
    if (evhttp_bind_socket(http, *host ? host : "0.0.0.0", (ev_uint16_t)port) != 0) {
        snprintf(errstr, errstr_size, "http.listeners: cannot listen on %s", item);
        return SF_ERR_IO;
    }
    sf_log(SF_LOG_INFO, "HTTP", "serving %s on %s", tls ? "HTTPS" : "HTTP", item);
    return SF_OK;
}

static void sample_cb(evutil_socket_t fd, short what, void *arg) {
    sf_httpd_t *h = arg;
    int64_t now = sf_clock_mono_ms();
    (void)fd;
    (void)what;
    sf_httpd_sample_traffic(h->b, (double)(now - h->sampled_ms) / 1000);
    h->sampled_ms = now;
    sf_hwcache_refresh(h->elsewhere, h->b, sf_broker_view(h->b));
}

int sf_httpd_new(struct event_base *base, sf_broker_t *b, const sf_brokercfg_t *cfg,
                 sf_httpd_t **out, char *errstr, size_t errstr_size) {
    sf_httpd_t *h;
    char *copy, *item, *save = NULL;
    int rc = SF_OK, n = 0;

    *out = NULL;
    if (!cfg->http_listeners || !*cfg->http_listeners)
        return SF_OK;
    if (!(h = calloc(1, sizeof(*h))))
        goto nomem;
    h->b = b;
    h->cfg = cfg;
    if (!(h->http = http_new(base, h, &h->plain, "http")) || !(h->gw = sf_gw_new(base, b)) ||
        !(h->consumers = sf_rest_consumers_new(base, h->gw)) ||
        !(h->elsewhere = sf_hwcache_new(h->gw)) ||
        !(h->sample_ev = event_new(base, -1, EV_PERSIST, sample_cb, h)) ||
        !(copy = strdup(cfg->http_listeners)))
        goto nomem;
    if (cfg->http_auth_file &&
        !(h->auth = sf_httpauth_load(cfg->http_auth_file, errstr, errstr_size))) {
        free(copy);
        sf_httpd_free(h);
        return SF_ERR_INVALID;
    }
    for (item = strtok_r(copy, ",", &save); item && rc == SF_OK;
         item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ')
            item++;
        if (++n > MAX_LISTENERS) {
            snprintf(errstr, errstr_size, "http.listeners: more than %d listeners",
                     MAX_LISTENERS);
            rc = SF_ERR_INVALID;
        } else {
            rc = bind_one(base, h, item, errstr, errstr_size);
        }
    }
    free(copy);
    if (rc != SF_OK) {
        sf_httpd_free(h);
        return rc;
    }
    h->sampled_ms = sf_clock_mono_ms();
    event_add(h->sample_ev, &(struct timeval){SAMPLE_MS / 1000, 0});
    *out = h;
    return SF_OK;
nomem:
    sf_httpd_free(h);
    snprintf(errstr, errstr_size, "out of memory for the HTTP server");
    return SF_ERR_NOMEM;
}

#define DRAIN_TIMEOUT_MS 10000

void sf_httpd_drain(sf_httpd_t *h, void (*done)(void *), void *arg) {
    sf_gw_drain(h->gw, DRAIN_TIMEOUT_MS, done, arg);
}

void sf_httpd_free(sf_httpd_t *h) {
    if (!h)
        return;
    if (h->sample_ev)
        event_free(h->sample_ev);
    sf_rest_consumers_free(h->consumers);
    sf_gw_free(h->gw); /* answers what it holds, before the connections go */
    sf_hwcache_free(h->elsewhere);
    if (h->http)
        evhttp_free(h->http);
    if (h->https)
        evhttp_free(h->https);
    SSL_CTX_free(h->tls);
    sf_httpauth_free(h->auth);
    free(h);
}
