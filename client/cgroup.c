/* A consumer's membership in a consumer group (cgroup.h).
 *
 * The state machine (I/O thread, lock held; group_run drives it after every event):
 *
 *   IDLE --subscribe--> PREPARE --> JOIN --> SYNC --> STABLE --rejoin--> PREPARE ...
 *
 * PREPARE readies the member for a new generation: with eager assignors it revokes every
 * partition (the application's callback first, then the auto-commit of their positions, then
 * the unassignment), with cooperative-sticky it only commits. JOIN sends JoinGroup (again
 * with the member id the coordinator hands out on MEMBER_ID_REQUIRED), SYNC sends SyncGroup
 * (the leader runs the assignor first), STABLE heartbeats and auto-commits. A new assignment
 * starts the partitions it adds at their committed offsets (OffsetFetch) and, with
 * cooperative-sticky, revokes the ones it takes away and rejoins.
 *
 * Fencing (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION) and a member that stopped polling for
 * max.poll.interval.ms lose their partitions at once (no commit: another member may own them
 * already) and rejoin afresh. FENCED_INSTANCE_ID (another consumer runs with this
 * group.instance.id) is final: the partitions are lost, the application hears of it and the
 * member stays out until it subscribes again, so that two such consumers do not take the
 * membership from each other forever. A coordinator that moves (NOT_COORDINATOR,
 * COORDINATOR_NOT_AVAILABLE, a failed connection) is found again; requests to it go over a
 * connection of their own (SF_CLIENT_COORD_CONN).
 *
 * g->epoch changes with every membership change: answers to requests sent before are dropped,
 * so a late SyncGroup answer never assigns partitions of an older generation. */
#include "cgroup_int.h"

#include <assert.h>
#include <event2/event.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "assignor.h"
#include "clientconf.h"
#include "clock.h"
#include "err.h"
#include "proto.h"
#include "txnproducer.h"

/* LeaveGroup at close or unsubscribe waits at most this long (after the commits). */
#define LEAVE_WAIT_MS 10000


/* ------------------------------------------------------------------------------------------
 * Partition lists
 * ------------------------------------------------------------------------------------------ */

void sf_cgroup_tpl_clear(tpl_t *l) {
    size_t i;
    for (i = 0; i < l->n; i++)
        free((char *)l->v[i].topic);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

int sf_cgroup_tpl_add(tpl_t *l, const char *topic, int32_t partition, int64_t offset) {
    char *t;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        sf_topic_partition_t *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return SF_ERROR_NOMEM;
        l->v = v;
        l->cap = cap;
    }
    if (!(t = strdup(topic)))
        return SF_ERROR_NOMEM;
    l->v[l->n].topic = t;
    l->v[l->n].partition = partition;
    l->v[l->n].offset = offset;
    l->v[l->n].err = 0;
    l->n++;
    return SF_OK;
}

int sf_cgroup_tpl_find(const tpl_t *l, const char *topic, int32_t partition) {
    size_t i;
    for (i = 0; i < l->n; i++)
        if (l->v[i].partition == partition && strcmp(l->v[i].topic, topic) == 0)
            return (int)i;
    return -1;
}

int sf_cgroup_tp_cmp(const void *a, const void *b) {
    const sf_topic_partition_t *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    if (c)
        return c;
    return x->partition < y->partition ? -1 : x->partition > y->partition;
}

sf_topic_partition_t *sf_cgroup_tps_pack(const sf_topic_partition_t *tps, size_t n) {
    size_t i, size = n * sizeof(*tps);
    sf_topic_partition_t *out;
    char *p;
    if (n == 0)
        return NULL;
    for (i = 0; i < n; i++)
        size += strlen(tps[i].topic) + 1;
    if (!(out = malloc(size)))
        return NULL;
    memcpy(out, tps, n * sizeof(*tps));
    p = (char *)(out + n);
    for (i = 0; i < n; i++) {
        size_t len = strlen(tps[i].topic) + 1;
        memcpy(p, tps[i].topic, len);
        out[i].topic = p;
        p += len;
    }
    return out;
}

void sf_topic_partitions_destroy(sf_topic_partition_t *parts) {
    free(parts);
}

static int64_t now_ms(void) {
    return sf_clock_mono_ms();
}


/* Tell the application about @err (once per distinct error in a row). */
void sf_cgroup_report(sf_cgroup_t *g, const char *what, int err) {
    sf_cgroup_log(g, SF_LOG_LEVEL_ERR, "group %s: %s: %s", g->id, what, sf_error_name(err));
    if (err != g->last_err) {
        g->last_err = err;
        g->app_err = err;
        sf_client_signal(g->cl);
    }
}

int64_t sf_cgroup_backoff(const sf_cgroup_t *g) {
    return g->conf->retry_backoff_ms > 0 ? g->conf->retry_backoff_ms : 100;
}

gev_t *sf_cgroup_event_new(sf_cgroup_t *g, int type) {
    gev_t *ev = calloc(1, sizeof(*ev));
    if (!ev)
        return NULL;
    ev->type = type;
    if (g->ev_tail)
        g->ev_tail->next = ev;
    else
        g->ev_head = ev;
    g->ev_tail = ev;
    sf_client_signal(g->cl); /* a poll waiting in another thread serves it */
    return ev;
}

static void gev_free(gev_t *ev) {
    sf_cgroup_tpl_clear(&ev->tps);
    free(ev);
}

/* ------------------------------------------------------------------------------------------
 * Owned partitions
 * ------------------------------------------------------------------------------------------ */

long sf_cgroup_owned_find(const sf_cgroup_t *g, const char *topic, int32_t partition) {
    size_t i;
    for (i = 0; i < g->nowned; i++)
        if (g->owned[i].partition == partition && strcmp(g->owned[i].topic, topic) == 0)
            return (long)i;
    return -1;
}

