/* Requests to a coordinator (coord.h). */
#include "coord.h"

#include <time.h>

#include "cgroup.h"
#include "clientconf.h"
#include "clock.h"
#include "proto.h"

int sf_coord_ms_left(int64_t deadline) {
    int64_t left = deadline - sf_clock_mono_ms();
    return left > 0 ? (int)left : 0;
}

void sf_coord_backoff(sf_client_t *cl, int64_t deadline) {
    int ms = sf_client_conf(cl)->retry_backoff_ms, left = sf_coord_ms_left(deadline);
    struct timespec ts;
    if (ms > left)
        ms = left;
    if (ms <= 0)
        return;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0)
        ;
}

typedef struct fc_call {
    const char *key;
    int8_t key_type;
    int32_t node;
    int16_t kerr;
} fc_call_t;

static int fc_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    fc_call_t *c = arg;
    return sf_cgroup_findcoord_encode(wb, version, c->key, c->key_type);
}

static int fc_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    fc_call_t *c = arg;
    return sf_cgroup_findcoord_decode(body, version, &c->node, &c->kerr);
}

static int coord_find(sf_client_t *cl, const char *key, int8_t key_type, int64_t deadline,
                      int32_t *node) {
    for (;;) {
        fc_call_t fc = {key, key_type, -1, 0};
        int rc, left = sf_coord_ms_left(deadline);
        if (left <= 0)
            return SF_ERROR_TIMED_OUT;
        rc = sf_client_call(cl, SF_CLIENT_ANY_BROKER, SF_PROTO_API_FindCoordinator,
                            SF_CGROUP_FINDCOORD_MAX, fc_encode, fc_decode, &fc, left);
        if (rc == SF_OK)
            rc = sf_client_kerr(fc.kerr);
        if (rc == SF_OK) {
            *node = fc.node;
            return SF_OK;
        }
        if (!sf_cgroup_coord_retriable(rc))
            return rc;
        sf_coord_backoff(cl, deadline);
    }
}

int sf_coord_call(sf_client_t *cl, const char *key, int8_t key_type, int16_t api,
                  int16_t max_version, sf_client_encode_fn enc, sf_client_decode_fn dec,
                  void *arg, int64_t deadline, int32_t *coord) {
    for (;;) {
        int32_t node = -1;
        int rc = coord_find(cl, key, key_type, deadline, &node);
        if (rc != SF_OK)
            return rc;
        if (coord)
            *coord = node;
        rc = sf_client_call(cl, node, api, max_version, enc, dec, arg,
                            sf_coord_ms_left(deadline) > 0 ? sf_coord_ms_left(deadline) : 1);
        if (rc == SF_OK || !sf_cgroup_coord_retriable(rc) || sf_coord_ms_left(deadline) <= 0)
            return rc;
        sf_coord_backoff(cl, deadline);
    }
}
