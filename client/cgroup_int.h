/* The group membership's private state, shared by cgroup.c (the state machine, assignment,
 * events and the public functions), cgroupops.c (the OffsetCommit and OffsetFetch operations)
 * and cgroupproto.c (the group protocol's requests: the coordinator, JoinGroup, SyncGroup with
 * the leader's assignment, Heartbeat, LeaveGroup, and the codec helpers). Everything here runs
 * with the client lock held; request callbacks and sf_cgroup_run in the I/O thread only. */
#ifndef SF_CGROUP_INT_H
#define SF_CGROUP_INT_H

#include <regex.h>
#include <stdint.h>

#include "assignor.h"
#include "cgroup.h"
#include "clientconf.h"
#include "proto.h"

struct event;

enum { G_IDLE, G_PREPARE, G_JOIN, G_SYNC, G_STABLE };

/* A growable list whose topic strings it owns. */
typedef struct tpl {
    sf_topic_partition_t *v;
    size_t n, cap;
} tpl_t;

/* A partition the group assigned to this member. */
typedef struct owned {
    char *topic;
    int32_t partition;
    int32_t generation; /* of the assignment that added it */
    int started;        /* assigned to the consumer (its committed offset was fetched) */
    int64_t committed;  /* the last offset known committed, -1 */
} owned_t;

enum { EV_COMMIT = 100 }; /* besides SF_REBALANCE_* */

enum {
    OP_USER,   /* sf_consumer_commit / committed: a thread waits for it */
    OP_ASYNC,  /* sf_consumer_commit_async: its callback is an event */
    OP_AUTO,   /* enable.auto.commit */
    OP_REVOKE, /* the commit of revoked partitions: the next JoinGroup waits for it */
    OP_ASSIGN  /* the committed offsets of newly assigned partitions */
};

/* An OffsetCommit or OffsetFetch for the coordinator, sent (again) whenever it is known. */
typedef struct gop gop_t;
struct gop {
    gop_t *next;
    int16_t api;      /* SF_PROTO_API_OffsetCommit or SF_PROTO_API_OffsetFetch */
    int why;          /* OP_* */
    tpl_t tps;        /* sorted */
    int64_t deadline; /* -1: none (OP_ASSIGN retries until the partitions go) */
    int64_t retry_at;
    int32_t generation; /* OP_ASSIGN: the assignment's; member commits: the member's */
    int member;         /* a commit of the group member: valid in its generation only */
    uint32_t epoch;     /* member commits: g->epoch when made */
    int fails;          /* OP_ASSIGN: errors in a row (the retry backs off) */
    int last_err;       /* OP_ASSIGN: the last error reported */
    int inflight, done, abandoned, err;
    sf_commit_cb *cb;
    void *opaque;
};

/* An event for the application, served by poll. */
typedef struct gev gev_t;
struct gev {
    gev_t *next;
    int type; /* SF_REBALANCE_* or EV_COMMIT */
    tpl_t tps;
    gop_t *op; /* EV_COMMIT */
};

/* A member of the leader's JoinGroup answer. */
typedef struct jmember {
    char *member_id, *instance_id;
    uint8_t *meta;
    size_t len;
} jmember_t;

struct sf_cgroup {
    sf_consumer_t *c;
    sf_client_t *cl;
    const sf_clientconf_t *conf;
    const char *id; /* group.id (in conf) */
    int started, stopped, closing;
    int cooperative; /* every configured assignor is cooperative */

    /* the subscription */
    int subscribed;
    char **names; /* literal topic names */
    size_t nnames;
    regex_t *res; /* patterns */
    size_t nres;
    char **topics; /* the subscription resolved: sorted, unique, sent in JoinGroup */
    size_t ntopics;

    /* the coordinator */
    int32_t coord; /* -1 unknown */
    uint32_t coord_epoch; /* changes when the coordinator is lost */
    int finding;
    int64_t find_at;
    int find_fails;

