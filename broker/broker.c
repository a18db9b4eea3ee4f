#include "config.h"

#include "broker.h"

#include <assert.h>
#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "acceptor.h"
#include "brokercfg.h"
#include "streamflow.h"
#include "httpd.h"
#include "clock.h"
#include "cluster.h"
#include "dispatch.h"
#include "err.h"
#include "iopool.h"
#include "logdir.h"
#include "logging.h"
#include "mailbox.h"
#include "metrics.h"
#include "group.h"
#include "markers.h"
#include "verify.h"
#include "purgatory.h"
#include "replicas.h"
#include "replication.h"
#include "throttle.h"
#include "view.h"
#include "netlimit.h"
#include "txn.h"
#include "worker.h"

struct sf_broker {
    struct event_base *base; /* the metadata thread's loop */
    const sf_brokercfg_t *cfg;
    sf_mailbox_t *mb;        /* the metadata thread's */
    sf_logdir_t **logdirs;
    size_t nlogdirs;
    sf_acceptor_t *acceptor;
    sf_httpd_t *httpd; /* NULL without http.listeners */
    sf_worker_t **workers;
    sf_netlimit_t *netlimit; /* limits shared by the workers */
    sf_view_t **worker_views; /* worker_views[i]: worker i's newest view (its thread only) */
    int nworkers;
    unsigned next_worker;     /* round robin of new connections */
    sf_iopool_t *io;          /* appends and disk reads */
    sf_iopool_t *manager;     /* log creation, deletion and retention */
    sf_purgatory_t *purgatory; /* the metadata thread's (admin requests) */
    sf_replicas_t *replicas;
    sf_replication_t *replication; /* followers' fetches, leaders' ISR changes */
    sf_throttle_t leader_throttle; /* leader.replication.throttled.rate */
    sf_view_t *view;          /* the metadata thread's newest view */
    sf_cluster_t *cluster;
    sf_coord_t *coord; /* the group coordinator */
    sf_txn_coord_t *txn; /* the transaction coordinator */
    sf_txn_sender_t *markers; /* its markers to the partition leaders */
    struct event *retention_ev;
    sf_mail_t retention_job;
    atomic_int retention_running;
    char **endpoints; /* advertised "NAME://host:port" */
    size_t nendpoints;
    int ready;
    int handing_off;       /* a controlled shutdown is under way */
    int http_draining;     /* the HTTP clients are closing (0, 1, or 2: done or given up) */
    sf_mail_t handoff_done; /* ... and its end, posted here */
    int stopping;
    int quiescing; /* workers yet to confirm they stopped reading */
    int exit_code;
};

/* ---- views: built on the metadata thread, handed to every worker ---- */

typedef struct view_mail {
    sf_broker_t *b;
    int worker;
    sf_view_t *view; /* the reference handed over */
} view_mail_t;

/* On worker @vm->worker: its newest view. */
static void view_arrived(void *arg) {
    view_mail_t *vm = arg;
    sf_broker_t *b = vm->b;
    sf_view_unref(b->worker_views[vm->worker]);
    b->worker_views[vm->worker] = vm->view;
    sf_purgatory_notify(sf_broker_purgatory(b), sf_pkey_metadata());
    free(vm);
}

/* From the table of partitions (metadata thread): takes the reference. */
static void publish_view(void *arg, sf_view_t *v) {
    sf_broker_t *b = arg;
    int i;
    for (i = 0; i < b->nworkers; i++) {
        view_mail_t *vm = malloc(sizeof(*vm));
        if (vm) {
            vm->b = b;
            vm->worker = i;
            vm->view = sf_view_ref(v);
        }
        if (!vm || sf_worker_post(b->workers[i], view_arrived, vm) != 0) {
            if (vm)
                sf_view_unref(vm->view);
            free(vm);
            sf_log(SF_LOG_ERR, "BROKER", "out of memory: network thread %d keeps its metadata", i);
        }
    }
    sf_view_unref(b->view);
    b->view = v;
    sf_replication_update(b->replication, v);
    sf_purgatory_notify(b->purgatory, sf_pkey_metadata());
}

