/* The membership's offset operations (cgroup_int.h): OffsetCommit and OffsetFetch requests to
 * the coordinator, queued in g->ops, sent (again) whenever the coordinator is known, and
 * completed for the thread, the callback or the state machine that waits for them.
 *
 * Commits go one at a time, in order. A member commit (one made while the consumer is a
 * group member) belongs to the generation it was made in: it is sent in that generation or
 * fails locally (Java's generationIfStable). Nothing is sent while a JoinGroup or SyncGroup
 * waits on the coordinator's connection: the coordinator answers a connection's requests in
 * order, so a request behind a JoinGroup would wait for the whole rebalance and time out.
 *
 * Lock held everywhere; the I/O thread unless a function says otherwise. */
#include "cgroup_int.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"

#define UNSTABLE_OFFSET_COMMIT 88
/* The longest wait between the retries of an offset fetch that keeps failing. */
#define ASSIGN_BACKOFF_MAX_MS 10000

static int64_t now_ms(void) {
    return sf_clock_mono_ms();
}

/* ------------------------------------------------------------------------------------------
 * Operations
 * ------------------------------------------------------------------------------------------ */

gop_t *sf_cgroup_op_new(int16_t api, int why) {
    gop_t *op = calloc(1, sizeof(*op));
    if (!op)
        return NULL;
    op->api = api;
    op->why = why;
    op->deadline = -1;
    return op;
}

void sf_cgroup_op_free(gop_t *op) {
    sf_cgroup_tpl_clear(&op->tps);
    free(op);
}

void sf_cgroup_op_queue(sf_cgroup_t *g, gop_t *op) {
    if (op->tps.n > 1)
        qsort(op->tps.v, op->tps.n, sizeof(*op->tps.v), sf_cgroup_tp_cmp);
    if (op->api == SF_PROTO_API_OffsetCommit && (g->subscribed || g->state != G_IDLE)) {
        /* The member id goes with the generation: both change only where g->epoch or
         * g->generation does, so the pair says the member is still the one that made it. */
        op->member = 1;
        op->generation = g->generation;
        op->epoch = g->epoch;
    }
    op->next = NULL;
    if (g->ops_tail)
        g->ops_tail->next = op;
    else
        g->ops = op;
    g->ops_tail = op;
}

static void op_unlink(sf_cgroup_t *g, gop_t *op) {
    gop_t **pp, *prev = NULL;
    for (pp = &g->ops; *pp; prev = *pp, pp = &(*pp)->next) {
        if (*pp == op) {
            *pp = op->next;
            if (g->ops_tail == op)
                g->ops_tail = prev;
            return;
        }
    }
}

/* The committed offsets the answer confirmed. */
static void op_note_committed(sf_cgroup_t *g, const gop_t *op) {
    size_t i;
    for (i = 0; i < op->tps.n; i++) {
        long k = sf_cgroup_owned_find(g, op->tps.v[i].topic, op->tps.v[i].partition);
        if (k >= 0 && op->tps.v[i].err == 0)
            g->owned[k].committed = op->tps.v[i].offset;
    }
}

static void op_log_failure(sf_cgroup_t *g, const gop_t *op) {
    sf_cgroup_log(g, op->err == SF_KERR_REBALANCE_IN_PROGRESS ? SF_LOG_LEVEL_INFO
                                                              : SF_LOG_LEVEL_WARNING,
                  "group %s: %s of %zu partitions failed: %s", g->id,
                  op->api == SF_PROTO_API_OffsetCommit ? "commit" : "offset fetch", op->tps.n,
                  sf_error_name(op->err));
}

void sf_cgroup_op_complete(sf_cgroup_t *g, gop_t *op) {
    op_unlink(g, op);
    op->inflight = 0;
    op->done = 1;
    /* Whoever waits for g->ops to drain (the close) wakes up too, not only the op's owner. */
    sf_client_signal(g->cl);
    if (op->abandoned) {
        sf_cgroup_op_free(op);
        return;
    }
    if (op->api == SF_PROTO_API_OffsetCommit)
        op_note_committed(g, op);
    if (op->err && op->why != OP_ASSIGN)
        op_log_failure(g, op);
    switch (op->why) {
    case OP_USER:
        return; /* op_wait frees it */
    case OP_ASYNC: {
        gev_t *ev = op->cb ? sf_cgroup_event_new(g, EV_COMMIT) : NULL;
        if (ev)
            ev->op = op;
        else
            sf_cgroup_op_free(op);
        return;
    }
    case OP_REVOKE:
        if (g->revoke_op == op)
            g->revoke_op = NULL;
        break;
    case OP_ASSIGN:
        sf_cgroup_assign_started(g, op);
        break;
    }
    sf_cgroup_op_free(op);
}