    /* the membership */
    int state;
    char *member_id; /* "" until the coordinator hands one out */
    int32_t generation;
    char *protocol;
    sf_assignor_kind_t assignor;
    int leader, skip_assignment;
    uint32_t epoch;
    int req_inflight; /* JoinGroup or SyncGroup (the coordinator's connection waits for it) */
    int64_t join_at;
    int prepared;
    int rejoin;
    char why[128]; /* why it rejoins (JoinGroup v8+ Reason) */
    owned_t *owned;
    size_t nowned, capowned;
    int hb_inflight;
    int64_t next_hb;
    int leaving;
    int fatal; /* FENCED_INSTANCE_ID: no rejoin until sf_consumer_subscribe */

    /* the leader */
    jmember_t *jm;
    size_t njm;
    int64_t md_wait_until;
    sf_assignor_topic_t *snap; /* partition counts the last assignment saw (names owned) */
    size_t nsnap;

    /* revocation */
    gev_t *revoke_ev; /* REVOKED event not served yet */
    gev_t *revoking;  /* REVOKED event whose callback runs (out of the event list) */
    int revoke_lost;  /* its partitions were lost during the callback: nothing to commit */
    gop_t *revoke_op; /* commit of revoked partitions in flight */

    /* polling (max.poll.interval.ms) */
    unsigned polls, polls_seen;
    int64_t poll_seen_at;
    int poll_expired;

    gop_t *ops, *ops_tail;
    gev_t *ev_head, *ev_tail;
    int serving; /* a thread serves the events (one at a time) */
    int closed;  /* sf_cgroup_close is done: no more commits */
    int app_err; /* a group error for the application's next poll */
    int last_err;
    struct event *timer;
    int64_t next_commit;
    int in_run, rerun;
};


#define sf_cgroup_log(g, level, ...) sf_client_log((g)->cl, (level), __VA_ARGS__)

/* ---- cgroup.c ---- */

/* Partition lists: free the topics and the array; append (the topic copied); the index of
 * @topic/@partition or -1. */
void sf_cgroup_tpl_clear(tpl_t *l);
int sf_cgroup_tpl_add(tpl_t *l, const char *topic, int32_t partition, int64_t offset);
int sf_cgroup_tpl_find(const tpl_t *l, const char *topic, int32_t partition);
/* The index of the owned partition @topic/@partition, or -1. */
long sf_cgroup_owned_find(const sf_cgroup_t *g, const char *topic, int32_t partition);
/* Queue an event of @type for the application's next poll; NULL when out of memory. */
gev_t *sf_cgroup_event_new(sf_cgroup_t *g, int type);
/* The committed offsets of the newly assigned partitions of @op (OP_ASSIGN) came back: start
 * them there and tell the application. */
void sf_cgroup_assign_started(sf_cgroup_t *g, gop_t *op);

/* Run the state machine: send what is due, arm the timer (I/O thread). */
void sf_cgroup_run(sf_cgroup_t *g);
/* Log @err and hand it to the application's next poll (once per distinct error in a row). */
void sf_cgroup_report(sf_cgroup_t *g, const char *what, int err);
/* retry.backoff.ms. */
int64_t sf_cgroup_backoff(const sf_cgroup_t *g);
/* The member was fenced: its partitions are lost, it rejoins as a new member. */
void sf_cgroup_fenced(sf_cgroup_t *g, const char *why, int err);
/* Another consumer took over this member's group.instance.id (FENCED_INSTANCE_ID, @what
 * failed): the partitions are lost, the application hears of it at its next poll, and the
 * member stays out of the group until sf_consumer_subscribe is called again. */
void sf_cgroup_instance_fenced(sf_cgroup_t *g, const char *what);
/* Rejoin once the current step is done, telling the coordinator @why. */
void sf_cgroup_rejoin(sf_cgroup_t *g, const char *why);
/* Forget the generation (and the member id unless @keep_id): answers to requests sent before
 * are dropped, the state goes back to IDLE. */
void sf_cgroup_reset(sf_cgroup_t *g, int keep_id);
/* SyncGroup's answer: start the partitions @asg adds, revoke those it takes away. */
void sf_cgroup_assignment(sf_cgroup_t *g, const sf_proto_ConsumerProtocolAssignment_t *asg);

