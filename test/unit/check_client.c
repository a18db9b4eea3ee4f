/* Unit tests for the client core (client/client.c, conn.c, metadata.c) against a fake broker:
 * a listening socket on 127.0.0.1 served by a thread that answers ApiVersions and Metadata
 * with bytes from common/proto.h encoders, and "echo" requests (ListOffsets key, body = one
 * int32) in ways each test chooses. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "buf.h"
#include "client.h"
#include "clientconf.h"
#include "clock.h"
#include "err.h"
#include "proto.h"

#define ECHO_API SF_PROTO_API_ListOffsets

/* How the fake broker answers echo requests. */
enum {
    FAKE_NORMAL = 0,
    FAKE_BATCH,      /* hold echo answers until `batch` echo requests arrived on a connection */
    FAKE_SILENT,     /* never answer echo requests */
    FAKE_HUGE_FRAME, /* answer an echo request with a 2 GiB length prefix */
    FAKE_BAD_CORR,   /* answer with the wrong correlation id */
    FAKE_CLOSE_FIRST, /* close the first connection on its first echo request */
    FAKE_LARGE       /* answer echo value v with v and then v pattern bytes (large frames) */
};

/* Byte @i of the FAKE_LARGE pattern for value @v. */
static uint8_t large_byte(int32_t v, size_t i) {
    return (uint8_t)((i * 131u + (uint32_t)v) >> 3);
}

typedef struct fake {
    int lfd, port;
    pthread_t accept_th;
    pthread_mutex_t mu;
    int mode, batch;
    int avs_max;   /* highest ApiVersions version answered; above it: UNSUPPORTED_VERSION */
    int conns;     /* connections accepted */
    int avs_versions[16], navs; /* ApiVersions versions received */
    int echo_seen, echo_version;
    int slow_left; /* Metadata answers that report topic "slow" as LEADER_NOT_AVAILABLE */
    int dup_brokers; /* Metadata answers list brokers 1 and 3 twice each (second: port+1) */
    int stop;
    int fds[64], nfds;
    pthread_t ths[64];
} fake_t;

typedef struct fconn {
    fake_t *fk;
    int fd, idx;
} fconn_t;

static int read_full(int fd, void *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, (char *)p + got, n - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *p, size_t n) {
    size_t put = 0;
    while (put < n) {
        ssize_t r = send(fd, (const char *)p + put, n - put, MSG_NOSIGNAL);
        if (r <= 0)
            return -1;
        put += (size_t)r;
    }
    return 0;
}

/* Send a response frame: size, correlation id (header v0), body. */
static int send_resp(int fd, int32_t corr, const sf_wbuf_t *body) {
    uint8_t hdr[8];
    sf_store_be32(hdr, (uint32_t)(4 + body->len));
    sf_store_be32(hdr + 4, (uint32_t)corr);
    if (write_full(fd, hdr, 8) < 0)
        return -1;
    return body->len ? write_full(fd, body->p, body->len) : 0;
}

static void answer_apiversions(fake_t *fk, int fd, const sf_proto_RequestHeader_t *h) {
    sf_proto_ApiVersionsResponse_ApiVersion_t keys[] = {
        {.ApiKey = SF_PROTO_API_Metadata, .MinVersion = 0, .MaxVersion = 8},
        {.ApiKey = SF_PROTO_API_ApiVersions, .MinVersion = 0, .MaxVersion = (int16_t)fk->avs_max},
        {.ApiKey = ECHO_API, .MinVersion = 1, .MaxVersion = 4},
    };
    sf_proto_ApiVersionsResponse_t resp = {.ErrorCode = 0, .ApiKeysCount = 3, .ApiKeys = keys,
                                           .ThrottleTimeMs = 0, .FinalizedFeaturesEpoch = -1};
    sf_wbuf_t wb;
    sf_wbuf_init(&wb);
    pthread_mutex_lock(&fk->mu);
    if (fk->navs < 16)
        fk->avs_versions[fk->navs++] = h->RequestApiVersion;
    pthread_mutex_unlock(&fk->mu);
    if (h->RequestApiVersion > fk->avs_max) {
        /* v0 error body listing ApiVersions' own range */
        sf_proto_ApiVersionsResponse_ApiVersion_t own = {
            .ApiKey = SF_PROTO_API_ApiVersions, .MinVersion = 0, .MaxVersion = (int16_t)fk->avs_max};
        sf_proto_ApiVersionsResponse_t err = {.ErrorCode = SF_KERR_UNSUPPORTED_VERSION,
                                              .ApiKeysCount = 1, .ApiKeys = &own,
                                              .ThrottleTimeMs = 0, .FinalizedFeaturesEpoch = -1};
        ck_assert_int_eq(sf_proto_ApiVersionsResponse_encode(&wb, 0, &err), SF_OK);
    } else {
        ck_assert_int_eq(sf_proto_ApiVersionsResponse_encode(&wb, h->RequestApiVersion, &resp),
                         SF_OK);
    }
    send_resp(fd, h->CorrelationId, &wb);
    sf_wbuf_free(&wb);
}

/* 1 (and one less left) while "slow" is still being created. */
static int fake_take_slow(fake_t *fk) {
    int slow;
    pthread_mutex_lock(&fk->mu);
    slow = fk->slow_left > 0;
    if (slow)
        fk->slow_left--;
    pthread_mutex_unlock(&fk->mu);
    return slow;
}

