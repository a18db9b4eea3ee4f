/* An asynchronous ZooKeeper session bridged into libevent (see zk.h).
 *
 * Threads: the ZooKeeper client's completion thread runs our completion and watcher functions.
 * They only fill in the request or watch record they were given and push it on a queue under
 * zk->mu; pushing onto an empty queue activates zk->qev, whose callback runs on the loop thread
 * and dispatches queued records one by one. Every other field of sf_zk_t is touched by the loop
 * thread only.
 *
 * Lifetimes: requests (struct zk_req) and watches (struct zk_watch) are kept on lists owned by
 * the loop thread and tagged with the generation of the ZooKeeper handle they were issued on.
 * When a handle is closed (session expiry, startup failure, sf_zk_free), zookeeper_close joins
 * the client's threads, the records of that generation still on the queue are dispatched, and
 * whatever is left on the lists is completed with an error / dropped. This is what makes every
 * callback run exactly once. */
#include "zk.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "clock.h"
#include "err.h"
#include "logging.h"

/* ZooKeeper's default jute.maxbuffer is 1 MB - 1; a larger request makes the server drop the
 * connection. Keep a margin for the request header and the per-op framing we do not count. */
#define ZK_MAX_REQUEST SF_ZK_MAX_REQUEST
/* Serialized size of one multi-op entry besides its path and data: header (type, done, err),
 * two lengths, the open ACL ("world"/"anyone", perms) and the create flags. */
#define ZK_OP_OVERHEAD 64
/* Records dispatched per activation of the queue event before yielding to other events. */
#define ZK_DISPATCH_BATCH 256

enum { Q_STATE = 1, Q_REQ, Q_WATCH };

struct zk_qent {
    struct zk_qent *next;
    int kind;
    uint64_t gen;
};

struct zk_statemsg {
    struct zk_qent q;
    int state;
};

/* Context of the global watcher of one handle. */
struct zk_conn {
    sf_zk_t *zk;
    uint64_t gen;
};

enum { W_PENDING = 1, W_ACTIVE, W_FIRED };

struct zk_watch {
    struct zk_qent q;
    struct zk_watch *prev, *next;
    sf_zk_t *zk;
    int wstate;
    int event;  /* SF_ZK_EV_*, written by the completion thread before the push */
    char *path; /* relative to the chroot */
    sf_zk_watch_cb cb;
    void *arg;
};

enum {
    OP_GET = SF_ZK_REQ_GET,
    OP_CHILDREN = SF_ZK_REQ_CHILDREN,
    OP_EXISTS = SF_ZK_REQ_EXISTS,
    OP_CREATE = SF_ZK_REQ_CREATE,
    OP_SET = SF_ZK_REQ_SET,
    OP_DELETE = SF_ZK_REQ_DELETE,
    OP_MULTI = SF_ZK_REQ_MULTI
};
enum { R_USER = 0, R_PARENT, R_CHROOT, R_CHROOT_LAST };

struct zk_req {
    struct zk_qent q;
    struct zk_req *prev, *next;
    sf_zk_t *zk;
    int op;
    int internal; /* R_* */
    int64_t issued_us;
    union zk_cb {
        sf_zk_data_cb data;
        sf_zk_children_cb children;
        sf_zk_stat_cb stat;
        sf_zk_create_cb create;
        sf_zk_void_cb vd;
        sf_zk_multi_cb multi;
    } cb;
    void *arg;
    struct zk_watch *w;
    /* Results, written by the completion thread before the push. @rc may turn into
     * ZSYSTEMERROR when copying a result fails; @wire_rc is what the client reported, and
     * decides whether the client armed the watch. */
    int rc, wire_rc;
    int has_stat;
    struct Stat stat;
    char *data;
    int datalen;
    char **children;
    int nchildren;
    char *path;
    /* Multi-op: everything the client reads until the completion. */
    int nops;
    zoo_op_t *ops;
    zoo_op_result_t *results;
    struct Stat *stats;
    char *strings; /* copies of paths and data, and the created-path buffers */
};

struct sf_zk {
    struct event_base *base;
    char *hosts;
    char *chroot; /* "" or "/a/b" */
    size_t chroot_len;
    int session_timeout_ms;
    sf_zk_state_cb state_cb;
    void *arg;
    sf_zk_observe_cb observe;
    void *observe_arg;

    zhandle_t *zh;
    struct zk_conn *conn;
    uint64_t gen;
    int state;   /* last reported SF_ZK_* (0 = none) */
    int started, dead, closing, ever_connected;
    int chroot_ready, chroot_busy;
    int64_t session_id;
    int negotiated_timeout;

    struct event *qev;
    struct event *start_timer;
    pthread_mutex_t mu;
    struct zk_qent *qhead, *qtail;

    struct zk_req *reqs;      /* in flight */
    struct zk_watch *watches; /* pending or active */
};

/* ---- utilities ---- */

int sf_zk_err(int zrc) {
    switch (zrc) {
    case ZOK: return SF_OK;
    case ZNONODE: return SF_ERR_NOTFOUND;
    case ZNODEEXISTS: return SF_ERR_EXISTS;
    case ZBADVERSION:
    case ZNOTEMPTY:
    case ZCLOSING:
    case ZNOCHILDRENFOREPHEMERALS: return SF_ERR_STATE;
    case ZBADARGUMENTS: return SF_ERR_INVALID;
    case ZSYSTEMERROR: return errno == ENOMEM ? SF_ERR_NOMEM : SF_ERR_IO;
    default: return SF_ERR_IO;
    }
}

const char *sf_zk_strerror(int zrc) {
    const char *s = zerror(zrc);
    return s ? s : "unknown ZooKeeper error";
}

static void stat_copy(sf_zk_stat_t *out, const struct Stat *st) {
    out->czxid = st->czxid;
    out->mzxid = st->mzxid;
    out->pzxid = st->pzxid;
    out->ctime = st->ctime;
    out->mtime = st->mtime;
    out->version = st->version;
    out->cversion = st->cversion;
    out->aversion = st->aversion;
    out->ephemeral_owner = st->ephemeralOwner;
    out->data_length = st->dataLength;
    out->num_children = st->numChildren;
}