/* ---- ZooKeeper events (metadata thread) ---- */

static void on_snapshot(void *arg, sf_cluster_snapshot_t *snap) {
    sf_broker_t *b = arg;
    if (!b->stopping)
        sf_replicas_update(b->replicas, snap);
    if (b->coord)
        sf_coord_update(b->coord, snap);
    if (b->txn)
        sf_txn_coord_update(b->txn, snap);
}

static void on_ready(void *arg, int err, const char *errmsg) {
    sf_broker_t *b = arg;
    const sf_cluster_snapshot_t *snap;
    if (err != SF_OK) {
        sf_log(SF_LOG_ERR, "ZK", "%s", errmsg ? errmsg : sf_err_str(err));
        b->exit_code = 1;
        event_base_loopexit(b->base, NULL);
        return;
    }
    /* The first complete snapshot went to every network thread (on_snapshot, just before):
     * requests held until now are answered, and systemd may start what depends on us. */
    b->ready = 1;
    snap = sf_cluster_current(b->cluster);
    sf_log(SF_LOG_NOTICE, "BROKER",
           "broker %d ready: metadata loaded (%d broker(s), %d topic(s)), serving %zu endpoint(s)",
           b->cfg->broker_id, snap ? snap->nbrokers : 0, snap ? (int)snap->ntopics : 0,
           b->nendpoints);
#ifdef HAVE_SYSTEMD
    sd_notify(0, "READY=1\nSTATUS=serving");
#endif
}

static void on_controller(void *arg, int is_controller, int32_t epoch) {
    sf_broker_t *b = arg;
    sf_log(SF_LOG_INFO, "CONTROLLER", "broker %d %s the controller (epoch %d)", b->cfg->broker_id,
           is_controller ? "is now" : "is no longer", epoch);
}

/* ---- retention: a timer here, the work on the log-manager thread ---- */

static void retention_job(void *arg) {
    sf_broker_t *b = arg;
    int64_t now = sf_clock_wall_ms();
    size_t i;
    for (i = 0; i < b->nlogdirs; i++)
        sf_logdir_retention(b->logdirs[i], now, b->cfg->producer_id_expiration_ms);
    atomic_store(&b->retention_running, 0);
}

static void retention_cb(evutil_socket_t fd, short what, void *arg) {
    sf_broker_t *b = arg;
    (void)fd;
    (void)what;
    /* A pass still running (a slow disk) is not queued behind again. */
    if (atomic_exchange(&b->retention_running, 1))
        return;
    b->retention_job.fn = retention_job;
    b->retention_job.arg = b;
    b->retention_job.heap = 0;
    sf_iopool_submit(b->manager, 0, &b->retention_job);
}

/* ---- connections: accepted here, served by a worker ---- */

static void handoff(void *arg, int fd, const struct sockaddr *sa, const char *listener,
                    SSL_CTX *tls_ctx) {
    sf_broker_t *b = arg;
    sf_worker_t *w = b->workers[b->next_worker++ % (unsigned)b->nworkers];
    sf_worker_adopt(w, fd, sa, listener, tls_ctx);
}

/* ---- endpoints ---- */

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
                    l.port = sf_acceptor_port(b->acceptor, j);
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

int sf_broker_nworkers(const sf_broker_t *b) {
    return b->nworkers;
}

sf_worker_t *sf_broker_worker(sf_broker_t *b, int i) {
    return b->workers[i];
}

int sf_broker_endpoint_parse(const char *endpoint, const char *listener, char *host,
                             size_t hostsize, int32_t *port) {
    size_t n = strlen(listener);
    if (strncmp(endpoint, listener, n) || strncmp(endpoint + n, "://", 3))
        return -1;
    return endpoint_split(endpoint, host, hostsize, port);
}

static void client_log(int level, const char *message, void *opaque) {
    sf_log(level, opaque, "%s", message);
}

