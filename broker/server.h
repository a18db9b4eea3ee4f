/* Listeners and client connections (libevent, one event-loop thread).
 *
 * The server binds every listener of the configuration (PLAINTEXT or SSL), reads Kafka frames
 * (i32 size + request), decodes each request header and hands the request to a dispatch
 * function. Responses go out strictly in request order on each connection, whatever order the
 * handler answers them in (every request owns a response slot in a per-connection queue).
 *
 * Limits: a frame whose size is < 8 or > socket.request.max.bytes closes the connection before
 * anything of that size is allocated; a header that does not decode closes it too (after the
 * responses to earlier requests are written). A connection stops reading while it has
 * SF_SERVER_MAX_INFLIGHT requests unanswered or more than SF_SERVER_MAX_PENDING_OUTPUT bytes of
 * responses queued, and resumes when they drain.
 *
 * Lifetimes: a request (sf_req_t) lives from dispatch until exactly one of sf_req_respond,
 * sf_req_respond_none or sf_req_close is called on it. A connection whose peer went away stays
 * allocated (marked closed) until its last request is answered; answers to it are dropped.
 * All functions must be called from the event-loop thread. */
#ifndef SF_SERVER_H
#define SF_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "proto.h"

struct event_base;
struct sf_brokercfg;

/* Unanswered requests per connection before it stops reading. */
#define SF_SERVER_MAX_INFLIGHT 1000
/* Bytes of responses queued on a connection (socket output + responses waiting for an earlier
 * one) before it stops reading. */
#define SF_SERVER_MAX_PENDING_OUTPUT (64 * 1024 * 1024)
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
} sf_req_t;

/* Called once per request, on the event-loop thread, from the connection's read callback. The
 * function takes ownership of @req: it must eventually call exactly one of sf_req_respond,
 * sf_req_respond_none or sf_req_close (right away or later, e.g. from a timer). */
typedef void (*sf_server_dispatch_fn)(sf_req_t *req, void *arg);

/* Bind every listener of @cfg (SO_REUSEADDR; an empty host binds 0.0.0.0) and create the TLS
 * context for SSL listeners from cfg->ssl_*. @base, @cfg and @arg are borrowed (@cfg only during
 * the call). Returns SF_OK with *out set, or SF_ERR_IO / SF_ERR_INVALID / SF_ERR_NOMEM with one
 * sentence in @errstr naming the listener and the reason (e.g. "listener PLAINTEXT://:9092:
 * cannot bind 0.0.0.0:9092: Address already in use"). */
int sf_server_new(struct event_base *base, const struct sf_brokercfg *cfg, sf_server_dispatch_fn fn,
                  void *arg, sf_server_t **out, char *errstr, size_t errstr_size);

/* The port listener @i (index in cfg->listeners) is bound to: the configured port, or the one
 * the system chose for port 0. -1 if @i is out of range or the listener is closed. */
int sf_server_port(const sf_server_t *srv, size_t i);

/* Reload the TLS context from @cfg's ssl.* keys (SIGHUP certificate rotation). New connections
 * use the new context; established ones keep theirs. On error the old context stays in use and
 * a sentence is written to @errstr. Returns SF_OK, or an error. */
int sf_server_reload_tls(sf_server_t *srv, const struct sf_brokercfg *cfg, char *errstr,
                         size_t errstr_size);

/* Close the listening sockets (controlled shutdown); established connections stay. */
void sf_server_stop_accepting(sf_server_t *srv);

/* Number of open client connections. */
size_t sf_server_nconns(const sf_server_t *srv);

/* Close every connection and listener and free the server (NULL is fine). Requests still held by
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

/* "127.0.0.1:54321" or "[::1]:54321" (owned by @conn). */
const char *sf_conn_peer(const sf_conn_t *conn);

/* 1 for a connection accepted on an SSL listener. */
int sf_conn_is_tls(const sf_conn_t *conn);

/* 1 once answers on this connection are dropped (its peer left, or it is closing after a
 * malformed request ahead of this one): a waiting request may be answered early. */
int sf_conn_closed(const sf_conn_t *conn);

/* Name of the listener the connection came in on ("PLAINTEXT", "SSL"; owned by the server). */
const char *sf_conn_listener(const sf_conn_t *conn);

#endif
