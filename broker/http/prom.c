/* GET /metrics: the Prometheus text format (version 0.0.4).
 *
 * Counters come from every thread's block (metrics.h), summed here; gauges from the current
 * view: the cluster as ZooKeeper has it, and the partitions this broker holds, whose log end
 * offsets also give per-partition message rates (rate() of streamflow_partition_log_end_offset)
 * without a counter on the append path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "broker.h"
#include "brokercfg.h"
#include "cluster.h"
#include "group.h"
#include "hwcache.h"
#include "httpd.h"
#include "log.h"
#include "metrics.h"
#include "netlimit.h"
#include "partition.h"
#include "proto.h"
#include "purgatory.h"
#include "view.h"
#include "worker.h"

static void meta(struct evbuffer *o, const char *name, const char *type, const char *help) {
    evbuffer_add_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The series of one histogram: @buckets (SF_METRICS_NBUCKET + 1, the last +Inf) and the sum
 * @sum_us; @labels is "" or "name=\"value\",". */
static void histogram(struct evbuffer *o, const char *name, const char *labels,
                      const _Atomic uint64_t *buckets, uint64_t sum_us) {
    uint64_t cum = 0;
    int bk;
    for (bk = 0; bk < SF_METRICS_NBUCKET; bk++) {
        cum += buckets[bk];
        evbuffer_add_printf(o, "%s_bucket{%sle=\"%g\"} %llu\n", name, labels,
                            sf_metrics_bucket_ms[bk] / 1000, (unsigned long long)cum);
    }
    cum += buckets[SF_METRICS_NBUCKET];
    evbuffer_add_printf(o, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels,
                        (unsigned long long)cum);
    evbuffer_add_printf(o, "%s_sum%s%.*s%s %.6f\n", name, *labels ? "{" : "",
                        *labels ? (int)strlen(labels) - 1 : 0, labels, *labels ? "}" : "",
                        (double)sum_us / 1e6);
    evbuffer_add_printf(o, "%s_count%s%.*s%s %llu\n", name, *labels ? "{" : "",
                        *labels ? (int)strlen(labels) - 1 : 0, labels, *labels ? "}" : "",
                        (unsigned long long)cum);
}

static void counters(struct evbuffer *o, const sf_metrics_block_t *m) {
    meta(o, "streamflow_messages_total", "counter", "Records appended from producers.");
    evbuffer_add_printf(o, "streamflow_messages_total %llu\n",
                        (unsigned long long)m->messages_in);
    meta(o, "streamflow_bytes_total", "counter",
         "Record batch bytes produced (in) and fetched (out).");
    evbuffer_add_printf(o, "streamflow_bytes_total{direction=\"in\"} %llu\n",
                        (unsigned long long)m->bytes_in);
    evbuffer_add_printf(o, "streamflow_bytes_total{direction=\"out\"} %llu\n",
                        (unsigned long long)m->bytes_out);
    meta(o, "streamflow_isr_shrinks_total", "counter",
         "ISR shrinks of partitions led here that the controller made.");
    evbuffer_add_printf(o, "streamflow_isr_shrinks_total %llu\n",
                        (unsigned long long)m->isr_shrinks);
    meta(o, "streamflow_isr_expands_total", "counter",
         "ISR expansions of partitions led here that the controller made.");
    evbuffer_add_printf(o, "streamflow_isr_expands_total %llu\n",
                        (unsigned long long)m->isr_expands);
    meta(o, "streamflow_log_flush_duration_seconds", "histogram",
         "Time to make a partition's appended records durable (fsync of its segments).");
    histogram(o, "streamflow_log_flush_duration_seconds", "", m->flushes, m->flush_us);
}

