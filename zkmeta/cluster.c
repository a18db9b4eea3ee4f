/* The cluster module (cluster.h): lifecycle, the owner's callbacks, session states. */
#include "cluster_int.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "err.h"
#include "logging.h"
#include "znode.h"

/* ---- user callbacks: always from this module's own events ---- */

void cl_user_enter(sf_cluster_t *cl) { cl->user_depth++; }

/* Returns 1 if the cluster was freed from inside the callback (stop touching it). */
int cl_user_leave(sf_cluster_t *cl) {
    if (--cl->user_depth == 0 && cl->free_pending && !cl->closing) {
        cl_destroy(cl);
        return 1;
    }
    return 0;
}

static void notify_push(sf_cluster_t *cl, struct cl_notify *n) {
    n->next = NULL;
    if (cl->ntail)
        cl->ntail->next = n;
    else
        cl->nhead = n;
    cl->ntail = n;
    event_active(cl->notify_ev, EV_READ, 0);
}

static struct cl_notify *cl_notify_pop(sf_cluster_t *cl) {
    struct cl_notify *n = cl->nhead;
    if (n) {
        cl->nhead = n->next;
        if (!cl->nhead)
            cl->ntail = NULL;
    }
    return n;
}

void cl_notify_done(sf_cluster_t *cl, sf_cluster_done_cb done, void *arg, int err) {
    struct cl_notify *n = calloc(1, sizeof(*n));
    if (!n) {
        /* Cannot defer: call it now rather than lose it. */
        sf_log(SF_LOG_ERR, "ZK", "out of memory queueing an admin completion");
        if (done)
            done(arg, err);
        return;
    }
    n->kind = N_DONE;
    n->done = done;
    n->arg = arg;
    n->err = err;
    notify_push(cl, n);
}

void cl_notify_controller(sf_cluster_t *cl) {
    struct cl_notify *n;
    if (!cl->cb.on_controller || !cl->ready)
        return;
    n = calloc(1, sizeof(*n));
    if (!n)
        return;
    n->kind = N_CONTROLLER;
    n->err = cl->is_controller;
    n->epoch = cl->controller_epoch;
    notify_push(cl, n);
}

static void notify_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    struct cl_notify *n;
    (void)fd;
    (void)what;
    while (!cl->closing && (n = cl_notify_pop(cl))) {
        cl_user_enter(cl);
        if (n->kind == N_DONE && n->done)
            n->done(n->arg, n->err);
        else if (n->kind == N_READY && cl->cb.on_ready)
            cl->cb.on_ready(cl->arg, n->err, n->err ? n->msg : NULL);
        else if (n->kind == N_CONTROLLER && cl->cb.on_controller)
            cl->cb.on_controller(cl->arg, n->err, n->epoch);
        free(n);
        if (cl_user_leave(cl))
            return;
    }
}

