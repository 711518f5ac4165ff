#include <stdio.h>
#include <string.h>

void rle_encode(const char *src, char *dst);

static int check(const char *in, const char *want)
{
    char buf[256];
    rle_encode(in, buf);
    if (strcmp(buf, want) != 0) {
        printf("FAIL rle_encode(\"%s\") = \"%s\", want \"%s\"\n", in, buf, want);
        return 1;
    }
    return 0;
}

int main(void)
{
    int bad = 0;
    bad += check("aaab", "a3b1");
    bad += check("abc", "a1b1c1");
    bad += check("", "");
    bad += check("zzzzzzzzzzzz", "z12");
    bad += check("aabbbaa", "a2b3a2");
    if (bad == 0)
        printf("all rle tests passed\n");
    return bad ? 1 : 0;
}
