#ifndef SF_ZK_H
#define SF_ZK_H
#endif