static int path_ok(const char *path) {
    size_t n;
    if (!path || path[0] != '/')
        return 0;
    n = strlen(path);
    if (n > 1 && path[n - 1] == '/')
        return 0;
    if (strstr(path, "//"))
        return 0;
    return 1;
}

/* Write chroot + path ("/" names the chroot itself) to @dst, which has room for
 * chroot_len + strlen(path) + 1 bytes. */
static void full_path_copy(const sf_zk_t *zk, const char *path, char *dst) {
    memcpy(dst, zk->chroot, zk->chroot_len);
    if (zk->chroot_len && !strcmp(path, "/"))
        dst[zk->chroot_len] = '\0';
    else
        memcpy(dst + zk->chroot_len, path, strlen(path) + 1);
}

/* chroot + path, malloc'd; NULL on no memory. */
static char *full_path(const sf_zk_t *zk, const char *path) {
    char *p = malloc(zk->chroot_len + strlen(path) + 1);
    if (p)
        full_path_copy(zk, path, p);
    return p;
}

/* The chroot-relative form of a server path (points into @full). */
static const char *strip_chroot(const sf_zk_t *zk, const char *full) {
    if (!zk->chroot_len || !full)
        return full;
    if (!strncmp(full, zk->chroot, zk->chroot_len)) {
        if (full[zk->chroot_len] == '\0')
            return "/";
        if (full[zk->chroot_len] == '/')
            return full + zk->chroot_len;
    }
    return full;
}

static int zk_mode(int flags) {
    int eph = flags & SF_ZK_EPHEMERAL, seq = flags & SF_ZK_SEQUENTIAL;
    if (eph && seq)
        return ZOO_EPHEMERAL_SEQUENTIAL;
    if (eph)
        return ZOO_EPHEMERAL;
    if (seq)
        return ZOO_PERSISTENT_SEQUENTIAL;
    return ZOO_PERSISTENT;
}

/* The client logs every failed connection attempt (several per second while a server is
 * down). Forward its warnings and errors at INFO at most once per ZK_CLIENT_LOG_INTERVAL_MS
 * and the rest at DEBUG; this module logs the state changes that matter itself. Called from
 * the client's threads. */
#define ZK_CLIENT_LOG_INTERVAL_MS 10000
static _Atomic int64_t zk_client_log_last;

static void zk_log_cb(const char *message) {
    char line[1024];
    const char *m;
    size_t n;
    int level = SF_LOG_DEBUG;
    if (!message)
        return;
    if (strstr(message, "ZOO_ERROR") || strstr(message, "ZOO_WARN")) {
        int64_t now = sf_clock_mono_ms(), last = atomic_load(&zk_client_log_last);
        if (now - last >= ZK_CLIENT_LOG_INTERVAL_MS &&
            atomic_compare_exchange_strong(&zk_client_log_last, &last, now))
            level = SF_LOG_INFO;
    }
    if (level > sf_log_level)
        return;
    /* drop the client's own timestamp and thread prefix */
    m = strstr(message, "ZOO_");
    if (!m)
        m = message;
    n = strlen(m);
    if (n >= sizeof(line))
        n = sizeof(line) - 1;
    memcpy(line, m, n);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    line[n] = '\0';
    sf_log(level, "ZKCLIENT", "%s", line);
}

/* ---- the queue between the client's threads and the loop thread ---- */

static void q_push(sf_zk_t *zk, struct zk_qent *e) {
    int wake;
    e->next = NULL;
    pthread_mutex_lock(&zk->mu);
    wake = zk->qhead == NULL;
    if (zk->qtail)
        zk->qtail->next = e;
    else
        zk->qhead = e;
    zk->qtail = e;
    pthread_mutex_unlock(&zk->mu);
    if (wake)
        event_active(zk->qev, EV_READ, 0);
}

static struct zk_qent *q_pop(sf_zk_t *zk) {
    struct zk_qent *e;
    pthread_mutex_lock(&zk->mu);
    e = zk->qhead;
    if (e) {
        zk->qhead = e->next;
        if (!zk->qhead)
            zk->qtail = NULL;
    }
    pthread_mutex_unlock(&zk->mu);
    return e;
}

/* Unlink the queued records of generation @gen, in order. */
static struct zk_qent *q_take_gen(sf_zk_t *zk, uint64_t gen) {
    struct zk_qent *e, *prev = NULL, *next, *head = NULL, *tail = NULL;
    pthread_mutex_lock(&zk->mu);
    for (e = zk->qhead; e; e = next) {
        next = e->next;
        if (e->gen != gen) {
            prev = e;
            continue;
        }
        if (prev)
            prev->next = next;
        else
            zk->qhead = next;
        if (zk->qtail == e)
            zk->qtail = prev;
        e->next = NULL;
        if (tail)
            tail->next = e;
        else
            head = e;
        tail = e;
    }
    pthread_mutex_unlock(&zk->mu);
    return head;
}

/* ---- requests and watches ---- */

static void req_link(sf_zk_t *zk, struct zk_req *r) {
    r->prev = NULL;
    r->next = zk->reqs;
    if (zk->reqs)
        zk->reqs->prev = r;
    zk->reqs = r;
}

