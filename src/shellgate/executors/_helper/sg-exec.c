/*
 * sg-exec: apply shellgate's child-side hardening, then exec the command.
 *
 *   sg-exec [--cgroup PROCS] [--chdir DIR] [--close-fds] [--subreaper FD]
 *           PARENT_PID NOFILE NPROC CPU_S FSIZE AS DROPCAPS -- PROGRAM ARG...
 *   sg-exec [--cgroup PROCS] --close-fds --subreaper FD --request FD
 *           PARENT_PID NOFILE NPROC CPU_S FSIZE AS DROPCAPS --
 *   sg-exec --supervise FD -- PROGRAM ARG...
 *
 * Why a helper at all: CPython's fast spawn path (vfork) is lost as soon as a
 * preexec_fn is given (0.7 ms -> 2.5-3 ms per spawn, far worse with a large
 * parent), and chaining setpriv + prlimit costs about 1 ms per extra exec. This
 * helper does all of it in one cheap exec:
 *
 * - --cgroup PROCS: first of all, join the cgroup whose cgroup.procs file is
 *   PROCS (writing "0" moves the caller), so nothing is forked outside it;
 * - parent-death signal SIGKILL, then a re-check that the parent is still the
 *   expected one (it may have died between fork and prctl);
 * - --chdir DIR: enter the working directory, and --close-fds: close every
 *   descriptor above stderr (close_range, or each one listed in /proc/self/fd
 *   where close_range fails). Together they let the gate spawn with
 *   posix_spawn, which has neither a cwd nor close_fds of its own and is about
 *   75 us cheaper a call than subprocess.Popen;
 * - no_new_privs (setuid/file-capability binaries gain nothing);
 * - hard and soft rlimits (0 = leave as inherited; never above an inherited hard limit);
 * - DROPCAPS=1: empty the capability bounding set and the ambient set, so a root
 *   command holds no capabilities after exec.
 * Any failure exits 126 with a message: the command never runs half-hardened.
 *
 * --subreaper FD (the local executor) keeps the helper as the call's supervisor
 * instead of exec'ing the command: a child subreaper, so every process the call
 * starts stays in its subtree, whatever it does with sessions and double forks.
 * Its parent-death signal is a catchable SIGTERM: when the gate dies, however it
 * dies, the handler SIGKILLs the whole subtree (each killed process's children
 * become ours, so the loop ends with nothing left) before the supervisor exits.
 * The command itself (forked — in the SG_NOLIBC build a vfork-style clone that
 * copies no address space, ~30 us cheaper — hardened, exec'd) keeps SIGKILL as
 * its own parent-death signal. When the command ends the supervisor exits with the same
 * status (re-raising a signal), unless other processes of the call are still
 * alive: then it lets go of the command's stdout/stderr, writes "exit N" /
 * "signal N" on FD (so the gate knows the command ended) and stays until the
 * gate has stopped them. It never writes to the command's stdout/stderr; it
 * keeps its copies open only while the command runs and until it exits right
 * after it, so that the gate sees the pipes end and the leader exit at once.
 *
 * --request FD makes that supervisor a spare, started ahead of its call (the
 * gate's executors/_spare.py): it does all of the above, forks the command's
 * process at once (a plain fork: it stays free to take signals), and that
 * process, hardened, waits for the call on FD (a Unix socket: a pipe could be
 * opened through /proc by another process of the user):
 * "DIR\0ARGC\0ARG...\0ENV...\0\0"
 * read to EOF (every field NUL-terminated, then an empty one, so that a request
 * cut short never reads as a shorter one), enters DIR, takes the gate's umask
 * as it is then (from /proc/PPID/status) and execs. A malformed or
 * truncated request exits 126 before anything runs; none at all (EOF first)
 * exits 0. A signal to the group before the request has the waiting process
 * die of it, and the supervisor exits as it did, as for any command.
 *
 * --supervise runs inside a sandbox, where the gate cannot wait for the command
 * itself: it forks the command, survives the SIGTERM the gate sends to the
 * sandbox's processes (a handler, which exec resets to the default in the
 * child), and writes how the command ended to FD ("exit N" or "signal N") —
 * bwrap alone reports 128+N for both a signal death and `exit 128+N`.
 *
 * Built with SG_NOLIBC on x86_64 it uses raw system calls and no C library: a
 * static glibc binary costs ~0.5 ms to exec (its start-up code), this one ~40 us,
 * and the helper is on every command's path. Elsewhere the same logic runs over
 * libc. Every sys_* call returns the result or -errno, as the kernel does.
 */

#if defined(SG_NOLIBC) && defined(__x86_64__)

typedef unsigned long size_t;
typedef long ssize_t;
typedef int pid_t;

#define SYS_read 0
#define SYS_write 1
#define SYS_close 3
#define SYS_rt_sigaction 13
#define SYS_rt_sigprocmask 14
#define SYS_rt_sigreturn 15
#define SYS_rt_sigpending 127
#define SYS_dup2 33
#define SYS_getpid 39
#define SYS_fork 57
#define SYS_execve 59
#define SYS_exit 60
#define SYS_wait4 61
#define SYS_kill 62
#define SYS_fcntl 72
#define SYS_chdir 80
#define SYS_getppid 110
#define SYS_prctl 157
#define SYS_getdents64 217
#define SYS_openat 257
#define SYS_prlimit64 302
#define SYS_close_range 436
#define SYS_umask 95