/* The listener brokers talk to each other on. */
static const char *inter_broker_listener(const sf_brokercfg_t *cfg) {
    if (cfg->inter_broker_listener_name)
        return cfg->inter_broker_listener_name;
    if (cfg->security_inter_broker_protocol)
        return cfg->security_inter_broker_protocol;
    return cfg->nadvertised_listeners ? cfg->advertised_listeners[0].name : "PLAINTEXT";
}

sf_conf_t *sf_broker_client_conf(sf_broker_t *b, const char *purpose, const char *log_tag,
                                 char *errstr, size_t errstr_size) {
    const sf_brokercfg_t *cfg = b->cfg;
    const char *listener = inter_broker_listener(cfg);
    const char *const *eps;
    char host[256], hostport[300], id[64];
    int32_t port = -1;
    size_t i, n;
    sf_conf_t *conf;
    int ok;
    eps = sf_broker_endpoints(b, &n);
    for (i = 0; i < n && port < 0; i++)
        if (sf_broker_endpoint_parse(eps[i], listener, host, sizeof(host), &port) != 0)
            port = -1;
    if (port < 0) {
        snprintf(errstr, errstr_size, "the inter-broker listener %s is not one of the "
                 "advertised listeners", listener);
        return NULL;
    }
    if (!(conf = sf_conf_new()))
        goto nomem;
    snprintf(hostport, sizeof(hostport), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host,
             (int)port);
    snprintf(id, sizeof(id), "streamflowd-%d-%s", (int)cfg->broker_id, purpose);
    ok = sf_conf_set(conf, "bootstrap.servers", hostport, errstr, errstr_size) == 0 &&
         sf_conf_set(conf, "client.id", id, errstr, errstr_size) == 0 &&
         sf_conf_set(conf, "reconnect.backoff.max.ms", "1000", errstr, errstr_size) == 0;
    if (ok && !strcmp(listener, "SSL")) {
        ok = sf_conf_set(conf, "security.protocol", "SSL", errstr, errstr_size) == 0 &&
             (!cfg->ssl_truststore_location ||
              sf_conf_set(conf, "ssl.ca.location", cfg->ssl_truststore_location, errstr,
                          errstr_size) == 0) &&
             (!cfg->ssl_keystore_location ||
              (sf_conf_set(conf, "ssl.certificate.location", cfg->ssl_keystore_location,
                           errstr, errstr_size) == 0 &&
               sf_conf_set(conf, "ssl.key.location", cfg->ssl_keystore_location, errstr,
                           errstr_size) == 0)) &&
             (!cfg->ssl_key_password || sf_conf_set(conf, "ssl.key.password",
                                                    cfg->ssl_key_password, errstr,
                                                    errstr_size) == 0);
    }
    if (!ok) {
        sf_conf_destroy(conf);
        return NULL;
    }
    sf_conf_set_log_cb(conf, client_log, (void *)log_tag);
    return conf;
nomem:
    snprintf(errstr, errstr_size, "out of memory");
    return NULL;
}

/* ---- startup ---- */

static int open_logdirs(sf_broker_t *b, char *errstr, size_t errstr_size) {
    const sf_brokercfg_t *cfg = b->cfg;
    sf_topiccfg_ctx_t ctx = {cfg, NULL, 0, NULL, 0};
    sf_log_config_t defaults;
    size_t i;
    int rc;
    sf_topiccfg_log_config(&ctx, NULL, &defaults);
    sf_segment_fd_cache_set_limit((size_t)cfg->log_segment_fd_cache_size);
    b->logdirs = calloc(cfg->nlog_dirs, sizeof(*b->logdirs));
    if (!b->logdirs) {
        snprintf(errstr, errstr_size, "out of memory");
        return SF_ERR_NOMEM;
    }
    for (i = 0; i < cfg->nlog_dirs; i++) {
        rc = sf_logdir_open(cfg->log_dirs[i], &defaults, &b->logdirs[i], errstr, errstr_size);
        if (rc != SF_OK)
            return rc;
        b->nlogdirs++;
        rc = sf_logdir_check_broker_id(b->logdirs[i], cfg->broker_id, errstr, errstr_size);
        if (rc != SF_OK)
            return rc;
        rc = sf_logdir_start_flusher(b->logdirs[i], cfg->log_flush_check_interval_ms);
        if (rc != SF_OK) {
            snprintf(errstr, errstr_size, "%s: cannot start the flusher thread", cfg->log_dirs[i]);
            return rc;
        }
    }
    return SF_OK;
}

