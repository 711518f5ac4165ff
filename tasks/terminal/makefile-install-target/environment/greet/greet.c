#include <stdio.h>

int main(int argc, char **argv) {
    printf("Greetings, %s.\n", argc > 1 ? argv[1] : "traveller");
    return 0;
}