static void req_unlink(sf_zk_t *zk, struct zk_req *r) {
    if (r->prev)
        r->prev->next = r->next;
    else
        zk->reqs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

static void watch_link(sf_zk_t *zk, struct zk_watch *w) {
    w->prev = NULL;
    w->next = zk->watches;
    if (zk->watches)
        zk->watches->prev = w;
    zk->watches = w;
}

static void watch_unlink(sf_zk_t *zk, struct zk_watch *w) {
    if (w->prev)
        w->prev->next = w->next;
    else
        zk->watches = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
}

static void req_free(struct zk_req *r) {
    int i;
    if (!r)
        return;
    free(r->data);
    if (r->children) {
        for (i = 0; i < r->nchildren; i++)
            free(r->children[i]);
        free(r->children);
    }
    free(r->path);
    free(r->ops);
    free(r->results);
    free(r->stats);
    free(r->strings);
    free(r);
}

static struct zk_req *req_new(sf_zk_t *zk, int op, void *arg) {
    struct zk_req *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->q.kind = Q_REQ;
    r->q.gen = zk->gen;
    r->zk = zk;
    r->op = op;
    r->arg = arg;
    r->rc = r->wire_rc = ZSYSTEMERROR;
    r->issued_us = sf_clock_mono_us();
    return r;
}

static struct zk_watch *watch_new(sf_zk_t *zk, const char *path, sf_zk_watch_cb cb, void *arg) {
    struct zk_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->path = strdup(path);
    if (!w->path) {
        free(w);
        return NULL;
    }
    w->q.kind = Q_WATCH;
    w->q.gen = zk->gen;
    w->zk = zk;
    w->wstate = W_PENDING;
    w->cb = cb;
    w->arg = arg;
    return w;
}

static void watch_deliver(sf_zk_t *zk, struct zk_watch *w, int event) {
    watch_unlink(zk, w);
    if (w->cb)
        w->cb(zk, event, w->path, w->arg);
    free(w->path);
    free(w);
}

/* Completion-thread side: watcher and completion functions. */

static void watch_fn(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    struct zk_watch *w = ctx;
    (void)zh;
    (void)state;
    (void)path;
    /* Session events are delivered to every watcher object; only the global watcher acts on
     * them. The record is not touched for them. */
    if (type == ZOO_SESSION_EVENT || !w)
        return;
    if (type == ZOO_CREATED_EVENT)
        w->event = SF_ZK_EV_CREATED;
    else if (type == ZOO_DELETED_EVENT)
        w->event = SF_ZK_EV_DELETED;
    else if (type == ZOO_CHANGED_EVENT)
        w->event = SF_ZK_EV_CHANGED;
    else if (type == ZOO_CHILD_EVENT)
        w->event = SF_ZK_EV_CHILD;
    else
        w->event = SF_ZK_EV_DROPPED;
    q_push(w->zk, &w->q);
}

static void global_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    struct zk_conn *conn = ctx;
    struct zk_statemsg *m;
    (void)zh;
    (void)path;
    if (type != ZOO_SESSION_EVENT || !conn)
        return;
    m = calloc(1, sizeof(*m));
    if (!m) {
        sf_log(SF_LOG_ERR, "ZK", "out of memory queueing a session event (state %d)", state);
        return;
    }
    m->q.kind = Q_STATE;
    m->q.gen = conn->gen;
    m->state = state;
    q_push(conn->zk, &m->q);
}

static void c_data(int rc, const char *value, int value_len, const struct Stat *stat,
                   const void *data) {
    struct zk_req *r = (struct zk_req *)data;
    r->rc = rc;
    r->wire_rc = rc;
    if (rc == ZOK) {
        int n = value && value_len > 0 ? value_len : 0;
        r->data = malloc((size_t)n + 1);
        if (!r->data) {
            r->rc = ZSYSTEMERROR;
        } else {
            if (n)
                memcpy(r->data, value, (size_t)n);
            r->data[n] = '\0';
            r->datalen = n;
        }
        if (stat) {
            r->stat = *stat;
            r->has_stat = 1;
        }
    }
    q_push(r->zk, &r->q);
}

static void c_children(int rc, const struct String_vector *strings, const struct Stat *stat,
                       const void *data) {
    struct zk_req *r = (struct zk_req *)data;
    r->rc = rc;
    r->wire_rc = rc;
    if (rc == ZOK) {
        int i, n = strings ? strings->count : 0;
        if (n > 0) {
            r->children = calloc((size_t)n, sizeof(char *));
            if (!r->children)
                r->rc = ZSYSTEMERROR;
            for (i = 0; r->children && i < n; i++) {
                r->children[i] = strdup(strings->data[i] ? strings->data[i] : "");
                if (!r->children[i]) {
                    r->rc = ZSYSTEMERROR;
                    break;
                }
                r->nchildren = i + 1;
            }
        }
        if (stat) {
            r->stat = *stat;
            r->has_stat = 1;
        }
    }
    q_push(r->zk, &r->q);
}

static void c_stat(int rc, const struct Stat *stat, const void *data) {
    struct zk_req *r = (struct zk_req *)data;
    r->rc = rc;
    r->wire_rc = rc;
    if (rc == ZOK && stat) {
        r->stat = *stat;
        r->has_stat = 1;
    }
    q_push(r->zk, &r->q);
}

static void c_create(int rc, const char *value, const struct Stat *stat, const void *data) {
    struct zk_req *r = (struct zk_req *)data;
    r->rc = rc;
    r->wire_rc = rc;
    if (rc == ZOK) {
        if (value) {
            r->path = strdup(value);
            if (!r->path)
                r->rc = ZSYSTEMERROR;
        }
        if (stat) {
            r->stat = *stat;
            r->has_stat = 1;
        }
    }
    q_push(r->zk, &r->q);
}

static void c_void(int rc, const void *data) {
    struct zk_req *r = (struct zk_req *)data;
    r->rc = rc;
    r->wire_rc = rc;
    q_push(r->zk, &r->q);
}

/* ---- loop-thread dispatch ---- */

static void report(sf_zk_t *zk, int state);
static void handle_state(sf_zk_t *zk, int zstate);
static void chroot_done(sf_zk_t *zk, struct zk_req *r);

