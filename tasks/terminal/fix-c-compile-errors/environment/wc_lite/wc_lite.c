/* wc_lite: count lines, words and bytes.
 *
 *   wc_lite            read standard input, print "LINES WORDS BYTES"
 *   wc_lite -          same
 *   wc_lite FILE...    print "LINES WORDS BYTES FILE" for each file, then, if there was more than
 *                      one FILE argument, "LINES WORDS BYTES total" (sums over the files read)
 *
 * A word is a maximal run of non-whitespace bytes (isspace() in the C locale). A file that cannot
 * be opened prints "wc_lite: FILE: No such file or directory" (strerror text) on stderr, is
 * skipped, and makes the exit status 1; otherwise the exit status is 0.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>

struct counts {
    long lines, words, bytes;
};

static void count_stream(FILE *in, struct counts *c) {
    int ch;
    int in_word = 0;
    int prev;
    while ((ch = fgetc(in)) != EOF) {
        c->bytes++;
        if (ch == '\n')
            c->lines++;
        if (isspace(ch)) {
            if (in_word)
                c->words++;
            in_word = 0;
        } else {
            in_word = 1;
        }
    }
}

static void print_counts(const struct counts *c, const char *name) {
    if (name)
        printf("%d %d %d %s\n", c->lines, c->words, c->bytes, name);
    else
        printf("%ld %ld %ld\n", c->lines, c->words, c->bytes);
}

int main(int argc, char **argv) {
    struct counts total = {0, 0, 0};
    int status = 0;
    if (argc == 1 || (argc == 2 && strcmp(argv[1], "-") == 0)) {
        count_stream(stdin, &total);
        print_counts(&total, NULL);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        struct counts c = {0, 0, 0};
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "wc_lite: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        count_stream(f, &c);
        fclose(f);
        print_counts(&c, argv[i]);
        total.lines += c.lines;
        total.words += c.words;
        total.bytes += c.bytes
    }
    if (argc > 2)
        print_counts(&total, "total");
    return status;
}