static int owned_add(sf_cgroup_t *g, const char *topic, int32_t partition) {
    owned_t *o;
    if (g->nowned == g->capowned) {
        size_t cap = g->capowned ? g->capowned * 2 : 16;
        owned_t *v = realloc(g->owned, cap * sizeof(*v));
        if (!v)
            return SF_ERROR_NOMEM;
        g->owned = v;
        g->capowned = cap;
    }
    o = &g->owned[g->nowned];
    if (!(o->topic = strdup(topic)))
        return SF_ERROR_NOMEM;
    o->partition = partition;
    o->generation = g->generation;
    o->started = 0;
    o->committed = -1;
    g->nowned++;
    return SF_OK;
}

/* Drop owned entry @i, unassigning it from the consumer. */
static void owned_drop(sf_cgroup_t *g, size_t i) {
    owned_t *o = &g->owned[i];
    if (o->started)
        sf_consumer_group_remove(g->c, o->topic, o->partition);
    free(o->topic);
    g->owned[i] = g->owned[--g->nowned];
}

/* The started partitions (those the application knows about) into @out. */
static int owned_started(const sf_cgroup_t *g, tpl_t *out) {
    size_t i;
    for (i = 0; i < g->nowned; i++)
        if (g->owned[i].started &&
            sf_cgroup_tpl_add(out, g->owned[i].topic, g->owned[i].partition, -1) != SF_OK)
            return SF_ERROR_NOMEM;
    return SF_OK;
}

/* ------------------------------------------------------------------------------------------
 * Assignment, revocation, loss
 * ------------------------------------------------------------------------------------------ */

/* The revoked partitions @tps leave (lock held, any thread): commit their positions
 * (enable.auto.commit; the next JoinGroup waits for it), then unassign them. */
static void revoke_finish(sf_cgroup_t *g, const tpl_t *tps) {
    size_t i;
    if (g->conf->enable_auto_commit && g->conf->group_id) {
        gop_t *op = sf_cgroup_commit_positions(g, tps, OP_REVOKE, 1);
        if (op) {
            op->deadline = now_ms() + g->conf->request_timeout_ms;
            sf_cgroup_op_queue(g, op);
            g->revoke_op = op;
        }
    }
    for (i = 0; i < tps->n; i++) {
        long k = sf_cgroup_owned_find(g, tps->v[i].topic, tps->v[i].partition);
        if (k >= 0)
            owned_drop(g, (size_t)k);
    }
    sf_client_wake(g->cl);
}

/* Revoke @tps (taken over): through the application's callback when there is one. */
static void revoke_start(sf_cgroup_t *g, tpl_t *tps) {
    gev_t *ev;
    sf_cgroup_log(g, SF_LOG_LEVEL_INFO, "group %s: revoking %zu partitions", g->id, tps->n);
    if (g->conf->rebalance_cb && tps->n > 0 &&
        (ev = sf_cgroup_event_new(g, SF_REBALANCE_REVOKED))) {
        ev->tps = *tps;
        g->revoke_ev = ev;
        return;
    }
    revoke_finish(g, tps);
    sf_cgroup_tpl_clear(tps);
}

/* 1 when the loss of @o needs no telling: it is in a LOST event not served yet, or in the
 * REVOKED event whose callback runs (the application is letting go of it right now). */
static int loss_told(const sf_cgroup_t *g, const owned_t *o) {
    const gev_t *ev;
    if (g->revoking && sf_cgroup_tpl_find(&g->revoking->tps, o->topic, o->partition) >= 0)
        return 1;
    for (ev = g->ev_head; ev; ev = ev->next)
        if (ev->type == SF_REBALANCE_LOST &&
            sf_cgroup_tpl_find(&ev->tps, o->topic, o->partition) >= 0)
            return 1;
    return 0;
}

/* Every partition is gone without a commit (the member was fenced or left). */
static void lose_all(sf_cgroup_t *g) {
    tpl_t lost = {0};
    gev_t *ev;
    size_t i;
    /* The generation is gone: its commits could only be refused. */
    sf_cgroup_ops_fail_member(g, SF_KERR_ILLEGAL_GENERATION);
    if (g->revoke_ev) {
        /* Its revocation never happened: the application hears of a loss instead. */
        g->revoke_ev->type = SF_REBALANCE_LOST;
        g->revoke_ev = NULL;
    }
    if (g->revoking)
        g->revoke_lost = 1; /* after its callback, nothing to commit */
    for (i = 0; i < g->nowned; i++) {
        owned_t *o = &g->owned[i];
        if (o->started && !loss_told(g, o))
            sf_cgroup_tpl_add(&lost, o->topic, o->partition, -1);
    }
    while (g->nowned > 0)
        owned_drop(g, g->nowned - 1);
    if (lost.n)
        sf_cgroup_log(g, SF_LOG_LEVEL_WARNING, "group %s: lost %zu partitions", g->id, lost.n);
    if (g->conf->rebalance_cb && lost.n && (ev = sf_cgroup_event_new(g, SF_REBALANCE_LOST))) {
        ev->tps = lost;
        return;
    }
    sf_cgroup_tpl_clear(&lost);
}

/* Forget the membership: a new JoinGroup starts afresh (with the member id unless
 * @keep_id is 0). */
void sf_cgroup_reset(sf_cgroup_t *g, int keep_id) {
    if (!keep_id)
        g->member_id[0] = '\0';
    g->generation = -1;
    g->leader = 0;
    g->epoch++;
    g->req_inflight = 0;
    g->hb_inflight = 0;
    g->state = G_IDLE;
}

void sf_cgroup_fenced(sf_cgroup_t *g, const char *why, int err) {
    sf_cgroup_log(g, SF_LOG_LEVEL_WARNING, "group %s: %s (%s): rejoining as a new member", g->id,
                  why, sf_error_name(err));
    lose_all(g);
    sf_cgroup_reset(g, 0);
    snprintf(g->why, sizeof(g->why), "%s", sf_error_name(err));
}

void sf_cgroup_instance_fenced(sf_cgroup_t *g, const char *what) {
    sf_cgroup_log(g, SF_LOG_LEVEL_ERR,
                  "group %s: %s: another consumer runs with group.instance.id %s: out of the "
                  "group until the next subscribe",
                  g->id, what, g->conf->group_instance_id ? g->conf->group_instance_id : "");
    lose_all(g);
    sf_cgroup_reset(g, 0);
    g->fatal = 1;
    g->rejoin = 0;
    /* Told every time, not once per distinct error: the application has to act on it. */
    g->last_err = g->app_err = SF_KERR_FENCED_INSTANCE_ID;
    sf_client_signal(g->cl);
}

