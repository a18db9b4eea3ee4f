/* Client connections: framing, in-order responses, flow control, TLS. */
#include "server.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "brokercfg.h"
#include "clock.h"
#include "err.h"
#include "log.h"
#include "logging.h"
#include "acceptor.h"
#include "mailbox.h"
#include "netlimit.h"
#include "tls.h"

/* Resume reading once queued output falls to this (hysteresis under the pause threshold). */
#define SF_SERVER_RESUME_OUTPUT (SF_SERVER_MAX_PENDING_OUTPUT / 2)
/* Response bodies at least this large are handed to libevent by reference instead of copied. */
#define SF_SERVER_REF_MIN (16 * 1024)
/* TLS connections: frames at least this large set a read low-watermark so the read callback
 * runs once per frame instead of once per socket read. */
#define SF_SERVER_BIG_FRAME (64 * 1024)
/* TLS connections: largest single socket read (libevent's default is 16 KiB). */
#define SF_SERVER_MAX_READ (256 * 1024)
/* Plaintext connections: bytes asked for by one read into the input buffer. */
#define SF_SERVER_READ_CHUNK (64 * 1024)
/* Plaintext connections: a frame at least this large whose bytes have not all arrived moves to
 * its own buffer and the rest of it is received straight into it (no input buffer copy). The
 * buffer starts at SF_SERVER_PART_FIRST (or twice what arrived) and doubles as bytes arrive, up
 * to the announced size: announcing 100 MB costs nothing until 100 MB are sent. */
#define SF_SERVER_DIRECT_MIN (64 * 1024)
#define SF_SERVER_PART_FIRST (256 * 1024)
/* TLS connections: the read callback runs at least every this many bytes of a large frame, so
 * that its growing input is counted against queued.max.request.bytes. */
#define SF_SERVER_TLS_STEP (1024 * 1024)
/* Plaintext connections: while at least this many bytes are missing from the frame being read,
 * the socket's receive low-watermark (SO_RCVLOWAT) asks the kernel to report it readable only
 * once they are there (capped, and lowered again by the kernel to what the buffer can hold),
 * so a large frame costs a few wake-ups instead of one per arriving segment. */
#define SF_SERVER_LOWAT_MIN (16 * 1024)
#define SF_SERVER_LOWAT_MAX (4 * 1024 * 1024)
/* Idle connections are looked for at this fraction of connections.max.idle.ms, within these
 * bounds. */
#define SF_SERVER_IDLE_CHECKS 10
#define SF_SERVER_IDLE_CHECK_MIN_MS 100
#define SF_SERVER_IDLE_CHECK_MAX_MS 30000

/* Everything here but the answers from elsewhere (post_far) runs on the owner loop's thread. */
#define ON_OWNER_THREAD(mb) assert(!(mb) || sf_mailbox_is_owner(mb))

/* A response slot: one per request, in request order. */
typedef enum slot_state {
    SLOT_PENDING, /* the request has not been answered */
    SLOT_DONE,    /* answered: buf holds the response (or NULL if written / dropped / none) */
    SLOT_CLOSE,   /* close the connection when this slot reaches the head */
} slot_state_t;

struct sf_req_slot {
    sf_req_slot_t *next;
    struct evbuffer *buf; /* a response completed before the ones ahead of it */
    slot_state_t state;
};


struct sf_server {
    struct event_base *base;
    sf_server_dispatch_fn fn;
    void *arg;
    size_t max_request;
    sf_mailbox_t *mb;  /* the owner loop's mailbox: answers from other threads come through it */
    sf_conn_t *conns; /* open connections (doubly linked) */
    size_t nconns;
    int64_t idle_ms;          /* connections.max.idle.ms (-1: never) */
    struct event *idle_timer; /* closes idle connections */
    int64_t tick;             /* monotonic ms at the last idle check: connection activity time */
    sf_wbuf_t hdr; /* scratch for response headers (one event-loop thread) */
    int quiesced;  /* no more requests are read (shutdown) */
    sf_netlimit_t *nl;              /* limits across workers (borrowed); NULL: none */
    sf_netlimit_waiter_t *waiter;   /* wakes connections paused at a cap of @nl */
};

struct sf_conn {
    sf_server_t *srv;         /* NULL once closed */
    sf_mailbox_t *mb;         /* the owner loop's (for answers from other threads) */
    sf_conn_t *prev, *next;   /* in srv->conns while open */
    struct bufferevent *bev;  /* TLS connections; NULL once closed */
    char peer[INET6_ADDRSTRLEN + 10];
    struct sockaddr_storage sa; /* the peer, counted in nl while open */
    sf_netlimit_t *nl;          /* the server's; outlives the connection */
    int64_t acct[SF_NETLIMIT_NKINDS]; /* bytes counted in nl's totals */
    int gkind;                  /* the cap of nl it paused at (-1: none) */
    struct evbuffer_cb_entry *out_cb; /* counts the output */
    char listener[16];
    int tls;
    size_t max_request;
    unsigned dead : 1;        /* closed: responses are dropped */
    unsigned closing : 1;     /* no more requests are read (a close marker is queued) */
    unsigned drop_output : 1; /* the close marker reached the head: close once output drains */
    unsigned paused : 1;      /* reading disabled by a cap */
    unsigned busy;            /* > 0 while inside our own code for this connection */
    size_t read_low;          /* current read low-watermark (0 = none; TLS) */
    /* Plaintext connections do their own socket I/O (no bufferevent): large frames are received
     * straight into the request, and responses are written at once instead of waiting for
     * a write event. */
    evutil_socket_t fd;
    struct event *rdev, *wrev; /* plaintext read and write events; NULL once closed */
    unsigned rd_on : 1;       /* rdev is added */
    unsigned wr_on : 1;       /* wrev is added (output the socket did not take yet) */
    unsigned in_rd : 1;       /* inside the read callback: responses are written at its end */
    int lowat;                /* SO_RCVLOWAT in force (1 = the default) */
    size_t need;              /* bytes missing from the partial frame in the input buffer */
    sf_req_t *part;           /* a large frame being received straight into its buffer */
    size_t part_got;          /* bytes of part->frame received so far */
    size_t part_cap;          /* bytes allocated for part->frame (<= part->frame_len) */
    sf_req_slot_t *head, *tail;
    size_t nslots;  /* unanswered or unwritten requests (in-flight) */
    size_t nreqs;   /* requests the handler still holds */
    size_t held;    /* frame bytes of those requests */
    atomic_int jobs; /* their jobs queued on the I/O threads (sf_conn_jobs_add) */
    size_t parked;  /* bytes in slots answered before the ones ahead of them */
    int64_t active; /* srv->tick when bytes last moved (or the connection was accepted) */
    /* Input and output: the bufferevent's (TLS) or owned (plaintext); NULL once closed. */
    struct evbuffer *in, *out;
};

/* ------------------------------------------------------------------------------------------
 * Connection lifetime
 * ------------------------------------------------------------------------------------------ */

