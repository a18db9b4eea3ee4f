/* The I/O threads (see iopool.h): one FIFO queue per thread, a job pinned to a thread by its
 * key. */
#include "config.h"

#include "iopool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct io_thread {
    sf_iopool_t *pool;
    pthread_t tid;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cond; /* a job arrived, or stop */
    sf_mail_t *head, *tail;
    int idle; /* waiting on cond: a submit must signal */
    int stop;
} io_thread_t;

struct sf_iopool {
    io_thread_t *threads;
    int n;
};

static __thread const sf_iopool_t *current_pool;

static void *io_main(void *arg) {
    io_thread_t *t = arg;
    current_pool = t->pool;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        sf_mail_t *m = t->head;
        if (!m) {
            if (t->stop)
                break;
            t->idle = 1;
            pthread_cond_wait(&t->cond, &t->mu);
            t->idle = 0;
            continue;
        }
        /* Take the whole queue: one lock round per burst, not per job. */
        t->head = t->tail = NULL;
        pthread_mutex_unlock(&t->mu);
        sf_mail_run_list(m);
        pthread_mutex_lock(&t->mu);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

sf_iopool_t *sf_iopool_new(int nthreads, const char *name) {
    sf_iopool_t *pool = calloc(1, sizeof(*pool));
    int i;
    if (!pool)
        return NULL;
    if (nthreads < 0)
        nthreads = 0;
    pool->threads = calloc((size_t)nthreads + 1, sizeof(*pool->threads));
    if (!pool->threads) {
        free(pool);
        return NULL;
    }
    pool->n = nthreads;
    for (i = 0; i < nthreads; i++) {
        io_thread_t *t = &pool->threads[i];
        char tname[32];
        t->pool = pool;
        pthread_mutex_init(&t->mu, NULL);
        pthread_cond_init(&t->cond, NULL);
        if (pthread_create(&t->tid, NULL, io_main, t) != 0) {
            sf_iopool_free(pool);
            return NULL;
        }
        t->started = 1;
        snprintf(tname, sizeof(tname), "%.10s/%d", name, i);
        tname[15] = '\0'; /* the kernel's limit */
        pthread_setname_np(t->tid, tname);
    }
    return pool;
}

void sf_iopool_submit(sf_iopool_t *pool, uint64_t key, sf_mail_t *job) {
    io_thread_t *t;
    int wake;
    job->next = NULL;
    if (pool->n == 0) {
        sf_mail_run_list(job);
        return;
    }
    t = &pool->threads[key % (uint64_t)pool->n];
    pthread_mutex_lock(&t->mu);
    sf_mail_append(&t->head, &t->tail, job);
    wake = t->idle;
    pthread_mutex_unlock(&t->mu);
    if (wake)
        pthread_cond_signal(&t->cond);
}

int sf_iopool_post(sf_iopool_t *pool, uint64_t key, sf_mailbox_fn fn, void *arg) {
    sf_mail_t *m = malloc(sizeof(*m));
    if (!m)
        return -1;
    m->fn = fn;
    m->arg = arg;
    m->heap = 1;
    sf_iopool_submit(pool, key, m);
    return 0;
}

int sf_iopool_is_member(const sf_iopool_t *pool) {
    return pool && current_pool == pool;
}

void sf_iopool_free(sf_iopool_t *pool) {
    int i, ran;
    if (!pool)
        return;
    /* Stop one thread at a time: a job still running on a later thread may submit to an
     * earlier one, whose queue is then run below, until every queue stays empty. */
    for (i = 0; i < pool->n; i++) {
        io_thread_t *t = &pool->threads[i];
        if (!t->started)
            continue;
        pthread_mutex_lock(&t->mu);
        t->stop = 1;
        pthread_mutex_unlock(&t->mu);
        pthread_cond_signal(&t->cond);
        pthread_join(t->tid, NULL);
    }
    for (ran = 1; ran;)
        for (ran = 0, i = 0; i < pool->n; i++) {
            sf_mail_t *m = pool->threads[i].head;
            pool->threads[i].head = pool->threads[i].tail = NULL;
            ran |= m != NULL;
            sf_mail_run_list(m);
        }
    for (i = 0; i < pool->n; i++) {
        io_thread_t *t = &pool->threads[i];
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cond);
    }
    free(pool->threads);
    free(pool);
}