void sf_cgroup_rejoin(sf_cgroup_t *g, const char *why) {
    if (!g->rejoin)
        sf_cgroup_log(g, SF_LOG_LEVEL_INFO, "group %s: rejoining: %s", g->id, why);
    g->rejoin = 1;
    snprintf(g->why, sizeof(g->why), "%s", why);
}

/* Start them at their committed offsets, else at auto.offset.reset. */
void sf_cgroup_assign_started(sf_cgroup_t *g, gop_t *op) {
    gev_t *ev = NULL;
    size_t i;
    if (g->conf->rebalance_cb)
        ev = sf_cgroup_event_new(g, SF_REBALANCE_ASSIGNED);
    for (i = 0; i < op->tps.n; i++) {
        const sf_topic_partition_t *tp = &op->tps.v[i];
        long k = sf_cgroup_owned_find(g, tp->topic, tp->partition);
        int64_t start = tp->offset;
        int err = 0;
        if (op->err || k < 0 || g->owned[k].started || g->owned[k].generation != op->generation)
            continue; /* gone, or assigned again since */
        if (start < 0) {
            start = g->conf->auto_offset_reset ? g->conf->auto_offset_reset : SF_OFFSET_END;
            err = g->conf->auto_offset_reset ? 0 : SF_KERR_OFFSET_OUT_OF_RANGE;
        }
        if (sf_consumer_group_add(g->c, tp->topic, tp->partition, start, err) != SF_OK)
            continue;
        g->owned[k].started = 1;
        g->owned[k].committed = tp->offset;
        if (ev)
            sf_cgroup_tpl_add(&ev->tps, tp->topic, tp->partition, tp->offset);
    }
    if (ev && ev->tps.n == 0)
        ev->type = 0; /* nothing to tell */
}

/* SyncGroup gave this member @asg. */
void sf_cgroup_assignment(sf_cgroup_t *g, const sf_proto_ConsumerProtocolAssignment_t *asg) {
    tpl_t revoked = {0};
    gop_t *fetch = sf_cgroup_op_new(SF_PROTO_API_OffsetFetch, OP_ASSIGN);
    int32_t t, p;
    size_t i;
    for (i = g->nowned; i-- > 0;) {
        int keep = 0;
        for (t = 0; t < asg->AssignedPartitionsCount && !keep; t++)
            if (sf_slice_eq(asg->AssignedPartitions[t].Topic, g->owned[i].topic))
                for (p = 0; p < asg->AssignedPartitions[t].PartitionsCount && !keep; p++)
                    keep = asg->AssignedPartitions[t].Partitions[p] == g->owned[i].partition;
        if (keep)
            continue;
        if (g->owned[i].started)
            sf_cgroup_tpl_add(&revoked, g->owned[i].topic, g->owned[i].partition, -1);
        else
            owned_drop(g, i); /* never started: the application never heard of it */
    }
    for (t = 0; t < asg->AssignedPartitionsCount; t++) {
        char *topic = sf_slice_strdup(asg->AssignedPartitions[t].Topic);
        for (p = 0; topic && p < asg->AssignedPartitions[t].PartitionsCount; p++) {
            int32_t part = asg->AssignedPartitions[t].Partitions[p];
            if (part < 0 || sf_cgroup_owned_find(g, topic, part) >= 0 ||
                owned_add(g, topic, part) != SF_OK)
                continue;
            if (fetch)
                sf_cgroup_tpl_add(&fetch->tps, topic, part, -1);
        }
        free(topic);
    }
    sf_cgroup_log(g, SF_LOG_LEVEL_INFO,
                  "group %s: generation %d (%s%s): %zu partitions assigned, %zu new, %zu revoked",
                  g->id, (int)g->generation, g->protocol, g->leader ? ", leader" : "",
                  g->nowned - revoked.n, fetch ? fetch->tps.n : 0, revoked.n);
    if (revoked.n) {
        revoke_start(g, &revoked);
        if (g->cooperative)
            sf_cgroup_rejoin(g, "partitions were revoked");
    }
    if (fetch && fetch->tps.n) {
        fetch->generation = g->generation;
        sf_cgroup_op_queue(g, fetch);
    } else if (fetch) {
        sf_cgroup_op_free(fetch);
    }
}


/* ------------------------------------------------------------------------------------------
 * The state machine (I/O thread)
 * ------------------------------------------------------------------------------------------ */

/* 1 while a revocation is not finished: its callback not served or running, its commit
 * not done. */
static int revoke_pending(const sf_cgroup_t *g) {
    return g->revoke_ev || g->revoking || g->revoke_op;
}

static int str_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 when the resolved subscription has @topic. */
static int subscribed_topic(const sf_cgroup_t *g, const char *topic) {
    return g->ntopics && bsearch(&topic, g->topics, g->ntopics, sizeof(*g->topics), str_cmp);
}

/* Eager: every partition is revoked. */
static void prepare_eager(sf_cgroup_t *g) {
    tpl_t all = {0};
    size_t i;
    owned_started(g, &all);
    for (i = g->nowned; i-- > 0;)
        if (!g->owned[i].started)
            owned_drop(g, i); /* the application never heard of it */
    if (all.n)
        revoke_start(g, &all);
}

/* Cooperative: the partitions of topics the subscription no longer has are revoked before
 * JoinGroup claims them again (Java's onJoinPrepare); the others only commit. */
static void prepare_cooperative(sf_cgroup_t *g, int64_t now) {
    tpl_t gone = {0};
    size_t i;
    for (i = g->nowned; i-- > 0;) {
        if (subscribed_topic(g, g->owned[i].topic))
            continue;
        if (!g->owned[i].started)
            owned_drop(g, i);
        else
            sf_cgroup_tpl_add(&gone, g->owned[i].topic, g->owned[i].partition, -1);
    }
    if (gone.n)
        revoke_start(g, &gone);
    if (g->conf->enable_auto_commit) {
        gop_t *op = sf_cgroup_commit_positions(g, NULL, OP_REVOKE, 1);
        if (op) {
            op->deadline = now + g->conf->request_timeout_ms;
            sf_cgroup_op_queue(g, op);
            g->revoke_op = op;
        }
    }
}