#define AT_FDCWD (-100)
#define O_WRONLY 01
#define O_RDWR 02
#define O_RDONLY 0
#define O_DIRECTORY 0200000
#define O_CLOEXEC 02000000
#define F_SETFD 2
#define FD_CLOEXEC 1
#define EINVAL 22
#define E2BIG 7
#define EINTR 4
#define ECHILD 10
#define ENOSYS 38
#define SIGKILL 9
#define SIGHUP 1
#define SIGINT 2
#define SIGQUIT 3
#define SIGTERM 15
#define SIGCHLD 17
#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2
#define WNOHANG 1
#define SA_RESTORER 0x04000000
#define RLIMIT_CPU 0
#define RLIMIT_FSIZE 1
#define RLIMIT_CORE 4
#define RLIMIT_NPROC 6
#define RLIMIT_NOFILE 7
#define RLIMIT_AS 9
#define PR_SET_PDEATHSIG 1
#define PR_CAPBSET_DROP 24
#define PR_SET_CHILD_SUBREAPER 36
#define PR_SET_NO_NEW_PRIVS 38
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

struct rlim64 { unsigned long cur, max; };
struct ksigaction { void (*handler)(int); unsigned long flags; void (*restorer)(void); unsigned long mask; };

static long sys_read(int fd, void *buf, size_t n) { return sys6(SYS_read, fd, (long)buf, (long)n, 0, 0, 0); }
static long sys_write(int fd, const void *buf, size_t n) { return sys6(SYS_write, fd, (long)buf, (long)n, 0, 0, 0); }
static long sys_close(int fd) { return sys6(SYS_close, fd, 0, 0, 0, 0, 0); }
static long sys_open_wronly(const char *path) { return sys6(SYS_openat, AT_FDCWD, (long)path, O_WRONLY | O_CLOEXEC, 0, 0, 0); }
static long sys_open_dir(const char *path) { return sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0, 0); }
static long sys_open_read(const char *path) { return sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0); }
static long sys_open_null(void) { return sys6(SYS_openat, AT_FDCWD, (long)"/dev/null", O_RDWR | O_CLOEXEC, 0, 0, 0); }
static long sys_dup2(int fd, int to) { return sys6(SYS_dup2, fd, to, 0, 0, 0, 0); }
static long sys_getdents(int fd, void *buf, size_t n) { return sys6(SYS_getdents64, fd, (long)buf, (long)n, 0, 0, 0); }
static long sys_prctl(long op, long a, long b, long c, long d) { return sys6(SYS_prctl, op, a, b, c, d, 0); }
static long sys_getppid(void) { return sys6(SYS_getppid, 0, 0, 0, 0, 0, 0); }
static long sys_getpid(void) { return sys6(SYS_getpid, 0, 0, 0, 0, 0, 0); }
static long sys_kill(long pid, int sig) { return sys6(SYS_kill, pid, sig, 0, 0, 0, 0); }
static long sys_getrlimit(int res, struct rlim64 *old) { return sys6(SYS_prlimit64, 0, res, 0, (long)old, 0, 0); }
static long sys_setrlimit(int res, const struct rlim64 *lim) { return sys6(SYS_prlimit64, 0, res, (long)lim, 0, 0, 0); }
static long sys_execve(const char *path, char **argv, char **envp) { return sys6(SYS_execve, (long)path, (long)argv, (long)envp, 0, 0, 0); }
static long sys_fork(void) { return sys6(SYS_fork, 0, 0, 0, 0, 0, 0); }

/* Run FN(ARG) in a child that shares our memory until it execs or exits
   (clone with CLONE_VM | CLONE_VFORK, SIGCHLD on exit), on a stack of its own:
   no copy of our address space, which a fork would make only for the exec to
   throw it away. We are suspended meanwhile. The child's return value is its
   exit code. Returns the child's pid or -errno. */
static unsigned long child_stack[2048] __attribute__((aligned(16)));
__attribute__((naked)) static long sg_vfork_run(__attribute__((unused)) long (*fn)(void *),
                                                __attribute__((unused)) void *arg,
                                                __attribute__((unused)) void *stack_top) {
  __asm__ volatile(
      "push %r12\n push %r13\n" /* callee-saved: fn and arg, kept across the syscall */
      "mov %rdi, %r12\n mov %rsi, %r13\n"
      "mov $0x4111, %edi\n" /* CLONE_VM | CLONE_VFORK | SIGCHLD */
      "mov %rdx, %rsi\n"
      "xor %edx, %edx\n xor %r10d, %r10d\n xor %r8d, %r8d\n"
      "mov $56, %eax\n syscall\n"
      "test %rax, %rax\n jnz 1f\n"
      /* the child, on its own (16-byte aligned) stack: fn(arg), then exit */
      "xor %ebp, %ebp\n mov %r13, %rdi\n call *%r12\n"
      "mov %rax, %rdi\n mov $60, %eax\n syscall\n ud2\n"
      "1: pop %r13\n pop %r12\n ret\n");
}
static long sys_spawn(long (*fn)(void *), void *arg) {
  return sg_vfork_run(fn, arg, child_stack + sizeof child_stack / sizeof child_stack[0]);
}
static long sys_wait(pid_t pid, int *status, int options) { return sys6(SYS_wait4, pid, (long)status, options, 0, 0, 0); }
static long sys_cloexec(int fd) { return sys6(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC, 0, 0, 0); }
static long sys_chdir(const char *path) { return sys6(SYS_chdir, (long)path, 0, 0, 0, 0, 0); }
static long sys_close_range(unsigned first, unsigned last) { return sys6(SYS_close_range, first, last, 0, 0, 0, 0); }
static long sys_umask(unsigned mask) { return sys6(SYS_umask, mask, 0, 0, 0, 0, 0); }
static __attribute__((noreturn)) void sys_exit(int code) {
  for (;;) sys6(SYS_exit, code, 0, 0, 0, 0, 0);
}