static void answer_metadata(fake_t *fk, int fd, const sf_proto_RequestHeader_t *h,
                            sf_rbuf_t *rb) {
    sf_arena_t arena;
    sf_proto_MetadataRequest_t req;
    sf_proto_MetadataResponse_t resp;
    sf_proto_MetadataResponse_MetadataResponseBroker_t broker, dups[4];
    sf_proto_MetadataResponse_MetadataResponseTopic_t *topics;
    sf_proto_MetadataResponse_MetadataResponsePartition_t parts[3];
    int32_t replicas[1] = {1};
    sf_wbuf_t wb;
    int32_t i;

    sf_arena_init(&arena, 0);
    ck_assert_int_eq(sf_proto_MetadataRequest_decode(rb, h->RequestApiVersion, &arena, &req),
                     SF_OK);
    memset(&resp, 0, sizeof(resp));
    memset(&broker, 0, sizeof(broker));
    memset(parts, 0, sizeof(parts));
    broker.NodeId = 1;
    broker.Host = sf_slice_cstr("127.0.0.1");
    broker.Port = fk->port;
    broker.Rack.len = -1;
    resp.BrokersCount = 1;
    resp.Brokers = &broker;
    if (fk->dup_brokers) { /* set before the fake starts answering */
        for (i = 0; i < 4; i++) {
            dups[i] = broker;
            dups[i].NodeId = i < 2 ? 3 : 1;
            dups[i].Port = fk->port + (i & 1);
        }
        resp.BrokersCount = 4;
        resp.Brokers = dups;
    }
    resp.ClusterId = sf_slice_cstr("fake-cluster");
    resp.ControllerId = 1;
    for (i = 0; i < 3; i++) {
        parts[i].PartitionIndex = i % 2; /* the third lists partition 0 again */
        parts[i].LeaderId = 1;
        parts[i].LeaderEpoch = 7;
        parts[i].ReplicaNodesCount = 1;
        parts[i].ReplicaNodes = replicas;
        parts[i].IsrNodesCount = 1;
        parts[i].IsrNodes = replicas;
    }
    parts[2].LeaderEpoch = 9;
    topics = calloc(req.TopicsCount > 0 ? (size_t)req.TopicsCount : 1, sizeof(*topics));
    for (i = 0; i < req.TopicsCount; i++) {
        topics[i].Name = req.Topics[i].Name;
        if (sf_slice_eq(req.Topics[i].Name, "missing")) {
            topics[i].ErrorCode = SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
        } else if (sf_slice_eq(req.Topics[i].Name, "dups")) {
            topics[i].PartitionsCount = 3;
            topics[i].Partitions = parts;
        } else if (sf_slice_eq(req.Topics[i].Name, "slow") && fake_take_slow(fk)) {
            topics[i].ErrorCode = SF_KERR_LEADER_NOT_AVAILABLE;
        } else {
            topics[i].PartitionsCount = 2;
            topics[i].Partitions = parts;
        }
        topics[i].TopicAuthorizedOperations = INT32_MIN;
    }
    resp.TopicsCount = req.TopicsCount > 0 ? req.TopicsCount : 0;
    resp.Topics = topics;
    resp.ClusterAuthorizedOperations = INT32_MIN;
    sf_wbuf_init(&wb);
    ck_assert_int_eq(sf_proto_MetadataResponse_encode(&wb, h->RequestApiVersion, &resp), SF_OK);
    send_resp(fd, h->CorrelationId, &wb);
    sf_wbuf_free(&wb);
    free(topics);
    sf_arena_reset(&arena);
}

typedef struct held {
    int32_t corr, value;
} held_t;

