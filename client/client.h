/* The client core every libstreamflow handle is built on: configuration, the I/O thread,
 * broker connections, request routing and the metadata cache.
 *
 * Locking. A client has one mutex, cl->lock. The I/O thread runs the libevent loop and holds
 * the lock while it runs any client code (connection callbacks, timers, role hooks,
 * request callbacks). Application threads take the lock (sf_client_lock) to touch client or role
 * state, and call sf_client_wake to have the I/O thread run the roles' on_wake hooks. Only
 * the I/O thread touches sockets and libevent objects (other than through sf_client_wake).
 * Functions below marked "lock held" must be called with cl->lock held, from any thread;
 * "I/O thread" ones only from a hook or callback. */
#ifndef SF_CLIENT_H
#define SF_CLIENT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

#include "buf.h"
#include "streamflow.h"

struct event_base;

typedef struct sf_client sf_client_t;
typedef struct sf_clientconf sf_clientconf_t; /* parsed configuration (clientconf.h) */

/* Broker ids with a special meaning for sf_client_request. */
#define SF_CLIENT_ANY_BROKER (-1) /* any broker: a connected one, else a bootstrap server */
#define SF_CLIENT_CONTROLLER (-2) /* the controller from the last metadata */

/* The id of a second connection to broker @id, for a group coordinator. A JoinGroup waits at
 * the coordinator for the whole rebalance and a broker answers a connection's requests in
 * order, so on the broker's own connection it would hold back fetches and metadata (and their
 * timeouts would close the connection under it); Kafka's consumer keeps a separate connection
 * for the same reason, under the same id. Broker ids must stay below INT32_MAX / 2 (Kafka's
 * reserved.broker.max.id is 1000). */
#define SF_CLIENT_COORD_CONN(id) (INT32_MAX - (id))
/* The broker behind connection id @id (itself for ordinary ids). */
#define SF_CLIENT_BROKER_OF(id) ((id) > INT32_MAX / 2 ? INT32_MAX - (id) : (id))

/* Request flags. */
#define SF_CLIENT_NO_RESPONSE 0x1 /* the broker sends no response (Produce with acks=0): the
                                   * callback runs with err 0 and a NULL body once written */

/* Encode the request body for the negotiated @version into @wb. Returns SF_OK or an error
 * (the request then fails with it). Runs in the I/O thread, lock held. */
typedef int (*sf_client_encode_fn)(sf_wbuf_t *wb, int16_t version, void *arg);

/* A request's outcome: @err 0 with @body positioned after the response header, or
 * @err != 0 (SF_ERROR_TIMED_OUT, SF_ERROR_TRANSPORT, SF_ERROR_UNSUPPORTED, SF_ERROR_DESTROYED,
 * SF_ERROR_TLS, SF_ERROR_RESOLVE, ...) with @body NULL. @broker_id is the broker that was asked
 * (-1 for a bootstrap server whose id is not known yet). Called exactly once, in the I/O thread,
 * lock held. The body is valid during the call only. */
typedef void (*sf_client_response_fn)(sf_client_t *cl, int err, int32_t broker_id,
                                      int16_t version, sf_rbuf_t *body, void *arg);

/* What a role (producer, consumer, admin) plugs into the core. Every hook runs in the I/O
 * thread with the lock held; any may be NULL. */
typedef struct sf_client_role {
    void *self;
    /* Someone called sf_client_wake: look at queued work. */
    void (*on_wake)(sf_client_t *cl, void *self);
    /* The metadata cache changed (new leaders, new topics, errors). */
    void (*on_metadata)(sf_client_t *cl, void *self);
    /* The connection to @broker_id became usable (@up 1) or failed/closed (@up 0). */
    void (*on_broker)(sf_client_t *cl, void *self, int32_t broker_id, int up);
    /* The client is stopping: fail everything with SF_ERROR_DESTROYED. Requests still in
     * flight get their callbacks (SF_ERROR_DESTROYED) before this runs. */
    void (*on_stop)(sf_client_t *cl, void *self);
} sf_client_role_t;

/* Metadata cache (owned by the client; read with the lock held, valid until the lock is
 * released). */
typedef struct sf_client_partition {
    int32_t id;
    int32_t leader; /* -1 when none */
    int32_t leader_epoch;
    int16_t err;    /* Kafka error for this partition, 0 if none */
    int32_t *replicas;
    int32_t replica_count;
    int32_t *isr;
    int32_t isr_count;
} sf_client_partition_t;

typedef struct sf_client_topic {
    char *name;
    int16_t err; /* Kafka error for the topic (UNKNOWN_TOPIC_OR_PARTITION, ...), 0 if none */
    int internal;
    int32_t partition_count;
    sf_client_partition_t *partitions; /* indexed by partition id */
    unsigned seen; /* the metadata seq of the last response that listed it */
} sf_client_topic_t;

typedef struct sf_client_broker {
    int32_t id;
    char *host;
    int port;
    char *rack; /* NULL when unset */
} sf_client_broker_t;

/* Create a client from @conf (copied) and start its I/O thread. Returns NULL with a message
 * in @errstr for an unusable configuration. @roles (@nroles, copied) are registered before the
 * thread starts. */
sf_client_t *sf_client_new(const sf_conf_t *conf, const sf_client_role_t *roles, int nroles,
                           char *errstr, size_t errstr_size);