static void req_finish(sf_zk_t *zk, struct zk_req *r) {
    int err = sf_zk_err(r->rc);
    sf_zk_stat_t st;
    const sf_zk_stat_t *stp = NULL;

    req_unlink(zk, r);
    if (zk->observe)
        zk->observe(r->op, r->rc, sf_clock_mono_us() - r->issued_us, zk->observe_arg);
    if (r->has_stat && r->rc == ZOK) {
        stat_copy(&st, &r->stat);
        stp = &st;
    }
    if (r->w) {
        struct zk_watch *w = r->w;
        int activated = r->wire_rc == ZOK || (r->op == OP_EXISTS && r->wire_rc == ZNONODE);
        r->w = NULL;
        if (w->wstate == W_FIRED)
            watch_deliver(zk, w, w->event);
        else if (activated)
            w->wstate = W_ACTIVE;
        else
            watch_deliver(zk, w, SF_ZK_EV_DROPPED);
    }
    if (r->internal == R_PARENT || r->internal == R_CHROOT) {
        req_free(r);
        return;
    }
    if (r->internal == R_CHROOT_LAST) {
        chroot_done(zk, r);
        req_free(r);
        return;
    }
    switch (r->op) {
    case OP_GET:
        if (r->cb.data)
            r->cb.data(err, r->rc, r->rc == ZOK ? r->data : NULL, r->rc == ZOK ? r->datalen : 0,
                       stp, r->arg);
        break;
    case OP_CHILDREN:
        if (r->cb.children)
            r->cb.children(err, r->rc, r->rc == ZOK ? r->children : NULL,
                           r->rc == ZOK ? r->nchildren : 0, stp, r->arg);
        break;
    case OP_EXISTS:
    case OP_SET:
        if (r->cb.stat)
            r->cb.stat(err, r->rc, stp, r->arg);
        break;
    case OP_CREATE:
        if (r->cb.create)
            r->cb.create(err, r->rc, r->rc == ZOK ? strip_chroot(zk, r->path) : NULL, stp,
                         r->arg);
        break;
    case OP_DELETE:
        if (r->cb.vd)
            r->cb.vd(err, r->rc, r->arg);
        break;
    case OP_MULTI: {
        sf_zk_op_result_t *res = calloc((size_t)r->nops, sizeof(*res));
        sf_zk_stat_t *sts = calloc((size_t)r->nops, sizeof(*sts));
        int i, any = 0;
        if (!res || !sts) {
            free(res);
            free(sts);
            if (r->cb.multi)
                r->cb.multi(SF_ERR_NOMEM, ZSYSTEMERROR, NULL, 0, r->arg);
            break;
        }
        for (i = 0; i < r->nops; i++)
            if (r->results[i].err != ZOK)
                any = 1;
        for (i = 0; i < r->nops; i++) {
            int zrc = r->results[i].err;
            /* A multi-op failed before the server answered (connection loss, closing): the
             * per-op results were never filled in. */
            if (r->rc != ZOK && !any)
                zrc = r->rc;
            res[i].zrc = zrc;
            res[i].err = zrc == ZRUNTIMEINCONSISTENCY ? SF_OK : sf_zk_err(zrc);
            if (r->rc == ZOK && r->ops[i].type == ZOO_CREATE_OP)
                res[i].path = strip_chroot(zk, r->ops[i].create_op.buf);
            if (r->rc == ZOK && r->ops[i].type == ZOO_SETDATA_OP) {
                stat_copy(&sts[i], &r->stats[i]);
                res[i].stat = &sts[i];
            }
        }
        if (r->cb.multi)
            r->cb.multi(err, r->rc, res, r->nops, r->arg);
        free(res);
        free(sts);
        break;
    }
    default:
        break;
    }
    req_free(r);
}

static void dispatch(sf_zk_t *zk, struct zk_qent *e) {
    if (e->kind == Q_STATE) {
        struct zk_statemsg *m = (struct zk_statemsg *)e;
        int st = m->state;
        uint64_t gen = m->q.gen;
        free(m);
        if (gen == zk->gen && zk->zh && !zk->dead && !zk->closing)
            handle_state(zk, st);
    } else if (e->kind == Q_REQ) {
        req_finish(zk, (struct zk_req *)e);
    } else if (e->kind == Q_WATCH) {
        struct zk_watch *w = (struct zk_watch *)e;
        if (w->wstate == W_PENDING)
            w->wstate = W_FIRED; /* delivered when its request completes */
        else
            watch_deliver(zk, w, w->event);
    }
}

static void qev_cb(evutil_socket_t fd, short what, void *arg) {
    sf_zk_t *zk = arg;
    struct zk_qent *e;
    int n = 0;
    (void)fd;
    (void)what;
    while (n < ZK_DISPATCH_BATCH && (e = q_pop(zk))) {
        dispatch(zk, e);
        n++;
    }
    if (n == ZK_DISPATCH_BATCH) {
        pthread_mutex_lock(&zk->mu);
        if (zk->qhead)
            event_active(zk->qev, EV_READ, 0);
        pthread_mutex_unlock(&zk->mu);
    }
}

/* ---- handles ---- */

static int handle_open(sf_zk_t *zk) {
    struct zk_conn *conn = calloc(1, sizeof(*conn));
    if (!conn)
        return SF_ERR_NOMEM;
    conn->zk = zk;
    conn->gen = zk->gen;
    zk->conn = conn;
    zk->chroot_ready = 0;
    zk->chroot_busy = 0;
    zk->session_id = 0;
    zk->zh = zookeeper_init2(zk->hosts, global_watcher, zk->session_timeout_ms, NULL, conn,
                             ZOO_NO_LOG_CLIENTENV, zk_log_cb);
    if (!zk->zh) {
        sf_log(SF_LOG_ERR, "ZK", "cannot create a ZooKeeper handle for %s: %s", zk->hosts,
               strerror(errno));
        zk->conn = NULL;
        free(conn);
        return SF_ERR_IO;
    }
    return SF_OK;
}

/* Close a handle and complete everything issued on it: queued records first (in order), then
 * requests the client never completed (@zrc), then active watches (DROPPED). zk->zh no longer
 * names it (it is NULL, or already the next handle), so requests issued from the callbacks run
 * here go to the next handle or fail synchronously. */