/* Startup failed: report once, then stay quiet. */
void cl_fail(sf_cluster_t *cl, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cl_fail(sf_cluster_t *cl, int err, const char *fmt, ...) {
    struct cl_notify *n;
    va_list ap;
    if (cl->ready || cl->failed)
        return;
    cl->failed = 1;
    evtimer_del(cl->retry_timer);
    evtimer_del(cl->reg_timer);
    evtimer_del(cl->rebuild_timer);
    n = calloc(1, sizeof(*n));
    if (!n)
        return;
    n->kind = N_READY;
    n->err = err;
    va_start(ap, fmt);
    vsnprintf(n->msg, sizeof(n->msg), fmt, ap);
    va_end(ap);
    /* The owner reports it (on_ready): one line for the operator. */
    sf_log(SF_LOG_DEBUG, "ZK", "%s", n->msg);
    notify_push(cl, n);
}

int cl_alive(const sf_cluster_t *cl) { return !cl->closing && !cl->failed; }

/* ---- keys ---- */

struct cl_key *cl_key_new(sf_cluster_t *cl, int kind, uint64_t inc, int32_t id,
                              const char *topic) {
    size_t n = topic ? strlen(topic) : 0;
    struct cl_key *k = malloc(sizeof(*k) + n + 1);
    if (!k)
        return NULL;
    k->cl = cl;
    k->kind = kind;
    k->inc = inc;
    k->id = id;
    memcpy(k->topic, topic ? topic : "", n + 1);
    return k;
}

static void on_zk_state(sf_zk_t *zk, int state, void *arg) {
    sf_cluster_t *cl = arg;
    (void)zk;
    if (!cl_alive(cl))
        return;
    switch (state) {
    case SF_ZK_CONNECTED:
        if (!cl->registered) {
            if (!cl->reg_busy)
                cl_setup_start(cl);
        } else {
            cl_sync_all(cl);
        }
        break;
    case SF_ZK_EXPIRED:
        /* Ephemerals and watches of the old session are gone (every watch got DROPPED).
         * Re-register, re-elect and reload when the new session connects. */
        cl->registered = 0;
        cl->broker_epoch = -1;
        cl->setup_busy = 0;
        cl->reg_busy = 0;
        cl->reg_waiting = 0;
        cl->elect_busy = 0;
        cl->ctrl_adopt = 0;
        cl->synced = 0;
        evtimer_del(cl->reg_timer);
        evtimer_del(cl->retry_timer);
        cl_ctrl_set(cl, 0);
        break;
    case SF_ZK_FAILED:
        cl_fail(cl, SF_ERR_IO, "cannot connect to ZooKeeper at %s within %d ms",
             sf_zk_hosts(cl->zk), cl->connection_timeout_ms);
        break;
    default:
        break;
    }
}

/* ---- lifecycle ---- */

static void free_options(sf_cluster_t *cl) {
    int i;
    free(cl->host);
    for (i = 0; cl->endpoints && i < cl->nendpoints; i++)
        free(cl->endpoints[i]);
    free(cl->endpoints);
    free(cl->rack);
}

sf_cluster_t *sf_cluster_new(struct event_base *base, const sf_cluster_options_t *opt,
                             const sf_cluster_callbacks_t *cb, void *arg) {
    sf_cluster_t *cl;
    char *connect = NULL;
    int i;

    if (!base || !opt || !opt->zk_connect || !*opt->zk_connect || opt->broker_id < 0 ||
        opt->nendpoints < 0 || opt->nendpoints > SF_CLUSTER_MAX_ENDPOINTS ||
        (opt->nendpoints && !opt->endpoints)) {
        errno = EINVAL;
        return NULL;
    }
    cl = calloc(1, sizeof(*cl));
    if (!cl)
        return NULL;
    cl->base = base;
    if (cb)
        cl->cb = *cb;
    cl->arg = arg;
    cl->broker_id = opt->broker_id;
    cl->session_timeout_ms = opt->session_timeout_ms > 0 ? opt->session_timeout_ms : 18000;
    cl->connection_timeout_ms =
        opt->connection_timeout_ms > 0 ? opt->connection_timeout_ms : cl->session_timeout_ms;
    cl->port = opt->host ? opt->port : -1;
    cl->unclean_default = opt->unclean_leader_election != 0;
    cl->rebalance_interval_s = opt->auto_leader_rebalance ? opt->leader_imbalance_check_interval_s
                                                          : 0;
    cl->imbalance_percentage = opt->leader_imbalance_percentage;
    cl->offsets_buckets = opt->offsets_buckets > 0 && opt->offsets_buckets <= SF_CLUSTER_MAX_BUCKETS
                              ? opt->offsets_buckets
                              : 50;
    cl->gbuckets_version = -1;
    cl->broker_epoch = -1;
    cl->controller_id = -1;
    cl->controller_epoch = -1;
    cl->ctrl_epoch_version = -1;
    if (opt->host && !(cl->host = strdup(opt->host)))
        goto err;
    if (opt->rack && !(cl->rack = strdup(opt->rack)))
        goto err;
    if (opt->nendpoints) {
        cl->endpoints = calloc((size_t)opt->nendpoints, sizeof(char *));
        if (!cl->endpoints)
            goto err;
        for (i = 0; i < opt->nendpoints; i++) {
            if (!opt->endpoints[i] || !(cl->endpoints[i] = strdup(opt->endpoints[i])))
                goto err;
            cl->nendpoints = i + 1;
        }
    }
    if (opt->zk_chroot && *opt->zk_chroot && strcmp(opt->zk_chroot, "/")) {
        size_t hl = strcspn(opt->zk_connect, "/");
        if (opt->zk_chroot[0] != '/') {
            errno = EINVAL;
            goto err;
        }
        connect = malloc(hl + strlen(opt->zk_chroot) + 1);
        if (!connect)
            goto err;
        memcpy(connect, opt->zk_connect, hl);
        strcpy(connect + hl, opt->zk_chroot);
    } else if (!(connect = strdup(opt->zk_connect))) {
        goto err;
    }
    cl->zk = sf_zk_new(base, connect, cl->session_timeout_ms, on_zk_state, cl);
    free(connect);
    connect = NULL;
    if (!cl->zk)
        goto err;
    cl->retry_timer = evtimer_new(base, cl_retry_timer_cb, cl);
    cl->reg_timer = evtimer_new(base, cl_reg_timer_cb, cl);
    cl->rebuild_timer = evtimer_new(base, cl_rebuild_cb, cl);
    cl->notify_ev = event_new(base, -1, 0, notify_cb, cl);
    cl->rebalance_timer = event_new(base, -1, EV_PERSIST, cl_rebalance_cb, cl);
    cl->gbuckets_timer = evtimer_new(base, cl_buckets_retry_cb, cl);
    if (!cl->retry_timer || !cl->reg_timer || !cl->rebuild_timer || !cl->notify_ev ||
        !cl->rebalance_timer || !cl->gbuckets_timer)
        goto err;
    if (cl->rebalance_interval_s > 0) {
        struct timeval tv = {cl->rebalance_interval_s, 0};
        evtimer_add(cl->rebalance_timer, &tv);
    }
    return cl;
err:
    i = errno;
    free(connect);
    cl_destroy(cl);
    errno = i;
    return NULL;
}

int sf_cluster_start(sf_cluster_t *cl) {
    if (!cl)
        return SF_ERR_INVALID;
    if (cl->started)
        return SF_ERR_STATE;
    cl->started = 1;
    return sf_zk_start(cl->zk, cl->connection_timeout_ms);
}

void cl_destroy(sf_cluster_t *cl) {
    struct cl_notify *n;
    size_t h;
    int i;
    cl->closing = 1;
    if (cl->retry_timer)
        event_free(cl->retry_timer);
    if (cl->reg_timer)
        event_free(cl->reg_timer);
    if (cl->rebuild_timer)
        event_free(cl->rebuild_timer);
    if (cl->gbuckets_timer)
        event_free(cl->gbuckets_timer);
    if (cl->rebalance_timer)
        event_free(cl->rebalance_timer);
    cl->retry_timer = cl->reg_timer = cl->rebuild_timer = cl->rebalance_timer = NULL;
    /* Closes the session: our ephemerals vanish now. Pending completions run with errors;
     * admin writes queue their completions, delivered below. */
    sf_zk_free(cl->zk);
    cl->zk = NULL;
    cl_pids_free(cl);
    while ((n = cl_notify_pop(cl))) {
        if (n->kind == N_DONE && n->done)
            n->done(n->arg, n->err);
        free(n);
    }
    if (cl->notify_ev)
        event_free(cl->notify_ev);
    for (i = 0; i < cl->nbrokers; i++)
        cl_broker_free(cl->brokers[i]);
    free(cl->brokers);
    for (h = 0; h < cl->nbuckets; h++) {
        struct cl_topic *t, *next;
        for (t = cl->buckets[h]; t; t = next) {
            next = t->hnext;
            cl_topic_free(t);
        }
    }
    free(cl->buckets);
    for (i = 0; i < CL_BCFG_N; i++)
        sf_cluster_configs_free(cl->bconfigs[i].configs, cl->bconfigs[i].nconfigs);
    cl_controller_stop(cl);
    for (i = 0; i < cl->ndeleting; i++)
        free(cl->deleting[i]);
    free(cl->deleting);
    sf_znode_tps_free(cl->pref, cl->npref);
    sf_znode_tps_free(cl->reassign, cl->nreassign);
    free(cl->gbuckets);
    free(cl->evac);
    sf_cluster_snapshot_unref(cl->current);
    free(cl->cluster_id);
    free_options(cl);
    free(cl);
}

void sf_cluster_free(sf_cluster_t *cl) {
    if (!cl || cl->closing)
        return;
    if (cl->user_depth > 0) {
        cl->free_pending = 1;
        return;
    }
    cl_destroy(cl);
}

sf_cluster_snapshot_t *sf_cluster_current(sf_cluster_t *cl) { return cl ? cl->current : NULL; }
int sf_cluster_is_controller(const sf_cluster_t *cl) { return cl && cl->is_controller; }
int32_t sf_cluster_controller_epoch(const sf_cluster_t *cl) {
    return cl ? cl->controller_epoch : -1;
}
int64_t sf_cluster_broker_epoch(const sf_cluster_t *cl) {
    return cl && cl->registered ? cl->broker_epoch : -1;
}
struct sf_zk *sf_cluster_zk(sf_cluster_t *cl) { return cl ? cl->zk : NULL; }
int sf_cluster_connected(const sf_cluster_t *cl) {
    return cl && cl_alive(cl) && sf_zk_state(cl->zk) == SF_ZK_CONNECTED;
}