/* The threads: I/O, log manager, network workers. */
static int start_threads(sf_broker_t *b, char *errstr, size_t errstr_size) {
    const sf_brokercfg_t *cfg = b->cfg;
    int i, rc;
    b->io = sf_iopool_new(cfg->num_io_threads, "io");
    b->manager = sf_iopool_new(1, "logmgr");
    b->workers = calloc((size_t)cfg->num_network_threads, sizeof(*b->workers));
    b->worker_views = calloc((size_t)cfg->num_network_threads, sizeof(*b->worker_views));
    if (!b->io || !b->manager || !b->workers || !b->worker_views) {
        snprintf(errstr, errstr_size, "cannot start the I/O threads");
        return SF_ERR_NOMEM;
    }
    if ((rc = sf_netlimit_new(cfg, &b->netlimit, errstr, errstr_size)) != SF_OK)
        return rc;
    for (i = 0; i < cfg->num_network_threads; i++) {
        rc = sf_worker_start(i, cfg, b->netlimit, sf_kafka_dispatch, b, &b->workers[i]);
        if (rc != SF_OK) {
            snprintf(errstr, errstr_size, "cannot start network thread %d: %s", i, sf_err_str(rc));
            return rc;
        }
        b->nworkers++;
    }
    return SF_OK;
}

static int start_txn_coordinator(sf_broker_t *b) {
    const sf_brokercfg_t *cfg = b->cfg;
    sf_txn_config_t tcfg;
    if (!(b->markers = sf_txn_sender_new(b->base, b,
                                         sf_replication_client(b->replication))))
        return SF_ERR_NOMEM;
    memset(&tcfg, 0, sizeof(tcfg));
    tcfg.broker_id = cfg->broker_id;
    tcfg.max_timeout_ms = cfg->transaction_max_timeout_ms;
    tcfg.id_expiration_ms = cfg->transactional_id_expiration_ms;
    tcfg.abort_check_ms = cfg->transaction_abort_check_ms;
    tcfg.send_markers = sf_txn_send_markers;
    tcfg.send_arg = b->markers;
    b->txn = sf_txn_coord_new(b->base, b->cluster, &tcfg);
    return b->txn ? SF_OK : SF_ERR_NOMEM;
}