__attribute__((naked)) static void sg_restorer(void) {
  __asm__ volatile("mov $15, %eax\n syscall\n");
}
static long sys_sigaction(int sig, void (*handler)(int), unsigned long mask) {
  struct ksigaction act;
  act.handler = handler;
  act.flags = SA_RESTORER;
  act.restorer = sg_restorer;
  act.mask = mask;
  return sys6(SYS_rt_sigaction, sig, (long)&act, 0, 8, 0, 0);
}
static long sys_sigdefault(int sig) {
  struct ksigaction act = {0, 0, 0, 0};
  return sys6(SYS_rt_sigaction, sig, (long)&act, 0, 8, 0, 0);
}
static long sys_sigmask(int how, unsigned long set, unsigned long *old) {
  return sys6(SYS_rt_sigprocmask, how, (long)&set, (long)old, 8, 0, 0);
}
static unsigned long sys_sigpending(void) {
  unsigned long set = 0;
  return sys6(SYS_rt_sigpending, (long)&set, 8, 0, 0, 0, 0) < 0 ? 0 : set;
}
#define SIG_DEFAULT ((void (*)(int))0)

static int sg_main(int argc, char **argv, char **envp);

__attribute__((used, noreturn)) static void sg_start_c(long *sp) {
  int argc = (int)sp[0];
  char **argv = (char **)(sp + 1);
  sys_exit(sg_main(argc, argv, argv + argc + 1));
}

__attribute__((naked, noreturn)) void _start(void) {
  __asm__ volatile("xor %ebp, %ebp\n mov %rsp, %rdi\n and $-16, %rsp\n call sg_start_c\n ud2\n");
}

#else /* libc */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/types.h>

#ifndef PR_SET_CHILD_SUBREAPER
#define PR_SET_CHILD_SUBREAPER 36
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

struct rlim64 { unsigned long cur, max; };
/* The kernel's convention: the result, or -errno (evaluated once). */
static long R(long value) { return value < 0 ? -(long)errno : value; }
static long sys_read(int fd, void *buf, size_t n) { return R(read(fd, buf, n)); }
static long sys_write(int fd, const void *buf, size_t n) { return R(write(fd, buf, n)); }
static long sys_close(int fd) { return R(close(fd)); }
static long sys_open_wronly(const char *path) { return R(open(path, O_WRONLY | O_CLOEXEC)); }
static long sys_open_dir(const char *path) { return R(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)); }
static long sys_open_read(const char *path) { return R(open(path, O_RDONLY | O_CLOEXEC)); }
static long sys_open_null(void) { return R(open("/dev/null", O_RDWR | O_CLOEXEC)); }
static long sys_dup2(int fd, int to) { return R(dup2(fd, to)); }
static long sys_getdents(int fd, void *buf, size_t n) { return R(syscall(SYS_getdents64, fd, buf, n)); }
static long sys_prctl(long op, long a, long b, long c, long d) { return R(prctl((int)op, a, b, c, d)); }
static long sys_getppid(void) { return getppid(); }
static long sys_getpid(void) { return getpid(); }
static long sys_kill(long pid, int sig) { return R(kill((pid_t)pid, sig)); }
static long sys_getrlimit(int res, struct rlim64 *old) {
  struct rlimit r;
  if (getrlimit(res, &r) != 0) return -(long)errno;
  old->cur = r.rlim_cur;
  old->max = r.rlim_max;
  return 0;
}
static long sys_setrlimit(int res, const struct rlim64 *lim) {
  struct rlimit r = {lim->cur, lim->max};
  return R(setrlimit(res, &r));
}
static long sys_execve(const char *path, char **argv, char **envp) { return R(execve(path, argv, envp)); }
static long sys_fork(void) { return R(fork()); }
/* Run FN(ARG) in a forked child, its return value the child's exit code. */
static long sys_spawn(long (*fn)(void *), void *arg) {
  long pid = R(fork());
  if (pid == 0) _exit((int)fn(arg));
  return pid;
}
static long sys_wait(pid_t pid, int *status, int options) { return R(wait4(pid, status, options, NULL)); }
static long sys_cloexec(int fd) { return R(fcntl(fd, F_SETFD, FD_CLOEXEC)); }
static long sys_chdir(const char *path) { return R(chdir(path)); }
static long sys_umask(unsigned mask) { return (long)umask((mode_t)mask); }
static long sys_close_range(unsigned first, unsigned last) {
#ifdef SYS_close_range
  return R(syscall(SYS_close_range, first, last, 0));
#else
  (void)first;
  (void)last;
  return -ENOSYS;
#endif
}
static __attribute__((noreturn)) void sys_exit(int code) { _exit(code); }
static long sys_sigaction(int sig, void (*handler)(int), unsigned long mask) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  for (int i = 1; i < 64; i++) {
    if (mask & (1UL << (i - 1))) sigaddset(&sa.sa_mask, i);
  }
  return R(sigaction(sig, &sa, NULL));
}
/* Raw: glibc's sigaction() refuses its own internal signals (32 and 33). A
   zeroed kernel sigaction is SIG_DFL, no flags, empty mask on every layout. */
