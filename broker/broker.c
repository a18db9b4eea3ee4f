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
#include "handler.h"
#include "logdir.h"
#include "logging.h"
#include "server.h"

struct sf_broker {
    struct event_base *base;
    const sf_brokercfg_t *cfg;
    sf_log_config_t logcfg; /* broker-wide defaults for every log */
    sf_logdir_t **logdirs;
    size_t nlogdirs;
    sf_server_t *server;
    sf_handler_t *handler;
    sf_cluster_t *cluster;
    sf_cluster_snapshot_t *snap; /* our reference to the newest snapshot */
    struct event *retention_ev;
    char **endpoints; /* advertised "NAME://host:port" */
    size_t nendpoints;
    int ready;
    int stopping;
    int exit_code;
};

/* Topic-level configs that change how a partition's log behaves, with the broker setting they
 * override (Kafka's topic config names). */
typedef enum { TC_SEGMENT_BYTES, TC_SEGMENT_MS, TC_RETENTION_MS, TC_RETENTION_BYTES,
               TC_MAX_MESSAGE_BYTES, TC_FLUSH_MESSAGES, TC_FLUSH_MS, TC_INDEX_INTERVAL,
               TC_SEGMENT_INDEX_BYTES, TC_MIN_INSYNC, TC_CLEANUP_POLICY, TC_COMPRESSION,
               TC_TIMESTAMP_TYPE, TC_COUNT } topic_config_id_t;

static const char *const topic_config_names[TC_COUNT] = {
    [TC_SEGMENT_BYTES] = "segment.bytes",
    [TC_SEGMENT_MS] = "segment.ms",
    [TC_RETENTION_MS] = "retention.ms",
    [TC_RETENTION_BYTES] = "retention.bytes",
    [TC_MAX_MESSAGE_BYTES] = "max.message.bytes",
    [TC_FLUSH_MESSAGES] = "flush.messages",
    [TC_FLUSH_MS] = "flush.ms",
    [TC_INDEX_INTERVAL] = "index.interval.bytes",
    [TC_SEGMENT_INDEX_BYTES] = "segment.index.bytes",
    [TC_MIN_INSYNC] = "min.insync.replicas",
    [TC_CLEANUP_POLICY] = "cleanup.policy",
    [TC_COMPRESSION] = "compression.type",
    [TC_TIMESTAMP_TYPE] = "message.timestamp.type",
};

/* The broker settings the topic configs override (Kafka's synonyms). */
static const char *const topic_config_broker_names[TC_COUNT] = {
    [TC_SEGMENT_BYTES] = "log.segment.bytes",
    [TC_SEGMENT_MS] = "log.roll.ms",
    [TC_RETENTION_MS] = "log.retention.ms",
    [TC_RETENTION_BYTES] = "log.retention.bytes",
    [TC_MAX_MESSAGE_BYTES] = "message.max.bytes",
    [TC_FLUSH_MESSAGES] = "log.flush.interval.messages",
    [TC_FLUSH_MS] = "log.flush.interval.ms",
    [TC_INDEX_INTERVAL] = "log.index.interval.bytes",
    [TC_SEGMENT_INDEX_BYTES] = "log.index.size.max.bytes",
    [TC_MIN_INSYNC] = "min.insync.replicas",
    [TC_CLEANUP_POLICY] = "log.cleanup.policy",
    [TC_COMPRESSION] = "compression.type",
    [TC_TIMESTAMP_TYPE] = "log.message.timestamp.type",
};

/* The broker's default for topic config @id, as text. */
static void topic_config_default(const sf_broker_t *b, int id, char *buf, size_t size) {
    const sf_log_config_t *lc = &b->logcfg;
    switch (id) {
    case TC_SEGMENT_BYTES: snprintf(buf, size, "%" PRId64, lc->segment_bytes); break;
    case TC_SEGMENT_MS: snprintf(buf, size, "%" PRId64, lc->roll_ms); break;
    case TC_RETENTION_MS: snprintf(buf, size, "%" PRId64, lc->retention_ms); break;
    case TC_RETENTION_BYTES: snprintf(buf, size, "%" PRId64, lc->retention_bytes); break;
    case TC_MAX_MESSAGE_BYTES: snprintf(buf, size, "%" PRId32, lc->max_message_bytes); break;
    case TC_FLUSH_MESSAGES: snprintf(buf, size, "%" PRId64, lc->flush_messages); break;
    case TC_FLUSH_MS: snprintf(buf, size, "%" PRId64, lc->flush_ms); break;
    case TC_INDEX_INTERVAL: snprintf(buf, size, "%" PRId32, lc->index_interval_bytes); break;
    case TC_SEGMENT_INDEX_BYTES: snprintf(buf, size, "%" PRId64, lc->index_max_bytes); break;
    case TC_MIN_INSYNC: snprintf(buf, size, "%" PRId32, b->cfg->min_insync_replicas); break;
    case TC_CLEANUP_POLICY: snprintf(buf, size, "delete"); break;
    case TC_COMPRESSION: snprintf(buf, size, "producer"); break;
    case TC_TIMESTAMP_TYPE: snprintf(buf, size, "CreateTime"); break;
    default: buf[0] = '\0';
    }
}

