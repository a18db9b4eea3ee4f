/* The controller election (Kafka's): an ephemeral /controller created together with a
 * versioned bump of /controller_epoch in one multi-op (cluster_int.h). */
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

void cl_ctrl_set(sf_cluster_t *cl, int is_ctrl) {
    if (cl->is_controller == is_ctrl)
        return;
    cl->is_controller = is_ctrl;
    if (is_ctrl) {
        sf_log(SF_LOG_NOTICE, "ZK", "broker %d is the controller (epoch %d)", (int)cl->broker_id,
               (int)cl->controller_epoch);
    } else {
        /* A deposed controller stops at once: nothing more is written under its epoch. */
        cl->ctrl_epoch_version = -1;
        cl_controller_stop(cl);
        sf_log(SF_LOG_NOTICE, "ZK", "broker %d is no longer the controller", (int)cl->broker_id);
    }
    cl_notify_controller(cl);
    if (is_ctrl && cl->current)
        cl_controller_run(cl, cl->current);
}

/* ---- controller election ---- */

static void elect_multi_cb(int err, int zrc, const sf_zk_op_result_t *res, int n, void *arg) {
    sf_cluster_t *cl = arg;
    (void)zrc;
    if (!cl_alive(cl))
        return;
    cl->elect_busy = 0;
    if (err == SF_OK) {
        cl->controller_epoch = cl->elect_epoch;
        cl->controller_id = cl->broker_id;
        cl->ctrl_epoch_version = cl->elect_version;
        cl_ctrl_set(cl, 1);
        cl_schedule_rebuild(cl);
        return;
    }
    if (n >= 2 && res[0].err == SF_ERR_EXISTS) {
        /* Someone else is the controller: make sure its node is watched. */
        cl_read_controller(cl);
    } else if (n >= 2 && res[1].err == SF_ERR_STATE) {
        /* /controller_epoch moved under us: try again from a fresh read. */
        cl_elect(cl);
    } else {
        sf_log(SF_LOG_INFO, "ZK", "controller election failed: %s (retried on reconnect)",
               sf_zk_strerror(zrc));
    }
}

static void elect_epoch_created_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                                   void *arg) {
    sf_cluster_t *cl = arg;
    (void)zrc;
    (void)path;
    (void)stat;
    if (!cl_alive(cl))
        return;
    cl->elect_busy = 0;
    if (err == SF_OK || err == SF_ERR_EXISTS)
        cl_elect(cl);
}

static void elect_epoch_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                           void *arg) {
    sf_cluster_t *cl = arg;
    int32_t epoch;
    char *json = NULL, epoch_s[16];
    sf_zk_op_t ops[2];
    (void)zrc;
    if (!cl_alive(cl))
        return;
    if (err == SF_ERR_NOTFOUND) {
        if (sf_zk_create(cl->zk, "/controller_epoch", "0", 1, SF_ZK_PERSISTENT,
                         elect_epoch_created_cb, cl) != SF_OK)
            cl->elect_busy = 0;
        return;
    }
    if (err != SF_OK || !stat) {
        cl->elect_busy = 0;
        return;
    }
    if (sf_znode_epoch_decode(data, (size_t)len, &epoch) != SF_OK || epoch == INT32_MAX) {
        sf_log(SF_LOG_ERR, "ZK", "malformed /controller_epoch; cannot elect a controller");
        cl->elect_busy = 0;
        return;
    }
    cl->elect_epoch = epoch + 1;
    cl->elect_version = stat->version + 1; /* what the set below makes it */
    snprintf(epoch_s, sizeof(epoch_s), "%d", (int)cl->elect_epoch);
    json = sf_znode_controller_encode(cl->broker_id, sf_clock_wall_ms());
    if (!json) {
        cl->elect_busy = 0;
        return;
    }
    ops[0] = sf_zk_op_create("/controller", json, (int)strlen(json), SF_ZK_EPHEMERAL);
    ops[1] = sf_zk_op_set("/controller_epoch", epoch_s, (int)strlen(epoch_s), stat->version);
    if (sf_zk_multi(cl->zk, ops, 2, elect_multi_cb, cl) != SF_OK)
        cl->elect_busy = 0;
    free(json);
}

/* Kafka: create the ephemeral /controller and bump /controller_epoch (versioned) in one
 * multi-op; whoever wins the create is the controller. */
void cl_elect(sf_cluster_t *cl) {
    if (!cl_alive(cl) || !cl->registered || cl->elect_busy || cl->is_controller)
        return;
    cl->elect_busy = 1;
    if (sf_zk_get(cl->zk, "/controller_epoch", NULL, NULL, elect_epoch_cb, cl) != SF_OK)
        cl->elect_busy = 0;
}