static void *fconn_main(void *arg) {
    fconn_t *fc = arg;
    fake_t *fk = fc->fk;
    held_t held[256];
    int nheld = 0, echoes = 0;
    uint8_t szb[4];

    while (read_full(fc->fd, szb, 4) == 0) {
        uint32_t size = sf_load_be32(szb);
        uint8_t *buf;
        sf_rbuf_t rb;
        sf_proto_RequestHeader_t h;
        int mode;
        if (size > (1u << 20) || !(buf = malloc(size ? size : 1)))
            break;
        if (read_full(fc->fd, buf, size) < 0) {
            free(buf);
            break;
        }
        sf_rbuf_init(&rb, buf, size);
        if (sf_proto_RequestHeader_decode(&rb, &h) != SF_OK) {
            free(buf);
            break;
        }
        pthread_mutex_lock(&fk->mu);
        mode = fk->mode;
        pthread_mutex_unlock(&fk->mu);
        if (h.RequestApiKey == SF_PROTO_API_ApiVersions) {
            answer_apiversions(fk, fc->fd, &h);
        } else if (h.RequestApiKey == SF_PROTO_API_Metadata) {
            answer_metadata(fk, fc->fd, &h, &rb);
        } else if (h.RequestApiKey == ECHO_API) {
            int32_t v = sf_rbuf_i32(&rb);
            sf_wbuf_t wb;
            pthread_mutex_lock(&fk->mu);
            fk->echo_seen++;
            fk->echo_version = h.RequestApiVersion;
            pthread_mutex_unlock(&fk->mu);
            echoes++;
            sf_wbuf_init(&wb);
            if (mode == FAKE_SILENT || v < 0) {
                /* nothing */
            } else if (mode == FAKE_HUGE_FRAME) {
                uint8_t big[8] = {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0};
                sf_store_be32(big + 4, (uint32_t)h.CorrelationId);
                write_full(fc->fd, big, 8);
            } else if (mode == FAKE_BAD_CORR) {
                sf_wbuf_i32(&wb, v);
                send_resp(fc->fd, h.CorrelationId + 1000, &wb);
            } else if (mode == FAKE_LARGE) {
                uint8_t *pat = sf_wbuf_reserve(&wb, 4 + (size_t)v);
                size_t j;
                sf_store_be32(pat, (uint32_t)v);
                for (j = 0; j < (size_t)v; j++)
                    pat[4 + j] = large_byte(v, j);
                send_resp(fc->fd, h.CorrelationId, &wb);
            } else if (mode == FAKE_CLOSE_FIRST && fc->idx == 0 && echoes == 1) {
                free(buf);
                sf_wbuf_free(&wb);
                break;
            } else if (mode == FAKE_BATCH) {
                held[nheld].corr = h.CorrelationId;
                held[nheld].value = v;
                nheld++;
                if (nheld == fk->batch || nheld == 256) {
                    int i;
                    for (i = 0; i < nheld; i++) {
                        sf_wbuf_reset(&wb);
                        sf_wbuf_i32(&wb, held[i].value);
                        send_resp(fc->fd, held[i].corr, &wb);
                    }
                    nheld = 0;
                }
            } else {
                sf_wbuf_i32(&wb, v);
                send_resp(fc->fd, h.CorrelationId, &wb);
            }
            sf_wbuf_free(&wb);
        }
        free(buf);
    }
    shutdown(fc->fd, SHUT_RDWR);
    free(fc);
    return NULL;
}

static void *fake_accept_main(void *arg) {
    fake_t *fk = arg;
    for (;;) {
        int fd = accept(fk->lfd, NULL, NULL);
        fconn_t *fc;
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        pthread_mutex_lock(&fk->mu);
        if (fk->stop || fk->nfds == 64) {
            pthread_mutex_unlock(&fk->mu);
            close(fd);
            break;
        }
        fc = calloc(1, sizeof(*fc));
        fc->fk = fk;
        fc->fd = fd;
        fc->idx = fk->conns++;
        fk->fds[fk->nfds] = fd;
        pthread_create(&fk->ths[fk->nfds], NULL, fconn_main, fc);
        fk->nfds++;
        pthread_mutex_unlock(&fk->mu);
    }
    return NULL;
}

/* Listen on 127.0.0.1 (@port 0: any free port). */
static fake_t *fake_start(int mode, int port) {
    fake_t *fk = calloc(1, sizeof(*fk));
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int one = 1;
    pthread_mutex_init(&fk->mu, NULL);
    fk->mode = mode;
    fk->avs_max = 3;
    fk->lfd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fk->lfd, 0);
    setsockopt(fk->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)port);
    ck_assert_int_eq(bind(fk->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(fk->lfd, 16), 0);
    getsockname(fk->lfd, (struct sockaddr *)&sa, &len);
    fk->port = ntohs(sa.sin_port);
    pthread_create(&fk->accept_th, NULL, fake_accept_main, fk);
    return fk;
}

static void fake_stop(fake_t *fk) {
    int i;
    pthread_mutex_lock(&fk->mu);
    fk->stop = 1;
    for (i = 0; i < fk->nfds; i++)
        shutdown(fk->fds[i], SHUT_RDWR);
    pthread_mutex_unlock(&fk->mu);
    shutdown(fk->lfd, SHUT_RDWR);
    pthread_join(fk->accept_th, NULL);
    for (i = 0; i < fk->nfds; i++) {
        pthread_join(fk->ths[i], NULL);
        close(fk->fds[i]);
    }
    close(fk->lfd);
    pthread_mutex_destroy(&fk->mu);
    free(fk);
}

static int fake_get(fake_t *fk, int *field) {
    int v;
    pthread_mutex_lock(&fk->mu);
    v = *field;
    pthread_mutex_unlock(&fk->mu);
    return v;
}

/* A client for "127.0.0.1:@port" with short timeouts. */
static sf_client_t *client_for(int port, const sf_client_role_t *roles, int nroles) {
    char bs[64], err[256];
    sf_conf_t *conf = sf_conf_new();
    sf_client_t *cl;
    snprintf(bs, sizeof(bs), "127.0.0.1:%d", port);
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", bs, err, sizeof(err)), SF_OK);
    sf_conf_set(conf, "reconnect.backoff.ms", "10", NULL, 0);
    sf_conf_set(conf, "reconnect.backoff.max.ms", "50", NULL, 0);
    sf_conf_set(conf, "retry.backoff.ms", "10", NULL, 0);
    sf_conf_set(conf, "log_level", getenv("SF_TEST_DEBUG") ? "debug" : "err", NULL, 0);
    cl = sf_client_new(conf, roles, nroles, err, sizeof(err));
    ck_assert_msg(cl != NULL, "sf_client_new: %s", err);
    sf_conf_destroy(conf);
    return cl;
}

/* --- echo requests -------------------------------------------------------------------- */

typedef struct echo {
    int32_t value;
    int done, err, order;
    int32_t got, broker;
    int16_t version;
    int *counter;
} echo_t;

