/* The request context: answers, parking, arena helpers and lookups for the handlers. */
#include "kreq.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "brokercfg.h"
#include "log.h"
#include "logging.h"

char *sf_kreq_str(sf_kreq_t *kr, sf_slice_t s) {
    char *r;
    if (s.len < 0)
        return NULL;
    r = sf_arena_alloc(kr->arena, (size_t)s.len + 1);
    if (r && s.len)
        memcpy(r, s.p, (size_t)s.len);
    return r;
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

/* The request is answered: drop the snapshot. The context lives in the arena the server
 * frees with the request. */
static void kreq_end(sf_kreq_t *kr) {
    sf_cluster_snapshot_unref(kr->snap);
    kr->snap = NULL;
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
    sf_req_respond(req, &wb); /* takes the body; an encoding error closes the connection */
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
    sf_cluster_snapshot_t *now = sf_broker_snapshot(kr->b);
    if (now == kr->snap)
        return;
    sf_cluster_snapshot_ref(now);
    sf_cluster_snapshot_unref(kr->snap);
    kr->snap = now;
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

struct sf_log *sf_kreq_leader_log(sf_kreq_t *kr, const char *topic, int32_t partition,
                                  sf_kerr_t *err) {
    const sf_cluster_partition_t *part = sf_kreq_partition(kr, topic, partition);
    sf_log_t *log;
    if (!part) {
        *err = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        return NULL;
    }
    if (part->leader != sf_broker_cfg(kr->b)->broker_id ||
        !(log = sf_broker_log(kr->b, topic, partition))) {
        *err = SF_KERR_NOT_LEADER_OR_FOLLOWER;
        return NULL;
    }
    *err = SF_KERR_NONE;
    return log;
}