/* The network threads' busy time and every purgatory's waiting requests. */
static void threads(struct evbuffer *o, sf_broker_t *b) {
    int i, n = sf_broker_nworkers(b);
    double cpu[256];
    size_t parked[256];
    for (i = 0; i < n && i < 256; i++)
        sf_worker_stats(sf_broker_worker(b, i), &cpu[i], &parked[i]);
    meta(o, "streamflow_network_thread_cpu_seconds_total", "counter",
         "CPU time of each network thread: its rate() is the thread's busy ratio.");
    for (i = 0; i < n && i < 256; i++)
        evbuffer_add_printf(o, "streamflow_network_thread_cpu_seconds_total{thread=\"%d\"} %.6f\n",
                            i, cpu[i]);
    meta(o, "streamflow_purgatory_size", "gauge",
         "Requests waiting (long-poll fetches, acks=all produces, admin, group joins).");
    for (i = 0; i < n && i < 256; i++)
        evbuffer_add_printf(o, "streamflow_purgatory_size{thread=\"net/%d\"} %zu\n", i,
                            parked[i]);
    evbuffer_add_printf(o, "streamflow_purgatory_size{thread=\"metadata\"} %zu\n",
                        sf_purgatory_size(sf_broker_purgatory(b)));
}

/* @s as a label value: backslash, double quote and newline escaped. */
static void label_value(struct evbuffer *o, const char *s) {
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            evbuffer_add(o, "\\", 1);
        if (*s == '\n')
            evbuffer_add(o, "\\n", 2);
        else
            evbuffer_add(o, s, 1);
    }
}

typedef struct lag_walk {
    const sf_view_t *v;
    const sf_hwcache_t *elsewhere;
    const char *group;
    sf_httpd_lag_fn fn;
    void *arg;
} lag_walk_t;

static void lag_offset(void *arg, const sf_goffset_t *off) {
    lag_walk_t *l = arg;
    sf_partition_t *part = sf_view_partition(l->v, off->topic, off->partition);
    int64_t hw = part ? sf_log_high_watermark(part->log)
                      : sf_hwcache_get(l->elsewhere, off->topic, off->partition);
    if (hw < 0 || off->offset < 0)
        return;
    l->fn(l->arg, l->group, off->topic, off->partition, hw > off->offset ? hw - off->offset : 0);
}

static void lag_group(void *arg, sf_group_t *g) {
    lag_walk_t *l = arg;
    l->group = sf_group_id(g);
    sf_group_offsets(g, lag_offset, l);
}

void sf_httpd_each_lag(sf_broker_t *b, const sf_view_t *v, const sf_hwcache_t *elsewhere,
                       sf_httpd_lag_fn fn, void *arg) {
    lag_walk_t l = {v, elsewhere, NULL, fn, arg};
    sf_coord_each_group(sf_broker_coordinator(b), lag_group, &l);
}

static void lag_series(void *arg, const char *group, const char *topic, int32_t partition,
                       int64_t lag) {
    struct evbuffer *o = arg;
    evbuffer_add_printf(o, "streamflow_consumergroup_lag{group=\"");
    label_value(o, group);
    evbuffer_add_printf(o, "\",topic=\"%s\",partition=\"%d\"} %lld\n", topic, (int)partition,
                        (long long)lag);
}

/* The lag of the groups this broker coordinates. */
static void group_lag(struct evbuffer *o, sf_broker_t *b, const sf_view_t *v,
                      const sf_hwcache_t *elsewhere) {
    meta(o, "streamflow_consumergroup_lag", "gauge",
         "Records between a group's committed offset and the high watermark, for the groups "
         "this broker coordinates.");
    sf_httpd_each_lag(b, v, elsewhere, lag_series, o);
}