static int echo_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    echo_t *e = arg;
    (void)version;
    sf_wbuf_i32(wb, e->value);
    return SF_OK;
}

static void echo_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                      sf_rbuf_t *body, void *arg) {
    echo_t *e = arg;
    e->err = err;
    e->broker = broker_id;
    e->version = version;
    e->got = body ? sf_rbuf_i32(body) : -1;
    e->order = (*e->counter)++;
    e->done = 1;
    sf_client_signal(cl);
}

static int i32_encode(sf_wbuf_t *wb, int16_t version, void *arg) {
    (void)version;
    sf_wbuf_i32(wb, *(int32_t *)arg);
    return SF_OK;
}

static int echo_decode(sf_rbuf_t *body, int16_t version, void *arg) {
    int32_t *out = arg;
    (void)version;
    *out = sf_rbuf_i32(body);
    return body->err;
}

/* One synchronous echo of *@out to any broker, the answer back in *@out. */
static int echo_call(sf_client_t *cl, int timeout_ms, int32_t *out) {
    return sf_client_call(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5, i32_encode, echo_decode, out,
                          timeout_ms);
}

/* Wait (lock held) until every echo of @e (@n) is done; returns 0 or -1 on a 20 s stall. */
static int wait_all(sf_client_t *cl, echo_t *e, int n) {
    int64_t deadline = sf_clock_mono_ms() + 20000;
    int i;
    for (i = 0; i < n; i++)
        while (!e[i].done)
            if (sf_client_wait(cl, deadline) == SF_ERROR_TIMED_OUT && !e[i].done)
                return -1;
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * core
 * ------------------------------------------------------------------------------------------ */

/* Many requests pipelined on one connection come back in order with their own bodies. The
 * fake holds every answer until all 40 requests arrived, so without pipelining this stalls. */
START_TEST(test_pipelining_order) {
    fake_t *fk = fake_start(FAKE_BATCH, 0);
    sf_client_t *cl;
    echo_t e[40];
    int counter = 0, i;
    fk->batch = 40;
    cl = client_for(fk->port, NULL, 0);
    memset(e, 0, sizeof(e));
    sf_client_lock(cl);
    for (i = 0; i < 40; i++) {
        e[i].value = 1000 + i;
        e[i].counter = &counter;
        ck_assert_int_eq(sf_client_request(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5, echo_encode,
                                           echo_done, &e[i], 10000, 0),
                         SF_OK);
    }
    ck_assert_int_eq(wait_all(cl, e, 40), 0);
    for (i = 0; i < 40; i++) {
        ck_assert_int_eq(e[i].err, 0);
        ck_assert_int_eq(e[i].got, 1000 + i);
        ck_assert_int_eq(e[i].order, i);
        ck_assert_int_eq(e[i].version, 4); /* min(5, broker's 4) */
        ck_assert_int_eq(e[i].broker, -1); /* bootstrap, no metadata yet */
    }
    ck_assert_int_eq(sf_client_api_version(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 3), 3);
    ck_assert_int_eq(sf_client_api_version(cl, SF_CLIENT_ANY_BROKER, SF_PROTO_API_Fetch, 11), -1);
    sf_client_unlock(cl);
    sf_client_destroy(cl);
    ck_assert_int_eq(fake_get(fk, &fk->echo_seen), 40);
    ck_assert_int_eq(fake_get(fk, &fk->conns), 1);
    fake_stop(fk);
}
END_TEST

typedef struct role_state {
    int metadata_calls, up_calls, down_calls, stop_calls, wake_calls;
    int inflight_at_stop;
    echo_t *pending; /* the request still in flight when the client stops */
} role_state_t;

static void role_metadata(sf_client_t *cl, void *self) {
    (void)cl;
    ((role_state_t *)self)->metadata_calls++;
}

static void role_broker(sf_client_t *cl, void *self, int32_t id, int up) {
    (void)cl;
    (void)id;
    if (up)
        ((role_state_t *)self)->up_calls++;
    else
        ((role_state_t *)self)->down_calls++;
}

static void role_stop(sf_client_t *cl, void *self) {
    role_state_t *rs = self;
    (void)cl;
    rs->stop_calls++;
    /* in-flight requests must have their callbacks before on_stop */
    rs->inflight_at_stop = rs->pending && !rs->pending->done;
}

static void role_wake(sf_client_t *cl, void *self) {
    ((role_state_t *)self)->wake_calls++;
    sf_client_signal(cl);
}

/* Metadata: followed topics, brokers, controller, cluster id; a bootstrap connection that
 * reaches broker 1 becomes broker 1's connection; requests to the controller and to a broker
 * id are routed; roles see the updates. */
START_TEST(test_metadata_and_routing) {
    fake_t *fk = fake_start(FAKE_NORMAL, 0);
    role_state_t rs;
    sf_client_role_t role;
    sf_client_t *cl;
    const sf_client_topic_t *t;
    const sf_client_broker_t *b;
    int n, rc;
    int32_t out = 0;

    memset(&rs, 0, sizeof(rs));
    memset(&role, 0, sizeof(role));
    role.self = &rs;
    role.on_metadata = role_metadata;
    role.on_broker = role_broker;
    role.on_wake = role_wake;
    cl = client_for(fk->port, &role, 1);
    sf_client_lock(cl);
    ck_assert_ptr_null(sf_client_topic(cl, "orders"));
    ck_assert_int_eq(sf_client_metadata_wait(cl, "orders", 0, sf_clock_mono_ms() + 10000), SF_OK);
    t = sf_client_topic(cl, "orders");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->err, 0);
    ck_assert_int_eq(t->partition_count, 2);
    ck_assert_int_eq(t->partitions[1].id, 1);
    ck_assert_int_eq(t->partitions[1].leader, 1);
    ck_assert_int_eq(t->partitions[1].leader_epoch, 7);
    ck_assert_int_eq(t->partitions[1].replica_count, 1);
    ck_assert_int_eq(t->partitions[1].isr[0], 1);
    ck_assert_int_eq(sf_client_metadata_wait(cl, "missing", 0, sf_clock_mono_ms() + 10000),
                     SF_OK);
    t = sf_client_topic(cl, "missing");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->err, SF_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ck_assert_ptr_nonnull(sf_client_topic(cl, "orders")); /* still cached */
    b = sf_client_brokers(cl, &n);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(b[0].id, 1);
    ck_assert_str_eq(b[0].host, "127.0.0.1");
    ck_assert_int_eq(b[0].port, fk->port);
    ck_assert_ptr_null(b[0].rack);
    ck_assert_ptr_nonnull(sf_client_broker(cl, 1));
    ck_assert_ptr_null(sf_client_broker(cl, 2));
    ck_assert_int_eq(sf_client_controller(cl), 1);
    ck_assert_str_eq(sf_client_cluster_id(cl), "fake-cluster");
    ck_assert_int_ge(rs.metadata_calls, 2);
    ck_assert_int_ge(rs.up_calls, 1);
    sf_client_unlock(cl);

    rc = sf_client_call(cl, SF_CLIENT_CONTROLLER, ECHO_API, 5, i32_encode, echo_decode, &out,
                        10000);
    ck_assert_int_eq(rc, SF_OK);
    rc = sf_client_call(cl, 1, ECHO_API, 5, i32_encode, echo_decode, &out, 10000);
    ck_assert_int_eq(rc, SF_OK);
    /* The bootstrap connection was recognised as broker 1: no second connection. */
    ck_assert_int_eq(fake_get(fk, &fk->conns), 1);

    /* A broker the metadata does not know fails once the metadata is refreshed. */
    rc = sf_client_call(cl, 42, ECHO_API, 5, i32_encode, echo_decode, &out, 10000);
    ck_assert_int_eq(rc, SF_ERROR_TRANSPORT);

    /* on_wake runs in the I/O thread */
    sf_client_lock(cl);
    sf_client_wake(cl);
    while (rs.wake_calls == 0)
        ck_assert_int_eq(sf_client_wait(cl, sf_clock_mono_ms() + 10000), SF_OK);
    sf_client_unlock(cl);
    sf_client_destroy(cl);
    fake_stop(fk);
}
END_TEST

