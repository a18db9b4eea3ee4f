/* Unit tests for broker/net/netlimit (limits shared by the network workers). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "brokercfg.h"
#include "err.h"
#include "mailbox.h"
#include "netlimit.h"

static sf_brokercfg_t cfg0(void) {
    sf_brokercfg_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.queued_max_request_bytes = 1000;
    cfg.queued_max_response_bytes = 400;
    cfg.max_connections = INT32_MAX;
    cfg.max_connections_per_ip = INT32_MAX;
    return cfg;
}

static sf_netlimit_t *nl_new(const sf_brokercfg_t *cfg) {
    sf_netlimit_t *nl = NULL;
    char err[256];
    ck_assert_int_eq(sf_netlimit_new(cfg, &nl, err, sizeof(err)), SF_OK);
    ck_assert_ptr_nonnull(nl);
    return nl;
}

static struct sockaddr_in v4(const char *ip, int port) {
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)port);
    ck_assert_int_eq(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
    return sin;
}

#define SA(x) ((const struct sockaddr *)&(x))

START_TEST(test_caps) {
    sf_brokercfg_t cfg = cfg0();
    sf_netlimit_t *nl = nl_new(&cfg);
    sf_netlimit_stats_t st;

    /* queued.max.request.bytes: half for partial frames, half for whole requests. */
    sf_netlimit_add(nl, SF_NETLIMIT_PARTIAL, 499);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_PARTIAL, 0, 0), 0);
    sf_netlimit_add(nl, SF_NETLIMIT_PARTIAL, 1);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_PARTIAL, 0, 0), 1);
    /* What the caller holds itself does not count against it. */
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_PARTIAL, 100, 0), 0);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_HELD, 0, 0), 0);
    /* Resume point: three quarters (375 of 500). */
    sf_netlimit_add(nl, SF_NETLIMIT_PARTIAL, -124);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_PARTIAL, 0, 1), 1);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_PARTIAL, 0, 0), 0);
    sf_netlimit_add(nl, SF_NETLIMIT_PARTIAL, -1);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_PARTIAL, 0, 1), 1);
    sf_netlimit_add(nl, SF_NETLIMIT_PARTIAL, -1);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_PARTIAL, 0, 1), 0);

    sf_netlimit_add(nl, SF_NETLIMIT_OUTPUT, 400);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_OUTPUT, 0, 0), 1);
    sf_netlimit_paused(nl, SF_NETLIMIT_OUTPUT);
    sf_netlimit_stats(nl, &st);
    ck_assert_int_eq(st.bytes[SF_NETLIMIT_PARTIAL], 374);
    ck_assert_int_eq(st.bytes[SF_NETLIMIT_OUTPUT], 400);
    ck_assert_int_eq(st.paused[SF_NETLIMIT_OUTPUT], 1);
    sf_netlimit_add(nl, SF_NETLIMIT_OUTPUT, -400);
    sf_netlimit_add(nl, SF_NETLIMIT_PARTIAL, -374);
    sf_netlimit_free(nl);
}
END_TEST

START_TEST(test_unlimited) {
    sf_brokercfg_t cfg = cfg0();
    sf_netlimit_t *nl;
    cfg.queued_max_request_bytes = -1;
    cfg.queued_max_response_bytes = 0;
    nl = nl_new(&cfg);
    sf_netlimit_add(nl, SF_NETLIMIT_HELD, INT64_MAX / 2);
    sf_netlimit_add(nl, SF_NETLIMIT_OUTPUT, INT64_MAX / 2);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_HELD, 0, 0), 0);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_OUTPUT, 0, 0), 0);
    ck_assert_int_eq(sf_netlimit_over(NULL, SF_NETLIMIT_OUTPUT, 0, 0), 0);
    sf_netlimit_free(nl);
}
END_TEST

static int woken;
static void wake_cb(void *arg) {
    (void)arg;
    woken++;
}

typedef struct release_arg {
    sf_netlimit_t *nl;
    int64_t bytes;
} release_arg_t;

static void *release_thread(void *arg) {
    release_arg_t *ra = arg;
    sf_netlimit_add(ra->nl, SF_NETLIMIT_HELD, -ra->bytes);
    return NULL;
}

/* A release on another thread wakes the waiting server through its mailbox. */
START_TEST(test_wait_wake) {
    sf_brokercfg_t cfg = cfg0();
    sf_netlimit_t *nl = nl_new(&cfg);
    struct event_base *base;
    sf_mailbox_t *mb;
    sf_netlimit_waiter_t *w;
    pthread_t t;
    release_arg_t ra;

    evthread_use_pthreads();
    base = event_base_new();
    mb = sf_mailbox_new(base, pthread_self());
    w = sf_netlimit_waiter_new(nl, mb, wake_cb, NULL);
    ck_assert_ptr_nonnull(w);
    woken = 0;

    sf_netlimit_add(nl, SF_NETLIMIT_HELD, 500);
    ck_assert_int_eq(sf_netlimit_over(nl, SF_NETLIMIT_HELD, 0, 0), 1);
    sf_netlimit_wait(nl, w, SF_NETLIMIT_HELD);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(woken, 0);
    /* Still above the resume point (375): no wake-up. */
    sf_netlimit_add(nl, SF_NETLIMIT_HELD, -100);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(woken, 0);
    ra.nl = nl;
    ra.bytes = 100;
    ck_assert_int_eq(pthread_create(&t, NULL, release_thread, &ra), 0);
    pthread_join(t, NULL);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(woken, 1);
    /* One wake-up per wait. */
    sf_netlimit_add(nl, SF_NETLIMIT_HELD, 10);
    sf_netlimit_add(nl, SF_NETLIMIT_HELD, -10);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(woken, 1);
    /* Waiting while already under: woken at once. */
    sf_netlimit_wait(nl, w, SF_NETLIMIT_HELD);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(woken, 2);
    /* A waiter freed while its wake-up is queued: the mail frees it, the callback is not run. */
    sf_netlimit_wait(nl, w, SF_NETLIMIT_HELD);
    sf_netlimit_waiter_free(nl, w);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(woken, 2);

    sf_netlimit_add(nl, SF_NETLIMIT_HELD, -300);
    sf_mailbox_free(mb);
    event_base_free(base);
    sf_netlimit_free(nl);
}
END_TEST