static long sys_sigdefault(int sig) {
  unsigned long act[4] = {0, 0, 0, 0};
  return R(syscall(SYS_rt_sigaction, sig, act, NULL, 8));
}
static long sys_sigmask(int how, unsigned long set, unsigned long *old) {
  sigset_t s, o;
  sigemptyset(&s);
  for (int i = 1; i < 64; i++) {
    if (set & (1UL << (i - 1))) sigaddset(&s, i);
  }
  long r = R(sigprocmask(how, &s, &o));
  if (old) {
    *old = 0;
    for (int i = 1; i < 64; i++) {
      if (sigismember(&o, i) == 1) *old |= 1UL << (i - 1);
    }
  }
  return r;
}
static unsigned long sys_sigpending(void) {
  sigset_t s;
  unsigned long set = 0;
  if (sigpending(&s) != 0) return 0;
  for (int i = 1; i < 64; i++) {
    if (sigismember(&s, i) == 1) set |= 1UL << (i - 1);
  }
  return set;
}
#define SIG_DEFAULT SIG_DFL

static int sg_main(int argc, char **argv, char **envp);
extern char **environ;
int main(int argc, char **argv) { return sg_main(argc, argv, environ); }

#endif

/* -- shared logic, over sys_* only -------------------------------------------- */

#define WALL 0x40000000 /* __WALL: every child, whatever signal it reports its exit with */

static size_t slen(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}
static int same(const char *a, const char *b) {
  while (*a && *a == *b) { a++; b++; }
  return *a == *b;
}
static void put(const char *s) { sys_write(2, s, slen(s)); }
static void put_num(unsigned long v) {
  char buf[24];
  int i = 23;
  buf[i] = 0;
  do { buf[--i] = (char)('0' + v % 10); v /= 10; } while (v && i > 0);
  put(buf + i);
}

static __attribute__((noreturn)) void die(const char *what, long err) {
  put("shellgate: cannot harden the command (");
  put(what);
  put(": errno ");
  put_num((unsigned long)(err < 0 ? -err : err));
  put(")\n");
  sys_exit(126);
}

static unsigned long num(const char *s, const char *what) {
  unsigned long v = 0;
  if (!*s) die(what, EINVAL);
  for (; *s; s++) {
    if (*s < '0' || *s > '9') die(what, EINVAL);
    unsigned long next = v * 10 + (unsigned long)(*s - '0');
    if (next < v) die(what, EINVAL);
    v = next;
  }
  return v;
}

static void limit(int resource, const char *value, const char *what) {
  unsigned long v = num(value, what);
  if (v == 0) return;
  struct rlim64 want, cur;
  want.cur = want.max = v;
  cur.cur = cur.max = ~0UL;
  if (sys_getrlimit(resource, &cur) == 0 && cur.max != ~0UL && cur.max < want.max) {
    want.cur = want.max = cur.max; /* never try to raise an inherited hard limit */
  }
  long r = sys_setrlimit(resource, &want);
  if (r < 0) die(what, r);
}

static void join_cgroup(const char *procs) {
  long fd = sys_open_wronly(procs);
  if (fd < 0) die("cgroup", fd);
  long w = sys_write((int)fd, "0", 1);
  if (w != 1) die("cgroup", w < 0 ? w : -EINVAL);
  sys_close((int)fd);
}

/* Close every descriptor from 3 up but KEEP and ALSO (-1: none): what the gate process
   holds open without close-on-exec (a host's sockets, say) must not reach the
   command. close_range first (Linux 5.9+). Any error from it (ENOSYS on old
   kernels, EPERM from a container's seccomp profile that predates it) falls back
   to the list in /proc/self/fd, which names every open descriptor whatever the
   limits; only without /proc, to a loop up to the hard open-files limit. */
static int close_listed(int keep, int also) {
  long dir = sys_open_dir("/proc/self/fd");
  if (dir < 0) return 0;
  /* 8-byte aligned: getdents64 records hold 64-bit fields. */
  unsigned long words[512];
  char *buf = (char *)words;
  for (;;) {
    long n = sys_getdents(dir, buf, sizeof words);
    if (n < 0) die("close descriptors", n);
    if (n == 0) break;
    /* Closing a descriptor does not move the listing: its offsets are fd numbers. */
    for (long at = 0; at < n;) {
      unsigned short reclen = *(unsigned short *)(buf + at + 16);
      const char *name = buf + at + 19;
      at += reclen;
      if (name[0] < '0' || name[0] > '9') continue; /* "." and ".." */
      unsigned long fd = 0;
      for (const char *c = name; *c >= '0' && *c <= '9'; c++) fd = fd * 10 + (unsigned long)(*c - '0');
      if (fd > 2 && fd != (unsigned long)dir && fd != (unsigned long)keep && fd != (unsigned long)also) {
        sys_close((int)fd);
      }
    }
  }
  sys_close((int)dir);
  return 1;
}