/* A Metadata response listing a broker or a partition twice: the first listing of a broker
 * wins, the last listing of a partition wins (the replaced replica lists are freed). */
START_TEST(test_metadata_duplicates) {
    fake_t *fk = fake_start(FAKE_NORMAL, 0);
    sf_client_t *cl;
    const sf_client_topic_t *t;
    const sf_client_broker_t *b;
    int n;
    fk->dup_brokers = 1;
    cl = client_for(fk->port, NULL, 0);
    sf_client_lock(cl);
    ck_assert_int_eq(sf_client_metadata_wait(cl, "dups", 0, sf_clock_mono_ms() + 10000), SF_OK);
    t = sf_client_topic(cl, "dups");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->partition_count, 3);
    ck_assert_int_eq(t->partitions[0].leader_epoch, 9);
    ck_assert_int_eq(t->partitions[0].replica_count, 1);
    ck_assert_int_eq(t->partitions[0].isr_count, 1);
    ck_assert_int_eq(t->partitions[1].leader_epoch, 7);
    ck_assert_int_eq(t->partitions[2].err, SF_KERR_LEADER_NOT_AVAILABLE);
    ck_assert_int_eq(t->partitions[2].leader, -1);
    b = sf_client_brokers(cl, &n);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(b[0].id, 1);
    ck_assert_int_eq(b[0].port, fk->port);
    ck_assert_int_eq(b[1].id, 3);
    ck_assert_int_eq(b[1].port, fk->port);
    /* Topics merged into the cache before, between and after the cached ones. */
    ck_assert_int_eq(sf_client_metadata_wait(cl, "zz", 0, sf_clock_mono_ms() + 10000), SF_OK);
    ck_assert_int_eq(sf_client_metadata_wait(cl, "a", 0, sf_clock_mono_ms() + 10000), SF_OK);
    ck_assert_int_eq(sf_client_metadata_wait(cl, "m", 0, sf_clock_mono_ms() + 10000), SF_OK);
    ck_assert_int_eq(sf_client_metadata_wait(cl, "b", 0, sf_clock_mono_ms() + 10000), SF_OK);
    ck_assert_ptr_nonnull(sf_client_topic(cl, "dups"));
    ck_assert_str_eq(sf_client_topic(cl, "a")->name, "a");
    ck_assert_str_eq(sf_client_topic(cl, "b")->name, "b");
    ck_assert_str_eq(sf_client_topic(cl, "m")->name, "m");
    ck_assert_str_eq(sf_client_topic(cl, "zz")->name, "zz");
    ck_assert_ptr_null(sf_client_topic(cl, "c"));
    sf_client_unlock(cl);
    sf_client_destroy(cl);
    fake_stop(fk);
}
END_TEST

