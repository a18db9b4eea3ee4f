#include "config.h"

#include "broker.h"

#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "brokercfg.h"
#include "clock.h"
#include "cluster.h"
#include "err.h"
#include "dispatch.h"
#include "logdir.h"
#include "logging.h"
#include "purgatory.h"
#include "server.h"
#include "topiccfg.h"

struct sf_broker {
    struct event_base *base;
    const sf_brokercfg_t *cfg;
    sf_logdir_t **logdirs;
    size_t nlogdirs;
    sf_server_t *server;
    sf_purgatory_t *purgatory;
    sf_topiccfg_ctx_t topiccfg;
    sf_cluster_t *cluster;
    sf_cluster_snapshot_t *snap; /* our reference to the newest snapshot */
    struct event *retention_ev;
    char **endpoints; /* advertised "NAME://host:port" */
    size_t nendpoints;
    int ready;
    int stopping;
    int exit_code;
};

sf_log_t *sf_broker_log(sf_broker_t *b, const char *topic, int32_t partition) {
    size_t i;
    for (i = 0; i < b->nlogdirs; i++) {
        sf_log_t *log = sf_logdir_get(b->logdirs[i], topic, partition);
        if (log)
            return log;
    }
    return NULL;
}

/* New partitions go to the log directory holding the fewest (Kafka's rule). */
static sf_logdir_t *least_loaded_logdir(sf_broker_t *b) {
    sf_logdir_t *best = b->logdirs[0];
    size_t i;
    for (i = 1; i < b->nlogdirs; i++)
        if (sf_logdir_count(b->logdirs[i]) < sf_logdir_count(best))
            best = b->logdirs[i];
    return best;
}

static int is_replica(const sf_cluster_partition_t *part, int32_t id) {
    int i;
    for (i = 0; i < part->nreplicas; i++)
        if (part->replicas[i] == id)
            return 1;
    return 0;
}

/* Make the local logs match @snap: open a log for every partition this broker is a replica of,
 * apply topic config changes, and delete the logs of topics deleted since @old. Logs of topics
 * ZooKeeper never told us about are left alone: their loss must not follow from a missing
 * znode. */
static void sync_logs(sf_broker_t *b, const sf_cluster_snapshot_t *old,
                      const sf_cluster_snapshot_t *snap) {
    int t, p;
    int32_t me = b->cfg->broker_id;

    /* Deleted topics first: a topic recreated under a new id loses its old data here and
     * starts empty below. */
    for (t = 0; old && t < old->ntopics; t++) {
        const sf_cluster_topic_t *gone = old->topics[t];
        const sf_cluster_topic_t *now = sf_cluster_snapshot_topic(snap, gone->name);
        if (now && !memcmp(now->topic_id, gone->topic_id, sizeof(now->topic_id)))
            continue;
        for (p = 0; p < gone->npartitions; p++) {
            size_t i;
            for (i = 0; i < b->nlogdirs; i++)
                if (sf_logdir_remove(b->logdirs[i], gone->name, p) == SF_OK)
                    sf_log(SF_LOG_INFO, "STORAGE", "deleted the log of %s-%d", gone->name, p);
        }
    }
    for (t = 0; t < snap->ntopics; t++) {
        const sf_cluster_topic_t *topic = snap->topics[t];
        sf_log_config_t lc;
        sf_topiccfg_log_config(&b->topiccfg, topic, &lc);
        for (p = 0; p < topic->npartitions; p++) {
            const sf_cluster_partition_t *part = &topic->partitions[p];
            sf_log_t *log;
            if (!is_replica(part, me))
                continue;
            log = sf_broker_log(b, topic->name, p);
            if (log) {
                sf_log_set_config(log, &lc);
            } else {
                int rc = sf_logdir_create(least_loaded_logdir(b), topic->name, p, &lc, &log);
                if (rc != SF_OK) {
                    sf_log(SF_LOG_ERR, "STORAGE", "cannot create the log of %s-%d: %s",
                           topic->name, p, sf_err_str(rc));
                    continue;
                }
            }
            if (part->leader_epoch >= 0)
                sf_log_set_leader_epoch(log, part->leader_epoch);
        }
    }
}

static void on_snapshot(void *arg, sf_cluster_snapshot_t *snap) {
    sf_broker_t *b = arg;
    sf_cluster_snapshot_t *old = b->snap;
    if (b->stopping)
        return;
    b->snap = sf_cluster_snapshot_ref(snap);
    /* The dynamic broker configs live in the snapshot: b->snap keeps them alive until the
     * next one replaces them here. sync_logs applies them to every log. */
    b->topiccfg.broker_dyn = snap->broker_configs;
    b->topiccfg.nbroker_dyn = snap->nbroker_configs;
    b->topiccfg.default_dyn = snap->default_configs;
    b->topiccfg.ndefault_dyn = snap->ndefault_configs;
    sync_logs(b, old, snap);
    sf_cluster_snapshot_unref(old);
    sf_purgatory_notify(b->purgatory, sf_pkey_metadata());
}

