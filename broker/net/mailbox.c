/* Closures handed between threads (see mailbox.h). */
#include "mailbox.h"

#include <assert.h>
#include <stdlib.h>

#include <event2/event.h>

struct sf_mailbox {
    pthread_t owner;
    pthread_mutex_t mu;    /* guards head/tail */
    sf_mail_t *head, *tail;
    struct event *wake;
};

/* Run everything queued so far, in order. */
static void drain(sf_mailbox_t *mb) {
    sf_mail_t *m;
    pthread_mutex_lock(&mb->mu);
    m = mb->head;
    mb->head = mb->tail = NULL;
    pthread_mutex_unlock(&mb->mu);
    sf_mail_run_list(m);
}

void sf_mail_run_list(sf_mail_t *m) {
    while (m) {
        sf_mail_t *next = m->next;
        int heap = m->heap;
        m->fn(m->arg); /* may free an embedded @m: read nothing after */
        if (heap)
            free(m);
        m = next;
    }
}

static void wake_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    drain(arg);
}

sf_mailbox_t *sf_mailbox_new(struct event_base *base, pthread_t owner) {
    sf_mailbox_t *mb = calloc(1, sizeof(*mb));
    if (!mb)
        return NULL;
    mb->owner = owner;
    if (pthread_mutex_init(&mb->mu, NULL) != 0) {
        free(mb);
        return NULL;
    }
    if (!(mb->wake = event_new(base, -1, 0, wake_cb, mb))) {
        pthread_mutex_destroy(&mb->mu);
        free(mb);
        return NULL;
    }
    return mb;
}

void sf_mailbox_put(sf_mailbox_t *mb, sf_mail_t *m) {
    pthread_mutex_lock(&mb->mu);
    sf_mail_append(&mb->head, &mb->tail, m);
    pthread_mutex_unlock(&mb->mu);
    event_active(mb->wake, 0, 0);
}

int sf_mailbox_post(sf_mailbox_t *mb, sf_mailbox_fn fn, void *arg) {
    sf_mail_t *m = malloc(sizeof(*m));
    if (!m)
        return -1;
    m->fn = fn;
    m->arg = arg;
    m->heap = 1;
    sf_mailbox_put(mb, m);
    return 0;
}

int sf_mailbox_is_owner(const sf_mailbox_t *mb) {
    return pthread_equal(mb->owner, pthread_self());
}

void sf_mailbox_free(sf_mailbox_t *mb) {
    if (!mb)
        return;
    assert(sf_mailbox_is_owner(mb));
    drain(mb);
    event_free(mb->wake);
    pthread_mutex_destroy(&mb->mu);
    free(mb);
}