/* close_range over the gaps around the kept descriptors; 0 if any call failed. */
static int close_ranges(int keep, int also) {
  int kept[2] = {keep < also ? keep : also, keep < also ? also : keep};
  unsigned lo = 3;
  for (int i = 0; i < 2; i++) {
    if (kept[i] < (int)lo) continue; /* -1, 0-2, or the same one twice */
    if ((unsigned)kept[i] > lo && sys_close_range(lo, (unsigned)kept[i] - 1) != 0) return 0;
    lo = (unsigned)kept[i] + 1;
  }
  return sys_close_range(lo, ~0U) == 0;
}

static void close_inherited(int keep, int also) {
  if (close_ranges(keep, also)) return;
  if (close_listed(keep, also)) return;
  struct rlim64 cur;
  cur.cur = cur.max = 0;
  long r = sys_getrlimit(RLIMIT_NOFILE, &cur);
  if (r < 0) die("close descriptors", r);
  /* One close per possible descriptor: fine up to a million, minutes where the
     hard limit was raised to a billion. Past 2^20, refuse rather than leak. */
  if (cur.max > (1UL << 20)) die("close descriptors (no close_range, no /proc)", -EINVAL);
  for (unsigned long fd = 3; fd < cur.max; fd++) {
    if (fd != (unsigned long)keep && fd != (unsigned long)also) sys_close((int)fd);
  }
}

/* Exec the command; only returns (127, after saying why) if the exec failed. */
static int run_command(char **argv, char **envp) {
  long e = sys_execve(argv[0], argv, envp);
  put("shellgate: cannot execute ");
  put(argv[0]);
  put(": errno ");
  put_num((unsigned long)-e);
  put("\n");
  return 127;
}

/* "exit N\n" or "signal N\n" for a wait status, into LINE (32 bytes); its length. */
static int status_line(int status, char *line) {
  int n = 0;
  const char *kind;
  unsigned long value;
  int sig = status & 0x7f;
  if (sig != 0 && sig != 0x7f) {
    kind = "signal ";
    value = (unsigned long)sig;
  } else {
    kind = "exit ";
    value = (unsigned long)((status >> 8) & 0xff);
  }
  for (const char *k = kind; *k; k++) line[n++] = *k;
  char digits[8];
  int d = 0;
  do { digits[d++] = (char)('0' + value % 10); value /= 10; } while (value);
  while (d) line[n++] = digits[--d];
  line[n++] = '\n';
  return n;
}

/* The signals a supervisor survives (the gate's SIGTERM on a timeout reaches the
   whole group; so can a command's `kill 0`); SIGTERM is also its parent-death signal. */
static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
#define N_FORWARDED 4
static unsigned long forwarded_mask(void) {
  unsigned long mask = 0;
  for (unsigned i = 0; i < N_FORWARDED; i++) mask |= 1UL << (forwarded[i] - 1);
  return mask;
}

static void on_signal(int sig) { (void)sig; }

/* Install on_signal-like HANDLER for the forwarded signals, blocking them (set
   before the fork, so none reaches the child's inherited handler and vanishes:
   it stays pending until the child has its default dispositions back). Returns
   the previous mask through OLD. */
static void catch_forwarded(void (*handler)(int), unsigned long *old) {
  long r = sys_sigmask(SIG_BLOCK, forwarded_mask(), old);
  if (r < 0) die("signal mask", r);
  for (unsigned i = 0; i < N_FORWARDED; i++) {
    r = sys_sigaction(forwarded[i], handler, forwarded_mask());
    if (r < 0) die("signal handler", r);
  }
}

static void default_forwarded(unsigned long old) {
  for (unsigned i = 0; i < N_FORWARDED; i++) sys_sigaction(forwarded[i], SIG_DEFAULT, 0);
  sys_sigmask(SIG_SETMASK, old, 0);
}

/* Wait for PID (or any child, -1), retrying on EINTR; the result as wait4's. */
static long wait_for(long pid, int *status, int options) {
  for (;;) {
    long r = sys_wait((pid_t)pid, status, options);
    if (r != -EINTR) return r;
  }
}

static int supervise(int argc, char **argv, char **envp) {
  if (argc < 5 || !same(argv[3], "--")) {
    put("usage: sg-exec --supervise FD -- PROGRAM ARG...\n");
    return 126;
  }
  int fd = (int)num(argv[2], "status fd");
  long r = sys_cloexec(fd);
  if (r < 0) die("status fd", r);
  unsigned long old = 0;
  catch_forwarded(on_signal, &old);
  long child = sys_fork();
  if (child < 0) die("fork", child);
  if (child == 0) {
    default_forwarded(old);
    sys_exit(run_command(argv + 4, envp));
  }
  sys_sigmask(SIG_SETMASK, old, 0);
  int status = 0;
  r = wait_for(child, &status, 0);
  if (r < 0) die("wait", r);
  char line[32];
  int n = status_line(status, line);
  sys_write(fd, line, (size_t)n); /* on failure the gate falls back to bwrap's code */
  int sig = status & 0x7f;
  return sig != 0 && sig != 0x7f ? 128 + sig : (status >> 8) & 0xff;
}

