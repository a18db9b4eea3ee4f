/* The Kafka API dispatcher: one table {api key, versions, handler} names every API the broker
 * serves; ApiVersions answers from it. Each request's body is decoded here with the generated
 * codec, so a handler starts from the decoded message. */
#ifndef SF_DISPATCH_H
#define SF_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "kreq.h"

/* A handler: @msg is the decoded request (the API's sf_proto_<Api>Request_t, in the arena).
 * It answers through @kr (kreq.h), now or later. */
typedef void (*sf_kapi_fn)(sf_kreq_t *kr, void *msg);

/* Flags of an API. */
enum {
    /* Handled on the metadata thread, which owns the ZooKeeper session (the admin APIs that
     * write there). Every other API is handled on the connection's worker. */
    SF_KAPI_METADATA_THREAD = 1,
};

typedef struct sf_kapi {
    int16_t key;
    int16_t min, max; /* the versions advertised in ApiVersions */
    sf_kapi_fn fn;
    unsigned flags;
} sf_kapi_t;

/* The served APIs in ascending key order (static); @n receives the count. */
const sf_kapi_t *sf_kapi_all(size_t *n);

/* The server's dispatch function (server.h), on the connection's worker: @arg is the
 * sf_broker_t. Takes @req. */
void sf_kafka_dispatch(sf_req_t *req, void *arg);

/* The handlers, one file per API family (kafka/api_<family>.c). */
void sf_kapi_ApiVersions(sf_kreq_t *kr, void *msg);
void sf_kapi_Produce(sf_kreq_t *kr, void *msg);
void sf_kapi_Fetch(sf_kreq_t *kr, void *msg);
void sf_kapi_ListOffsets(sf_kreq_t *kr, void *msg);
void sf_kapi_OffsetForLeaderEpoch(sf_kreq_t *kr, void *msg);
void sf_kapi_Metadata(sf_kreq_t *kr, void *msg);
void sf_kapi_DescribeCluster(sf_kreq_t *kr, void *msg);
void sf_kapi_CreateTopics(sf_kreq_t *kr, void *msg);
void sf_kapi_DeleteTopics(sf_kreq_t *kr, void *msg);
void sf_kapi_CreatePartitions(sf_kreq_t *kr, void *msg);
void sf_kapi_DeleteRecords(sf_kreq_t *kr, void *msg);
void sf_kapi_DescribeConfigs(sf_kreq_t *kr, void *msg);
void sf_kapi_AlterConfigs(sf_kreq_t *kr, void *msg);
void sf_kapi_IncrementalAlterConfigs(sf_kreq_t *kr, void *msg);
void sf_kapi_AlterPartition(sf_kreq_t *kr, void *msg);
void sf_kapi_ElectLeaders(sf_kreq_t *kr, void *msg);
void sf_kapi_AlterPartitionReassignments(sf_kreq_t *kr, void *msg);
void sf_kapi_ListPartitionReassignments(sf_kreq_t *kr, void *msg);
void sf_kapi_ControlledShutdown(sf_kreq_t *kr, void *msg);
void sf_kapi_FindCoordinator(sf_kreq_t *kr, void *msg);
void sf_kapi_JoinGroup(sf_kreq_t *kr, void *msg);
void sf_kapi_SyncGroup(sf_kreq_t *kr, void *msg);
void sf_kapi_Heartbeat(sf_kreq_t *kr, void *msg);
void sf_kapi_LeaveGroup(sf_kreq_t *kr, void *msg);
void sf_kapi_OffsetCommit(sf_kreq_t *kr, void *msg);
void sf_kapi_OffsetFetch(sf_kreq_t *kr, void *msg);
void sf_kapi_OffsetDelete(sf_kreq_t *kr, void *msg);
void sf_kapi_ListGroups(sf_kreq_t *kr, void *msg);
void sf_kapi_DescribeGroups(sf_kreq_t *kr, void *msg);
void sf_kapi_DeleteGroups(sf_kreq_t *kr, void *msg);
void sf_kapi_InitProducerId(sf_kreq_t *kr, void *msg);
void sf_kapi_DescribeProducers(sf_kreq_t *kr, void *msg);
void sf_kapi_AddPartitionsToTxn(sf_kreq_t *kr, void *msg);
void sf_kapi_AddOffsetsToTxn(sf_kreq_t *kr, void *msg);
void sf_kapi_EndTxn(sf_kreq_t *kr, void *msg);
void sf_kapi_WriteTxnMarkers(sf_kreq_t *kr, void *msg);
void sf_kapi_TxnOffsetCommit(sf_kreq_t *kr, void *msg);
void sf_kapi_DescribeTransactions(sf_kreq_t *kr, void *msg);
void sf_kapi_ListTransactions(sf_kreq_t *kr, void *msg);

#endif
