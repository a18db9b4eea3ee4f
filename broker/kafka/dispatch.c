/* The dispatch table and the path of every request from the server to its handler. */
#include "dispatch.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "logging.h"

/* Versions are the whole range Apache Kafka 3.9 accepts in ZooKeeper mode, from the oldest to
 * the newest of the spec (DESIGN.md section 2). Sorted by key. */
static const sf_kapi_t apis[] = {
    {SF_PROTO_API_Produce, 0, 11, sf_kapi_Produce, 0},
    {SF_PROTO_API_Fetch, 0, 17, sf_kapi_Fetch, 0},
    {SF_PROTO_API_ListOffsets, 0, 10, sf_kapi_ListOffsets, 0},
    {SF_PROTO_API_Metadata, 0, 12, sf_kapi_Metadata, 0},
    {SF_PROTO_API_ControlledShutdown, 0, 3, sf_kapi_ControlledShutdown, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_OffsetCommit, 0, 9, sf_kapi_OffsetCommit, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_OffsetFetch, 0, 9, sf_kapi_OffsetFetch, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_FindCoordinator, 0, 6, sf_kapi_FindCoordinator, 0},
    {SF_PROTO_API_JoinGroup, 0, 9, sf_kapi_JoinGroup, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_Heartbeat, 0, 4, sf_kapi_Heartbeat, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_LeaveGroup, 0, 5, sf_kapi_LeaveGroup, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_SyncGroup, 0, 5, sf_kapi_SyncGroup, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_DescribeGroups, 0, 5, sf_kapi_DescribeGroups, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_ListGroups, 0, 5, sf_kapi_ListGroups, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_ApiVersions, 0, 4, sf_kapi_ApiVersions, 0},
    {SF_PROTO_API_CreateTopics, 0, 7, sf_kapi_CreateTopics, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_DeleteTopics, 0, 6, sf_kapi_DeleteTopics, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_DeleteRecords, 0, 2, sf_kapi_DeleteRecords, 0},
    {SF_PROTO_API_InitProducerId, 0, 5, sf_kapi_InitProducerId, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_OffsetForLeaderEpoch, 0, 4, sf_kapi_OffsetForLeaderEpoch, 0},
    {SF_PROTO_API_AddPartitionsToTxn, 0, 5, sf_kapi_AddPartitionsToTxn, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_AddOffsetsToTxn, 0, 4, sf_kapi_AddOffsetsToTxn, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_EndTxn, 0, 4, sf_kapi_EndTxn, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_WriteTxnMarkers, 0, 1, sf_kapi_WriteTxnMarkers, 0},
    {SF_PROTO_API_TxnOffsetCommit, 0, 4, sf_kapi_TxnOffsetCommit, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_DescribeConfigs, 0, 4, sf_kapi_DescribeConfigs, 0},
    {SF_PROTO_API_AlterConfigs, 0, 2, sf_kapi_AlterConfigs, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_CreatePartitions, 0, 3, sf_kapi_CreatePartitions, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_DeleteGroups, 0, 2, sf_kapi_DeleteGroups, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_ElectLeaders, 0, 2, sf_kapi_ElectLeaders, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_IncrementalAlterConfigs, 0, 1, sf_kapi_IncrementalAlterConfigs,
     SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_AlterPartitionReassignments, 0, 0, sf_kapi_AlterPartitionReassignments,
     SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_ListPartitionReassignments, 0, 0, sf_kapi_ListPartitionReassignments,
     SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_OffsetDelete, 0, 0, sf_kapi_OffsetDelete, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_AlterPartition, 0, 3, sf_kapi_AlterPartition, SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_DescribeCluster, 0, 1, sf_kapi_DescribeCluster, 0},
    {SF_PROTO_API_DescribeProducers, 0, 0, sf_kapi_DescribeProducers, 0},
    {SF_PROTO_API_DescribeTransactions, 0, 0, sf_kapi_DescribeTransactions,
     SF_KAPI_METADATA_THREAD},
    {SF_PROTO_API_ListTransactions, 0, 1, sf_kapi_ListTransactions, SF_KAPI_METADATA_THREAD},
};

const sf_kapi_t *sf_kapi_all(size_t *n) {
    *n = sizeof(apis) / sizeof(apis[0]);
    return apis;
}