/* -- the call's supervisor (--subreaper) ------------------------------------- */

static long gate_pid; /* our parent: a signal while it still is, is no parent death */
static volatile unsigned long early; /* forwarded signals caught before the fork */
static volatile long command_pid;

/* SIGKILL every child we have (listed by the kernel: /proc/PID/task/PID/children
   of this single-threaded process). Without /proc, the process group — which is
   ours too, so this is the last thing we do. */
static void kill_children(void) {
  char path[64];
  const char *pre = "/proc/self/task/";
  int n = 0;
  for (const char *c = pre; *c; c++) path[n++] = *c;
  char digits[24];
  int d = 0;
  unsigned long self = (unsigned long)sys_getpid();
  do { digits[d++] = (char)('0' + self % 10); self /= 10; } while (self);
  while (d) path[n++] = digits[--d];
  for (const char *c = "/children"; *c; c++) path[n++] = *c;
  path[n] = 0;
  long fd = sys_open_read(path);
  if (fd < 0) {
    sys_kill(0, SIGKILL);
    return;
  }
  char buf[512];
  unsigned long pid = 0;
  int digit = 0;
  for (;;) {
    long got = sys_read((int)fd, buf, sizeof buf);
    if (got <= 0) break;
    for (long i = 0; i < got; i++) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        pid = pid * 10 + (unsigned long)(buf[i] - '0');
        digit = 1;
      } else {
        if (digit && pid > 1) sys_kill((long)pid, SIGKILL);
        pid = 0;
        digit = 0;
      }
    }
  }
  if (digit && pid > 1) sys_kill((long)pid, SIGKILL);
  sys_close((int)fd);
}

/* The gate is gone: SIGKILL the whole subtree, then exit. As a subreaper we
   inherit the children of every process we kill (before it becomes a zombie),
   and a process being killed cannot fork any more, so kill-all-then-reap-one,
   repeated until no child is left, reaches every descendant. */
static __attribute__((noreturn)) void sweep(void) {
  for (;;) {
    kill_children();
    long r = wait_for(-1, 0, WALL);
    if (r < 0) break; /* ECHILD: nothing left */
  }
  sys_exit(128 + SIGKILL);
}

/* The parent-death signal (SIGTERM) and the forwarded signals: survive them, but
   if our parent is no longer the gate, the gate died — take the call with it.
   (Reparenting sends the parent-death signal again, so a gate thread that dies
   before the rest of the gate only brings us here early, to look.) */
static void on_supervisor_signal(int sig) {
  if (sys_getppid() != gate_pid) sweep();
  if (command_pid == 0) early |= 1UL << (sig - 1);
}

/* Exit as the command did: the same code, or the same signal (not dumping core:
   a soft RLIMIT_CORE of 1 stops both core files and core pipes). */
static __attribute__((noreturn)) void exit_as(int status) {
  int sig = status & 0x7f;
  if (sig == 0 || sig == 0x7f) sys_exit((status >> 8) & 0xff);
  struct rlim64 core;
  core.cur = core.max = 0;
  if (sys_getrlimit(RLIMIT_CORE, &core) == 0) {
    core.cur = core.max >= 1 ? 1 : 0;
    sys_setrlimit(RLIMIT_CORE, &core);
  }
  sys_sigdefault(sig);
  sys_sigmask(SIG_UNBLOCK, 1UL << (sig - 1), 0);
  sys_kill(sys_getpid(), sig);
  sys_exit(128 + sig);
}

static void harden(char **argv);

static void enter(const char *dir) {
  long r = sys_chdir(dir);
  if (r < 0) {
    put("shellgate: cannot enter the working directory ");
    put(dir);
    put(": errno ");
    put_num((unsigned long)-r);
    put("\n");
    sys_exit(126);
  }
}

/* -- a spare supervisor's request (--request) --------------------------------- */

#define REQUEST_MAX (256 * 1024) /* the gate sends at most 64 KiB (executors/_spare.py) */
#define REQUEST_ARGS 64
#define REQUEST_ENVS 4096
static char request[REQUEST_MAX + 1];
static char *request_argv[REQUEST_ARGS + 1];
static char *request_envp[REQUEST_ENVS + 1];

/* The next NUL-terminated field at *AT (below END), or die. */
static char *field(char **at, char *end) {
  char *start = *at;
  char *c = start;
  while (c < end && *c) c++;
  if (c >= end) die("request", -EINVAL);
  *at = c + 1;
  return start;
}

/* Read the call from FD to its EOF and enter its directory. The fields
   DIR ARGC ARG... ENV... are each NUL-terminated and followed by an empty one,
   so that a request cut short never reads as a shorter one. No request at all
   (EOF first) is the gate letting the spare go: exit 0. */
