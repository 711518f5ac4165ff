#ifndef UTIL_H
#define UTIL_H

#define GREETING "hello"

int checksum(const char *s);

#endif