static void handle_close(sf_zk_t *zk, zhandle_t *zh, struct zk_conn *conn, uint64_t gen, int zrc) {
    struct zk_qent *e, *next;
    struct zk_req *r, *rnext;
    struct zk_watch *w, *wnext;

    zookeeper_close(zh);
    free(conn);

    for (e = q_take_gen(zk, gen); e; e = next) {
        next = e->next;
        if (e->kind == Q_STATE)
            free(e);
        else
            dispatch(zk, e);
    }
    for (r = zk->reqs; r; r = rnext) {
        rnext = r->next;
        if (r->q.gen != gen)
            continue;
        /* Never completed by the client, whose threads are gone: nothing it armed for this
         * request can fire any more, so its watch is dropped. */
        r->rc = r->wire_rc = zrc;
        r->has_stat = 0;
        req_finish(zk, r);
        /* Callbacks may have issued or completed other requests: rescan from the head. */
        rnext = zk->reqs;
    }
    for (w = zk->watches; w; w = wnext) {
        wnext = w->next;
        if (w->q.gen != gen)
            continue;
        watch_deliver(zk, w, SF_ZK_EV_DROPPED);
        wnext = zk->watches;
    }
}

/* Detach the current handle and close it (no new one). */
static void handle_close_current(sf_zk_t *zk, int zrc) {
    zhandle_t *zh = zk->zh;
    struct zk_conn *conn = zk->conn;
    uint64_t gen = zk->gen;
    if (!zh)
        return;
    zk->zh = NULL;
    zk->conn = NULL;
    zk->session_id = 0;
    zk->chroot_ready = 0;
    zk->chroot_busy = 0;
    zk->gen++;
    handle_close(zk, zh, conn, gen, zrc);
}

static void report(sf_zk_t *zk, int state) {
    if (state == zk->state && state != SF_ZK_CONNECTED)
        return;
    zk->state = state;
    if (zk->state_cb)
        zk->state_cb(zk, state, zk->arg);
}

static void connected_ready(sf_zk_t *zk) {
    if (!zk->ever_connected) {
        zk->ever_connected = 1;
        if (zk->start_timer)
            evtimer_del(zk->start_timer);
    }
    sf_log(SF_LOG_INFO, "ZK", "connected to ZooKeeper %s%s, session 0x%llx, timeout %d ms",
           zk->hosts, zk->chroot, (unsigned long long)zk->session_id, zk->negotiated_timeout);
    report(zk, SF_ZK_CONNECTED);
}

static int issue_create(sf_zk_t *zk, const char *full, const char *data, int datalen, int flags,
                        int internal, sf_zk_create_cb cb, void *arg);

/* Create the chroot and its ancestors, pipelined; the last completion decides. */
static void chroot_create(sf_zk_t *zk) {
    size_t i;
    char buf[1024];
    if (zk->chroot_busy)
        return;
    if (zk->chroot_len >= sizeof(buf)) {
        sf_log(SF_LOG_ERR, "ZK", "chroot path too long");
        return;
    }
    zk->chroot_busy = 1;
    for (i = 1; i <= zk->chroot_len; i++) {
        if (i < zk->chroot_len && zk->chroot[i] != '/')
            continue;
        memcpy(buf, zk->chroot, i);
        buf[i] = '\0';
        if (issue_create(zk, buf, NULL, -1, SF_ZK_PERSISTENT,
                         i == zk->chroot_len ? R_CHROOT_LAST : R_CHROOT, NULL, NULL) != SF_OK) {
            zk->chroot_busy = 0;
            sf_log(SF_LOG_WARNING, "ZK", "cannot create the chroot %s", zk->chroot);
            return;
        }
    }
}

static void chroot_done(sf_zk_t *zk, struct zk_req *r) {
    if (r->q.gen != zk->gen || !zk->zh)
        return;
    zk->chroot_busy = 0;
    if (r->rc == ZOK || r->rc == ZNODEEXISTS) {
        zk->chroot_ready = 1;
        if (zoo_state(zk->zh) == ZOO_CONNECTED_STATE)
            connected_ready(zk);
        return;
    }
    sf_log(SF_LOG_WARNING, "ZK", "cannot create the chroot %s: %s", zk->chroot,
           sf_zk_strerror(r->rc));
    /* Retried on the next (re)connection. */
}

/* The session expired: open a new handle first, so that requests issued by the callbacks that
 * complete the old one's work go to the new session, then close the old handle. */
static void session_replace(sf_zk_t *zk) {
    zhandle_t *old = zk->zh;
    struct zk_conn *old_conn = zk->conn;
    uint64_t old_gen = zk->gen;

    sf_log(SF_LOG_WARNING, "ZK", "ZooKeeper session 0x%llx expired; opening a new session",
           (unsigned long long)zk->session_id);
    /* Not connected from here on, also for the callbacks run by handle_close below;
     * SF_ZK_EXPIRED is reported once they are done. */
    zk->state = SF_ZK_DISCONNECTED;
    zk->gen++;
    if (handle_open(zk) != SF_OK) {
        zk->zh = NULL;
        zk->dead = 1;
        handle_close(zk, old, old_conn, old_gen, ZSESSIONEXPIRED);
        report(zk, SF_ZK_FAILED);
        return;
    }
    handle_close(zk, old, old_conn, old_gen, ZSESSIONEXPIRED);
    report(zk, SF_ZK_EXPIRED);
}

static void handle_state(sf_zk_t *zk, int zstate) {
    if (zstate == ZOO_CONNECTED_STATE) {
        const clientid_t *cid = zoo_client_id(zk->zh);
        zk->session_id = cid ? cid->client_id : 0;
        zk->negotiated_timeout = zoo_recv_timeout(zk->zh);
        if (zk->chroot_ready || !zk->chroot_len) {
            zk->chroot_ready = 1;
            connected_ready(zk);
        } else {
            chroot_create(zk);
        }
    } else if (zstate == ZOO_CONNECTING_STATE || zstate == ZOO_ASSOCIATING_STATE) {
        if (zk->state == SF_ZK_CONNECTED) {
            sf_log(SF_LOG_WARNING, "ZK", "lost the connection to ZooKeeper %s; reconnecting",
                   zk->hosts);
            report(zk, SF_ZK_DISCONNECTED);
        }
    } else if (zstate == ZOO_EXPIRED_SESSION_STATE) {
        session_replace(zk);
    } else if (zstate == ZOO_AUTH_FAILED_STATE) {
        sf_log(SF_LOG_ERR, "ZK", "ZooKeeper authentication failed at %s", zk->hosts);
    }
}

