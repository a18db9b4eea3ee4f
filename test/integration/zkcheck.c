/* zkcheck: integration test of zkmeta (zk.c, cluster.c) against a running ZooKeeper.
 *
 *   zkcheck <connect-string> [--restart-cmd '<shell command>']
 *
 * <connect-string> is "host:port[,host:port...][/chroot]"; everything is created under
 * "<chroot>/zkcheck-<pid>" and removed at the end. With --restart-cmd, the command (run with
 * /bin/sh by the caller's authority, e.g. "kill -9 PID && start the server again") must
 * restart the ZooKeeper server within the session timeout; the test then checks that the
 * session, the registration and the controller survive it.
 *
 * Prints one "ok"/"not ok" line per check and exits 0 only if every check passed. */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>
#include <jansson.h>

#include "cluster.h"
#include "znode.h"
#include "err.h"
#include "logging.h"
#include "zk.h"

#define SESSION_MS 6000

static struct event_base *base;
static int failures, checks;
static char root[512];     /* connect string with the test chroot */
static char hosts[512];    /* connect string without any chroot */

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...) {
    va_list ap;
    checks++;
    if (!ok)
        failures++;
    printf("%s %d - ", ok ? "ok" : "not ok", checks);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static int64_t now_ms(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void tick_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    (void)arg;
}

/* Run the loop until pred(arg) holds or @ms pass; returns pred's last value. */
static int run_until(int (*pred)(void *), void *arg, int ms) {
    int64_t end = now_ms() + ms;
    struct event *tick = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
    struct timeval tv = {0, 20 * 1000};
    int ok;
    event_add(tick, &tv);
    while (!(ok = pred(arg)) && now_ms() < end)
        event_base_loop(base, EVLOOP_ONCE);
    event_free(tick);
    return ok;
}

static int never(void *arg) {
    (void)arg;
    return 0;
}

static void run_for(int ms) { run_until(never, NULL, ms); }

/* ---- a broker instance ---- */

typedef struct inst {
    sf_cluster_t *cl;
    int32_t id;
    int ready, err;
    char errmsg[256];
    sf_cluster_snapshot_t *snap;
    int nsnaps;
    int is_ctrl;
    int32_t ctrl_epoch;
    char ep[64];
    const char *eps[1];
} inst_t;

static void on_ready(void *arg, int err, const char *msg) {
    inst_t *in = arg;
    in->ready = 1;
    in->err = err;
    snprintf(in->errmsg, sizeof(in->errmsg), "%s", msg ? msg : "");
}

static void on_snapshot(void *arg, sf_cluster_snapshot_t *snap) {
    inst_t *in = arg;
    sf_cluster_snapshot_unref(in->snap);
    in->snap = sf_cluster_snapshot_ref(snap);
    in->nsnaps++;
}

static void on_controller(void *arg, int is_ctrl, int32_t epoch) {
    inst_t *in = arg;
    in->is_ctrl = is_ctrl;
    in->ctrl_epoch = epoch;
}

static int inst_start(inst_t *in, const char *connect, int32_t id, int session_ms, int conn_ms) {
    sf_cluster_options_t opt;
    sf_cluster_callbacks_t cb = {on_ready, on_snapshot, on_controller};
    memset(in, 0, sizeof(*in));
    in->id = id;
    snprintf(in->ep, sizeof(in->ep), "PLAINTEXT://127.0.0.1:%d", 19092 + (int)id);
    in->eps[0] = in->ep;
    memset(&opt, 0, sizeof(opt));
    opt.zk_connect = connect;
    opt.session_timeout_ms = session_ms;
    opt.connection_timeout_ms = conn_ms;
    opt.broker_id = id;
    opt.host = "127.0.0.1";
    opt.port = 19092 + id;
    opt.endpoints = in->eps;
    opt.nendpoints = 1;
    in->cl = sf_cluster_new(base, &opt, &cb, in);
    if (!in->cl)
        return -1;
    return sf_cluster_start(in->cl);
}

static void inst_stop(inst_t *in) {
    sf_cluster_free(in->cl);
    in->cl = NULL;
    sf_cluster_snapshot_unref(in->snap);
    in->snap = NULL;
}

static int is_ready(void *arg) { return ((inst_t *)arg)->ready; }

/* ---- a probe session for reading znodes directly ---- */

static sf_zk_t *probe;
static int probe_state;

static void probe_state_cb(sf_zk_t *zk, int state, void *arg) {
    (void)zk;
    (void)arg;
    probe_state = state;
}

static int probe_connected(void *arg) {
    (void)arg;
    return probe_state == SF_ZK_CONNECTED;
}

struct pget {
    int done, err;
    char *data;
    sf_zk_stat_t stat;
    char **children;
    int nchildren;
};

static int pget_done(void *arg) { return ((struct pget *)arg)->done; }

static void pget_data_cb(int err, int zrc, const char *data, int len, const sf_zk_stat_t *stat,
                         void *arg) {
    struct pget *g = arg;
    (void)zrc;
    g->done = 1;
    g->err = err;
    if (err == SF_OK) {
        g->data = strndup(data, (size_t)len);
        g->stat = *stat;
    }
}

static void pget_children_cb(int err, int zrc, char *const *children, int n,
                             const sf_zk_stat_t *stat, void *arg) {
    struct pget *g = arg;
    int i;
    (void)zrc;
    (void)stat;
    g->done = 1;
    g->err = err;
    if (err == SF_OK && n > 0) {
        g->children = calloc((size_t)n, sizeof(char *));
        for (i = 0; i < n; i++)
            g->children[i] = strdup(children[i]);
        g->nchildren = n;
    }
}

static void pget_free(struct pget *g) {
    int i;
    free(g->data);
    for (i = 0; i < g->nchildren; i++)
        free(g->children[i]);
    free(g->children);
    memset(g, 0, sizeof(*g));
}

/* Synchronous read of @path; returns its error. */
static int probe_get(const char *path, struct pget *g) {
    memset(g, 0, sizeof(*g));
    if (sf_zk_get(probe, path, NULL, NULL, pget_data_cb, g) != SF_OK)
        return SF_ERR_STATE;
    run_until(pget_done, g, 10000);
    return g->done ? g->err : SF_ERR_IO;
}

static int probe_children(const char *path, struct pget *g) {
    memset(g, 0, sizeof(*g));
    if (sf_zk_get_children(probe, path, NULL, NULL, pget_children_cb, g) != SF_OK)
        return SF_ERR_STATE;
    run_until(pget_done, g, 10000);
    return g->done ? g->err : SF_ERR_IO;
}

static int probe_exists(const char *path) {
    struct pget g;
    int err = probe_get(path, &g);
    pget_free(&g);
    return err == SF_OK;
}

static void del_cb(int err, int zrc, void *arg) {
    struct pget *g = arg;
    (void)zrc;
    g->done = 1;
    g->err = err;
}

static void probe_delete_tree(const char *path) {
    struct pget g, d;
    int i;
    if (probe_children(path, &g) == SF_OK) {
        for (i = 0; i < g.nchildren; i++) {
            char sub[1024];
            snprintf(sub, sizeof(sub), "%s/%s", strcmp(path, "/") ? path : "", g.children[i]);
            probe_delete_tree(sub);
        }
    }
    pget_free(&g);
    if (!strcmp(path, "/"))
        return;
    memset(&d, 0, sizeof(d));
    if (sf_zk_delete(probe, path, -1, del_cb, &d) == SF_OK)
        run_until(pget_done, &d, 10000);
}

/* ---- predicates on snapshots ---- */

struct snap_pred {
    inst_t *in;
    const char *topic;
    int32_t nparts;     /* topic with exactly this many partitions (-1: absent) */
    int32_t broker;     /* broker present */
    const char *cfg_key, *cfg_val;
    int nbrokers;
};

static int has_topic_parts(void *arg) {
    struct snap_pred *p = arg;
    const sf_cluster_topic_t *t;
    int i;
    if (!p->in->snap)
        return 0;
    t = sf_cluster_snapshot_topic(p->in->snap, p->topic);
    if (p->nparts < 0)
        return t == NULL;
    if (!t || t->npartitions != p->nparts)
        return 0;
    for (i = 0; i < t->npartitions; i++)
        if (t->partitions[i].leader < 0)
            return 0;
    if (p->cfg_key) {
        const char *v = sf_cluster_topic_config(t, p->cfg_key);
        if (!v || strcmp(v, p->cfg_val))
            return 0;
    }
    return 1;
}

static int has_nbrokers(void *arg) {
    struct snap_pred *p = arg;
    return p->in->snap && p->in->snap->nbrokers == p->nbrokers;
}

static int is_ctrl(void *arg) { return ((inst_t *)arg)->is_ctrl; }

/* A dynamic broker config in an instance's snapshot: its own (cluster_default 0) or the
 * default's, with @n entries and @key = @val (@key NULL: only the count; @val NULL: absent). */
struct bcfg_pred {
    inst_t *in;
    int cluster_default;
    int n;
    const char *key, *val;
};

static int has_bcfg(void *arg) {
    struct bcfg_pred *p = arg;
    const sf_cluster_snapshot_t *snap = p->in->snap;
    const char *v;
    if (!snap)
        return 0;
    if ((p->cluster_default ? snap->ndefault_configs : snap->nbroker_configs) != p->n)
        return 0;
    if (!p->key)
        return 1;
    v = sf_cluster_snapshot_broker_config(snap, p->cluster_default, p->key);
    return p->val ? v && !strcmp(v, p->val) : v == NULL;
}

/* The change notifications under /config/changes naming @entity_path. */
static int count_changes(const char *entity_path) {
    struct pget g, d;
    char want[128], path[256];
    int i, n = 0;
    snprintf(want, sizeof(want), "{\"version\":2,\"entity_path\":\"%s\"}", entity_path);
    if (probe_children("/config/changes", &g) != SF_OK)
        return -1;
    for (i = 0; i < g.nchildren; i++) {
        snprintf(path, sizeof(path), "/config/changes/%s", g.children[i]);
        if (!strncmp(g.children[i], "config_change_", 14) && strlen(g.children[i]) == 24 &&
            probe_get(path, &d) == SF_OK && d.data && !strcmp(d.data, want) &&
            d.stat.ephemeral_owner == 0)
            n++;
        pget_free(&d);
    }
    pget_free(&g);
    return n;
}

struct done_state {
    int done, err;
};

static void admin_done(void *arg, int err) {
    struct done_state *d = arg;
    d->done = 1;
    d->err = err;
}

static int admin_is_done(void *arg) { return ((struct done_state *)arg)->done; }

static int admin_wait(int rc, struct done_state *d) {
    if (rc != SF_OK)
        return rc;
    run_until(admin_is_done, d, 15000);
    return d->done ? d->err : SF_ERR_IO;
}

/* ---- the checks ---- */

static void check_broker_znode(inst_t *in) {
    char path[64];
    struct pget g;
    json_t *o;
    json_error_t jerr;
    int rc;
    snprintf(path, sizeof(path), "/brokers/ids/%d", (int)in->id);
    rc = probe_get(path, &g);
    check(rc == SF_OK, "%s exists", path);
    o = g.data ? json_loads(g.data, 0, &jerr) : NULL;
    check(o && json_integer_value(json_object_get(o, "version")) == 1 &&
              !strcmp(json_string_value(json_object_get(o, "host")) ?: "", "127.0.0.1") &&
              json_integer_value(json_object_get(o, "port")) == 19092 + in->id &&
              json_array_size(json_object_get(o, "endpoints")) == 1 &&
              !strcmp(json_string_value(json_array_get(json_object_get(o, "endpoints"), 0)) ?: "",
                      in->ep) &&
              json_is_null(json_object_get(o, "rack")) &&
              json_is_string(json_object_get(o, "timestamp")),
          "%s has the registration JSON: %s", path, g.data ? g.data : "(none)");
    check(g.stat.ephemeral_owner != 0 &&
              g.stat.ephemeral_owner == sf_zk_session_id(sf_cluster_zk(in->cl)),
          "%s is ephemeral and owned by the broker's session", path);
    check(sf_cluster_broker_epoch(in->cl) == g.stat.czxid,
          "broker epoch %lld is the czxid %lld", (long long)sf_cluster_broker_epoch(in->cl),
          (long long)g.stat.czxid);
    json_decref(o);
    pget_free(&g);
}

static int32_t read_epoch(void) {
    struct pget g;
    int32_t e = -1;
    if (probe_get("/controller_epoch", &g) == SF_OK && g.data)
        sf_znode_epoch_decode(g.data, strlen(g.data), &e);
    pget_free(&g);
    return e;
}

static int32_t read_controller(void) {
    struct pget g;
    int32_t id = -1;
    if (probe_get("/controller", &g) == SF_OK && g.data)
        sf_znode_controller_decode(g.data, strlen(g.data), &id);
    pget_free(&g);
    return id;
}

static int closed_port(void) {
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
        getsockname(fd, (struct sockaddr *)&sa, &sl)) {
        if (fd >= 0)
            close(fd);
        return 1;
    }
    port = ntohs(sa.sin_port);
    close(fd); /* nothing listens there now */
    return port;
}