/* A topic being created (LEADER_NOT_AVAILABLE at first) is refreshed until it has its
 * partitions; sf_client_metadata_wait returns then. */
START_TEST(test_metadata_settling) {
    fake_t *fk = fake_start(FAKE_NORMAL, 0);
    sf_client_t *cl;
    const sf_client_topic_t *t;
    fk->slow_left = 3;
    cl = client_for(fk->port, NULL, 0);
    sf_client_lock(cl);
    ck_assert_int_eq(sf_client_metadata_wait(cl, "slow", 1, sf_clock_mono_ms() + 20000), SF_OK);
    t = sf_client_topic(cl, "slow");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->err, 0);
    ck_assert_int_eq(t->partition_count, 2);
    sf_client_unlock(cl);
    ck_assert_int_eq(fake_get(fk, &fk->slow_left), 0);
    sf_client_destroy(cl);
    fake_stop(fk);
}
END_TEST

/* The first bootstrap server refuses connections: requests for any broker go to the next. */
START_TEST(test_bootstrap_failover) {
    fake_t *probe = fake_start(FAKE_NORMAL, 0), *fk;
    int dead = probe->port;
    char bs[96], err[256];
    sf_conf_t *conf = sf_conf_new();
    sf_client_t *cl;
    int32_t v = 31;
    fake_stop(probe);
    fk = fake_start(FAKE_NORMAL, 0);
    snprintf(bs, sizeof(bs), "127.0.0.1:%d, PLAINTEXT://127.0.0.1:%d", dead, fk->port);
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", bs, err, sizeof(err)), SF_OK);
    sf_conf_set(conf, "log_level", "err", NULL, 0);
    cl = sf_client_new(conf, NULL, 0, err, sizeof(err));
    ck_assert_msg(cl != NULL, "%s", err);
    sf_conf_destroy(conf);
    ck_assert_int_eq(sf_client_call(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5, i32_encode,
                                    echo_decode, &v, 10000),
                     SF_OK);
    ck_assert_int_eq(v, 31);
    ck_assert_int_eq(fake_get(fk, &fk->echo_seen), 1);
    sf_client_destroy(cl);
    fake_stop(fk);
}
END_TEST

/* ApiVersions v3 refused with UNSUPPORTED_VERSION and a range up to v1: the client retries
 * with v1 on the same connection and then sends requests. */
START_TEST(test_apiversions_downgrade) {
    fake_t *fk = fake_start(FAKE_NORMAL, 0);
    sf_client_t *cl;
    int32_t out = 0;
    fk->avs_max = 1;
    cl = client_for(fk->port, NULL, 0);
    ck_assert_int_eq(echo_call(cl, 10000, &out), SF_OK);
    ck_assert_int_eq(fake_get(fk, &fk->navs), 2);
    ck_assert_int_eq(fk->avs_versions[0], 3);
    ck_assert_int_eq(fk->avs_versions[1], 1);
    ck_assert_int_eq(fake_get(fk, &fk->conns), 1);
    ck_assert_int_eq(fake_get(fk, &fk->echo_version), 4);
    /* an API the broker does not advertise */
    ck_assert_int_eq(sf_client_call(cl, SF_CLIENT_ANY_BROKER, SF_PROTO_API_Fetch, 11, NULL, NULL,
                                    NULL, 10000),
                     SF_ERROR_UNSUPPORTED);
    sf_client_destroy(cl);
    fake_stop(fk);
}
END_TEST

static void noresp_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                        sf_rbuf_t *body, void *arg) {
    echo_t *e = arg;
    (void)broker_id;
    e->err = err;
    e->version = version;
    e->got = body ? 1 : 0;
    e->done = 1;
    sf_client_signal(cl);
}

/* SF_CLIENT_NO_RESPONSE: the callback runs once the request is written, body NULL, and a
 * normal request after it on the same connection gets its own answer. */
START_TEST(test_no_response) {
    fake_t *fk = fake_start(FAKE_NORMAL, 0);
    sf_client_t *cl = client_for(fk->port, NULL, 0);
    echo_t e = {.value = -5, .got = -5};
    int32_t out = 0;
    sf_client_lock(cl);
    ck_assert_int_eq(sf_client_request(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5, echo_encode,
                                       noresp_done, &e, 10000, SF_CLIENT_NO_RESPONSE),
                     SF_OK);
    ck_assert_int_eq(e.done, 0); /* never inside sf_client_request */
    while (!e.done)
        ck_assert_int_eq(sf_client_wait(cl, sf_clock_mono_ms() + 10000), SF_OK);
    ck_assert_int_eq(e.err, 0);
    ck_assert_int_eq(e.got, 0);
    ck_assert_int_eq(e.version, 4);
    ck_assert_int_eq(sf_client_inflight(cl, SF_CLIENT_ANY_BROKER), 0);
    sf_client_unlock(cl);
    ck_assert_int_eq(echo_call(cl, 10000, &out), SF_OK);
    ck_assert_int_eq(out, 0);
    sf_client_destroy(cl);
    ck_assert_int_eq(fake_get(fk, &fk->echo_seen), 2);
    ck_assert_int_eq(fake_get(fk, &fk->conns), 1);
    fake_stop(fk);
}
END_TEST

