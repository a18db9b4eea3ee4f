/* Limits shared by every network worker: the bytes of requests and responses queued across all
 * connections (queued.max.request.bytes, queued.max.response.bytes) and the number of client
 * connections (max.connections, max.connections.per.ip and its overrides).
 *
 * The byte totals are atomics that each connection moves by the difference between what it
 * holds now and what it last reported (one atomic add when that changed). A connection that
 * finds a total at its cap stops reading and its server waits (sf_netlimit_wait); whichever
 * thread brings the total back under the resume point posts the waiting servers' wake-ups to
 * their mailboxes, so paused connections on any worker resume on their own thread.
 *
 * Each limit is logged once when it is first hit and again only after it cleared, and counted
 * in sf_netlimit_stats.
 *
 * Threading: every function may be called from any thread, except sf_netlimit_new,
 * sf_netlimit_free (no connection or waiter left) and sf_netlimit_waiter_free (on its
 * mailbox's thread). */
#ifndef SF_NETLIMIT_H
#define SF_NETLIMIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "mailbox.h"

struct sockaddr;
struct sf_brokercfg;

typedef struct sf_netlimit sf_netlimit_t;

/* The byte totals. */
typedef enum sf_netlimit_kind {
    /* Frames still arriving: buffers of partial requests and unparsed input. At half of
     * queued.max.request.bytes, connections stop growing a partial frame. */
    SF_NETLIMIT_PARTIAL,
    /* Whole requests read and not answered yet. At the other half, no more are read. */
    SF_NETLIMIT_HELD,
    /* Responses queued and not written yet. At queued.max.response.bytes, connections with a
     * response queued or a request in flight stop reading. */
    SF_NETLIMIT_OUTPUT,
    SF_NETLIMIT_NKINDS
} sf_netlimit_kind_t;

/* What the limits saw, for metrics: current totals and how often each limit was hit. */
typedef struct sf_netlimit_stats {
    int64_t bytes[SF_NETLIMIT_NKINDS]; /* current totals */
    int64_t paused[SF_NETLIMIT_NKINDS]; /* times a connection stopped reading at that cap */
    int64_t connections;               /* open client connections */
    int64_t refused_max_connections;   /* closed at accept by max.connections */
    int64_t refused_per_ip;            /* closed at accept by max.connections.per.ip */
} sf_netlimit_stats_t;

/* A server waiting for totals to fall (one per network worker). */
typedef struct sf_netlimit_waiter sf_netlimit_waiter_t;

/* The limits of @cfg (borrowed during the call). Host names in
 * max.connections.per.ip.overrides are resolved here. Returns SF_OK with *out, or
 * SF_ERR_NOMEM / SF_ERR_INVALID with a sentence in @errstr. */
int sf_netlimit_new(const struct sf_brokercfg *cfg, sf_netlimit_t **out, char *errstr,
                    size_t errstr_size);

/* Free (NULL ok). Every waiter must be freed and every connection closed first. */
void sf_netlimit_free(sf_netlimit_t *nl);

/* Move total @kind by @delta bytes (negative: released). A release that brings the total
 * under its resume point (three quarters of the cap) wakes the servers waiting for it. */
void sf_netlimit_add(sf_netlimit_t *nl, sf_netlimit_kind_t kind, int64_t delta);

/* 1 if total @kind, less the @own bytes the caller already holds in it, is at the cap
 * (@resume 0: the caller is reading) or above the resume point (@resume 1: the caller is
 * paused and asks whether to go on). The first time a cap is hit it is logged, and once more
 * after the total fell under the resume point. @nl NULL: 0. */
int sf_netlimit_over(sf_netlimit_t *nl, sf_netlimit_kind_t kind, int64_t own, int resume);

/* Count the pause of one connection at cap @kind (statistics only). */
void sf_netlimit_paused(sf_netlimit_t *nl, sf_netlimit_kind_t kind);

/* A waiter that runs @fn(@arg) on @mb's loop after a wake-up. Returns NULL on no memory. */
sf_netlimit_waiter_t *sf_netlimit_waiter_new(sf_netlimit_t *nl, sf_mailbox_t *mb,
                                             sf_mailbox_fn fn, void *arg);

/* Wake @w once total @kind is under its resume point (at once if it already is). Each call
 * asks for one wake-up. */
void sf_netlimit_wait(sf_netlimit_t *nl, sf_netlimit_waiter_t *w, sf_netlimit_kind_t kind);

/* Unregister and free @w (NULL ok); a wake-up already posted runs nothing. On @w's mailbox
 * thread. */
void sf_netlimit_waiter_free(sf_netlimit_t *nl, sf_netlimit_waiter_t *w);

/* A connection from @sa is being accepted: SF_OK and it is counted, or SF_ERR_TOOLARGE when
 * max.connections or the peer address's limit is reached (logged once, counted). @peer names
 * the connection in the log. */
int sf_netlimit_conn_open(sf_netlimit_t *nl, const struct sockaddr *sa, const char *peer);

/* A connection counted by sf_netlimit_conn_open is closed. */
void sf_netlimit_conn_close(sf_netlimit_t *nl, const struct sockaddr *sa);

/* The limit for peers at @sa (max.connections.per.ip or its override). */
int32_t sf_netlimit_per_ip(const sf_netlimit_t *nl, const struct sockaddr *sa);

/* Copy the current figures into @out. */
void sf_netlimit_stats(const sf_netlimit_t *nl, sf_netlimit_stats_t *out);

#endif
