// wake_cost.c - what one sleep and wake-up costs the sleeping thread on this machine, in CPU
// time charged to it (getrusage RUSAGE_THREAD), the figure client CPU per query is made of.
//
//   gcc -O2 -pthread -o wake_cost loadgen/scripts/wake_cost.c
//   ./wake_cost MODE N      (run under flock /work/bench.lock; pins itself to CPU 1)
// MODE pipe:    a child on CPU 0 writes a byte to a pipe every 1 ms; this thread waits for it
//               in epoll_wait(-1) (a wake-up by another CPU, as a reply from the server is)
// MODE pipe-to: the same with a 5 ms epoll_pwait2 timeout on every wait (a timer armed and
//               cancelled per wait)
// MODE spin:    the same as pipe while a SCHED_IDLE thread of this process spins on CPU 1, so
//               CPU 1 never goes idle and the switch is between two threads of one process
// MODE timer:   epoll_pwait2 with a 1 ms timeout and nothing to wait for (a timer wake-up, as
//               an arrival at a fixed rate is)
// MODE none:    the loop of `timer` with a zero timeout (no sleep): the system call alone
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double thread_cpu(void) {
  struct rusage r;
  getrusage(RUSAGE_THREAD, &r);
  return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  sched_setaffinity(0, sizeof s, &s);
}

static volatile int stop;

static void *spinner(void *unused) {
  struct sched_param p = {0};
  (void)unused;
  pin(1);
  sched_setscheduler(0, SCHED_IDLE, &p);
  while (!stop) {
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: wake_cost pipe|pipe-to|spin|timer|none N\n");
    return 2;
  }
  const char *mode = argv[1];
  int n = atoi(argv[2]);
  prctl(PR_SET_TIMERSLACK, 1UL);
  pin(1);
  int ep = epoll_create1(0);
  struct epoll_event ev[8];
  double c0, c1;
  if (!strcmp(mode, "timer") || !strcmp(mode, "none")) {
    struct timespec ts = {0, strcmp(mode, "timer") ? 0 : 1000000};
    c0 = thread_cpu();
    for (int i = 0; i < n; i++) syscall(SYS_epoll_pwait2, ep, ev, 8, &ts, NULL, 0);
    c1 = thread_cpu();
  } else {
    int p[2];
    if (pipe(p)) return 1;
    if (fork() == 0) {
      struct timespec ts = {0, 1000000};
      pin(0);
      for (int i = 0; i < n; i++) {
        nanosleep(&ts, NULL);
        if (write(p[1], "x", 1) != 1) _exit(1);
      }
      _exit(0);
    }
    pthread_t t;
    if (!strcmp(mode, "spin")) {
      pthread_create(&t, NULL, spinner, NULL);
      usleep(1000);
    }
    struct epoll_event e = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e);
    struct timespec to = {0, 5000000};
    char b[64];
    c0 = thread_cpu();
    for (int i = 0; i < n;) {
      int k = strcmp(mode, "pipe-to") ? epoll_wait(ep, ev, 8, -1)
                                      : (int)syscall(SYS_epoll_pwait2, ep, ev, 8, &to, NULL, 0);
      if (k > 0) {
        ssize_t r = read(p[0], b, sizeof b);
        if (r > 0) i += (int)r;
      }
    }
    c1 = thread_cpu();
    stop = 1;
    wait(NULL);
  }
  printf("%s: %.2f us of this thread's CPU per wait (%d waits)\n", mode, (c1 - c0) / n * 1e6, n);
  return 0;
}
