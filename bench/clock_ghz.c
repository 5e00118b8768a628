/* Measures the clock a busy core runs at: a chain of dependent integer adds
 * retires one add per cycle on every x86 core since the Pentium 4, so adds
 * per second = cycles per second. In a VM, lscpu and /proc/cpuinfo show only
 * the nominal (TSC) clock, not the boost clock the FMA units run at. Timed
 * in thread CPU time, so that other processes sharing the core (time
 * slicing) do not count; the best of several short trials. */
#include <stdio.h>
#include <time.h>

int main(void) {
  const long iters = 50000000L; /* x 8 adds: ~0.15 s at 3 GHz */
  double best = 0;
  long x = 0;
  for (int trial = 0; trial < 7; ++trial) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (long i = 0; i < iters; ++i) {
      __asm__ volatile(
          "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
          "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
          : "+r"(x));
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    double ghz = 8.0 * iters / s / 1e9;
    if (ghz > best) best = ghz;
  }
  printf("%.2f\n", best);
  return x == 0;
}