/* A request queued while the broker is not listening yet is sent once it is (it was never
 * sent, so the connection failures do not fail it). */
START_TEST(test_queued_survives_reconnect) {
    fake_t *probe = fake_start(FAKE_NORMAL, 0);
    int port = probe->port;
    fake_t *fk;
    sf_client_t *cl;
    echo_t e = {.value = 9};
    int counter = 0;
    fake_stop(probe); /* the port is free now, nothing listens */
    cl = client_for(port, NULL, 0);
    e.counter = &counter;
    sf_client_lock(cl);
    ck_assert_int_eq(sf_client_request(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5, echo_encode,
                                       echo_done, &e, 20000, 0),
                     SF_OK);
    /* let a few connection attempts fail */
    sf_client_wait(cl, sf_clock_mono_ms() + 300);
    ck_assert_int_eq(e.done, 0);
    sf_client_unlock(cl);
    fk = fake_start(FAKE_NORMAL, port);
    sf_client_lock(cl);
    ck_assert_int_eq(wait_all(cl, &e, 1), 0);
    ck_assert_int_eq(e.err, 0);
    ck_assert_int_eq(e.got, 9);
    sf_client_unlock(cl);
    sf_client_destroy(cl);
    fake_stop(fk);
}
END_TEST

/* The broker closes the connection with a request in flight: that request fails with
 * TRANSPORT, the next one reconnects and succeeds. */
START_TEST(test_inflight_fails_on_close) {
    fake_t *fk = fake_start(FAKE_CLOSE_FIRST, 0);
    sf_client_t *cl = client_for(fk->port, NULL, 0);
    int32_t out = 0;
    ck_assert_int_eq(echo_call(cl, 10000, &out), SF_ERROR_TRANSPORT);
    ck_assert_int_eq(echo_call(cl, 10000, &out), SF_OK);
    ck_assert_int_eq(fake_get(fk, &fk->conns), 2);
    sf_client_destroy(cl);
    fake_stop(fk);
}
END_TEST

/* ------------------------------------------------------------------------------------------
 * limits
 * ------------------------------------------------------------------------------------------ */

/* A call to a fake broker in @mode, which answers with a bad frame, fails with TRANSPORT. */
static void check_bad_frame(int mode) {
    fake_t *fk = fake_start(mode, 0);
    sf_client_t *cl = client_for(fk->port, NULL, 0);
    int32_t out = 0;
    ck_assert_int_eq(echo_call(cl, 10000, &out), SF_ERROR_TRANSPORT);
    sf_client_destroy(cl);
    fake_stop(fk);
}

/* A 2 GiB length prefix closes the connection (TRANSPORT) without allocating it. */
START_TEST(test_frame_cap) {
    check_bad_frame(FAKE_HUGE_FRAME);
}
END_TEST

/* FAKE_LARGE: the body is the value, then exactly that many pattern bytes. */
static void large_done(sf_client_t *cl, int err, int32_t broker_id, int16_t version,
                       sf_rbuf_t *body, void *arg) {
    echo_t *e = arg;
    int ok = 0;
    if (body && sf_rbuf_i32(body) == e->value && sf_rbuf_remaining(body) == (size_t)e->value) {
        sf_slice_t s = sf_rbuf_raw(body, (size_t)e->value);
        int32_t j;
        for (j = 0; !body->err && j < s.len && s.p[j] == large_byte(e->value, (size_t)j); j++)
            ;
        ok = !body->err && j == e->value;
    }
    echo_done(cl, err, broker_id, version, NULL, arg); /* lock held: nobody looks yet */
    e->got = ok ? e->value : -1;
}

/* Pipelined responses of every size class (small, above the plain read size, above the
 * largest single read, frames ending mid-read) arrive whole and in order. */
START_TEST(test_large_frames) {
    static const int32_t sizes[] = {0,         70000, 3 << 20, 100,    (5 << 20) + 3,
                                    65536 - 8, 17,    200000,  1 << 20, 9};
    enum { N = sizeof(sizes) / sizeof(sizes[0]) };
    fake_t *fk = fake_start(FAKE_LARGE, 0);
    sf_client_t *cl = client_for(fk->port, NULL, 0);
    echo_t e[N];
    int counter = 0, i, round;
    sf_client_lock(cl);
    for (round = 0; round < 2; round++) {
        memset(e, 0, sizeof(e));
        for (i = 0; i < N; i++) {
            e[i].value = sizes[i];
            e[i].counter = &counter;
            ck_assert_int_eq(sf_client_request(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5,
                                               echo_encode, large_done, &e[i], 20000, 0),
                             SF_OK);
        }
        ck_assert_int_eq(wait_all(cl, e, N), 0);
        for (i = 0; i < N; i++) {
            ck_assert_int_eq(e[i].err, 0);
            ck_assert_int_eq(e[i].got, sizes[i]);
        }
    }
    sf_client_unlock(cl);
    sf_client_destroy(cl);
    ck_assert_int_eq(fake_get(fk, &fk->conns), 1);
    fake_stop(fk);
}
END_TEST