/* ------------------------------------------------------------------------------------------
 * Requests
 * ------------------------------------------------------------------------------------------ */

/* The member-level meaning of error @err of a commit made by the member in @generation and
 * @epoch, when that is still the member's (one sent before a rejoin says nothing of the new
 * generation). */
static void op_member_error(sf_cgroup_t *g, int err, int32_t generation, uint32_t epoch) {
    if (epoch != g->epoch || generation != g->generation ||
        (g->state != G_STABLE && g->state != G_PREPARE))
        return;
    if (err == SF_KERR_FENCED_INSTANCE_ID)
        sf_cgroup_instance_fenced(g, "a commit was refused");
    else if (err == SF_KERR_UNKNOWN_MEMBER_ID || err == SF_KERR_ILLEGAL_GENERATION)
        sf_cgroup_fenced(g, "a commit was refused", err);
    else if (err == SF_KERR_REBALANCE_IN_PROGRESS && g->state == G_STABLE)
        sf_cgroup_rejoin(g, "the group is rebalancing");
}

typedef struct op_req {
    sf_cgroup_t *g;
    gop_t *op;
    int32_t coord;
    int32_t generation;
    char *member_id;
} op_req_t;

static int op_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    op_req_t *r = arg;
    sf_cgroup_t *g = r->g;
    if (r->op->api == SF_PROTO_API_OffsetCommit)
        return sf_cgroup_commit_encode(wb, version, g->id, r->generation, r->member_id,
                                       g->conf->group_instance_id, r->op->tps.v, r->op->tps.n);
    /* read_committed: offsets a transaction holds are waited for (UNSTABLE_OFFSET_COMMIT) */
    return sf_cgroup_fetch_encode(wb, version, g->id, r->op->tps.v, r->op->tps.n,
                                  g->conf->isolation_level);
}

static void op_fetched(void *arg, sf_slice_t topic, int32_t partition, int64_t offset,
                       int16_t err) {
    gop_t *op = arg;
    size_t i;
    for (i = 0; i < op->tps.n; i++)
        if (op->tps.v[i].partition == partition && sf_slice_eq(topic, op->tps.v[i].topic)) {
            op->tps.v[i].offset = offset;
            op->tps.v[i].err = sf_client_kerr(err);
        }
}

/* Decode @op's answer into its partitions; returns the error of the request as a whole. */
static int op_decode(gop_t *op, sf_rbuf_t *body, int16_t version) {
    int16_t kerr = 0;
    size_t i;
    int rc;
    if (op->api == SF_PROTO_API_OffsetCommit)
        rc = sf_cgroup_commit_decode(body, version, op->tps.v, op->tps.n);
    else {
        for (i = 0; i < op->tps.n; i++) {
            op->tps.v[i].offset = -1;
            op->tps.v[i].err = SF_ERROR_MALFORMED; /* unless listed */
        }
        rc = sf_cgroup_fetch_decode(body, version, &kerr, op_fetched, op);
    }
    if (rc != SF_OK)
        return rc;
    if (kerr)
        return sf_client_kerr(kerr);
    /* A coordinator error comes per partition in OffsetCommit: the same for every one. */
    for (i = 0; i < op->tps.n; i++)
        if (op->tps.v[i].err)
            return op->tps.v[i].err;
    return SF_OK;
}

/* The offset fetch of newly assigned partitions failed with @err: it is retried while they
 * wait for it, further apart each time an error that is not the coordinator's repeats, and
 * the application hears of each new error once. */
static void assign_retry(sf_cgroup_t *g, gop_t *op, int err, int64_t now) {
    int64_t delay = sf_cgroup_backoff(g);
    if (sf_cgroup_coord_retriable(err) || err == UNSTABLE_OFFSET_COMMIT) {
        op->fails = 0;
    } else {
        int shift = op->fails < 16 ? op->fails : 16;
        op->fails++;
        delay = delay << shift > ASSIGN_BACKOFF_MAX_MS ? ASSIGN_BACKOFF_MAX_MS : delay << shift;
        if (err != op->last_err)
            sf_cgroup_report(g, "reading the committed offsets", err);
    }
    op->last_err = err;
    op->retry_at = now + delay;
}

