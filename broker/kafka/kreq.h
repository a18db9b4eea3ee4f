/* The context of one Kafka request while a handler works on it: the server's request, the
 * broker, the metadata snapshot referenced for the request's life, the decoded body, and the
 * helpers every handler uses to answer, to park and to keep strings in the request arena.
 *
 * Lifetime: made by the dispatcher (kafka/dispatch.c) inside the request arena; ends with
 * exactly one of sf_kreq_respond, sf_kreq_respond_none or sf_kreq_close, which release the
 * snapshot and hand the request back to the server. Everything allocated from kr->arena
 * (decoded strings and arrays included) lives as long.
 *
 * Threading: a request and its context belong to one thread at a time: the network worker of
 * its connection, which dispatches it; the metadata thread, for the APIs that write to
 * ZooKeeper (dispatch.c moves them there); an I/O thread while its append or read runs
 * there. Whoever holds it may answer it (the answer travels to the worker). Everything it
 * reads of the cluster and the partitions comes from its view (view.h), referenced until it is
 * answered, which is immutable and shared. */
#ifndef SF_KREQ_H
#define SF_KREQ_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "broker.h"
#include "cluster.h"
#include "err.h"
#include "iopool.h"
#include "mailbox.h"
#include "partition.h"
#include "proto.h"
#include "purgatory.h"
#include "server.h"
#include "topiccfg.h"
#include "view.h"

typedef struct sf_kreq sf_kreq_t;
typedef struct sf_kjob sf_kjob_t;

/* Work of a request on one partition, run on the I/O thread of the request's connection
 * (iopool.h), in order with the connection's other jobs (an append may run on the network
 * thread instead, see sf_kreq_append_submit). It may read the request and its view and write its
 * own result slots, but must not allocate from the arena (other jobs of the request run at
 * the same time). */
typedef void (*sf_kjob_fn)(sf_kjob_t *job);

struct sf_kjob {
    sf_mail_t mail;
    sf_kreq_t *kr;
    sf_partition_t *part; /* borrowed from the request's view; NULL for other work */
    sf_kjob_fn fn;
    void *arg;
    int append; /* timed: a slow append sends the next ones to the I/O threads */
};

struct sf_kreq {
    sf_req_t *req;               /* the server's request (owned until answered) */
    sf_broker_t *b;              /* borrowed */
    sf_view_t *view;             /* referenced until answered; NULL before the first one */
    sf_cluster_snapshot_t *snap; /* view->snap (NULL without a view) */
    int16_t api_key, version;
    int64_t start_us;            /* when it was dispatched (sf_clock_mono_us) */
    sf_arena_t *arena;           /* the request arena */
    const char *client_id;       /* NUL-terminated, in the arena ("" when null) */
    sf_topiccfg_ctx_t static_cfg; /* config defaults without a view (the configuration only) */
    sf_mail_t hop;               /* the move to the metadata thread (dispatch.c) */
    void *msg;                   /* the decoded request, while it moves */
    atomic_int jobs;             /* I/O jobs not yet run, plus one until sf_kreq_jobs_end */
    void (*jobs_done)(sf_kreq_t *kr, void *arg);
    void *jobs_arg;
};

/* A NUL-terminated copy of @s in the arena; NULL for a null slice or no memory. A NUL inside
 * @s becomes SF_KREQ_NUL_MARK (sf_kreq_nul_mark). */
char *sf_kreq_str(sf_kreq_t *kr, sf_slice_t s);

/* What a NUL inside a request's string becomes in its C copy: a C string cannot hold the NUL,
 * and cutting the name there would make "a\0b" name topic "a". DEL is a byte no topic name,
 * config name or config value accepts, so such a string is refused wherever it is checked. */
#define SF_KREQ_NUL_MARK '\x7f'

/* Replace each NUL in the first @len bytes of @s with SF_KREQ_NUL_MARK and terminate @s at
 * @len (@s has @len + 1 bytes). */
