/*
 * sg-exec: apply shellgate's child-side hardening, then exec the command.
 *
 * Why a helper at all: CPython's fast spawn path (vfork) is lost as soon as a
 * preexec_fn is given (0.7 ms -> 2.5-3 ms per spawn, far worse with a large
 * parent), and chaining setpriv + prlimit costs about 1 ms per extra exec. This
 * static binary does all of it in one cheap exec:
 *
 *   sg-exec [--cgroup PROCS] PARENT_PID NOFILE NPROC CPU_S FSIZE AS DROPCAPS -- PROGRAM ARG...
 *   sg-exec --supervise FD -- PROGRAM ARG...
 *
 * - parent-death signal SIGKILL, then a re-check that the parent is still the
 *   expected one (it may have died between fork and prctl);
 * - no_new_privs (setuid/file-capability binaries gain nothing);
 * - hard and soft rlimits (0 = leave as inherited);
 * - DROPCAPS=1: empty the capability bounding set and the ambient set, so a root
 *   command holds no capabilities after exec;
 * - --cgroup PROCS: first of all, join the cgroup whose cgroup.procs file is
 *   PROCS (writing "0" moves the caller), so nothing is forked outside it.
 * Any failure exits 126 with a message: the command never runs half-hardened.
 *
 * --supervise runs inside a sandbox, where the gate cannot wait for the command
 * itself: it forks the command, survives the SIGTERM the gate sends to the
 * sandbox's processes (a handler, which exec resets to the default in the
 * child), and writes how the command ended to FD ("exit N" or "signal N") —
 * bwrap alone reports 128+N for both a signal death and `exit 128+N`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

static void die(const char *what) {
  fprintf(stderr, "shellgate: cannot harden the command (%s: %s)\n", what, strerror(errno));
  _exit(126);
}

static unsigned long long num(const char *s, const char *what) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || !end || *end) { errno = EINVAL; die(what); }
  return v;
}

static void limit(int resource, const char *value, const char *what) {
  unsigned long long v = num(value, what);
  if (v == 0) return;
  struct rlimit r = {(rlim_t)v, (rlim_t)v};
  struct rlimit cur;
  if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < r.rlim_max) {
    r.rlim_cur = r.rlim_max = cur.rlim_max; /* never try to raise an inherited hard limit */
  }
  if (setrlimit(resource, &r) != 0) die(what);
}

static void on_signal(int sig) { (void)sig; }

static int supervise(int argc, char **argv) {
  if (argc < 5 || strcmp(argv[3], "--") != 0) {
    fprintf(stderr, "usage: sg-exec --supervise FD -- PROGRAM ARG...\n");
    return 126;
  }
  int fd = (int)num(argv[2], "status fd");
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) die("status fd");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
  unsigned n = sizeof forwarded / sizeof *forwarded;
  /* Blocked across fork: a signal sent between fork and exec must not reach the
     child's inherited no-op handler and vanish; it stays pending until the
     child has its default dispositions back, and then it acts. */
  sigset_t block, old;
  sigemptyset(&block);
  for (unsigned i = 0; i < n; i++) sigaddset(&block, forwarded[i]);
  if (sigprocmask(SIG_BLOCK, &block, &old) != 0) die("signal mask");
  for (unsigned i = 0; i < n; i++) {
    if (sigaction(forwarded[i], &sa, NULL) != 0) die("signal handler");
  }
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (unsigned i = 0; i < n; i++) sigaction(forwarded[i], &dfl, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    execv(argv[4], argv + 4);
    fprintf(stderr, "shellgate: cannot execute %s: %s\n", argv[4], strerror(errno));
    _exit(127);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) die("wait");
  }
  char line[32];
  int len, code;
  if (WIFSIGNALED(status)) {
    len = snprintf(line, sizeof line, "signal %d\n", WTERMSIG(status));
    code = 128 + WTERMSIG(status);
  } else {
    len = snprintf(line, sizeof line, "exit %d\n", WEXITSTATUS(status));
    code = WEXITSTATUS(status);
  }
  if (write(fd, line, (size_t)len) != len) { /* the gate falls back to bwrap's code */ }
  return code;
}

static void join_cgroup(const char *procs) {
  int fd = open(procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die("cgroup");
  if (write(fd, "0", 1) != 1) die("cgroup");
  close(fd);
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--supervise") == 0) return supervise(argc, argv);
  if (argc >= 3 && strcmp(argv[1], "--cgroup") == 0) {
    join_cgroup(argv[2]);
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  if (argc < 10 || strcmp(argv[8], "--") != 0) {
    fprintf(stderr, "usage: sg-exec PPID NOFILE NPROC CPU FSIZE AS DROPCAPS -- PROGRAM ARG...\n");
    return 126;
  }
  pid_t expected = (pid_t)num(argv[1], "parent pid");
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die("parent-death signal");
  if (getppid() != expected) _exit(137); /* the gate died before we armed the signal */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  limit(RLIMIT_NOFILE, argv[2], "open files limit");
  limit(RLIMIT_NPROC, argv[3], "process limit");
  limit(RLIMIT_CPU, argv[4], "cpu limit");
  limit(RLIMIT_FSIZE, argv[5], "file size limit");
  limit(RLIMIT_AS, argv[6], "address space limit");
  if (strcmp(argv[7], "1") == 0) {
    for (int cap = 0; cap < 64; cap++) {
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) die("capability bounding set");
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) die("ambient capabilities");
  }
  execv(argv[9], argv + 9);
  fprintf(stderr, "shellgate: cannot execute %s: %s\n", argv[9], strerror(errno));
  return 127;
}