static void on_ready(void *arg, int err, const char *errmsg) {
    sf_broker_t *b = arg;
    if (err != SF_OK) {
        sf_log(SF_LOG_ERR, "ZK", "%s", errmsg ? errmsg : sf_err_str(err));
        b->exit_code = 1;
        event_base_loopexit(b->base, NULL);
        return;
    }
    b->ready = 1;
    sf_log(SF_LOG_NOTICE, "BROKER", "broker %d started: registered in ZooKeeper, %zu endpoint(s)",
           b->cfg->broker_id, b->nendpoints);
#ifdef HAVE_SYSTEMD
    sd_notify(0, "READY=1");
#endif
}

static void on_controller(void *arg, int is_controller, int32_t epoch) {
    sf_broker_t *b = arg;
    sf_log(SF_LOG_INFO, "CONTROLLER", "broker %d %s the controller (epoch %d)", b->cfg->broker_id,
           is_controller ? "is now" : "is no longer", epoch);
}

static void retention_cb(evutil_socket_t fd, short what, void *arg) {
    sf_broker_t *b = arg;
    int64_t now = sf_clock_wall_ms();
    size_t i;
    (void)fd;
    (void)what;
    for (i = 0; i < b->nlogdirs; i++)
        sf_logdir_retention(b->logdirs[i], now);
}

/* The advertised endpoints, with the real port for listeners bound to port 0. */
static int make_endpoints(sf_broker_t *b, char *errstr, size_t errstr_size) {
    const sf_brokercfg_t *cfg = b->cfg;
    size_t i, j;
    b->endpoints = calloc(cfg->nadvertised_listeners, sizeof(char *));
    if (!b->endpoints)
        goto nomem;
    for (i = 0; i < cfg->nadvertised_listeners; i++) {
        sf_brokercfg_listener_t l = cfg->advertised_listeners[i];
        char buf[300];
        if (l.port == 0)
            for (j = 0; j < cfg->nlisteners; j++)
                if (!strcmp(cfg->listeners[j].name, l.name))
                    l.port = sf_server_port(b->server, j);
        b->endpoints[i] = strdup(sf_brokercfg_listener_str(&l, buf, sizeof(buf)));
        if (!b->endpoints[i])
            goto nomem;
        b->nendpoints++;
    }
    return SF_OK;
nomem:
    snprintf(errstr, errstr_size, "out of memory");
    return SF_ERR_NOMEM;
}

/* Split "NAME://host:port" into host (without IPv6 brackets) and port. */
static int endpoint_split(const char *ep, char *host, size_t hostsize, int32_t *port) {
    const char *h = strstr(ep, "://"), *colon;
    size_t n;
    if (!h)
        return -1;
    h += 3;
    colon = strrchr(h, ':');
    if (!colon)
        return -1;
    n = (size_t)(colon - h);
    if (n && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n >= hostsize)
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    *port = (int32_t)atoi(colon + 1);
    return 0;
}

int sf_broker_endpoint_parse(const char *endpoint, const char *listener, char *host,
                             size_t hostsize, int32_t *port) {
    size_t n = strlen(listener);
    if (strncmp(endpoint, listener, n) || strncmp(endpoint + n, "://", 3))
        return -1;
    return endpoint_split(endpoint, host, hostsize, port);
}

int sf_broker_new(struct event_base *base, const sf_brokercfg_t *cfg, sf_broker_t **out,
                  char *errstr, size_t errstr_size) {
    sf_broker_t *b = calloc(1, sizeof(*b));
    sf_cluster_options_t opt;
    sf_cluster_callbacks_t cbs = {on_ready, on_snapshot, on_controller};
    char host[256] = "";
    int32_t port = -1;
    size_t i;
    int rc;
    struct timeval tv;

    if (!b) {
        snprintf(errstr, errstr_size, "out of memory");
        return SF_ERR_NOMEM;
    }
    sf_log_config_t defaults;

    b->base = base;
    b->cfg = cfg;
    b->topiccfg.cfg = cfg;
    sf_topiccfg_log_config(&b->topiccfg, NULL, &defaults);

    rc = SF_ERR_NOMEM;
    b->logdirs = calloc(cfg->nlog_dirs, sizeof(*b->logdirs));
    if (!b->logdirs)
        goto nomem;
    for (i = 0; i < cfg->nlog_dirs; i++) {
        rc = sf_logdir_open(cfg->log_dirs[i], &defaults, &b->logdirs[i], errstr, errstr_size);
        if (rc != SF_OK)
            goto err;
        b->nlogdirs++;
        rc = sf_logdir_check_broker_id(b->logdirs[i], cfg->broker_id, errstr, errstr_size);
        if (rc != SF_OK)
            goto err;
        rc = sf_logdir_start_flusher(b->logdirs[i], cfg->log_flush_check_interval_ms);
        if (rc != SF_OK) {
            snprintf(errstr, errstr_size, "%s: cannot start the flusher thread", cfg->log_dirs[i]);
            goto err;
        }
    }

    b->purgatory = sf_purgatory_new(base);
    if (!b->purgatory)
        goto nomem;
    rc = sf_server_new(base, cfg, sf_kafka_dispatch, b, &b->server, errstr, errstr_size);
    if (rc != SF_OK)
        goto err;
    rc = make_endpoints(b, errstr, errstr_size);
    if (rc != SF_OK)
        goto err;
    for (i = 0; i < b->nendpoints; i++)
        if (sf_broker_endpoint_parse(b->endpoints[i], "PLAINTEXT", host, sizeof(host), &port) == 0)
            break;

    memset(&opt, 0, sizeof(opt));
    opt.zk_connect = cfg->zk_connect;
    opt.zk_chroot = cfg->zk_chroot;
    opt.session_timeout_ms = cfg->zk_session_timeout_ms;
    opt.connection_timeout_ms = cfg->zk_connection_timeout_ms;
    opt.broker_id = cfg->broker_id;
    opt.host = host[0] ? host : NULL;
    opt.port = host[0] ? port : -1;
    opt.endpoints = (const char *const *)b->endpoints;
    opt.nendpoints = (int)b->nendpoints;
    b->cluster = sf_cluster_new(base, &opt, &cbs, b);
    if (!b->cluster) {
        rc = SF_ERR_INVALID;
        snprintf(errstr, errstr_size, "zookeeper.connect: cannot use \"%s\"", cfg->zk_connect);
        goto err;
    }
    rc = sf_cluster_start(b->cluster);
    if (rc != SF_OK) {
        snprintf(errstr, errstr_size, "cannot start the ZooKeeper client: %s", sf_err_str(rc));
        goto err;
    }

    b->retention_ev = event_new(base, -1, EV_PERSIST, retention_cb, b);
    if (!b->retention_ev)
        goto nomem;
    tv.tv_sec = cfg->log_retention_check_interval_ms / 1000;
    tv.tv_usec = (cfg->log_retention_check_interval_ms % 1000) * 1000;
    event_add(b->retention_ev, &tv);
    *out = b;
    return SF_OK;

nomem:
    rc = SF_ERR_NOMEM;
    snprintf(errstr, errstr_size, "out of memory");
err:
    sf_broker_free(b);
    return rc;
}