static int start_cluster(sf_broker_t *b, char *errstr, size_t errstr_size) {
    const sf_brokercfg_t *cfg = b->cfg;
    sf_cluster_callbacks_t cbs = {on_ready, on_snapshot, on_controller};
    sf_cluster_options_t opt;
    const char *unclean;
    sf_coord_config_t ccfg;
    char host[256] = "";
    int32_t port = -1;
    size_t i;
    int rc;
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
    opt.rack = cfg->rack;
    /* Stored normalised by the config parser when given (topic synonym). */
    unclean = sf_brokercfg_file_value(cfg, "unclean.leader.election.enable");
    opt.unclean_leader_election = unclean && !strcasecmp(unclean, "true");
    opt.auto_leader_rebalance = cfg->auto_leader_rebalance_enable;
    opt.leader_imbalance_check_interval_s = cfg->leader_imbalance_check_interval_s;
    opt.leader_imbalance_percentage = cfg->leader_imbalance_per_broker_percentage;
    opt.offsets_buckets = cfg->offsets_topic_num_partitions;
    b->cluster = sf_cluster_new(b->base, &opt, &cbs, b);
    if (!b->cluster) {
        snprintf(errstr, errstr_size, "zookeeper.connect: cannot use \"%s\"", cfg->zk_connect);
        return SF_ERR_INVALID;
    }
    sf_zk_set_observer(sf_cluster_zk(b->cluster), sf_metrics_zk_request, NULL);
    ccfg.broker_id = cfg->broker_id;
    ccfg.min_session_ms = cfg->group_min_session_timeout_ms;
    ccfg.max_session_ms = cfg->group_max_session_timeout_ms;
    ccfg.initial_delay_ms = cfg->group_initial_rebalance_delay_ms;
    ccfg.max_size = cfg->group_max_size;
    ccfg.metadata_max_bytes = cfg->offset_metadata_max_bytes;
    ccfg.retention_ms = (int64_t)cfg->offsets_retention_minutes * 60000;
    ccfg.retention_check_ms = cfg->offsets_retention_check_ms;
    if (!(b->coord = sf_coord_new(b->base, b->cluster, &ccfg)) ||
        start_txn_coordinator(b) != SF_OK) {
        snprintf(errstr, errstr_size, "no memory for the coordinators");
        return SF_ERR_NOMEM;
    }
    rc = sf_cluster_start(b->cluster);
#ifdef HAVE_SYSTEMD
    if (rc == SF_OK)
        sd_notify(0, "STATUS=registering in ZooKeeper and loading the cluster metadata");
#endif
    if (rc != SF_OK)
        snprintf(errstr, errstr_size, "cannot start the ZooKeeper client: %s", sf_err_str(rc));
    return rc;
}

int sf_broker_new(struct event_base *base, const sf_brokercfg_t *cfg, sf_broker_t **out,
                  char *errstr, size_t errstr_size) {
    sf_broker_t *b = calloc(1, sizeof(*b));
    struct timeval tv;
    int rc;

    if (!b) {
        snprintf(errstr, errstr_size, "out of memory");
        return SF_ERR_NOMEM;
    }
    b->base = base;
    b->cfg = cfg;
    sf_throttle_init(&b->leader_throttle);
    atomic_init(&b->retention_running, 0);
    if ((rc = open_logdirs(b, errstr, errstr_size)) != SF_OK ||
        (rc = start_threads(b, errstr, errstr_size)) != SF_OK)
        goto err;
    rc = SF_ERR_NOMEM;
    snprintf(errstr, errstr_size, "out of memory");
    if (!(b->mb = sf_mailbox_new(base, pthread_self())) ||
        !(b->purgatory = sf_purgatory_new(base)) ||
        !(b->replicas = sf_replicas_new(cfg, b->logdirs, b->nlogdirs, b->manager, b->mb,
                                        publish_view, b)) ||
        !(b->retention_ev = event_new(base, -1, EV_PERSIST, retention_cb, b)))
        goto err;
    if ((rc = sf_acceptor_new(base, cfg, handoff, b, &b->acceptor, errstr, errstr_size)) != SF_OK ||
        (rc = sf_httpd_new(base, b, cfg, &b->httpd, errstr, errstr_size)) != SF_OK ||
        (rc = make_endpoints(b, errstr, errstr_size)) != SF_OK ||
        (rc = sf_replication_new(cfg, b, &b->replication, errstr, errstr_size)) != SF_OK ||
        (rc = start_cluster(b, errstr, errstr_size)) != SF_OK)
        goto err;
    tv.tv_sec = cfg->log_retention_check_interval_ms / 1000;
    tv.tv_usec = (cfg->log_retention_check_interval_ms % 1000) * 1000;
    event_add(b->retention_ev, &tv);
    *out = b;
    return SF_OK;
err:
    sf_broker_free(b);
    return rc;
}

/* ---- shutdown ---- */

/* Stop every thread that may still answer a request or touch a log, in dependency order,
 * leaving only the metadata thread. */