static void start_timer_cb(evutil_socket_t fd, short what, void *arg) {
    sf_zk_t *zk = arg;
    (void)fd;
    (void)what;
    if (zk->ever_connected || zk->dead)
        return;
    sf_log(SF_LOG_ERR, "ZK", "no connection to ZooKeeper %s within the startup timeout",
           zk->hosts);
    zk->dead = 1;
    handle_close_current(zk, ZCONNECTIONLOSS);
    report(zk, SF_ZK_FAILED);
}

/* ---- public: lifecycle ---- */

sf_zk_t *sf_zk_new(struct event_base *base, const char *connect, int session_timeout_ms,
                   sf_zk_state_cb state_cb, void *arg) {
    sf_zk_t *zk;
    const char *slash;
    if (!base || !connect || !*connect || session_timeout_ms <= 0) {
        errno = EINVAL;
        return NULL;
    }
    zk = calloc(1, sizeof(*zk));
    if (!zk)
        return NULL;
    pthread_mutex_init(&zk->mu, NULL);
    zk->base = base;
    zk->session_timeout_ms = session_timeout_ms;
    zk->negotiated_timeout = session_timeout_ms;
    zk->state_cb = state_cb;
    zk->arg = arg;
    slash = strchr(connect, '/');
    zk->hosts = slash ? strndup(connect, (size_t)(slash - connect)) : strdup(connect);
    if (!zk->hosts)
        goto err;
    if (!*zk->hosts) {
        errno = EINVAL;
        goto err;
    }
    if (slash && strcmp(slash, "/")) {
        if (!path_ok(slash)) {
            errno = EINVAL;
            goto err;
        }
        zk->chroot = strdup(slash);
    } else {
        zk->chroot = strdup("");
    }
    if (!zk->chroot)
        goto err;
    zk->chroot_len = strlen(zk->chroot);
    zk->qev = event_new(base, -1, 0, qev_cb, zk);
    zk->start_timer = evtimer_new(base, start_timer_cb, zk);
    if (!zk->qev || !zk->start_timer)
        goto err;
    return zk;
err:
    sf_zk_free(zk);
    return NULL;
}

int sf_zk_start(sf_zk_t *zk, int timeout_ms) {
    struct timeval tv;
    int rc;
    if (!zk)
        return SF_ERR_INVALID;
    if (zk->started)
        return SF_ERR_STATE;
    zk->started = 1;
    if (sf_log_level >= SF_LOG_DEBUG)
        zoo_set_debug_level(ZOO_LOG_LEVEL_INFO);
    else if (sf_log_level >= SF_LOG_INFO)
        zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
    else
        zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    rc = handle_open(zk);
    if (rc != SF_OK) {
        zk->dead = 1;
        return rc;
    }
    if (timeout_ms > 0) {
        tv.tv_sec = timeout_ms / 1000;
        tv.tv_usec = (timeout_ms % 1000) * 1000;
        evtimer_add(zk->start_timer, &tv);
    }
    return SF_OK;
}

void sf_zk_free(sf_zk_t *zk) {
    struct zk_qent *e;
    if (!zk)
        return;
    zk->closing = 1;
    if (zk->start_timer)
        evtimer_del(zk->start_timer);
    handle_close_current(zk, ZCLOSING);
    /* Records of generations closed earlier were taken by their close; nothing should be
     * left, but finish whatever is. */
    while ((e = q_pop(zk))) {
        if (e->kind == Q_STATE)
            free(e);
        else
            dispatch(zk, e);
    }
    while (zk->reqs) {
        zk->reqs->rc = zk->reqs->wire_rc = ZCLOSING;
        req_finish(zk, zk->reqs);
    }
    while (zk->watches)
        watch_deliver(zk, zk->watches, SF_ZK_EV_DROPPED);
    if (zk->qev)
        event_free(zk->qev);
    if (zk->start_timer)
        event_free(zk->start_timer);
    pthread_mutex_destroy(&zk->mu);
    free(zk->hosts);
    free(zk->chroot);
    free(zk);
}

int sf_zk_state(const sf_zk_t *zk) { return zk ? zk->state : 0; }
int64_t sf_zk_session_id(const sf_zk_t *zk) {
    return zk && zk->state == SF_ZK_CONNECTED ? zk->session_id : 0;
}
int sf_zk_session_timeout(const sf_zk_t *zk) { return zk ? zk->negotiated_timeout : 0; }
const char *sf_zk_hosts(const sf_zk_t *zk) { return zk ? zk->hosts : ""; }
const char *sf_zk_chroot(const sf_zk_t *zk) { return zk ? zk->chroot : ""; }

void sf_zk_set_observer(sf_zk_t *zk, sf_zk_observe_cb observe, void *arg) {
    zk->observe = observe;
    zk->observe_arg = arg;
}

const char *sf_zk_req_name(int req) {
    static const char *const names[SF_ZK_NREQ] = {
        "other", "get", "get_children", "exists", "create", "set", "delete", "multi"};
    return req > 0 && req < SF_ZK_NREQ ? names[req] : names[0];
}

/* ---- public: operations ---- */

static int usable(const sf_zk_t *zk) { return zk && zk->zh && !zk->dead && !zk->closing; }

/* Hand a prepared request to the client; on a synchronous failure nothing is called back. */
static int submit(sf_zk_t *zk, struct zk_req *r, int zrc) {
    if (zrc == ZMARSHALLINGERROR) {
        /* The client may have registered the completion before failing to queue the bytes:
         * keep the record as an orphan that calls nobody back (finished by the client, or
         * at close); the caller is told it failed. */
        r->internal = R_PARENT;
        if (r->w)
            r->w->cb = NULL;
        return SF_ERR_NOMEM;
    }
    if (zrc != ZOK) {
        req_unlink(zk, r);
        if (r->w) {
            watch_unlink(zk, r->w);
            free(r->w->path);
            free(r->w);
            r->w = NULL;
        }
        req_free(r);
        return zrc == ZBADARGUMENTS ? SF_ERR_INVALID : zrc == ZINVALIDSTATE ? SF_ERR_STATE
                                                                             : SF_ERR_IO;
    }
    return SF_OK;
}