struct sess_pred {
    inst_t *in;
    int64_t old_session;
};

static int new_session_registered(void *arg) {
    struct sess_pred *p = arg;
    sf_zk_t *zk = sf_cluster_zk(p->in->cl);
    return sf_zk_state(zk) == SF_ZK_CONNECTED && sf_zk_session_id(zk) != p->old_session &&
           sf_zk_session_id(zk) != 0 && sf_cluster_broker_epoch(p->in->cl) > 0 &&
           p->in->is_ctrl;
}

static int same_session_connected(void *arg) {
    struct sess_pred *p = arg;
    sf_zk_t *zk = sf_cluster_zk(p->in->cl);
    return sf_zk_state(zk) == SF_ZK_CONNECTED && sf_zk_session_id(zk) == p->old_session;
}

int main(int argc, char **argv) {
    inst_t a, b, c, u;
    const char *restart_cmd = NULL;
    struct done_state d;
    struct snap_pred sp;
    struct pget g;
    const sf_cluster_topic_t *t;
    int32_t epoch0, epoch1, i;
    int rc;
    int64_t t0;
    char upath[64];
    const char *slash;
    sf_cluster_config_entry_t cfg[2] = {{"retention.ms", "3600000"}, {"cleanup.policy", "compact"}};

    if (argc < 2 || (argc != 2 && argc != 4) ||
        (argc == 4 && strcmp(argv[2], "--restart-cmd"))) {
        fprintf(stderr, "usage: %s <zookeeper connect string> [--restart-cmd '<command>']\n",
                argv[0]);
        return 2;
    }
    if (argc == 4)
        restart_cmd = argv[3];
    if (getenv("ZKCHECK_DEBUG"))
        sf_log_level = SF_LOG_DEBUG;
    else if (!getenv("ZKCHECK_VERBOSE"))
        sf_log_level = SF_LOG_ERR;
    evthread_use_pthreads();
    base = event_base_new();
    snprintf(root, sizeof(root), "%s%szkcheck-%d", argv[1],
             strchr(argv[1], '/') ? "/" : "/", (int)getpid());
    slash = strchr(argv[1], '/');
    snprintf(hosts, sizeof(hosts), "%.*s", slash ? (int)(slash - argv[1]) : (int)strlen(argv[1]),
             argv[1]);
    printf("# ZooKeeper %s, test root %s\n", hosts, root);

    probe = sf_zk_new(base, root, SESSION_MS, probe_state_cb, NULL);
    if (!probe || sf_zk_start(probe, 15000) != SF_OK || !run_until(probe_connected, NULL, 16000)) {
        check(0, "probe session connects to %s (chroot created)", root);
        return 1;
    }
    check(1, "probe session connects to %s (chroot created)", root);

    /* 1. registration */
    check(inst_start(&a, root, 1, SESSION_MS, 15000) == SF_OK, "broker 1 starts");
    run_until(is_ready, &a, 16000);
    check(a.ready && a.err == SF_OK, "broker 1 ready (%s)", a.errmsg);
    check(a.snap && sf_cluster_current(a.cl) == a.snap, "first snapshot delivered before on_ready");
    check(a.snap && a.snap->cluster_id && strlen(a.snap->cluster_id) == 22,
          "cluster id created: %s", a.snap && a.snap->cluster_id ? a.snap->cluster_id : "-");
    rc = probe_get("/cluster/id", &g);
    check(rc == SF_OK && g.data && strstr(g.data, "\"version\":1"), "/cluster/id: %s",
          g.data ? g.data : "-");
    pget_free(&g);
    check(probe_exists("/brokers/topics") && probe_exists("/config/topics") &&
              probe_exists("/config/brokers") && probe_exists("/config/changes") &&
              probe_exists("/admin/delete_topics"),
          "base paths exist");
    check(a.snap && a.snap->nbroker_configs == 0 && !a.snap->broker_configs &&
              a.snap->ndefault_configs == 0 && !a.snap->default_configs,
          "no dynamic broker configs yet");
    check_broker_znode(&a);
    check(a.snap && sf_cluster_snapshot_broker(a.snap, 1) &&
              sf_cluster_snapshot_broker(a.snap, 1)->epoch == sf_cluster_broker_epoch(a.cl) &&
              sf_cluster_snapshot_broker(a.snap, 1)->nendpoints == 1,
          "snapshot lists broker 1 with its epoch");

    /* 2. controller */
    run_until(is_ctrl, &a, 5000);
    epoch0 = read_epoch();
    check(a.is_ctrl && sf_cluster_is_controller(a.cl), "broker 1 is the controller");
    check(read_controller() == 1 && epoch0 >= 1 && sf_cluster_controller_epoch(a.cl) == epoch0,
          "/controller names broker 1, /controller_epoch %d matches", (int)epoch0);

    /* 3. a second instance with the same broker id is refused */
    t0 = now_ms();
    check(inst_start(&u, root, 1, SESSION_MS, 15000) == SF_OK, "a second broker 1 starts");
    run_until(is_ready, &u, SESSION_MS * 3 + 10000);
    check(u.ready && u.err != SF_OK &&
              strstr(u.errmsg, "broker.id 1 is already registered in ZooKeeper by another broker"),
          "second broker 1 refused after %lld ms: %s", (long long)(now_ms() - t0), u.errmsg);
    inst_stop(&u);
    check_broker_znode(&a); /* still ours */

    /* 4. a second broker */
    check(inst_start(&b, root, 2, SESSION_MS, 15000) == SF_OK, "broker 2 starts");
    run_until(is_ready, &b, 16000);
    check(b.ready && b.err == SF_OK, "broker 2 ready (%s)", b.errmsg);
    sp = (struct snap_pred){.in = &a, .nbrokers = 2};
    check(run_until(has_nbrokers, &sp, 5000), "broker 1 sees 2 brokers");
    check(!b.is_ctrl && b.snap && b.snap->controller_id == 1,
          "broker 2 is not the controller and sees broker 1 as controller");

    /* 5. topic create */
    memset(&d, 0, sizeof(d));
    check(admin_wait(sf_cluster_topic_create(a.cl, "t1", 3, 2, NULL, cfg, 2, admin_done, &d), &d) ==
              SF_OK,
          "create t1 (3 partitions, rf 2)");
    sp = (struct snap_pred){.in = &b, .topic = "t1", .nparts = 3};
    check(run_until(has_topic_parts, &sp, 5000), "broker 2's snapshot has t1 with 3 leaders");
    t = sf_cluster_snapshot_topic(b.snap, "t1");
    if (t) {
        static const uint8_t zero[16];
        int good = memcmp(t->topic_id, zero, 16) != 0;
        for (i = 0; i < t->npartitions; i++) {
            const sf_cluster_partition_t *p = &t->partitions[i];
            good &= p->partition == i && p->nreplicas == 2 && p->replicas[0] != p->replicas[1] &&
                    p->leader == p->replicas[0] && p->leader_epoch == 0 && p->nisr == 2 &&
                    p->isr[0] == p->replicas[0] && p->isr[1] == p->replicas[1] &&
                    p->controller_epoch == epoch0 && p->state_version == 0;
        }
        /* The controller (broker 1) wrote the states: both replicas are live, so the ISR is
         * both of them in assignment order (as Kafka does at creation). */
        check(good, "t1: topic id set, leader = first replica, isr = the live replicas, "
                    "epochs and version right");
        check(t->nconfigs == 2 && !strcmp(sf_cluster_topic_config(t, "cleanup.policy") ?: "",
                                          "compact"),
              "t1 configs in snapshot");
    } else {
        check(0, "t1 in snapshot");
    }
    rc = probe_get("/brokers/topics/t1", &g);
    check(rc == SF_OK && g.data &&
              strstr(g.data, "\"partitions\":{\"0\":[") && strstr(g.data, "\"topic_id\":\""),
          "/brokers/topics/t1: %s", g.data ? g.data : "-");
    pget_free(&g);
    rc = probe_get("/brokers/topics/t1/partitions/2/state", &g);
    check(rc == SF_OK && g.data &&
              strstr(g.data, "\"leader_epoch\":0"),
          "/brokers/topics/t1/partitions/2/state: %s", g.data ? g.data : "-");
    pget_free(&g);
    rc = probe_get("/config/topics/t1", &g);
    check(rc == SF_OK && g.data &&
              !strcmp(g.data, "{\"version\":1,\"config\":{\"retention.ms\":\"3600000\","
                              "\"cleanup.policy\":\"compact\"}}"),
          "/config/topics/t1: %s", g.data ? g.data : "-");
    pget_free(&g);

    /* 6. errors */
    memset(&d, 0, sizeof(d));
    check(admin_wait(sf_cluster_topic_create(a.cl, "t1", 1, 1, NULL, NULL, 0, admin_done, &d),
                     &d) == SF_ERR_EXISTS,
          "creating t1 again: SF_ERR_EXISTS");
    check(sf_cluster_topic_create(a.cl, "t9", 1, 3, NULL, NULL, 0, admin_done, &d) ==
              SF_ERR_INVALID,
          "replication factor 3 with 2 live brokers: SF_ERR_INVALID");
    check(sf_cluster_topic_create(a.cl, "bad/name", 1, 1, NULL, NULL, 0, admin_done, &d) ==
              SF_ERR_INVALID,
          "illegal topic name: SF_ERR_INVALID");

    /* 7. add partitions */
    memset(&d, 0, sizeof(d));
    check(admin_wait(sf_cluster_partitions_add(a.cl, "t1", 5, NULL, admin_done, &d), &d) == SF_OK,
          "grow t1 to 5 partitions");
    sp = (struct snap_pred){.in = &a, .topic = "t1", .nparts = 5};
    check(run_until(has_topic_parts, &sp, 5000), "snapshot has t1 with 5 partitions and leaders");
    t = a.snap ? sf_cluster_snapshot_topic(a.snap, "t1") : NULL;
    check(t && t->npartitions == 5 && t->partitions[4].nreplicas == 2 &&
              t->partitions[3].nisr == 2 && t->partitions[3].isr[0] == t->partitions[3].leader,
          "new partitions have 2 replicas, both in the isr, the leader first");
    check(probe_exists("/brokers/topics/t1/partitions/4/state"), "partition 4 state exists");
    memset(&d, 0, sizeof(d));
    check(admin_wait(sf_cluster_partitions_add(a.cl, "t1", 4, NULL, admin_done, &d), &d) ==
              SF_ERR_INVALID,
          "shrinking t1: SF_ERR_INVALID");
    memset(&d, 0, sizeof(d));
    check(admin_wait(sf_cluster_partitions_add(a.cl, "nope", 4, NULL, admin_done, &d), &d) ==
              SF_ERR_NOTFOUND,
          "growing a missing topic: SF_ERR_NOTFOUND");

    /* 8. config */
    {
        sf_cluster_config_entry_t c2[1] = {{"retention.ms", "1000"}};
        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_topic_config_set(a.cl, "t1", c2, 1, admin_done, &d), &d) ==
                  SF_OK,
              "set t1 config");
        sp = (struct snap_pred){.in = &b, .topic = "t1", .nparts = 5, .cfg_key = "retention.ms",
                                .cfg_val = "1000"};
        check(run_until(has_topic_parts, &sp, 5000), "broker 2 sees the new config");
        t = b.snap ? sf_cluster_snapshot_topic(b.snap, "t1") : NULL;
        check(t && t->nconfigs == 1, "config replaced, not merged");
        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_topic_config_set(a.cl, "nope", c2, 1, admin_done, &d), &d) ==
                  SF_ERR_NOTFOUND,
              "config of a missing topic: SF_ERR_NOTFOUND");
    }

    /* 8b. dynamic broker configs */
    {
        sf_cluster_config_entry_t d1[2] = {{"log.retention.ms", "1000"},
                                           {"log.message.timestamp.type", "LogAppendTime"}};
        sf_cluster_config_entry_t d2[1] = {{"log.segment.bytes", "1048576"}};
        sf_cluster_config_entry_t b2[1] = {{"log.retention.hours", "5"}};
        struct bcfg_pred bp;
        const sf_cluster_snapshot_t *s0;
        struct done_state d0;

        check(sf_cluster_broker_config_set(a.cl, "x", d1, 2, admin_done, &d) == SF_ERR_INVALID &&
                  sf_cluster_broker_config_set(a.cl, "", d1, 2, admin_done, &d) ==
                      SF_ERR_INVALID &&
                  sf_cluster_broker_config_set(a.cl, "01", d1, 2, admin_done, &d) ==
                      SF_ERR_INVALID &&
                  sf_cluster_broker_config_set(a.cl, NULL, d1, 2, admin_done, &d) ==
                      SF_ERR_INVALID,
              "broker config of a bad entity: SF_ERR_INVALID");
        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_broker_config_set(a.cl, "<default>", d1, 2, admin_done, &d),
                         &d) == SF_OK,
              "set the cluster default (creates /config/brokers/<default>)");
        rc = probe_get("/config/brokers/<default>", &g);
        check(rc == SF_OK && g.data &&
                  !strcmp(g.data, "{\"version\":1,\"config\":{\"log.retention.ms\":\"1000\","
                                  "\"log.message.timestamp.type\":\"LogAppendTime\"}}"),
              "/config/brokers/<default>: %s", g.data ? g.data : "-");
        pget_free(&g);
        check(count_changes("brokers/<default>") == 1,
              "one persistent sequential /config/changes/config_change_ for brokers/<default>");
        bp = (struct bcfg_pred){.in = &b, .cluster_default = 1, .n = 2,
                                .key = "log.message.timestamp.type", .val = "LogAppendTime"};
        check(run_until(has_bcfg, &bp, 5000), "broker 2 sees the new default (watch: created)");
        s0 = b.snap;
        check(s0 && !strcmp(s0->default_configs[0].name, "log.message.timestamp.type") &&
                  !strcmp(s0->default_configs[1].name, "log.retention.ms") &&
                  !strcmp(sf_cluster_snapshot_broker_config(s0, 1, "log.retention.ms") ?: "",
                          "1000") &&
                  !sf_cluster_snapshot_broker_config(s0, 0, "log.retention.ms") &&
                  s0->nbroker_configs == 0,
              "the default is sorted by name; broker 2's own config stays empty");
        bp.in = &a;
        check(run_until(has_bcfg, &bp, 5000), "broker 1 sees it too");

        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_broker_config_set(b.cl, "<default>", d2, 1, admin_done, &d),
                         &d) == SF_OK,
              "replace the cluster default");
        bp = (struct bcfg_pred){.in = &a, .cluster_default = 1, .n = 1,
                                .key = "log.segment.bytes", .val = "1048576"};
        check(run_until(has_bcfg, &bp, 5000),
              "broker 1 sees the default replaced, not merged (watch: changed)");
        check(count_changes("brokers/<default>") == 2, "a second change notification");

        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_broker_config_set(a.cl, "2", b2, 1, admin_done, &d), &d) ==
                  SF_OK,
              "set broker 2's own dynamic config (from broker 1)");
        bp = (struct bcfg_pred){.in = &b, .cluster_default = 0, .n = 1,
                                .key = "log.retention.hours", .val = "5"};
        check(run_until(has_bcfg, &bp, 5000), "broker 2 sees its own config");
        run_for(300);
        check(a.snap && a.snap->nbroker_configs == 0 && a.snap->ndefault_configs == 1,
              "broker 1 does not take broker 2's config");
        check(count_changes("brokers/2") == 1, "a change notification for brokers/2");

        /* Deleted by another tool: gone from the snapshots, and watched for its return. */
        memset(&d0, 0, sizeof(d0));
        if (sf_zk_delete(probe, "/config/brokers/<default>", -1, del_cb, &d0) == SF_OK)
            run_until(admin_is_done, &d0, 10000);
        check(d0.done && d0.err == SF_OK, "delete /config/brokers/<default> directly");
        bp = (struct bcfg_pred){.in = &b, .cluster_default = 1, .n = 0};
        check(run_until(has_bcfg, &bp, 5000), "broker 2 sees no default (watch: deleted)");
        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_broker_config_set(a.cl, "<default>", d1, 2, admin_done, &d),
                         &d) == SF_OK,
              "set the cluster default again (creates it again)");
        bp = (struct bcfg_pred){.in = &b, .cluster_default = 1, .n = 2, .key = "log.retention.ms",
                                .val = "1000"};
        check(run_until(has_bcfg, &bp, 5000), "broker 2 sees it again (re-armed after deletion)");
        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_broker_config_set(a.cl, "2", NULL, 0, admin_done, &d), &d) ==
                  SF_OK,
              "clear broker 2's own config");
        bp = (struct bcfg_pred){.in = &b, .cluster_default = 0, .n = 0};
        check(run_until(has_bcfg, &bp, 5000), "broker 2's own config is empty");
        rc = probe_get("/config/brokers/2", &g);
        check(rc == SF_OK && g.data && !strcmp(g.data, "{\"version\":1,\"config\":{}}"),
              "/config/brokers/2: %s", g.data ? g.data : "-");
        pget_free(&g);
    }

    /* 9. explicit assignment */
    {
        int32_t as[4] = {2, 1, 1, 2};
        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_topic_create(b.cl, "t2", 2, 2, as, NULL, 0, admin_done, &d),
                         &d) == SF_OK,
              "create t2 with an explicit assignment");
        sp = (struct snap_pred){.in = &a, .topic = "t2", .nparts = 2};
        run_until(has_topic_parts, &sp, 5000);
        t = a.snap ? sf_cluster_snapshot_topic(a.snap, "t2") : NULL;
        check(t && t->partitions[0].replicas[0] == 2 && t->partitions[0].leader == 2 &&
                  t->partitions[1].replicas[0] == 1 && t->partitions[1].leader == 1 &&
                  t->nconfigs == 0,
              "t2 follows the assignment");
    }

    /* 10. delete */
    {
        sf_cluster_snapshot_t *before = sf_cluster_snapshot_ref(a.snap);
        const sf_cluster_topic_t *t2 = sf_cluster_snapshot_topic(before, "t2");
        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_topic_delete(b.cl, "t1", admin_done, &d), &d) == SF_OK,
              "delete t1 (a deletion request)");
        sp = (struct snap_pred){.in = &a, .topic = "t1", .nparts = -1};
        check(run_until(has_topic_parts, &sp, 5000), "t1 gone from the snapshot");
        /* Snapshots share the topics that did not change. */
        check(t2 && sf_cluster_snapshot_topic(a.snap, "t2") == t2 && a.snap != before,
              "the new snapshot shares t2 with the one before");
        check(sf_cluster_snapshot_topic_by_id(a.snap, t2->topic_id) == t2, "t2 found by its id");
        sf_cluster_snapshot_unref(before);
    }
    check(!probe_exists("/brokers/topics/t1") && !probe_exists("/config/topics/t1") &&
              !probe_exists("/admin/delete_topics/t1"),
          "t1 znodes and its deletion request gone (the controller purged them)");
    check(a.snap && sf_cluster_snapshot_topic(a.snap, "t2"), "t2 still there");
    memset(&d, 0, sizeof(d));
    check(admin_wait(sf_cluster_topic_delete(b.cl, "t1", admin_done, &d), &d) == SF_ERR_NOTFOUND,
          "deleting t1 again: SF_ERR_NOTFOUND");

    /* 11. optional: ZooKeeper restart within the session timeout */
    if (restart_cmd) {
        struct sess_pred spa = {&a, sf_zk_session_id(sf_cluster_zk(a.cl))};
        int64_t epoch_before = sf_cluster_broker_epoch(a.cl);
        rc = system(restart_cmd);
        check(rc == 0, "restart command ran: %s", restart_cmd);
        run_for(1000);
        check(run_until(same_session_connected, &spa, SESSION_MS + 15000),
              "broker 1 reconnected with the same session");
        run_until(probe_connected, NULL, SESSION_MS + 15000);
        check(sf_cluster_broker_epoch(a.cl) == epoch_before && a.is_ctrl,
              "registration and controllership kept");
        check_broker_znode(&a);
        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_topic_create(a.cl, "t3", 1, 1, NULL, NULL, 0, admin_done, &d),
                         &d) == SF_OK,
              "admin writes work after the restart");
        sp = (struct snap_pred){.in = &b, .topic = "t3", .nparts = 1};
        check(run_until(has_topic_parts, &sp, 10000), "watches survived: broker 2 sees t3");
        {
            sf_cluster_config_entry_t r1[1] = {{"log.retention.ms", "2000"}};
            struct bcfg_pred bp = {.in = &b, .cluster_default = 1, .n = 1,
                                   .key = "log.retention.ms", .val = "2000"};
            memset(&d, 0, sizeof(d));
            check(admin_wait(sf_cluster_broker_config_set(a.cl, "<default>", r1, 1, admin_done,
                                                          &d), &d) == SF_OK,
                  "dynamic broker config write after the restart");
            check(run_until(has_bcfg, &bp, 10000),
                  "watches survived: broker 2 sees the new default");
        }
    }

    /* 12. controller failover: broker 1 leaves, its ephemerals vanish at once */
    epoch1 = read_epoch();
    inst_stop(&a);
    check(!probe_exists("/brokers/ids/1"), "/brokers/ids/1 gone right after free");
    check(run_until(is_ctrl, &b, 10000), "broker 2 became the controller");
    check(read_controller() == 2 && read_epoch() == epoch1 + 1 &&
              sf_cluster_controller_epoch(b.cl) == epoch1 + 1,
          "controller epoch bumped to %d", (int)(epoch1 + 1));
    sp = (struct snap_pred){.in = &b, .nbrokers = 1};
    check(run_until(has_nbrokers, &sp, 5000), "broker 2 sees 1 broker");

    /* 13. session expiry: re-register, re-elect, keep watching */
    {
        struct sess_pred spb = {&b, sf_zk_session_id(sf_cluster_zk(b.cl))};
        int64_t old_epoch = sf_cluster_broker_epoch(b.cl);
        int32_t ce = read_epoch();
        check(sf_zk_debug_expire_session(sf_cluster_zk(b.cl)) == SF_OK, "forced session expiry");
        check(run_until(new_session_registered, &spb, 30000),
              "broker 2 has a new session, re-registered and is controller again");
        check(sf_cluster_broker_epoch(b.cl) > old_epoch, "new broker epoch %lld > %lld",
              (long long)sf_cluster_broker_epoch(b.cl), (long long)old_epoch);
        check_broker_znode(&b);
        check(read_epoch() == ce + 1, "controller epoch bumped again");
        memset(&d, 0, sizeof(d));
        check(admin_wait(sf_cluster_topic_create(b.cl, "t4", 2, 1, NULL, NULL, 0, admin_done, &d),
                         &d) == SF_OK,
              "create t4 after expiry");
        sp = (struct snap_pred){.in = &b, .topic = "t4", .nparts = 2};
        check(run_until(has_topic_parts, &sp, 5000), "watches re-set: t4 in the snapshot");
        check(b.snap && sf_cluster_snapshot_topic(b.snap, "t2") && b.snap->controller_id == 2,
              "t2 still known, controller 2");
        {
            sf_cluster_config_entry_t e1[1] = {{"log.roll.ms", "60000"}};
            struct bcfg_pred bp = {.in = &b, .cluster_default = 1, .n = 1, .key = "log.roll.ms",
                                   .val = "60000"};
            memset(&d, 0, sizeof(d));
            check(admin_wait(sf_cluster_broker_config_set(b.cl, "<default>", e1, 1, admin_done,
                                                          &d), &d) == SF_OK,
                  "dynamic broker config write after expiry");
            check(run_until(has_bcfg, &bp, 5000), "watch re-set after expiry: the new default");
        }
        /* A broker that starts now has the dynamic configs in its first snapshot. */
        {
            inst_t e;
            sf_cluster_config_entry_t e3[1] = {{"compression.type", "zstd"}};
            memset(&d, 0, sizeof(d));
            check(admin_wait(sf_cluster_broker_config_set(b.cl, "3", e3, 1, admin_done, &d), &d) ==
                      SF_OK,
                  "set broker 3's config before it starts");
            check(inst_start(&e, root, 3, SESSION_MS, 15000) == SF_OK, "broker 3 starts");
            run_until(is_ready, &e, 16000);
            check(e.ready && e.err == SF_OK && e.nsnaps == 1 && e.snap &&
                      e.snap->nbroker_configs == 1 &&
                      !strcmp(sf_cluster_snapshot_broker_config(e.snap, 0, "compression.type")
                                  ?: "",
                              "zstd") &&
                      !strcmp(sf_cluster_snapshot_broker_config(e.snap, 1, "log.roll.ms") ?: "",
                              "60000"),
                  "broker 3's first snapshot has its own and the default dynamic configs");
            inst_stop(&e);
        }
    }
    inst_stop(&b);

    /* 14. unreachable ZooKeeper */
    snprintf(upath, sizeof(upath), "127.0.0.1:%d/x", closed_port());
    t0 = now_ms();
    check(inst_start(&c, upath, 3, SESSION_MS, 1500) == SF_OK, "start against %s", upath);
    run_until(is_ready, &c, 10000);
    {
        char want[128];
        snprintf(want, sizeof(want), "cannot connect to ZooKeeper at %.*s within 1500 ms",
                 (int)(strchr(upath, '/') - upath), upath);
        check(c.ready && c.err != SF_OK && !strcmp(c.errmsg, want),
              "on_ready error after %lld ms: %s", (long long)(now_ms() - t0), c.errmsg);
    }
    inst_stop(&c);

    probe_delete_tree("/");
    sf_zk_free(probe);
    /* and the test root itself, from a session without it as chroot */
    probe_state = 0;
    probe = sf_zk_new(base, argv[1], SESSION_MS, probe_state_cb, NULL);
    if (probe && sf_zk_start(probe, 10000) == SF_OK && run_until(probe_connected, NULL, 11000)) {
        char rel[64];
        snprintf(rel, sizeof(rel), "/zkcheck-%d", (int)getpid());
        probe_delete_tree(rel);
        check(!probe_exists(rel), "test root %s removed", rel);
    }
    sf_zk_free(probe);
    event_base_free(base);
    printf("# %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
