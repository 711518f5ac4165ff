#!/bin/bash
cd /app
sed -i 's|^static long counter = 0;|static long counter = 0;\nstatic pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;|' counter.c
sed -i 's|^        counter++;|    {\n        pthread_mutex_lock(\&mu);\n        counter++;\n        pthread_mutex_unlock(\&mu);\n    }|' counter.c
gcc -O2 -pthread -o /tmp/counter counter.c && /tmp/counter
