#include "proto.h"
typedef int sf_proto_placeholder_t;