static void receive_request(int fd, char ***cmd, char ***envp) {
  size_t have = 0;
  for (;;) {
    long r = sys_read(fd, request + have, REQUEST_MAX + 1 - have);
    if (r == -EINTR) continue;
    if (r < 0) die("request", r);
    if (r == 0) break;
    have += (size_t)r;
    if (have > REQUEST_MAX) die("request", -E2BIG);
  }
  sys_close(fd);
  if (have == 0) sys_exit(0);
  char *at = request, *end = request + have;
  char *dir = field(&at, end);
  if (dir[0] != '/') die("request (working directory)", -EINVAL);
  unsigned long argc = num(field(&at, end), "request (argument count)");
  if (argc < 1 || argc > REQUEST_ARGS) die("request (argument count)", -E2BIG);
  for (unsigned long i = 0; i < argc; i++) request_argv[i] = field(&at, end);
  request_argv[argc] = 0;
  unsigned long n = 0;
  for (;;) {
    char *entry = field(&at, end);
    if (!*entry) break; /* the end mark */
    if (n == REQUEST_ENVS) die("request (environment)", -E2BIG);
    request_envp[n++] = entry;
  }
  if (at != end) die("request", -EINVAL);
  request_envp[n] = 0;
  enter(dir);
  *cmd = request_argv;
  *envp = request_envp;
}

/* A spare's command takes the gate's umask as it is when the call comes (the
   spare inherited it when it started): "Umask:" in /proc/GATE/status, octal.
   Unreadable (no /proc), the inherited one stays, as everything else the
   supervisor needs /proc for. */
static void take_umask(const char *gate) {
  char path[48];
  int n = 0;
  for (const char *c = "/proc/"; *c; c++) path[n++] = *c;
  for (const char *c = gate; *c && n < 32; c++) path[n++] = *c;
  for (const char *c = "/status"; *c; c++) path[n++] = *c;
  path[n] = 0;
  long fd = sys_open_read(path);
  if (fd < 0) return;
  char buf[4096];
  long got = 0;
  for (;;) {
    long r = sys_read((int)fd, buf + got, sizeof buf - 1 - (size_t)got);
    if (r == -EINTR) continue;
    if (r <= 0) break;
    got += r;
    if ((size_t)got == sizeof buf - 1) break;
  }
  sys_close((int)fd);
  buf[got < 0 ? 0 : got] = 0;
  const char *key = "\nUmask:";
  for (long i = 0; i + 8 < got; i++) {
    int k = 0;
    while (key[k] && buf[i + k] == key[k]) k++;
    if (key[k]) continue;
    long at = i + k;
    while (buf[at] == ' ' || buf[at] == '\t') at++;
    unsigned mask = 0;
    int digits = 0;
    while (buf[at] >= '0' && buf[at] <= '7' && digits < 4) {
      mask = mask * 8 + (unsigned)(buf[at] - '0');
      at++;
      digits++;
    }
    if (digits > 0 && (buf[at] == '\n' || buf[at] == 0)) sys_umask(mask & 0777);
    return;
  }
}

/* ARGV: sg-exec's own (the limits in argv[2..7]); CMD and ENVP: what to exec,
   or, in a spare, what REQUEST (a descriptor, else -1) will say. */
struct command { unsigned long mask; long supervisor; char **argv, **cmd, **envp; int request; };

/* The command's side of the supervisor's fork: default dispositions, SIGKILL as
   its parent-death signal, the hardening, then exec (or 127). */
static long command_child(void *arg) {
  struct command *c = (struct command *)arg;
  default_forwarded(c->mask);
  long r = sys_prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (r < 0) die("parent-death signal", r);
  if (sys_getppid() != c->supervisor) return 137; /* the supervisor is gone already */
  harden(c->argv);
  char **cmd = c->cmd, **envp = c->envp;
  if (c->request >= 0) {
    receive_request(c->request, &cmd, &envp);
    take_umask(c->argv[1]);
  }
  return run_command(cmd, envp);
}

/* Hold neither of the command's output pipes any more: what is left of the
   call writes there, and the gate reads them to EOF. */
static void release_pipes(void) {
  long null = sys_open_null();
  if (null >= 0) {
    sys_dup2((int)null, 1);
    sys_dup2((int)null, 2);
    if (null > 2) sys_close((int)null);
  } else {
    sys_close(1);
    sys_close(2);
  }
}

static int subreap(int fd, char **argv, char **cmd, char **envp, int request) {
  long r = sys_cloexec(fd);
  if (r < 0) die("status fd", r);
  r = sys_prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  if (r < 0) die("child subreaper", r);
  sys_sigdefault(SIGCHLD); /* an inherited SIG_IGN would reap for us, status and all */
  unsigned long old = 0;
  r = sys_sigmask(SIG_BLOCK, forwarded_mask(), &old);
  if (r < 0) die("signal mask", r);
  struct command c = {old, sys_getpid(), argv, cmd, envp, request};
  long child;
  if (request >= 0) {
    /* A spare forks its command ahead of the call too: a plain fork, so that
       we stay free to take signals while it waits, hardened, for the request
       that only it reads. */
    child = sys_fork();
    if (child == 0) sys_exit((int)command_child(&c));
    if (child > 0) sys_close(request);
  } else {
    child = sys_spawn(command_child, &c);
  }
  if (child < 0) die("fork", child);
  command_pid = child;
  /* A signal sent to the group before the command existed (a call stopped as it
     starts) would have reached only us: hand it on. The child holds these
     blocked until its default dispositions are back, so each acts once there
     (one sent between the fork and this line reached it already, and a pending
     duplicate merges with it). */
  unsigned long missed = (early | sys_sigpending()) & forwarded_mask();
  for (int sig = 1; sig < 64; sig++) {
    if (missed & (1UL << (sig - 1))) sys_kill(child, sig);
  }
  sys_sigmask(SIG_SETMASK, old, 0);
  /* Our copies of the command's output pipes stay open while the command runs
     and, in the common case, until we exit right after it: the gate then sees
     the pipes end and the leader exit together, one wake-up instead of two.
     When other processes of the call outlive the command we let go of them
     before saying so (release_pipes), and the gate reads to their EOF. */
  int status = 0, ended = 0, reported = 0;
  for (;;) {
    int st = 0;
    long got = wait_for(-1, &st, WALL | (ended && !reported ? WNOHANG : 0));
    if (got < 0) break; /* ECHILD: the subtree is empty */
    if (got == 0) {
      /* The command ended, other processes of the call live on: say so, and
         stay their subreaper until the gate has stopped them. */
      release_pipes();
      char line[32];
      int n = status_line(status, line);
      sys_write(fd, line, (size_t)n);
      sys_close(fd);
      reported = 1;
    } else if (got == child) {
      status = st;
      ended = 1;
    }
  }
  if (!ended) sys_exit(137);
  exit_as(status);
}