static void stop_threads(sf_broker_t *b) {
    int i;
    /* No more follower appends, nor wake-ups for the workers. */
    sf_replication_free(b->replication);
    b->replication = NULL;
    /* Appends and reads still queued finish; their answers go to the workers. */
    sf_iopool_free(b->io);
    b->io = NULL;
    for (i = 0; i < b->nworkers; i++) {
        sf_worker_stop(b->workers[i]); /* joined: its view is ours to drop */
        sf_view_unref(b->worker_views[i]);
        b->worker_views[i] = NULL;
    }
    b->nworkers = 0;
    sf_netlimit_free(b->netlimit);
    b->netlimit = NULL;
    sf_view_unref(b->view);
    b->view = NULL;
    /* Retired partitions are deleted now that no view holds them; creations finish. */
    sf_iopool_free(b->manager);
    b->manager = NULL;
    /* What those threads reported back. */
    sf_mailbox_free(b->mb);
    b->mb = NULL;
}

/* Every worker stopped reading and completed its parked requests. */
static void finish_shutdown(sf_broker_t *b) {
    size_t i;
    stop_threads(b);
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

static void worker_quiesced(void *arg) {
    sf_broker_t *b = arg;
    /* Requests a worker handed to this thread before it stopped reading came through the
     * same mailbox ahead of this, so they have been answered. */
    if (--b->quiescing == 0)
        finish_shutdown(b);
}

/* The shutdown proper, once leadership moved off this broker (or could not). */
static void shutdown_rest(void *arg) {
    sf_broker_t *b = arg;
    int i;
    if (b->stopping)
        return;
    b->stopping = 1;
    sf_acceptor_stop(b->acceptor);
    sf_httpd_free(b->httpd);
    b->httpd = NULL;
    event_del(b->retention_ev);
    sf_replicas_stop(b->replicas);
    /* Waiting admin requests and group joins are answered now; later ones at once. */
    sf_purgatory_close(b->purgatory);
    sf_coord_free(b->coord);
    b->coord = NULL;
    sf_txn_coord_free(b->txn);
    b->txn = NULL;
    b->quiescing = b->nworkers;
    for (i = 0; i < b->nworkers; i++)
        sf_worker_quiesce(b->workers[i], b->mb, worker_quiesced, b);
    if (b->nworkers == 0)
        finish_shutdown(b);
}

static void http_drained(void *arg) {
    sf_broker_t *b = arg;
    if (b->http_draining == 1) {
        b->http_draining = 2;
        sf_broker_shutdown(b);
    }
}

void sf_broker_shutdown(sf_broker_t *b) {
    if (b->stopping)
        return;
    if (b->handing_off) {
        shutdown_rest(b); /* asked twice: stop waiting for the controller */
        return;
    }
    if (b->http_draining == 1) {
        b->http_draining = 2; /* asked twice: stop waiting for the HTTP clients */
    } else if (b->http_draining == 0) {
        sf_log(SF_LOG_NOTICE, "BROKER", "shutting down");
#ifdef HAVE_SYSTEMD
        sd_notify(0, "STOPPING=1");
#endif
        /* The HTTP consumers leave their groups and the HTTP producer flushes first, while
         * this broker still serves them (it may be their coordinator or leader). */
        if (b->httpd) {
            b->http_draining = 1;
            sf_httpd_drain(b->httpd, http_drained, b);
            return;
        }
        b->http_draining = 2;
    }
    /* Clients and followers are still served while the controller moves leadership away. */
    b->handoff_done.fn = shutdown_rest;
    b->handoff_done.arg = b;
    b->handoff_done.heap = 0;
    if (b->ready && sf_replication_controlled_shutdown(b->replication, &b->handoff_done)) {
        b->handing_off = 1;
        return;
    }
    shutdown_rest(b);
}

void sf_broker_reload(sf_broker_t *b) {
    char errstr[512];
    if (b->acceptor &&
        sf_acceptor_reload_tls(b->acceptor, b->cfg, errstr, sizeof(errstr)) != SF_OK)
        sf_log(SF_LOG_ERR, "TLS", "reload failed, keeping the old certificate: %s", errstr);
    sf_log(SF_LOG_INFO, "BROKER", "reloaded");
}

void sf_broker_net_stats(const sf_broker_t *b, sf_netlimit_stats_t *out, long *accept_failures) {
    memset(out, 0, sizeof(*out));
    if (b->netlimit)
        sf_netlimit_stats(b->netlimit, out);
    *accept_failures = b->acceptor ? sf_acceptor_failures(b->acceptor) : 0;
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
    sf_acceptor_free(b->acceptor);
    sf_httpd_free(b->httpd);
    if (b->purgatory)
        sf_purgatory_close(b->purgatory);
    sf_coord_free(b->coord);
    sf_txn_coord_free(b->txn);
    sf_replicas_stop(b->replicas);
    stop_threads(b); /* no-ops for what finish_shutdown stopped */
    sf_txn_sender_free(b->markers); /* after the client's last answers came home */
    sf_cluster_free(b->cluster);
    sf_replicas_free(b->replicas);
    sf_purgatory_free(b->purgatory);
    for (i = 0; i < b->nlogdirs; i++)
        sf_logdir_close(b->logdirs[i], 0);
    free(b->logdirs);
    free(b->workers);
    free(b->worker_views);
    for (i = 0; i < b->nendpoints; i++)
        free(b->endpoints[i]);
    free(b->endpoints);
    sf_throttle_destroy(&b->leader_throttle);
    free(b);
}

/* ---- for the request handlers ---- */

const sf_brokercfg_t *sf_broker_cfg(const sf_broker_t *b) {
    return b->cfg;
}

sf_view_t *sf_broker_view(sf_broker_t *b) {
    sf_worker_t *w = sf_worker_self();
    return w ? b->worker_views[sf_worker_index(w)] : b->view;
}

sf_purgatory_t *sf_broker_purgatory(sf_broker_t *b) {
    sf_worker_t *w = sf_worker_self();
    return w ? sf_worker_purgatory(w) : b->purgatory;
}

void sf_broker_notify_partition(sf_broker_t *b, const void *log) {
    int i;
    for (i = 0; i < b->nworkers; i++)
        sf_worker_notify(b->workers[i], sf_pkey_partition(log));
}

sf_iopool_t *sf_broker_io(sf_broker_t *b) {
    return b->io;
}

sf_throttle_t *sf_broker_leader_throttle(sf_broker_t *b) {
    return &b->leader_throttle;
}

void sf_broker_to_metadata(sf_broker_t *b, sf_mail_t *m) {
    sf_mailbox_put(b->mb, m);
}

sf_cluster_t *sf_broker_cluster(sf_broker_t *b) {
    assert(sf_mailbox_is_owner(b->mb));
    return b->ready && !b->stopping ? b->cluster : NULL;
}

sf_coord_t *sf_broker_coordinator(sf_broker_t *b) {
    assert(sf_mailbox_is_owner(b->mb));
    return b->ready && !b->stopping ? b->coord : NULL;
}

sf_txn_coord_t *sf_broker_txn_coordinator(sf_broker_t *b) {
    assert(sf_mailbox_is_owner(b->mb));
    return b->ready && !b->stopping ? b->txn : NULL;
}

int sf_broker_verify_txn(sf_broker_t *b, const sf_cluster_snapshot_t *snap, const char *txn_id,
                         int64_t producer_id, int16_t epoch, const sf_txn_tp_t *parts, int n,
                         int timeout_ms, sf_txn_verify_cb cb, void *arg) {
    int bucket;
    if (!snap || snap->ngroup_buckets < 1 || !b->replication)
        return SF_ERR_STATE;
    bucket = sf_txn_bucket_of(txn_id, snap->ngroup_buckets);
    if (snap->group_buckets[bucket].broker < 0)
        return SF_ERR_STATE;
    return sf_txn_verify(sf_replication_client(b->replication), snap->group_buckets[bucket].broker,
                         txn_id, producer_id, epoch, parts, n, timeout_ms, cb, arg);
}

const char *const *sf_broker_endpoints(const sf_broker_t *b, size_t *n) {
    *n = b->nendpoints;
    return (const char *const *)b->endpoints;
}
