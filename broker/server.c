#include "server.h"
typedef int sf_server_placeholder_t;
