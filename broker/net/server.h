/* The client connections of one network worker (worker.h): sockets handed over by the
 * acceptor (acceptor.h), Kafka frames (i32 size + request) read, each request header decoded
 * and the request handed to a dispatch function. Responses go out strictly in request order on each connection, whatever order the
 * handler answers them in (every request owns a response slot in a per-connection queue).
 *
 * Limits: a frame whose size is < 8 or > socket.request.max.bytes closes the connection before
 * anything of that size is allocated; the buffer of a frame grows with the bytes that arrive,
 * not with the size it announces. A header that does not decode closes the connection too
 * (after the responses to earlier requests are written). A connection stops reading while it
 * has SF_SERVER_MAX_INFLIGHT requests unanswered, SF_SERVER_MAX_HELD bytes of requests in the
 * handlers' hands or more than SF_SERVER_MAX_PENDING_OUTPUT bytes of responses queued, and
 * resumes when they drain. Across the connections of every worker, the caps of netlimit.h
 * (queued.max.request.bytes, queued.max.response.bytes, max.connections and
 * max.connections.per.ip) apply as well.
 *
 * Lifetimes: a request (sf_req_t) lives from dispatch until exactly one of sf_req_respond,
 * sf_req_respond_none or sf_req_close is called on it. A connection whose peer went away stays
 * allocated (marked closed) until its last request is answered; answers to it are dropped.
 * Threading: a connection lives on its worker's loop for life, and every function here runs
 * there, except that sf_req_respond, sf_req_respond_none and sf_req_close may be called from
 * any thread: an answer given elsewhere (a request handled on the metadata thread) is posted
 * to the worker's mailbox and delivered there. */
#ifndef SF_SERVER_H
#define SF_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "mailbox.h"
#include "proto.h"

#include <openssl/ssl.h>

struct event_base;
struct sockaddr;
struct sf_brokercfg;
struct sf_netlimit;

/* Unanswered requests per connection before it stops reading. */
#define SF_SERVER_MAX_INFLIGHT 1000
/* Bytes of responses queued on a connection (socket output + responses waiting for an earlier
 * one) before it stops reading. */
#define SF_SERVER_MAX_PENDING_OUTPUT (64 * 1024 * 1024)
/* Frame bytes of the requests of one connection still being handled (appends queued for the
 * I/O threads hold their frames) before it stops reading. */
#define SF_SERVER_MAX_HELD (32 * 1024 * 1024)
/* Cap on the arena of one request (decoded structures), as a multiple of the frame size plus a
 * constant; the handler sees allocation failures past it. */
#define SF_SERVER_ARENA_LIMIT(frame_len) ((size_t)(frame_len) * 8 + 1024 * 1024)

typedef struct sf_server sf_server_t;
typedef struct sf_conn sf_conn_t;
typedef struct sf_req_slot sf_req_slot_t;

/* One request, from its frame to its response. */
typedef struct sf_req {
    sf_conn_t *conn;              /* the connection (borrowed; may be closed, see sf_conn_closed) */
    sf_proto_RequestHeader_t hdr; /* decoded header; ClientId points into frame */
    sf_rbuf_t body;               /* positioned just after the header, over the frame */
    uint8_t *frame;               /* the request bytes after the size prefix, owned by the request,
                                     mutable (Produce rewrites offsets in place) */
    size_t frame_len;
    sf_arena_t arena; /* for decoded structs; freed with the request */
    /* private */
    sf_req_slot_t *slot;
    sf_mail_t far;       /* an answer given on another thread, posted to the connection's */
    sf_wbuf_t far_body;
    int far_kind;
} sf_req_t;

/* Called once per request, on the event-loop thread, from the connection's read callback. The
 * function takes ownership of @req: it must eventually call exactly one of sf_req_respond,
 * sf_req_respond_none or sf_req_close (right away or later, e.g. from a timer). */
typedef void (*sf_server_dispatch_fn)(sf_req_t *req, void *arg);