/* @err says to send @op again (maybe to another coordinator). */
static int op_retriable(const gop_t *op, int err) {
    return sf_cgroup_coord_retriable(err) || err == UNSTABLE_OFFSET_COMMIT ||
           (op->why == OP_ASSIGN && err != 0);
}

static void op_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                    sf_rbuf_t *body, void *arg) {
    op_req_t *r = arg;
    sf_cgroup_t *g = r->g;
    gop_t *op = r->op;
    int32_t coord = r->coord;
    (void)cl;
    (void)broker_id;
    free(r->member_id);
    free(r);
    op->inflight = 0;
    if (!err)
        err = op_decode(op, body, version);
    if (err == SF_ERROR_DESTROYED || g->stopped) {
        op->err = SF_ERROR_DESTROYED;
        sf_cgroup_op_complete(g, op);
        return;
    }
    if (op_retriable(op, err) && !op->abandoned) {
        sf_cgroup_log(g, SF_LOG_LEVEL_DEBUG, "group %s: %s of %zu partitions: %s (retrying)",
                      g->id, sf_proto_api_name(op->api), op->tps.n, sf_error_name(err));
        if (err != SF_KERR_COORDINATOR_LOAD_IN_PROGRESS && err != UNSTABLE_OFFSET_COMMIT &&
            err != SF_KERR_REQUEST_TIMED_OUT && sf_cgroup_coord_retriable(err))
            sf_cgroup_coord_dead(g, coord, sf_error_name(err));
        if (op->why == OP_ASSIGN)
            assign_retry(g, op, err, now_ms());
        else
            op->retry_at = now_ms() + sf_cgroup_backoff(g);
    } else {
        int member = op->member && !op->abandoned;
        int32_t generation = op->generation;
        uint32_t epoch = op->epoch;
        /* Completed first: a fencing fails the member's queued commits, not this one again. */
        op->err = err;
        sf_cgroup_op_complete(g, op);
        if (member)
            op_member_error(g, err, generation, epoch);
    }
    sf_cgroup_run(g);
}

static void op_send(sf_cgroup_t *g, gop_t *op, int64_t now) {
    op_req_t *r = calloc(1, sizeof(*r));
    int timeout = g->conf->request_timeout_ms;
    int rc;
    /* A member commit still valid here goes with the member id it was made with (the
     * generation and g->epoch have not changed since); any other one as a standalone
     * consumer's, Kafka's generation -1 and empty member id. */
    if (!r || !(r->member_id = strdup(op->member ? g->member_id : ""))) {
        free(r);
        op->retry_at = now + sf_cgroup_backoff(g);
        return;
    }
    r->g = g;
    r->op = op;
    r->coord = g->coord;
    r->generation = op->member ? op->generation : -1;
    if (op->deadline >= 0 && op->deadline - now < timeout)
        timeout = (int)(op->deadline - now > 0 ? op->deadline - now : 1);
    rc = sf_client_request(g->cl, SF_CLIENT_COORD_CONN(g->coord), op->api,
                           op->api == SF_PROTO_API_OffsetCommit ? SF_CGROUP_OFFSETCOMMIT_MAX
                                                                : SF_CGROUP_OFFSETFETCH_MAX,
                           op_encode, op_done, r, timeout, 0);
    if (rc != SF_OK) {
        free(r->member_id);
        free(r);
        op->retry_at = now + sf_cgroup_backoff(g);
        return;
    }
    op->inflight = 1;
}

/* ------------------------------------------------------------------------------------------
 * The queue
 * ------------------------------------------------------------------------------------------ */

/* 1 while some partition of an OP_ASSIGN still waits for it. */
static int assign_wanted(const sf_cgroup_t *g, const gop_t *op) {
    size_t i;
    for (i = 0; i < op->tps.n; i++) {
        long k = sf_cgroup_owned_find(g, op->tps.v[i].topic, op->tps.v[i].partition);
        if (k >= 0 && !g->owned[k].started && g->owned[k].generation == op->generation)
            return 1;
    }
    return 0;
}

/* Commits go one at a time, in order: a commit retried after a later one succeeded would
 * put an older offset back. */
static int commit_inflight(const sf_cgroup_t *g) {
    const gop_t *op;
    for (op = g->ops; op; op = op->next)
        if (op->inflight && op->api == SF_PROTO_API_OffsetCommit)
            return 1;
    return 0;
}

