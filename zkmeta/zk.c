#include "zk.h"