static void conn_read_cb(struct bufferevent *bev, void *arg);
static void conn_write_cb(struct bufferevent *bev, void *arg);
static void conn_event_cb(struct bufferevent *bev, short what, void *arg);
static void conn_process(sf_conn_t *conn);
static void conn_rd_cb(evutil_socket_t fd, short what, void *arg);
static void conn_wr_cb(evutil_socket_t fd, short what, void *arg);

static size_t conn_pending(const sf_conn_t *conn) {
    return (conn->out ? evbuffer_get_length(conn->out) : 0) + conn->parked;
}

/* ------------------------------------------------------------------------------------------
 * The limits across workers (netlimit.h): each connection reports what it holds now
 * ------------------------------------------------------------------------------------------ */

static void conn_acct_set(sf_conn_t *conn, sf_netlimit_kind_t kind, size_t now) {
    int64_t delta = (int64_t)now - conn->acct[kind];
    if (delta) {
        conn->acct[kind] = (int64_t)now;
        sf_netlimit_add(conn->nl, kind, delta);
    }
}

/* Frames still arriving: the partial frame's buffer and the unparsed input. */
static void conn_acct_partial(sf_conn_t *conn) {
    size_t in = conn->in ? evbuffer_get_length(conn->in) : 0;
    conn_acct_set(conn, SF_NETLIMIT_PARTIAL, (conn->part ? conn->part_cap : 0) + in);
}

static void conn_acct_output(sf_conn_t *conn) {
    conn_acct_set(conn, SF_NETLIMIT_OUTPUT, conn_pending(conn));
}

/* Every change of the output (responses added, bytes written, by us or by libevent). */
static void conn_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg) {
    (void)buf;
    (void)info;
    conn_acct_output(arg);
}

/* 1 if cap @kind stops @conn reading (@resume: whether a connection paused at it stays
 * paused). The response cap only stops connections that have a response queued or a request
 * in flight, so that a client that reads its answers is still served. */
static int conn_over(sf_conn_t *conn, sf_netlimit_kind_t kind, int resume) {
    switch (kind) {
    case SF_NETLIMIT_PARTIAL:
        return sf_netlimit_over(conn->nl, kind, conn->acct[kind], resume);
    case SF_NETLIMIT_HELD:
        return sf_netlimit_over(conn->nl, kind, 0, resume);
    case SF_NETLIMIT_OUTPUT:
        return (conn->nslots > 0 || conn_pending(conn) > 0) &&
               sf_netlimit_over(conn->nl, kind, 0, resume);
    default:
        return 0;
    }
}

/* Close the socket now; the struct lives on until nothing refers to it (conn_unbusy). */
static void conn_kill(sf_conn_t *conn) {
    if (conn->dead)
        return;
    conn->dead = 1;
    free(conn->part); /* not dispatched yet: no slot, no arena */
    conn->part = NULL;
    if (conn->out_cb) {
        evbuffer_remove_cb_entry(conn->out, conn->out_cb);
        conn->out_cb = NULL;
    }
    if (!conn->tls) {
        /* Freeing an event from inside its own callback is allowed. The output's file
         * segments release their log references here. */
        if (conn->rdev)
            event_free(conn->rdev);
        if (conn->wrev)
            event_free(conn->wrev);
        conn->rdev = conn->wrev = NULL;
        conn->rd_on = conn->wr_on = 0;
        if (conn->in)
            evbuffer_free(conn->in);
        if (conn->out)
            evbuffer_free(conn->out);
        conn->in = conn->out = NULL;
        evutil_closesocket(conn->fd);
        conn->fd = -1;
    }
    if (conn->bev) {
        bufferevent_disable(conn->bev, EV_READ | EV_WRITE);
        bufferevent_setcb(conn->bev, NULL, NULL, NULL, NULL);
        /* Freeing a bufferevent from inside its own callbacks is allowed by libevent (it holds a
         * reference until the callback returns). */
        bufferevent_free(conn->bev);
        conn->bev = NULL;
        conn->in = conn->out = NULL;
    }
    if (conn->srv) {
        sf_server_t *srv = conn->srv;
        if (conn->prev)
            conn->prev->next = conn->next;
        else
            srv->conns = conn->next;
        if (conn->next)
            conn->next->prev = conn->prev;
        srv->nconns--;
        conn->srv = NULL;
        conn->prev = conn->next = NULL;
        if (conn->nl)
            sf_netlimit_conn_close(conn->nl, (struct sockaddr *)&conn->sa);
    }
    /* Input and output are gone; parked responses and held requests go later. */
    conn_acct_partial(conn);
    conn_acct_output(conn);
    sf_log(SF_LOG_DEBUG, "NET", "%s: connection closed", conn->peer);
}

static void slot_free(sf_conn_t *conn, sf_req_slot_t *slot) {
    if (slot->buf) {
        conn->parked -= evbuffer_get_length(slot->buf);
        evbuffer_free(slot->buf); /* releases file segments (and their log references) */
        conn_acct_output(conn);
    }
    free(slot);
}

static void conn_free(sf_conn_t *conn) {
    sf_req_slot_t *slot, *next;
    assert(conn->dead && conn->nreqs == 0 && conn->busy == 0);
    for (slot = conn->head; slot; slot = next) {
        next = slot->next;
        slot_free(conn, slot);
    }
    conn_acct_output(conn);
    assert(conn->acct[SF_NETLIMIT_PARTIAL] == 0 && conn->acct[SF_NETLIMIT_OUTPUT] == 0 &&
           conn->acct[SF_NETLIMIT_HELD] == 0);
    free(conn);
}

static void conn_busy(sf_conn_t *conn) {
    conn->busy++;
}

/* Leave our code for @conn; frees it when it is closed and nothing refers to it any more. */
static void conn_unbusy(sf_conn_t *conn) {
    assert(conn->busy > 0);
    if (--conn->busy == 0 && conn->dead && conn->nreqs == 0)
        conn_free(conn);
}

/* TLS: the write callback is only needed while paused or while waiting to close. */
static void conn_update_cbs(sf_conn_t *conn) {
    if (conn->bev)
        bufferevent_setcb(conn->bev, conn_read_cb,
                          conn->paused || conn->drop_output ? conn_write_cb : NULL, conn_event_cb,
                          conn);
}

/* Plaintext: write the output until it is empty or the socket is full; the write event stays
 * added exactly while output is left. */
static void conn_write_plain(sf_conn_t *conn) {
    size_t left;
    while ((left = evbuffer_get_length(conn->out)) > 0) {
        /* writev of the memory chains, sendfile for a file segment */
        int n = evbuffer_write(conn->out, conn->fd);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            sf_log(SF_LOG_DEBUG, "NET", "%s: connection error: %s", conn->peer, strerror(errno));
            conn_kill(conn);
            return;
        }
        if (n <= 0)
            break; /* the socket is full */
    }
    if (left && !conn->wr_on) {
        if (event_add(conn->wrev, NULL) < 0) {
            sf_log(SF_LOG_WARNING, "NET", "%s: cannot wait for the socket; closing", conn->peer);
            conn_kill(conn);
            return;
        }
        conn->wr_on = 1;
    } else if (!left && conn->wr_on) {
        event_del(conn->wrev);
        conn->wr_on = 0;
    }
}

