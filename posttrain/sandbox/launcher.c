/* posttrain sandbox launcher: the steps between "run this in sandbox X" and bubblewrap, in one
 * process instead of a shell pipeline (sh, unshare, sh, mount): join the sandbox's cgroups,
 * set rlimits, enter a private mount namespace, mount the overlays (the workspace and, in
 * system mode, one per system directory), exec bwrap.
 *
 * usage: launcher NOFILE CGROUP_PROCS_FILE... -- N (OVERLAY_OPTIONS MOUNT_POINT){N} BWRAP ARG...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

static void die(const char *what) {
    fprintf(stderr, "posttrain sandbox launcher: %s: %s\n", what, strerror(errno));
    _exit(125);
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s NOFILE CGROUP_PROCS... -- N (OVERLAY_OPTIONS MOUNT_POINT)... BWRAP ARGS...\n",
                argv[0]);
        return 125;
    }
    char pid[32];
    int pid_len = snprintf(pid, sizeof pid, "%d\n", getpid());
    int i = 2;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        int fd = open(argv[i], O_WRONLY);
        if (fd < 0 || write(fd, pid, pid_len) != pid_len) die(argv[i]);
        close(fd);
    }
    int mounts = i + 1 < argc ? atoi(argv[i + 1]) : 0;
    int command = i + 2 + 2 * mounts;
    if (mounts < 1 || command >= argc) {
        fprintf(stderr, "posttrain sandbox launcher: missing overlay options, mount points or command\n");
        return 125;
    }
    struct rlimit nofile = {atol(argv[1]), atol(argv[1])}, core = {0, 0};
    if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) die("setrlimit NOFILE");
    if (setrlimit(RLIMIT_CORE, &core) != 0) die("setrlimit CORE");
    if (unshare(CLONE_NEWNS) != 0) die("unshare mount namespace");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("make mounts private");
    for (int m = 0; m < mounts; m++) {
        const char *options = argv[i + 2 + 2 * m], *target = argv[i + 3 + 2 * m];
        if (mount("overlay", target, "overlay", 0, options) != 0) die(target);
    }
    execv(argv[command], argv + command);
    die(argv[command]);
    return 125;
}
