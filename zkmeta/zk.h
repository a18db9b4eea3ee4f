/* An asynchronous ZooKeeper session bridged into a libevent event loop.
 *
 * The ZooKeeper C client (zookeeper_mt) runs its own I/O and completion threads. Every
 * completion and watch event is copied on the completion thread, queued under a mutex and run
 * on the event loop thread through an event made active with event_active(): every callback of
 * this module runs on the loop thread, and nothing here blocks the loop on ZooKeeper
 * (sf_zk_free and session replacement call zookeeper_close, which returns quickly unless a
 * close-session request is being flushed). The event_base must have been created after
 * evthread_use_pthreads(). Between callbacks the module keeps no event pending on the base
 * (completions arrive through event_active), so a loop with nothing else to wait for must be
 * run with EVLOOP_NO_EXIT_ON_EMPTY.
 *
 * Chroot: the connect string may end in a chroot ("h1:2181,h2:2181/streamflow"). The session is
 * opened WITHOUT the chroot; after each new session is established the chroot path is created
 * recursively (asynchronously, existing nodes are fine) and only then is SF_ZK_CONNECTED
 * reported. Every path passed to or returned by this module is relative to the chroot ("/" is
 * the chroot itself); the module prefixes and strips the chroot itself.
 *
 * Callback guarantees ("exactly once"):
 *  - An operation that returns SF_OK calls its completion callback exactly once, later, on the
 *    loop thread (with an error when the session ends or the module is freed first). An
 *    operation that returns an error synchronously never calls its callback.
 *  - A watch callback is called exactly once: with the node event (SF_ZK_EV_CREATED, _DELETED,
 *    _CHANGED, _CHILD), or with SF_ZK_EV_DROPPED when the watch was not set (the read failed,
 *    or a get / get_children found no node) or was lost (the session expired or the module is
 *    being freed). For a watched read the DROPPED call comes before the read's completion.
 *    Watches survive a plain reconnect within the session (the client re-arms them).
 *  - During sf_zk_free, pending completions get SF_ERR_STATE (zrc ZCLOSING) and watches get
 *    SF_ZK_EV_DROPPED; such callbacks must only release their own state (new operations fail
 *    synchronously with SF_ERR_STATE then).
 */
#ifndef SF_ZK_H
#define SF_ZK_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

typedef struct sf_zk sf_zk_t;

/* Session states reported to the state callback. */
#define SF_ZK_CONNECTED 1    /* first connect or reconnect (chroot exists) */
#define SF_ZK_DISCONNECTED 2 /* connection lost; the session may still be alive */
#define SF_ZK_EXPIRED 3      /* session expired; a new session is being opened already */
#define SF_ZK_FAILED 4       /* no connection within the startup timeout; the module is dead */

/* Watch events. */
#define SF_ZK_EV_CREATED 1
#define SF_ZK_EV_DELETED 2
#define SF_ZK_EV_CHANGED 3
#define SF_ZK_EV_CHILD 4
#define SF_ZK_EV_DROPPED 5 /* the watch was not set or is gone; no event will follow */

/* Create flags (may be ORed). */
#define SF_ZK_PERSISTENT 0
#define SF_ZK_EPHEMERAL 1
#define SF_ZK_SEQUENTIAL 2
#define SF_ZK_CREATE_PARENTS 4 /* create missing ancestors (persistent, empty data) first */

/* The znode stat (ZooKeeper's struct Stat). */
typedef struct sf_zk_stat {
    int64_t czxid, mzxid, pzxid;
    int64_t ctime, mtime; /* ms since the epoch */
    int32_t version, cversion, aversion;
    int64_t ephemeral_owner; /* session id of the owner, 0 for persistent nodes */
    int32_t data_length, num_children;
} sf_zk_stat_t;

/* Callbacks. @err is SF_OK or an SF_ERR_* (see sf_zk_err), @zrc the raw ZooKeeper result (ZOK,
 * ZNONODE, ...). Every pointer argument is borrowed and valid only during the call. */
typedef void (*sf_zk_state_cb)(sf_zk_t *zk, int state, void *arg);
typedef void (*sf_zk_watch_cb)(sf_zk_t *zk, int event, const char *path, void *arg);
/* @data is NUL-terminated (one byte past @len) or NULL when the read failed; @len is 0 for a
 * node without data. */
typedef void (*sf_zk_data_cb)(int err, int zrc, const char *data, int len,
                              const sf_zk_stat_t *stat, void *arg);
/* @children: @n child names (not paths), in server order. */
typedef void (*sf_zk_children_cb)(int err, int zrc, char *const *children, int n,
                                  const sf_zk_stat_t *stat, void *arg);