/* Ready the member for a new generation; 1 once it is (see the file comment). */
static int prepare(sf_cgroup_t *g, int64_t now) {
    if (!g->prepared) {
        g->prepared = 1;
        if (g->cooperative)
            prepare_cooperative(g, now);
        else
            prepare_eager(g);
    }
    return !revoke_pending(g);
}

static void auto_commit(sf_cgroup_t *g, int64_t now) {
    gop_t *op;
    if (!g->conf->enable_auto_commit || g->closing || now < g->next_commit)
        return;
    g->next_commit = now + g->conf->auto_commit_interval_ms;
    for (op = g->ops; op; op = op->next)
        if (op->why == OP_AUTO)
            return; /* the last one is still trying */
    op = g->subscribed ? sf_cgroup_commit_positions(g, NULL, OP_AUTO, 1)
                       : sf_cgroup_commit_assigned(g, OP_AUTO, 1);
    if (op) {
        op->deadline = now + g->conf->request_timeout_ms;
        sf_cgroup_op_queue(g, op);
    }
}

/* max.poll.interval.ms: a member whose application stopped polling leaves the group, so that
 * the others get its partitions; it rejoins at the next poll. */
static void poll_check(sf_cgroup_t *g, int64_t now) {
    if (g->state == G_IDLE || g->closing || g->polls != g->polls_seen ||
        sf_consumer_polling(g->c)) {
        g->polls_seen = g->polls;
        g->poll_seen_at = now;
        return;
    }
    if (now - g->poll_seen_at < g->conf->max_poll_interval_ms)
        return;
    sf_cgroup_log(g, SF_LOG_LEVEL_WARNING,
                  "group %s: no poll for %d ms (max.poll.interval.ms): leaving the group", g->id,
                  g->conf->max_poll_interval_ms);
    sf_cgroup_leave(g, "the consumer did not poll within max.poll.interval.ms");
    lose_all(g);
    sf_cgroup_reset(g, 0);
    g->poll_expired = 1;
}

static void member_step(sf_cgroup_t *g, int64_t now) {
    if (g->closing || !g->subscribed) {
        /* Leaving: no new generation, but stay a member until LeaveGroup goes. */
        if (g->state == G_STABLE || g->state == G_PREPARE)
            sf_cgroup_heartbeat(g, now);
        return;
    }
    for (;;) {
        switch (g->state) {
        case G_IDLE:
            if (g->poll_expired || g->leaving || g->fatal)
                return;
            g->state = G_PREPARE;
            g->prepared = 0;
            continue;
        case G_PREPARE:
            if (!prepare(g, now)) {
                sf_cgroup_heartbeat(g, now);
                return;
            }
            g->state = G_JOIN;
            continue;
        case G_JOIN:
            if (g->coord >= 0 && !g->req_inflight && now >= g->join_at)
                sf_cgroup_join(g, now);
            return;
        case G_SYNC:
            if (g->coord >= 0 && !g->req_inflight)
                sf_cgroup_sync(g, now);
            return;
        case G_STABLE:
            if (g->rejoin && !revoke_pending(g)) {
                g->state = G_PREPARE;
                g->prepared = 0;
                continue;
            }
            sf_cgroup_heartbeat(g, now);
            auto_commit(g, now);
            return;
        }
    }
}

/* 1 when the coordinator has to be known. */
static int need_coord(const sf_cgroup_t *g) {
    return (g->subscribed && !g->closing && !g->poll_expired && !g->fatal) || g->ops != NULL ||
           g->state != G_IDLE;
}

static void timer_cb(evutil_socket_t fd, short what, void *arg) {
    sf_cgroup_t *g = arg;
    (void)fd;
    (void)what;
    sf_client_wake(g->cl);
}

#define AT(t)                                                                                  \
    do {                                                                                       \
        if ((t) < at)                                                                          \
            at = (t);                                                                          \
    } while (0)

static void timer_arm(sf_cgroup_t *g, int64_t now) {
    int64_t at = INT64_MAX, ms;
    struct timeval tv;
    /* Only times that the next run moves on (or that send something), so that a time in the
     * past cannot spin the timer. */
    if (g->coord < 0 && need_coord(g) && !g->finding)
        AT(g->find_at);
    sf_cgroup_ops_next_at(g, &at);
    if (g->coord >= 0 && !g->req_inflight && g->subscribed && !g->closing) {
        if (g->state == G_JOIN)
            AT(g->join_at);
        if (g->state == G_SYNC && g->md_wait_until > now)
            AT(g->md_wait_until);
    }
    if ((g->state == G_STABLE || g->state == G_PREPARE) && !g->hb_inflight && g->coord >= 0 &&
        g->generation >= 0 && g->member_id[0])
        AT(g->next_hb);
    if (g->conf->enable_auto_commit && !g->closing &&
        ((g->state == G_STABLE && g->subscribed) || (!g->subscribed && g->state == G_IDLE)))
        AT(g->next_commit);
    if (g->state != G_IDLE)
        AT(g->poll_seen_at + g->conf->max_poll_interval_ms);
    if (at == INT64_MAX) {
        if (g->timer)
            evtimer_del(g->timer);
        return;
    }
    if (!g->timer && !(g->timer = evtimer_new(sf_client_base(g->cl), timer_cb, g)))
        return;
    ms = at > now ? at - now : 0;
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    evtimer_add(g->timer, &tv);
}

void sf_cgroup_run(sf_cgroup_t *g) {
    int64_t now = now_ms();
    if (!g->started || g->stopped)
        return;
    if (g->in_run) {
        g->rerun = 1;
        return;
    }
    g->in_run = 1;
    do {
        g->rerun = 0;
        now = now_ms();
        poll_check(g, now);
        if (g->coord < 0 && need_coord(g))
            sf_cgroup_find(g, now);
        sf_cgroup_ops_service(g, now);
        member_step(g, now);
        if (!g->subscribed && g->state == G_IDLE)
            auto_commit(g, now);
    } while (g->rerun && !g->stopped);
    timer_arm(g, now);
    g->in_run = 0;
}

