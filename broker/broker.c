#include "broker.h"
typedef int sf_broker_placeholder_t;