/* The consumer is out of the group and not on its way back in. */
static int member_gone(const sf_cgroup_t *g) {
    return g->state == G_IDLE && (!g->subscribed || g->closing || g->poll_expired || g->fatal);
}

/* Why member commit @op can no longer be sent (0: it can): REBALANCE_IN_PROGRESS while the
 * member is on its way to a new generation, ILLEGAL_GENERATION once it is in one or out of
 * the group. */
static int op_stale(const sf_cgroup_t *g, const gop_t *op) {
    if (!op->member)
        return 0;
    if (op->epoch == g->epoch && op->generation == g->generation && op->generation >= 0 &&
        (g->state == G_STABLE || g->state == G_PREPARE))
        return 0;
    if (g->state == G_STABLE || member_gone(g))
        return SF_KERR_ILLEGAL_GENERATION;
    return SF_KERR_REBALANCE_IN_PROGRESS;
}

/* Ops wait while a JoinGroup or SyncGroup is in flight, except the commit of revoked
 * partitions (the rejoin waits for it). */
static int op_held(const sf_cgroup_t *g, const gop_t *op) {
    return g->req_inflight && op->why != OP_REVOKE;
}

/* The error @op ends with now, or 0. */
static int op_ends(const sf_cgroup_t *g, const gop_t *op, int64_t now) {
    int stale;
    if (op->deadline >= 0 && now >= op->deadline)
        return SF_ERROR_TIMED_OUT;
    if (op->why == OP_ASSIGN && !assign_wanted(g, op))
        return SF_ERROR_TIMED_OUT;
    if ((stale = op_stale(g, op)) != 0)
        return stale;
    return 0;
}

void sf_cgroup_ops_service(sf_cgroup_t *g, int64_t now) {
    gop_t *op, *next;
    int committing = commit_inflight(g);
    for (op = g->ops; op; op = next) {
        int err;
        next = op->next;
        if (op->inflight)
            continue;
        if ((err = op_ends(g, op, now)) != 0) {
            op->err = err;
            sf_cgroup_op_complete(g, op);
        } else if (op->api == SF_PROTO_API_OffsetCommit && committing) {
            continue; /* behind an earlier commit, even one waiting for its retry */
        } else {
            committing |= op->api == SF_PROTO_API_OffsetCommit;
            if (g->coord >= 0 && now >= op->retry_at && !op_held(g, op))
                op_send(g, op, now);
        }
    }
}

void sf_cgroup_ops_next_at(const sf_cgroup_t *g, int64_t *at) {
    const gop_t *op;
    int committing = commit_inflight(g);
    /* Only times that the next service moves on, so that a time in the past cannot spin the
     * timer: an op in flight ends with its request. */
    for (op = g->ops; op; op = op->next) {
        int blocked = op->api == SF_PROTO_API_OffsetCommit && committing;
        if (op->inflight)
            continue;
        if (op->api == SF_PROTO_API_OffsetCommit)
            committing = 1;
        if (!blocked && g->coord >= 0 && !op_held(g, op) && op->retry_at < *at)
            *at = op->retry_at;
        if (op->deadline >= 0 && op->deadline < *at)
            *at = op->deadline;
    }
}

void sf_cgroup_ops_fail_member(sf_cgroup_t *g, int err) {
    gop_t *op, *next;
    for (op = g->ops; op; op = next) {
        next = op->next;
        if (op->member && !op->inflight) {
            op->err = err;
            sf_cgroup_op_complete(g, op);
        }
    }
}

/* ------------------------------------------------------------------------------------------
 * Commits of positions
 * ------------------------------------------------------------------------------------------ */

gop_t *sf_cgroup_commit_positions(sf_cgroup_t *g, const tpl_t *tps, int why, int pending) {
    gop_t *op = sf_cgroup_op_new(SF_PROTO_API_OffsetCommit, why);
    size_t i;
    if (!op)
        return NULL;
    for (i = 0; i < (tps ? tps->n : g->nowned); i++) {
        const char *topic = tps ? tps->v[i].topic : g->owned[i].topic;
        int32_t partition = tps ? tps->v[i].partition : g->owned[i].partition;
        long k = tps ? sf_cgroup_owned_find(g, topic, partition) : (long)i;
        int64_t pos;
        if (k < 0 || !g->owned[k].started)
            continue;
        pos = sf_consumer_group_position(g->c, topic, partition, pending);
        if (pos < 0 || (!tps && pos == g->owned[k].committed))
            continue;
        if (sf_cgroup_tpl_add(&op->tps, topic, partition, pos) != SF_OK)
            break;
    }
    if (op->tps.n == 0) {
        sf_cgroup_op_free(op);
        return NULL;
    }
    return op;
}

