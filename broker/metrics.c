/* The broker's counters (see metrics.h). */
#include "metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

const double sf_metrics_bucket_ms[SF_METRICS_NBUCKET] = {1,   2,   5,    10,   25,   50,
                                                         100, 250, 500, 1000, 2500, 5000};

static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static sf_metrics_block_t *_Atomic blocks; /* every thread's, newest first */
static _Thread_local sf_metrics_block_t *here;

sf_metrics_block_t *sf_metrics_here(void) {
    if (__builtin_expect(here != NULL, 1))
        return here;
    if (!(here = calloc(1, sizeof(*here))))
        return NULL;
    pthread_mutex_lock(&blocks_lock); /* once per thread */
    here->next = atomic_load(&blocks);
    atomic_store(&blocks, here);
    pthread_mutex_unlock(&blocks_lock);
    return here;
}

void sf_metrics_produced(uint64_t records, uint64_t bytes) {
    sf_metrics_block_t *m = sf_metrics_here();
    if (m) {
        sf_metrics_add(&m->messages_in, records);
        sf_metrics_add(&m->bytes_in, bytes);
    }
}

void sf_metrics_fetched(uint64_t bytes) {
    sf_metrics_block_t *m = sf_metrics_here();
    if (m)
        sf_metrics_add(&m->bytes_out, bytes);
}

/* The latency bucket of @us. */
static int bucket_of(int64_t us) {
    int b = 0;
    while (b < SF_METRICS_NBUCKET && (double)us > sf_metrics_bucket_ms[b] * 1000)
        b++;
    return b;
}

void sf_metrics_flush(int64_t us) {
    sf_metrics_block_t *m = sf_metrics_here();
    if (m) {
        sf_metrics_add(&m->flushes[bucket_of(us)], 1);
        sf_metrics_add(&m->flush_us, us > 0 ? (uint64_t)us : 0);
    }
}

void sf_metrics_isr_change(int shrink) {
    sf_metrics_block_t *m = sf_metrics_here();
    if (m)
        sf_metrics_add(shrink ? &m->isr_shrinks : &m->isr_expands, 1);
}

void sf_metrics_request(int16_t api_key, int16_t version, int64_t us) {
    sf_metrics_block_t *m = sf_metrics_here();
    int a = api_key < 0 ? 0 : api_key >= SF_METRICS_NAPI ? SF_METRICS_NAPI - 1 : api_key;
    int v = version < 0 ? 0 : version >= SF_METRICS_NVERSION ? SF_METRICS_NVERSION - 1 : version;
    int b = bucket_of(us);
    if (!m)
        return;
    sf_metrics_add(&m->requests[a][v], 1);
    sf_metrics_add(&m->latency[a][v][b], 1);
    sf_metrics_add(&m->latency_us[a][v], us > 0 ? (uint64_t)us : 0);
}

void sf_metrics_zk_request(int req, int zrc, int64_t us, void *arg) {
    sf_metrics_block_t *m = sf_metrics_here();
    int r = req > 0 && req < SF_ZK_NREQ ? req : 0;
    (void)arg;
    if (!m)
        return;
    sf_metrics_add(&m->zk_latency[r][bucket_of(us)], 1);
    sf_metrics_add(&m->zk_latency_us[r], us > 0 ? (uint64_t)us : 0);
    if (sf_zk_err(zrc) == SF_ERR_IO)
        sf_metrics_add(&m->zk_failures[r], 1);
}

static void add_all(_Atomic uint64_t *to, _Atomic uint64_t *from, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        atomic_store_explicit(&to[i],
                              atomic_load_explicit(&to[i], memory_order_relaxed) +
                                  atomic_load_explicit(&from[i], memory_order_relaxed),
                              memory_order_relaxed);
}

void sf_metrics_sum(sf_metrics_block_t *out) {
    sf_metrics_block_t *m;
    memset(out, 0, sizeof(*out));
    for (m = atomic_load(&blocks); m; m = m->next) {
        add_all(&out->messages_in, &m->messages_in, 1);
        add_all(&out->bytes_in, &m->bytes_in, 1);
        add_all(&out->bytes_out, &m->bytes_out, 1);
        add_all(&out->requests[0][0], &m->requests[0][0],
                SF_METRICS_NAPI * SF_METRICS_NVERSION);
        add_all(&out->latency[0][0][0], &m->latency[0][0][0],
                SF_METRICS_NAPI * SF_METRICS_NVERSION * (SF_METRICS_NBUCKET + 1));
        add_all(&out->latency_us[0][0], &m->latency_us[0][0],
                SF_METRICS_NAPI * SF_METRICS_NVERSION);
        add_all(out->flushes, m->flushes, SF_METRICS_NBUCKET + 1);
        add_all(&out->flush_us, &m->flush_us, 1);
        add_all(&out->isr_shrinks, &m->isr_shrinks, 1);
        add_all(&out->isr_expands, &m->isr_expands, 1);
        add_all(&out->zk_latency[0][0], &m->zk_latency[0][0],
                SF_ZK_NREQ * (SF_METRICS_NBUCKET + 1));
        add_all(out->zk_latency_us, m->zk_latency_us, SF_ZK_NREQ);
        add_all(out->zk_failures, m->zk_failures, SF_ZK_NREQ);
    }
}