static void requests(struct evbuffer *o, const sf_metrics_block_t *m) {
    int a, v;
    meta(o, "streamflow_requests_total", "counter", "Kafka requests answered, by API and version.");
    for (a = 0; a < SF_METRICS_NAPI; a++)
        for (v = 0; v < SF_METRICS_NVERSION; v++)
            if (m->requests[a][v])
                evbuffer_add_printf(o, "streamflow_requests_total{api=\"%s\",version=\"%d\"} %llu\n",
                                    sf_proto_api_name((int16_t)a), v,
                                    (unsigned long long)m->requests[a][v]);
    meta(o, "streamflow_request_duration_seconds", "histogram",
         "Time from reading a Kafka request to answering it, by API and version.");
    for (a = 0; a < SF_METRICS_NAPI; a++)
        for (v = 0; v < SF_METRICS_NVERSION; v++) {
            char label[80];
            if (!m->requests[a][v])
                continue;
            snprintf(label, sizeof(label), "api=\"%s\",version=\"%d\",",
                     sf_proto_api_name((int16_t)a), v);
            histogram(o, "streamflow_request_duration_seconds", label, m->latency[a][v],
                      m->latency_us[a][v]);
        }
}

/* The ZooKeeper session and the latency of its requests. */
static void zookeeper(struct evbuffer *o, sf_broker_t *b, const sf_metrics_block_t *m) {
    sf_cluster_t *cl = sf_broker_cluster(b);
    int r, bk;
    meta(o, "streamflow_zookeeper_registered", "gauge",
         "1 while this broker is registered in ZooKeeper.");
    evbuffer_add_printf(o, "streamflow_zookeeper_registered %d\n", cl != NULL);
    meta(o, "streamflow_zookeeper_connected", "gauge",
         "1 while the ZooKeeper session is connected.");
    evbuffer_add_printf(o, "streamflow_zookeeper_connected %d\n", sf_cluster_connected(cl));
    meta(o, "streamflow_zookeeper_request_duration_seconds", "histogram",
         "Time from sending a ZooKeeper request to its completion, by operation.");
    for (r = 1; r < SF_ZK_NREQ; r++) {
        char label[48];
        uint64_t n = 0;
        for (bk = 0; bk <= SF_METRICS_NBUCKET; bk++)
            n += m->zk_latency[r][bk];
        snprintf(label, sizeof(label), "op=\"%s\",", sf_zk_req_name(r));
        if (n)
            histogram(o, "streamflow_zookeeper_request_duration_seconds", label,
                      m->zk_latency[r], m->zk_latency_us[r]);
    }
    meta(o, "streamflow_zookeeper_request_failures_total", "counter",
         "ZooKeeper requests lost to a connection loss, a timeout or a session expiry.");
    for (r = 1; r < SF_ZK_NREQ; r++)
        evbuffer_add_printf(o, "streamflow_zookeeper_request_failures_total{op=\"%s\"} %llu\n",
                            sf_zk_req_name(r), (unsigned long long)m->zk_failures[r]);
}

/* The cluster as the view has it. */
static void cluster(struct evbuffer *o, sf_broker_t *b, const sf_view_t *v) {
    const sf_cluster_snapshot_t *s = v->snap;
    int32_t me = sf_broker_cfg(b)->broker_id;
    int t, i, partitions = 0, offline = 0, under = 0;
    for (t = 0; t < s->ntopics; t++)
        for (i = 0; i < s->topics[t]->npartitions; i++) {
            const sf_cluster_partition_t *p = &s->topics[t]->partitions[i];
            partitions++;
            offline += p->leader < 0;
            under += p->leader == me && p->nisr < p->nreplicas;
        }
    meta(o, "streamflow_brokers_total", "gauge", "Brokers registered in ZooKeeper.");
    evbuffer_add_printf(o, "streamflow_brokers_total %d\n", s->nbrokers);
    meta(o, "streamflow_topics_total", "gauge", "Topics in the cluster.");
    evbuffer_add_printf(o, "streamflow_topics_total %d\n", s->ntopics);
    meta(o, "streamflow_partitions_total", "gauge", "Partitions in the cluster.");
    evbuffer_add_printf(o, "streamflow_partitions_total %d\n", partitions);
    meta(o, "streamflow_offline_partitions", "gauge", "Partitions of the cluster without a leader.");
    evbuffer_add_printf(o, "streamflow_offline_partitions %d\n", offline);
    meta(o, "streamflow_under_replicated_partitions", "gauge",
         "Partitions led here whose ISR is smaller than their replica set.");
    evbuffer_add_printf(o, "streamflow_under_replicated_partitions %d\n", under);
    meta(o, "streamflow_controller_active", "gauge", "1 when this broker is the controller.");
    evbuffer_add_printf(o, "streamflow_controller_active %d\n", s->controller_id == me);
}

