/* The request context: answers, parking, arena helpers and lookups for the handlers. */
#include "kreq.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brokercfg.h"
#include "clock.h"
#include "log.h"
#include "logging.h"
#include "metrics.h"
#include "znode.h"

char *sf_kreq_str(sf_kreq_t *kr, sf_slice_t s) {
    char *r;
    if (s.len < 0)
        return NULL;
    r = sf_arena_alloc(kr->arena, (size_t)s.len + 1);
    if (r && s.len)
        memcpy(r, s.p, (size_t)s.len);
    if (r)
        sf_kreq_nul_mark(r, (size_t)s.len);
    return r;
}

void sf_kreq_nul_mark(char *s, size_t len) {
    char *z;
    while ((z = memchr(s, '\0', len)) != NULL)
        *z = SF_KREQ_NUL_MARK;
    s[len] = '\0';
}

sf_slice_t sf_kreq_slice(sf_kreq_t *kr, const char *s) {
    sf_slice_t sl = {NULL, 0};
    size_t n = strlen(s);
    char *r = sf_arena_alloc(kr->arena, n + 1);
    if (r) {
        memcpy(r, s, n + 1);
        sl.p = (const uint8_t *)r;
        sl.len = (int32_t)n;
    }
    return sl;
}

const char *sf_kreq_printf(sf_kreq_t *kr, const char *fmt, ...) {
    char buf[512], *r;
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    r = sf_arena_alloc(kr->arena, strlen(buf) + 1);
    if (r)
        memcpy(r, buf, strlen(buf) + 1);
    return r;
}

void *sf_kreq_alloc(sf_kreq_t *kr, size_t n, size_t size) {
    return sf_arena_calloc(kr->arena, n + 1, size);
}

/* The request is answered: drop the view. The context lives in the arena the server frees
 * with the request. */
static void kreq_end(sf_kreq_t *kr) {
    sf_metrics_request(kr->api_key, kr->version, sf_clock_mono_us() - kr->start_us);
    sf_view_unref(kr->view);
    kr->view = NULL;
    kr->snap = NULL;
}

/* The I/O thread of a connection: all its jobs run there, in the order it sent them, so a
 * client's appends to a partition keep their order, and one connection's requests wake one
 * thread rather than one per partition. */
static uint64_t conn_key(const sf_conn_t *conn) {
    return ((uint64_t)(uintptr_t)conn * 0x9E3779B97F4A7C15ull) >> 32;
}

/* A response with log ranges to a TLS connection: the ranges are read into memory on an I/O
 * thread (a plaintext connection sends them from the file with sendfile instead). */
typedef struct tls_read {
    sf_mail_t mail;
    sf_req_t *req;
    sf_wbuf_t body;
} tls_read_t;

static int read_slice(void *ref, uint8_t *dst, size_t len) {
    const sf_log_slice_t *sl = ref;
    return sl->len == len ? sf_log_slice_copy(sl, dst) : SF_ERR_INVALID;
}

static void tls_read_run(void *arg) {
    tls_read_t *tr = arg;
    size_t i, n = tr->body.nsplices;
    int rc = sf_wbuf_inline_splices(&tr->body, read_slice);
    for (i = 0; i < n; i++)
        sf_log_slice_release(((sf_log_slice_t *)tr->body.splices[i].ref)->seg);
    if (rc != SF_OK) {
        sf_log(SF_LOG_ERR, "STORAGE", "%s: cannot read the log ranges of a response: %s",
               sf_conn_peer(tr->req->conn), sf_err_str(rc));
        tr->body.err = rc; /* closes the connection after the responses before it */
    }
    tr->body.nsplices = 0;
    sf_req_respond(tr->req, &tr->body);
    sf_wbuf_free(&tr->body);
    free(tr);
}

/* Send @body, reading its log ranges on an I/O thread first for a TLS connection. */
static void send_body(sf_kreq_t *kr, sf_req_t *req, sf_wbuf_t *body) {
    tls_read_t *tr;
    if (body->nsplices && !body->err && sf_conn_is_tls(req->conn) &&
        (tr = calloc(1, sizeof(*tr)))) {
        tr->req = req;
        tr->body = *body; /* moved */
        sf_wbuf_init(body);
        tr->mail.fn = tls_read_run;
        tr->mail.arg = tr;
        sf_iopool_submit(sf_broker_io(kr->b), conn_key(req->conn), &tr->mail);
        return;
    }
    sf_req_respond(req, body); /* takes the body; an encoding error closes the connection */
}

