/*
 * A disk whose flush is slower than this machine's (~0.1 ms): preloaded (LD_PRELOAD) into opcli and
 * into the durable hand-written script by `CLAIMS_BENCH_FLUSH_MS=N node bench/claims-batch.mjs`, it
 * makes every fsync and fdatasync return N ms later (the real call first). A laptop SSD or a cloud
 * volume takes 0.5 to a few ms to flush; the figure of the durable baseline depends on it more than
 * opcli's, which makes a group of rows durable with one flush. An emulation, not a disk: concurrent
 * flushes wait side by side here, where a real device may queue them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static void wait_flush(void) {
  const char *ms = getenv("BENCH_FLUSH_MS");
  double value = ms ? atof(ms) : 0;
  if (value <= 0) return;
  struct timespec ts = { (time_t)(value / 1000), (long)((value - (time_t)(value / 1000) * 1000) * 1e6) };
  nanosleep(&ts, NULL);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  int result = real(fd);
  wait_flush();
  return result;
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  int result = real(fd);
  wait_flush();
  return result;
}