/* The partitions held here: offsets and sizes. */
static void partitions(struct evbuffer *o, const sf_view_t *v) {
    static const struct {
        const char *name, *help;
        int64_t (*get)(sf_log_t *);
    } gauges[] = {
        {"streamflow_partition_log_end_offset", "Next offset of a partition held here.",
         sf_log_end_offset},
        {"streamflow_partition_log_start_offset", "First offset of a partition held here.",
         sf_log_start_offset},
        {"streamflow_partition_high_watermark", "High watermark of a partition held here.",
         sf_log_high_watermark},
        {"streamflow_partition_size_bytes", "Bytes on disk of a partition held here.",
         sf_log_size_bytes},
    };
    size_t g;
    int t, i;
    for (g = 0; g < sizeof(gauges) / sizeof(gauges[0]); g++) {
        meta(o, gauges[g].name, "gauge", gauges[g].help);
        for (t = 0; t < v->snap->ntopics; t++)
            for (i = 0; i < v->snap->topics[t]->npartitions; i++)
                if (v->parts[t][i])
                    evbuffer_add_printf(o, "%s{topic=\"%s\",partition=\"%d\"} %lld\n",
                                        gauges[g].name, v->snap->topics[t]->name, i,
                                        (long long)gauges[g].get(v->parts[t][i]->log));
    }
}

#define TRAFFIC_HORIZON_S 60.0

void sf_httpd_sample_traffic(sf_broker_t *b, double elapsed_s) {
    sf_view_t *v = sf_broker_view(b);
    double alpha = elapsed_s / (TRAFFIC_HORIZON_S + elapsed_s); /* moving average */
    int t, i;
    if (!v || elapsed_s <= 0)
        return;
    for (t = 0; t < v->snap->ntopics; t++)
        for (i = 0; i < v->snap->topics[t]->npartitions; i++) {
            sf_partition_t *p = v->parts[t][i];
            int64_t leo;
            if (!p)
                continue;
            leo = sf_log_end_offset(p->log);
            if (p->traffic_leo >= 0 && leo >= p->traffic_leo)
                p->traffic_rate += alpha * ((double)(leo - p->traffic_leo) / elapsed_s -
                                            p->traffic_rate);
            p->traffic_leo = leo;
        }
}

/* Each partition's share of its topic's appends over the last minute, for the topics whose
 * partitions are all held here (the shipped recording rule computes it across brokers). */
static void traffic_share(struct evbuffer *o, const sf_view_t *v) {
    int t, i;
    meta(o, "streamflow_partition_traffic_share", "gauge",
         "A partition's share (0 to 1) of its topic's appends over about a minute, for topics "
         "whose partitions are all held here and that had appends.");
    for (t = 0; t < v->snap->ntopics; t++) {
        const sf_cluster_topic_t *topic = v->snap->topics[t];
        double sum = 0;
        for (i = 0; i < topic->npartitions && v->parts[t][i]; i++)
            sum += v->parts[t][i]->traffic_rate;
        if (i < topic->npartitions || sum <= 0)
            continue;
        for (i = 0; i < topic->npartitions; i++)
            evbuffer_add_printf(o, "streamflow_partition_traffic_share{topic=\"%s\",partition="
                                   "\"%d\"} %.4f\n", topic->name, i,
                                v->parts[t][i]->traffic_rate / sum);
    }
}

