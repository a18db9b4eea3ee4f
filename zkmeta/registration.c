/* Session setup: the base znodes, the cluster id and the broker's registration, which copes
 * with a node left by a previous session of the same broker (KAFKA-7165) (cluster_int.h). */
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

static void register_step(sf_cluster_t *cl);

/* ---- session setup: base paths, cluster id, registration ---- */

static void setup_retry(sf_cluster_t *cl) {
    struct timeval tv = {CL_RETRY_MS / 1000, (CL_RETRY_MS % 1000) * 1000};
    cl->setup_busy = 0;
    cl->reg_busy = 0;
    if (cl_alive(cl) && sf_zk_state(cl->zk) == SF_ZK_CONNECTED)
        evtimer_add(cl->retry_timer, &tv);
    /* else: the next SF_ZK_CONNECTED starts over */
}

void cl_retry_timer_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    (void)fd;
    (void)what;
    if (cl_alive(cl) && !cl->registered && !cl->setup_busy &&
        sf_zk_state(cl->zk) == SF_ZK_CONNECTED)
        cl_setup_start(cl);
}

static void reg_watch_cb(sf_zk_t *zk, int event, const char *path, void *arg);

static void arm_reg_watch(sf_cluster_t *cl, sf_zk_stat_cb cb) {
    char path[64];
    struct cl_key *k;
    uint64_t wid;
    cl_path_broker(path, sizeof(path), cl->broker_id);
    if (cl->reg_node.armed) {
        if (cb && sf_zk_exists(cl->zk, path, NULL, NULL, cb, cl) != SF_OK)
            setup_retry(cl);
        return;
    }
    wid = ++cl->next_inc;
    k = cl_key_new(cl, K_REG, wid, cl->broker_id, NULL);
    if (!k || sf_zk_exists(cl->zk, path, reg_watch_cb, k, cb, cl) != SF_OK) {
        free(k);
        if (cb)
            setup_retry(cl);
        return;
    }
    cl->reg_node.watch_id = wid;
    cl->reg_node.armed = 1;
}

static void registered_ok(sf_cluster_t *cl, int64_t czxid) {
    cl->registered = 1;
    cl->reg_busy = 0;
    cl->reg_waiting = 0;
    cl->setup_busy = 0;
    cl->broker_epoch = czxid;
    evtimer_del(cl->reg_timer);
    sf_log(SF_LOG_INFO, "ZK", "registered broker %d at /brokers/ids/%d (epoch %lld)",
           (int)cl->broker_id, (int)cl->broker_id, (long long)czxid);
    /* Watch our own registration: if someone deletes it, register again. */
    arm_reg_watch(cl, NULL);
    cl_sync_all(cl);
}

static void reg_exists_cb(int err, int zrc, const sf_zk_stat_t *stat, void *arg) {
    sf_cluster_t *cl = arg;
    (void)zrc;
    if (!cl_alive(cl) || cl->registered)
        return;
    if (err == SF_ERR_NOTFOUND) {
        register_step(cl); /* vanished meanwhile */
        return;
    }
    if (err != SF_OK || !stat) {
        setup_retry(cl);
        return;
    }
    if (stat->ephemeral_owner && stat->ephemeral_owner == sf_zk_session_id(cl->zk)) {
        registered_ok(cl, stat->czxid);
        return;
    }
    /* KAFKA-7165: the node belongs to another session (a previous incarnation of this broker
     * whose session has not expired yet, or another live broker). Wait for it to vanish (the
     * watch), at most about one session timeout. */
    if (!cl->reg_waiting) {
        int ms = sf_zk_session_timeout(cl->zk) + CL_REG_GRACE_MS;
        struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
        cl->reg_waiting = 1;
        evtimer_add(cl->reg_timer, &tv);
        sf_log(SF_LOG_WARNING, "ZK",
               "/brokers/ids/%d is held by session 0x%llx; waiting up to %d ms for it to expire",
               (int)cl->broker_id, (unsigned long long)stat->ephemeral_owner, ms);
    }
}

static void reg_create_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                          void *arg) {
    sf_cluster_t *cl = arg;
    (void)path;
    if (!cl_alive(cl) || cl->registered)
        return;
    if (err == SF_OK && stat) {
        registered_ok(cl, stat->czxid);
    } else if (err == SF_ERR_EXISTS) {
        arm_reg_watch(cl, reg_exists_cb);
    } else {
        sf_log(SF_LOG_WARNING, "ZK", "cannot register broker %d: %s", (int)cl->broker_id,
               sf_zk_strerror(zrc));
        setup_retry(cl);
    }
}

static void register_step(sf_cluster_t *cl) {
    sf_cluster_broker_t b;
    char path[64], *json;
    memset(&b, 0, sizeof(b));
    b.host = cl->host;
    b.port = cl->port;
    b.endpoints = cl->endpoints;
    b.nendpoints = cl->nendpoints;
    b.rack = cl->rack;
    json = sf_znode_broker_encode(&b, sf_clock_wall_ms());
    if (!json) {
        setup_retry(cl);
        return;
    }
    cl->reg_busy = 1;
    cl_path_broker(path, sizeof(path), cl->broker_id);
    if (sf_zk_create(cl->zk, path, json, (int)strlen(json), SF_ZK_EPHEMERAL, reg_create_cb, cl) !=
        SF_OK)
        setup_retry(cl);
    free(json);
}