static int prepare(sf_zk_t *zk, const char *path, int op, sf_zk_watch_cb watch, void *watch_arg,
                   void *arg, struct zk_req **out, char **full) {
    struct zk_req *r;
    *out = NULL;
    *full = NULL;
    if (!usable(zk))
        return SF_ERR_STATE;
    if (!path_ok(path))
        return SF_ERR_INVALID;
    r = req_new(zk, op, arg);
    if (!r)
        return SF_ERR_NOMEM;
    *full = full_path(zk, path);
    if (!*full) {
        req_free(r);
        return SF_ERR_NOMEM;
    }
    if (watch) {
        r->w = watch_new(zk, path, watch, watch_arg);
        if (!r->w) {
            free(*full);
            *full = NULL;
            req_free(r);
            return SF_ERR_NOMEM;
        }
        watch_link(zk, r->w);
    }
    req_link(zk, r);
    *out = r;
    return SF_OK;
}

/* get / get_children / exists: the same request with an optional watch. */
static int watched_read(sf_zk_t *zk, int op, const char *path, sf_zk_watch_cb watch,
                        void *watch_arg, union zk_cb cb, void *arg) {
    struct zk_req *r;
    char *full;
    watcher_fn wfn = watch ? watch_fn : NULL;
    int rc = prepare(zk, path, op, watch, watch_arg, arg, &r, &full);
    if (rc != SF_OK)
        return rc;
    r->cb = cb;
    if (op == OP_GET)
        rc = zoo_awget(zk->zh, full, wfn, r->w, c_data, r);
    else if (op == OP_CHILDREN)
        rc = zoo_awget_children2(zk->zh, full, wfn, r->w, c_children, r);
    else
        rc = zoo_awexists(zk->zh, full, wfn, r->w, c_stat, r);
    free(full);
    return submit(zk, r, rc);
}

int sf_zk_get(sf_zk_t *zk, const char *path, sf_zk_watch_cb watch, void *watch_arg,
              sf_zk_data_cb cb, void *arg) {
    union zk_cb c = {.data = cb};
    return watched_read(zk, OP_GET, path, watch, watch_arg, c, arg);
}

int sf_zk_get_children(sf_zk_t *zk, const char *path, sf_zk_watch_cb watch, void *watch_arg,
                       sf_zk_children_cb cb, void *arg) {
    union zk_cb c = {.children = cb};
    return watched_read(zk, OP_CHILDREN, path, watch, watch_arg, c, arg);
}

int sf_zk_exists(sf_zk_t *zk, const char *path, sf_zk_watch_cb watch, void *watch_arg,
                 sf_zk_stat_cb cb, void *arg) {
    union zk_cb c = {.stat = cb};
    return watched_read(zk, OP_EXISTS, path, watch, watch_arg, c, arg);
}

static int issue_create(sf_zk_t *zk, const char *full, const char *data, int datalen, int flags,
                        int internal, sf_zk_create_cb cb, void *arg) {
    struct zk_req *r = req_new(zk, OP_CREATE, arg);
    int rc;
    if (!r)
        return SF_ERR_NOMEM;
    r->internal = internal;
    r->cb.create = cb;
    req_link(zk, r);
    rc = zoo_acreate2(zk->zh, full, data, data ? datalen : -1, &ZOO_OPEN_ACL_UNSAFE,
                      zk_mode(flags), c_create, r);
    return submit(zk, r, rc);
}

int sf_zk_create(sf_zk_t *zk, const char *path, const char *data, int datalen, int flags,
                 sf_zk_create_cb cb, void *arg) {
    char *full;
    int rc;
    if (!usable(zk))
        return SF_ERR_STATE;
    if (!path_ok(path) || !strcmp(path, "/") || (data && datalen < 0))
        return SF_ERR_INVALID;
    if (data && datalen > ZK_MAX_REQUEST)
        return SF_ERR_TOOLARGE;
    full = full_path(zk, path);
    if (!full)
        return SF_ERR_NOMEM;
    if (flags & SF_ZK_CREATE_PARENTS) {
        /* Ancestors below the chroot, pipelined before the node itself; their results
         * (typically ZNODEEXISTS) are ignored: the node's own create reports the outcome. */
        size_t i, start = zk->chroot_len + 1, n = strlen(full);
        for (i = start; i < n; i++) {
            if (full[i] != '/')
                continue;
            full[i] = '\0';
            rc = issue_create(zk, full, NULL, -1, SF_ZK_PERSISTENT, R_PARENT, NULL, NULL);
            full[i] = '/';
            if (rc != SF_OK) {
                free(full);
                return rc;
            }
        }
    }
    rc = issue_create(zk, full, data, datalen, flags, R_USER, cb, arg);
    free(full);
    return rc;
}

int sf_zk_set(sf_zk_t *zk, const char *path, const char *data, int datalen, int version,
              sf_zk_stat_cb cb, void *arg) {
    struct zk_req *r;
    char *full;
    int rc;
    if (data && datalen < 0)
        return SF_ERR_INVALID;
    if (data && datalen > ZK_MAX_REQUEST)
        return SF_ERR_TOOLARGE;
    rc = prepare(zk, path, OP_SET, NULL, NULL, arg, &r, &full);
    if (rc != SF_OK)
        return rc;
    r->cb.stat = cb;
    rc = zoo_aset(zk->zh, full, data, data ? datalen : -1, version, c_stat, r);
    free(full);
    return submit(zk, r, rc);
}

int sf_zk_delete(sf_zk_t *zk, const char *path, int version, sf_zk_void_cb cb, void *arg) {
    struct zk_req *r;
    char *full;
    int rc;
    if (path && !strcmp(path, "/"))
        return SF_ERR_INVALID;
    rc = prepare(zk, path, OP_DELETE, NULL, NULL, arg, &r, &full);
    if (rc != SF_OK)
        return rc;
    r->cb.vd = cb;
    rc = zoo_adelete(zk->zh, full, version, c_void, r);
    free(full);
    return submit(zk, r, rc);
}

