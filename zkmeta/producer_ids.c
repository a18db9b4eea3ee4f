/* Producer ids (cluster.h): each broker hands them out from a block of 1000 it reserved in
 * /latest_producer_id_block, Kafka's znode and JSON:
 *   {"version":1,"broker":N,"block_start":"S","block_end":"E"}
 * The next block starts after the block_end found there and is written with the version
 * read (created when the znode is missing), so two brokers never reserve the same block: the
 * loser of a race reads again and takes the one after. Requests that arrive while a block is
 * being reserved wait for it, in order. */
#include "cluster_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "logging.h"

#define PID_BLOCK_PATH "/latest_producer_id_block"
#define PID_BLOCK_SIZE 1000
#define PID_RETRIES 20 /* races lost in a row before the waiters are failed */

struct cl_pid_waiter {
    int64_t *out;
    sf_cluster_done_cb done;
    void *arg;
    struct cl_pid_waiter *next;
};

/* The block_end of the znode's JSON, -1 when it does not decode. */
static int64_t block_end_decode(const char *data, int len) {
    json_t *o = data ? json_loadb(data, (size_t)len, 0, NULL) : NULL;
    json_t *e = json_object_get(o, "block_end");
    int64_t end = -1;
    char *tail;
    if (json_is_string(e)) {
        long long v = strtoll(json_string_value(e), &tail, 10);
        if (!*tail && v >= 0)
            end = v;
    } else if (json_is_integer(e) && json_integer_value(e) >= 0) {
        end = json_integer_value(e);
    }
    json_decref(o);
    return end;
}

static int block_encode(char *buf, size_t size, int32_t broker, int64_t first) {
    return snprintf(buf, size,
                    "{\"version\":1,\"broker\":%d,\"block_start\":\"%" PRId64
                    "\",\"block_end\":\"%" PRId64 "\"}",
                    (int)broker, first, first + PID_BLOCK_SIZE - 1);
}

static void pid_reserve(sf_cluster_t *cl);

/* Hand out ids to the waiters from the block; reserve another when it runs out. */
static void pid_serve(sf_cluster_t *cl) {
    struct cl_pid_waiter *w;
    while ((w = cl->pid_waiters) && cl->pid_left > 0) {
        cl->pid_waiters = w->next;
        *w->out = cl->pid_next++;
        cl->pid_left--;
        cl_notify_done(cl, w->done, w->arg, SF_OK);
        free(w);
    }
    if (cl->pid_waiters)
        pid_reserve(cl);
}

static void pid_fail(sf_cluster_t *cl, int err) {
    struct cl_pid_waiter *w;
    while ((w = cl->pid_waiters)) {
        cl->pid_waiters = w->next;
        cl_notify_done(cl, w->done, w->arg, err);
        free(w);
    }
    cl->pid_busy = 0;
    cl->pid_retries = 0;
}

static void pid_got_block(sf_cluster_t *cl, int64_t first) {
    sf_log(SF_LOG_INFO, "ZK", "reserved producer ids %" PRId64 "..%" PRId64, first,
           first + PID_BLOCK_SIZE - 1);
    cl->pid_next = first;
    cl->pid_left = PID_BLOCK_SIZE;
    cl->pid_busy = 0;
    cl->pid_retries = 0;
    pid_serve(cl);
}

/* A write lost a race (or failed): read again, a bounded number of times. */
static void pid_retry(sf_cluster_t *cl, int err) {
    if (cl->closing || err == SF_ERR_IO || ++cl->pid_retries > PID_RETRIES) {
        sf_log(SF_LOG_WARNING, "ZK", "reserving producer ids failed: %s", sf_err_str(err));
        pid_fail(cl, err == SF_ERR_NOMEM ? err : SF_ERR_IO);
        return;
    }
    cl->pid_busy = 0;
    pid_reserve(cl);
}

static void pid_created_cb(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                           void *arg) {
    sf_cluster_t *cl = arg;
    (void)zrc;
    (void)path;
    (void)stat;
    if (err == SF_OK)
        pid_got_block(cl, 0);
    else
        pid_retry(cl, err == SF_ERR_EXISTS ? SF_ERR_STATE : err);
}

struct pid_set {
    sf_cluster_t *cl;
    int64_t first;
};

static void pid_set_cb(int err, int zrc, const sf_zk_stat_t *stat, void *arg) {
    struct pid_set *s = arg;
    sf_cluster_t *cl = s->cl;
    int64_t first = s->first;
    (void)zrc;
    (void)stat;
    free(s);
    if (err == SF_OK)
        pid_got_block(cl, first);
    else
        pid_retry(cl, err);
}

static void pid_read_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                        void *arg) {
    sf_cluster_t *cl = arg;
    char buf[160];
    int n, rc;
    (void)zrc;
    if (cl->closing) {
        pid_fail(cl, SF_ERR_IO);
        return;
    }
    if (err == SF_ERR_NOTFOUND) {
        n = block_encode(buf, sizeof(buf), cl->broker_id, 0);
        rc = sf_zk_create(cl->zk, PID_BLOCK_PATH, buf, n, 0, pid_created_cb, cl);
    } else if (err == SF_OK) {
        int64_t end = block_end_decode(data, len);
        struct pid_set *s;
        if (end < 0 || end > INT64_MAX - 2 * PID_BLOCK_SIZE) {
            sf_log(SF_LOG_ERR, "ZK", "%s does not hold a block this broker can follow: %.*s",
                   PID_BLOCK_PATH, len, data ? data : "");
            pid_fail(cl, SF_ERR_RANGE);
            return;
        }
        if (!(s = malloc(sizeof(*s)))) {
            pid_fail(cl, SF_ERR_NOMEM);
            return;
        }
        s->cl = cl;
        s->first = end + 1;
        n = block_encode(buf, sizeof(buf), cl->broker_id, s->first);
        if ((rc = sf_zk_set(cl->zk, PID_BLOCK_PATH, buf, n, stat->version, pid_set_cb, s)))
            free(s);
    } else {
        rc = err;
    }
    if (rc != SF_OK)
        pid_retry(cl, rc);
}

static void pid_reserve(sf_cluster_t *cl) {
    int rc;
    if (cl->pid_busy)
        return;
    cl->pid_busy = 1;
    if ((rc = sf_zk_get(cl->zk, PID_BLOCK_PATH, NULL, NULL, pid_read_cb, cl)) != SF_OK)
        pid_fail(cl, rc);
}

int sf_cluster_producer_id(sf_cluster_t *cl, int64_t *out, sf_cluster_done_cb done, void *arg) {
    struct cl_pid_waiter *w, **tail;
    if (!cl || !cl_alive(cl) || !cl->registered)
        return SF_ERR_STATE;
    if (!cl->pid_waiters && cl->pid_left > 0) {
        *out = cl->pid_next++;
        cl->pid_left--;
        return SF_OK;
    }
    if (!(w = calloc(1, sizeof(*w))))
        return SF_ERR_NOMEM;
    w->out = out;
    w->done = done;
    w->arg = arg;
    for (tail = &cl->pid_waiters; *tail; tail = &(*tail)->next)
        ;
    *tail = w;
    pid_reserve(cl);
    return SF_AGAIN;
}

void cl_pids_free(sf_cluster_t *cl) {
    pid_fail(cl, SF_ERR_IO);
}
