// Start-up times of commands: each command is spawned RUNS times (posix_spawn, standard output and
// error to /dev/null, then waitpid), the commands taking turns run by run so that they share the
// machine's load, and the wall time of each spawn + wait is kept. Prints the median, p90 and
// minimum per command in milliseconds. A run that exits non-zero stops the benchmark.
//
//   spawn_times RUNS LABEL -- COMMAND ARGS... [-- LABEL -- COMMAND ARGS...]...
//
// Example: spawn_times 200 true -- /bin/true -- version -- notesfs --version
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct command {
    const char *label;
    char **argv; // NULL-terminated, points into the program's own argv
    double *ms;
};

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(void) {
    fprintf(stderr, "usage: spawn_times RUNS LABEL -- COMMAND ARGS... [-- LABEL -- COMMAND ARGS...]...\n");
    return 2;
}

// One spawn + wait of a command; returns its milliseconds, or -1 (message printed) when it failed.
static double run_once(const struct command *c, posix_spawn_file_actions_t *actions) {
    double start = now_ms();
    pid_t pid;
    int error = posix_spawnp(&pid, c->argv[0], actions, NULL, c->argv, environ);
    if (error != 0) {
        fprintf(stderr, "spawn_times: %s: %s\n", c->argv[0], strerror(error));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            perror("spawn_times: waitpid");
            return -1;
        }
    }
    double ms = now_ms() - start;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "spawn_times: %s (%s) failed with status %d\n", c->label, c->argv[0], status);
        return -1;
    }
    return ms;
}

int main(int argc, char **argv) {
    if (argc < 5) return usage();
    char *end;
    long runs = strtol(argv[1], &end, 10);
    if (*end != '\0' || runs < 1 || runs > 1000000) return usage();
    // Split the rest at "--": LABEL -- COMMAND... -- LABEL -- COMMAND...
    struct command *commands = calloc((size_t)argc, sizeof *commands);
    if (commands == NULL) return 1;
    int count = 0;
    int i = 2;
    while (i < argc) {
        if (i + 2 >= argc || strcmp(argv[i + 1], "--") != 0) return usage();
        commands[count].label = argv[i];
        commands[count].argv = &argv[i + 2];
        int j = i + 2;
        while (j < argc && strcmp(argv[j], "--") != 0) j++;
        if (j == i + 2) return usage();
        argv[j < argc ? j : argc] = NULL; // ends this command's argv (argv[argc] is NULL already)
        commands[count].ms = malloc((size_t)runs * sizeof(double));
        if (commands[count].ms == NULL) return 1;
        count++;
        i = j + 1;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    // Two warm-up runs each (page cache, dynamic loader cache), not counted.
    for (int c = 0; c < count; c++) {
        for (int w = 0; w < 2; w++) {
            if (run_once(&commands[c], &actions) < 0) return 1;
        }
    }
    for (long r = 0; r < runs; r++) {
        for (int c = 0; c < count; c++) {
            double ms = run_once(&commands[c], &actions);
            if (ms < 0) return 1;
            commands[c].ms[r] = ms;
        }
    }
    printf("%-28s %10s %10s %10s   (%ld runs each, taking turns)\n", "command", "median ms", "p90 ms", "min ms", runs);
    for (int c = 0; c < count; c++) {
        qsort(commands[c].ms, (size_t)runs, sizeof(double), compare);
        double median = runs % 2 ? commands[c].ms[runs / 2] : (commands[c].ms[runs / 2 - 1] + commands[c].ms[runs / 2]) / 2;
        long p90 = (long)((runs - 1) * 0.9 + 0.5);
        printf("%-28s %10.2f %10.2f %10.2f\n", commands[c].label, median, commands[c].ms[p90], commands[c].ms[0]);
    }
    return 0;
}