/* What the command gets (after the supervisor's fork, if any): rlimits and,
   with DROPCAPS=1, no capabilities. */
static void harden(char **argv) {
  long r;
  limit(RLIMIT_NOFILE, argv[2], "open files limit");
  limit(RLIMIT_NPROC, argv[3], "process limit");
  limit(RLIMIT_CPU, argv[4], "cpu limit");
  limit(RLIMIT_FSIZE, argv[5], "file size limit");
  limit(RLIMIT_AS, argv[6], "address space limit");
  if (same(argv[7], "1")) {
    for (int cap = 0; cap < 64; cap++) {
      r = sys_prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
      if (r < 0 && r != -EINVAL) die("capability bounding set", r);
    }
    r = sys_prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (r < 0 && r != -EINVAL) die("ambient capabilities", r);
  }
}

static int sg_main(int argc, char **argv, char **envp) {
  if (argc >= 2 && same(argv[1], "--supervise")) return supervise(argc, argv, envp);
  const char *cgroup = 0, *dir = 0, *status = 0, *requested = 0;
  int close_fds = 0;
  for (;;) {
    if (argc >= 3 && same(argv[1], "--cgroup")) {
      cgroup = argv[2];
    } else if (argc >= 3 && same(argv[1], "--chdir")) {
      dir = argv[2];
    } else if (argc >= 3 && same(argv[1], "--subreaper")) {
      status = argv[2];
    } else if (argc >= 3 && same(argv[1], "--request")) {
      requested = argv[2];
    } else if (argc >= 2 && same(argv[1], "--close-fds")) {
      close_fds = 1;
      argv[1] = argv[0];
      argv += 1;
      argc -= 1;
      continue;
    } else {
      break;
    }
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  /* A spare (--request) learns its directory, program and environment with its
     call; it supervises, and it closes descriptors ahead of the call. */
  int spare_ok = !requested || (status && close_fds && !dir);
  if ((requested ? argc != 9 : argc < 10) || !same(argv[8], "--") || !spare_ok) {
    put("usage: sg-exec [--cgroup PROCS] [--chdir DIR] [--close-fds] [--subreaper FD] "
        "PPID NOFILE NPROC CPU FSIZE AS DROPCAPS -- PROGRAM ARG...\n"
        "       sg-exec [--cgroup PROCS] --close-fds --subreaper FD --request FD "
        "PPID NOFILE NPROC CPU FSIZE AS DROPCAPS --\n");
    return 126;
  }
  int fd = -1, request_fd = -1;
  if (status) {
    fd = (int)num(status, "status fd");
    if (fd < 3) die("status fd", -EINVAL); /* 0-2 are the command's */
  }
  if (requested) {
    request_fd = (int)num(requested, "request fd");
    if (request_fd < 3 || request_fd == fd) die("request fd", -EINVAL);
    long r = sys_cloexec(request_fd);
    if (r < 0) die("request fd", r);
  }
  if (cgroup) join_cgroup(cgroup); /* before anything can fork outside it */
  long expected = (long)num(argv[1], "parent pid");
  long r;
  if (fd >= 0) {
    /* Catchable, so that the supervisor can take the call down with it. */
    gate_pid = expected;
    for (unsigned i = 0; i < N_FORWARDED; i++) {
      r = sys_sigaction(forwarded[i], on_supervisor_signal, forwarded_mask());
      if (r < 0) die("signal handler", r);
    }
    r = sys_prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
  } else {
    r = sys_prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  }
  if (r < 0) die("parent-death signal", r);
  if (sys_getppid() != expected) sys_exit(137); /* the gate died before we armed the signal */
  if (dir) enter(dir);
  if (close_fds) close_inherited(fd, request_fd);
  /* glibc's posix_spawn leaves its internal signals 32 and 33 ignored in the
     child, and an ignored signal stays ignored across exec: give the command
     the default, as a fork-and-exec spawn would (musl, say, uses them). */
  sys_sigdefault(32);
  sys_sigdefault(33);
  /* Before any fork: the supervisor gains nothing through exec either. */
  r = sys_prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (r < 0) die("no_new_privs", r);
  if (fd >= 0) return subreap(fd, argv, argv + 9, envp, request_fd);
  harden(argv);
  return run_command(argv + 9, envp);
}