void sf_broker_shutdown(sf_broker_t *b) {
    size_t i;
    if (b->stopping)
        return;
    b->stopping = 1;
    sf_log(SF_LOG_NOTICE, "BROKER", "shutting down");
#ifdef HAVE_SYSTEMD
    sd_notify(0, "STOPPING=1");
#endif
    sf_server_stop_accepting(b->server);
    /* Answer the requests that are waiting, then close the connections. */
    sf_purgatory_free(b->purgatory);
    b->purgatory = NULL;
    sf_server_free(b->server);
    b->server = NULL;
    /* Closing the session removes the registration at once. */
    sf_cluster_free(b->cluster);
    b->cluster = NULL;
    for (i = 0; i < b->nlogdirs; i++) {
        if (sf_logdir_close(b->logdirs[i], 1) != SF_OK) {
            sf_log(SF_LOG_ERR, "STORAGE", "%s: not closed cleanly", b->cfg->log_dirs[i]);
            b->exit_code = 1;
        }
        b->logdirs[i] = NULL;
    }
    b->nlogdirs = 0;
    event_base_loopexit(b->base, NULL);
}

void sf_broker_reload(sf_broker_t *b) {
    char errstr[512];
    if (b->server && sf_server_reload_tls(b->server, b->cfg, errstr, sizeof(errstr)) != SF_OK)
        sf_log(SF_LOG_ERR, "TLS", "reload failed, keeping the old certificate: %s", errstr);
    sf_log(SF_LOG_INFO, "BROKER", "reloaded");
}

int sf_broker_exit_code(const sf_broker_t *b) {
    return b->exit_code;
}

void sf_broker_free(sf_broker_t *b) {
    size_t i;
    if (!b)
        return;
    if (b->retention_ev)
        event_free(b->retention_ev);
    sf_purgatory_free(b->purgatory);
    sf_server_free(b->server);
    sf_cluster_free(b->cluster);
    for (i = 0; i < b->nlogdirs; i++)
        sf_logdir_close(b->logdirs[i], 0);
    free(b->logdirs);
    sf_cluster_snapshot_unref(b->snap);
    for (i = 0; i < b->nendpoints; i++)
        free(b->endpoints[i]);
    free(b->endpoints);
    free(b);
}

/* ---- accessors for the request handlers ---- */

const sf_brokercfg_t *sf_broker_cfg(const sf_broker_t *b) {
    return b->cfg;
}

sf_cluster_snapshot_t *sf_broker_snapshot(sf_broker_t *b) {
    return b->snap;
}

sf_cluster_t *sf_broker_cluster(sf_broker_t *b) {
    return b->ready && !b->stopping ? b->cluster : NULL;
}

struct event_base *sf_broker_base(sf_broker_t *b) {
    return b->base;
}

sf_purgatory_t *sf_broker_purgatory(sf_broker_t *b) {
    return b->purgatory;
}

const sf_topiccfg_ctx_t *sf_broker_topiccfg(const sf_broker_t *b) {
    return &b->topiccfg;
}

const char *const *sf_broker_endpoints(const sf_broker_t *b, size_t *n) {
    *n = b->nendpoints;
    return (const char *const *)b->endpoints;
}
