#include <stdio.h>
#include <string.h>

/* Encode src as <char><count> pairs: "aaab" -> "a3b1". dst must be large enough. */
void rle_encode(const char *src, char *dst)
{
    size_t n = strlen(src);
    size_t i = 0;
    char *o = dst;
    *o = '\0';
    while (i < n) {
        size_t j = i;
        while (j < n && src[j] == src[i])
            j++;
        if (j == n)
            break;
        o += sprintf(o, "%c%zu", src[i], j - i);
        i = j;
    }
}