/* A response with someone else's correlation id closes the connection. */
START_TEST(test_bad_correlation) {
    check_bad_frame(FAKE_BAD_CORR);
}
END_TEST

/* A broker that never answers: the request times out; the connection is then closed, so a
 * second request pipelined behind it fails with TRANSPORT (or times out itself). */
START_TEST(test_request_timeout) {
    fake_t *fk = fake_start(FAKE_SILENT, 0);
    sf_client_t *cl = client_for(fk->port, NULL, 0);
    echo_t e[2];
    int counter = 0;
    memset(e, 0, sizeof(e));
    e[0].counter = e[1].counter = &counter;
    sf_client_lock(cl);
    ck_assert_int_eq(sf_client_request(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5, echo_encode,
                                       echo_done, &e[0], 200, 0),
                     SF_OK);
    ck_assert_int_eq(sf_client_request(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5, echo_encode,
                                       echo_done, &e[1], 60000, 0),
                     SF_OK);
    ck_assert_int_eq(wait_all(cl, e, 2), 0);
    ck_assert_int_eq(e[0].err, SF_ERROR_TIMED_OUT);
    ck_assert_int_eq(e[1].err, SF_ERROR_TRANSPORT);
    ck_assert_int_eq(e[0].order, 0);
    sf_client_unlock(cl);
    sf_client_destroy(cl);
    fake_stop(fk);
}
END_TEST

/* Nothing listens: a request times out (never sent) instead of failing at once. */
START_TEST(test_unreachable_timeout) {
    fake_t *probe = fake_start(FAKE_NORMAL, 0);
    int port = probe->port;
    sf_client_t *cl;
    int32_t out = 0;
    fake_stop(probe);
    cl = client_for(port, NULL, 0);
    ck_assert_int_eq(echo_call(cl, 300, &out), SF_ERROR_TIMED_OUT);
    sf_client_destroy(cl);
}
END_TEST

/* Destroy with two requests in flight: both get SF_ERROR_DESTROYED before on_stop runs. */
START_TEST(test_destroy_inflight) {
    fake_t *fk = fake_start(FAKE_SILENT, 0);
    role_state_t rs;
    sf_client_role_t role;
    sf_client_t *cl;
    echo_t e[2];
    int counter = 0;
    memset(&rs, 0, sizeof(rs));
    memset(&role, 0, sizeof(role));
    memset(e, 0, sizeof(e));
    role.self = &rs;
    role.on_stop = role_stop;
    rs.pending = &e[0];
    e[0].counter = e[1].counter = &counter;
    cl = client_for(fk->port, &role, 1);
    sf_client_lock(cl);
    ck_assert_int_eq(sf_client_request(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5, echo_encode,
                                       echo_done, &e[0], 60000, 0),
                     SF_OK);
    ck_assert_int_eq(sf_client_request(cl, SF_CLIENT_ANY_BROKER, ECHO_API, 5, echo_encode,
                                       echo_done, &e[1], 60000, 0),
                     SF_OK);
    sf_client_unlock(cl);
    while (fake_get(fk, &fk->echo_seen) < 2)
        usleep(10000);
    sf_client_destroy(cl);
    ck_assert_int_eq(e[0].done, 1);
    ck_assert_int_eq(e[0].err, SF_ERROR_DESTROYED);
    ck_assert_int_eq(e[1].done, 1);
    ck_assert_int_eq(e[1].err, SF_ERROR_DESTROYED);
    ck_assert_int_eq(rs.stop_calls, 1);
    ck_assert_int_eq(rs.inflight_at_stop, 0);
    fake_stop(fk);
}
END_TEST

/* Configuration the core refuses. */
START_TEST(test_bad_bootstrap) {
    static const char *bad[] = {"localhost", "host:", ":9092", "host:99999", "host:12x", ","};
    char err[256];
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sf_conf_t *conf = sf_conf_new();
        sf_client_t *cl;
        sf_conf_set(conf, "bootstrap.servers", bad[i], NULL, 0);
        err[0] = '\0';
        cl = sf_client_new(conf, NULL, 0, err, sizeof(err));
        ck_assert_msg(cl == NULL, "accepted bootstrap.servers=%s", bad[i]);
        ck_assert_int_gt((int)strlen(err), 0);
        sf_conf_destroy(conf);
    }
}
END_TEST

static Suite *client_suite(void) {
    Suite *s = suite_create("client");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_set_timeout(core, 60);
    tcase_set_timeout(limits, 60);
    tcase_add_test(core, test_pipelining_order);
    tcase_add_test(core, test_metadata_and_routing);
    tcase_add_test(core, test_metadata_settling);
    tcase_add_test(core, test_bootstrap_failover);
    tcase_add_test(core, test_apiversions_downgrade);
    tcase_add_test(core, test_no_response);
    tcase_add_test(core, test_queued_survives_reconnect);
    tcase_add_test(core, test_inflight_fails_on_close);
    tcase_add_test(core, test_large_frames);
    tcase_add_test(limits, test_metadata_duplicates);
    tcase_add_test(limits, test_frame_cap);
    tcase_add_test(limits, test_bad_correlation);
    tcase_add_test(limits, test_request_timeout);
    tcase_add_test(limits, test_unreachable_timeout);
    tcase_add_test(limits, test_destroy_inflight);
    tcase_add_test(limits, test_bad_bootstrap);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(client_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