/* Plaintext: write new output now, unless the write event is already waiting for room or the
 * read callback will do it (so responses to one read go out together). */
static void conn_send(sf_conn_t *conn) {
    if (conn->tls || conn->dead || conn->wr_on || conn->in_rd)
        return;
    conn_write_plain(conn);
}

/* Start or stop reading requests (the own read event of a plaintext connection, the
 * bufferevent's read side of a TLS one). */
static void conn_read_enable(sf_conn_t *conn) {
    if (conn->rdev) {
        if (!conn->rd_on && event_add(conn->rdev, NULL) == 0)
            conn->rd_on = 1;
    } else if (conn->bev) {
        bufferevent_enable(conn->bev, EV_READ);
    }
}

static void conn_read_disable(sf_conn_t *conn) {
    if (conn->rdev) {
        if (conn->rd_on)
            event_del(conn->rdev);
        conn->rd_on = 0;
    } else if (conn->bev) {
        bufferevent_disable(conn->bev, EV_READ);
    }
}

static void conn_pause(sf_conn_t *conn) {
    if (conn->paused || conn->dead)
        return;
    conn->paused = 1;
    conn_read_disable(conn);
    conn_update_cbs(conn);
    sf_log(SF_LOG_DEBUG, "NET", "%s: reading paused (%zu requests in flight, %zu bytes queued)",
           conn->peer, conn->nslots, conn_pending(conn));
}

/* Stop reading at cap @kind of the limits across workers, until the server's waiter is woken
 * (srv_wake_cb). */
static void conn_pause_global(sf_conn_t *conn, sf_netlimit_kind_t kind) {
    if (conn->dead)
        return;
    conn->gkind = (int)kind;
    sf_netlimit_paused(conn->nl, kind);
    conn_pause(conn);
    sf_netlimit_wait(conn->nl, conn->srv->waiter, kind);
}