/* A set of connections on @base (the worker's loop; @mb its mailbox, borrowed, or NULL when
 * every answer comes from that loop). @cfg is borrowed during the call (request size and idle
 * limits). @nl, borrowed for the server's life, holds the limits shared with the other
 * workers' servers (netlimit.h); NULL, or no @mb: none. @fn(@arg) gets every request. Returns
 * SF_OK with *out, or SF_ERR_NOMEM. */
int sf_server_new(struct event_base *base, const struct sf_brokercfg *cfg, struct sf_netlimit *nl,
                  sf_server_dispatch_fn fn, void *arg, sf_mailbox_t *mb, sf_server_t **out);

/* Take over the accepted socket @fd (owned from now on, also on failure) from listener
 * @listener (copied); @tls_ctx is the listener's TLS context (one reference, taken over) or
 * NULL for plaintext. @sa is the peer address. Returns SF_OK, or with the socket closed
 * SF_ERR_TOOLARGE (max.connections or max.connections.per.ip reached), SF_ERR_STATE (shutting
 * down) or SF_ERR_NOMEM. */
int sf_server_adopt(sf_server_t *srv, int fd, const struct sockaddr *sa, const char *listener,
                    SSL_CTX *tls_ctx);

/* Stop reading requests on every connection, for good (the first step of shutdown: the
 * answers to what was read still go out). */
void sf_server_quiesce(sf_server_t *srv);

/* Number of open client connections. */
size_t sf_server_nconns(const sf_server_t *srv);

/* Close every connection and free the server (NULL is fine). Requests still held by
 * the handler stay valid: answering them later just frees them. */
void sf_server_free(sf_server_t *srv);

/* Send the response to @req and free @req. @body is the response body (after the response
 * header): the server writes the 4-byte size, the response header
 * (sf_proto_ResponseHeader_encode with req->hdr's key, version and correlation id), then the
 * body. Each splice of @body has ref = (sf_log_slice_t *): its file range is sent from the file
 * (sendfile on plaintext connections, read into memory on TLS ones) and the slice's segment
 * reference is released (sf_log_slice_release) when no longer needed, also when the response is
 * dropped; the sf_log_slice_t structs themselves are only read during the call. The server
 * takes over the contents of @body (it is left empty and may be reused or sf_wbuf_free'd). If
 * body->err is set (encoding failed), nothing is sent for @req and the connection is closed
 * after the responses before it, as with sf_req_close. If the connection is closed, the
 * response is dropped. */
void sf_req_respond(sf_req_t *req, sf_wbuf_t *body);

/* No response (Produce with acks=0): free @req and its response slot. */
void sf_req_respond_none(sf_req_t *req);

/* Malformed request: the connection is closed once the responses to the requests before it have
 * been written; responses to later requests are dropped. Frees @req. */
void sf_req_close(sf_req_t *req);

/* Run @m on the thread of @req's connection: posted to its loop and 1 returned when called
 * from another thread; 0 (nothing done: the caller runs it) on that thread. */
int sf_req_post(sf_req_t *req, sf_mail_t *m);

/* "127.0.0.1:54321" or "[::1]:54321" (owned by @conn). */
const char *sf_conn_peer(const sf_conn_t *conn);

/* Jobs of the connection's requests queued on the I/O threads (the request context keeps the
 * count, so that later work of the connection queues behind them). Any thread. */
void sf_conn_jobs_add(sf_conn_t *conn, int delta);
int sf_conn_jobs(const sf_conn_t *conn);

/* 1 for a connection accepted on an SSL listener. */
int sf_conn_is_tls(const sf_conn_t *conn);

/* 1 once answers on this connection are dropped (its peer left, or it is closing after a
 * malformed request ahead of this one): a waiting request may be answered early. */
int sf_conn_closed(const sf_conn_t *conn);

/* Name of the listener the connection came in on ("PLAINTEXT", "SSL"; owned by the server). */
const char *sf_conn_listener(const sf_conn_t *conn);

#endif