/* ---- cgroupops.c ---- */

/* A new operation for @api (OffsetCommit or OffsetFetch) made for @why (OP_*); NULL when out
 * of memory. */
gop_t *sf_cgroup_op_new(int16_t api, int why);
void sf_cgroup_op_free(gop_t *op);
/* Queue @op (owned from now on) behind the others. A commit made while the consumer is a
 * group member (subscribed, or not yet out of the group) is a member commit: it is sent in
 * the member's current generation or not at all. */
void sf_cgroup_op_queue(sf_cgroup_t *g, gop_t *op);
/* @op is finished with @op->err: hand it to whoever waits for it (every waiting thread is
 * signalled). @op is unlinked, and freed unless a thread or an event still holds it. */
void sf_cgroup_op_complete(sf_cgroup_t *g, gop_t *op);
/* Send what is due, end what expired (I/O thread). */
void sf_cgroup_ops_service(sf_cgroup_t *g, int64_t now);
/* The earliest time sf_cgroup_ops_service has something to do, into *@at when earlier. */
void sf_cgroup_ops_next_at(const sf_cgroup_t *g, int64_t *at);
/* The member lost its generation: its member commits not in flight fail with @err (the ones
 * in flight are refused by the coordinator, or fail when they would be retried). */
void sf_cgroup_ops_fail_member(sf_cgroup_t *g, int err);
/* A commit of the positions of @tps (offsets ignored) or, when NULL, of every started owned
 * partition whose position moved since its last commit (@pending: the position counts the
 * records the application was handed). NULL when there is nothing to commit (or no memory). */
gop_t *sf_cgroup_commit_positions(sf_cgroup_t *g, const tpl_t *tps, int why, int pending);
/* A commit of the positions of the partitions assigned with sf_consumer_assign; NULL when
 * there are none. */
gop_t *sf_cgroup_commit_assigned(sf_cgroup_t *g, int why, int pending);
/* Queue @op (OP_USER) and wait (application thread) until it is done or @deadline passes;
 * returns its error, its partitions into @result (may be NULL). The op is freed, unless it
 * is still running when the wait gives up (then its completion frees it). */
int sf_cgroup_op_wait(sf_cgroup_t *g, gop_t *op, int64_t deadline, tpl_t *result);
/* Wait (application thread) until no operation is left or @deadline passes. */
void sf_cgroup_ops_wait(sf_cgroup_t *g, int64_t deadline);
/* The consumer closes (application thread): the asynchronous commits get until @deadline to
 * finish, then the callbacks of those still on their way are queued with SF_ERROR_DESTROYED,
 * to be served while the client exists. */
void sf_cgroup_ops_close(sf_cgroup_t *g, int64_t deadline);

/* ---- cgroupproto.c ---- */

/* Coordinator @coord failed or moved (@why for the log): find it again, unless another one
 * is known by now (an old request's failure says nothing of it). */
void sf_cgroup_coord_dead(sf_cgroup_t *g, int32_t coord, const char *why);
/* Send FindCoordinator unless one is in flight or its backoff runs. */
void sf_cgroup_find(sf_cgroup_t *g, int64_t now);
/* Send JoinGroup (state JOIN). */
void sf_cgroup_join(sf_cgroup_t *g, int64_t now);
/* Send SyncGroup (state SYNC); a leader runs the assignor first, and may wait a little for
 * the metadata of the group's topics. */
void sf_cgroup_sync(sf_cgroup_t *g, int64_t now);
/* Send a Heartbeat when due. */
void sf_cgroup_heartbeat(sf_cgroup_t *g, int64_t now);
/* Send LeaveGroup for the current member id (fire and forget; g->leaving while in flight). */
void sf_cgroup_leave(sf_cgroup_t *g, const char *why);
/* Free the leader's JoinGroup members and metadata snapshot. */
void sf_cgroup_leader_clear(sf_cgroup_t *g);
/* 1 when this leader's last assignment saw partition counts the metadata now contradicts. */
int sf_cgroup_leader_stale(sf_cgroup_t *g);

#endif
