/* A mailbox: closures posted from any thread and run, in the order posted, on the event loop
 * that owns the mailbox (libevent is built with pthreads support, so waking that loop from
 * another thread is safe). It is how threads talk to each other here: a thread owns its
 * state and others post it operations (librdkafka's ops queues), never share a struct under a
 * lock. */
#ifndef SF_MAILBOX_H
#define SF_MAILBOX_H

#include <pthread.h>

struct event_base;

typedef struct sf_mailbox sf_mailbox_t;
typedef void (*sf_mailbox_fn)(void *arg);

/* One posted closure. Embedded in the object it is about, so posting allocates nothing (and
 * cannot fail); it belongs to the mailbox from sf_mailbox_put until @fn runs. */
typedef struct sf_mail {
    struct sf_mail *next;
    sf_mailbox_fn fn;
    void *arg;
    int heap; /* allocated by sf_mailbox_post: freed after @fn ran */
} sf_mail_t;

/* Append @m to the list @head..@tail (the caller holds the list's lock). */
static inline void sf_mail_append(sf_mail_t **head, sf_mail_t **tail, sf_mail_t *m) {
    m->next = NULL;
    if (*tail)
        (*tail)->next = m;
    else
        *head = m;
    *tail = m;
}

/* Run a list of closures linked by next, in order (freeing those with heap set). */
void sf_mail_run_list(sf_mail_t *m);

/* A mailbox run by @base's loop; @owner is the thread that runs that loop. NULL on no
 * memory. */
sf_mailbox_t *sf_mailbox_new(struct event_base *base, pthread_t owner);

/* Run m->fn(m->arg) on the owner loop. Any thread; never fails. */
void sf_mailbox_put(sf_mailbox_t *mb, sf_mail_t *m);

/* The same with a closure allocated here. Returns 0, or -1 on no memory (nothing posted). */
int sf_mailbox_post(sf_mailbox_t *mb, sf_mailbox_fn fn, void *arg);

/* 1 when called on the owner thread. */
int sf_mailbox_is_owner(const sf_mailbox_t *mb);

/* Run what is still queued (on the owner thread, after its loop stopped), then free. NULL
 * ok. */
void sf_mailbox_free(sf_mailbox_t *mb);

#endif