void sf_kreq_respond(sf_kreq_t *kr, const void *resp) {
    const sf_proto_spec_t *spec = sf_proto_spec_get(kr->api_key);
    sf_req_t *req = kr->req;
    sf_wbuf_t wb;
    int rc;
    sf_wbuf_init(&wb);
    rc = spec->ResponseEncode(&wb, kr->version, resp);
    if (rc != SF_OK) {
        sf_log(SF_LOG_ERR, "PROTOERR", "%s: the %s v%d response does not encode (%s)",
               sf_conn_peer(req->conn), spec->Name, kr->version, sf_err_str(rc));
        if (!wb.err)
            wb.err = rc;
    }
    kreq_end(kr);
    send_body(kr, req, &wb);
    sf_wbuf_free(&wb);
}

void sf_kreq_respond_none(sf_kreq_t *kr) {
    sf_req_t *req = kr->req;
    kreq_end(kr);
    sf_req_respond_none(req);
}

void sf_kreq_close(sf_kreq_t *kr, const char *why) {
    sf_req_t *req = kr->req;
    sf_log(SF_LOG_INFO, "PROTOERR", "%s: %s v%d from client %s: %s; closing the connection",
           sf_conn_peer(req->conn), sf_proto_api_name(kr->api_key), kr->version, kr->client_id,
           why);
    kreq_end(kr);
    sf_req_close(req);
}

sf_pwait_t *sf_kreq_park(sf_kreq_t *kr, const sf_pkey_t *keys, int nkeys, int64_t timeout_ms,
                         sf_pwait_attempt_fn attempt, void *arg) {
    return sf_purgatory_park(sf_broker_purgatory(kr->b), keys, nkeys, timeout_ms, attempt, arg);
}

void sf_kreq_home(sf_kreq_t *kr, sf_mail_t *m, void (*fn)(void *arg), void *arg) {
    m->fn = fn;
    m->arg = arg;
    m->heap = 0;
    if (!sf_req_post(kr->req, m))
        fn(arg);
}

void sf_kreq_jobs_begin(sf_kreq_t *kr, void (*done)(sf_kreq_t *kr, void *arg), void *arg) {
    atomic_init(&kr->jobs, 1);
    kr->jobs_done = done;
    kr->jobs_arg = arg;
}

static void job_finished(sf_kreq_t *kr) {
    if (atomic_fetch_sub_explicit(&kr->jobs, 1, memory_order_acq_rel) == 1)
        kr->jobs_done(kr, kr->jobs_arg);
}

/* Appends run on the network thread while the page cache takes them at memory speed: the
 * data was just received there and is still in its cache, and handing it over costs more than
 * the copy (measured: bench/compare). Once one append took APPEND_SLOW_MS (the kernel
 * throttles writers when write-back falls behind), appends go to the I/O threads for the next
 * APPEND_OFFLOAD_MS, so that the network threads keep receiving and answering. The disk is
 * shared, so this is one state for the process. */
#define APPEND_SLOW_MS 10
#define APPEND_OFFLOAD_MS 1000
static _Atomic int64_t offload_until_ms;

static void append_timed(sf_kjob_t *job) {
    int64_t t0 = sf_clock_mono_ms(), dt;
    job->fn(job);
    dt = sf_clock_mono_ms() - t0;
    if (dt < APPEND_SLOW_MS)
        return;
    if (atomic_exchange_explicit(&offload_until_ms, t0 + dt + APPEND_OFFLOAD_MS,
                                 memory_order_relaxed) < t0)
        sf_log(SF_LOG_INFO, "STORAGE", "an append to %s-%d took %lld ms: appends go to the I/O "
               "threads for a while", sf_log_topic(job->part->log), sf_log_partition(job->part->log),
               (long long)dt);
}

/* On an I/O thread. */
static void job_run(void *arg) {
    sf_kjob_t *job = arg;
    sf_kreq_t *kr = job->kr;
    if (job->append)
        append_timed(job);
    else
        job->fn(job);
    /* Before the answer: the connection lives until its requests are answered. */
    sf_conn_jobs_add(kr->req->conn, -1);
    job_finished(kr); /* may answer: @job may be gone after */
}