/* Connections and the bytes queued on them (netlimit.h). */
static void network(struct evbuffer *o, sf_broker_t *b) {
    static const char *const kinds[SF_NETLIMIT_NKINDS] = {"partial", "held", "output"};
    sf_netlimit_stats_t st;
    long accept_failures;
    int k;
    sf_broker_net_stats(b, &st, &accept_failures);
    meta(o, "streamflow_connections", "gauge", "Open client connections.");
    evbuffer_add_printf(o, "streamflow_connections %lld\n", (long long)st.connections);
    meta(o, "streamflow_connections_refused_total", "counter",
         "Connections closed at accept by a connection limit.");
    evbuffer_add_printf(o, "streamflow_connections_refused_total{limit=\"max.connections\"} %lld\n"
                           "streamflow_connections_refused_total{limit=\"max.connections.per.ip\"} "
                           "%lld\n", (long long)st.refused_max_connections,
                        (long long)st.refused_per_ip);
    meta(o, "streamflow_accept_failures_total", "counter",
         "Failed accept() calls (out of descriptors, most often).");
    evbuffer_add_printf(o, "streamflow_accept_failures_total %ld\n", accept_failures);
    meta(o, "streamflow_network_queued_bytes", "gauge",
         "Bytes of requests arriving (partial), read and unanswered (held), and of responses "
         "not yet sent (output), over every connection.");
    for (k = 0; k < SF_NETLIMIT_NKINDS; k++)
        evbuffer_add_printf(o, "streamflow_network_queued_bytes{kind=\"%s\"} %lld\n", kinds[k],
                            (long long)st.bytes[k]);
    meta(o, "streamflow_network_paused_total", "counter",
         "Times a connection stopped reading at queued.max.request.bytes or "
         "queued.max.response.bytes.");
    for (k = 0; k < SF_NETLIMIT_NKINDS; k++)
        evbuffer_add_printf(o, "streamflow_network_paused_total{kind=\"%s\"} %lld\n", kinds[k],
                            (long long)st.paused[k]);
}

/* Space in each log directory. */
static void log_dirs(struct evbuffer *o, const sf_brokercfg_t *cfg) {
    static const char *const names[2] = {"streamflow_log_dir_free_bytes",
                                         "streamflow_log_dir_total_bytes"};
    static const char *const helps[2] = {"Bytes available to the broker in a log directory.",
                                         "Size of the file system of a log directory."};
    struct statvfs st;
    int k;
    size_t i;
    for (k = 0; k < 2; k++) {
        meta(o, names[k], "gauge", helps[k]);
        for (i = 0; i < cfg->nlog_dirs; i++)
            if (statvfs(cfg->log_dirs[i], &st) == 0) {
                evbuffer_add_printf(o, "%s{dir=\"", names[k]);
                label_value(o, cfg->log_dirs[i]);
                evbuffer_add_printf(o, "\"} %llu\n",
                                    (unsigned long long)(k ? st.f_blocks : st.f_bavail) *
                                        st.f_frsize);
            }
    }
}

void sf_httpd_metrics(struct evhttp_request *req, sf_broker_t *b, const sf_hwcache_t *elsewhere) {
    sf_metrics_block_t *sum = malloc(sizeof(*sum));
    struct evbuffer *o = evbuffer_new();
    sf_view_t *v = sf_broker_view(b);
    if (!sum || !o) {
        free(sum);
        if (o)
            evbuffer_free(o);
        sf_httpd_error(req, 503, NULL, "out of memory");
        return;
    }
    sf_metrics_sum(sum);
    counters(o, sum);
    requests(o, sum);
    zookeeper(o, b, sum);
    log_dirs(o, sf_broker_cfg(b));
    network(o, b);
    threads(o, b);
    if (v) {
        cluster(o, b, v);
        partitions(o, v);
        traffic_share(o, v);
        group_lag(o, b, v, elsewhere);
    }
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; version=0.0.4; charset=utf-8");
    evhttp_send_reply(req, 200, "OK", o);
    evbuffer_free(o);
    free(sum);
}
