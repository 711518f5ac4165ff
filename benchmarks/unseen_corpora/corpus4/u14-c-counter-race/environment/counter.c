#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ITERS 100000

static long counter = 0;

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < ITERS; i++)
        counter++;
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", counter);
    return 0;
}