static void job_init(sf_kreq_t *kr, sf_kjob_t *job, sf_partition_t *part, sf_kjob_fn fn,
                     void *arg, int append) {
    job->kr = kr;
    job->part = part;
    job->fn = fn;
    job->arg = arg;
    job->append = append;
    job->mail.fn = job_run;
    job->mail.arg = job;
    job->mail.heap = 0;
    atomic_fetch_add_explicit(&kr->jobs, 1, memory_order_relaxed);
}

void sf_kreq_job_submit(sf_kreq_t *kr, sf_kjob_t *job, sf_partition_t *part, sf_kjob_fn fn,
                        void *arg) {
    job_init(kr, job, part, fn, arg, 0);
    sf_conn_jobs_add(kr->req->conn, 1);
    sf_iopool_submit(sf_broker_io(kr->b), conn_key(kr->req->conn), &job->mail);
}

void sf_kreq_append_submit(sf_kreq_t *kr, sf_kjob_t *job, sf_partition_t *part, sf_kjob_fn fn,
                           void *arg) {
    /* Inline only behind nothing of this connection's: its appends keep their order. */
    if (sf_conn_jobs(kr->req->conn) > 0 ||
        atomic_load_explicit(&offload_until_ms, memory_order_relaxed) > sf_clock_mono_ms()) {
        job_init(kr, job, part, fn, arg, 1);
        sf_conn_jobs_add(kr->req->conn, 1);
        sf_iopool_submit(sf_broker_io(kr->b), conn_key(kr->req->conn), &job->mail);
        return;
    }
    job_init(kr, job, part, fn, arg, 1);
    append_timed(job);
    job_finished(kr);
}

void sf_kreq_jobs_end(sf_kreq_t *kr) {
    job_finished(kr);
}

int sf_kreq_conn_closed(const sf_kreq_t *kr) {
    return sf_conn_closed(kr->req->conn);
}

const char *sf_kreq_peer(const sf_kreq_t *kr) {
    return sf_conn_peer(kr->req->conn);
}

const char *sf_kreq_listener(const sf_kreq_t *kr) {
    return sf_conn_listener(kr->req->conn);
}

void sf_kreq_refresh(sf_kreq_t *kr) {
    sf_view_t *now = sf_broker_view(kr->b);
    if (now == kr->view)
        return;
    sf_view_ref(now);
    sf_view_unref(kr->view);
    kr->view = now;
    kr->snap = now ? now->snap : NULL;
}

const sf_topiccfg_ctx_t *sf_kreq_topiccfg(const sf_kreq_t *kr) {
    return kr->view ? &kr->view->topiccfg : &kr->static_cfg;
}

const sf_cluster_topic_t *sf_kreq_topic(const sf_kreq_t *kr, const char *name) {
    return kr->snap && name ? sf_cluster_snapshot_topic(kr->snap, name) : NULL;
}

const sf_cluster_partition_t *sf_kreq_partition(const sf_kreq_t *kr, const char *topic,
                                                int32_t partition) {
    const sf_cluster_topic_t *t = sf_kreq_topic(kr, topic);
    if (!t || partition < 0 || partition >= t->npartitions)
        return NULL;
    return &t->partitions[partition];
}

const sf_cluster_topic_t *sf_kreq_topic_by_id(const sf_kreq_t *kr, const sf_uuid_t *id) {
    return sf_cluster_snapshot_topic_by_id(kr->snap, id->b);
}

sf_partition_t *sf_kreq_leader(sf_kreq_t *kr, const char *topic, int32_t partition,
                               sf_kerr_t *err) {
    const sf_cluster_partition_t *part = sf_kreq_partition(kr, topic, partition);
    sf_partition_t *p;
    if (!part) {
        /* A name no topic can have (a NUL inside, say) is refused as such. */
        *err = topic && !sf_znode_topic_name_valid(topic) ? SF_KERR_INVALID_TOPIC_EXCEPTION
                                                          : SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        return NULL;
    }
    if (part->leader != sf_broker_cfg(kr->b)->broker_id ||
        !(p = sf_view_partition(kr->view, topic, partition))) {
        *err = SF_KERR_NOT_LEADER_OR_FOLLOWER;
        return NULL;
    }
    *err = SF_KERR_NONE;
    return p;
}