gop_t *sf_cgroup_commit_assigned(sf_cgroup_t *g, int why, int pending) {
    size_t n = sf_consumer_group_parts(g->c, NULL, 0), i;
    sf_topic_partition_t *v;
    gop_t *op;
    if (n == 0 || !(v = calloc(n, sizeof(*v))))
        return NULL;
    n = sf_consumer_group_parts(g->c, v, n);
    if ((op = sf_cgroup_op_new(SF_PROTO_API_OffsetCommit, why))) {
        for (i = 0; i < n; i++) {
            int64_t pos = sf_consumer_group_position(g->c, v[i].topic, v[i].partition, pending);
            if (pos >= 0)
                sf_cgroup_tpl_add(&op->tps, v[i].topic, v[i].partition, pos);
        }
        if (op->tps.n == 0) {
            sf_cgroup_op_free(op);
            op = NULL;
        }
    }
    free(v);
    return op;
}

/* ------------------------------------------------------------------------------------------
 * Waiting (application thread)
 * ------------------------------------------------------------------------------------------ */

int sf_cgroup_op_wait(sf_cgroup_t *g, gop_t *op, int64_t deadline, tpl_t *result) {
    int rc;
    op->deadline = deadline;
    sf_cgroup_op_queue(g, op);
    sf_client_wake(g->cl);
    /* The I/O thread finishes the op by its deadline; the margin covers a reply in flight. */
    while (!op->done && !g->stopped && sf_client_wait(g->cl, deadline + 1000) == SF_OK)
        ;
    if (!op->done) {
        op->abandoned = 1;
        return g->stopped ? SF_ERROR_DESTROYED : SF_ERROR_TIMED_OUT;
    }
    rc = op->err;
    if (result) {
        *result = op->tps;
        memset(&op->tps, 0, sizeof(op->tps));
    }
    sf_cgroup_op_free(op);
    return rc;
}

void sf_cgroup_ops_wait(sf_cgroup_t *g, int64_t deadline) {
    sf_client_wake(g->cl);
    while (g->ops && !g->stopped && sf_client_wait(g->cl, deadline) == SF_OK)
        ;
}

/* The callback of asynchronous commit @op, owed now: an event with a copy of it (@op itself
 * stays with its request, abandoned). */
static void op_owe_callback(sf_cgroup_t *g, gop_t *op) {
    gop_t *copy = sf_cgroup_op_new(op->api, OP_ASYNC);
    gev_t *ev = NULL;
    size_t i;
    int ok = copy != NULL;
    for (i = 0; ok && i < op->tps.n; i++)
        ok = sf_cgroup_tpl_add(&copy->tps, op->tps.v[i].topic, op->tps.v[i].partition,
                               op->tps.v[i].offset) == SF_OK;
    if (ok && (ev = sf_cgroup_event_new(g, EV_COMMIT))) {
        copy->cb = op->cb;
        copy->opaque = op->opaque;
        copy->err = SF_ERROR_DESTROYED;
        copy->done = 1;
        ev->op = copy;
    } else {
        sf_cgroup_log(g, SF_LOG_LEVEL_ERR, "group %s: out of memory: a commit callback is lost",
                      g->id);
        if (copy)
            sf_cgroup_op_free(copy);
    }
    op->abandoned = 1;
}

/* 1 while an asynchronous commit has not finished. */
static int async_pending(const sf_cgroup_t *g) {
    const gop_t *op;
    for (op = g->ops; op; op = op->next)
        if (op->why == OP_ASYNC && !op->abandoned)
            return 1;
    return 0;
}

void sf_cgroup_ops_close(sf_cgroup_t *g, int64_t deadline) {
    gop_t *op, *next;
    sf_client_wake(g->cl);
    while (async_pending(g) && !g->stopped && sf_client_wait(g->cl, deadline) == SF_OK)
        ;
    for (op = g->ops; op; op = next) {
        next = op->next;
        if (op->why != OP_ASYNC || op->abandoned)
            continue;
        if (op->inflight) {
            op_owe_callback(g, op);
        } else {
            op->err = SF_ERROR_DESTROYED;
            sf_cgroup_op_complete(g, op);
        }
    }
}