size_t sf_broker_topic_configs(const sf_broker_t *b, const sf_cluster_topic_t *topic,
                               sf_broker_topic_config_t *out, size_t max) {
    size_t n = 0;
    int id;
    for (id = 0; id < TC_COUNT && n < max; id++, n++) {
        const char *v = topic ? sf_cluster_topic_config(topic, topic_config_names[id]) : NULL;
        out[n].name = topic_config_names[id];
        out[n].broker_name = topic_config_broker_names[id];
        out[n].is_default = v == NULL;
        if (v)
            snprintf(out[n].value, sizeof(out[n].value), "%s", v);
        else
            topic_config_default(b, id, out[n].value, sizeof(out[n].value));
    }
    return n;
}

int sf_broker_topic_config_known(const char *name) {
    int id;
    for (id = 0; id < TC_COUNT; id++)
        if (!strcmp(name, topic_config_names[id]))
            return 1;
    return 0;
}

/* Parse a topic config integer; keep @dflt when absent or not a number. */
static int64_t topic_int(const sf_cluster_topic_t *topic, int id, int64_t dflt) {
    const char *v = sf_cluster_topic_config(topic, topic_config_names[id]);
    char *end;
    long long x;
    if (!v)
        return dflt;
    errno = 0;
    x = strtoll(v, &end, 10);
    if (errno || end == v || *end)
        return dflt;
    return x;
}

/* The same for an int32 setting: a value outside int32's range (ZooKeeper can hold anything)
 * keeps the default rather than wrapping. */
static int32_t topic_int32(const sf_cluster_topic_t *topic, int id, int32_t dflt) {
    int64_t x = topic_int(topic, id, dflt);
    return x < INT32_MIN || x > INT32_MAX ? dflt : (int32_t)x;
}

static void topic_log_config(const sf_broker_t *b, const sf_cluster_topic_t *topic,
                             sf_log_config_t *lc) {
    *lc = b->logcfg;
    if (!topic || !topic->nconfigs)
        return;
    lc->segment_bytes = topic_int(topic, TC_SEGMENT_BYTES, lc->segment_bytes);
    lc->roll_ms = topic_int(topic, TC_SEGMENT_MS, lc->roll_ms);
    lc->retention_ms = topic_int(topic, TC_RETENTION_MS, lc->retention_ms);
    lc->retention_bytes = topic_int(topic, TC_RETENTION_BYTES, lc->retention_bytes);
    lc->max_message_bytes =
        topic_int32(topic, TC_MAX_MESSAGE_BYTES, lc->max_message_bytes);
    lc->flush_messages = topic_int(topic, TC_FLUSH_MESSAGES, lc->flush_messages);
    lc->flush_ms = topic_int(topic, TC_FLUSH_MS, lc->flush_ms);
    lc->index_interval_bytes =
        topic_int32(topic, TC_INDEX_INTERVAL, lc->index_interval_bytes);
    lc->index_max_bytes = topic_int(topic, TC_SEGMENT_INDEX_BYTES, lc->index_max_bytes);
}

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
        const sf_cluster_topic_t *gone = &old->topics[t];
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
        const sf_cluster_topic_t *topic = &snap->topics[t];
        sf_log_config_t lc;
        topic_log_config(b, topic, &lc);
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
    sync_logs(b, old, snap);
    sf_cluster_snapshot_unref(old);
    sf_handler_on_snapshot(b->handler);
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
    b->base = base;
    b->cfg = cfg;
    sf_log_config_default(&b->logcfg);
    b->logcfg.segment_bytes = cfg->log_segment_bytes;
    b->logcfg.roll_ms = cfg->log_roll_ms;
    b->logcfg.retention_ms = cfg->log_retention_ms;
    b->logcfg.retention_bytes = cfg->log_retention_bytes;
    b->logcfg.index_interval_bytes = cfg->log_index_interval_bytes;
    b->logcfg.flush_messages = cfg->log_flush_interval_messages;
    b->logcfg.flush_ms = cfg->log_flush_interval_ms;
    b->logcfg.max_message_bytes = cfg->message_max_bytes;
    b->logcfg.index_max_bytes = cfg->log_index_size_max_bytes;

    rc = SF_ERR_NOMEM;
    b->logdirs = calloc(cfg->nlog_dirs, sizeof(*b->logdirs));
    if (!b->logdirs)
        goto nomem;
    for (i = 0; i < cfg->nlog_dirs; i++) {
        rc = sf_logdir_open(cfg->log_dirs[i], &b->logcfg, &b->logdirs[i], errstr, errstr_size);
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

    b->handler = sf_handler_new(b);
    if (!b->handler)
        goto nomem;
    rc = sf_server_new(base, cfg, sf_handler_dispatch, b->handler, &b->server, errstr,
                       errstr_size);
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
    sf_handler_free(b->handler);
    b->handler = NULL;
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
    sf_handler_free(b->handler);
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

const char *const *sf_broker_endpoints(const sf_broker_t *b, size_t *n) {
    *n = b->nendpoints;
    return (const char *const *)b->endpoints;
}