/* exists / set: @stat is NULL unless err == SF_OK. */
typedef void (*sf_zk_stat_cb)(int err, int zrc, const sf_zk_stat_t *stat, void *arg);
/* create: @path is the created path (relative to the chroot; sequential nodes have their
 * suffix) and @stat the new node's stat, both NULL on error. */
typedef void (*sf_zk_create_cb)(int err, int zrc, const char *path, const sf_zk_stat_t *stat,
                                void *arg);
/* delete */
typedef void (*sf_zk_void_cb)(int err, int zrc, void *arg);

/* One operation of a multi-op. Pointers are borrowed; sf_zk_multi copies them. */
#define SF_ZK_OP_CREATE 1
#define SF_ZK_OP_DELETE 2
#define SF_ZK_OP_SET 3
#define SF_ZK_OP_CHECK 4
typedef struct sf_zk_op {
    int type;         /* SF_ZK_OP_* */
    const char *path; /* relative to the chroot */
    const char *data; /* create / set; NULL for no data */
    int datalen;
    int flags;   /* create: SF_ZK_EPHEMERAL | SF_ZK_SEQUENTIAL (no CREATE_PARENTS) */
    int version; /* delete / set / check: expected version, -1 for any */
} sf_zk_op_t;

/* The result of one operation of a multi-op. When the multi-op fails on the server, only the
 * failing op has err != SF_OK (the others have zrc ZOK, or ZRUNTIMEINCONSISTENCY: rolled back,
 * mapped to err SF_OK). When it fails before reaching the server (connection loss, closing),
 * every op carries the overall error. */
typedef struct sf_zk_op_result {
    int err, zrc;
    const char *path;          /* create: the created path, else NULL */
    const sf_zk_stat_t *stat;  /* set: the new stat, else NULL */
} sf_zk_op_result_t;

/* multi: @err/@zrc are the overall result (the first failing op's error). */
typedef void (*sf_zk_multi_cb)(int err, int zrc, const sf_zk_op_result_t *results, int n,
                               void *arg);

/* Small initialisers for sf_zk_op_t. */
static inline sf_zk_op_t sf_zk_op_create(const char *path, const char *data, int datalen,
                                         int flags) {
    sf_zk_op_t op = {SF_ZK_OP_CREATE, path, data, datalen, flags, -1};
    return op;
}
static inline sf_zk_op_t sf_zk_op_delete(const char *path, int version) {
    sf_zk_op_t op = {SF_ZK_OP_DELETE, path, NULL, 0, 0, version};
    return op;
}
static inline sf_zk_op_t sf_zk_op_set(const char *path, const char *data, int datalen,
                                      int version) {
    sf_zk_op_t op = {SF_ZK_OP_SET, path, data, datalen, 0, version};
    return op;
}
static inline sf_zk_op_t sf_zk_op_check(const char *path, int version) {
    sf_zk_op_t op = {SF_ZK_OP_CHECK, path, NULL, 0, 0, version};
    return op;
}

/* Create a session object (not connected yet).
 * @base: the loop (borrowed; must outlive the object).
 * @connect: "h:p,h:p" with an optional "/chroot" suffix (copied).
 * @session_timeout_ms: requested session timeout (the server may clamp it).
 * @state_cb, @arg: session state changes (loop thread). @state_cb may be NULL.
 * Returns NULL on a malformed connect string (errno EINVAL) or no memory. */
sf_zk_t *sf_zk_new(struct event_base *base, const char *connect, int session_timeout_ms,
                   sf_zk_state_cb state_cb, void *arg);

/* Open the session. If it is not established (and the chroot created) within @timeout_ms,
 * SF_ZK_FAILED is reported and the object stays dead until freed. Later connection losses and
 * expiries are retried forever. Returns SF_OK, SF_ERR_STATE (already started) or SF_ERR_IO. */
int sf_zk_start(sf_zk_t *zk, int timeout_ms);

/* Close the session (ephemeral nodes vanish at once) and free the object. Pending callbacks are
 * called as described above, before this returns. Must not be called from inside a callback
 * of this module. NULL is ignored. */
void sf_zk_free(sf_zk_t *zk);

/* The last reported state (0 before any), the current session id (0 when none), the
 * negotiated session timeout (the requested one before a connection), the connect string
 * without the chroot, and the chroot ("" for none). */
int sf_zk_state(const sf_zk_t *zk);
int64_t sf_zk_session_id(const sf_zk_t *zk);
int sf_zk_session_timeout(const sf_zk_t *zk);
const char *sf_zk_hosts(const sf_zk_t *zk);
const char *sf_zk_chroot(const sf_zk_t *zk);