int sf_zk_multi(sf_zk_t *zk, const sf_zk_op_t *ops, int nops, sf_zk_multi_cb cb, void *arg) {
    struct zk_req *r;
    size_t total = 0, off = 0, wire = 64;
    int i, rc;
    char *s;

    /* zoo_amulti must not see a handle whose session has expired (a negative state) before
     * our watcher heard of it: after the first sub-request fails it frees a stale path
     * pointer for every later one, which is a pointer into this request's strings. The
     * check leaves only the instant between it and the client's own. */
    if (!usable(zk) || zoo_state(zk->zh) < 0)
        return SF_ERR_STATE;
    if (!ops || nops < 1 || nops > SF_ZK_MULTI_MAX)
        return SF_ERR_INVALID;
    for (i = 0; i < nops; i++) {
        const sf_zk_op_t *op = &ops[i];
        size_t plen, data = 0;
        if (!path_ok(op->path) || (op->data && op->datalen < 0))
            return SF_ERR_INVALID;
        if (op->type < SF_ZK_OP_CREATE || op->type > SF_ZK_OP_CHECK)
            return SF_ERR_INVALID;
        if ((op->type == SF_ZK_OP_CREATE || op->type == SF_ZK_OP_DELETE) && !strcmp(op->path, "/"))
            return SF_ERR_INVALID;
        plen = zk->chroot_len + strlen(op->path) + 1;
        if (op->data && (op->type == SF_ZK_OP_CREATE || op->type == SF_ZK_OP_SET))
            data = (size_t)op->datalen;
        /* on the wire: op header, path, data, and for creates the open ACL and flags */
        wire += ZK_OP_OVERHEAD + plen + data;
        total += plen + data;
        if (op->type == SF_ZK_OP_CREATE)
            total += plen + 16; /* created-path buffer (room for a sequence suffix) */
    }
    if (wire > ZK_MAX_REQUEST)
        return SF_ERR_TOOLARGE;

    r = req_new(zk, OP_MULTI, arg);
    if (!r)
        return SF_ERR_NOMEM;
    r->cb.multi = cb;
    r->nops = nops;
    r->ops = calloc((size_t)nops, sizeof(*r->ops));
    r->results = calloc((size_t)nops, sizeof(*r->results));
    r->stats = calloc((size_t)nops, sizeof(*r->stats));
    r->strings = malloc(total ? total : 1);
    if (!r->ops || !r->results || !r->stats || !r->strings) {
        req_free(r);
        return SF_ERR_NOMEM;
    }
    s = r->strings;
    for (i = 0; i < nops; i++) {
        const sf_zk_op_t *op = &ops[i];
        size_t plen = strlen(op->path);
        char *path, *data = NULL, *buf = NULL;
        int buflen = 0;
        /* the full path */
        path = s + off;
        full_path_copy(zk, op->path, path);
        off += zk->chroot_len + plen + 1;
        if (op->type == SF_ZK_OP_CREATE) {
            buf = s + off;
            buflen = (int)(zk->chroot_len + plen + 1 + 16);
            buf[0] = '\0';
            off += (size_t)buflen;
        }
        if (op->data && (op->type == SF_ZK_OP_CREATE || op->type == SF_ZK_OP_SET)) {
            data = s + off;
            memcpy(data, op->data, (size_t)op->datalen);
            off += (size_t)op->datalen;
        }
        switch (op->type) {
        case SF_ZK_OP_CREATE:
            zoo_create_op_init(&r->ops[i], path, data, data ? op->datalen : -1,
                               &ZOO_OPEN_ACL_UNSAFE, zk_mode(op->flags), buf, buflen);
            break;
        case SF_ZK_OP_DELETE:
            zoo_delete_op_init(&r->ops[i], path, op->version);
            break;
        case SF_ZK_OP_SET:
            zoo_set_op_init(&r->ops[i], path, data, data ? op->datalen : -1, op->version,
                            &r->stats[i]);
            break;
        default:
            zoo_check_op_init(&r->ops[i], path, op->version);
            break;
        }
    }
    req_link(zk, r);
    rc = zoo_amulti(zk->zh, nops, r->ops, r->results, c_void, r);
    return submit(zk, r, rc);
}

/* ---- test support ---- */

static void noop_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    (void)zh;
    (void)type;
    (void)state;
    (void)path;
    (void)ctx;
}

/* Wait up to @ms for @h to reach @state. */
static int wait_state(zhandle_t *h, int state, int ms) {
    int i;
    for (i = 0; i < ms / 10 && zoo_state(h) != state; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return zoo_state(h) == state;
}

int sf_zk_debug_expire_session(sf_zk_t *zk) {
    clientid_t cid;
    const clientid_t *p;
    zhandle_t *h2;
    int attempt;
    if (!usable(zk) || zk->state != SF_ZK_CONNECTED)
        return SF_ERR_STATE;
    p = zoo_client_id(zk->zh);
    if (!p || !p->client_id)
        return SF_ERR_STATE;
    cid = *p;
    /* Connecting a second handle moves the session to it, and closing that handle closes
     * the session, unless our own handle reconnected in between and moved the session back
     * (the close is then refused): try again until our handle sees the expiry. */
    for (attempt = 0; attempt < 5; attempt++) {
        h2 = zookeeper_init2(zk->hosts, noop_watcher, zk->session_timeout_ms, &cid, NULL,
                             ZOO_NO_LOG_CLIENTENV, zk_log_cb);
        if (!h2)
            return SF_ERR_IO;
        if (!wait_state(h2, ZOO_CONNECTED_STATE, 5000)) {
            int gone = zoo_state(h2) == ZOO_EXPIRED_SESSION_STATE; /* closed by the last try */
            zookeeper_close(h2);
            return gone ? SF_OK : SF_ERR_IO;
        }
        zookeeper_close(h2);
        if (wait_state(zk->zh, ZOO_EXPIRED_SESSION_STATE, 3000))
            return SF_OK;
    }
    return SF_ERR_IO;
}