void sf_kreq_nul_mark(char *s, size_t len);
/* A slice holding a copy of the C string @s in the arena ({NULL, 0} on no memory). */
sf_slice_t sf_kreq_slice(sf_kreq_t *kr, const char *s);
/* A formatted message in the arena (NULL on no memory). */
const char *sf_kreq_printf(sf_kreq_t *kr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* @n zeroed elements of @size from the arena; never NULL for n == 0 (one spare element). */
void *sf_kreq_alloc(sf_kreq_t *kr, size_t n, size_t size);

/* Encode @resp (the response struct of the request's API) at the request's version and send
 * it; a response that cannot be encoded closes the connection after the ones before it. */
void sf_kreq_respond(sf_kreq_t *kr, const void *resp);
/* No response (Produce with acks=0). */
void sf_kreq_respond_none(sf_kreq_t *kr);
/* Close the connection after the responses before this request (a request that does not
 * decode, a version this broker does not serve, or no memory to answer). @why is logged. */
void sf_kreq_close(sf_kreq_t *kr, const char *why);

/* Park the request in the purgatory of the thread handling it (see purgatory.h): @attempt(@arg, final) is
 * called when a key is notified or after @timeout_ms. Returns the handle, or NULL on no memory
 * (the caller answers at once). */
sf_pwait_t *sf_kreq_park(sf_kreq_t *kr, const sf_pkey_t *keys, int nkeys, int64_t timeout_ms,
                         sf_pwait_attempt_fn attempt, void *arg);

/* Run @fn(@kr, @arg) on the network worker of the request's connection: now when called there,
 * else through its mailbox (@m, which must live until then, carries it). For a request that
 * parks after its I/O jobs ran elsewhere. */
void sf_kreq_home(sf_kreq_t *kr, sf_mail_t *m, void (*fn)(void *arg), void *arg);

/* Jobs on the I/O threads: sf_kreq_jobs_begin(@done, @arg), any number of
 * sf_kreq_job_submit, then sf_kreq_jobs_end. @done(kr, @arg) runs once every job ran, on the thread that ran the last
 * (or in sf_kreq_jobs_end), and answers the request. The jobs (e.g. in the arena) must live
 * until then. */
void sf_kreq_jobs_begin(sf_kreq_t *kr, void (*done)(sf_kreq_t *kr, void *arg), void *arg);
void sf_kreq_job_submit(sf_kreq_t *kr, sf_kjob_t *job, sf_partition_t *part, sf_kjob_fn fn,
                        void *arg);
/* The same for an append: it runs right here while appends are quick and nothing of the
 * connection's is queued on the I/O threads, else there (kreq.c says when). */
void sf_kreq_append_submit(sf_kreq_t *kr, sf_kjob_t *job, sf_partition_t *part, sf_kjob_fn fn,
                           void *arg);
void sf_kreq_jobs_end(sf_kreq_t *kr);

/* 1 once answers on the request's connection are dropped (the client went away). */
int sf_kreq_conn_closed(const sf_kreq_t *kr);
/* "127.0.0.1:5000" (the peer) and the listener name the client came in on. */
const char *sf_kreq_peer(const sf_kreq_t *kr);
const char *sf_kreq_listener(const sf_kreq_t *kr);

/* Move the request to the newest view of the thread handling it (a parked request looking
 * again, a request that moved to the metadata thread). */
void sf_kreq_refresh(sf_kreq_t *kr);

/* The topic config defaults in force for the request (the view's). */
const sf_topiccfg_ctx_t *sf_kreq_topiccfg(const sf_kreq_t *kr);

/* The topic and partition in the request's snapshot, or NULL. */
const sf_cluster_topic_t *sf_kreq_topic(const sf_kreq_t *kr, const char *name);
const sf_cluster_partition_t *sf_kreq_partition(const sf_kreq_t *kr, const char *topic,
                                                int32_t partition);
/* The topic with id @id in the request's snapshot, or NULL. */
const sf_cluster_topic_t *sf_kreq_topic_by_id(const sf_kreq_t *kr, const sf_uuid_t *id);

/* The partition this broker leads (borrowed from the view), or NULL with the client's error
 * in *@err (UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER). @topic may be NULL. */
sf_partition_t *sf_kreq_leader(sf_kreq_t *kr, const char *topic, int32_t partition,
                               sf_kerr_t *err);

#endif