static void conn_maybe_resume(sf_conn_t *conn) {
    if (!conn->paused || conn->dead || conn->closing)
        return;
    if (conn->nslots >= SF_SERVER_MAX_INFLIGHT || conn_pending(conn) > SF_SERVER_RESUME_OUTPUT ||
        conn->held > SF_SERVER_MAX_HELD / 2 || conn->srv->quiesced)
        return;
    if (conn->gkind >= 0) {
        if (conn_over(conn, (sf_netlimit_kind_t)conn->gkind, 1)) {
            sf_netlimit_wait(conn->nl, conn->srv->waiter, (sf_netlimit_kind_t)conn->gkind);
            return;
        }
        conn->gkind = -1;
    }
    conn->paused = 0;
    conn_update_cbs(conn);
    conn_read_enable(conn);
    /* Frames may already be waiting in the input buffer: process them from a fresh callback
     * (deferred), never from inside the answer that made room. */
    if (conn->rdev)
        event_active(conn->rdev, EV_READ, 0);
    else
        bufferevent_trigger(conn->bev, EV_READ,
                            BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

/* Once the close marker reached the head: close as soon as the output is written. */
static void conn_check_close(sf_conn_t *conn) {
    if (conn->dead || !conn->drop_output)
        return;
    if (evbuffer_get_length(conn->out) == 0)
        conn_kill(conn);
    else
        conn_update_cbs(conn);
}

/* Move answered slots at the head of the queue to the output, in order. */
static void conn_flush(sf_conn_t *conn) {
    sf_req_slot_t *slot;
    while ((slot = conn->head) && slot->state != SLOT_PENDING) {
        conn->head = slot->next;
        if (!conn->head)
            conn->tail = NULL;
        conn->nslots--;
        if (slot->buf && !conn->dead && !conn->drop_output) {
            conn->parked -= evbuffer_get_length(slot->buf);
            /* Moves the chains (file segments included); no copy. */
            if (evbuffer_add_buffer(conn->out, slot->buf) < 0) {
                sf_log(SF_LOG_WARNING, "NET", "%s: out of memory queueing a response; closing",
                       conn->peer);
                conn_kill(conn);
            }
        }
        if (slot->state == SLOT_CLOSE)
            conn->drop_output = 1;
        slot_free(conn, slot);
    }
    conn_send(conn);
    conn_check_close(conn);
    conn_maybe_resume(conn);
}

static sf_req_slot_t *conn_add_slot(sf_conn_t *conn, slot_state_t state) {
    sf_req_slot_t *slot = calloc(1, sizeof(*slot));
    if (!slot)
        return NULL;
    slot->state = state;
    if (conn->tail)
        conn->tail->next = slot;
    else
        conn->head = slot;
    conn->tail = slot;
    conn->nslots++;
    return slot;
}

/* No more requests from this connection (a close marker is queued or about to be). */
static void conn_stop_reading(sf_conn_t *conn) {
    struct evbuffer *in;
    if (conn->dead || conn->closing)
        return;
    conn->closing = 1;
    conn_read_disable(conn);
    in = conn->in;
    evbuffer_drain(in, evbuffer_get_length(in));
    free(conn->part);
    conn->part = NULL;
    conn->part_cap = 0;
    conn_acct_partial(conn);
}

/* Stop reading and close the connection after the responses already queued or pending. */
static void conn_close_after_pending(sf_conn_t *conn) {
    if (conn->dead || conn->closing)
        return;
    conn_stop_reading(conn);
    if (!conn_add_slot(conn, SLOT_CLOSE)) {
        conn_kill(conn);
        return;
    }
    conn_flush(conn);
}

/* ------------------------------------------------------------------------------------------
 * Reading requests
 * ------------------------------------------------------------------------------------------ */

static void conn_set_read_low(sf_conn_t *conn, size_t low) {
    if (conn->read_low != low && conn->bev) {
        bufferevent_setwatermark(conn->bev, EV_READ, low, 0);
        conn->read_low = low;
    }
}

/* Plaintext: ask the kernel to report the socket readable only once the bytes still missing
 * from the current frame are there (when that is worth a system call). */
static void conn_set_lowat(sf_conn_t *conn) {
    size_t need = conn->part ? conn->part->frame_len - conn->part_got : conn->need;
    int want = 1;
    if (conn->dead || !conn->rdev || conn->closing)
        return;
    if (need >= SF_SERVER_LOWAT_MIN)
        want = need > SF_SERVER_LOWAT_MAX ? SF_SERVER_LOWAT_MAX : (int)need;
    if (want != conn->lowat) {
        /* Best effort: without it the frame just takes more wake-ups. */
        if (setsockopt(conn->fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want)) < 0)
            want = 1;
        conn->lowat = want;
    }
}

/* A whole frame in @req: decode its header and hand it to the dispatch function. Returns 0 to
 * go on reading, -1 when the connection stopped reading (@req is freed or handed over). */
static int conn_dispatch(sf_conn_t *conn, sf_req_t *req) {
    sf_server_t *srv = conn->srv;
    int rc;
    sf_rbuf_init(&req->body, req->frame, req->frame_len);
    rc = sf_proto_RequestHeader_decode(&req->body, &req->hdr);
    if (rc != SF_OK || req->body.err) {
        sf_log(SF_LOG_INFO, "NET", "%s: request header does not decode; closing the connection",
               conn->peer);
        free(req);
        conn_close_after_pending(conn);
        return -1;
    }
    if (!(req->slot = conn_add_slot(conn, SLOT_PENDING))) {
        free(req);
        conn_kill(conn);
        return -1;
    }
    sf_arena_init(&req->arena, SF_SERVER_ARENA_LIMIT(req->frame_len));
    req->conn = conn;
    conn->nreqs++;
    conn->held += req->frame_len;
    conn_acct_set(conn, SF_NETLIMIT_HELD, conn->held);
    srv->fn(req, srv->arg);
    return conn->dead || conn->closing ? -1 : 0;
}

/* A request of @size bytes (already checked against the limits) with room for @cap of them,
 * uninitialised but for the frame pointer and length; NULL (and the connection killed) when
 * out of memory. */
static sf_req_t *conn_req_new(sf_conn_t *conn, int32_t size, size_t cap) {
    sf_req_t *req = malloc(sizeof(*req) + cap);
    if (!req) {
        sf_log(SF_LOG_WARNING, "NET", "%s: out of memory for a %d-byte request; closing",
               conn->peer, size);
        conn_kill(conn);
        return NULL;
    }
    memset(req, 0, sizeof(*req));
    req->frame = (uint8_t *)(req + 1);
    req->frame_len = (size_t)size;
    return req;
}

/* The cap of the limits across workers that keeps @conn from reading another request (-1:
 * none). */
static int conn_request_cap(sf_conn_t *conn) {
    if (conn_over(conn, SF_NETLIMIT_HELD, 0))
        return SF_NETLIMIT_HELD;
    if (conn_over(conn, SF_NETLIMIT_OUTPUT, 0))
        return SF_NETLIMIT_OUTPUT;
    return -1;
}

/* Dispatch the whole frames waiting in the input buffer, in order. A partial frame stays there,
 * except a large one on a plaintext connection: it moves to conn->part, whose remaining bytes
 * conn_read_plain receives straight into the frame. */
static void conn_process(sf_conn_t *conn) {
    struct evbuffer *in;
    size_t want = 0;
    int cap;

    conn->need = 0;
    if (conn->dead || conn->closing || !conn->srv || conn->part)
        return;
    conn_busy(conn);
    in = conn->in;
    while (!conn->dead && !conn->closing) {
        uint8_t szb[4];
        int32_t size;
        size_t avail = evbuffer_get_length(in);
        sf_req_t *req;

        if (conn->nslots >= SF_SERVER_MAX_INFLIGHT || conn->held > SF_SERVER_MAX_HELD ||
            conn_pending(conn) > SF_SERVER_MAX_PENDING_OUTPUT || conn->srv->quiesced) {
            conn_pause(conn);
            break;
        }
        if ((cap = conn_request_cap(conn)) >= 0) {
            conn_pause_global(conn, (sf_netlimit_kind_t)cap);
            break;
        }
        if (avail < 4) {
            conn->need = 4 - avail;
            break;
        }
        evbuffer_copyout(in, szb, 4);
        size = (int32_t)sf_load_be32(szb);
        /* Checked before anything of that size is allocated. */
        if (size < 8 || (size_t)size > conn->max_request) {
            sf_log(SF_LOG_INFO, "NET", "%s: request size %d is %s; closing the connection",
                   conn->peer, size,
                   size < 8 ? "too small for a request header" : "above socket.request.max.bytes");
            conn_close_after_pending(conn);
            break;
        }
        if (avail - 4 < (size_t)size) {
            conn->need = (size_t)size - (avail - 4);
            if (conn->rdev && (size_t)size >= SF_SERVER_DIRECT_MIN) {
                /* Take what arrived; the rest is received into the frame itself, whose buffer
                 * grows as it comes (conn_part_grow). */
                size_t first = 2 * (avail - 4) > SF_SERVER_PART_FIRST ? 2 * (avail - 4)
                                                                      : SF_SERVER_PART_FIRST;
                first = first < (size_t)size ? first : (size_t)size;
                if (!(req = conn_req_new(conn, size, first)))
                    break;
                evbuffer_drain(in, 4);
                if (avail > 4 && evbuffer_remove(in, req->frame, avail - 4) != (int)(avail - 4)) {
                    free(req);
                    conn_kill(conn);
                    break;
                }
                conn->part = req;
                conn->part_got = avail - 4;
                conn->part_cap = first;
                conn->need = 0;
            } else if ((size_t)size >= SF_SERVER_BIG_FRAME) {
                /* TLS: wake up once the frame is in, but at least every step of it (counted
                 * against the cap below). */
                want = avail + SF_SERVER_TLS_STEP < 4 + (size_t)size ? avail + SF_SERVER_TLS_STEP
                                                                     : 4 + (size_t)size;
            }
            break;
        }
        if (!(req = conn_req_new(conn, size, (size_t)size)))
            break;
        evbuffer_drain(in, 4);
        if (evbuffer_remove(in, req->frame, (size_t)size) != (int)size) {
            free(req);
            conn_kill(conn);
            break;
        }
        if (conn_dispatch(conn, req) < 0)
            break;
    }
    if (!conn->dead && !conn->rdev)
        conn_set_read_low(conn, want);
    if (!conn->dead) {
        conn_acct_partial(conn);
        /* TLS: a large frame grows in the input buffer itself. */
        if (want && !conn->paused && conn_over(conn, SF_NETLIMIT_PARTIAL, 0))
            conn_pause_global(conn, SF_NETLIMIT_PARTIAL);
    }
    conn_unbusy(conn);
}

/* Plaintext: room for more of the frame being received (conn->part, whose buffer is full):
 * double its buffer, up to the announced size. Returns 0 with room, 1 when reading paused at
 * queued.max.request.bytes, -1 when the connection was closed (out of memory). */
static int conn_part_grow(sf_conn_t *conn) {
    sf_req_t *req = conn->part, *bigger;
    size_t cap = conn->part_cap * 2 < req->frame_len ? conn->part_cap * 2 : req->frame_len;

    assert(conn->part_got == conn->part_cap && conn->part_cap < req->frame_len);
    if (conn_over(conn, SF_NETLIMIT_PARTIAL, 0)) {
        conn_pause_global(conn, SF_NETLIMIT_PARTIAL);
        return 1;
    }
    if (!(bigger = realloc(req, sizeof(*req) + cap))) {
        sf_log(SF_LOG_WARNING, "NET", "%s: out of memory for %zu bytes of a %zu-byte request; "
               "closing", conn->peer, cap, req->frame_len);
        conn_kill(conn); /* frees conn->part */
        return -1;
    }
    bigger->frame = (uint8_t *)(bigger + 1);
    conn->part = bigger;
    conn->part_cap = cap;
    conn_acct_partial(conn);
    return 0;
}

/* What to do after a recv() that returned @n <= 0: RECV_RETRY (interrupted), RECV_WAIT
 * (nothing to read now) or RECV_GONE (end of stream or error: the connection is closed). */
enum { RECV_RETRY, RECV_WAIT, RECV_GONE };
static int conn_recv_failed(sf_conn_t *conn, ssize_t n) {
    if (n < 0 && errno == EINTR)
        return RECV_RETRY;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return RECV_WAIT;
    if (n < 0)
        sf_log(SF_LOG_DEBUG, "NET", "%s: connection error: %s", conn->peer, strerror(errno));
    conn_kill(conn);
    return RECV_GONE;
}

/* Plaintext read event: receive into the input buffer (or straight into a large frame) and
 * dispatch what is complete. */
static void conn_read_plain(sf_conn_t *conn) {
    struct evbuffer *in = conn->in;
    int round;

    /* Frames left waiting while reading was paused come first. */
    if (!conn->part && evbuffer_get_length(in) > 0)
        conn_process(conn);
    /* A bounded number of reads per wake-up keeps other connections served. */
    for (round = 0; round < 16; round++) {
        ssize_t n;
        if (conn->dead || conn->closing || conn->paused || !conn->rd_on)
            break;
        if (conn->part) {
            sf_req_t *req;
            size_t need;
            if (conn->part_got == conn->part_cap && conn_part_grow(conn) != 0)
                break;
            req = conn->part;
            need = conn->part_cap - conn->part_got;
            n = recv(conn->fd, req->frame + conn->part_got, need, 0);
            if (n <= 0) {
                if (conn_recv_failed(conn, n) != RECV_RETRY)
                    break;
                continue;
            }
            conn->part_got += (size_t)n;
            if ((size_t)n < need)
                break; /* the socket is drained: wait for the rest */
            if (conn->part_got < req->frame_len)
                continue; /* the buffer is full: grow it */
            conn->part = NULL;
            conn->part_cap = 0;
            conn_acct_partial(conn);
            if (conn_dispatch(conn, req) < 0)
                break;
            /* The next frame often follows at once: go on reading. */
        } else {
            struct evbuffer_iovec v;
            if (evbuffer_reserve_space(in, SF_SERVER_READ_CHUNK, &v, 1) < 1) {
                sf_log(SF_LOG_WARNING, "NET", "%s: out of memory reading; closing", conn->peer);
                conn_kill(conn);
                break;
            }
            n = recv(conn->fd, v.iov_base, v.iov_len, 0);
            if (n <= 0) {
                if (conn_recv_failed(conn, n) != RECV_RETRY)
                    break;
                continue;
            }
            v.iov_len = (size_t)n;
            if (evbuffer_commit_space(in, &v, 1) < 0) {
                conn_kill(conn);
                break;
            }
            conn_process(conn);
            if (!conn->part)
                break; /* one read per wake-up, as libevent does */
        }
    }
    conn_set_lowat(conn);
}

/* Bytes moved on @conn: it is not idle. */
static void conn_touch(sf_conn_t *conn) {
    if (conn->srv)
        conn->active = conn->srv->tick;
}

static void conn_rd_cb(evutil_socket_t fd, short what, void *arg) {
    sf_conn_t *conn = arg;
    (void)fd;
    (void)what;
    conn_touch(conn);
    conn_busy(conn);
    conn->in_rd = 1;
    conn_read_plain(conn);
    conn->in_rd = 0;
    /* The responses to what was read (answered during the dispatch) go out together. */
    conn_send(conn);
    conn_check_close(conn);
    conn_maybe_resume(conn);
    conn_unbusy(conn);
}

static void conn_wr_cb(evutil_socket_t fd, short what, void *arg) {
    sf_conn_t *conn = arg;
    (void)fd;
    (void)what;
    conn_touch(conn);
    conn_busy(conn);
    if (!conn->dead)
        conn_write_plain(conn);
    conn_check_close(conn);
    conn_maybe_resume(conn);
    conn_unbusy(conn);
}

static void conn_read_cb(struct bufferevent *bev, void *arg) {
    (void)bev;
    conn_touch(arg);
    conn_process(arg);
}

static void conn_write_cb(struct bufferevent *bev, void *arg) {
    sf_conn_t *conn = arg;
    (void)bev;
    conn_touch(conn);
    conn_busy(conn);
    conn_check_close(conn);
    conn_maybe_resume(conn);
    conn_update_cbs(conn);
    conn_unbusy(conn);
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg) {
    sf_conn_t *conn = arg;

    conn_busy(conn);
    if (what & BEV_EVENT_CONNECTED) {
        sf_log(SF_LOG_DEBUG, "NET", "%s: TLS handshake done", conn->peer);
    } else if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
        if (conn->tls && (what & BEV_EVENT_ERROR)) {
            unsigned long e;
            char reason[256] = "";
            /* libevent also queues bare SSL_get_error() codes (no library part); only real
             * OpenSSL errors say something about the peer's TLS. */
            while ((e = bufferevent_get_openssl_error(bev)) != 0)
                if (ERR_GET_LIB(e) != 0)
                    sf_tls_error_string(e, reason, sizeof(reason));
            if (*reason)
                sf_log(SF_LOG_INFO, "NET", "%s: TLS error: %s", conn->peer, reason);
            else
                sf_log(SF_LOG_DEBUG, "NET", "%s: connection error: %s", conn->peer,
                       evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        } else if (what & BEV_EVENT_ERROR) {
            sf_log(SF_LOG_DEBUG, "NET", "%s: connection error: %s", conn->peer,
                   evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        }
        conn_kill(conn);
    }
    conn_unbusy(conn);
}

/* ------------------------------------------------------------------------------------------
 * Responses
 * ------------------------------------------------------------------------------------------ */

/* Owner of a response body handed to libevent by reference in several pieces. */
typedef struct body_ref {
    int refs;
    uint8_t *p;
} body_ref_t;

static void body_ref_cleanup(const void *data, size_t len, void *arg) {
    body_ref_t *br = arg;
    (void)data;
    (void)len;
    if (--br->refs == 0) {
        free(br->p);
        free(br);
    }
}

static void slice_cleanup(const struct evbuffer_file_segment *seg, int flags, void *arg) {
    (void)seg;
    (void)flags;
    sf_log_slice_release(arg);
}

/* Release the log references of splices [from, nsplices) of @body. */
static void release_splices(sf_wbuf_t *body, size_t from) {
    size_t i;
    for (i = from; i < body->nsplices; i++) {
        sf_log_slice_t *sl = body->splices[i].ref;
        if (sl && sl->seg)
            sf_log_slice_release(sl->seg);
    }
}

/* Append @len bytes of the body at @p to @out: copied, or referenced through @br. */
static int add_bytes(struct evbuffer *out, sf_wbuf_t *body, body_ref_t **br, const uint8_t *p,
                     size_t len) {
    if (!len)
        return 0;
    if (body->len < SF_SERVER_REF_MIN)
        return evbuffer_add(out, p, len);
    if (!*br) {
        if (!(*br = malloc(sizeof(**br))))
            return -1;
        (*br)->refs = 1; /* our own, dropped at the end of write_response */
        (*br)->p = body->p;
        body->p = NULL; /* taken over */
    }
    (*br)->refs++;
    if (evbuffer_add_reference(out, p, len, body_ref_cleanup, *br) < 0) {
        (*br)->refs--;
        return -1;
    }
    return 0;
}

/* Read a file range into @out (TLS: OpenSSL needs the bytes in memory). pread, so the file
 * position other code may rely on is untouched. */
static int add_file_copy(struct evbuffer *out, const sf_log_slice_t *sl) {
    struct evbuffer_iovec vec[2];
    int nvec, i;
    size_t got = 0;

    nvec = evbuffer_reserve_space(out, (ev_ssize_t)sl->len, vec, 2);
    if (nvec < 0)
        return -1;
    for (i = 0; i < nvec && got < sl->len; i++) {
        size_t want = vec[i].iov_len < sl->len - got ? vec[i].iov_len : sl->len - got, done = 0;
        while (done < want) {
            ssize_t n = pread(sl->fd, (char *)vec[i].iov_base + done, want - done,
                              (off_t)(sl->pos + (int64_t)(got + done)));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return -1; /* error, or the file is shorter than promised */
            done += (size_t)n;
        }
        vec[i].iov_len = want;
        got += want;
    }
    if (got != sl->len)
        return -1;
    return evbuffer_commit_space(out, vec, nvec);
}

/* Write size + header + body of the response to @out. The splices' references are always
 * released (now or when libevent is done with them). */
static int write_response(sf_conn_t *conn, sf_server_t *srv, const sf_req_t *req, sf_wbuf_t *body,
                          struct evbuffer *out) {
    sf_wbuf_t *hdr = &srv->hdr;
    body_ref_t *br = NULL;
    size_t total, pos = 0, i = 0, before = evbuffer_get_length(out);
    int rc = -1;

    sf_wbuf_reset(hdr);
    sf_wbuf_i32(hdr, 0); /* size, patched below */
    sf_proto_ResponseHeader_encode(hdr, req->hdr.RequestApiKey, req->hdr.RequestApiVersion,
                                   req->hdr.CorrelationId);
    total = hdr->len - 4 + sf_wbuf_total(body);
    if (hdr->err || total > INT32_MAX)
        goto done;
    sf_store_be32(hdr->p, (uint32_t)total);
    if (evbuffer_add(out, hdr->p, hdr->len) < 0)
        goto done;

    for (i = 0; i < body->nsplices; i++) {
        const sf_splice_t *sp = &body->splices[i];
        sf_log_slice_t *sl = sp->ref;
        if (add_bytes(out, body, &br, (br ? br->p : body->p) + pos, sp->at - pos) < 0)
            goto done;
        pos = sp->at;
        if (!sl || sl->len != sp->len) {
            sf_log(SF_LOG_ERR, "NET", "%s: response splice of %zu bytes does not match its file "
                   "range (%zu bytes)", conn->peer, sp->len, sl ? sl->len : 0);
            goto done;
        }
        if (!sl->len) {
            sf_log_slice_release(sl->seg); /* NULL for an empty range; harmless */
            continue;
        }
        if (conn->tls) {
            if (add_file_copy(out, sl) < 0) {
                sf_log(SF_LOG_ERR, "NET", "%s: cannot read %zu bytes at %lld of a log segment: %s",
                       conn->peer, sl->len, (long long)sl->pos, strerror(errno));
                goto done;
            }
            sf_log_slice_release(sl->seg);
        } else {
            struct evbuffer_file_segment *seg =
                evbuffer_file_segment_new(sl->fd, sl->pos, (ev_off_t)sl->len,
                                          EVBUF_FS_DISABLE_LOCKING);
            if (!seg)
                goto done;
            /* From here the segment owns the reference: released when libevent is done. */
            evbuffer_file_segment_add_cleanup_cb(seg, slice_cleanup, sl->seg);
            rc = evbuffer_add_file_segment(out, seg, 0, (ev_off_t)sl->len);
            evbuffer_file_segment_free(seg);
            if (rc < 0) {
                i++;
                goto done;
            }
            rc = -1;
        }
    }
    if (add_bytes(out, body, &br, (br ? br->p : body->p) + pos, body->len - pos) < 0)
        goto done;
    assert(evbuffer_get_length(out) - before == 4 + total);
    (void)before;
    rc = 0;
done:
    if (rc < 0)
        release_splices(body, i);
    if (br)
        body_ref_cleanup(NULL, 0, br);
    return rc;
}

/* Common end of every answer: free the request, write what can be written, reap. An answer
 * is activity: a connection whose request waited longer than the idle time (a long-poll
 * fetch) is not closed just after its answer, before the client could send the next one. */
static void req_finish(sf_req_t *req) {
    sf_conn_t *conn = req->conn;
    conn_touch(conn);
    conn->held -= req->frame_len;
    conn_acct_set(conn, SF_NETLIMIT_HELD, conn->held);
    sf_arena_reset(&req->arena);
    free(req);
    conn->nreqs--;
    conn_flush(conn);
    conn_unbusy(conn);
}

static void respond_here(sf_req_t *req, sf_wbuf_t *body) {
    sf_conn_t *conn = req->conn;
    sf_req_slot_t *slot = req->slot;

    ON_OWNER_THREAD(conn->mb);
    conn_busy(conn);
    slot->state = SLOT_DONE;
    if (body->err && !conn->dead) {
        /* Nothing valid can be sent for this request: answer those before it, then close. */
        sf_log(SF_LOG_ERR, "NET", "%s: response to api %d v%d could not be encoded (%s); closing",
               conn->peer, req->hdr.RequestApiKey, req->hdr.RequestApiVersion,
               sf_err_str(body->err));
        slot->state = SLOT_CLOSE;
        conn_stop_reading(conn);
        release_splices(body, 0);
    } else if (conn->dead || conn->drop_output || !conn->srv) {
        release_splices(body, 0);
    } else {
        /* The head slot writes straight to the socket buffer; a later one waits in its own
         * (which keeps file ranges as such on plaintext connections: it only ever drains into
         * the output). */
        struct evbuffer *out = slot == conn->head ? conn->out : (slot->buf = evbuffer_new());
        if (out && out == slot->buf && !conn->tls)
            evbuffer_set_flags(out, EVBUFFER_FLAG_DRAINS_TO_FD);
        if (!out || write_response(conn, conn->srv, req, body, out) < 0) {
            if (!out)
                release_splices(body, 0);
            sf_log(SF_LOG_WARNING, "NET", "%s: cannot queue the response to api %d v%d; closing",
                   conn->peer, req->hdr.RequestApiKey, req->hdr.RequestApiVersion);
            conn_kill(conn);
        } else if (slot->buf) {
            conn->parked += evbuffer_get_length(slot->buf);
            conn_acct_output(conn);
        }
    }
    sf_wbuf_free(body);
    req_finish(req);
}

static void respond_none_here(sf_req_t *req) {
    ON_OWNER_THREAD(req->conn->mb);
    conn_busy(req->conn);
    req->slot->state = SLOT_DONE;
    req_finish(req);
}

static void close_here(sf_req_t *req) {
    sf_conn_t *conn = req->conn;
    ON_OWNER_THREAD(conn->mb);
    conn_busy(conn);
    sf_log(SF_LOG_DEBUG, "NET", "%s: closing after a malformed request (api %d v%d, client %.*s)",
           conn->peer, req->hdr.RequestApiKey, req->hdr.RequestApiVersion,
           req->hdr.ClientId.len > 0 ? (int)req->hdr.ClientId.len : 0,
           req->hdr.ClientId.len > 0 ? (const char *)req->hdr.ClientId.p : "");
    req->slot->state = SLOT_CLOSE;
    conn_stop_reading(conn);
    req_finish(req);
}

/* An answer from another thread, on its way to the connection's own loop. */
enum { FAR_RESPOND, FAR_NONE, FAR_CLOSE };

static void far_answer_cb(void *arg) {
    sf_req_t *req = arg;
    if (req->far_kind == FAR_RESPOND)
        respond_here(req, &req->far_body);
    else if (req->far_kind == FAR_NONE)
        respond_none_here(req);
    else
        close_here(req);
}

/* Hand an answer given on another thread to the connection's loop (the request carries the
 * mail, so this cannot fail). Returns 1 if posted. */
static int post_far(sf_req_t *req, sf_wbuf_t *body, int kind) {
    if (!req->conn->mb || sf_mailbox_is_owner(req->conn->mb))
        return 0;
    req->far_kind = kind;
    sf_wbuf_init(&req->far_body);
    if (body) {
        req->far_body = *body; /* moved: the splices' references go along */
        sf_wbuf_init(body);
    }
    req->far.fn = far_answer_cb;
    req->far.arg = req;
    req->far.heap = 0;
    sf_mailbox_put(req->conn->mb, &req->far);
    return 1;
}

void sf_req_respond(sf_req_t *req, sf_wbuf_t *body) {
    if (!post_far(req, body, FAR_RESPOND))
        respond_here(req, body);
}

void sf_req_respond_none(sf_req_t *req) {
    if (!post_far(req, NULL, FAR_NONE))
        respond_none_here(req);
}

void sf_req_close(sf_req_t *req) {
    if (!post_far(req, NULL, FAR_CLOSE))
        close_here(req);
}

int sf_req_post(sf_req_t *req, sf_mail_t *m) {
    if (!req->conn->mb || sf_mailbox_is_owner(req->conn->mb))
        return 0;
    sf_mailbox_put(req->conn->mb, m);
    return 1;
}

const char *sf_conn_peer(const sf_conn_t *conn) {
    return conn->peer;
}

void sf_conn_jobs_add(sf_conn_t *conn, int delta) {
    atomic_fetch_add_explicit(&conn->jobs, delta, memory_order_acq_rel);
}

int sf_conn_jobs(const sf_conn_t *conn) {
    return atomic_load_explicit(&conn->jobs, memory_order_acquire);
}

int sf_conn_is_tls(const sf_conn_t *conn) {
    return conn->tls;
}

int sf_conn_closed(const sf_conn_t *conn) {
    return conn->dead || conn->drop_output;
}

const char *sf_conn_listener(const sf_conn_t *conn) {
    return conn->listener;
}

/* ------------------------------------------------------------------------------------------
 * Connections handed over by the acceptor
 * ------------------------------------------------------------------------------------------ */

/* Give up a connection that sf_server_adopt counted in the limits. */
static void adopt_abort(sf_server_t *srv, sf_conn_t *conn, int fd) {
    if (srv->nl)
        sf_netlimit_conn_close(srv->nl, (struct sockaddr *)&conn->sa);
    evutil_closesocket(fd);
    free(conn);
}

int sf_server_adopt(sf_server_t *srv, int fd, const struct sockaddr *sa, const char *listener,
                    SSL_CTX *tls_ctx) {
    sf_conn_t *conn;
    char peer[INET6_ADDRSTRLEN + 10];
    int one = 1, rc = SF_ERR_STATE;

    ON_OWNER_THREAD(srv->mb);
    sf_acceptor_format_addr(sa, peer, sizeof(peer));
    /* max.connections and max.connections.per.ip: refused before anything is set up. */
    if (srv->quiesced || (srv->nl && (rc = sf_netlimit_conn_open(srv->nl, sa, peer)) != SF_OK)) {
        if (rc != SF_ERR_STATE)
            sf_log(SF_LOG_DEBUG, "NET", "%s: connection refused: too many connections", peer);
        evutil_closesocket(fd);
        if (tls_ctx)
            SSL_CTX_free(tls_ctx);
        return rc;
    }
    /* Requests and responses are whole frames written at once: no Nagle delay. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    conn = calloc(1, sizeof(*conn));
    if (!conn) {
        if (srv->nl)
            sf_netlimit_conn_close(srv->nl, sa);
        evutil_closesocket(fd);
        if (tls_ctx)
            SSL_CTX_free(tls_ctx);
        return SF_ERR_NOMEM;
    }
    memcpy(conn->peer, peer, sizeof(peer));
    memcpy(&conn->sa, sa, sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                    : sizeof(struct sockaddr_in));
    conn->nl = srv->nl;
    conn->gkind = -1;
    snprintf(conn->listener, sizeof(conn->listener), "%s", listener);
    conn->tls = tls_ctx != NULL;
    conn->mb = srv->mb;
    conn->max_request = srv->max_request;
    conn->fd = fd;
    if (tls_ctx) {
        SSL *ssl = SSL_new(tls_ctx);
        SSL_CTX_free(tls_ctx); /* the session holds its own reference */
        if (!ssl) {
            sf_log(SF_LOG_WARNING, "NET", "%s: cannot create a TLS session; closing", conn->peer);
            adopt_abort(srv, conn, fd);
            return SF_ERR_NOMEM;
        }
        /* Deferred callbacks: OpenSSL bufferevents can report errors from inside a write, and
         * our callbacks must never run nested in our own code. */
        conn->bev = bufferevent_openssl_socket_new(srv->base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                                   BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
        if (conn->bev) /* clients often close without a TLS close_notify */
            bufferevent_openssl_set_allow_dirty_shutdown(conn->bev, 1);
        else
            SSL_free(ssl);
        if (!conn->bev) {
            sf_log(SF_LOG_WARNING, "NET", "%s: cannot set up the connection; closing",
                   conn->peer);
            adopt_abort(srv, conn, fd);
            return SF_ERR_NOMEM;
        }
        conn->in = bufferevent_get_input(conn->bev);
        conn->out = bufferevent_get_output(conn->bev);
        bufferevent_set_max_single_read(conn->bev, SF_SERVER_MAX_READ);
        bufferevent_setwatermark(conn->bev, EV_WRITE, SF_SERVER_RESUME_OUTPUT, 0);
        conn_update_cbs(conn);
        bufferevent_enable(conn->bev, EV_WRITE);
    } else {
        /* Own socket I/O: see conn_read_plain and conn_write_plain. */
        conn->lowat = 1;
        conn->rdev = event_new(srv->base, fd, EV_READ | EV_PERSIST, conn_rd_cb, conn);
        conn->wrev = event_new(srv->base, fd, EV_WRITE | EV_PERSIST, conn_wr_cb, conn);
        conn->in = evbuffer_new();
        conn->out = evbuffer_new();
        /* DRAINS_TO_FD: file segments added to the output stay file ranges (sendfile). */
        if (!conn->rdev || !conn->wrev || !conn->in || !conn->out ||
            evbuffer_set_flags(conn->out, EVBUFFER_FLAG_DRAINS_TO_FD) < 0 ||
            evutil_make_socket_nonblocking(fd) < 0) {
            sf_log(SF_LOG_WARNING, "NET", "%s: cannot set up the connection; closing",
                   conn->peer);
            if (conn->rdev)
                event_free(conn->rdev);
            if (conn->wrev)
                event_free(conn->wrev);
            if (conn->in)
                evbuffer_free(conn->in);
            if (conn->out)
                evbuffer_free(conn->out);
            adopt_abort(srv, conn, fd);
            return SF_ERR_NOMEM;
        }
    }
    /* Only counted: a failure is harmless. */
    conn->out_cb = evbuffer_add_cb(conn->out, conn_out_cb, conn);
    conn->srv = srv;
    conn->active = srv->tick;
    conn->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = conn;
    srv->conns = conn;
    srv->nconns++;
    conn_read_enable(conn);
    sf_log(SF_LOG_DEBUG, "NET", "%s: connection accepted on %s", conn->peer, listener);
    return SF_OK;
}

/* Close connections that moved no bytes for connections.max.idle.ms and have no request in
 * flight (a parked long-poll fetch is in flight). A TLS handshake that never finishes is idle
 * too. */
static void idle_check_cb(evutil_socket_t fd, short what, void *arg) {
    sf_server_t *srv = arg;
    sf_conn_t *conn, *next;
    (void)fd;
    (void)what;
    srv->tick = sf_clock_mono_ms();
    for (conn = srv->conns; conn; conn = next) {
        next = conn->next;
        if (srv->tick - conn->active < srv->idle_ms || conn->nslots > 0 ||
            (conn->out && evbuffer_get_length(conn->out) > 0))
            continue;
        sf_log(SF_LOG_DEBUG, "NET", "%s: idle for %lld ms; closing", conn->peer,
               (long long)(srv->tick - conn->active));
        conn_busy(conn);
        conn_kill(conn);
        conn_unbusy(conn);
    }
}

/* A total of the limits across workers fell (any worker's thread posted this to ours): the
 * connections paused at a cap look again. */
static void srv_wake_cb(void *arg) {
    sf_server_t *srv = arg;
    sf_conn_t *conn, *next;
    ON_OWNER_THREAD(srv->mb);
    for (conn = srv->conns; conn; conn = next) {
        next = conn->next;
        if (!conn->paused || conn->gkind < 0)
            continue;
        conn_busy(conn);
        conn_maybe_resume(conn);
        conn_unbusy(conn);
    }
}

int sf_server_new(struct event_base *base, const sf_brokercfg_t *cfg, sf_netlimit_t *nl,
                  sf_server_dispatch_fn fn, void *arg, sf_mailbox_t *mb, sf_server_t **out) {
    sf_server_t *srv;

    *out = NULL;
    srv = calloc(1, sizeof(*srv));
    if (!srv)
        return SF_ERR_NOMEM;
    srv->base = base;
    srv->fn = fn;
    srv->arg = arg;
    srv->mb = mb;
    srv->max_request = (size_t)cfg->socket_request_max_bytes;
    srv->idle_ms = cfg->connections_max_idle_ms;
    srv->tick = sf_clock_mono_ms();
    sf_wbuf_init(&srv->hdr);
    /* Woken from other threads through the mailbox: without one, no cross-worker limits. */
    if (nl && mb) {
        srv->nl = nl;
        if (!(srv->waiter = sf_netlimit_waiter_new(nl, mb, srv_wake_cb, srv))) {
            sf_server_free(srv);
            return SF_ERR_NOMEM;
        }
    }
    if (srv->idle_ms >= 0) {
        int64_t every = srv->idle_ms / SF_SERVER_IDLE_CHECKS;
        struct timeval tv;
        every = every < SF_SERVER_IDLE_CHECK_MIN_MS ? SF_SERVER_IDLE_CHECK_MIN_MS
              : every > SF_SERVER_IDLE_CHECK_MAX_MS ? SF_SERVER_IDLE_CHECK_MAX_MS
                                                    : every;
        tv.tv_sec = (time_t)(every / 1000);
        tv.tv_usec = (suseconds_t)(every % 1000) * 1000;
        srv->idle_timer = event_new(base, -1, EV_PERSIST, idle_check_cb, srv);
        if (!srv->idle_timer || event_add(srv->idle_timer, &tv) < 0) {
            sf_server_free(srv);
            return SF_ERR_NOMEM;
        }
    }
    *out = srv;
    return SF_OK;
}

void sf_server_quiesce(sf_server_t *srv) {
    sf_conn_t *conn;
    srv->quiesced = 1;
    for (conn = srv->conns; conn; conn = conn->next)
        conn_pause(conn);
}

size_t sf_server_nconns(const sf_server_t *srv) {
    return srv->nconns;
}

void sf_server_free(sf_server_t *srv) {
    if (!srv)
        return;
    if (srv->idle_timer)
        event_free(srv->idle_timer);
    while (srv->conns) {
        sf_conn_t *conn = srv->conns;
        conn_busy(conn);
        conn_kill(conn); /* unlinks it */
        conn_unbusy(conn); /* frees it unless the handler still holds requests */
    }
    sf_wbuf_free(&srv->hdr);
    sf_netlimit_waiter_free(srv->nl, srv->waiter);
    free(srv);
}