/* Asynchronous operations. @path is relative to the chroot and copied. Each returns SF_OK (the
 * callback will be called), SF_ERR_INVALID (bad path or arguments), SF_ERR_TOOLARGE (the
 * request would exceed ZooKeeper's 1 MB jute.maxbuffer), SF_ERR_STATE (not started, failed, or
 * being freed) or SF_ERR_NOMEM. Requests issued while disconnected are queued by the client;
 * requests in flight when a connection drops fail with SF_ERR_IO / ZCONNECTIONLOSS (retry them
 * after the next SF_ZK_CONNECTED).
 * @watch (may be NULL) sets a one-shot watch; @watch_arg is passed to it. */
int sf_zk_get(sf_zk_t *zk, const char *path, sf_zk_watch_cb watch, void *watch_arg,
              sf_zk_data_cb cb, void *arg);
int sf_zk_get_children(sf_zk_t *zk, const char *path, sf_zk_watch_cb watch, void *watch_arg,
                       sf_zk_children_cb cb, void *arg);
/* exists: a watch is set whether or not the node exists (it fires on creation); err is
 * SF_ERR_NOTFOUND when it does not exist. */
int sf_zk_exists(sf_zk_t *zk, const char *path, sf_zk_watch_cb watch, void *watch_arg,
                 sf_zk_stat_cb cb, void *arg);
/* create: @flags are SF_ZK_* create flags; @data may be NULL (no data). With
 * SF_ZK_CREATE_PARENTS the missing ancestors are created first (pipelined on the session). */
int sf_zk_create(sf_zk_t *zk, const char *path, const char *data, int datalen, int flags,
                 sf_zk_create_cb cb, void *arg);
/* set: @version is the expected version or -1. A version mismatch is SF_ERR_STATE (ZBADVERSION). */
int sf_zk_set(sf_zk_t *zk, const char *path, const char *data, int datalen, int version,
              sf_zk_stat_cb cb, void *arg);
int sf_zk_delete(sf_zk_t *zk, const char *path, int version, sf_zk_void_cb cb, void *arg);
/* multi: all @ops (1..SF_ZK_MULTI_MAX, copied) succeed or none does. */
/* The largest request sent (ZooKeeper's jute.maxbuffer is 1 MB - 1, less a margin for the
 * request header): a larger one is refused with SF_ERR_TOOLARGE. */
#define SF_ZK_MAX_REQUEST (1000 * 1000)
#define SF_ZK_MULTI_MAX 100000
int sf_zk_multi(sf_zk_t *zk, const sf_zk_op_t *ops, int nops, sf_zk_multi_cb cb, void *arg);

/* Map a ZooKeeper result to SF_OK / SF_ERR_*: ZNONODE -> NOTFOUND, ZNODEEXISTS -> EXISTS,
 * ZBADVERSION and ZNOTEMPTY -> STATE, ZBADARGUMENTS -> INVALID, ZCLOSING -> STATE, anything
 * else (connection loss, timeouts, expiry, auth) -> IO. */
int sf_zk_err(int zrc);
/* The client's text for a ZooKeeper result code (never NULL). */
const char *sf_zk_strerror(int zrc);

/* Request latency, for metrics: @observe is called on the loop thread as each request
 * completes (user requests and the module's own), with its kind (SF_ZK_REQ_*), its ZooKeeper
 * result and the microseconds from issuing it to its completion reaching the loop. NULL
 * stops it. */
#define SF_ZK_REQ_GET 1
#define SF_ZK_REQ_CHILDREN 2
#define SF_ZK_REQ_EXISTS 3
#define SF_ZK_REQ_CREATE 4
#define SF_ZK_REQ_SET 5
#define SF_ZK_REQ_DELETE 6
#define SF_ZK_REQ_MULTI 7
#define SF_ZK_NREQ 8
typedef void (*sf_zk_observe_cb)(int req, int zrc, int64_t us, void *arg);
void sf_zk_set_observer(sf_zk_t *zk, sf_zk_observe_cb observe, void *arg);
/* The name of a request kind ("get", "get_children", ...; "other" when unknown). */
const char *sf_zk_req_name(int req);

/* For tests: make the server expire the current session by opening a second connection with
 * the same session credentials and closing it, again if the session survived that (our
 * handle can move it back by reconnecting first). Blocks the calling thread, usually for well
 * under a second. The module then sees SF_ZK_EXPIRED and opens a new session. Returns SF_OK, SF_ERR_STATE (not
 * connected) or SF_ERR_IO. */
int sf_zk_debug_expire_session(sf_zk_t *zk);

#endif