/* ------------------------------------------------------------------------------------------
 * The subscription
 * ------------------------------------------------------------------------------------------ */

static int topic_matches(const sf_cgroup_t *g, const char *name) {
    size_t i;
    for (i = 0; i < g->nres; i++)
        if (regexec(&g->res[i], name, 0, NULL, 0) == 0)
            return 1;
    return 0;
}

static void strv_free(char **v, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Resolve the subscription into g->topics (the literal names plus the cached topics the
 * patterns match, as of now: a topic that stops matching or existing drops out). Returns 1
 * when it changed. */
static int resolve(sf_cgroup_t *g) {
    const sf_client_topic_t *const *all = NULL;
    int nall = 0, i;
    size_t n = 0, k, j;
    char **v;
    if (g->nres)
        all = sf_client_topics(g->cl, &nall);
    if (!(v = calloc(g->nnames + (size_t)nall + 1, sizeof(*v))))
        return 0;
    for (k = 0; k < g->nnames; k++)
        v[n++] = g->names[k];
    for (i = 0; i < nall; i++)
        if (!all[i]->internal && !all[i]->err && topic_matches(g, all[i]->name))
            v[n++] = all[i]->name;
    qsort(v, n, sizeof(*v), str_cmp);
    for (k = 0, j = 0; k < n; k++)
        if (j == 0 || strcmp(v[j - 1], v[k]) != 0)
            v[j++] = v[k];
    n = j;
    if (n == g->ntopics) {
        for (k = 0; k < n && strcmp(v[k], g->topics[k]) == 0; k++)
            ;
        if (k == n) {
            free(v);
            return 0;
        }
    }
    for (k = 0; k < n; k++)
        if (!(v[k] = strdup(v[k]))) {
            strv_free(v, k);
            return 0;
        }
    strv_free(g->topics, g->ntopics);
    g->topics = v;
    g->ntopics = n;
    /* Only the literal names are followed: the topics a pattern matches come with every
     * refresh of all topics (sf_client_metadata_all), and leave the cache, and with it the
     * subscription, when they are deleted. */
    for (k = 0; k < g->nnames; k++)
        sf_client_metadata_want(g->cl, g->names[k], 0);
    return 1;
}

static void subscription_clear(sf_cgroup_t *g) {
    size_t i;
    strv_free(g->names, g->nnames);
    for (i = 0; i < g->nres; i++)
        regfree(&g->res[i]);
    free(g->res);
    strv_free(g->topics, g->ntopics);
    g->names = NULL;
    g->res = NULL;
    g->topics = NULL;
    g->nnames = g->nres = g->ntopics = 0;
}

/* ------------------------------------------------------------------------------------------
 * Role hooks (I/O thread, lock held)
 * ------------------------------------------------------------------------------------------ */

static void hook_wake(sf_client_t *cl, void *self) {
    (void)cl;
    sf_cgroup_run(self);
}

static void hook_metadata(sf_client_t *cl, void *self) {
    sf_cgroup_t *g = self;
    (void)cl;
    if (!g->started || g->stopped)
        return;
    if (g->subscribed && g->nres && resolve(g) && g->state != G_IDLE)
        sf_cgroup_rejoin(g, "the topics the subscription matches changed");
    if (g->leader && g->state == G_STABLE && sf_cgroup_leader_stale(g))
        sf_cgroup_rejoin(g, "the partition counts of the group's topics changed");
    sf_cgroup_run(g);
}

/* The coordinator's connection failed: find the coordinator again now rather than when the
 * requests queued for it time out (it may have moved, its broker may be gone). */
static void hook_broker(sf_client_t *cl, void *self, int32_t broker_id, int up) {
    sf_cgroup_t *g = self;
    (void)cl;
    if (up || !g->started || g->stopped || g->coord < 0 ||
        broker_id != SF_CLIENT_COORD_CONN(g->coord))
        return;
    sf_cgroup_coord_dead(g, g->coord, "its connection failed");
    sf_cgroup_run(g);
}

static void hook_stop(sf_client_t *cl, void *self) {
    sf_cgroup_t *g = self;
    (void)cl;
    g->stopped = 1;
    if (g->timer) {
        event_free(g->timer);
        g->timer = NULL;
    }
    while (g->ops) {
        g->ops->err = SF_ERROR_DESTROYED;
        sf_cgroup_op_complete(g, g->ops);
    }
    sf_client_signal(g->cl);
}

/* ------------------------------------------------------------------------------------------
 * Life cycle
 * ------------------------------------------------------------------------------------------ */

sf_cgroup_t *sf_cgroup_new(sf_consumer_t *c, sf_client_role_t *role) {
    sf_cgroup_t *g = calloc(1, sizeof(*g));
    if (!g || !(g->member_id = strdup(""))) {
        free(g);
        return NULL;
    }
    g->c = c;
    g->coord = -1;
    g->generation = -1;
    memset(role, 0, sizeof(*role));
    role->self = g;
    role->on_wake = hook_wake;
    role->on_metadata = hook_metadata;
    role->on_broker = hook_broker;
    role->on_stop = hook_stop;
    return g;
}

int sf_cgroup_start(sf_cgroup_t *g, sf_client_t *cl, char *errstr, size_t errstr_size) {
    const sf_clientconf_t *conf = sf_client_conf(cl);
    int i;
    (void)errstr;
    (void)errstr_size;
    sf_client_lock(cl);
    g->cl = cl;
    g->conf = conf;
    g->id = conf->group_id;
    g->cooperative = conf->assignors.n > 0;
    for (i = 0; i < conf->assignors.n; i++)
        g->cooperative &= sf_assignor_cooperative((sf_assignor_kind_t)conf->assignors.kinds[i]);
    g->next_commit = now_ms() + conf->auto_commit_interval_ms;
    g->started = 1;
    sf_client_unlock(cl);
    return SF_OK;
}

/* Run the callback of @ev, of @type (read with the lock held), with the lock released. */
static void event_call(sf_cgroup_t *g, gev_t *ev, int type) {
    sf_client_unlock(g->cl);
    if (type == EV_COMMIT)
        ev->op->cb(g->c, ev->op->err, ev->op->tps.v, ev->op->tps.n, ev->op->opaque);
    else
        g->conf->rebalance_cb(g->c, type, ev->tps.v, ev->tps.n, g->conf->rebalance_opaque);
    sf_client_lock(g->cl);
}

/* Serve the revocation @ev (out of the list): while its callback runs it is g->revoking, so
 * that a loss meanwhile (lose_all in the I/O thread) neither rewrites it nor reports its
 * partitions again, and the rejoin waits for it. */
static void serve_revoke(sf_cgroup_t *g, gev_t *ev) {
    assert(ev == g->revoke_ev && !g->revoking);
    g->revoke_ev = NULL;
    g->revoking = ev;
    g->revoke_lost = 0;
    event_call(g, ev, ev->type);
    g->revoking = NULL;
    if (!g->revoke_lost)
        revoke_finish(g, &ev->tps);
    sf_client_wake(g->cl); /* the rejoin may go on */
}

/* Serve the events queued for the application (application thread, lock held; the lock is
 * released around each callback). One thread at a time: another one that polls meanwhile,
 * or a poll inside a callback, leaves them to it. */
static void serve_events(sf_cgroup_t *g) {
    gev_t *ev;
    if (g->serving)
        return;
    g->serving = 1;
    while ((ev = g->ev_head)) {
        int type = ev->type;
        g->ev_head = ev->next;
        if (!g->ev_head)
            g->ev_tail = NULL;
        if (ev == g->revoke_ev)
            serve_revoke(g, ev);
        else if (type)
            event_call(g, ev, type);
        if (ev->op)
            sf_cgroup_op_free(ev->op);
        gev_free(ev);
    }
    g->serving = 0;
}

void sf_cgroup_free(sf_cgroup_t *g) {
    gev_t *ev;
    if (!g)
        return;
    /* The client is gone. Commit callbacks ran at the close (sf_cgroup_ops_close): none are
     * owed any more, and none could run now (the consumer's client is freed). */
    while ((ev = g->ev_head)) {
        g->ev_head = ev->next;
        if (ev->op)
            sf_cgroup_op_free(ev->op);
        gev_free(ev);
    }
    while (g->ops) {
        gop_t *op = g->ops;
        g->ops = op->next;
        sf_cgroup_op_free(op);
    }
    while (g->nowned > 0) {
        free(g->owned[g->nowned - 1].topic);
        g->nowned--;
    }
    free(g->owned);
    subscription_clear(g);
    sf_cgroup_leader_clear(g);
    free(g->member_id);
    free(g->protocol);
    free(g);
}

int sf_cgroup_subscribed(const sf_cgroup_t *g) {
    return g->subscribed;
}

sf_message_t *sf_cgroup_poll(sf_cgroup_t *g) {
    sf_consumer_chunk_t *chunk;
    int err;
    g->polls++;
    if (g->poll_expired) {
        g->poll_expired = 0;
        sf_client_wake(g->cl);
    }
    if (g->ev_head)
        serve_events(g);
    if (!g->app_err)
        return NULL;
    err = g->app_err;
    g->app_err = 0;
    chunk = sf_consumer_chunk_new_error("", -1, -1, err);
    return chunk ? sf_consumer_chunk_take(chunk) : NULL;
}

/* ------------------------------------------------------------------------------------------
 * Waiting for operations (application thread, lock held)
 * ------------------------------------------------------------------------------------------ */

static int64_t deadline_of(const sf_cgroup_t *g, int timeout_ms) {
    return now_ms() + (timeout_ms < 0 ? g->conf->request_timeout_ms : timeout_ms);
}

/* Copy the outcome of @res (sorted) into the caller's @tps. */
static void tps_update(sf_topic_partition_t *tps, size_t n, const tpl_t *res, int offsets) {
    size_t i;
    for (i = 0; i < n; i++) {
        int k = sf_cgroup_tpl_find(res, tps[i].topic, tps[i].partition);
        tps[i].err = k < 0 ? SF_ERROR_MALFORMED : res->v[k].err;
        if (offsets)
            tps[i].offset = k < 0 ? -1 : res->v[k].offset;
    }
}

/* The group of @c, locked, or NULL (unlocked) when @c has none. */
static sf_cgroup_t *group_lock(sf_consumer_t *c) {
    sf_cgroup_t *g = c ? sf_consumer_cgroup(c) : NULL;
    if (g)
        sf_client_lock(g->cl);
    return g;
}

/* The REVOKED callback for every started partition, before the member leaves (application
 * thread, lock held): marked as being served, as in serve_revoke. */
static void leave_revoke(sf_cgroup_t *g, tpl_t *all) {
    gev_t ev, *outer = g->revoking;
    int serving = g->serving;
    memset(&ev, 0, sizeof(ev));
    ev.type = SF_REBALANCE_REVOKED;
    ev.tps = *all;
    g->revoking = &ev;
    g->serving = 1;
    event_call(g, &ev, SF_REBALANCE_REVOKED);
    g->revoking = outer;
    g->serving = serving;
}

/* Send LeaveGroup and wait for it (application thread, lock held), with a time of its own:
 * the commits before may have used up theirs, and it has to be written before the client
 * goes. */
static void leave_send(sf_cgroup_t *g, const char *why) {
    int budget = g->conf->request_timeout_ms < LEAVE_WAIT_MS ? g->conf->request_timeout_ms
                                                             : LEAVE_WAIT_MS;
    int64_t until = now_ms() + budget;
    /* A commit that failed on the coordinator may have sent the member looking for it. */
    sf_client_wake(g->cl);
    while (g->coord < 0 && !g->stopped && sf_client_wait(g->cl, until) == SF_OK)
        ;
    if (g->coord < 0 || g->stopped)
        return;
    sf_cgroup_leave(g, why);
    while (g->leaving && !g->stopped && sf_client_wait(g->cl, until) == SF_OK)
        ;
}

/* Revoke every partition and leave the group (application thread, lock held). */
static void member_leave(sf_cgroup_t *g, const char *why) {
    int64_t deadline = deadline_of(g, -1);
    tpl_t all = {0};
    gop_t *op = NULL;
    serve_events(g);
    owned_started(g, &all);
    if (all.n && g->conf->rebalance_cb)
        leave_revoke(g, &all);
    if (g->conf->enable_auto_commit)
        op = sf_cgroup_commit_positions(g, &all, OP_USER, 0); /* none if lost meanwhile */
    while (g->nowned > 0)
        owned_drop(g, g->nowned - 1);
    sf_cgroup_tpl_clear(&all);
    if (op)
        sf_cgroup_op_wait(g, op, deadline, NULL);
    /* Commits already on their way (auto, revocations, async) go first; offset fetches of
     * partitions no longer assigned end at the I/O thread's next turn. */
    sf_cgroup_ops_wait(g, deadline);
    if (g->member_id[0] && !g->conf->group_instance_id && !g->stopped)
        leave_send(g, why);
    sf_cgroup_reset(g, 0);
    g->rejoin = 0;
    serve_events(g);
}

void sf_cgroup_close(sf_cgroup_t *g) {
    sf_client_lock(g->cl);
    g->closing = 1;
    if (g->subscribed || g->nowned)
        member_leave(g, "the consumer is closing");
    else
        serve_events(g);
    if (!g->subscribed && g->conf->enable_auto_commit) {
        /* Explicitly assigned partitions: their positions, as the Java consumer does. */
        gop_t *op = sf_cgroup_commit_assigned(g, OP_USER, 0);
        if (op)
            sf_cgroup_op_wait(g, op, deadline_of(g, -1), NULL);
    }
    g->subscribed = 0;
    /* Commit callbacks run now, while the consumer and its client still work. */
    sf_cgroup_ops_close(g, deadline_of(g, -1));
    serve_events(g);
    g->closed = 1;
    sf_client_unlock(g->cl);
}

/* ------------------------------------------------------------------------------------------
 * Public functions (streamflow.h)
 * ------------------------------------------------------------------------------------------ */

/* Split @topics into literal names and compiled patterns. */
static int subscription_parse(const char *const *topics, size_t count, char ***names,
                              size_t *nnames, regex_t **res, size_t *nres) {
    size_t i;
    int rc = SF_ERROR_NOMEM;
    *names = calloc(count, sizeof(**names));
    *res = calloc(count, sizeof(**res));
    *nnames = *nres = 0;
    if (!*names || !*res)
        goto err;
    for (i = 0; i < count; i++) {
        /* A pattern matches whole names, as Java's Pattern.matches: ^(rest)$. */
        size_t len = strlen(topics[i]);
        char *re;
        if (topics[i][0] != '^') {
            if (!((*names)[(*nnames)++] = strdup(topics[i])))
                goto err;
            continue;
        }
        if (!(re = malloc(len + 4)))
            goto err;
        snprintf(re, len + 4, "^(%s)$", topics[i] + 1);
        if (regcomp(&(*res)[*nres], re, REG_EXTENDED | REG_NOSUB) != 0) {
            free(re);
            rc = SF_ERROR_INVALID;
            goto err;
        }
        free(re);
        (*nres)++;
    }
    return SF_OK;
err:
    strv_free(*names, *nnames);
    while (*nres > 0)
        regfree(&(*res)[--*nres]);
    free(*res);
    *names = NULL;
    *res = NULL;
    return rc;
}

int sf_consumer_subscribe(sf_consumer_t *c, const char *const *topics, size_t count) {
    char **names;
    regex_t *res;
    size_t nnames, nres, i;
    sf_cgroup_t *g;
    int rc;
    if (!c || !topics || count == 0)
        return SF_ERROR_INVALID;
    for (i = 0; i < count; i++)
        if (!topics[i] || !topics[i][0] || (topics[i][0] == '^' && !topics[i][1]))
            return SF_ERROR_INVALID;
    if (!sf_consumer_cgroup(c))
        return SF_ERROR_STATE;
    if ((rc = subscription_parse(topics, count, &names, &nnames, &res, &nres)) != SF_OK)
        return rc;
    g = group_lock(c);
    if (g->closing || (!g->subscribed && sf_consumer_group_parts(c, NULL, 0) > 0)) {
        sf_client_unlock(g->cl);
        strv_free(names, nnames);
        for (i = 0; i < nres; i++)
            regfree(&res[i]);
        free(res);
        return SF_ERROR_STATE;
    }
    strv_free(g->names, g->nnames);
    for (i = 0; i < g->nres; i++)
        regfree(&g->res[i]);
    free(g->res);
    g->names = names;
    g->nnames = nnames;
    g->res = res;
    g->nres = nres;
    g->subscribed = 1;
    g->fatal = 0; /* a member fenced for good tries again */
    sf_client_metadata_all(g->cl, nres > 0);
    if (resolve(g) && g->state != G_IDLE)
        sf_cgroup_rejoin(g, "the subscription changed");
    sf_client_wake(g->cl);
    sf_client_unlock(g->cl);
    return SF_OK;
}

int sf_consumer_unsubscribe(sf_consumer_t *c) {
    sf_cgroup_t *g = group_lock(c);
    if (!g)
        return SF_ERROR_STATE;
    if (!g->subscribed) {
        sf_client_unlock(g->cl);
        return SF_ERROR_STATE;
    }
    g->subscribed = 0;
    subscription_clear(g);
    sf_client_metadata_all(g->cl, 0);
    member_leave(g, "the consumer unsubscribed");
    sf_client_wake(g->cl);
    sf_client_unlock(g->cl);
    return SF_OK;
}

/* The op for sf_consumer_commit(_async): @offsets, or the current positions. */
static gop_t *commit_op(sf_cgroup_t *g, const sf_topic_partition_t *offsets, size_t count,
                        int why) {
    gop_t *op;
    size_t i;
    tpl_t all = {0};
    if (!offsets) {
        if (!g->subscribed)
            return sf_cgroup_commit_assigned(g, why, 0);
        owned_started(g, &all);
        op = sf_cgroup_commit_positions(g, &all, why, 0);
        sf_cgroup_tpl_clear(&all);
        return op;
    }
    if (!(op = sf_cgroup_op_new(SF_PROTO_API_OffsetCommit, why)))
        return NULL;
    for (i = 0; i < count; i++)
        if (sf_cgroup_tpl_add(&op->tps, offsets[i].topic, offsets[i].partition,
                              offsets[i].offset) != SF_OK) {
            sf_cgroup_op_free(op);
            return NULL;
        }
    return op;
}

static int tps_valid(const sf_topic_partition_t *tps, size_t n, int offsets) {
    size_t i;
    if (n > 0 && !tps)
        return 0;
    for (i = 0; i < n; i++)
        if (!tps[i].topic || !tps[i].topic[0] || tps[i].partition < 0 ||
            (offsets && tps[i].offset < 0))
            return 0;
    return 1;
}

sf_group_metadata_t *sf_consumer_group_metadata(sf_consumer_t *c) {
    sf_cgroup_t *g = group_lock(c);
    const char *instance;
    sf_group_metadata_t *md;
    if (!g)
        return NULL;
    instance = g->conf->group_instance_id;
    if ((md = calloc(1, sizeof(*md))) != NULL) {
        md->generation = g->generation;
        md->group_id = strdup(g->id);
        md->member_id = strdup(g->member_id ? g->member_id : "");
        md->instance_id = instance ? strdup(instance) : NULL;
        if (!md->group_id || !md->member_id || (instance && !md->instance_id)) {
            sf_group_metadata_destroy(md);
            md = NULL;
        }
    }
    sf_client_unlock(g->cl);
    return md;
}

void sf_group_metadata_destroy(sf_group_metadata_t *md) {
    if (!md)
        return;
    free(md->group_id);
    free(md->member_id);
    free(md->instance_id);
    free(md);
}

int sf_consumer_commit(sf_consumer_t *c, sf_topic_partition_t *offsets, size_t count,
                       int timeout_ms) {
    sf_cgroup_t *g;
    tpl_t res = {0};
    gop_t *op;
    int rc;
    if (offsets && !tps_valid(offsets, count, 1))
        return SF_ERROR_INVALID;
    if (!(g = group_lock(c)))
        return c ? SF_ERROR_STATE : SF_ERROR_INVALID;
    if (!(op = commit_op(g, offsets, count, OP_USER))) {
        sf_client_unlock(g->cl);
        return offsets && count ? SF_ERROR_NOMEM : SF_OK; /* nothing to commit */
    }
    rc = sf_cgroup_op_wait(g, op, deadline_of(g, timeout_ms), &res);
    if (offsets)
        tps_update(offsets, count, &res, 0);
    sf_cgroup_tpl_clear(&res);
    sf_client_unlock(g->cl);
    return rc;
}

int sf_consumer_commit_async(sf_consumer_t *c, const sf_topic_partition_t *offsets,
                             size_t count, sf_commit_cb *cb, void *opaque) {
    sf_cgroup_t *g;
    gop_t *op;
    if (offsets && !tps_valid(offsets, count, 1))
        return SF_ERROR_INVALID;
    if (!(g = group_lock(c)))
        return c ? SF_ERROR_STATE : SF_ERROR_INVALID;
    if (g->closed) { /* its callback could no longer run */
        sf_client_unlock(g->cl);
        return SF_ERROR_STATE;
    }
    op = commit_op(g, offsets, count, OP_ASYNC);
    if (!op && (offsets && count)) {
        sf_client_unlock(g->cl);
        return SF_ERROR_NOMEM;
    }
    if (!op && cb && (op = sf_cgroup_op_new(SF_PROTO_API_OffsetCommit, OP_ASYNC))) {
        /* Nothing to commit: the callback still comes, with no partitions. */
        gev_t *ev = sf_cgroup_event_new(g, EV_COMMIT);
        op->cb = cb;
        op->opaque = opaque;
        if (ev)
            ev->op = op;
        else
            sf_cgroup_op_free(op);
    } else if (op) {
        op->cb = cb;
        op->opaque = opaque;
        op->deadline = deadline_of(g, -1);
        sf_cgroup_op_queue(g, op);
        sf_client_wake(g->cl);
    }
    sf_client_unlock(g->cl);
    return SF_OK;
}

int sf_consumer_committed(sf_consumer_t *c, sf_topic_partition_t *parts, size_t count,
                          int timeout_ms) {
    sf_cgroup_t *g;
    tpl_t res = {0};
    gop_t *op;
    size_t i;
    int rc;
    if (!tps_valid(parts, count, 0))
        return SF_ERROR_INVALID;
    if (count == 0)
        return SF_OK;
    if (!(g = group_lock(c)))
        return c ? SF_ERROR_STATE : SF_ERROR_INVALID;
    if (!(op = sf_cgroup_op_new(SF_PROTO_API_OffsetFetch, OP_USER))) {
        sf_client_unlock(g->cl);
        return SF_ERROR_NOMEM;
    }
    for (i = 0; i < count; i++)
        if (sf_cgroup_tpl_add(&op->tps, parts[i].topic, parts[i].partition, -1) != SF_OK) {
            sf_cgroup_op_free(op);
            sf_client_unlock(g->cl);
            return SF_ERROR_NOMEM;
        }
    rc = sf_cgroup_op_wait(g, op, deadline_of(g, timeout_ms), &res);
    tps_update(parts, count, &res, 1);
    sf_cgroup_tpl_clear(&res);
    sf_client_unlock(g->cl);
    return rc;
}

int sf_consumer_assignment(sf_consumer_t *c, sf_topic_partition_t **parts, size_t *count) {
    sf_client_t *cl;
    sf_topic_partition_t *v;
    size_t n;
    if (!c || !parts || !count)
        return SF_ERROR_INVALID;
    *parts = NULL;
    *count = 0;
    cl = sf_consumer_client(c);
    sf_client_lock(cl);
    n = sf_consumer_group_parts(c, NULL, 0);
    if (n && (v = calloc(n, sizeof(*v)))) {
        n = sf_consumer_group_parts(c, v, n);
        qsort(v, n, sizeof(*v), sf_cgroup_tp_cmp);
        *parts = sf_cgroup_tps_pack(v, n);
        free(v);
    }
    sf_client_unlock(cl);
    if (n && !*parts)
        return SF_ERROR_NOMEM;
    *count = n;
    return SF_OK;
}
