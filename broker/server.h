#ifndef SF_SERVER_H
#define SF_SERVER_H
#endif
