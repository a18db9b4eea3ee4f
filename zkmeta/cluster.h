#ifndef SF_CLUSTER_H
#define SF_CLUSTER_H
#endif