/* Stop the I/O thread: fail every queued and in-flight request with SF_ERROR_DESTROYED, call
 * every role's on_stop, close connections, join the thread, free everything. Lock NOT held.
 * Must not be called from the I/O thread. */
void sf_client_destroy(sf_client_t *cl);

/* The parsed configuration (read-only after creation; no lock needed). */
const sf_clientconf_t *sf_client_conf(const sf_client_t *cl);

void sf_client_lock(sf_client_t *cl);
void sf_client_unlock(sf_client_t *cl);

/* Wait on the client's condition variable (lock held) until signalled or @deadline_ms
 * (sf_clock_mono_ms time; -1: forever). Returns 0 when signalled, SF_ERROR_TIMED_OUT. */
int sf_client_wait(sf_client_t *cl, int64_t deadline_ms);

/* Wake every thread in sf_client_wait (lock held). */
void sf_client_signal(sf_client_t *cl);

/* Have the I/O thread run every role's on_wake soon (any thread, lock held or not). */
void sf_client_wake(sf_client_t *cl);

/* The client's event base, for a role's own timers (I/O thread only). */
struct event_base *sf_client_base(sf_client_t *cl);

/* Queue a request for @broker_id (a broker id, SF_CLIENT_ANY_BROKER or SF_CLIENT_CONTROLLER),
 * connecting if needed. The version is the highest both @max_version and the broker support
 * (learned with ApiVersions when the connection opens); @enc then encodes the body. @cb runs
 * exactly once with the outcome; @timeout_ms counts from now (-1: request.timeout.ms).
 * Requests to one broker are sent in the order they were queued. Lock held.
 * Returns SF_OK, or an error when it cannot even be queued (then @cb is not called). */
int sf_client_request(sf_client_t *cl, int32_t broker_id, int16_t api_key, int16_t max_version,
                      sf_client_encode_fn enc, sf_client_response_fn cb, void *arg,
                      int timeout_ms, int flags);

/* The number of requests queued or in flight to @broker_id (lock held). */
int sf_client_inflight(sf_client_t *cl, int32_t broker_id);

/* The version of @api_key both sides support on @broker_id's open connection, capped at
 * @max_version, or -1 when not connected yet or not supported (lock held). */
int16_t sf_client_api_version(sf_client_t *cl, int32_t broker_id, int16_t api_key,
                              int16_t max_version);

/* Synchronous call for application threads (lock NOT held): queue a request like
 * sf_client_request, then wait for it. @dec runs in the I/O thread with the response body
 * (and may copy what the caller needs into @arg); its return value becomes the call's result.
 * Returns SF_OK, @dec's error, or the request's error. */
typedef int (*sf_client_decode_fn)(sf_rbuf_t *body, int16_t version, void *arg);
int sf_client_call(sf_client_t *cl, int32_t broker_id, int16_t api_key, int16_t max_version,
                   sf_client_encode_fn enc, sf_client_decode_fn dec, void *arg, int timeout_ms);

/* --- metadata (lock held) --- */

/* The cached topic, or NULL when it is not known (yet). A known topic with err != 0 was
 * reported missing or failed by the broker. */
const sf_client_topic_t *sf_client_topic(sf_client_t *cl, const char *name);

/* The cached broker @id, or NULL. */
const sf_client_broker_t *sf_client_broker(sf_client_t *cl, int32_t id);

/* All cached brokers (sorted by id), the controller id (-1: unknown) and the cluster id (may
 * be NULL). */
const sf_client_broker_t *sf_client_brokers(sf_client_t *cl, int *count);
int32_t sf_client_controller(sf_client_t *cl);
const char *sf_client_cluster_id(sf_client_t *cl);

/* Add @name to the topics this client follows and refresh metadata soon if it is not cached.
 * Followed topics are refreshed every metadata.max.age.ms and after sf_client_metadata_stale.
 * Topics are not auto-created by these refreshes (AllowAutoTopicCreation false) unless
 * @autocreate. */
int sf_client_metadata_want(sf_client_t *cl, const char *name, int autocreate);

/* Every topic in the cache (sorted by name; @count receives how many). With
 * sf_client_metadata_all on, that is every topic of the cluster as of the last refresh. */
const sf_client_topic_t *const *sf_client_topics(sf_client_t *cl, int *count);

/* Ask every refresh for all the cluster's topics too (@on 1), e.g. for a pattern
 * subscription; topics the cluster no longer lists and nobody follows leave the cache. A
 * refresh is planned at once when turning it on. */
void sf_client_metadata_all(sf_client_t *cl, int on);

/* Something failed with a metadata error (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
 * a broker down): refresh soon (coalesced; at most once per retry.backoff.ms). */
void sf_client_metadata_stale(sf_client_t *cl);

/* Wait (app thread, lock held) until @name is in the cache or @deadline_ms passes; wants it
 * first. Returns SF_OK (the topic may still carry err != 0) or SF_ERROR_TIMED_OUT. */
int sf_client_metadata_wait(sf_client_t *cl, const char *name, int autocreate,
                            int64_t deadline_ms);

/* --- logging (any thread) --- */
void sf_client_log(sf_client_t *cl, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --- error mapping --- */

/* A Kafka wire error code as a library error (0 -> 0, any negative code ->
 * SF_ERROR_UNKNOWN_SERVER, positive codes unchanged). */
int sf_client_kerr(int16_t kerr);

#endif