/* Partial frames: a waiter for them is woken by any release, since what it waits for is the
 * others' bytes (the total less its own). */
START_TEST(test_wait_partial) {
    sf_brokercfg_t cfg = cfg0();
    sf_netlimit_t *nl = nl_new(&cfg);
    struct event_base *base;
    sf_mailbox_t *mb;
    sf_netlimit_waiter_t *w;

    evthread_use_pthreads();
    base = event_base_new();
    mb = sf_mailbox_new(base, pthread_self());
    w = sf_netlimit_waiter_new(nl, mb, wake_cb, NULL);
    woken = 0;
    sf_netlimit_add(nl, SF_NETLIMIT_PARTIAL, 900);
    sf_netlimit_wait(nl, w, SF_NETLIMIT_PARTIAL);
    sf_netlimit_add(nl, SF_NETLIMIT_PARTIAL, -100);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(woken, 1);
    sf_netlimit_add(nl, SF_NETLIMIT_PARTIAL, -800);
    sf_netlimit_waiter_free(nl, w);
    sf_mailbox_free(mb);
    event_base_free(base);
    sf_netlimit_free(nl);
}
END_TEST

START_TEST(test_connections) {
    sf_brokercfg_t cfg = cfg0();
    sf_brokercfg_ip_max_t ovr[2] = {{"127.0.0.2", 1}, {"::1", 0}};
    sf_netlimit_t *nl;
    sf_netlimit_stats_t st;
    struct sockaddr_in a = v4("127.0.0.1", 1000), b = v4("127.0.0.2", 1001);
    struct sockaddr_in c = v4("127.0.0.3", 1002);
    struct sockaddr_in6 mapped, six;
    int i;

    cfg.max_connections = 5;
    cfg.max_connections_per_ip = 3;
    cfg.ip_overrides = ovr;
    cfg.nip_overrides = 2;
    nl = nl_new(&cfg);
    ck_assert_int_eq(sf_netlimit_per_ip(nl, SA(a)), 3);
    ck_assert_int_eq(sf_netlimit_per_ip(nl, SA(b)), 1);

    for (i = 0; i < 3; i++)
        ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(a), "a"), SF_OK);
    ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(a), "a"), SF_ERR_TOOLARGE);
    /* ::ffff:127.0.0.1 is 127.0.0.1. */
    memset(&mapped, 0, sizeof(mapped));
    mapped.sin6_family = AF_INET6;
    ck_assert_int_eq(inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr), 1);
    ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(mapped), "mapped"), SF_ERR_TOOLARGE);
    /* The override: one from 127.0.0.2, none from ::1. */
    ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(b), "b"), SF_OK);
    ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(b), "b"), SF_ERR_TOOLARGE);
    memset(&six, 0, sizeof(six));
    six.sin6_family = AF_INET6;
    six.sin6_addr = in6addr_loopback;
    ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(six), "six"), SF_ERR_TOOLARGE);
    /* max.connections. */
    ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(c), "c"), SF_OK);
    ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(c), "c"), SF_ERR_TOOLARGE);
    sf_netlimit_stats(nl, &st);
    ck_assert_int_eq(st.connections, 5);
    ck_assert_int_eq(st.refused_max_connections, 1);
    ck_assert_int_eq(st.refused_per_ip, 4);
    /* A close makes room, for its own address too. */
    sf_netlimit_conn_close(nl, SA(mapped));
    ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(a), "a"), SF_OK);
    sf_netlimit_conn_close(nl, SA(b));
    ck_assert_int_eq(sf_netlimit_conn_open(nl, SA(c), "c"), SF_OK);
    for (i = 0; i < 3; i++)
        sf_netlimit_conn_close(nl, SA(a));
    sf_netlimit_conn_close(nl, SA(c));
    sf_netlimit_conn_close(nl, SA(c));
    sf_netlimit_stats(nl, &st);
    ck_assert_int_eq(st.connections, 0);
    sf_netlimit_free(nl);
}
END_TEST

START_TEST(test_override_unresolvable) {
    sf_brokercfg_t cfg = cfg0();
    sf_brokercfg_ip_max_t ovr[1] = {{"no-such-host.invalid", 1}};
    sf_netlimit_t *nl = (sf_netlimit_t *)1;
    char err[256] = "";
    cfg.ip_overrides = ovr;
    cfg.nip_overrides = 1;
    ck_assert_int_eq(sf_netlimit_new(&cfg, &nl, err, sizeof(err)), SF_ERR_INVALID);
    ck_assert_ptr_null(nl);
    ck_assert_msg(strstr(err, "no-such-host.invalid"), "%s", err);
}
END_TEST

int main(void) {
    Suite *s = suite_create("netlimit");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    SRunner *sr;
    int failed;
    tcase_add_test(core, test_caps);
    tcase_add_test(core, test_wait_wake);
    tcase_add_test(core, test_wait_partial);
    tcase_add_test(core, test_connections);
    tcase_add_test(limits, test_unlimited);
    tcase_add_test(limits, test_override_unresolvable);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