static void reg_watch_cb(sf_zk_t *zk, int event, const char *path, void *arg) {
    struct cl_key *k = arg;
    sf_cluster_t *cl = k->cl;
    int mine;
    (void)zk;
    (void)path;
    mine = cl_alive(cl) && cl->reg_node.armed && cl->reg_node.watch_id == k->inc;
    free(k);
    if (!mine)
        return;
    cl->reg_node.armed = 0;
    if (event == SF_ZK_EV_DROPPED)
        return;
    if (cl->registered) {
        if (event == SF_ZK_EV_DELETED) {
            sf_log(SF_LOG_WARNING, "ZK", "our registration /brokers/ids/%d was deleted; "
                   "registering again", (int)cl->broker_id);
            cl->registered = 0;
            cl->broker_epoch = -1;
            register_step(cl);
        } else {
            arm_reg_watch(cl, NULL);
        }
    } else if (cl->reg_waiting) {
        if (event == SF_ZK_EV_DELETED)
            register_step(cl);
        else
            arm_reg_watch(cl, reg_exists_cb);
    }
}

void cl_reg_timer_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cluster_t *cl = arg;
    (void)fd;
    (void)what;
    if (!cl_alive(cl) || cl->registered)
        return;
    cl->reg_waiting = 0;
    if (!cl->ready) {
        cl_fail(cl, SF_ERR_EXISTS, "broker.id %d is already registered in ZooKeeper by another broker",
             (int)cl->broker_id);
        return;
    }
    sf_log(SF_LOG_ERR, "ZK", "broker.id %d is still registered in ZooKeeper by another session; "
           "retrying", (int)cl->broker_id);
    register_step(cl);
}

static void cluster_id_step(sf_cluster_t *cl);

static void cluster_id_created_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                                  void *arg) {
    sf_cluster_t *cl = arg;
    (void)zrc;
    (void)path;
    (void)stat;
    if (!cl_alive(cl))
        return;
    if (err == SF_OK) {
        sf_log(SF_LOG_NOTICE, "ZK", "created cluster id %s", cl->cluster_id);
        register_step(cl);
    } else if (err == SF_ERR_EXISTS) {
        cluster_id_step(cl); /* another broker won: read its id */
    } else {
        setup_retry(cl);
    }
}

static void cluster_id_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                          void *arg) {
    sf_cluster_t *cl = arg;
    char *id = NULL, *json;
    uint8_t uuid[16];
    char s[23];
    (void)zrc;
    (void)stat;
    if (!cl_alive(cl))
        return;
    if (err == SF_OK) {
        if (sf_znode_cluster_id_decode(data, (size_t)len, &id) != SF_OK) {
            cl_fail(cl, SF_ERR_CORRUPT, "malformed /cluster/id in ZooKeeper");
            return;
        }
        free(cl->cluster_id);
        cl->cluster_id = id;
        register_step(cl);
        return;
    }
    if (err != SF_ERR_NOTFOUND) {
        setup_retry(cl);
        return;
    }
    if (sf_znode_uuid_random(uuid) != SF_OK) {
        setup_retry(cl);
        return;
    }
    sf_znode_uuid_to_str(uuid, s);
    json = sf_znode_cluster_id_encode(s);
    id = strdup(s);
    if (!json || !id) {
        free(json);
        free(id);
        setup_retry(cl);
        return;
    }
    free(cl->cluster_id);
    cl->cluster_id = id;
    if (sf_zk_create(cl->zk, "/cluster/id", json, (int)strlen(json), SF_ZK_CREATE_PARENTS,
                     cluster_id_created_cb, cl) != SF_OK)
        setup_retry(cl);
    free(json);
}

static void cluster_id_step(sf_cluster_t *cl) {
    if (sf_zk_get(cl->zk, "/cluster/id", NULL, NULL, cluster_id_cb, cl) != SF_OK)
        setup_retry(cl);
}

static void setup_create_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                            void *arg) {
    sf_cluster_t *cl = arg;
    (void)path;
    (void)stat;
    if (!cl_alive(cl))
        return;
    if (err != SF_OK && err != SF_ERR_EXISTS) {
        if (!cl->setup_error)
            sf_log(SF_LOG_WARNING, "ZK", "cannot create the base znodes: %s",
                   sf_zk_strerror(zrc));
        cl->setup_error = 1;
    }
    if (--cl->setup_outstanding > 0)
        return;
    if (cl->setup_error)
        setup_retry(cl);
    else
        cluster_id_step(cl);
}

void cl_setup_start(sf_cluster_t *cl) {
    static const char *const paths[] = {"/brokers/ids",    "/brokers/topics",
                                        "/config/topics",  "/config/brokers",
                                        "/config/changes", "/admin/delete_topics",
                                        "/coordinators",   "/consumers",
                                        "/transactions"};
    size_t i;
    if (cl->setup_busy || cl->registered)
        return;
    cl->setup_busy = 1;
    cl->setup_error = 0;
    cl->setup_outstanding = 0;
    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if (sf_zk_create(cl->zk, paths[i], NULL, 0, SF_ZK_CREATE_PARENTS, setup_create_cb, cl) ==
            SF_OK)
            cl->setup_outstanding++;
        else
            cl->setup_error = 1;
    }
    if (sf_zk_create(cl->zk, "/controller_epoch", "0", 1, SF_ZK_PERSISTENT, setup_create_cb, cl) ==
        SF_OK)
        cl->setup_outstanding++;
    else
        cl->setup_error = 1;
    if (!cl->setup_outstanding)
        setup_retry(cl);
}
