#include "cluster.h"
typedef int sf_cluster_placeholder_t;