static const sf_kapi_t *kapi_get(int16_t key) {
    size_t i;
    for (i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
        if (apis[i].key == key)
            return &apis[i];
    return NULL;
}

/* On the metadata thread: the request sees that thread's view from now on. */
static void on_metadata_thread(void *arg) {
    sf_kreq_t *kr = arg;
    sf_kreq_refresh(kr);
    kapi_get(kr->api_key)->fn(kr, kr->msg);
}

/* Run the decoded request: here, or on the metadata thread for the APIs that need it. */
static void kapi_run(sf_kreq_t *kr, const sf_kapi_t *api, void *msg) {
    if (api->flags & SF_KAPI_METADATA_THREAD) {
        kr->msg = msg;
        kr->hop.fn = on_metadata_thread;
        kr->hop.arg = kr;
        kr->hop.heap = 0;
        sf_broker_to_metadata(kr->b, &kr->hop);
        return;
    }
    api->fn(kr, msg);
}

/* Until the first complete metadata snapshot reaches this thread (after a restart: until the
 * broker is registered again and has read the whole cluster), every answer would describe an
 * empty cluster: topics that exist would be unknown, and a consumer could reset its position.
 * So a request waits for it; past READY_MAX_WAIT_MS its connection is closed, which clients
 * treat as retriable (they reconnect). ApiVersions is answered at once. */
#define READY_MAX_WAIT_MS 15000

typedef struct ready_wait ready_wait_t;
struct ready_wait {
    sf_kreq_t *kr;
    const sf_kapi_t *api;
    void *msg;
    sf_pwait_t *wait;
    ready_wait_t *next;
};

/* This thread's waiting requests in arrival order. They run in that order, and a request that
 * arrives while any still wait queues behind them even once the snapshot is there: a client's
 * pipelined produce requests keep their order. */
static _Thread_local ready_wait_t *ready_head, *ready_tail;

static void ready_finish(ready_wait_t *rw) {
    sf_kreq_refresh(rw->kr);
    if (rw->kr->snap)
        kapi_run(rw->kr, rw->api, rw->msg);
    else
        sf_kreq_close(rw->kr, "metadata not loaded yet");
}

static int ready_attempt(void *arg, int final) {
    ready_wait_t *rw = arg, *h;
    sf_kreq_refresh(rw->kr);
    if (!rw->kr->snap && !final)
        return 0;
    /* The requests that came before it go first (their own waits are forgotten). */
    while ((h = ready_head) != NULL) {
        ready_head = h->next;
        if (!ready_head)
            ready_tail = NULL;
        if (h == rw)
            break;
        sf_purgatory_cancel(sf_broker_purgatory(h->kr->b), h->wait);
        ready_finish(h);
    }
    assert(h == rw);
    ready_finish(rw);
    return 1;
}

static void kapi_run_when_ready(sf_kreq_t *kr, const sf_kapi_t *api, void *msg) {
    sf_pkey_t key = sf_pkey_metadata();
    ready_wait_t *rw;
    if ((kr->snap && !ready_head) || api->key == SF_PROTO_API_ApiVersions) {
        kapi_run(kr, api, msg);
        return;
    }
    rw = sf_kreq_alloc(kr, 1, sizeof(*rw));
    if (!rw) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    rw->kr = kr;
    rw->api = api;
    rw->msg = msg;
    rw->next = NULL;
    if (ready_tail)
        ready_tail->next = rw;
    else
        ready_head = rw;
    ready_tail = rw;
    rw->wait = sf_kreq_park(kr, &key, 1, READY_MAX_WAIT_MS, ready_attempt, rw);
    if (!rw->wait)
        (void)ready_attempt(rw, 1); /* shutting down or no memory: answer now, in order */
}

void sf_kafka_dispatch(sf_req_t *req, void *arg) {
    sf_broker_t *b = arg;
    int16_t key = req->hdr.RequestApiKey, ver = req->hdr.RequestApiVersion;
    const sf_kapi_t *api = kapi_get(key);
    const sf_proto_spec_t *spec = sf_proto_spec_get(key);
    sf_kreq_t *kr = sf_arena_calloc(&req->arena, 1, sizeof(*kr));
    void *msg;
    int rc;

    if (!kr) {
        sf_req_close(req);
        return;
    }
    kr->req = req;
    kr->b = b;
    kr->api_key = key;
    kr->version = ver;
    kr->start_us = sf_clock_mono_us();
    kr->arena = &req->arena;
    kr->client_id = req->hdr.ClientId.len > 0 ? sf_kreq_str(kr, req->hdr.ClientId) : "";
    if (!kr->client_id)
        kr->client_id = "";
    kr->static_cfg.cfg = sf_broker_cfg(b);
    kr->view = sf_view_ref(sf_broker_view(b));
    kr->snap = kr->view ? kr->view->snap : NULL;
    /* An ApiVersions request of a version this broker does not know still gets an answer
     * (KIP-511): the handler sends the v0 error with ApiVersions' own range. */
    if (key == SF_PROTO_API_ApiVersions && api && (ver < api->min || ver > api->max)) {
        api->fn(kr, NULL);
        return;
    }
    /* Other unknown APIs and versions: Kafka closes the connection, so do we. */
    if (!api || !spec || ver < api->min || ver > api->max) {
        sf_kreq_close(kr, api ? "version not supported" : "unknown API");
        return;
    }
    msg = sf_arena_alloc(kr->arena, spec->RequestSize);
    if (!msg) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    rc = spec->RequestDecode(&req->body, ver, kr->arena, msg);
    if (rc != SF_OK) {
        /* Kafka answers an ApiVersions v3+ request whose client software fields do not
         * decode with INVALID_REQUEST; every other request that does not decode closes. */
        if (key == SF_PROTO_API_ApiVersions && rc == SF_ERR_MALFORMED) {
            api->fn(kr, NULL);
            return;
        }
        sf_kreq_close(kr, rc == SF_ERR_NOMEM ? "request too large to decode"
                                             : "request does not decode");
        return;
    }
    kapi_run_when_ready(kr, api, msg);
}
